package cli

import (
	"flag"
	"os"

	"github.com/trt-action/trt-action/internal/build"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/text"
	"github.com/trt-action/trt-action/native"
)

// memoryFlags are build's and run's memory flags: budgets over every
// build's, and build's --min-free-memory (docs/budgets.md#memory-budgets).
type memoryFlags struct {
	budget    sizeFlag
	gpuBudget sizeFlag
	minFree   freeFlag
}

func (m *memoryFlags) register(fs *flag.FlagSet, jobs bool) {
	fs.Var(&m.budget, "memory-budget", "most host memory each build's processes may hold at once (`size`, like 8GiB; over the matrix file's budgets.memory)")
	fs.Var(&m.gpuBudget, "gpu-memory-budget", "most GPU memory each build's processes may hold at once (`size`; over budgets.gpu-memory)")
	if jobs {
		m.minFree = freeFlag(build.DefaultMinFreeMemory)
		fs.Var(&m.minFree, "min-free-memory", "with --jobs above 1, start no build beside others while less memory than this is free (`size`; 0: off)")
	}
}

// apply puts the budgets the flags give on every build.
func (m *memoryFlags) apply(builds []matrix.Build) {
	for i := range builds {
		if m.budget > 0 {
			builds[i].Budgets.Memory = int64(m.budget)
		}
		if m.gpuBudget > 0 {
			builds[i].Budgets.GPUMemory = int64(m.gpuBudget)
		}
	}
}

func (m *memoryFlags) minFreeBytes() int64 { return int64(m.minFree) }

// freeFlag is a size that may be 0 (off).
type freeFlag int64

func (s *freeFlag) String() string { return text.ExactSize(int64(*s)) }

func (s *freeFlag) Set(v string) error {
	if v == "0" {
		*s = 0
		return nil
	}
	n, err := text.ParseBytes(v)
	*s = freeFlag(n)
	return err
}

// nvmlVar names the NVML library to read GPU memory through, where the
// driver's is not on the loader's path (or a stand-in, in tests).
const nvmlVar = "TRT_ACTION_NVML_LIBRARY"

// nvmlLibrary is the NVML library a run reads GPU memory through.
func nvmlLibrary() string {
	if path := os.Getenv(nvmlVar); path != "" {
		return path
	}
	return native.NVMLLibrary
}
