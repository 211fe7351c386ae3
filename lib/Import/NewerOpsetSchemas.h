//===- NewerOpsetSchemas.h - ONNX opsets 18 to 20 schemas ------*- C++ -*-===//
//
// Private to the ONNX loader.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_IMPORT_NEWEROPSETSCHEMAS_H
#define HETERPS_LIB_IMPORT_NEWEROPSETSCHEMAS_H

namespace heterps::import {

/// Extends the ONNX library (once per process) to default-domain opset 20:
/// registers the op schemas that opsets 18 to 20 added or changed (but for
/// the changes the source file lists), so that the checker and shape
/// inference read such a model by its own rules.
void registerNewerOpsetSchemas();

} // namespace heterps::import

#endif // HETERPS_LIB_IMPORT_NEWEROPSETSCHEMAS_H
