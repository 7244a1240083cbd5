package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestARunBudgetThatRunsOutEndsTheRunAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), slowMatrix)
	out, err := command(dir, nil, "build", "--run-budget", "1s", "--summary", "s.md").Output()
	if code := exitCode(err); code != 3 {
		t.Fatalf("exit %d, want 3 (budget)\n%s", code, out)
	}
	if last := lastLine(string(out)); !strings.HasPrefix(last, "■ ❌ run budget 1s exceeded: ") {
		t.Errorf("last line %q must say the run budget ended the run", last)
	}
	r := readReport(t, filepath.Join(dir, "trt-report.json"))
	if !r.Complete || r.Ended != "run budget 1s exceeded" || r.Interrupted != "" {
		t.Errorf("report: complete=%v ended=%q interrupted=%q", r.Complete, r.Ended, r.Interrupted)
	}
	if s, _ := os.ReadFile(filepath.Join(dir, "s.md")); !strings.HasPrefix(string(s), "## ❌ run budget 1s exceeded: ") {
		t.Errorf("summary headline:\n%.200s", s)
	}
}

// A build budget that runs out in a silent phase (TensorRT-RTX's
// "Determining refit engines" reports its only step at its end) ends in a
// kill after the grace: the build is budget-exceeded, its reason says it
// was killed and after what grace, every output shows it so, and
// --fail-on failure does not fail the step for it.
func TestABuildItsBudgetStoppedIsOverBudgetAlsoWhenItWasKilled(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
builds:
  - name: silent-phase
    backend: sim
    sim: {step: 0s, fault: "silence:30s"}
    budgets: {build: 400ms, grace: 300ms}
`)
	const reason = "build budget exceeded after 400ms (limit 400ms); did not stop within its 300ms grace, so it was killed"
	for _, c := range []struct {
		failOn string
		code   int
	}{{"failure", 0}, {"budget", 3}} {
		out, err := command(dir, nil, "build", "--fail-on", c.failOn, "--summary", "s.md", "--junit", "j.xml", "--events", "e.jsonl").Output()
		if code := exitCode(err); code != c.code {
			t.Fatalf("--fail-on %s: exit %d, want %d\n%s", c.failOn, code, c.code, out)
		}
		b := readReport(t, filepath.Join(dir, "trt-report.json")).Builds[0]
		if b.Status != "budget-exceeded" || !strings.HasPrefix(b.Reason, "build budget exceeded after ") ||
			!strings.HasSuffix(b.Reason, "; did not stop within its 300ms grace, so it was killed") || b.Budget == nil || b.Budget.Kind != "build" {
			t.Fatalf("report: %s (%s), budget %+v; want budget-exceeded like %q", b.Status, b.Reason, b.Budget, reason)
		}
		outputs := map[string]string{"log": string(out)}
		for _, f := range []string{"s.md", "j.xml", "e.jsonl"} {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			outputs[f] = string(data)
		}
		for name, want := range map[string][]string{
			"log":     {"[silent-phase] ✖ budget-exceeded after ", "so it was killed", "1 over budget"},
			"s.md":    {"## ❌ 1 over budget", "| silent-phase | ⏱️ budget-exceeded |", "so it was killed"},
			"j.xml":   {`type="budget-exceeded"`, "so it was killed"},
			"e.jsonl": {`"type":"build_finished"`, `"status":"budget-exceeded"`, "so it was killed", `"statuses":{"budget-exceeded":1}`},
		} {
			for _, w := range want {
				if !strings.Contains(outputs[name], w) {
					t.Errorf("--fail-on %s: %s lacks %q:\n%s", c.failOn, name, w, outputs[name])
				}
			}
			for _, killed := range []string{`"status":"killed"`, `type="killed"`, "✖ killed", "🛑", "1 killed"} {
				if strings.Contains(outputs[name], killed) {
					t.Errorf("--fail-on %s: %s shows the build as killed (%s):\n%s", c.failOn, name, killed, outputs[name])
				}
			}
		}
	}
}
