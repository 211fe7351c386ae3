//===- ONNXModelLoader.h - Read, validate and shape-infer ONNX --*- C++ -*-===//
//
// Everything that touches ONNX's own C++ library (which reports errors by
// throwing) lives behind this interface, in a translation unit compiled with
// exceptions; the MLIR side is built without them.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_IMPORT_ONNXMODELLOADER_H
#define HETERPS_IMPORT_ONNXMODELLOADER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class NodeProto;
} // namespace onnx

namespace heterps::import {

/// A model read and checked, or the one error that stopped it.
/// A node ONNX's strict shape inference rejects: the import takes such
/// models (runtimes accept what exporters write), and says why where the
/// node then fails to legalize.
struct StrictInferenceError {
  std::string opType; // empty when every node passes
  std::string node;   // its name; empty for an unnamed node
  std::string message;
};

struct LoadedModel {
  std::unique_ptr<onnx::ModelProto> model;
  /// The first node strict shape inference rejects, if any.
  StrictInferenceError strictInference;
  /// Empty on success; otherwise names the node or tensor at fault.
  std::string error;
  /// Inputs and outputs whose leading dim is the batch bound by
  /// InputBindings::batch (a runtime splits larger inputs along it).
  std::vector<std::string> batchedInputs, batchedOutputs;
};

/// Reads a model from `contents` (binary protobuf or the ONNX text syntax,
/// told apart by `path`'s extension and the bytes), inlines external-data
/// weights stored beside `path`, checks that every node input is defined,
/// sorts the nodes topologically (reporting a cycle), runs the ONNX checker
/// and ONNX shape inference.
/// Static extents for the model's symbolic input dims, applied before ONNX
/// shape inference so that every tensor of the graph gets a static shape.
struct InputBindings {
  /// Binds a symbolic or unknown leading dim of every graph input (0: none).
  int64_t batch = 0;
  /// Whole shapes of named graph inputs; they must agree with the static
  /// dims the model declares.
  std::map<std::string, std::vector<int64_t>> shapes;
  /// Also treat a static leading 1 of the inputs as the batch, bound to
  /// `batch` (a model exported with a fixed batch of 1).
  bool staticBatch = false;
  /// Extents of symbolic dims by their ONNX name (dim_param), wherever they
  /// appear on the inputs, as onnxruntime's free-dimension overrides.
  std::map<std::string, int64_t> dims;
  /// Fail at once, naming each input dim still symbolic after binding and
  /// how to bind it (heterps compile: the stages need static shapes).
  bool requireStatic = false;
  bool empty() const {
    return batch == 0 && shapes.empty() && !staticBatch && dims.empty();
  }
};

LoadedModel loadONNXModel(llvm::StringRef path, llvm::StringRef contents,
                          const InputBindings &bindings = {});

/// The files whose bytes the model keeps outside itself (its initializers'
/// external data), resolved as loadONNXModel resolves them; none for a
/// model that does not parse (loadONNXModel reports it). What a compile
/// reads besides the model, for caches keyed by contents.
std::vector<std::string> externalDataFiles(llvm::StringRef path,
                                           llvm::StringRef contents);

/// How diagnostics name a node: its name, or its index and first output.
std::string describeONNXNode(const onnx::NodeProto &node, int index);

} // namespace heterps::import

#endif // HETERPS_IMPORT_ONNXMODELLOADER_H
