package main

// End-to-end tests of the real binary: what a user or a runner sees.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/actions/actionstest"
	"github.com/trt-action/trt-action/internal/report"
)

// binary is the trt-action under test: $TRT_ACTION_BIN (make test sets it)
// or one built here.
var binary string

func TestMain(m *testing.M) {
	binary = os.Getenv("TRT_ACTION_BIN")
	if binary == "" {
		dir, err := os.MkdirTemp("", "trt-action-e2e")
		if err != nil {
			panic(err)
		}
		binary = filepath.Join(dir, "trt-action")
		if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the binary: %v\n%s", err, out)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
	}
	code := m.Run()
	os.Exit(code)
}

// run starts the binary in dir with a clean, non-Actions environment plus env.
func command(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	return cmd
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readReport(t testing.TB, path string) *report.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("report is not valid JSON: %v\n%s", err, data)
	}
	return &r
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

const slowMatrix = `version: 1
defaults:
  backend: sim
  sim: {step: 2ms}
builds:
  - name: slow-${{ matrix.n }}
    engine: out/slow-${{ matrix.n }}.engine
    matrix:
      n: [1, 2, 3]
`

func TestSIGINTStopsWithin2sAndLeavesAValidPartialReport(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), slowMatrix)
	cmd := command(dir, nil, "build", "--jobs", "2", "--summary", "summary.md")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, &out, "▸", 10*time.Second) // a progress line: builds are running
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	took := time.Since(sent)
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit code %d, want 130\n%s", code, out.String())
	}
	if took > 2*time.Second {
		t.Errorf("exited %v after SIGINT, want within 2s", took)
	}
	r := readReport(t, filepath.Join(dir, "trt-report.json"))
	if r.Complete || !strings.HasPrefix(r.Interrupted, "SIGINT") || len(r.Builds) != 3 {
		t.Fatalf("report: complete=%v interrupted=%q builds=%d", r.Complete, r.Interrupted, len(r.Builds))
	}
	for _, b := range r.Builds {
		if b.Status != report.StatusCancelled || b.Reason == "" {
			t.Errorf("%s: %s %q, want cancelled with a reason", b.Name, b.Status, b.Reason)
		}
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(summary), "interrupted") {
		t.Errorf("summary does not say it was interrupted: %v\n%s", err, summary)
	}
	if engines, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(engines) != 0 {
		t.Errorf("engine files left behind: %v", engines)
	}
	mergeEndsAsTheRun(t, dir, 130)
}

// mergeEndsAsTheRun merges the one shard report in dir, that of a run a
// signal stopped, and wants the exit code that run had (a single job
// running every build would have had it) under every --fail-on.
func mergeEndsAsTheRun(t *testing.T, dir string, want int) {
	t.Helper()
	for _, failOn := range []string{"failure", "budget", "never"} {
		out, err := command(dir, nil, "merge", "trt-report.json", "--report", "merged.json", "--fail-on", failOn).CombinedOutput()
		if code := exitCode(err); code != want {
			t.Errorf("merge --fail-on %s of the interrupted run's report: exit %d, want %d as the run had\n%s", failOn, code, want, out)
		}
	}
}

// syncBuffer is a buffer the command writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitForLine waits until the output holds want.
func waitForLine(t *testing.T, out *syncBuffer, want string, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), want) {
			return
		}
	}
	t.Fatalf("no %q within %v:\n%s", want, limit, out.String())
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name, matrix string
		want         int
	}{
		{"all ok", "builds: [{name: a, sim: {step: 10us}}]", 0},
		{"a failure", "builds: [{name: a, sim: {step: 10us}}, {name: b, sim: {step: 10us, fault: fail}}]", 1},
		{"over budget only", "builds: [{name: a, sim: {step: 1ms}, budgets: {phases: {Timing*: 50ms}}}]", 3},
		{"invalid", "builds: [{name: a, bogus: 1}]", 2},
		{"missing file", "", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.matrix != "" {
				writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\ndefaults: {backend: sim}\n"+c.matrix+"\n")
			}
			out, err := command(dir, nil, "build").CombinedOutput()
			if code := exitCode(err); code != c.want {
				t.Errorf("exit %d, want %d\n%s", code, c.want, out)
			}
		})
	}
}

