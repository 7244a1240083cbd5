//go:build cgo

package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/trace"
)

// ---------------------------------------------------------------- monitor

// waitFor calls idle until cond holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, idle func()) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, limit)
		}
		idle()
	}
}

// sleepMs is waitFor's idle step for builds paced in milliseconds.
func sleepMs() { time.Sleep(time.Millisecond) }

func TestMonitorStatsBeforeAnyCallback(t *testing.T) {
	m, err := newMonitor()
	if err != nil {
		t.Fatal(err)
	}
	defer m.free()
	if st := m.stats(); st != (Stats{LastCallback: -1}) {
		t.Errorf("fresh monitor stats = %+v", st)
	}
	if evs := m.drain(nil); len(evs) != 0 {
		t.Errorf("fresh monitor drained %d events", len(evs))
	}
}

// ---------------------------------------------------------------- simulator

var smallTrace = []trace.Event{
	{Kind: trace.Start, Phase: "Building engine", Steps: 3},
	{Kind: trace.Step, Phase: "Building engine", Step: 0},
	{Kind: trace.Start, Phase: "Cloning network graph", Parent: "Building engine", Steps: 2},
	{Kind: trace.Step, Phase: "Cloning network graph", Step: 0},
	{Kind: trace.Step, Phase: "Cloning network graph", Step: 1},
	{Kind: trace.Finish, Phase: "Cloning network graph"},
	{Kind: trace.Step, Phase: "Building engine", Step: 1},
	{Kind: trace.Start, Phase: "Timing", Parent: "Building engine", Steps: 1},
	{Kind: trace.Step, Phase: "Timing", Step: 0},
	{Kind: trace.Finish, Phase: "Timing"},
	{Kind: trace.Step, Phase: "Building engine", Step: 2},
	{Kind: trace.Finish, Phase: "Building engine"},
}

// longTrace is one root phase around a phase of n steps.
func longTrace(n int) []trace.Event {
	evs := []trace.Event{
		{Kind: trace.Start, Phase: "Building engine", Steps: 1},
		{Kind: trace.Start, Phase: "Tactic timing", Parent: "Building engine", Steps: n},
	}
	for i := 0; i < n; i++ {
		evs = append(evs, trace.Event{Kind: trace.Step, Phase: "Tactic timing", Step: i})
	}
	return append(evs, trace.Event{Kind: trace.Finish, Phase: "Tactic timing"}, trace.Event{Kind: trace.Finish, Phase: "Building engine"})
}

func simRequest(t *testing.T, evs []trace.Event, sim SimRequest) Request {
	sim.Trace = evs
	return Request{Name: "mnist-fp16", EngineTmp: filepath.Join(t.TempDir(), "engine.tmp"), Sim: &sim}
}

// runToEnd drains b until it ends and returns everything it produced.
func runToEnd(t *testing.T, b *Build, timeout time.Duration) ([]trace.Event, []LogLine, Result) {
	t.Helper()
	var events []trace.Event
	var logs []LogLine
	deadline := time.After(timeout)
	for {
		select {
		case <-b.Done():
			return b.Drain(events), b.Logs(logs), b.Result()
		case <-deadline:
			b.Cancel()
			t.Fatalf("build still running after %v", timeout)
		case <-time.After(2 * time.Millisecond):
			events, logs = b.Drain(events), b.Logs(logs)
		}
	}
}

func stripTiming(evs []trace.Event) []trace.Event {
	out := make([]trace.Event, len(evs))
	for i, ev := range evs {
		ev.T, ev.Thread = 0, 0
		out[i] = ev
	}
	return out
}

// simSlack is sim.cc's kSlack: an event due within it is delivered at once
// rather than slept for.
const simSlack = time.Millisecond

