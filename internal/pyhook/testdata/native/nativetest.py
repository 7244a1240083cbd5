"""What the native route's Python tests share. go test ./internal/pyhook
(native_test.go) runs them and sets:

    TRT_ACTION_TEST_PY        the folder holding trt_action_hook (default ../../py)
    TRT_ACTION_TEST_LIBS      the folder of libtam_host.so and the backend
                              objects (rtx_native.py)
    TRT_ACTION_TEST_MODELS    scripts/make-test-models output (rtx_native.py)
"""

import contextlib
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.abspath(os.environ.get("TRT_ACTION_TEST_PY") or os.path.join(HERE, "..", "..", "py"))
LIBS = os.environ.get("TRT_ACTION_TEST_LIBS", "")
MODELS = os.environ.get("TRT_ACTION_TEST_MODELS", "")

sys.path.insert(0, PY)


@contextlib.contextmanager
def environment(**values):
    """Sets (or with None, unsets) environment variables for a block."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def bindings(module, version=None):
    """A stand-in bindings package named after module's first part, with
    __version__ version, in sys.modules for a block."""
    package = module.partition(".")[0]
    saved = sys.modules.get(package)
    fake = types.ModuleType(package)
    if version is not None:
        fake.__version__ = version
    sys.modules[package] = fake
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop(package, None)
        else:
            sys.modules[package] = saved


def config_class(module, conduit=None, name="IBuilderConfig"):
    """A class that looks like module's IBuilderConfig, with conduit as its
    _pybind11_conduit_v1_ when given."""
    attrs = {"__module__": module}
    if conduit is not None:
        attrs["_pybind11_conduit_v1_"] = conduit
    return type(name, (), attrs)
