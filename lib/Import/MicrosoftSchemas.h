//===- MicrosoftSchemas.h - com.microsoft quantized op schemas --*- C++ -*-===//
//
// Private to the ONNX loader.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_IMPORT_MICROSOFTSCHEMAS_H
#define HETERPS_LIB_IMPORT_MICROSOFTSCHEMAS_H

namespace heterps::import {

/// Registers with the ONNX library (once per process) the schemas of the
/// com.microsoft quantized ops that legalization supports, so that the
/// checker and shape inference treat them as ONNX ops.
void registerMicrosoftSchemas();

} // namespace heterps::import

#endif // HETERPS_LIB_IMPORT_MICROSOFTSCHEMAS_H
