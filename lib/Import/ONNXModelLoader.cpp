//===- ONNXModelLoader.cpp - Read, validate and shape-infer ONNX ----------===//
//
// Compiled with exceptions: ONNX's checker, parser and shape inference throw.
// Every exception is turned into one message here.
//
//===----------------------------------------------------------------------===//

#include "heterps/Import/ONNXModelLoader.h"
#include "MicrosoftSchemas.h"
#include "NewerOpsetSchemas.h"
#include "SchemaFixes.h"
#include "StaticBatch.h"
#include "heterps/Dialect/HPS/IR/ONNXOpsets.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>
#include <onnx/defs/parser.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>

using namespace llvm;

namespace heterps::import {
namespace {

using Error = std::string;

bool looksLikeText(StringRef path, StringRef contents) {
  if (path.ends_with(".onnxtext") || path.ends_with(".onnxtxt"))
    return true;
  StringRef head = contents.ltrim();
  return head.starts_with("<") || head.starts_with("ir_version");
}

Error parseModel(StringRef path, StringRef contents, onnx::ModelProto &model) {
  if (looksLikeText(path, contents)) {
    std::string text = contents.str();
    onnx::OnnxParser parser(text.c_str());
    auto status = parser.Parse(model);
    if (!status.IsOK())
      return "syntax error in ONNX text: " + status.ErrorMessage();
    return {};
  }
  google::protobuf::io::ArrayInputStream stream(contents.data(),
                                                contents.size());
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return "not a valid ONNX model (the protobuf is truncated or is not a "
           "ModelProto)";
  if (!model.has_graph())
    return "not a valid ONNX model (no graph)";
  return {};
}

/// The first node of `graph` (or of a graph in its attributes) whose
/// default-domain op has a different definition at `opset` than at
/// kMinONNXOpset, described as errors describe nodes; empty when none.
Error firstNodeChangedSince(const onnx::GraphProto &graph, int64_t opset) {
  const auto *registry = onnx::OpSchemaRegistry::Instance();
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &node = graph.node(index);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        if (Error found = firstNodeChangedSince(attr.g(), opset);
            !found.empty())
          return found;
      for (const onnx::GraphProto &sub : attr.graphs())
        if (Error found = firstNodeChangedSince(sub, opset); !found.empty())
          return found;
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    const onnx::OpSchema *old = registry->GetSchema(node.op_type(), opset, "");
    const onnx::OpSchema *oldest =
        registry->GetSchema(node.op_type(), hps::kMinONNXOpset, "");
    if (!old || !oldest || old->since_version() != oldest->since_version())
      return describeONNXNode(node, index);
  }
  return {};
}

/// Accepts default-domain opsets kMinONNXOpset to kMaxONNXOpset, and older
/// ones when every op the graph uses kept its definition up to
/// kMinONNXOpset (Softplus, Not, GlobalAveragePool, ... never changed);
/// such a model is then read as opset kMinONNXOpset, which means the same.
Error checkOpsets(onnx::ModelProto &model) {
  bool sawDefault = false;
  for (auto &opset : *model.mutable_opset_import()) {
    if (!opset.domain().empty() && opset.domain() != "ai.onnx")
      continue;
    sawDefault = true;
    std::string range = " (supported: " + std::to_string(hps::kMinONNXOpset) +
                        " to " + std::to_string(hps::kMaxONNXOpset) +
                        ", and older ones whose ops did not change until " +
                        std::to_string(hps::kMinONNXOpset) + ")";
    int64_t version = opset.version();
    if (version > hps::kMaxONNXOpset || version < 1)
      return "unsupported opset " + std::to_string(version) +
             " of the default ONNX domain" + range;
    if (version >= hps::kMinONNXOpset)
      continue;
    if (Error changed = firstNodeChangedSince(model.graph(), version);
        !changed.empty())
      return "unsupported opset " + std::to_string(version) +
             " of the default ONNX domain: " + changed +
             " is defined differently there than at opset " +
             std::to_string(hps::kMinONNXOpset) + range;
    opset.set_version(hps::kMinONNXOpset);
  }
  // A graph of other domains' ops only (ONNX's preview training
  // optimizers) needs no default opset.
  if (!sawDefault &&
      llvm::any_of(model.graph().node(), [](const onnx::NodeProto &node) {
        return node.domain().empty() || node.domain() == "ai.onnx";
      }))
    return "the model imports no opset of the default ONNX domain";
  return {};
}

/// Where an initializer kept in an external file has its bytes.
struct ExternalData {
  std::string file;
  int64_t offset = 0, length = -1; // -1: to the file's end
};

/// `tensor`'s external data resolved against the model's `directory`, or
/// an error naming the initializer.
Error externalDataOf(const onnx::TensorProto &tensor, StringRef directory,
                     ExternalData &out) {
  std::string what = "external data of initializer '" + tensor.name() + "'";
  std::string location;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t &value = entry.key() == "offset" ? out.offset : out.length;
      if (StringRef(entry.value()).getAsInteger(10, value) || value < 0)
        return what + ": its " + entry.key() + " '" + entry.value() +
               "' is not a byte count";
    }
  }
  if (location.empty())
    return what + " has no location";
  if (sys::path::is_absolute(location) || StringRef(location).contains(".."))
    return what +
           " must be a relative path inside the model's directory, "
           "not '" +
           location + "'";
  SmallString<256> file = directory;
  sys::path::append(file, location);
  out.file = std::string(file);
  // Resolved, a link must stay inside the directory too (as onnxruntime
  // requires), and the file must be a regular one: a FIFO or /dev/zero was
  // read for ever.
  SmallString<256> real, realDirectory;
  if (!sys::fs::real_path(out.file, real) &&
      !sys::fs::real_path(directory.empty() ? "." : directory, realDirectory)) {
    if (!StringRef(real).starts_with(realDirectory.str().str() + "/"))
      return what + " '" + location + "' resolves to '" + std::string(real) +
             "', outside the model's directory";
    sys::fs::file_status status;
    if (!sys::fs::status(real, status) &&
        status.type() != sys::fs::file_type::regular_file)
      return what + " '" + location + "' is not a regular file";
  }
  return {};
}

