"""The native route on the real TensorRT-RTX bindings (tensorrt_rtx), with the
built libtam_host.so and libtam_rtx.so, building real engines on the CPU.
Run by go test ./internal/pyhook with the builder-scripts venv of
scripts/setup-tensorrt-rtx (TRT_ACTION_SCRIPT_PYTHON)."""

import os
import re
import shutil
import sys
import tempfile
import threading
import time
import unittest

import nativetest
from nativetest import environment
from trt_action_hook import _native

import tensorrt_rtx as trt  # noqa: E402

LOGGER = trt.Logger(trt.Logger.ERROR)


def model(name):
    path = os.path.join(nativetest.MODELS, name)
    if not os.path.exists(path):
        raise AssertionError("no %s: run scripts/make-test-models and set TRT_ACTION_TEST_MODELS" % path)
    return path


class Build:
    """A network parsed from a model and a config to build it with."""

    def __init__(self, name="cnn.onnx"):
        self.builder = trt.Builder(LOGGER)
        self.network = self.builder.create_network(0)
        self.parser = trt.OnnxParser(self.network, LOGGER)
        if not self.parser.parse_from_file(model(name)):
            raise AssertionError("the parser refused " + name)
        self.config = self.builder.create_builder_config()

    def run(self):
        """The serialized engine's bytes, or None when the build returned None."""
        engine = self.builder.build_serialized_network(self.network, self.config)
        return None if engine is None else bytes(engine)


class Recorder(trt.IProgressMonitor):
    """The program's own monitor: records every callback; returns False
    from the cancel_at-th step on."""

    def __init__(self, cancel_at=None):
        trt.IProgressMonitor.__init__(self)
        self.calls = []
        self.steps = 0
        self.cancel_at = cancel_at

    def phase_start(self, phase_name, parent_phase, num_steps):
        self.calls.append(["s", phase_name, parent_phase, num_steps])

    def step_complete(self, phase_name, step):
        self.calls.append(["p", phase_name, step])
        self.steps += 1
        return self.cancel_at is None or self.steps < self.cancel_at

    def phase_finish(self, phase_name):
        self.calls.append(["f", phase_name])


def without_time(events):
    return [e[2:] for e in events]


_plain = {}


def plain_engine(name="cnn.onnx"):
    """The engine built with no monitor at all, once per model."""
    if name not in _plain:
        _plain[name] = Build(name).run()
    return _plain[name]


