"""The per-callback cost of trt-action's fallback (Python) monitor: each
callback called from Python, against a Python monitor that does nothing (the
least any Python monitor costs: TensorRT's call into Python through pybind11
is the same for both and is not in these figures), and the drain thread's
cost per event (encoding and sending to a SOCK_SEQPACKET peer). The median
of --repeat runs of --number calls each.

    $TRT_ACTION_SCRIPT_PYTHON internal/pyhook/testdata/bench/callbacks.py [--number 200000] [--repeat 15]

With tensorrt_rtx importable the monitors subclass its IProgressMonitor, as
in a real build; otherwise a plain class.
"""

import argparse
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "py"))
sys.dont_write_bytecode = True

from trt_action_hook import channel, session  # noqa: E402

try:
    import tensorrt_rtx

    Base = tensorrt_rtx.IProgressMonitor
except ImportError:

    class Base:
        def __init__(self):
            pass


class Empty(Base):
    """A monitor that does nothing: the baseline."""

    def __init__(self):
        Base.__init__(self)

    def phase_start(self, phase_name, parent_phase, num_steps):
        pass

    def step_complete(self, phase_name, step):
        return True

    def phase_finish(self, phase_name):
        pass


class FakeBuild:
    def __init__(self):
        from _collections import deque

        self.events = deque()


def per_call(fn, args, number, repeat, reset):
    runs = []
    for _ in range(repeat):
        reset()
        start = time.perf_counter_ns()
        for _ in range(number):
            fn(*args)
        runs.append((time.perf_counter_ns() - start) / number)
    return statistics.median(runs)


def drain_cost(number, repeat):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def read():
        while b.recv(65536):
            pass

    threading.Thread(target=read, daemon=True).start()

    class Pipe(channel.Channel):
        def __init__(self):
            channel.Channel.__init__(self, "")
            self._sock, self._pid = a, os.getpid()

    ch = Pipe()
    runs = []
    for _ in range(repeat):
        build = session.Build(ch, "build_serialized_network", None)
        now, ident = time.monotonic_ns(), threading.get_ident()
        for i in range(number):
            build.events.append((now + i, ident, "p", "Evaluating tactic times", i % 153))
        start = time.perf_counter_ns()
        build._flush()
        runs.append((time.perf_counter_ns() - start) / number)
    return statistics.median(runs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--number", type=int, default=200000)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args()
    plain_class, tee_class = session._make_monitor_classes(Base)
    build = FakeBuild()
    plain = plain_class(build)
    tee = tee_class(build, Empty())
    empty = Empty()
    reset = build.events.clear
    n, r = args.number, args.repeat
    print("python %s, monitors over %s.%s, median of %d runs of %d calls" % (
        sys.version.split()[0], Base.__module__, Base.__name__, r, n))
    rows = [
        ("step_complete", ("Evaluating tactic times", 7)),
        ("phase_start", ("Measuring tactic time", "Evaluating tactic times", 4)),
        ("phase_finish", ("Measuring tactic time",)),
    ]
    for method, call_args in rows:
        base = per_call(getattr(empty, method), call_args, n, r, reset)
        ours = per_call(getattr(plain, method), call_args, n, r, reset)
        teed = per_call(getattr(tee, method), call_args, n, r, reset)
        print("  %-14s empty monitor %5.0f ns | hook %5.0f ns (+%4.0f) | hook teeing to an empty monitor %5.0f ns (+%4.0f over the empty one)" % (
            method, base, ours, ours - base, teed, teed - base))
    print("  drain thread: %.0f ns per event (encode, batch, send)" % drain_cost(n // 4, max(3, r // 3)))


main()
