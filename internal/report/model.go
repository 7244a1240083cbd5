// Package report holds the run report (the JSON written with --report), its
// JSON form, and the pure functions that render it: the job summary, JUnit,
// the phase and settings tables and the headline.
package report

import "time"

// SchemaVersion is bumped when the JSON report changes incompatibly.
// Version 2 folds each build's phase instances into one node per phase path
// (phase_tree, slowest_phases); version 1 had only the every-instance tree
// (phases), which version 2 keeps for --report-detail full. ReadJSON reads
// both.
const SchemaVersion = 2

// Build statuses.
const (
	StatusPending        = "pending" // not started yet (only in partial reports)
	StatusRunning        = "running" // still running (only in partial reports)
	StatusOK             = "ok"
	StatusFailed         = "failed"
	StatusBudgetExceeded = "budget-exceeded"
	StatusCancelled      = "cancelled"
	StatusCrashed        = "crashed"
	StatusKilled         = "killed"
	// StatusCached: the engine came from the engine cache and no build
	// ran. It counts as success wherever "ok" does (Succeeded).
	StatusCached = "cached"
)

// Succeeded reports whether a status means the build's engine is in place:
// built now (ok) or taken from the engine cache (cached). Exit codes,
// outputs, JUnit, the check run and the comment all ask this, never
// compare with StatusOK alone.
func Succeeded(status string) bool { return status == StatusOK || status == StatusCached }

// Mark is the sign the text views put before a build's (or a TensorRT
// build's) end: a check for one that succeeded, a cross for the rest.
func Mark(status string) string {
	if Succeeded(status) {
		return "✔"
	}
	return "✖"
}

// The signals that stop a run, as Report.Signal names them.
const (
	SignalInterrupt = "SIGINT"
	SignalTerminate = "SIGTERM"
)

// Report is the whole run; it is rewritten atomically after every build.
type Report struct {
	Version     int       `json:"version"`
	Tool        string    `json:"tool"` // "trt-action 0.1.0"
	Matrix      string    `json:"matrix"`
	StartedAt   time.Time `json:"started_at"`
	DurationMs  int64     `json:"duration_ms"`
	Complete    bool      `json:"complete"`              // ended by itself; false while running, after a signal (even with every build ended), in a merge missing builds
	Interrupted string    `json:"interrupted,omitempty"` // "SIGINT after 3m12s"
	// Signal is the signal that stopped the run (SignalInterrupt or
	// SignalTerminate), "" when none did: the record the exit code is
	// decided from, for the run's own job and for a merge of its report.
	// Interrupted words it for people. Reports written before it existed
	// get it from their Interrupted words when read (ReadJSON).
	Signal string `json:"signal,omitempty"`
	// Ended says why a run that did not need a signal to stop did not run
	// every build to its end: "run budget 3s exceeded".
	Ended string `json:"ended,omitempty"`
	// Regressions are the builds slower than the baseline by more than the
	// regression fail threshold (with --baseline); they fail the run.
	Regressions []Regression `json:"regressions,omitempty"`
	// Cache is the run's shared engine cache store, when it had one.
	Cache  *RunCache `json:"cache,omitempty"`
	Builds []Build   `json:"builds"`

	encoded *buildCache // WriteJSON's encodings of builds that have ended
}

// Regression is a build that got slower than the baseline allows, or a
// TensorRT build inside a script build (Inner, its index) that did; or,
// with Kind, one whose peak memory grew more than it allows.
type Regression struct {
	Name    string  `json:"name"`
	Inner   int     `json:"tensorrt_build,omitempty"`
	Kind    string  `json:"kind,omitempty"` // "": its time; RegressionMemory, RegressionGPUMemory: that peak
	Percent float64 `json:"percent"`        // slower (or larger) by this much, e.g. 41.2
}

// What a regression is of (Regression.Kind); its time has none.
const (
	RegressionMemory    = "memory"
	RegressionGPUMemory = "gpu-memory"
)

// Label names what regressed: the build, or a TensorRT build inside it
// ("yolo-export #2").
func (g Regression) Label() string {
	if g.Inner > 0 {
		return InnerLabel(g.Name, g.Inner)
	}
	return g.Name
}

