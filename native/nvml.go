//go:build cgo

package native

/*
#include <stdlib.h>
#include "nvml.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"
)

// NVMLLibrary is NVML's library as the NVIDIA driver installs it.
const NVMLLibrary = "libnvidia-ml.so.1"

// NVML reads the GPU memory of processes through NVML. Its methods are
// safe from any goroutine.
type NVML struct {
	mu    sync.Mutex
	c     *C.tam_nvml
	pids  []C.uint32_t
	bytes []C.uint64_t
}

// OpenNVML loads NVML from path (NVMLLibrary, or a file) and initialises
// it: its error says why there are no GPU figures (no driver).
func OpenNVML(path string) (*NVML, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var errBuf [errBufSize]C.char
	var c *C.tam_nvml
	if C.tam_nvml_open(cpath, &c, &errBuf[0], errBufSize) != 0 {
		return nil, errors.New(C.GoString(&errBuf[0]))
	}
	return &NVML{c: c, pids: make([]C.uint32_t, 64), bytes: make([]C.uint64_t, 64)}, nil
}

// Processes is the GPU memory of every process on a GPU, by process id,
// every GPU summed. The ids are the driver's: those of the machine, not
// of a container's own process namespace.
func (n *NVML) Processes() (map[int]int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.c == nil {
		return nil, errors.New("NVML is closed")
	}
	var errBuf [errBufSize]C.char
	for {
		got := int(C.tam_nvml_processes(n.c, &n.pids[0], &n.bytes[0], C.size_t(len(n.pids)), &errBuf[0], errBufSize))
		if got < 0 {
			return nil, errors.New(C.GoString(&errBuf[0]))
		}
		if got > len(n.pids) {
			n.pids, n.bytes = make([]C.uint32_t, got+16), make([]C.uint64_t, got+16)
			continue
		}
		out := make(map[int]int64, got)
		for i := range got {
			out[int(n.pids[i])] += int64(n.bytes[i])
		}
		return out, nil
	}
}

// TotalMemory is the memory of every GPU NVML sees, summed, in bytes.
func (n *NVML) TotalMemory() (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.c == nil {
		return 0, errors.New("NVML is closed")
	}
	var errBuf [errBufSize]C.char
	total := int64(C.tam_nvml_total_bytes(n.c, &errBuf[0], errBufSize))
	if total < 0 {
		return 0, errors.New(C.GoString(&errBuf[0]))
	}
	return total, nil
}

// Close shuts NVML down.
func (n *NVML) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.c != nil {
		C.tam_nvml_close(n.c)
		n.c = nil
	}
}
