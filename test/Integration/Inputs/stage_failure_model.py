#!/usr/bin/env python3
"""A classifier whose data can make a stage fail at run time, for tests of
how a failed micro-batch is reported.

  stage_failure_model.py model OUT.onnx
      x[N, 8] and pick[N, 1] (i64): GatherElements(x, pick, axis 1) joins x,
      then Gemm -> Relu -> Gemm -> Softmax -> prediction[N, 4] (random
      weights, symbolic batch). A pick outside [-8, 8) fails the stage that
      gathers.
  stage_failure_model.py data DIR --rows N [--bad-row R]
      DIR/x.npy, DIR/pick.npy and DIR/label.npy (seed 1); with --bad-row,
      sample R picks column 99.
  stage_failure_model.py split PLACED.mlir OUT.mlir
      a two-class plan of the placed model, which no cost model would
      choose for it: the ops up to the join stay where they were placed,
      the layers after it move to the GPU class gpu.p40, and the plan
      attribute goes (partition then takes one replica per stage). So the
      stage that gathers has a stage rank downstream of it.
"""
import argparse
import os

import numpy as np


def model(args):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.normal(0, 0.4, (9, 16)).astype(np.float32), "fc1.w"),
             numpy_helper.from_array(np.zeros(16, np.float32), "fc1.b"),
             numpy_helper.from_array(rng.normal(0, 0.25, (16, 4)).astype(np.float32), "fc2.w"),
             numpy_helper.from_array(np.zeros(4, np.float32), "fc2.b")]
    nodes = [helper.make_node("GatherElements", ["x", "pick"], ["picked"], name="pick", axis=1),
             helper.make_node("Concat", ["x", "picked"], ["joined"], name="join", axis=1),
             helper.make_node("Gemm", ["joined", "fc1.w", "fc1.b"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["a"], name="relu"),
             helper.make_node("Gemm", ["a", "fc2.w", "fc2.b"], ["logits"], name="fc2"),
             helper.make_node("Softmax", ["logits"], ["prediction"], name="softmax", axis=1)]
    graph = helper.make_graph(
        nodes, "stage_failure",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("pick", TensorProto.INT64, ["N", 1])],
        [helper.make_tensor_value_info("prediction", TensorProto.FLOAT, ["N", 4])],
        inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              args.output)


def data(args):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(args.rows, 8)).astype(np.float32)
    pick = rng.integers(0, 8, size=(args.rows, 1)).astype(np.int64)
    label = np.argmax(x[:, :4], axis=1).astype(np.int64)
    if args.bad_row is not None:
        pick[args.bad_row, 0] = 99
    os.makedirs(args.directory, exist_ok=True)
    np.save(os.path.join(args.directory, "x.npy"), x)
    np.save(os.path.join(args.directory, "pick.npy"), pick)
    np.save(os.path.join(args.directory, "label.npy"), label)


def split(args):
    import re

    text = open(args.placed).read()
    # The module's plan summary names the old placement: drop it (with
    # the separator before it).
    start = text.find("hps.plan = {")
    if start < 0:
        raise SystemExit(f"{args.placed}: no hps.plan attribute")
    depth, end = 0, text.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
        if depth == 0:
            break
    cut = text.rindex(",", 0, start) if text[:start].rstrip().endswith(",") else start
    text = text[:cut] + text[end:]
    lines, moved, after_join = [], 0, False
    for line in text.split("\n"):
        if after_join and "#hps.device<" in line:
            line = re.sub(r'#hps\.device<"[^"]*">', '#hps.device<"gpu.p40">', line)
            moved += 1
        if "hps.concat" in line:
            after_join = True
        lines.append(line)
    if not moved:
        raise SystemExit(f"{args.placed}: no placed op after the join")
    open(args.output, "w").write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("model")
    m.add_argument("output")
    d = sub.add_parser("data")
    d.add_argument("directory")
    d.add_argument("--rows", type=int, required=True)
    d.add_argument("--bad-row", type=int)
    p = sub.add_parser("split")
    p.add_argument("placed")
    p.add_argument("output")
    args = parser.parse_args()
    {"model": model, "data": data, "split": split}[args.command](args)


if __name__ == "__main__":
    main()