class NativeRoute(unittest.TestCase):
    def setUp(self):
        if not nativetest.LIBS or not os.path.isfile(os.path.join(nativetest.LIBS, _native.HOST_LIBRARY)):
            raise AssertionError("no %s in TRT_ACTION_TEST_LIBS=%r: run make" % (_native.HOST_LIBRARY, nativetest.LIBS))
        self.env = environment(TRT_ACTION_NATIVE_DIR=nativetest.LIBS)
        self.env.__enter__()
        self.addCleanup(self.env.__exit__, None, None, None)

    def attach(self, config):
        native, why = _native.attach(config)
        self.assertIsInstance(native, _native.Native)
        # Why the build took the native route, for the report's route_note.
        self.assertEqual(
            why,
            "tensorrt_rtx_bindings %s hands its builder config to %s through pybind11's conduit: "
            "the native route, taken wherever it can be" % (trt.__version__, os.path.join(nativetest.LIBS, "libtam_rtx.so")),
        )
        self.addCleanup(native.close)
        return native

    def assertWellFormed(self, events, before, after):
        self.assertTrue(events, "no events")
        self.assertEqual(events[0][2:], ["s", "Building engine", None, 6])
        self.assertEqual(events[-1][2:], ["f", "Building engine"])
        times = [e[0] for e in events]
        self.assertEqual(times, sorted(times), "TensorRT-RTX calls back on one thread: times rise")
        self.assertGreaterEqual(times[0], before, "events are on time.monotonic_ns()'s clock")
        self.assertLessEqual(times[-1], after, "events are on time.monotonic_ns()'s clock")
        self.assertEqual({e[1] for e in events}, {1})
        running = []
        for e in events:
            if e[2] == "s":
                parent = running[-1] if running else None
                self.assertEqual(e[4], parent, "a phase's parent is the innermost running phase")
                running.append(e[3])
            elif e[2] == "f":
                self.assertEqual(e[3], running.pop())
        self.assertEqual(running, [])

    def test_every_callback_reaches_the_native_monitor_and_the_programs(self):
        b = Build()
        program = Recorder()
        b.config.progress_monitor = program
        before = time.monotonic_ns()
        native = self.attach(b.config)
        engine = b.run()
        after = time.monotonic_ns()
        native.detach()
        events = native.drain()
        self.assertWellFormed(events, before, after)
        self.assertEqual(without_time(events), program.calls, "the program's monitor heard every callback, in order")
        self.assertEqual(native.stats(), (len(events), 0))
        self.assertEqual((native.stopped, native.user_cancelled), (False, False))
        self.assertIs(b.config.progress_monitor, program, "after detach the config returns the program's monitor")
        self.assertEqual(engine, plain_engine(), "the engine is byte for byte the one built without a monitor")
        self.assertEqual(native.drain(), [], "drained once")

    def test_no_python_runs_per_callback(self):
        def calls_during(b):
            seen = []

            def profile(frame, event, arg):
                if event == "call":
                    seen.append(frame.f_code.co_name)

            sys.setprofile(profile)
            try:
                engine = b.run()
            finally:
                sys.setprofile(None)
            return engine, [name for name in seen if name in ("phase_start", "step_complete", "phase_finish")]

        # The probe sees a Python monitor's callbacks...
        b = Build()
        b.config.progress_monitor = Recorder()
        _, python_calls = calls_during(b)
        self.assertGreater(len(python_calls), 10)
        # ...and none with only the native monitor on the config.
        b = Build()
        native = self.attach(b.config)
        engine, native_calls = calls_during(b)
        native.detach()
        self.assertEqual(native_calls, [])
        self.assertEqual(len(native.drain()), len(python_calls), "the native monitor got the callbacks")
        self.assertIsNone(b.config.progress_monitor, "a config that had no monitor has none after detach")
        self.assertEqual(engine, plain_engine())

    def test_the_programs_false_still_cancels(self):
        b = Build()
        program = Recorder(cancel_at=3)
        b.config.progress_monitor = program
        native = self.attach(b.config)
        engine = b.run()
        native.detach()
        self.assertIsNone(engine)
        self.assertEqual((native.stopped, native.user_cancelled), (False, True))
        self.assertEqual(without_time(native.drain()), program.calls)
        self.assertIs(b.config.progress_monitor, program)

    def test_cancel_before_the_build(self):
        b = Build()
        program = Recorder()
        b.config.progress_monitor = program
        native = self.attach(b.config)
        native.cancel()
        engine = b.run()
        native.detach()
        self.assertIsNone(engine)
        self.assertEqual((native.stopped, native.user_cancelled), (True, False))
        self.assertEqual(without_time(native.drain()), program.calls, "the program's monitor hears a stopped build")

    def test_cancel_during_the_build(self):
        # slow.onnx spends seconds in one phase; a drain thread, as the hook
        # runs, cancels once the build has begun.
        b = Build("slow.onnx")
        native = self.attach(b.config)
        drained = []
        done = threading.Event()

        def drain():
            while not done.is_set():
                got = native.drain()
                drained.extend(got)
                if got:
                    native.cancel()
                time.sleep(0.01)

        drainer = threading.Thread(target=drain)
        drainer.start()
        try:
            engine = b.run()
        finally:
            done.set()
            drainer.join()
        native.detach()
        drained.extend(native.drain())
        self.assertIsNone(engine)
        self.assertTrue(native.stopped)
        self.assertEqual(drained[0][2:4], ["s", "Building engine"])

    def test_engines_are_byte_identical_with_and_without_the_native_monitor(self):
        for name in ("cnn.onnx", "mlp.onnx"):
            b = Build(name)
            native = self.attach(b.config)
            engine = b.run()
            native.detach()
            self.assertIsNotNone(engine)
            self.assertEqual(engine, plain_engine(name), name)

    def test_two_builds_of_one_config(self):
        b = Build()
        program = Recorder()
        b.config.progress_monitor = program
        runs = []
        for _ in range(2):
            native = self.attach(b.config)
            runs.append((b.run(), without_time(native.drain())))
            native.detach()
            native.close()
        self.assertEqual(runs[0], runs[1])
        self.assertIs(b.config.progress_monitor, program)

    def test_detach_and_close_twice_are_harmless(self):
        b = Build()
        native = self.attach(b.config)
        b.run()
        native.detach()
        native.detach()
        native.close()
        native.close()
        self.assertEqual(native.drain(), [])
        self.assertEqual(native.stats(), (0, 0))
        native.cancel()

    def test_the_bindings_abi_id_is_found_in_this_interpreter(self):
        # pybind11 3.x keeps its internals in the interpreter's state dict.
        self.assertIn("system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1", _native._abi_ids("libstdcpp", None))


