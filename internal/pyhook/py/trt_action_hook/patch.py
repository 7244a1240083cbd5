"""Finding TensorRT's classes whenever the program imports them, and
wrapping their build entry points.

The hook patches classes, never module objects: torch-TensorRT replaces
sys.modules["tensorrt"] with a proxy over tensorrt or tensorrt_rtx, and
Ultralytics installs TensorRT in the middle of a run and imports it then,
so a module object patched at start-up may not be the one the program
builds with, while the classes are always the same objects. A finder first
on sys.meta_path hands each module that holds TensorRT's classes a loader
that patches them once the module has run; modules imported before the hook
was installed are patched at install.

Where the classes live (https://github.com/NVIDIA/TensorRT,
python/packaging/): the pybind11 extension `tensorrt_rtx_bindings.tensorrt_rtx`
(PyPI tensorrt-rtx-cu12-bindings) behind `tensorrt_rtx`,
`tensorrt_bindings.tensorrt` (tensorrt-cu12-bindings, 10.x and later)
behind `tensorrt`, and `tensorrt.tensorrt` in the one-package wheels and
JetPack's python3-libnvinfer before that. The packages that re-export them
are watched too, so a differently named extension is still caught;
patching is idempotent, each method wrapped once (a marker attribute on the
wrapper).
"""

import sys

from . import notice

WATCHED = frozenset(
    (
        "tensorrt_rtx_bindings",
        "tensorrt_rtx_bindings.tensorrt_rtx",
        "tensorrt_rtx",
        "tensorrt_bindings",
        "tensorrt_bindings.tensorrt",
        "tensorrt",
        "tensorrt.tensorrt",
    )
)

# Builder methods that build an engine (pyCore.cpp): build_serialized_network
# in every version, build_engine_with_config from 10.6,
# build_serialized_network_to_stream from 10.13, build_engine up to 9.x.
ENTRIES = (
    "build_serialized_network",
    "build_engine_with_config",
    "build_serialized_network_to_stream",
    "build_engine",
)

MARK = "_trt_action_hook"

# What builds need: imported by patch_module, once the program imports
# TensorRT, so a process that never does does not load them.
readout = session = None


class Finder:
    """First on sys.meta_path: finds the watched modules with the finders
    after it, and gives them a loader that patches."""

    def __init__(self):
        self._finding = set()

    def find_spec(self, name, path=None, target=None):
        if name not in WATCHED or name in self._finding:
            return None
        self._finding.add(name)
        try:
            spec = _find_elsewhere(self, name, path, target)
        except Exception:
            return None  # the import system asks the other finders, and reports what they say
        finally:
            self._finding.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = PatchingLoader(spec.loader)
        return spec

    def invalidate_caches(self):
        pass


def _find_elsewhere(finder, name, path, target):
    for other in list(sys.meta_path):
        if other is finder or isinstance(other, Finder):
            continue
        find = getattr(other, "find_spec", None)
        if find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            return spec
    return None


class PatchingLoader:
    """The module's own loader, which also patches the module's classes
    once it has run. The module keeps its own loader as __loader__ and
    __spec__.loader."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        loader = self._loader
        try:
            module.__loader__ = loader
            module.__spec__.loader = loader
        except Exception:
            pass
        loader.exec_module(module)
        patch_module(module)


def install():
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, Finder())
    for name in sorted(WATCHED):
        module = sys.modules.get(name)
        if module is not None:
            patch_module(module)


def patch_module(module):
    """Wraps the build entry points of module's Builder, and what records a
    config's optimization profiles. Never raises."""
    try:
        global readout, session
        from . import readout, session

        builder = getattr(module, "Builder", None)
        if isinstance(builder, type):
            for entry in ENTRIES:
                _wrap(builder, entry, _build_entry)
        config = getattr(module, "IBuilderConfig", None)
        if isinstance(config, type):
            _wrap(config, "add_optimization_profile", _profile_adder)
        profile = getattr(module, "IOptimizationProfile", None)
        if isinstance(profile, type):
            _wrap(profile, "set_shape", _shape_setter("shape"))
            _wrap(profile, "set_shape_input", _shape_setter("values"))
    except Exception as exc:
        notice.once("could not patch %s" % getattr(module, "__name__", "a TensorRT module"), exc)


def _wrap(cls, name, make):
    if name not in cls.__dict__:
        return
    original = getattr(cls, name)
    if getattr(original, MARK, False):
        return
    wrapper = make(name, original)
    wrapper.__name__ = name
    wrapper.__qualname__ = cls.__name__ + "." + name
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    setattr(wrapper, MARK, True)
    setattr(cls, name, wrapper)


def _build_entry(entry, original):
    def build(self, *args, **kwargs):
        observed = session.begin(self, entry, args, kwargs)
        if observed is None:
            return original(self, *args, **kwargs)
        try:
            result = original(self, *observed.args, **observed.kwargs)
        except BaseException as exc:
            observed.end(raised=exc)
            raise
        observed.end(returned=result)
        return result

    return build


def _profile_adder(name, original):
    def add_optimization_profile(self, *args, **kwargs):
        index = original(self, *args, **kwargs)
        try:
            profile = args[0] if args else kwargs.get("profile")
            readout.profile_added(self, profile, index)
        except Exception as exc:
            notice.once("could not record an optimization profile", exc)
        return index

    return add_optimization_profile


def _shape_setter(kind):
    def make(name, original):
        def set_shape(self, *args, **kwargs):
            result = original(self, *args, **kwargs)
            try:
                readout.input_set(self, args[0] if args else kwargs.get("input"), kind)
            except Exception as exc:
                notice.once("could not record an optimization profile's shapes", exc)
            return result

        return set_shape

    return make
