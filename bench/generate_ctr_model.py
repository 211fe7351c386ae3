#!/usr/bin/env python3
"""Generates a HeterPS-style CTR model as ONNX.

Several embedding tables of very different sizes (log-uniform rows), each
read with multi-hot ids and sum-pooled, are concatenated with dense features
and feed an MLP tower of Gemm + Relu layers ending in a sigmoid. The layer
count (after legalization, one hps layer per ONNX node) is close to
--layers; the exact count is printed.

Usage: generate_ctr_model.py --layers 50 --seed 1 -o ctr50.onnx
       generate_ctr_model.py --layout criteo --hidden 256,128 --buckets 10000 -o ctr.onnx
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DENSE_FEATURES = 13


def build(layers, seed, batch, max_rows):
    rng = np.random.default_rng(seed)
    # Each table costs 2 layers (lookup, pooling); the tower 2 per hidden
    # layer; concat, the output gemm and the sigmoid 3 more.
    tables = int(np.clip(layers // 10, 2, 26))
    hidden = max(1, (layers - 2 * tables - 3) // 2)
    dim = int(rng.choice([8, 16, 32]))
    nodes, inits, inputs = [], [], []
    inputs.append(helper.make_tensor_value_info("dense", TensorProto.FLOAT, [batch, DENSE_FEATURES]))
    pooled = []
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "pool_axes")
    inits.append(axes)
    for t in range(tables):
        rows = int(np.exp(rng.uniform(np.log(100), np.log(max_rows))))
        hot = int(rng.choice([1, 1, 2, 4, 8, 16, 32]))
        table = rng.normal(0, 0.01, size=(rows, dim)).astype(np.float32)
        inits.append(numpy_helper.from_array(table, f"table{t}"))
        inputs.append(helper.make_tensor_value_info(f"ids{t}", TensorProto.INT64, [batch, hot]))
        nodes.append(helper.make_node("Gather", [f"table{t}", f"ids{t}"], [f"rows{t}"],
                                      name=f"embedding{t}", axis=0))
        nodes.append(helper.make_node("ReduceSum", [f"rows{t}", "pool_axes"], [f"pooled{t}"],
                                      name=f"pool{t}", keepdims=0))
        pooled.append(f"pooled{t}")
    nodes.append(helper.make_node("Concat", pooled + ["dense"], ["features"], name="concat", axis=1))
    width = tables * dim + DENSE_FEATURES
    current = "features"
    # Deep towers get narrower layers so that files stay small (tens of MB).
    widths = [256, 512, 1024, 2048] if hidden <= 8 else [64, 128, 256, 512]
    for h in range(hidden):
        out = int(rng.choice(widths))
        w = rng.normal(0, np.sqrt(2.0 / width), size=(width, out)).astype(np.float32)
        b = np.zeros(out, dtype=np.float32)
        inits += [numpy_helper.from_array(w, f"fc{h}.w"), numpy_helper.from_array(b, f"fc{h}.b")]
        nodes.append(helper.make_node("Gemm", [current, f"fc{h}.w", f"fc{h}.b"], [f"h{h}"], name=f"fc{h}"))
        nodes.append(helper.make_node("Relu", [f"h{h}"], [f"a{h}"], name=f"relu{h}"))
        current, width = f"a{h}", out
    w = rng.normal(0, np.sqrt(1.0 / width), size=(width, 1)).astype(np.float32)
    inits += [numpy_helper.from_array(w, "out.w"), numpy_helper.from_array(np.zeros(1, np.float32), "out.b")]
    nodes.append(helper.make_node("Gemm", [current, "out.w", "out.b"], ["logit"], name="out"))
    nodes.append(helper.make_node("Sigmoid", ["logit"], ["prob"], name="prob"))
    graph = helper.make_graph(nodes, f"ctr_{layers}", inputs,
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [batch, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="heterps-ctr-generator")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, len(nodes)


SPARSE_FIELDS = 26


def build_criteo(hidden, dim, buckets, seed, wide=True):
    """A DLRM-style model reading Criteo rows as `heterps run --train` feeds
    them: `dense` [B, 13] f32 and `sparse` [B, 26] i64 (ids in [0, buckets)
    per field). One shared table holds every field's rows (field f at offset
    f * buckets), so the trainer's default --hash-buckets (rows / 26) is
    right. With `wide`, a linear part (a 1-wide table summed over the
    fields, plus the dense features times a vector) is added to the deep
    tower's logit, as in Wide & Deep. Returns the model and its node count."""
    rng = np.random.default_rng(seed)
    rows = SPARSE_FIELDS * buckets
    offsets = (np.arange(SPARSE_FIELDS, dtype=np.int64) * buckets)
    inits = [
        numpy_helper.from_array(offsets, "field_offsets"),
        numpy_helper.from_array(rng.normal(0, 0.01, size=(rows, dim)).astype(np.float32), "table"),
        numpy_helper.from_array(np.array([-1, SPARSE_FIELDS * dim], dtype=np.int64), "flat_shape"),
    ]
    nodes = [
        helper.make_node("Add", ["sparse", "field_offsets"], ["ids"], name="offsets"),
        helper.make_node("Gather", ["table", "ids"], ["rows"], name="embedding", axis=0),
        helper.make_node("Reshape", ["rows", "flat_shape"], ["embedded"], name="flatten"),
        helper.make_node("Concat", ["embedded", "dense"], ["features"], name="concat", axis=1),
    ]
    width, current = SPARSE_FIELDS * dim + DENSE_FEATURES, "features"
    for h, out in enumerate(hidden):
        w = rng.normal(0, np.sqrt(2.0 / width), size=(width, out)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"fc{h}.w"),
                  numpy_helper.from_array(np.zeros(out, np.float32), f"fc{h}.b")]
        nodes.append(helper.make_node("Gemm", [current, f"fc{h}.w", f"fc{h}.b"], [f"h{h}"], name=f"fc{h}"))
        nodes.append(helper.make_node("Relu", [f"h{h}"], [f"a{h}"], name=f"relu{h}"))
        current, width = f"a{h}", out
    w = rng.normal(0, np.sqrt(1.0 / width), size=(width, 1)).astype(np.float32)
    inits += [numpy_helper.from_array(w, "out.w"), numpy_helper.from_array(np.zeros(1, np.float32), "out.b")]
    deep = "deep_logit" if wide else "logit"
    nodes.append(helper.make_node("Gemm", [current, "out.w", "out.b"], [deep], name="out"))
    if wide:
        inits += [numpy_helper.from_array(np.zeros((rows, 1), np.float32), "wide_table"),
                  numpy_helper.from_array(np.array([1], dtype=np.int64), "field_axis"),
                  numpy_helper.from_array(np.zeros((DENSE_FEATURES, 1), np.float32), "wide_dense.w")]
        nodes += [
            helper.make_node("Gather", ["wide_table", "ids"], ["wide_rows"], name="wide_embedding", axis=0),
            helper.make_node("ReduceSum", ["wide_rows", "field_axis"], ["wide_sparse"], name="wide_pool",
                             keepdims=0),
            helper.make_node("MatMul", ["dense", "wide_dense.w"], ["wide_dense"], name="wide_dense"),
            helper.make_node("Add", ["wide_sparse", "wide_dense"], ["wide_logit"], name="wide"),
            helper.make_node("Add", [deep, "wide_logit"], ["logit"], name="wide_and_deep"),
        ]
    nodes.append(helper.make_node("Sigmoid", ["logit"], ["prob"], name="prob"))
    # The batch stays symbolic, as in exported models: `heterps compile
    # --batch` binds it to the micro-batch.
    inputs = [helper.make_tensor_value_info("dense", TensorProto.FLOAT, ["N", DENSE_FEATURES]),
              helper.make_tensor_value_info("sparse", TensorProto.INT64, ["N", SPARSE_FIELDS])]
    graph = helper.make_graph(nodes, "ctr_criteo", inputs,
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="heterps-ctr-generator")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, len(nodes)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=50, help="approximate layer count (10 to 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--max-rows", type=int, default=200_000, help="rows of the largest table")
    parser.add_argument("--layout", choices=["tables", "criteo"], default="tables",
                        help="tables: many multi-hot tables (placement studies); criteo: "
                        "dense [B,13] + sparse [B,26] inputs as `heterps run --train` feeds")
    parser.add_argument("--hidden", default="256,128",
                        help="criteo layout: widths of the hidden layers")
    parser.add_argument("--dim", type=int, default=8, help="criteo layout: embedding dim")
    parser.add_argument("--buckets", type=int, default=10000,
                        help="criteo layout: ids per categorical field")
    parser.add_argument("--no-wide", action="store_true",
                        help="criteo layout: the deep tower alone (no linear part)")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    if args.layout == "criteo":
        hidden = [int(w) for w in args.hidden.split(",") if w]
        model, count = build_criteo(hidden, args.dim, args.buckets, args.seed, not args.no_wide)
        onnx.save(model, args.output)
        print(f"{args.output}: {count} layers")
        return 0
    if not 4 <= args.layers <= 1000:
        parser.error("--layers must be between 4 and 1000")
    model, count = build(args.layers, args.seed, args.batch, args.max_rows)
    onnx.save(model, args.output)
    print(f"{args.output}: {count} layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
