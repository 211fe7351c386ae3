#!/usr/bin/env python3
"""Placement benchmark: every strategy against the exact optimum (dp).

Workloads: the real models in ../shared/models, generated HeterPS-style
CTR models (10 to 200 layers), a decoder transformer
(bench/generate_transformer_model.py) and, when torch and torchvision are
importable, branchy torchvision CNNs exported to ONNX with random weights
(ShuffleNet v2's channel split and shuffle, GoogLeNet's inception branches,
DenseNet's concatenations, MobileNet v3's squeeze-excitation); without torch
those rows are left out and the output says so. For each workload, cluster
preset and target
(fractions of the best throughput the preset can reach), runs
`heterps-opt --hps-place` with every strategy and records cost per million
samples, throughput, feasibility and solve time (median of --repeats runs).
Writes a markdown table and checks the claims: rl within 1% of dp's cost and
never worse than greedy, cpu-only or gpu-only.

Usage: bench_placement.py --build build --out docs/benchmarks/placement.md
         [--models NAME,...] [--presets paper,...] [--fractions 0.1,0.5,0.9]
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
# Branchy CNNs from torchvision (exported as scripts/check_unseen_models.py
# does: TorchScript exporter, opset 17, symbolic batch, weights=None).
TORCHVISION = ["shufflenet_v2_x0_5", "googlenet", "densenet121", "mobilenet_v3_small",
               "shufflenet_v2_x1_0"]
TRANSFORMER_LAYERS = 4
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


def export_torchvision(name, path):
    """Exports a torchvision classifier (random weights) to ONNX."""
    import warnings
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == "googlenet":  # no auxiliary heads at inference
        model = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)
    else:
        model = getattr(torchvision.models, name)(weights=None)
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), path, opset_version=17,
                          dynamo=False, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"}, "output": {0: "N"}})


def torch_missing():
    """Why the torchvision rows cannot be produced, or None."""
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as error:
        return str(error)
    return None


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
    parser.add_argument("--models", default="",
                        help="comma-separated workload names to run (default: all), e.g. "
                             "shufflenet_v2_x0_5,transformer4,ctr200")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--fractions", default=",".join(map(str, FRACTIONS)))
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    work = tempfile.mkdtemp(prefix="heterps-bench-")
    chosen = set(filter(None, args.models.split(",")))
    presets = args.presets.split(",")
    fractions = [float(f) for f in args.fractions.split(",")]

    def wanted(name):
        return not chosen or name in chosen

    workloads, notes = [], []
    for rel in (REAL[:2] if args.quick else REAL):
        name = os.path.basename(rel).replace(".onnx", "")
        if not wanted(name):
            continue
        out = os.path.join(work, os.path.basename(rel) + ".mlir")
        legalize(bin_dir, os.path.join(MODELS, rel), out)
        workloads.append((name, out))
    cnns = [n for n in (TORCHVISION[:1] if args.quick else TORCHVISION) if wanted(n)]
    missing = torch_missing() if cnns else None
    if missing:
        notes.append(f"torch/torchvision not importable ({missing}): the branchy CNN rows "
                     f"({', '.join(cnns)}) are left out.")
        print("NOTE:", notes[-1], file=sys.stderr)
        cnns = []
    for name in cnns:
        onnx_path = os.path.join(work, name + ".onnx")
        export_torchvision(name, onnx_path)
        out = onnx_path + ".mlir"
        legalize(bin_dir, onnx_path, out)
        os.remove(onnx_path)
        workloads.append((name, out))
    transformer = f"transformer{TRANSFORMER_LAYERS}"
    if wanted(transformer):
        onnx_path = os.path.join(work, transformer + ".onnx")
        gen = run([sys.executable, os.path.join(ROOT, "bench", "generate_transformer_model.py"),
                   "--layers", str(TRANSFORMER_LAYERS), "--batch", "1", "-o", onnx_path])
        if gen.returncode:
            raise RuntimeError(gen.stderr)
        out = onnx_path + ".mlir"
        legalize(bin_dir, onnx_path, out)
        os.remove(onnx_path)
        workloads.append((transformer, out))
    for n in (CTR_LAYERS[:2] if args.quick else CTR_LAYERS):
        if not wanted(f"ctr{n}"):
            continue
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
        for preset in presets:
            ceiling = place(bin_dir, module, preset, "dp", 1e15, args.batch)
            reach = ceiling["best_reachable_throughput"]
            for fraction in fractions:
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
        command = " ".join(["python3", "bench/placement/bench_placement.py"] + sys.argv[1:])
        f.write(f"Produced by `{command}` "
                f"(batch {args.batch}, solve time = median of {args.repeats} runs, "
                "2-core build machine). Cost is USD per million samples; `vs dp` is the "
                "strategy's cost over the exact optimum's (dp), `inf` = infeasible.\n\n")
        for note in notes:
            f.write(f"Note: {note}\n\n")
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