/// Moves weights kept in external files (model.onnx.data and the like) into
/// the tensors themselves.
Error inlineExternalData(StringRef path, onnx::GraphProto &graph) {
  SmallString<256> directory = sys::path::parent_path(path);
  for (onnx::TensorProto &tensor : *graph.mutable_initializer()) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    ExternalData data;
    if (Error error = externalDataOf(tensor, directory, data); !error.empty())
      return error;
    std::string what = "external data of initializer '" + tensor.name() + "'";
    auto buffer = MemoryBuffer::getFile(data.file, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
    if (!buffer)
      return what + ": cannot read '" + data.file +
             "': " + buffer.getError().message();
    int64_t size = (*buffer)->getBufferSize();
    int64_t offset = data.offset, length = data.length;
    if (length < 0)
      length = size - offset;
    if (offset > size || length > size - offset)
      return what + ": '" + data.file + "' holds " + std::to_string(size) +
             " bytes, fewer than offset " + std::to_string(offset) +
             " + length " + std::to_string(length);
    tensor.set_raw_data((*buffer)->getBufferStart() + offset, length);
    tensor.clear_external_data();
    tensor.set_data_location(onnx::TensorProto::DEFAULT);
  }
  return {};
}

/// Sparse initializers (values at flat or coordinate indices of a dense
/// shape) become dense ones, as onnxruntime reads them.
Error densifySparseInitializers(onnx::GraphProto &graph) {
  for (const onnx::SparseTensorProto &sparse : graph.sparse_initializer()) {
    const onnx::TensorProto &values = sparse.values();
    const std::string what = "sparse initializer '" + values.name() + "'";
    if (values.data_type() != onnx::TensorProto::FLOAT &&
        values.data_type() != onnx::TensorProto::INT64)
      return what + ": only float and int64 values are supported";
    int64_t count = 1;
    for (int64_t dim : sparse.dims())
      if (dim < 0 || __builtin_mul_overflow(count, dim, &count) ||
          count > (int64_t(1) << 31))
        return what + " has a dense shape too large to hold";
    const bool isFloat = values.data_type() == onnx::TensorProto::FLOAT;
    const size_t width = isFloat ? 4 : 8;
    const std::string &raw = values.raw_data();
    const int64_t given = !raw.empty() ? int64_t(raw.size() / width)
                                       : (isFloat ? values.float_data_size()
                                                  : values.int64_data_size());
    // Indices: [NNZ] flat positions, or [NNZ, rank] coordinates.
    const onnx::TensorProto &indices = sparse.indices();
    std::vector<int64_t> index(indices.int64_data().begin(),
                               indices.int64_data().end());
    if (!indices.raw_data().empty()) {
      index.resize(indices.raw_data().size() / 8);
      std::memcpy(index.data(), indices.raw_data().data(), index.size() * 8);
    }
    const int64_t rank = sparse.dims_size();
    const bool coordinates = indices.dims_size() == 2;
    if (given * (coordinates ? rank : 1) != int64_t(index.size()))
      return what + ": " + std::to_string(given) + " values but " +
             std::to_string(index.size()) + " indices";
    std::string dense(size_t(count) * width, '\0');
    for (int64_t v = 0; v < given; ++v) {
      int64_t flat = 0;
      if (coordinates) {
        for (int64_t d = 0; d < rank; ++d) {
          const int64_t at = index[v * rank + d];
          if (at < 0 || at >= sparse.dims(d))
            return what + ": index " + std::to_string(at) +
                   " is out of its dim " + std::to_string(d);
          flat = flat * sparse.dims(d) + at;
        }
      } else {
        flat = index[v];
      }
      if (flat < 0 || flat >= count)
        return what + ": index " + std::to_string(flat) +
               " is out of its shape";
      char *to = dense.data() + flat * width;
      if (!raw.empty())
        std::memcpy(to, raw.data() + v * width, width);
      else if (isFloat) {
        const float value = values.float_data(int(v));
        std::memcpy(to, &value, width);
      } else {
        const int64_t value = values.int64_data(int(v));
        std::memcpy(to, &value, width);
      }
    }
    onnx::TensorProto *tensor = graph.add_initializer();
    tensor->set_name(values.name());
    tensor->set_data_type(values.data_type());
    for (int64_t dim : sparse.dims())
      tensor->add_dims(dim);
    tensor->set_raw_data(std::move(dense));
  }
  graph.clear_sparse_initializer();
  return {};
}