func TestSimReplaysInOrderFromSeveralThreads(t *testing.T) {
	const step = 2 * time.Millisecond
	req := simRequest(t, smallTrace, SimRequest{StepNs: int64(step), Threads: 4})
	b, err := StartSim(req)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, logs, res := runToEnd(t, b, 10*time.Second)

	if res.Status != OK || res.Err != "" {
		t.Fatalf("result = %+v, want OK", res)
	}
	if got := stripTiming(events); fmt.Sprint(got) != fmt.Sprint(smallTrace) {
		t.Errorf("replayed events:\n%v\nwant:\n%v", got, smallTrace)
	}
	threads := map[int]bool{}
	for i, ev := range events {
		threads[ev.Thread] = true
		if i > 0 && ev.Thread == events[i-1].Thread {
			t.Errorf("events %d and %d both came from thread %d; turns should alternate", i-1, i, ev.Thread)
		}
		if i > 0 && ev.T < events[i-1].T {
			t.Errorf("event %d at %v is before event %d at %v", i, ev.T, i-1, events[i-1].T)
		}
	}
	if len(threads) != 4 {
		t.Errorf("callbacks came from %d thread numbers, want 4", len(threads))
	}
	// Event i is due i steps after the replay began, which is after the
	// monitor's clock began. Pacing delivers an event due within simSlack
	// at once (sim.cc, kSlack), so on a loaded machine, where a thread gets
	// its turn late, an event can come up to simSlack before its step:
	// never earlier. No upper bound: a loaded machine makes any event late.
	for i, ev := range events {
		if due := time.Duration(i)*step - simSlack; ev.T < due {
			t.Errorf("event %d at %v; pacing at %v per event wants it at %v at the earliest", i, ev.T, step, due)
		}
	}
	if len(logs) == 0 || logs[0] != (LogLine{Severity: 3, Text: "simulating 12 callbacks on 4 threads"}) {
		t.Errorf("logs = %+v, want the info line first", logs)
	}
	if st := b.Stats(); st.Callbacks != int64(len(smallTrace)) || st.Dropped != 0 {
		t.Errorf("stats = %+v", st)
	}

	engine, err := os.ReadFile(req.EngineTmp)
	if err != nil {
		t.Fatal(err)
	}
	// No build name in it: a cache hit after a rename hands these bytes out.
	if !strings.HasPrefix(string(engine), "TRTACTION-SIM-ENGINE v1\nevents 12\nphases-fnv1a ") {
		t.Errorf("engine = %q", engine)
	}
}

func TestSimEngineChecksumFollowsPhaseNames(t *testing.T) {
	engineFor := func(evs []trace.Event) string {
		req := simRequest(t, evs, SimRequest{StepNs: 1, Threads: 2})
		b, err := StartSim(req)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, _, res := runToEnd(t, b, 10*time.Second); res.Status != OK {
			t.Fatalf("result = %+v", res)
		}
		data, err := os.ReadFile(req.EngineTmp)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	renamed := append([]trace.Event(nil), smallTrace...)
	renamed[0].Phase = "Building Engine"
	if a, b := engineFor(smallTrace), engineFor(renamed); a == b {
		t.Errorf("engines of differently named traces are identical: %q", a)
	}
}

// sim.engine-size: the engine has exactly that many bytes, the header
// first; the same request gives the same bytes whatever its name and
// paths, and a request that differs in a setting gives other bytes.
func TestSimEngineSizeIsExactAndFollowsTheSettings(t *testing.T) {
	engineOf := func(name string, sim SimRequest, settings map[string]any) []byte {
		t.Helper()
		req := simRequest(t, smallTrace, sim)
		req.Name, req.Settings = name, settings
		b, err := StartSim(req)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, _, res := runToEnd(t, b, 20*time.Second); res.Status != OK {
			t.Fatalf("result = %+v", res)
		}
		data, err := os.ReadFile(req.EngineTmp)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	const size = 20<<20 + 5 // several chunks and a word cut short
	base := SimRequest{StepNs: 1, Threads: 2, EngineSize: size}
	a := engineOf("a", base, nil)
	if len(a) != size || !strings.HasPrefix(string(a), "TRTACTION-SIM-ENGINE v1\n") {
		t.Fatalf("engine of %d bytes starting %q; want %d bytes after the header", len(a), a[:min(len(a), 30)], size)
	}
	if zeros := bytes.Count(a[len(a)-4096:], []byte{0}); zeros > 100 {
		t.Errorf("the engine ends in %d zero bytes of 4096: not filled", zeros)
	}
	if again := engineOf("renamed", base, nil); !bytes.Equal(a, again) {
		t.Error("the same settings under another name gave other bytes")
	}
	threads := base
	threads.Threads = 3
	if other := engineOf("a", threads, nil); bytes.Equal(a, other) {
		t.Error("engines of builds with other sim settings are identical")
	}
	if other := engineOf("a", base, map[string]any{"opt-level": 5}); bytes.Equal(a, other) {
		t.Error("engines of builds with other builder settings are identical")
	}
	small := base
	small.EngineSize = 10
	if got := engineOf("a", small, nil); string(got) != "TRTACTION-" {
		t.Errorf("a 10-byte engine is %q, want the header cut short", got)
	}
}

func TestSimCancelFinishesActivePhasesInnermostFirst(t *testing.T) {
	req := simRequest(t, longTrace(500), SimRequest{StepNs: int64(10 * time.Millisecond), Threads: 3})
	b, err := StartSim(req)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	waitFor(t, 30*time.Second, "5 callbacks", func() bool { return b.Stats().Callbacks >= 5 }, sleepMs)
	b.Cancel()
	events, _, res := runToEnd(t, b, 2*time.Second)

	if res.Status != Cancelled {
		t.Fatalf("result = %+v, want Cancelled", res)
	}
	if len(events) > 100 {
		t.Errorf("%d callbacks delivered; the cancel should have stopped the replay early", len(events))
	}
	n := len(events)
	tail := stripTiming(events[n-2:])
	want := []trace.Event{{Kind: trace.Finish, Phase: "Tactic timing"}, {Kind: trace.Finish, Phase: "Building engine"}}
	if fmt.Sprint(tail) != fmt.Sprint(want) {
		t.Errorf("last events %v, want the two finishes innermost first", tail)
	}
	if events[n-3].Kind != trace.Step {
		t.Errorf("event before the finishes is %+v, want the refused step", events[n-3])
	}
	if _, err := os.Stat(req.EngineTmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled simulation wrote an engine (stat: %v)", err)
	}
}

func TestSimCloseBeforeDoneCancels(t *testing.T) {
	b, err := StartSim(simRequest(t, longTrace(500), SimRequest{StepNs: int64(10 * time.Millisecond), Threads: 2}))
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	select {
	case <-b.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not stop the build")
	}
	if res := b.Result(); res.Status != Cancelled {
		t.Errorf("result = %+v, want Cancelled", res)
	}
	if evs := b.Drain(nil); len(evs) != 0 {
		t.Errorf("a closed build still drained %d events", len(evs))
	}
}

// The fault strikes at its share of the events, of a trace in memory and of
// a trace file alike (whose events are counted first).
func TestSimFailFault(t *testing.T) {
	const steps = 100
	sim := SimRequest{StepNs: int64(100 * time.Microsecond), Threads: 2, Fault: "fail", FaultAtFrac: 0.5}
	for name, req := range map[string]Request{
		"memory": simRequest(t, longTrace(steps), sim),
		"file":   fileRequest(t, traceFile(t, longTrace(steps)), sim),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := StartSim(req)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			events, logs, res := runToEnd(t, b, 10*time.Second)

			strike := (steps + 4) / 2
			if res.Status != Failed || !strings.Contains(res.Err, fmt.Sprintf("simulated failure after %d of %d callbacks", strike, steps+4)) {
				t.Fatalf("result = %+v", res)
			}
			if len(events) != strike+2 {
				t.Errorf("%d events, want %d delivered before the fault plus two finishes", len(events), strike+2)
			}
			checkBalanced(t, events)
			var errorLines []string
			for _, l := range logs {
				if l.Severity == 1 {
					errorLines = append(errorLines, l.Text)
				}
			}
			if len(errorLines) != 1 || errorLines[0] != res.Err {
				t.Errorf("error log lines = %q, want exactly the failure message", errorLines)
			}
		})
	}
}

