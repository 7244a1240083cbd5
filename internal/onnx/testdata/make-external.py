#!/usr/bin/env python3
"""Writes external/model.onnx and its external-data files with the onnx
package (scripts/setup-tensorrt-rtx installs it): a model whose tensors live
in other files at every place the key walker must look (a graph initializer,
a node attribute's tensor, an initializer of a subgraph, a sparse
initializer, a function's node). Run from this folder; the output is
committed, so the tests need no Python."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnx.external_data_helper import set_external_data


def external(tensor, location):
    data = tensor.raw_data
    path = os.path.join("external", location)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    set_external_data(tensor, location=location, length=len(data))
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL


w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), "W")
external(w, "weights.bin")
c = numpy_helper.from_array(np.ones((4,), dtype=np.float32), "c")
external(c, "const.bin")
t = numpy_helper.from_array(np.full((4,), 2, dtype=np.float32), "T")
external(t, "sub/then.bin")
values = numpy_helper.from_array(np.array([5.0], dtype=np.float32), "S")
external(values, "sparse.bin")
sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(np.array([1], dtype=np.int64), "S_idx"), [4])
f_t = numpy_helper.from_array(np.full((4,), 3, dtype=np.float32), "F")
external(f_t, "function.bin")

then_graph = helper.make_graph([helper.make_node("Identity", ["T"], ["then_out"])], "then",
                               [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [4])], [t])
else_graph = helper.make_graph([helper.make_node("Identity", ["c_out"], ["else_out"])], "else",
                               [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [4])])
func = helper.make_function("local", "AddF", ["x"], ["y"],
                            [helper.make_node("Constant", [], ["f"], value=f_t), helper.make_node("Add", ["x", "f"], ["y"])],
                            [helper.make_opsetid("", 17)])
nodes = [
    helper.make_node("Constant", [], ["c_out"], value=c),
    helper.make_node("MatMul", ["X", "W"], ["mm"]),
    helper.make_node("ReduceSum", ["mm"], ["cond_sum"], keepdims=0),
    helper.make_node("Greater", ["cond_sum", "zero"], ["cond"]),
    helper.make_node("If", ["cond"], ["branch"], then_branch=then_graph, else_branch=else_graph),
    helper.make_node("AddF", ["branch"], ["Y"], domain="local"),
]
zero = numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")
graph = helper.make_graph(nodes, "external", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])], [w, zero], sparse_initializer=[sparse])
model = helper.make_model(graph, functions=[func], opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])
onnx.save(model, "external/model.onnx")
