#!/usr/bin/env python3
"""Writes the small binary ONNX models the importer tests read.

Usage: make_models.py KIND OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, path, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, path)


def named_mlp(out):
    """Named nodes, a large weight (a resource blob), a small bias."""
    w = numpy_helper.from_array(np.arange(96, dtype=np.float32).reshape(8, 12), "fc.weight")
    b = numpy_helper.from_array(np.ones(12, dtype=np.float32), "fc.bias")
    nodes = [
        helper.make_node("MatMul", ["x", "fc.weight"], ["h"], name="fc/MatMul"),
        helper.make_node("Add", ["h", "fc.bias"], ["y"], name="fc/Add"),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 12])], [w, b])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "named_mlp.onnx"))


def external_data(out):
    """Weights stored in model.onnx.data beside the model."""
    w = np.arange(200, dtype=np.float32).reshape(20, 10)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save_model(model, os.path.join(out, "external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="external.onnx.data",
                    size_threshold=0)


def external_bad_length(out):
    """external_data's model with a length that is not a byte count."""
    external_data(out)
    model = onnx.load(os.path.join(out, "external.onnx"), load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "length":
            entry.value = "18446744073709551615"
    onnx.save(model, os.path.join(out, "bad_length.onnx"))


def zero_stride(out):
    """A convolution with a stride of 0 (ONNX's shape inference divides by it)."""
    w = numpy_helper.from_array(np.ones((1, 1, 3, 3), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[0, 1])], "stride",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "zero_stride.onnx"), check=False)


def nested_zero_stride(out):
    """Stride 0 inside an If branch and inside a model-local function."""
    f = TensorProto.FLOAT
    w = numpy_helper.from_array(np.ones((3, 2, 3, 3), dtype=np.float32), "w")
    branch = lambda name, strides: helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], [name], strides=strides)], name, [],
        [helper.make_tensor_value_info(name, f, None)])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=branch("t", [0, 0]),
                          else_branch=branch("e", [1, 1]))], "g",
        [helper.make_tensor_value_info("x", f, [1, 2, 4, 4]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", f, None)], [w])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "stride_in_if.onnx"), check=False)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("my", 1)]
    pool = helper.make_function("my", "Pool", ["a"], ["b"], [
        helper.make_node("MaxPool", ["a"], ["b"], kernel_shape=[2, 2], strides=[0, 2])],
        opsets)
    graph = helper.make_graph(
        [helper.make_node("Pool", ["x"], ["y"], domain="my")], "g",
        [helper.make_tensor_value_info("x", f, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", f, None)])
    save(helper.make_model(graph, opset_imports=opsets, functions=[pool]),
         os.path.join(out, "stride_in_function.onnx"), check=False)


def recursive_functions(out):
    """A function calling itself, and two calling each other."""
    f = TensorProto.FLOAT
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("my", 1)]
    call = lambda name: helper.make_node(name, ["a"], ["b"], domain="my")
    graph = lambda name: helper.make_graph(
        [helper.make_node(name, ["x"], ["y"], domain="my")], "g",
        [helper.make_tensor_value_info("x", f, [2, 4])],
        [helper.make_tensor_value_info("y", f, [2, 4])])
    rec = helper.make_function("my", "Rec", ["a"], ["b"], [call("Rec")], opsets)
    save(helper.make_model(graph("Rec"), opset_imports=opsets, functions=[rec]),
         os.path.join(out, "recursive.onnx"), check=False)
    ping = helper.make_function("my", "Ping", ["a"], ["b"], [call("Pong")], opsets)
    pong = helper.make_function("my", "Pong", ["a"], ["b"], [call("Ping")], opsets)
    save(helper.make_model(graph("Ping"), opset_imports=opsets, functions=[ping, pong]),
         os.path.join(out, "mutual.onnx"), check=False)


def external_not_inside(out):
    """External data behind a link out of the model's directory, and in a FIFO."""
    for name, make in [("escape", lambda path: os.symlink("../secret.bin", path)),
                       ("fifo", os.mkfifo)]:
        directory = os.path.join(out, name)
        os.makedirs(directory, exist_ok=True)
        data = os.path.join(directory, "w.bin")
        if os.path.lexists(data):
            os.remove(data)
        make(data)
        w = TensorProto()
        w.name, w.data_type = "w", TensorProto.FLOAT
        w.dims.extend([4])
        w.data_location = TensorProto.EXTERNAL
        for key, value in [("location", "w.bin"), ("offset", "0"), ("length", "16")]:
            entry = w.external_data.add()
            entry.key, entry.value = key, value
        graph = helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"])], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
        save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
             os.path.join(directory, "model.onnx"), check=False)
    with open(os.path.join(out, "secret.bin"), "wb") as secret:
        secret.write(np.ones(4, dtype=np.float32).tobytes())


def huge_initializer(out):
    """An initializer of dims 2^32 x 2^32 and no data (the count wraps to 0)."""
    w = TensorProto()
    w.name, w.data_type = "w", TensorProto.FLOAT
    w.dims.extend([2**32, 2**32])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0),
         helper.make_node("Add", ["x", "s"], ["y"])], "huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "huge_initializer.onnx"), check=False)


def sparse_initializers(out):
    """Weights given as sparse initializers: flat indices, and coordinates."""
    for name, indices in [("sparse_flat", np.array([1, 3], dtype=np.int64)),
                          ("sparse_coords",
                           np.array([[0, 1], [1, 1]], dtype=np.int64))]:
        shape = [4] if name == "sparse_flat" else [2, 2]
        values = numpy_helper.from_array(np.array([5, 7], dtype=np.float32), "w")
        sparse = helper.make_sparse_tensor(
            values, numpy_helper.from_array(indices, ""), shape)
        graph = helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"])], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
        graph.sparse_initializer.append(sparse)
        save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
             os.path.join(out, name + ".onnx"))


