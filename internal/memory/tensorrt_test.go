package memory

import "testing"

func TestTensorRTFigures(t *testing.T) {
	var f TensorRTFigures
	lines := []string{
		"[MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 15, GPU 1095 (MiB)",
		"[MemUsageChange] Init builder kernel library: CPU +1443, GPU +266, now: CPU 1866, GPU 4855 (MiB)",
		"[MemUsageChange] TensorRT-managed allocation in building engine: CPU +0, GPU +4, now: CPU 12, GPU 16 (MiB)",
		"[MemUsageChange] Peak memory usage of TRT CPU/GPU memory allocators: CPU 18 MiB, GPU 1068 MiB",
		"[MemUsageStats] Peak memory usage of TRT CPU/GPU memory allocators: CPU 3 MiB, GPU 2000 MiB", // TensorRT-RTX 1.7
		"Total Host Persistent Memory: 1234",
	}
	held := 0
	for _, l := range lines {
		if f.Note(l) {
			held++
		}
	}
	want := TensorRTFigures{CPU: 1866 << 20, GPU: 4855 << 20, AllocatorsCPU: 18 << 20, AllocatorsGPU: 2000 << 20}
	if f != want || held != 5 {
		t.Errorf("figures = %+v from %d lines, want %+v from 5", f, held, want)
	}
}
