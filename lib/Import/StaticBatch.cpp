//===- StaticBatch.cpp - Give a batch-1 model a batch dim -----------------===//
//
// Compiled with exceptions, like the loader: ONNX's tensor helpers throw.
//
//===----------------------------------------------------------------------===//

#include "StaticBatch.h"

#include <onnx/defs/tensor_proto_util.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace heterps::import {
namespace {

using Error = std::string;
using Shapes = std::map<std::string, std::vector<int64_t>>;

/// Static extents of every typed value (-1 for unknown dims).
Shapes shapesOf(const onnx::GraphProto &graph) {
  Shapes shapes;
  auto add = [&](const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return;
    std::vector<int64_t> &extents = shapes[info.name()];
    for (const auto &dim : info.type().tensor_type().shape().dim())
      extents.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  };
  for (const auto &info : graph.input())
    add(info);
  for (const auto &info : graph.value_info())
    add(info);
  for (const auto &info : graph.output())
    add(info);
  return shapes;
}

bool leadingOne(const Shapes &shapes, const std::string &name) {
  auto it = shapes.find(name);
  return it != shapes.end() && !it->second.empty() && it->second[0] == 1;
}

/// The int64 constant feeding `name` (an initializer or a Constant node's
/// value), or null.
const onnx::TensorProto *constantTensor(const onnx::GraphProto &graph,
                                        const std::string &name) {
  for (const auto &init : graph.initializer())
    if (init.name() == name)
      return &init;
  for (const auto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        node.output(0) == name)
      for (const auto &attr : node.attribute())
        if (attr.name() == "value" && attr.has_t())
          return &attr.t();
  return nullptr;
}

int64_t intAttribute(const onnx::NodeProto &node, const std::string &name,
                     int64_t fallback) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return attr.i();
  return fallback;
}

void setIntAttribute(onnx::NodeProto &node, const std::string &name,
                     int64_t value) {
  for (auto &attr : *node.mutable_attribute())
    if (attr.name() == name) {
      attr.set_i(value);
      return;
    }
  auto *attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

} // namespace

Error prepareStaticBatch(onnx::ModelProto &model, int64_t batch,
                         const std::function<Error(onnx::ModelProto &)> &infer,
                         LoadedModel &result, StaticBatchCarriers &carriers) {
  if (batch == 0)
    return "--static-batch needs --batch";
  if (batch < 0)
    return "--static-batch: --batch " + std::to_string(batch) +
           " must be at least 1";
  onnx::ModelProto probe = model;
  if (Error error = infer(probe); !error.empty())
    return error;
  Shapes shapes = shapesOf(probe.graph());
  onnx::GraphProto &graph = *model.mutable_graph();

  std::set<std::string> initializers, batched;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  for (const auto &input : graph.input())
    if (!initializers.count(input.name()) && leadingOne(shapes, input.name()))
      batched.insert(input.name());
  if (batched.empty())
    return {}; // nothing fixed at 1: symbolic batches bind as without

  // The values the batch flows into: at batch 1 they have a leading 1 and
  // depend on a batched value.
  for (const auto &node : graph.node()) {
    bool fed = false;
    for (const std::string &input : node.input())
      fed |= batched.count(input) > 0;
    if (fed)
      for (const std::string &output : node.output())
        if (leadingOne(shapes, output))
          batched.insert(output);
  }

  // The hard-coded batches that are exact to generalise.
  int serial = 0;
  for (auto &node : *graph.mutable_node()) {
    if (node.input_size() == 0 || !batched.count(node.input(0)))
      continue;
    if (node.op_type() == "Flatten" && intAttribute(node, "axis", 1) == 0) {
      setIntAttribute(node, "axis", 1); // the same [1, n] at batch 1
      continue;
    }
    if (node.op_type() != "Reshape" || node.input_size() < 2 ||
        intAttribute(node, "allowzero", 0) != 0)
      continue;
    const onnx::TensorProto *target = constantTensor(graph, node.input(1));
    if (!target || target->data_type() != onnx::TensorProto::INT64)
      continue;
    std::vector<int64_t> extents = onnx::ParseData<int64_t>(target);
    if (extents.empty() || extents[0] != 1)
      continue;
    // 0 copies the input's dim 0: 1 at batch 1, the batch otherwise.
    extents[0] = 0;
    onnx::TensorProto copy;
    copy.set_data_type(onnx::TensorProto::INT64);
    copy.add_dims(static_cast<int64_t>(extents.size()));
    for (int64_t extent : extents)
      copy.add_int64_data(extent);
    copy.set_name(node.input(1) + "__hps_static_batch_" +
                  std::to_string(serial++));
    *graph.add_initializer() = copy;
    if (model.ir_version() < 4) {
      // Before IR 4 every initializer is also a graph input.
      onnx::ValueInfoProto *input = graph.add_input();
      input->set_name(copy.name());
      auto *type = input->mutable_type()->mutable_tensor_type();
      type->set_elem_type(onnx::TensorProto::INT64);
      type->mutable_shape()->add_dim()->set_dim_value(extents.size());
    }
    node.set_input(1, copy.name());
  }

  for (auto &input : *graph.mutable_input())
    if (batched.count(input.name()) && !initializers.count(input.name())) {
      input.mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(0)
          ->set_dim_value(batch);
      result.batchedInputs.push_back(input.name());
    }
  for (auto &output : *graph.mutable_output())
    if (batched.count(output.name())) {
      output.mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(0)
          ->Clear(); // shape inference computes it
      result.batchedOutputs.push_back(output.name());
    }
  graph.clear_value_info();
  carriers.values.assign(batched.begin(), batched.end());
  return {};
}

Error verifyStaticBatch(const onnx::ModelProto &model, int64_t batch,
                        const StaticBatchCarriers &carriers) {
  Shapes shapes = shapesOf(model.graph());
  std::map<std::string, int> producer;
  for (int i = 0; i < model.graph().node_size(); ++i)
    for (const std::string &output : model.graph().node(i).output())
      producer[output] = i;
  for (const std::string &value : carriers.values) {
    auto it = shapes.find(value);
    if (it != shapes.end() && !it->second.empty() && it->second[0] == batch)
      continue;
    std::string where = "input '" + value + "'";
    if (auto node = producer.find(value); node != producer.end())
      where = describeONNXNode(model.graph().node(node->second), node->second);
    return "--static-batch: " + where +
           " does not follow the batch: it has a batch of 1 at batch 1 but "
           "dim 0 " +
           (it == shapes.end() || it->second.empty() || it->second[0] < 0
                ? std::string("unknown")
                : std::to_string(it->second[0])) +
           " at batch " + std::to_string(batch) +
           "; the graph hard-codes the batch there, so export the model with "
           "a symbolic batch dim";
  }
  return {};
}

} // namespace heterps::import
