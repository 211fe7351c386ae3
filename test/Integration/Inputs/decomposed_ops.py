#!/usr/bin/env python3
"""ONNX ops that legalization decomposes into other hps ops, on the element
types and shapes ONNX's node suite leaves out (its Einsum cases sum f64,
which no CPU kernel does; its CumSum cases are f64 only; its GatherND
cases have no negative indices; its TopK cases have no ties or
infinities; its Hardmax cases are all opset 13; its Sinh, Cosh, Asinh,
Acosh and Atanh cases stay where the naive formulas are accurate; its
scatters are tiny and have no duplicate targets under a reduction; its
quantization cases have per-tensor scales or few ties; its ReverseSequence
cases are 2-D), and
a few ops with kernels of their own at the ends of their domains,
compiled and run against numpy.

  decomposed_ops.py HETERPS_BIN CLUSTER OUT_DIR

Prints `ok NAME max-error E` or `FAIL NAME: why` per case; exits 1 if any
case failed.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
         np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL,
         np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.uint32): TensorProto.UINT32,
         np.dtype(np.uint64): TensorProto.UINT64}
QUANTIZED_RANGE = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127)}


def along(values, axis, rank):
    """A per-axis operand shaped to broadcast against a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return values.reshape(shape)


def einsum(equation, *shapes):
    def build(rng):
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        names = [f"x{i}" for i in range(len(xs))]
        node = helper.make_node("Einsum", names, ["y"], equation=equation)
        return node, dict(zip(names, xs)), [], np.einsum(equation, *xs)
    return f"einsum '{equation}'", 12, build


def cumsum(shape, axis, dtype, exclusive=0, reverse=0):
    def build(rng):
        x = rng.integers(-100, 100, shape).astype(dtype)
        ref = np.flip(x, axis) if reverse else x
        ref = np.cumsum(ref, axis=axis).astype(dtype)
        if exclusive:
            ref = ref - (np.flip(x, axis) if reverse else x)
        ref = np.flip(ref, axis) if reverse else ref
        node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive,
                                reverse=reverse)
        axis_init = numpy_helper.from_array(np.array(axis, np.int64), "axis")
        return node, {"x": x}, [axis_init], ref
    name = f"cumsum {np.dtype(dtype).name} {shape} axis {axis}"
    return name + (" exclusive" if exclusive else "") + (" reverse" if reverse else ""), 14, build


def gather_elements(shape, index_shape, axis, dtype):
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        extent = shape[axis]
        idx = rng.integers(-extent, extent, index_shape).astype(dtype)
        ref = np.take_along_axis(x, np.where(idx < 0, idx + extent, idx), axis=axis)
        node = helper.make_node("GatherElements", ["x", "idx"], ["y"], axis=axis)
        return node, {"x": x, "idx": idx}, [], ref
    return f"gather_elements {shape} {index_shape} axis {axis} {np.dtype(dtype).name}", 13, build


def gather_nd(shape, index_shape, batch_dims):
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        depth = index_shape[-1]
        extents = np.array(shape[batch_dims:batch_dims + depth])
        idx = (rng.integers(0, 1 << 30, index_shape) % (2 * extents) - extents).astype(np.int64)
        wrapped = np.where(idx < 0, idx + extents, idx)
        batch = int(np.prod(index_shape[:batch_dims]))
        flat_x = x.reshape((batch,) + tuple(shape[batch_dims:]))
        flat_i = wrapped.reshape((batch, -1, depth))
        ref = np.stack([np.stack([flat_x[b][tuple(i)] for i in flat_i[b]]) for b in range(batch)])
        ref = ref.reshape(tuple(index_shape[:-1]) + tuple(shape[batch_dims + depth:]))
        node = helper.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=batch_dims)
        return node, {"x": x, "idx": idx}, [], ref
    return f"gather_nd {shape} {index_shape} batch_dims {batch_dims}", 13, build


REDUCERS = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply,
            "max": np.maximum, "min": np.minimum}


def scatter_elements(shape, index_shape, axis, reduction, dtype, index_dtype, opset=16):
    """Duplicate targets only under reductions (ONNX leaves `none`'s order
    open): each index column along `axis` is a permutation prefix then."""
    def build(rng):
        x = (rng.integers(-9, 9, shape) if dtype != np.float32
             else rng.standard_normal(shape)).astype(dtype)
        u = (rng.integers(-3, 4, index_shape) if dtype != np.float32
             else rng.standard_normal(index_shape)).astype(dtype)
        extent = shape[axis]
        if reduction == "none":
            order = np.argsort(rng.random(index_shape[:axis] + (extent,) + index_shape[axis + 1:]),
                               axis=axis)
            idx = np.take(order, np.arange(index_shape[axis]), axis=axis)
            idx = np.where(rng.random(index_shape) < 0.5, idx - extent, idx)
        else:
            idx = rng.integers(-extent, extent, index_shape)
        idx = idx.astype(index_dtype)
        ref = x.copy()
        wrapped = np.where(idx < 0, idx + extent, idx)
        for position in np.ndindex(*index_shape):
            target = list(position)
            target[axis] = wrapped[position]
            ref[tuple(target)] = REDUCERS[reduction](ref[tuple(target)], u[position])
        attrs = {"axis": axis} if reduction == "none" else {"axis": axis, "reduction": reduction}
        node = helper.make_node("ScatterElements", ["x", "idx", "u"], ["y"], **attrs)
        return node, {"x": x, "idx": idx, "u": u}, [], ref
    return (f"scatter_elements {reduction} {np.dtype(dtype).name} {shape} {index_shape} "
            f"axis {axis}"), opset, build


def scatter_nd(shape, index_shape, reduction, opset=16):
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        depth = index_shape[-1]
        extents = np.array(shape[:depth])
        count = int(np.prod(index_shape[:-1]))
        if reduction == "none":  # distinct tuples
            flat = rng.permutation(int(np.prod(extents)))[:count]
            idx = np.stack(np.unravel_index(flat, extents), axis=-1)
            idx = np.where(rng.random(idx.shape) < 0.5, idx - extents, idx)
        else:
            idx = rng.integers(0, 1 << 30, (count, depth)) % (2 * extents) - extents
        idx = idx.reshape(index_shape).astype(np.int64)
        u = rng.standard_normal(tuple(index_shape[:-1]) + tuple(shape[depth:])).astype(np.float32)
        ref = x.copy()
        wrapped = np.where(idx < 0, idx + extents, idx).reshape(count, depth)
        slices = u.reshape((count,) + tuple(shape[depth:]))
        for k in range(count):
            target = tuple(wrapped[k])
            ref[target] = REDUCERS[reduction](ref[target], slices[k])
        attrs = {} if reduction == "none" else {"reduction": reduction}
        node = helper.make_node("ScatterND", ["x", "idx", "u"], ["y"], **attrs)
        return node, {"x": x, "idx": idx, "u": u}, [], ref
    return f"scatter_nd {reduction} {shape} {index_shape}", opset, build


