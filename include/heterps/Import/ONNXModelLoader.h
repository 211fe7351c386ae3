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

#include <memory>
#include <string>

namespace onnx {
class ModelProto;
class NodeProto;
} // namespace onnx

namespace heterps::import {

/// A model read and checked, or the one error that stopped it.
struct LoadedModel {
  std::unique_ptr<onnx::ModelProto> model;
  /// Empty on success; otherwise names the node or tensor at fault.
  std::string error;
};

/// Reads a model from `contents` (binary protobuf or the ONNX text syntax,
/// told apart by `path`'s extension and the bytes), inlines external-data
/// weights stored beside `path`, checks that every node input is defined,
/// sorts the nodes topologically (reporting a cycle), runs the ONNX checker
/// and ONNX shape inference.
LoadedModel loadONNXModel(llvm::StringRef path, llvm::StringRef contents);

/// How diagnostics name a node: its name, or its index and first output.
std::string describeONNXNode(const onnx::NodeProto &node, int index);

} // namespace heterps::import

#endif // HETERPS_IMPORT_ONNXMODELLOADER_H
