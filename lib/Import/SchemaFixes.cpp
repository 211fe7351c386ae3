//===- SchemaFixes.cpp - Corrections to ONNX 1.12's op schemas ------------===//
//
// ONNX 1.12's pooling shape inference with ceil_mode keeps a last window
// that starts in the end padding, where onnxruntime, PyTorch (whose
// exports declare that shape) and later ONNX drop it: such a model's
// declared output contradicted the inferred one and its import failed.
// The rule below is hps's (HPSShapes.cpp, windowCount).
//
// ONNX 1.12's STFT shape inference reads a missing onesided as 0 (the
// schema's default is 1) and then counts frames from the one-sided bin
// count instead of the frame length. For any one-sided STFT it infers a
// shape that contradicts the spec, onnxruntime and the model's own declared
// output, and shape inference fails (fixed upstream in onnx PR 7731). The
// rule below is the spec's.
//
//===----------------------------------------------------------------------===//

#include "SchemaFixes.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <mutex>
#include <optional>

namespace heterps::import {
namespace {

using onnx::InferenceContext;

/// The value of a scalar (or one-element) integer input known at inference
/// time, or std::nullopt.
std::optional<int64_t> scalarInput(InferenceContext &ctx, size_t index) {
  if (ctx.getNumInputs() <= index)
    return std::nullopt;
  const onnx::TensorProto *tensor = ctx.getInputData(index);
  if (!tensor)
    return std::nullopt;
  if (tensor->data_type() == onnx::TensorProto::INT64) {
    std::vector<int64_t> values = onnx::ParseData<int64_t>(tensor);
    if (values.size() == 1)
      return values[0];
  } else if (tensor->data_type() == onnx::TensorProto::INT32) {
    std::vector<int32_t> values = onnx::ParseData<int32_t>(tensor);
    if (values.size() == 1)
      return values[0];
  }
  return std::nullopt;
}

/// STFT (17): [batch, frames, bins, 2] with frames = (signal_length -
/// frame_length) / frame_step + 1 and bins = frame_length / 2 + 1 when
/// one-sided (the default), frame_length otherwise. The frame length is
/// the window's, else the frame_length input's; unknown extents stay
/// unknown.
void inferSTFT(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TensorShapeProto &signal = onnx::getInputShape(ctx, 0);
  if (signal.dim_size() != 3)
    fail_shape_inference("STFT's signal must have rank 3");
  std::optional<int64_t> frameLength = scalarInput(ctx, 3);
  if (ctx.getNumInputs() > 2 && ctx.getInputType(2) &&
      onnx::hasInputShape(ctx, 2)) {
    const onnx::TensorShapeProto &window = onnx::getInputShape(ctx, 2);
    if (window.dim_size() != 1)
      fail_shape_inference("STFT's window must have rank 1");
    if (window.dim(0).has_dim_value())
      frameLength = window.dim(0).dim_value();
  }
  std::optional<int64_t> step = scalarInput(ctx, 1);
  const bool onesided = onnx::getAttribute(ctx, "onesided", 1) != 0;

  onnx::TensorShapeProto result;
  *result.add_dim() = signal.dim(0);
  onnx::TensorShapeProto::Dimension *frames = result.add_dim();
  onnx::TensorShapeProto::Dimension *bins = result.add_dim();
  result.add_dim()->set_dim_value(2);
  if (frameLength && *frameLength > 0) {
    bins->set_dim_value(onesided ? *frameLength / 2 + 1 : *frameLength);
    if (step && *step > 0 && signal.dim(1).has_dim_value() &&
        signal.dim(1).dim_value() >= *frameLength)
      frames->set_dim_value((signal.dim(1).dim_value() - *frameLength) / *step +
                            1);
  }
  onnx::updateOutputShape(ctx, 0, result);
}

/// After ONNX's own pooling inference: with ceil_mode and explicit pads
/// (or VALID, none), drops from each spatial extent a last window that
/// would start in the end padding or past the input.
void dropWindowsStartingInPadding(InferenceContext &ctx) {
  const std::string autoPad = onnx::getAttribute(ctx, "auto_pad", "NOTSET");
  if (onnx::getAttribute(ctx, "ceil_mode", 0) == 0 ||
      (autoPad != "NOTSET" && autoPad != "VALID") ||
      !onnx::hasInputShape(ctx, 0) || ctx.getNumOutputs() == 0)
    return;
  onnx::TypeProto *output = ctx.getOutputType(0);
  if (!output || !output->has_tensor_type() ||
      !output->tensor_type().has_shape())
    return;
  const onnx::TensorShapeProto &input = onnx::getInputShape(ctx, 0);
  onnx::TensorShapeProto *shape =
      output->mutable_tensor_type()->mutable_shape();
  const onnx::AttributeProto *stridesAttr = ctx.getAttribute("strides");
  const onnx::AttributeProto *padsAttr = ctx.getAttribute("pads");
  const int spatial = input.dim_size() - 2;
  if (spatial < 1 || shape->dim_size() != input.dim_size())
    return;
  for (int i = 0; i < spatial; ++i) {
    const int64_t stride = stridesAttr && stridesAttr->ints_size() == spatial
                               ? stridesAttr->ints(i)
                               : 1;
    const int64_t padBegin =
        autoPad == "NOTSET" && padsAttr && padsAttr->ints_size() == 2 * spatial
            ? padsAttr->ints(i)
            : 0;
    const onnx::TensorShapeProto::Dimension &in = input.dim(i + 2);
    onnx::TensorShapeProto::Dimension *out = shape->mutable_dim(i + 2);
    if (stride > 0 && in.has_dim_value() && out->has_dim_value() &&
        out->dim_value() > 1 &&
        (out->dim_value() - 1) * stride >= in.dim_value() + padBegin)
      out->set_dim_value(out->dim_value() - 1);
  }
}

/// Runs `schema`'s inference, then dropWindowsStartingInPadding.
void fixPoolingInference(const onnx::OpSchema *schema) {
  onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
  const_cast<onnx::OpSchema *>(schema)->TypeAndShapeInferenceFunction(
      [original](InferenceContext &ctx) {
        if (original)
          original(ctx);
        dropWindowsStartingInPadding(ctx);
      });
}

} // namespace

void fixONNXSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Registered schemas live for the process; the registry only hands out
    // const pointers, but the objects themselves are not const.
    if (const onnx::OpSchema *stft =
            onnx::OpSchemaRegistry::Schema("STFT", 17, ""))
      const_cast<onnx::OpSchema *>(stft)->TypeAndShapeInferenceFunction(
          inferSTFT);
    // Every registered version with ceil_mode (from 10).
    for (const char *name : {"MaxPool", "AveragePool", "LpPool"}) {
      const onnx::OpSchema *previous = nullptr;
      for (int version = 10; version <= 25; ++version) {
        const onnx::OpSchema *schema =
            onnx::OpSchemaRegistry::Schema(name, version, "");
        if (schema && schema != previous && schema->since_version() >= 10)
          fixPoolingInference(schema);
        previous = schema ? schema : previous;
      }
    }
  });
}

} // namespace heterps::import