def top_k(shape, k, axis, largest):
    def build(rng):
        # Few distinct values (ties) and infinities: equal values keep their
        # order, as ONNX asks.
        x = rng.integers(-3, 4, shape).astype(np.float32)
        x[0, 0] = -np.inf if largest else np.inf
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        index = np.take(order, np.arange(k), axis=axis)
        node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis,
                                largest=int(largest))
        k_init = numpy_helper.from_array(np.array([k], np.int64), "k")
        return node, {"x": x}, [k_init], {"values": np.take_along_axis(x, index, axis=axis),
                                          "indices": index.astype(np.int64)}
    return f"top_k {shape} k {k} axis {axis} {'largest' if largest else 'smallest'}", 11, build


def hardmax(shape, axis, opset):
    def build(rng):
        x = rng.integers(-2, 3, shape).astype(np.float32)  # ties
        if opset < 13:  # coerced to 2-D at axis
            rows = int(np.prod(shape[:axis]))
            view = x.reshape(rows, -1)
            ref = np.zeros_like(view)
            ref[np.arange(rows), np.argmax(view, axis=1)] = 1
            ref = ref.reshape(shape)
        else:
            ref = np.zeros_like(x)
            np.put_along_axis(ref, np.expand_dims(np.argmax(x, axis=axis), axis), 1, axis)
        node = helper.make_node("Hardmax", ["x"], ["y"], axis=axis)
        return node, {"x": x}, [], ref
    return f"hardmax {shape} axis {axis} opset {opset}", opset, build


def is_inf_nan(op, **attrs):
    def build(rng):
        x = np.array([1.0, -np.inf, np.nan, np.inf, 0.0, -2.5], np.float32)
        if op == "IsNaN":
            ref = np.isnan(x)
        else:
            ref = ((x == np.inf) & bool(attrs.get("detect_positive", 1))) | (
                (x == -np.inf) & bool(attrs.get("detect_negative", 1)))
        node = helper.make_node(op, ["x"], ["y"], **attrs)
        return node, {"x": x}, [], ref
    return f"{op.lower()} {attrs}", 13, build


def one_hot(index_shape, depth, axis):
    def build(rng):
        idx = rng.integers(-depth - 1, depth + 1, index_shape).astype(np.int64)
        wrapped = np.where(idx < 0, idx + depth, idx)
        hot = (wrapped[..., None] == np.arange(depth)).astype(np.float32)
        hot = np.moveaxis(hot, -1, axis if axis >= 0 else axis + hot.ndim)
        ref = np.where(hot > 0, 2.5, -1.0).astype(np.float32)
        node = helper.make_node("OneHot", ["idx", "depth", "values"], ["y"], axis=axis)
        inits = [numpy_helper.from_array(np.array(depth, np.int64), "depth"),
                 numpy_helper.from_array(np.array([-1.0, 2.5], np.float32), "values")]
        return node, {"idx": idx}, inits, ref
    return f"one_hot {index_shape} depth {depth} axis {axis}", 11, build


def elementary(op, values, reference, opset=9):
    """An elementwise op at chosen points, against numpy in f64."""
    def build(rng):
        x = np.array(values, np.float32)
        ref = reference(x.astype(np.float64)).astype(np.float32)
        return helper.make_node(op, ["x"], ["y"]), {"x": x}, [], ref
    return f"{op.lower()} at {values}", opset, build


def recurrent(op, steps, batch, inputs, hidden, direction="forward", layout=0, lens=None,
              initial=False, peepholes=False, **attrs):
    """RNN, GRU or LSTM with every optional operand asked for, against
    onnxruntime (ONNX's node suite has forward, full-length cases only)."""
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    dirs = 2 if direction == "bidirectional" else 1

    def build(rng):
        def rand(*shape):
            return rng.uniform(-0.8, 0.8, shape).astype(np.float32)
        x = rand(*((batch, steps, inputs) if layout else (steps, batch, inputs)))
        inits = [numpy_helper.from_array(rand(dirs, gates * hidden, inputs), "W"),
                 numpy_helper.from_array(rand(dirs, gates * hidden, hidden), "R"),
                 numpy_helper.from_array(rand(dirs, 2 * gates * hidden), "B")]
        names = ["x", "W", "R", "B", "", "", "", ""]
        feeds = {"x": x}
        if lens is not None:
            feeds["lens"] = np.array(lens, np.int32)
            names[4] = "lens"
        if initial:
            state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
            feeds["h0"] = rand(*state)
            names[5] = "h0"
            if op == "LSTM":
                feeds["c0"] = rand(*state)
                names[6] = "c0"
        if peepholes:
            inits.append(numpy_helper.from_array(rand(dirs, 3 * hidden), "P"))
            names[7] = "P"
        while names and not names[-1]:
            names.pop()
        outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
        node = helper.make_node(op, names, outputs, hidden_size=hidden, direction=direction,
                                **({"layout": layout} if layout else {}), **attrs)
        # onnxruntime runs layout 0 only: the reference sees the time-major
        # views and its outputs are turned back.
        time_major = {k: (np.swapaxes(v, 0, 1) if layout and k != "lens" else v)
                      for k, v in feeds.items()}
        ref_node = helper.make_node(op, names, outputs, hidden_size=hidden,
                                    direction=direction, **attrs)
        graph = helper.make_graph(
            [ref_node], "ref",
            [helper.make_tensor_value_info(k, TYPES[v.dtype], list(v.shape))
             for k, v in time_major.items()],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        import onnxruntime
        session = onnxruntime.InferenceSession(model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        refs = dict(zip(outputs, session.run(None, time_major)))
        if layout:
            refs = {k: (np.transpose(v, (2, 0, 1, 3)) if k == "Y" else np.swapaxes(v, 0, 1))
                    for k, v in refs.items()}
        return node, feeds, inits, refs
    extras = ", ".join(f"{k}={v}" for k, v in attrs.items())
    return (f"{op.lower()} {direction} layout {layout} lens {lens} initial {initial} "
            f"peepholes {peepholes} {extras}"), 14, build


def quantize_linear(shape, axis, dtype):
    def build(rng):
        dtype_ = np.dtype(dtype)
        low, high = QUANTIZED_RANGE[dtype_]
        c = shape[axis]
        # Power-of-two scales keep x / scale exact, so the halves below are
        # real ties (round half to even); x reaches past the saturation.
        scale = (2.0 ** rng.integers(-3, 3, c)).astype(np.float32)
        zero = rng.integers(low, high + 1, c).astype(dtype_)
        x = (rng.standard_normal(shape) * 200).astype(np.float32)
        x.flat[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e9, -1e9], np.float32)
        x = (np.round(x * 2) / 2 * along(scale, axis, len(shape))).astype(np.float32)
        ref = np.clip(np.rint(x / along(scale, axis, len(shape)))
                      + along(zero, axis, len(shape)).astype(np.float32), low, high)
        node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=axis)
        inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")]
        return node, {"x": x}, inits, ref.astype(dtype_)
    return f"quantize_linear {np.dtype(dtype).name} {shape} axis {axis}", 13, build


