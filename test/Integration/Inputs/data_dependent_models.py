#!/usr/bin/env python3
"""Models whose outputs have data-dependent extents (NonZero, Unique,
NonMaxSuppression, Compress with a run-time condition) flowing through the
ops real exports put after them (a boolean mask's selection, detection
post-processing), compiled once and run on several random inputs against
onnxruntime; then models HeterPS must refuse, each with its error.

  data_dependent_models.py HETERPS_BIN CLUSTER OUT_DIR [--gpu-cluster FILE
                           [--gpu-device] --only NAME,...]

With --gpu-cluster the models named by --only (all if none) are compiled as
GPU-class stages (--strategy gpu-only; nvcc builds the device code) and run
with --gpu-stages-on-cpu, or on the GPU with --gpu-device (scripts/gpu/
check.sh), and no refusals are tried. With --mixed-cluster only
mixed_stages runs: planned by dp for that preset, its selection on a CPU
stage between GPU-class ones, so padded indices cross channels.

Prints `ok NAME runs N` or `FAIL NAME: why` per model, `refused NAME:
MESSAGE` per refused one, and `failed: N`; exits 1 if any case failed.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def mask_select():
    """x[x > 0] as PyTorch exports it, and the coordinates."""
    nodes = [
        helper.make_node("Constant", [], ["zero"], value=const("zero", np.float32(0))),
        helper.make_node("Greater", ["x", "zero"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["coords"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "coords"], ["selected"]),
        helper.make_node("Mul", ["selected", "selected"], ["squared"]),
    ]
    m = model("mask_select", nodes, [tensor("x", FLOAT, [6, 5])],
              [tensor("coords", INT64, [None, 2]), tensor("squared", FLOAT, [None])])

    def inputs(rng, run):
        x = rng.standard_normal((6, 5)).astype(np.float32)
        return {"x": -np.abs(x) if run == 0 else x}  # run 0 selects nothing
    return m, inputs


def detection(runtime_thresholds):
    """NMS, then the boxes, classes and scores it keeps (an SSD/YOLO tail)."""
    batches, classes, boxes = 2, 3, 40
    nodes = [
        helper.make_node("NonMaxSuppression",
                         ["boxes", "scores", "max_out", "iou", "score_min"],
                         ["selected"], center_point_box=0),
        helper.make_node("Gather", ["selected", "col_box"], ["box_col"], axis=1),
        helper.make_node("Squeeze", ["box_col", "axis1"], ["box_index"]),
        helper.make_node("Gather", ["selected", "col_batch"], ["batch_col"], axis=1),
        helper.make_node("Squeeze", ["batch_col", "axis1"], ["batch_index"]),
        helper.make_node("Flatten", ["boxes"], ["flat_boxes"], axis=2),
        helper.make_node("Reshape", ["boxes", "rows_shape"], ["rows"]),
        helper.make_node("Mul", ["batch_index", "box_count"], ["row_base"]),
        helper.make_node("Add", ["row_base", "box_index"], ["row"]),
        helper.make_node("Gather", ["rows", "row"], ["det_boxes"], axis=0),
        helper.make_node("Slice", ["selected", "col_class", "col_box", "axis1"],
                         ["class_col"]),
        helper.make_node("Cast", ["class_col"], ["det_classes"], to=FLOAT),
        helper.make_node("GatherND", ["scores", "selected"], ["det_scores"]),
    ]
    initializers = [const("col_box", np.array([2])), const("col_batch", np.array([0])),
                    const("col_class", np.array([1])), const("axis1", np.array([1])),
                    const("rows_shape", np.array([-1, 4])),
                    const("box_count", np.array(boxes))]
    inputs = [tensor("boxes", FLOAT, [batches, boxes, 4]),
              tensor("scores", FLOAT, [batches, classes, boxes])]
    if runtime_thresholds:
        inputs += [tensor("max_out", INT64, [1]), tensor("iou", FLOAT, [1]),
                   tensor("score_min", FLOAT, [1])]
    else:
        initializers += [const("max_out", np.array([5])),
                         const("iou", np.array([0.4], np.float32)),
                         const("score_min", np.array([0.3], np.float32))]
    outputs = [tensor("det_boxes", FLOAT, [None, 4]),
               tensor("det_classes", FLOAT, [None, 1]),
               tensor("det_scores", FLOAT, [None]), tensor("selected", INT64, [None, 3])]
    m = model("detection_runtime" if runtime_thresholds else "detection", nodes,
              inputs, outputs, initializers, opset=13)

    def feed(rng, run):
        corner = rng.uniform(0, 10, (batches, boxes, 2)).astype(np.float32)
        size = rng.uniform(0.5, 4, (batches, boxes, 2)).astype(np.float32)
        # Half the boxes with flipped corners, as ONNX allows.
        box = np.concatenate([corner, corner + size], axis=2)
        box[:, ::2] = box[:, ::2][:, :, [2, 3, 0, 1]]
        scores = rng.uniform(0, 1, (batches, classes, boxes)).astype(np.float32)
        values = {"boxes": box, "scores": scores}
        if runtime_thresholds:
            values.update(max_out=np.array([[3, 40, 0][run % 3]]),
                          iou=np.array([0.5], np.float32),
                          score_min=np.array([0.2], np.float32))
        return values
    return m, feed


def nms_without_limit():
    """No max_output_boxes_per_class: ONNX selects nothing (capacity 0)."""
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["selected"])]
    m = model("nms_without_limit", nodes,
              [tensor("boxes", FLOAT, [1, 6, 4]), tensor("scores", FLOAT, [1, 2, 6])],
              [tensor("selected", INT64, [None, 3])], opset=11)
    return m, lambda rng, run: {"boxes": rng.uniform(0, 5, (1, 6, 4)).astype(np.float32),
                                "scores": rng.uniform(0, 1, (1, 2, 6)).astype(np.float32)}


def unique_counts():
    nodes = [helper.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"],
                              sorted=1),
             helper.make_node("Mul", ["counts", "two"], ["doubled"])]
    m = model("unique_counts", nodes, [tensor("x", INT64, [40])],
              [tensor("y", INT64, [None]), tensor("first", INT64, [None]),
               tensor("inverse", INT64, [40]), tensor("doubled", INT64, [None])],
              [const("two", np.array(2))], opset=11)
    return m, lambda rng, run: {"x": rng.integers(-5, 5 + 10 * run, 40)}


def unique_rows():
    nodes = [helper.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"],
                              axis=1, sorted=0),
             helper.make_node("Relu", ["y"], ["relu"])]
    m = model("unique_rows", nodes, [tensor("x", FLOAT, [2, 12, 3])],
              [tensor("relu", FLOAT, [2, None, 3]), tensor("first", INT64, [None]),
               tensor("inverse", INT64, [12]), tensor("counts", INT64, [None])],
              opset=11)

    def feed(rng, run):
        pool = rng.integers(-2, 3, (2, 4 + run, 3)).astype(np.float32)
        return {"x": pool[:, rng.integers(0, pool.shape[1], 12)]}
    return m, feed


def compress_rows():
    nodes = [helper.make_node("Compress", ["x", "keep"], ["kept"], axis=0),
             helper.make_node("Sigmoid", ["kept"], ["y"])]
    m = model("compress_rows", nodes,
              [tensor("x", FLOAT, [7, 4]), tensor("keep", BOOL, [5])],
              [tensor("y", FLOAT, [None, 4])], opset=11)
    return m, lambda rng, run: {"x": rng.standard_normal((7, 4)).astype(np.float32),
                                "keep": rng.random(5) < [0.0, 0.5, 1.0][run % 3]}


def mixed_stages():
    """Rows whose sum passes a threshold, between two dense layers: a plan
    for the paper preset puts the matrix products on GPU classes and the
    selection on a CPU, so padded indices cross from stage to stage."""
    rng = np.random.default_rng(3)
    w = rng.random((512, 512)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("MatMul", ["r", "W"], ["b"]),
        helper.make_node("ReduceSum", ["b", "axis1"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "threshold"], ["m"]),
        helper.make_node("NonZero", ["m"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        helper.make_node("GatherND", ["b", "idx"], ["rows"]),
        helper.make_node("Mul", ["rows", "rows"], ["y"]),
    ]
    # About half the rows of uniform [0, 1) inputs pass.
    threshold = np.float32(np.median(
        (np.maximum(rng.random((256, 512), np.float32) @ w, 0) @ w).sum(1)))
    m = model("mixed_stages", nodes, [tensor("x", FLOAT, [256, 512])],
              [tensor("y", FLOAT, [None, 512]), tensor("idx", INT64, [None, 1])],
              [const("W", w), const("axis1", np.array([1])),
               const("threshold", threshold)])
    return m, lambda rng, run: {"x": rng.random((256, 512), np.float32)}


def folded_mask():
    """A transformer block whose mask and positions are computed from the
    input's shape through data-dependent ops (NonZero of ConstantOfShape,
    Unique, a TopK whose k is read from a shape), with symbolic batch and
    sequence dims: once --batch and --dim bind them, every such op has
    constant operands and folds."""
    i64 = lambda name, v: helper.make_node(
        "Constant", [], [name], value=const(name, np.asarray(v, np.int64)))
    nodes = [
        helper.make_node("Shape", ["ids"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["ones"],
                         value=const("one", np.array([1], np.int64))),
        helper.make_node("NonZero", ["ones"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["nzs"]),
        i64("one_i", 1), i64("zero_i", 0), i64("three", 3), i64("axis0", [0]),
        helper.make_node("Gather", ["nzs", "one_i"], ["count"]),
        helper.make_node("Gather", ["s", "one_i"], ["seq"]),
        helper.make_node("Range", ["zero_i", "seq", "one_i"], ["pos"]),
        # causal mask: key position > query position is masked
        helper.make_node("Unsqueeze", ["pos", "axis0"], ["row"]),
        helper.make_node("Unsqueeze", ["pos", "one_axis"], ["col"]),
        helper.make_node("Greater", ["row", "col"], ["future"]),
        helper.make_node("Where", ["future", "minus", "zerof"], ["bias"]),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "xt"], ["scores"]),
        helper.make_node("Add", ["scores", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "x"], ["attended"]),
        helper.make_node("Cast", ["count"], ["countf"], to=FLOAT),
        helper.make_node("Div", ["attended", "countf"], ["y"]),
        # k = number of distinct positions mod 3
        helper.make_node("Mod", ["pos", "three"], ["phase"]),
        helper.make_node("Unique", ["phase"], ["phases"], sorted=1),
        helper.make_node("Shape", ["phases"], ["k"]),
        helper.make_node("TopK", ["probs", "k"], ["top", "top_i"], axis=-1),
    ]
    m = model("folded_mask", nodes,
              [tensor("ids", INT64, ["batch", "sequence"]),
               tensor("x", FLOAT, ["batch", "sequence", 16])],
              [tensor("y", FLOAT, ["batch", "sequence", 16]),
               tensor("top", FLOAT, ["batch", "sequence", None])],
              [const("one_axis", np.array([1], np.int64)),
               const("minus", np.float32(-1e4)), const("zerof", np.float32(0))],
              opset=17)

    def feed(rng, run):
        return {"ids": rng.integers(0, 100, (2, 8), dtype=np.int64),
                "x": rng.standard_normal((2, 8, 16)).astype(np.float32)}
    return m, feed, ["--batch", "2", "--dim", "sequence=8"]


def refused_models():
    x = tensor("x", FLOAT, [4, 3])
    yield "shape_of_nonzero", model("shape_of_nonzero", [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["y"])], [x], [tensor("y", INT64, [2])])
    yield "shape_after_cast", model("shape_after_cast", [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Cast", ["nz"], ["nzf"], to=FLOAT),
        helper.make_node("Shape", ["nzf"], ["y"])], [x], [tensor("y", INT64, [2])])
    yield "sum_over_count", model("sum_over_count", [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("ReduceSum", ["nz"], ["y"], axes=[1], keepdims=0)],
        [x], [tensor("y", INT64, [2])], opset=11)
    yield "padded_into_matmul", model("padded_into_matmul", [
        helper.make_node("Compress", ["x", "keep"], ["kept"], axis=0),
        helper.make_node("Transpose", ["kept"], ["t"], perm=[1, 0]),
        helper.make_node("MatMul", ["t", "kept"], ["y"])],
        [x, tensor("keep", BOOL, [4])], [tensor("y", FLOAT, [3, 3])], opset=11)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def check(bin_dir, cluster, out, name, m, feed, runs=4, gpu=False, placement=None,
          on_device=False, extra=()):
    path = os.path.join(out, name + ".onnx")
    onnx.save(m, path)
    bundle = os.path.join(out, name)
    if placement is None:
        placement = ["--throughput", "1"] + (["--strategy", "gpu-only"] if gpu else [])
    placement = placement + list(extra)
    done = run([os.path.join(bin_dir, "heterps"), "compile", path, "--cluster", cluster,
                *placement, "-o", bundle])
    if done.returncode:
        return f"compile: {done.stderr.strip()}"
    if name == "mixed_stages":
        with open(os.path.join(bundle, "manifest.json")) as f:
            manifest = json.load(f)
        kinds = {stage["kind"] for stage in manifest["stages"]}
        # The selected indices (i64, padded) go from the CPU stage on.
        padded = [c for c in manifest["channels"]
                  if c["dtype"] == "i64" and c["from"] >= 0 and c["to"] >= 0]
        if kinds != {"cpu", "gpu"} or not padded:
            return (f"the plan has stage kinds {sorted(kinds)} and "
                    f"{len(padded)} i64 channels between stages")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in m.graph.output]
    rng = np.random.default_rng(len(name))
    for r in range(runs):
        values = feed(rng, r)
        args = []
        for key, value in values.items():
            np.save(os.path.join(out, f"{name}.{key}.npy"), value)
            args += ["--input", f"{key}={os.path.join(out, f'{name}.{key}.npy')}"]
        outdir = os.path.join(out, f"{name}.out{r}")
        on_cpu = ["--gpu-stages-on-cpu"] if gpu and not on_device else []
        done = run([os.path.join(bin_dir, "heterps"), "run", bundle, *args, *on_cpu,
                    "--output-dir", outdir])
        if done.returncode:
            return f"run {r}: {done.stderr.strip()}"
        expected = session.run(None, values)
        for key, want in zip(names, expected):
            got = np.load(os.path.join(outdir, key + ".npy"))
            if got.shape != want.shape or got.dtype != want.dtype:
                return f"run {r}: {key}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                return f"run {r}: {key}: values differ"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("cluster")
    parser.add_argument("out")
    parser.add_argument("--gpu-cluster")
    parser.add_argument("--gpu-device", action="store_true",
                        help="run GPU-class stages on the GPU (a machine with one)")
    parser.add_argument("--only", default="")
    parser.add_argument("--mixed-cluster",
                        help="only the mixed_stages model, planned for this preset")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.mixed_cluster:
        m, feed = mixed_stages()
        why = check(args.bin_dir, args.mixed_cluster, args.out, "mixed_stages", m, feed,
                    runs=2, gpu=True,
                    placement=["--strategy", "dp", "--throughput", "20000"],
                    on_device=args.gpu_device)
        print(f"FAIL mixed_stages: {why}" if why else "ok mixed_stages runs 2")
        return 1 if why else 0
    bin_dir, out = args.bin_dir, args.out
    gpu = args.gpu_cluster is not None
    cluster = args.gpu_cluster if gpu else args.cluster
    os.makedirs(out, exist_ok=True)
    cases = {"mask_select": mask_select(), "detection": detection(False),
             "detection_runtime": detection(True), "nms_without_limit": nms_without_limit(),
             "unique_counts": unique_counts(),
             "unique_rows": unique_rows(), "compress_rows": compress_rows(),
             "folded_mask": folded_mask()}
    failed = 0
    for name, (m, feed, *extra) in cases.items():
        if args.only and name not in args.only.split(","):
            continue
        why = check(bin_dir, cluster, out, name, m, feed, runs=2 if gpu else 4, gpu=gpu,
                    on_device=args.gpu_device, extra=extra[0] if extra else ())
        if why:
            failed += 1
            print(f"FAIL {name}: {why}")
        else:
            print(f"ok {name} runs {2 if gpu else 4}")
    for name, m in [] if gpu else refused_models():
        path = os.path.join(out, name + ".onnx")
        onnx.save(m, path)
        done = run([os.path.join(bin_dir, "heterps"), "compile", path, "--cluster",
                    cluster, "--throughput", "1", "-o", os.path.join(out, name)])
        if done.returncode == 0 or os.path.exists(os.path.join(out, name)):
            failed += 1
            print(f"FAIL {name}: compiled")
        else:
            lines = [l for l in done.stderr.splitlines() if "error" in l]
            print(f"refused {name}: {lines[0] if lines else done.stderr.strip()}")
    print(f"failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
