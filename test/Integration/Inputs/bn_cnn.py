#!/usr/bin/env python3
"""A small CNN with batch norm, its .npy data, and a check of its running
statistics after training.

  bn_cnn.py model OUT.onnx
      x[N, 1, 8, 8] -> Conv(4) -> BatchNormalization -> Relu -> Conv(8,
      stride 2) -> BatchNormalization -> Relu -> GlobalAveragePool ->
      Flatten -> Gemm(16) -> BatchNormalization (2-D) -> Relu -> Gemm(4)
      -> prediction[N, 4] (logits). Running statistics start at mean 0,
      var 1; the first batch norm has momentum 0.9 spelled out, the others
      take ONNX's default (also 0.9).
  bn_cnn.py data DIR --rows N --seed S
      DIR/x.npy (f32 N x 1 x 8 x 8) and DIR/label.npy (i64 N): one of four
      fixed random templates (shared by every seed) plus noise, shifted by
      10 and scaled by 3, so that the conv outputs are far from the initial
      running statistics: evaluating with those would be near chance.
  bn_cnn.py stats PARAMS_DIR TRAIN_DIR
      the dumped running statistics of the first batch norm against the
      per-channel mean and variance of conv1 over the training data with
      the dumped conv1 weights: prints `ok` if they moved away from (0, 1)
      and agree, else FAIL (exit 1).
"""
import argparse
import os
import sys

import numpy as np

CLASSES = 4


def model(args):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)

    def init(name, array):
        return numpy_helper.from_array(np.asarray(array, np.float32), name)

    def he(shape, fan_in):
        return rng.normal(0, np.sqrt(2.0 / fan_in), size=shape)

    inits, nodes = [], []

    def batch_norm(name, x, channels, y, **attrs):
        inits.extend([init(name + ".scale", np.ones(channels)),
                      init(name + ".bias", np.zeros(channels)),
                      init(name + ".mean", np.zeros(channels)),
                      init(name + ".var", np.ones(channels))])
        nodes.append(helper.make_node(
            "BatchNormalization",
            [x, name + ".scale", name + ".bias", name + ".mean", name + ".var"], [y],
            name=name, **attrs))

    inits += [init("conv1.w", he((4, 1, 3, 3), 9)), init("conv1.b", np.zeros(4)),
              init("conv2.w", he((8, 4, 3, 3), 36)), init("conv2.b", np.zeros(8)),
              init("fc1.w", he((8, 16), 8)), init("fc1.b", np.zeros(16)),
              init("fc2.w", he((16, CLASSES), 16)), init("fc2.b", np.zeros(CLASSES))]
    nodes.append(helper.make_node("Conv", ["x", "conv1.w", "conv1.b"], ["c1"],
                                  pads=[1, 1, 1, 1], name="conv1"))
    batch_norm("bn1", "c1", 4, "n1", momentum=0.9, epsilon=1e-5)
    nodes.append(helper.make_node("Relu", ["n1"], ["r1"]))
    nodes.append(helper.make_node("Conv", ["r1", "conv2.w", "conv2.b"], ["c2"],
                                  pads=[1, 1, 1, 1], strides=[2, 2], name="conv2"))
    batch_norm("bn2", "c2", 8, "n2")
    nodes.append(helper.make_node("Relu", ["n2"], ["r2"]))
    nodes.append(helper.make_node("GlobalAveragePool", ["r2"], ["p"]))
    nodes.append(helper.make_node("Flatten", ["p"], ["f"], axis=1))
    nodes.append(helper.make_node("Gemm", ["f", "fc1.w", "fc1.b"], ["h"], name="fc1"))
    batch_norm("bn3", "h", 16, "n3")
    nodes.append(helper.make_node("Relu", ["n3"], ["r3"]))
    nodes.append(helper.make_node("Gemm", ["r3", "fc2.w", "fc2.b"], ["prediction"],
                                  name="fc2"))
    graph = helper.make_graph(
        nodes, "bn_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("prediction", TensorProto.FLOAT, ["N", CLASSES])],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, args.output)


def data(args):
    templates = np.random.default_rng(7).normal(size=(CLASSES, 1, 8, 8))
    rng = np.random.default_rng(args.seed)
    label = rng.integers(0, CLASSES, size=args.rows).astype(np.int64)
    noise = rng.normal(size=(args.rows, 1, 8, 8))
    x = (10.0 + 3.0 * (templates[label] + 0.8 * noise)).astype(np.float32)
    os.makedirs(args.directory, exist_ok=True)
    np.save(os.path.join(args.directory, "x.npy"), x)
    np.save(os.path.join(args.directory, "label.npy"), label)


def conv3x3(x, w, b):
    """NCHW conv, 3x3 kernel, pads 1, stride 1."""
    n, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def stats(args):
    load = lambda name: np.load(os.path.join(args.params, name + ".npy")).astype(np.float64)
    mean, var = load("bn1.mean"), load("bn1.var")
    x = np.load(os.path.join(args.train, "x.npy")).astype(np.float64)
    c1 = conv3x3(x, load("conv1.w"), load("conv1.b"))
    true_mean = c1.mean(axis=(0, 2, 3))
    true_var = c1.var(axis=(0, 2, 3))
    moved = np.abs(mean).max() > 1.0 and np.abs(var - 1.0).max() > 1.0
    # The running statistics average the last steps' batches under weights
    # that still move a little: close, not equal.
    agree = (np.allclose(mean, true_mean, rtol=0.1, atol=0.2) and
             np.allclose(var, true_var, rtol=0.25, atol=0.2))
    print("bn1 running mean", np.round(mean, 3), "data", np.round(true_mean, 3))
    print("bn1 running var", np.round(var, 3), "data", np.round(true_var, 3))
    verdict = "ok" if moved and agree else "FAIL"
    print("running statistics moved %s, agree with the data %s: %s" % (moved, agree, verdict))
    return 0 if verdict == "ok" else 1


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("model")
    m.add_argument("output")
    d = commands.add_parser("data")
    d.add_argument("directory")
    d.add_argument("--rows", type=int, required=True)
    d.add_argument("--seed", type=int, default=1)
    s = commands.add_parser("stats")
    s.add_argument("params")
    s.add_argument("train")
    args = parser.parse_args()
    return {"model": model, "data": data, "stats": stats}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
