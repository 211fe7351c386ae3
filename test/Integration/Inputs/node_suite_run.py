#!/usr/bin/env python3
"""Runs ONNX's backend node tests (Debian's libonnx-testdata) through the
whole compile + run path: `heterps compile` under the local CPU cluster,
`heterps run` on the case's input_K.pb, outputs compared with its
output_K.pb (max|ours - ref| <= rtol * max(1, max|ref|), exact for
integers and booleans).

A case is
  passed   - outputs match;
  skipped  - the compiler refuses the model with a clear error (an op or
             attribute it does not support), or a kernel refuses an element
             type when the stage is created ("not supported");
  failed   - anything else: wrong numbers, a crash, a run-time error.
With --constant-operands, a case the compiler refuses is tried once more
with the graph inputs that feed attribute-like operands (Resize's scales,
Reshape's shape, Slice's starts, ... see CONSTANT_OPERANDS) turned into
initializers holding the case's own input values: ONNX's tests feed them
as inputs, exported models hold them as constants, and HeterPS plans
static shapes. Such passes are counted separately. A case whose reference
outputs contradict its own model is mended first (MENDED_CASES).
Prints FAIL lines and totals; --table writes the per-op table for docs/.

Usage: node_suite_run.py BIN_DIR CLUSTER [DATA_DIR] [--table FILE] [--jobs N]
                         [--constant-operands] [--compile-arg=FLAG]...
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


# Operand positions whose values fix shapes or the computation's parameters
# rather than carry data, per op type (opsets up to 17).
CONSTANT_OPERANDS = {
    "Resize": (1, 2, 3), "Upsample": (1,), "Reshape": (1,), "Expand": (1,),
    "Tile": (1,), "Slice": (1, 2, 3, 4), "Pad": (1, 2), "Squeeze": (1,),
    "Unsqueeze": (1,), "ReduceSum": (1,), "Split": (1,), "ConstantOfShape": (0,),
    "TopK": (1,), "OneHot": (1,), "Dropout": (1, 2), "Range": (0, 1, 2),
    "Trilu": (1,), "CumSum": (1,), "HannWindow": (0,), "HammingWindow": (0,),
    "BlackmanWindow": (0,), "MaxUnpool": (2,), "DFT": (1,), "STFT": (1, 3),
    "MelWeightMatrix": (0, 1, 2, 3, 4), "Loop": (0, 1),
}


def with_constant_operands(model, inputs, input_files):
    """The model with its attribute-like graph inputs made initializers, and
    the inputs that remain; None when no input feeds such an operand."""
    operand_names = set()
    for node in model.graph.node:
        for position in CONSTANT_OPERANDS.get(node.op_type, ()):
            if position < len(node.input) and node.input[position]:
                operand_names.add(node.input[position])
    data_names = {name for node in model.graph.node
                  for position, name in enumerate(node.input)
                  if position not in CONSTANT_OPERANDS.get(node.op_type, ())}
    frozen = [name for name in inputs
              if name in operand_names and name not in data_names]
    if not frozen:
        return None
    model = onnx.ModelProto.FromString(model.SerializeToString())
    kept = [i for i in model.graph.input if i.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    remaining = []
    for name, path in zip(inputs, input_files):
        if name in frozen:
            model.graph.initializer.append(numpy_helper.from_array(load_tensor(path), name))
        else:
            remaining.append((name, path))
    return model, remaining


def set_adam_epsilon(model):
    model.graph.node[0].attribute.append(onnx.helper.make_attribute("epsilon", 1e-2))


# Cases whose reference outputs contradict their own model, mended before
# they run (so the numbers are still checked). test_adam_multiple's outputs
# were computed with epsilon 1e-2 (onnx/backend/test/case/node/adam.py), but
# the node it stores does not set epsilon, whose default is 1e-6.
MENDED_CASES = {"test_adam_multiple": set_adam_epsilon}


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.split("error: ", 1)[-1].strip()[:200]
    return text.strip().splitlines()[0][:200] if text.strip() else "no message"


def run_case(bin_dir, cluster, case_dir, rtol, constant_operands):
    name = os.path.basename(case_dir.rstrip("/"))
    data_dir = os.path.join(case_dir, "test_data_set_0")
    model_path = os.path.join(case_dir, "model.onnx")
    try:
        model = onnx.load(model_path)
    except Exception as e:  # the importer's tests cover unreadable models
        return name, "skipped", f"onnx cannot load it: {e}"[:200], False
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    input_files = sorted(glob.glob(os.path.join(data_dir, "input_*.pb")),
                         key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    output_files = sorted(glob.glob(os.path.join(data_dir, "output_*.pb")),
                          key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    if len(input_files) != len(inputs) or len(output_files) != len(outputs):
        return name, "skipped", "test data does not match the graph's inputs/outputs", False
    if name in MENDED_CASES:
        MENDED_CASES[name](model)
        mended = tempfile.TemporaryDirectory()
        model_path = os.path.join(mended.name, "model.onnx")
        onnx.save(model, model_path)
    status, why = compile_and_check(bin_dir, cluster, model_path, list(zip(inputs, input_files)),
                                    outputs, output_files, rtol)
    if status == "skipped" and constant_operands:
        frozen = with_constant_operands(model, inputs, input_files)
        if frozen:
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "model.onnx")
                onnx.save(frozen[0], path)
                retry, retry_why = compile_and_check(bin_dir, cluster, path, frozen[1],
                                                     outputs, output_files, rtol)
            if retry != "skipped":
                return name, retry, retry_why, True
    return name, status, why, False


# Extra `heterps compile` flags (--compile-arg).
COMPILE_ARGS = []


def compile_and_check(bin_dir, cluster, model_path, feeds, outputs, output_files, rtol):
    """(status, why) of compiling the model and running it on `feeds`
    (name, .pb path) against the expected `output_files`."""
    with tempfile.TemporaryDirectory() as tmp:
        bundle = os.path.join(tmp, "bundle")
        try:
            r = subprocess.run(
                [os.path.join(bin_dir, "heterps"), "compile", model_path, "--cluster", cluster,
                 "--throughput", "1", "--strategy", "cpu-only", "-o", bundle,
                 *COMPILE_ARGS],
                capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return "failed", "compile timed out"
        if r.returncode != 0:
            if r.returncode == 1 and "error" in r.stderr and not os.path.exists(bundle):
                return "skipped", first_error(r.stderr)
            return "failed", f"compile exited {r.returncode}: {first_error(r.stderr)}"
        cmd = [os.path.join(bin_dir, "heterps"), "run", bundle, "--output-dir",
               os.path.join(tmp, "out")]
        for input_name, path in feeds:
            cmd += ["--input", f"{input_name}={path}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return "failed", "run timed out"
        if r.returncode != 0:
            message = first_error(r.stderr)
            if r.returncode == 1 and "not supported" in message:
                return "skipped", message
            if r.returncode == 1 and "bf16" in message:
                # numpy has no bfloat16; ONNX's files hold its bits as uint16.
                return "skipped", "bfloat16 tensors have no .npy form"
            return "failed", f"run exited {r.returncode}: {message}"
        for output_name, path in zip(outputs, output_files):
            ref = load_tensor(path)
            safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in output_name)
            if not safe or safe[0] == ".":
                safe = "_" + safe
            ours = np.load(os.path.join(tmp, "out", safe + ".npy"))
            if ours.shape != ref.shape:
                return "failed", f"{output_name}: shape {ours.shape} != {ref.shape}"
            if ref.dtype.kind in "fc":
                if ref.size == 0:
                    continue
                both_nan = np.isnan(ref) & np.isnan(ours)
                finite = np.isfinite(ref)
                if np.any((ours != ref) & ~finite & ~both_nan):
                    return "failed", f"{output_name}: non-finite values differ"
                scale = max(1.0, float(np.max(np.abs(ref[finite])))) if finite.any() else 1.0
                err = float(np.max(np.abs(ours[finite].astype(np.float64) - ref[finite]))) \
                    if finite.any() else 0.0
                if err > rtol * scale:
                    return "failed", f"{output_name}: max error {err:.3g} (scale {scale:.3g})"
            elif not np.array_equal(ours, ref):
                return "failed", f"{output_name}: {np.count_nonzero(ours != ref)} elements differ"
    return "passed", ""


def op_of(case):
    """test_conv_with_strides_padding -> conv (the ONNX op, roughly)."""
    return case[len("test_"):].split("_")[0] if case.startswith("test_") else case


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("bin_dir")
    parser.add_argument("cluster")
    parser.add_argument("data_dir", nargs="?", default="/usr/share/libonnx-testdata/data/node")
    parser.add_argument("--table", help="write a markdown table of the results")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--verbose", action="store_true", help="print why each case was skipped")
    parser.add_argument("--constant-operands", action="store_true",
                        help="retry refused cases with attribute-like inputs made constants")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="an extra heterps compile flag (repeatable)")
    args = parser.parse_args()
    COMPILE_ARGS.extend(args.compile_arg)
    cases = sorted(os.path.join(args.data_dir, d) for d in os.listdir(args.data_dir)
                   if args.filter in d and
                   os.path.isfile(os.path.join(args.data_dir, d, "model.onnx")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(args.bin_dir, args.cluster, c, args.rtol,
                                                         args.constant_operands),
                                cases))
    counts = collections.Counter(status for _, status, _, _ in results)
    frozen = collections.Counter(status for _, status, _, f in results if f)
    for name, status, why, _ in results:
        if status == "failed":
            print(f"FAIL {name}: {why}")
        elif status == "skipped" and args.verbose:
            print(f"SKIP {name}: {why}")
    print(f"cases: {len(results)}")
    for status in ("passed", "skipped", "failed"):
        print(f"{status}: {counts[status]}")
    if args.constant_operands:
        print(f"passed with constant operands: {frozen['passed']}")
    if args.table:
        per_op = collections.defaultdict(collections.Counter)
        reasons = collections.defaultdict(collections.Counter)
        for name, status, why, was_frozen in results:
            per_op[op_of(name)][status] += 1
            if was_frozen and status == "passed":
                per_op[op_of(name)]["constant"] += 1
            if status == "skipped":
                reasons[op_of(name)][why.split("'")[0][:60] if why else ""] += 1
        with open(args.table, "w") as f:
            f.write("| test prefix | cases | passed | of which with constant operands "
                    "| failed | skipped |\n")
            f.write("|---|---|---|---|---|---|\n")
            for op in sorted(per_op):
                c = per_op[op]
                f.write(f"| {op} | {c['passed'] + c['failed'] + c['skipped']} | {c['passed']} | "
                        f"{c['constant']} | {c['failed']} | "
                        f"{c['skipped']} |\n")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
