#!/usr/bin/env python3
"""Training throughput and cost of the CPU-only, GPU-only and heterogeneous
plans of one CTR model on one machine with a GPU (the HeterPS paper's
comparison), with PyTorch on the same GPU as the peer.

One Wide & Deep model (bench/generate_ctr_model.py --layout criteo) is
compiled for training three times against the same cluster file
(clusters/h100-host.yaml by default: the host's CPU cores and one H100, with
their prices):
- cpu-only: every stage on the CPU class;
- gpu-only: every stage on the GPU class (rows are pulled from the
  in-process parameter server on the host and copied to the GPU);
- sparse-on-cpu: embeddings and their pooling on the CPU beside the parameter
  server, the dense tower on the GPU (the paper's heterogeneous plan);
- rl: whatever the RL scheduler picks at --target samples/s;
- with --pass-steps K, each plan again in passes of K steps through the
  pass cache (`heterps run --train --pass-steps K`), for each device of
  --pass-cache-devices: rows 'PLAN + passes' (host memory) and
  'PLAN + GPU passes' (`--pass-cache-device gpu`, the HBM tier);
- with --sparse-staleness, each plan again with its sparse updates applied
  one step late, overlapping the next step (rows 'PLAN + stale sparse').
- with --micro-batches M, each plan of more than one stage again compiled
  for micro-batches of --batch / M and trained in steps of --batch, so its
  stages overlap the step's M micro-batches (rows 'PLAN, M micro-batches');
  a step of one micro-batch (the other rows) runs them one after another.
- with --dense-through-host, each plan with GPU stages again with their
  dense parameters and gradients through the host every step, as before
  the dense cache (`--dense-parameters-on-gpu=false`, rows
  'PLAN + dense via host'): what keeping them in GPU memory gains.
- with --pass-steps K, also rl offered the step shapes (`heterps compile
  --pass-steps K --pass-distinct-fraction U --sparse-staleness 1`) and
  trained as its plan says, without flags (row 'rl, planned step (...)'):
  whether the planner's pick is the fastest row.
Each trains `--steps` steps of `--batch` on the same synthetic Criteo data
(`heterps datagen`) with `heterps run --train`; the table reports the median
samples/s over `--rounds` rounds (plans interleaved within a round), the
plan's price per hour from the cluster file, and the cost per million
samples. PyTorch trains the same model on the GPU (nn.Embedding sparse
tables, Adagrad, data already on the GPU) in the same rounds.

Usage: bench_heterogeneous.py --heterps BIN [--cluster FILE] [--threads T]
       [--batch 4096] [--steps 300] [--rounds 3] [--out FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench_training  # noqa: E402  (model_and_data, read_criteo, torch_round)


def sh(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


# The suffix of a plan's row trained in passes, by the pass cache's device.
PASS_ROWS = {"host": " + passes", "gpu": " + GPU passes"}


def variants(args, plan):
    """Row suffix -> the extra `heterps run` flags of each way `plan` trains."""
    rows = {"": []}
    if args.dense_through_host and plan != "cpu-only":
        rows[" + dense via host"] = ["--dense-parameters-on-gpu=false"]
    if args.pass_steps > 0:
        for device in args.pass_cache_devices.split(","):
            rows[PASS_ROWS[device]] = ["--pass-steps", str(args.pass_steps),
                                       "--pass-cache-device", device]
    if args.sparse_staleness:
        rows[" + stale sparse"] = ["--sparse-staleness", "1"]
    return rows


def train_round(args, bundle, data_file, flags):
    text = sh([args.heterps, "run", bundle, "--train", "--data", data_file, "--steps",
               str(args.steps), "--batch", str(args.batch), "--threads", str(args.threads),
               "--log-every", str(args.steps), "--hash-buckets", str(args.buckets)] +
              (["--gpu-stages-on-cpu"] if args.gpu_stages_on_cpu else []) + flags)
    rate = float(re.search(r"done: .*?([0-9.e+]+) samples/s", text).group(1))
    loss = float(re.search(r"train loss ([0-9.]+)", text).group(1))
    times = re.search(r"time per step: ([0-9.]+) ms = data ([0-9.]+) \+ stages ([0-9.]+) "
                      r"\+ update ([0-9.]+) \+ other ([0-9.]+); parameter-server calls in the "
                      r"stages ([0-9.]+)", text)
    return rate, loss, [float(t) for t in times.groups()]


def describe(manifest):
    """The plan's stages, and its figures: the price and the planner's
    samples/s for the steps the bench trains (compiled with their
    micro-batches fixed)."""
    plan = manifest["plan"]
    stages = " + ".join(f"{s['device']} x{s['replicas']}" for s in plan["stages"])
    return stages, (plan["price_per_hour"], plan["step_throughput"])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heterps", default=os.path.join(PROJECT, "build", "bin", "heterps"))
    parser.add_argument("--cluster", default=os.path.join(PROJECT, "clusters", "h100-host.yaml"))
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=400000, help="rows of training data (cycled)")
    parser.add_argument("--hidden", default="1024,512,256")
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--buckets", type=int, default=100000)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--target", type=float, default=1e6, help="rl plan's samples/s target")
    parser.add_argument("--plans", default="cpu-only,gpu-only,sparse-on-cpu,rl")
    parser.add_argument("--pass-steps", type=int, default=0,
                        help="also train every plan in passes of this many steps through the "
                             "pass cache (rows 'PLAN + passes')")
    parser.add_argument("--pass-cache-devices", default="host",
                        help="where the pass cache of those rows lives: host, gpu or both "
                             "(comma-separated)")
    parser.add_argument("--pass-distinct-fraction", type=float, default=0.05,
                        help="with --pass-steps: the distinct share of a pass's keys the "
                             "planner is told (a run in passes reports it)")
    parser.add_argument("--sparse-staleness", action="store_true",
                        help="also train every plan with sparse updates one step late "
                             "(rows 'PLAN + stale sparse', --sparse-staleness 1)")
    parser.add_argument("--dense-through-host", action="store_true",
                        help="also train every plan with GPU stages with its dense parameters "
                             "through the host (rows 'PLAN + dense via host', "
                             "--dense-parameters-on-gpu=false)")
    parser.add_argument("--micro-batches", type=int, default=1,
                        help="also train every plan of several stages in steps of this many "
                             "micro-batches (compiled for --batch / M; rows 'PLAN, M "
                             "micro-batches')")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--gpu-stages-on-cpu", action="store_true",
                        help="plumbing check on a machine without a GPU (no timings)")
    parser.add_argument("--out", help="write the markdown table here too")
    args = parser.parse_args()
    hidden = [int(w) for w in args.hidden.split(",") if w]
    plans = [p for p in args.plans.split(",") if p]
    # Plan name -> (strategy, extra compile flags); a planned step trains
    # without run flags.
    compiled = {plan: (plan, []) for plan in plans}
    planned = "rl, planned step"
    if args.pass_steps > 0:
        compiled[planned] = ("rl", ["--pass-steps", str(args.pass_steps),
                                    "--pass-distinct-fraction", str(args.pass_distinct_fraction),
                                    "--sparse-staleness", "1"])

    if args.micro_batches < 1 or args.batch % args.micro_batches:
        parser.error("--micro-batches must divide --batch")
    with tempfile.TemporaryDirectory(prefix="hps-bench-hetero-") as work:
        try:
            model, data_file = bench_training.model_and_data(args, args.heterps, work, args.rows)
        except SystemExit as error:  # bench_training.sh exits on a failed command
            raise RuntimeError(str(error))
        bundles, shapes, figures, failures = {}, {}, {}, {}

        def compile_plan(strategy, extra, batch, bundle):
            # Priced for the steps trained: --batch of args.batch.
            sh([args.heterps, "compile", model, "--cluster", args.cluster, "--throughput",
                str(args.target if strategy == "rl" else 1), "--strategy", strategy,
                "--train", "--loss", "bce", "--optimizer", "adagrad", "--lr", str(args.lr),
                "--batch", str(batch), "--micro-batches", str(args.batch // batch),
                "-o", bundle, *extra])
            with open(os.path.join(bundle, "manifest.json")) as f:
                return json.load(f)

        for index, (plan, (strategy, extra)) in enumerate(compiled.items()):
            bundle = os.path.join(work, f"{strategy}-{index}.bundle")
            try:
                manifest = compile_plan(strategy, extra, args.batch, bundle)
            except RuntimeError as error:
                failures[plan] = str(error).splitlines()[-1]
                continue
            shapes[plan], figures[plan] = describe(manifest)
            if args.micro_batches > 1 and not extra and len(manifest["stages"]) > 1:
                # Stages of micro-batches of batch / M, trained in steps of
                # the batch: the pipeline overlaps them.
                name = f"{plan}, {args.micro_batches} micro-batches"
                small = os.path.join(work, f"{strategy}-{index}-micro.bundle")
                try:
                    shapes[name], figures[name] = describe(compile_plan(
                        strategy, extra, args.batch // args.micro_batches, small))
                    bundles[name] = (small, [])
                except RuntimeError as error:
                    failures[name] = str(error).splitlines()[-1]
            if extra:
                step = manifest["plan"]
                name = (f"{plan} (passes of {step['pass_steps']} in "
                        f"{step['pass_cache_device']} memory" if "pass_steps" in step
                        else f"{plan} (direct") + (
                        ", stale sparse)" if step.get("sparse_staleness") else ")")
                # Off a GPU the plan's GPU cache cannot open: the host's.
                bundles[name] = (bundle, ["--pass-cache-device", "host"]
                                 if args.gpu_stages_on_cpu else [])
                shapes[name], figures[name] = shapes[plan], figures[plan]
                continue
            # The same bundle, trained each way.
            for suffix, flags in variants(args, plan).items():
                bundles[plan + suffix] = (bundle, flags)
                shapes[plan + suffix], figures[plan + suffix] = shapes[plan], figures[plan]
        rates = {p: [] for p in bundles}
        losses = {p: [] for p in bundles}
        step_times = {p: [] for p in bundles}
        torch_rates, torch_losses = [], []
        data = None
        if not args.no_torch:
            data = bench_training.read_criteo(data_file, args.buckets, args.rows)
        for _ in range(args.rounds):
            for plan, (bundle, flags) in bundles.items():
                try:
                    rate, loss, times = train_round(args, bundle, data_file, flags)
                except RuntimeError as error:
                    failures[plan] = str(error)[-400:]
                    continue
                rates[plan].append(rate)
                losses[plan].append(loss)
                step_times[plan].append(times)
                print(f"round: {plan} {rate:,.0f} samples/s, loss {loss:.4f}", file=sys.stderr,
                      flush=True)
            if data is not None:
                rate, loss = bench_training.torch_round(args, data, hidden, device="cuda")
                torch_rates.append(rate)
                torch_losses.append(loss)
                print(f"round: pytorch {rate:,.0f} samples/s, loss {loss:.4f}", file=sys.stderr,
                      flush=True)

    def cost(price, rate):
        return price / (rate * 3600) * 1e6

    rows = []
    best_single = {}
    for plan in bundles:
        if not rates[plan]:
            continue
        rate = statistics.median(rates[plan])
        price, planned = figures[plan]
        rows.append((plan, shapes[plan], rate, price, cost(price, rate),
                     statistics.median(losses[plan]), planned))
        if plan in ("cpu-only", "gpu-only"):
            best_single[plan] = rate
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}, Adagrad lr {args.lr}; batch {args.batch}, {args.threads} CPU threads, "
        f"{args.steps} steps per round, median of {args.rounds} rounds; cluster "
        f"{os.path.basename(args.cluster)}.",
        "",
        "| plan | stages | samples/s | $/hour | $ per million samples | final train loss "
        "| planner's samples/s for these steps |",
        "|---|---|---|---|---|---|---|",
    ]
    for plan, shape, rate, price, dollars, loss, planned in rows:
        lines.append(f"| {plan} | {shape} | {rate:,.0f} | {price:.2f} | {dollars:.4f} | "
                     f"{loss:.4f} | {planned:,.0f} |")
    if torch_rates:
        import torch
        rate = statistics.median(torch_rates)
        lines.append(f"| PyTorch {torch.__version__} on the GPU (peer) | cuda | {rate:,.0f} | | | "
                     f"{statistics.median(torch_losses):.4f} | |")
    lines += [
        "",
        "Where a step's time goes (`heterps run`'s `time per step` line, ms, medians): "
        "waiting for data, running the stages, ending the step (the server's update), "
        "the rest; and the stages' parameter-server calls, summed over stage threads.",
        "",
        "| plan | ms per step | data | stages | update | other | server calls in stages |",
        "|---|---|---|---|---|---|---|",
    ]
    for plan, *_ in rows:
        medians = [statistics.median(column) for column in zip(*step_times[plan])]
        lines.append(f"| {plan} | " + " | ".join(f"{m:.2f}" for m in medians) + " |")
    lines.append("")
    by_plan = {r[0]: r for r in rows}
    for hetero in ("sparse-on-cpu", "rl"):
        if hetero not in by_plan:
            continue
        for single in ("gpu-only", "cpu-only"):
            if single in by_plan:
                h, s = by_plan[hetero], by_plan[single]
                lines.append(f"- {hetero} vs {single}: throughput x{h[2] / s[2]:.2f}, "
                             f"cost per sample x{h[4] / s[4]:.2f}")
        if torch_rates:
            lines.append(f"- {hetero} vs PyTorch on the GPU: throughput "
                         f"x{by_plan[hetero][2] / statistics.median(torch_rates):.2f}")
    for plan, why in failures.items():
        lines.append(f"- {plan}: FAILED: {why}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
