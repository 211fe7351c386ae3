#!/usr/bin/env python3
"""Writes models that call model-local functions (as PyTorch's dynamo
exporter writes a Swish or a layer): OUT/swish.onnx calls one function;
OUT/nested.onnx calls, twice, a function that takes an attribute by
reference and calls another function.

Usage: local_functions.py OUT_DIR
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    core = helper.make_opsetid("", 13)
    mine = helper.make_opsetid("my", 1)

    swish = helper.make_function(
        "my", "Swish", ["a"], ["b"],
        [helper.make_node("Sigmoid", ["a"], ["s"]),
         helper.make_node("Mul", ["a", "s"], ["b"])], [core])
    graph = helper.make_graph(
        [helper.make_node("Swish", ["x"], ["y"], domain="my")], "swish", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[core, mine],
                                functions=[swish]),
              os.path.join(out, "swish.onnx"))

    scale = helper.make_function(
        "my", "Scale", ["a"], ["b"],
        [helper.make_node("Constant", [], ["c"], value_float=2.0),
         helper.make_node("Mul", ["a", "c"], ["b"])], [core])
    act = helper.make_function(
        "my", "Act", ["a"], ["b"],
        [helper.make_node("LeakyRelu", ["a"], ["t"], alpha=0.0),
         helper.make_node("Scale", ["t"], ["b"], domain="my")],
        [core, mine], attributes=["alpha"])
    act.node[0].attribute[0].ref_attr_name = "alpha"
    graph = helper.make_graph(
        [helper.make_node("Act", ["x"], ["h"], domain="my", alpha=0.1,
                          name="first"),
         helper.make_node("Act", ["h"], ["y"], domain="my", alpha=0.3,
                          name="second")], "nested", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[core, mine],
                                functions=[scale, act]),
              os.path.join(out, "nested.onnx"))


if __name__ == "__main__":
    main()
