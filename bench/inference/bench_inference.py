#!/usr/bin/env python3
"""Forward-inference benchmark: HeterPS stage programs against onnxruntime.

Workloads: the MNIST MLP, NCF (NeuMF, MovieLens-1M) and ResNet-20 (CIFAR-10)
from ../shared/models, ResNet-20 quantized by onnxruntime's own static
quantizer (test/Integration/Inputs/quantize_with_ort.py: QLinearConv, int8
per channel, 7-bit weights; resnet20-int8-all also quantizes the residual
adds and the classifier: QLinearAdd, QGemm; resnet20-qdq writes the
convolutions and the classifier in QDQ format, DequantizeLinear -> Conv ->
QuantizeLinear), and a generated HeterPS-style
CTR model
(bench/generate_ctr_model.py). Each runs at batch 1 and batch 256 on the same
machine, in one process run:

- ours: `heterps compile MODEL --cluster clusters/local-cpu.yaml --throughput 1
  --strategy cpu-only --batch B`, then `heterps run BUNDLE --threads T
  --repeat R` (its reported median over R timed runs after one warm-up run);
- onnxruntime: CPUExecutionProvider, intra_op_num_threads=T,
  inter_op_num_threads=1, all graph optimizations, one warm-up then R timed
  session.run calls, median.

With --gpu (a machine with an NVIDIA GPU and PyTorch with CUDA): ours
compiles with `--cluster clusters/h100-host.yaml --strategy gpu-only`, and the
peer is PyTorch on CUDA running the same ONNX file converted by onnx2torch,
exact fp32 (TF32 off, as our cuBLAS/cuDNN calls), each call uploading the
inputs and downloading the outputs as `heterps run` does.

With --micro-batches M, each batch B > M also runs ours compiled with
`--batch M` on the same B samples (`heterps run` cuts them into B/M
micro-batches), next to the plain row; the generated models, whose inputs
have a static batch, are not run this way.

R is calibrated per case and system so that one measurement takes about
--seconds. The whole measurement is repeated --rounds times (ours and
onnxruntime alternate within a round) and the median of the medians is
reported. Inputs are random (floats uniform in [-1, 1), integer ids in
[0, 50)), the same for both; our outputs are compared with onnxruntime's once
per case (max abs error; mismatching integer elements for integer outputs).

The shipped models have a static batch of 1. For batch 256 a variant is
written to a temp dir: graph input dim 0 becomes the dim_param "N", dim 0 of
graph outputs is cleared, value_info is cleared. Batch hard-coded in the graph
is fixed only where it is clearly the batch dim (the node's input has batch 1
on dim 0 under the batch-1 shape inference):
- a Reshape whose constant target shape starts with 1: the leading 1 becomes
  -1 (other entries that are -1 are resolved to the static batch-1 sizes, since
  ONNX allows a single -1);
- a Flatten with axis=0 (Keras exports of Flatten) becomes axis=1, which is
  the same at batch 1 (disable with --no-flatten-fix).
Every variant is checked with onnxruntime: samples 0 and 1 of the batch-256
variant must equal the original batch-1 model on those samples; otherwise (or
when the variant is refused) the case is reported "not applicable" with the
reason. The CTR model is generated with --batch 1 and --batch 256 from the
same seed (identical weights), so it needs no variant; so is the
transformer (bench/generate_transformer_model.py: two opset-24 decoder
blocks, RMSNormalization, RotaryEmbedding, causal grouped-query Attention,
a Swish-gated MLP; hidden 256, 8 query and 4 kv heads, sequences of 64)
and the LSTM classifier (bench/generate_lstm_model.py: 1000 steps, input
64, hidden 128, a Gemm to 10 logits; past the unrolling limit, so one
hps.recurrence).

Usage: bench_inference.py [--build build] [--out docs/benchmarks/inference.md]
         [--rounds 3] [--threads T] [--workloads mlp,ncf,...] [--batches 1,256]
         [--gpu] [--heterps BIN]
"""
import argparse
import copy
import datetime
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper, shape_inference

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODELS = os.environ.get("MODELS") or os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
WORKLOADS = {
    "mlp": "mlp/mnist_mlp_onnxmlir_opset13.onnx",
    "ncf": "recsys/ncf_neumf_movielens1m_opset7.onnx",
    "resnet20": "cnn/resnet20_cifar10_opset12.onnx",
    # The same model quantized by onnxruntime's own static quantizer: the
    # convolutions only, or also the residual adds and the classifier
    # (com.microsoft QLinearAdd and QGemm).
    "resnet20-int8": "cnn/resnet20_cifar10_opset12.onnx",
    "resnet20-int8-all": "cnn/resnet20_cifar10_opset12.onnx",
    "resnet20-qdq": "cnn/resnet20_cifar10_opset12.onnx",
    "ctr": None,  # generated
    "transformer": None,  # generated
    "lstm": None,  # generated
}
LABELS = {
    "mlp": "MNIST MLP",
    "ncf": "NCF (NeuMF)",
    "resnet20": "ResNet-20",
    "resnet20-int8": "ResNet-20 int8 (QLinearConv)",
    "resnet20-int8-all": "ResNet-20 int8 (QLinearConv, QLinearAdd, QGemm)",
    "resnet20-qdq": "ResNet-20 int8 (QDQ format: Conv, Gemm)",
    "ctr": "CTR (generated)",
    "transformer": "Transformer (generated, opset 24)",
    "lstm": "LSTM classifier (generated, 1000 steps)",
}
# Workloads generated at each batch with a static one: no micro-batches.
GENERATED = {w for w, path in WORKLOADS.items() if path is None}
MAX_ID = 50
QUANTIZER = os.path.join(ROOT, "test", "Integration", "Inputs", "quantize_with_ort.py")
RUN_RE = re.compile(r"(\d+) runs: median ([0-9.eE+-]+) s, ([0-9.eE+-]+) (?:samples|calls)/s")


