#!/usr/bin/env python3
"""Checks every gradient rule of --hps-autodiff against finite differences.

For each case a small ONNX model puts one op (or op variant) between trainable
weights and the loss; it is compiled with `heterps compile --train` and
`heterps gradcheck` compares the compiled backward pass with central
differences of the compiled forward pass along random directions.

Usage: gradcheck_ops.py HETERPS_BIN_DIR CLUSTER_FILE [--only NAME,...]
         [--strategy cpu-only|gpu-only] [--jobs N]
Prints one line per case and a final `failed: N`.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B = 4  # the compiled micro-batch (the models' batch dim is symbolic)
RNG = np.random.default_rng(7)
OPSET = 17


def weight(name, shape, low=-1.0, high=1.0):
    return numpy_helper.from_array(RNG.uniform(low, high, size=shape).astype(np.float32), name)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


class Case:
    """x [B, 6] -> h = x @ w0 + b0 ([B, 5]) -> the op under test -> pred."""

    def __init__(self, name, loss="mse"):
        self.name, self.loss = name, loss
        # Ops with kinks (relu, abs, max, ...) get a smaller step, so that
        # the perturbation rarely carries an activation across its kink.
        self.epsilon = "1e-2"
        self.nodes, self.inits = [], [weight("w0", (6, 5)), weight("b0", (5,))]
        self.inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6])]
        self.feeds = {}
        self.compile_args = []  # extra `heterps compile` flags
        self.opset = OPSET
        self.nodes.append(helper.make_node("Gemm", ["x", "w0", "b0"], ["h"]))
        self.pred = None

    def node(self, op, inputs, outputs=None, **attrs):
        outputs = outputs or [f"t{len(self.nodes)}"]
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self, pred, shape):
        out = helper.make_tensor_value_info(pred, TensorProto.FLOAT, ["N"] + shape[1:])
        graph = helper.make_graph(self.nodes, self.name, self.inputs, [out], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as e:
            # Newer ONNX deprecates GroupNormalization-18 (per-group scale);
            # exported models still hold it.
            if "deprecated" not in str(e):
                raise
        return model


def unary(name, op, pre=None, **attrs):
    c = Case(name)
    src = "h"
    if pre:
        src = c.node(pre, ["h"])
    return c, c.node(op, [src], **attrs), [B, 5]


def binary(name, op, wshape, low=-1.0, high=1.0, swap=False):
    c = Case(name)
    c.inits.append(weight("w1", wshape, low, high))
    args = ["w1", "h"] if swap else ["h", "w1"]
    return c, c.node(op, args), [B, 5]


KINKED = {"relu", "abs", "leaky_relu", "max", "min", "clip", "where", "thresholded_relu", "prelu",
          "hard_sigmoid", "hard_swish", "reducemax", "reducel1", "max_pool_pad_stride",
          "max_pool_ceil_mode", "max_pool_1d_dilated", "global_max_pool", "floor", "ceil",
          "round", "sign", "mod_fmod",
          "mod_floor", "soft_shrink", "clip_runtime_bound"}


def cases():
    out = []
    # Dense layers.
    c = Case("gemm")
    out.append((c, "h", [B, 5]))
    c = Case("gemm_trans_alpha_beta")
    c.inits += [weight("wt", (5, 5)), weight("c2", (1, 5))]
    out.append((c, c.node("Gemm", [c.node("Transpose", ["h"], perm=[1, 0]), "wt", "c2"],
                          transA=1, transB=1, alpha=0.5, beta=2.0), [B, 5]))
    c = Case("gemm_full_bias")
    c.inits += [weight("w1", (5, 3)), weight("c1", (B, 3))]
    out.append((c, c.node("Gemm", ["h", "w1", "c1"]), [B, 3]))
    c = Case("matmul")
    c.inits.append(weight("w1", (5, 3)))
    out.append((c, c.node("MatMul", ["h", "w1"]), [B, 3]))
    c = Case("matmul_batched_broadcast")
    c.inits += [weight("w1", (1, 2, 5, 3)), const("s1", np.array([-1, 1, 1, 5], np.int64)),
                const("s2", np.array([-1, 2 * 3], np.int64))]
    r = c.node("Reshape", ["h", "s1"])
    out.append((c, c.node("Reshape", [c.node("MatMul", [r, "w1"]), "s2"]), [B, 6]))
    c = Case("matmul_vector")
    c.inits.append(weight("v", (5,)))
    out.append((c, c.node("Unsqueeze", [c.node("MatMul", ["h", "v"]), "ax1"]), [B, 1]))
    c.inits.append(const("ax1", np.array([1], np.int64)))
    # Elementwise binary with broadcasting, weights on either side.
    out.append(binary("add_broadcast", "Add", (5,)))
    out.append(binary("sub_broadcast_swapped", "Sub", (1, 5), swap=True))
    out.append(binary("mul_broadcast", "Mul", (B, 1)))
    out.append(binary("div_broadcast", "Div", (5,), 1.0, 2.0))
    out.append(binary("div_by_activation", "Div", (5,), 1.0, 2.0, swap=False))
    out.append(binary("max", "Max", (5,)))
    out.append(binary("min", "Min", (1, 5)))
    c = Case("pow_square")
    # A Constant node, not an initializer: float initializers are trained,
    # and x^y has no real derivative in y where x < 0.
    c.node("Constant", [], ["two"], value=const("two_value", np.array(2.0, np.float32)))
    out.append((c, c.node("Pow", ["h", "two"]), [B, 5]))
    c = Case("pow_positive_base")
    c.inits.append(weight("w1", (5,), 0.5, 1.5))
    out.append((c, c.node("Pow", [c.node("Softplus", ["h"]), "w1"]), [B, 5]))
    # Unary.
    for op in ["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Softplus", "Erf", "Sin", "Cos",
               "Softsign", "HardSwish"]:
        out.append(unary(op.lower(), op))
    out.append(unary("hard_sigmoid", "HardSigmoid", alpha=0.3, beta=0.4))
    out.append(unary("selu", "Selu"))
    out.append(unary("celu", "Celu", alpha=0.8))
    out.append(unary("thresholded_relu", "ThresholdedRelu", alpha=0.2))
    out.append(binary("prelu", "PRelu", (5,)))
    out.append(unary("leaky_relu", "LeakyRelu", alpha=0.1))
    out.append(unary("elu", "Elu", alpha=0.7))
    out.append(unary("log", "Log", pre="Softplus"))
    out.append(unary("sqrt", "Sqrt", pre="Softplus"))
    out.append(unary("reciprocal", "Reciprocal", pre="Exp"))
    c = Case("clip")
    c.inits += [const("lo", np.array(-0.3, np.float32)), const("hi", np.array(0.4, np.float32))]
    out.append((c, c.node("Clip", ["h", "lo", "hi"]), [B, 5]))
    c = Case("where")
    c.inits += [const("cond", RNG.uniform(size=(B, 5)) > 0.5), weight("w1", (5,))]
    out.append((c, c.node("Where", ["cond", "h", "w1"]), [B, 5]))
    c = Case("cast_float")
    out.append((c, c.node("Cast", ["h"], to=TensorProto.FLOAT), [B, 5]))
    # Data movement.
    c = Case("concat")
    c.inits.append(weight("w1", (6, 2)))
    out.append((c, c.node("Concat", ["h", c.node("MatMul", ["x", "w1"])], axis=1), [B, 7]))
    c = Case("split")
    c.inits.append(const("sizes", np.array([2, 3], np.int64)))
    a, b2 = c.node("Split", ["h", "sizes"], ["p0", "p1"], axis=1)
    out.append((c, c.node("Concat", [b2, c.node("Mul", [a, a])], axis=1), [B, 5]))
    c = Case("slice")
    c.inits += [const("st", np.array([1], np.int64)), const("en", np.array([4], np.int64)),
                const("ax", np.array([1], np.int64))]
    out.append((c, c.node("Slice", ["h", "st", "en", "ax"]), [B, 3]))
    c = Case("reshape_transpose")
    c.inits.append(const("shape", np.array([-1, 5, 1], np.int64)))
    t = c.node("Transpose", [c.node("Reshape", ["h", "shape"])], perm=[0, 2, 1])
    out.append((c, c.node("Flatten", [t], axis=1), [B, 5]))
    c = Case("squeeze_unsqueeze")
    c.inits.append(const("ax", np.array([1], np.int64)))
    out.append((c, c.node("Squeeze", [c.node("Unsqueeze", ["h", "ax"]), "ax"]), [B, 5]))
    c = Case("expand")
    c.inits += [weight("w1", (1, 5)), const("shape", np.array([B, 5], np.int64))]
    out.append((c, c.node("Mul", ["h", c.node("Expand", ["w1", "shape"])]), [B, 5]))
    c = Case("pad")
    c.inits.append(const("pads", np.array([0, 1, 0, 2], np.int64)))
    out.append((c, c.node("Pad", ["h", "pads"]), [B, 8]))
    # Reductions and normalisation.
    c = Case("reduce_sum")
    c.inits += [const("shape", np.array([-1, 5, 1], np.int64)), const("ax", np.array([2], np.int64)),
                weight("w1", (1, 5, 3))]
    r = c.node("Mul", [c.node("Reshape", ["h", "shape"]), "w1"])
    out.append((c, c.node("ReduceSum", [r, "ax"], keepdims=0), [B, 5]))
    c = Case("reduce_mean_keepdims")
    c.inits.append(const("ax", np.array([1], np.int64)))
    out.append((c, c.node("Mul", ["h", c.node("ReduceMean", ["h"], axes=[1], keepdims=1)]), [B, 5]))
    c.nodes[-2] = helper.make_node("ReduceMean", ["h"], [c.nodes[-2].output[0]], axes=[1], keepdims=1)
    for op in ["ReduceMax", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare", "ReduceL1"]:
        c = Case(op.lower())
        c.inits.append(weight("w1", (1, 5, 3)))
        r = c.node("Mul", [c.node("Unsqueeze", ["h", "ax2"]), "w1"])
        c.inits.append(const("ax2", np.array([2], np.int64)))
        out.append((c, c.node(op, [r], axes=[2], keepdims=0), [B, 5]))
    c = Case("global_avg_pool")
    c.inits += [weight("w1", (1, 5, 2, 3)), const("ax23", np.array([2, 3], np.int64))]
    r = c.node("Mul", [c.node("Unsqueeze", ["h", "ax23"]), "w1"])
    out.append((c, c.node("Flatten", [c.node("GlobalAveragePool", [r])], axis=1), [B, 5]))
    c = Case("global_max_pool")
    c.inits += [weight("w1", (1, 5, 2, 3)), const("ax23", np.array([2, 3], np.int64))]
    r = c.node("Mul", [c.node("Unsqueeze", ["h", "ax23"]), "w1"])
    out.append((c, c.node("Flatten", [c.node("GlobalMaxPool", [r])], axis=1), [B, 5]))
    # Piecewise-constant ops pass no gradient: h + op(h / 4) has the gradient
    # of h alone. h / 4 lies in (-1, 1), so a step lies only at 0 (and at
    # +-0.5 for Round): a perturbation rarely crosses one.
    for op in ["Floor", "Ceil", "Round", "Sign"]:
        c = Case(op.lower())
        c.inputs.append(helper.make_tensor_value_info("quarter", TensorProto.FLOAT, []))
        c.feeds["quarter"] = np.array(0.25, np.float32)
        out.append((c, c.node("Add", ["h", c.node(op, [c.node("Mul", ["h", "quarter"])])]),
                    [B, 5]))
    out.append(unary("softmax", "Softmax", axis=1))
    out.append(unary("log_softmax", "LogSoftmax", axis=1))
    c = Case("layer_norm")
    c.inits += [weight("g", (5,), 0.5, 1.5), weight("beta", (5,))]
    out.append((c, c.node("LayerNormalization", ["h", "g", "beta"], axis=-1), [B, 5]))
    # Convolution, pooling and batch norm on NC[D]HW maps made from h.
    def spatial(name, shape):
        """h projected (trainable) and reshaped to [B] + shape."""
        c = Case(name)
        c.inits += [weight("proj", (5, int(np.prod(shape)))),
                    const("map_shape", np.array([-1] + list(shape), np.int64))]
        return c, c.node("Reshape", [c.node("MatMul", ["h", "proj"]), "map_shape"])

    def flat(c, value, shape):
        return c, c.node("Flatten", [value], axis=1), [B, int(np.prod(shape))]

    c, m = spatial("conv_pad_stride_bias", (2, 5, 5))
    # A smaller filter keeps the loss, and so the finite differences' f32
    # rounding, small next to the directional derivatives.
    c.inits += [weight("wc", (3, 2, 3, 3), -0.3, 0.3), weight("bc", (3,))]
    out.append(flat(c, c.node("Conv", [m, "wc", "bc"], pads=[1, 1, 1, 1], strides=[2, 2]),
                    (3, 3, 3)))
    c, m = spatial("conv_dilation_groups_asym_pads", (4, 6, 6))
    c.inits.append(weight("wc", (4, 2, 2, 2)))
    out.append(flat(c, c.node("Conv", [m, "wc"], group=2, dilations=[2, 2],
                              pads=[1, 0, 0, 1]), (4, 5, 5)))
    c, m = spatial("conv_depthwise_stride_drops_edge", (3, 6, 7))
    c.inits += [weight("wc", (3, 1, 3, 2)), weight("bc", (3,))]
    out.append(flat(c, c.node("Conv", [m, "wc", "bc"], group=3, strides=[2, 3]), (3, 2, 2)))
    c, m = spatial("conv_1d", (2, 7))
    c.inits += [weight("wc", (3, 2, 3)), weight("bc", (3,))]
    out.append(flat(c, c.node("Conv", [m, "wc", "bc"], strides=[2], pads=[1, 0]), (3, 3)))
    c, m = spatial("avg_pool_pad_exclude", (2, 5, 5))
    out.append(flat(c, c.node("AveragePool", [m], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]), (2, 3, 3)))
    c, m = spatial("avg_pool_pad_include", (2, 5, 5))
    out.append(flat(c, c.node("AveragePool", [m], kernel_shape=[3, 2], strides=[2, 1],
                              pads=[1, 0, 1, 1], count_include_pad=1), (2, 3, 5)))
    c, m = spatial("avg_pool_ceil_mode", (2, 5, 5))
    out.append(flat(c, c.node("AveragePool", [m], kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1, count_include_pad=1), (2, 3, 3)))
    c, m = spatial("avg_pool_1d", (3, 8))  # (AveragePool has dilations from opset 19)
    out.append(flat(c, c.node("AveragePool", [m], kernel_shape=[3], strides=[2],
                              pads=[1, 1]), (3, 4)))
    c, m = spatial("max_pool_pad_stride", (2, 5, 5))
    out.append(flat(c, c.node("MaxPool", [m], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]), (2, 3, 3)))
    c, m = spatial("max_pool_ceil_mode", (2, 5, 5))
    out.append(flat(c, c.node("MaxPool", [m], kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1), (2, 3, 3)))
    c, m = spatial("max_pool_1d_dilated", (3, 8))
    out.append(flat(c, c.node("MaxPool", [m], kernel_shape=[3], dilations=[2],
                              pads=[1, 0]), (3, 5)))
    # Batch norm trains with batch statistics by default: the gradient
    # also flows through the batch mean and variance (B * 2 * 2 = 16 and
    # B = 4 values per channel); with --batch-norm=running the running
    # statistics are constants.
    def batch_norm(c, x):
        c.inits += [weight("bn_scale", (3,), 0.5, 1.5), weight("bn_bias", (3,)),
                    weight("bn_mean", (3,)), weight("bn_var", (3,), 0.5, 2.0)]
        return c.node("BatchNormalization", [x, "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                      epsilon=1e-3)

    c, m = spatial("batch_norm", (3, 2, 2))
    out.append(flat(c, batch_norm(c, m), (3, 2, 2)))
    # Embeddings (parameter-server tables).
    c = Case("embedding")
    c.inputs.append(helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 2]))
    c.feeds["ids"] = RNG.integers(0, 10, size=(B, 2)).astype(np.int64)
    c.feeds["ids"][0, 1] = c.feeds["ids"][1, 0]  # a duplicate id
    c.inits += [weight("table", (10, 3)), const("shape", np.array([-1, 6], np.int64))]
    e = c.node("Reshape", [c.node("Gather", ["table", "ids"], axis=0), "shape"])
    out.append((c, c.node("Concat", ["h", e], axis=1), [B, 11]))
    c = Case("embedding_sum_pooled")
    c.inputs.append(helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 3]))
    c.feeds["ids"] = RNG.integers(0, 10, size=(B, 3)).astype(np.int64)
    c.inits += [weight("table", (10, 5)), const("ax", np.array([1], np.int64))]
    p = c.node("ReduceSum", [c.node("Gather", ["table", "ids"], axis=0), "ax"], keepdims=0)
    out.append((c, c.node("Mul", ["h", p]), [B, 5]))
    # Losses.
    c = Case("loss_bce_sigmoid", loss="bce")
    c.inits.append(weight("w1", (5, 1)))
    out.append((c, c.node("Sigmoid", [c.node("MatMul", ["h", "w1"])]), [B, 1]))
    c = Case("loss_softmax_ce", loss="softmax-ce")
    out.append((c, c.node("Softmax", ["h"], axis=1), [B, 5]))
    c = Case("loss_softmax_ce_logits", loss="softmax-ce")
    out.append((c, "h", [B, 5]))
    # Adjoints that scatter or fold, placed after the cases above so that
    # those keep their random weights.
    c = Case("mod_fmod")  # h - trunc(h / w1) w1
    c.inits.append(weight("w1", (5,), 0.3, 0.7))
    out.append((c, c.node("Mod", ["h", "w1"], fmod=1), [B, 5]))
    c = Case("mod_floor")  # h - floor(h / w1) w1 (float Mod without fmod)
    c.inits.append(weight("w1", (5,), -0.7, -0.3))
    out.append((c, c.node("Mod", ["h", "w1"]), [B, 5]))
    # Strided slices: the gradient is scattered back into zeros.
    def sliced(name, value, starts, ends, axes, steps):
        c.inits += [const(name + "_st", np.array(starts, np.int64)),
                    const(name + "_en", np.array(ends, np.int64)),
                    const(name + "_ax", np.array(axes, np.int64)),
                    const(name + "_sp", np.array(steps, np.int64))]
        return c.node("Slice", [value] + [name + s for s in ("_st", "_en", "_ax", "_sp")])

    c = Case("slice_step2")
    out.append((c, sliced("s", "h", [0], [5], [1], [2]), [B, 3]))
    c = Case("slice_step3_end_clamped")  # 1, 4 from an end past the axis
    out.append((c, sliced("s", "h", [1], [100], [1], [3]), [B, 2]))
    c = Case("slice_reverse")
    out.append((c, sliced("s", "h", [-1], [-100], [1], [-1]), [B, 5]))
    c = Case("slice_negative_step_clamped")  # 4, 2, 0 from a start past the axis
    out.append((c, sliced("s", "h", [10], [-100], [1], [-2]), [B, 3]))
    c = Case("slice_negative_step_partial")  # 3, 1: stops before the end
    out.append((c, sliced("s", "h", [-2], [0], [1], [-2]), [B, 2]))
    c = Case("slice_multi_axis_steps")
    c.inits += [weight("proj", (5, 4 * 7)), const("map_shape", np.array([-1, 4, 7], np.int64))]
    m = c.node("Reshape", [c.node("MatMul", ["h", "proj"]), "map_shape"])
    # axis 1: 2, 1, 0; axis 2: 6, 3 from a clamped start.
    s = sliced("s", m, [-2, 100], [-100, 0], [1, 2], [-1, -3])
    out.append((c, c.node("Flatten", [s], axis=1), [B, 6]))
    c = Case("slice_mixed_steps_3d")
    c.inits += [weight("proj", (5, 5 * 6)), const("map_shape", np.array([-1, 5, 6], np.int64))]
    m = c.node("Reshape", [c.node("MatMul", ["h", "proj"]), "map_shape"])
    # axis 2: 1, 3, 5; axis 1: 1, 2, 3 (step 1 with a negative end).
    s = sliced("s", m, [1, 1], [6, -1], [2, 1], [2, 1])
    out.append((c, c.node("Flatten", [s], axis=1), [B, 9]))
    # Reflect and edge pads add each copy's gradient onto its source.
    def padded(name, value, pads, mode):
        c.inits.append(const(name, np.array(pads, np.int64)))
        return c.node("Pad", [value, name], mode=mode)

    c = Case("pad_reflect")
    out.append((c, padded("pads", "h", [0, 2, 0, 3], "reflect"), [B, 10]))
    c = Case("pad_edge")
    out.append((c, padded("pads", "h", [0, 1, 0, 3], "edge"), [B, 9]))
    c = Case("pad_reflect_wraps")  # pads past the extent repeat the reflection
    out.append((c, padded("pads", "h", [0, 6, 0, 9], "reflect"), [B, 20]))
    c = Case("pad_reflect_crop")  # a negative pad crops after the reflection
    out.append((c, padded("pads", "h", [0, -1, 0, 3], "reflect"), [B, 7]))
    c = Case("pad_edge_crop")
    out.append((c, padded("pads", "h", [0, 2, 0, -2], "edge"), [B, 5]))

    def padded_map(name, mode, shape, pads, out_shape):
        c = Case(name)
        c.inits += [weight("proj", (5, int(np.prod(shape)))),
                    const("map_shape", np.array([-1] + list(shape), np.int64)),
                    const("pads", np.array(pads, np.int64))]
        m = c.node("Reshape", [c.node("MatMul", ["h", "proj"]), "map_shape"])
        p = c.node("Pad", [m, "pads"], mode=mode)
        return c, c.node("Flatten", [p], axis=1), [B, int(np.prod(out_shape))]

    out.append(padded_map("pad_reflect_2d", "reflect", (2, 4, 5),
                          [0, 0, 1, 2, 0, 0, 3, 1], (2, 8, 8)))
    out.append(padded_map("pad_edge_3_axes", "edge", (2, 3, 4),
                          [0, 1, 2, 1, 0, 1, 1, 3], (4, 6, 8)))
    out.append(padded_map("pad_reflect_unit_axis", "reflect", (1, 3, 4),
                          [0, 2, 0, 1, 0, 1, 2, 1], (4, 5, 6)))
    # ReduceProd, also with zeros in the reduced groups: an element gets the
    # product of the others, so with one zero only the zero gets a gradient
    # and with two or more nobody does. The zeros are entries of a trained
    # factor, so the finite differences move them off zero.
    c = Case("reduceprod")
    c.inits += [weight("w1", (1, 5, 3)), const("ax2", np.array([2], np.int64))]
    r = c.node("Mul", [c.node("Unsqueeze", ["h", "ax2"]), "w1"])
    out.append((c, c.node("ReduceProd", [r], axes=[2], keepdims=0), [B, 5]))

    def with_zeros(shape, zeros):
        w = RNG.uniform(0.7, 1.3, size=shape) * RNG.choice([-1.0, 1.0], size=shape)
        for index in zeros:
            w[index] = 0.0
        return numpy_helper.from_array(w.astype(np.float32), "w1")

    c = Case("reduceprod_zeros")
    # Groups (rows of 3) with no, one, two and three zeros.
    c.inits += [with_zeros((1, 5, 3), [(0, 1, 1), (0, 2, 0), (0, 2, 2), (0, 3, slice(None))]),
                const("ax2", np.array([2], np.int64))]
    r = c.node("Mul", [c.node("Unsqueeze", ["h", "ax2"]), "w1"])
    out.append((c, c.node("ReduceProd", [r], axes=[-1], keepdims=0), [B, 5]))
    # Longer products take tanh, so that they stay near 1 and the steps of
    # the finite differences stay small next to their curvature. (Tanh
    # after the unsqueeze: a gemm's fused activation read through a reshape
    # alias gets no buffer in the stage code today.)
    c = Case("reduceprod_keepdims_two_axes_zeros")
    # [B, 5, 2, 3] over the last two axes: groups of 6 with 0, 1 and 2 zeros.
    c.inits += [with_zeros((1, 5, 2, 3), [(0, 1, 1, 2), (0, 3, 0, 0), (0, 3, 1, 1),
                                          (0, 4, 0, 2)]),
                const("ax23", np.array([2, 3], np.int64))]
    r = c.node("Mul", [c.node("Tanh", [c.node("Unsqueeze", ["h", "ax23"])]), "w1"])
    p = c.node("ReduceProd", [r], axes=[2, 3], keepdims=1)
    out.append((c, c.node("Flatten", [p], axis=1), [B, 5]))
    c = Case("reduceprod_keepdims_one_zero")
    # A [B, 2, 2] map over axes -2 and -1 with one zero in each sample's
    # group: only w1's zero entry gets a gradient.
    c.inits += [weight("proj", (5, 4)), const("map_shape", np.array([-1, 2, 2], np.int64)),
                with_zeros((1, 2, 2), [(0, 1, 0)])]
    m = c.node("Reshape", [c.node("MatMul", ["h", "proj"]), "map_shape"])
    p = c.node("ReduceProd", [c.node("Mul", [m, "w1"])], axes=[-2, -1], keepdims=1)
    out.append((c, c.node("Flatten", [p], axis=1), [B, 1]))
    # More batch norm (here, so that the cases above keep their weights):
    # with the running statistics, and on [B, 3] (a tanh first: batch
    # statistics cancel any shift shared by the batch, so b0's exact
    # gradient through a linear map would be zero).
    c, m = spatial("batch_norm_running", (3, 2, 2))
    c.compile_args = ["--batch-norm=running"]
    out.append(flat(c, batch_norm(c, m), (3, 2, 2)))
    c, m = spatial("batch_norm_2d", (3,))
    out.append((c, batch_norm(c, c.node("Tanh", [m])), [B, 3]))
    for case, _, _ in out:
        if case.name in KINKED:
            case.epsilon = "1e-3"
    # Ops legalized into others (ConvTranspose as conv_grad_input, the rest
    # decomposed); last, so the shared generator's draws for the cases above
    # stay as they were.
    c, m = spatial("conv_transpose_stride_pads_bias", (3, 3, 3))
    c.inits += [weight("wt", (3, 2, 3, 3), -0.3, 0.3), weight("bt", (2,))]
    out.append(flat(c, c.node("ConvTranspose", [m, "wt", "bt"], strides=[2, 2],
                              pads=[1, 1, 1, 1], output_padding=[1, 1]), (2, 6, 6)))
    c, m = spatial("conv_transpose_groups_dilation_1d", (4, 5))
    c.inits.append(weight("wt", (4, 1, 3), -0.3, 0.3))
    out.append(flat(c, c.node("ConvTranspose", [m, "wt"], group=2, strides=[2],
                              dilations=[2]), (2, 13)))
    c, m = spatial("instance_norm", (3, 2, 4))
    c.inits += [weight("si", (3,), 0.5, 1.5), weight("bi", (3,))]
    out.append(flat(c, c.node("InstanceNormalization", [m, "si", "bi"]), (3, 2, 4)))
    c, m = spatial("tile", (2, 3))
    c.inits.append(const("reps", np.array([1, 2, 1], np.int64)))
    out.append(flat(c, c.node("Tile", [m, "reps"]), (4, 3)))
    c, m = spatial("resize_nearest", (2, 2, 3))
    c.inits.append(const("scales", np.array([1, 1, 2, 2], np.float32)))
    out.append(flat(c, c.node("Resize", [m, "", "scales"], mode="nearest",
                              coordinate_transformation_mode="asymmetric",
                              nearest_mode="floor"), (2, 4, 6)))
    c, m = spatial("depth_to_space", (8, 2, 3))
    out.append(flat(c, c.node("DepthToSpace", [m], blocksize=2, mode="CRD"), (2, 4, 6)))
    c, m = spatial("resize_linear", (2, 3, 4))
    c.inits.append(const("scales_lin", np.array([1, 1, 1.5, 2], np.float32)))
    out.append(flat(c, c.node("Resize", [m, "", "scales_lin"], mode="linear"), (2, 4, 8)))
    c, m = spatial("resize_cubic_shrink", (2, 5, 6))
    c.inits.append(const("sizes_cub", np.array([B, 2, 3, 4], np.int64)))
    out.append(flat(c, c.node("Resize", [m, "", "", "sizes_cub"], mode="cubic",
                              coordinate_transformation_mode="align_corners"), (2, 3, 4)))
    c, m = spatial("lrn", (5, 2, 3))
    out.append(flat(c, c.node("LRN", [m], size=3, alpha=0.5, beta=0.75, bias=1.5),
                    (5, 2, 3)))
    c, m = spatial("trilu_lower", (3, 4))
    c.inits.append(const("trilu_k", np.array(1, np.int64)))
    out.append(flat(c, c.node("Trilu", [m, "trilu_k"], upper=0), (3, 4)))
    c, m = spatial("cumsum_exclusive_reverse", (3, 5))
    c.inits.append(const("cumsum_axis", np.array(2, np.int64)))
    out.append(flat(c, c.node("CumSum", [m, "cumsum_axis"], exclusive=1, reverse=1),
                    (3, 5)))
    # Fixed indices (repeated and negative ones included): a repeated
    # position's gradient is the sum of its uses.
    c, m = spatial("gather_elements", (3, 4))
    picks = np.array([[0, 2, -1, 1], [1, 1, -3, 2]], np.int64)
    c.inits.append(const("picks", np.broadcast_to(picks, (B, 2, 4)).copy()))
    out.append(flat(c, c.node("GatherElements", [m, "picks"], axis=1), (2, 4)))
    c, m = spatial("gather_nd", (3, 4))
    rows = np.array([[[2], [0], [-1]]], np.int64)
    c.inits.append(const("rows", np.broadcast_to(rows, (B, 3, 1)).copy()))
    out.append(flat(c, c.node("GatherND", [m, "rows"], batch_dims=1), (3, 4)))
    # TopK's values (its indices carry no gradient); a smaller step, as for
    # the other ops with kinks (the order changes between samples).
    c, m = spatial("top_k", (3, 4))
    c.epsilon = "1e-3"
    c.inits.append(const("top_k_k", np.array([2], np.int64)))
    values, _ = c.node("TopK", [m, "top_k_k"], ["top_k_values", "top_k_indices"], axis=2)
    out.append(flat(c, values, (3, 2)))
    # Hardmax is piecewise constant: training through a model that uses it
    # must still work, with the gradient coming from the other path only.
    c = Case("hardmax_side")
    c.inits.append(weight("w2", (5, 5)))
    out.append((c, c.node("Add", [c.node("MatMul", ["h", "w2"]),
                                  c.node("Hardmax", ["h"], axis=1)]), [B, 5]))
    # A trainable operand, a transposed output and a summed-away label.
    c, m = spatial("einsum", (3, 4))
    c.inits.append(weight("we", (4, 2, 2)))
    out.append(flat(c, c.node("Einsum", [m, "we"], equation="bij,jkl->bki"), (2, 3)))
    # Elementary functions composed from exp, log, sqrt, sin and cos, each
    # fed where it is smooth and finite.
    out.append(unary("tan", "Tan", pre="Tanh"))
    out.append(unary("atan", "Atan"))
    for op in ["Asin", "Acos"]:
        c = Case(op.lower())
        c.inits.append(const(op.lower() + "_scale", np.array(0.8, np.float32)))
        out.append((c, c.node(op, [c.node("Mul", [c.node("Tanh", ["h"]),
                                                   op.lower() + "_scale"])]), [B, 5]))
    out.append(unary("sinh", "Sinh"))
    out.append(unary("cosh", "Cosh"))
    out.append(unary("asinh", "Asinh"))
    c = Case("acosh")
    c.inits.append(const("acosh_one", np.array(1.2, np.float32)))
    out.append((c, c.node("Acosh", [c.node("Add", [c.node("Softplus", ["h"]), "acosh_one"])]),
                [B, 5]))
    c = Case("atanh")
    c.inits.append(const("atanh_half", np.array(0.7, np.float32)))
    out.append((c, c.node("Atanh", [c.node("Mul", [c.node("Tanh", ["h"]), "atanh_half"])]),
                [B, 5]))
    # lambd == bias keeps Shrink continuous (soft shrinkage).
    out.append(unary("soft_shrink", "Shrink", lambd=0.4, bias=0.4))
    # A bound computed at run time: the gradient reaches it too.
    c = Case("clip_runtime_bound")
    out.append((c, c.node("Clip", [c.node("Sin", ["h"]),
                                   c.node("ReduceMean", ["h"], keepdims=0)]), [B, 5]))
    # Loss ops inside the model: per-sample losses with class weights and
    # an ignored label, and a weighted mean added back onto h.
    c = Case("nll_loss_weighted_ignore")
    c.inits += [const("labels", np.array([1, 4, -100, 0], np.int64)),
                weight("class_w", (5,), 0.5, 1.5), const("ax_1", np.array([1], np.int64))]
    losses = c.node("NegativeLogLikelihoodLoss",
                    [c.node("LogSoftmax", ["h"], axis=1), "labels", "class_w"],
                    reduction="none", ignore_index=-100)
    out.append((c, c.node("Unsqueeze", [losses, "ax_1"]), [B, 1]))
    c = Case("softmax_cross_entropy_mean")
    c.inits += [const("sce_labels", np.array([2, 0, 3, 2], np.int64)),
                weight("sce_w", (5,), 0.5, 1.5)]
    mean = c.node("SoftmaxCrossEntropyLoss", ["h", "sce_labels", "sce_w"])
    out.append((c, c.node("Add", ["h", mean]), [B, 5]))
    # BatchNormalization with training_mode=1 (batch statistics built from
    # reductions) and MeanVarianceNormalization.
    c, m = spatial("batch_norm_training_mode", (3, 2, 2))
    c.inits += [weight("bn_s", (3,), 0.5, 1.5), weight("bn_b", (3,)),
                const("bn_m", np.zeros(3, np.float32)), const("bn_v", np.ones(3, np.float32))]
    y, _, _ = c.node("BatchNormalization", [m, "bn_s", "bn_b", "bn_m", "bn_v"],
                     ["bn_y", "bn_running_mean", "bn_running_var"], training_mode=1)
    out.append(flat(c, y, (3, 2, 2)))
    c, m = spatial("mean_variance_normalization", (3, 2, 2))
    out.append(flat(c, c.node("MeanVarianceNormalization", [m]), (3, 2, 2)))
    # Recurrent ops, unrolled into gemms and gates: gradients reach W, R
    # and B through every step (batch-first sequences of 3 steps).
    unrolled = ["--recurrence-unroll-limit", "512"]
    c, m = spatial("lstm_bidirectional", (3, 2))
    c.compile_args = unrolled
    c.inits += [weight("lw", (2, 16, 2)), weight("lr", (2, 16, 4)), weight("lb", (2, 32))]
    y = c.node("LSTM", [m, "lw", "lr", "lb"], ["lstm_y"], hidden_size=4, layout=1,
               direction="bidirectional")
    out.append(flat(c, y, (3, 2, 4)))
    c, m = spatial("gru_reverse_linear_before_reset", (3, 2))
    c.compile_args = unrolled
    c.inits += [weight("gw", (1, 12, 2)), weight("gr", (1, 12, 4)), weight("gb", (1, 24))]
    _, last = c.node("GRU", [m, "gw", "gr", "gb"], ["gru_y", "gru_h"], hidden_size=4,
                     layout=1, direction="reverse", linear_before_reset=1)
    out.append(flat(c, last, (1, 4)))
    c, m = spatial("gru_rnn_stacked", (3, 2))
    c.compile_args = unrolled
    c.inits += [weight("sw", (1, 9, 2)), weight("sr", (1, 9, 3)),
                weight("rw", (1, 3, 3)), weight("rr", (1, 3, 3)),
                const("seq_shape", np.array([0, 3, 3], np.int64))]
    g = c.node("Reshape", [c.node("GRU", [m, "sw", "sr"], ["s_y"], hidden_size=3, layout=1),
                           "seq_shape"])
    out.append(flat(c, c.node("RNN", [g, "rw", "rr"], ["r_y"], hidden_size=3, layout=1),
                    (3, 1, 3)))
    # Run-time indices (duplicates and negatives included): the adjoints are
    # scatters and gathers by the fed values. Last, so that the cases above
    # keep drawing the same random weights.
    c, m = spatial("gather_elements_run_time", (3, 4))
    c.inputs.append(helper.make_tensor_value_info("picks", TensorProto.INT64, ["N", 2, 4]))
    c.feeds["picks"] = RNG.integers(-3, 3, size=(B, 2, 4)).astype(np.int64)
    c.feeds["picks"][:, 1, 0] = c.feeds["picks"][:, 0, 0]  # a duplicate
    out.append(flat(c, c.node("GatherElements", [m, "picks"], axis=1), (2, 4)))

    def scattered(name, shape, updates_shape):
        """spatial() data and a second trained projection as the updates."""
        c, m = spatial(name, shape)
        c.inits += [weight("proj_u", (5, int(np.prod(updates_shape)))),
                    const("u_shape", np.array([-1] + list(updates_shape), np.int64))]
        return c, m, c.node("Reshape", [c.node("MatMul", ["h", "proj_u"]), "u_shape"])

    # Replacing: no duplicate target per column.
    c, m, u = scattered("scatter_elements", (3, 4), (2, 4))
    targets = np.array([[0, 2, 1, 0], [2, -2, 0, 1]], np.int64)
    c.inits.append(const("targets", np.broadcast_to(targets, (B, 2, 4)).copy()))
    out.append(flat(c, c.node("ScatterElements", [m, "targets", u], axis=1), (3, 4)))
    c, m, u = scattered("scatter_elements_add_run_time", (3, 4), (3, 2))
    c.inputs.append(helper.make_tensor_value_info("targets", TensorProto.INT64, ["N", 3, 2]))
    c.feeds["targets"] = RNG.integers(-4, 4, size=(B, 3, 2)).astype(np.int64)
    c.feeds["targets"][:, :, 1] = c.feeds["targets"][:, :, 0]  # duplicates
    out.append(flat(c, c.node("ScatterElements", [m, "targets", u], axis=2,
                              reduction="add"), (3, 4)))
    c, m, u = scattered("scatter_nd_add", (3, 4), (2, 4))
    c.inputs.append(helper.make_tensor_value_info("rows", TensorProto.INT64, ["N", 2, 2]))
    c.feeds["rows"] = np.stack([np.stack([np.full(2, b), [2, 2]], axis=1)
                                for b in range(B)]).astype(np.int64)  # one row twice
    out.append(flat(c, c.node("ScatterND", [m, "rows", u], reduction="add"), (3, 4)))
    # SegNet's unpooling: MaxPool's values scattered back to their positions
    # (a kink where two window elements swap as the maximum).
    c, m = spatial("max_unpool_of_max_pool", (2, 4, 4))
    pooled, where = c.node("MaxPool", [m], outputs=["pooled", "where"], kernel_shape=[2, 2],
                           strides=[2, 2])
    out.append(flat(c, c.node("MaxUnpool", [pooled, where], kernel_shape=[2, 2], strides=[2, 2]),
                    (2, 4, 4)))
    c.epsilon = "1e-3"
    # A spatial transformer's sampler: gradients to the image and, through
    # the bilinear weights, to the grid (kinks where a point crosses a pixel).
    c, m = spatial("grid_sample_bilinear", (2, 4, 4))
    c.inits += [weight("proj_g", (5, 3 * 3 * 2)), const("g_shape", np.array([-1, 3, 3, 2],
                                                                            np.int64))]
    g = c.node("Tanh", [c.node("Reshape", [c.node("MatMul", ["h", "proj_g"]), "g_shape"])])
    out.append(flat(c, c.node("GridSample", [m, g], align_corners=0), (2, 3, 3)))
    c.epsilon = "1e-3"
    # Spectrograms: gradients through the DFT's matmul to the signal, and
    # through the frames' gather and multiply to a trainable window.
    c, m = spatial("stft_trainable_window", (12, 1))
    c.inits += [weight("window", (4,), 0.5, 1.5), const("step", np.array(4, np.int64))]
    out.append(flat(c, c.node("STFT", [m, "step", "window"]), (3, 3, 2)))
    # A detection head's pooling: gradients to the feature map through the
    # bilinear samples' gathers (one region per sample).
    c, m = spatial("roi_align_avg", (2, 5, 5))
    c.inits += [const("rois", np.array([[0.3, 0.2, 3.7, 4.1], [1.0, 0.5, 2.5, 3.0],
                                        [-0.5, 1.2, 4.4, 3.3], [2.1, 2.2, 4.9, 4.8]],
                                       np.float32)),
                const("roi_batch", np.arange(B, dtype=np.int64))]
    out.append(flat(c, c.node("RoiAlign", [m, "rois", "roi_batch"], output_height=2,
                              output_width=2, sampling_ratio=2), (2, 2, 2)))
    c, m = spatial("dft_complex_inverse", (3, 2, 2))
    out.append(flat(c, c.node("DFT", [m], axis=1, inverse=1), (3, 2, 2)))
    # Ops of opsets 18 to 20 (and LpPool), decomposed into ops with rules.
    c, m = spatial("group_norm_18", (4, 2, 3))
    c.opset = 18
    c.inits += [weight("sg", (2,), 0.5, 1.5), weight("bg", (2,))]
    out.append(flat(c, c.node("GroupNormalization", [m, "sg", "bg"], num_groups=2),
                    (4, 2, 3)))
    c, m = spatial("group_norm_21", (4, 2, 3))
    c.opset = 21
    c.inits += [weight("sg21", (4,), 0.5, 1.5), weight("bg21", (4,))]
    out.append(flat(c, c.node("GroupNormalization", [m, "sg21", "bg21"], num_groups=2),
                    (4, 2, 3)))
    c, pred, shape = unary("mish_18", "Mish")
    c.opset = 18
    out.append((c, pred, shape))
    c, m = spatial("col2im_18", (8, 4))
    c.opset = 18
    c.inits += [const("image", np.array([3, 3], np.int64)),
                const("block", np.array([2, 2], np.int64))]
    out.append(flat(c, c.node("Col2Im", [m, "image", "block"]), (2, 3, 3)))
    c, m = spatial("center_crop_pad_18", (2, 5, 3))
    c.opset = 18
    c.inits.append(const("crop", np.array([3, 6], np.int64)))
    out.append(flat(c, c.node("CenterCropPad", [m, "crop"], axes=[2, 3]), (2, 3, 6)))
    c, m = spatial("resize_linear_antialias_18", (2, 6, 8))
    c.opset = 18
    c.inits.append(const("scales_aa", np.array([0.5, 0.5], np.float32)))
    out.append(flat(c, c.node("Resize", [m, "", "scales_aa"], mode="linear", antialias=1,
                              axes=[2, 3]), (2, 3, 4)))
    c, m = spatial("pad_wrap_19", (2, 3, 4))
    c.opset = 19
    c.inits.append(const("wrap_pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)))
    out.append(flat(c, c.node("Pad", [m, "wrap_pads"], mode="wrap"), (2, 6, 7)))
    c, m = spatial("lp_pool_p2", (2, 4, 4))
    out.append(flat(c, c.node("LpPool", [m], kernel_shape=[2, 2], strides=[2, 2]), (2, 2, 2)))
    c, m = spatial("lp_pool_p3_pads", (2, 3, 3))
    out.append(flat(c, c.node("LpPool", [m], kernel_shape=[2, 2], p=3, pads=[1, 1, 0, 0]),
                    (2, 3, 3)))
    c.epsilon = "1e-3"
    c, m = spatial("global_lp_pool_p2", (3, 2, 2))
    out.append(flat(c, c.node("GlobalLpPool", [m]), (3, 1, 1)))
    # A spatial transformer: theta from h, AffineGrid, then GridSample;
    # gradients to the image and, through the grid, to theta's projection.
    c, m = spatial("affine_grid_sampler_20", (2, 4, 4))
    c.opset = 20
    c.inits += [weight("proj_t", (5, 6), -0.3, 0.3),
                const("t_shape", np.array([-1, 2, 3], np.int64)),
                const("grid_size", np.array([B, 2, 3, 3], np.int64))]
    theta = c.node("Reshape", [c.node("MatMul", ["h", "proj_t"]), "t_shape"])
    grid = c.node("AffineGrid", [theta, "grid_size"])
    out.append(flat(c, c.node("GridSample", [m, grid]), (2, 3, 3)))
    # Between two limits: at 5e-3 a step of theta carries sample points
    # across pixel edges (bilinear kinks); at 1e-3 the loss moves along the
    # image projection's small derivative (3e-3) by little more than its own
    # f32 rounding, and the difference is off by 3%.
    c.epsilon = "2e-3"
    # Control flow, resolved at compile time: the gradients run through the
    # unrolled or selected ops, and reach weights that bodies read from the
    # outer scope.
    c = Case("loop_rnn_cell")
    c.inits += [weight("wl", (5, 5), -0.5, 0.5), const("steps", np.array(3, np.int64))]
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["s", "wl"], ["sw"]),
         helper.make_node("Add", ["sw", "h"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["s_out"])], "rnn",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, None)])
    out.append((c, c.node("Loop", ["steps", "", "h"], body=body), [B, 5]))
    c = Case("if_runtime_condition")
    c.inits += [weight("wi", (5,)), const("zero_i", np.array(0.0, np.float32))]
    branch = lambda name, op, inputs: helper.make_graph(
        [helper.make_node(op, inputs, ["o_" + name])], name, [],
        [helper.make_tensor_value_info("o_" + name, TensorProto.FLOAT, [B, 5])])
    # Computed at run time, and true: the gradient to wi must come through
    # hps.where's selected side.
    positive = c.node("Greater", [c.node("ReduceSumSquare", ["h"], keepdims=0), "zero_i"])
    out.append((c, c.node("If", [positive], then_branch=branch("then", "Mul", ["h", "wi"]),
                          else_branch=branch("else", "Sin", ["h"])), [B, 5]))
    c = Case("scan_decayed_sum")
    c.inits += [weight("decay", (1,), 0.2, 0.8), const("s_zero", np.zeros(B, np.float32))]
    body = helper.make_graph(
        [helper.make_node("Mul", ["acc", "decay"], ["kept"]),
         helper.make_node("Add", ["kept", "col"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["seen"])], "scan",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [B]) for n in ["acc", "col"]],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [B]) for n in ["acc_out", "seen"]])
    _, seen = c.node("Scan", ["s_zero", "h"], ["last", "seen"], body=body, num_scan_inputs=1,
                     scan_input_axes=[1], scan_output_axes=[1])
    out.append((c, seen, [B, 5]))
    # Ops of opsets 23 and 24, decomposed into ops with rules.
    c = Case("attention_grouped_causal_mask_23")
    c.opset = 23
    c.inits += [weight("proj_q", (5, 12)), weight("proj_k", (5, 6)), weight("proj_v", (5, 6)),
                const("q_shape", np.array([-1, 3, 4], np.int64)),
                const("kv_shape", np.array([-1, 3, 2], np.int64)),
                # Row 1 sees no key: its output is zero and so its gradient.
                const("keep", np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1]], bool))]
    q, k, v = (c.node("Reshape", [c.node("MatMul", ["h", proj]), shape])
               for proj, shape in [("proj_q", "q_shape"), ("proj_k", "kv_shape"),
                                   ("proj_v", "kv_shape")])
    out.append(flat(c, c.node("Attention", [q, k, v, "keep"], q_num_heads=2, kv_num_heads=1,
                              is_causal=1, softcap=3.0), (3, 4)))
    c, m = spatial("rms_norm_23", (2, 6))
    c.opset = 23
    c.inits.append(weight("rms_scale", (6,), 0.5, 1.5))
    out.append(flat(c, c.node("RMSNormalization", [m, "rms_scale"]), (2, 6)))
    c, m = spatial("rotary_embedding_23", (3, 8))
    c.opset = 23
    angles = RNG.uniform(0, 6.3, (10, 2))
    c.inits += [const("rot_cos", np.cos(angles).astype(np.float32)),
                const("rot_sin", np.sin(angles).astype(np.float32)),
                const("rot_positions", RNG.integers(0, 10, (B, 3)).astype(np.int64))]
    out.append(flat(c, c.node("RotaryEmbedding", [m, "rot_cos", "rot_sin", "rot_positions"],
                              num_heads=2, rotary_embedding_dim=4, interleaved=1), (3, 8)))
    c, pred, shape = unary("swish_24", "Swish", alpha=0.7)
    c.opset = 24
    out.append((c, pred, shape))
    c, m = spatial("tensor_scatter_circular_24", (6, 2))
    c.opset = 24
    c.inits += [weight("proj_u", (5, 4)), const("u_shape", np.array([-1, 2, 2], np.int64)),
                const("write_at", np.array([0, 3, 4, 5], np.int64))]
    update = c.node("Reshape", [c.node("MatMul", ["h", "proj_u"]), "u_shape"])
    out.append(flat(c, c.node("TensorScatter", [m, update, "write_at"], axis=1,
                              mode="circular"), (6, 2)))
    # The same ops as one hps.recurrence each (backpropagation through time
    # in the RecurrentGrad kernel): sequences of 5 steps, every optional
    # input trainable or fed, and both state outputs reaching the loss.
    kernel = ["--recurrence-unroll-limit", "0"]
    lens = np.array([5, 3, 0, 1], np.int32)  # a full, a partial, an empty row
    c, m = spatial("lstm_kernel_bidirectional_states_peepholes_lengths", (5, 2))
    c.compile_args = kernel
    c.inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"]))
    c.feeds["lens"] = lens
    c.inits += [weight("kw", (2, 12, 2)), weight("kr", (2, 12, 3)), weight("kb", (2, 24)),
                weight("kh", (B, 2, 3)), weight("kc", (B, 2, 3)), weight("kp", (2, 9))]
    y = c.node("LSTM", [m, "kw", "kr", "kb", "lens", "kh", "kc", "kp"], ["k_y"], hidden_size=3,
               layout=1, direction="bidirectional", clip=1.5)
    out.append(flat(c, y, (5, 2, 3)))
    c, m = spatial("lstm_kernel_last_h_plus_c", (5, 2))
    c.compile_args = kernel
    c.inits += [weight("lw", (1, 16, 2)), weight("lr", (1, 16, 4)), weight("lb", (1, 32))]
    _, h_last, c_last = c.node("LSTM", [m, "lw", "lr", "lb"], ["l_y", "l_h", "l_c"],
                               hidden_size=4, layout=1)
    out.append(flat(c, c.node("Add", [h_last, c_last]), (1, 4)))
    c, m = spatial("gru_kernel_reverse_states", (5, 2))
    c.compile_args = kernel
    c.inits += [weight("gw", (1, 12, 2)), weight("gr", (1, 12, 4)), weight("gb", (1, 24)),
                weight("gh", (B, 1, 4))]
    y, _ = c.node("GRU", [m, "gw", "gr", "gb", "", "gh"], ["g_y", "g_h"], hidden_size=4,
                  layout=1, direction="reverse")
    out.append(flat(c, y, (5, 1, 4)))
    c, m = spatial("gru_kernel_linear_before_reset_lengths", (5, 2))
    c.compile_args = kernel
    c.inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"]))
    c.feeds["lens"] = lens
    c.inits += [weight("gw", (2, 9, 2)), weight("gr", (2, 9, 3)), weight("gb", (2, 18))]
    _, last = c.node("GRU", [m, "gw", "gr", "gb", "lens"], ["g_y", "g_h"], hidden_size=3,
                     layout=1, direction="bidirectional", linear_before_reset=1)
    out.append(flat(c, last, (2, 3)))
    c, m = spatial("rnn_kernel_relu_lengths", (5, 2))
    c.compile_args, c.epsilon = kernel, "1e-3"
    c.inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"]))
    c.feeds["lens"] = lens
    c.inits += [weight("rw", (1, 3, 2)), weight("rr", (1, 3, 3), -0.5, 0.5), weight("rb", (1, 6))]
    y = c.node("RNN", [m, "rw", "rr", "rb", "lens"], ["r_y"], hidden_size=3, layout=1,
               activations=["Relu"])
    out.append(flat(c, y, (5, 1, 3)))
    return out


def run_case(heterps, cluster, strategy, work, case, pred, shape):
    """Compiles and checks one case; returns (failed, report text)."""
    model_path = os.path.join(work, case.name + ".onnx")
    onnx.save(case.model(pred, shape), model_path)
    bundle = os.path.join(work, case.name + ".bundle")
    step = subprocess.run(
        [heterps, "compile", model_path, "--cluster", cluster, "--throughput", "1",
         "--strategy", strategy, "--train", "--loss", case.loss, "--optimizer", "sgd",
         "--batch", str(B)] + case.compile_args + ["-o", bundle],
        capture_output=True, text=True)
    if step.returncode == 0:
        args = [heterps, "gradcheck", bundle, "--seed", "3", "--epsilon", case.epsilon]
        for name, array in case.feeds.items():
            path = os.path.join(work, f"{case.name}.{name}.npy")
            np.save(path, array)
            args += ["--input", f"{name}={path}"]
        step = subprocess.run(args, capture_output=True, text=True)
    text = (step.stdout + step.stderr).strip().replace("\n", "\n    ")
    verdict = "ok" if step.returncode == 0 else "FAIL"
    return step.returncode != 0, f"{case.name}: {verdict}\n    {text}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bin_dir")
    parser.add_argument("cluster")
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--strategy", default="cpu-only",
                        help="placement of every case (gpu-only checks the CUDA kernels)")
    parser.add_argument("--jobs", type=int, default=1, help="cases checked at once")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    heterps = os.path.join(args.bin_dir, "heterps")
    with tempfile.TemporaryDirectory(prefix="hps-gradcheck-") as work:
        selected = [c for c in cases() if not only or c[0].name in only]
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = pool.map(lambda c: run_case(heterps, args.cluster, args.strategy, work, *c),
                               selected)
            failed = 0
            for case_failed, report in results:  # in case order
                failed += case_failed
                print(report, flush=True)
    print(f"failed: {failed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
