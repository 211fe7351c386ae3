//===- Quantize.h - Helpers shared by the quantization patterns -*- C++ -*-===//
//
// Quantization.cpp (QuantizeLinear and friends) and QuantizedLinear.cpp (the
// integer and QLinear products) round and saturate to 8-bit types alike.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_QUANTIZE_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_QUANTIZE_H

#include "Support.h"

namespace heterps::hps {

/// The saturation range of an 8-bit quantized type (u8 or i8), or
/// std::nullopt for any other element type.
std::optional<std::pair<double, double>> quantizedRange(mlir::Type element);

/// False for an omitted optional ONNX input.
bool isPresent(mlir::Value value);

/// `value` converted to `element` (hps.cast) and reshaped to `shape`
/// (hps.reshape), each only where it differs: how scales and zero points
/// are laid out to broadcast against the tensors they belong to.
mlir::Value convertTo(ONNXNode node, mlir::PatternRewriter &rewriter,
                      mlir::Value value, mlir::Type element,
                      llvm::ArrayRef<int64_t> shape);

/// saturate(round(scaled) + zeroPoint) as `result` (u8 or i8): `scaled`
/// and `zeroPoint` (optional) are f32 and broadcast to the result's shape;
/// rounding is half to even, as ONNX and onnxruntime round.
mlir::Value roundAndSaturate(ONNXNode node, mlir::PatternRewriter &rewriter,
                             mlir::Value scaled, mlir::Value zeroPoint,
                             mlir::RankedTensorType result);

/// saturate(round(x / scale) + zeroPoint) as `result` (u8 or i8): x, scale
/// and zeroPoint (optional) are f32 and broadcast (QuantizeLinear's ops).
mlir::Value quantize(ONNXNode node, mlir::PatternRewriter &rewriter,
                     mlir::Value x, mlir::Value scale, mlir::Value zeroPoint,
                     mlir::RankedTensorType result);

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_QUANTIZE_H
