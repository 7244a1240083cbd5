"""How real programs reach TensorRT, shared by the builder scripts here."""

import sys
import types


def torch_tensorrt_proxy(target):
    """Makes sys.modules["tensorrt"] a proxy module over target and returns
    what `import tensorrt` then gives, as torch-TensorRT does
    (py/torch_tensorrt/trt_alias.py in https://github.com/pytorch/TensorRT)."""

    class Proxy(types.ModuleType):
        def __getattr__(self, name):
            return getattr(target, name)

    sys.modules["tensorrt"] = Proxy("tensorrt")
    import tensorrt

    assert isinstance(tensorrt, Proxy)
    return tensorrt
