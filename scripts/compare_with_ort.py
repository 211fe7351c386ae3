#!/usr/bin/env python3
"""Compiles an ONNX model with `heterps compile`, runs the bundle with
`heterps run` and compares every output with onnxruntime (CPU provider;
ONNX's reference evaluator for models onnxruntime refuses).

Inputs are random (floats in [-1, 1), integer ids in [0, --max-id)) unless
--reference-dir gives a directory of input_K.pb files. The check is
max|ours - ort| <= rtol * max(1, max|ort|) per output, plus allclose with
rtol elementwise. Prints one line per output and exits non-zero on any
mismatch or error.

Usage: compare_with_ort.py MODEL --heterps BIN --cluster FILE
         [--strategy S] [--throughput N] [--batch B] [--samples N]
         [--dim NAME=N ...] [--gpu-stages-on-cpu] [--reference-dir DIR] [--expect-gpu-stage]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def random_input(info, batch, samples, max_id, rng, named_dims):
    elem = info.type.tensor_type.elem_type
    dims = []
    for i, d in enumerate(info.type.tensor_type.shape.dim):
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.dim_param in named_dims:
            dims.append(named_dims[d.dim_param])
        elif i == 0:
            dims.append(samples if samples else batch)
        else:
            raise SystemExit(f"input {info.name} has a symbolic dim {i}; "
                             f"bind '{d.dim_param}' with --dim")
    dtype = onnx.helper.tensor_dtype_to_np_dtype(elem)
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1, 1, dims).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, dims).astype(np.bool_)
    return rng.integers(0, max_id, dims).astype(dtype)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("model")
    p.add_argument("--heterps", required=True)
    p.add_argument("--cluster", required=True)
    p.add_argument("--strategy", default="dp")
    p.add_argument("--throughput", default="1000")
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--samples", type=int, default=0,
                   help="samples per run for batched inputs (default: the batch)")
    p.add_argument("--max-id", type=int, default=50)
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="bind a named symbolic input dim (heterps compile --dim)")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu-stages-on-cpu", action="store_true")
    p.add_argument("--expect-gpu-stage", action="store_true",
                   help="fail unless the plan puts some stage on a GPU class")
    p.add_argument("--reference-dir")
    p.add_argument("--bundle", help="run this compiled bundle instead of compiling")
    args = p.parse_args()

    model = onnx.load(args.model)
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    rng = np.random.default_rng(args.seed)
    named_dims = {name: int(n) for name, n in (d.split("=", 1) for d in args.dim)}
    feeds = {}
    if args.reference_dir:
        for path in sorted(glob.glob(os.path.join(args.reference_dir, "input_*.pb"))):
            tensor = onnx.TensorProto()
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
            name = tensor.name or graph_inputs[len(feeds)].name
            feeds[name] = numpy_helper.to_array(tensor)
    else:
        for info in graph_inputs:
            feeds[info.name] = random_input(info, args.batch, args.samples,
                                            args.max_id, rng, named_dims)

    with tempfile.TemporaryDirectory() as tmp:
        bundle = args.bundle or os.path.join(tmp, "bundle")
        cmd = [args.heterps, "compile", args.model, "--cluster", args.cluster,
               "--throughput", args.throughput, "--strategy", args.strategy,
               "-o", bundle]
        if args.batch:
            cmd += ["--batch", str(args.batch)]
        for dim in args.dim:
            cmd += ["--dim", dim]
        r = subprocess.run(cmd, capture_output=True, text=True) if not args.bundle else None
        if r and r.returncode != 0:
            print(f"FAIL compile: {r.stderr.strip()}")
            return 1
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        kinds = [s["kind"] for s in manifest["stages"]]
        print("stages: " + " ".join(f"{s['name']}:{s['device']}x{s['replicas']}"
                                    for s in manifest["stages"]))
        if args.expect_gpu_stage and "gpu" not in kinds:
            print("FAIL the plan has no GPU stage")
            return 1
        cmd = [args.heterps, "run", bundle, "--output-dir", os.path.join(tmp, "out")]
        for name, value in feeds.items():
            path = os.path.join(tmp, f"in{len(cmd)}.npy")
            np.save(path, value)
            cmd += ["--input", f"{name}={path}"]
        if args.gpu_stages_on_cpu:
            cmd.append("--gpu-stages-on-cpu")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL run: {r.stderr.strip()}")
            return 1
        try:
            session = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
            expected = session.run(None, feeds)
            names = [o.name for o in session.get_outputs()]
        except Exception as e:
            # onnxruntime refuses some exported models its checker rejects
            # (a float Equal at opset 10); ONNX's reference evaluator runs them.
            from onnx.reference import ReferenceEvaluator
            print(f"onnxruntime refuses the model ({str(e).splitlines()[0][:80]}...); "
                  "using onnx.reference")
            evaluator = ReferenceEvaluator(model)
            expected = evaluator.run(None, feeds)
            names = list(evaluator.output_names)
        failed = False
        for name, ref in zip(names, expected):
            ref = np.asarray(ref)
            safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)
            ours = np.load(os.path.join(tmp, "out", safe + ".npy"))
            if ours.shape != ref.shape:
                print(f"FAIL {name}: shape {ours.shape} != {ref.shape}")
                failed = True
                continue
            if ref.dtype.kind in "fc":
                # NaN and infinities must be where onnxruntime has them;
                # the tolerance applies to the finite rest.
                finite = np.isfinite(ref)
                same_special = np.array_equal(np.isnan(ours), np.isnan(ref)) and \
                    np.array_equal(ours[np.isinf(ref)], ref[np.isinf(ref)])
                ours_f, ref_f = ours[finite], ref[finite]
                scale = max(1.0, float(np.max(np.abs(ref_f)))) if ref_f.size else 1.0
                err = float(np.max(np.abs(ours_f.astype(np.float64) - ref_f))) \
                    if ref_f.size else 0.0
                ok = same_special and err <= args.rtol * scale and np.allclose(
                    ours_f, ref_f, rtol=args.rtol, atol=args.rtol * scale)
                if not same_special:
                    print(f"FAIL {name}: NaN or infinities differ from the reference's")
            else:
                err = float(np.count_nonzero(ours != ref))
                ok = err == 0
            largest = float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0)) \
                if ref.dtype.kind in "fc" else float(np.max(np.abs(ref))) if ref.size else 0.0
            print(f"{'ok' if ok else 'FAIL'} {name}: {list(ref.shape)} max error {err:.3g} "
                  f"(max |reference| {largest:.3g})")
            failed |= not ok
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