def old_ir(out):
    """IR 3: initializers are also listed as graph inputs."""
    w = numpy_helper.from_array(np.full((4, 3), 0.5, dtype=np.float32), "w")
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "old", inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    model.ir_version = 3
    save(model, os.path.join(out, "old_ir.onnx"))


def subgraph(out):
    """An If node in binary form: its branches become regions."""
    branch = lambda name: helper.make_graph(
        [helper.make_node("Identity", ["x"], ["o_" + name])], name, [],
        [helper.make_tensor_value_info("o_" + name, TensorProto.FLOAT, [2])])
    node = helper.make_node("If", ["c"], ["y"], name="branchy",
                            then_branch=branch("t"), else_branch=branch("e"))
    graph = helper.make_graph(
        [node], "cf", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                       helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "subgraph.onnx"))


def sequence_io(out):
    """A sequence as a graph input, and one as a graph output."""
    seq = helper.make_tensor_sequence_value_info
    graph = helper.make_graph(
        [helper.make_node("SequenceAt", ["s", "zero"], ["y"])], "seq_in", [seq("s", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [helper.make_tensor(name="zero", data_type=TensorProto.INT64, dims=[], vals=[0])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "seq_input.onnx"))
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "x"], ["s"])], "seq_out",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [seq("s", TensorProto.FLOAT, [2])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "seq_output.onnx"))


def bad_dtype(out):
    """A graph input whose element type no ONNX version defines."""
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="id")], "bad",
        [helper.make_tensor_value_info("x", 77, [2])],
        [helper.make_tensor_value_info("y", 77, [2])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "bad_dtype.onnx"), check=False)


def truncated(out, source):
    with open(source, "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])


def short_weight(out):
    """An initializer with fewer values than its shape needs."""
    t = helper.make_tensor("w", TensorProto.FLOAT, [4, 3], [1.0] * 12)
    t.float_data[:] = [1.0] * 5
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "short",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])], [t])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "short_weight.onnx"), check=False)


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if kind == "truncated":
        truncated(out, sys.argv[3])
    else:
        globals()[kind](out)
