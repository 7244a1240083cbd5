package jsonl

import (
	"bytes"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// Memory in the stream: each heartbeat has what the build's processes
// hold now and at most (GPU only where measured); a build's end has its
// memory and the memory budget that stopped it; a TensorRT build's end,
// its process's.
func TestStreamWithMemoryGolden(t *testing.T) {
	r := reporttest.Memory()
	over, script := r.Builds[2], r.Builds[3]
	events := []event.Event{
		{Kind: event.RunStarted, Build: -1, Total: 2},
		{Kind: event.BuildStarted, At: time.Millisecond, Build: 0, Name: over.Name},
		{Kind: event.Heartbeat, At: time.Second, Build: 0, Name: over.Name, Progress: &event.Progress{Elapsed: time.Second, BudgetLeft: -1,
			Memory: &event.MemoryUse{Host: 4_000_000_000, PeakHost: 4_200_000_000}}},
		{Kind: event.Heartbeat, At: 2 * time.Second, Build: 0, Name: over.Name, Progress: &event.Progress{Elapsed: 2 * time.Second, BudgetLeft: -1,
			Memory: &event.MemoryUse{Host: 8_700_000_000, PeakHost: 8_700_000_000, GPU: 1_000_000_000, PeakGPU: 1_500_000_000, HasGPU: true}}},
		{Kind: event.BudgetWarning, At: 2 * time.Second, Build: 0, Name: over.Name, Message: "memory used 81% of its 8GiB limit (7.0 GB)"},
		{Kind: event.Stopping, At: 2 * time.Second, Build: 0, Name: over.Name, Message: "memory budget exceeded: its processes held 8.7 GB (limit 8GiB)"},
		{Kind: event.BuildFinished, At: 7 * time.Second, Build: 0, Name: over.Name, Result: &over},
		{Kind: event.BuildStarted, At: 7 * time.Second, Build: 1, Name: script.Name},
		{Kind: event.InnerFinished, At: 9 * time.Second, Build: 1, Name: script.Name, Inner: 1, InnerResult: &script.TensorRTBuilds[0]},
		{Kind: event.BuildFinished, At: 10 * time.Second, Build: 1, Name: script.Name, Result: &report.Build{Name: script.Name, Status: report.StatusCached}},
	}
	var out bytes.Buffer
	v := New(&out, Options{})
	for _, e := range events {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "stream-memory.jsonl", out.String())
	ls := lines(t, out.String())
	if m, ok := ls[2]["memory"].(map[string]any); !ok || m["host_bytes"] != 4e9 || m["gpu_bytes"] != nil {
		t.Errorf("first heartbeat's memory: %v", ls[2]["memory"])
	}
}
