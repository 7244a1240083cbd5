"""A builder script of the kind trt-action runs as a script build: it
builds a small MLP with TensorRT-RTX's network-definition API (no ONNX)
and writes the engine. Options let the tests make it do what real
programs do: set its own progress monitor, build twice, build in spawned
child processes, crash, never build, run slowly enough for a budget,
fall back after a failed build, build to a stream, or build for the GPU
it runs on (which fails without one), and write a config.json beside its
engines. It knows nothing of trt-action."""

import argparse
import multiprocessing
import os
import sys
import time

import numpy as np
import tensorrt_rtx as trt


class FileWriter(trt.IStreamWriter):
    """Takes the engine from build_serialized_network_to_stream a piece
    at a time, into a file."""

    def __init__(self, f):
        trt.IStreamWriter.__init__(self)
        self.f = f

    def write(self, data):
        return self.f.write(data)


def build(out, layers, opt_level, monitor=None, invalid=False, refused=False, stream=False, target_current=False):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    x = network.add_input("features", trt.float32, (1, 32))
    rng = np.random.RandomState(11)
    keep = []
    for _ in range(layers):
        w = (rng.standard_normal((32, 32)) * 0.1).astype(np.float32)
        keep.append(w)
        c = network.add_constant(w.shape, w)
        mm = network.add_matrix_multiply(x, trt.MatrixOperation.NONE, c.get_output(0), trt.MatrixOperation.NONE)
        x = network.add_activation(mm.get_output(0), trt.ActivationType.RELU).get_output(0)
    x.name = "scores"
    if not invalid:  # a network without outputs: TensorRT refuses to build it
        network.mark_output(x)
    if refused:
        try:
            builder.build_serialized_network(network)  # no config: the bindings refuse the call
        except TypeError as e:
            print("the call was refused: %s" % str(e).splitlines()[0], flush=True)
    config = builder.create_builder_config()
    config.builder_optimization_level = opt_level
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 64 << 20)
    if target_current:
        # The GPU this runs on: TensorRT-RTX then needs one (and logs an
        # error, returning None, where there is none).
        config.num_compute_capabilities = 1
        config.set_compute_capability(trt.ComputeCapability.CURRENT, 0)
    if monitor is not None:
        config.progress_monitor = monitor
    if stream:
        with open(out, "wb") as f:
            ok = builder.build_serialized_network_to_stream(network, config, FileWriter(f))
        print("streamed %s (%d bytes)" % (out, os.path.getsize(out)) if ok else "the build to a stream failed", flush=True)
        return ok
    plan = builder.build_serialized_network(network, config)
    if monitor is not None and config.progress_monitor is not monitor:
        sys.exit("the config no longer holds this program's monitor")
    if plan is None:
        # What some NVIDIA samples do: go on as if nothing happened.
        print("build returned None", flush=True)
        return False
    with open(out, "wb") as f:
        f.write(plan)
    print("wrote %s (%d bytes)" % (out, plan.nbytes), flush=True)
    return True


class Counting(trt.IProgressMonitor):
    """The program's own monitor: counts callbacks; may sleep per step
    (a slow build), abort the process, or cancel."""

    def __init__(self, step_sleep=0.0, abort_at=-1, cancel_at=-1):
        trt.IProgressMonitor.__init__(self)
        self.calls, self.steps = 0, 0
        self.step_sleep, self.abort_at, self.cancel_at = step_sleep, abort_at, cancel_at

    def phase_start(self, phase_name, parent_phase, num_steps):
        self.calls += 1

    def step_complete(self, phase_name, step):
        self.calls += 1
        self.steps += 1
        if self.steps == self.abort_at:
            os.abort()
        if self.step_sleep:
            time.sleep(self.step_sleep)
        return self.steps != self.cancel_at

    def phase_finish(self, phase_name):
        self.calls += 1


def child(args):
    out, layers = args
    return build(out, layers, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="model.engine")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--opt-level", type=int, default=1)
    p.add_argument("--builds", type=int, default=1)
    p.add_argument("--monitor", action="store_true", help="set the program's own monitor")
    p.add_argument("--step-sleep", type=float, default=0.0)
    p.add_argument("--abort-at", type=int, default=-1)
    p.add_argument("--spawn", type=int, default=0, help="build in this many spawned child processes too")
    p.add_argument("--never", action="store_true", help="import TensorRT, build nothing")
    p.add_argument("--pid-file", help="write this process's pid here")
    p.add_argument("--fall-back", action="store_true", help="build an invalid network first; on failure build the good one")
    p.add_argument("--stream", action="store_true", help="build with build_serialized_network_to_stream")
    p.add_argument("--target-current", action="store_true", help="build for the GPU this runs on")
    p.add_argument("--refused-call", action="store_true", help="call build_serialized_network without a config first, and catch the TypeError")
    p.add_argument("--config", help="also write this JSON file describing the engines, as TensorRT-LLM writes its config.json")
    a = p.parse_args()
    if a.pid_file:
        with open(a.pid_file, "w") as f:
            f.write(str(os.getpid()))
    if a.never:
        print("nothing to build", flush=True)
        return 0
    if a.spawn:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(a.spawn) as pool:
            ok = pool.map(child, [("%s.child%d" % (a.out, i), a.layers) for i in range(a.spawn)])
        if not all(ok):
            return 1
    if a.fall_back and not build(a.out, a.layers, a.opt_level, invalid=True):
        print("falling back to the full network", flush=True)
    ok = True
    for i in range(a.builds):
        monitor = Counting(a.step_sleep, a.abort_at) if (a.monitor or a.step_sleep or a.abort_at >= 0) else None
        out = a.out if i == 0 else "%s.%d" % (a.out, i)
        ok = build(out, a.layers, a.opt_level, monitor, refused=a.refused_call, stream=a.stream, target_current=a.target_current) and ok
        if monitor is not None:
            print("program's monitor saw %d callbacks" % monitor.calls, flush=True)
    if a.config and ok:
        with open(a.config, "w") as f:
            f.write('{"layers": %d, "builds": %d}\n' % (a.layers, a.builds))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
