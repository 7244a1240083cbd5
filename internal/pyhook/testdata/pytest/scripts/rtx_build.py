"""A builder script on the real TensorRT-RTX bindings (tensorrt_rtx), with
the network-definition API or an ONNX model, the way programs build
engines. It prints one JSON line at the end with what the program saw."""

import argparse
import importlib
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import patterns


def network_by_api(trt, builder, layers):
    """An MLP written with the network-definition API: input [batch, 64],
    layers x (MatMul + bias + ReLU), weights from a fixed seed."""
    network = builder.create_network(0)
    x = network.add_input("features", trt.float32, (-1, 64))
    rng = np.random.RandomState(7)
    keep = []  # TensorRT reads the weights when it builds
    for i in range(layers):
        w = rng.standard_normal((64, 64)).astype(np.float32) * 0.1
        b = rng.standard_normal((1, 64)).astype(np.float32) * 0.1
        keep += [w, b]
        wc = network.add_constant(w.shape, w)
        bc = network.add_constant(b.shape, b)
        mm = network.add_matrix_multiply(x, trt.MatrixOperation.NONE, wc.get_output(0), trt.MatrixOperation.NONE)
        add = network.add_elementwise(mm.get_output(0), bc.get_output(0), trt.ElementWiseOperation.SUM)
        x = network.add_activation(add.get_output(0), trt.ActivationType.RELU).get_output(0)
    x.name = "scores"
    network.mark_output(x)
    return network, keep


def network_from_onnx(trt, builder, logger, path):
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(path):
        sys.exit("could not parse %s: %s" % (path, [str(parser.get_error(i)) for i in range(parser.num_errors)]))
    return network, parser


class Recorder:
    """The program's own monitor: records every callback; may cancel."""

    def __init__(self, trt, cancel_at, wait_for_stop, at_second_step=None):
        base = trt.IProgressMonitor

        class UserMonitor(base):
            def __init__(self):
                base.__init__(self)
                self.calls = []

            def phase_start(self, phase_name, parent_phase, num_steps):
                self.calls.append(["s", phase_name, parent_phase, num_steps])

            def step_complete(self, phase_name, step):
                self.calls.append(["p", phase_name, step])
                if wait_for_stop and len(self.calls) == 3:
                    wait_until_stopped()
                if at_second_step is not None and sum(c[0] == "p" for c in self.calls) == 2:
                    at_second_step()
                return sum(c[0] == "p" for c in self.calls) - 1 != cancel_at

            def phase_finish(self, phase_name):
                self.calls.append(["f", phase_name])

        self.monitor = UserMonitor()


def wait_until_stopped():
    from trt_action_hook import channel

    deadline = time.monotonic() + 60
    while not channel.STOP and time.monotonic() < deadline:
        time.sleep(0.005)


def build(trt, args, out):
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    if args.model:
        network, keep = network_from_onnx(trt, builder, logger, args.model)
    else:
        network, keep = network_by_api(trt, builder, args.layers)
    config = builder.create_builder_config()
    if args.settings:
        config.builder_optimization_level = 1
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 256 << 20)
        config.num_compute_capabilities = 2
        config.set_compute_capability(trt.ComputeCapability.SM89, 0)
        config.set_compute_capability(trt.ComputeCapability.SM120, 1)
        config.clear_flag(trt.BuilderFlag.TF32)
        config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    name = network.get_input(0).name
    shape = list(network.get_input(0).shape)
    if -1 in shape:
        profile = builder.create_optimization_profile()
        fixed = [1 if d == -1 else d for d in shape]
        opt = [4 if d == -1 else d for d in shape]
        most = [16 if d == -1 else d for d in shape]
        profile.set_shape(name, fixed, opt, most)
        config.add_optimization_profile(profile)
    user = second = None
    if args.swap_monitor:
        # Another thread of the program sets another monitor during the
        # build; the config must hold it afterwards.
        second = Recorder(trt, -1, False).monitor

        def swap():
            t = threading.Thread(target=setattr, args=(config, "progress_monitor", second))
            t.start()
            t.join()

        user = Recorder(trt, -1, False, swap).monitor
        config.progress_monitor = user
    elif args.user_monitor:
        user = Recorder(trt, args.cancel_at, args.wait_for_stop).monitor
        config.progress_monitor = user
    try:
        plan = builder.build_serialized_network(network, config)
    except KeyboardInterrupt:
        out.append({"interrupted": True})
        return
    seen = {
        "result": type(plan).__name__,
        "size": plan.nbytes if plan is not None else None,
        "monitor_after_is_user": config.progress_monitor is user,
        "monitor_after_is_second": second is not None and config.progress_monitor is second,
        "user_calls": user.calls if user is not None else None,
    }
    if plan is not None and args.engine:
        path = args.engine if not out else "%s.%d" % (args.engine, len(out))
        with open(path, "wb") as f:
            f.write(plan)
        seen["engine"] = path
    out.append(seen)


def spawned(argv):
    sys.argv = [sys.argv[0]] + argv
    args = parse()
    trt = importlib.import_module("tensorrt_rtx")
    out = []
    build(trt, args, out)
    print(json.dumps({"child": out, "pid": os.getpid()}), flush=True)


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--engine")
    p.add_argument("--builds", type=int, default=1)
    p.add_argument("--settings", action="store_true")
    p.add_argument("--user-monitor", action="store_true")
    p.add_argument("--cancel-at", type=int, default=-1)
    p.add_argument("--swap-monitor", action="store_true", help="set another monitor from another thread during the build")
    p.add_argument("--wait-for-stop", action="store_true")
    p.add_argument("--wait-stdin", action="store_true")
    p.add_argument("--fork", action="store_true")
    p.add_argument("--spawn", action="store_true")
    p.add_argument("--sigint-after", type=float)
    p.add_argument("--proxy", action="store_true", help="torch-TensorRT: sys.modules['tensorrt'] is a proxy of tensorrt_rtx")
    p.add_argument("--late", action="store_true", help="Ultralytics: the bindings are importable only later in the run")
    return p.parse_args()


def main():
    args = parse()
    if args.late:
        saved = list(sys.path)
        sys.path[:] = [p for p in sys.path if "site-packages" not in p]
        try:
            importlib.import_module("tensorrt_rtx")
            sys.exit("tensorrt_rtx was importable before it was 'installed'")
        except ImportError:
            pass
        sys.path[:] = saved
        importlib.invalidate_caches()
    trt = importlib.import_module("tensorrt_rtx")
    if args.proxy:
        trt = patterns.torch_tensorrt_proxy(trt)
    if args.wait_stdin:
        sys.stdin.readline()
    if args.sigint_after is not None:
        threading.Timer(args.sigint_after, os.kill, (os.getpid(), signal.SIGINT)).start()
    out = []
    if args.spawn:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        p = ctx.Process(target=spawned, args=(sys.argv[1:],))
        p.start()
        p.join()
        out.append({"child_exit": p.exitcode})
    else:
        for _ in range(args.builds):
            build(trt, args, out)
    if args.fork:
        pid = os.fork()
        if pid == 0:
            child = []
            build(trt, args, child)
            print(json.dumps({"child": child, "pid": os.getpid()}), flush=True)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        build(trt, args, out)
        out.append({"child_status": status})
    print(json.dumps({"builds": out, "pid": os.getpid()}), flush=True)


if __name__ == "__main__":
    main()
