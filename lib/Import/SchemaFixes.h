//===- SchemaFixes.h - Corrections to ONNX 1.12's op schemas ----*- C++ -*-===//
//
// Private to the ONNX loader.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_IMPORT_SCHEMAFIXES_H
#define HETERPS_LIB_IMPORT_SCHEMAFIXES_H

namespace heterps::import {

/// Replaces (once per process) the shape inference of ONNX 1.12 schemas
/// whose rules contradict their own specification and every runtime, so
/// that valid models using those ops import.
void fixONNXSchemas();

} // namespace heterps::import

#endif // HETERPS_LIB_IMPORT_SCHEMAFIXES_H
