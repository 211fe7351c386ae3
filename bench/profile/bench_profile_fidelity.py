#!/usr/bin/env python3
"""How well heterps-profile predicts what a bundle runs.

The profile database placement reads holds one time per layer, measured by
heterps-profile with the runtime's kernels on a stage of that layer alone.
This benchmark sums those times over a model and compares the sum with the
bundle itself, in one run on the same machine:

- profile: `heterps-profile MODULE --inference --batch B --threads T`, the
  module being exactly what `heterps compile` places (its printed pipeline
  up to hps-place, run by heterps-opt); the sum of every layer's time;
- bundle: `heterps compile MODEL --cluster clusters/local-cpu.yaml
  --strategy cpu-only --batch B --fuse-elementwise=false` (elementwise ops
  one kernel each, as the profiler times them), then `heterps run --threads
  T`; and the default bundle, with elementwise loops fused, whose gain the
  per-layer profile does not see.

With --baseline-profiler BIN, another heterps-profile (an older build) times
the same module in the same rounds, for comparison. Rounds alternate all of
them; medians are reported. Shipped models with a static batch of 1 get a
batch-N variant as in bench/inference.

    bench/profile/bench_profile_fidelity.py --build build
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "inference"))
import bench_inference as bi  # noqa: E402

ROW_RE = re.compile(r"^(\S+)\s+(\S+)\s+([0-9.]+|skipped)\s")


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(" ".join(cmd[:2]) + " failed: " + r.stderr.strip()[-1500:])
    return r


def model_for(workload, batch, cdir):
    if workload == "ctr":
        model = os.path.join(cdir, "ctr.onnx")
        sh([sys.executable, os.path.join(ROOT, "bench", "generate_ctr_model.py"),
            "--layers", "29", "--seed", "1", "--batch", str(batch), "-o", model])
        return model
    original = os.path.join(bi.MODELS, bi.WORKLOADS[workload])
    model = os.path.join(cdir, "variant.onnx")
    bi.batch_variant(original, model)
    return model


def placed_module(build, model, batch, cdir):
    """The module `heterps compile` places: its pipeline up to hps-place."""
    heterps = os.path.join(build, "bin", "heterps")
    r = sh([heterps, "compile", model, "--cluster", os.path.join(ROOT, "clusters", "local-cpu.yaml"),
            "--throughput", "1", "--strategy", "cpu-only", "--batch", str(batch),
            "--print-pipeline", "-o", os.path.join(cdir, "printed")])
    m = re.search(r"pipeline: (builtin\.module\((.*?)),hps-place", r.stdout + r.stderr)
    if not m:
        raise RuntimeError("no pipeline in heterps compile --print-pipeline")
    imported, module = os.path.join(cdir, "imported.mlir"), os.path.join(cdir, "module.mlir")
    sh([os.path.join(build, "bin", "heterps-translate"), "--import-onnx", model, "-o", imported])
    sh([os.path.join(build, "bin", "heterps-opt"), f"--pass-pipeline={m.group(1)})", imported,
        "-o", module])
    return module


def profile_sum(profiler, module, batch, threads, repeats, cdir):
    """Seconds per batch, summed over every layer; and the skipped layers."""
    r = sh([profiler, module, "--device-class", "cpu.local",
            "--batch", str(batch), "--threads", str(threads), "--repeats", str(repeats),
            "--inference", "-o", os.path.join(cdir, "profile.json")])
    total, layers, skipped = 0.0, 0, 0
    for line in r.stdout.splitlines()[2:]:
        m = ROW_RE.match(line)
        if not m or line.startswith("#"):
            continue
        layers += 1
        if m.group(3) == "skipped":
            skipped += 1
        else:
            total += float(m.group(3)) / 1e3
    return total, layers, skipped


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--workloads", default="mlp,ncf,resnet20,ctr")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10,
                        help="heterps-profile's timed runs per layer")
    parser.add_argument("--seconds", type=float, default=0.5,
                        help="wall time of one bundle measurement")
    parser.add_argument("--baseline-profiler", help="another heterps-profile binary to compare")
    parser.add_argument("--out", default="docs/benchmarks/profile-fidelity.md")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    heterps = os.path.join(build, "bin", "heterps")
    work = tempfile.mkdtemp(prefix="heterps-profile-fidelity-")
    rows = []
    for w in [w.strip() for w in args.workloads.split(",") if w.strip()]:
        cdir = os.path.join(work, w)
        os.makedirs(cdir)
        model = model_for(w, args.batch, cdir)
        module = placed_module(build, model, args.batch, cdir)
        feeds = bi.make_inputs(onnx.load(model), args.batch, np.random.default_rng(1))
        bundles = {}
        for key, flags in (("unfused", ["--fuse-elementwise=false"]), ("fused", [])):
            bdir = os.path.join(cdir, key)
            os.makedirs(bdir)
            bundles[key] = bi.Ours(heterps, model, args.batch, args.threads, bdir, flags=flags)
            bundles[key].set_inputs(feeds)
        repeat = {k: bi.calibrate(b, args.seconds)[0] for k, b in bundles.items()}
        profilers = {"profile": os.path.join(build, "bin", "heterps-profile")}
        if args.baseline_profiler:
            profilers["baseline"] = args.baseline_profiler
        times = {key: [] for key in list(profilers) + ["unfused", "fused"]}
        for _ in range(args.rounds):
            for key, profiler in profilers.items():
                total, count, missed = profile_sum(profiler, module, args.batch, args.threads,
                                                   args.repeats, cdir)
                times[key].append(total)
                if key == "profile":
                    layers, skipped = count, missed
            for key, bundle in bundles.items():
                times[key].append(bundle.measure(repeat[key]))
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((w, layers, skipped, med))
        print(f"{w}: profile {med['profile'] * 1e3:.3f} ms, bundle {med['unfused'] * 1e3:.3f} ms "
              f"(fused {med['fused'] * 1e3:.3f} ms), ratio {med['profile'] / med['unfused']:.2f}",
              flush=True)

    lines = [
        "# Profile fidelity: heterps-profile's layer times against the bundle",
        "",
        "Generated by `bench/profile/bench_profile_fidelity.py` on "
        f"{datetime.date.today()} (batch {args.batch}, {args.threads} thread(s), "
        f"{args.rounds} rounds, medians; {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.1f}). heterps-profile times each layer alone with the "
        "runtime's kernels; `profile` is the sum over the model's layers, `bundle` the "
        "same model compiled cpu-only with elementwise ops left one kernel each "
        "(`--fuse-elementwise=false`, as the profiler times them) and run by `heterps "
        "run`, `fused` the default bundle. `profile / bundle` near 1 means the database "
        "placement reads prices what bundles run; `fused` shows what elementwise loop "
        "fusion saves, which a per-layer profile cannot see.",
        "",
        "| workload | layers | skipped | profile ms | bundle ms | profile / bundle | fused bundle ms |"
        + (" baseline profile ms | baseline / bundle |" if args.baseline_profiler else ""),
        "|---|---|---|---|---|---|---|" + ("---|---|" if args.baseline_profiler else ""),
    ]
    for w, layers, skipped, med in rows:
        line = (f"| {bi.LABELS.get(w, w)} | {layers} | {skipped} | {med['profile'] * 1e3:.3f} | "
                f"{med['unfused'] * 1e3:.3f} | {med['profile'] / med['unfused']:.2f} | "
                f"{med['fused'] * 1e3:.3f} |")
        if args.baseline_profiler:
            line += (f" {med['baseline'] * 1e3:.3f} | "
                     f"{med['baseline'] / med['unfused']:.2f} |")
        lines.append(line)
    if args.baseline_profiler:
        lines += ["", f"Baseline profiler: `{args.baseline_profiler}`."]
    lines += ["", "Command:", "", "    bench/profile/bench_profile_fidelity.py --build build "
              f"--batch {args.batch} --threads {args.threads} --rounds {args.rounds}"
              + (" --baseline-profiler BIN" if args.baseline_profiler else ""), ""]
    out = args.out if os.path.isabs(args.out) else os.path.join(ROOT, args.out)
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("wrote", out)


if __name__ == "__main__":
    main()
