"""Builds an ONNX model with TensorRT-RTX's own Python API, one
optimization profile per item of a JSON list, in order, as a program
that knows nothing of trt-action does: the reference the tests hold
trt-action's engines to, byte for byte.

    profiles.py model OUT.onnx
        writes the onnx wheel's SqueezeNet (its backend test data) with a
        dynamic batch dimension, "N", on its input and output
    profiles.py build MODEL OUT.engine PROFILES
        PROFILES is JSON: [{INPUT: {"min": [...], "opt": [...], "max": [...]}}, ...]
"""

import json
import os
import sys

import onnx
import tensorrt_rtx as trt


def dynamic_squeezenet(out):
    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "light_squeezenet.onnx")
    model = onnx.load(data)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    for tensor in inputs + list(model.graph.output):
        tensor.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(model, out)
    print("wrote %s: input %s" % (out, inputs[0].name), flush=True)


def build(model, out, profiles):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(model):
        sys.exit("the parser refused %s: %s" % (model, [str(parser.get_error(i)) for i in range(parser.num_errors)]))
    config = builder.create_builder_config()
    for shapes in profiles:
        profile = builder.create_optimization_profile()
        for name, s in shapes.items():
            profile.set_shape(name, s["min"], s["opt"], s["max"])
        config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        sys.exit("the build failed")
    with open(out, "wb") as f:
        f.write(plan)
    print("wrote %s (%d bytes, %d profiles)" % (out, plan.nbytes, len(profiles)), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["model"] and len(sys.argv) == 3:
        dynamic_squeezenet(sys.argv[2])
    elif sys.argv[1:2] == ["build"] and len(sys.argv) == 5:
        build(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
    else:
        sys.exit(__doc__)