def dequantize_linear(shape, axis, dtype):
    def build(rng):
        dtype_ = np.dtype(dtype)
        c = shape[axis]
        if dtype_ == np.int32:  # a scalar zero point of 0, as the spec asks
            x = rng.integers(-(1 << 30), 1 << 30, shape).astype(dtype_)
            scale = np.float32(rng.random() + 0.5)
            zero = np.int32(0)
            ref = (x - zero).astype(np.float32) * scale
        else:
            low, high = QUANTIZED_RANGE[dtype_]
            x = rng.integers(low, high + 1, shape).astype(dtype_)
            scale = (rng.random(c) + 0.1).astype(np.float32)
            zero = rng.integers(low, high + 1, c).astype(dtype_)
            ref = ((x.astype(np.float32) - along(zero, axis, len(shape)).astype(np.float32))
                   * along(scale, axis, len(shape)))
        node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=axis)
        inits = [numpy_helper.from_array(np.asarray(scale), "s"),
                 numpy_helper.from_array(np.asarray(zero), "z")]
        return node, {"x": x}, inits, ref.astype(np.float32)
    return f"dequantize_linear {np.dtype(dtype).name} {shape} axis {axis}", 13, build


def dynamic_quantize_linear(shape, offset):
    def build(rng):
        x = (rng.standard_normal(shape) * 3 + offset).astype(np.float32)
        low = np.minimum(np.float32(0), x.min())
        high = np.maximum(np.float32(0), x.max())
        scale = np.float32((high - low) / np.float32(255))
        zero = np.clip(np.rint(-(low / scale)), 0, 255).astype(np.float32)
        y = np.clip(np.rint(x / scale) + zero, 0, 255).astype(np.uint8)
        node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zero"])
        refs = {"y": y, "scale": np.array(scale, np.float32),
                "zero": np.array(zero, np.float32).astype(np.uint8)}
        return node, {"x": x}, [], refs
    return f"dynamic_quantize_linear {shape} offset {offset}", 11, build


def reverse_sequence(shape, batch_axis, time_axis):
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        batch, time = shape[batch_axis], shape[time_axis]
        lens = rng.integers(0, time + 1, batch).astype(np.int64)
        lens[0] = time
        ref = x.copy()
        for b in range(batch):
            for t in range(lens[b]):
                src = [slice(None)] * len(shape)
                dst = [slice(None)] * len(shape)
                src[batch_axis] = dst[batch_axis] = b
                src[time_axis], dst[time_axis] = lens[b] - 1 - t, t
                ref[tuple(dst)] = x[tuple(src)]
        node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"],
                                batch_axis=batch_axis, time_axis=time_axis)
        return node, {"x": x, "lens": lens}, [], ref
    return f"reverse_sequence {shape} batch_axis {batch_axis}", 10, build


def onnxruntime_outputs(nodes, feeds, inits, outputs, opset):
    """`outputs` (name -> ONNX element type) of `nodes` as onnxruntime's CPU
    provider computes them: the peer's own numbers as the reference."""
    import onnxruntime
    graph = helper.make_graph(
        nodes, "reference",
        [helper.make_tensor_value_info(k, TYPES[v.dtype], list(v.shape)) for k, v in feeds.items()],
        [helper.make_tensor_value_info(name, kind, None) for name, kind in outputs.items()],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return dict(zip(outputs, session.run(None, feeds)))


def max_pool_indices(shape, ties, unpool=False, **attrs):
    """MaxPool's Indices (and MaxUnpool of its outputs) against onnxruntime;
    `ties` draws small integers so that windows hold repeated maxima."""
    def build(rng):
        x = (rng.integers(-3, 4, shape) if ties else rng.standard_normal(shape))
        x = x.astype(np.float32)
        pool = helper.make_node("MaxPool", ["x"], ["v", "i"], **attrs)
        nodes = [pool]
        outputs = ["v", "i"]
        if unpool:
            unpool_attrs = {k: v for k, v in attrs.items()
                            if k in ("kernel_shape", "strides", "pads")}
            nodes.append(helper.make_node("MaxUnpool", ["v", "i"], ["y"], **unpool_attrs))
            outputs.append("y")
        kinds = {name: TensorProto.INT64 if name == "i" else TensorProto.FLOAT
                 for name in outputs}
        refs = onnxruntime_outputs(nodes, {"x": x}, [], kinds, 12)
        return nodes, {"x": x}, [], refs
    name = f"max_pool_indices {shape} {attrs}" + (" ties" if ties else "")
    return name + (" + max_unpool" if unpool else ""), 12, build


def grid_sample(x_shape, out_hw, mode, padding, align_corners):
    """GridSample against onnxruntime, with grid points well outside [-1, 1]
    (every padding rule at work) and on pixel centres and edges (ties of
    nearest's rounding)."""
    def build(rng):
        n, c, h, w = x_shape
        x = rng.standard_normal(x_shape).astype(np.float32)
        grid = rng.uniform(-1.7, 1.7, (n,) + tuple(out_hw) + (2,)).astype(np.float32)
        # Exact pixel edges: halves in pixel units.
        grid.flat[:6] = np.array([-1.0, 1.0, 0.0, -0.5, 0.5, 1.0], np.float32)
        node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                                padding_mode=padding, align_corners=align_corners)
        feeds = {"x": x, "grid": grid}
        ref = onnxruntime_outputs([node], feeds, [], {"y": TensorProto.FLOAT}, 16)["y"]
        return node, feeds, [], ref
    return (f"grid_sample {mode} {padding} align_corners {align_corners} {x_shape}",
            16, build)


