package terminal

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
)

// The screen tests run the real binary in a tmux pane and read the screen
// as a person would see it. They need tmux and a built binary
// ($TRT_ACTION_BIN, else bin/trt-action from `make`); without either they
// skip. `go test ./internal/view/terminal -run Screen -update` also rewrites
// docs/terminal.txt, the capture shown in the README.

const screenMatrix = `version: 1
defaults:
  backend: sim
  sim: {step: %s, threads: 4}
  budgets: {build: 5m, warn: 80%%, grace: 60s}
builds:
  - name: resnet50-fp16-batch8-${{ matrix.n }}-long-name
    engine: out/b${{ matrix.n }}.engine
    precision: fp16
    matrix:
      n: [1, 2]
  - name: mnist-fp32
    engine: out/mnist.engine
    precision: fp32
%s`

// hangBuild reaches its hang (halfway through the trace) within a few
// milliseconds and never calls back again, so a graceful stop cannot finish
// and the stopping state stays on screen until the second Ctrl-C.
const hangBuild = `  - name: hangs-forever
    engine: out/hang.engine
    precision: fp16
    sim: {fault: hang, step: 10us}
`

type pane struct {
	t      *testing.T
	socket string
	dir    string // where the run works: its matrix, report and events
}

func screenBinary(t *testing.T) string {
	t.Helper()
	// In CI (make test sets TRT_ACTION_BIN, .ci/run installs tmux) a missing
	// prerequisite is a failure, never a silent skip.
	skip := t.Skipf
	if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_BIN") != "" {
		skip = t.Fatalf
	}
	if testing.Short() {
		t.Skip("screen test: not in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		skip("screen test: tmux is not installed")
	}
	bin := os.Getenv("TRT_ACTION_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../../bin/trt-action")
	}
	if _, err := os.Stat(bin); err != nil {
		skip("screen test: no binary at %s (run make, or set TRT_ACTION_BIN)", bin)
	}
	return bin
}

