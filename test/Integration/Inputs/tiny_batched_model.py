#!/usr/bin/env python3
"""A tiny batched model for tests of bundles and inputs: y = relu(x @ W),
x f32 [N, 4], W 4x3; and with --non-zero, the indices where x == 0
(NonZero: a data-dependent extent). Writes OUT.onnx."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

parser = argparse.ArgumentParser()
parser.add_argument("--non-zero", action="store_true")
parser.add_argument("out")
args = parser.parse_args()
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
if args.non_zero:
    zero = numpy_helper.from_array(np.zeros((1,), np.float32), "zero")
    nodes = [helper.make_node("Equal", ["x", "zero"], ["hit"]),
             helper.make_node("NonZero", ["hit"], ["y"])]
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])
    inits = [zero]
else:
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]),
             helper.make_node("Relu", ["xw"], ["y"])]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
    inits = [w]
graph = helper.make_graph(nodes, "tiny", [x], [y], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, args.out)
