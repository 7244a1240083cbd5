// Package pyhook holds trt-action's Python hook, which makes every TensorRT
// build inside a Python program (a builder script: `run:` in the matrix,
// `trt-action run`) observable, budgeted and cancelable without a change to
// the program, and writes it where the program's Python finds it (Extract).
//
// The hook is embedded in the binary, not installed beside it, so that it
// ships wherever the binary does (the release tarball, the image, the
// composite action) and is always the version the supervisor speaks to:
// Extract writes it into the build's private folder and the supervisor puts
// that folder first on the command's PYTHONPATH.
//
// # How it gets in
//
// sitecustomize.py (the bootstrap) is imported by Python's site module at
// every interpreter start that reads PYTHONPATH; not under python -I, -E or
// -S (https://docs.python.org/3/library/site.html). It installs the hook
// when TRT_ACTION_SUPERVISOR is set and not empty, and in every case then
// runs the program's own sitecustomize, the next one on sys.path after
// TRT_ACTION_HOOK_DIR that is not another trt-action's bootstrap, as the
// program's sitecustomize module (the idea of ddtrace's bootstrap,
// ddtrace/bootstrap/sitecustomize.py in https://github.com/DataDog/dd-trace-py).
// A marker in sys.modules makes a second run do nothing.
//
// trt-action installed with pip (issue 20) has a second way in that -I and
// -E do not close: the wheel's trt_action.pth in the program's
// site-packages, whose import line site runs at every interpreter start
// and which imports nothing unless TRT_ACTION_SUPERVISOR is set; Python
// 3.15 and later call trt_action.start's entry point instead (PEP 829,
// https://peps.python.org/pep-0829/). Its activate() (wheel/trt_action/_activate.py)
// loads the supervisor's hook from TRT_ACTION_HOOK_DIR as trt_action_hook
// without putting that folder on sys.path, or the wheel's own copy of the
// package when the folder is not there. site runs .pth files before
// sitecustomize: a second marker in sys.modules, which both set, lets
// only the first of the two try to install the hook, and the bootstrap
// still runs the program's sitecustomize. -S (no site) keeps out both.
// The wheel also holds trt_action/__init__.py (find_binary, __version__)
// and __main__.py (python -m trt_action: os.execv of the binary). The hook needs Python 3.7 and the standard library
// only; its failures are one line on stderr starting "trt-action hook:",
// never an exception in the program. What builds need is loaded only when
// the program imports TensorRT (start-up figures: BENCHMARKS.md, made by
// testdata/bench/startup.py; per callback: testdata/bench/callbacks.py). Under
// PYTHONDONTWRITEBYTECODE (python -B) the first process writes the hook's
// byte code into the hook's folder, which the later ones load; the
// program's own files get none.
//
// # What it patches
//
// Classes, never modules: a finder first on sys.meta_path patches the
// classes of tensorrt_rtx_bindings (tensorrt_rtx_bindings.tensorrt_rtx),
// tensorrt_bindings (tensorrt_bindings.tensorrt) and the older one-package
// tensorrt (tensorrt.tensorrt) once their module has run, and modules
// imported before it are patched at install, so torch-TensorRT's proxy
// module and Ultralytics' install-then-import still meet patched classes
// (the package layout: python/packaging/ in https://github.com/NVIDIA/TensorRT).
// The entry points, where the bindings have them (python/src/infer/pyCore.cpp
// there): Builder.build_serialized_network, build_engine_with_config (10.6+),
// build_serialized_network_to_stream (10.13+) and build_engine (9.x and
// before). IBuilderConfig.add_optimization_profile and
// IOptimizationProfile.set_shape/set_shape_input are wrapped to remember a
// config's profiles, which cannot be read back from it.
//
// At each build the hook reads the program's monitor (config.progress_monitor),
// attaches its own, which passes every callback on to the program's, and
// puts the program's back afterwards. Its own is, on the native route
// (taken wherever it can be: py/trt_action_hook/_native.py), trt-action's
// C++ monitor from libtam_host.so, attached by the backend object built
// for the bindings through their pybind11 conduit, with no Python per
// callback; on the python route (TRT_ACTION_ROUTE=python, or where the
// native one cannot be taken) a subclass of the bindings'
// IProgressMonitor made for the build. On that route pybind11 cancels a
// build whose Python step_complete raises or returns something that is
// not true (the PyProgressMonitor trampoline in pyCore.cpp; pybind11's
// bool conversion,
// https://pybind11.readthedocs.io/en/stable/advanced/cast/overview.html),
// so the hook's step_complete catches everything and returns a bool:
// False only when the supervisor said stop or the program's monitor
// cancelled; per callback it appends a tuple to a deque and reads a flag.
// On either route a drain thread, started at begin and joined at end,
// sends the events about every 10 ms.
//
// Python runs signal handlers between bytecodes of the main thread
// (https://docs.python.org/3/library/signal.html), and TensorRT-RTX calls a
// monitor on the building thread: a Ctrl-C that would raise
// KeyboardInterrupt after the build returns would instead surface in the
// hook's callback, where pybind11 prints it and cancels the build. So while
// a build without the program's own monitor runs on the main thread, the
// hook holds the Python-level handlers and sends the held signals again
// when the build ends. A stop therefore reaches a build through the
// socket, never through a signal to the program.
//
// # The protocol
//
// Each process connects its own Unix SOCK_SEQPACKET socket (children
// inherit the environment, not descriptors; a forked child drops the
// connection it inherited and opens its own at its first message). One JSON
// object per message, at most 60,000 bytes, ASCII (non-ASCII escaped);
// times t are time.monotonic_ns() (CLOCK_MONOTONIC, one clock for every
// process of the machine).
//
// Hook to supervisor:
//
//	{"m":"hello","pid":P,"ppid":PP,"python":"3.11.7","executable":"/usr/bin/python3","argv":[...]}
//	    at interpreter start, or at a forked child's first message; argv is
//	    sys.orig_argv (the whole command line) where Python has it
//	{"m":"begin","id":N,"t":T,"entry":"build_serialized_network","route":"native"|"python",
//	 "route_note":"...","bindings":"tensorrt_rtx_bindings","library":"TensorRT-RTX 1.7.1.116",
//	 "user_monitor":false,"config":{...},"network":{...}}
//	    before the entry point runs; id counts from 1 in each process;
//	    route is how the build's callbacks come (native: trt-action's C++
//	    monitor through the bindings' pybind11 conduit, py/trt_action_hook/_native.py;
//	    python: a Python IProgressMonitor), route_note why the build took
//	    it, left out only when TRT_ACTION_NATIVE_DIR is not set (the
//	    supervisor, which left it out, says why: it knows where it looked)
//	{"m":"ev","id":N,"e":[[T,THREAD,"s",PHASE,PARENT|null,NBSTEPS],[T,THREAD,"p",PHASE,STEP],[T,THREAD,"f",PHASE],...]}
//	    THREAD is 1-based, in the order threads first called back in the process
//	{"m":"end","id":N,"t":T,"result":"ok"|"none"|"error","bytes":B,"error":"Type: message",
//	 "stopped":false,"user_cancelled":false}
//	    after the build's last events; "none" also for a
//	    build_serialized_network_to_stream that returned False; bytes only
//	    where the engine's size is known without serializing it: the
//	    result's IHostMemory.nbytes, or what the program's writer took in a
//	    build_serialized_network_to_stream (session.py counts it)
//
// config holds what the bindings have of: "flags" (BuilderFlag names),
// "memory_pools" (MemoryPoolType name to bytes), "attrs" (scalar properties
// by their Python names, enums as {"name": member, "value": number};
// readout.py lists them and
// why the others are left out), "tactic_sources", "compute_capabilities"
// (TensorRT-RTX), "preview_features" (the enabled ones),
// "quantization_flags" (TensorRT), and "profiles" ([{INPUT: {min, opt,
// max}}], only when the hook saw every profile of the config). network
// holds "inputs" and "outputs" ({name, dtype, shape}, -1 for a dynamic
// dimension), "layers", and "flags" (NetworkDefinitionCreationFlag names).
// Whatever cannot be read is left out. A begin message too long for one
// message is cut and says "cut":true.
//
// Supervisor to hook:
//
//	{"m":"stop","why":"..."}
//	    from then on every step_complete of every build of the process
//	    returns False, also of builds that begin later; a stop sent before a
//	    build is read when the build begins
//
// If the supervisor cannot be reached or goes away, the hook goes quiet and
// the program runs on unobserved.
//
// # Environment
//
//	TRT_ACTION_SUPERVISOR  the supervisor's socket; the hook does nothing unless set and not empty
//	TRT_ACTION_HOOK_DIR    the folder Extract wrote (where the program's own sitecustomize search starts)
//	TRT_ACTION_NATIVE_DIR  the folder of libtam_host.so and the backend objects, for the native
//	                       route; the supervisor sets it where it found them
//	TRT_ACTION_ROUTE       python: every build on the Python route; anything else, or unset, the
//	                       native route wherever it can be taken (the user's to set: env:, --env)
package pyhook

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// files is the hook. The patterns name files, so __init__.py is included
// (a directory pattern leaves out names starting with _) and a __pycache__
// of a test run is not.
//
//go:embed py/sitecustomize.py py/trt_action_hook/*.py
var files embed.FS

