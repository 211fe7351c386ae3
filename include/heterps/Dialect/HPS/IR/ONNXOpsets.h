//===- ONNXOpsets.h - Default-domain ONNX opsets HeterPS reads --*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_ONNXOPSETS_H
#define HETERPS_DIALECT_HPS_IR_ONNXOPSETS_H

#include <cstdint>

namespace heterps::hps {
/// Oldest default-domain opset accepted: opset 7 introduced numpy-style
/// broadcasting, which every hps op assumes.
constexpr int64_t kMinONNXOpset = 7;
/// Newest: the last opset ONNX 1.12 (the schemas used for shape inference)
/// defines.
constexpr int64_t kMaxONNXOpset = 17;
} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_IR_ONNXOPSETS_H
