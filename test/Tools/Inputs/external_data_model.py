"""Writes a model whose initializer 'w' (2^28 floats) is external data in
w.bin beside it (compile-out-of-memory.test)."""
import sys

import onnx
from onnx import TensorProto, helper

w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 28])
w.data_location = TensorProto.EXTERNAL
for key, value in [("location", "w.bin"), ("length", str(4 << 28))]:
    entry = w.external_data.add()
    entry.key, entry.value = key, value
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 28])],
    initializer=[w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