def as_complex(x):
    """[..., 1 or 2] real/imaginary pairs as complex numbers."""
    return x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)


def as_pairs(z, dtype):
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


def dft(shape, axis=1, length=None, inverse=0, onesided=0, dtype=np.float32):
    """DFT against numpy's FFT in double: real and complex signals, any
    signal axis, zero padding and truncation to dft_length."""
    def build(rng):
        x = rng.standard_normal(shape).astype(dtype)
        signal_axis = axis + len(shape) if axis < 0 else axis
        z = np.moveaxis(as_complex(x.astype(np.float64)), signal_axis, -1)
        n = length or z.shape[-1]
        ref = (np.fft.ifft(z, n=n) if inverse else
               np.fft.rfft(z.real, n=n) if onesided else np.fft.fft(z, n=n))
        ref = np.moveaxis(ref, -1, signal_axis)
        inputs = ["x"]
        inits = []
        if length:
            inits.append(numpy_helper.from_array(np.array(length, np.int64), "dft_length"))
            inputs.append("dft_length")
        node = helper.make_node("DFT", inputs, ["y"], axis=axis, inverse=inverse,
                                onesided=onesided)
        return node, {"x": x}, inits, as_pairs(ref, dtype)
    return (f"dft {np.dtype(dtype).name}{list(shape)} axis {axis} length {length} "
            f"inverse {inverse} onesided {onesided}", 17, build)


def stft(shape, step, frame, window=None, onesided=1):
    """STFT against numpy: frames every `step` samples, times a constant
    ('hann') or run-time ('input') window or none, one-sided or not."""
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        inits = [numpy_helper.from_array(np.array(step, np.int64), "step")]
        feeds = {"x": x}
        inputs = ["x", "step", "", ""]
        w = np.ones(frame)
        if window == "hann":
            w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame) / frame)
            inits.append(numpy_helper.from_array(w.astype(np.float32), "window"))
            inputs[2] = "window"
        elif window == "input":
            w = rng.uniform(0.5, 1.5, frame).astype(np.float32)
            feeds["window"] = w
            inputs[2] = "window"
        else:
            inits.append(numpy_helper.from_array(np.array(frame, np.int64), "frame"))
            inputs[3] = "frame"
        w = w.astype(np.float32).astype(np.float64)
        z = as_complex(x.astype(np.float64))
        frames = (shape[1] - frame) // step + 1
        framed = np.stack([z[:, f * step:f * step + frame] * w for f in range(frames)], 1)
        ref = np.fft.rfft(framed.real, axis=-1) if onesided else np.fft.fft(framed, axis=-1)
        node = helper.make_node("STFT", inputs, ["y"], onesided=onesided)
        return node, feeds, inits, as_pairs(ref, np.float32)
    return f"stft {list(shape)} step {step} frame {frame} window {window} onesided {onesided}", 17, build


def roi_align(x_shape, rois_count, opset, **attrs):
    """RoiAlign against onnxruntime: regions partly outside X, smaller than
    a pixel, on both images of the batch."""
    def build(rng):
        n, c, h, w = x_shape
        x = rng.standard_normal(x_shape).astype(np.float32)
        corners = rng.uniform(-2.0, max(h, w) + 1.0, (rois_count, 2, 2))
        corners.sort(axis=1)
        rois = corners.transpose(0, 2, 1).reshape(rois_count, 4)[:, [0, 2, 1, 3]]
        rois[0] = [1.2, 1.1, 1.5, 1.3]  # smaller than a pixel
        rois = np.ascontiguousarray(rois / attrs.get("spatial_scale", 1.0), np.float32)
        batch = rng.integers(0, n, rois_count).astype(np.int64)
        node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], **attrs)
        feeds = {"x": x, "rois": rois, "batch": batch}
        ref = onnxruntime_outputs([node], feeds, [], {"y": TensorProto.FLOAT}, opset)["y"]
        return node, feeds, [], ref
    return f"roi_align opset {opset} {x_shape} {attrs}", opset, build


def bit_shift(dtype, direction):
    """BitShift over the whole value range, shifts up to past the width (0,
    as numpy gives), y broadcast along a row."""
    def build(rng):
        dtype_ = np.dtype(dtype)
        bits = dtype_.itemsize * 8
        x = rng.integers(0, np.iinfo(dtype_).max, (4, 6), dtype=dtype_, endpoint=True)
        y = rng.integers(0, bits + 3, (1, 6)).astype(dtype_)
        y[0, :3] = [0, bits - 1, bits]
        mask = (1 << bits) - 1
        ref = np.array([[((int(a) << int(b)) & mask if direction == "LEFT" else int(a) >> int(b))
                         if int(b) < bits else 0 for a, b in zip(row, y[0])] for row in x],
                       dtype=dtype_)
        node = helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)
        return node, {"x": x, "y": y}, [], {"z": ref}
    return f"bit_shift {direction} {np.dtype(dtype).name}", 11, build


def integer_values(rng, dtype, shape):
    """Uniform over the whole range of the 8-bit `dtype`."""
    low, high = QUANTIZED_RANGE[np.dtype(dtype)]
    return rng.integers(low, high, shape, endpoint=True).astype(dtype)


def split_inputs(values, constant):
    """Feeds, or initializers where `constant` names them."""
    feeds = {k: v for k, v in values.items() if k not in constant}
    inits = [numpy_helper.from_array(v, k) for k, v in values.items() if k in constant]
    return feeds, inits


