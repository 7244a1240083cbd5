# A stand-in for PyPI tensorrt-cu12-bindings (fakes/fakecore.py says why).
from .tensorrt import *  # noqa: F401,F403

__version__ = "10.16.1.11"
