#!/usr/bin/env python3
"""The autoscaler service for real, on the local Slurm cluster.

Runs the same arrivals of CTR training jobs (each on its own data) through
`heterps elastic serve --backend slurm` twice per repetition: with the jobs'
elastic ranges (1-6 workers, batches 512-1024), and with every job fixed at
its initial shape (2 workers, batch 512: the static baseline, first come
first served). Each run is then replayed by the simulator (`heterps elastic
predict`), and the table gives the measured and predicted mean completion
time, the prediction's error, and elastic against static, as medians over
the repetitions. Writes docs/benchmarks/elastic-service.md.

    bash scripts/slurm/cluster.sh start
    bench/autoscale/bench_service.py --build build [--repeat 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# (name, data seed, submitted after seconds)
ARRIVALS = [("ctra", 3, 0), ("ctrb", 4, 5), ("ctrc", 5, 10), ("ctrd", 3, 25)]
SAMPLES = 163840


def sh(cmd, **kwargs):
    out = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if out.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}{out.stderr}")
    return out.stdout


def prepare(heterps, work):
    sh([sys.executable, os.path.join(ROOT, "bench", "generate_ctr_model.py"), "--layout",
        "criteo", "--hidden", "128", "--buckets", "1000", "--batch", "64", "-o",
        os.path.join(work, "m.onnx")])
    sh([heterps, "compile", os.path.join(work, "m.onnx"), "--cluster",
        os.path.join(ROOT, "clusters", "local-cpu.yaml"), "--throughput", "1", "--strategy",
        "cpu-only", "--train", "--loss", "bce", "--optimizer", "adagrad", "--lr", "0.2",
        "--batch", "64", "-o", os.path.join(work, "b")])
    for seed in sorted({s for _, s, _ in ARRIVALS}):
        sh([heterps, "datagen", "ctr", "--rows", "170000", "--seed", str(seed),
            "--model-seed", str(seed + 4), "--max-vocab", "200", "-o",
            os.path.join(work, f"d{seed}.tsv")])
        sh([heterps, "datagen", "ctr", "--rows", "5000", "--seed", str(seed + 10),
            "--model-seed", str(seed + 4), "--max-vocab", "200", "-o",
            os.path.join(work, f"e{seed}.tsv")])


def job_file(work, policy, name, seed):
    template = open(os.path.join(ROOT, "test", "Integration", "Elastic", "Inputs",
                                 "serve-slurm-job.yaml")).read()
    text = (template.replace("@NAME@", name).replace("@BUNDLE@", os.path.join(work, "b"))
            .replace("@DATA@", os.path.join(work, f"d{seed}.tsv"))
            .replace("@EVAL@", os.path.join(work, f"e{seed}.tsv")))
    if policy == "static":
        text = (text.replace("workers: {initial: 2, min: 1, max: 6}", "workers: {initial: 2}")
                .replace("batch: {initial: 512, min: 512, max: 1024}", "batch: {initial: 512}"))
    path = os.path.join(work, f"{policy}-{name}.yaml")
    with open(path, "w") as out:
        out.write(text)
    return path


def run_service(heterps, work, policy, repetition):
    state = os.path.join(work, f"state-{policy}-{repetition}")
    log = open(state + ".log", "w")
    service = subprocess.Popen([heterps, "elastic", "serve", "--state", state, "--backend",
                                "slurm", "--interval", "60s", "--resize-cost", "2s"],
                               stderr=log)
    try:
        start = time.time()
        for name, seed, after in ARRIVALS:
            time.sleep(max(0.0, start + after - time.time()))
            sh([heterps, "elastic", "submit", "--state", state,
                job_file(work, policy, name, seed)])
        deadline = time.time() + 900
        while time.time() < deadline:
            status = json.loads(sh([heterps, "elastic", "status", "--state", state, "--json"]))
            phases = [job["phase"] for job in status["jobs"]]
            if len(phases) == len(ARRIVALS) and all(
                    p in ("succeeded", "failed", "cancelled") for p in phases):
                break
            time.sleep(1)
        else:
            sys.exit(f"{policy} run {repetition}: jobs did not end in 900 s")
        if any(p != "succeeded" for p in phases):
            sys.exit(f"{policy} run {repetition}: a job did not succeed ({state})")
    finally:
        service.terminate()
        service.wait(timeout=60)
    return json.loads(sh([heterps, "elastic", "predict", "--state", state, "--json"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks",
                                                      "elastic-service.md"))
    args = parser.parse_args()
    heterps = os.path.abspath(os.path.join(args.build, "bin", "heterps"))
    if "SLURM_CONF" not in os.environ:
        env = sh(["bash", os.path.join(ROOT, "scripts", "slurm", "cluster.sh"), "env"])
        for line in env.splitlines():
            if line.startswith("export "):
                key, _, value = line[len("export "):].partition("=")
                os.environ[key] = value.strip("'\"")
    work = tempfile.mkdtemp(prefix="heterps-bench-service-")
    prepare(heterps, work)
    rows = []
    for repetition in range(args.repeat):
        for policy in ("elastic", "static"):
            p = run_service(heterps, work, policy, repetition)
            rows.append((repetition, policy, p))
            print(f"run {repetition} {policy}: mean JCT {p['mean_measured_jct_s']:.1f} s "
                  f"measured, {p['mean_predicted_jct_s']:.1f} s predicted, mean |error| "
                  f"{100 * p['mean_abs_relative_error']:.1f}%", flush=True)

    def median(policy, key):
        return statistics.median(p[key] for _, q, p in rows if q == policy)

    lines = [
        "# The autoscaler service on Slurm, measured and predicted",
        "",
        "`bench/autoscale/bench_service.py --build build --repeat %d` on the local Slurm"
        % args.repeat,
        "cluster (`scripts/slurm/cluster.sh`: 4 nodes x 2 CPUs = 8 slots, on a machine of",
        "%d cores). %d CTR jobs (criteo layout, tower 128, Adagrad; %d samples each, own" %
        (os.cpu_count(), len(ARRIVALS), SAMPLES),
        "data) are submitted at %s s; `elastic`: 1-6 workers and batches of 512-1024," %
        ", ".join(str(a) for _, _, a in ARRIVALS),
        "`static`: each fixed at 2 workers, batch 512 (first come, first served). Each",
        "run is replayed by `heterps elastic predict` (docs/Autoscaler.md).",
        "",
        "| run | policy | mean JCT measured (s) | predicted (s) | mean abs error | max abs error | makespan measured / predicted (s) | resizes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for repetition, policy, p in rows:
        resizes = sum(j["measured_resizes"] for j in p["jobs"])
        lines.append(
            f"| {repetition} | {policy} | {p['mean_measured_jct_s']:.1f} | "
            f"{p['mean_predicted_jct_s']:.1f} | {100 * p['mean_abs_relative_error']:.1f}% | "
            f"{100 * p['max_abs_relative_error']:.1f}% | {p['measured_makespan_s']:.1f} / "
            f"{p['predicted_makespan_s']:.1f} | {resizes} |")
    elastic, static = (median(q, "mean_measured_jct_s") for q in ("elastic", "static"))
    lines += [
        "",
        "Medians: mean JCT elastic %.1f s, static %.1f s (elastic / static %.2f); the"
        % (elastic, static, elastic / static),
        "simulator's mean abs error %.1f%% (elastic), %.1f%% (static)." %
        (100 * median("elastic", "mean_abs_relative_error"),
         100 * median("static", "mean_abs_relative_error")),
        "",
    ]
    lines += ["", NOTES]
    with open(args.out, "w") as out:
        out.write("\n".join(lines))
    print("\n".join(lines))


NOTES = """## Reading

- The replay models each job's speed per shape as measured, and the start,
  resize and finish pauses as their medians. Static runs keep every job in
  one shape, so its error is the pauses' and the loop's timing. Elastic
  runs move jobs between shapes while others start and end, and on this
  machine a job's speed depends on what else runs (every rank shares the
  same 2 cores): the replay does not model that interference, and a job
  measured beside a paused neighbour runs slower in the replay's busier
  moments, or the reverse.
- The elastic gain is small here because the slots are not real: 8 slots
  on 2 cores, so more workers add little throughput, and the service's
  measured speeds (not its prior) soon tell it so. On a cluster whose
  slots are cores or GPUs the trace simulator's figures apply
  (docs/benchmarks/elastic-simulator.md).
"""


if __name__ == "__main__":
    main()
