#!/usr/bin/env python3
"""A small learnable classification task as .npy arrays, its model, and a
check of the accuracy a training run reports.

  npy_classification.py model OUT.onnx [--features F --hidden H --classes C]
      an MLP x[N, F] -> Gemm -> Relu -> Gemm -> Softmax -> prediction[N, C]
      with random initial weights (symbolic batch).
  npy_classification.py data DIR --rows N --seed S [--teacher-seed T ...]
      DIR/x.npy (f32 N x F, standard normal) and DIR/label.npy (i64 N):
      the class a hidden random linear teacher (from --teacher-seed, so a
      train and an eval set can share it) scores highest. Prints the
      teacher's class balance (chance is the largest class's share). With
      --total-rows T the files are then extended to T rows without writing
      them (sparse files; the extra samples read as zeros, class 0), to
      feed a run more data than the machine has memory.
  npy_classification.py check TRAIN_LOG MIN_ACCURACY
      the last `eval step ... accuracy A` and the last `train loss ...
      accuracy A` line of TRAIN_LOG: prints `ok` if the eval accuracy is at
      least MIN_ACCURACY, else FAIL (exit 1).
"""
import argparse
import os
import re
import sys

import numpy as np


def model(args):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(args.seed)
    f, h, c = args.features, args.hidden, args.classes
    w1 = rng.normal(0, np.sqrt(2.0 / f), size=(f, h)).astype(np.float32)
    w2 = rng.normal(0, np.sqrt(1.0 / h), size=(h, c)).astype(np.float32)
    inits = [numpy_helper.from_array(w1, "fc1.w"),
             numpy_helper.from_array(np.zeros(h, np.float32), "fc1.b"),
             numpy_helper.from_array(w2, "fc2.w"),
             numpy_helper.from_array(np.zeros(c, np.float32), "fc2.b")]
    nodes = [helper.make_node("Gemm", ["x", "fc1.w", "fc1.b"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["a"], name="relu"),
             helper.make_node("Gemm", ["a", "fc2.w", "fc2.b"], ["logits"], name="fc2"),
             helper.make_node("Softmax", ["logits"], ["prediction"], name="softmax", axis=1)]
    graph = helper.make_graph(
        nodes, "npy_classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", f])],
        [helper.make_tensor_value_info("prediction", TensorProto.FLOAT, ["N", c])],
        inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              args.output)


def data(args):
    teacher = np.random.default_rng(args.teacher_seed).normal(
        size=(args.features, args.classes))
    x = np.random.default_rng(args.seed).normal(
        size=(args.rows, args.features)).astype(np.float32)
    label = np.argmax(x @ teacher, axis=1).astype(np.int64)
    os.makedirs(args.directory, exist_ok=True)
    np.save(os.path.join(args.directory, "x.npy"), x)
    np.save(os.path.join(args.directory, "label.npy"), label)
    if args.total_rows:
        extend(os.path.join(args.directory, "x.npy"), args.total_rows)
        extend(os.path.join(args.directory, "label.npy"), args.total_rows)
    shares = np.bincount(label, minlength=args.classes) / args.rows
    print("rows %d, classes %d, largest class %.3f"
          % (args.rows, args.classes, shares.max()))


def extend(path, rows):
    """Rewrites the .npy at `path` to hold `rows` rows: its own first, then
    a hole (zeros)."""
    array = np.load(path)
    shape = (rows,) + array.shape[1:]
    with open(path, "wb") as f:
        np.lib.format.write_array_header_2_0(
            f, {"descr": np.lib.format.dtype_to_descr(array.dtype),
                "fortran_order": False, "shape": shape})
        f.write(array.tobytes())
        f.truncate(f.tell() + (rows - array.shape[0]) * array[0].nbytes)


def check(args):
    text = open(args.log).read()
    evals = re.findall(r"^eval step \S+\s+loss \S+\s+accuracy ([0-9.]+)", text, re.M)
    trains = re.findall(r"^train loss \S+\s+accuracy ([0-9.]+)", text, re.M)
    if not evals or not trains:
        print("FAIL: no eval or train accuracy in the log:\n" + text)
        return 1
    accuracy = float(evals[-1])
    verdict = "ok" if accuracy >= args.minimum else "FAIL"
    print("eval accuracy %.4f, train accuracy %s (minimum %.2f) %s"
          % (accuracy, trains[-1], args.minimum, verdict))
    return 0 if verdict == "ok" else 1


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("model")
    m.add_argument("output")
    d = commands.add_parser("data")
    d.add_argument("directory")
    d.add_argument("--rows", type=int, required=True)
    d.add_argument("--teacher-seed", type=int, default=7)
    d.add_argument("--total-rows", type=int, default=0)
    for p in (m, d):
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--features", type=int, default=16)
        p.add_argument("--classes", type=int, default=4)
    m.add_argument("--hidden", type=int, default=32)
    c = commands.add_parser("check")
    c.add_argument("log")
    c.add_argument("minimum", type=float)
    args = parser.parse_args()
    return {"model": model, "data": data, "check": check}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
