//go:build cgo

// Package native runs engine builds through the C interface in trtaction.h:
// the lock-free progress monitor, the built-in simulator, and backend shared
// objects loaded at run time. Every build runs its blocking C call on a
// goroutine of its own; the caller drains events and log lines a few times a
// second and cancels through an atomic flag the callbacks read.
package native

/*
#cgo CXXFLAGS: -std=c++17 -O2 -Wall
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "trtaction.h"
#include "sim.h"
#include "simsource.h"
#include "loader.h"

static int tam_host_cancelled(const tam_host* h) { return h->cancelled(h->ctx); }
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/trace"
)

const (
	drainBatch    = 1024    // events copied per C call
	maxDrainCall  = 1 << 20 // events one Drain returns at most, so a flood cannot pin the caller
	errBufSize    = 4096
	maxLogLineLen = 64 << 10 // longer log lines arrive truncated
)

// monitor owns one tam_monitor and the Go-side cache of its names.
type monitor struct {
	// life guards c against free: readers may use c (the C side is
	// thread-safe), the writer frees it. Cancel and stats need only this, so
	// they never wait behind a long drain.
	life  sync.RWMutex
	c     *C.tam_monitor
	final Stats // the counters at free

	consumer sync.Mutex // the C queue has a single consumer; guards the fields below
	names    map[uint64]string
	batch    []C.tam_event
	logBuf   []byte
}

func newMonitor() (*monitor, error) {
	c := C.tam_monitor_new()
	if c == nil {
		return nil, errors.New("native: cannot allocate a progress monitor")
	}
	return &monitor{c: c, names: map[uint64]string{0: ""}, final: Stats{LastCallback: -1}}, nil
}

func (m *monitor) host() *C.tam_host { return C.tam_monitor_host(m.c) }

func (m *monitor) drain(dst []trace.Event) []trace.Event {
	m.consumer.Lock()
	defer m.consumer.Unlock()
	m.life.RLock()
	defer m.life.RUnlock()
	if m.c == nil {
		return dst
	}
	if m.batch == nil {
		m.batch = make([]C.tam_event, drainBatch)
	}
	// Only what was queued when the drain began: callbacks keep coming while
	// it copies, and a drain that chased them would grow without bound.
	limit := min(int(C.tam_monitor_backlog(m.c)), maxDrainCall)
	for total := 0; total < limit; {
		n := int(C.tam_monitor_drain(m.c, &m.batch[0], C.size_t(min(len(m.batch), limit-total))))
		for _, ev := range m.batch[:n] {
			dst = append(dst, m.event(ev))
		}
		total += n
		if n < len(m.batch) {
			break
		}
	}
	return dst
}

func (m *monitor) event(ev C.tam_event) trace.Event {
	out := trace.Event{T: time.Duration(ev.t_ns), Thread: int(ev.thread), Phase: m.name(uint64(ev.phase))}
	switch ev.kind {
	case C.TAM_EV_START:
		out.Kind, out.Parent, out.Steps = trace.Start, m.name(uint64(ev.parent)), int(ev.n)
	case C.TAM_EV_STEP:
		out.Kind, out.Step = trace.Step, int(ev.n)
	default:
		out.Kind = trace.Finish
	}
	return out
}

// name resolves an interned id; the cache makes this one C call per name.
func (m *monitor) name(id uint64) string {
	if s, ok := m.names[id]; ok {
		return s
	}
	buf := make([]byte, 256)
	for {
		n := int(C.tam_monitor_name(m.c, C.uint64_t(id), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf))))
		if n < 0 {
			return "" // not an id of this monitor; not cached, it cannot happen twice
		}
		if n < len(buf) {
			s := string(buf[:n])
			m.names[id] = s
			return s
		}
		buf = make([]byte, n+1)
	}
}

func (m *monitor) logs(dst []LogLine) []LogLine {
	m.consumer.Lock()
	defer m.consumer.Unlock()
	m.life.RLock()
	defer m.life.RUnlock()
	if m.c == nil {
		return dst
	}
	if m.logBuf == nil {
		m.logBuf = make([]byte, maxLogLineLen)
	}
	for {
		var sev C.int32_t
		n := int(C.tam_monitor_pop_log(m.c, &sev, (*C.char)(unsafe.Pointer(&m.logBuf[0])), C.size_t(len(m.logBuf))))
		if n < 0 {
			return dst
		}
		dst = append(dst, LogLine{Severity: int(sev), Text: string(m.logBuf[:min(n, len(m.logBuf)-1)])})
	}
}

func (m *monitor) cancel() {
	m.life.RLock()
	defer m.life.RUnlock()
	if m.c != nil {
		C.tam_monitor_cancel(m.c)
	}
}

func (m *monitor) stats() Stats {
	m.life.RLock()
	defer m.life.RUnlock()
	if m.c == nil {
		return m.final
	}
	return m.statsLocked()
}

func (m *monitor) statsLocked() Stats {
	var st C.tam_monitor_stats
	C.tam_monitor_stats_get(m.c, &st)
	last := time.Duration(-1)
	if st.last_callback_ns >= 0 {
		last = time.Duration(st.last_callback_ns)
	}
	return Stats{Callbacks: int64(st.callbacks), LastCallback: last, Dropped: int64(st.dropped)}
}

// free releases the C monitor; only once no thread can call it any more.
func (m *monitor) free() {
	m.life.Lock()
	defer m.life.Unlock()
	if m.c == nil {
		return
	}
	m.final = m.statsLocked()
	C.tam_monitor_free(m.c)
	m.c = nil
}

// Build is one running build.
type Build struct {
	mon    *monitor
	done   chan struct{}
	result Result // written once, before done is closed

	life     sync.Mutex
	finished bool // the C call has returned
	closed   bool
}

// buildCall is the blocking C call that runs a build against host.
type buildCall func(host *C.tam_host, errBuf *C.char, errCap C.size_t) C.int32_t

// start runs call on its own goroutine; release frees the call's C memory
// once it has returned.
func start(call buildCall, release func()) (*Build, error) {
	mon, err := newMonitor()
	if err != nil {
		release()
		return nil, err
	}
	b := &Build{mon: mon, done: make(chan struct{})}
	go b.run(call, release)
	return b, nil
}

func (b *Build) run(call buildCall, release func()) {
	errBuf := (*C.char)(C.calloc(errBufSize, 1))
	status := call(b.mon.host(), errBuf, errBufSize)
	b.result = Result{Status: Status(status), Err: C.GoString(errBuf)}
	C.free(unsafe.Pointer(errBuf))
	release()

	b.life.Lock()
	b.finished = true
	if b.closed { // Close came first and left the freeing to us
		b.mon.free()
	}
	b.life.Unlock()
	close(b.done)
}

// StartSim starts a simulated build of req.Sim.TraceFile, read as the
// replay goes, or else of req.Sim.Trace, and returns at once.
func StartSim(req Request) (*Build, error) {
	if req.Sim == nil {
		return nil, errors.New("native: StartSim needs req.Sim")
	}
	fault, err := simFault(req.Sim.Fault)
	if err != nil {
		return nil, err
	}
	if req.Sim.TraceFile == "" {
		cfg, release := newSimConfig(req, fault)
		return start(func(host *C.tam_host, errBuf *C.char, errCap C.size_t) C.int32_t {
			return C.tam_sim_build(host, cfg, errBuf, errCap)
		}, release)
	}
	src, err := openFileSource(req.Sim.TraceFile)
	if err != nil {
		return nil, err
	}
	handle := cgo.NewHandle(src)
	cfg, release := newSimConfig(req, fault)
	C.tam_sim_use_go_source(cfg, C.uintptr_t(handle))
	return start(func(host *C.tam_host, errBuf *C.char, errCap C.size_t) C.int32_t {
		if fault != C.TAM_FAULT_NONE { // a fault strikes at a share of the events: count them first
			n, err := src.countLines(func() bool { return C.tam_host_cancelled(host) != 0 })
			if err != nil {
				copyCError(errBuf, errCap, err.Error())
				if errors.Is(err, errCancelledReading) {
					return C.TAM_CANCELLED
				}
				return C.TAM_FAILED
			}
			cfg.count = C.size_t(n)
		}
		return C.tam_sim_build(host, cfg, errBuf, errCap)
	}, func() {
		release()
		handle.Delete()
		src.close()
	})
}

func simFault(name string) (C.int32_t, error) {
	switch name {
	case "", "none":
		return C.TAM_FAULT_NONE, nil
	case "crash":
		return C.TAM_FAULT_CRASH, nil
	case "hang":
		return C.TAM_FAULT_HANG, nil
	case "fail":
		return C.TAM_FAULT_FAIL, nil
	case "silence":
		return C.TAM_FAULT_SILENCE, nil
	}
	return 0, fmt.Errorf("native: unknown simulator fault %q (allowed: none, crash, hang, fail, silence)", name)
}

// simSeed is what the simulator's fake engine bytes beyond its header
// follow from: every setting of the request, none of its names or paths
// (the build's name, the model's and the engine's paths, the library's),
// as an engine's bytes follow from what its cache key covers; so builds
// that differ in a setting get different engines, and a build renamed or
// moved gets the same.
func simSeed(req Request) uint64 {
	req.Name, req.ONNX, req.EngineTmp, req.LibPath, req.LibOrigin, req.TimingCache = "", "", "", "", "", ""
	data, _ := json.Marshal(req) // maps in sorted key order: the same request, the same bytes
	h := fnv.New64a()
	h.Write(data)
	return h.Sum64()
}

// newSimConfig copies the request into C memory, since the config holds
// pointers; each distinct phase name is copied once.
func newSimConfig(req Request, fault C.int32_t) (*C.tam_sim_config, func()) {
	sim := req.Sim
	var allocs []unsafe.Pointer
	cstr := func(s string) *C.char {
		p := C.CString(s)
		allocs = append(allocs, unsafe.Pointer(p))
		return p
	}
	names := cNames{}

	cfg := (*C.tam_sim_config)(C.calloc(1, C.sizeof_tam_sim_config))
	allocs = append(allocs, unsafe.Pointer(cfg))
	if sim.TraceFile == "" {
		n := len(sim.Trace)
		// At least one slot: a NULL events pointer would ask for a source.
		events := (*C.tam_sim_event)(C.calloc(C.size_t(max(n, 1)), C.sizeof_tam_sim_event))
		allocs = append(allocs, unsafe.Pointer(events))
		for i, ev := range sim.Trace {
			toSimEvent((*C.tam_sim_event)(unsafe.Add(unsafe.Pointer(events), uintptr(i)*C.sizeof_tam_sim_event)), ev, names)
		}
		cfg.events = events
	}
	cfg.count = C.size_t(len(sim.Trace))
	cfg.step_ns = C.int64_t(sim.StepNs)
	cfg.repeat = C.int64_t(sim.Repeat)
	if sim.Unpaced {
		cfg.unpaced = 1
	}
	cfg.threads = C.int32_t(sim.Threads)
	cfg.fault = fault
	cfg.fault_ns = C.int64_t(sim.FaultNs)
	cfg.fault_at = C.double(sim.FaultAtFrac)
	cfg.engine_tmp = cstr(req.EngineTmp)
	cfg.name = cstr(req.Name)
	cfg.engine_size = C.int64_t(sim.EngineSize)
	cfg.engine_seed = C.uint64_t(simSeed(req))
	return cfg, func() {
		for _, p := range allocs {
			C.free(p)
		}
		names.free()
	}
}

// openBackend loads a backend shared object; its error wraps ErrUnavailable.
func openBackend(soPath string) (*C.tam_backend, error) {
	be := (*C.tam_backend)(C.calloc(1, C.sizeof_tam_backend))
	cpath := C.CString(soPath)
	defer C.free(unsafe.Pointer(cpath))
	var errBuf [errBufSize]C.char
	if C.tam_backend_open(cpath, be, &errBuf[0], errBufSize) != 0 {
		C.free(unsafe.Pointer(be))
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, C.GoString(&errBuf[0]))
	}
	return be, nil
}

// StartBackend loads the backend shared object at soPath and starts a build
// of req, whose library is where req.WithLibrary put it. A backend that cannot be loaded gives an error wrapping
// ErrUnavailable; a TensorRT library the backend cannot load is reported by
// the build itself as Unavailable.
func StartBackend(soPath string, req Request) (*Build, error) {
	js, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("native: encode request: %w", err)
	}
	be, err := openBackend(soPath)
	if err != nil {
		return nil, err
	}
	cjs := C.CString(string(js))
	return start(func(host *C.tam_host, errBuf *C.char, errCap C.size_t) C.int32_t {
		return C.tam_backend_call_build(be, host, cjs, errBuf, errCap)
	}, func() {
		C.free(unsafe.Pointer(cjs))
		C.free(unsafe.Pointer(be)) // the library itself stays loaded
	})
}

// BackendInfo asks the backend at soPath to describe itself and the
// TensorRT library at lib (backend.LocateLibrary decides where; the
// backend's messages name lib's origin); it returns the backend's JSON
// object.
func BackendInfo(soPath string, lib backend.LibraryLocation) (string, error) {
	be, err := openBackend(soPath)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(be))
	clib, corigin := C.CString(lib.Path), C.CString(lib.Origin())
	defer C.free(unsafe.Pointer(clib))
	defer C.free(unsafe.Pointer(corigin))
	buf := make([]byte, 4096)
	for {
		n := int(C.tam_backend_call_info(be, clib, corigin, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf))))
		if n < 0 {
			return "", fmt.Errorf("native: backend %s: tam_backend_info failed", soPath)
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, n+1)
	}
}

// Drain appends every queued event to dst, oldest first.
func (b *Build) Drain(dst []trace.Event) []trace.Event { return b.mon.drain(dst) }

// Logs appends every queued log line to dst, oldest first.
func (b *Build) Logs(dst []LogLine) []LogLine { return b.mon.logs(dst) }

// Cancel asks the build to stop: from now on every stepComplete returns
// false. The build ends when the library next asks.
func (b *Build) Cancel() { b.mon.cancel() }

// Stats reads the monitor's counters.
func (b *Build) Stats() Stats { return b.mon.stats() }

// Done is closed when the build's C call has returned.
func (b *Build) Done() <-chan struct{} { return b.done }

// Result waits for the build to end and returns how it ended.
func (b *Build) Result() Result {
	<-b.done
	return b.result
}

// Close frees the monitor. Drain it first: queued events are lost. Called
// before Done, it cancels the build and the monitor is freed when the build
// returns.
func (b *Build) Close() {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	if b.finished {
		b.mon.free()
	} else {
		b.mon.cancel()
	}
}
