#!/usr/bin/env python3
"""The trace-driven simulator on the eight shared Pollux workloads.

Runs `heterps elastic simulate --policy all` on every workload at job loads
0.5, 1 and 2, puts each workload's mean JCT beside the peers' published
per-job JCTs (peer-results/), and writes docs/benchmarks/elastic-simulator.md.

    bench/autoscale/bench_simulator.py --build build
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PEERS = [("pollux", "Pollux"), ("tiresias", "Tiresias"), ("optimus", "Optimus+Oracle")]
POLICIES = ["static", "fixed-batch", "elastic", "elastic-srtf"]
LOADS = [0.5, 1.0, 2.0]
# The reading of the tables; its figures are those of the run recorded in
# docs/benchmarks/elastic-simulator.md (re-check them after a model change).
NOTES = """\
## Reading the table

- **Elastic vs the fixed-batch baseline.** On every workload the elastic
  policy (the seed's DP over GPUs *and* batches, valued by goodput) has a
  lower mean JCT than the same DP with each job's batch fixed (2656 s vs
  3334 s, -20%) and completes more jobs within the trace window (1135 vs
  1114). That is far from the ~10x and ~2x Saxena et al. report: their
  baseline and workloads differ, and here the baseline is already elastic in
  GPUs with the same DP, resize cost and hysteresis; only the batch is held.
- **The re-allocation penalty** (since 2026-12-02) is Pollux's age-based
  factor: a move of a running job is worth its value times
  (T - S d) / (T + d), T the job's age, S its re-allocations so far, d the
  30 s resize cost. Before, every move paid d / interval = 0.5 of its value,
  as if a resize paid off over one interval only: a job shrunk for an
  arrival stayed shrunk after that job ended (imagenet on 4 of 8 GPUs for
  40 hours, utilization 0.504; `simulate-policies.test`). Over the eight
  workloads the age rule raises utilization (elastic 0.912 -> 0.958,
  fixed-batch 0.844 -> 0.928) and cuts fixed-batch's mean JCT 8% (3610 ->
  3334 s); it resizes more (elastic 159 -> 402 rescales) and moves the
  mean JCT of elastic 2616 -> 2656 s and elastic-srtf 2444 -> 2465 s
  (`--reallocation-penalty interval` gives the old figures).
- **Against Pollux.** `elastic-srtf` (the same DP, each job's goodput
  weighted by the inverse of its remaining work) is below Pollux's published
  mean JCT on seven of eight workloads (2465 s vs 2751 s over the eight,
  0.90x; workload-3 is 3% above), plain `elastic` on five (2656 s, 0.97x).
  Where we do not beat Pollux, and why:
  - **imagenet** (26 jobs of 24-48 GPUs): `elastic` now matches Pollux
    (46.5 ks vs 46.6 ks); `elastic-srtf` does not (51.3 ks). Our value is a
    job's speed-up normalised by *its own* request, so a 48-GPU job gains
    less per GPU than a 1-GPU job and the DP gives big jobs the leftovers;
    SRTF makes that stronger. Pollux's fairness (a power mean with p = -1
    over speed-ups) protects them.
  - **yolov3** under `elastic-srtf` (14.1 ks vs 13.0 ks), for the same reason;
    `elastic` beats Pollux there (10.1 ks).
  - **p99 JCT**: SRTF trades the tail for the mean (48 ks vs 42 ks for
    `elastic`); no Pollux tail figure is published here to compare.
- **Not like for like, in our favour.** Our policies read each job's goodput
  from the traces (an oracle for step times and gradient noise, like the
  "Optimus+Oracle" peer), while Pollux learns its throughput model and the
  gradient noise scale online from the job's own steps. Our gains over
  Pollux are therefore an upper bound for a scheduler with the same
  information; the measured-profile calibration the issue asks for (a short
  profile run per job) is what would close that gap honestly.