class NotApplicable(Exception):
    pass


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# --------------------------------------------------------------------------
# Models and variants

def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def static_dims(info):
    return [d.dim_value if d.HasField("dim_value") else None
            for d in info.type.tensor_type.shape.dim]


def constant_value(model, name):
    """The value of `name` if it is an initializer or a Constant node output."""
    for init in model.graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init), init
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            for a in node.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t), node
    return None, None


def batch_variant(path, out_path, flatten_fix=True):
    """Writes the dynamic-batch variant of a static batch-1 model; returns the
    list of fixes applied. Raises NotApplicable when the batch is baked in."""
    model = onnx.load(path)
    inferred = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        shapes[vi.name] = static_dims(vi)
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)

    ins = graph_inputs(model)
    for info in ins:
        dims = info.type.tensor_type.shape.dim
        if not dims or not dims[0].HasField("dim_value") or dims[0].dim_value != 1:
            raise NotApplicable(f"input {info.name} has no static leading batch dim of 1")

    fixes = []
    uses = {}
    for node in model.graph.node:
        for i in node.input:
            uses[i] = uses.get(i, 0) + 1
    for node in model.graph.node:
        if node.op_type == "Reshape":
            value, holder = constant_value(model, node.input[1])
            if value is None:
                continue  # computed shape: follows the batch by itself
            data = shapes.get(node.input[0])
            out = shapes.get(node.output[0])
            if value.size == 0 or value[0] != 1:
                continue
            if not data or data[0] != 1 or not out or None in out:
                raise NotApplicable(f"Reshape {node.name} target {value.tolist()}: leading 1 "
                                    "is not clearly the batch dim")
            new = np.array([-1] + out[1:], dtype=value.dtype)
            name = node.input[1] + "__batch"
            model.graph.initializer.append(numpy_helper.from_array(new, name))
            node.input[1] = name
            fixes.append(f"Reshape {node.name}: shape {value.tolist()} -> {new.tolist()}")
        elif node.op_type == "Flatten":
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            data = shapes.get(node.input[0])
            if axis != 0:
                continue
            if not flatten_fix:
                raise NotApplicable(f"Flatten {node.name} has axis=0, which folds the batch "
                                    "into the features")
            if not data or data[0] != 1:
                raise NotApplicable(f"Flatten {node.name} axis=0 on a non-batch tensor")
            for a in node.attribute:
                if a.name == "axis":
                    a.i = 1
            fixes.append(f"Flatten {node.name}: axis 0 -> 1")

    # Drop shape constants the fixes left unused.
    used = {i for node in model.graph.node for i in node.input}
    for init in list(model.graph.initializer):
        if init.name not in used and init.name not in {i.name for i in model.graph.input}:
            model.graph.initializer.remove(init)
    for node in list(model.graph.node):
        if node.op_type == "Constant" and node.output[0] not in used and \
                node.output[0] not in {o.name for o in model.graph.output}:
            model.graph.node.remove(node)

    for info in ins:
        d0 = info.type.tensor_type.shape.dim[0]
        d0.Clear()
        d0.dim_param = "N"
    for out in model.graph.output:
        dims = out.type.tensor_type.shape.dim
        if dims:
            dims[0].Clear()
    del model.graph.value_info[:]
    onnx.save(model, out_path)
    return fixes


