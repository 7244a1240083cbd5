"""The hook against stand-ins for the bindings that cannot be installed
here (fakes/): the datacenter tensorrt_bindings behind tensorrt, and the
one-package tensorrt of 9.x and before. The protocol messages are asserted
whole."""

import json
import os
import sys

import support

# The events of one fake build (fakes/fakecore.py's TREE), without time
# and thread.
TREE_EVENTS = [
    ["s", "Building engine", None, 3],
    ["s", "Cloning network graph", "Building engine", 2],
    ["p", "Cloning network graph", 0],
    ["p", "Cloning network graph", 1],
    ["f", "Cloning network graph"],
    ["p", "Building engine", 0],
    ["s", "Optimizing graph", "Building engine", 2],
    ["s", "Timing tactics", "Optimizing graph", 3],
    ["p", "Timing tactics", 0],
    ["p", "Timing tactics", 1],
    ["p", "Timing tactics", 2],
    ["f", "Timing tactics"],
    ["p", "Optimizing graph", 0],
    ["p", "Optimizing graph", 1],
    ["f", "Optimizing graph"],
    ["p", "Building engine", 1],
    ["p", "Building engine", 2],
    ["f", "Building engine"],
]

CONFIG = {
    "flags": ["FP16", "TF32"],
    "memory_pools": {
        "WORKSPACE": 1 << 28,
        "DLA_MANAGED_SRAM": 0,
        "DLA_LOCAL_DRAM": 1 << 30,
        "DLA_GLOBAL_DRAM": 512 << 20,
        "TACTIC_DRAM": 8 << 30,
        "TACTIC_SHARED_MEMORY": 48 << 10,
    },
    "attrs": {
        "avg_timing_iterations": 1,
        "builder_optimization_level": 2,
        "default_device_type": {"name": "GPU", "value": 0},
        "DLA_core": -1,
        "engine_capability": {"name": "STANDARD", "value": 0},
        "hardware_compatibility_level": {"name": "AMPERE_PLUS", "value": 1},
        "l2_limit_for_tiling": -1,
        "max_aux_streams": -1,
        "max_num_tactics": -1,
        "num_optimization_profiles": 1,
        "plugins_to_serialize": [],
        "profile_stream": 0,
        "profiling_verbosity": {"name": "LAYER_NAMES_ONLY", "value": 0},
        "runtime_platform": {"name": "SAME_AS_BUILD", "value": 0},
        "tiling_optimization_level": {"name": "NONE", "value": 0},
    },
    "tactic_sources": ["CUBLAS", "CUBLAS_LT", "JIT_CONVOLUTIONS"],
    "preview_features": ["PROFILE_SHARING_0806"],
    "quantization_flags": [],
    "profiles": [{"images": {"min": [1, 3, 224, 224], "opt": [4, 3, 224, 224], "max": [8, 3, 224, 224]}}],
}

NETWORK = {
    "inputs": [{"name": "images", "dtype": "FLOAT", "shape": [-1, 3, 224, 224]}],
    "outputs": [{"name": "images_out", "dtype": "FLOAT", "shape": [-1, 3, 224, 224]}],
    "layers": 1,
    "flags": [],
}

PLAN = "fake-plan:tensorrt_bindings.tensorrt:1"


def without_time(events):
    return [[e[2]] + e[3:] for e in events]


