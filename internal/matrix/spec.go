// Package matrix reads the build matrix file (trt-builds.yml): it walks the
// YAML as nodes so every error names FILE:LINE:COL, expands matrix axes like
// a workflow's strategy.matrix, and validates the result.
package matrix

import "time"

// DefaultFile is the matrix file read when none is named.
const DefaultFile = "trt-builds.yml"

// File is a parsed, expanded, validated matrix file.
type File struct {
	Path       string
	Version    int
	RunBudget  time.Duration // top-level run-budget: the whole run; 0 = none
	Regression *Regression   // top-level regression thresholds; nil = none
	Cache      *Cache        // top-level cache: the engine cache; nil = off
	Builds     []Build       // expanded, in file order
	// Warnings are what the file should hear but does not make it invalid
	// (flags of a trtexec line that are ignored, deprecated or removed),
	// by position, each once.
	Warnings Errors
}

// Cache is the top-level cache key: where the engine cache lives and how
// large it may grow (internal/cache).
type Cache struct {
	Dir     string // relative to the matrix file's folder, like every path in it; "": from --cache
	MaxSize int64  // bytes; 0 = no limit
	Pos     Pos    // where the cache key was written
	DirPos  Pos    // where dir was written
	// Remote is the shared store behind the folder (internal/cache/remote:
	// oci://… or s3://…), as written; "": none (TRT_ACTION_CACHE_REMOTE
	// or --cache-remote may give one). RemoteMode is "read-write" or
	// "read-only"; "" when not written.
	Remote, RemoteMode       string
	RemotePos, RemoteModePos Pos
}

// Pos is where something was written.
type Pos struct {
	File   string
	Line   int
	Column int
}

// Build is one expanded build: defaults applied, ${{ matrix.X }} substituted.
type Build struct {
	Name    string
	Backend string
	ONNX    string
	Engine  string // "": keep no engine (a simulated stand-in for a real build)

	// The builder settings (internal/settings is the table of them): the
	// fixed ones have fields, the rest are in Settings.
	Precision []string // precision: a set, in the table's order
	// Profiles are the optimization profiles in order: shapes is one
	// ({input: {min: [1,3,224,224], opt: ..., max: ...}}), profiles a
	// list of them. builderSetting shows one as shapes.
	Profiles    []map[string]Shape
	Targets     []string // targets (tensorrt-rtx): a set, in the table's order
	TimingCache string   // timing-cache: path
	Settings    Settings // every other builder setting (settings.go)

	// What its trtexec lines (its defaults' and its own) held that is not
	// a setting (trtexec.go): the inference-only flags they ignored, and
	// warnings about flags that are deprecated, removed or ignored.
	TrtexecIgnored  []string
	TrtexecWarnings []string

	Budgets Budgets
	Sim     Sim
	// Script is set for a build that runs a command (run:) instead of
	// building an ONNX model: ONNX, Engine and the builder settings are
	// then empty (docs/builder-scripts.md).
	Script *Script

	Axes map[string]string // this build's matrix values, for display
	Pos  Pos               // where the build (list item) starts
	// ONNXPos, EnginePos, TimingCachePos and SimTracePos are where onnx:,
	// engine:, timing-cache: and sim.trace were written (in the build, its
	// defaults or its trtexec line), for errors about the files they name
	// (EnginePos is where name: was written when the engine path comes from
	// the name).
	ONNXPos, EnginePos, TimingCachePos, SimTracePos Pos
}

// Script is a build that runs a command, a program that builds TensorRT
// engines itself (a builder script); trt-action observes the builds inside
// it. The command is never run by validate, plan or cache key.
type Script struct {
	Argv    []string // the command's words, ${{ matrix.x }} substituted; never run through a shell
	Env     []string // env: as NAME=value, sorted by name; added to (and overriding) the run's environment
	Workdir string   // workdir: where the command starts, absolute (default: the matrix file's folder)
	// Engines are the files the program writes (engine:), as a build's
	// Engine is named (relative to the working folder, unless absolute):
	// each must exist, be non-empty and be written during the build; they
	// join the run's output-collision check (runfiles.Program). Build.Engine
	// is "" for a build with run:.
	Engines   []string
	EnginePos []Pos // where each of Engines was written
	RunPos    Pos   // where run: was written
	// Inputs are what decides its engines (inputs:): patterns of files
	// relative to Workdir, as written (runfiles.Glob says how they match;
	// InputFiles lists the files). With Inputs (and Engines) the build
	// has an engine cache key; without, it is never cached.
	Inputs    []string
	InputPos  []Pos // where each of Inputs was written
	InputsPos Pos   // where inputs: was written
	// Outputs are other files the program writes that go with its
	// engines (outputs:), named as Engines are: cached and delivered
	// with them, and removed with them when the build fails.
	Outputs   []string
	OutputPos []Pos
	// Workspace is the folder the build's files belong to (the matrix
	// file's workspace, links resolved): its key holds Workdir relative
	// to it, so runners that check the repository out elsewhere share
	// entries.
	Workspace string
	// Roots are the folders a link met while Inputs are walked may lead
	// into (the workspace and allow-paths, links resolved); nil for any
	// (trt-action run's flags, which no workspace bounds).
	Roots []string
}

// Budgets are a build's time and memory limits. Zero means no limit.
type Budgets struct {
	Build       time.Duration
	Stall       time.Duration
	Phases      []PhaseBudget
	WarnPercent float64       // 0 = no warning; 80 means warn at 80% of any limit
	Grace       time.Duration // after a soft stop, how long before the worker is killed
	// Memory and GPUMemory limit the host and GPU memory the build's
	// processes hold at once, in bytes (docs/budgets.md#memory-budgets).
	Memory    int64
	GPUMemory int64
}

// defaultGrace applies when budgets.grace is not given.
const defaultGrace = 30 * time.Second

// PhaseBudget limits each instance of a matching phase, from its start.
// Pattern is a phase name, a glob (path.Match syntax), or a path of names
// joined by "/" matched against the end of the phase's parent chain
// ("Building engine/Timing tactics").
type PhaseBudget struct {
	Pattern string
	Limit   time.Duration
	Pos     Pos
}

// Sim configures the simulator backend.
type Sim struct {
	Trace   string        // trace file (JSON Lines); "" = the built-in real tree
	Step    time.Duration // time per callback; 0 = the trace's own timing
	Fast    bool          // step: 0s: each callback as soon as the pipeline takes it
	Repeat  int           // the trace replayed this many times over; default 1
	Threads int           // callback threads; default 4
	Fault   Fault
	// EngineSize is the fake engine's size in bytes: that many
	// deterministic bytes, derived from the build's settings (a stand-in
	// for a large engine, for the engine cache's transfers); 0 = the
	// simulator's small engine of a few lines.
	EngineSize int64
	// Allocate is host memory the simulated build touches while it runs
	// and frees at its end, in bytes (a stand-in for a build's memory, for
	// memory budgets and reports); 0 = none. Not part of the engine cache
	// key: it changes no engine.
	Allocate int64
}

// Fault is an injected simulator failure.
type Fault struct {
	Kind     string        // none, crash, hang, fail, silence
	Duration time.Duration // silence only
}

// Regression holds the thresholds a run's build times are compared with a
// baseline report by (internal/baseline).
type Regression struct {
	WarnPercent float64
	FailPercent float64
	Min         time.Duration
	// MemoryPercent fails a build whose peak memory (host or GPU) grew by
	// more than this share of the baseline's; 0 = growth is noted, not
	// judged.
	MemoryPercent float64
}
