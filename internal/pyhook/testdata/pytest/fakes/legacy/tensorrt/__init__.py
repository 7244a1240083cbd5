# A stand-in for the one-package tensorrt of 9.x and before (wheels and
# JetPack's python3-libnvinfer): the extension is tensorrt.tensorrt, and
# there is no IProgressMonitor.
from .tensorrt import *  # noqa: F401,F403

__version__ = "8.6.1.6"