def quiet():
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return so


def check_variant(original, variant, rng):
    """Samples 0 and 1 of the variant at batch 256 must match the original."""
    try:
        base = ort.InferenceSession(original, quiet(), providers=["CPUExecutionProvider"])
        var = ort.InferenceSession(variant, quiet(), providers=["CPUExecutionProvider"])
        model = onnx.load(variant)
        feeds = make_inputs(model, 256, rng)
        got = var.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - report any refusal
        raise NotApplicable(f"onnxruntime refuses the batch-256 variant: {str(e).splitlines()[0][:160]}")
    for out, g in zip(var.get_outputs(), got):
        if g.shape[:1] != (256,):
            raise NotApplicable(f"output {out.name} has shape {list(g.shape)} at batch 256")
    for s in (0, 1):
        ref = base.run(None, {k: v[s:s + 1] for k, v in feeds.items()})
        for r, g in zip(ref, got):
            if not np.allclose(r, g[s:s + 1], rtol=1e-4, atol=1e-5):
                raise NotApplicable(f"the batch-256 variant disagrees with the batch-1 model on sample {s}")


def make_inputs(model, batch, rng):
    feeds = {}
    for info in graph_inputs(model):
        dims = []
        for i, d in enumerate(info.type.tensor_type.shape.dim):
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif i == 0:
                dims.append(batch)
            else:
                raise SystemExit(f"input {info.name} has a symbolic dim {i}")
        dtype = helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[info.name] = rng.uniform(-1, 1, dims).astype(dtype)
        elif dtype == np.bool_:
            feeds[info.name] = rng.integers(0, 2, dims).astype(np.bool_)
        else:
            feeds[info.name] = rng.integers(0, MAX_ID, dims).astype(dtype)
    return feeds


# --------------------------------------------------------------------------
# The two systems

