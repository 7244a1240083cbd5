//go:build cgo

package native

// How a trace event reaches the simulator, from memory (newSimConfig) or
// from a file read as the replay goes (fileSource): one conversion, and one
// table of the phase names it copies to C.

/*
#include <stdlib.h>
#include "sim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/trt-action/trt-action/internal/trace"
)

// cNames copies each distinct name to C memory once. The simulator reads
// an event's names until the build returns (sim.h), so they are freed all
// at once, after that.
type cNames map[string]*C.char

func (n cNames) intern(name string) *C.char {
	if p, ok := n[name]; ok {
		return p
	}
	p := C.CString(name)
	n[name] = p
	return p
}

func (n cNames) free() {
	for name, p := range n {
		C.free(unsafe.Pointer(p))
		delete(n, name)
	}
}

// toSimEvent writes ev into ce, its names interned in names: n is a
// start's step count or a step's index.
func toSimEvent(ce *C.tam_sim_event, ev trace.Event, names cNames) {
	ce.t_ns, ce.kind, ce.n = C.int64_t(ev.T), simKind(ev.Kind), C.int32_t(ev.Steps)
	if ev.Kind == trace.Step {
		ce.n = C.int32_t(ev.Step)
	}
	ce.phase, ce.parent = names.intern(ev.Phase), nil
	if ev.Parent != "" {
		ce.parent = names.intern(ev.Parent)
	}
}

// simKind is a trace event's kind as trtaction.h numbers it.
func simKind(k trace.Kind) C.int32_t {
	switch k {
	case trace.Start:
		return C.TAM_EV_START
	case trace.Step:
		return C.TAM_EV_STEP
	case trace.Finish:
		return C.TAM_EV_FINISH
	}
	return -1 // the simulator refuses it with a clear error
}
