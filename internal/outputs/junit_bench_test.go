package outputs

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// junitReport is a finished run of n builds as the supervisor holds it at
// the end: one in ten failed, with TensorRT's errors; the rest ok, with an
// engine, a library and warnings.
func junitReport(n int) *report.Report {
	r := &report.Report{Version: report.SchemaVersion, Matrix: "trt-builds.yml", Complete: true,
		StartedAt: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), DurationMs: int64(n) * 1000}
	for i := range n {
		b := report.Build{Name: fmt.Sprintf("model-%05d-fp16", i), Backend: "tensorrt-rtx", Status: report.StatusOK,
			DurationMs: 61250, Library: "/opt/tensorrt_rtx/lib/libtensorrt_rtx.so.1",
			Engine:   &report.Engine{Path: fmt.Sprintf("out/model-%05d-fp16.engine", i), Bytes: 123456789, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
			Warnings: []string{"Detected layernorm nodes in FP16.", "Weights of layer /fc2 are outside the FP16 range."}}
		if i%10 == 0 {
			b.Status, b.Reason, b.Engine = report.StatusFailed, "TensorRT failed to build the engine", nil
			for j := range 3 {
				b.Log = append(b.Log, report.LogLine{Severity: "error", Text: fmt.Sprintf("[graphOptimizer] error %d: no implementation for node /conv%d", j, j)})
			}
		}
		r.Builds = append(r.Builds, b)
	}
	return r
}

// peakLiveHeap runs write while sampling the live heap (a collection, then
// the heap in use) every millisecond, and returns the highest sample above
// the heap before write began.
func peakLiveHeap(write func() error) (uint64, error) {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base, peak := m.HeapAlloc, m.HeapAlloc
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var s runtime.MemStats
		for {
			runtime.GC()
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err := write()
	close(done)
	wg.Wait()
	return peak - base, err
}

// BenchmarkJUnitPeak is the memory the JUnit file costs at the end of a
// run of 1,000 and 10,000 builds: the live heap above the report's while
// it is written (peak-live-B), and what is allocated (B/op).
func BenchmarkJUnitPeak(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("builds=%d", n), func(b *testing.B) {
			r := junitReport(n)
			path := filepath.Join(b.TempDir(), "junit.xml")
			b.ReportAllocs()
			for b.Loop() {
				peak, err := peakLiveHeap(func() error { return writeJUnit(path, r) })
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(peak), "peak-live-B")
			}
		})
	}
}
