#!/usr/bin/env python3
"""Writes a decoder-style transformer as ONNX opset 24 writes it, for the
inference benchmark: `--layers` blocks of RMSNormalization, a fused QKV
projection, RotaryEmbedding on Q and K at position_ids, causal grouped-query
Attention (3-D inputs, q_num_heads / kv_num_heads), an output projection
and residual, then RMSNormalization and a Swish-gated MLP (SwiGLU) with its
residual. Weights are seeded N(0, 1/fan_in); input x [B, S, hidden] and
position_ids [B, S] (int64).

Usage: generate_transformer_model.py -o FILE [--batch B] [--seq S]
         [--hidden H] [--heads N] [--kv-heads K] [--mlp M] [--layers L]
         [--seed S]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--mlp", type=int, default=512)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--max-position", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.hidden % args.heads or args.heads % args.kv_heads:
        p.error("heads must divide hidden and kv-heads divide heads")
    rng = np.random.default_rng(args.seed)
    head = args.hidden // args.heads
    kv_width = args.kv_heads * head
    nodes, inits = [], []

    def weight(name, shape, fan_in=None):
        scale = 1.0 / np.sqrt(fan_in or shape[0])
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, **attrs))
        return outputs[0]

    positions = np.arange(args.max_position)[:, None]
    frequencies = 1.0 / 10000 ** (np.arange(0, head, 2) / head)
    angles = positions * frequencies[None, :]
    inits += [numpy_helper.from_array(np.cos(angles).astype(np.float32), "rope_cos"),
              numpy_helper.from_array(np.sin(angles).astype(np.float32), "rope_sin"),
              numpy_helper.from_array(np.array([args.hidden, kv_width, kv_width], np.int64),
                                      "qkv_split")]
    x = "x"
    for i in range(args.layers):
        inits.append(numpy_helper.from_array(
            rng.uniform(0.8, 1.2, args.hidden).astype(np.float32), f"norm1_{i}"))
        inits.append(numpy_helper.from_array(
            rng.uniform(0.8, 1.2, args.hidden).astype(np.float32), f"norm2_{i}"))
        h = node("RMSNormalization", [x, f"norm1_{i}"], [f"n1_{i}"], epsilon=1e-6)
        qkv = node("MatMul", [h, weight(f"wqkv_{i}", (args.hidden, args.hidden + 2 * kv_width))],
                   [f"qkv_{i}"])
        q, k, v = f"q_{i}", f"k_{i}", f"v_{i}"
        node("Split", [qkv, "qkv_split"], [q, k, v], axis=2)
        q = node("RotaryEmbedding", [q, "rope_cos", "rope_sin", "position_ids"], [f"qr_{i}"],
                 num_heads=args.heads)
        k = node("RotaryEmbedding", [k, "rope_cos", "rope_sin", "position_ids"], [f"kr_{i}"],
                 num_heads=args.kv_heads)
        a = node("Attention", [q, k, v], [f"a_{i}"], q_num_heads=args.heads,
                 kv_num_heads=args.kv_heads, is_causal=1)
        o = node("MatMul", [a, weight(f"wo_{i}", (args.hidden, args.hidden))], [f"o_{i}"])
        x = node("Add", [x, o], [f"r1_{i}"])
        h = node("RMSNormalization", [x, f"norm2_{i}"], [f"n2_{i}"], epsilon=1e-6)
        gate = node("Swish", [node("MatMul", [h, weight(f"wg_{i}", (args.hidden, args.mlp))],
                                   [f"g_{i}"])], [f"sg_{i}"])
        up = node("MatMul", [h, weight(f"wu_{i}", (args.hidden, args.mlp))], [f"u_{i}"])
        down = node("MatMul", [node("Mul", [gate, up], [f"gu_{i}"]),
                               weight(f"wd_{i}", (args.mlp, args.hidden))], [f"d_{i}"])
        x = node("Add", [x, down], [f"r2_{i}"])
    node("Identity", [x], ["y"])
    graph = helper.make_graph(
        nodes, "transformer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [args.batch, args.seq, args.hidden]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, [args.batch, args.seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [args.batch, args.seq, args.hidden])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    print(f"wrote {args.output}: {args.layers} layers, hidden {args.hidden}, "
          f"{args.heads} heads ({args.kv_heads} kv), seq {args.seq}, batch {args.batch}")


if __name__ == "__main__":
    main()
