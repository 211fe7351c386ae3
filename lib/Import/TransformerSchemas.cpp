//===- TransformerSchemas.cpp - ONNX opsets 23 to 25 new op schemas -------===//
//
// The ops opsets 23 to 25 added, as ONNX 1.18 to 1.20 define them:
// Attention (23; nonpad_kv_seqlen in 24; sliding windows in 25),
// RMSNormalization and RotaryEmbedding (23), Swish and TensorScatter (24).
// torch.onnx writes Attention for scaled_dot_product_attention and
// RMSNormalization for nn.RMSNorm from opset 23 on. Element types are
// those the ops define; HeterPS' patterns then take the float ones.
//
//===----------------------------------------------------------------------===//

#include "NewerOpsetSchemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

namespace heterps::import {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

const std::vector<std::string> kFloatTypes = {
    "tensor(bfloat16)", "tensor(float16)", "tensor(float)", "tensor(double)"};

OpSchema schemaOf(const char *name, int version) {
  OpSchema schema;
  schema.SetName(name).SetDomain("").SinceVersion(version);
  return schema;
}

/// Input `index`'s shape when its rank is known, else null.
const TensorShapeProto *knownShape(InferenceContext &ctx, size_t index) {
  if (ctx.getNumInputs() <= index || !ctx.getInputType(index) ||
      !onnx::hasInputShape(ctx, index))
    return nullptr;
  return &onnx::getInputShape(ctx, index);
}

bool hasValue(const TensorShapeProto::Dimension &dim) {
  return dim.has_dim_value();
}

/// Attention's four results. Q, K, V are [B, heads, S, head size] or
/// [B, S, heads * head size] (then q_num_heads and kv_num_heads say how
/// many heads); past_key / past_value are [B, kv heads, past S, size].
void inferAttention(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  for (size_t output = 1; output < ctx.getNumOutputs() && output < 4; ++output)
    onnx::propagateElemTypeFromInputToOutput(ctx, output == 2 ? 2 : 0, output);
  const TensorShapeProto *q = knownShape(ctx, 0);
  const TensorShapeProto *k = knownShape(ctx, 1);
  const TensorShapeProto *v = knownShape(ctx, 2);
  if (!q || !k || !v)
    return;
  int rank = q->dim_size();
  if (rank != 3 && rank != 4)
    fail_shape_inference("Attention's Q must have rank 3 or 4, not ", rank);
  if (k->dim_size() != rank || v->dim_size() != rank)
    fail_shape_inference("Attention's Q, K and V must have one rank");
  int64_t qHeads = onnx::getAttribute(ctx, "q_num_heads", 0);
  int64_t kvHeads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  if (rank == 3 && (qHeads <= 0 || kvHeads <= 0))
    fail_shape_inference("Attention with 3-D inputs needs positive "
                         "q_num_heads and kv_num_heads");
  // The 4-D view of V: [B, kv heads, kv S, v head size].
  TensorShapeProto::Dimension vHeadSize = v->dim(rank - 1);
  if (rank == 3 && hasValue(vHeadSize)) {
    if (vHeadSize.dim_value() % kvHeads != 0)
      fail_shape_inference("Attention's V hidden size ", vHeadSize.dim_value(),
                           " is not a multiple of kv_num_heads ", kvHeads);
    vHeadSize.set_dim_value(vHeadSize.dim_value() / kvHeads);
  }
  TensorShapeProto::Dimension kHeadSize = k->dim(rank - 1);
  if (rank == 3 && hasValue(kHeadSize))
    kHeadSize.set_dim_value(kHeadSize.dim_value() / kvHeads);
  TensorShapeProto::Dimension qSequence = q->dim(rank == 4 ? 2 : 1);
  TensorShapeProto::Dimension qHeadCount, kvHeadCount;
  if (rank == 4) {
    qHeadCount = q->dim(1);
    kvHeadCount = k->dim(1);
  } else {
    qHeadCount.set_dim_value(qHeads);
    kvHeadCount.set_dim_value(kvHeads);
  }
  // total = past + kv sequence, when both are known.
  TensorShapeProto::Dimension total = k->dim(rank == 4 ? 2 : 1);
  if (const TensorShapeProto *past = knownShape(ctx, 4)) {
    if (past->dim_size() != 4)
      fail_shape_inference("Attention's past_key must have rank 4");
    if (hasValue(total) && hasValue(past->dim(2)))
      total.set_dim_value(total.dim_value() + past->dim(2).dim_value());
    else
      total.Clear();
  }

  TensorShapeProto *y = onnx::getOutputShape(ctx, 0);
  *y->add_dim() = q->dim(0);
  if (rank == 4) {
    *y->add_dim() = qHeadCount;
    *y->add_dim() = qSequence;
    *y->add_dim() = vHeadSize;
  } else {
    *y->add_dim() = qSequence;
    auto *hidden = y->add_dim();
    if (hasValue(vHeadSize))
      hidden->set_dim_value(qHeads * vHeadSize.dim_value());
  }
  auto cacheShape = [&](size_t output,
                        const TensorShapeProto::Dimension &headSize) {
    if (ctx.getNumOutputs() <= output || !ctx.getOutputType(output))
      return;
    TensorShapeProto *shape = onnx::getOutputShape(ctx, output);
    *shape->add_dim() = q->dim(0);
    *shape->add_dim() = kvHeadCount;
    *shape->add_dim() = total;
    *shape->add_dim() = headSize;
  };
  cacheShape(1, kHeadSize);
  cacheShape(2, vHeadSize);
  if (ctx.getNumOutputs() > 3 && ctx.getOutputType(3)) {
    TensorShapeProto *scores = onnx::getOutputShape(ctx, 3);
    *scores->add_dim() = q->dim(0);
    *scores->add_dim() = qHeadCount;
    *scores->add_dim() = qSequence;
    *scores->add_dim() = total;
  }
}

/// Attention: 23; 24 adds the nonpad_kv_seqlen input; 25 adds sliding
/// windows (left_window_size, right_window_size).
OpSchema attention(int version) {
  OpSchema schema = schemaOf("Attention", version);
  schema.Input(0, "Q", "", "T1")
      .Input(1, "K", "", "T1")
      .Input(2, "V", "", "T2")
      .Input(3, "attn_mask", "", "U", OpSchema::Optional)
      .Input(4, "past_key", "", "T1", OpSchema::Optional)
      .Input(5, "past_value", "", "T2", OpSchema::Optional);
  if (version >= 24)
    schema.Input(6, "nonpad_kv_seqlen", "", "tensor(int64)",
                 OpSchema::Optional);
  if (version >= 25)
    schema
        .Attr("left_window_size", "", AttributeProto::INT,
              static_cast<int64_t>(-1))
        .Attr("right_window_size", "", AttributeProto::INT,
              static_cast<int64_t>(-1));
  schema.Output(0, "Y", "", "T1")
      .Output(1, "present_key", "", "T1", OpSchema::Optional)
      .Output(2, "present_value", "", "T2", OpSchema::Optional)
      .Output(3, "qk_matmul_output", "", "T1", OpSchema::Optional)
      .Attr("is_causal", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("kv_num_heads", "", AttributeProto::INT, false)
      .Attr("q_num_heads", "", AttributeProto::INT, false)
      .Attr("qk_matmul_output_mode", "", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("scale", "", AttributeProto::FLOAT, false)
      .Attr("softcap", "", AttributeProto::FLOAT, 0.0f)
      .Attr("softmax_precision", "", AttributeProto::INT, false)
      .TypeConstraint("T1", kFloatTypes, "")
      .TypeConstraint("T2", kFloatTypes, "")
      .TypeConstraint("U",
                      {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)",
                       "tensor(uint64)", "tensor(int8)", "tensor(int16)",
                       "tensor(int32)", "tensor(int64)", "tensor(bfloat16)",
                       "tensor(float16)", "tensor(float)", "tensor(double)",
                       "tensor(bool)"},
                      "")
      .TypeAndShapeInferenceFunction(inferAttention);
  return schema;
}

OpSchema rmsNormalization() {
  OpSchema schema = schemaOf("RMSNormalization", 23);
  schema.Input(0, "X", "", "T")
      .Input(1, "scale", "", "V")
      .Output(0, "Y", "", "V")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T", kFloatTypes, "")
      .TypeConstraint("V", kFloatTypes, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
        const TensorShapeProto *x = knownShape(ctx, 0);
        if (!x)
          return;
        int64_t rank = x->dim_size();
        int64_t axis = onnx::getAttribute(ctx, "axis", -1);
        if (axis < -rank || axis >= rank)
          fail_shape_inference("RMSNormalization's axis ", axis,
                               " is out of range for rank ", rank);
        onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return schema;
}

OpSchema rotaryEmbedding() {
  OpSchema schema = schemaOf("RotaryEmbedding", 23);
  schema.Input(0, "X", "", "T")
      .Input(1, "cos_cache", "", "T")
      .Input(2, "sin_cache", "", "T")
      .Input(3, "position_ids", "", "M", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("interleaved", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("num_heads", "", AttributeProto::INT, false)
      .Attr("rotary_embedding_dim", "", AttributeProto::INT,
            static_cast<int64_t>(0))
      .TypeConstraint(
          "T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
      .TypeConstraint("M", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateShapeAndTypeFromFirstInput(ctx);
        const TensorShapeProto *x = knownShape(ctx, 0);
        if (x && x->dim_size() != 3 && x->dim_size() != 4)
          fail_shape_inference("RotaryEmbedding's X must have rank 3 or 4");
        if (x && x->dim_size() == 3 &&
            onnx::getAttribute(ctx, "num_heads", 0) <= 0)
          fail_shape_inference("RotaryEmbedding of a 3-D X needs num_heads");
      });
  return schema;
}

OpSchema swish() {
  OpSchema schema = schemaOf("Swish", 24);
  schema.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("alpha", "", AttributeProto::FLOAT, 1.0f)
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

OpSchema tensorScatter() {
  OpSchema schema = schemaOf("TensorScatter", 24);
  schema.Input(0, "past_cache", "", "T")
      .Input(1, "update", "", "T")
      .Input(2, "write_indices", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "present_cache", "", "T")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(-2))
      .Attr("mode", "", AttributeProto::STRING, std::string("linear"))
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateShapeAndTypeFromFirstInput(ctx);
        const TensorShapeProto *past = knownShape(ctx, 0);
        const TensorShapeProto *update = knownShape(ctx, 1);
        if (past && update && past->dim_size() != update->dim_size())
          fail_shape_inference("TensorScatter's past_cache and update "
                               "differ in rank");
      });
  return schema;
}

} // namespace

std::vector<onnx::OpSchema> opset23To25NewSchemas() {
  return {attention(23),     attention(24), attention(25),  rmsNormalization(),
          rotaryEmbedding(), swish(),       tensorScatter()};
}

} // namespace heterps::import
