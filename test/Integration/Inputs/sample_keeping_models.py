#!/usr/bin/env python3
"""Writes models whose outputs keep each sample apart though their lowering
reshapes the batch axis together with others or runs it through a
recurrence, so that any sample count runs (sample-mixing.test):

- einsum.onnx: attention scores, Einsum "bhid,bhjd->bhij" (one batched
  matmul over the merged b, h axes);
- resize.onnx: a bilinear Resize of [N, 2, 3, 3] images to 6x6 (a matmul
  with the interpolation matrix over the [N*C, in, T] view);
- lstm.onnx: a batch-first LSTM (transposes around an LSTM of layout 0),
  returning every step's h and the last h.

Usage: sample_keeping_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def einsum():
    return helper.make_graph(
        [helper.make_node("Einsum", ["q", "k"], ["y"], equation="bhid,bhjd->bhij")],
        "einsum",
        [helper.make_tensor_value_info("q", F, ["N", 2, 3, 4]),
         helper.make_tensor_value_info("k", F, ["N", 2, 5, 4])],
        [helper.make_tensor_value_info("y", F, ["N", 2, 3, 5])])


def resize():
    roi = numpy_helper.from_array(np.zeros(0, np.float32), "roi")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    return helper.make_graph(
        [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear")],
        "resize",
        [helper.make_tensor_value_info("x", F, ["N", 2, 3, 3])],
        [helper.make_tensor_value_info("y", F, ["N", 2, 6, 6])],
        initializer=[roi, scales])


def lstm():
    rng = np.random.default_rng(7)
    steps, inputs, hidden = 6, 3, 4
    weights = [
        numpy_helper.from_array(
            rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)
        for name, shape in [("W", (1, 4 * hidden, inputs)),
                            ("R", (1, 4 * hidden, hidden)),
                            ("B", (1, 8 * hidden))]]
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
        helper.make_node("LSTM", ["xt", "W", "R", "B"], ["ys", "h"],
                         hidden_size=hidden),
        helper.make_node("Squeeze", ["ys", "one"], ["ysq"]),
        helper.make_node("Transpose", ["ysq"], ["y"], perm=[1, 0, 2]),
        helper.make_node("Squeeze", ["h", "zero"], ["last"]),
    ]
    axes = [numpy_helper.from_array(np.array([1], np.int64), "one"),
            numpy_helper.from_array(np.array([0], np.int64), "zero")]
    return helper.make_graph(
        nodes, "lstm",
        [helper.make_tensor_value_info("x", F, ["N", steps, inputs])],
        [helper.make_tensor_value_info("y", F, ["N", steps, hidden]),
         helper.make_tensor_value_info("last", F, ["N", hidden])],
        initializer=weights + axes)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in [("einsum", einsum), ("resize", resize), ("lstm", lstm)]:
        save(make(), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
