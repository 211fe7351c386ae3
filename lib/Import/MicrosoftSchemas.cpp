//===- MicrosoftSchemas.cpp - com.microsoft quantized op schemas ----------===//
//
// onnxruntime's quantizer writes the quantized forms of Add, Mul, Gemm,
// GlobalAveragePool, LeakyRelu and Sigmoid as ops of its own domain,
// com.microsoft, which the ONNX library does not know: the checker would
// skip them and shape inference would stop at them, leaving every tensor
// after the first one untyped. Their schemas (inputs, attributes, type and
// shape inference, as onnxruntime's contrib op definitions give them) are
// registered here so that models using them import like any other.
//
//===----------------------------------------------------------------------===//

#include "MicrosoftSchemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>

namespace heterps::import {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

constexpr const char *kDomain = "com.microsoft";
const std::vector<std::string> kQuantizedTypes = {"tensor(uint8)",
                                                  "tensor(int8)"};

/// Quantized input `name` with its scale and zero point, from `index`.
OpSchema &quantizedInput(OpSchema &schema, int index, const char *name,
                         bool optionalZeroPoint = true) {
  std::string base(name);
  return schema.Input(index, base, "", "T")
      .Input(index + 1, base + "_scale", "", "tensor(float)")
      .Input(index + 2, base + "_zero_point", "", "T",
             optionalZeroPoint ? OpSchema::Optional : OpSchema::Single);
}

OpSchema base(const char *name) {
  OpSchema schema;
  schema.SetName(name).SetDomain(kDomain).SinceVersion(1);
  return schema;
}

/// Y = quantize(f(dequantize(A), dequantize(B))) with numpy broadcasting.
OpSchema binary(const char *name) {
  OpSchema schema = base(name);
  quantizedInput(schema, 0, "A");
  quantizedInput(schema, 3, "B");
  schema.Input(6, "C_scale", "", "tensor(float)")
      .Input(7, "C_zero_point", "", "T", OpSchema::Optional)
      .Output(0, "C", "", "T")
      .TypeConstraint("T", kQuantizedTypes, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 3))
          onnx::bidirectionalBroadcastShapeInference(
              ctx.getInputType(0)->tensor_type().shape(),
              ctx.getInputType(3)->tensor_type().shape(),
              *onnx::getOutputShape(ctx, 0));
      });
  return schema;
}

/// Y = quantize(f(dequantize(X))), elementwise.
OpSchema unary(const char *name, bool alpha = false) {
  OpSchema schema = base(name);
  quantizedInput(schema, 0, "X");
  if (alpha)
    schema.Attr("alpha", "", AttributeProto::FLOAT, 0.01f);
  schema.Input(3, "Y_scale", "", "tensor(float)")
      .Input(4, "Y_zero_point", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kQuantizedTypes, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return schema;
}

OpSchema globalAveragePool() {
  OpSchema schema = base("QLinearGlobalAveragePool");
  quantizedInput(schema, 0, "X", /*optionalZeroPoint=*/false);
  schema.Input(3, "y_scale", "", "tensor(float)")
      .Input(4, "y_zero_point", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("channels_last", "", AttributeProto::INT, int64_t(0))
      .TypeConstraint("T", kQuantizedTypes, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (!onnx::hasInputShape(ctx, 0))
          return;
        const auto &input = onnx::getInputShape(ctx, 0);
        if (input.dim_size() < 2)
          return;
        bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
        int channel = last ? input.dim_size() - 1 : 1;
        auto *output = onnx::getOutputShape(ctx, 0);
        for (int d = 0; d < input.dim_size(); ++d) {
          auto *dim = output->add_dim();
          if (d == 0 || d == channel)
            *dim = input.dim(d);
          else
            dim->set_dim_value(1);
        }
      });
  return schema;
}

/// Y = alpha * A' B' + C, quantized (y_scale given) or f32.
OpSchema gemm() {
  OpSchema schema = base("QGemm");
  schema.Input(0, "A", "", "TA")
      .Input(1, "a_scale", "", "tensor(float)")
      .Input(2, "a_zero_point", "", "TA", OpSchema::Optional)
      .Input(3, "B", "", "TB")
      .Input(4, "b_scale", "", "tensor(float)")
      .Input(5, "b_zero_point", "", "TB", OpSchema::Optional)
      .Input(6, "C", "", "TC", OpSchema::Optional)
      .Input(7, "y_scale", "", "tensor(float)", OpSchema::Optional)
      .Input(8, "y_zero_point", "", "TYZ", OpSchema::Optional)
      .Output(0, "Y", "", "TY")
      .Attr("transA", "", AttributeProto::INT, int64_t(0))
      .Attr("transB", "", AttributeProto::INT, int64_t(0))
      .Attr("alpha", "", AttributeProto::FLOAT, 1.0f)
      .TypeConstraint("TA", kQuantizedTypes, "")
      .TypeConstraint("TB", kQuantizedTypes, "")
      .TypeConstraint("TC", {"tensor(int32)"}, "")
      .TypeConstraint("TYZ", kQuantizedTypes, "")
      .TypeConstraint("TY", {"tensor(float)", "tensor(uint8)", "tensor(int8)"},
                      "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        if (ctx.getNumInputs() > 8 && ctx.getInputType(8))
          onnx::propagateElemTypeFromInputToOutput(ctx, 8, 0);
        else
          onnx::updateOutputElemType(ctx, 0, onnx::TensorProto_DataType_FLOAT);
        if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 3))
          return;
        const auto &a = onnx::getInputShape(ctx, 0);
        const auto &b = onnx::getInputShape(ctx, 3);
        if (a.dim_size() != 2 || b.dim_size() != 2)
          return;
        bool transA = onnx::getAttribute(ctx, "transA", 0) != 0;
        bool transB = onnx::getAttribute(ctx, "transB", 0) != 0;
        auto *output = onnx::getOutputShape(ctx, 0);
        *output->add_dim() = a.dim(transA ? 1 : 0);
        *output->add_dim() = b.dim(transB ? 0 : 1);
      });
  return schema;
}

} // namespace

void registerMicrosoftSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(
        kDomain, 1, 1);
    for (OpSchema schema :
         {binary("QLinearAdd"), binary("QLinearMul"),
          unary("QLinearLeakyRelu", /*alpha=*/true), unary("QLinearSigmoid"),
          globalAveragePool(), gemm()})
      onnx::RegisterSchema(std::move(schema));
  });
}

} // namespace heterps::import
