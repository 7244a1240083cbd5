"""What a build's config and network hold when the build begins, read raw,
with the names of TensorRT's Python API (python/src/infer/pyCore.cpp and
pyGraph.cpp in https://github.com/NVIDIA/TensorRT); the supervisor maps them
onto trt-action's setting keys. Anything that cannot be read is left out,
never an error. Nothing here may change what the program sees: no setter,
no getter that logs through the program's logger or warns.

Optimization profiles cannot be read back from a config, and asking a
profile for an input it was not given logs an error through the program's
logger, so the hook records, as the program calls them, which inputs each
profile was given (IOptimizationProfile.set_shape, set_shape_input) and
which profiles each config was given (IBuilderConfig.add_optimization_profile),
in weak dictionaries that keep no config or profile alive.
"""

import sys
import weakref

# IBuilderConfig properties read into config["attrs"] where the bindings
# have them, enums as {"name": member, "value": number}: every scalar property of TensorRT-RTX
# 1.7.1.116's IBuilderConfig and of TensorRT 10.x and 11.x's.
ATTRS = (
    "avg_timing_iterations",
    "builder_optimization_level",
    "build_route",
    "all_build_routes",
    "default_device_type",
    "DLA_core",
    "engine_capability",
    "hardware_compatibility_level",
    "l2_limit_for_tiling",
    "max_aux_streams",
    "max_num_tactics",
    "num_compute_capabilities",
    "num_optimization_profiles",
    "plugins_to_serialize",
    "profile_stream",
    "profiling_verbosity",
    "runtime_platform",
    "tiling_optimization_level",
)

# The other IBuilderConfig properties, and why they are not in attrs.
NOT_ATTRS = {
    "flags": "a bit set, read into config.flags by name",
    "quantization_flags": "a bit set, read into config.quantization_flags by name",
    "progress_monitor": "an object; begin says whether the program set one (user_monitor)",
    "int8_calibrator": "an object; its getter warns (deprecated in TensorRT 10.1)",
    "algorithm_selector": "an object; its getter warns (deprecated in TensorRT 10.8)",
    "remote_auto_tuning_config": "it may hold an address with credentials",
}

# Properties whose getter has a side effect in one flavour of the bindings.
# TensorRT-RTX's getHardwareCompatibilityLevel logs "unsupported in
# TensorRT-RTX" through the program's logger (seen on 1.7.1.116).
NOT_ATTRS_RTX = {
    "hardware_compatibility_level": "TensorRT-RTX logs a warning through the program's logger when it is read",
}

_SKIP = object()

_profiles_of = weakref.WeakKeyDictionary()  # config -> [profile], in the order added
_inputs_of = weakref.WeakKeyDictionary()  # profile -> {input name: "shape" | "values"}


def profile_added(config, profile, index):
    """Records that config.add_optimization_profile(profile) returned index."""
    if isinstance(index, int) and index >= 0:
        try:
            _profiles_of.setdefault(config, []).append(profile)
        except TypeError:
            pass  # an object no weak reference can point at: its profiles stay unknown


def input_set(profile, name, kind):
    """Records that profile was given input name: kind "shape" (set_shape)
    or "values" (set_shape_input, a shape tensor's values)."""
    if isinstance(name, str):
        try:
            _inputs_of.setdefault(profile, {})[name] = kind
        except TypeError:
            pass


def bindings(builder):
    """The package of the bindings builder's class comes from:
    tensorrt_rtx_bindings, tensorrt_bindings, or tensorrt (the one-package
    wheels before 10.0)."""
    return type(builder).__module__.split(".")[0]


def library(builder):
    """"TensorRT-RTX 1.7.1.116", from the bindings package's __version__;
    None if it has none."""
    package = bindings(builder)
    version = getattr(sys.modules.get(package), "__version__", None)
    if not isinstance(version, str):
        return None
    product = "TensorRT-RTX" if package.startswith("tensorrt_rtx") else "TensorRT"
    return product + " " + version


