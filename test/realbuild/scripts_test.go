package realbuild

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// Script builds (run:, trt-action run) of real Python programs on
// TensorRT-RTX's Python API, built on the CPU: a script of ours on the
// network-definition API (testdata/build_engine.py) and Polygraphy. They
// need the builder-script venv scripts/setup-tensorrt-rtx makes
// (TRT_ACTION_SCRIPT_PYTHON: the tensorrt_rtx module, Polygraphy, onnx).

// scriptEnv is rtxEnv plus a Python that imports tensorrt_rtx.
type scriptEnv struct {
	env
	python string
	script string // testdata/build_engine.py
}

func newScriptEnv(t *testing.T) scriptEnv {
	t.Helper()
	e := rtxEnv(t)
	py := os.Getenv("TRT_ACTION_SCRIPT_PYTHON")
	if py == "" {
		prerequisite(t, "TRT_ACTION_SCRIPT_PYTHON is not set (eval \"$(scripts/setup-tensorrt-rtx)\" sets it)")
	}
	if out, err := exec.Command(py, "-c", "import tensorrt_rtx, polygraphy").CombinedOutput(); err != nil {
		prerequisite(t, "%s cannot import tensorrt_rtx and polygraphy: %v\n%s", py, err, out)
	}
	script, err := filepath.Abs("testdata/build_engine.py")
	if err != nil {
		t.Fatal(err)
	}
	return scriptEnv{env: e, python: py, script: script}
}

// with is e whose commands also get vars (a copy: e's own are kept).
func (e scriptEnv) with(vars ...string) scriptEnv {
	e.vars = append(slices.Clone(e.vars), vars...)
	return e
}

// runScript runs trt-action run in dir with flags, then -- and command.
func (e scriptEnv) runScript(t *testing.T, dir string, flags []string, command ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	r := run{dir: dir}
	args := append([]string{"run", "--backend", "tensorrt-rtx", "--report", r.reportPath()}, flags...)
	cmd := e.command(ctx, append(append(args, "--"), command...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	r.output = string(out)
	r.code = exitCode(t, err, r.output)
	return r
}

// plainRun runs a command without trt-action, in dir.
func plainRun(t *testing.T, dir string, env []string, command ...string) {
	t.Helper()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
	}
}

// plainOutput runs a command without trt-action, in dir, and returns its
// output, both streams.
func plainOutput(t *testing.T, dir string, command ...string) string {
	t.Helper()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
	}
	return string(out)
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s (%d bytes) and %s (%d bytes) differ: the same command built different engines with and without trt-action", a, len(x), b, len(y))
	}
}

func onlyBuild(t *testing.T, r run) report.Build {
	t.Helper()
	rep := r.report(t)
	if len(rep.Builds) != 1 {
		t.Fatalf("%d builds in the report\n%s", len(rep.Builds), r.output)
	}
	return rep.Builds[0]
}

