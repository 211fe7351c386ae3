#!/usr/bin/env python3
"""Writes RNN, GRU and LSTM models over sequences longer than the unrolling
limit (512 steps), which legalize into hps.recurrence, as backend-test
cases (OUT/test_opsetN_<case>/model.onnx and test_data_set_0/*.pb, outputs
computed by onnxruntime, which runs no batch-first recurrent op: the
batch-first transposes around hps.recurrence are the unrolled path's);
node_suite_run.py runs them through heterps
compile + run.

The cases cover what the recurrence kernel implements: every cell, both
directions and bidirectional, initial
states, peepholes, clip, sequence_lens (rows of full, partial and zero
length), GRU with and without linear_before_reset, Relu activations, and
batches of 3 and 6 (the kernel's small-batch and oneDNN products).

Usage: long_recurrent_cases.py OUT_DIR [--steps T]
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from newer_opset_cases import write_all  # noqa: E402

rng = np.random.default_rng(513)
F = TensorProto.FLOAT


def floats(*shape, scale=0.5):
    return rng.uniform(-scale, scale, shape).astype(np.float32)


def cases(steps):
    inputs, hidden = 5, 8
    out = []

    def add(name, op, gates, attrs, directions=1, layout=0, bias=True,
            lengths=False, initial=False, peepholes=False, outputs=3,
            opset=14, batch=3):
        lens = np.array([steps, steps // 2, 0] + [steps - 1] * (batch - 3),
                        dtype=np.int32)
        x = floats(batch, steps, inputs) if layout else floats(steps, batch, inputs)
        feeds = [("x", x)]
        constants = {"w": floats(directions, gates * hidden, inputs),
                     "r": floats(directions, gates * hidden, hidden)}
        order = ["x", "w", "r"]
        extra = [("b", floats(directions, 2 * gates * hidden)) if bias else None,
                 ("sequence_lens", lens) if lengths else None]
        state_shape = ((batch, directions, hidden) if layout
                       else (directions, batch, hidden))
        if initial:
            extra.append(("initial_h", floats(*state_shape)))
            if op == "LSTM":
                extra.append(("initial_c", floats(*state_shape)))
        elif op == "LSTM" and peepholes:
            extra += [None, None]
        if peepholes:
            extra.append(("p", floats(directions, 3 * hidden)))
        # Trailing absent inputs are dropped; inner ones are "".
        while extra and extra[-1] is None:
            extra.pop()
        for item in extra:
            if item is None:
                order.append("")
            else:
                order.append(item[0])
                feeds.append(item)
        names = ["y", "y_h", "y_c"][:outputs]
        ranks = [4, 3, 3][:outputs]
        node = helper.make_node(op, order, names, hidden_size=hidden,
                                layout=layout, **attrs)
        out.append((name, None, feeds, [(n, F, r) for n, r in zip(names, ranks)],
                    constants, {}, [node], opset))

    add("lstm_forward", "LSTM", 4, {}, outputs=3)
    add("lstm_bidirectional_states_peepholes_clip_lengths", "LSTM", 4,
        {"direction": "bidirectional", "clip": 1.5}, directions=2,
        lengths=True, initial=True, peepholes=True)
    add("lstm_reverse_no_bias", "LSTM", 4, {"direction": "reverse"},
        bias=False)
    add("gru_reverse_lengths", "GRU", 3, {"direction": "reverse"},
        lengths=True, initial=True, outputs=2)
    add("gru_linear_before_reset_bidirectional", "GRU", 3,
        {"direction": "bidirectional", "linear_before_reset": 1},
        directions=2, outputs=2)
    add("rnn_relu_lengths", "RNN", 1, {"activations": ["Relu"]},
        lengths=True, initial=True, outputs=2)
    # Batches past 4 multiply h R^T with oneDNN rather than loops of their
    # own.
    add("lstm_batch_6_peepholes_lengths", "LSTM", 4, {}, batch=6,
        lengths=True, initial=True, peepholes=True)
    add("gru_batch_6_bidirectional_lengths", "GRU", 3,
        {"direction": "bidirectional"}, directions=2, batch=6, lengths=True,
        outputs=2)
    add("gru_batch_6_linear_before_reset", "GRU", 3,
        {"linear_before_reset": 1}, batch=6, initial=True, outputs=2)
    add("rnn_tanh_bidirectional_clip", "RNN", 1,
        {"direction": "bidirectional", "clip": 0.8}, directions=2, outputs=2)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--steps", type=int, default=600)
    args = parser.parse_args()
    write_all(args.out_dir, cases(args.steps))


if __name__ == "__main__":
    main()
