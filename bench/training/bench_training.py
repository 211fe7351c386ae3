#!/usr/bin/env python3
"""Training throughput of a generated CTR model: HeterPS against PyTorch.

The same Wide & Deep CTR model (bench/generate_ctr_model.py --layout
criteo) is trained on the same synthetic Criteo data (`heterps datagen`)
with the same optimizer (Adagrad), batch and thread count, from the same
start (HeterPS's initial parameters, see initial_parameters):
- HeterPS: `heterps compile --train` (all stages on the CPU) and
  `heterps run --train`; its samples/s include reading the TSV file.
- PyTorch (CPU): the model's graph in torch ops with sparse-gradient
  tables, BCEWithLogitsLoss and torch.optim.Adagrad on tensors parsed
  beforehand (its samples/s exclude reading the data).
Each system trains `--steps` steps per round; the table reports medians
over `--rounds` and the ratio HeterPS / PyTorch, the final train loss (the
last 50 steps) and the eval AUC on held-out rows of the same hidden model
beside its ground-truth AUC. bench_parity.py compares the two step by step.

Usage: bench_training.py --build build [--threads 2] [--batch 256]
       [--steps 400] [--rounds 3] [--out docs/benchmarks/training.md]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
FIELDS, DENSE = 26, 13


def sh(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def read_criteo(path, buckets, rows):
    """The reader's transform (runtime/data/CriteoReader.cpp): log(1 + x)
    for positive dense values, 0 for missing; a present categorical hash h
    becomes 1 + h % (buckets - 1), missing becomes 0."""
    labels = np.zeros(rows, np.float32)
    dense = np.zeros((rows, DENSE), np.float32)
    sparse = np.zeros((rows, FIELDS), np.int64)
    with open(path) as f:
        for i, line in enumerate(f):
            if i == rows:
                break
            parts = line.rstrip("\n").split("\t")
            labels[i] = float(parts[0])
            for j in range(DENSE):
                text = parts[1 + j]
                if text:
                    x = float(text)
                    # The reader's criteoDenseFeature: sign(x) log(1 + |x|).
                    dense[i, j] = np.log1p(x) if x >= 0 else -np.log1p(-x)
            for j in range(FIELDS):
                text = parts[1 + DENSE + j]
                if text:
                    sparse[i, j] = 1 + int(text, 16) % (buckets - 1)
    return labels, dense, sparse


MODEL_SEED = 7  # the hidden model behind both the training and the eval rows


def datagen(heterps, path, rows, seed):
    """Writes `rows` rows of synthetic Criteo data from the hidden model
    MODEL_SEED; returns the ground-truth AUC datagen reports for them (that
    of the hidden model's true probabilities)."""
    text = sh([heterps, "datagen", "ctr", "--rows", str(rows), "--seed", str(seed), "--model-seed",
               str(MODEL_SEED), "-o", path])
    return float(re.search(r"ground-truth AUC ([0-9.]+)", text).group(1))


def model_and_data(args, heterps, work, rows):
    """The Wide & Deep model of --hidden/--dim/--buckets and `rows` rows of
    synthetic Criteo data, written into `work`; returns both paths."""
    model = os.path.join(work, "ctr.onnx")
    sh([sys.executable, os.path.join(PROJECT, "bench", "generate_ctr_model.py"), "--layout",
        "criteo", "--hidden", args.hidden, "--dim", str(args.dim), "--buckets",
        str(args.buckets), "-o", model])
    data_file = os.path.join(work, "train.tsv")
    datagen(heterps, data_file, rows, 1)
    return model, data_file


def add_run_arguments(parser, steps):
    """The flags of a CPU benchmark of `heterps run --train` configurations
    on the Wide & Deep model: build, threads, batch, steps, rounds, the
    model (add_model_arguments), learning rate and the markdown output."""
    parser.add_argument("--build", default=os.path.join(PROJECT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--rounds", type=int, default=3)
    add_model_arguments(parser, buckets=100000)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", help="write the table into this markdown file too")


def add_model_arguments(parser, buckets):
    """The flags model_and_data reads: the Wide & Deep model's shape."""
    parser.add_argument("--hidden", default="256,128")
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--buckets", type=int, default=buckets)


def compile_bundle(args, heterps, model, path, optimizer, lr, extra=()):
    sh([heterps, "compile", model, "--cluster", os.path.join(PROJECT, "clusters", "local-cpu.yaml"),
        "--throughput", "1", "--strategy", "cpu-only", "--train", "--loss", "bce", "--optimizer",
        optimizer, "--lr", str(lr), "--batch", str(args.batch), "-o", path, *extra])
    return path


def initial_parameters(args, heterps, bundle, files, work):
    """HeterPS's starting point: the dense parameters (the model's ONNX
    initializers) and the rows its parameter server creates on first touch
    (seeded, uniform in +-0.01), read by training over every row of `files`
    at learning rate 0 and dumping the parameters (--dump-parameters).
    Returns {name: array}, tables whole ([rows, dim]; rows no file touches
    stay 0, never read)."""
    joined = os.path.join(work, "all.tsv")
    rows = 0
    with open(joined, "w") as out:
        for path in files:
            with open(path) as f:
                for line in f:
                    out.write(line)
                    rows += 1
    steps = -(-rows // args.batch)
    dump = os.path.join(work, "init")
    sh([heterps, "run", bundle, "--train", "--data", joined, "--steps", str(steps), "--batch",
        str(args.batch), "--threads", str(args.threads), "--hash-buckets", str(args.buckets),
        "--log-every", str(steps), "--lr-warmup", f"0:{steps}:{steps + 1}", "--dump-parameters",
        dump])
    with open(os.path.join(bundle, "manifest.json")) as f:
        training = json.load(f)["training"]
    params = {p["name"]: np.load(os.path.join(dump, p["name"] + ".npy"))
              for p in training["parameters"]}
    for table in training["tables"]:
        whole = np.zeros((table["rows"], table["dim"]), np.float32)
        ids = np.load(os.path.join(dump, table["name"] + ".ids.npy"))
        whole[ids] = np.load(os.path.join(dump, table["name"] + ".rows.npy"))
        params[table["name"]] = whole
    return params


def default_parameters(args, hidden):
    """PyTorch's own start where no HeterPS start is given: embeddings
    uniform in +-0.01, a zero linear part, nn.Linear's default init."""
    rng = np.random.default_rng(1)
    rows = FIELDS * args.buckets
    params = {"table": rng.uniform(-0.01, 0.01, (rows, args.dim)),
              "wide_table": np.zeros((rows, 1)), "wide_dense.w": np.zeros((DENSE, 1))}
    width = FIELDS * args.dim + DENSE
    for name, out in [(f"fc{h}", w) for h, w in enumerate(hidden)] + [("out", 1)]:
        bound = 1 / np.sqrt(width)
        params[name + ".w"] = rng.uniform(-bound, bound, (width, out))
        params[name + ".b"] = rng.uniform(-bound, bound, out)
        width = out
    return {k: v.astype(np.float32) for k, v in params.items()}


def torch_model(params, hidden, buckets, device, dtype=None):
    """The generated ONNX graph written with torch ops, on `params` in the
    ONNX layouts (Gemm weights [in, out]) as `dtype` (default f32); the
    tables give sparse gradients. Returns (forward(dense, sparse) -> logits,
    {name: tensor})."""
    import torch
    import torch.nn.functional as F

    tensors = {k: torch.tensor(v, device=device, dtype=dtype or torch.float32, requires_grad=True)
               for k, v in params.items()}
    offsets = torch.arange(FIELDS, dtype=torch.int64, device=device) * buckets
    layers = [f"fc{h}" for h in range(len(hidden))]

    def forward(dense, sparse):
        ids = sparse + offsets
        x = F.embedding(ids, tensors["table"], sparse=True).reshape(ids.shape[0], -1)
        x = torch.cat([x, dense], dim=1)
        for name in layers:
            x = torch.relu(torch.addmm(tensors[name + ".b"], x, tensors[name + ".w"]))
        deep = torch.addmm(tensors["out.b"], x, tensors["out.w"])
        wide = (F.embedding(ids, tensors["wide_table"], sparse=True).sum(dim=1) +
                dense @ tensors["wide_dense.w"])
        return (deep + wide).squeeze(1)

    return forward, tensors


class HeterpsAdam:
    """HeterPS's Adam (runtime/ps/Optimizers.cpp) in torch ops. A table is
    lazy: only the rows of a step's ids move, each row correcting its bias
    by its own update count (TensorFlow's LazyAdam; torch.optim.SparseAdam
    counts the table's steps instead). A dense tensor is one row updated
    every step. Betas are f32 and beta^t is kept per row as an f32 product,
    so 1 - beta^t carries f32 rounding; torch.optim.Adam computes it in f64."""

    def __init__(self, tables, dense, lr, betas=(0.9, 0.999), eps=1e-8):
        import torch
        f32 = np.float32
        self.lr, self.eps = lr, eps
        self.betas = torch.tensor([f32(betas[0]), f32(betas[1])])
        # 1 - beta as the server computes it, in f32.
        self.c1, self.c2 = float(f32(1) - f32(betas[0])), float(f32(1) - f32(betas[1]))
        self.b1, self.b2 = float(f32(betas[0])), float(f32(betas[1]))
        # (tensor, first moment, second moment, [beta1^t, beta2^t] per row)
        self.state = [(t, torch.zeros_like(t), torch.zeros_like(t),
                       torch.ones(t.shape[0] if any(t is x for x in tables) else 1, 2))
                      for t in tables + dense]

    def step(self):
        import torch
        with torch.no_grad():
            for tensor, m, v, powers in self.state:
                if tensor.grad.is_sparse:
                    grad = tensor.grad.coalesce()  # duplicate ids summed, as the server merges
                    ids, g = grad.indices()[0], grad.values()
                else:  # every element, one row
                    ids, g = slice(None), tensor.grad
                p = (powers[ids] if tensor.grad.is_sparse else powers) * self.betas  # f32 products
                if tensor.grad.is_sparse:
                    powers[ids] = p
                    shape = (-1,) + (1,) * (g.dim() - 1)
                    c1, c2 = (1 - p[:, 0]).reshape(shape), (1 - p[:, 1]).reshape(shape)
                else:
                    powers.copy_(p)
                    c1, c2 = float(1 - p[0, 0]), float(1 - p[0, 1])
                m[ids] = self.b1 * m[ids] + self.c1 * g
                v[ids] = self.b2 * v[ids] + self.c2 * g * g
                tensor[ids] -= self.lr * (m[ids] / c1) / ((v[ids] / c2).sqrt() + self.eps)

    def zero_grad(self):
        for tensor, *_ in self.state:
            tensor.grad = None


def torch_optimizers(kind, tensors, lr, adam="heterps"):
    """The bundle's optimizer with the server's settings (manifest defaults:
    Adagrad's initial accumulator 0.1 and epsilon 1e-8, Adam's betas 0.9 /
    0.999 and epsilon 1e-8, SGD without momentum). Adam: "heterps"
    (HeterpsAdam everywhere), "torch" (torch.optim.Adam on the dense
    parameters, HeterpsAdam's lazy rule on the tables) or "sparse"
    (torch.optim.Adam and torch.optim.SparseAdam)."""
    import torch
    tables = [tensors["table"], tensors["wide_table"]]
    dense = [t for name, t in tensors.items() if name not in ("table", "wide_table")]
    if kind == "sgd":
        return [torch.optim.SGD(tables + dense, lr=lr)]
    if kind == "adagrad":
        return [torch.optim.Adagrad(tables + dense, lr=lr, initial_accumulator_value=0.1, eps=1e-8)]
    if adam == "heterps":
        return [HeterpsAdam(tables, dense, lr)]
    sparse = (torch.optim.SparseAdam(tables, lr=lr, eps=1e-8) if adam == "sparse"
              else HeterpsAdam(tables, [], lr))
    return [sparse, torch.optim.Adam(dense, lr=lr, eps=1e-8)]


def torch_train(args, data, hidden, kind, lr, params=None, device="cpu", adam="heterps",
                dtype=None):
    """Trains args.steps steps of args.batch from `params` (default:
    default_parameters) on `data` in file order, in `dtype` (default f32).
    Returns (samples/s, per-step losses, forward, tensors); on "cuda" the
    data is on the GPU before the clock starts and the clock stops after a
    synchronize."""
    import torch

    torch.set_num_threads(args.threads)
    labels, dense, sparse = (torch.from_numpy(a).to(device) for a in data)
    if dtype is not None:
        labels, dense = labels.to(dtype), dense.to(dtype)
    if params is None:
        params = default_parameters(args, hidden)
    forward, tensors = torch_model(params, hidden, args.buckets, device, dtype)
    optimizers = torch_optimizers(kind, tensors, lr, adam)
    loss_fn = torch.nn.BCEWithLogitsLoss()  # the mean over the batch, as the loss gradient
    n = labels.shape[0]
    losses = []
    start = time.perf_counter()
    for step in range(args.steps):
        lo = (step * args.batch) % (n - args.batch + 1)
        hi = lo + args.batch
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss = loss_fn(forward(dense[lo:hi], sparse[lo:hi]), labels[lo:hi])
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
        losses.append(loss.detach())
    losses = [float(x) for x in losses]  # synchronizes with the device
    seconds = time.perf_counter() - start
    return args.steps * args.batch / seconds, losses, forward, tensors


def torch_round(args, data, hidden, device="cpu"):
    """PyTorch's samples/s and final loss (mean of the last 50 steps) with
    Adagrad at args.lr from its own start (bench_heterogeneous.py)."""
    rate, losses, _, _ = torch_train(args, data, hidden, "adagrad", args.lr, device=device)
    return rate, float(np.mean(losses[-50:]))


def auc(scores, labels):
    """Area under the ROC curve, ties counted half (runtime/data/Metrics.cpp)."""
    order = np.argsort(scores, kind="stable")
    scores, labels = scores[order], labels[order] > 0.5
    _, first, counts = np.unique(scores, return_index=True, return_counts=True)
    ranks = np.repeat(first + (counts + 1) / 2.0, counts)  # average 1-based rank per tie group
    positives = labels.sum()
    negatives = len(labels) - positives
    return (ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives)


def torch_eval(forward, data, batch=4096):
    """Eval AUC and log-loss of the model's probabilities on `data`."""
    import torch
    labels, dense, sparse = (torch.from_numpy(a) for a in data)
    with torch.no_grad():
        probs = torch.cat([torch.sigmoid(forward(dense[i:i + batch], sparse[i:i + batch]))
                           for i in range(0, labels.shape[0], batch)]).double().numpy()
    y = data[0].astype(np.float64)
    p = np.clip(probs, 1e-7, 1 - 1e-7)
    return auc(probs, data[0]), float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def heterps_train(args, heterps, bundle, data_file, eval_file=None, loss_log=None, dump=None,
                  extra=()):
    """One `heterps run --train` (with the `extra` flags): samples/s, the
    loss of the last 50 steps, and eval AUC and log-loss where `eval_file`
    is given."""
    window = min(50, args.steps)
    cmd = [heterps, "run", bundle, "--train", "--data", data_file, "--steps", str(args.steps),
           "--batch", str(args.batch), "--threads", str(args.threads), "--log-every",
           str(window), "--hash-buckets", str(args.buckets)]
    cmd += ["--eval", eval_file] if eval_file else []
    cmd += ["--loss-log", loss_log] if loss_log else []
    cmd += ["--dump-parameters", dump] if dump else []
    text = sh(cmd + list(extra))
    result = {"rate": float(re.search(r"done: .*?([0-9.e+]+) samples/s", text).group(1)),
              # The last progress window: steps - 49 .. steps.
              "loss": float(re.search(r"train loss ([0-9.]+)", text).group(1))}
    if eval_file:
        found = re.search(r"eval step .*?auc ([0-9.]+)\s+logloss ([0-9.]+)", text)
        result["auc"], result["logloss"] = float(found.group(1)), float(found.group(2))
    return result


def heterps_round(args, heterps, bundle, data_file):
    result = heterps_train(args, heterps, bundle, data_file)
    return result["rate"], result["loss"]


def write_section(path, name, text):
    """Replaces the generated section `name` of the markdown file `path`
    (between its begin/end comments), or appends it; prose outside the
    markers stays as written."""
    begin, end = f"<!-- begin {name} (generated) -->", f"<!-- end {name} -->"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
    else:
        new = old.rstrip() + ("\n\n" if old else "") + block + "\n"
    with open(path, "w") as f:
        f.write(new)


def publish(lines, out, name):
    """Prints a benchmark's table and, with `out`, writes it as section
    `name` of that markdown file."""
    text = "\n".join(lines)
    print(text)
    if out:
        write_section(out, name, text)


def provenance(build, threads):
    """Date, commit and machine for a benchmark table."""
    import platform
    import torch
    commit = subprocess.run(["git", "-C", PROJECT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", PROJECT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}"
            f"{' + local changes' if dirty else ''}, {os.cpu_count()} cores ({cpu}), "
            f"{threads} threads, load average {os.getloadavg()[0]:.1f} at the end, "
            f"PyTorch {torch.__version__}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(PROJECT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eval-rows", type=int, default=20000)
    add_model_arguments(parser, buckets=10000)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", help="write the table into this markdown file too")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    hidden = [int(w) for w in args.hidden.split(",") if w]
    rows = args.steps * args.batch
    with tempfile.TemporaryDirectory(prefix="hps-bench-train-") as work:
        model, data_file = model_and_data(args, heterps, work, rows)
        eval_file = os.path.join(work, "eval.tsv")
        truth = datagen(heterps, eval_file, args.eval_rows, 2)
        bundle = compile_bundle(args, heterps, model, os.path.join(work, "ctr.bundle"), "adagrad",
                                args.lr)
        # Both start from HeterPS's initial parameters (bench_parity.py shows
        # the two then train alike).
        params = initial_parameters(args, heterps, bundle, [data_file, eval_file], work)
        data = read_criteo(data_file, args.buckets, rows)
        eval_data = read_criteo(eval_file, args.buckets, args.eval_rows)
        ours, theirs = [], []
        for _ in range(args.rounds):  # interleaved, so both see the same noise
            ours.append(heterps_train(args, heterps, bundle, data_file, eval_file))
            rate, losses, forward, _ = torch_train(args, data, hidden, "adagrad", args.lr, params)
            score, logloss = torch_eval(forward, eval_data)
            theirs.append({"rate": rate, "loss": float(np.mean(losses[-50:])), "auc": score,
                           "logloss": logloss})
            print(f"round: HeterPS {ours[-1]}, PyTorch {theirs[-1]}", file=sys.stderr, flush=True)

    def median(results, key):
        return statistics.median(r[key] for r in results)

    a, b = median(ours, "rate"), median(theirs, "rate")
    rates = lambda results: ", ".join(f"{r['rate']:,.0f}" for r in results)  # noqa: E731
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}, Adagrad lr {args.lr}; batch {args.batch}, {args.steps} steps per round "
        f"(every training row once), median of {args.rounds} interleaved rounds; both start from "
        f"HeterPS's initial parameters. Final train loss: the mean of the last 50 steps; eval: "
        f"{args.eval_rows:,} held-out rows of the same hidden model, whose true probabilities "
        f"score a ground-truth AUC of {truth:.4f}.",
        "",
        f"{provenance(args.build, args.threads)}.",
        "",
        "| system | samples/s (median) | rounds | final train loss | eval AUC | eval log-loss | "
        "AUC gap to ground truth |",
        "|---|---|---|---|---|---|---|",
        f"| HeterPS (heterps run --train, CPU stages, PS in process) | {a:,.0f} | {rates(ours)} | "
        f"{median(ours, 'loss'):.4f} | {median(ours, 'auc'):.4f} | {median(ours, 'logloss'):.4f} | "
        f"{truth - median(ours, 'auc'):.4f} |",
        f"| PyTorch (CPU, sparse embeddings, Adagrad) | {b:,.0f} | {rates(theirs)} | "
        f"{median(theirs, 'loss'):.4f} | {median(theirs, 'auc'):.4f} | "
        f"{median(theirs, 'logloss'):.4f} | {truth - median(theirs, 'auc'):.4f} |",
        f"| **ratio HeterPS / PyTorch** | **{a / b:.2f}** | | | | | |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        command = (f"python3 bench/training/bench_training.py --build build --threads {args.threads} "
                   f"--batch {args.batch} --steps {args.steps} --rounds {args.rounds} "
                   f"--out {args.out}")
        write_section(args.out, "throughput", f"Reproduce: `{command}`\n\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
