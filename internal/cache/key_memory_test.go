package cache

import (
	"strings"
	"testing"
)

// What a build may use of memory decides nothing of its engine: neither
// sim.allocate (memory the simulator touches, a stand-in for a build's
// own) nor the memory budgets change the key, so a cached engine serves a
// build whatever its memory settings.
func TestKeyLeavesMemoryOut(t *testing.T) {
	dir := project(t)
	const sim = `name: demo
    backend: sim
    sim: {trace: trace.jsonl, step: 1ms}`
	base := keyOf(t, dir, sim)
	for _, changed := range []string{
		strings.Replace(sim, "step: 1ms", "step: 1ms, allocate: 512MiB", 1),
		sim + "\n    budgets: {memory: 8GiB, gpu-memory: 2GiB}",
	} {
		if keyOf(t, dir, changed) != base {
			t.Errorf("the key changed with %q", changed)
		}
	}
	if keyOf(t, dir, withLine(rtxBuild, "budgets: {memory: 1GiB}")) != keyOf(t, dir, rtxBuild) {
		t.Error("a memory budget changed a tensorrt-rtx build's key")
	}
}