/// Every node input must name a graph input, an initializer or an earlier
/// node output; nodes are put in topological order, and a cycle is an
/// error naming a node on it.
Error validateAndSortNodes(onnx::GraphProto &graph) {
  if (graph.output_size() == 0)
    return "the graph has no outputs: a run would compute nothing";
  for (const auto *values : {&graph.input(), &graph.output()})
    for (const onnx::ValueInfoProto &value : *values)
      if (value.type().has_tensor_type())
        for (int d = 0; d < value.type().tensor_type().shape().dim_size(); ++d)
          if (const auto &dim = value.type().tensor_type().shape().dim(d);
              dim.has_dim_value() && dim.dim_value() < 0)
            return "graph " +
                   std::string(values == &graph.input() ? "input" : "output") +
                   " '" + value.name() + "' declares dim " + std::to_string(d) +
                   " as " + std::to_string(dim.dim_value()) +
                   "; an extent is at least 0";
  StringSet<> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  DenseMap<StringRef, int> producer;
  int count = graph.node_size();
  for (int i = 0; i < count; ++i)
    for (const std::string &output : graph.node(i).output()) {
      if (output.empty())
        continue;
      if (!producer.try_emplace(output, i).second || defined.contains(output))
        return describeONNXNode(graph.node(i), i) + " writes tensor '" +
               output + "', which is already defined";
    }
  StringSet<> outputs;
  for (const auto &output : graph.output()) {
    if (!defined.contains(output.name()) && !producer.count(output.name()))
      return "graph output '" + output.name() + "' is never computed";
    if (!outputs.insert(output.name()).second)
      return "graph output '" + output.name() + "' is listed twice";
  }
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> consumers(count);
  for (int i = 0; i < count; ++i)
    for (const std::string &input : graph.node(i).input()) {
      if (input.empty() || defined.contains(input))
        continue;
      auto it = producer.find(input);
      if (it == producer.end())
        return describeONNXNode(graph.node(i), i) +
               " reads undefined tensor '" + input + "'";
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  std::deque<int> ready;
  for (int i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int node = ready.front();
    ready.pop_front();
    order.push_back(node);
    for (int consumer : consumers[node])
      if (--pending[consumer] == 0)
        ready.push_back(consumer);
  }
  if (static_cast<int>(order.size()) != count) {
    for (int i = 0; i < count; ++i)
      if (pending[i] > 0)
        return "the graph has a cycle through " +
               describeONNXNode(graph.node(i), i);
  }
  bool sorted = true;
  for (int i = 0; i < count; ++i)
    sorted &= order[i] == i;
  if (!sorted) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i : order)
      *nodes.Add() = graph.node(i);
    graph.mutable_node()->Swap(&nodes);
  }
  return {};
}

Error checkAndInferAtKnownIR(onnx::ModelProto &model);

