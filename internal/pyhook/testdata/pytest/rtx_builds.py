"""The hook on the real TensorRT-RTX bindings (tensorrt_rtx), building real
engines on the CPU. Run by go test ./internal/pyhook with the builder-scripts
venv of scripts/setup-tensorrt-rtx (TRT_ACTION_SCRIPT_PYTHON)."""

import json
import os
import sys
import unittest
import warnings

import support

sys.path.insert(0, support.HOOK_DIR)
from trt_action_hook import patch, readout  # noqa: E402

import tensorrt_rtx as trt  # noqa: E402

VERSION = "1.7.1.116"


def model(name):
    path = os.path.join(support.MODELS, name)
    if not os.path.exists(path):
        raise AssertionError("no %s: run scripts/make-test-models and set TRT_ACTION_TEST_MODELS" % path)
    return path


def without_time(events):
    return [[e[2]] + e[3:] for e in events]


class RealBuilds(support.TestCase):
    def run_script(self, *args, sup=None, env=None, stdin=None):
        if sup is None:
            sup = self.supervisor()
        result = support.run(["rtx_build.py"] + list(args), env or support.hook_env(sup), stdin=stdin)
        self.assertRan(result)
        lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        return sup, result, lines

    def only_connection(self, sup):
        conns = sup.settled()
        self.assertEqual(len(conns), 1, [c.messages[:1] for c in conns])
        self.assertProtocol(conns[0])
        return conns[0]

    def engine(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_network_definition_api(self):
        out = os.path.join(self.folder, "mlp.engine")
        args = ["--settings", "--engine", out]
        sup, result, lines = self.run_script(*args)
        conn = self.only_connection(sup)
        hello = conn.messages[0]
        self.assertEqual(
            hello,
            {
                "m": "hello", "pid": lines[-1]["pid"], "ppid": os.getpid(),
                "python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
                "argv": [sys.executable, os.path.join(support.SCRIPTS, "rtx_build.py")] + args,
            },
        )
        builds = self.builds(conn)
        self.assertEqual(len(builds), 1)
        begin, events, end = builds[0]
        pools = begin["config"].pop("memory_pools")
        self.assertEqual(sorted(pools), sorted(trt.MemoryPoolType.__members__))
        self.assertEqual(pools["WORKSPACE"], 256 << 20)
        begin_t = begin.pop("t")
        self.assertEqual(
            begin,
            {
                "m": "begin", "id": 1, "entry": "build_serialized_network", "route": "python",
                "route_note": "TRT_ACTION_ROUTE=python asks for the Python route",
                "bindings": "tensorrt_rtx_bindings", "library": "TensorRT-RTX " + VERSION, "user_monitor": False,
                "config": {
                    "flags": [],
                    "attrs": {
                        "avg_timing_iterations": 1, "builder_optimization_level": 1, "build_route": "",
                        "all_build_routes": "", "default_device_type": {"name": "GPU", "value": 0}, "DLA_core": -1,
                        "engine_capability": {"name": "STANDARD", "value": 0}, "l2_limit_for_tiling": 0, "max_aux_streams": -1,
                        "max_num_tactics": -1, "num_compute_capabilities": 2, "num_optimization_profiles": 1,
                        "plugins_to_serialize": [], "profile_stream": 0,
                        "profiling_verbosity": {"name": "DETAILED", "value": 2},
                        "runtime_platform": {"name": "SAME_AS_BUILD", "value": 0},
                        "tiling_optimization_level": {"name": "NONE", "value": 0},
                    },
                    "tactic_sources": ["EDGE_MASK_CONVOLUTIONS", "JIT_CONVOLUTIONS"],
                    "compute_capabilities": ["SM89", "SM120"],
                    "preview_features": ["RUNTIME_ACTIVATION_RESIZE_10_10"],
                    "profiles": [{"features": {"min": [1, 64], "opt": [4, 64], "max": [16, 64]}}],
                },
                "network": {
                    "inputs": [{"name": "features", "dtype": "FLOAT", "shape": [-1, 64]}],
                    "outputs": [{"name": "scores", "dtype": "FLOAT", "shape": [-1, 64]}],
                    "layers": 15,
                    "flags": ["STRONGLY_TYPED"],
                },
            },
        )
        engine = self.engine(out)
        end_t = end.pop("t")
        self.assertEqual(
            end, {"m": "end", "id": 1, "result": "ok", "bytes": len(engine), "stopped": False, "user_cancelled": False}
        )
        self.assertWellFormedEvents(dict(begin, t=begin_t), events, dict(end, t=end_t))
        self.assertEqual(events[0][2:], ["s", "Building engine", None, 6])
        self.assertEqual({e[1] for e in events}, {1})  # TensorRT-RTX calls back on the calling thread
        self.assertEqual(lines[-1]["builds"][0]["size"], len(engine))
        self.assertEqual(result.stderr, "")

    def test_the_programs_own_monitor(self):
        sup, result, lines = self.run_script("--user-monitor")
        begin, events, end = self.builds(self.only_connection(sup))[0]
        seen = lines[-1]["builds"][0]
        self.assertTrue(begin["user_monitor"])
        self.assertEqual(without_time(events), seen["user_calls"])
        self.assertTrue(seen["monitor_after_is_user"], "the config's getter does not return the program's monitor")
        self.assertEqual((end["result"], end["user_cancelled"], end["stopped"]), ("ok", False, False))

    def test_a_monitor_the_program_sets_during_the_build_stays(self):
        # Another thread of the program sets a monitor while the build
        # runs: afterwards the config's getter returns it, as without the
        # hook (the Python route, support.hook_env's default).
        bare = support.run(["rtx_build.py", "--swap-monitor"], support.hook_env(None, hook_dir=None))
        self.assertRan(bare)
        self.assertTrue(json.loads(bare.stdout.splitlines()[-1])["builds"][0]["monitor_after_is_second"])
        sup, result, lines = self.run_script("--swap-monitor")
        begin, events, end = self.builds(self.only_connection(sup))[0]
        self.assertEqual((begin["route"], end["result"]), ("python", "ok"))
        seen = lines[-1]["builds"][0]
        self.assertTrue(seen["monitor_after_is_second"], "the hook put back a monitor over the one the program set during the build")

    def test_the_programs_monitor_cancels(self):
        sup, result, lines = self.run_script("--user-monitor", "--cancel-at", "2")
        begin, events, end = self.builds(self.only_connection(sup))[0]
        self.assertEqual((end["result"], end["user_cancelled"], end["stopped"]), ("none", True, False))
        self.assertEqual(lines[-1]["builds"][0]["result"], "NoneType")
        self.assertEqual(without_time(events), lines[-1]["builds"][0]["user_calls"])
        self.assertIn("BuildCanceled", result.stdout)  # trt.Logger writes to stdout

    def test_two_builds(self):
        sup, result, lines = self.run_script("--builds", "2")
        builds = self.builds(self.only_connection(sup))
        self.assertEqual([b[0]["id"] for b in builds], [1, 2])
        sizes = [b["size"] for b in lines[-1]["builds"]]
        for (begin, events, end), size in zip(builds, sizes):
            self.assertEqual((end["result"], end["bytes"]), ("ok", size))
            self.assertEqual(events[0][2:], ["s", "Building engine", None, 6])
        self.assertEqual(without_time(builds[0][1]), without_time(builds[1][1]))

    def test_stop_in_the_middle_of_a_build(self):
        # slow.onnx spends seconds in one silent phase: the stop comes
        # then, and the next step_complete cancels the build.
        def on_message(sup, conn, message):
            if message["m"] == "ev":
                sup.stop("build budget exceeded after 1s (limit 1s)")

        sup = self.supervisor(on_message)
        _, result, lines = self.run_script("--model", model("slow.onnx"), "--builds", "2", sup=sup)
        builds = self.builds(self.only_connection(sup))
        for begin, events, end in builds:
            self.assertEqual((end["result"], end["stopped"], end["user_cancelled"]), ("none", True, False))
        self.assertEqual([b["result"] for b in lines[-1]["builds"]], ["NoneType", "NoneType"])
        self.assertIn("BuildCanceled", result.stdout)
        # The second build began after the stop: its first step_complete
        # was its last.
        steps = [e for e in builds[1][1] if e[2] == "p"]
        self.assertEqual(len(steps), 1)

    def test_stop_with_the_programs_monitor(self):
        def on_message(sup, conn, message):
            if message["m"] == "begin":
                sup.stop("cancelled")

        sup = self.supervisor(on_message)
        _, result, lines = self.run_script("--user-monitor", "--wait-for-stop", sup=sup)
        begin, events, end = self.builds(self.only_connection(sup))[0]
        self.assertEqual((end["result"], end["stopped"], end["user_cancelled"]), ("none", True, False))
        # The program's monitor saw every callback up to the cancel.
        self.assertEqual(without_time(events), lines[-1]["builds"][0]["user_calls"])

    def test_stop_before_any_build(self):
        def on_message(sup, conn, message):
            if message["m"] == "hello":
                sup.stop("cancelled")

        sup = self.supervisor(on_message)
        self.run_after_stop(["rtx_build.py", "--wait-stdin"], sup)
        begin, events, end = self.builds(self.only_connection(sup))[0]
        self.assertEqual((end["result"], end["stopped"]), ("none", True))
        self.assertEqual(len([e for e in events if e[2] == "p"]), 1)

    def test_multiprocessing_spawn_child_builds(self):
        sup, result, lines = self.run_script("--spawn")
        conns = sup.settled()
        for conn in conns:
            self.assertProtocol(conn)
        parent = [c for c in conns if c.messages[0]["ppid"] == os.getpid()]
        self.assertEqual(len(parent), 1)
        self.assertEqual(self.builds(parent[0]), [])
        parent_pid = parent[0].messages[0]["pid"]
        builders = [c for c in conns if self.builds(c)]
        self.assertEqual(len(builders), 1)
        self.assertEqual(builders[0].messages[0]["ppid"], parent_pid)
        begin, events, end = self.builds(builders[0])[0]
        self.assertEqual((begin["id"], end["result"]), (1, "ok"))
        child = [line for line in lines if "child" in line][0]
        self.assertEqual(child["pid"], builders[0].messages[0]["pid"])
        self.assertEqual(end["bytes"], child["child"][0]["size"])

    def test_fork(self):
        sup, result, lines = self.run_script("--fork")
        for conn in self.forked(sup, lines[-1]["pid"]):
            for begin, events, end in self.builds(conn):
                self.assertEqual(end["result"], "ok")

    def test_engines_identical_with_and_without_the_hook(self):
        for extra in ([], ["--user-monitor"], ["--model", model("cnn.onnx")]):
            with self.subTest(args=extra):
                plain = os.path.join(self.folder, "plain.engine")
                hooked = os.path.join(self.folder, "hooked.engine")
                unhooked = support.hook_env(None, hook_dir=None)
                support.run(["rtx_build.py", "--engine", plain] + extra, unhooked)
                sup, result, lines = self.run_script("--engine", hooked, *extra)
                self.assertEqual(len(self.builds(self.only_connection(sup))), 1)
                self.assertEqual(self.engine(plain), self.engine(hooked))

    def test_polygraphy_convert(self):
        polygraphy = os.path.join(os.path.dirname(sys.executable), "polygraphy")
        rtx = {"POLYGRAPHY_USE_TENSORRT_RTX": "1"}
        sup = self.supervisor()
        engines = {}
        for name, env in (("plain", support.hook_env(None, hook_dir=None, extra=rtx)), ("hooked", support.hook_env(sup, extra=rtx))):
            out = os.path.join(self.folder, name + ".engine")
            self.assertRan(support.run([polygraphy, "convert", model("dynamic.onnx"), "-o", out], env))
            engines[name] = self.engine(out)
        self.assertEqual(engines["plain"], engines["hooked"])
        begin, events, end = self.builds(self.only_connection(sup))[0]
        self.assertEqual(
            {k: begin[k] for k in ("entry", "bindings", "library", "user_monitor")},
            {"entry": "build_serialized_network", "bindings": "tensorrt_rtx_bindings",
             "library": "TensorRT-RTX " + VERSION, "user_monitor": False},
        )
        self.assertEqual(begin["network"]["inputs"], [{"name": "input", "dtype": "FLOAT", "shape": [-1, 64]}])
        self.assertEqual(begin["network"]["outputs"], [{"name": "output", "dtype": "FLOAT", "shape": [-1, 10]}])
        profiles = begin["config"]["profiles"]
        self.assertEqual(len(profiles), 1)
        self.assertEqual(sorted(profiles[0]), ["input"])
        self.assertEqual(sorted(profiles[0]["input"]), ["max", "min", "opt"])
        self.assertEqual((end["result"], end["bytes"]), ("ok", len(engines["hooked"])))

    def test_ctrl_c_during_a_build_is_raised_when_it_returns(self):
        # As without the hook: TensorRT finishes the build, then the
        # program gets KeyboardInterrupt from the call; nothing is printed
        # by the bindings, no build is cancelled.
        args = ["--model", model("slow.onnx"), "--sigint-after", "0.5"]
        without = support.run(["rtx_build.py"] + args, support.hook_env(None, hook_dir=None))
        self.assertRan(without)
        sup, result, lines = self.run_script(*args)
        self.assertEqual(lines[-1]["builds"], [{"interrupted": True}])
        self.assertEqual(json.loads(without.stdout.splitlines()[-1])["builds"], [{"interrupted": True}])
        self.assertNotIn("Exception caught", result.stderr)
        self.assertEqual(result.stderr, without.stderr)
        begin, events, end = self.builds(self.only_connection(sup))[0]
        self.assertEqual(end["result"], "ok")

    def test_torch_tensorrt_proxy_module(self):
        sup, result, lines = self.run_script("--proxy")
        builds = self.builds(self.only_connection(sup))
        self.assertEqual([(b[0]["bindings"], b[2]["result"]) for b in builds], [("tensorrt_rtx_bindings", "ok")])

    def test_bindings_installed_mid_run(self):
        sup, result, lines = self.run_script("--late")
        builds = self.builds(self.only_connection(sup))
        self.assertEqual([b[2]["result"] for b in builds], ["ok"])


class Capture(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.messages = []

    def log(self, severity, msg):
        self.messages.append("%s: %s" % (severity, msg))


class Readout(unittest.TestCase):
    """The config and network readout in this process, on real objects."""

    def test_every_config_property_is_read_or_left_out_for_a_reason(self):
        properties = {name for name in dir(trt.IBuilderConfig) if isinstance(getattr(trt.IBuilderConfig, name), property)}
        read = properties & set(readout.ATTRS) - set(readout.NOT_ATTRS_RTX)
        reasoned = properties & (set(readout.NOT_ATTRS) | set(readout.NOT_ATTRS_RTX))
        self.assertEqual(read | reasoned, properties, "a property of TensorRT-RTX %s the hook does not know" % VERSION)
        self.assertEqual(read & reasoned, set())

    def test_reading_logs_nothing_and_warns_nothing(self):
        patch.patch_module(sys.modules["tensorrt_rtx_bindings.tensorrt_rtx"])
        logger = Capture()
        builder = trt.Builder(logger)
        network = builder.create_network(0)
        x = network.add_input("x", trt.float32, (-1, 8))
        network.mark_output(network.add_identity(x).get_output(0))
        config = builder.create_builder_config()
        profile = builder.create_optimization_profile()
        profile.set_shape("x", (1, 8), (2, 8), (4, 8))
        config.add_optimization_profile(profile)
        unknown = builder.create_optimization_profile()  # given no input: asking it logs an error
        del unknown
        logger.messages.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = readout.config(config)
            net = readout.network(network)
        self.assertEqual(logger.messages, [])
        self.assertEqual([str(w.message) for w in caught], [])
        self.assertEqual(got["profiles"], [{"x": {"min": [1, 8], "opt": [2, 8], "max": [4, 8]}}])
        self.assertEqual(got["compute_capabilities"], [])
        self.assertNotIn("hardware_compatibility_level", got["attrs"])
        self.assertEqual(net["inputs"], [{"name": "x", "dtype": "FLOAT", "shape": [-1, 8]}])
        self.assertEqual(net["layers"], 1)

    def test_profiles_left_out_when_one_was_added_unseen(self):
        patch.patch_module(sys.modules["tensorrt_rtx_bindings.tensorrt_rtx"])
        builder = trt.Builder(Capture())
        config = builder.create_builder_config()
        seen, unseen = builder.create_optimization_profile(), builder.create_optimization_profile()
        for profile in (seen, unseen):
            profile.set_shape("x", (1, 8), (2, 8), (4, 8))
        config.add_optimization_profile(seen)
        trt.IBuilderConfig.add_optimization_profile.__wrapped__(config, unseen)  # past the hook
        self.assertEqual(config.num_optimization_profiles, 2)
        self.assertNotIn("profiles", readout.config(config))


if __name__ == "__main__":
    unittest.main()
