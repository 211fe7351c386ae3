#!/usr/bin/env python3
"""Writes a sequence classifier for benchmarks: one ONNX LSTM (opset 14,
forward, time-major X [steps, batch, input]) whose last hidden state feeds
a Gemm to `--classes` logits. Weights are seeded uniform in +-1/sqrt(hidden)
(PyTorch's LSTM initialisation); shapes are static.

Usage: generate_lstm_model.py --steps T --batch B [--input I] [--hidden H]
                              [--classes C] [--seed S] -o FILE
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--input", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    h, i = args.hidden, args.input
    bound = 1.0 / np.sqrt(h)

    def uniform(*shape):
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    initializers = [
        numpy_helper.from_array(uniform(1, 4 * h, i), "w"),
        numpy_helper.from_array(uniform(1, 4 * h, h), "r"),
        numpy_helper.from_array(uniform(1, 8 * h), "b"),
        numpy_helper.from_array(uniform(h, args.classes), "fc_w"),
        numpy_helper.from_array(uniform(args.classes), "fc_b"),
        numpy_helper.from_array(np.array([args.batch, h], np.int64), "flat"),
    ]
    nodes = [
        helper.make_node("LSTM", ["x", "w", "r", "b"], ["", "h_last"], hidden_size=h),
        helper.make_node("Reshape", ["h_last", "flat"], ["features"]),
        helper.make_node("Gemm", ["features", "fc_w", "fc_b"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "lstm_classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [args.steps, args.batch, i])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [args.batch, args.classes])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    print(f"wrote {args.output}: LSTM over {args.steps} steps, batch {args.batch}, "
          f"input {i}, hidden {h}, {args.classes} classes")


if __name__ == "__main__":
    main()
