"""The reference builder of test/realbuild's parity tests: it builds an
ONNX model with TensorRT-RTX's own Python API, as a user would without
trt-action, and writes the plan. It knows nothing of trt-action.

usage: python api_build.py MODEL.onnx OUT.engine SETTINGS_JSON

SETTINGS_JSON says what to set, in the Python API's own words:
  {"profiles": [{"INPUT": [MIN, OPT, MAX]}, ...],
   "profiling_verbosity": "DETAILED", "clear_flags": ["TF32"],
   "set_flags": ["WEIGHT_STREAMING"], "memory_pools": {"TACTIC_SHARED_MEMORY": 49152},
   "builder_optimization_level": 1}
"""

import json
import sys

import tensorrt_rtx as trt


def main(model, out, settings):
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(model):
        errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
        sys.exit("the ONNX parser refused %s: %s" % (model, "; ".join(errors)))
    config = builder.create_builder_config()
    for shapes in settings.get("profiles", []):
        profile = builder.create_optimization_profile()
        for name, (low, opt, high) in shapes.items():
            profile.set_shape(name, low, opt, high)
        config.add_optimization_profile(profile)
    if "profiling_verbosity" in settings:
        config.profiling_verbosity = getattr(trt.ProfilingVerbosity, settings["profiling_verbosity"])
    for flag in settings.get("clear_flags", []):
        config.clear_flag(getattr(trt.BuilderFlag, flag))
    for flag in settings.get("set_flags", []):
        config.set_flag(getattr(trt.BuilderFlag, flag))
    for pool, size in settings.get("memory_pools", {}).items():
        config.set_memory_pool_limit(getattr(trt.MemoryPoolType, pool), size)
    if "builder_optimization_level" in settings:
        config.builder_optimization_level = settings["builder_optimization_level"]
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        sys.exit("TensorRT-RTX built no engine of %s" % model)
    with open(out, "wb") as f:
        f.write(plan)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
