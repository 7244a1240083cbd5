package build

import (
	"fmt"

	"github.com/trt-action/trt-action/internal/text"
)

// jobsPerCore bounds --jobs without --gpus: a build keeps at least a core
// busy much of the time (TensorRT-RTX builds entirely on the CPU), so more
// workers than this only slow every build down and spend memory.
const jobsPerCore = 4

// CapJobs is the number of builds to run at once for --jobs jobs: at most
// the GPU slots (slots > 0; more would only wait for a GPU), else at most
// jobsPerCore per core. why says what capped it.
func CapJobs(jobs, slots, cores int) (capped int, why string) {
	switch {
	case slots > 0 && jobs > slots:
		return slots, fmt.Sprintf("more than the GPUs take at once (%s: GPUs × --builds-per-gpu); the rest would only wait", text.Count(slots, "slot"))
	case slots == 0 && jobs > jobsPerCore*cores:
		return jobsPerCore * cores, fmt.Sprintf("more than %d per core (%s)", jobsPerCore, text.Count(cores, "core"))
	}
	return jobs, ""
}
