package build

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/memory"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/native/nvmltest"
)

const mib = 1 << 20

// memoryOptions samples often, so short test builds get samples.
func memoryOptions(t testing.TB) Options {
	opts := scriptOptions(t)
	opts.memoryEvery = 20 * time.Millisecond
	return opts
}

// cgroupsHere reports whether this machine lets a run make memory
// cgroups (root, with a memory hierarchy): then every build has one.
// Under CI it must.
func cgroupsHere(t *testing.T) bool {
	t.Helper()
	h, err := memory.DetectHierarchy()
	if err == nil && os.Geteuid() == 0 {
		if _, err := os.Stat(h.Dir); err == nil {
			return true
		}
	}
	if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
		t.Fatalf("this machine lets no run make a memory cgroup (%v, euid %d)", err, os.Geteuid())
	}
	return false
}

// leftGroups lists the memory cgroups this process made that are still
// there.
func leftGroups(t *testing.T) []string {
	t.Helper()
	h, err := memory.DetectHierarchy()
	if err != nil {
		return nil
	}
	left, _ := filepath.Glob(filepath.Join(h.Dir, fmt.Sprintf("trt-action-%d-*", os.Getpid())))
	return left
}

// A simulated build's sim.allocate is in its peak: the worker's tree, and
// the worker alone as the kernel counts it (ru_maxrss), and, here, its
// cgroup's; a build without it holds far less. Its cgroup is gone at its
// end, and a cache hit has no memory at all.
func TestSimAllocateIsMeasured(t *testing.T) {
	withCgroup := cgroupsHere(t)
	dir := t.TempDir()
	slow := func(b *matrix.Build) { b.Sim.Step = 100 * time.Microsecond }
	builds := []matrix.Build{
		simBuild(dir, "big", func(b *matrix.Build) { slow(b); b.Sim.Allocate = 200 * mib }),
		simBuild(dir, "small", slow),
	}
	opts := memoryOptions(t)
	opts.Jobs = 1
	rep, _ := Run(builds, opts, nil)
	got := byName(rep)
	big, small := got["big"].Memory, got["small"].Memory
	if big == nil || small == nil {
		t.Fatalf("memory: %+v, %+v", big, small)
	}
	if big.PeakHostBytes < 200*mib || big.PeakHostBytes > small.PeakHostBytes+260*mib || small.PeakHostBytes > 150*mib {
		t.Errorf("peaks: with 200 MiB %s, without %s", mibs(big.PeakHostBytes), mibs(small.PeakHostBytes))
	}
	if big.LargestProcessBytes < 200*mib || big.LargestProcessBytes > big.PeakHostBytes {
		t.Errorf("largest process %s, tree %s", mibs(big.LargestProcessBytes), mibs(big.PeakHostBytes))
	}
	if room, _ := memory.NewMachine().Room(); big.HostLimitBytes != room.Total {
		t.Errorf("limit %d, machine %d", big.HostLimitBytes, room.Total)
	}
	wantSource := report.MemoryFromProc
	if withCgroup {
		wantSource = report.MemoryFromProcCgroupV1
		if big.CgroupPeakBytes < 200*mib || big.NoCgroup != "" {
			t.Errorf("cgroup peak %s (%s)", mibs(big.CgroupPeakBytes), big.NoCgroup)
		}
	}
	if big.HostSource != wantSource || big.PeakGPUBytes != 0 || big.GPUSource != "" {
		t.Errorf("sources: %+v", big)
	}
	if left := leftGroups(t); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
	cacheDir := t.TempDir()
	cachedRun(t, builds[1:], engineCache(t, cacheDir))
	hit, _ := cachedRun(t, builds[1:], engineCache(t, cacheDir))
	if b := hit["small"]; b.Status != report.StatusCached || b.Memory != nil {
		t.Errorf("a cache hit: %s, memory %+v", b.Status, b.Memory)
	}
}

func mibs(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }

// A script build's peak is its command's whole tree (the reaper, which is
// trt-action's, left out): a parent and its three children, against the
// sum of what each says it holds.
func TestScriptTreePeakIsTheSumOfItsProcesses(t *testing.T) {
	got, _ := runScripts(t, memoryOptions(t), scriptBuild(t, "tree", "tree:3:60", nil))
	b := got["tree"]
	if b.Status != report.StatusOK || b.Memory == nil {
		t.Fatalf("status %s (%s), memory %+v", b.Status, b.Reason, b.Memory)
	}
	// Each child holds 60 MiB and the test binary's own few: the tree is
	// their sum and the parent's, a little more than 180 MiB.
	if p := b.Memory.PeakHostBytes; p < 180*mib || p > 180*mib+4*60*mib {
		t.Errorf("tree peak %s", mibs(p))
	}
	if l := b.Memory.LargestProcessBytes; l < 60*mib || l > 120*mib {
		t.Errorf("largest process %s, want one child's", mibs(l))
	}
}

// A TensorRT build inside a script build gets its own process's peak while
// it ran.
func TestTensorRTBuildGetsItsProcesssPeak(t *testing.T) {
	got, _ := runScripts(t, memoryOptions(t), scriptBuild(t, "holding", "build-holding:100", nil))
	b := got["holding"]
	if len(b.TensorRTBuilds) != 1 || b.TensorRTBuilds[0].Memory == nil {
		t.Fatalf("status %s (%s), %d TensorRT builds", b.Status, b.Reason, len(b.TensorRTBuilds))
	}
	m := b.TensorRTBuilds[0].Memory
	if m.PeakHostBytes < 100*mib || m.PeakHostBytes > b.Memory.PeakHostBytes || m.HostSource != report.MemoryFromProc {
		t.Errorf("TensorRT build's memory %+v, the build's %s", m, mibs(b.Memory.PeakHostBytes))
	}
}

