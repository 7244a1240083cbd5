package realbuild

import (
	"testing"

	"github.com/trt-action/trt-action/internal/report"
)

// A real TensorRT-RTX build's memory is in its report: the worker's peak
// (TensorRT-RTX's libraries alone are more than 100 MB resident), as the
// kernel counts it for the one process (ru_maxrss) and as the samples
// saw it, with its source; TensorRT-RTX's own allocator figures where it
// logs them.
func TestARealBuildReportsItsPeak(t *testing.T) {
	e := rtxEnv(t)
	r := e.build(t, e.matrix(modelsMatrix))
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	rep := r.report(t)
	for _, name := range []string{"mlp", "cnn", "dynamic", "slow"} {
		b := findBuild(t, rep, name)
		m := b.Memory
		if b.Status != report.StatusOK || m == nil {
			t.Fatalf("%s: %s, memory %+v", name, b.Status, m)
		}
		if m.LargestProcessBytes < 100<<20 || m.PeakHostBytes < m.LargestProcessBytes || m.PeakHostBytes > 4<<30 || m.HostSource == "" || m.HostLimitBytes == 0 {
			t.Errorf("%s: memory %+v", name, m)
		}
		t.Logf("%s: %d ms, peak %d MB (largest process %d MB, cgroup %d MB, %s)", name, b.DurationMs,
			m.PeakHostBytes>>20, m.LargestProcessBytes>>20, m.CgroupPeakBytes>>20, m.HostSource)
	}
}

// A script build's TensorRT build gets its own process's peak: the
// program's Python, with TensorRT-RTX loaded into it, over a build of
// about two seconds (300 layers), so several looks fall inside it.
func TestAScriptBuildsTensorRTBuildHasItsProcesssPeak(t *testing.T) {
	e := newScriptEnv(t)
	dir := t.TempDir()
	r := e.runScript(t, dir, []string{"--engine", "a.engine"}, e.python, e.script, "--out", "a.engine", "--layers", "300")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.output)
	}
	b := onlyBuild(t, r)
	if b.Memory == nil || len(b.TensorRTBuilds) != 1 {
		t.Fatalf("memory %+v, %d TensorRT builds\n%s", b.Memory, len(b.TensorRTBuilds), r.output)
	}
	t.Logf("TensorRT build of %d ms", b.TensorRTBuilds[0].DurationMs)
	in := b.TensorRTBuilds[0].Memory
	if in == nil || in.PeakHostBytes < 100<<20 || in.PeakHostBytes > b.Memory.PeakHostBytes || in.HostSource != report.MemoryFromProc {
		t.Errorf("TensorRT build's memory %+v, the build's %+v", in, b.Memory)
	}
}