- **Other differences from the study's simulator** (docs/Autoscaler.md,
  "The simulator"): unmeasured placements interpolate step times over a
  (nodes, replicas per node, local batch) grid instead of a Delaunay
  triangulation; ncf may get more than 1 GPU and any batch (Pollux pinned it
  to 1 GPU at batch 32768; its jobs take 90 s here against 108 s); batch
  changes on the same GPUs are free (as in the study), GPU changes cost 30 s.
- **Static FIFO** shows why elasticity matters at all: strict FIFO on the
  users' requests blocks behind 24-48-GPU imagenet jobs (mean 23.5 ks).
"""


def simulate(binary, workload, traces, load):
    out = subprocess.run(
        [binary, "elastic", "simulate", "--workload", workload, "--traces", traces,
         "--policy", "all", "--load", str(load), "--json", "--per-job"],
        check=True, capture_output=True, text=True).stdout
    return {r["policy"]: r for r in json.loads(out)}


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--traces", default=os.path.join(ROOT, "..", "shared", "traces",
                                                         "pollux-osdi21"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks",
                                                      "elastic-simulator.md"))
    args = parser.parse_args()
    binary = os.path.join(args.build, "bin", "heterps")
    traces = os.path.normpath(args.traces)
    workloads = [f"workload-{i}" for i in range(1, 9)]
    peers = {}
    for key, label in PEERS:
        with open(os.path.join(traces, "peer-results", f"{key}-load1.0.json")) as f:
            peers[label] = json.load(f)["jcts"]

    began = time.time()
    runs = {}  # (workload, load) -> policy -> result
    for w in workloads:
        for load in LOADS:
            runs[w, load] = simulate(binary, os.path.join(traces, "workloads", w + ".csv"),
                                     traces, load)
    seconds = time.time() - began

    lines = []
    say = lines.append
    say("# Elastic scheduling: the trace-driven simulator")
    say("")
    say("The simulator of issue 38 (`heterps elastic simulate`, docs/Autoscaler.md) on the "
        "eight 160-job workloads of the Pollux (OSDI'21) artifact "
        "(`../shared/traces/pollux-osdi21`), with that study's rules: 16 nodes x 4 GPUs, a "
        "decision every 60 s, 30 s without progress per (re)allocation, work = epochs of "
        "progress, goodput = gain / step time. The peers' columns are their published per-job "
        "JCTs (peer-results/, job load 1.0), produced by the artifact's own simulator on the "
        "same traces.")
    say("")
    say("Reproduce (all %d simulations took %.1f s on this machine's CPU):" % (
        len(runs) * len(POLICIES), seconds))
    say("")
    say("```")
    say("bench/autoscale/bench_simulator.py --build build")
    say("```")
    say("")
    say("## Mean JCT per workload (load 1.0), seconds")
    say("")
    head = ["workload"] + POLICIES + [label for _, label in PEERS] + ["elastic-srtf vs Pollux"]
    say("| " + " | ".join(head) + " |")
    say("|" + "---|" * len(head))
    cols = collections.defaultdict(list)
    for w in workloads:
        row = [w]
        for p in POLICIES:
            v = runs[w, 1.0][p]["mean_jct_s"]
            cols[p].append(v)
            row.append("%.0f" % v)
        for _, label in PEERS:
            v = mean(peers[label][w].values())
            cols[label].append(v)
            row.append("%.0f" % v)
        ratio = runs[w, 1.0]["elastic-srtf"]["mean_jct_s"] / mean(peers["Pollux"][w].values())
        row.append("%.2fx %s" % (ratio, "(better)" if ratio < 1 else "(**worse**)"))
        say("| " + " | ".join(row) + " |")
    row = ["**mean**"] + ["**%.0f**" % mean(cols[p]) for p in POLICIES] + \
        ["**%.0f**" % mean(cols[label]) for _, label in PEERS]
    row.append("%.2fx" % (mean(cols["elastic-srtf"]) / mean(cols["Pollux"])))
    say("| " + " | ".join(row) + " |")
    say("")

    say("## Jobs completed within the trace window (load 1.0)")
    say("")
    say("The window is each workload's last arrival (about 8 hours); 160 jobs each.")
    say("")
    head = ["workload"] + POLICIES + ["Pollux"]
    say("| " + " | ".join(head) + " |")
    say("|" + "---|" * len(head))
    tot = collections.Counter()
    for w in workloads:
        row = [w]
        for p in POLICIES:
            v = runs[w, 1.0][p]["completed_in_window"]
            tot[p] += v
            row.append(str(v))
        window = runs[w, 1.0]["static"]["window_s"]
        # Pollux finishes a job within the window if submit + JCT <= window.
        submits = {j["name"]: j["submit_s"] for j in runs[w, 1.0]["static"]["per_job"]}
        v = sum(1 for name, jct in peers["Pollux"][w].items() if submits[name] + jct <= window)
        tot["Pollux"] += v
        row.append(str(v))
        say("| " + " | ".join(row) + " |")
    say("| **total** | " + " | ".join("**%d**" % tot[p] for p in POLICIES + ["Pollux"]) + " |")
    say("")

    say("## Other measures (load 1.0, mean over the 8 workloads)")
    say("")
    say("| policy | p99 JCT s | makespan s | utilization | rescales | allocator ms/decision |")
    say("|---|---|---|---|---|---|")
    for p in POLICIES:
        rs = [runs[w, 1.0][p] for w in workloads]
        say("| %s | %.0f | %.0f | %.3f | %.0f | %.3f |" % (
            p, mean(r["p99_jct_s"] for r in rs), mean(r["makespan_s"] for r in rs),
            mean(r["utilization"] for r in rs), mean(r["rescales"] for r in rs),
            mean(r["allocator_ms_per_decision"] for r in rs)))
    say("")

    say("## Load sweep: the same jobs arriving slower (x0.5) and faster (x2)")
    say("")
    say("Mean over the 8 workloads of the mean JCT (s), and jobs completed within the window "
        "(of 1280). The peers published load 1.0 only in this artifact.")
    say("")
    head = ["policy"] + ["JCT x%g" % l for l in LOADS] + ["in window x%g" % l for l in LOADS]
    say("| " + " | ".join(head) + " |")
    say("|" + "---|" * len(head))
    for p in POLICIES:
        row = [p]
        row += ["%.0f" % mean(runs[w, l][p]["mean_jct_s"] for w in workloads) for l in LOADS]
        row += ["%d" % sum(runs[w, l][p]["completed_in_window"] for w in workloads)
                for l in LOADS]
        say("| " + " | ".join(row) + " |")
    say("")

    say("## Per application (load 1.0, all 8 workloads): where the time goes")
    say("")
    say("Mean JCT (s) of the jobs of each application, ours beside Pollux's for the same jobs.")
    say("")
    head = ["application", "jobs", "fixed-batch", "elastic", "elastic-srtf", "Pollux"]
    say("| " + " | ".join(head) + " |")
    say("|" + "---|" * len(head))
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for w in workloads:
        for p in ["fixed-batch", "elastic", "elastic-srtf"]:
            for j in runs[w, 1.0][p]["per_job"]:
                if "jct_s" in j:
                    per[j["application"]][p].append(j["jct_s"])
                    if p == "elastic":
                        per[j["application"]]["Pollux"].append(peers["Pollux"][w][j["name"]])
    for app in sorted(per):
        d = per[app]
        say("| %s | %d | %.0f | %.0f | %.0f | %.0f |" % (
            app, len(d["elastic"]), mean(d["fixed-batch"]), mean(d["elastic"]),
            mean(d["elastic-srtf"]), mean(d["Pollux"])))
    say("")
    say(NOTES)
    text = "\n".join(lines).rstrip() + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
