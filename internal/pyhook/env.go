package pyhook

// The environment variables the hook reads: the bootstrap
// (py/sitecustomize.py), the hook package (py/trt_action_hook) and the
// wheel's activation (wheel/trt_action.pth, wheel/trt_action/_activate.py)
// spell the same names, which env_test.go holds them to.
// internal/build sets them for a script build's command (scriptenv.go);
// internal/matrix keeps env: from setting them (HookEnv's use there).
const (
	EnvSupervisor = "TRT_ACTION_SUPERVISOR" // the hook channel's socket; the hook does nothing without it
	EnvHookDir    = "TRT_ACTION_HOOK_DIR"   // the folder of the hook's bootstrap (sitecustomize)
	EnvRoute      = "TRT_ACTION_ROUTE"      // python: the Python monitor; else the native route where it can be
	EnvNativeDir  = "TRT_ACTION_NATIVE_DIR" // the folder of libtam_host.so and the backends, for the native route
)

// Vars are every variable the hook reads.
var Vars = []string{EnvSupervisor, EnvHookDir, EnvRoute, EnvNativeDir}

// The routes a TensorRT build's callbacks take to trt-action, by the names
// the hook's begin message gives them ("route") and the report keeps.
// RoutePython is also the one value a build's env: (and run's --env) may
// give EnvRoute: every TensorRT build of the command on the Python
// monitor. Any other would be read as "the native route where it can be",
// which is what leaving the variable out says.
const (
	RouteNative = "native" // trt-action's C++ monitor, through the bindings' pybind11 conduit (py/trt_action_hook/_native.py)
	RoutePython = "python" // a Python IProgressMonitor
)

// HookEnv are the hook's variables that trt-action alone sets: a build's
// env: may not set them, as the hook would then report to the wrong place
// or not at all. EnvRoute is not among them: env: may ask for RoutePython.
var HookEnv = []string{EnvSupervisor, EnvHookDir, EnvNativeDir}
