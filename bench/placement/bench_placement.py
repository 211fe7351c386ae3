#!/usr/bin/env python3
"""Placement benchmark: every strategy against the exact optimum (dp).

Workloads: the real models in ../shared/models and generated HeterPS-style
CTR models (10 to 200 layers). For each workload, cluster preset and target
(fractions of the best throughput the preset can reach), runs
`heterps-opt --hps-place` with every strategy and records cost per million
samples, throughput, feasibility and solve time (median of --repeats runs).
Writes a markdown table and checks the claims: rl within 1% of dp's cost and
never worse than greedy, cpu-only or gpu-only.

Usage: bench_placement.py --build build --out docs/benchmarks/placement.md
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
REAL = [
    "cnn/mnist-8.onnx",
    "cnn/resnet20_cifar10_opset12.onnx",
    "mlp/mnist_mlp_onnxmlir_opset13.onnx",
    "recsys/ncf_neumf_movielens1m_opset7.onnx",
    "structure_only/light_squeezenet.onnx",
    "transformer/self_attention_block_ezkl_opset10.onnx",
]
CTR_LAYERS = [10, 25, 50, 100, 200]
PRESETS = ["paper", "local-cpu", "h100-host"]
STRATEGIES = ["dp", "rl", "greedy", "cpu-only", "gpu-only", "brute"]
FRACTIONS = [0.1, 0.5, 0.9]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def legalize(bin_dir, model, out):
    imp = run([os.path.join(bin_dir, "heterps-translate"), "--import-onnx", model, "-o", out + ".imported"])
    if imp.returncode:
        raise RuntimeError(imp.stderr)
    # Placement reads shapes only: weights are elided to keep modules small.
    leg = run([os.path.join(bin_dir, "heterps-opt"), "--hps-legalize-onnx=strict=1",
               "--mlir-elide-resource-strings-if-larger=64", "--mlir-elide-elementsattrs-if-larger=64",
               out + ".imported", "-o", out])
    if leg.returncode:
        raise RuntimeError(leg.stderr)
    os.remove(out + ".imported")


def place(bin_dir, module, preset, strategy, target, batch, seed=1):
    options = (f"cluster={os.path.join(ROOT, 'clusters', preset + '.yaml')} strategy={strategy} "
               f"throughput={target} batch={batch} seed={seed}")
    opt = run([os.path.join(bin_dir, "heterps-opt"), f"--hps-place={options}", module])
    if opt.returncode:
        return None  # e.g. brute on a graph too large, gpu-only without GPUs.
    plan = run([os.path.join(bin_dir, "heterps-translate"), "--hps-to-plan"], input=opt.stdout)
    if plan.returncode:
        raise RuntimeError(plan.stderr)
    return json.loads(plan.stdout)


def layer_count(module):
    with open(module) as f:
        text = f.read().split("{-#")[0]
    import re
    return len(re.findall(r"=\s+hps\.(?!weight|constant|none)[a-z_]+", text))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks", "placement.md"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--quick", action="store_true", help="fewer workloads (for a smoke run)")
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    work = tempfile.mkdtemp(prefix="heterps-bench-")

    workloads = []
    for rel in (REAL[:2] if args.quick else REAL):
        out = os.path.join(work, os.path.basename(rel) + ".mlir")
        legalize(bin_dir, os.path.join(MODELS, rel), out)
        workloads.append((os.path.basename(rel).replace(".onnx", ""), out))
    for n in (CTR_LAYERS[:2] if args.quick else CTR_LAYERS):
        onnx_path = os.path.join(work, f"ctr{n}.onnx")
        gen = run([sys.executable, os.path.join(ROOT, "bench", "generate_ctr_model.py"),
                   "--layers", str(n), "--seed", str(n), "--batch", str(args.batch), "-o", onnx_path])
        if gen.returncode:
            raise RuntimeError(gen.stderr)
        out = onnx_path + ".mlir"
        legalize(bin_dir, onnx_path, out)
        os.remove(onnx_path)
        workloads.append((f"ctr{n}", out))

    rows, violations = [], []
    for name, module in workloads:
        layers = layer_count(module)
        for preset in PRESETS:
            ceiling = place(bin_dir, module, preset, "dp", 1e15, args.batch)
            reach = ceiling["best_reachable_throughput"]
            for fraction in FRACTIONS:
                target = round(reach * fraction, 1)
                results = {}
                for strategy in STRATEGIES:
                    if strategy == "brute" and layers > 16:
                        continue
                    plans = [place(bin_dir, module, preset, strategy, target, args.batch)
                             for _ in range(args.repeats)]
                    if plans[0] is None:
                        continue
                    plan = plans[0]
                    plan["solve_seconds"] = statistics.median(p["solve_seconds"] for p in plans)
                    results[strategy] = plan
                dp = results["dp"]
                for strategy, plan in results.items():
                    cost = plan["cost_per_million_samples"] if plan["feasible"] else float("inf")
                    ratio = cost / dp["cost_per_million_samples"] if dp["feasible"] else float("nan")
                    rows.append((name, layers, preset, fraction, target, strategy, plan["feasible"],
                                 cost, plan["throughput"], ratio, plan["solve_seconds"], len(plan["stages"])))
                rl = results["rl"]
                rl_cost = rl["cost_per_million_samples"] if rl["feasible"] else float("inf")
                if dp["feasible"] and rl_cost > 1.01 * dp["cost_per_million_samples"]:
                    violations.append(f"{name}/{preset}/{fraction}: rl {rl_cost} > 1.01 x dp")
                for peer in ("greedy", "cpu-only", "gpu-only"):
                    p = results.get(peer)
                    if p and p["feasible"] and rl_cost > p["cost_per_million_samples"] * (1 + 1e-9):
                        violations.append(f"{name}/{preset}/{fraction}: rl worse than {peer}")

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("# Placement benchmark\n\n")
        f.write("Produced by `python3 bench/placement/bench_placement.py --build build` "
                f"(batch {args.batch}, solve time = median of {args.repeats} runs, "
                "2-core build machine). Cost is USD per million samples; `vs dp` is the "
                "strategy's cost over the exact optimum's (dp), `inf` = infeasible.\n\n")
        f.write("| workload | layers | preset | target (x reachable) | samples/s target | strategy | "
                "feasible | cost/M samples | throughput | vs dp | solve s | stages |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.1f} | {r[5]} | {r[6]} | "
                    f"{r[7]:.6g} | {r[8]:.6g} | {r[9]:.4f} | {r[10]:.4g} | {r[11]} |\n")
        f.write("\n## Checks\n\n")
        if violations:
            f.write("Violations:\n\n" + "\n".join(f"- {v}" for v in violations) + "\n")
        else:
            f.write("On every workload, preset and target: rl is within 1% of dp and no worse "
                    "than greedy, cpu-only and gpu-only.\n")
    print(f"wrote {args.out}: {len(rows)} rows, {len(violations)} violations")
    for v in violations:
        print("VIOLATION", v)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