class Ours:
    def __init__(self, heterps, model, batch, threads, work, gpu=False, flags=()):
        self.heterps, self.threads, self.work = heterps, threads, work
        self.env = None  # the environment of `heterps run` (None: ours)
        self.bundle = os.path.join(work, "bundle")
        cluster, strategy = ("h100-host.yaml", "gpu-only") if gpu else ("local-cpu.yaml", "cpu-only")
        cmd = [heterps, "compile", model, "--cluster", os.path.join(ROOT, "clusters", cluster),
               "--throughput", "1", "--strategy", strategy, "--batch", str(batch), "-o", self.bundle]
        cmd += list(flags)
        t0 = time.perf_counter()
        r = sh(cmd)
        self.compile_seconds = time.perf_counter() - t0
        if r.returncode:
            raise RuntimeError("heterps compile failed: " + r.stderr.strip()[-2000:])
        manifest = json.load(open(os.path.join(self.bundle, "manifest.json")))
        self.stages = len(manifest["stages"])

    def set_inputs(self, feeds):
        self.input_args = []
        for i, (name, value) in enumerate(feeds.items()):
            path = os.path.join(self.work, f"input{i}.npy")
            np.save(path, value)
            self.input_args += ["--input", f"{name}={path}"]

    def command(self, repeat, output_dir=None):
        cmd = [self.heterps, "run", self.bundle] + self.input_args + [
            "--threads", str(self.threads), "--repeat", str(repeat)]
        if output_dir:
            cmd += ["--output-dir", output_dir]
        return cmd

    def with_env(self, **settings):
        """The same bundle and inputs, run with `settings` added to the
        environment (HETERPS_CPU_WINOGRAD="0", ...)."""
        other = copy.copy(self)
        other.env = dict(os.environ, **settings)
        return other

    def measure(self, repeat, timeout=None):
        """Median seconds per run of the whole input, over `repeat` runs."""
        try:
            r = sh(self.command(repeat), timeout=timeout, env=self.env)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"heterps run --repeat {repeat} timed out after {timeout:.0f} s")
        if r.returncode:
            raise RuntimeError("heterps run failed: " + r.stderr.strip()[-2000:])
        m = RUN_RE.search(r.stderr)
        if not m:
            raise RuntimeError("no timing line in heterps run output: " + r.stderr.strip()[-500:])
        return float(m.group(2))

    def outputs(self, names):
        out = os.path.join(self.work, "out")
        r = sh(self.command(0, out), env=self.env)
        if r.returncode:
            raise RuntimeError("heterps run failed: " + r.stderr.strip()[-2000:])
        result = []
        for name in names:
            safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)
            result.append(np.load(os.path.join(out, safe + ".npy")))
        return result


class OnnxRuntime:
    def __init__(self, model, threads):
        so = quiet()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        self.names = [o.name for o in self.session.get_outputs()]

    def set_inputs(self, feeds):
        self.feeds = feeds

    def measure(self, repeat, timeout=None):
        self.session.run(None, self.feeds)  # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            self.session.run(None, self.feeds)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def outputs(self):
        return self.session.run(None, self.feeds)


class TorchCuda:
    """The GPU peer: the same ONNX file converted by onnx2torch, run by PyTorch
    on CUDA in eval mode under no_grad. A call uploads the inputs, runs and
    downloads the outputs, as `heterps run` does; timed after a synchronize."""

    def __init__(self, model):
        import torch
        from onnx2torch import convert
        # Exact fp32 like our stages (cuBLAS/cuDNN FMA math): no TF32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.torch = torch
        try:
            module = convert(model)
        except NotImplementedError:  # onnx2torch lacks some old opsets (Cast-6)
            from onnx import version_converter
            module = convert(version_converter.convert_version(onnx.load(model), 13))
        self.module = module.eval().cuda()
        self.names = [o.name for o in onnx.load(model).graph.output]

    def set_inputs(self, feeds):
        self.feeds = list(feeds.values())

    def call(self):
        torch = self.torch
        with torch.no_grad():
            inputs = [torch.from_numpy(x).cuda(non_blocking=True) for x in self.feeds]
            out = self.module(*inputs)
            out = out if isinstance(out, (tuple, list)) else [out]
            return [o.cpu().numpy() for o in out]  # synchronizes

    def measure(self, repeat, timeout=None):
        self.call()  # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            self.call()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def outputs(self):
        return self.call()


def calibrate(system, seconds, min_repeat=5):
    """Repeat count so that one measurement takes about `seconds` of wall
    time. Per-run cost is the wall-time slope between a 10- and a 30-run
    measurement, so it includes the occasional stalled run (on a loaded
    machine a thread can lose its core for a scheduler time slice) and
    excludes process start and bundle load."""
    t0 = time.perf_counter()
    system.measure(3)
    coarse = (time.perf_counter() - t0) / 4
    if coarse > seconds / 20:  # slow case: the coarse estimate will do
        return int(np.clip(round(seconds / coarse), min_repeat, 200000)), coarse
    walls = []
    for repeat in (10, 30):
        t0 = time.perf_counter()
        system.measure(repeat)
        walls.append(time.perf_counter() - t0)
    per_run = max((walls[1] - walls[0]) / 20, walls[1] / 40, 1e-7)
    return int(np.clip(round(seconds / per_run), min_repeat, 200000)), per_run