// Build is one build's outcome.
type Build struct {
	Name             string            `json:"name"`
	Backend          string            `json:"backend"`
	Axes             map[string]string `json:"axes,omitempty"`
	Status           string            `json:"status"`
	Reason           string            `json:"reason,omitempty"`          // one human sentence
	Budget           *BudgetHit        `json:"budget,omitempty"`          // which limit stopped it
	BudgetUse        float64           `json:"budget_use_pct"`            // highest share of any limit used, in percent; 0 = no limits
	StopLatencyMs    int64             `json:"stop_latency_ms,omitempty"` // from the budget deadline (or signal) to the build's end
	Warnings         []string          `json:"warnings,omitempty"`
	StartMs          int64             `json:"start_ms"` // offset from the run's start
	DurationMs       int64             `json:"duration_ms"`
	GPU              string            `json:"gpu,omitempty"`
	Callbacks        int64             `json:"callbacks"`
	LongestSilenceMs int64             `json:"longest_silence_ms"`
	PhaseTree        []*PhaseNode      `json:"phase_tree,omitempty"`     // every instance of a phase path folded into one node
	SlowestPhases    []PhaseInstance   `json:"slowest_phases,omitempty"` // the slowest single instances, slowest first
	Phases           []*Phase          `json:"phases,omitempty"`         // every instance: version 1, or --report-detail full
	Engine           *Engine           `json:"engine,omitempty"`
	Log              []LogLine         `json:"log,omitempty"`     // TensorRT's own lines, warnings and errors
	Library          string            `json:"library,omitempty"` // "TensorRT-RTX 1.2.0.54"
	Settings         *Settings         `json:"settings,omitempty"`
	Cache            *CacheUse         `json:"cache,omitempty"` // only when the run used an engine cache
	// Memory is what the build's processes held; nil when nothing was
	// measured (a cache hit, a build that never started).
	Memory *Memory `json:"memory,omitempty"`
	// Script and TensorRTBuilds are set for a build that ran a command
	// (run:); Engines are the files it declared (Engine is an ONNX build's),
	// Outputs the other files it declared (outputs:), which go with its
	// engines. A hit of a build with run: ran no command: it has Engines
	// and Outputs (where they were put), no Script.
	Script         *Script         `json:"script,omitempty"`
	TensorRTBuilds []TensorRTBuild `json:"tensorrt_builds,omitempty"`
	Engines        []Engine        `json:"engines,omitempty"`
	Outputs        []Engine        `json:"outputs,omitempty"`

	digest *digest // set when the report settled the build: its detail is in the spool (Settle)
}

// Settings says how an engine was built: its builder settings under the
// matrix's own key names, and the library that applied them. A build ends
// ok only with every one applied; a setting TensorRT refuses fails the
// build with a reason naming its key.
type Settings struct {
	Library string         `json:"library,omitempty"` // empty until the library is loaded
	Applied map[string]any `json:"applied"`
}

// CacheUse is what the engine cache did for one build. A hit's own
// DurationMs is the time taking the engine from the cache took; what the
// hit saved is BuildMs, the original build's time.
type CacheUse struct {
	Key string `json:"key,omitempty"` // 64 hex digits; "" when it could not be computed
	// KeyUnknown says why the key could not be computed; the build then
	// ran without the cache.
	KeyUnknown string `json:"key_unknown,omitempty"`
	Hit        bool   `json:"hit"`
	// Stored: a miss whose engine was put in the cache (a store that
	// failed is one of the build's warnings; an entry another process
	// stored first is kept, and this one is not stored).
	Stored bool `json:"stored,omitempty"`
	// Rebuilt: the cache was not asked: --rebuild named the build, or a
	// build --rebuild names has its key and could not be waited for (it
	// had not started; build/samekey.go).
	Rebuilt bool `json:"rebuilt,omitempty"`
	// Replaced: a rebuilt build's engine replaced the entry that was in
	// the cache (Stored is true too).
	Replaced bool `json:"replaced,omitempty"`
	// NotStored says why an ok build's files were not stored: a build
	// with run: whose declared files were not all written during this run
	// (an output left from before, or missing). A store that failed is a
	// warning instead.
	NotStored string    `json:"not_stored,omitempty"`
	BuiltAt   time.Time `json:"built_at,omitzero"`  // a hit: when the engine was built
	BuildMs   int64     `json:"build_ms,omitempty"` // a hit: how long that build took
	Original  *Build    `json:"original,omitempty"` // a hit: that build's report entry (its phase tree)
	// From says where a hit's engine came from: CacheFromLocal (the
	// cache folder) or CacheFromRemote (the shared store; the entry was
	// then kept in the folder too, where it could be). "" for a miss.
	From string `json:"from,omitempty"`
	// Pushed: this run put the entry in the shared store (a build that
	// made it, or a local hit the store lacked). False when the store had
	// it already, is read-only, or the push failed (one of the build's
	// warnings; the run's, when the store itself failed). A push may end
	// after its build: the report entry is updated then, and the final
	// report has every push's outcome. With Rebuilt (--rebuild), or after
	// the store's entry was refused (a warning of the build's), the push
	// replaced the store's entry: Pushed says the store's entry is this
	// build's engine now, whether or not there was one.
	Pushed bool `json:"pushed,omitempty"`
	// Transfer is what moved between this build and the shared store: the
	// pull of a remote hit, else the push of its entry. nil when nothing
	// moved.
	Transfer *CacheTransfer `json:"transfer,omitempty"`
}

