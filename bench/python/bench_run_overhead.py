#!/usr/bin/env python3
"""Per-call overhead of the Python bindings' run over the C++ path, beside
onnxruntime's own Python overhead, on the same model at batch 1.

- HeterPS: one bundle (heterps.compile, cpu-only on clusters/local-cpu.yaml)
  run three ways: `heterps run --repeat N` (the C++ Session, timed inside
  the process), the extension's Session.run (pybind11 only), and
  Bundle.run (the package's name checks too). Overhead = Python median -
  C++ median.
- onnxruntime: InferenceSession.run timed from Python, and the same runs'
  `model_run` durations from onnxruntime's own profiler (its C++ side).
  Overhead = Python median - profiled median.
Each round times --calls calls after a warm-up; the table reports the
median over --rounds rounds of each round's median.

Usage: bench_run_overhead.py --build build [--model MODEL.onnx]
           [--calls 2000] [--rounds 5] [--out docs/benchmarks/python.md]
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "..", "shared", "models", "mlp",
                             "mnist_mlp_onnxmlir_opset13.onnx")


def timed_calls(call, calls):
    """Median seconds of `calls` calls of call() after a warm-up."""
    for _ in range(min(100, calls)):
        call()
    seconds = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        call()
        seconds.append((time.perf_counter_ns() - start) * 1e-9)
    return statistics.median(seconds)


def heterps_cpp(heterps, bundle, feeds, calls, tmp):
    args = []
    for name, value in feeds.items():
        path = os.path.join(tmp, f"{name}.npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    r = subprocess.run([heterps, "run", bundle, *args, "--repeat", str(calls)],
                       capture_output=True, text=True, check=True)
    return float(re.search(r"median (\S+) s", r.stderr).group(1))


def ort_round(model, feeds, calls, tmp):
    """(Python median, profiled model_run median) in seconds."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tmp, "ort")
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    python = timed_calls(lambda: session.run(None, feeds), calls)
    profile = session.end_profiling()
    with open(profile) as f:
        events = json.load(f)
    runs = [e["dur"] * 1e-6 for e in events if e.get("name") == "model_run"]
    os.remove(profile)
    # The warm-up's runs are in the profile too; the timed ones are last.
    return python, statistics.median(runs[-calls:])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out")
    args = p.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import heterps
    import onnx
    import onnxruntime as ort

    heterps_bin = os.path.join(args.build, "bin", "heterps")
    rows = {k: [] for k in ("cpp", "ext", "bundle", "ort_py", "ort_cpp")}
    with tempfile.TemporaryDirectory() as tmp:
        bundle = heterps.compile(args.model, cluster=os.path.join(ROOT, "clusters", "local-cpu.yaml"),
                                 strategy="cpu-only", throughput=1, batch=1,
                                 static_batch=True, cache_dir=os.path.join(tmp, "cache"))
        rng = np.random.default_rng(0)
        feeds = {i.name: rng.uniform(-1, 1, i.shape).astype(i.dtype) for i in bundle.inputs}
        arrays = [feeds[i.name] for i in bundle.inputs]
        # onnxruntime runs the model file at its own (static) input shapes.
        ort_feeds = {}
        for i in onnx.load(args.model).graph.input:
            shape = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]
            ort_feeds[i.name] = feeds[i.name].reshape(shape) if i.name in feeds else None
        for _ in range(args.rounds):
            rows["cpp"].append(heterps_cpp(heterps_bin, str(bundle.path), feeds, args.calls, tmp))
            rows["ext"].append(timed_calls(lambda: bundle._session.run(arrays), args.calls))
            rows["bundle"].append(timed_calls(lambda: bundle.run(feeds), args.calls))
            ort_py, ort_cpp = ort_round(args.model, ort_feeds, args.calls, tmp)
            rows["ort_py"].append(ort_py)
            rows["ort_cpp"].append(ort_cpp)
    med = {k: statistics.median(v) * 1e6 for k, v in rows.items()}
    ours, theirs = med["bundle"] - med["cpp"], med["ort_py"] - med["ort_cpp"]
    table = [
        "| path | median per call (us) | added over its C++ path (us) |",
        "|---|---|---|",
        f"| HeterPS C++ (`heterps run --repeat`) | {med['cpp']:.1f} | |",
        f"| HeterPS extension (`_heterps.Session.run`) | {med['ext']:.1f} | {med['ext'] - med['cpp']:.1f} |",
        f"| HeterPS Python (`Bundle.run`) | {med['bundle']:.1f} | **{ours:.1f}** |",
        f"| onnxruntime C++ (profiled `model_run`) | {med['ort_cpp']:.1f} | |",
        f"| onnxruntime Python (`InferenceSession.run`) | {med['ort_py']:.1f} | **{theirs:.1f}** |",
    ]
    command = (f"python3 bench/python/bench_run_overhead.py --build {args.build} "
               f"--calls {args.calls} --rounds {args.rounds}")
    text = (f"Command: `{command}`; model {os.path.basename(args.model)} at batch 1, "
            f"default threads; {datetime.date.today()}, {platform.machine()}, "
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, "
            f"onnxruntime {ort.__version__}. Medians of {args.rounds} rounds of "
            f"{args.calls} calls each.\n\n" + "\n".join(table) + "\n\n"
            f"HeterPS's Python adds {ours:.1f} us per call; onnxruntime's adds "
            f"{theirs:.1f} us.\n")
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# Python bindings: per-call overhead of run\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
