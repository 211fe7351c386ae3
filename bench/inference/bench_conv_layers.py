#!/usr/bin/env python3
"""Per-convolution benchmark: HeterPS's CPU convolutions against onnxruntime's.

ResNet-20 spends almost all of its time in 3x3 convolutions; this isolates
them. For each of its three stage shapes (16, 32 and 64 channels on 32x32,
16x16 and 8x8 maps) two models are generated: one Conv + Relu, and a chain
of DEPTH of them. Both systems run both models on the same machine in one
process run (ours: `heterps compile --strategy cpu-only`, then `heterps run
--repeat`; onnxruntime: CPUExecutionProvider, all graph optimizations, which
rewrites the chain to its NCHWc kernels). The time of one convolution is
(chain - single) / (DEPTH - 1): what a layer costs inside a network, without
the reorders at the model's edges. Each measurement is the median over R
runs; the whole measurement is repeated --rounds times, alternating the
systems, and the median of the medians is reported, with GFLOP/s
(2 x multiply-adds) and the ratio (> 1: ours is faster). Outputs are
checked against onnxruntime.

    python3 bench/inference/bench_conv_layers.py --build build --out F.md
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_inference import OnnxRuntime, Ours, calibrate  # noqa: E402

# (channels, spatial size) of ResNet-20's three stages.
SHAPES = [(16, 32), (32, 16), (64, 8)]


def chain_model(channels, size, batch_param, depth, seed):
    rng = np.random.default_rng(seed)
    nodes, inits, current = [], [], "x"
    for i in range(depth):
        # He-scaled weights keep activations in range along the chain.
        std = np.sqrt(2.0 / (channels * 9))
        inits.append(numpy_helper.from_array(
            rng.normal(0, std, (channels, channels, 3, 3)).astype(np.float32), f"w{i}"))
        inits.append(numpy_helper.from_array(
            rng.uniform(-0.1, 0.1, channels).astype(np.float32), f"b{i}"))
        nodes.append(helper.make_node("Conv", [current, f"w{i}", f"b{i}"], [f"c{i}"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        current = f"r{i}"
    shape = [batch_param, channels, size, size]
    graph = helper.make_graph(
        nodes, "conv_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--depth", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    if args.depth < 2:
        parser.error("--depth must be at least 2")
    heterps = os.path.join(args.build, "bin", "heterps")
    work = tempfile.mkdtemp(prefix="heterps-conv-")

    cases = []
    for channels, size in SHAPES:
        x = np.random.default_rng(1).uniform(-1, 1, (args.batch, channels, size, size))
        feeds = {"x": x.astype(np.float32)}
        systems = {}
        for depth in (1, args.depth):
            path = os.path.join(work, f"c{channels}_d{depth}.onnx")
            onnx.save(chain_model(channels, size, "N", depth, seed=channels), path)
            case_dir = os.path.join(work, f"c{channels}_d{depth}")
            os.makedirs(case_dir)
            ours = Ours(heterps, path, args.batch, args.threads, case_dir)
            peer = OnnxRuntime(path, args.threads)
            for system in (ours, peer):
                system.set_inputs(feeds)
            expected = peer.session.run(None, feeds)[0]
            got = ours.outputs(peer.names)[0]
            error = float(np.max(np.abs(got - expected)))
            scale = max(1.0, float(np.max(np.abs(expected))))
            if error > 1e-4 * scale:
                sys.exit(f"c{channels} depth {depth}: ours differs from onnxruntime by {error}")
            repeats = {name: calibrate(system, args.seconds)[0]
                       for name, system in (("ours", ours), ("ort", peer))}
            systems[depth] = (ours, peer, repeats, error)
        cases.append((channels, size, systems))

    # rounds x (case, depth, system) -> seconds
    samples = {}
    for round_index in range(args.rounds):
        for channels, size, systems in cases:
            for depth, (ours, peer, repeats, _) in systems.items():
                for name, system in (("ours", ours), ("ort", peer)):
                    samples.setdefault((channels, depth, name), []).append(
                        system.measure(repeats[name]))
        print(f"round {round_index + 1}/{args.rounds} done", flush=True)

    def median(channels, depth, name):
        return statistics.median(samples[(channels, depth, name)])

    rows = []
    for channels, size, systems in cases:
        flops = 2.0 * args.batch * channels * channels * 9 * size * size
        per = {}
        for name in ("ours", "ort"):
            per[name] = (median(channels, args.depth, name) - median(channels, 1, name)) / (
                args.depth - 1)
        error = max(s[3] for s in systems.values())
        rows.append(
            f"| {channels}x{size}x{size}, 3x3, {channels} out | {per['ours'] * 1e3:.3f} | "
            f"{flops / per['ours'] / 1e9:.1f} | {per['ort'] * 1e3:.3f} | "
            f"{flops / per['ort'] / 1e9:.1f} | {per['ort'] / per['ours']:.3f} | {error:.2g} |")

    load = os.getloadavg()[0]
    with open(args.out, "w") as f:
        f.write("# Convolution layers: HeterPS against onnxruntime\n\n")
        f.write(f"Produced by `python3 bench/inference/bench_conv_layers.py --build {args.build} "
                f"--out {args.out} --threads {args.threads} --batch {args.batch} "
                f"--depth {args.depth} --rounds {args.rounds}` on "
                f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.processor() or platform.machine()}, "
                f"1-minute load average {load:.2f} at the end.\n\n")
        f.write(f"Batch {args.batch}, {args.threads} threads; per convolution = "
                f"(chain of {args.depth} - one) / {args.depth - 1}, medians of {args.rounds} "
                "rounds; ratio = onnxruntime's time over ours (> 1: ours is faster).\n\n")
        f.write("| layer | ours ms | ours GFLOP/s | onnxruntime ms | onnxruntime GFLOP/s | "
                "ratio | max error |\n|---|---|---|---|---|---|---|\n")
        f.write("\n".join(rows) + "\n\nEvery round's medians (ms per call):\n\n")
        for channels, size, systems in cases:
            for depth in systems:
                for name in ("ours", "ort"):
                    values = ", ".join(f"{v * 1e3:.3f}" for v in samples[(channels, depth, name)])
                    f.write(f"- c{channels} depth {depth} {name}: {values}\n")
    print(open(args.out).read())


if __name__ == "__main__":
    main()