// Where a cache hit's engine came from (CacheUse.From).
const (
	CacheFromLocal  = "local"
	CacheFromRemote = "remote"
)

// CacheTransfer is one transfer between a build and the shared store.
type CacheTransfer struct {
	Direction string `json:"direction"` // TransferPull or TransferPush
	Bytes     int64  `json:"bytes"`
	Ms        int64  `json:"ms"`
}

// CacheTransfer directions.
const (
	TransferPull = "pull"
	TransferPush = "push"
)

// RunCache is what a run's engine cache had beyond its folder: the shared
// store behind it.
type RunCache struct {
	Remote     string `json:"remote"`      // the store's URL, never with credentials
	RemoteMode string `json:"remote_mode"` // "read-write" or "read-only"
	// ModeNote says why the mode is not the one asked for (a pull request
	// from a fork runs read-only); "" when it is.
	ModeNote string `json:"remote_mode_note,omitempty"`
	// Warnings are what went wrong with the store in this run (it was
	// down, refused the credentials, was too slow), each once; builds then
	// went on with the local folder alone.
	Warnings []string `json:"warnings,omitempty"`
	// Remotes lists each shard's store when a merge finds shards that
	// used different ones (Remote is then the first shard's).
	Remotes []string `json:"remotes,omitempty"`
}

// BuildTime is how long building b's engine takes, as far as a report
// can tell: an ok build's own time, or for a cached build the time of the
// build that made its engine. Baselines, ETAs and shard plans use it, so a
// cache hit never reads as a build that got 99% faster. ok is false for a
// build whose time says nothing of it (it did not succeed, or a hit that
// does not know).
func BuildTime(b *Build) (ms int64, ok bool) {
	switch {
	case b.Status == StatusOK:
		return b.DurationMs, true
	case b.Status == StatusCached && b.Cache != nil && b.Cache.BuildMs > 0:
		return b.Cache.BuildMs, true
	}
	return 0, false
}

// BudgetHit says which limit ran out.
type BudgetHit struct {
	Kind    string `json:"kind"`            // build, stall, phase, run; memory, gpu-memory
	Phase   string `json:"phase,omitempty"` // phase path "Building engine/Timing tactics"
	Pattern string `json:"pattern,omitempty"`
	LimitMs int64  `json:"limit_ms,omitempty"` // a time limit
	// ElapsedMs: for a time limit, how long the limited span had run when
	// it was found over; for a memory limit, when (from the build's start)
	// the build was found over it.
	ElapsedMs int64 `json:"elapsed_ms"`
	// A memory limit (kind memory or gpu-memory) and the most the build's
	// processes held, once it was found over it and until they ended.
	LimitBytes int64 `json:"limit_bytes,omitempty"`
	PeakBytes  int64 `json:"peak_bytes,omitempty"`
}

// The memory budgets' kinds (BudgetHit.Kind).
const (
	BudgetMemory    = "memory"
	BudgetGPUMemory = "gpu-memory"
)

