package report

// A build that runs a command (run:, a builder script) is one entry in
// the report like any other, with what only it has: the command and how it
// ended, and one TensorRTBuild for each TensorRT build any process of the
// command ran, as trt-action's hook saw it (docs/builder-scripts.md).

// Script is how a build's command ran.
type Script struct {
	Command []string `json:"command"`
	Workdir string   `json:"workdir,omitempty"`
	// ExitCode is the command's exit status; nil when a signal ended it
	// or it never started. Exit words how it ended: "exit status 1",
	// "killed by signal SIGKILL", "could not start: ...".
	ExitCode *int   `json:"exit_code,omitempty"`
	Exit     string `json:"exit"`
	// OutputTail is the last lines the command printed (stdout and stderr
	// together), cut to a bounded size; the log group had all of them.
	OutputTail []string `json:"output_tail,omitempty"`
	// Unobserved says whether trt-action could see TensorRT builds in the
	// command: "" when its hook loaded in at least one Python process;
	// otherwise why not (no Python process loaded the hook, and what the
	// command line says about it: python -I, -E or -S).
	Unobserved string `json:"unobserved,omitempty"`
	// Processes is how many processes of the command loaded the hook.
	Processes int `json:"processes"`
}

// TensorRTBuild is one TensorRT build a command ran: one call of a
// builder's build entry point.
type TensorRTBuild struct {
	Index int    `json:"index"` // 1-based, in the order the builds began across the command's processes
	PID   int    `json:"pid"`   // the process that built
	Entry string `json:"entry"` // the entry point: build_serialized_network, build_engine_with_config, ...
	// Route is how callbacks reached trt-action: "native" (our C++
	// monitor attached through pybind11's conduit) or "python" (a Python
	// IProgressMonitor, where the bindings have no conduit).
	Route string `json:"route"`
	// RouteNote says why a build is not on the native route, where the
	// hook knows: the bindings have no conduit (datacenter TensorRT 10.0
	// to 10.15), trt-action's libraries were not found, ...
	RouteNote        string     `json:"route_note,omitempty"`
	Library          string     `json:"library,omitempty"` // "TensorRT-RTX 1.7.1.116"
	StartMs          int64      `json:"start_ms"`          // offset from the script build's start
	DurationMs       int64      `json:"duration_ms"`
	Status           string     `json:"status"`
	Reason           string     `json:"reason,omitempty"`
	Budget           *BudgetHit `json:"budget,omitempty"`
	Callbacks        int64      `json:"callbacks"`
	LongestSilenceMs int64      `json:"longest_silence_ms"`
	// The phases' times are on StartMs's clock, the script build's (a
	// phase began FirstStartMs-StartMs into this TensorRT build): the
	// builds of a command share one timeline.
	PhaseTree       []*PhaseNode    `json:"phase_tree,omitempty"`
	SlowestPhases   []PhaseInstance `json:"slowest_phases,omitempty"`
	Phases          []*Phase        `json:"phases,omitempty"` // --report-detail full
	SerializedBytes int64           `json:"serialized_bytes,omitempty"`
	// Settings are the builder settings read from the config when the
	// build began, under the matrix's key names, as a matrix build's are.
	Settings *Settings `json:"settings,omitempty"`
	Network  *Network  `json:"network,omitempty"`
	// Memory is what its process (PID) held while it ran: PeakHostBytes,
	// PeakGPUBytes and their sources, and TensorRT's own figures where the
	// command's output shows its log; nil when no sample fell inside it.
	Memory *Memory `json:"memory,omitempty"`
}

// Network is what a TensorRT build's network definition held when the
// build began.
type Network struct {
	Inputs  []Tensor `json:"inputs"`
	Outputs []Tensor `json:"outputs"`
	Layers  int      `json:"layers"`
}

// Tensor is one network input or output; -1 in Shape is a dynamic dimension.
type Tensor struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// EngineFiles is every engine file a build kept: an ONNX build's one, or
// the files a script build declared.
func EngineFiles(b *Build) []Engine {
	if b.Engine != nil {
		return []Engine{*b.Engine}
	}
	return b.Engines
}
