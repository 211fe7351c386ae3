//===- ONNXOpsets.h - Default-domain ONNX opsets HeterPS reads --*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_ONNXOPSETS_H
#define HETERPS_DIALECT_HPS_IR_ONNXOPSETS_H

#include <cstdint>

namespace heterps::hps {
/// Oldest default-domain opset accepted: opset 6 dropped the legacy
/// consumed_inputs attributes; its ops differ from opset 7's only where 7
/// brought numpy broadcasting (binary ops, Gemm) or dropped is_test
/// (BatchNormalization, Dropout), and those have opset-6 patterns of their
/// own. Older exporters (PyTorch's first ONNX releases) wrote opset 6.
/// The importer reads a model of an older opset as this one when every op
/// it uses kept its definition until here.
constexpr int64_t kMinONNXOpset = 6;
/// Newest: ONNX 1.12 (the schemas used for checking and shape inference)
/// defines opsets up to 17; the loader registers what opsets 18 to 25 added
/// or changed (lib/Import/NewerOpsetSchemas.cpp, TransformerSchemas.cpp).
/// 20 is what torch.onnx's default exporter writes; from 23 it writes
/// Attention and RMSNormalization.
constexpr int64_t kMaxONNXOpset = 25;
/// Newest IR (file format) version read: 14, ONNX 1.23's, which is also the
/// newest onnxruntime 1.32 loads. A later IR may change what the file's
/// fields mean; such a model is refused rather than guessed at.
constexpr int64_t kMaxONNXIRVersion = 14;
} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_IR_ONNXOPSETS_H
