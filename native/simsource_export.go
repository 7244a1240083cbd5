//go:build cgo

package native

// The Go functions the simulator calls to read a trace file. They live
// alone in this file because cgo forbids definitions in the preamble of a
// file with //export.

/*
#include "sim.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// tamSimSourceRead fills buf with the next events of the trace file behind
// handle: tam_sim_source.read. A panic must not unwind into C++: it is
// recovered and reported as a read error.
//
//export tamSimSourceRead
func tamSimSourceRead(handle C.uintptr_t, buf *C.tam_sim_event, capacity C.size_t, errBuf *C.char, errCap C.size_t) (n C.int64_t) {
	defer func() {
		if p := recover(); p != nil {
			copyCError(errBuf, errCap, fmt.Sprintf("simulator: reading the trace: internal error: %v", p))
			n = -1
		}
	}()
	src := cgo.Handle(handle).Value().(*fileSource)
	got, err := src.read(unsafe.Slice(buf, int(capacity)))
	if err != nil {
		copyCError(errBuf, errCap, err.Error())
		return -1
	}
	return C.int64_t(got)
}

// tamSimSourceRewind starts the trace file behind handle again:
// tam_sim_source.rewind.
//
//export tamSimSourceRewind
func tamSimSourceRewind(handle C.uintptr_t, errBuf *C.char, errCap C.size_t) (status C.int32_t) {
	defer func() {
		if p := recover(); p != nil {
			copyCError(errBuf, errCap, fmt.Sprintf("simulator: rewinding the trace: internal error: %v", p))
			status = -1
		}
	}()
	if err := cgo.Handle(handle).Value().(*fileSource).rewind(); err != nil {
		copyCError(errBuf, errCap, err.Error())
		return -1
	}
	return 0
}
