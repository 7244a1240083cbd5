"""Stand-ins for TensorRT's Python bindings that cannot be installed here:
the datacenter tensorrt_bindings (10.x and later) and the one-package
tensorrt of 9.x and before. Pure Python, with the class, method, property
and enum names of the real bindings (python/src/infer/pyCore.cpp in
https://github.com/NVIDIA/TensorRT), enough for the hook's patching,
monitor and readout to meet what they meet in the real ones.

A build runs a fixed phase tree through the config's progress monitor as
the real bindings' trampoline does (pybind11's reading of step_complete's
result; an exception is printed and cancels). What the fake logs through
"TensorRT's logger" goes to LOGGED, and every value step_complete returned
to STEP_RESULTS, for the tests to look at.
"""

import enum
import sys
import threading
import warnings

LOGGED = []
STEP_RESULTS = []

# The phase tree of a fake build: (name, steps, children).
TREE = ("Building engine", 3, [("Cloning network graph", 2, []), ("Optimizing graph", 2, [("Timing tactics", 3, [])])])


def define(namespace, entries, monitor=True, version="10.16.1.11"):
    """Defines a fresh set of classes in namespace (a module's globals), so
    each fake module has its own classes, as pybind11's module_local
    classes are each extension's own."""
    module_name = namespace["__name__"]

    class BuilderFlag(enum.IntEnum):
        FP16 = 0
        INT8 = 1
        DEBUG = 2
        GPU_FALLBACK = 3
        REFIT = 4
        DISABLE_TIMING_CACHE = 5
        TF32 = 6
        SPARSE_WEIGHTS = 7
        OBEY_PRECISION_CONSTRAINTS = 9
        PREFER_PRECISION_CONSTRAINTS = 10
        VERSION_COMPATIBLE = 13
        EXCLUDE_LEAN_RUNTIME = 14
        FP8 = 15
        BF16 = 17
        STRIP_PLAN = 19

    class MemoryPoolType(enum.IntEnum):
        WORKSPACE = 0
        DLA_MANAGED_SRAM = 1
        DLA_LOCAL_DRAM = 2
        DLA_GLOBAL_DRAM = 3
        TACTIC_DRAM = 4
        TACTIC_SHARED_MEMORY = 5

    class TacticSource(enum.IntEnum):
        CUBLAS = 0
        CUBLAS_LT = 1
        CUDNN = 2
        EDGE_MASK_CONVOLUTIONS = 3
        JIT_CONVOLUTIONS = 4

    class PreviewFeature(enum.IntEnum):
        PROFILE_SHARING_0806 = 0
        ALIASED_PLUGIN_IO_10_03 = 1
        RUNTIME_ACTIVATION_RESIZE_10_10 = 2

    class QuantizationFlag(enum.IntEnum):
        CALIBRATE_BEFORE_FUSION = 0

    class HardwareCompatibilityLevel(enum.IntEnum):
        NONE = 0
        AMPERE_PLUS = 1
        SAME_COMPUTE_CAPABILITY = 2

    class ProfilingVerbosity(enum.IntEnum):
        LAYER_NAMES_ONLY = 0
        NONE = 1
        DETAILED = 2

    class DeviceType(enum.IntEnum):
        GPU = 0
        DLA = 1

    class EngineCapability(enum.IntEnum):
        STANDARD = 0
        SAFETY = 1
        DLA_STANDALONE = 2

    class RuntimePlatform(enum.IntEnum):
        SAME_AS_BUILD = 0
        WINDOWS_AMD64 = 1

    class TilingOptimizationLevel(enum.IntEnum):
        NONE = 0
        FAST = 1
        MODERATE = 2
        FULL = 3

    class DataType(enum.IntEnum):
        FLOAT = 0
        HALF = 1
        INT8 = 2
        INT32 = 3
        BOOL = 4
        INT64 = 8

    class NetworkDefinitionCreationFlag(enum.IntEnum):
        EXPLICIT_BATCH = 0
        STRONGLY_TYPED = 1

    class IHostMemory:
        def __init__(self, data):
            self._data = bytes(data)

        @property
        def nbytes(self):
            return len(self._data)

        def __bytes__(self):
            return self._data

    class ICudaEngine:
        def __init__(self, data):
            self._data = bytes(data)

        def serialize(self):
            return IHostMemory(self._data)

    class ITensor:
        def __init__(self, name, dtype, shape):
            self.name, self.dtype, self.shape = name, dtype, tuple(shape)
            self.is_shape_tensor = False

    class INetworkDefinition:
        def __init__(self, flags):
            self.flags = flags
            self._inputs, self._outputs = [], []
            self.num_layers = 0
            # Test knobs: called before each step_complete with (phase, step);
            # callbacks of phases below the root come from a second thread.
            self.on_step = None
            self.second_thread = False
            self.raise_in_build = None
            self.tree = TREE

        def add_input(self, name, dtype, shape):
            t = ITensor(name, dtype, shape)
            self._inputs.append(t)
            return t

        def add_identity(self, tensor):
            self.num_layers += 1
            return ITensor(tensor.name + "_out", tensor.dtype, tensor.shape)

        def mark_output(self, tensor):
            self._outputs.append(tensor)

        @property
        def num_inputs(self):
            return len(self._inputs)

        @property
        def num_outputs(self):
            return len(self._outputs)

        def get_input(self, i):
            return self._inputs[i]

        def get_output(self, i):
            return self._outputs[i]

    class IOptimizationProfile:
        def __init__(self):
            self._shapes, self._values = {}, {}

        def set_shape(self, input, min, opt, max):
            if not len(min) == len(opt) == len(max):
                raise ValueError("min, opt and max differ in rank")
            self._shapes[input] = (tuple(min), tuple(opt), tuple(max))

        def get_shape(self, input):
            if input not in self._shapes:
                LOGGED.append("IOptimizationProfile::getDimensions: input %s is not present" % input)
                return []
            return list(self._shapes[input])

        def set_shape_input(self, input, min, opt, max):
            self._values[input] = (list(min), list(opt), list(max))

        def get_shape_input(self, input):
            if input not in self._values:
                LOGGED.append("IOptimizationProfile::getShapeValues: input %s is not present" % input)
                return []
            return [list(v) for v in self._values[input]]

    def _deprecated(what):
        def get(self):
            LOGGED.append(what + " is deprecated")
            warnings.warn(what + " is deprecated", DeprecationWarning, stacklevel=2)
            return None

        return property(get)

    def _plain(name, default):
        def get(self):
            return self._attrs.get(name, default)

        def set(self, value):
            self._attrs[name] = value

        return property(get, set)

    class IBuilderConfig:
        def __init__(self):
            self._attrs = {}
            self._flags = 1 << BuilderFlag.TF32
            self._pools = {
                MemoryPoolType.WORKSPACE: 8 << 30,
                MemoryPoolType.DLA_MANAGED_SRAM: 0,
                MemoryPoolType.DLA_LOCAL_DRAM: 1 << 30,
                MemoryPoolType.DLA_GLOBAL_DRAM: 512 << 20,
                MemoryPoolType.TACTIC_DRAM: 8 << 30,
                MemoryPoolType.TACTIC_SHARED_MEMORY: 48 << 10,
            }
            self._tactics = (1 << TacticSource.CUBLAS) | (1 << TacticSource.CUBLAS_LT) | (1 << TacticSource.JIT_CONVOLUTIONS)
            self._preview = {PreviewFeature.PROFILE_SHARING_0806}
            self._quantization = 0
            self._monitor = None
            self._kept = []  # pybind11 keep_alive<1, 2>: every monitor ever set
            self._profiles = []

        avg_timing_iterations = _plain("avg_timing_iterations", 1)
        builder_optimization_level = _plain("builder_optimization_level", 3)
        default_device_type = _plain("default_device_type", DeviceType.GPU)
        DLA_core = _plain("DLA_core", -1)
        engine_capability = _plain("engine_capability", EngineCapability.STANDARD)
        hardware_compatibility_level = _plain("hardware_compatibility_level", HardwareCompatibilityLevel.NONE)
        l2_limit_for_tiling = _plain("l2_limit_for_tiling", -1)
        max_aux_streams = _plain("max_aux_streams", -1)
        max_num_tactics = _plain("max_num_tactics", -1)
        plugins_to_serialize = _plain("plugins_to_serialize", [])
        profile_stream = _plain("profile_stream", 0)
        profiling_verbosity = _plain("profiling_verbosity", ProfilingVerbosity.LAYER_NAMES_ONLY)
        runtime_platform = _plain("runtime_platform", RuntimePlatform.SAME_AS_BUILD)
        tiling_optimization_level = _plain("tiling_optimization_level", TilingOptimizationLevel.NONE)
        int8_calibrator = _deprecated("int8_calibrator")
        algorithm_selector = _deprecated("algorithm_selector")
        remote_auto_tuning_config = _plain("remote_auto_tuning_config", "https://user:SECRET@tuner.example/")

        @property
        def flags(self):
            return self._flags

        @flags.setter
        def flags(self, value):
            self._flags = int(value)

        def set_flag(self, flag):
            self._flags |= 1 << int(flag)

        def clear_flag(self, flag):
            self._flags &= ~(1 << int(flag))

        def get_flag(self, flag):
            return bool(self._flags >> int(flag) & 1)

        @property
        def quantization_flags(self):
            return self._quantization

        @quantization_flags.setter
        def quantization_flags(self, value):
            self._quantization = int(value)

        def set_memory_pool_limit(self, pool, pool_size):
            self._pools[pool] = pool_size

        def get_memory_pool_limit(self, pool):
            return self._pools[pool]

        def get_tactic_sources(self):
            return self._tactics

        def set_tactic_sources(self, tactic_sources):
            self._tactics = int(tactic_sources)
            return True

        def get_preview_feature(self, feature):
            return feature in self._preview

        def set_preview_feature(self, feature, enable):
            (self._preview.add if enable else self._preview.discard)(feature)

        def add_optimization_profile(self, profile):
            if not isinstance(profile, IOptimizationProfile):
                return -1
            self._profiles.append(profile)
            return len(self._profiles) - 1

        @property
        def num_optimization_profiles(self):
            return len(self._profiles)

        @property
        def progress_monitor(self):
            return self._monitor

        @progress_monitor.setter
        def progress_monitor(self, monitor):
            self._kept.append(monitor)
            self._monitor = monitor

    class Builder:
        def __init__(self, logger=None):
            self.logger = logger

        def create_network(self, flags=0):
            return INetworkDefinition(flags)

        def create_builder_config(self):
            return IBuilderConfig()

        def create_optimization_profile(self):
            return IOptimizationProfile()

        def _run(self, network, config):
            """Runs the phase tree through the config's monitor; False if
            the monitor cancelled."""
            if not isinstance(network, INetworkDefinition) or not isinstance(config, IBuilderConfig):
                # What pybind11 does with arguments of other classes (or None).
                raise TypeError("incompatible function arguments")
            if network.raise_in_build is not None:
                raise network.raise_in_build
            return _Run(config.progress_monitor, network).go()

        def _plan(self, network):
            return ("fake-plan:%s:%d" % (module_name, network.num_layers)).encode()

    def build_serialized_network(self, network, config):
        return IHostMemory(self._plan(network)) if self._run(network, config) else None

    def build_engine_with_config(self, network, config):
        return ICudaEngine(self._plan(network)) if self._run(network, config) else None

    def build_serialized_network_to_stream(self, network, config, writer):
        if not isinstance(writer, IStreamWriter):
            raise TypeError("incompatible function arguments")
        if not self._run(network, config):
            return False
        plan = self._plan(network)
        for at in range(0, len(plan), 16):  # in pieces, as TensorRT writes
            if writer.write(plan[at : at + 16]) != len(plan[at : at + 16]):
                return False
        return True

    def build_engine(self, network, config):
        return ICudaEngine(self._plan(network)) if self._run(network, config) else None

    available = {
        "build_serialized_network": build_serialized_network,
        "build_engine_with_config": build_engine_with_config,
        "build_serialized_network_to_stream": build_serialized_network_to_stream,
        "build_engine": build_engine,
    }
    for entry in entries:
        setattr(Builder, entry, available[entry])

    class IStreamWriter:
        def __init__(self):
            pass

        def write(self, data):
            raise RuntimeError("Tried to call pure virtual function \"IStreamWriter::write\"")

    classes = [
        IStreamWriter, BuilderFlag, MemoryPoolType, TacticSource, PreviewFeature, QuantizationFlag,
        HardwareCompatibilityLevel, ProfilingVerbosity, DeviceType, EngineCapability,
        RuntimePlatform, TilingOptimizationLevel, DataType, NetworkDefinitionCreationFlag,
        IHostMemory, ICudaEngine, ITensor, INetworkDefinition, IOptimizationProfile,
        IBuilderConfig, Builder,
    ]
    if monitor:

        class IProgressMonitor:
            def __init__(self):
                pass

            def phase_start(self, phase_name, parent_phase, num_steps):
                raise RuntimeError("Tried to call pure virtual function \"IProgressMonitor::phase_start\"")

            def step_complete(self, phase_name, step):
                raise RuntimeError("Tried to call pure virtual function \"IProgressMonitor::step_complete\"")

            def phase_finish(self, phase_name):
                raise RuntimeError("Tried to call pure virtual function \"IProgressMonitor::phase_finish\"")

        classes.append(IProgressMonitor)
    for cls in classes:
        cls.__module__ = module_name
        namespace[cls.__name__] = cls
    namespace["float32"] = DataType.FLOAT
    namespace["int64"] = DataType.INT64


