#!/usr/bin/env python3
"""Writes a model of onnxruntime's com.microsoft quantized ops (QLinearAdd,
QLinearMul, QLinearLeakyRelu, QLinearSigmoid, QLinearGlobalAveragePool)
between a QuantizeLinear and a DequantizeLinear, with u8 or i8 tensors,
per-tensor scales and zero points and a broadcast constant, for comparing
with onnxruntime, which runs these ops natively. --gemm writes QGemm cases
instead: transposed B with per-column scales, an i32 bias and a quantized
Y; transposed A with a u8 B, alpha and an f32 Y.

  microsoft_quantized_model.py OUT.onnx [--int8] [--gemm]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--int8", action="store_true")
    parser.add_argument("--gemm", action="store_true")
    args = parser.parse_args()
    if args.gemm:
        return gemm_model(args.out)
    dtype = np.int8 if args.int8 else np.uint8
    zero = 0 if args.int8 else 128
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    inits = [
        numpy_helper.from_array(np.float32(2.0 / 255), "s_x"),
        numpy_helper.from_array(np.array(zero, dtype), "z_x"),
        numpy_helper.from_array(np.float32(1.5 / 255), "s_l"),
        numpy_helper.from_array(np.array(zero + 3, dtype), "z_l"),
        numpy_helper.from_array(
            rng.integers(info.min, info.max, (16, 1, 1), endpoint=True).astype(dtype), "w"),
        numpy_helper.from_array(np.float32(0.01), "s_w"),
        numpy_helper.from_array(np.array(zero - 5, dtype), "z_w"),
        numpy_helper.from_array(np.float32(3.0 / 255), "s_m"),
        numpy_helper.from_array(np.array(zero, dtype), "z_m"),
        numpy_helper.from_array(np.float32(1.0 / 255), "s_s"),
        numpy_helper.from_array(np.array(info.min, dtype), "z_s"),
        numpy_helper.from_array(np.float32(4.0 / 255), "s_a"),
        numpy_helper.from_array(np.array(zero - 10, dtype), "z_a"),
        numpy_helper.from_array(np.float32(2.5 / 255), "s_p"),
        numpy_helper.from_array(np.array(zero, dtype), "z_p"),
    ]
    ms = "com.microsoft"
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["q"]),
        helper.make_node("QLinearLeakyRelu", ["q", "s_x", "z_x", "s_l", "z_l"], ["l"],
                         domain=ms, alpha=0.2),
        helper.make_node("QLinearMul", ["l", "s_l", "z_l", "w", "s_w", "z_w", "s_m", "z_m"],
                         ["m"], domain=ms),
        helper.make_node("QLinearSigmoid", ["m", "s_m", "z_m", "s_s", "z_s"], ["s"], domain=ms),
        helper.make_node("QLinearAdd", ["s", "s_s", "z_s", "l", "s_l", "z_l", "s_a", "z_a"],
                         ["a"], domain=ms),
        helper.make_node("QLinearGlobalAveragePool", ["a", "s_a", "z_a", "s_p", "z_p"], ["p"],
                         domain=ms, channels_last=0),
        helper.make_node("DequantizeLinear", ["p", "s_p", "z_p"], ["y"]),
        helper.make_node("DequantizeLinear", ["a", "s_a", "z_a"], ["y_add"]),
    ]
    graph = helper.make_graph(
        nodes, "microsoft_quantized",
        # A symbolic batch: the test runs it at 2 and at 64 (fixed at 2,
        # --batch 64 was dropped before 2026-12-02 and it ran at 2 again).
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, 5, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16, 1, 1]),
         helper.make_tensor_value_info("y_add", TensorProto.FLOAT, ["N", 16, 5, 7])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                   helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    onnx.save(model, args.out)
    print("wrote", args.out, "with", "int8" if args.int8 else "uint8", "tensors")


def gemm_model(out):
    rng = np.random.default_rng(11)
    c = numpy_helper.from_array
    ms = "com.microsoft"
    inits = [
        c(np.float32(2.0 / 255), "s_x"), c(np.uint8(128), "z_x"),
        c(rng.integers(-63, 64, (10, 24)).astype(np.int8), "w1"),
        c(rng.uniform(0.002, 0.01, 10).astype(np.float32), "s_w1"),
        c(np.zeros(10, np.int8), "z_w1"),
        c(rng.integers(-2000, 2000, 10).astype(np.int32), "b1"),
        c(np.float32(0.05), "s_y"), c(np.uint8(100), "z_y"),
        c(rng.integers(0, 256, (24, 7)).astype(np.uint8), "w2"),
        c(np.float32(0.004), "s_w2"), c(np.uint8(131), "z_w2"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["q"]),
        helper.make_node("QGemm", ["q", "s_x", "z_x", "w1", "s_w1", "z_w1", "b1", "s_y", "z_y"],
                         ["g1"], domain=ms, transB=1),
        helper.make_node("DequantizeLinear", ["g1", "s_y", "z_y"], ["y1"]),
        helper.make_node("QuantizeLinear", ["xt", "s_x", "z_x"], ["qt"]),
        helper.make_node("QGemm", ["qt", "s_x", "z_x", "w2", "s_w2", "z_w2"], ["y2"],
                         domain=ms, transA=1, alpha=0.5),
    ]
    graph = helper.make_graph(
        nodes, "qgemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 24]),
         helper.make_tensor_value_info("xt", TensorProto.FLOAT, [24, 3])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [5, 10]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [3, 7])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                   helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    onnx.save(model, out)
    print("wrote", out, "with QGemm")


if __name__ == "__main__":
    main()