class FakeBindings(support.TestCase):
    def run_fake(self, *args, sup=None, env=None):
        if sup is None:
            sup = self.supervisor()
        result = support.run(["fake_build.py"] + list(args), env or support.hook_env(sup))
        self.assertRan(result)
        lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        return sup, result, lines

    def one_connection(self, sup):
        conns = sup.settled()
        self.assertEqual(len(conns), 1, [c.messages for c in conns])
        self.assertProtocol(conns[0])
        return conns[0]

    def expected_begin(self, build_id, entry, user_monitor=False, bindings="tensorrt_bindings",
                       library="TensorRT 10.16.1.11", config=CONFIG, network=NETWORK):
        return {
            "m": "begin", "id": build_id, "entry": entry, "route": "python",
            "route_note": "TRT_ACTION_ROUTE=python asks for the Python route", "bindings": bindings,
            "library": library, "user_monitor": user_monitor, "config": config, "network": network,
        }

    def assertBuild(self, build, begin, end, events=TREE_EVENTS):
        got_begin, got_events, got_end = build
        self.assertIsInstance(got_begin.pop("t"), int)
        self.assertEqual(got_begin, begin)
        self.assertIsInstance(got_end.pop("t"), int)
        self.assertEqual(got_end, end)
        self.assertEqual(without_time(got_events), events)
        self.assertEqual({e[1] for e in got_events}, {1} if events else set())

    def test_every_entry_point_of_the_datacenter_bindings(self):
        entries = ["build_serialized_network", "build_engine_with_config", "build_serialized_network_to_stream"]
        args = []
        for e in entries:
            args += ["--entry", e]
        sup, result, lines = self.run_fake(*args)
        conn = self.one_connection(sup)
        hello = conn.messages[0]
        self.assertEqual(hello["pid"], lines[-1]["pid"])
        self.assertEqual(hello["ppid"], os.getpid())
        self.assertEqual(hello["python"], "%d.%d.%d" % sys.version_info[:3])
        self.assertEqual(hello["executable"], sys.executable)
        self.assertEqual(hello["argv"][-len(args):], args)
        builds = self.builds(conn)
        self.assertEqual(len(builds), 3)
        ok = {"m": "end", "result": "ok", "stopped": False, "user_cancelled": False}
        self.assertBuild(builds[0], self.expected_begin(1, entries[0]), dict(ok, id=1, bytes=len(PLAN)))
        self.assertBuild(builds[1], self.expected_begin(2, entries[1]), dict(ok, id=2))  # an engine: no size
        self.assertBuild(builds[2], self.expected_begin(3, entries[2]), dict(ok, id=3, bytes=len(PLAN)))  # what the writer took
        self.assertEqual(lines[-1]["builds"][2]["size"], len(PLAN))
        self.assertEqual([b["result"] for b in lines[-1]["builds"]], ["IHostMemory", "ICudaEngine", "bool"])
        self.assertEqual(lines[-1]["step_results"], ["bool"])
        self.assertEqual(lines[-1]["logged"], [], "the hook made the bindings log")
        self.assertEqual(result.stderr, "")

    def test_a_call_the_bindings_refuse_is_no_build(self):
        # A missing config, None, an object of another class, an argument
        # too many, a keyword the entry point does not have: pybind11
        # raises TypeError before TensorRT is entered. No begin, and
        # nothing on the program's stderr; the calls that bind are builds.
        entries = ["build_serialized_network", "build_serialized_network_to_stream"]
        for entry in entries:
            with self.subTest(entry=entry):
                sup, result, lines = self.run_fake("--entry", entry, "--refused", "--keywords")
                builds = self.builds(self.one_connection(sup))
                self.assertEqual(lines[-1]["builds"][0], {"refused": 6})
                self.assertEqual([(b[0]["entry"], b[2]["result"]) for b in builds], [(entry, "ok")])
                self.assertEqual(result.stderr, "")

    def test_one_package_tensorrt_before_10(self):
        # No IProgressMonitor there: the builds are seen, without phases.
        sup, result, lines = self.run_fake(
            "--fakes", "legacy", "--module", "tensorrt", "--entry", "build_engine", "--entry", "build_serialized_network"
        )
        conn = self.one_connection(sup)
        builds = self.builds(conn)
        config = dict(CONFIG)
        begin = dict(bindings="tensorrt", library="TensorRT 8.6.1.6", config=config)
        ok = {"m": "end", "result": "ok", "stopped": False, "user_cancelled": False}
        self.assertBuild(builds[0], self.expected_begin(1, "build_engine", **begin), dict(ok, id=1), events=[])
        self.assertBuild(
            builds[1], self.expected_begin(2, "build_serialized_network", **begin),
            dict(ok, id=2, bytes=len("fake-plan:tensorrt.tensorrt:1")), events=[],
        )
        self.assertEqual(result.stderr, "")

    def test_patched_once(self):
        # tensorrt and tensorrt_bindings both imported, install run twice:
        # one wrapper, one begin per build.
        sup = self.supervisor()
        script = (
            "import sys; sys.path[:0] = [%r, %r]\n"
            "import tensorrt, tensorrt_bindings, tensorrt_bindings.tensorrt as ext\n"
            "import trt_action_hook, trt_action_hook.patch as patch\n"
            "trt_action_hook.install()\n"
            "patch.install(); patch.patch_module(tensorrt); patch.patch_module(ext)\n"
            "f = ext.Builder.__dict__['build_serialized_network']\n"
            "assert getattr(f, patch.MARK) and not hasattr(f.__wrapped__, patch.MARK), 'wrapped twice'\n"
            "assert sum(isinstance(x, patch.Finder) for x in sys.meta_path) == 1, 'two finders'\n"
            "b = tensorrt.Builder(None); n = b.create_network(); c = b.create_builder_config()\n"
            "assert b.build_serialized_network(n, c) is not None\n"
        ) % (support.FAKES, os.path.join(support.FAKES, "datacenter"))
        result = support.run([sys.executable, "-c", script], support.hook_env(sup))
        self.assertRan(result)
        conns = sup.settled()
        self.assertEqual([m["m"] for c in conns for m in c.messages if m["m"] != "ev"], ["hello", "begin", "end"])

    def test_bindings_imported_before_the_hook_was_installed(self):
        # The bootstrap does nothing (no TRT_ACTION_SUPERVISOR at start);
        # the script imports the bindings, then installs the hook.
        sup = self.supervisor()
        env = support.hook_env(None, extra={"LATER_SUPERVISOR": sup.path})
        _, result, lines = self.run_fake("--install-after-import", sup=sup, env=env)
        conn = self.one_connection(sup)
        builds = self.builds(conn)
        self.assertEqual(len(builds), 1)
        self.assertEqual(builds[0][2]["result"], "ok")
        self.assertEqual(without_time(builds[0][1]), TREE_EVENTS)

    def test_torch_tensorrt_proxy_module(self):
        # torch-TensorRT replaces sys.modules["tensorrt"] with a proxy
        # (py/torch_tensorrt/trt_alias.py in pytorch/TensorRT).
        sup, result, lines = self.run_fake("--proxy")
        builds = self.builds(self.one_connection(sup))
        self.assertEqual(len(builds), 1)
        self.assertBuild(
            builds[0], self.expected_begin(1, "build_serialized_network"),
            {"m": "end", "id": 1, "result": "ok", "bytes": len(PLAN), "stopped": False, "user_cancelled": False},
        )

    def test_bindings_installed_mid_run(self):
        # Ultralytics pip-installs TensorRT when the import fails, then
        # imports it.
        sup, result, lines = self.run_fake("--late")
        builds = self.builds(self.one_connection(sup))
        self.assertEqual(len(builds), 1)
        self.assertEqual(without_time(builds[0][1]), TREE_EVENTS)

    def test_the_programs_monitor_sees_every_callback(self):
        sup, result, lines = self.run_fake("--user-monitor", "record")
        builds = self.builds(self.one_connection(sup))
        self.assertBuild(
            builds[0], self.expected_begin(1, "build_serialized_network", user_monitor=True),
            {"m": "end", "id": 1, "result": "ok", "bytes": len(PLAN), "stopped": False, "user_cancelled": False},
        )
        seen = lines[-1]["builds"][0]
        self.assertEqual(seen["user_calls"], TREE_EVENTS)
        self.assertTrue(seen["monitor_after_is_user"], "the config's getter does not return the program's monitor")

    def test_a_monitor_the_program_sets_during_the_build_stays(self):
        # The Python route (datacenter TensorRT 10.0 to 10.15): another
        # thread sets a monitor while the build runs; afterwards the
        # config's getter returns it, not None (the program had none when
        # the build began) nor the one it had.
        for user in ("none", "plain"):
            with self.subTest(user_monitor=user):
                sup, result, lines = self.run_fake("--swap-monitor", "--user-monitor", user)
                begin, events, end = self.builds(self.one_connection(sup))[0]
                self.assertEqual((begin["route"], end["result"]), ("python", "ok"))
                self.assertTrue(lines[-1]["builds"][0]["monitor_after_is_second"])
                self.assertEqual(result.stderr, "")

    def test_the_programs_monitor_cancels(self):
        # Each way a Python monitor cancels: False, None, an exception, a
        # result pybind11 cannot read as a bool; 1 reads as true.
        cases = {
            "false-at:3": "",
            "none-at:3": "",
            "raise-at:3": "[ERROR] Exception caught in step_complete(): ValueError: no more\n",
        }
        for how, stderr in cases.items():
            with self.subTest(how=how):
                self.setUp()
                sup, result, lines = self.run_fake("--user-monitor", how)
                builds = self.builds(self.one_connection(sup))
                begin, events, end = builds[0]
                self.assertEqual(
                    {k: end[k] for k in ("result", "stopped", "user_cancelled")},
                    {"result": "none", "stopped": False, "user_cancelled": True},
                )
                self.assertEqual(lines[-1]["builds"][0]["result"], "NoneType")
                # Cancelled at the program's fourth step_complete (Timing
                # tactics, 0); the program's monitor saw what the hook saw.
                cancelled = TREE_EVENTS[:9] + [["f", "Timing tactics"], ["f", "Optimizing graph"], ["f", "Building engine"]]
                self.assertEqual(without_time(events), cancelled)
                self.assertEqual(lines[-1]["builds"][0]["user_calls"], cancelled)
                self.assertEqual(result.stderr, stderr)
                self.assertEqual(lines[-1]["step_results"], ["bool"])
        with self.subTest(how="str"):
            self.setUp()
            sup, result, lines = self.run_fake("--user-monitor", "str")
            end = self.builds(self.one_connection(sup))[0][2]
            self.assertEqual((end["result"], end["user_cancelled"]), ("none", True))
            self.assertIn("Unable to cast Python instance of type <class 'str'> to C++ type 'bool'", result.stderr)
        with self.subTest(how="one"):
            self.setUp()
            sup, result, lines = self.run_fake("--user-monitor", "one")
            end = self.builds(self.one_connection(sup))[0][2]
            self.assertEqual((end["result"], end["user_cancelled"]), ("ok", False))

    def test_the_programs_monitor_raises_in_phase_start(self):
        sup, result, lines = self.run_fake("--user-monitor", "raise-phase")
        end = self.builds(self.one_connection(sup))[0][2]
        self.assertEqual(end["result"], "ok")
        self.assertEqual(
            result.stderr, "[ERROR] Exception caught in phase_start(): ValueError: phase boom\n" * 4
        )

    def test_stop_in_the_middle_of_a_build(self):
        def on_message(sup, conn, message):
            if message["m"] == "begin" and message["id"] == 1:
                sup.stop("build budget exceeded after 2m (limit 2m)")

        sup = self.supervisor(on_message)
        # The second build begins after the stop: it stops at its first step.
        _, result, lines = self.run_fake("--stop-wait", "--entry", "build_serialized_network",
                                         "--entry", "build_engine_with_config", sup=sup)
        builds = self.builds(self.one_connection(sup))
        self.assertEqual(len(builds), 2)
        stopped = {"result": "none", "stopped": True, "user_cancelled": False}
        for begin, events, end in builds:
            self.assertEqual({k: end[k] for k in stopped}, stopped)
        # The first build: stopped at its step 1 of "Building engine".
        self.assertEqual(without_time(builds[0][1]), TREE_EVENTS[:15] + [["p", "Building engine", 1], ["f", "Building engine"]])
        # The second: at its first step_complete.
        self.assertEqual(
            without_time(builds[1][1]),
            TREE_EVENTS[:3] + [["f", "Cloning network graph"], ["f", "Building engine"]],
        )
        self.assertEqual([b["result"] for b in lines[-1]["builds"]], ["NoneType", "NoneType"])
        self.assertEqual(lines[-1]["step_results"], ["bool"])

    def test_stop_before_any_build(self):
        def on_message(sup, conn, message):
            if message["m"] == "hello":
                sup.stop("cancelled")

        sup = self.supervisor(on_message)
        self.run_after_stop(["fake_build.py", "--wait-stdin"], sup)
        builds = self.builds(self.one_connection(sup))
        end = builds[0][2]
        self.assertEqual((end["result"], end["stopped"]), ("none", True))
        self.assertEqual(
            without_time(builds[0][1]),
            TREE_EVENTS[:3] + [["f", "Cloning network graph"], ["f", "Building engine"]],
        )

    def test_the_supervisor_goes_away_mid_build(self):
        def on_message(sup, conn, message):
            if message["m"] == "begin":
                sup.close()

        sup = self.supervisor(on_message)
        _, result, lines = self.run_fake(
            "--wait-gone", "--entry", "build_serialized_network", "--entry", "build_serialized_network", sup=sup
        )
        # Both builds ran to the end, unobserved once the supervisor left,
        # and nothing was said about it.
        self.assertEqual([b["result"] for b in lines[-1]["builds"]], ["IHostMemory", "IHostMemory"])
        self.assertEqual(result.stderr, "")

    def test_no_supervisor_listening(self):
        path = os.path.join(self.folder, "nobody")
        result = support.run(["fake_build.py"], support.hook_env(path))
        self.assertRan(result)
        self.assertEqual(json.loads(result.stdout.splitlines()[-1])["builds"][0]["result"], "IHostMemory")
        self.assertEqual(
            result.stderr,
            "trt-action hook: cannot reach trt-action's supervisor at %s; TensorRT builds are not observed: "
            "FileNotFoundError: [Errno 2] No such file or directory\n" % path,
        )

    def test_fork(self):
        # The parent builds, forks a child that builds on its own connection
        # (its own hello, ids from 1), then builds again on its own.
        sup, result, lines = self.run_fake("--fork")
        for conn in self.forked(sup, lines[-1]["pid"]):
            for begin, events, end in self.builds(conn):
                self.assertEqual(end["result"], "ok")
                self.assertEqual(without_time(events), TREE_EVENTS)
        stats = lines[-1]["builds"][-1]
        self.assertEqual(stats["threads_at_fork"], 1, "the hook left a thread running between builds")
        self.assertEqual(stats["child_status"], 0)
        self.assertEqual(result.stderr, "")

    def test_threads_numbered_in_order_of_first_callback(self):
        sup, result, lines = self.run_fake("--second-thread", "--entry", "build_serialized_network",
                                           "--entry", "build_serialized_network")
        builds = self.builds(self.one_connection(sup))
        seen = [1]
        for begin, events, end in builds:
            self.assertEqual(without_time(events), TREE_EVENTS)
            # The root phase calls back on the calling thread (1); each
            # child phase on a thread of its own (Timing tactics on its
            # parent's). A thread new to the process gets the next number
            # (the system may give a finished thread's identity to a new one).
            thread_of = {}
            for e in events:
                thread_of.setdefault(e[3], e[1])
                if e[1] not in seen:
                    self.assertEqual(e[1], len(seen) + 1)
                    seen.append(e[1])
            self.assertEqual(thread_of["Building engine"], 1)
            self.assertEqual(thread_of["Timing tactics"], thread_of["Optimizing graph"])
            self.assertEqual(len({1, thread_of["Cloning network graph"], thread_of["Optimizing graph"]}), 3)
        self.assertGreaterEqual(len(seen), 3)

    def test_events_split_under_the_message_limit(self):
        n = 3000  # steps with 900-character phase names: several messages
        sup, result, lines = self.run_fake("--big", str(n))
        conn = self.one_connection(sup)
        batches = [m for m in conn.messages if m["m"] == "ev"]
        self.assertGreater(len(batches), 1)
        events = [e for b in batches for e in b["e"]]
        name = "Timing tactics for a layer with a long name " + "x" * 900
        expected = [["s", "Building engine", None, 1], ["s", name, "Building engine", n]]
        expected += [["p", name, i] for i in range(n)] + [["f", name], ["p", "Building engine", 0], ["f", "Building engine"]]
        self.assertEqual(without_time(events), expected)

    def test_a_begin_too_long_for_one_message_is_cut(self):
        sup, result, lines = self.run_fake("--inputs", "1000")
        conn = self.one_connection(sup)
        begin, events, end = self.builds(conn)[0]
        self.assertTrue(begin["cut"])
        self.assertEqual(len(begin["network"]["inputs"]), 64)
        self.assertEqual(begin["network"]["inputs"][0]["name"], "images")
        self.assertEqual(begin["network"]["inputs"][1]["name"], "input_0000_" + "x" * 200)
        self.assertEqual(begin["config"]["flags"], CONFIG["flags"])
        self.assertEqual(end["result"], "ok")

    def test_readout_has_no_side_effect(self):
        # Deprecated getters (int8_calibrator, algorithm_selector) warn and
        # log; a profile asked for an input it lacks logs an error; the
        # remote tuning address may hold a password: none of it happens.
        sup, result, lines = self.run_fake("--warnings-are-errors")
        self.assertEqual(lines[-1]["logged"], [])
        conn = self.one_connection(sup)
        raw = json.dumps(conn.messages)
        self.assertNotIn("SECRET", raw)
        self.assertEqual(result.stderr, "")
