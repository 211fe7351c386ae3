#!/usr/bin/env python3
"""Prints a per-op summary of an hps module: how many of each layer op, the
weights and their sizes, the function signature, and any ONNX nodes left
generic."""
import argparse
import collections
import re
import sys

OP = re.compile(r'=\s+(hps\.[a-z_]+)(?:\s+"([A-Za-z0-9_]+)")?')
WEIGHT = re.compile(r'hps\.weight\s+"([^"]+)".*:\s+tensor<([^>]*)>')
FUNC = re.compile(r'func\.func @(\w+)\((.*?)\)\s*->\s*(.*?)\s*(?:attributes \{|\{$)')


def elements(shape):
    count = 1
    for dim in shape.split("x")[:-1]:
        count *= int(dim) if dim.isdigit() else 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("module")
    parser.add_argument("--model", default="")
    args = parser.parse_args()
    ops = collections.Counter()
    generic = collections.Counter()
    params = 0
    weights = 0
    signature = None
    with open(args.module) as f:
        for line in f:
            if line.startswith("{-#"):
                break  # Resource blobs follow.
            if signature is None and (m := FUNC.search(line)):
                signature = m
            if m := WEIGHT.search(line):
                weights += 1
                params += elements(m.group(2))
            if m := OP.search(line):
                ops[m.group(1)] += 1
                if m.group(1) == "hps.onnx_node":
                    generic[m.group(2)] += 1
    print(f"model: {args.model or args.module}")
    if signature:
        strip = lambda text: re.sub(r'\s*loc\([^()]*(\([^()]*\))?[^()]*\)', "", text)
        print(f"inputs: {strip(signature.group(2))}")
        print(f"outputs: {strip(signature.group(3))}")
    print(f"weights: {weights} tensors, {params:,} parameters")
    print("layer ops:")
    for op, count in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])):
        if op not in ("hps.weight", "hps.constant", "hps.onnx_node"):
            print(f"  {op:28s} {count}")
    if generic:
        print("ONNX nodes left generic (no legalization yet):")
        for op, count in generic.most_common():
            print(f"  {op:28s} {count}")
    else:
        print("every ONNX node legalized")
    return 0


if __name__ == "__main__":
    sys.exit(main())
