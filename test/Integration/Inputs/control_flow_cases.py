#!/usr/bin/env python3
"""Writes models with control flow (If, Loop, Scan) as backend-test cases,
their outputs computed by onnxruntime; node_suite_run.py then runs them
through heterps compile + run. HeterPS resolves control flow at compile
time (lib/Dialect/HPS/Transforms/ONNX/ControlFlow.cpp): an If on a constant
becomes its branch, an If on a run-time condition runs both branches and
selects, Loop and Scan are unrolled. The cases cover what each of those
must get right: outer-scope values read by a body, iteration numbers used
as indices, loop-carried values that change shape, scan outputs, early
exits known at compile time, while loops over a counter, nesting, Scan's
axes and directions, and sequences (lists a loop appends to, SplitToSequence,
SequenceAt / Insert / Erase / Length, ConcatFromSequence, SequenceMap).

Usage: control_flow_cases.py OUT_DIR
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from newer_opset_cases import write

rng = np.random.default_rng(11)
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
CASES = []


def case(name, nodes, inputs, outputs, constants=None, opset=17):
    """inputs: [(name, array)]; outputs: [(name, elem type, rank)]."""
    CASES.append((name, nodes, inputs, outputs, constants or {}, opset))


def floats(*shape):
    return rng.uniform(-2.0, 2.0, shape).astype(np.float32)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def graph(name, nodes, inputs, outputs, initializers=()):
    """A subgraph; inputs and outputs are (name, elem type, shape or None)."""
    def info(n, t, s):
        return helper.make_tensor_value_info(n, t, s)
    return helper.make_graph(nodes, name, [info(*i) for i in inputs],
                             [info(*o) for o in outputs], list(initializers))


def const(name, array):
    return node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array)))


# If on a constant (an initializer), both values of it: the taken branch
# reads an outer value.
for flag in [True, False]:
    then_branch = graph("then", [node("Mul", ["x", "two"], ["t"])], [], [("t", F, None)])
    else_branch = graph("else", [node("Add", ["x", "two"], ["e"])], [], [("e", F, None)])
    case(f"if_constant_{str(flag).lower()}",
         [node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)],
         [("x", floats(3, 4))], [("y", F, 2)],
         {"c": np.array(flag), "two": np.array(2.0, np.float32)})

# If on a run-time condition: both branches run and each output is picked.
# Two outputs; the condition is computed from the data, once rank 0 and
# once shape [1].
for shape in [(), (1,)]:
    then_branch = graph("then", [node("Relu", ["x"], ["a"]), node("Sigmoid", ["x"], ["b"])],
                        [], [("a", F, None), ("b", F, None)])
    else_branch = graph("else", [node("Neg", ["x"], ["a2"]), node("Tanh", ["x"], ["b2"])],
                        [], [("a2", F, None), ("b2", F, None)])
    nodes = [node("ReduceSum", ["x"], ["s"], keepdims=0),
             node("Greater", ["s", "zero"], ["c0"]),
             node("Reshape", ["c0", "cshape"], ["c"]),
             node("If", ["c"], ["y", "z"], then_branch=then_branch, else_branch=else_branch)]
    for sign, label in [(1, "pos"), (-1, "neg")]:
        x = np.abs(floats(2, 5)) * sign
        case(f"if_runtime_rank{len(shape)}_{label}", nodes, [("x", x)],
             [("y", F, 2), ("z", F, 2)],
             {"zero": np.array(0.0, np.float32), "cshape": np.array(shape, np.int64)})

# Nested If: the inner condition is constant, the outer one is not.
inner_then = graph("inner_then", [node("Mul", ["x", "x"], ["sq"])], [], [("sq", F, None)])
inner_else = graph("inner_else", [node("Abs", ["x"], ["ab"])], [], [("ab", F, None)])
outer_then = graph("outer_then", [node("If", ["k"], ["r"], then_branch=inner_then,
                                       else_branch=inner_else)], [], [("r", F, None)])
outer_else = graph("outer_else", [node("Exp", ["x"], ["ex"])], [], [("ex", F, None)])
case("if_nested", [node("ReduceMax", ["x"], ["m"], keepdims=0),
                   node("Less", ["m", "half"], ["c"]),
                   node("If", ["c"], ["y"], then_branch=outer_then, else_branch=outer_else)],
     [("x", floats(4, 3))], [("y", F, 2)],
     {"k": np.array(False), "half": np.array(0.5, np.float32)})


def loop_body(nodes, carried, scans, name="body", i="i", cond_in="cond_in",
              cond_out="cond_out"):
    """A Loop body: inputs (i, cond, carried...), outputs (cond, carried...,
    scans...); carried and scans are (name, elem type) pairs. A nested body
    names its own iteration and condition (names are unique model-wide)."""
    return graph(name, nodes,
                 [(i, I64, []), (cond_in, BOOL, [])] + [(n, t, None) for n, t in carried],
                 [(cond_out, BOOL, [])] + [(n, t, None) for n, t in scans])


# A for loop (trip count, no condition) with a loop-carried value, the
# iteration number cast into the arithmetic, and a scan output.
body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                  node("Cast", ["i"], ["fi"], to=F),
                  node("Mul", ["acc", "w"], ["scaled"]),
                  node("Add", ["scaled", "fi"], ["acc_out"]),
                  node("Tanh", ["acc_out"], ["trace"])],
                 [("acc", F)], [("acc_out", F), ("trace", F)])
case("loop_for", [node("Loop", ["n", "", "x"], ["y", "ys"], body=body)],
     [("x", floats(2, 3))], [("y", F, 2), ("ys", F, 3)],
     {"n": np.array(5, np.int64), "w": floats(2, 3)})

# The iteration number as an index: row i of an outer tensor each step,
# as a hand-written RNN cell reads its time step (weights are outer values).
body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                  node("Gather", ["seq", "i"], ["x_t"], axis=0),
                  node("MatMul", ["x_t", "wx"], ["a"]),
                  node("MatMul", ["h", "wh"], ["b"]),
                  node("Add", ["a", "b"], ["ab"]),
                  node("Tanh", ["ab"], ["h_out"]),
                  node("Identity", ["h_out"], ["h_seq"])],
                 [("h", F)], [("h_out", F), ("h_seq", F)])
case("loop_rnn_cell", [node("Loop", ["n", "go", "h0"], ["h", "hs"], body=body)],
     [("seq", floats(6, 2, 4)), ("h0", floats(2, 3))], [("h", F, 2), ("hs", F, 3)],
     {"n": np.array(6, np.int64), "go": np.array(True), "wx": floats(4, 3),
      "wh": floats(3, 3)})

# A loop-carried value that grows every iteration (Concat), and a trip
# count computed from a shape, which legalization folds.
body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                  node("Slice", ["buf", "minus1", "big", "zero1"], ["last"]),
                  node("Mul", ["last", "decay"], ["next"]),
                  node("Concat", ["buf", "next"], ["buf_out"], axis=0)],
                 [("buf", F)], [("buf_out", F)])
case("loop_growing_state",
     [node("Shape", ["x"], ["shape"]),
      node("Gather", ["shape", "one"], ["n"], axis=0),
      node("Loop", ["n", "", "x"], ["y"], body=body)],
     [("x", floats(1, 4))], [("y", F, 2)],
     {"one": np.array(1, np.int64), "minus1": np.array([-1], np.int64),
      "big": np.array([1 << 30], np.int64), "zero1": np.array([0], np.int64),
      "decay": np.array(0.5, np.float32)})

# An early exit known at compile time: the body's condition is a constant
# false, so the loop runs once however large its trip count.
body = loop_body([const("cond_out", np.array(False)),
                  node("Add", ["acc", "x"], ["acc_out"])],
                 [("acc", F)], [("acc_out", F)])
case("loop_exit_after_one", [node("Loop", ["n", "", "x"], ["y"], body=body)],
     [("x", floats(3,))], [("y", F, 1)], {"n": np.array(10, np.int64)})

# A condition that is false from the start: no iteration, the initial
# values come out.
body = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                  node("Neg", ["acc"], ["acc_out"])],
                 [("acc", F)], [("acc_out", F)])
case("loop_never_runs",
     [node("Relu", ["x"], ["r"]), node("Loop", ["n", "stop", "r"], ["y"], body=body)],
     [("x", floats(2, 2))], [("y", F, 2)],
     {"n": np.array(3, np.int64), "stop": np.array(False)})

# Nested loops: the inner body reads the outer iteration number.
inner = loop_body([node("Identity", ["c_in"], ["c_out"]),
                   node("Cast", ["j"], ["fj"], to=F),
                   node("Cast", ["outer_i"], ["fo"], to=F),
                   node("Mul", ["fj", "fo"], ["prod"]),
                   node("Add", ["acc_j", "prod"], ["acc_j_out"])],
                  [("acc_j", F)], [("acc_j_out", F)], name="inner", i="j",
                  cond_in="c_in", cond_out="c_out")
outer = graph("outer",
              [node("Identity", ["cond_in"], ["cond_out"]),
               node("Identity", ["i"], ["outer_i"]),
               node("Loop", ["m", "", "acc"], ["acc_mid"], body=inner),
               node("Sin", ["acc_mid"], ["acc_out"])],
              [("i", I64, []), ("cond_in", BOOL, []), ("acc", F, None)],
              [("cond_out", BOOL, []), ("acc_out", F, None)])
case("loop_nested", [node("Loop", ["n", "", "x"], ["y"], body=outer)],
     [("x", floats(2, 2))], [("y", F, 2)],
     {"n": np.array(3, np.int64), "m": np.array(4, np.int64)})


def scan_body(nodes, states, slices, outputs, shape):
    """A Scan body whose values all have `shape` (onnxruntime needs the
    shapes of a Scan body's outputs)."""
    return graph("body", nodes, [(n, F, shape) for n in states + slices],
                 [(n, F, shape) for n in outputs])


# Scan (9+): a cumulative sum with its running total and every partial sum.
body = scan_body([node("Add", ["s", "x_t"], ["s_out"]),
                  node("Identity", ["s_out"], ["partial"])],
                 ["s"], ["x_t"], ["s_out", "partial"], [3])
for opset in [9, 16, 20]:
    case(f"scan_cumsum_opset{opset}",
         [node("Scan", ["s0", "x"], ["total", "partials"], body=body, num_scan_inputs=1)],
         [("s0", floats(3)), ("x", floats(5, 3))], [("total", F, 1), ("partials", F, 2)],
         opset=opset)

# Two states, two scan inputs along axis 1 (one read backwards), outputs
# stacked along axis 1 and along -1 (one written backwards).
body = scan_body([node("Mul", ["a_t", "b_t"], ["ab"]),
                  node("Add", ["s1", "ab"], ["s1_out"]),
                  node("Max", ["s2", "a_t"], ["s2_out"]),
                  node("Sub", ["s1_out", "s2_out"], ["d"]),
                  node("Relu", ["ab"], ["r"])],
                 ["s1", "s2"], ["a_t", "b_t"], ["s1_out", "s2_out", "d", "r"], [2, 3])
case("scan_axes_directions",
     [node("Scan", ["i1", "i2", "a", "b"], ["f1", "f2", "ds", "rs"], body=body,
           num_scan_inputs=2, scan_input_axes=[1, -2], scan_input_directions=[0, 1],
           scan_output_axes=[1, -1], scan_output_directions=[1, 0])],
     [("i1", floats(2, 3)), ("i2", floats(2, 3)), ("a", floats(2, 4, 3)),
      ("b", floats(2, 4, 3))],
     [("f1", F, 2), ("f2", F, 2), ("ds", F, 3), ("rs", F, 3)], opset=11)

# Scan-8: a batch axis 0 on every input, scan inputs along axis 1, one
# read backwards, sequence_lens all full.
body = scan_body([node("Mul", ["a_t", "b_t"], ["ab"]),
                  node("Add", ["s1", "ab"], ["s1_out"]),
                  node("Tanh", ["s1_out"], ["t"])],
                 ["s1"], ["a_t", "b_t"], ["s1_out", "t"], [3])
case("scan8_batched",
     [node("Scan", ["lens", "i1", "a", "b"], ["f1", "ts"], body=body, num_scan_inputs=2,
           directions=[0, 1])],
     [("i1", floats(2, 3)), ("a", floats(2, 4, 3)), ("b", floats(2, 4, 3))],
     [("f1", F, 2), ("ts", F, 3)], {"lens": np.array([4, 4], np.int64)}, opset=8)

# A Loop inside a Scan body: per step, a fixed number of refinement steps.
inner = loop_body([node("Identity", ["cond_in"], ["cond_out"]),
                   node("Mul", ["v", "x_t"], ["vx"]),
                   node("Cos", ["vx"], ["v_out"])],
                  [("v", F)], [("v_out", F)], name="refine")  # Scan's body has no i
body = graph("body", [node("Loop", ["k", "", "s"], ["s_out"], body=inner),
                      node("Identity", ["s_out"], ["seen"])],
             [("s", F, [4]), ("x_t", F, [4])], [("s_out", F, [4]), ("seen", F, [4])])
case("scan_with_loop",
     [node("Scan", ["s0", "x"], ["s", "seen"], body=body, num_scan_inputs=1)],
     [("s0", floats(4)), ("x", floats(3, 4))], [("s", F, 1), ("seen", F, 2)],
     {"k": np.array(2, np.int64)}, opset=13)


# A while loop over a counter (the body computes the condition; no trip
# count, and TorchScript's INT64_MAX), and a for loop with a break known at
# compile time: HeterPS takes one iteration at a time off the front until
# the condition folds to false.
body = loop_body([node("Add", ["k", "one"], ["k_out"]),
                  node("Less", ["k_out", "three"], ["cond_out"]),
                  node("Mul", ["v", "v"], ["sq"]),
                  node("Add", ["sq", "tenth"], ["v_out"])],
                 [("k", I64), ("v", F)], [("k_out", I64), ("v_out", F)])
for label, count in [("no_trip_count", ""), ("int64_max", "big")]:
    constants = {"go": np.array(True), "zero": np.array(0, np.int64),
                 "one": np.array(1, np.int64), "three": np.array(3, np.int64),
                 "tenth": np.array(0.1, np.float32)}
    if count:
        constants[count] = np.array(np.iinfo(np.int64).max, np.int64)
    case(f"loop_while_{label}",
         [node("Loop", [count, "go", "zero", "x"], ["k", "y"], body=body)],
         [("x", floats(2, 3) / 2)], [("k", I64, 0), ("y", F, 2)], constants)
body = loop_body([node("Less", ["i", "two"], ["cond_out"]),
                  node("Cast", ["i"], ["fi"], to=F),
                  node("Add", ["acc", "fi"], ["acc_out"])],
                 [("acc", F)], [("acc_out", F)])
case("loop_for_with_break", [node("Loop", ["n", "", "x"], ["y"], body=body)],
     [("x", floats(4))], [("y", F, 1)],
     {"n": np.array(6, np.int64), "two": np.array(2, np.int64)})


def seq_info(name, shape=None):
    return helper.make_tensor_sequence_value_info(name, F, shape)


# Sequences, as TorchScript writes lists: a loop that appends each step's
# value to a list, stacked at the end (ConcatFromSequence new_axis).
body = helper.make_graph(
    [node("Identity", ["cond_in"], ["cond_out"]),
     node("Gather", ["x", "i"], ["x_t"], axis=1),
     node("Tanh", ["x_t"], ["t"]),
     node("Add", ["h", "t"], ["h_out"]),
     node("SequenceInsert", ["outs", "h_out"], ["outs_out"])], "body",
    [helper.make_tensor_value_info("i", I64, []),
     helper.make_tensor_value_info("cond_in", BOOL, []),
     helper.make_tensor_value_info("h", F, None), seq_info("outs")],
    [helper.make_tensor_value_info("cond_out", BOOL, []),
     helper.make_tensor_value_info("h_out", F, None), seq_info("outs_out")])
case("sequence_loop_append",
     [node("SequenceEmpty", [], ["empty"], dtype=F),
      node("Loop", ["n", "", "h0", "empty"], ["h", "outs"], body=body),
      node("ConcatFromSequence", ["outs"], ["y"], axis=1, new_axis=1)],
     [("x", floats(2, 4, 3)), ("h0", floats(2, 3))], [("h", F, 2), ("y", F, 3)],
     {"n": np.array(4, np.int64)})

# SplitToSequence (by a scalar chunk, the last one shorter; by a list; into
# ones without keepdims), SequenceAt with a negative position,
# SequenceInsert at the front, SequenceErase, SequenceLength driving a
# Loop, and ConcatFromSequence without a new axis.
case("sequence_split_chunks",
     [node("SplitToSequence", ["x", "two"], ["parts"], axis=1),
      node("SequenceAt", ["parts", "minus1"], ["last"]),
      node("SequenceInsert", ["parts", "last", "zero"], ["front"]),
      node("SequenceErase", ["front", "one"], ["erased"]),
      node("ConcatFromSequence", ["erased"], ["y"], axis=1)],
     [("x", floats(3, 5))], [("y", F, 2)],
     {"two": np.array(2, np.int64), "minus1": np.array(-1, np.int64),
      "zero": np.array(0, np.int64), "one": np.array(1, np.int64)})
case("sequence_split_list",
     [node("SplitToSequence", ["x", "sizes"], ["parts"], axis=-1),
      node("SequenceLength", ["parts"], ["count"]),
      node("SequenceAt", ["parts", "one"], ["second"]),
      node("Cast", ["count"], ["fcount"], to=F),
      node("Mul", ["second", "fcount"], ["y"])],
     [("x", floats(2, 6))], [("y", F, 2)],
     {"sizes": np.array([1, 3, 2], np.int64), "one": np.array(1, np.int64)})
body = helper.make_graph(
    [node("Identity", ["cond_in"], ["cond_out"]),
     node("SequenceAt", ["rows", "i"], ["row"]),
     node("Relu", ["row"], ["r"]),
     node("SequenceInsert", ["acc", "r"], ["acc_out"])], "body",
    [helper.make_tensor_value_info("i", I64, []),
     helper.make_tensor_value_info("cond_in", BOOL, []), seq_info("acc")],
    [helper.make_tensor_value_info("cond_out", BOOL, []), seq_info("acc_out")])
case("sequence_split_ones_loop",
     [node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
      node("SequenceLength", ["rows"], ["count"]),
      node("SequenceEmpty", [], ["empty"], dtype=F),
      node("Loop", ["count", "", "empty"], ["mapped"], body=body),
      node("ConcatFromSequence", ["mapped"], ["y"], axis=0, new_axis=1)],
     [("x", floats(3, 4))], [("y", F, 2)])
# SequenceMap (17): the body once per element, with a tensor input too.
map_body = helper.make_graph(
    [node("Mul", ["e", "w"], ["m"]), node("ReduceSum", ["m"], ["r"], keepdims=0)], "map",
    [helper.make_tensor_value_info("e", F, None), helper.make_tensor_value_info("w", F, None)],
    [helper.make_tensor_value_info("m", F, None), helper.make_tensor_value_info("r", F, None)])
case("sequence_map",
     [node("SplitToSequence", ["x", "two"], ["parts"], axis=0),
      node("SequenceMap", ["parts", "scale"], ["products", "sums"], body=map_body),
      node("ConcatFromSequence", ["products"], ["y"], axis=0),
      node("ConcatFromSequence", ["sums"], ["z"], axis=0, new_axis=1)],
     [("x", floats(4, 3)), ("scale", floats(3))], [("y", F, 2), ("z", F, 1)],
     {"two": np.array(2, np.int64)})


def main():
    out_dir = sys.argv[1]
    for name, nodes, inputs, outputs, constants, opset in CASES:
        write(out_dir, name, None, inputs, outputs, constants, {}, nodes, opset)
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
