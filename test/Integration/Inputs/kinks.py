#!/usr/bin/env python3
"""A model whose hidden units all sit at the kinks of LeakyRelu, PRelu,
Max and Min (zero weights and biases), beside a linear unit, for
gradient-at-kinks.test.

  kinks.py model OUT.onnx     writes the model
  kinks.py data DIR           writes x.npy and label.npy (8 samples)
  kinks.py check DIR          reads a --dump-parameters directory after one
                              SGD step and checks each kink's update
                              against the linear unit's, as PyTorch has it
"""
import os
import sys

import numpy as np

UNITS = ["leaky", "prelu", "max_a", "max_b", "min_a", "min_b", "linear"]
# PyTorch's derivative at 0: LeakyRelu and PRelu take the negative slope,
# maximum and minimum give each tied operand half the gradient.
SHARE = {"leaky": 0.2, "prelu": 0.3, "max_a": 0.5, "max_b": 0.5,
         "min_a": 0.5, "min_b": 0.5, "linear": 1.0}


def model(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(np.full([3], 0.3, np.float32), "slope"),
             numpy_helper.from_array(
                 np.array([[0.5], [-1.0], [2.0]], np.float32), "v")]
    nodes = []
    for unit in UNITS:
        inits += [numpy_helper.from_array(np.zeros([2, 3], np.float32), "W_" + unit),
                  numpy_helper.from_array(np.zeros([3], np.float32), "b_" + unit)]
        nodes += [helper.make_node("MatMul", ["x", "W_" + unit], ["m_" + unit]),
                  helper.make_node("Add", ["m_" + unit, "b_" + unit], ["h_" + unit])]
    nodes += [
        helper.make_node("LeakyRelu", ["h_leaky"], ["u_leaky"], alpha=0.2),
        helper.make_node("PRelu", ["h_prelu", "slope"], ["u_prelu"]),
        helper.make_node("Max", ["h_max_a", "h_max_b"], ["u_max"]),
        helper.make_node("Min", ["h_min_a", "h_min_b"], ["u_min"]),
        helper.make_node("Sum", ["u_leaky", "u_prelu", "u_max", "u_min",
                                 "h_linear"], ["s"]),
        helper.make_node("MatMul", ["s", "v"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "kinks",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              path)


def data(directory):
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(1)
    np.save(os.path.join(directory, "x.npy"), rng.normal(size=(8, 2)).astype(np.float32))
    np.save(os.path.join(directory, "label.npy"),
            rng.normal(size=(8, 1)).astype(np.float32))


def check(directory):
    def update(name):
        return np.load(os.path.join(directory, name + ".npy"))
    for kind in ["b", "W"]:
        linear = update(kind + "_linear")
        assert np.abs(linear).min() > 1e-4, linear
        for unit in UNITS:
            ratio = update(kind + "_" + unit) / linear
            if not np.allclose(ratio, SHARE[unit], rtol=1e-5):
                sys.exit(f"FAIL: {kind}_{unit} moved {ratio.ravel().tolist()} "
                         f"of the linear unit's update, not {SHARE[unit]}")
    print("ok")


if __name__ == "__main__":
    {"model": model, "data": data, "check": check}[sys.argv[1]](sys.argv[2])