// A script on the network-definition API builds the same engine with
// trt-action as without, and its TensorRT build is in the report with its
// phases, size, settings and network.
func TestAScriptOnTheNetworkAPIBuildsTheSameEngineObserved(t *testing.T) {
	e := newScriptEnv(t)
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--engine", "with.engine"}, e.python, e.script, "--out", "with.engine", "--layers", "12")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	plainRun(t, dir, nil, e.python, e.script, "--out", "without.engine", "--layers", "12")
	sameFile(t, filepath.Join(dir, "with.engine"), filepath.Join(dir, "without.engine"))

	b := onlyBuild(t, r)
	if b.Status != report.StatusOK || len(b.TensorRTBuilds) != 1 {
		t.Fatalf("status %s (%s), %d TensorRT builds\n%s", b.Status, b.Reason, len(b.TensorRTBuilds), r.output)
	}
	in := b.TensorRTBuilds[0]
	if in.Status != report.StatusOK || in.Route != "native" || in.Entry != "build_serialized_network" || in.Callbacks < 20 || len(in.PhaseTree) == 0 {
		t.Errorf("TensorRT build: status %s, route %s, entry %s, %d callbacks, %d root phases", in.Status, in.Route, in.Entry, in.Callbacks, len(in.PhaseTree))
	}
	// Why native, as for every route.
	if !strings.Contains(in.RouteNote, "libtam_rtx.so through pybind11's conduit: the native route, taken wherever it can be") {
		t.Errorf("route_note = %q", in.RouteNote)
	}
	info, err := os.Stat(filepath.Join(dir, "with.engine"))
	if err != nil || in.SerializedBytes != info.Size() {
		t.Errorf("serialized size %d, engine file %v (%v)", in.SerializedBytes, info, err)
	}
	// Its longest silence is inside it: the program imported TensorRT and
	// made its network (hundreds of ms) before the build began.
	if in.LongestSilenceMs > in.DurationMs {
		t.Errorf("longest silence %d ms in a TensorRT build of %d ms (from %d ms)", in.LongestSilenceMs, in.DurationMs, in.StartMs)
	}
	if in.Network == nil || in.Network.Inputs[0].Name != "features" || in.Network.Outputs[0].Name != "scores" || in.Network.Layers < 12 {
		t.Errorf("network = %+v", in.Network)
	}
	if in.Settings == nil || in.Settings.Applied["opt-level"] != float64(1) {
		t.Errorf("settings read from the config = %+v, want opt-level 1 (the script sets it)", in.Settings)
	} else if pools, _ := in.Settings.Applied["memory-pools"].(map[string]any); pools["workspace"] != float64(64<<20) {
		t.Errorf("memory-pools = %v, want workspace 64 MiB", in.Settings.Applied["memory-pools"])
	}
	if len(b.Engines) != 1 || b.Engines[0].Path != "with.engine" || b.Engines[0].Bytes != info.Size() || len(b.Engines[0].SHA256) != 64 {
		t.Errorf("engines = %+v", b.Engines)
	}
}

// The Python route (where the bindings have no conduit, or
// TRT_ACTION_ROUTE=python asks for it) builds the same engine, observed
// alike.
func TestThePythonRouteBuildsTheSameEngine(t *testing.T) {
	e := newScriptEnv(t).with("TRT_ACTION_ROUTE=python")
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--engine", "with.engine"}, e.python, e.script, "--out", "with.engine", "--monitor")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	plainRun(t, dir, nil, e.python, e.script, "--out", "without.engine", "--monitor")
	sameFile(t, filepath.Join(dir, "with.engine"), filepath.Join(dir, "without.engine"))
	b := onlyBuild(t, r)
	if len(b.TensorRTBuilds) != 1 || b.TensorRTBuilds[0].Route != "python" || b.TensorRTBuilds[0].Status != report.StatusOK {
		t.Fatalf("TensorRT builds: %+v", b.TensorRTBuilds)
	}
	// Asked for, inherited from trt-action's own environment: it says so,
	// and nothing warns of a fallback.
	if note := b.TensorRTBuilds[0].RouteNote; note != "TRT_ACTION_ROUTE=python asks for the Python route" {
		t.Errorf("route_note = %q", note)
	}
	if strings.Contains(r.output, "took the Python route") {
		t.Errorf("an asked-for Python route was warned of:\n%s", r.output)
	}
	tail := strings.Join(b.Script.OutputTail, "\n")
	if want := "program's monitor saw " + strconv.FormatInt(b.TensorRTBuilds[0].Callbacks, 10) + " callbacks"; !strings.Contains(tail, want) {
		t.Errorf("the program's own monitor did not see every callback trt-action saw: want %q in %q", want, tail)
	}
}

// A program that falls back after a failed TensorRT build (an invalid
// network: TensorRT returns None), then builds again, writes its engine and
// exits 0 is ok and keeps the engine; the failed build is named in a
// warning.
func TestAProgramThatFallsBackAfterAFailedBuildKeepsItsEngine(t *testing.T) {
	e := newScriptEnv(t)
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--engine", "fb.engine"}, e.python, e.script, "--fall-back", "--out", "fb.engine")
	b := onlyBuild(t, r)
	if r.code != 0 || b.Status != report.StatusOK {
		t.Fatalf("exit %d, %s (%s)\n%s", r.code, b.Status, b.Reason, r.output)
	}
	info, err := os.Stat(filepath.Join(dir, "fb.engine"))
	if err != nil || len(b.Engines) != 1 || b.Engines[0].Bytes != info.Size() {
		t.Errorf("engine %v (%v), engines in the report %+v", info, err, b.Engines)
	}
	in := b.TensorRTBuilds
	if len(in) != 2 || in[0].Status != report.StatusFailed || in[1].Status != report.StatusOK {
		t.Fatalf("TensorRT builds: %+v", in)
	}
	if len(b.Warnings) != 1 || !strings.HasPrefix(b.Warnings[0], "TensorRT build 1 failed") {
		t.Errorf("warnings %q, want one naming TensorRT build 1", b.Warnings)
	}
}

