#!/usr/bin/env python3
"""Writes models of quantized convolutions with constant filters, the shape
quantizers give them, for comparing with onnxruntime on u8 inputs
(compare_with_ort.py --max-id 256). One model, four outputs:

  padded     QLinearConv: x's zero point 113 with pads (x is padded with
             it), per-channel 7-bit weights, an i32 bias;
  grouped    ConvInteger: a u8 filter with zero point 128 (folded into an
             i8 constant), group 2, stride 2, asymmetric pads;
  past_int8  QLinearConv with one weight of 100, past the int8 kernels'
             exact range: the exact f32 conv;
  depthwise  QLinearConv, depthwise 3x3, x's zero point 0.

  int8_conv_models.py OUT.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    args = parser.parse_args()
    rng = np.random.default_rng(11)

    def ints(low, high, shape, dtype):
        return rng.integers(low, high, shape, endpoint=True).astype(dtype)

    inits, nodes, outputs = [], [], []

    def constant(name, value):
        inits.append(numpy_helper.from_array(value, name))
        return name

    def qlinear_conv(name, w, bias, x_zero, y_scale, y_zero, **attrs):
        channels = w.shape[0]
        inputs = [
            "x", constant(name + "_xs", np.float32(0.02)),
            constant(name + "_xz", np.array(x_zero, np.uint8)),
            constant(name + "_w", w),
            constant(name + "_ws",
                     (rng.random(channels) * 0.01 + 0.002).astype(np.float32)),
            constant(name + "_wz", np.zeros(channels, np.int8)),
            constant(name + "_ys", np.float32(y_scale)),
            constant(name + "_yz", np.array(y_zero, np.uint8)),
            constant(name + "_b", bias)]
        nodes.append(helper.make_node("QLinearConv", inputs, [name], **attrs))
        outputs.append(name)

    qlinear_conv("padded", ints(-64, 64, (16, 8, 3, 3), np.int8),
                 ints(-5000, 5000, (16,), np.int32), 113, 0.05, 128,
                 pads=[1, 1, 1, 1])
    # One weight of 100 takes it past the int8 kernels; the others stay
    # small enough that onnxruntime's own 16-bit pair sums do not saturate.
    past = ints(-28, 28, (16, 8, 3, 3), np.int8)
    past[3, 2, 1, 1] = 100
    qlinear_conv("past_int8", past, ints(-5000, 5000, (16,), np.int32), 113,
                 0.05, 128, pads=[1, 1, 1, 1])
    qlinear_conv("depthwise", ints(-64, 64, (8, 1, 3, 3), np.int8),
                 ints(-500, 500, (8,), np.int32), 0, 0.01, 20,
                 pads=[1, 1, 1, 1], group=8)
    nodes.append(helper.make_node(
        "ConvInteger",
        ["x", constant("grouped_w", ints(80, 176, (6, 4, 3, 3), np.uint8)),
         constant("grouped_xz", np.array(7, np.uint8)),
         constant("grouped_wz", np.array(128, np.uint8))],
        ["grouped"], group=2, strides=[2, 2], pads=[1, 0, 0, 1]))
    outputs.append("grouped")

    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 8, 9, 9])
    graph = helper.make_graph(
        nodes, "int8_convs", [x],
        [helper.make_tensor_value_info(name, TensorProto.UINT8
                                       if name != "grouped" else
                                       TensorProto.INT32, None)
         for name in outputs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    onnx.save(model, args.out)
    print("outputs:", " ".join(outputs))


if __name__ == "__main__":
    main()
