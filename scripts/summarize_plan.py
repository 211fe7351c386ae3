#!/usr/bin/env python3
"""Prints a placement plan (heterps-translate --hps-to-plan) as a table."""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    state = "feasible" if plan["feasible"] else "INFEASIBLE"
    print(f"\nplan ({plan['strategy']} on {plan['cluster']}, batch {plan['batch']}): {state}")
    print(f"  target {plan['target']:.0f} samples/s, reaches {plan['throughput']:.0f} samples/s")
    print(f"  price ${plan['price_per_hour']:.2f}/hour, "
          f"${plan['cost_per_million_samples']:.4f} per million samples, "
          f"solved in {plan['solve_seconds'] * 1000:.1f} ms")
    if not plan["feasible"]:
        print(f"  best reachable {plan['best_reachable_throughput']:.0f} samples/s, "
              f"bottleneck '{plan.get('bottleneck', '?')}'")
    for i, stage in enumerate(plan["stages"]):
        layers = stage["layers"]
        shown = ", ".join(layers[:4]) + (f", ... ({len(layers)} layers)" if len(layers) > 4 else "")
        print(f"  stage {i}: {stage['replicas']} x {stage['device']:10s} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