// A call the bindings refuse before TensorRT is entered (no config: a
// TypeError the program catches) is no TensorRT build, and the hook writes
// nothing into the program's output.
func TestACallTheBindingsRefuseIsNoTensorRTBuild(t *testing.T) {
	e := newScriptEnv(t)
	for _, route := range []string{"native", "python"} {
		t.Run(route, func(t *testing.T) {
			e := e.with("TRT_ACTION_ROUTE=" + route)
			dir := t.TempDir()
			r := e.runScript(t, dir, []string{"--engine", "te.engine"}, e.python, e.script, "--refused-call", "--out", "te.engine")
			b := onlyBuild(t, r)
			if r.code != 0 || b.Status != report.StatusOK || len(b.Warnings) != 0 {
				t.Fatalf("exit %d, %s (%s), warnings %q\n%s", r.code, b.Status, b.Reason, b.Warnings, r.output)
			}
			if in := b.TensorRTBuilds; len(in) != 1 || in[0].Status != report.StatusOK || in[0].Route != route {
				t.Errorf("TensorRT builds: %+v", in)
			}
			plain := plainOutput(t, dir, e.python, e.script, "--refused-call", "--out", "plain.engine")
			want := strings.Split(strings.TrimSuffix(strings.ReplaceAll(plain, "plain.engine", "te.engine"), "\n"), "\n")
			if got := b.Script.OutputTail; !slices.Equal(got, want) {
				t.Errorf("the program's output under trt-action:\n%q\nwithout:\n%q", got, want)
			}
		})
	}
}

// A build to a stream (build_serialized_network_to_stream, which returns
// only True) reports the size of what the program's writer took, in the
// report and in its log line, on both routes.
func TestABuildToAStreamHasItsSize(t *testing.T) {
	e := newScriptEnv(t)
	for _, route := range []string{"native", "python"} {
		t.Run(route, func(t *testing.T) {
			e := e.with("TRT_ACTION_ROUTE=" + route)
			dir := t.TempDir()
			r := e.runScript(t, dir, []string{"--engine", "s.engine"}, e.python, e.script, "--stream", "--monitor", "--out", "s.engine")
			b := onlyBuild(t, r)
			if r.code != 0 || b.Status != report.StatusOK || len(b.TensorRTBuilds) != 1 {
				t.Fatalf("exit %d, %s (%s), %d TensorRT builds\n%s", r.code, b.Status, b.Reason, len(b.TensorRTBuilds), r.output)
			}
			in := b.TensorRTBuilds[0]
			info, err := os.Stat(filepath.Join(dir, "s.engine"))
			if err != nil {
				t.Fatal(err)
			}
			if in.Entry != "build_serialized_network_to_stream" || in.Route != route || in.SerializedBytes != info.Size() {
				t.Fatalf("%s on the %s route: %d serialized bytes, the engine file has %d", in.Entry, in.Route, in.SerializedBytes, info.Size())
			}
			line := "✔ TensorRT build 1: ok in "
			at := strings.Index(r.output, line)
			if at < 0 {
				t.Fatalf("no line %q in\n%s", line, r.output)
			}
			end := strings.IndexByte(r.output[at:], '\n')
			if got, want := r.output[at:at+end], " · "+text.Bytes(in.SerializedBytes)+" · "; !strings.Contains(got, want) {
				t.Errorf("the log line %q does not give the size (%q)", got, want)
			}
		})
	}
}