// root is the folder of files that Extract writes, and the name it has
// under Extract's dir.
const root = "py"

// Extract writes the hook into dir/py, which it creates if needed, and
// returns that folder: the one to put first on the command's PYTHONPATH
// (and in TRT_ACTION_HOOK_DIR). dir must exist. Files are 0644 and folders
// 0755 whatever the umask, so no one but the owner can change the code the
// command runs; a symbolic link where a file or folder of the hook goes is
// an error, never followed. Writing again over an earlier Extract replaces
// its files.
func Extract(dir string) (string, error) {
	dest := filepath.Join(dir, root)
	err := fs.WalkDir(files, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			return makeFolder(target)
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		return writeFile(target, data)
	})
	if err != nil {
		return "", fmt.Errorf("writing trt-action's Python hook into %s: %w", dest, err)
	}
	return dest, nil
}

// makeFolder makes a folder of the hook, or takes one an earlier Extract
// made.
func makeFolder(p string) error {
	err := os.Mkdir(p, 0o755)
	if errors.Is(err, fs.ErrExist) {
		info, lerr := os.Lstat(p)
		if lerr != nil {
			return lerr
		}
		if !info.IsDir() {
			return fmt.Errorf("%s is in the way: %s, not a folder", p, atomicfile.FileKind(info.Mode()))
		}
	} else if err != nil {
		return err
	}
	return os.Chmod(p, 0o755)
}

// writeFile writes a file of the hook without following a link at its
// name, or opening a FIFO or a device there (O_NONBLOCK makes a FIFO with
// no reader an error instead of a wait).
func writeFile(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if info, lerr := os.Lstat(p); lerr == nil && !info.Mode().IsRegular() {
			return fmt.Errorf("%s is in the way: %s, not a regular file", p, atomicfile.FileKind(info.Mode()))
		}
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is in the way: %s, not a regular file", p, atomicfile.FileKind(info.Mode()))
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	return f.Close()
}
