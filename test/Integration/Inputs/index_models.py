#!/usr/bin/env python3
"""Writes small models that index by run-time values, and their inputs, to
OUT_DIR for index-out-of-range.test: GatherElements and ScatterElements
along axis 1 of a [2, 3] tensor, whose flattened positions would land on
another row if an index of 3 or -4 were not caught; GatherND and ScatterND
with [2, 2] indices (a row and a column each) into the same tensor, where
a column of 3 or -4 would do the same.

  index_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def save(out, name, node, inputs, output_shape):
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             output_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def main():
    out = sys.argv[1]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, [2, 2])
    upd = helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, 2])
    save(out, "gather", helper.make_node("GatherElements", ["x", "idx"], ["y"], axis=1),
         [x, idx], [2, 2])
    save(out, "scatter",
         helper.make_node("ScatterElements", ["x", "idx", "u"], ["y"], axis=1),
         [x, idx, upd], [2, 3])
    save(out, "gather_nd", helper.make_node("GatherND", ["x", "idx"], ["y"]),
         [x, idx], [2])
    save(out, "scatter_nd", helper.make_node("ScatterND", ["x", "idx", "u"], ["y"]),
         [x, idx, helper.make_tensor_value_info("u", TensorProto.FLOAT, [2])],
         [2, 3])
    np.save(os.path.join(out, "u1.npy"), np.full((2,), 9, np.float32))
    np.save(os.path.join(out, "x.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))
    np.save(os.path.join(out, "u.npy"), np.full((2, 2), 9, np.float32))
    np.save(os.path.join(out, "good.npy"), np.array([[2, -1], [0, -3]], np.int64))
    np.save(os.path.join(out, "past.npy"), np.array([[0, 1], [3, 0]], np.int64))
    np.save(os.path.join(out, "before.npy"), np.array([[0, -4], [1, 0]], np.int64))


if __name__ == "__main__":
    main()
