//===- ONNXImporter.h - ONNX model -> hps dialect ---------------*- C++ -*-===//

#ifndef HETERPS_IMPORT_ONNXIMPORTER_H
#define HETERPS_IMPORT_ONNXIMPORTER_H

#include "heterps/Import/ONNXModelLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace heterps::import {

/// Imports the model in `contents` (read from `path`) into a module holding
/// one func.func @main whose body is generic hps.onnx_node ops, hps.weight
/// ops for initializers and hps.constant ops for constant tensors. Errors
/// are emitted on `context` at a location naming `path`; returns null then.
/// `bindings` give symbolic input dims static extents first.
mlir::OwningOpRef<mlir::ModuleOp>
importONNX(llvm::StringRef path, llvm::StringRef contents,
           mlir::MLIRContext *context, const InputBindings &bindings = {});

/// Parses "NAME=2x3x4" into `bindings.shapes`; false (and `error`) when
/// malformed.
bool parseInputShape(llvm::StringRef text, InputBindings &bindings,
                     std::string &error);

/// Parses NAME=N (a --dim binding) into `bindings.dims`; false with `error`
/// set when malformed.
bool parseDimBinding(llvm::StringRef text, InputBindings &bindings,
                     std::string &error);

/// Registers `--import-onnx` with mlir-translate's registry.
void registerONNXImportTranslation();

} // namespace heterps::import

#endif // HETERPS_IMPORT_ONNXIMPORTER_H