class Refusals(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.folder)
        _native._libraries.clear()  # what an earlier test loaded or refused
        self.addCleanup(_native._libraries.clear)

    def attach(self, folder=None, config=None):
        with environment(TRT_ACTION_NATIVE_DIR=folder or nativetest.LIBS):
            return _native.attach(config if config is not None else Build().config)

    def copy(self, name, as_name):
        shutil.copy(os.path.join(nativetest.LIBS, name), os.path.join(self.folder, as_name))

    def test_a_missing_backend_object(self):
        self.copy("libtam_host.so", "libtam_host.so")
        native, why = self.attach(self.folder)
        self.assertIsNone(native)
        self.assertEqual(
            why,
            "%s/libtam_rtx.so is not there: trt-action's folder of native libraries lacks it "
            "(a release has it in lib/ beside the binary)" % self.folder,
        )

    def test_a_library_without_the_functions(self):
        self.copy("libtam_host.so", "libtam_host.so")
        self.copy("libtam_host.so", "libtam_rtx.so")
        native, why = self.attach(self.folder)
        self.assertIsNone(native)
        self.assertIn("%s/libtam_rtx.so lacks a function this hook calls, so it is from another trt-action" % self.folder, why)
        self.assertIn("tam_backend_conduit_types", why)

    def test_a_file_that_does_not_load(self):
        with open(os.path.join(self.folder, "libtam_host.so"), "w") as f:
            f.write("not a shared object")
        native, why = self.attach(self.folder)
        self.assertIsNone(native)
        self.assertTrue(why.startswith("cannot load %s/libtam_host.so: " % self.folder), why)

    def test_the_conduit_refuses_every_abi_id(self):
        saved = _native._abi_ids
        _native._abi_ids = lambda stdlib, known: ["other_libstdcpp_abi"]
        try:
            native, why = self.attach()
        finally:
            _native._abi_ids = saved
        self.assertIsNone(native)
        self.assertEqual(
            why,
            "the pybind11 conduit of tensorrt_rtx_bindings 1.7.1.116 refused libtam_rtx.so's IBuilderConfig type "
            "(N8nvinfer114IBuilderConfigE) under every pybind11 ABI id of this interpreter (other_libstdcpp_abi)",
        )

    def test_no_abi_id_of_our_cpp_library(self):
        saved = _native._abi_ids
        _native._abi_ids = lambda stdlib, known: []
        try:
            native, why = self.attach()
        finally:
            _native._abi_ids = saved
        self.assertIsNone(native)
        # The backend's own C++ library is named first: libstdc++ for make's
        # backends, libc++ for a release's (scripts/smoke-dist runs this on them).
        self.assertRegex(
            why,
            r"^no pybind11 module of this interpreter was built with (libstdcpp or libcpp|libcpp or libstdcpp) "
            r"\(libtam_rtx\.so's C\+\+ library is (libstdcpp|libcpp)\), so its conduit cannot take our IBuilderConfig type$",
        )
        own = re.search(r"library is (\w+)\)", why).group(1)
        self.assertIn("built with %s or" % own, why)

    def test_a_conduit_that_raises_is_a_reason_not_an_exception(self):
        class IBuilderConfig:
            def _pybind11_conduit_v1_(self, *args):
                raise RuntimeError("boom")

        IBuilderConfig.__module__ = "tensorrt_rtx_bindings.tensorrt_rtx"
        native, why = self.attach(config=IBuilderConfig())
        self.assertIsNone(native)
        self.assertEqual(why, "the native monitor could not be attached: RuntimeError: boom")

    def test_the_conduit_of_another_type_is_refused(self):
        # A network is no builder config: the conduit returns None for our type.
        pointer, why = _native._raw_config(self.loaded_backend(), Build().network)
        self.assertIsNone(pointer)
        self.assertIn("refused libtam_rtx.so's IBuilderConfig type", why)

    def loaded_backend(self):
        backend, why = _native._load(os.path.join(nativetest.LIBS, "libtam_rtx.so"), _native._BACKEND_FUNCTIONS)
        self.assertIsNone(why)
        return backend


if __name__ == "__main__":
    unittest.main()
