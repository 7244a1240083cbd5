# A stand-in for PyPI tensorrt-cu12 (the module scripts import).
from tensorrt_bindings import *  # noqa: F401,F403
from tensorrt_bindings import __version__  # noqa: F401