/// The graph's inputs that are data: tensors, not initializers.
std::vector<onnx::ValueInfoProto *> dataInputs(onnx::GraphProto &graph) {
  std::set<std::string> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  std::vector<onnx::ValueInfoProto *> inputs;
  for (auto &input : *graph.mutable_input())
    if (!initializers.count(input.name()) && input.type().has_tensor_type())
      inputs.push_back(&input);
  return inputs;
}

/// Writes the bound extents into the graph inputs' types and drops the
/// intermediate value_info, whose symbolic dims shape inference recomputes.
Error bindInputShapes(onnx::GraphProto &graph, const InputBindings &bindings,
                      LoadedModel &result) {
  // Outputs with an open leading dim follow the batch.
  if (bindings.batch > 0)
    for (const auto &output : graph.output()) {
      const auto &type = output.type().tensor_type();
      if (!type.has_shape() ||
          (type.shape().dim_size() > 0 && !type.shape().dim(0).has_dim_value()))
        result.batchedOutputs.push_back(output.name());
    }
  std::set<std::string> seen;
  for (onnx::ValueInfoProto *data : dataInputs(graph)) {
    onnx::ValueInfoProto &input = *data;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    auto named = bindings.shapes.find(input.name());
    if (named != bindings.shapes.end()) {
      seen.insert(input.name());
      const std::vector<int64_t> &extents = named->second;
      if (shape->dim_size() != 0 &&
          shape->dim_size() != static_cast<int>(extents.size()))
        return "input shape for '" + input.name() + "' has rank " +
               std::to_string(extents.size()) +
               " but the model declares rank " +
               std::to_string(shape->dim_size());
      for (size_t i = 0; i < extents.size(); ++i) {
        if (extents[i] <= 0)
          return "input shape for '" + input.name() + "' has extent " +
                 std::to_string(extents[i]) + " at dim " + std::to_string(i);
        if (static_cast<int>(i) < shape->dim_size() &&
            shape->dim(i).has_dim_value() &&
            shape->dim(i).dim_value() != extents[i])
          return "input shape for '" + input.name() + "' sets dim " +
                 std::to_string(i) + " to " + std::to_string(extents[i]) +
                 " but the model fixes it to " +
                 std::to_string(shape->dim(i).dim_value());
      }
      shape->clear_dim();
      for (int64_t extent : extents)
        shape->add_dim()->set_dim_value(extent);
      continue;
    }
    if (bindings.batch > 0 && shape->dim_size() > 0 &&
        !shape->dim(0).has_dim_value()) {
      shape->mutable_dim(0)->set_dim_value(bindings.batch);
      result.batchedInputs.push_back(input.name());
    }
  }
  for (const auto &[name, extents] : bindings.shapes)
    if (!seen.count(name))
      return "input shape given for '" + name +
             "', which is not an input of the graph";
  graph.clear_value_info();
  // Symbolic output dims would survive inference: let it compute them.
  for (auto &output : *graph.mutable_output())
    if (output.type().has_tensor_type() &&
        output.type().tensor_type().has_shape())
      for (auto &dim : *output.mutable_type()
                            ->mutable_tensor_type()
                            ->mutable_shape()
                            ->mutable_dim())
        if (dim.has_dim_param())
          dim.clear_dim_param();
  return {};
}

/// Binds symbolic input dims by name (--dim NAME=N); a name no input has is
/// an error listing the names there are.
Error bindNamedDims(onnx::GraphProto &graph, const InputBindings &bindings) {
  std::set<std::string> used, names;
  for (onnx::ValueInfoProto *input : dataInputs(graph)) {
    if (bindings.shapes.count(input->name()))
      continue; // its whole shape is given
    auto *shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int index = 0; index < shape->dim_size(); ++index) {
      auto &dim = *shape->mutable_dim(index);
      if (!dim.has_dim_param())
        continue;
      names.insert(dim.dim_param());
      auto bound = bindings.dims.find(dim.dim_param());
      if (bound == bindings.dims.end())
        continue;
      // The batch binds every input's leading dim: two extents for one
      // dim would leave the batch and the shapes disagreeing.
      if (index == 0 && bindings.batch > 0 && bound->second != bindings.batch)
        return "--dim " + bound->first + "=" + std::to_string(bound->second) +
               " binds the leading dim of input '" + input->name() +
               "', which the batch binds to " + std::to_string(bindings.batch) +
               ": give one of them";
      used.insert(bound->first);
      dim.set_dim_value(bound->second);
    }
  }
  for (const auto &[name, extent] : bindings.dims)
    if (!used.count(name)) {
      std::string known;
      for (const std::string &n : names)
        known += (known.empty() ? "'" : ", '") + n + "'";
      return "--dim " + name + "=" + std::to_string(extent) +
             ": no input has a dim named '" + name + "' (" +
             (known.empty() ? std::string("no input dim has a name")
                            : "named dims: " + known) +
             ")";
    }
  return {};
}