// checkBalanced checks every started phase was finished, innermost first.
func checkBalanced(t *testing.T, events []trace.Event) {
	t.Helper()
	var stack []string
	for _, ev := range events {
		switch ev.Kind {
		case trace.Start:
			stack = append(stack, ev.Phase)
		case trace.Finish:
			if len(stack) == 0 || stack[len(stack)-1] != ev.Phase {
				t.Errorf("finish of %q while the innermost phase is %v", ev.Phase, stack)
				return
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("phases never finished: %v", stack)
	}
}

func TestSimSilenceFault(t *testing.T) {
	const silence = 150 * time.Millisecond
	req := simRequest(t, longTrace(36), SimRequest{StepNs: int64(time.Millisecond), Threads: 2, Fault: "silence", FaultNs: int64(silence), FaultAtFrac: 0.5})
	b, err := StartSim(req)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, _, res := runToEnd(t, b, 10*time.Second)
	if res.Status != OK {
		t.Fatalf("result = %+v", res)
	}
	if len(events) != 40 {
		t.Fatalf("%d events, want all 40", len(events))
	}
	// The silence sleeps before event 20 (half of the 40): the gap there is
	// at least the silence. (Not "the widest gap": a loaded machine can
	// stall a replay anywhere; the check is that the silence is here.)
	if gap := events[20].T - events[19].T; gap < silence {
		t.Errorf("gap before event 20 %v, want >= %v", gap, silence)
	}
}

func TestSimTraceTimesPaceTheReplay(t *testing.T) {
	evs := append([]trace.Event(nil), smallTrace...)
	for i := range evs {
		evs[i].T = time.Duration(i) * 3 * time.Millisecond
	}
	b, err := StartSim(simRequest(t, evs, SimRequest{Threads: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, _, res := runToEnd(t, b, 10*time.Second)
	if res.Status != OK {
		t.Fatalf("result = %+v", res)
	}
	// Each event comes at its trace time, or up to simSlack before it
	// (see TestSimReplaysInOrderFromSeveralThreads), never earlier.
	for i, ev := range events {
		if due := evs[i].T - simSlack; ev.T < due {
			t.Errorf("event %d at %v, before its trace time %v less the slack", i, ev.T, evs[i].T)
		}
	}
}

func TestSimLongPhaseNameResolves(t *testing.T) {
	long := strings.Repeat("Tactic ", 200)
	evs := []trace.Event{{Kind: trace.Start, Phase: long, Steps: 1}, {Kind: trace.Finish, Phase: long}}
	b, err := StartSim(simRequest(t, evs, SimRequest{StepNs: 1, Threads: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, _, _ := runToEnd(t, b, 10*time.Second)
	if len(events) != 2 || events[0].Phase != long || events[1].Phase != long {
		t.Errorf("long name not resolved: %d events", len(events))
	}
}

func TestStartSimRejectsBadRequests(t *testing.T) {
	if _, err := StartSim(Request{Name: "x"}); err == nil {
		t.Error("StartSim without Sim succeeded")
	}
	_, err := StartSim(simRequest(t, smallTrace, SimRequest{Fault: "explode"}))
	if err == nil || !strings.Contains(err.Error(), `"explode"`) || !strings.Contains(err.Error(), "silence") {
		t.Errorf("unknown fault error = %v, want the name and the allowed faults", err)
	}
}

// ---------------------------------------------------------------- loader

// fakeBackend compiles testdata/fake_backend.cc into a shared object.
func fakeBackend(t *testing.T) string {
	t.Helper()
	// $CXX as cgo and make read it: a command, possibly with flags.
	cmd := strings.Fields(os.Getenv("CXX"))
	if len(cmd) == 0 {
		cmd = []string{"g++"}
	}
	name := cmd[0]
	cxx, err := exec.LookPath(name)
	if err != nil {
		// CI has a compiler (it built this package), so a missing one there
		// means the loader tests would silently not run.
		if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
			t.Fatalf("no C++ compiler %q to build the fake backend: %v", name, err)
		}
		t.Skipf("no C++ compiler %q to build the fake backend: %v", name, err)
	}
	so := filepath.Join(t.TempDir(), "libtam_fake.so")
	args := slices.Concat(cmd[1:], []string{"-std=c++17", "-shared", "-fPIC", "-o", so, "testdata/fake_backend.cc"})
	out, err := exec.Command(cxx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("building fake backend: %v\n%s", err, out)
	}
	return so
}

func TestBackendLoadsAndBuilds(t *testing.T) {
	so := fakeBackend(t)
	// The backend is told the library and where it came from.
	lib := backend.LibraryLocation{Path: "/opt/lib/libnvinfer.so.10", Source: backend.FromVariable, Name: "TRT_ACTION_TRT_LIB"}
	info, err := BackendInfo(so, lib)
	if err != nil {
		t.Fatal(err)
	}
	if info != `{"backend":"fake","abi":2,"library_path":"/opt/lib/libnvinfer.so.10","error":"from TRT_ACTION_TRT_LIB"}` {
		t.Errorf("info = %s", info)
	}

	req := Request{Name: "resnet", ONNX: "model.onnx", EngineTmp: "/tmp/never"}.WithLibrary(lib)
	b, err := StartBackend(so, req)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, logs, res := runToEnd(t, b, 10*time.Second)
	if res.Status != Failed || res.Err != "fake backend builds no engine" {
		t.Errorf("result = %+v", res)
	}
	if len(events) != 4 || events[0].Phase != "Fake phase" || events[3].Kind != trace.Finish {
		t.Errorf("events = %+v", events)
	}
	var echoed Request
	if len(logs) != 1 || json.Unmarshal([]byte(logs[0].Text), &echoed) != nil || echoed.Name != "resnet" || echoed.ONNX != "model.onnx" ||
		echoed.LibPath != lib.Path || echoed.LibOrigin != "from TRT_ACTION_TRT_LIB" {
		t.Errorf("backend did not receive the request JSON: logs = %+v", logs)
	}
}

func TestBackendMissingIsUnavailable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libtam_nothere.so")
	_, err := StartBackend(missing, Request{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), missing) {
		t.Errorf("StartBackend error = %v, want ErrUnavailable naming %s", err, missing)
	}
	if _, err := BackendInfo(missing, backend.LibraryLocation{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("BackendInfo error = %v, want ErrUnavailable", err)
	}
}
