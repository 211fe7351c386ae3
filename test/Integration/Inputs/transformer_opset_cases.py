#!/usr/bin/env python3
"""Writes models of what ONNX opsets 22 to 25 added or changed and HeterPS
supports as backend-test cases (OUT/test_opsetN_<case>/...), the outputs
computed by onnxruntime: Attention (23; nonpad_kv_seqlen, 24; sliding
windows, 25), RMSNormalization and RotaryEmbedding (23), Swish and
TensorScatter (24), QuantizeLinear's precision and DequantizeLinear's
output_dtype (23), and a net of ops whose only change at 22 was bfloat16.
node_suite_run.py then runs them through heterps compile + run.

Usage: transformer_opset_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from newer_opset_cases import write_all  # noqa: E402

rng = np.random.default_rng(23)
F = TensorProto.FLOAT
CASES = []


def case(name, opset, inputs, outputs, nodes, constants=None):
    """inputs: [(name, array)] fed at run time; outputs: [(name, rank)];
    constants: {name: array} initializers."""
    CASES.append((name, None, inputs, [(n, F, r) for n, r in outputs],
                  constants or {}, {}, nodes, opset))


def floats(*shape):
    return rng.uniform(-2.0, 2.0, shape).astype(np.float32)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def attention(name, opset, q, k, v, extra=(), outputs=("y",), **attrs):
    """One Attention node; `extra`: (input slot name, array or None)
    pairs for attn_mask, past_key, past_value, nonpad_kv_seqlen in order,
    a None leaving the slot empty."""
    inputs = [("q", q), ("k", k), ("v", v)]
    names = ["q", "k", "v"]
    for slot, value in extra:
        names.append(slot if value is not None else "")
        if value is not None:
            inputs.append((slot, value))
    while names[-1] == "":
        names.pop()
    out_names = list(outputs)
    case(name, opset, inputs, [(o, 3 if q.ndim == 3 and o == "y" else 4)
                               for o in out_names if o],
         [node("Attention", names, out_names, **attrs)])


# Attention (23): 4-D and 3-D, causal, cross, grouped heads, masks.
attention("attention_4d", 23, floats(2, 3, 5, 8), floats(2, 3, 5, 8), floats(2, 3, 5, 8))
attention("attention_4d_causal_scale", 23, floats(2, 3, 5, 8), floats(2, 3, 5, 8),
          floats(2, 3, 5, 6), is_causal=1, scale=0.2)
attention("attention_4d_cross_causal", 23, floats(1, 2, 4, 8), floats(1, 2, 6, 8),
          floats(1, 2, 6, 8), is_causal=1)
attention("attention_3d_grouped", 23, floats(2, 5, 32), floats(2, 6, 16), floats(2, 6, 12),
          q_num_heads=4, kv_num_heads=2)
attention("attention_3d_multi_query_causal", 23, floats(2, 5, 24), floats(2, 5, 8),
          floats(2, 5, 8), q_num_heads=3, kv_num_heads=1, is_causal=1)
mask = rng.uniform(size=(2, 1, 5, 5)) > 0.3
mask[0, 0, 2, :] = False  # a fully masked row gives zeros
attention("attention_bool_mask", 23, floats(2, 3, 5, 8), floats(2, 3, 5, 8),
          floats(2, 3, 5, 8), [("mask", mask)])
attention("attention_bool_mask_causal", 23, floats(2, 3, 5, 8), floats(2, 3, 5, 8),
          floats(2, 3, 5, 8), [("mask", mask)], is_causal=1)
attention("attention_float_mask_cross", 23, floats(1, 2, 5, 8), floats(1, 2, 7, 8),
          floats(1, 2, 7, 8), [("mask", floats(5, 7))])
# The past cache: present = concat(past, new); causal offset by the past.
attention("attention_past_cache_grouped_causal", 23, floats(2, 4, 2, 8), floats(2, 2, 2, 8),
          floats(2, 2, 2, 8),
          [("mask", None), ("past_key", floats(2, 2, 3, 8)), ("past_value", floats(2, 2, 3, 8))],
          outputs=("y", "present_key", "present_value"), is_causal=1)
attention("attention_3d_past_cache", 23, floats(1, 1, 16), floats(1, 1, 16), floats(1, 1, 16),
          [("mask", None), ("past_key", floats(1, 2, 4, 8)), ("past_value", floats(1, 2, 4, 8))],
          outputs=("y", "present_key", "present_value"), q_num_heads=2, kv_num_heads=2)
# qk_matmul_output in each mode, with a soft cap.
for mode in range(4):
    attention(f"attention_softcap_qk_output_mode{mode}", 23, floats(1, 2, 4, 8) * 3,
              floats(1, 2, 4, 8) * 3, floats(1, 2, 4, 8), [("mask", floats(4, 4))],
              outputs=("y", "", "", "qk"), softcap=2.0, qk_matmul_output_mode=mode)

# RMSNormalization (23).
case("rms_norm_last_axis", 23, [("x", floats(2, 5, 16))], [("y", 3)],
     [node("RMSNormalization", ["x", "scale"], ["y"])], {"scale": floats(16)})
case("rms_norm_axis1_epsilon", 23, [("x", floats(2, 3, 4, 5))], [("y", 4)],
     [node("RMSNormalization", ["x", "scale"], ["y"], axis=1, epsilon=1e-3)],
     {"scale": floats(4, 5)})

# RotaryEmbedding (23).
positions = rng.integers(0, 10, (2, 5)).astype(np.int64)
angles = rng.uniform(0, 6.3, (10, 4))
case("rotary_4d_position_ids", 23, [("x", floats(2, 3, 5, 8)), ("positions", positions)],
     [("y", 4)], [node("RotaryEmbedding", ["x", "cos", "sin", "positions"], ["y"])],
     {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)})
angles3 = rng.uniform(0, 6.3, (2, 5, 4))
case("rotary_3d_interleaved", 23, [("x", floats(2, 5, 16))], [("y", 3)],
     [node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=2, interleaved=1)],
     {"cos": np.cos(angles3).astype(np.float32), "sin": np.sin(angles3).astype(np.float32)})
angles2 = rng.uniform(0, 6.3, (10, 2))
case("rotary_partial_interleaved", 23,
     [("x", floats(1, 2, 5, 8)), ("positions", positions[:1])], [("y", 4)],
     [node("RotaryEmbedding", ["x", "cos", "sin", "positions"], ["y"], rotary_embedding_dim=4,
           interleaved=1)],
     {"cos": np.cos(angles2).astype(np.float32), "sin": np.sin(angles2).astype(np.float32)})

# QuantizeLinear's precision and DequantizeLinear's output_dtype (23).
case("quantize_precision_dequantize_output_dtype", 23, [("x", floats(3, 4) * 50)], [("y", 2)],
     [node("QuantizeLinear", ["x", "s", "z"], ["q"], precision=TensorProto.FLOAT),
      node("DequantizeLinear", ["q", "s", "z"], ["y"], output_dtype=TensorProto.FLOAT)],
     {"s": np.array(0.25, np.float32), "z": np.array(-3, np.int8)})

# Swish (24).
case("swish", 24, [("x", floats(3, 7))], [("y", 2)], [node("Swish", ["x"], ["y"])])
case("swish_alpha", 24, [("x", floats(3, 7))], [("y", 2)],
     [node("Swish", ["x"], ["y"], alpha=0.5)])

# TensorScatter (24): KV-cache writes.
cache = floats(2, 3, 8, 4)
case("tensor_scatter_prefill", 24, [("cache", cache), ("update", floats(2, 3, 5, 4))],
     [("y", 4)], [node("TensorScatter", ["cache", "update"], ["y"])])
case("tensor_scatter_linear_indices", 24,
     [("cache", cache), ("update", floats(2, 3, 2, 4)),
      ("at", np.array([1, 6], np.int64))],
     [("y", 4)], [node("TensorScatter", ["cache", "update", "at"], ["y"], axis=2)])
case("tensor_scatter_circular", 24,
     [("cache", cache), ("update", floats(2, 3, 3, 4)),
      ("at", np.array([7, 2], np.int64))],
     [("y", 4)], [node("TensorScatter", ["cache", "update", "at"], ["y"], mode="circular")])

# Attention with nonpad_kv_seqlen (24): a static cache written by
# TensorScatter, then read with per-sample lengths, causal and not.
lengths = np.array([3, 7], np.int64)
attention("attention_nonpad", 24, floats(2, 2, 1, 8), floats(2, 2, 8, 8), floats(2, 2, 8, 8),
          [("mask", None), ("past_key", None), ("past_value", None), ("lengths", lengths)])
attention("attention_nonpad_causal", 24, floats(2, 2, 3, 8), floats(2, 2, 8, 8),
          floats(2, 2, 8, 8),
          [("mask", None), ("past_key", None), ("past_value", None), ("lengths", lengths)],
          is_causal=1)
decode = [node("TensorScatter", ["k_cache", "k", "at"], ["k_all"]),
          node("TensorScatter", ["v_cache", "v", "at"], ["v_all"]),
          node("Add", ["at", "one"], ["lengths"]),
          node("Attention", ["q", "k_all", "v_all", "", "", "", "lengths"], ["y"], is_causal=1)]
case("decode_step_static_cache", 24,
     [("q", floats(2, 2, 1, 8)), ("k", floats(2, 2, 1, 8)), ("v", floats(2, 2, 1, 8)),
      ("k_cache", floats(2, 2, 6, 8)), ("v_cache", floats(2, 2, 6, 8)),
      ("at", np.array([2, 5], np.int64))],
     [("y", 4)], decode, {"one": np.array([1], np.int64)})

# Sliding windows (25).
attention("attention_window_causal", 25, floats(2, 2, 6, 8), floats(2, 2, 6, 8),
          floats(2, 2, 6, 8), is_causal=1, left_window_size=2)
attention("attention_window_both_sides", 25, floats(1, 2, 6, 8), floats(1, 2, 6, 8),
          floats(1, 2, 6, 8), [("mask", rng.uniform(size=(6, 6)) > 0.2)],
          left_window_size=1, right_window_size=1)

# Ops whose only change at 22 was bfloat16, at opset 22.
nodes22 = [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
           node("InstanceNormalization", ["c", "gamma", "beta"], ["n"]),
           node("Elu", ["n"], ["e"], alpha=0.5),
           node("MaxPool", ["e"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
           node("AveragePool", ["m"], ["a"], kernel_shape=[2, 2], pads=[1, 1, 0, 0]),
           node("HardSwish", ["a"], ["h"]),
           node("Softplus", ["h"], ["sp"]),
           node("Sin", ["sp"], ["s"]),
           node("Round", ["s"], ["r"]),
           node("Add", ["r", "sp"], ["t"]),
           node("Dropout", ["t"], ["d"]),
           node("GlobalAveragePool", ["d"], ["y"])]
case("ops_changed_22", 22, [("x", floats(2, 3, 8, 8))], [("y", 4)], nodes22,
     {"w": floats(4, 3, 3, 3), "gamma": floats(4), "beta": floats(4)})


if __name__ == "__main__":
    write_all(sys.argv[1], CASES)
