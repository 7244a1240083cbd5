package main

// End-to-end tests of what a run writes: outputs on FIFOs, outputs that
// cannot be written, and engines a simulated run must not touch.

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

const quickMatrix = `version: 1
builds:
  - {name: quick, backend: sim, sim: {step: 100us}, engine: out/quick.engine}
`

// lastLine is the last line a person reads: workflow command lines
// (fences) are not shown by the runner.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.HasPrefix(lines[i], "::") {
			return lines[i]
		}
	}
	return ""
}

// Issue 13 item 1: `--report FIFO` left a regular file where the FIFO was.
// The FIFO gets the final report, once, and stays a FIFO.
func TestAFIFOReportGetsTheFinalReportAndStaysAFIFO(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), quickMatrix)
	fifo := filepath.Join(dir, "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		data, _ := io.ReadAll(f)
		f.Close()
		got <- data
	}()
	out, err := command(dir, nil, "build", "--report", "report.fifo").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var data []byte
	select {
	case data = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing came through the FIFO")
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil || !r.Complete || len(r.Builds) != 1 {
		t.Errorf("the FIFO carried no single complete report (%v):\n%s", err, data)
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("report.fifo is no longer a FIFO (%v, %v)", info.Mode(), err)
	}
}

// Issue 13 item 15: an unwritable destination was found after every build
// had run. Every bad one is named before the first build.
func TestUnwritableDestinationsStopTheRunBeforeItsFirstBuild(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), quickMatrix)
	if err := os.Mkdir(filepath.Join(dir, "summary.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + dir}
	out, err := command(dir, env, "build", "--report", "trt-builds.yml/r.json", "--summary", "summary.md",
		"--junit", "deep/er/j.xml").CombinedOutput()
	if code := exitCode(err); code != 4 {
		t.Fatalf("exit %d, want 4 (an output cannot be written)\n%s", code, out)
	}
	for _, want := range []string{"--report: ", "--summary: summary.md is a folder", "$GITHUB_OUTPUT: open " + dir + ": is a directory"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if want := "3 outputs could not be written (--report, --summary, $GITHUB_OUTPUT): no build was started"; lastLine(string(out)) != "trt-action: "+want {
		t.Errorf("last line %q, want %q", lastLine(string(out)), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a build ran (its engine folder exists: %v)", err)
	}
	// The JUnit file's folder is made, like an engine's.
	if info, err := os.Stat(filepath.Join(dir, "deep", "er")); err != nil || !info.IsDir() {
		t.Errorf("the JUnit file's folder was not created: %v", err)
	}
}

// Issue 13 items 14 and 19: a report that could not be written cost the
// JUnit file and the step outputs, only the first failure was printed, and
// the run exited 1 under a last line that said all was ok.
func TestEveryOutputIsWrittenAndEveryFailureNamed(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
builds:
  - {name: slow, backend: sim, sim: {step: 300us}}
`)
	outputFile := filepath.Join(dir, "github_output")
	writeFile(t, outputFile, "")
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + outputFile}
	cmd := command(dir, env, "build", "--report", "r.json", "--summary", "s.md", "--junit", "j.xml", "--events", "events.jsonl")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the run has started (the report is written at its start), the
	// report and JUnit paths become folders.
	waitForLine(t, &out, "::group::", 20*time.Second)
	report := filepath.Join(dir, "r.json")
	if err := os.Remove(report); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{report, filepath.Join(dir, "j.xml")} {
		if err := os.MkdirAll(filepath.Join(p, "keep"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	err := cmd.Wait()
	if code := exitCode(err); code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, out.String())
	}
	text := out.String()
	for _, want := range []string{"--report: r.json is a folder", "--junit: j.xml is a folder"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if want := "trt-action: 2 outputs could not be written (--report, --junit): exit 4"; lastLine(text) != want {
		t.Errorf("last line %q, want %q", lastLine(text), want)
	}
	for _, line := range strings.Split(text, "\n") {
		for _, p := range []string{report, outputFile} {
			if strings.Count(line, p) > 1 {
				t.Errorf("a line names %s twice: %s", p, line)
			}
		}
	}
	// What could be written was.
	outputs, _ := os.ReadFile(outputFile)
	if keys := strings.Join(outputKeys(string(outputs)), " "); keys != "report summary succeeded failed cached stored pushed engines" {
		t.Errorf("step outputs %q, want all of them", keys)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "s.md")); err != nil || !strings.Contains(string(md), "slow") {
		t.Errorf("summary not written: %v", err)
	}
}

// Issue 13 item 2: `--backend sim` replaced a real engine with a 70-byte
// simulator stub.
func TestBackendSimNeverReplacesARealEngine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models", "mlp.onnx"), "not read by the simulator")
	// Quick steps: the simulator's default (2 ms, about 13 s a build) adds
	// nothing to what is checked here.
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
defaults: {sim: {step: 100us}}
builds:
  - {name: mlp, backend: tensorrt-rtx, onnx: models/mlp.onnx, engine: out/mlp.engine}
  - {name: stub, backend: sim, engine: out/stub.engine}
`)
	const realEngine = "a real engine, 440 kB in life"
	writeFile(t, filepath.Join(dir, "out", "mlp.engine"), realEngine)
	out, err := command(dir, nil, "build", "--backend", "sim").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "out", "mlp.engine")); string(data) != realEngine {
		t.Errorf("the real engine was replaced by %q", data)
	}
	if !strings.Contains(string(out), "--backend sim: 1 of 2 builds name another backend") {
		t.Errorf("the run does not say the simulated engine is not kept:\n%s", out)
	}
	r := readReport(t, filepath.Join(dir, "trt-report.json"))
	for _, b := range r.Builds {
		if b.Status != report.StatusOK {
			t.Errorf("%s: %s %s", b.Name, b.Status, b.Reason)
		}
		switch {
		case b.Name == "mlp" && b.Engine != nil:
			t.Errorf("mlp reports an engine %+v; its simulated engine was not kept", b.Engine)
		case b.Name == "stub" && (b.Engine == nil || b.Engine.Path != "out/stub.engine"):
			t.Errorf("a build the matrix names sim lost its engine: %+v", b.Engine)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) != 2 {
		t.Errorf("out/ holds %d files, want mlp.engine and stub.engine", len(entries))
	}
}

// Issue 17 (left alone before): --events was not part of the check before
// the first build; a folder there cost the run after it had begun.
func TestAnUnwritableEventsFileStopsTheRunBeforeItsFirstBuild(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), quickMatrix)
	if err := os.Mkdir(filepath.Join(dir, "events"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := command(dir, nil, "build", "--events", "events").CombinedOutput()
	if code := exitCode(err); code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, out)
	}
	if want := "trt-action: 1 output could not be written (--events): no build was started"; lastLine(string(out)) != want {
		t.Errorf("last line %q, want %q", lastLine(string(out)), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a build ran (its engine folder exists: %v)", err)
	}
}
