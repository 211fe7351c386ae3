#!/usr/bin/env python3
"""Chains of elementwise ops that code generation fuses into one loop each:
every broadcast pattern, the native channel-blocked layout between
convolutions (1-D, 2-D and 3-D), integer, bool and f64 chains, casts, and
intermediates that are also model outputs. Each model is compiled twice,
fused (the default) and with --fuse-elementwise=false, and both bundles are
run on the same inputs: their outputs must be bit-identical (a fused loop
computes each element with the kernels' own scalar functions), and match
onnxruntime.

  fused_chains.py HETERPS_BIN CLUSTER OUT_DIR [--gpu-cluster FILE]
                  [--gpu-device] [--only NAME,...]

--gpu-cluster also compiles each model as one GPU-class stage (a .cu that
nvcc builds for the device, which must succeed, and the C++ compiler for
the CPU) and runs the CPU build of that source: the same loops in device
form must compile, and their host form must give the same bits.
--gpu-device runs the device build instead, on a GPU (scripts/gpu/check.sh
fused): every op here is exact in IEEE arithmetic, so the GPU must give the
CPU's bits too.

Prints `ok NAME (N fused loops) max-error E` or `FAIL NAME: why` per case;
exits 1 if any case failed.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.bool_): TensorProto.BOOL}


def node(op, inputs, output, **attrs):
    return helper.make_node(op, inputs, [output], **attrs)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def requantize_between_convs(x_shape, channels):
    """Conv -> per-channel scale, round, clip, dequantize, relu -> conv: the
    chain a quantized model runs between its convolutions."""
    spatial = len(x_shape) - 2

    def build(rng):
        x = rng.uniform(-1, 1, x_shape).astype(np.float32)
        w0 = rng.uniform(-0.5, 0.5, (channels, x_shape[1]) + (3,) * spatial).astype(np.float32)
        w1 = rng.uniform(-0.5, 0.5, (channels, channels) + (1,) * spatial).astype(np.float32)
        scale = rng.uniform(2, 8, (channels,) + (1,) * spatial).astype(np.float32)
        pads = [1] * (2 * spatial)
        nodes = [node("Conv", ["x", "w0"], "c0", pads=pads),
                 node("Mul", ["c0", "scale"], "m"),
                 node("Round", ["m"], "r"),
                 node("Clip", ["r", "lo", "hi"], "q"),
                 node("Mul", ["q", "step"], "d"),
                 node("Relu", ["d"], "a"),
                 node("Conv", ["a", "w1"], "y")]
        inits = [const("w0", w0), const("w1", w1), const("scale", scale),
                 const("lo", np.float32(-128)), const("hi", np.float32(127)),
                 const("step", np.float32(0.0625))]
        return nodes, {"x": x}, inits, ["y"]
    return build


def broadcasts(rng):
    """Every way an operand broadcasts to [3, 4, 5], an intermediate that is
    also an output, a scalar constant, and a multiply then an add (two
    roundings, no FMA)."""
    feeds = {"a": rng.uniform(-2, 2, (3, 1, 5)).astype(np.float32),
             "b": rng.uniform(-2, 2, (4, 1)).astype(np.float32),
             "c": rng.uniform(-2, 2, (5,)).astype(np.float32),
             "d": rng.uniform(-2, 2, (3, 4, 1)).astype(np.float32),
             "e": rng.uniform(-2, 2, (1, 4, 5)).astype(np.float32)}
    nodes = [node("Add", ["a", "b"], "s"),
             node("Mul", ["s", "c"], "p"),
             node("Add", ["p", "e"], "pe"),
             node("Max", ["pe", "d"], "mx"),
             node("Min", ["mx", "two"], "mn"),
             node("Sub", ["e", "mn"], "t"),
             node("Abs", ["t"], "u"),
             node("Neg", ["u"], "v"),
             node("Div", ["v", "d"], "y")]
    return nodes, feeds, [const("two", np.float32(2))], ["p", "y"]


def unary_kinds(rng):
    """The float unary kinds a loop computes, in one chain."""
    x = rng.uniform(-4, 4, (6, 33)).astype(np.float32)
    nodes = [node("Softsign", ["x"], "s"),
             node("LeakyRelu", ["s"], "l", alpha=0.3),
             node("Add", ["l", "x"], "t"),
             node("ThresholdedRelu", ["t"], "tr", alpha=0.5),
             node("Abs", ["x"], "ax"),
             node("Sqrt", ["ax"], "sq"),
             node("Add", ["sq", "tr"], "sum"),
             node("Reciprocal", ["sum"], "rc"),
             node("Floor", ["x"], "f"),
             node("Ceil", ["x"], "cl"),
             node("Sign", ["x"], "sg"),
             node("Add", ["f", "cl"], "fc"),
             node("Mul", ["fc", "sg"], "m"),
             node("Sub", ["m", "rc"], "y")]
    return nodes, {"x": x}, [], ["y"]


def integers(dtype):
    """Wrapping arithmetic, C division and ONNX Mod, clip and relu on
    integers, and a comparison."""
    def build(rng):
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), (6, 10), dtype=dtype)
        d = rng.integers(1, 30, (10,), dtype=dtype)
        nodes = [node("Mul", ["x", "k"], "m"),
                 node("Add", ["m", "x"], "a"),
                 node("Div", ["a", "d"], "dv"),
                 node("Mod", ["a", "d"], "md"),
                 node("Sub", ["dv", "md"], "s"),
                 node("Max", ["s", "d"], "mx"),
                 node("Greater", ["mx", "x"], "g"),
                 node("Where", ["g", "mx", "x"], "y0"),
                 node("Clip", ["y0", "lo", "hi"], "y")]
        inits = [const("k", np.array(7, dtype)), const("lo", np.array(-50, dtype)),
                 const("hi", np.array(400, dtype))]
        return nodes, {"x": x, "d": d}, inits, ["y"]
    return build


def quantize_round_trip(rng):
    """QuantizeLinear's arithmetic spelled out with casts to uint8 and int8
    and back, and a float -> int32 truncation."""
    x = rng.uniform(-300, 300, (4, 7, 9)).astype(np.float32)
    nodes = [node("Div", ["x", "s"], "d"),
             node("Round", ["d"], "r"),
             node("Add", ["r", "zp"], "z"),
             node("Clip", ["z", "lo", "hi"], "c"),
             node("Cast", ["c"], "u8", to=TensorProto.UINT8),
             node("Cast", ["u8"], "f", to=TensorProto.FLOAT),
             node("Sub", ["f", "zp"], "g"),
             node("Cast", ["g"], "i8", to=TensorProto.INT8),
             node("Cast", ["i8"], "h", to=TensorProto.FLOAT),
             node("Mul", ["h", "x"], "t"),
             node("Cast", ["t"], "i32", to=TensorProto.INT32),
             node("Cast", ["i32"], "y", to=TensorProto.FLOAT)]
    inits = [const("s", np.float32(2.5)), const("zp", np.float32(128)),
             const("lo", np.float32(0)), const("hi", np.float32(255))]
    return nodes, {"x": x}, inits, ["u8", "y"]


def logic(rng):
    """Bool chains: comparisons, And, Or, Xor, Not and selects."""
    a = rng.integers(-3, 4, (5, 8)).astype(np.float32)
    b = rng.integers(-3, 4, (8,)).astype(np.float32)
    nodes = [node("Less", ["a", "b"], "lt"),
             node("Equal", ["a", "b"], "eq"),
             node("GreaterOrEqual", ["a", "zero"], "ge"),
             node("Or", ["lt", "eq"], "le"),
             node("Xor", ["le", "ge"], "x"),
             node("Not", ["x"], "n"),
             node("And", ["n", "ge"], "mask"),
             node("Where", ["mask", "a", "b"], "y")]
    return nodes, {"a": a, "b": b}, [const("zero", np.float32(0))], ["mask", "y"]


def doubles(rng):
    x = rng.uniform(-5, 5, (7, 3, 11))
    w = rng.uniform(-5, 5, (3, 1))
    nodes = [node("Mul", ["x", "w"], "m"),
             node("Round", ["m"], "r"),
             node("Sub", ["m", "r"], "f"),
             node("Div", ["f", "w"], "d"),
             node("Clip", ["d", "lo", "hi"], "y")]
    inits = [const("lo", np.float64(-0.25)), const("hi", np.float64(0.5))]
    return nodes, {"x": x, "w": w}, inits, ["y"]


CASES = [
    ("requantize nchw 16 channels", 13, requantize_between_convs((2, 3, 9, 7), 16)),
    ("requantize nchw 32 channels", 13, requantize_between_convs((1, 4, 6, 6), 32)),
    ("requantize ncw", 13, requantize_between_convs((2, 3, 11), 16)),
    ("requantize ncdhw", 13, requantize_between_convs((1, 2, 4, 5, 3), 16)),
    ("broadcasts", 13, broadcasts),
    ("unary kinds", 13, unary_kinds),
    ("integers int32", 13, integers(np.int32)),
    ("integers int64", 13, integers(np.int64)),
    ("quantize round trip", 13, quantize_round_trip),
    ("logic", 13, logic),
    ("doubles", 13, doubles),
]


def run_case(heterps, cluster, out, index, name, opset, build, gpu_cluster=None,
             gpu_device=False):
    rng = np.random.default_rng(index)
    nodes, feeds, inits, outputs = build(rng)
    model = helper.make_model(
        helper.make_graph(
            nodes, "case",
            [helper.make_tensor_value_info(k, TYPES[v.dtype], list(v.shape))
             for k, v in feeds.items()],
            [helper.make_tensor_value_info(k, TensorProto.UNDEFINED, None) for k in outputs],
            inits),
        opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # what every onnxruntime since 1.10 reads
    model = onnx.shape_inference.infer_shapes(model)
    work = os.path.join(out, f"case{index}")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    refs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        outputs, feeds)
    inputs = []
    for key, value in feeds.items():
        np.save(os.path.join(work, key + ".npy"), value)
        inputs += ["--input", f"{key}={os.path.join(work, key + '.npy')}"]
    results, loops = {}, 0
    variants = [("fused", cluster, "cpu-only", []),
                ("kernels", cluster, "cpu-only", ["--fuse-elementwise=false"])]
    if gpu_cluster:
        variants.append(("gpu", gpu_cluster, "gpu-only", []))
    for variant, where, strategy, flags in variants:
        bundle = os.path.join(work, variant)
        run_flags = ["--gpu-stages-on-cpu"] if variant == "gpu" and not gpu_device else []
        steps = [[heterps, "compile", path, "--cluster", where, "--throughput", "1",
                  "--strategy", strategy, "-o", bundle] + flags,
                 [heterps, "run", bundle, "--output-dir", os.path.join(work, variant + "-out")]
                 + inputs + run_flags]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                return f"FAIL {name}: {variant} {step[1]}: {done.stderr.strip()[-400:]}"
        results[variant] = {k: np.load(os.path.join(work, variant + "-out", k + ".npy"))
                            for k in outputs}
        if variant == "gpu":
            sources = [f for f in os.listdir(bundle) if f.endswith(".cu")]
            built = [f for f in os.listdir(bundle) if f.endswith(".gpu.so")]
            if not sources or len(built) != len(sources):
                return f"FAIL {name}: nvcc did not build the GPU stage"
            with open(os.path.join(bundle, sources[0])) as f:
                if "FusedLoop" not in f.read():
                    return f"FAIL {name}: the GPU stage has no fused loop"
        if variant == "fused":
            for source in os.listdir(bundle):
                if source.endswith(".cpp"):
                    with open(os.path.join(bundle, source)) as f:
                        loops += len(re.findall(r"forEachElement\(ctx, FusedLoop\d+(_8)?\{",
                                                f.read()))
    if loops == 0:
        return f"FAIL {name}: nothing was fused"
    worst = 0.0
    for key, ref in zip(outputs, refs):
        fused, kernels = results["fused"][key], results["kernels"][key]
        if fused.dtype != ref.dtype or fused.shape != ref.shape:
            return f"FAIL {name}: {key} is {fused.dtype}{fused.shape}, want {ref.dtype}{ref.shape}"
        if fused.tobytes() != kernels.tobytes():
            return f"FAIL {name}: {key}: the fused loop and the kernels differ"
        if gpu_cluster and results["gpu"][key].tobytes() != fused.tobytes():
            return f"FAIL {name}: {key}: the GPU stage differs from the CPU's"
        if ref.dtype.kind == "f":
            error = float(np.max(np.abs(fused - ref) / np.maximum(1, np.abs(ref))))
            if not np.allclose(fused, ref, rtol=1e-5, atol=1e-5):
                return f"FAIL {name}: {key} max error {error:.3g} against onnxruntime"
            worst = max(worst, error)
        elif not np.array_equal(fused, ref):
            return f"FAIL {name}: {key} differs from onnxruntime"
    return f"ok {name} ({loops} fused loops) max-error {worst:.3g}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("cluster")
    parser.add_argument("out")
    parser.add_argument("--gpu-cluster")
    parser.add_argument("--gpu-device", action="store_true")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    heterps = os.path.join(args.bin, "heterps")
    only = [n for n in args.only.split(",") if n]
    failed = 0
    for index, (name, opset, build) in enumerate(CASES):
        if only and name not in only:
            continue
        line = run_case(heterps, args.cluster, args.out, index, name, opset, build,
                        args.gpu_cluster, args.gpu_device)
        failed += line.startswith("FAIL")
        print(line, flush=True)
    print(f"failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
