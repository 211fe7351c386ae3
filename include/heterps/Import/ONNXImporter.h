//===- ONNXImporter.h - ONNX model -> hps dialect ---------------*- C++ -*-===//

#ifndef HETERPS_IMPORT_ONNXIMPORTER_H
#define HETERPS_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace heterps::import {

/// Imports the model in `contents` (read from `path`) into a module holding
/// one func.func @main whose body is generic hps.onnx_node ops, hps.weight
/// ops for initializers and hps.constant ops for constant tensors. Errors
/// are emitted on `context` at a location naming `path`; returns null then.
mlir::OwningOpRef<mlir::ModuleOp> importONNX(llvm::StringRef path,
                                             llvm::StringRef contents,
                                             mlir::MLIRContext *context);

/// Registers `--import-onnx` with mlir-translate's registry.
void registerONNXImportTranslation();

} // namespace heterps::import

#endif // HETERPS_IMPORT_ONNXIMPORTER_H
