#!/usr/bin/env python3
"""A learnable sequence classification task as .npy arrays, and its model.

  sequence_classification.py model OUT.onnx --steps T [--cell lstm|gru]
                                   [--hidden H] [--features F]
      x[N, T, F] (batch first) -> one LSTM or GRU (hidden H, default 8;
      last state) -> Gemm -> Softmax -> prediction[N, 2], random initial
      weights.
  sequence_classification.py data DIR --rows N --steps T --seed S [--features F]
      DIR/x.npy (f32 N x T x F, F default 2, standard normal) and
      DIR/label.npy (i64 N):
      1 where feature 0 sums positive over the last 8 steps, else 0, so the
      class is read at the end of a sequence every step of which the
      recurrence runs through.
"""
import argparse
import os
import sys

import numpy as np

CLASSES, WINDOW = 2, 8


def model(args):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(args.seed)
    hidden, features = args.hidden, args.features
    gates = {"lstm": 4, "gru": 3}[args.cell] * hidden
    bound = 1.0 / np.sqrt(hidden)

    def uniform(name, shape):
        return numpy_helper.from_array(
            rng.uniform(-bound, bound, size=shape).astype(np.float32), name)

    inits = [uniform("w", (1, gates, features)), uniform("r", (1, gates, hidden)),
             uniform("b", (1, 2 * gates)), uniform("fc.w", (hidden, CLASSES)),
             numpy_helper.from_array(np.zeros(CLASSES, np.float32), "fc.b")]
    outputs = ["y", "h"] + (["c"] if args.cell == "lstm" else [])
    nodes = [helper.make_node(args.cell.upper(), ["x", "w", "r", "b"], outputs,
                              hidden_size=hidden, layout=1),
             helper.make_node("Flatten", ["h"], ["last"], axis=1),
             helper.make_node("Gemm", ["last", "fc.w", "fc.b"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["prediction"], axis=1)]
    graph = helper.make_graph(
        nodes, "sequence_classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", args.steps, features])],
        [helper.make_tensor_value_info("prediction", TensorProto.FLOAT, ["N", CLASSES])],
        inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
              args.output)


def data(args):
    x = np.random.default_rng(args.seed).normal(
        size=(args.rows, args.steps, args.features)).astype(np.float32)
    label = (x[:, -WINDOW:, 0].sum(axis=1) > 0).astype(np.int64)
    os.makedirs(args.directory, exist_ok=True)
    np.save(os.path.join(args.directory, "x.npy"), x)
    np.save(os.path.join(args.directory, "label.npy"), label)
    print("rows %d, steps %d, class 1 share %.3f" % (args.rows, args.steps, label.mean()))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("model")
    m.add_argument("output")
    m.add_argument("--cell", choices=["lstm", "gru"], default="lstm")
    m.add_argument("--hidden", type=int, default=8)
    d = commands.add_parser("data")
    d.add_argument("directory")
    d.add_argument("--rows", type=int, required=True)
    for p in (m, d):
        p.add_argument("--steps", type=int, required=True)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--features", type=int, default=2)
    args = parser.parse_args()
    return {"model": model, "data": data}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