func TestInvalidMatrixReportsEveryErrorWithPosition(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "m.yml"), "version: 1\nbuilds:\n  - name: a\n    backend: cuda\n  - name: b\n    budgets: {build: soon}\n")
	out, err := command(dir, nil, "validate", "-f", "m.yml").CombinedOutput()
	if exitCode(err) != 2 {
		t.Fatalf("exit %d, want 2\n%s", exitCode(err), out)
	}
	for _, want := range []string{"m.yml:4:14:", "m.yml:6:22:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// hostileTrace is a tiny trace whose phase names try to run workflow commands.
const hostileTrace = `{"t_ms":0,"thread":1,"ev":"start","phase":"::error::from a phase","parent":null,"steps":2}
{"t_ms":1,"thread":1,"ev":"start","phase":"x ##[error]old form","parent":"::error::from a phase","steps":1}
{"t_ms":2,"thread":1,"ev":"step","phase":"x ##[error]old form","step":0}
{"t_ms":3,"thread":1,"ev":"finish","phase":"x ##[error]old form"}
{"t_ms":4,"thread":1,"ev":"step","phase":"::error::from a phase","step":0}
{"t_ms":5,"thread":1,"ev":"start","phase":"::set-output name=engines::{}","parent":"::error::from a phase","steps":1}
{"t_ms":6,"thread":1,"ev":"finish","phase":"::set-output name=engines::{}"}
{"t_ms":7,"thread":1,"ev":"finish","phase":"::error::from a phase"}
`

func TestHostilePhaseNamesRunNoWorkflowCommand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hostile.jsonl"), hostileTrace)
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
builds:
  - {name: hostile, backend: sim, sim: {trace: hostile.jsonl, step: 20ms}}
  - {name: over, backend: sim, sim: {trace: hostile.jsonl, step: 20ms}, budgets: {phases: {"::*": 30ms}}}
`)
	outputFile := filepath.Join(dir, "github_output")
	writeFile(t, outputFile, "")
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + outputFile, "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary.md")}
	out, _ := command(dir, env, "build", "--depth", "3").CombinedOutput()
	for _, line := range actionstest.RunnerCommands(string(out)) {
		if !ownCommand(line) {
			t.Errorf("the runner would execute %q\n%s", line, out)
		}
	}
	if !strings.Contains(string(out), "::error::from a phase") {
		t.Errorf("the hostile phase name should still be shown (fenced):\n%s", out)
	}
	// The event stream on stdout (the log) carries the same names as JSON.
	// (A runner always sets GITHUB_OUTPUT; without it the run refuses to start.)
	stream, err := command(dir, []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + filepath.Join(dir, "github_output_2")},
		"build", "--events", "-", "--depth", "3").Output()
	if len(stream) == 0 {
		t.Fatalf("no event stream on stdout: %v", err)
	}
	if cmds := actionstest.RunnerCommands(string(stream)); len(cmds) > 0 {
		t.Errorf("the event stream would execute %q", cmds)
	}
	if !strings.Contains(string(stream), `"::error::from a phase"`) || !strings.Contains(string(stream), `x #\u0023[error]old form`) {
		t.Errorf("the stream lacks the phase names:\n%s", stream)
	}
	outputs, _ := os.ReadFile(outputFile)
	keys := outputKeys(string(outputs))
	if want := "report summary succeeded failed cached stored pushed engines"; strings.Join(keys, " ") != want {
		t.Errorf("output keys %v, want %s\n%s", keys, want, outputs)
	}
}

// ownCommand reports whether a command line is one trt-action itself writes:
// groups, fences, and annotations (which always carry a title property, so
// "::error::..." from a phase name is never one of ours).
func ownCommand(line string) bool {
	t := strings.TrimSpace(line)
	for _, prefix := range []string{"::group::", "::endgroup::", "::stop-commands::"} {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	for _, level := range []string{"::error ", "::warning ", "::notice "} {
		props, _, ok := strings.Cut(strings.TrimPrefix(t, level), "::")
		if strings.HasPrefix(t, level) && ok && strings.Contains(props, "title=") {
			return true
		}
	}
	// The end of a fence: "::TOKEN::" with our 32-hex token.
	return len(t) == 36 && strings.HasPrefix(t, "::") && strings.HasSuffix(t, "::")
}

// outputKeys are the names of a GITHUB_OUTPUT file's records, in order.
func outputKeys(s string) []string {
	var keys []string
	for _, r := range outputRecords(s) {
		keys = append(keys, r[0])
	}
	return keys
}

// outputRecords parses a GITHUB_OUTPUT file: name<<DELIM ... DELIM
// records, as trt-action writes them, and name=value lines, as a shell
// step's echo does. Each record is {name, value}.
func outputRecords(s string) [][2]string {
	var records [][2]string
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, heredoc := strings.Cut(lines[i], "<<")
		if !heredoc {
			if name, value, ok := strings.Cut(lines[i], "="); ok {
				records = append(records, [2]string{name, value})
			}
			continue
		}
		var value []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			value = append(value, lines[i])
		}
		records = append(records, [2]string{name, strings.Join(value, "\n")})
	}
	return records
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	var kids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so parse after ')'.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		var state string
		var child, ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err == nil && ppid == pid {
			fmt.Sscan(string(data), &child)
			kids = append(kids, child)
		}
	}
	return kids
}

func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z") // a zombie has ended
}

func TestNoWorkerOutlivesAKilledSupervisor(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), slowMatrix)
	cmd := command(dir, nil, "build", "--jobs", "2")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, &out, "▸", 10*time.Second)
	workers := childrenOf(cmd.Process.Pid)
	if len(workers) != 2 {
		t.Fatalf("want 2 workers running, found %v", workers)
	}
	_ = cmd.Process.Kill() // SIGKILL: the supervisor gets no chance to clean up
	_ = cmd.Wait()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		left := 0
		for _, pid := range workers {
			if alive(pid) {
				left++
			}
		}
		if left == 0 {
			return
		}
	}
	t.Errorf("workers %v still alive 5s after the supervisor was killed", workers)
}