/// --batch B > 1 binds a symbolic leading dim; where no input had one, an
/// input fixed at another leading extent would run that many samples while
/// the plan and the bundle count B (the batch was dropped without a word).
Error checkBatchBound(onnx::GraphProto &graph, int64_t batch) {
  for (onnx::ValueInfoProto *data : dataInputs(graph)) {
    const auto &shape = data->type().tensor_type().shape();
    if (shape.dim_size() == 0 || !shape.dim(0).has_dim_value() ||
        shape.dim(0).dim_value() == batch)
      continue;
    std::string extents;
    for (int i = 0; i < shape.dim_size(); ++i)
      extents +=
          (i ? "x" : "") + (shape.dim(i).has_dim_value()
                                ? std::to_string(shape.dim(i).dim_value())
                                : std::string("N"));
    return "--batch " + std::to_string(batch) +
           " binds a symbolic leading input dim, and the model has none: "
           "input '" +
           data->name() + "' is fixed at " + extents +
           "; compile with --static-batch to give a model exported for one "
           "sample a batch of " +
           std::to_string(batch) + ", or without --batch";
  }
  return {};
}

/// For a compile: every input dim must be static once bound. Names each
/// unbound one, with the flags that bind it.
Error checkInputsStatic(onnx::GraphProto &graph) {
  std::string unbound;
  std::vector<std::string> flags; // in order, each once
  auto suggest = [&](std::string flag) {
    if (std::find(flags.begin(), flags.end(), flag) == flags.end())
      flags.push_back(std::move(flag));
  };
  for (onnx::ValueInfoProto *data : dataInputs(graph)) {
    const onnx::ValueInfoProto &input = *data;
    const auto &shape = input.type().tensor_type().shape();
    std::string example;
    bool open = false;
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto &dim = shape.dim(i);
      example += (i ? "x" : "") + (dim.has_dim_value()
                                       ? std::to_string(dim.dim_value())
                                       : std::string("N"));
      if (dim.has_dim_value())
        continue;
      open = true;
      unbound += (unbound.empty() ? "" : ", ") + ("'" + input.name() + "'") +
                 " dim " + std::to_string(i) +
                 (dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                      : std::string(" (no name)"));
      if (i == 0)
        suggest("--batch N");
      if (dim.has_dim_param())
        suggest("--dim " + dim.dim_param() + "=N");
    }
    if (open)
      suggest("--input-shape " + input.name() + "=" + example);
  }
  if (unbound.empty())
    return {};
  std::string how;
  for (const std::string &flag : flags)
    how += (how.empty() ? " " : ", ") + flag;
  return "unbound symbolic input dims: " + unbound +
         "; the stages need static shapes: bind them with" + how;
}

Error checkAndInfer(onnx::ModelProto &model) {
  // Exporters now write IR 9 and 10, which ONNX 1.12's checker refuses
  // although they only add element types (float8, int4) that the importer
  // rejects by name anyway. Check such models as the newest IR 1.12 knows.
  int64_t irVersion = model.ir_version();
  if (irVersion > onnx::IR_VERSION)
    model.set_ir_version(onnx::IR_VERSION);
  // Before IR 4 every initializer had to be a graph input too. Tools that
  // rewrite old models (onnxruntime's quantizer keeps IR 3 and adds scales
  // and zero points as initializers only) break that rule and runtimes
  // accept the result: check such models as IR 4, which dropped the rule.
  if (irVersion < 4) {
    llvm::StringSet<> inputs;
    for (const auto &input : model.graph().input())
      inputs.insert(input.name());
    if (llvm::any_of(model.graph().initializer(), [&](const auto &init) {
          return !inputs.contains(init.name());
        }))
      model.set_ir_version(4);
  }
  Error error = checkAndInferAtKnownIR(model);
  model.set_ir_version(irVersion);
  return error;
}

