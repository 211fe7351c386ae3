#!/usr/bin/env python3
"""Writes models of every op ONNX opsets 18 to 21 added or changed and
HeterPS supports (and small nets of ops they left alone) as backend-test
cases: OUT/test_opsetN_<case>/model.onnx and test_data_set_0/{input,
output}_K.pb, the outputs computed by onnxruntime. node_suite_run.py then
runs them through heterps compile + run.

Operands that fix shapes or parameters (axes, pads, sizes, image_shape,
...) are initializers, as exported models hold them; data inputs are
seeded random values.

Usage: newer_opset_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(18)
CASES = []


def case(name, op, inputs, outputs, constants=None, attrs=None, nodes=None, opset=18):
    """inputs: [(name, array)] fed at run time; outputs: [(name, elem type,
    rank)]; constants: {name: array} initializers; nodes: a node list in
    place of the single `op` node."""
    CASES.append((name, op, inputs, outputs, constants or {}, attrs or {}, nodes, opset))


def floats(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def i64(*values):
    return np.array(values, dtype=np.int64)


def write(out_dir, name, op, inputs, outputs, constants, attrs, nodes, opset):
    node_inputs = [n for n, _ in inputs] + list(constants)
    if nodes is None:
        order = attrs.pop("_order", None)
        nodes = [helper.make_node(op, order or node_inputs, [o[0] for o in outputs], **attrs)]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs],
        [helper.make_tensor_value_info(n, t, [None] * r) for n, t, r in outputs],
        [numpy_helper.from_array(a, n) for n, a in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        # Newer ONNX deprecates GroupNormalization-18 (its per-group scale
        # became per channel in opset 21); exported models still hold it.
        if "deprecated" not in str(e):
            raise
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    results = session.run(None, dict(inputs))
    case_dir = os.path.join(out_dir, f"test_opset{opset}_{name}")
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(data_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, ((n, _, _), a) in enumerate(zip(outputs, results)):
        with open(os.path.join(data_dir, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


F = TensorProto.FLOAT

# Reduce*: axes is an optional input now.
for op in ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]:
    positive = op == "ReduceLogSum"
    x = floats(3, 4, 5, low=0.1 if positive else -2.0)
    case(op.lower() + "_axes_keepdims", op, [("x", x)], [("y", F, 3)], {"axes": i64(1)})
    case(op.lower() + "_two_axes", op, [("x", x)], [("y", F, 1)], {"axes": i64(-1, 0)},
         {"keepdims": 0})
    case(op.lower() + "_all_axes", op, [("x", x)], [("y", F, 3)])
case("reducemean_noop_empty_axes", "ReduceMean", [("x", floats(2, 3))], [("y", F, 2)],
     attrs={"noop_with_empty_axes": 1})

# Pad: axes says which axes pads covers.
x = floats(2, 3, 4, 5)
case("pad_constant_axes", "Pad", [("x", x)], [("y", F, 4)],
     {"pads": i64(1, 0, 2, 3), "value": np.array(1.5, np.float32), "axes": i64(1, -1)})
case("pad_reflect_axes", "Pad", [("x", x)], [("y", F, 4)],
     {"pads": i64(2, 1, 1, 2), "axes": i64(3, 2)}, {"mode": "reflect",
                                                   "_order": ["x", "pads", "", "axes"]})
case("pad_edge_crop_axes", "Pad", [("x", x)], [("y", F, 4)],
     {"pads": i64(-1, 2), "axes": i64(2)}, {"mode": "edge", "_order": ["x", "pads", "", "axes"]})
case("pad_all_axes", "Pad", [("x", x)], [("y", F, 4)],
     {"pads": i64(0, 1, 0, 1, 1, 0, 1, 0)})

# Split: num_outputs, the last chunk smaller.
for extent, count in [(7, 3), (4, 2), (5, 3)]:
    outs = [(f"y{i}", F, 2) for i in range(count)]
    case(f"split_{extent}_into_{count}", "Split", [("x", floats(3, extent))], outs,
         attrs={"axis": 1, "num_outputs": count})
case("split_sizes", "Split", [("x", floats(7, 2))], [("a", F, 2), ("b", F, 2)],
     {"split": i64(2, 5)})

# Resize: axes, keep_aspect_ratio_policy, antialias.
img = floats(1, 2, 6, 8)


def resize(name, attrs, scales=None, sizes=None, x=img, roi=None, opset=18):
    constants, order = {}, ["x", "", "", ""]
    if roi is not None:
        constants["roi"] = np.array(roi, np.float32)
        order[1] = "roi"
    if scales is not None:
        constants["scales"] = np.array(scales, np.float32)
        order[2] = "scales"
    if sizes is not None:
        constants["sizes"] = i64(*sizes)
        order[3] = "sizes"
    while order[-1] == "":
        order.pop()
    case("resize_" + name, "Resize", [("x", x)], [("y", F, x.ndim)], constants,
         dict(attrs, _order=order), opset=opset)


resize("linear_scales_axes", {"mode": "linear", "axes": [2, 3]}, scales=[1.5, 0.75])
resize("nearest_sizes_axes_reversed", {"mode": "nearest", "axes": [3, 2]}, sizes=[5, 9])
resize("linear_not_larger", {"mode": "linear", "axes": [2, 3],
                             "keep_aspect_ratio_policy": "not_larger"}, sizes=[9, 20])
resize("nearest_not_smaller", {"mode": "nearest", "axes": [2, 3],
                               "keep_aspect_ratio_policy": "not_smaller"}, sizes=[4, 4])
resize("cubic_not_smaller_all_axes", {"mode": "cubic",
                                      "keep_aspect_ratio_policy": "not_smaller"},
       sizes=[9, 10], x=floats(6, 8))
resize("linear_antialias_scales", {"mode": "linear", "antialias": 1}, scales=[1, 1, 0.6, 0.4])
resize("cubic_antialias_sizes", {"mode": "cubic", "antialias": 1, "axes": [2, 3]},
       sizes=[4, 3])
resize("linear_antialias_align_corners", {"mode": "linear", "antialias": 1, "axes": [3],
                                          "coordinate_transformation_mode": "align_corners"},
       scales=[0.5])
resize("cubic_antialias_exclude_outside", {"mode": "cubic", "antialias": 1, "axes": [2, 3],
                                           "exclude_outside": 1}, scales=[0.5, 0.7])
resize("linear_antialias_upsample", {"mode": "linear", "antialias": 1, "axes": [2]},
       scales=[2.0])
resize("tf_crop_and_resize_axes", {"mode": "linear", "axes": [2, 3],
                                   "coordinate_transformation_mode": "tf_crop_and_resize",
                                   "extrapolation_value": 9.0},
       sizes=[5, 5], roi=[0.1, -0.2, 0.9, 0.8])

# ScatterElements, ScatterND: max and min.
for reduction in ["max", "min"]:
    case(f"scatter_elements_{reduction}", "ScatterElements",
         [("data", floats(3, 4)), ("updates", floats(2, 4))], [("y", F, 2)],
         {"indices": np.array([[0, 2, 1, 0], [0, 1, 1, 2]], np.int64)},
         {"axis": 0, "reduction": reduction, "_order": ["data", "indices", "updates"]})
    case(f"scatter_nd_{reduction}", "ScatterND",
         [("data", floats(4, 3)), ("updates", floats(3, 3))], [("y", F, 2)],
         {"indices": np.array([[1], [3], [1]], np.int64)},
         {"reduction": reduction, "_order": ["data", "indices", "updates"]})

# Col2Im: sliding blocks folded back, overlaps summed.
def col2im(name, channels, image, block, attrs=None):
    attrs = attrs or {}
    dil = attrs.get("dilations", [1] * len(image))
    strides = attrs.get("strides", [1] * len(image))
    pads = attrs.get("pads", [0] * 2 * len(image))
    n = len(image)
    positions = 1
    for i in range(n):
        span = image[i] + pads[i] + pads[n + i] - dil[i] * (block[i] - 1) - 1
        positions *= span // strides[i] + 1
    k = int(np.prod(block))
    case("col2im_" + name, "Col2Im", [("x", floats(2, channels * k, positions))],
         [("y", F, 2 + n)], {"image_shape": i64(*image), "block_shape": i64(*block)},
         dict(attrs, _order=["x", "image_shape", "block_shape"]))


col2im("basic", 1, [5, 5], [1, 5])
col2im("channels_3x3", 3, [6, 7], [3, 3])
col2im("strides_pads_dilations", 2, [9, 8], [2, 3],
       {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [2, 1]})
col2im("stride_remainder", 2, [8, 8], [3, 3], {"strides": [2, 2]})

# GroupNormalization (opset 18: scale and bias per group).
for groups in [1, 3, 6]:
    case(f"group_normalization_{groups}", "GroupNormalization",
         [("x", floats(2, 6, 4, 3))], [("y", F, 4)],
         {"scale": floats(groups), "bias": floats(groups)},
         {"num_groups": groups, "epsilon": 1e-3, "_order": ["x", "scale", "bias"]})

# Bitwise ops on integers, with extremes (all bits, the sign bit).
def ints(dtype, *shape):
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values.flat[:2] = [info.min, info.max]
    return values


for op, dtype in [("BitwiseAnd", np.int32), ("BitwiseOr", np.uint8),
                  ("BitwiseXor", np.int64), ("BitwiseAnd", np.uint16)]:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    case(f"{op.lower()}_{np.dtype(dtype).name}", op,
         [("a", ints(dtype, 3, 5)), ("b", ints(dtype, 5))], [("y", elem, 2)])
for dtype in [np.int8, np.uint8, np.int64, np.uint32]:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    case(f"bitwisenot_{np.dtype(dtype).name}", "BitwiseNot",
         [("x", ints(dtype, 4, 6))], [("y", elem, 2)])

# LpPool (HeterPS has it at every opset; 18 added ceil_mode and dilations)
# and GlobalLpPool.
x = floats(2, 3, 7, 8)
case("lppool_default", "LpPool", [("x", x)], [("y", F, 4)], attrs={"kernel_shape": [2, 2]})
case("lppool_p3_pads_strides", "LpPool", [("x", x)], [("y", F, 4)],
     attrs={"kernel_shape": [3, 3], "p": 3, "pads": [1, 1, 1, 1], "strides": [2, 2]})
case("lppool_p1_same_upper", "LpPool", [("x", x)], [("y", F, 4)],
     attrs={"kernel_shape": [3, 2], "p": 1, "auto_pad": "SAME_UPPER"}, opset=17)
case("lppool_dilations", "LpPool", [("x", x)], [("y", F, 4)],
     attrs={"kernel_shape": [2, 2], "dilations": [2, 3]})
case("lppool_1d", "LpPool", [("x", floats(2, 3, 10))], [("y", F, 3)],
     attrs={"kernel_shape": [3], "strides": [2]})
for p in [1, 2, 3]:
    case(f"globallppool_p{p}", "GlobalLpPool", [("x", x)], [("y", F, 4)], attrs={"p": p})

case("mish", "Mish", [("x", floats(4, 9, low=-30, high=30))], [("y", F, 2)])

# CenterCropPad: crop and pad, centred, odd differences.
case("center_crop_pad_mixed", "CenterCropPad", [("x", floats(5, 6, 3))], [("y", F, 3)],
     {"shape": i64(2, 9, 4)})
case("center_crop_pad_axes", "CenterCropPad", [("x", floats(5, 6, 3))], [("y", F, 3)],
     {"shape": i64(7, 3)}, {"axes": [-1, 1]})

# Ops opset 18 left alone, at opset 18: a small conv net.
conv_nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"]),
    helper.make_node("ReduceMean", ["r", "axes"], ["m"], keepdims=0),
    helper.make_node("Gemm", ["m", "fc"], ["y"]),
]
case("conv_net", None, [("x", floats(2, 3, 8, 8))], [("y", F, 2)],
     {"w": floats(4, 3, 3, 3), "b": floats(4), "axes": i64(2, 3), "fc": floats(4, 5)},
     nodes=conv_nodes)

# Opset 19: AveragePool's dilations, Pad's wrap mode, Resize's
# half_pixel_symmetric.
x = floats(2, 3, 9, 10)
case("averagepool_dilations", "AveragePool", [("x", x)], [("y", F, 4)],
     attrs={"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [1, 2]}, opset=19)
case("averagepool_dilations_pads_ceil", "AveragePool", [("x", x)], [("y", F, 4)],
     attrs={"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 0, 1, 1],
            "strides": [2, 2], "ceil_mode": 1, "count_include_pad": 1}, opset=19)
case("pad_wrap", "Pad", [("x", floats(2, 3, 4))], [("y", F, 3)],
     {"pads": i64(0, 2, 1, 0, 3, 4)}, {"mode": "wrap"}, opset=19)
case("pad_wrap_axes_crop", "Pad", [("x", floats(2, 5, 4))], [("y", F, 3)],
     {"pads": i64(-1, 2, 1, -2), "axes": i64(1, 2)},
     {"mode": "wrap", "_order": ["x", "pads", "", "axes"]}, opset=19)
resize("half_pixel_symmetric_linear", {"mode": "linear", "axes": [2, 3],
                                       "coordinate_transformation_mode":
                                           "half_pixel_symmetric"},
       scales=[0.7, 1.3], opset=19)
resize("half_pixel_symmetric_nearest_sizes", {"mode": "nearest", "axes": [2, 3],
                                              "coordinate_transformation_mode":
                                                  "half_pixel_symmetric"},
       sizes=[4, 11], opset=19)

# Opset 20: Gelu, GridSample's linear / cubic, DFT's axis input.
for approximate in ["none", "tanh"]:
    case(f"gelu_{approximate}", "Gelu", [("x", floats(3, 11, low=-5, high=5))], [("y", F, 2)],
         attrs={"approximate": approximate}, opset=20)
for mode in ["linear", "cubic", "nearest"]:
    case(f"gridsample_{mode}", "GridSample",
         [("x", floats(2, 3, 5, 6)), ("grid", floats(2, 4, 7, 2, low=-1.1, high=1.1))],
         [("y", F, 4)], attrs={"mode": mode, "padding_mode": "border"}, opset=20)
# AffineGrid (20), 2-D and 3-D, both align_corners, a one-long axis; and
# feeding GridSample, as a spatial transformer does.
for align in [0, 1]:
    case(f"affinegrid_2d_align{align}", "AffineGrid", [("theta", floats(2, 2, 3))],
         [("grid", F, 4)], {"size": i64(2, 3, 5, 7)},
         {"align_corners": align, "_order": ["theta", "size"]}, opset=20)
    case(f"affinegrid_3d_align{align}", "AffineGrid", [("theta", floats(2, 3, 4))],
         [("grid", F, 5)], {"size": i64(2, 1, 4, 1, 6)},
         {"align_corners": align, "_order": ["theta", "size"]}, opset=20)
transformer = [
    helper.make_node("AffineGrid", ["theta", "size"], ["grid"]),
    helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear"),
]
case("affinegrid_gridsample", None,
     [("x", floats(2, 3, 6, 5)), ("theta", floats(2, 2, 3, low=-1, high=1))],
     [("y", F, 4)], {"size": i64(2, 3, 4, 4)}, nodes=transformer, opset=20)
case("dft_axis_input", "DFT", [("x", floats(2, 8, 5, 1))], [("y", F, 4)],
     {"axis": np.array(1, np.int64)}, {"onesided": 1, "_order": ["x", "", "axis"]}, opset=20)
case("dft_default_axis_inverse", "DFT", [("x", floats(3, 6, 2))], [("y", F, 3)],
     attrs={"inverse": 1}, opset=20)
case("dft_length_axis", "DFT", [("x", floats(2, 5, 4, 2))], [("y", F, 4)],
     {"length": np.array(6, np.int64), "axis": np.array(-3, np.int64)},
     {"_order": ["x", "length", "axis"]}, opset=20)

# Opset 21: GroupNormalization's scale and bias per channel (3-D and 4-D,
# 1 to 6 groups), QuantizeLinear / DequantizeLinear without blocks (per
# tensor and per axis), and a net of ops whose opset-21 changes only added
# element types (Flatten, Transpose, Reshape, Squeeze, Unsqueeze, Pad, Cast,
# Identity, ConstantOfShape, Shape).
for groups, shape in [(1, (2, 6, 4, 3)), (3, (2, 6, 4, 3)), (6, (2, 6, 5)), (2, (1, 4, 3, 2))]:
    case(f"group_normalization_21_{groups}_rank{len(shape)}", "GroupNormalization",
         [("x", floats(*shape))], [("y", F, len(shape))],
         {"scale": floats(shape[1]), "bias": floats(shape[1])},
         {"num_groups": groups, "epsilon": 1e-3, "_order": ["x", "scale", "bias"]},
         opset=21)
qdq = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
       helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)]
case("quantize_dequantize_per_axis", None, [("x", floats(2, 3, 4) * 50)], [("y", F, 3)],
     {"s": np.array([0.5, 1.0, 2.0], np.float32), "z": np.array([120, 128, 3], np.uint8)},
     nodes=qdq, opset=21)
qdq = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
       helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
case("quantize_dequantize_per_tensor", None, [("x", floats(3, 4) * 50)], [("y", F, 2)],
     {"s": np.array(0.25, np.float32), "z": np.array(-3, np.int8)}, nodes=qdq, opset=21)
# Blocked quantization (21): a scale per block of block_size elements
# along the axis, the last block shorter where it does not divide; weights
# stored blocked-int8 and dequantized into a MatMul, as weight-only
# quantization writes them; an i32 x with a blocked i32 zero point.
qdq = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=2),
       helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1, block_size=2)]
for cols in [6, 5]:
    blocks = (cols + 1) // 2
    case(f"quantize_dequantize_blocked_{cols}", None, [("x", floats(3, cols) * 40)],
         [("y", F, 2)],
         {"s": rng.uniform(0.2, 1.0, (3, blocks)).astype(np.float32),
          "z": rng.integers(100, 156, (3, blocks)).astype(np.uint8)},
         nodes=qdq, opset=21)
weight_only = [helper.make_node("DequantizeLinear", ["wq", "ws"], ["w"], axis=0, block_size=4),
               helper.make_node("MatMul", ["x", "w"], ["y"])]
case("dequantize_blocked_weights_matmul", None, [("x", floats(2, 8))], [("y", F, 2)],
     {"wq": rng.integers(-128, 128, (8, 5)).astype(np.int8),
      "ws": rng.uniform(0.01, 0.05, (2, 5)).astype(np.float32)},
     nodes=weight_only, opset=21)
case("dequantize_blocked_int32", "DequantizeLinear", [("x", rng.integers(-1000, 1000, (2, 7)).astype(np.int32))],
     [("y", F, 2)],
     {"s": rng.uniform(0.01, 0.1, (2, 3)).astype(np.float32),
      "z": rng.integers(-5, 5, (2, 3)).astype(np.int32)},
     {"axis": 1, "block_size": 3, "_order": ["x", "s", "z"]}, opset=21)
types_only = [
    helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
    helper.make_node("Pad", ["t", "pads"], ["p"]),
    helper.make_node("Unsqueeze", ["p", "axis0"], ["u"]),
    helper.make_node("Squeeze", ["u", "axis0"], ["sq"]),
    helper.make_node("Flatten", ["sq"], ["f"], axis=1),
    helper.make_node("Shape", ["f"], ["shape"]),
    helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                     value=numpy_helper.from_array(np.array([1.5], np.float32))),
    helper.make_node("Add", ["f", "ones"], ["a"]),
    helper.make_node("Reshape", ["a", "target"], ["r"]),
    helper.make_node("Cast", ["r"], ["c"], to=TensorProto.DOUBLE),
    helper.make_node("Cast", ["c"], ["d"], to=TensorProto.FLOAT),
    helper.make_node("Identity", ["d"], ["y"]),
]
case("types_only_changes", None, [("x", floats(2, 3, 4))], [("y", F, 3)],
     {"pads": i64(0, 1, 0, 0, 1, 0), "axis0": i64(0), "target": i64(2, 3, -1)},
     nodes=types_only, opset=21)

# Ops opsets 19 and 20 left alone, at opset 20.
case("conv_net", None, [("x", floats(2, 3, 8, 8))], [("y", F, 2)],
     {"w": floats(4, 3, 3, 3), "b": floats(4), "axes": i64(2, 3), "fc": floats(4, 5)},
     nodes=conv_nodes, opset=20)


def write_all(out_dir, cases):
    """Writes every case of a list of `case` tuples."""
    for name, op, inputs, outputs, constants, attrs, nodes, opset in cases:
        write(out_dir, name, op, inputs, outputs, constants, dict(attrs), nodes, opset)
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    write_all(sys.argv[1], CASES)
