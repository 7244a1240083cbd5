package native

import (
	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/trace"
)

// Request is what a backend is asked to build; it crosses the C boundary as
// JSON (tam_backend_build's request_json). Field names are the contract with
// the C++ backends: change both sides together.
type Request struct {
	Name      string `json:"name"`
	ONNX      string `json:"onnx,omitempty"`
	EngineTmp string `json:"engine_tmp"` // write here; the caller renames when complete
	// LibPath is --trt-lib as a build's spec carries it to the worker;
	// WithLibrary replaces it with the library's location (a file or
	// folder; "" = the loader's search path), LibOrigin with where that
	// came from, in words the backend's messages use, and LibFix with how
	// to get the library when it cannot be loaded (for this installation).
	LibPath   string `json:"lib_path,omitempty"`
	LibOrigin string `json:"lib_origin,omitempty"`
	LibFix    string `json:"lib_fix,omitempty"`

	// The builder settings (internal/settings is the table of them, which
	// native/backends/settings_table.h is generated from): the fixed ones
	// have fields of their own; Settings are every other one, keyed by the
	// matrix's own key names (matrix.Settings.Map), so a backend's message
	// names the key the user wrote. native/backends/request.h decodes them.
	Precision     []string `json:"precision,omitempty"` // TensorRT 10; tf32 only on strongly typed flavours
	StronglyTyped bool     `json:"strongly_typed,omitempty"`
	// Profiles are the optimization profiles, in order (profile i is the
	// engine's profile index i), each giving every dynamic input's shapes:
	// a matrix build's shapes is one, its profiles one each.
	Profiles    []map[string]Shape `json:"profiles,omitempty"`
	Targets     []string           `json:"targets,omitempty"` // tensorrt-rtx
	TimingCache string             `json:"timing_cache,omitempty"`
	Settings    map[string]any     `json:"settings,omitempty"`
	// SettingKeys names every builder setting of the build, the fixed ones
	// and Settings alike, under its matrix key (matrix.Build.BuilderSettings),
	// sorted: a build TensorRT fails names them, since its message does not
	// say which it failed on.
	SettingKeys []string `json:"setting_keys,omitempty"`

	// NoMonitor builds without installing the progress monitor: no
	// callbacks, so no progress, budgets or soft cancel. Only for measuring
	// the monitor's overhead (scripts/bench-real); the simulator ignores it.
	NoMonitor bool `json:"no_monitor,omitempty"`

	Sim *SimRequest `json:"sim,omitempty"`
}

// WithLibrary is r building with the library at lib: the backend loads
// what it is told and reads no variable of its own, so the decision
// (backend.LocateLibrary) has one home, which the engine cache shares.
func (r Request) WithLibrary(lib backend.LibraryLocation) Request {
	r.LibPath, r.LibOrigin, r.LibFix = lib.Path, lib.Origin(), lib.Fix
	return r
}

// Shape is one optimization-profile entry for a dynamic input.
type Shape struct {
	Min []int64 `json:"min"`
	Opt []int64 `json:"opt"`
	Max []int64 `json:"max"`
}

// SimRequest drives the built-in simulator.
type SimRequest struct {
	Trace       []trace.Event `json:"-"`                 // passed as a C array, not JSON
	TraceFile   string        `json:"-"`                 // a trace file, read as the replay goes; "" = Trace
	StepNs      int64         `json:"step_ns"`           // time per callback; 0 = use the trace's own times
	Unpaced     bool          `json:"unpaced,omitempty"` // no pacing: as fast as the monitor takes callbacks
	Repeat      int           `json:"repeat,omitempty"`  // replay the trace this many times; < 1 means 1
	Threads     int           `json:"threads"`           // callback threads
	Fault       string        `json:"fault"`             // none, crash, hang, fail, silence
	FaultNs     int64         `json:"fault_ns"`          // silence length
	FaultAtFrac float64       `json:"fault_at"`          // where in the trace the fault strikes, 0..1
	// EngineSize is the fake engine's size in bytes (matrix sim.engine-size):
	// its header, then bytes that follow from the request's settings
	// (simSeed); 0 = the header alone.
	EngineSize int64 `json:"engine_size,omitempty"`
}