def matmul_integer(a_shape, b_shape, a_dtype, b_dtype, per_axis, constant=()):
    """MatMulInteger against numpy's exact int64 product; `per_axis`: A's
    zero point per row and B's per column. Long rows of 8-bit values sum
    past 2^24, where an f32 product would round."""
    def build(rng):
        a = integer_values(rng, a_dtype, a_shape)
        b = integer_values(rng, b_dtype, b_shape)
        rows, columns = (a_shape[-2], b_shape[-1]) if per_axis else (1, 1)
        a_zero = integer_values(rng, a_dtype, (rows,))
        b_zero = integer_values(rng, b_dtype, (columns,))
        ref = np.matmul(a.astype(np.int64) - a_zero.astype(np.int64).reshape(rows, 1),
                        b.astype(np.int64) - b_zero.astype(np.int64))
        node = helper.make_node("MatMulInteger", ["a", "b", "a_zero", "b_zero"], ["y"])
        feeds, inits = split_inputs({"a": a, "b": b, "a_zero": a_zero, "b_zero": b_zero},
                                    constant)
        return node, feeds, inits, ref.astype(np.int32)
    axes = "per-row/column" if per_axis else "per-tensor"
    return (f"matmul_integer {np.dtype(a_dtype).name}{list(a_shape)} x "
            f"{np.dtype(b_dtype).name}{list(b_shape)} {axes}", 10, build)


def matmul_f64(a_shape, b_shape):
    """MatMul on f64 with batch broadcasting, against numpy."""
    def build(rng):
        a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
        node = helper.make_node("MatMul", ["a", "b"], ["y"])
        return node, {"a": a, "b": b}, [], np.matmul(a, b)
    return f"matmul f64 {list(a_shape)} x {list(b_shape)}", 13, build


def det(shape, dtype):
    """Det of random matrices (and an exactly singular one), against numpy."""
    def build(rng):
        x = rng.standard_normal(shape).astype(dtype)
        x.reshape(-1, shape[-1], shape[-1])[0, -1] = x.reshape(-1, shape[-1], shape[-1])[0, 0]
        node = helper.make_node("Det", ["x"], ["y"])
        return node, {"x": x}, [], np.linalg.det(x.astype(np.float64)).astype(dtype)
    return f"det {np.dtype(dtype).name}{list(shape)}", 11, build


