//go:build cgo && trtaction_stress

package native

// The Go functions C++ calls. They live alone in this file because cgo
// forbids definitions in the preamble of a file with //export.

/*
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

// trtNaiveCallback is the naive monitor's entry for all three callbacks,
// used only to measure what entering Go per callback costs. A panic must not
// unwind into C++: it is recovered and reported as a refused step.
//
//export trtNaiveCallback
func trtNaiveCallback(handle C.uintptr_t, kind C.int32_t, phase, parent *C.char, n C.int32_t) (ok C.int) {
	defer func() {
		if recover() != nil {
			ok = 0
		}
	}()
	nm := cgo.Handle(handle).Value().(*naiveMonitor)
	var parentName string
	if parent != nil {
		parentName = C.GoString(parent)
	}
	if nm.record(int32(kind), C.GoString(phase), parentName, int(n)) {
		return 1
	}
	return 0
}
