package build

import (
	"github.com/trt-action/trt-action/internal/memory"
	"github.com/trt-action/trt-action/internal/report"
)

// A script build's memory: the command's whole tree is held to the
// build's memory budgets as a worker is (memwatch.go), and each TensorRT
// build inside it gets the peak of its own process while it ran, and
// TensorRT's own figures where the command prints TensorRT's log.

// innerMemory is what one TensorRT build's process held while it ran.
type innerMemory struct {
	host, gpu int64
	trt       memory.TensorRTFigures
}

// noteSample checks the command's memory against its budgets and raises
// each running TensorRT build's peak to what its process holds now.
func (s *script) noteSample(sample memory.Sample) {
	s.w.noteSample(sample, s.judging())
	for _, in := range s.running() {
		if rss, ok := sample.ByPID[in.rep.PID]; ok {
			in.mem.host = max(in.mem.host, rss)
		}
		if g, ok := sample.GPUByPID[in.rep.PID]; ok {
			in.mem.gpu = max(in.mem.gpu, g)
		}
	}
}

// noteMemoryLine keeps TensorRT's own figures from a line the command
// printed: the build's, and the newest running TensorRT build's (whose
// process most likely printed it).
func (s *script) noteMemoryLine(line string) {
	s.w.mem.noteLog(line)
	if in := s.newest; in != nil && !in.done {
		in.mem.trt.Note(line)
	}
}

// report is the TensorRT build's memory for its entry: nil when no
// sample fell inside it and its log had no figures.
func (m innerMemory) report() *report.Memory {
	r := report.Memory{PeakHostBytes: m.host, PeakGPUBytes: m.gpu, TensorRTCPUBytes: m.trt.CPU, TensorRTGPUBytes: m.trt.GPU,
		TensorRTAllocatorCPUBytes: m.trt.AllocatorsCPU, TensorRTAllocatorGPUBytes: m.trt.AllocatorsGPU}
	if r.PeakHostBytes > 0 {
		r.HostSource = report.MemoryFromProc
	}
	if r.PeakGPUBytes > 0 {
		r.GPUSource = report.MemoryFromNVML
	}
	if r == (report.Memory{}) {
		return nil
	}
	return &r
}