/// The strides, dilations and kernel_shape of every node, subgraphs and
/// model-local functions included: ONNX's convolution and pooling shape
/// inference divides by them unchecked (a stride of 0 is SIGFPE).
Error checkWindowAttributes(const onnx::GraphProto &graph,
                            const std::string &where) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.name() == "strides" || attribute.name() == "dilations" ||
          attribute.name() == "kernel_shape")
        for (int64_t value : attribute.ints())
          if (value < 1)
            return describeONNXNode(node, i) + where + " is invalid: its '" +
                   attribute.name() + "' holds " + std::to_string(value) +
                   "; every one must be at least 1";
      const std::string inside =
          " in the '" + attribute.name() + "' of " + describeONNXNode(node, i);
      if (attribute.has_g())
        if (Error error = checkWindowAttributes(attribute.g(), inside + where);
            !error.empty())
          return error;
      for (const onnx::GraphProto &body : attribute.graphs())
        if (Error error = checkWindowAttributes(body, inside + where);
            !error.empty())
          return error;
    }
  }
  return {};
}

Error checkWindowAttributes(const onnx::ModelProto &model) {
  if (Error error = checkWindowAttributes(model.graph(), ""); !error.empty())
    return error;
  for (const onnx::FunctionProto &function : model.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = function.node();
    if (Error error = checkWindowAttributes(body, " of model-local function '" +
                                                      function.domain() + "." +
                                                      function.name() + "'");
        !error.empty())
      return error;
  }
  return {};
}

/// Model-local functions may not call themselves, directly or through
/// others: ONNX's function shape inference recurses without end.
Error checkFunctionCalls(const onnx::ModelProto &model) {
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *>
      functions;
  for (const onnx::FunctionProto &function : model.functions())
    functions[{function.domain(), function.name()}] = &function;
  // Depth-first, colouring functions on the path (1) and done (2).
  std::map<const onnx::FunctionProto *, int> state;
  std::vector<std::string> path;
  std::function<Error(const onnx::FunctionProto &)> visit =
      [&](const onnx::FunctionProto &function) -> Error {
    const std::string name = function.domain() + "." + function.name();
    int &mark = state[&function];
    if (mark == 2)
      return {};
    if (mark == 1) {
      std::string cycle;
      for (auto it = std::find(path.begin(), path.end(), name);
           it != path.end(); ++it)
        cycle += "'" + *it + "' calls ";
      return "model-local function '" + name + "' calls itself (" + cycle +
             "'" + name + "'); ONNX functions may not recurse";
    }
    mark = 1;
    path.push_back(name);
    for (const onnx::NodeProto &node : function.node()) {
      auto callee = functions.find({node.domain(), node.op_type()});
      if (callee != functions.end())
        if (Error error = visit(*callee->second); !error.empty())
          return error;
    }
    path.pop_back();
    state[&function] = 2;
    return {};
  };
  for (const onnx::FunctionProto &function : model.functions())
    if (Error error = visit(function); !error.empty())
      return error;
  return {};
}