func TestBaselineRegressionGatesTheStep(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
regression: {warn: 10%, fail: 25%, min: 1ms}
builds:
  - {name: a, backend: sim, sim: {step: 100us}}
`)
	baseline := report.Report{Version: report.SchemaVersion, Complete: true,
		Builds: []report.Build{{Name: "a", Backend: "sim", Status: report.StatusOK, DurationMs: 50}}}
	data, _ := json.Marshal(baseline)
	writeFile(t, filepath.Join(dir, "base.json"), string(data))
	for _, c := range []struct {
		failOn string
		want   int
	}{{"budget", 3}, {"failure", 0}} {
		out, err := command(dir, nil, "build", "--baseline", "base.json", "--summary", "s.md", "--fail-on", c.failOn).CombinedOutput()
		if code := exitCode(err); code != c.want {
			t.Errorf("--fail-on %s: exit %d, want %d\n%s", c.failOn, code, c.want, out)
		}
		summary, _ := os.ReadFile(filepath.Join(dir, "s.md"))
		// What failed the run is named where one looks first.
		if last := lastLine(string(out)); !strings.HasPrefix(last, "■ ❌ 1 regression (a +") || !strings.HasPrefix(string(summary), "## ❌ 1 regression (a +") {
			t.Errorf("--fail-on %s: the last line %q and the summary's headline must name the regression:\n%.200s", c.failOn, last, summary)
		}
		if !strings.Contains(string(summary), "Build times against the baseline") || !strings.Contains(string(summary), "| a | 50ms |") || !strings.Contains(string(summary), "fail |") {
			t.Errorf("summary lacks the comparison:\n%s", summary)
		}
	}
}

func TestHostileMatrixValuesInErrorsAndPlansRunNoWorkflowCommand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yml"), "version: 1\nbuilds:\n  - name: \"a##[error]x\"\n    backend: sim\n  - {name: b, backend: sim, bogus: \"::error::y\"}\n")
	writeFile(t, filepath.Join(dir, "good.yml"), "version: 1\nbuilds:\n  - {name: a, backend: sim, engine: \"out/##[error]z.engine\"}\n")
	env := []string{"GITHUB_ACTIONS=true"}
	for _, args := range [][]string{{"validate", "-f", "bad.yml"}, {"plan", "-f", "good.yml"}, {"plan", "-f", "good.yml", "--json"}} {
		out, _ := command(dir, env, args...).CombinedOutput()
		if !strings.Contains(string(out), "error]") {
			t.Errorf("%v: the hostile text should still be shown (fenced):\n%s", args, out)
		}
		for _, line := range actionstest.RunnerCommands(string(out)) {
			if !ownCommand(line) {
				t.Errorf("%v: the runner would execute %q\n%s", args, line, out)
			}
		}
	}
}

func TestSIGTERMExits143WithAReport(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), slowMatrix)
	cmd := command(dir, nil, "build")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, &out, "▸", 10*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(cmd.Wait()); code != 143 {
		t.Fatalf("exit %d, want 143\n%s", code, out.String())
	}
	r := readReport(t, filepath.Join(dir, "trt-report.json"))
	if !strings.HasPrefix(r.Interrupted, "SIGTERM") || r.Signal != report.SignalTerminate || r.Builds[0].Status != report.StatusCancelled {
		t.Errorf("interrupted %q, signal %q, first build %s", r.Interrupted, r.Signal, r.Builds[0].Status)
	}
	mergeEndsAsTheRun(t, dir, 143)
}

func TestGPUsTheMachineLacksStopTheRunBeforeAnyBuild(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bin", "nvidia-smi"), "#!/bin/sh\nprintf '0, GPU-aaaa\\n1, GPU-bbbb\\n'\n")
	if err := os.Chmod(filepath.Join(dir, "bin", "nvidia-smi"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds: [{name: a, backend: sim, engine: a.engine, sim: {step: 10us}}]\n")
	cmd := command(dir, nil, "build", "--gpus", "0,7", "--report", "r.json")
	cmd.Env[0] = "PATH=" + filepath.Join(dir, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	out, err := cmd.CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "no device 7 on this machine; nvidia-smi lists 0 (GPU-aaaa), 1 (GPU-bbbb)") {
		t.Errorf("exit %d, want 2 naming the devices there are:\n%s", exitCode(err), out)
	}
	for _, f := range []string{"a.engine", "r.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: a build started", f)
		}
	}
}

func TestEngineOutsideTheWorkspaceIsAnInputError(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "repo", ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(dir, "repo", "trt-builds.yml"), "version: 1\nbuilds:\n  - {name: a, backend: sim, engine: ../escaped.engine}\n")
	out, err := command(filepath.Join(dir, "repo"), nil, "build").CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "trt-builds.yml:3:37: engine:") || !strings.Contains(string(out), "outside the workspace") {
		t.Errorf("exit %d, want 2 with the engine's position:\n%s", exitCode(err), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.engine")); err == nil {
		t.Error("the engine was written outside the repository")
	}
}