// startPane runs the binary on a matrix in a detached tmux pane of the
// given size, on a tmux server of its own.
func startPane(t *testing.T, bin, matrix string, cols, rows int, args ...string) *pane {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.yml"), []byte(matrix), 0o644); err != nil {
		t.Fatal(err)
	}
	// GITHUB_ACTIONS would pick the Actions view; the shell keeps the pane
	// open after the run so the final screen can be read.
	cmd := fmt.Sprintf("cd %q && env -u GITHUB_ACTIONS -u NO_COLOR %q build -f m.yml --report r.json %s; echo \"[exit $?]\"; sleep 600",
		dir, bin, strings.Join(args, " "))
	p := &pane{t: t, socket: fmt.Sprintf("trt-screen-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: dir}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "s", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the pane's text; -J joins wrapped lines, so a line wider than
// the pane shows as one long line instead of hiding in a wrap.
func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-J", "-t", "s") }

// waitFor polls the screen until ok holds, and fails with the last screen.
func (p *pane) waitFor(what string, timeout time.Duration, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %v for %s; the screen:\n%s", timeout, what, s)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// streamEvent is the part of an --events line the tests read.
type streamEvent struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Callbacks int64  `json:"callbacks"`
	SilentMs  int64  `json:"silent_ms"`
}

// waitForEvent polls the run's --events file (name relative to the run's
// directory) until an event satisfies ok.
func (p *pane) waitForEvent(name, what string, timeout time.Duration, ok func(streamEvent) bool) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(filepath.Join(p.dir, name))
		for _, l := range strings.Split(string(data), "\n") {
			var e streamEvent
			if json.Unmarshal([]byte(l), &e) == nil && ok(e) {
				return
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %v for %s; the screen:\n%s", timeout, what, p.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stoppingRow is the screen's line that shows the run stopping, or "".
func stoppingRow(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, "■ stopping") {
			return l
		}
	}
	return ""
}

// barLine is a phase line: an indent, then a bar.
var barLine = regexp.MustCompile(`^( +)[█░]+ `)

// hasNestedBars reports whether a phase bar sits right below a less
// indented one: a phase inside its parent, the live view's point.
func hasNestedBars(s string) bool {
	prev := -1
	for _, l := range strings.Split(s, "\n") {
		m := barLine.FindStringSubmatch(l)
		if m == nil {
			prev = -1
			continue
		}
		if prev >= 0 && len(m[1]) > prev {
			return true
		}
		prev = len(m[1])
	}
	return false
}

func finalTable(s string) bool {
	return strings.Contains(s, "[exit ") && regexp.MustCompile(`(?m)^  build +status +time`).MatchString(s)
}

func assertLinesFit(t *testing.T, screen string, cols int) {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if width(l) > cols {
			t.Errorf("a line is %d cells wide in a %d-column pane: %q", width(l), cols, l)
		}
	}
}

func TestScreenRun(t *testing.T) {
	bin := screenBinary(t)
	const cols, rows = 90, 30
	p := startPane(t, bin, fmt.Sprintf(screenMatrix, "1ms", ""), cols, rows, "--jobs", "3")
	// Four levels deep (two cells a level at this width) is where the
	// builds spend their time, and what the README's capture should show.
	fourthLevel := regexp.MustCompile(`(?m)^ {8}[█░]+ `)
	live := p.waitFor("three builds four levels deep", 60*time.Second, func(s string) bool {
		return hasNestedBars(s) && strings.Count(s, "▶ ") == 3 && len(fourthLevel.FindAllString(s, -1)) == 3
	})
	assertLinesFit(t, live, cols)
	end := p.waitFor("the final table", 120*time.Second, finalTable)
	for _, name := range []string{"resnet50-fp16-batch8-1-long-name", "resnet50-fp16-batch8-2-long-name", "mnist-fp32"} {
		if !strings.Contains(end, name) {
			t.Errorf("the final table lacks %s:\n%s", name, end)
		}
	}
	if hasNestedBars(end) {
		t.Errorf("bars remain on screen after the run:\n%s", end)
	}
	if golden.Updating() {
		doc := "$ trt-action build --jobs 3   # while it runs\n" + trimScreen(live) +
			"\n$ trt-action build --jobs 3   # when it ends\n" + trimScreen(end)
		if err := os.WriteFile("../../../docs/terminal.txt", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScreenNarrowStopAndKill(t *testing.T) {
	bin := screenBinary(t)
	const cols, rows = 34, 30
	p := startPane(t, bin, fmt.Sprintf(screenMatrix, "3ms", hangBuild), cols, rows,
		"--jobs", "4", "--events", "events.jsonl")
	live := p.waitFor("nested bars", 60*time.Second, hasNestedBars)
	assertLinesFit(t, live, cols)
	if !strings.Contains(live, "…") {
		t.Errorf("no name was shortened in a %d-column pane:\n%s", cols, live)
	}

	// Ctrl-C only once the hanging build hangs: before, it would stop
	// gently at its next callback and the stopping state could flash by.
	// Hung, it cannot stop, so the state stays until the second Ctrl-C (or
	// the supervisor's grace, 1.5s) kills it.
	p.waitForEvent("events.jsonl", "the hanging build to go silent", 60*time.Second, func(e streamEvent) bool {
		// Silent since its start is a worker still loading, not a hang.
		return e.Type == "heartbeat" && e.Name == "hangs-forever" && e.Callbacks > 0 && e.SilentMs >= 500
	})
	p.tmux("send-keys", "-t", "s", "C-c")
	stopping := p.waitFor("the stopping state", 10*time.Second, func(s string) bool { return stoppingRow(s) != "" })
	// What matters at this width: the state is there, whole, and says what
	// the second Ctrl-C does; and no line wraps (a wrapped line would also
	// leave stale rows behind, as the ^C the terminal echoes once did).
	if l := stoppingRow(stopping); !strings.HasPrefix(l, "■ "+shortStopHint) && !strings.HasPrefix(l, "■ "+stopHint) {
		t.Errorf("the stop line %q does not hold a whole hint:\n%s", l, stopping)
	}
	assertLinesFit(t, stopping, cols)
	assertNoStaleRows(t, stopping)

	// The hanging build cannot stop gently; the second Ctrl-C kills it.
	p.tmux("send-keys", "-t", "s", "C-c")
	end := p.waitFor("the final table after the kill", 20*time.Second, finalTable)
	if !regexp.MustCompile(`(?m)^✖ hangs-fore\S* +killed `).MatchString(end) {
		t.Errorf("the final table does not show the hanging build killed:\n%s", end)
	}
	assertLinesFit(t, end, cols)
	assertNoStaleRows(t, end)
}

// assertNoStaleRows checks that the screen is the live area or the final
// table alone: a row left from an older frame sits above it and shows as
// a build header or a phase bar before the first row of the newest one.
func assertNoStaleRows(t *testing.T, screen string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i, l := range lines {
		// Marks start rows; one further in is an old row's start that a
		// new row, starting a few cells in, did not cover.
		if _, rest, _ := strings.Cut(l, " "); strings.ContainsAny(rest, "▶✔✖■") {
			t.Errorf("row %d holds two frames' text: %q\n%s", i, l, screen)
		}
	}
	if finalTable(screen) {
		for _, l := range lines {
			if strings.HasPrefix(l, "▶ ") || barLine.MatchString(l) {
				t.Errorf("a row of the live area stayed above the final table: %q\n%s", l, screen)
			}
			if strings.HasPrefix(l, "  build ") {
				break
			}
		}
	}
}

// trimScreen drops the blank rows at the bottom of a pane and the exit
// status the test's shell prints.
func trimScreen(s string) string {
	s = regexp.MustCompile(`(?m)^\[exit \d+\]$`).ReplaceAllString(s, "")
	return strings.TrimRight(s, "\n ") + "\n"
}

func TestHasNestedBars(t *testing.T) {
	for _, tc := range []struct {
		screen string
		want   bool
	}{
		{"▶ a 1s\n  ██░░ Building engine 1/6\n    ░░░░ Optimizing graph 0/33\n", true},
		{"▶ a 1s\n █░ Building engine 1/6\n  ░░ Optimizing graph 0/33\n", true},
		{"▶ a 1s\n  ██░░ Building engine 1/6\n▶ b 1s\n  ██░░ Building engine 1/6\n", false},
		{"✔ a ok 1s\n", false},
	} {
		if got := hasNestedBars(tc.screen); got != tc.want {
			t.Errorf("hasNestedBars(%q) = %v", tc.screen, got)
		}
	}
}
