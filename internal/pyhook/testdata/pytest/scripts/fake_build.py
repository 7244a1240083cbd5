"""A builder script against the fake bindings (fakes/), the way programs
use TensorRT's Python API. It prints one JSON line at the end: what the
program saw (results, the config's monitor afterwards, what its own monitor
was called with), for the test to compare with what the supervisor saw."""

import argparse
import importlib
import json
import os
import sys
import threading

import patterns

HERE = os.path.dirname(os.path.abspath(__file__))
FAKES = os.path.join(HERE, "..", "fakes")


def make_writer(trt):
    class Writer(trt.IStreamWriter):
        def __init__(self):
            trt.IStreamWriter.__init__(self)
            self.data = b""

        def write(self, data):
            self.data += bytes(data)
            return len(data)

    return Writer()


def make_user_monitor(trt, how, calls):
    kind, _, at = how.partition(":")
    at = int(at or -1)

    class UserMonitor(trt.IProgressMonitor):
        def __init__(self):
            trt.IProgressMonitor.__init__(self)
            self.steps = 0

        def phase_start(self, phase_name, parent_phase, num_steps):
            calls.append(["s", phase_name, parent_phase, num_steps])
            if kind == "raise-phase":
                raise ValueError("phase boom")

        def step_complete(self, phase_name, step):
            calls.append(["p", phase_name, step])
            self.steps += 1
            if self.steps - 1 != at:
                return {"str": "yes", "one": 1}.get(kind, True)
            if kind == "false-at":
                return False
            if kind == "none-at":
                return None
            if kind == "raise-at":
                raise ValueError("no more")
            return True

        def phase_finish(self, phase_name):
            calls.append(["f", phase_name])

    return UserMonitor()


def wait_for_stop(phase, step):
    import time

    from trt_action_hook import channel

    if phase == "Building engine" and step == 1:
        deadline = time.monotonic() + 60
        while not channel.STOP and time.monotonic() < deadline:
            time.sleep(0.005)


def wait_for_gone(phase, step):
    import time

    from trt_action_hook import channel

    if phase == "Building engine" and step == 1:
        deadline = time.monotonic() + 60
        while not channel.CURRENT.gone and time.monotonic() < deadline:
            time.sleep(0.005)


def big_tree(n):
    name = "Timing tactics for a layer with a long name " + "x" * 900
    return ("Building engine", 1, [(name, n, [])])


def build_once(trt, args, entry, out):
    builder = trt.Builder(None)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED) if args.strongly_typed else 0)
    x = network.add_input("images", trt.float32, (-1, 3, 224, 224))
    network.mark_output(network.add_identity(x))
    for i in range(args.inputs):
        network.add_input("input_%04d_%s" % (i, "x" * 200), trt.int64, (1, 1))
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 28)
    config.set_flag(trt.BuilderFlag.FP16)
    config.builder_optimization_level = 2
    config.hardware_compatibility_level = trt.HardwareCompatibilityLevel.AMPERE_PLUS
    profile = builder.create_optimization_profile()
    profile.set_shape("images", (1, 3, 224, 224), (4, 3, 224, 224), (8, 3, 224, 224))
    config.add_optimization_profile(profile)
    if args.stop_wait:
        network.on_step = wait_for_stop
    if args.wait_gone:
        network.on_step = wait_for_gone
    if args.second_thread:
        network.second_thread = True
    if args.big:
        network.tree = big_tree(args.big)
    calls = []
    user = second = None
    if args.user_monitor != "none":
        user = make_user_monitor(trt, args.user_monitor, calls)
        config.progress_monitor = user
    if args.swap_monitor:
        # Another thread of the program sets a monitor during the build.
        second = make_user_monitor(trt, "plain", [])

        def swap(phase, step):
            if phase == "Building engine" and step == 1:
                t = threading.Thread(target=setattr, args=(config, "progress_monitor", second))
                t.start()
                t.join()

        network.on_step = swap
    if args.refused:
        refused = 0
        entry_point = getattr(builder, entry)
        for bad in ((network,), (network, None), (None, config), (config, network), (network, config, None, None)):
            try:
                entry_point(*bad)
            except TypeError:
                refused += 1
        try:
            entry_point(network, config=config, monitor=user)
        except TypeError:
            refused += 1
        out.append({"refused": refused})
    call_args = (network, config)
    writer = None
    if entry == "build_serialized_network_to_stream":
        writer = make_writer(trt)
        call_args += (writer,)
    if args.keywords:
        result = getattr(builder, entry)(call_args[0], config=config, **({"writer": writer} if writer else {}))
    else:
        result = getattr(builder, entry)(*call_args)
    seen = {
        "entry": entry,
        "result": type(result).__name__,
        "size": len(writer.data) if writer else (result.nbytes if hasattr(result, "nbytes") else None),
        "monitor_after_is_user": config.progress_monitor is user,
        "monitor_after_is_second": second is not None and config.progress_monitor is second,
        "user_calls": calls,
    }
    if hasattr(result, "nbytes"):
        seen["plan"] = bytes(result).decode()
    out.append(seen)