def max_error(ours, ref):
    err = 0.0
    for o, r in zip(ours, ref):
        r = np.asarray(r)
        if o.shape != r.shape:
            return f"shape {list(o.shape)} != {list(r.shape)}"
        if r.dtype.kind in "fc":
            err = max(err, float(np.max(np.abs(o.astype(np.float64) - r))) if r.size else 0.0)
        else:
            err = max(err, float(np.count_nonzero(o != r)))
    return err


# --------------------------------------------------------------------------

def snapshot_toolchain(build, work):
    """Copies heterps, the runtime libraries and headers into `work` so that
    a concurrent rebuild of `build` cannot change or break a run midway;
    returns the copied heterps."""
    import shutil
    src = os.path.join(build, "bin", "heterps")
    if not os.access(src, os.X_OK):
        raise SystemExit(f"{src} is missing or not executable (being rebuilt?)")
    os.makedirs(os.path.join(work, "bin"))
    heterps = os.path.join(work, "bin", "heterps")
    shutil.copy2(src, heterps)
    lib = os.path.join(work, "rtlib")
    os.makedirs(lib)
    for name in os.listdir(os.path.join(build, "lib")):
        if name.startswith("libheterps_rt") and name.endswith(".so"):
            shutil.copy2(os.path.join(build, "lib", name), lib)
    include = os.path.join(work, "rtinclude")
    shutil.copytree(os.path.join(ROOT, "runtime", "include"), include)
    os.environ["HETERPS_RT_LIB"] = lib
    os.environ["HETERPS_RT_INCLUDE"] = include
    os.environ["LD_LIBRARY_PATH"] = lib + (":" + os.environ["LD_LIBRARY_PATH"]
                                           if os.environ.get("LD_LIBRARY_PATH") else "")
    return heterps


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        m = re.search(r"^flags\s*:(.*)$", text, re.M)
        if m:
            have = set(m.group(1).split())
            flags = ", ".join(x for x in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if x in have)
    except OSError:
        pass
    return cpu, os.cpu_count(), flags


def git_commit():
    try:
        r = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    except OSError:  # no git (a copied tree on another machine)
        return "unknown"
    commit = r.stdout.strip() or "unknown"
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    return commit + (" (with uncommitted changes)" if dirty else "")


