//===- NewerOpsetSchemas.h - ONNX opsets 18 to 25 schemas ------*- C++ -*-===//
//
// Private to the ONNX loader.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_IMPORT_NEWEROPSETSCHEMAS_H
#define HETERPS_LIB_IMPORT_NEWEROPSETSCHEMAS_H

#include <onnx/defs/schema.h>

#include <vector>

namespace heterps::import {

/// Extends the ONNX library (once per process) to default-domain opset 25:
/// registers the op schemas that opsets 18 to 25 added or changed (but for
/// the changes the source file lists), so that the checker and shape
/// inference read such a model by its own rules.
void registerNewerOpsetSchemas();

/// The ops opsets 23 to 25 added (Attention, RMSNormalization,
/// RotaryEmbedding, Swish, TensorScatter); defined in TransformerSchemas.cpp.
std::vector<onnx::OpSchema> opset23To25NewSchemas();

} // namespace heterps::import

#endif // HETERPS_LIB_IMPORT_NEWEROPSETSCHEMAS_H
