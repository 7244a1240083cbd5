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
