package memory

import (
	"regexp"
	"strconv"
	"strings"
)

// TensorRT logs its own view of a build's memory at info level, in lines
// such as "[MemUsageChange] Init builder kernel library: CPU +1443, GPU
// +266, now: CPU 1866, GPU 4855 (MiB)" and "[MemUsageChange] Peak memory
// usage of TRT CPU/GPU memory allocators: CPU 18 MiB, GPU 1068 MiB"
// (TensorRT-RTX 1.7 logs the latter as "[MemUsageStats] ...", and no
// "now:" lines). They
// are the only clue a build killed for memory leaves in its log, and are
// kept beside trt-action's own figures; they are TensorRT's, measured its
// way (the GPU figure of "now:" is what the GPU has in use, other
// processes included).

var (
	memNow        = regexp.MustCompile(`\[MemUsageChange\].*now: CPU (\d+), GPU (\d+) \(MiB\)`)
	memAllocators = regexp.MustCompile(`\[MemUsage(?:Change|Stats)\] Peak memory usage of TRT CPU/GPU memory allocators: CPU (\d+) MiB, GPU (\d+) MiB`)
)

// TensorRTFigures are the highest of TensorRT's own figures in a build's
// log, in bytes; 0 where none was logged.
type TensorRTFigures struct {
	CPU, GPU                     int64 // the "now:" figures
	AllocatorsCPU, AllocatorsGPU int64 // its allocators' peaks
}

// Note reads one log line, and reports whether it held figures.
func (t *TensorRTFigures) Note(line string) bool {
	// Every log line of a build comes here, thousands with verbose
	// logging: a substring test turns the others away before a regexp.
	if !strings.Contains(line, "[MemUsage") {
		return false
	}
	if m := memNow.FindStringSubmatch(line); m != nil {
		t.CPU = max(t.CPU, mib(m[1]))
		t.GPU = max(t.GPU, mib(m[2]))
		return true
	}
	if m := memAllocators.FindStringSubmatch(line); m != nil {
		t.AllocatorsCPU = max(t.AllocatorsCPU, mib(m[1]))
		t.AllocatorsGPU = max(t.AllocatorsGPU, mib(m[2]))
		return true
	}
	return false
}

func mib(digits string) int64 {
	v, _ := strconv.ParseInt(digits, 10, 64)
	return v << 20
}
