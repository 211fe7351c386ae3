#!/usr/bin/env python3
"""Quantizes an ONNX model with onnxruntime's own static quantizer, as a
user would before deploying it: the result is a real quantized model that
this project was not written against.

  quantize_with_ort.py SRC DST --ops Conv,MatMul [--format qoperator|qdq]
                       [--opset N]

Calibration runs 8 random inputs (uniform in [0, 1)). Weights are int8 per
output channel with reduce_range (7 bits), the setting onnxruntime advises
for x86: its AVX2 u8 x s8 kernels add pairs of products in int16 and
saturate with full 8-bit weights, and then differ from the exact result
the spec defines (and HeterPS computes). --opset first converts SRC with
ONNX's version converter (per-channel QDQ needs DequantizeLinear's axis,
opset 13). Prints the op types of DST.
"""
import argparse
import os
import tempfile

import numpy as np
import onnx
import onnx.version_converter
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)


class RandomReader(CalibrationDataReader):
    def __init__(self, model):
        rng = np.random.default_rng(0)
        weights = {init.name for init in model.graph.initializer}
        shapes = {info.name: [d.dim_value or 1 for d in info.type.tensor_type.shape.dim]
                  for info in model.graph.input if info.name not in weights}
        self.feeds = iter([{name: rng.random(shape, dtype=np.float32)
                            for name, shape in shapes.items()} for _ in range(8)])

    def get_next(self):
        return next(self.feeds, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--ops", required=True, help="op types to quantize")
    parser.add_argument("--format", choices=["qoperator", "qdq"], default="qoperator")
    parser.add_argument("--opset", type=int)
    args = parser.parse_args()
    src = args.src
    if args.opset:
        src = os.path.join(tempfile.mkdtemp(), "converted.onnx")
        onnx.save(onnx.version_converter.convert_version(onnx.load(args.src), args.opset), src)
    quantize_static(
        src, args.dst, RandomReader(onnx.load(src)),
        quant_format=QuantFormat.QOperator if args.format == "qoperator" else QuantFormat.QDQ,
        op_types_to_quantize=args.ops.split(","), per_channel=True, reduce_range=True,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    ops = sorted({node.op_type for node in onnx.load(args.dst).graph.node})
    print("ops:", " ".join(ops))


if __name__ == "__main__":
    main()