/// Replaces every call of a model-local function (exporters such as
/// PyTorch's dynamo write a Swish or a layer as one) by the function's
/// body: its values renamed under the call's name, its inputs and outputs
/// bound to the call's, attributes that refer to the call's (ref_attr_name)
/// resolved (one the call leaves out is left out). Calls nested in bodies are
/// inlined in turn; recursion was refused before.
Error inlineLocalFunctions(onnx::ModelProto &model) {
  if (model.functions_size() == 0)
    return {};
  if (Error error = checkFunctionCalls(model); !error.empty())
    return error;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *>
      functions;
  for (const onnx::FunctionProto &function : model.functions())
    functions[{function.domain(), function.name()}] = &function;
  // The model's opsets must be the ones each body was written for; a
  // domain only a body imports is added.
  std::map<std::string, int64_t> opsets;
  for (const auto &opset : model.opset_import())
    opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
  for (const onnx::FunctionProto &function : model.functions())
    for (const auto &opset : function.opset_import()) {
      const std::string domain =
          opset.domain() == "ai.onnx" ? "" : opset.domain();
      auto [it, added] = opsets.try_emplace(domain, opset.version());
      if (added) {
        auto *imported = model.add_opset_import();
        imported->set_domain(domain);
        imported->set_version(opset.version());
      } else if (it->second != opset.version()) {
        return "model-local function '" + function.domain() + "." +
               function.name() + "' is written for opset " +
               std::to_string(opset.version()) + " of domain '" + domain +
               "', and the model imports opset " + std::to_string(it->second);
      }
    }

  onnx::GraphProto &graph = *model.mutable_graph();
  for (;;) {
    bool inlined = false;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto &call = graph.node(i);
      auto found = functions.find({call.domain(), call.op_type()});
      if (found == functions.end()) {
        *nodes.Add() = call;
        continue;
      }
      inlined = true;
      const onnx::FunctionProto &function = *found->second;
      const std::string prefix =
          (call.name().empty() ? call.op_type() + "_" + std::to_string(i)
                               : call.name()) +
          "/";
      std::map<std::string, std::string> names;
      for (int k = 0; k < function.input_size(); ++k)
        names[function.input(k)] = k < call.input_size() ? call.input(k) : "";
      for (int k = 0; k < function.output_size(); ++k)
        names[function.output(k)] =
            k < call.output_size() ? call.output(k) : "";
      auto renamed = [&](const std::string &name) {
        if (name.empty())
          return name;
        auto it = names.find(name);
        return it != names.end() ? it->second : prefix + name;
      };
      for (int b = 0; b < function.node_size(); ++b) {
        onnx::NodeProto node = function.node(b);
        node.set_name(prefix + (node.name().empty()
                                    ? node.op_type() + "_" + std::to_string(b)
                                    : node.name()));
        for (std::string &input : *node.mutable_input())
          input = renamed(input);
        for (std::string &output : *node.mutable_output())
          output = renamed(output);
        google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
        for (const onnx::AttributeProto &attribute : node.attribute()) {
          if (attribute.has_g() || attribute.graphs_size() > 0)
            return "model-local function '" + function.domain() + "." +
                   function.name() + "' holds a subgraph (in its node " +
                   describeONNXNode(function.node(b), b) +
                   "); HeterPS inlines functions without subgraphs";
          if (attribute.ref_attr_name().empty()) {
            *attributes.Add() = attribute;
            continue;
          }
          // The caller's value, else none (this ONNX has no defaults in
          // FunctionProto).
          const onnx::AttributeProto *value = nullptr;
          for (const onnx::AttributeProto &given : call.attribute())
            if (given.name() == attribute.ref_attr_name())
              value = &given;
          if (!value)
            continue;
          onnx::AttributeProto *bound = attributes.Add();
          *bound = *value;
          bound->set_name(attribute.name());
        }
        *node.mutable_attribute() = std::move(attributes);
        *nodes.Add() = std::move(node);
      }
    }
    *graph.mutable_node() = std::move(nodes);
    if (!inlined)
      break;
  }
  // Calls inside subgraphs (an If's branches) stay calls, which ONNX's
  // inference follows into the functions kept here.
  return {};
}

Error checkAndInferAtKnownIR(onnx::ModelProto &model) {
  registerNewerOpsetSchemas();
  // Check node by node first so that an error names the node at fault.
  onnx::checker::CheckerContext context;
  context.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const auto &opset : model.opset_import())
    opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] =
        static_cast<int>(opset.version());
  context.set_opset_imports(opsets);
  onnx::checker::LexicalScopeContext scope;
  for (const auto &input : model.graph().input())
    scope.add(input.name());
  for (const auto &init : model.graph().initializer())
    scope.add(init.name());
  for (int i = 0; i < model.graph().node_size(); ++i) {
    const onnx::NodeProto &node = model.graph().node(i);
    try {
      onnx::checker::check_node(node, context, scope);
    } catch (const std::exception &e) {
      return describeONNXNode(node, i) + " is invalid: " + e.what();
    }
    for (const std::string &output : node.output())
      scope.add(output);
  }
  if (Error error = checkWindowAttributes(model); !error.empty())
    return error;
  if (Error error = checkFunctionCalls(model); !error.empty())
    return error;
  // The checker's own words ("Field 'shape' of 'type' is required but
  // missing") name no value.
  for (const auto *values : {&model.graph().input(), &model.graph().output()})
    for (const onnx::ValueInfoProto &value : *values)
      if (value.type().has_tensor_type() &&
          !value.type().tensor_type().has_shape())
        return "graph " +
               std::string(values == &model.graph().input() ? "input"
                                                            : "output") +
               " '" + value.name() +
               "' has an element type but no shape; ONNX requires one "
               "(onnx.shape_inference.infer_shapes fills it in)";
  registerMicrosoftSchemas();
  fixONNXSchemas();
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return std::string("invalid model: ") + e.what();
  }
  try {
    // Not strict: exporters emit models that ONNX's per-node type checks
    // reject but runtimes accept (e.g. a float Equal under opset 10); an
    // output whose type stays unknown is reported by the importer.
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*strict_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return std::string("shape inference failed: ") + e.what();
  }
  return {};
}

} // namespace