class _Run:
    """One fake build's callbacks, as the real trampoline makes them."""

    def __init__(self, monitor, network):
        self.monitor = monitor
        self.network = network
        self.cancelled = False
        self.workers = []  # (thread, its release): alive until the build ends

    def go(self):
        self._phase(self.network.tree, None, depth=0)
        for thread, release in self.workers:
            release.set()
            thread.join()
        return not self.cancelled

    def _phase(self, node, parent, depth):
        if depth == 1 and self.network.second_thread:
            # Each phase below the root on a thread of its own, each alive
            # to the end of the build (so none shares another's identity).
            finished, release = threading.Event(), threading.Event()

            def work():
                self._phase_here(node, parent, depth)
                finished.set()
                release.wait()

            thread = threading.Thread(target=work)
            thread.start()
            finished.wait()
            self.workers.append((thread, release))
            return
        self._phase_here(node, parent, depth)

    def _phase_here(self, node, parent, depth):
        name, steps, children = node
        self._call("phase_start", name, parent, steps)
        for step in range(steps):
            if self.cancelled:
                break
            if step < len(children):
                self._phase(children[step], name, depth + 1)
            if self.cancelled:
                break
            if self.network.on_step is not None:
                self.network.on_step(name, step)
            if not self._step(name, step):
                self.cancelled = True
        self._call("phase_finish", name)

    def _call(self, method, *args):
        if self.monitor is None:
            return
        try:
            getattr(self.monitor, method)(*args)
        except Exception as exc:
            sys.stderr.write("[ERROR] Exception caught in %s(): %s\n" % (method, exc))

    def _step(self, name, step):
        if self.monitor is None:
            return True
        try:
            result = self.monitor.step_complete(name, step)
        except Exception as exc:
            sys.stderr.write("[ERROR] Exception caught in step_complete(): %s\n" % exc)
            return False
        STEP_RESULTS.append(result)
        if result is True or result is False or result is None:
            return bool(result)
        if hasattr(type(result), "__bool__"):
            return bool(result)
        sys.stderr.write("[ERROR] Exception caught in step_complete(): Unable to cast\n")
        return False
