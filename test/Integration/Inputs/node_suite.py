#!/usr/bin/env python3
"""Runs ONNX's backend node tests (Debian's libonnx-testdata) through
import and legalization.

Every model must either import, or be refused with one clear diagnostic;
every imported model must legalize (with verification) without error. A
crash, a hang, a verifier failure or an error without a location fails the
run. Prints a per-op table of how many cases were fully legalized.

Usage: node_suite.py BIN_DIR [DATA_DIR] [--table FILE]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

GENERIC = re.compile(r'hps\.onnx_node "([A-Za-z0-9_]+)"')


def run_case(bin_dir, case_dir):
    model = os.path.join(case_dir, "model.onnx")
    name = os.path.basename(case_dir.rstrip("/"))
    with tempfile.TemporaryDirectory() as tmp:
        imported = os.path.join(tmp, "imported.mlir")
        try:
            imp = subprocess.run(
                [os.path.join(bin_dir, "heterps-translate"), "--import-onnx", model, "-o", imported],
                capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return name, "fail", "import timed out"
        if imp.returncode != 0:
            first = imp.stderr.strip().splitlines()[0] if imp.stderr.strip() else ""
            if imp.returncode != 1 or "model.onnx:0:0: error: " not in first:
                return name, "fail", f"import exited {imp.returncode}: {first}"
            if os.path.exists(imported):
                return name, "fail", "import failed but left an output file"
            return name, "refused", first.split("error: ", 1)[1]
        try:
            leg = subprocess.run(
                [os.path.join(bin_dir, "heterps-opt"), "--hps-legalize-onnx", imported],
                capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return name, "fail", "legalization timed out"
        if leg.returncode != 0:
            return name, "fail", f"legalization exited {leg.returncode}: {leg.stderr.strip()[:300]}"
        generic = sorted(set(GENERIC.findall(leg.stdout)))
        if generic:
            return name, "generic", ",".join(generic)
        return name, "legalized", ""


def op_of(case):
    """test_conv_with_strides_padding -> conv (the ONNX op, roughly)."""
    return case[len("test_"):].split("_")[0] if case.startswith("test_") else case


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("bin_dir")
    parser.add_argument("data_dir", nargs="?", default="/usr/share/libonnx-testdata/data/node")
    parser.add_argument("--table", help="write a markdown table of the results")
    args = parser.parse_args()
    cases = sorted(os.path.join(args.data_dir, d) for d in os.listdir(args.data_dir)
                   if os.path.isfile(os.path.join(args.data_dir, d, "model.onnx")))
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for result in pool.map(lambda c: run_case(args.bin_dir, c), cases):
            results.append(result)
    counts = collections.Counter(status for _, status, _ in results)
    failures = [r for r in results if r[1] == "fail"]
    for name, _, why in failures:
        print(f"FAIL {name}: {why}")
    print(f"cases: {len(results)}")
    for status in ("legalized", "generic", "refused", "fail"):
        print(f"{status}: {counts[status]}")
    if args.table:
        per_op = collections.defaultdict(collections.Counter)
        for name, status, _ in results:
            per_op[op_of(name)][status] += 1
        with open(args.table, "w") as f:
            f.write("| test prefix | cases | legalized | generic | refused at import |\n")
            f.write("|---|---|---|---|---|\n")
            for op in sorted(per_op):
                c = per_op[op]
                f.write(f"| {op} | {sum(c.values())} | {c['legalized']} | {c['generic']} | {c['refused']} |\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
