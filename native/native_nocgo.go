//go:build !cgo

package native

import (
	"time"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/trace"
)

// Build is one running build; without cgo there never is one.
type Build struct{}

// StartSim needs cgo.
func StartSim(Request) (*Build, error) { return nil, errNoCgo }

// StartBackend needs cgo.
func StartBackend(string, Request) (*Build, error) { return nil, errNoCgo }

// BackendInfo needs cgo.
func BackendInfo(string, backend.LibraryLocation) (string, error) { return "", errNoCgo }

func (*Build) Drain(dst []trace.Event) []trace.Event { return dst }
func (*Build) Logs(dst []LogLine) []LogLine          { return dst }
func (*Build) Cancel()                               {}
func (*Build) Stats() Stats                          { return Stats{LastCallback: -time.Nanosecond} }
func (*Build) Result() Result                        { return Result{Status: Failed, Err: errNoCgo.Error()} }
func (*Build) Close()                                {}

// Done is already closed: nothing runs.
func (*Build) Done() <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}

// NVMLLibrary is NVML's library as the NVIDIA driver installs it.
const NVMLLibrary = "libnvidia-ml.so.1"

// NVML needs cgo.
type NVML struct{}

// OpenNVML needs cgo: without it there are no GPU figures.
func OpenNVML(string) (*NVML, error) { return nil, errNoCgo }

func (*NVML) Processes() (map[int]int64, error) { return nil, errNoCgo }
func (*NVML) TotalMemory() (int64, error)       { return 0, errNoCgo }
func (*NVML) Close()                            {}
