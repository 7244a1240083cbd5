package trace

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func start(phase, parent string, steps int) Event {
	return Event{Kind: Start, Phase: phase, Parent: parent, Steps: steps}
}
func step(phase string, n int) Event { return Event{Kind: Step, Phase: phase, Step: n} }
func finish(phase string) Event      { return Event{Kind: Finish, Phase: phase} }

func TestValidateAcceptsContract(t *testing.T) {
	events := []Event{
		start("root", "", 2),
		start("child", "root", 1),
		step("child", 0),
		step("root", 0), // a step on an outer phase while a child runs: seen in the real recording
		finish("child"),
		start("child", "root", 3), // a name may be reused once finished
		finish("child"),           // before all steps: allowed (errors, shortcuts, cancel)
		finish("root"),
		start("other root", "", 1), // left running: a killed build
	}
	if err := Validate(events); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestValidateViolations(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
		want   string
	}{
		{"step of unknown phase", []Event{step("a", 0)},
			`line 1: step of "a", which is not running`},
		{"finish of unknown phase", []Event{start("a", "", 1), finish("a"), finish("a")},
			`line 3: finish of "a", which is not running`},
		{"parent not running", []Event{start("a", "", 1), start("b", "nope", 1)},
			`line 2: start of "b" under parent "nope", which is not running (parent must be running or null)`},
		{"started twice", []Event{start("a", "", 1), start("a", "", 1)},
			`line 2: start of "a", which is already running (finish it first)`},
		{"step too high", []Event{start("a", "", 2), step("a", 2)},
			`line 2: step 2 of "a" is out of range [0, 2)`},
		{"negative step", []Event{start("a", "", 2), step("a", -1)},
			`line 2: step must be >= 0 (a 32-bit integer), got -1`},
		{"zero steps", []Event{start("a", "", 0)},
			`line 1: start needs steps > 0 (nbSteps, a 32-bit integer), got 0`},
		{"unknown kind", []Event{{Kind: "pause", Phase: "a"}},
			`line 1: unknown ev "pause" (allowed: start, step, finish)`},
		{"time going back", []Event{{T: time.Second, Kind: Start, Phase: "a", Steps: 1}, {Kind: Finish, Phase: "a"}},
			`line 2: t_ms 0 is before the previous event's 1000 (events must be in time order)`},
		{"several", []Event{start("a", "", 1), step("b", 0), step("a", 5), finish("a")},
			"line 2: step of \"b\", which is not running\nline 3: step 5 of \"a\" is out of range [0, 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.events)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestValidateCapsReport(t *testing.T) {
	var events []Event
	for i := range 25 {
		events = append(events, step(fmt.Sprint("p", i), 0))
	}
	var verr *validationError
	if !errors.As(Validate(events), &verr) {
		t.Fatal("want a *validationError")
	}
	if verr.Total != 25 || len(verr.Violations) != maxViolations {
		t.Errorf("Total=%d kept=%d, want 25 and %d", verr.Total, len(verr.Violations), maxViolations)
	}
	if last := verr.Violations[maxViolations-1]; last.Line != maxViolations {
		t.Errorf("last kept violation at line %d, want the first ones", last.Line)
	}
	if !strings.HasSuffix(verr.Error(), "\n(and 15 more)") {
		t.Errorf("message does not count the rest:\n%s", verr.Error())
	}
}
