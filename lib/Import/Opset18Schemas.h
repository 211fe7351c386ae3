//===- Opset18Schemas.h - ONNX opset 18 op schemas --------------*- C++ -*-===//
//
// Private to the ONNX loader.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_IMPORT_OPSET18SCHEMAS_H
#define HETERPS_LIB_IMPORT_OPSET18SCHEMAS_H

namespace heterps::import {

/// Extends the ONNX library (once per process) to default-domain opset 18:
/// registers every op schema that opset 18 added or changed, so that the
/// checker and shape inference read an opset-18 model by its own rules.
void registerOpset18Schemas();

} // namespace heterps::import

#endif // HETERPS_LIB_IMPORT_OPSET18SCHEMAS_H
