#!/usr/bin/env python3
"""Training parity of HeterPS and PyTorch on the Wide & Deep CTR model.

Both train the same model (bench/generate_ctr_model.py --layout criteo) on
the same batches in the same order from the same start, with the same loss
(binary cross-entropy on logits, mean over the batch) and optimizer
settings:
- start: HeterPS's dense parameters are the ONNX initializers and its
  table rows come from the parameter server's seeded first-touch
  initialiser; bench_training.initial_parameters reads both with a run at
  learning rate 0 over every train and eval row (--dump-parameters), and
  PyTorch loads them;
- data: the reader's transform (bench_training.read_criteo), rows in file
  order, one pass (steps x batch rows);
- optimizers: SGD (no momentum), Adagrad (initial accumulator 0.1,
  epsilon 1e-8) and Adam (betas 0.9 / 0.999, epsilon 1e-8), duplicate ids
  of a batch summed before the update on both sides. HeterPS's Adam is
  lazy on sparse rows with per-row bias correction and keeps beta^t in
  f32; PyTorch's side runs the same rule (bench_training.HeterpsAdam), and
  torch.optim.Adam on the dense parameters (bias correction in f64) with
  the lazy rule or torch.optim.SparseAdam (the table's step count) on the
  tables is reported beside it.
Per optimizer it records every step's loss (heterps run --loss-log) and
reports the largest difference, the final train loss (mean of the last 50
steps), the eval AUC and log-loss on held-out rows, the ground-truth AUC
of those rows (datagen's hidden model), and the largest difference of the
final parameters (--dump-parameters against PyTorch's tensors).

Usage: bench_parity.py --build build [--threads 2] [--batch 256]
       [--steps 400] [--optimizers sgd:0.1,adagrad:0.05,adam:0.001]
       [--out docs/benchmarks/training.md]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_training as bt  # noqa: E402


def read_loss_log(path):
    steps, losses = np.loadtxt(path, ndmin=2).T
    assert np.array_equal(steps, np.arange(1, len(steps) + 1)), f"{path}: steps out of order"
    return losses


def first_above(diff, bound):
    """The steps before the first whose loss difference exceeds `bound`."""
    above = np.flatnonzero(diff > bound)
    return int(above[0]) if len(above) else len(diff)


def table_ids(dump):
    """The ids of the rows HeterPS holds, per table of a --dump-parameters."""
    return {f[:-len(".ids.npy")]: np.load(os.path.join(dump, f))
            for f in os.listdir(dump) if f.endswith(".ids.npy")}


def parameter_difference(ours, theirs, ids):
    """Largest |ours - theirs| over {name: array} (tables: the rows of
    `ids` only, those of ids training saw)."""
    return max(float(np.abs(ours[k][ids[k]] - theirs[k][ids[k]] if k in ids else ours[k] - theirs[k])
                     .max()) for k in ours)


def loaded(dump, ids, like):
    """A --dump-parameters directory as {name: array}, tables whole."""
    result = {}
    for name, array in like.items():
        if name in ids:
            result[name] = np.zeros_like(array)
            result[name][ids[name]] = np.load(os.path.join(dump, name + ".rows.npy"))
        else:
            result[name] = np.load(os.path.join(dump, name + ".npy"))
    return result


def compare(args, heterps, bundle, kind, lr, params, data, eval_data, hidden, work):
    """One optimizer: HeterPS and PyTorch (f32, and f64 for the rounding
    noise floor) from `params`; a dict of figures per PyTorch side."""
    import torch
    loss_log, dump = os.path.join(work, kind + ".loss"), os.path.join(work, kind + ".final")
    ours = bt.heterps_train(args, heterps, bundle, args.train_file, args.eval_file, loss_log, dump)
    our_losses = read_loss_log(loss_log)
    numpy = lambda tensors: {k: t.detach().double().numpy() for k, t in tensors.items()}  # noqa: E731
    ids = table_ids(dump)
    # The same arithmetic in f64: how far f32 rounding alone moves PyTorch.
    _, exact, _, exact_tensors = bt.torch_train(args, data, hidden, kind, lr, params,
                                                dtype=torch.float64)
    exact, exact_params = np.array(exact), numpy(exact_tensors)
    our_params = loaded(dump, ids, exact_params)
    results = []
    peers = [("PyTorch, HeterPS's Adam rule" if kind == "adam" else "PyTorch", "heterps")]
    if kind == "adam":  # PyTorch's own Adam on the dense parameters, with either table rule
        peers += [("torch.optim.Adam + lazy tables", "torch"),
                  ("torch.optim.Adam + SparseAdam", "sparse")]
    for name, adam in peers:
        _, losses, forward, tensors = bt.torch_train(args, data, hidden, kind, lr, params, adam=adam)
        losses, their_params = np.array(losses), numpy(tensors)
        score, logloss = bt.torch_eval(forward, eval_data)
        diff = np.abs(our_losses - losses)
        result = {
            "optimizer": f"{kind} (lr {lr})", "peer": name, "diff": diff.max(),
            "agree": first_above(diff, 1e-6),
            "diff_step": int(diff.argmax()) + 1, "rel": (diff / np.abs(losses)).max(),
            "ours_loss": our_losses[-50:].mean(), "their_loss": losses[-50:].mean(),
            "ours_auc": ours["auc"], "their_auc": score, "ours_logloss": ours["logloss"],
            "their_logloss": logloss, "params": parameter_difference(our_params, their_params, ids)}
        if adam == "heterps":  # the f64 run's rule
            result.update(floor=np.abs(losses - exact).max(),
                          floor_agree=first_above(np.abs(losses - exact), 1e-6),
                          ours_exact=np.abs(our_losses - exact).max(),
                          floor_params=parameter_difference(their_params, exact_params, ids))
        results.append(result)
        print(f"{kind} vs {name}: {result}", file=sys.stderr, flush=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(bt.PROJECT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--eval-rows", type=int, default=20000)
    bt.add_model_arguments(parser, buckets=10000)
    parser.add_argument("--optimizers", default="sgd:0.1,adagrad:0.05,adam:0.001",
                        help="KIND:LR,... (sgd, adagrad, adam)")
    parser.add_argument("--out", help="write the table into this markdown file too")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    hidden = [int(w) for w in args.hidden.split(",") if w]
    rows = args.steps * args.batch
    optimizers = [(k, float(lr)) for k, lr in (item.split(":") for item in args.optimizers.split(","))]
    results = []
    with tempfile.TemporaryDirectory(prefix="hps-bench-parity-") as work:
        model, args.train_file = bt.model_and_data(args, heterps, work, rows)
        args.eval_file = os.path.join(work, "eval.tsv")
        truth = bt.datagen(heterps, args.eval_file, args.eval_rows, 2)
        bundles = {kind: bt.compile_bundle(args, heterps, model, os.path.join(work, kind + ".bundle"),
                                           kind, lr) for kind, lr in optimizers}
        # The start depends on --seed and the tables' names only, not on the
        # optimizer (docs/CLI.md), so one read serves every bundle.
        params = bt.initial_parameters(args, heterps, next(iter(bundles.values())),
                                       [args.train_file, args.eval_file], work)
        data = bt.read_criteo(args.train_file, args.buckets, rows)
        eval_data = bt.read_criteo(args.eval_file, args.buckets, args.eval_rows)
        for kind, lr in optimizers:
            results += compare(args, heterps, bundles[kind], kind, lr, params, data, eval_data,
                               hidden, work)
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}; batch {args.batch}, {args.steps} steps (every training row once, in file "
        f"order); both start from HeterPS's initial parameters. Loss difference: per step, "
        f"|HeterPS - PyTorch| of the step's mean loss (how many steps stay within 1e-6, the "
        f"largest, the step where it is, and relative to PyTorch's loss); noise floor: the same "
        f"for PyTorch in f32 against PyTorch in f64 on the same run; final train loss: the mean "
        f"of the last 50 steps; eval: "
        f"{args.eval_rows:,} held-out rows, whose true probabilities score a ground-truth AUC of "
        f"{truth:.4f}; parameters: the largest |HeterPS - PyTorch| over the final weights.",
        "",
        f"{bt.provenance(args.build, args.threads)}.",
        "",
        "| optimizer | PyTorch side | steps within 1e-6: HeterPS - PyTorch / PyTorch f32 - f64 | "
        "max loss diff HeterPS - PyTorch (step) | max rel. diff | "
        "noise floor: PyTorch f32 - f64 | HeterPS - f64 | final loss HeterPS / PyTorch | "
        "eval AUC HeterPS / PyTorch | AUC gap to ground truth | eval log-loss HeterPS / PyTorch "
        "| max param diff HeterPS - PyTorch | PyTorch f32 - f64 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        has_floor = "floor" in r  # the f64 run follows HeterPS's rule, not SparseAdam's
        floor = f"{r['floor']:.1e} | {r['ours_exact']:.1e}" if has_floor else "- | -"
        floor_params = f"{r['floor_params']:.1e}" if has_floor else "-"
        agree = f"{r['agree']} / {r['floor_agree'] if has_floor else '-'}"
        lines.append(
            f"| {r['optimizer']} | {r['peer']} | {agree} | {r['diff']:.1e} ({r['diff_step']}) | "
            f"{r['rel']:.1e} | "
            f"{floor} | {r['ours_loss']:.5f} / {r['their_loss']:.5f} | {r['ours_auc']:.4f} / "
            f"{r['their_auc']:.4f} | {truth - r['ours_auc']:.4f} / "
            f"{truth - round(r['their_auc'], 4):.4f} | {r['ours_logloss']:.4f} / "
            f"{r['their_logloss']:.4f} | {r['params']:.1e} | {floor_params} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        command = (f"python3 bench/training/bench_parity.py --build build --threads {args.threads} "
                   f"--batch {args.batch} --steps {args.steps} --optimizers {args.optimizers} "
                   f"--out {args.out}")
        bt.write_section(args.out, "parity", f"Reproduce: `{command}`\n\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