// The binary copied away from its lib/ finds no native libraries: its
// script builds take the Python route, and say why where a user reads it
// (the report's route_note and one warning in the log): what is missing
// and where trt-action looked, beside the binary. --env may ask for the
// Python route itself (that value only), which then needs no warning.
func TestTheBinaryAwayFromItsLibrariesSaysWhyItTookThePythonRoute(t *testing.T) {
	e := newScriptEnv(t)
	alone := filepath.Join(t.TempDir(), "alone", "trt-action")
	copyFile(t, e.bin, alone)
	if err := os.Chmod(alone, 0o755); err != nil {
		t.Fatal(err)
	}
	e.bin = alone
	e.vars = slices.DeleteFunc(slices.Clone(e.vars), func(kv string) bool {
		return strings.HasPrefix(kv, "TRT_ACTION_BACKEND_DIR=") || strings.HasPrefix(kv, "TRT_ACTION_ROUTE=")
	})
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--engine", "away.engine"}, e.python, e.script, "--out", "away.engine", "--builds", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	b := onlyBuild(t, r)
	if len(b.TensorRTBuilds) != 2 {
		t.Fatalf("%d TensorRT builds\n%s", len(b.TensorRTBuilds), r.output)
	}
	lib := filepath.Join(filepath.Dir(alone), "lib")
	for _, in := range b.TensorRTBuilds {
		if in.Route != "python" || !strings.HasPrefix(in.RouteNote, "no libtam_host.so, which builder scripts need for the native monitor, was found") ||
			!strings.Contains(in.RouteNote, lib) || strings.Contains(in.RouteNote, "TRT_ACTION_NATIVE_DIR") {
			t.Errorf("TensorRT build %d: route %s, route_note %q; want what is missing and where it was looked for (%s)", in.Index, in.Route, in.RouteNote, lib)
		}
	}
	if n := strings.Count(r.output, "took the Python route"); n != 1 {
		t.Errorf("the log warns of the fallback %d times, want once:\n%s", n, r.output)
	}

	r = e.runScript(t, t.TempDir(), []string{"--env", "TRT_ACTION_ROUTE=python"}, e.python, e.script, "--out", "asked.engine")
	b = onlyBuild(t, r)
	if r.code != 0 || len(b.TensorRTBuilds) != 1 || b.TensorRTBuilds[0].RouteNote != "TRT_ACTION_ROUTE=python asks for the Python route" {
		t.Errorf("--env TRT_ACTION_ROUTE=python: exit %d, %+v\n%s", r.code, b.TensorRTBuilds, r.output)
	}
	if strings.Contains(r.output, "took the Python route") {
		t.Errorf("an asked-for Python route was warned of:\n%s", r.output)
	}
}

// run's default backend is tensorrt: a program that loads TensorRT-RTX
// under it keeps the declared backend, and the log and report say once
// that the library is another backend's.
func TestADeclaredBackendIsKeptAndAnotherLibraryWarnedOf(t *testing.T) {
	e := newScriptEnv(t)
	r := e.runScript(t, t.TempDir(), []string{"--backend", "tensorrt"}, e.python, e.script, "--out", "x.engine", "--builds", "2")
	b := onlyBuild(t, r)
	if r.code != 0 || b.Backend != "tensorrt" || len(b.TensorRTBuilds) != 2 || !strings.HasPrefix(b.TensorRTBuilds[0].Library, "TensorRT-RTX ") {
		t.Fatalf("exit %d, backend %s, %d TensorRT builds\n%s", r.code, b.Backend, len(b.TensorRTBuilds), r.output)
	}
	const warning = ", a tensorrt-rtx library, but this build is declared tensorrt, which its report keeps"
	if n := strings.Count(r.output, warning); n != 1 || !slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.Contains(w, warning) }) {
		t.Errorf("warned %d times in the log (want once), report warnings %q\n%s", n, b.Warnings, r.output)
	}
}

// A TensorRT build that fails for a reason TensorRT logs (a target of
// the GPU it runs on, ComputeCapability.CURRENT, on a machine with none,
// as NVIDIA's apiUsage sample asks for) says TensorRT's error in its
// reason, and so does the script build, as a matrix build does. What to
// expect is what the program prints without trt-action.
func TestAFailedScriptBuildSaysTensorRTsError(t *testing.T) {
	e := newScriptEnv(t)
	cmd := exec.Command(e.python, e.script, "--out", "bare.engine", "--target-current")
	cmd.Dir, cmd.Env = t.TempDir(), e.vars
	bare, _ := cmd.CombinedOutput()
	var logged string // the last error line the bindings' logger printed
	for _, line := range strings.Split(string(bare), "\n") {
		if _, msg, ok := strings.Cut(line, "] [TRT] [E] "); ok {
			logged = strings.TrimSpace(msg)
		}
	}
	r := e.runScript(t, t.TempDir(), nil, e.python, e.script, "--out", "x.engine", "--target-current")
	b := onlyBuild(t, r)
	if len(b.TensorRTBuilds) != 1 {
		t.Fatalf("%d TensorRT builds\n%s", len(b.TensorRTBuilds), r.output)
	}
	in := b.TensorRTBuilds[0]
	if logged == "" { // a GPU here: the target is met
		if in.Status != report.StatusOK {
			t.Errorf("the bare program built, this one did not: %s (%s)", in.Status, in.Reason)
		}
		return
	}
	if in.Status != report.StatusFailed || in.Reason != logged {
		t.Errorf("TensorRT build: %s (%s); want failed with TensorRT's error %q", in.Status, in.Reason, logged)
	}
	if b.Status != report.StatusFailed || !strings.Contains(b.Reason, "TensorRT build 1 failed: "+logged) {
		t.Errorf("script build: %s (%s); want TensorRT's error in its reason", b.Status, b.Reason)
	}
}

