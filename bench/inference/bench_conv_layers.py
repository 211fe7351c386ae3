#!/usr/bin/env python3
"""Per-convolution benchmark: HeterPS's CPU convolutions against onnxruntime's.

ResNet-20 spends almost all of its time in 3x3 convolutions; this isolates
them. For each of its three stage shapes (16, 32 and 64 channels on 32x32,
16x16 and 8x8 maps; with --shapes resnet18, ResNet-18's 64 to 512 channels
on 56x56 to 7x7) and each batch, two models are generated: a chain of
two Conv + Relu, and a chain of DEPTH. Three systems run both models on the
same machine in one process run: ours (`heterps compile --strategy
cpu-only`, then `heterps run --repeat`), ours with HETERPS_CPU_WINOGRAD=0
(the same bundle with oneDNN's direct convolutions instead of Winograd's
F(4x4, 3x3) or F(2x2, 3x3)), and onnxruntime (CPUExecutionProvider, all graph
optimizations, which rewrites the chain to its NCHWc kernels). The time of
one convolution is (chain of DEPTH - chain of 2) / (DEPTH - 2): what a layer
costs inside a network, without the first conv (from the model's plain
input) and the last (to its plain output), which reorder. Each measurement
is the median over R runs; the whole measurement is repeated --rounds
times, alternating the systems, and the median of the medians is reported,
with GFLOP/s (2 x multiply-adds of the direct convolution) and the ratios
(> 1: ours is faster). Outputs are checked against onnxruntime.

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

# (channels, spatial size) of the 3x3 stages of ResNet-20 (CIFAR-10) and of
# ResNet-18/34 (ImageNet).
SHAPES = {
    "resnet20": [(16, 32), (32, 16), (64, 8)],
    "resnet18": [(64, 56), (128, 28), (256, 14), (512, 7)],
}


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


SYSTEMS = (("ours", "ours"), ("direct", "ours, oneDNN direct"), ("ort", "onnxruntime"))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", default="64,256", help="comma-separated batch sizes")
    parser.add_argument("--shapes", default="resnet20", choices=sorted(SHAPES),
                        help="whose stage shapes to run")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    if args.depth < 3:
        parser.error("--depth must be at least 3")
    batches = [int(b) for b in args.batches.split(",")]
    heterps = os.path.join(args.build, "bin", "heterps")
    work = tempfile.mkdtemp(prefix="heterps-conv-")

    cases = []
    for batch in batches:
        for channels, size in SHAPES[args.shapes]:
            x = np.random.default_rng(1).uniform(-1, 1, (batch, channels, size, size))
            feeds = {"x": x.astype(np.float32)}
            systems = {}
            for depth in (2, args.depth):
                path = os.path.join(work, f"c{channels}_d{depth}.onnx")
                onnx.save(chain_model(channels, size, "N", depth, seed=channels), path)
                case_dir = os.path.join(work, f"b{batch}_c{channels}_d{depth}")
                os.makedirs(case_dir)
                ours = Ours(heterps, path, batch, args.threads, case_dir)
                peer = OnnxRuntime(path, args.threads)
                for system in (ours, peer):
                    system.set_inputs(feeds)
                run = {"ours": ours, "direct": ours.with_env(HETERPS_CPU_WINOGRAD="0"),
                       "ort": peer}
                expected = peer.session.run(None, feeds)[0]
                scale = max(1.0, float(np.max(np.abs(expected))))
                error = 0.0
                for name in ("ours", "direct"):
                    got = run[name].outputs(peer.names)[0]
                    error = max(error, float(np.max(np.abs(got - expected))))
                if error > 1e-4 * scale:
                    sys.exit(f"b{batch} c{channels} depth {depth}: ours differs from "
                             f"onnxruntime by {error}")
                repeats = {name: calibrate(system, args.seconds)[0]
                           for name, system in run.items()}
                systems[depth] = (run, repeats, error)
            cases.append((batch, channels, size, systems))

    # rounds x (case, depth, system) -> seconds
    samples = {}
    for round_index in range(args.rounds):
        for batch, channels, size, systems in cases:
            for depth, (run, repeats, _) in systems.items():
                for name, _ in SYSTEMS:
                    samples.setdefault((batch, channels, depth, name), []).append(
                        run[name].measure(repeats[name]))
        print(f"round {round_index + 1}/{args.rounds} done", flush=True)

    def per_conv(batch, channels, name):
        longer = statistics.median(samples[(batch, channels, args.depth, name)])
        shorter = statistics.median(samples[(batch, channels, 2, name)])
        return (longer - shorter) / (args.depth - 2)

    rows = []
    for batch, channels, size, systems in cases:
        flops = 2.0 * batch * channels * channels * 9 * size * size
        per = {name: per_conv(batch, channels, name) for name, _ in SYSTEMS}
        error = max(s[2] for s in systems.values())
        cells = [f"{batch}", f"{channels}x{size}x{size}, 3x3, {channels} out"]
        for name, _ in SYSTEMS:
            cells += [f"{per[name] * 1e3:.3f}", f"{flops / per[name] / 1e9:.1f}"]
        cells += [f"{per['direct'] / per['ours']:.3f}", f"{per['ort'] / per['ours']:.3f}",
                  f"{error:.2g}"]
        rows.append("| " + " | ".join(cells) + " |")

    load = os.getloadavg()[0]
    with open(args.out, "w") as f:
        f.write("# Convolution layers: HeterPS against onnxruntime\n\n")
        f.write(f"Produced by `python3 bench/inference/bench_conv_layers.py --build {args.build} "
                f"--out {args.out} --threads {args.threads} --batches {args.batches} "
                f"--shapes {args.shapes} "
                f"--depth {args.depth} --rounds {args.rounds}` on "
                f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.processor() or platform.machine()}, "
                f"1-minute load average {load:.2f} at the end.\n\n")
        f.write(f"{args.threads} threads; per convolution = (chain of {args.depth} - chain of 2) "
                f"/ {args.depth - 2}, medians of {args.rounds} rounds; GFLOP/s counts the direct "
                "convolution's multiply-adds; ratios = the other system's time over ours "
                "(> 1: ours is faster). \"oneDNN direct\" is our bundle run with "
                "HETERPS_CPU_WINOGRAD=0.\n\n")
        f.write("| batch | layer | ours ms | ours GFLOP/s | oneDNN direct ms | "
                "oneDNN direct GFLOP/s | onnxruntime ms | onnxruntime GFLOP/s | "
                "ours vs direct | ours vs onnxruntime | max error |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n")
        f.write("\n".join(rows) + "\n\nEvery round's medians (ms per call):\n\n")
        for batch, channels, size, systems in cases:
            for depth in systems:
                for name, label in SYSTEMS:
                    values = ", ".join(
                        f"{v * 1e3:.3f}" for v in samples[(batch, channels, depth, name)])
                    f.write(f"- b{batch} c{channels} depth {depth} {label}: {values}\n")
    print(open(args.out).read())


if __name__ == "__main__":
    main()