def config(cfg):
    out = {}
    if cfg is None:
        return out
    module = sys.modules.get(type(cfg).__module__)
    rtx = type(cfg).__module__.startswith("tensorrt_rtx")
    _part(out, "flags", lambda: _bits(cfg.flags, module.BuilderFlag))
    _part(out, "memory_pools", lambda: _pools(cfg, module))
    _part(out, "attrs", lambda: _attrs(cfg, rtx))
    _part(out, "tactic_sources", lambda: _bits(cfg.get_tactic_sources(), module.TacticSource))
    _part(out, "compute_capabilities", lambda: _compute_capabilities(cfg))
    _part(out, "preview_features", lambda: _preview_features(cfg, module))
    _part(out, "quantization_flags", lambda: _bits(cfg.quantization_flags, module.QuantizationFlag))
    _part(out, "profiles", lambda: _profiles(cfg))
    return out


def network(net):
    out = {}
    if net is None:
        return out
    module = sys.modules.get(type(net).__module__)
    _part(out, "inputs", lambda: [_tensor(net.get_input(i)) for i in range(net.num_inputs)])
    _part(out, "outputs", lambda: [_tensor(net.get_output(i)) for i in range(net.num_outputs)])
    _part(out, "layers", lambda: int(net.num_layers))
    _part(out, "flags", lambda: _bits(net.flags, module.NetworkDefinitionCreationFlag))
    return out


def _part(out, key, read):
    try:
        value = read()
    except Exception:
        return
    if value is not _SKIP:
        out[key] = value


def _members(enum):
    return list(enum.__members__.items())


def _bits(value, enum):
    value = int(value)
    return [name for name, member in _members(enum) if (value >> int(member)) & 1]


def _pools(cfg, module):
    pools = {}
    for name, member in _members(module.MemoryPoolType):
        try:
            pools[name] = int(cfg.get_memory_pool_limit(member))
        except Exception:
            pass
    return pools


def _attrs(cfg, rtx):
    attrs = {}
    cls = type(cfg)
    for name in ATTRS:
        if rtx and name in NOT_ATTRS_RTX:
            continue
        if not isinstance(getattr(cls, name, None), property):
            continue
        try:
            value = _plain(getattr(cfg, name))
        except Exception:
            continue
        if value is not _SKIP:
            attrs[name] = value
    return attrs


def _plain(value):
    """A property's value as JSON: enums as {"name", "value"}, numbers, strings,
    lists of strings; _SKIP for anything else."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(type(value), "__members__"):
        # Name and value: a setting like tiling_optimization_level is a
        # level (a number) that the bindings hand over as an enum.
        name = getattr(value, "name", None)
        try:
            number = int(value)
        except Exception:
            return _SKIP
        return {"name": name, "value": number} if isinstance(name, str) else _SKIP
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return _SKIP


def _compute_capabilities(cfg):
    # Only indexes below the count: get_compute_capability logs an error
    # through the program's logger for any other.
    n = cfg.num_compute_capabilities
    return [cfg.get_compute_capability(i).name for i in range(n)]


def _preview_features(cfg, module):
    return [name for name, member in _members(module.PreviewFeature) if cfg.get_preview_feature(member)]


def _profiles(cfg):
    """Each profile the config was given, input -> {min, opt, max}; left
    out unless the hook saw every profile the config has."""
    profiles = _profiles_of.get(cfg, [])
    if len(profiles) != cfg.num_optimization_profiles:
        return _SKIP
    out = []
    for profile in profiles:
        shapes = {}
        for name, kind in _inputs_of.get(profile, {}).items():
            got = profile.get_shape(name) if kind == "shape" else profile.get_shape_input(name)
            if len(got) == 3:
                shapes[name] = {"min": _ints(got[0]), "opt": _ints(got[1]), "max": _ints(got[2])}
        out.append(shapes)
    return out


def _ints(dims):
    return [int(d) for d in dims]


def _tensor(t):
    return {"name": t.name, "dtype": t.dtype.name, "shape": _ints(t.shape)}


def _cut_lists(n):
    def cut(message):
        network = message.get("network", {})
        for key in ("inputs", "outputs"):
            if key in network:
                network[key] = network[key][:n]
        config = message.get("config", {})
        if "profiles" in config:
            config["profiles"] = [dict(list(p.items())[:n]) for p in config["profiles"][:n]]
        attrs = config.get("attrs", {})
        if "plugins_to_serialize" in attrs:
            attrs["plugins_to_serialize"] = attrs["plugins_to_serialize"][:n]

    return cut


def _drop_details(message):
    message["config"] = {}
    message["network"] = {}


# How a begin message too long for one message is shortened, in turn
# (wire.fitted): networks with thousands of inputs, long plugin lists.
CUTS = (_cut_lists(64), _cut_lists(4), _drop_details)
