#!/usr/bin/env python3
"""Prints a placement plan (heterps-translate --hps-to-plan) readably.

  summarize_plan.py PLAN.json [--against NAME=PLAN.json ...]

With --against, a table compares the plan's throughput, price and cost per
million samples with the other plans' (e.g. CPU-only and GPU-only).
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def describe(plan):
    state = "feasible" if plan["feasible"] else "INFEASIBLE"
    print(f"\nplan ({plan['strategy']} on {plan['cluster']}, batch {plan['batch']}): {state}")
    print(f"  target {plan['target']:.0f} samples/s, reaches {plan['throughput']:.0f} samples/s")
    print(f"  price ${plan['price_per_hour']:.2f}/hour, "
          f"${plan['cost_per_million_samples']:.4f} per million samples, "
          f"solved in {plan['solve_seconds'] * 1000:.1f} ms")
    if plan.get("micro_batches"):
        count = int(plan["micro_batches"])
        print(f"  training steps of {count} micro-batch{'es' if count > 1 else ''} "
              f"({count * int(plan['batch'])} samples): "
              f"{plan['step_throughput']:.0f} samples/s")
    if not plan["feasible"]:
        print(f"  best reachable {plan['best_reachable_throughput']:.0f} samples/s, "
              f"bottleneck '{plan.get('bottleneck', '?')}'")
    for i, stage in enumerate(plan["stages"]):
        layers = stage["layers"]
        shown = ", ".join(layers[:4]) + (f", ... ({len(layers)} layers)" if len(layers) > 4 else "")
        print(f"  stage {i}: {stage['replicas']} x {stage['device']:10s} {shown}")


def devices(plan):
    return " + ".join(f"{s['replicas']} x {s['device']}" for s in plan["stages"])


def step(plan):
    """A training plan's step: its micro-batches and their samples/s."""
    if not plan.get("micro_batches"):
        return ""
    return f"{int(plan['micro_batches'])} x {int(plan['batch'])}: {plan['step_throughput']:.0f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("--against", action="append", default=[], metavar="NAME=PLAN.json")
    args = parser.parse_args()
    plan = load(args.plan)
    describe(plan)
    if not args.against:
        return 0
    rows = [(plan["strategy"], plan)]
    for pair in args.against:
        name, _, path = pair.partition("=")
        if not name or not path:
            sys.exit(f"summarize_plan.py: --against '{pair}' is not NAME=PLAN.json")
        rows.append((name, load(path)))
    base = plan["cost_per_million_samples"]
    print(f"\n  {'plan':10s} {'devices':28s} {'samples/s':>10s} {'$/hour':>8s} "
          f"{'$/M samples':>12s} {'vs ' + plan['strategy']:>8s}  target  step")
    for name, p in rows:
        met = "met" if p["feasible"] else "missed"
        print(f"  {name:10s} {devices(p):28s} {p['throughput']:10.0f} "
              f"{p['price_per_hour']:8.2f} {p['cost_per_million_samples']:12.4f} "
              f"{p['cost_per_million_samples'] / base:7.2f}x  {met:6s}  {step(p)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