/// What ONNX's strict shape inference says of the first node it rejects
/// (runs after the lenient pass, which typed the graph).
StrictInferenceError strictInferenceError(onnx::ModelProto &model) {
  StrictInferenceError found;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*strict_mode=*/1,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    // "[ShapeInferenceError] (op_type:MatMul, node name: m): [...] Why",
    // the node name left out for an unnamed node.
    StringRef text = StringRef(e.what()).split('\n').first;
    size_t at = text.find("(op_type:");
    if (at == StringRef::npos)
      return found;
    auto [where, why] = text.drop_front(at + 9).split("): ");
    auto [opType, name] = where.split(", node name: ");
    found.opType = opType.str();
    found.node = name.str();
    why = why.trim();
    while (why.starts_with("[") && why.contains("] "))
      why = why.split("] ").second;
    found.message = why.str();
  }
  return found;
}

std::string describeONNXNode(const onnx::NodeProto &node, int index) {
  // Unnamed nodes (common in hand-written and text models) are named by
  // their position and first output, which the user can find in the file.
  std::string name = !node.name().empty() ? "'" + node.name() + "'"
                                          : "#" + std::to_string(index);
  std::string text = "node " + name + " (" + node.op_type();
  if (node.name().empty() && node.output_size() > 0)
    text += " -> '" + node.output(0) + "'";
  return text + ")";
}

std::vector<std::string> externalDataFiles(StringRef path, StringRef contents) {
  auto model = std::make_unique<onnx::ModelProto>();
  std::vector<std::string> files;
  try {
    if (!parseModel(path, contents, *model).empty())
      return files;
  } catch (const std::exception &) {
    return files;
  }
  SmallString<256> directory = sys::path::parent_path(path);
  for (const onnx::TensorProto &tensor : model->graph().initializer()) {
    ExternalData data;
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL &&
        externalDataOf(tensor, directory, data).empty() &&
        !llvm::is_contained(files, data.file))
      files.push_back(data.file);
  }
  return files;
}

LoadedModel loadONNXModel(StringRef path, StringRef contents,
                          const InputBindings &bindings) {
  LoadedModel result;
  auto model = std::make_unique<onnx::ModelProto>();
  Error error;
  try {
    error = parseModel(path, contents, *model);
    if (error.empty() && model->ir_version() > hps::kMaxONNXIRVersion)
      error = "unsupported IR version " + std::to_string(model->ir_version()) +
              " (the newest supported is " +
              std::to_string(hps::kMaxONNXIRVersion) + ")";
    if (error.empty())
      error = checkOpsets(*model);
    if (error.empty())
      error = inlineExternalData(path, *model->mutable_graph());
    if (error.empty())
      error = densifySparseInitializers(*model->mutable_graph());
    if (error.empty())
      error = validateAndSortNodes(*model->mutable_graph());
    if (error.empty() && !bindings.dims.empty())
      error = bindNamedDims(*model->mutable_graph(), bindings);
    StaticBatchCarriers carriers;
    if (error.empty() && bindings.staticBatch) {
      if (!bindings.shapes.empty())
        error = "--static-batch binds the batch of every input; it does not "
                "combine with --input-shape";
      else
        error = prepareStaticBatch(*model, bindings.batch, checkAndInfer,
                                   result, carriers);
    }
    // Symbolic batches bind as usual (with --static-batch: where no input
    // had a static leading 1).
    if (error.empty() && carriers.values.empty() &&
        (bindings.batch > 0 || !bindings.shapes.empty() ||
         !bindings.dims.empty()))
      error = bindInputShapes(*model->mutable_graph(), bindings, result);
    if (error.empty() && bindings.batch > 1 && carriers.values.empty() &&
        result.batchedInputs.empty())
      error = checkBatchBound(*model->mutable_graph(), bindings.batch);
    if (error.empty() && bindings.requireStatic)
      error = checkInputsStatic(*model->mutable_graph());
    if (error.empty())
      error = inlineLocalFunctions(*model);
    if (error.empty())
      error = checkAndInfer(*model);
    if (error.empty() && bindings.staticBatch)
      error = verifyStaticBatch(*model, bindings.batch, carriers);
  } catch (const std::exception &e) {
    error = std::string("cannot read the model: ") + e.what();
  }
  if (!error.empty()) {
    result.error = std::move(error);
    return result;
  }
  result.strictInference = strictInferenceError(*model);
  result.model = std::move(model);
  return result;
}

} // namespace heterps::import