def matmul_wrapping(dtype):
    """MatMul on 32/64-bit integers whose products and sums overflow: they
    wrap modulo 2^bits, as numpy's integer matmul (and onnxruntime's) do."""
    def build(rng):
        info = np.iinfo(dtype)
        a = rng.integers(info.min // 2, info.max // 2, (3, 64), dtype=dtype)
        b = rng.integers(info.min // 2, info.max // 2, (64, 5), dtype=dtype)
        node = helper.make_node("MatMul", ["a", "b"], ["y"])
        return node, {"a": a, "b": b}, [], np.matmul(a, b)
    return f"matmul {np.dtype(dtype).name} wrapping", 13, build


def conv_reference(x, w, strides, pads, dilations, group):
    """Exact grouped N-d convolution of int64 x and w, zero padded."""
    n, c = x.shape[:2]
    m, kernel = w.shape[0], w.shape[2:]
    rank = len(kernel)
    padded = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[rank + i]) for i in range(rank)])
    out = [(padded.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1
           for i in range(rank)]
    y = np.zeros((n, m, *out), np.int64)
    cg, mg = c // group, m // group
    for tap in np.ndindex(*kernel):
        window = tuple(slice(tap[i] * dilations[i],
                             tap[i] * dilations[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                       for i in range(rank))
        patch = padded[(slice(None), slice(None)) + window]
        for g in range(group):
            taps = w[(slice(g * mg, (g + 1) * mg), slice(None)) + tap]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...",
                                                   patch[:, g * cg:(g + 1) * cg], taps)
    return y


def conv_integer(x_shape, w_shape, x_dtype, w_dtype, per_channel, group=1, strides=None,
                 pads=None, dilations=None, auto_pad=None, constant=()):
    """ConvInteger against conv_reference of x and w minus their zero
    points (x padded with its zero point, as the spec pads)."""
    rank = len(x_shape) - 2
    strides_, dilations_ = strides or [1] * rank, dilations or [1] * rank
    def build(rng):
        x = integer_values(rng, x_dtype, x_shape)
        w = integer_values(rng, w_dtype, w_shape)
        x_zero = integer_values(rng, x_dtype, ())
        w_zero = integer_values(rng, w_dtype, (w_shape[0] if per_channel else 1,))
        pads_ = pads or [0] * (2 * rank)
        if auto_pad == "SAME_UPPER":  # stride 1: the window's extent minus one
            total = [(w_shape[2 + i] - 1) * dilations_[i] for i in range(rank)]
            pads_ = [t // 2 for t in total] + [t - t // 2 for t in total]
        ref = conv_reference(
            x.astype(np.int64) - np.int64(x_zero),
            w.astype(np.int64) - w_zero.astype(np.int64).reshape((-1,) + (1,) * (rank + 1)),
            strides_, pads_, dilations_, group)
        attrs = {"group": group, "strides": strides_, "dilations": dilations_}
        attrs.update({"auto_pad": auto_pad} if auto_pad else {"pads": pads_})
        node = helper.make_node("ConvInteger", ["x", "w", "x_zero", "w_zero"], ["y"], **attrs)
        feeds, inits = split_inputs({"x": x, "w": w, "x_zero": x_zero, "w_zero": w_zero},
                                    constant)
        return node, feeds, inits, ref.astype(np.int32)
    return (f"conv_integer {np.dtype(x_dtype).name}{list(x_shape)} * "
            f"{np.dtype(w_dtype).name}{list(w_shape)} group {group} "
            f"{'per-channel' if per_channel else 'per-tensor'}", 10, build)


def requantized(accumulator, multiplier, zero, dtype):
    """onnxruntime's requantization of an exact accumulator: times the f32
    multiplier, rounded half to even, plus the zero point, saturated."""
    low, high = QUANTIZED_RANGE[np.dtype(dtype)]
    scaled = np.rint(accumulator.astype(np.float32) * multiplier) + np.float32(zero)
    return np.clip(scaled, low, high).astype(dtype)


def check_onnxruntime(nodes, feeds, inits, ref, opset, saturating):
    """onnxruntime must agree with the exact reference, except where its
    u8 x s8 kernels (`saturating`) sum pairs of products in int16 and
    saturate (MLAS's AVX2 path; onnxruntime advises 7-bit weights)."""
    ort = onnxruntime_outputs(nodes, feeds, inits, {"y": TYPES[ref.dtype]}, opset)["y"]
    if not saturating and not np.array_equal(ort, ref):
        raise AssertionError("onnxruntime disagrees with the exact reference")


def qlinear_conv(x_shape, w_shape, x_dtype, w_dtype, per_channel, bias, constant_w=True,
                 **attrs):
    """QLinearConv against an exact reference that onnxruntime agrees with,
    per-channel filter scales and an i32 bias included; scales, zero points
    and (with `constant_w`, then computed in exact f32) the filter and bias
    are initializers, as quantized models hold them. The output scale makes
    some results saturate."""
    rank = len(x_shape) - 2
    def build(rng):
        x = integer_values(rng, x_dtype, x_shape)
        w = integer_values(rng, w_dtype, w_shape)
        channels = w_shape[0] if per_channel else 1
        # onnxruntime takes per-channel filter zero points of 0 only.
        w_zero = (np.zeros((channels,), w_dtype) if per_channel
                  else integer_values(rng, w_dtype, (1,)))
        values = {
            "x": x, "x_scale": np.float32(0.02), "x_zero": integer_values(rng, x_dtype, ()),
            "w": w, "w_scale": rng.uniform(0.002, 0.01, (channels,)).astype(np.float32),
            "w_zero": w_zero, "y_scale": np.float32(0.05),
            "y_zero": integer_values(rng, x_dtype, ())}
        if bias:
            values["b"] = rng.integers(-5000, 5000, (w_shape[0],)).astype(np.int32)
        names = list(values)
        feeds, inits = split_inputs(
            values, set(names) - ({"x"} if constant_w else {"x", "w", "b"}))
        node = helper.make_node("QLinearConv", names, ["y"], **attrs)
        shape = (-1,) + (1,) * rank
        accumulator = conv_reference(
            x.astype(np.int64) - np.int64(values["x_zero"]),
            w.astype(np.int64) - w_zero.astype(np.int64).reshape((-1, 1) + (1,) * rank),
            attrs.get("strides", [1] * rank), attrs.get("pads", [0] * 2 * rank),
            attrs.get("dilations", [1] * rank), attrs.get("group", 1))
        if bias:
            accumulator += values["b"].reshape(shape)
        multiplier = (values["x_scale"] * values["w_scale"] / values["y_scale"]).reshape(shape)
        ref = requantized(accumulator, multiplier, values["y_zero"], x_dtype)
        check_onnxruntime([node], feeds, inits, ref, 10,
                          np.dtype(x_dtype) == np.uint8 and np.dtype(w_dtype) == np.int8)
        return node, feeds, inits, ref
    return (f"qlinear_conv {np.dtype(x_dtype).name}{list(x_shape)} * "
            f"{np.dtype(w_dtype).name}{list(w_shape)} {attrs}"
            f"{' per-channel' if per_channel else ''}{' bias' if bias else ''}"
            f"{' constant w' if constant_w else ''}", 10, build)


def qlinear_matmul(a_shape, b_shape, dtype, per_column):
    """QLinearMatMul against an exact reference that onnxruntime agrees
    with; `per_column` gives B a scale and zero point per column."""
    def build(rng):
        columns = b_shape[-1] if per_column else 1
        values = {
            "a": integer_values(rng, dtype, a_shape), "a_scale": np.float32(0.03),
            "a_zero": integer_values(rng, dtype, ()),
            "b": integer_values(rng, dtype, b_shape),
            "b_scale": rng.uniform(0.005, 0.02, (columns,)).astype(np.float32),
            "b_zero": integer_values(rng, dtype, (columns,)),
            "y_scale": np.float32(0.6), "y_zero": integer_values(rng, dtype, ())}
        feeds, inits = split_inputs(values, set(values) - {"a", "b"})
        node = helper.make_node("QLinearMatMul", list(values), ["y"])
        accumulator = np.matmul(values["a"].astype(np.int64) - np.int64(values["a_zero"]),
                                values["b"].astype(np.int64) - values["b_zero"].astype(np.int64))
        multiplier = values["a_scale"] * values["b_scale"] / values["y_scale"]
        ref = requantized(accumulator, multiplier, values["y_zero"], dtype)
        check_onnxruntime([node], feeds, inits, ref, 10, False)
        return node, feeds, inits, ref
    return (f"qlinear_matmul {np.dtype(dtype).name}{list(a_shape)} x {list(b_shape)}"
            f"{' per-column' if per_column else ''}", 10, build)


CASES = [
    einsum("bij,bjk->bik", (5, 2, 3), (5, 3, 4)),
    einsum("ij->i", (3, 4)),
    einsum("i,i", (3,), (3,)),
    einsum("ij,jk", (2, 3), (3, 4)),
    einsum("...ij,...jk->k...i", (5, 2, 3), (5, 3, 4)),
    einsum("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
    einsum("abc,cd->dba", (2, 3, 4), (4, 5)),
    # Diagonals: a repeated label within an operand.
    einsum("bii->bi", (2, 4, 4)),
    einsum("ii", (5, 5)),
    einsum("iji->j", (3, 2, 3)),
    einsum("bij,bjj->bi", (2, 3, 4), (2, 4, 4)),
    einsum("ijk,ikl->jl", (2, 3, 4), (2, 4, 5)),
    einsum("ij,kl->ijkl", (2, 3), (4, 5)),
    einsum("ba,ca", (3, 4), (5, 4)),
    einsum("ijk,j->ik", (2, 3, 4), (3,)),
    cumsum((2, 9), 1, np.int64),
    cumsum((4, 3, 5), 0, np.float32, exclusive=1),
    cumsum((3, 17), -1, np.int32, exclusive=1, reverse=1),
    gather_elements((2, 3, 4), (2, 5, 4), 1, np.int64),
    gather_elements((3, 4), (3, 2), -1, np.int32),
    gather_nd((4, 3, 5), (2, 2), 0),
    gather_nd((2, 3, 4, 5), (2, 6, 2), 1),
    gather_nd((3, 4), (3, 2, 1), 1),
    scatter_elements((3, 4), (2, 4), 0, "none", np.float32, np.int64, opset=13),
    scatter_elements((2, 5, 3), (2, 4, 3), 1, "add", np.float32, np.int32),
    scatter_elements((2, 5, 3), (2, 6, 2), 1, "mul", np.int64, np.int64),
    scatter_elements((4, 6), (4, 9), -1, "max", np.float32, np.int64, opset=17),
    scatter_elements((4, 6), (3, 9), 1, "min", np.int32, np.int32, opset=17),
    # Wide enough for the threaded path.
    scatter_elements((64, 2048), (48, 2048), 0, "add", np.float32, np.int64),
    scatter_nd((5, 4, 3), (3, 1), "none", opset=11),
    scatter_nd((5, 4, 3), (2, 3, 2), "add"),
    scatter_nd((3, 4), (6, 2), "mul"),
    scatter_nd((6, 5), (4, 1), "max", opset=17),
    top_k((4, 9), 5, 1, True),
    top_k((6, 3), 6, 0, False),
    hardmax((2, 3, 4), 1, 11),
    hardmax((2, 3, 4), 1, 13),
    is_inf_nan("IsNaN"),
    is_inf_nan("IsInf", detect_positive=0),
    one_hot((2, 3), 5, -1),
    one_hot((4,), 3, 0),
    # Near the float range sinh and cosh stay finite (e^x alone would not).
    elementary("Sinh", [-88.5, 88.9], np.sinh),
    elementary("Cosh", [-88.9, 88.5], np.cosh),
    elementary("Sinh", [-3.0, -0.5, 0.0, 1e-3, 2.0], np.sinh),
    elementary("Cosh", [-3.0, -0.5, 0.0, 2.0], np.cosh),
    # log(x + sqrt(x^2 + 1)) would be log(0) at -1e4 in f32.
    elementary("Asinh", [-1e4, -2.0, 0.0, 1e-3, 3.0, 1e4], np.arcsinh),
    elementary("Acosh", [1.0, 1.5, 10.0, 1e4], np.arccosh),
    elementary("Atanh", [-0.999, -0.5, 0.0, 0.25, 0.999], np.arctanh),
    elementary("Tan", [-1.5, -0.7, 0.0, 0.3, 1.5], np.tan, opset=7),
    # Kernels of their own, at the ends of their domains too.
    elementary("Asin", [-1.0, -0.5, 0.0, 0.9, 1.0], np.arcsin, opset=7),
    elementary("Acos", [-1.0, -0.5, 0.0, 0.9, 1.0], np.arccos, opset=7),
    elementary("Atan", [-1e6, -1.0, 0.0, 0.5, 1e6], np.arctan, opset=7),
    # Recurrent ops, unrolled: both directions, batch-first layout, masked
    # sequence ends, initial states, peepholes, clipping, activations.
    recurrent("LSTM", 4, 3, 2, 5, "bidirectional", lens=[4, 2, 1], initial=True,
              peepholes=True, clip=2.5),
    recurrent("LSTM", 3, 2, 3, 4, "reverse", layout=1),
    recurrent("GRU", 5, 3, 2, 4, "reverse", layout=1, lens=[5, 3, 2], initial=True,
              linear_before_reset=1),
    recurrent("GRU", 3, 2, 3, 3, "bidirectional",
              activations=["Sigmoid", "Relu", "Sigmoid", "Tanh"]),
    recurrent("RNN", 4, 2, 3, 3, "bidirectional", lens=[3, 4], initial=True,
              activations=["Relu", "Tanh"]),
    # Linear quantization: per-axis scales and zero points, ties, saturation.
    quantize_linear((2, 3, 4, 5), 1, np.uint8),
    quantize_linear((6, 7), -1, np.int8),
    dequantize_linear((2, 3, 4), 1, np.uint8),
    dequantize_linear((5, 4), 0, np.int8),
    dequantize_linear((3, 8), 1, np.int32),
    dynamic_quantize_linear((4, 50), 0.0),
    dynamic_quantize_linear((3, 7, 5), 5.0),
    reverse_sequence((5, 6, 3), 0, 1),
    reverse_sequence((6, 4, 2, 3), 1, 0),
    # MaxPool's Indices: ties (first maximum in scan order), pads, ceil mode,
    # dilations, column-major storage, 1-D and 3-D windows; MaxUnpool back.
    max_pool_indices((2, 3, 7, 6), True, kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1]),
    max_pool_indices((1, 2, 7, 7), True, kernel_shape=[2, 2], strides=[2, 2],
                     ceil_mode=1, storage_order=1),
    max_pool_indices((1, 2, 9, 8), False, kernel_shape=[2, 3], dilations=[2, 1],
                     strides=[1, 2]),
    max_pool_indices((2, 2, 11), True, kernel_shape=[3], strides=[2]),
    max_pool_indices((1, 2, 4, 5, 6), False, kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
    max_pool_indices((2, 3, 8, 8), False, unpool=True, kernel_shape=[2, 2], strides=[2, 2]),
    # GridSample: every mode, padding rule and corner alignment.
    grid_sample((2, 3, 5, 7), (4, 6), "bilinear", "zeros", 0),
    grid_sample((2, 3, 5, 7), (4, 6), "bilinear", "border", 1),
    grid_sample((1, 2, 6, 4), (5, 5), "bilinear", "reflection", 0),
    grid_sample((1, 2, 6, 4), (5, 5), "nearest", "zeros", 1),
    grid_sample((2, 2, 4, 5), (3, 7), "nearest", "reflection", 0),
    grid_sample((1, 3, 5, 6), (4, 4), "bicubic", "zeros", 0),
    grid_sample((1, 3, 5, 6), (4, 4), "bicubic", "border", 0),
    grid_sample((1, 2, 5, 4), (3, 5), "bicubic", "reflection", 1),
    grid_sample((2, 2, 4, 6), (5, 3), "bicubic", "reflection", 0),
    grid_sample((1, 2, 5, 5), (4, 4), "nearest", "border", 0),
    # DFT and STFT: one matmul with a constant matrix of cosines and sines.
    dft((2, 12, 3, 1)),
    dft((2, 3, 10, 2), axis=2, inverse=1),
    dft((3, 10, 1), length=16, onesided=1),
    dft((2, 9, 2), length=6),
    dft((2, 5, 7, 1), axis=-2, dtype=np.float64),
    dft((1, 1000, 1), onesided=1),
    stft((2, 100, 1), 5, 20, window="hann"),
    stft((1, 40, 2), 3, 8, onesided=0),
    stft((2, 64, 1), 16, 16, window="input"),
    # RoiAlign: both modes, both coordinate transformations, opset 10's.
    roi_align((2, 3, 10, 12), 5, 16, output_height=3, output_width=4, sampling_ratio=2),
    roi_align((1, 2, 8, 8), 4, 16, output_height=2, output_width=2, sampling_ratio=3,
              coordinate_transformation_mode="output_half_pixel", mode="max",
              spatial_scale=0.5),
    roi_align((2, 2, 9, 7), 6, 10, output_height=4, output_width=3, sampling_ratio=1),
    bit_shift(np.uint8, "LEFT"),
    bit_shift(np.uint16, "RIGHT"),
    bit_shift(np.uint16, "LEFT"),
    bit_shift(np.uint32, "LEFT"),
    bit_shift(np.uint64, "RIGHT"),
    bit_shift(np.uint64, "LEFT"),
    # Integer products: exact past 2^24 (where f32 would round), both
    # 8-bit types, batches, per-axis zero points, groups, strides,
    # dilations, asymmetric and automatic pads, 1-D to 3-D windows; the
    # large ones take the threaded path.
    matmul_integer((3, 5, 7), (7, 4), np.uint8, np.int8, True),
    matmul_integer((2, 1, 4, 6), (3, 6, 5), np.int8, np.uint8, False, constant=("b", "b_zero")),
    matmul_integer((5, 300), (300, 40), np.uint8, np.int8, True, constant=("b", "b_zero")),
    matmul_integer((96, 700), (700, 160), np.uint8, np.uint8, False),
    matmul_f64((2, 1, 4, 5), (3, 5, 6)),
    matmul_f64((7,), (4, 7, 3)),
    det((3, 2, 5, 5), np.float32),
    det((7, 7), np.float64),
    det((4, 1, 1), np.float32),
    matmul_wrapping(np.int32),
    matmul_wrapping(np.int64),
    conv_integer((2, 4, 9, 8), (6, 2, 3, 3), np.uint8, np.uint8, True, group=2,
                 strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1]),
    conv_integer((1, 3, 10), (4, 3, 4), np.int8, np.int8, False, auto_pad="SAME_UPPER",
                 constant=("w", "w_zero")),
    conv_integer((1, 2, 5, 6, 4), (3, 2, 2, 3, 2), np.uint8, np.int8, True,
                 strides=[1, 2, 1], pads=[1, 1, 0, 0, 1, 1]),
    # Constant, but 576 taps of 8-bit values can pass 2^24: i32, not f32.
    conv_integer((4, 64, 14, 14), (64, 64, 3, 3), np.uint8, np.uint8, False, pads=[1, 1, 1, 1],
                 constant=("w", "w_zero")),
    qlinear_conv((2, 4, 7, 7), (6, 4, 3, 3), np.uint8, np.int8, True, True,
                 pads=[1, 1, 1, 1], strides=[2, 2]),
    qlinear_conv((1, 4, 6, 5), (4, 2, 2, 2), np.uint8, np.uint8, False, False, group=2,
                 constant_w=False),
    qlinear_conv((2, 3, 9, 9), (8, 3, 3, 3), np.uint8, np.int8, True, True, constant_w=False,
                 pads=[1, 1, 1, 1]),
    qlinear_conv((1, 3, 8, 8), (5, 3, 3, 3), np.int8, np.int8, True, True, dilations=[2, 1]),
    qlinear_matmul((2, 3, 40), (40, 6), np.uint8, False),
    qlinear_matmul((5, 32), (32, 7), np.int8, True),
]


def run_case(heterps, cluster, out, index, name, opset, build):
    rng = np.random.default_rng(index)
    node, feeds, inits, refs = build(rng)
    if not isinstance(refs, dict):
        refs = {"y": refs}
    refs = {key: np.asarray(value) for key, value in refs.items()}
    graph = helper.make_graph(
        node if isinstance(node, list) else [node], "case",
        [helper.make_tensor_value_info(k, TYPES[v.dtype], list(v.shape)) for k, v in feeds.items()],
        [helper.make_tensor_value_info(k, TYPES[v.dtype], list(v.shape)) for k, v in refs.items()],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    work = os.path.join(out, f"case{index}")
    os.makedirs(work, exist_ok=True)
    onnx.save(model, os.path.join(work, "model.onnx"))
    steps = [[heterps, "compile", os.path.join(work, "model.onnx"), "--cluster", cluster,
              "--throughput", "1", "--strategy", "cpu-only", "-o", os.path.join(work, "bundle")]]
    run = [heterps, "run", os.path.join(work, "bundle"), "--output-dir", os.path.join(work, "out")]
    for key, value in feeds.items():
        path = os.path.join(work, key + ".npy")
        np.save(path, value)
        run += ["--input", f"{key}={path}"]
    steps.append(run)
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            return f"FAIL {name}: {' '.join(step[:2])}: {done.stderr.strip()[-400:]}"
    worst = 0.0
    for key, ref in refs.items():
        got = np.load(os.path.join(work, "out", key + ".npy"))
        if got.shape != ref.shape or got.dtype != ref.dtype:
            return (f"FAIL {name}: {key} is {got.dtype}{list(got.shape)}, want "
                    f"{ref.dtype}{list(ref.shape)}")
        is_float = np.issubdtype(ref.dtype, np.floating)
        finite = np.isfinite(ref) if is_float else np.ones(ref.shape, bool)
        if not np.array_equal(got[~finite], ref[~finite]):
            return f"FAIL {name}: {key} differs where the reference is infinite"
        error = (float(np.max(np.abs(got[finite].astype(np.float64) - ref[finite])))
                 if finite.any() else 0.0)
        tolerance = (1e-4 * max(1.0, float(np.max(np.abs(ref[finite]), initial=0.0)))
                     if is_float else 0)
        if error > tolerance:
            return f"FAIL {name}: {key} max error {error:.3g} above {tolerance:.3g}"
        worst = max(worst, error)
    return f"ok {name} max-error {worst:.3g}"


def main():
    heterps, cluster, out = os.path.join(sys.argv[1], "heterps"), sys.argv[2], sys.argv[3]
    failed = 0
    for index, (name, opset, build) in enumerate(CASES):
        line = run_case(heterps, cluster, out, index, name, opset, build)
        failed += line.startswith("FAIL")
        print(line, flush=True)
    print(f"failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