// Polygraphy, a real program nobody here wrote, builds a real model (the
// onnx wheel's SqueezeNet) the same with and without trt-action.
func TestPolygraphyConvertIsObserved(t *testing.T) {
	e := newScriptEnv(t)
	out, err := exec.Command(e.python, "-c", "import onnx, os; print(os.path.dirname(onnx.__file__))").Output()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(strings.TrimSpace(string(out)), "backend", "test", "data", "light", "light_squeezenet.onnx")
	polygraphy := filepath.Join(filepath.Dir(e.python), "polygraphy")
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--engine", "with.engine", "--env", "POLYGRAPHY_USE_TENSORRT_RTX=1"},
		polygraphy, "convert", model, "-o", "with.engine")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	plainRun(t, dir, []string{"POLYGRAPHY_USE_TENSORRT_RTX=1"}, polygraphy, "convert", model, "-o", "without.engine")
	sameFile(t, filepath.Join(dir, "with.engine"), filepath.Join(dir, "without.engine"))
	b := onlyBuild(t, r)
	if b.Name != "polygraphy" || b.Status != report.StatusOK || len(b.TensorRTBuilds) != 1 || b.TensorRTBuilds[0].Status != report.StatusOK {
		t.Errorf("%s: %s (%s), %+v", b.Name, b.Status, b.Reason, b.TensorRTBuilds)
	}
	if n := b.TensorRTBuilds[0].Network; n == nil || n.Layers < 20 {
		t.Errorf("SqueezeNet's network = %+v", n)
	}
}

// A matrix of script builds: the program's own monitor, two builds, builds
// in spawned children, a crash, a program that never builds and one the
// hook cannot enter; each ends as what happened says, the others go on.
func TestScriptBuildsInAMatrixEndAsWhatHappened(t *testing.T) {
	e := newScriptEnv(t)
	py, s := e.python, e.script
	r := e.build(t, `version: 1
defaults:
  backend: tensorrt-rtx
  budgets: {grace: 5s}
builds:
  - {name: own-monitor, run: [`+py+`, `+s+`, --monitor, --builds, "2", --out, OUT/a.engine], engine: [OUT/a.engine, OUT/a.engine.1]}
  - {name: spawn, run: [`+py+`, `+s+`, --spawn, "2", --out, OUT/b.engine]}
  - {name: crash, run: [`+py+`, `+s+`, --abort-at, "15", --out, OUT/c.engine], engine: OUT/c.engine}
  - {name: never, run: [`+py+`, `+s+`, --never]}
  - {name: isolated, run: [`+py+`, -I, `+s+`, --out, OUT/d.engine]}
`)
	rep := r.report(t)
	own := findBuild(t, rep, "own-monitor")
	if own.Status != report.StatusOK || len(own.TensorRTBuilds) != 2 || len(own.Engines) != 2 {
		t.Errorf("own-monitor: %s (%s), %d builds, %d engines\n%s", own.Status, own.Reason, len(own.TensorRTBuilds), len(own.Engines), r.output)
	}
	// The program's monitor still saw every callback ours did: the tee.
	saw := strings.Count(strings.Join(own.Script.OutputTail, "\n"), "program's monitor saw ")
	if saw != 2 || !strings.Contains(strings.Join(own.Script.OutputTail, "\n"), "program's monitor saw "+strconv.FormatInt(own.TensorRTBuilds[1].Callbacks, 10)+" callbacks") {
		t.Errorf("the program's own monitor did not see every callback trt-action saw (%d): %q", own.TensorRTBuilds[1].Callbacks, own.Script.OutputTail)
	}
	spawn := findBuild(t, rep, "spawn")
	pids := map[int]bool{}
	for _, in := range spawn.TensorRTBuilds {
		pids[in.PID] = in.Status == report.StatusOK
	}
	// The pool's two workers may share its two tasks: two or three processes built.
	if spawn.Status != report.StatusOK || len(spawn.TensorRTBuilds) != 3 || len(pids) < 2 || spawn.Script.Processes < 3 {
		t.Errorf("spawn: %s (%s), %d TensorRT builds in %d processes, %d processes with the hook", spawn.Status, spawn.Reason, len(spawn.TensorRTBuilds), len(pids), spawn.Script.Processes)
	}
	crash := findBuild(t, rep, "crash")
	if crash.Status != report.StatusCrashed || !strings.Contains(crash.Reason, "SIGABRT") ||
		len(crash.TensorRTBuilds) != 1 || crash.TensorRTBuilds[0].Status != report.StatusCrashed {
		t.Errorf("crash: %s (%s) %+v", crash.Status, crash.Reason, crash.TensorRTBuilds)
	}
	if _, err := os.Stat(filepath.Join(r.outDir(), "c.engine")); !os.IsNotExist(err) {
		t.Errorf("the crashed build left an engine file (%v)", err)
	}
	never := findBuild(t, rep, "never")
	if never.Status != report.StatusOK || len(never.Warnings) != 1 || !strings.Contains(never.Warnings[0], "no TensorRT build was seen") {
		t.Errorf("never: %s, warnings %q", never.Status, never.Warnings)
	}
	isolated := findBuild(t, rep, "isolated")
	if isolated.Status != report.StatusOK || isolated.Script.Unobserved == "" || !strings.Contains(isolated.Script.Unobserved, "-I") {
		t.Errorf("isolated (python -I): %s, unobserved %q", isolated.Status, isolated.Script.Unobserved)
	}
	if r.code != 1 {
		t.Errorf("exit %d with a crashed build, want 1", r.code)
	}
}

