//go:build cgo && trtaction_stress

package native

// Load generators behind the tests and benchmarks (test files cannot use cgo).

/*
#include "stress.h"
*/
import "C"

import (
	"runtime/cgo"
	"sync"
	"time"

	"github.com/trt-action/trt-action/internal/trace"
)

type stressResult struct {
	wall        time.Duration // start to the last thread's end
	threadTotal time.Duration // sum of each thread's own elapsed time
	stopped     int           // threads that saw step_complete return false
}

// stress runs tam_stress against m: each of threads C++ threads starts its
// own phase chain and completes iters steps.
func (m *monitor) stress(threads, iters int) stressResult {
	m.life.RLock()
	c := m.c
	m.life.RUnlock()
	var total C.int64_t
	var stopped C.int32_t
	wall := C.tam_stress(c, C.int(threads), C.int(iters), &total, &stopped)
	return stressResult{wall: time.Duration(wall), threadTotal: time.Duration(total), stopped: int(stopped)}
}

// naiveMonitor is the design the real monitor is measured against: every
// callback enters Go, takes a mutex and appends.
type naiveMonitor struct {
	mu        sync.Mutex
	born      time.Time
	events    []trace.Event
	cancelled bool
}

func (nm *naiveMonitor) record(kind int32, phase, parent string, n int) bool {
	ev := trace.Event{Phase: phase}
	switch kind {
	case C.TAM_EV_START:
		ev.Kind, ev.Parent, ev.Steps = trace.Start, parent, n
	case C.TAM_EV_STEP:
		ev.Kind, ev.Step = trace.Step, n
	default:
		ev.Kind = trace.Finish
	}
	nm.mu.Lock()
	defer nm.mu.Unlock()
	ev.T = time.Since(nm.born)
	nm.events = append(nm.events, ev)
	return !nm.cancelled
}

// take hands the queued events to the caller, as a drain would.
func (nm *naiveMonitor) take(dst []trace.Event) []trace.Event {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	dst = append(dst, nm.events...)
	nm.events = nm.events[:0]
	return dst
}

// stressNaive runs the same load as stress against nm.
func stressNaive(nm *naiveMonitor, threads, iters int) stressResult {
	h := cgo.NewHandle(nm)
	defer h.Delete() // tam_stress_naive joins its threads before returning
	var total C.int64_t
	wall := C.tam_stress_naive(C.uintptr_t(h), C.int(threads), C.int(iters), &total)
	return stressResult{wall: time.Duration(wall), threadTotal: time.Duration(total)}
}