// A command that grows past its memory budget and ignores the stop is
// killed once its grace (min(grace, 5 s)) is over: budget-exceeded, with
// the limit and the peak in its budget hit, a warning on the way.
func TestMemoryBudgetStopsThenKillsAfterGrace(t *testing.T) {
	build := scriptBuild(t, "grow", "growto:150", func(b *matrix.Build) {
		b.Budgets.Memory, b.Budgets.Grace, b.Budgets.WarnPercent = 140*mib, time.Second, 50
		b.Budgets.Build = 30 * time.Second // a backstop: the program holds until killed
	})
	start := time.Now()
	got, events := runScripts(t, memoryOptions(t), build)
	b := got["grow"]
	if b.Status != report.StatusBudgetExceeded || !strings.Contains(b.Reason, "memory budget exceeded") ||
		!strings.Contains(b.Reason, "did not stop within its 1s grace") {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	h := b.Budget
	if h == nil || h.Kind != report.BudgetMemory || h.LimitBytes != 140*mib || h.PeakBytes < 140*mib || h.PeakBytes > 154*mib {
		t.Errorf("budget hit %+v", h)
	}
	if b.BudgetUse < 100 || b.BudgetUse > 110 {
		t.Errorf("budget use %.0f%%", b.BudgetUse)
	}
	if !hasEvent(events, event.BudgetWarning, "memory used") || len(b.Warnings) == 0 {
		t.Errorf("no warning at 50%%: %q", b.Warnings)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s", took)
	}
}

// One that passes its budget by more than 10% is killed at once, not
// after its grace.
func TestMemoryBudgetKillsAtOnceWhenFarOver(t *testing.T) {
	build := scriptBuild(t, "hold", "hold:300", func(b *matrix.Build) {
		b.Budgets.Memory, b.Budgets.Grace = 100*mib, 30*time.Second
		b.Budgets.Build = 30 * time.Second // a backstop: the program holds until killed
	})
	got, _ := runScripts(t, memoryOptions(t), build)
	b := got["hold"]
	if b.Status != report.StatusBudgetExceeded || !strings.Contains(b.Reason, "more than 10% over its budget, so it was killed at once") {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	if b.DurationMs > 5000 {
		t.Errorf("killed after %d ms; the grace is 30s, the rule at once", b.DurationMs)
	}
}

// A worker over its budget stops at its next callback, as for a time
// budget.
func TestMemoryBudgetStopsAWorker(t *testing.T) {
	dir := t.TempDir()
	build := simBuild(dir, "sim", func(b *matrix.Build) {
		b.Sim.Step, b.Sim.Allocate, b.Budgets.Memory = 2*time.Millisecond, 300*mib, 100*mib
	})
	rep, _ := Run([]matrix.Build{build}, memoryOptions(t), nil)
	b := rep.Builds[0]
	if b.Status != report.StatusBudgetExceeded || b.Budget == nil || b.Budget.Kind != report.BudgetMemory ||
		!strings.HasPrefix(b.Reason, "memory budget exceeded: its processes held") {
		t.Fatalf("status %s (%s), hit %+v", b.Status, b.Reason, b.Budget)
	}
	if b.DurationMs > 6000 {
		t.Errorf("took %d ms (the trace runs 12 s)", b.DurationMs)
	}
	assertNoPartials(t, dir)
}

func hasEvent(events []event.Event, kind event.EventKind, part string) bool {
	for _, ev := range events {
		if ev.Kind == kind && strings.Contains(ev.Message, part) {
			return true
		}
	}
	return false
}

// GPU memory comes from NVML, for the build's processes only: here a
// stand-in library, loaded as the driver's would be, that puts the worker
// on a GPU with 300 MB. Over a gpu-memory budget, the build stops.
func TestGPUMemoryThroughNVML(t *testing.T) {
	so := nvmltest.Build(t, nvmltest.Current)
	t.Setenv("FAKE_NVML_MATCH", "-test.run=^$:300000000")
	dir := t.TempDir()
	builds := []matrix.Build{
		simBuild(dir, "gpu", func(b *matrix.Build) { b.Sim.Step = 100 * time.Microsecond }),
		simBuild(dir, "over", func(b *matrix.Build) { b.Sim.Step, b.Budgets.GPUMemory = 2*time.Millisecond, 200_000_000 }),
	}
	opts := memoryOptions(t)
	opts.NVMLLibrary = so
	var beats []*event.MemoryUse
	opts.OnEvent = func(ev event.Event) {
		if ev.Kind == event.Heartbeat && ev.Progress.Memory != nil {
			beats = append(beats, ev.Progress.Memory)
		}
	}
	rep, _ := Run(builds, opts, nil)
	got := byName(rep)
	if m := got["gpu"].Memory; got["gpu"].Status != report.StatusOK || m == nil || m.PeakGPUBytes != 300_000_000 || m.GPUSource != report.MemoryFromNVML {
		t.Errorf("gpu: %s, memory %+v", got["gpu"].Status, m)
	}
	over := got["over"]
	if over.Status != report.StatusBudgetExceeded || over.Budget == nil || over.Budget.Kind != report.BudgetGPUMemory ||
		over.Budget.PeakBytes != 300_000_000 || !strings.Contains(over.Reason, "GPU memory budget exceeded") {
		t.Errorf("over: %s (%s), %+v", over.Status, over.Reason, over.Budget)
	}
	if len(beats) == 0 || beats[len(beats)-1].Host == 0 || !beats[len(beats)-1].HasGPU {
		t.Errorf("heartbeats' memory: %d, last %+v", len(beats), beats)
	}
	// Without the library: no GPU figure, not 0.
	opts.NVMLLibrary = filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	rep, _ = Run(builds[:1], opts, nil)
	if m := rep.Builds[0].Memory; m == nil || m.PeakGPUBytes != 0 || m.GPUSource != "" {
		t.Errorf("without NVML: %+v", m)
	}
}

// 300 short processes under one script build: the tree is sampled
// through them all and the build ends ok.
func TestThreeHundredProcessesUnderOneBuild(t *testing.T) {
	b := matrix.Build{Name: "many", Backend: "tensorrt-rtx", Budgets: matrix.Budgets{Grace: 2 * time.Second},
		Script: &matrix.Script{Argv: []string{"/bin/sh", "-c", "for i in $(seq 300); do sleep 0.5 & done; wait"}, Workdir: t.TempDir()}}
	got, _ := runScripts(t, memoryOptions(t), b)
	res := got["many"]
	if res.Status != report.StatusOK || res.Memory == nil {
		t.Fatalf("status %s (%s), memory %+v", res.Status, res.Reason, res.Memory)
	}
	// A sleep holds a few hundred KiB resident; 300 of them, more than 60 MB.
	if res.Memory.PeakHostBytes < 60_000_000 {
		t.Errorf("peak %s for 300 processes", mibs(res.Memory.PeakHostBytes))
	}
}

// With --jobs above 1 and less memory free than --min-free-memory, a build
// waits while another runs, and starts, warned, when none does: here no
// machine has that much, so the builds run one after another.
func TestMinFreeMemoryHoldsBuildsBack(t *testing.T) {
	dir := t.TempDir()
	builds := []matrix.Build{simBuild(dir, "a", nil), simBuild(dir, "b", nil), simBuild(dir, "c", nil)}
	opts := testOptions(t)
	opts.Jobs, opts.MinFreeMemory = 3, 1<<50
	rep, _ := Run(builds, opts, nil)
	for i, b := range rep.Builds {
		if b.Status != report.StatusOK || len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "below --min-free-memory 1048576GiB") {
			t.Errorf("%s: %s, warnings %q", b.Name, b.Status, b.Warnings)
		}
		if i > 0 && b.StartMs < rep.Builds[i-1].StartMs+rep.Builds[i-1].DurationMs {
			t.Errorf("%s started at %d ms, before %s ended", b.Name, b.StartMs, rep.Builds[i-1].Name)
		}
	}
	// The wait counts in the run budget: the rest are not started.
	opts.RunBudget = 300 * time.Millisecond
	slow := func(b *matrix.Build) { b.Sim.Step = time.Millisecond }
	rep, _ = Run([]matrix.Build{simBuild(dir, "x", slow), simBuild(dir, "y", slow)}, opts, nil)
	if y := rep.Builds[1]; y.Status != report.StatusCancelled || !strings.Contains(y.Reason, "run budget") {
		t.Errorf("y: %s (%s)", y.Status, y.Reason)
	}
}

// Before the first build: a memory budget above what the machine has is
// the build's warning; budgets of builds that may run at once adding up
// to more than is free, the run's.
func TestMemoryBudgetsCheckedAtStart(t *testing.T) {
	room, ok := memory.NewMachine().Room()
	if !ok {
		t.Fatal("no /proc/meminfo")
	}
	dir := t.TempDir()
	each := room.Free/2 + room.Free/10
	builds := []matrix.Build{
		simBuild(dir, "huge", func(b *matrix.Build) { b.Budgets.Memory = room.Total + 1<<30 }),
		simBuild(dir, "half", func(b *matrix.Build) { b.Budgets.Memory = each }),
	}
	opts := testOptions(t)
	opts.Jobs = 2
	var warnings []string
	opts.OnEvent = func(ev event.Event) {
		if ev.Kind == event.Warning {
			warnings = append(warnings, ev.Message)
		}
	}
	rep, _ := Run(builds, opts, nil)
	if w := rep.Builds[0].Warnings; len(w) != 1 || !strings.Contains(w[0], "is above all the memory this machine can give a build") {
		t.Errorf("huge: %q", w)
	}
	if len(rep.Builds[1].Warnings) != 0 {
		t.Errorf("half: %q", rep.Builds[1].Warnings)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "huge: memory budget") ||
		!strings.Contains(warnings[1], "the memory budgets of the 2 builds that may run at once (--jobs 2) add up to") {
		t.Errorf("warnings: %q", warnings)
	}
}

// A build stopped for memory is killed at once, not after its grace,
// when the machine has less than 2% of its memory left: here a meminfo
// that says 1 GiB of 100 GiB is available, and a build 7% over its budget.
func TestMemoryStopKillsAtOnceWhenTheMachineIsAlmostFull(t *testing.T) {
	meminfo := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(meminfo, []byte("MemTotal: 104857600 kB\nMemAvailable: 1048576 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := scriptBuild(t, "grow", "growto:150", func(b *matrix.Build) {
		b.Budgets.Memory, b.Budgets.Grace = 140*mib, 30*time.Second
		b.Budgets.Build = 30 * time.Second // a backstop: the program holds until killed
	})
	opts := memoryOptions(t)
	opts.noCgroups, opts.machine = true, memory.MachineReading(meminfo)
	got, _ := runScripts(t, opts, build)
	b := got["grow"]
	if b.Status != report.StatusBudgetExceeded || !strings.Contains(b.Reason, "only 1.1 GB of memory was left free (less than 2%), so it was killed at once") {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	if b.StopLatencyMs > 3000 {
		t.Errorf("killed %d ms after the stop; the rule is at once, the memory grace 5s", b.StopLatencyMs)
	}
}

// A gpu-memory budget above the memory of every GPU together is warned
// of before the first build: here two GPUs of 1 GiB each, as NVML (the
// stand-in) reports them.
func TestGPUMemoryBudgetAboveEveryGPUIsWarned(t *testing.T) {
	so := nvmltest.Build(t, nvmltest.Current)
	t.Setenv("FAKE_NVML_DEVICES", "2")
	t.Setenv("FAKE_NVML_TOTAL", strconv.Itoa(1<<30))
	dir := t.TempDir()
	builds := []matrix.Build{
		simBuild(dir, "beyond", func(b *matrix.Build) { b.Budgets.GPUMemory = 3 << 30 }),
		simBuild(dir, "within", func(b *matrix.Build) { b.Budgets.GPUMemory = 3 << 29 }),
	}
	opts := memoryOptions(t)
	opts.NVMLLibrary = so
	rep, _ := Run(builds, opts, nil)
	want := "gpu-memory budget 3GiB is above the memory of every GPU on this machine together (2.1 GB, as NVML reports it)"
	if w := rep.Builds[0].Warnings; len(w) != 1 || !strings.HasPrefix(w[0], want) {
		t.Errorf("beyond: %q, want one starting %q", w, want)
	}
	if w := rep.Builds[1].Warnings; len(w) != 0 {
		t.Errorf("within: %q", w)
	}
	// Without NVML nothing is said: no figure to compare with.
	opts.NVMLLibrary = filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	rep, _ = Run(builds[:1], opts, nil)
	if w := rep.Builds[0].Warnings; len(w) != 0 {
		t.Errorf("without NVML: %q", w)
	}
}

// A script build's command starts with the reaper's oom_score_adj (+500)
// and in the build's memory cgroup, both inherited from the reaper, which
// waits for them before it starts the command.
func TestCommandStartsInTheBuildsCgroupWithItsOOMScore(t *testing.T) {
	withCgroup := cgroupsHere(t)
	b := matrix.Build{Name: "adj", Backend: "tensorrt-rtx", Budgets: matrix.Budgets{Grace: 2 * time.Second},
		Script: &matrix.Script{Argv: []string{"/bin/sh", "-c", "cat /proc/self/oom_score_adj; grep memory /proc/self/cgroup"}, Workdir: t.TempDir()}}
	got, _ := runScripts(t, memoryOptions(t), b)
	res := got["adj"]
	if res.Status != report.StatusOK || len(res.Script.OutputTail) == 0 {
		t.Fatalf("%s (%s)", res.Status, res.Reason)
	}
	if out := res.Script.OutputTail; out[0] != strconv.Itoa(memory.OOMScoreAdj) {
		t.Errorf("oom_score_adj %q", out[0])
	}
	if withCgroup {
		want := fmt.Sprintf("/trt-action-%d-", os.Getpid())
		if out := strings.Join(res.Script.OutputTail, "\n"); !strings.Contains(out, want) {
			t.Errorf("the command's cgroup: %q, want one named %s…", out, want)
		}
	}
}

// A stop for memory kills after min(grace, 5 s): memory grows where no
// callback comes, so a time budget's 30 s would be too long to wait.
func TestMemoryStopKillsWithinFiveSeconds(t *testing.T) {
	build := scriptBuild(t, "grow", "growto:150", func(b *matrix.Build) {
		b.Budgets.Memory, b.Budgets.Grace = 140*mib, 30*time.Second
		b.Budgets.Build = 30 * time.Second // a backstop: the program holds until killed
	})
	got, _ := runScripts(t, memoryOptions(t), build)
	b := got["grow"]
	if b.Status != report.StatusBudgetExceeded || !strings.Contains(b.Reason, "did not stop within its 5s grace") {
		t.Fatalf("status %s (%s)", b.Status, b.Reason)
	}
	if b.StopLatencyMs < 5000 || b.StopLatencyMs > 9000 {
		t.Errorf("killed %d ms after the stop", b.StopLatencyMs)
	}
}

// A build whose process could not start leaves no cgroup, and has no
// memory figures.
func TestNoCgroupLeftWhenTheProcessCannotStart(t *testing.T) {
	cgroupsHere(t)
	opts := memoryOptions(t)
	opts.Exe = filepath.Join(t.TempDir(), "missing")
	got, _ := runScripts(t, opts, scriptBuild(t, "script", "ok", nil), simBuild(t.TempDir(), "worker", nil))
	for name, b := range got {
		if b.Status != report.StatusFailed || b.Memory != nil {
			t.Errorf("%s: %s (%s), memory %+v", name, b.Status, b.Reason, b.Memory)
		}
	}
	if left := leftGroups(t); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
}