// A build budget stops the TensorRT build inside the command at its next
// callback; the program then fails its own way, and the build is
// budget-exceeded whatever its exit code.
func TestABuildBudgetStopsAScriptBuild(t *testing.T) {
	e := newScriptEnv(t)
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--build-budget", "1s", "--engine", "slow.engine"},
		e.python, e.script, "--step-sleep", "0.05", "--out", "slow.engine")
	b := onlyBuild(t, r)
	if b.Status != report.StatusBudgetExceeded || b.Budget == nil || b.Budget.Kind != "build" {
		t.Fatalf("status %s (%s), budget %+v\n%s", b.Status, b.Reason, b.Budget, r.output)
	}
	if len(b.TensorRTBuilds) != 1 || b.TensorRTBuilds[0].Status != report.StatusBudgetExceeded {
		t.Errorf("its TensorRT build: %+v", b.TensorRTBuilds)
	}
	// The stop lands at the next callback, 50 ms apart here.
	if b.StopLatencyMs > 2000 {
		t.Errorf("%d ms from the budget's end to the command's", b.StopLatencyMs)
	}
	if r.code != 3 {
		t.Errorf("exit %d, want 3 (a budget failed the run)", r.code)
	}
}

// SIGINT to trt-action stops the TensorRT build inside the command; no
// process of the command outlives the run.
func TestSIGINTEndsAScriptBuildAndEveryProcessOfIt(t *testing.T) {
	e := newScriptEnv(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := e.command(ctx, "run", "--backend", "tensorrt-rtx", "--report", filepath.Join(dir, "report.json"), "--",
		e.python, e.script, "--step-sleep", "0.05", "--pid-file", pidFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitForPID(t, pidFile)
	time.Sleep(500 * time.Millisecond) // inside the build by now
	_ = cmd.Process.Signal(syscall.SIGINT)
	code := exitCode(t, cmd.Wait(), out.String())
	r := run{dir: dir, code: code, output: out.String()}
	b := onlyBuild(t, r)
	if code != 130 || b.Status != report.StatusCancelled || !strings.Contains(b.Reason, "SIGINT") {
		t.Errorf("exit %d, %s (%s)\n%s", code, b.Status, b.Reason, out.String())
	}
	if err := syscall.Kill(pid, 0); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the program (pid %d) outlived trt-action", pid)
	}
}

func waitForPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			pid, err := strconv.Atoi(string(data))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the program never wrote %s", path)
	return 0
}