def fmt_err(e):
    return e if isinstance(e, str) else f"{e:.3g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", help="build directory (relative to the repo root or absolute)")
    parser.add_argument("--out", default=os.path.join("docs", "benchmarks", "inference.md"),
                        help="markdown output (relative to the repo root or absolute)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated subset of " + ",".join(WORKLOADS))
    parser.add_argument("--batches", default="1,256", help="comma-separated batch sizes")
    parser.add_argument("--micro-batches", default="",
                        help="comma-separated micro-batches: for each batch B above one, also "
                             "compile ours at `--batch M` and run the B samples through it "
                             "(cut into B/M micro-batches, as `heterps run` does); models with "
                             "a static batch (the generated ones) are not run this way")
    parser.add_argument("--seconds", type=float, default=1.5, help="target time of one measurement")
    parser.add_argument("--ctr-layers", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-flatten-fix", action="store_true",
                        help="report models with Flatten(axis=0) as not applicable at batch > 1")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    parser.add_argument("--min-repeat", type=int, default=5,
                        help="fewest timed runs per measurement (a GPU run's process start and "
                             "device setup dwarf its runs, so calibration alone picks too few)")
    parser.add_argument("--gpu", action="store_true",
                        help="GPU stages (gpu-only on clusters/h100-host.yaml) against PyTorch on "
                             "CUDA (onnx2torch) instead of CPU stages against onnxruntime")
    parser.add_argument("--heterps", help="use this heterps (and its runtime found through "
                                          "HETERPS_RT_LIB) instead of a snapshot of --build")
    args = parser.parse_args()
    command = " ".join(["python3 bench/inference/bench_inference.py"] + [shlex.quote(a) for a in sys.argv[1:]])
    build = args.build if os.path.isabs(args.build) else os.path.join(ROOT, args.build)
    out_md = args.out if os.path.isabs(args.out) else os.path.join(ROOT, args.out)
    work = tempfile.mkdtemp(prefix="heterps-inference-")
    heterps = args.heterps or snapshot_toolchain(build, work)
    peer = "PyTorch (CUDA)" if args.gpu else "onnxruntime"
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in workloads:
        if w not in WORKLOADS:
            parser.error(f"unknown workload {w}")
    batches = [int(b) for b in args.batches.split(",")]
    micro_batches = [int(m) for m in args.micro_batches.split(",") if m.strip()]
    threads = args.threads
    started = datetime.datetime.now()
    load_before = os.getloadavg()

    # Prepare every case: model file, inputs, both systems, error check.
    cases = []
    ctr_layers = None
    plans = [(b, None) for b in batches]
    for m in micro_batches:
        plans += [(b, m) for b in batches if m < b]
    for w in workloads:
        for b, micro in plans:
            if micro and w in GENERATED:
                continue  # their inputs have a static batch
            case = {"workload": w, "batch": b, "micro": micro, "threads": threads, "na": None,
                    "notes": []}
            cases.append(case)
            cdir = os.path.join(work, f"{w}-b{b}" + (f"-m{micro}" if micro else ""))
            os.makedirs(cdir)
            try:
                if w == "ctr":
                    model = os.path.join(cdir, "ctr.onnx")
                    r = sh([sys.executable, os.path.join(ROOT, "bench", "generate_ctr_model.py"),
                            "--layers", str(args.ctr_layers), "--seed", "1", "--batch", str(b),
                            "-o", model])
                    if r.returncode:
                        raise RuntimeError("generate_ctr_model.py failed: " + r.stderr)
                    m = re.search(r"(\d+) layers", r.stdout + r.stderr)
                    ctr_layers = m.group(1) if m else ctr_layers
                elif w == "transformer":
                    # The batch counts sequences of 64 tokens.
                    model = os.path.join(cdir, "transformer.onnx")
                    r = sh([sys.executable,
                            os.path.join(ROOT, "bench", "generate_transformer_model.py"),
                            "--batch", str(b), "--seed", "1", "-o", model])
                    if r.returncode:
                        raise RuntimeError("generate_transformer_model.py failed: " + r.stderr)
                elif w == "lstm":
                    # The batch counts sequences of 1000 steps (past the
                    # unrolling limit: one hps.recurrence).
                    model = os.path.join(cdir, "lstm.onnx")
                    r = sh([sys.executable,
                            os.path.join(ROOT, "bench", "generate_lstm_model.py"),
                            "--steps", "1000", "--batch", str(b), "--seed", "1",
                            "-o", model])
                    if r.returncode:
                        raise RuntimeError("generate_lstm_model.py failed: " + r.stderr)
                else:
                    original = os.path.join(MODELS, WORKLOADS[w])
                    if b == 1:
                        model = original
                    else:
                        model = os.path.join(cdir, "variant.onnx")
                        fixes = batch_variant(original, model, flatten_fix=not args.no_flatten_fix)
                        check_variant(original, model, np.random.default_rng(args.seed + 1))
                        case["notes"] += fixes
                    if "-int8" in w or w.endswith("-qdq"):
                        quantized = os.path.join(cdir, "quantized.onnx")
                        if w.endswith("-qdq"):
                            options = ["--ops", "Conv,Gemm", "--format", "qdq", "--opset", "13"]
                        else:
                            options = ["--ops", "Conv,Add,Gemm" if w.endswith("-all") else "Conv"]
                        r = sh([sys.executable, QUANTIZER, model, quantized] + options)
                        if r.returncode:
                            raise RuntimeError("quantize_with_ort.py failed: " + r.stderr)
                        model = quantized
                rng = np.random.default_rng(args.seed)
                feeds = make_inputs(onnx.load(model), b, rng)
                # The LSTM is generated at its batch ([steps, batch,
                # features]): no symbolic dim for --batch to bind, which the
                # driver refuses; 0 keeps the model's own.
                ours = Ours(heterps, model, 0 if w == "lstm" else micro or b, threads, cdir,
                            gpu=args.gpu)
                ours.set_inputs(feeds)
                theirs = TorchCuda(model) if args.gpu else OnnxRuntime(model, threads)
                theirs.set_inputs(feeds)
                case["error"] = max_error(ours.outputs(theirs.names), theirs.outputs())
                case["stages"] = ours.stages
                case["compile_s"] = ours.compile_seconds
                case["systems"] = {"ours": ours, "ort": theirs}
                case["repeat"] = {}
                for key, system in case["systems"].items():
                    case["repeat"][key], probe = calibrate(system, args.seconds, args.min_repeat)
                case["medians"] = {"ours": [], "ort": []}
                print(f"prepared {w} b{b}: error {fmt_err(case['error'])}, stages {ours.stages}, "
                      f"repeats ours {case['repeat']['ours']} ort {case['repeat']['ort']}", flush=True)
            except NotApplicable as e:
                case["na"] = str(e)
                print(f"not applicable {w} b{b}: {e}", flush=True)
            except Exception as e:  # noqa: BLE001 - keep going, report the failure
                case["na"] = "failed: " + str(e).strip().splitlines()[-1][:300]
                print(f"FAILED {w} b{b}: {e}", flush=True)

    # Rounds: every case, ours then onnxruntime, each round.
    for rnd in range(args.rounds):
        for case in cases:
            if case["na"]:
                continue
            for key in ("ours", "ort"):
                try:
                    case["medians"][key].append(case["systems"][key].measure(
                        case["repeat"][key], timeout=max(60.0, 20 * args.seconds)))
                except Exception as e:  # noqa: BLE001
                    case["na"] = "failed: " + str(e).strip().splitlines()[-1][:300]
                    break
        print(f"round {rnd + 1}/{args.rounds} done", flush=True)

    def batch_label(case):
        micro = case.get("micro")
        return f"{case['batch']} (micro-batches of {micro})" if micro else case["batch"]

    rows = []
    for case in cases:
        label = LABELS[case["workload"]]
        if case["workload"] == "ctr" and ctr_layers:
            label += f", {ctr_layers} layers"
        if case["na"]:
            rows.append((label, batch_label(case), case["threads"], "n/a", "n/a", "n/a", "n/a", "n/a",
                         "not applicable: " + case["na"] if not case["na"].startswith("failed")
                         else case["na"]))
            continue
        o = statistics.median(case["medians"]["ours"])
        t = statistics.median(case["medians"]["ort"])
        b = case["batch"]
        case["ours_s"], case["ort_s"] = o, t
        rows.append((label, batch_label(case), case["threads"], f"{o * 1e3:.4g}", f"{b / o:.4g}", f"{t * 1e3:.4g}",
                     f"{b / t:.4g}", f"{t / o:.3f}", fmt_err(case["error"])))

    cpu, cores, flags = machine_info()
    load_after = os.getloadavg()
    header = (f"| workload | batch | threads | ours ms/call | ours samples/s | {peer} ms/call | "
              f"{peer} samples/s | ratio (ours/{peer} samples/s) | max error |\n"
              "|---|---|---|---|---|---|---|---|---|\n")
    table = header + "".join("| " + " | ".join(str(x) for x in r) + " |\n" for r in rows)

    spread = []
    for case in cases:
        if case["na"]:
            continue
        for key, name in (("ours", "ours"), ("ort", peer)):
            ms = case["medians"][key]
            micro = f" m{case['micro']}" if case.get("micro") else ""
            spread.append(f"{LABELS[case['workload']]} b{case['batch']}{micro} {name}: "
                          + ", ".join(f"{m * 1e3:.4g}" for m in ms) + f" ms (R={case['repeat'][key]})")
    notes = []
    for case in cases:
        for n in case["notes"]:
            notes.append(f"{LABELS[case['workload']]} b{case['batch']}: {n}")

    os.makedirs(os.path.dirname(out_md), exist_ok=True)
    with open(out_md, "w") as f:
        f.write("# Inference benchmark\n\n")
        f.write(f"Produced by `{command}` on {started:%Y-%m-%d %H:%M} at commit {git_commit()}, "
                f"onnxruntime {ort.__version__}, on {cpu} ({cores} cores"
                + (f"; {flags}" if flags else "") + f"; {platform.machine()}, {'GPU machine' if args.gpu else 'shared build machine'}; 1-minute load average "
                f"{load_before[0]:.2f} at the start, {load_after[0]:.2f} at the end).\n\n")
        if args.gpu:
            import torch
            f.write(f"Forward inference on the GPU ({torch.cuda.get_device_name()}). Ours: "
                    "`heterps compile MODEL --cluster clusters/h100-host.yaml --throughput 1 "
                    "--strategy gpu-only --batch B`, then `heterps run --repeat R` (median over R "
                    "runs of the whole batch, host inputs to host outputs, after a warm-up run). "
                    f"Peer: PyTorch {torch.__version__} on CUDA running the same ONNX file "
                    "converted by onnx2torch (eval, no_grad; a call uploads the inputs and "
                    "downloads the outputs), median of R calls after a warm-up. Max error = max "
                    "|ours - PyTorch|.\n\n")
        f.write("" if args.gpu else "Forward inference only, CPU. Ours: `heterps compile MODEL --cluster "
                "clusters/local-cpu.yaml --throughput 1 --strategy cpu-only --batch B`, then "
                f"`heterps run --threads {threads} --repeat R` (median over R runs of the whole "
                "batch after a warm-up run, process start and bundle load excluded). onnxruntime: "
                f"CPUExecutionProvider, intra_op_num_threads={threads}, inter_op_num_threads=1, "
                "ORT_ENABLE_ALL, one warm-up then R timed `session.run` calls, median. R is "
                f"calibrated per case so one measurement takes ~{args.seconds:g} s; reported "
                f"value = median of the medians of {args.rounds} rounds. Latency is ms per call "
                "(one call = the whole batch); ratio = ours samples/s over onnxruntime's (> 1: "
                "we are faster). Inputs: random, floats uniform in [-1, 1), integer ids in "
                f"[0, {MAX_ID}), the same for both; max error = max |ours - onnxruntime| over all "
                "outputs.\n\n")
        if micro_batches:
            f.write("A batch written `B (micro-batches of M)`: ours compiled with `--batch M` "
                    "and given the same B samples, which `heterps run` cuts into B/M "
                    "micro-batches that run one after another through the stage; the "
                    "activations of a micro-batch stay in cache between layers. onnxruntime "
                    "runs all B at once as in the plain row.\n\n")
        f.write("The shipped models have a static batch of 1. Batch 256 uses a variant with "
                "input dim 0 = `N`, output dim 0 cleared and value_info cleared (both systems "
                "run the same file), with batch-hard-coding nodes fixed where they clearly act "
                "on the batch dim and the variant checked against the batch-1 model on two "
                f"samples. The CTR model is `bench/generate_ctr_model.py --layers {args.ctr_layers} "
                "--seed 1 --batch B` (same weights at both batches).\n\n")
        f.write(table)
        if notes:
            f.write("\nVariant fixes:\n\n" + "".join(f"- {n}\n" for n in notes))
        f.write("\nPer-round medians (ours' are printed by `heterps run` with 1 us resolution). "
                "On a loaded shared machine a run whose OpenMP team loses a core waits a "
                "scheduler time slice; where most runs of a round do, that round's median jumps "
                "by 10-1000x, which shows here as a bimodal spread:\n\n" + "".join(f"- {s}\n" for s in spread))
    print(table)
    print(f"wrote {out_md}")
    if not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