def threads_left():
    """The threads of this process, once the hook's drain thread (joined
    when its build ended) has had a moment to leave the system's list."""
    import time

    deadline = time.monotonic() + 1
    while len(os.listdir("/proc/self/task")) > 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    return len(os.listdir("/proc/self/task"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fakes", default="datacenter")
    p.add_argument("--module", default="tensorrt")
    p.add_argument("--entry", action="append")
    p.add_argument("--user-monitor", default="none")
    p.add_argument("--stop-wait", action="store_true")
    p.add_argument("--wait-gone", action="store_true")
    p.add_argument("--wait-stdin", action="store_true")
    p.add_argument("--second-thread", action="store_true")
    p.add_argument("--strongly-typed", action="store_true")
    p.add_argument("--big", type=int, default=0)
    p.add_argument("--inputs", type=int, default=0, help="extra network inputs, with long names")
    p.add_argument("--fork", action="store_true")
    p.add_argument("--proxy", action="store_true", help="torch-TensorRT: sys.modules['tensorrt'] is a proxy")
    p.add_argument("--late", action="store_true", help="Ultralytics: the bindings appear mid-run")
    p.add_argument("--install-after-import", action="store_true")
    p.add_argument("--warnings-are-errors", action="store_true")
    p.add_argument("--swap-monitor", action="store_true", help="set a monitor from another thread during the build")
    p.add_argument("--refused", action="store_true", help="first call the entry point with arguments the bindings refuse")
    p.add_argument("--keywords", action="store_true", help="pass the config (and writer) by keyword")
    args = p.parse_args()
    if args.warnings_are_errors:
        import warnings

        warnings.simplefilter("error")

    sys.path.insert(0, FAKES)
    fakes = os.path.join(FAKES, args.fakes)
    if args.late:
        try:
            importlib.import_module(args.module)
            sys.exit("the bindings were importable before they were installed")
        except ImportError:
            pass
    sys.path.insert(0, fakes)
    importlib.invalidate_caches()
    trt = importlib.import_module(args.module)
    if args.install_after_import:
        import trt_action_hook

        os.environ["TRT_ACTION_SUPERVISOR"] = os.environ.pop("LATER_SUPERVISOR")
        trt_action_hook.install()
    if args.proxy:
        trt = patterns.torch_tensorrt_proxy(trt)

    if args.wait_stdin:
        sys.stdin.readline()
    out = []
    entries = args.entry or ["build_serialized_network"]
    for entry in entries:
        build_once(trt, args, entry, out)
    if args.fork:
        tasks = threads_left()
        pid = os.fork()
        if pid == 0:
            child = []
            build_once(trt, args, entries[0], child)
            print(json.dumps({"child": child}), flush=True)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        build_once(trt, args, entries[0], out)
        out.append({"threads_at_fork": tasks, "child_status": status})
    fakecore = sys.modules["fakecore"]
    print(json.dumps({
        "builds": out,
        "pid": os.getpid(),
        "step_results": sorted(set(type(r).__name__ for r in fakecore.STEP_RESULTS)),
        "logged": fakecore.LOGGED,
    }))


main()
