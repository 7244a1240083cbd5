"""The per-callback cost of a builder script's two monitor routes, on the
real TensorRT-RTX bindings: trt-action's native monitor (internal/pyhook's
_native.py, libtam_host.so and libtam_rtx.so) against the Python fallback,
a Python IProgressMonitor subclass that appends a tuple and returns True,
as the hook's does. A synthetic build (drive.cc) calls the config's
monitor from C++ threads without the GIL, as TensorRT does; rounds
alternate the routes' order; the figure is the median over the rounds of
the wall time per callback. A drain thread takes the events every 10 ms,
as the hook's does; its time per event is shown beside (it runs on its own
thread, holding the GIL: the native route turns the C++ events into the
protocol's lists there, the Python route only takes its tuples). Run by
scripts/bench-native, which says how."""

import argparse
import ctypes
import os
import statistics
import sys
import threading
from _thread import get_ident
from collections import deque
from time import monotonic_ns, perf_counter_ns

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "internal", "pyhook", "py"))
from trt_action_hook import _native  # noqa: E402

import tensorrt_rtx as trt  # noqa: E402


class Fallback(trt.IProgressMonitor):
    """The Python route's monitor: per callback, append a tuple, return True."""

    def __init__(self):
        trt.IProgressMonitor.__init__(self)
        self.events = deque()

    def phase_start(self, phase_name, parent_phase, num_steps, _now=monotonic_ns, _ident=get_ident):
        self.events.append((_now(), _ident(), "s", phase_name, parent_phase, num_steps))

    def step_complete(self, phase_name, step, _now=monotonic_ns, _ident=get_ident):
        self.events.append((_now(), _ident(), "p", phase_name, step))
        return True

    def phase_finish(self, phase_name, _now=monotonic_ns, _ident=get_ident):
        self.events.append((_now(), _ident(), "f", phase_name))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--driver", required=True, help="the compiled drive.cc")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument(
        "--steps", type=int, default=100000, help="step_complete calls per thread and run (4 threads fit the queue)"
    )
    p.add_argument(
        "--threads", default="0,4", help="thread counts, comma-separated; 0: the calling thread, as TensorRT-RTX calls"
    )
    args = p.parse_args()

    drive = ctypes.CDLL(args.driver).tam_bench_drive
    drive.restype = ctypes.c_int64
    drive.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32]
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    folder = os.environ[_native.ENV]
    backend, why = _native._load(os.path.join(folder, _native.RTX_BACKEND), _native._BACKEND_FUNCTIONS)
    if backend is None:
        sys.exit(why)

    def run(route, threads):
        """ns per callback of one synthetic build, and the drain's ns per
        event. A drain thread takes the events every 10 ms while the build
        runs, as the hook's does (holding the GIL while it does)."""
        config = builder.create_builder_config()
        pointer, why = _native._raw_config(backend, config)
        if pointer is None:
            sys.exit(why)
        if route == "native":
            native, why = _native.attach(config)
            if native is None:
                sys.exit(why)
            take = native.drain
        else:
            monitor = Fallback()
            config.progress_monitor = monitor

            def take(pop=monitor.events.popleft):
                out = []
                while True:
                    try:
                        out.append(pop())
                    except IndexError:
                        return out

        got, spent, done = [0], [0], threading.Event()

        def drain():
            while True:
                stop = done.wait(0.01)
                start = perf_counter_ns()
                got[0] += len(take())
                spent[0] += perf_counter_ns() - start
                if stop:
                    return

        drainer = threading.Thread(target=drain)
        drainer.start()
        wall = drive(pointer, threads, args.steps)
        done.set()
        drainer.join()
        if route == "native":
            native.close()
        else:
            config.progress_monitor = None
        callbacks = max(threads, 1) * (args.steps + 2)
        if wall < 0 or got[0] != callbacks:
            sys.exit("%s: %d of %d callbacks drained" % (route, got[0], callbacks))
        return wall / callbacks, spent[0] / callbacks

    print(
        "| TensorRT calls back on | native monitor, ns per callback | Python monitor, ns per callback | ratio "
        "| native drain, ns per event | Python drain, ns per event |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for threads in (int(t) for t in args.threads.split(",")):
        figures = {"native": [], "python": []}
        run("native", threads)  # warm-up, uncounted
        run("python", threads)
        for r in range(args.rounds):
            for route in ("native", "python") if r % 2 == 0 else ("python", "native"):
                figures[route].append(run(route, threads))
        n, py = (statistics.median(f[0] for f in figures[route]) for route in ("native", "python"))
        n_drain, py_drain = (statistics.median(f[1] for f in figures[route]) for route in ("native", "python"))
        where = "the build's own thread" if threads == 0 else "%d threads of its own" % threads
        print("| %s | %.0f | %.0f | %.0fx | %.0f | %.0f |" % (where, n, py, py / n, n_drain, py_drain))


if __name__ == "__main__":
    main()
