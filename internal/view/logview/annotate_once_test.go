package logview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A budget warning reaches the view as an event and again in its build's
// warnings; GitHub's per-step annotation cap must be spent on it once.
func TestBudgetWarningIsAnnotatedOnce(t *testing.T) {
	r := reporttest.Sample()
	const warning = "phase Timing tactics used 80% of its 10s budget" // what runScript raises
	raisedFor := map[string]bool{}
	for _, ev := range runScript(r, false) {
		if ev.Kind == event.BudgetWarning && ev.Message == warning {
			raisedFor[r.Builds[ev.Build].Name] = true
		}
	}
	if len(raisedFor) == 0 {
		t.Fatal("the script raises no budget warning; the test checks nothing")
	}
	for i := range r.Builds { // as the supervisor records it
		if raisedFor[r.Builds[i].Name] {
			r.Builds[i].Warnings = append(r.Builds[i].Warnings, warning)
		}
	}
	var out bytes.Buffer
	if err := play(NewActionsView(&out, testFence(t), ActionsOptions{Jobs: 1, File: "matrix.yaml"}), runScript(r, false)); err != nil {
		t.Fatal(err)
	}
	for name := range raisedFor {
		n := 0
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "::warning ") && strings.Contains(line, name) && strings.Contains(line, "80%25 of its 10s budget") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: the budget warning is annotated %d times, want once:\n%s", name, n, out.String())
		}
	}
}