// IsMemoryBudget reports whether a budget kind limits memory, not time.
func IsMemoryBudget(kind string) bool { return kind == BudgetMemory || kind == BudgetGPUMemory }

// Memory is what a build's processes held (docs/reports.md). A figure
// not measured is absent, never 0.
type Memory struct {
	// PeakHostBytes is the most host memory the build's process tree held
	// at once: the highest sum of its processes' resident sizes sampled
	// from /proc, or the largest single process's peak (the kernel's
	// ru_maxrss, LargestProcessBytes) when that is higher. Pages two
	// processes share (libraries, a fork's copy-on-write) count once per
	// process, as RSS does.
	PeakHostBytes int64 `json:"peak_host_bytes,omitempty"`
	// PeakGPUBytes is the most GPU memory its processes held at once, as
	// NVML reports each process (sampled).
	PeakGPUBytes int64 `json:"peak_gpu_bytes,omitempty"`
	// HostSource says how host memory was measured: MemoryFromProc, or
	// MemoryFromProcCgroupV1/V2 when the build also had a memory cgroup
	// of its own (CgroupPeakBytes, OOMKills); NoCgroup says why not.
	HostSource string `json:"host_source,omitempty"`
	GPUSource  string `json:"gpu_source,omitempty"` // MemoryFromNVML; absent with no GPU figure
	// LargestProcessBytes is the peak resident size of the build's
	// largest single process (ru_maxrss of the worker, or of the command's
	// processes, which the reaper waits for): the kernel's own figure,
	// never missed between samples, but one process's, not the tree's.
	LargestProcessBytes int64 `json:"largest_process_bytes,omitempty"`
	// CgroupPeakBytes is the kernel's peak for the build's cgroup: every
	// page once, page cache (files it read and wrote) included.
	CgroupPeakBytes int64 `json:"cgroup_peak_bytes,omitempty"`
	// OOMKills counts the build's processes the kernel's OOM killer ended.
	OOMKills int64 `json:"oom_kills,omitempty"`
	// NoCgroup says why the build had no memory cgroup of its own.
	NoCgroup string `json:"no_cgroup,omitempty"`
	// HostLimitBytes is the memory the build could have had at most: the
	// machine's, or the limit of the cgroup trt-action ran in (a
	// container's, a job's) when that is smaller.
	HostLimitBytes int64 `json:"host_limit_bytes,omitempty"`
	// TensorRT's own figures from its log ([MemUsageChange] lines): the
	// highest "now:" CPU and GPU figures (the GPU one is the GPU's use,
	// other processes included).
	TensorRTCPUBytes int64 `json:"tensorrt_cpu_bytes,omitempty"`
	TensorRTGPUBytes int64 `json:"tensorrt_gpu_bytes,omitempty"`
	// The peaks of TensorRT's own CPU and GPU allocators, from its "Peak
	// memory usage of TRT CPU/GPU memory allocators" line.
	TensorRTAllocatorCPUBytes int64 `json:"tensorrt_allocator_cpu_bytes,omitempty"`
	TensorRTAllocatorGPUBytes int64 `json:"tensorrt_allocator_gpu_bytes,omitempty"`
}

// Where memory figures came from (Memory.HostSource, GPUSource).
const (
	MemoryFromProc         = "proc"
	MemoryFromProcCgroupV1 = "proc+cgroup-v1"
	MemoryFromProcCgroupV2 = "proc+cgroup-v2"
	MemoryFromNVML         = "nvml"
)

// Phase is one instance of a phase, with its children.
type Phase struct {
	Name     string   `json:"name"`
	StartMs  int64    `json:"start_ms"` // offset from the build's start
	EndMs    int64    `json:"end_ms"`   // -1 while running / never finished
	Done     int      `json:"steps_done"`
	Steps    int      `json:"steps"`
	Children []*Phase `json:"children,omitempty"`
}

// Engine is a completed engine file.
type Engine struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// LogLine is one line TensorRT logged.
type LogLine struct {
	Severity string `json:"severity"` // one of the Severity names
	Text     string `json:"text"`
}

// A LogLine's severity: TensorRT's ILogger severities by name (its
// internal errors are errors).
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
	SeverityVerbose = "verbose"
)
