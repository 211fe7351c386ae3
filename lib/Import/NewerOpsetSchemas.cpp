//===- NewerOpsetSchemas.cpp - ONNX opsets 18 to 21 op schemas ------------===//
//
// The ONNX library the importer links (Debian's 1.12) defines the default
// domain up to opset 17. Exporters now write newer opsets (torch.onnx's
// default exporter writes opset 20), so the domain's range is raised to 21
// and the schemas opsets 18 to 21 added or changed are registered here, as
// ONNX 1.13 to 1.16 define them. An op left alone keeps resolving to its
// older schema, which is what the newer opset means by it. Two kinds of
// change are deliberately not registered:
// - changes that only added element types HeterPS has no kernels for
//   (float8 in opset 19: Cast, CastLike, Constant, DequantizeLinear,
//   Identity, QuantizeLinear, Reshape, Shape, Size, If, Loop, Scan; strings
//   in Equal-19; bool in ReduceMax-20 / ReduceMin-20; float8 in
//   ConstantOfShape-20, IsInf-20, IsNaN-20; int4 and uint4 in opset 21:
//   Cast, CastLike, ConstantOfShape, Flatten, Identity, If, Loop, Pad,
//   QLinearMatMul, Reshape, Scan, Shape, Size, Squeeze, Transpose,
//   Unsqueeze): the older schema refuses those types at the checker, by
//   name;
// - ops HeterPS has no pattern for (DeformConv-19, ImageDecoder-20, the
//   string ops of 20): the checker names the node.
// GroupNormalization-21 (scale and bias per channel) and the blocked
// quantization of QuantizeLinear-21 / DequantizeLinear-21 (block_size,
// output_dtype) are registered, with opset 13's element types.
// Where an op only gained an input, attribute or mode, the type constraints
// and, when the output shape does not depend on the change, the inference
// function are borrowed from the older schema so the two cannot drift.
//
//===----------------------------------------------------------------------===//

#include "NewerOpsetSchemas.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>

namespace heterps::import {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

constexpr int kNewestOpset = 25;

OpSchema base(const char *name, int version = 18) {
  OpSchema schema;
  schema.SetName(name).SetDomain("").SinceVersion(version);
  return schema;
}

/// The schema of `name` that opset 17, the last ONNX 1.12 defines, uses.
const OpSchema &previous(const char *name) {
  const OpSchema *schema = onnx::OpSchemaRegistry::Schema(name, 17, "");
  if (!schema)
    fail_schema(std::string("ONNX defines no opset-17 ") + name);
  return *schema;
}

/// The allowed types of `param` in the opset-17 schema of `name`.
std::vector<std::string> typesOf(const char *name, const char *param) {
  for (const auto &constraint : previous(name).typeConstraintParams())
    if (constraint.type_param_str == param)
      return constraint.allowed_type_strs;
  fail_schema(std::string("no type parameter ") + param + " in " + name);
  return {};
}

/// An integer tensor input's values when known at inference time.
std::optional<std::vector<int64_t>> intsInput(InferenceContext &ctx,
                                              size_t index) {
  if (ctx.getNumInputs() <= index || !ctx.getInputType(index))
    return std::nullopt;
  const onnx::TensorProto *tensor = ctx.getInputData(index);
  if (!tensor)
    return std::nullopt;
  if (tensor->data_type() == onnx::TensorProto::INT64)
    return onnx::ParseData<int64_t>(tensor);
  if (tensor->data_type() == onnx::TensorProto::INT32) {
    std::vector<int32_t> values = onnx::ParseData<int32_t>(tensor);
    return std::vector<int64_t>(values.begin(), values.end());
  }
  return std::nullopt;
}

bool hasInput(InferenceContext &ctx, size_t index) {
  return ctx.getNumInputs() > index && ctx.getInputType(index);
}

/// Axes in [-rank, rank) mapped to [0, rank); fails on others and repeats.
std::vector<int64_t> normalizeAxes(const std::vector<int64_t> &axes,
                                   int64_t rank, const char *what) {
  std::vector<int64_t> result;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      fail_shape_inference(what, " axis ", axis, " is out of range for rank ",
                           rank);
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (std::find(result.begin(), result.end(), normalized) != result.end())
      fail_shape_inference(what, " names axis ", axis, " twice");
    result.push_back(normalized);
  }
  return result;
}

/// Gives output 0 input 0's element type; input 0's shape, or null when it
/// is unknown.
const TensorShapeProto *typedInputShape(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  return onnx::hasInputShape(ctx, 0) ? &onnx::getInputShape(ctx, 0) : nullptr;
}

/// The axes attribute, normalized; every axis when it is absent.
std::vector<int64_t> axesAttribute(InferenceContext &ctx, int64_t rank,
                                   const char *what) {
  std::vector<int64_t> axes;
  if (onnx::getRepeatedAttribute(ctx, "axes", axes))
    return normalizeAxes(axes, rank, what);
  for (int64_t i = 0; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

/// The input's shape with every extent unknown: the rank is all that is
/// known when operands the shape depends on are not constants.
void setRankOnly(InferenceContext &ctx, size_t output, int64_t rank) {
  TensorShapeProto *shape = onnx::getOutputShape(ctx, output);
  for (int64_t i = 0; i < rank; ++i)
    shape->add_dim();
}

//===----------------------------------------------------------------------===//
// Reduce*: axes became an optional input, as ReduceSum's did in opset 13.
//===----------------------------------------------------------------------===//

OpSchema reduce(const char *name) {
  OpSchema schema = base(name);
  schema.Input(0, "data", "", "T")
      .Input(1, "axes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "reduced", "", "T")
      .Attr("keepdims", "", AttributeProto::INT, int64_t(1))
      .Attr("noop_with_empty_axes", "", AttributeProto::INT, int64_t(0))
      .TypeConstraint("T", typesOf(name, "T"), "")
      // ReduceSum-13's rule reads the same inputs and attributes.
      .TypeAndShapeInferenceFunction(
          previous("ReduceSum").GetTypeAndShapeInferenceFunction());
  return schema;
}

//===----------------------------------------------------------------------===//
// Pad: an optional axes input says which axes pads covers.
//===----------------------------------------------------------------------===//

void inferPad(InferenceContext &ctx) {
  const TensorShapeProto *known = typedInputShape(ctx);
  if (!known)
    return;
  const TensorShapeProto &input = *known;
  int64_t rank = input.dim_size();
  std::optional<std::vector<int64_t>> pads = intsInput(ctx, 1);
  std::vector<int64_t> axes;
  if (hasInput(ctx, 3)) {
    std::optional<std::vector<int64_t>> given = intsInput(ctx, 3);
    if (!given || !pads)
      return setRankOnly(ctx, 0, rank);
    axes = normalizeAxes(*given, rank, "Pad's");
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  if (!pads)
    return setRankOnly(ctx, 0, rank);
  int64_t count = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads->size()) != 2 * count)
    fail_shape_inference("Pad's pads has ", pads->size(),
                         " values; it needs 2 per padded axis (", 2 * count,
                         ")");
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  for (int64_t i = 0; i < rank; ++i)
    *output->add_dim() = input.dim(static_cast<int>(i));
  for (int64_t i = 0; i < count; ++i) {
    auto *dim = output->mutable_dim(static_cast<int>(axes[i]));
    int64_t added = (*pads)[i] + (*pads)[i + count];
    if (!dim->has_dim_value()) {
      if (added != 0) // a padded symbolic extent is a new unknown one
        dim->Clear();
      continue;
    }
    int64_t extent = dim->dim_value() + added;
    if (extent < 0)
      fail_shape_inference("Pad would give axis ", axes[i], " extent ", extent);
    dim->clear_dim_param();
    dim->set_dim_value(extent);
  }
}

/// Pad-18; Pad-19 only adds the mode "wrap".
OpSchema pad(int version) {
  OpSchema schema = base("Pad", version);
  schema.Input(0, "data", "", "T")
      .Input(1, "pads", "", "tensor(int64)")
      .Input(2, "constant_value", "", "T", OpSchema::Optional)
      .Input(3, "axes", "", "Tind", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Attr("mode", "", AttributeProto::STRING, std::string("constant"))
      .TypeConstraint("T", typesOf("Pad", "T"), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(inferPad);
  return schema;
}

//===----------------------------------------------------------------------===//
// Split: num_outputs splits into chunks of ceil(extent / num_outputs), the
// last one smaller.
//===----------------------------------------------------------------------===//

void inferSplit(InferenceContext &ctx) {
  size_t outputs = ctx.getNumOutputs();
  for (size_t i = 0; i < outputs; ++i)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  bool hasSplit = hasInput(ctx, 1);
  const AttributeProto *numOutputs = ctx.getAttribute("num_outputs");
  if (hasSplit && numOutputs)
    fail_shape_inference("Split takes the split input or the num_outputs "
                         "attribute, not both");
  if (!hasSplit && !numOutputs)
    fail_shape_inference("Split needs the split input or the num_outputs "
                         "attribute");
  if (numOutputs && numOutputs->i() != static_cast<int64_t>(outputs))
    fail_shape_inference("Split's num_outputs is ", numOutputs->i(),
                         " but the node has ", outputs, " outputs");
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &input = onnx::getInputShape(ctx, 0);
  int64_t rank = input.dim_size();
  int64_t axis = onnx::getAttribute(ctx, "axis", 0);
  axis = normalizeAxes({axis}, rank, "Split's")[0];
  std::vector<int64_t> sizes;
  const auto &dim = input.dim(static_cast<int>(axis));
  if (hasSplit) {
    std::optional<std::vector<int64_t>> split = intsInput(ctx, 1);
    if (split) {
      sizes = *split;
      if (sizes.size() != outputs)
        fail_shape_inference("Split's split has ", sizes.size(), " sizes for ",
                             outputs, " outputs");
    }
  } else if (dim.has_dim_value()) {
    int64_t extent = dim.dim_value();
    int64_t chunk = (extent + static_cast<int64_t>(outputs) - 1) /
                    static_cast<int64_t>(outputs);
    for (size_t i = 0; i + 1 < outputs; ++i)
      sizes.push_back(chunk);
    sizes.push_back(extent - chunk * static_cast<int64_t>(outputs - 1));
    if (sizes.back() < 0)
      fail_shape_inference("Split cannot cut extent ", extent, " into ",
                           outputs, " chunks of ", chunk);
  }
  if (!sizes.empty() && dim.has_dim_value()) {
    int64_t total = 0;
    for (int64_t size : sizes)
      total += size;
    if (total != dim.dim_value())
      fail_shape_inference("Split's sizes add up to ", total,
                           " but the axis has extent ", dim.dim_value());
  }
  for (size_t i = 0; i < outputs; ++i) {
    TensorShapeProto *output = onnx::getOutputShape(ctx, i);
    for (int64_t d = 0; d < rank; ++d) {
      auto *out = output->add_dim();
      if (d != axis)
        *out = input.dim(static_cast<int>(d));
      else if (!sizes.empty())
        out->set_dim_value(sizes[i]);
    }
  }
}

OpSchema split() {
  OpSchema schema = base("Split");
  schema.Input(0, "input", "", "T")
      .Input(1, "split", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "outputs", "", "T", OpSchema::Variadic)
      .Attr("axis", "", AttributeProto::INT, int64_t(0))
      .Attr("num_outputs", "", AttributeProto::INT, false)
      .TypeConstraint("T", typesOf("Split", "T"), "")
      .TypeAndShapeInferenceFunction(inferSplit);
  return schema;
}

//===----------------------------------------------------------------------===//
// Resize: axes, keep_aspect_ratio_policy and antialias.
//===----------------------------------------------------------------------===//

void inferResize(InferenceContext &ctx) {
  const TensorShapeProto *known = typedInputShape(ctx);
  if (!known)
    return;
  const TensorShapeProto &input = *known;
  int64_t rank = input.dim_size();
  std::vector<int64_t> axes = axesAttribute(ctx, rank, "Resize's");
  std::string policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy",
                                          std::string("stretch"));
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail_shape_inference("Resize's keep_aspect_ratio_policy '", policy,
                         "' is not stretch, not_larger or not_smaller");

  bool hasScales = false;
  std::vector<float> scales;
  if (hasInput(ctx, 2)) {
    const onnx::TensorProto *data = ctx.getInputData(2);
    if (data && data->data_type() == onnx::TensorProto::FLOAT) {
      scales = onnx::ParseData<float>(data);
      hasScales = !scales.empty();
    } else if (!data && (!onnx::hasInputShape(ctx, 2) ||
                         onnx::getInputShape(ctx, 2).dim_size() != 1 ||
                         !onnx::getInputShape(ctx, 2).dim(0).has_dim_value() ||
                         onnx::getInputShape(ctx, 2).dim(0).dim_value() != 0)) {
      // Unknown scales (not an empty placeholder): only the rank is known.
      return setRankOnly(ctx, 0, rank);
    }
  }
  std::optional<std::vector<int64_t>> sizes;
  if (!hasScales && hasInput(ctx, 3)) {
    sizes = intsInput(ctx, 3);
    if (!sizes)
      return setRankOnly(ctx, 0, rank);
  }
  if (!hasScales && !sizes)
    fail_shape_inference("Resize needs scales or sizes");
  const std::vector<int64_t> *given = nullptr;
  if (sizes)
    given = &*sizes;
  size_t count = sizes ? sizes->size() : scales.size();
  if (count != axes.size())
    fail_shape_inference("Resize's ", sizes ? "sizes" : "scales", " has ",
                         count, " values for ", axes.size(), " axes");

  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  for (int64_t i = 0; i < rank; ++i)
    *output->add_dim() = input.dim(static_cast<int>(i));
  auto extent = [&](size_t i) -> std::optional<int64_t> {
    const auto &dim = input.dim(static_cast<int>(axes[i]));
    if (dim.has_dim_value())
      return dim.dim_value();
    return std::nullopt;
  };
  std::vector<std::optional<int64_t>> results(count);
  if (given && policy != "stretch") {
    // One scale for every resized axis, the smallest (not_larger) or the
    // largest (not_smaller) that sizes asks for.
    std::optional<float> scale;
    bool known = true;
    for (size_t i = 0; i < count; ++i) {
      std::optional<int64_t> in = extent(i);
      if (!in) {
        known = false;
        break;
      }
      float ratio = static_cast<float>((*given)[i]) / static_cast<float>(*in);
      if (!scale)
        scale = ratio;
      else
        scale = policy == "not_larger" ? std::min(*scale, ratio)
                                       : std::max(*scale, ratio);
    }
    if (known)
      for (size_t i = 0; i < count; ++i)
        results[i] = static_cast<int64_t>(
            std::round(*scale * static_cast<float>(*extent(i))));
  } else {
    for (size_t i = 0; i < count; ++i) {
      if (given)
        results[i] = (*given)[i];
      else if (std::optional<int64_t> in = extent(i))
        results[i] = static_cast<int64_t>(
            std::floor(static_cast<float>(*in) * scales[i]));
    }
  }
  for (size_t i = 0; i < count; ++i) {
    auto *dim = output->mutable_dim(static_cast<int>(axes[i]));
    dim->Clear();
    if (results[i])
      dim->set_dim_value(*results[i]);
  }
}

/// Resize-18; Resize-19 only adds the coordinate transformation
/// half_pixel_symmetric.
OpSchema resize(int version) {
  OpSchema schema = base("Resize", version);
  schema.Input(0, "X", "", "T1")
      .Input(1, "roi", "", "T2", OpSchema::Optional)
      .Input(2, "scales", "", "tensor(float)", OpSchema::Optional)
      .Input(3, "sizes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "Y", "", "T1")
      .Attr("antialias", "", AttributeProto::INT, int64_t(0))
      .Attr("axes", "", AttributeProto::INTS, false)
      .Attr("coordinate_transformation_mode", "", AttributeProto::STRING,
            std::string("half_pixel"))
      .Attr("cubic_coeff_a", "", AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "", AttributeProto::INT, int64_t(0))
      .Attr("extrapolation_value", "", AttributeProto::FLOAT, 0.0f)
      .Attr("keep_aspect_ratio_policy", "", AttributeProto::STRING,
            std::string("stretch"))
      .Attr("mode", "", AttributeProto::STRING, std::string("nearest"))
      .Attr("nearest_mode", "", AttributeProto::STRING,
            std::string("round_prefer_floor"))
      .TypeConstraint("T1", typesOf("Resize", "T1"), "")
      .TypeConstraint("T2", typesOf("Resize", "T2"), "")
      .TypeAndShapeInferenceFunction(inferResize);
  return schema;
}

//===----------------------------------------------------------------------===//
// ScatterElements, ScatterND: reduction may also be max or min.
//===----------------------------------------------------------------------===//

OpSchema scatter(const char *name, const char *indexType) {
  OpSchema schema = base(name);
  schema.Input(0, "data", "", "T")
      .Input(1, "indices", "", indexType)
      .Input(2, "updates", "", "T")
      .Output(0, "output", "", "T")
      .Attr("reduction", "", AttributeProto::STRING, std::string("none"))
      .TypeConstraint("T", typesOf(name, "T"), "")
      .TypeAndShapeInferenceFunction(
          previous(name).GetTypeAndShapeInferenceFunction());
  if (std::string(indexType) == "Tind")
    schema.Attr("axis", "", AttributeProto::INT, int64_t(0))
        .TypeConstraint("Tind", typesOf(name, "Tind"), "");
  return schema;
}

//===----------------------------------------------------------------------===//
// LpPool-18 (ceil_mode, dilations) and AveragePool-19 (dilations).
//===----------------------------------------------------------------------===//

/// The window ops' output extents (ONNX's rule): SAME_* covers ceil(in /
/// stride); VALID and explicit pads count the windows of the dilated kernel
/// that fit, rounded up with ceil_mode, dropping a last window that would
/// start in the end padding.
void inferWindowPool(InferenceContext &ctx) {
  const TensorShapeProto *known = typedInputShape(ctx);
  if (!known)
    return;
  const TensorShapeProto &input = *known;
  int64_t rank = input.dim_size();
  if (rank < 3)
    fail_shape_inference("a pool's input must have rank 3 or more");
  size_t n = static_cast<size_t>(rank - 2);
  std::vector<int64_t> kernel, strides, dilations, pads;
  if (!onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel) ||
      kernel.size() != n)
    fail_shape_inference("kernel_shape needs ", n, " values");
  if (!onnx::getRepeatedAttribute(ctx, "strides", strides))
    strides.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "dilations", dilations))
    dilations.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "pads", pads))
    pads.assign(2 * n, 0);
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    fail_shape_inference("strides, dilations or pads have the wrong number "
                         "of values");
  std::string autoPad =
      onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  bool ceil = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  *output->add_dim() = input.dim(0);
  *output->add_dim() = input.dim(1);
  for (size_t i = 0; i < n; ++i) {
    auto *dim = output->add_dim();
    const auto &in = input.dim(static_cast<int>(i + 2));
    if (!in.has_dim_value())
      continue;
    int64_t extent = in.dim_value(), stride = strides[i];
    int64_t window = dilations[i] * (kernel[i] - 1) + 1;
    if (stride < 1 || dilations[i] < 1 || kernel[i] < 1)
      fail_shape_inference("kernel, strides and dilations must be "
                           "positive");
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      dim->set_dim_value((extent + stride - 1) / stride);
      continue;
    }
    int64_t begin = autoPad == "VALID" ? 0 : pads[i];
    int64_t end = autoPad == "VALID" ? 0 : pads[i + n];
    if (extent + begin + end < window)
      fail_shape_inference("the window is larger than the padded input");
    dim->set_dim_value(hps::shapes::windowCount(
        extent, kernel[i], stride, begin, end, dilations[i], ceil));
  }
}

/// X -> Y over windows: the attributes both pools share, with dilations.
OpSchema windowPool(const char *name, int version) {
  OpSchema schema = base(name, version);
  schema.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("auto_pad", "", AttributeProto::STRING, std::string("NOTSET"))
      .Attr("ceil_mode", "", AttributeProto::INT, int64_t(0))
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("kernel_shape", "", AttributeProto::INTS, true)
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .TypeConstraint("T", typesOf(name, "T"), "")
      .TypeAndShapeInferenceFunction(inferWindowPool);
  return schema;
}

OpSchema lpPool() {
  OpSchema schema = windowPool("LpPool", 18);
  schema.Attr("p", "", AttributeProto::INT, int64_t(2));
  return schema;
}

OpSchema averagePool() {
  OpSchema schema = windowPool("AveragePool", 19);
  schema.Attr("count_include_pad", "", AttributeProto::INT, int64_t(0));
  return schema;
}

//===----------------------------------------------------------------------===//
// Opset 20: DFT's axis became an input (default -2), GridSample went n-D
// with modes linear / cubic, Gelu and AffineGrid.
//===----------------------------------------------------------------------===//

void inferDFT(InferenceContext &ctx) {
  const TensorShapeProto *known = typedInputShape(ctx);
  if (!known)
    return;
  const TensorShapeProto &input = *known;
  int64_t rank = input.dim_size();
  if (rank < 2)
    fail_shape_inference("DFT's input must have rank 2 or more");
  int64_t axis = -2;
  if (hasInput(ctx, 2)) {
    std::optional<std::vector<int64_t>> given = intsInput(ctx, 2);
    if (!given || given->size() != 1)
      return setRankOnly(ctx, 0, rank);
    axis = (*given)[0];
  }
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank - 2)
    fail_shape_inference("DFT's axis must name a signal axis");
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  for (int64_t i = 0; i < rank; ++i)
    *output->add_dim() = input.dim(static_cast<int>(i));
  auto *length = output->mutable_dim(static_cast<int>(axis));
  if (hasInput(ctx, 1)) {
    std::optional<std::vector<int64_t>> given = intsInput(ctx, 1);
    length->Clear();
    if (given && given->size() == 1)
      length->set_dim_value((*given)[0]);
  }
  if (onnx::getAttribute(ctx, "onesided", 0) && length->has_dim_value())
    length->set_dim_value(length->dim_value() / 2 + 1);
  else if (onnx::getAttribute(ctx, "onesided", 0))
    length->Clear();
  output->mutable_dim(static_cast<int>(rank - 1))->Clear();
  output->mutable_dim(static_cast<int>(rank - 1))->set_dim_value(2);
}

OpSchema dft() {
  OpSchema schema = base("DFT", 20);
  schema.Input(0, "input", "", "T1")
      .Input(1, "dft_length", "", "T2", OpSchema::Optional)
      .Input(2, "axis", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "output", "", "T1")
      .Attr("inverse", "", AttributeProto::INT, int64_t(0))
      .Attr("onesided", "", AttributeProto::INT, int64_t(0))
      .TypeConstraint("T1", typesOf("DFT", "T1"), "")
      .TypeConstraint("T2", typesOf("DFT", "T2"), "")
      .TypeAndShapeInferenceFunction(inferDFT);
  return schema;
}

/// X [N, C, D_1..D_r] sampled at grid [N, H_1..H_r, r]: [N, C, H_1..H_r].
void inferGridSample(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1))
    return;
  const TensorShapeProto &x = onnx::getInputShape(ctx, 0);
  const TensorShapeProto &grid = onnx::getInputShape(ctx, 1);
  if (x.dim_size() < 3 || grid.dim_size() != x.dim_size())
    fail_shape_inference("GridSample's grid must have the rank of X, 3 or "
                         "more");
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  *output->add_dim() = x.dim(0);
  *output->add_dim() = x.dim(1);
  for (int i = 1; i + 1 < grid.dim_size(); ++i)
    *output->add_dim() = grid.dim(i);
}

OpSchema gridSample() {
  OpSchema schema = base("GridSample", 20);
  schema.Input(0, "X", "", "T1")
      .Input(1, "grid", "", "T2")
      .Output(0, "Y", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, int64_t(0))
      .Attr("mode", "", AttributeProto::STRING, std::string("linear"))
      .Attr("padding_mode", "", AttributeProto::STRING, std::string("zeros"))
      .TypeConstraint("T1", typesOf("GridSample", "T1"), "")
      .TypeConstraint("T2", typesOf("GridSample", "T2"), "")
      .TypeAndShapeInferenceFunction(inferGridSample);
  return schema;
}

/// theta [N, r, r + 1] and size [N, C, spatial (r)...]: [N, spatial..., r].
void inferAffineGrid(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::optional<std::vector<int64_t>> size = intsInput(ctx, 1);
  if (!size) {
    if (onnx::hasInputShape(ctx, 1) &&
        onnx::getInputShape(ctx, 1).dim_size() == 1 &&
        onnx::getInputShape(ctx, 1).dim(0).has_dim_value())
      setRankOnly(ctx, 0, onnx::getInputShape(ctx, 1).dim(0).dim_value() - 1);
    return;
  }
  if (size->size() != 4 && size->size() != 5)
    fail_shape_inference("AffineGrid's size must have 4 or 5 values");
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  output->add_dim()->set_dim_value((*size)[0]);
  for (size_t i = 2; i < size->size(); ++i)
    output->add_dim()->set_dim_value((*size)[i]);
  output->add_dim()->set_dim_value(static_cast<int64_t>(size->size()) - 2);
}

OpSchema affineGrid() {
  OpSchema schema = base("AffineGrid", 20);
  schema.Input(0, "theta", "", "T1")
      .Input(1, "size", "", "T2")
      .Output(0, "grid", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, int64_t(0))
      .TypeConstraint("T1",
                      {"tensor(bfloat16)", "tensor(float16)", "tensor(float)",
                       "tensor(double)"},
                      "")
      .TypeConstraint("T2", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(inferAffineGrid);
  return schema;
}

OpSchema gelu() {
  OpSchema schema = base("Gelu", 20);
  schema.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("approximate", "", AttributeProto::STRING, std::string("none"))
      .TypeConstraint("T",
                      {"tensor(float16)", "tensor(float)", "tensor(double)",
                       "tensor(bfloat16)"},
                      "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

//===----------------------------------------------------------------------===//
// New ops of opset 18.
//===----------------------------------------------------------------------===//

const std::vector<std::string> kIntegerTypes = {
    "tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
    "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};

OpSchema bitwiseBinary(const char *name) {
  OpSchema schema = base(name);
  schema.Input(0, "A", "", "T")
      .Input(1, "B", "", "T")
      .Output(0, "C", "", "T")
      .TypeConstraint("T", kIntegerTypes, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 1))
          onnx::bidirectionalBroadcastShapeInference(
              onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
              *onnx::getOutputShape(ctx, 0));
      });
  return schema;
}

OpSchema bitwiseNot() {
  OpSchema schema = base("BitwiseNot");
  schema.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kIntegerTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

OpSchema mish() {
  OpSchema schema = base("Mish");
  schema.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint(
          "T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

/// Opset 18: scale and bias per group; 21: per channel, and stash_type.
OpSchema groupNormalization(int version) {
  OpSchema schema = base("GroupNormalization", version);
  if (version >= 21)
    schema.Attr("stash_type", "", AttributeProto::INT, static_cast<int64_t>(1));
  schema.Input(0, "X", "", "T")
      .Input(1, "scale", "", "T")
      .Input(2, "bias", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "", AttributeProto::INT, true)
      .TypeConstraint("T",
                      {"tensor(float16)", "tensor(float)", "tensor(double)",
                       "tensor(bfloat16)"},
                      "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

/// An element-type attribute of Q/DQ-23 that may only name float (the
/// scale's type here) or be unset (0).
void requireFloatOrUnset(InferenceContext &ctx, const char *name) {
  const AttributeProto *attr = ctx.getAttribute(name);
  if (attr && attr->i() != 0 && attr->i() != onnx::TensorProto::FLOAT)
    fail_type_inference(name, " ", attr->i(),
                        " is not supported: only float (1) is");
}

/// QuantizeLinear-21: blocked scales (block_size) and output_dtype; the
/// scale takes x's type (as from 19). 23 adds `precision`, the type the
/// division by the scale is computed in. The element types are opset 13's:
/// HeterPS has no int4, int16 or float8 kernels.
OpSchema quantizeLinear(int version) {
  OpSchema schema = base("QuantizeLinear", version);
  if (version >= 23)
    schema.Attr("precision", "", AttributeProto::INT, static_cast<int64_t>(0));
  schema.Input(0, "x", "", "T1")
      .Input(1, "y_scale", "", "T1")
      .Input(2, "y_zero_point", "", "T2", OpSchema::Optional)
      .Output(0, "y", "", "T2")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("output_dtype", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("saturate", "", AttributeProto::INT, static_cast<int64_t>(1))
      .TypeConstraint("T1", typesOf("QuantizeLinear", "T1"), "")
      .TypeConstraint("T2", typesOf("QuantizeLinear", "T2"), "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        requireFloatOrUnset(ctx, "precision");
        if (hasInput(ctx, 2))
          onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
        else if (const AttributeProto *dtype = ctx.getAttribute("output_dtype");
                 dtype && dtype->i() != 0)
          onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(dtype->i()));
        else
          onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
        if (onnx::hasInputShape(ctx, 0))
          onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return schema;
}

/// DequantizeLinear-21: blocked scales (block_size); types as opset 13's
/// (an f32 scale and result). 23 adds `output_dtype`, the result type when
/// it is not the scale's (float is the only one here).
OpSchema dequantizeLinear(int version) {
  OpSchema schema = base("DequantizeLinear", version);
  if (version >= 23)
    schema.Attr("output_dtype", "", AttributeProto::INT,
                static_cast<int64_t>(0));
  schema.Input(0, "x", "", "T1")
      .Input(1, "x_scale", "", "T2")
      .Input(2, "x_zero_point", "", "T1", OpSchema::Optional)
      .Output(0, "y", "", "T2")
      .Attr("axis", "", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("block_size", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T1", typesOf("DequantizeLinear", "T"), "")
      .TypeConstraint("T2", {"tensor(float)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        requireFloatOrUnset(ctx, "output_dtype");
        onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (onnx::hasInputShape(ctx, 0))
          onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  return schema;
}

/// [N, C * prod(block_shape), L] -> [N, C, image_shape...].
void inferCol2Im(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::optional<std::vector<int64_t>> image = intsInput(ctx, 1);
  std::optional<std::vector<int64_t>> block = intsInput(ctx, 2);
  int64_t spatial = -1;
  if (image)
    spatial = static_cast<int64_t>(image->size());
  else if (onnx::hasInputShape(ctx, 1) &&
           onnx::getInputShape(ctx, 1).dim_size() == 1 &&
           onnx::getInputShape(ctx, 1).dim(0).has_dim_value())
    spatial = onnx::getInputShape(ctx, 1).dim(0).dim_value();
  if (image && block && image->size() != block->size())
    fail_shape_inference("Col2Im's image_shape and block_shape differ in "
                         "length");
  for (const char *attr : {"dilations", "strides"}) {
    std::vector<int64_t> values;
    if (spatial >= 0 && onnx::getRepeatedAttribute(ctx, attr, values) &&
        static_cast<int64_t>(values.size()) != spatial)
      fail_shape_inference("Col2Im's ", attr, " needs ", spatial, " values");
  }
  std::vector<int64_t> pads;
  if (spatial >= 0 && onnx::getRepeatedAttribute(ctx, "pads", pads) &&
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    fail_shape_inference("Col2Im's pads needs ", 2 * spatial, " values");
  if (spatial < 0)
    return;
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  auto *batch = output->add_dim();
  auto *channels = output->add_dim();
  if (onnx::hasInputShape(ctx, 0)) {
    const TensorShapeProto &input = onnx::getInputShape(ctx, 0);
    if (input.dim_size() != 3)
      fail_shape_inference("Col2Im's input must have rank 3");
    *batch = input.dim(0);
    if (block && input.dim(1).has_dim_value()) {
      int64_t product = 1;
      for (int64_t b : *block)
        product *= b;
      if (product <= 0 || input.dim(1).dim_value() % product != 0)
        fail_shape_inference("Col2Im's input dim 1 (", input.dim(1).dim_value(),
                             ") is not a multiple of the block size ", product);
      channels->set_dim_value(input.dim(1).dim_value() / product);
    }
  }
  for (int64_t i = 0; i < spatial; ++i) {
    auto *dim = output->add_dim();
    if (image)
      dim->set_dim_value((*image)[i]);
  }
}

OpSchema col2Im() {
  OpSchema schema = base("Col2Im");
  schema.Input(0, "input", "", "T")
      .Input(1, "image_shape", "", "tensor(int64)")
      .Input(2, "block_shape", "", "tensor(int64)")
      .Output(0, "output", "", "T")
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeAndShapeInferenceFunction(inferCol2Im);
  return schema;
}

/// input_data with the axes `axes` names cropped or padded to `shape`.
void inferCenterCropPad(InferenceContext &ctx) {
  const TensorShapeProto *known = typedInputShape(ctx);
  if (!known)
    return;
  const TensorShapeProto &input = *known;
  int64_t rank = input.dim_size();
  std::vector<int64_t> axes = axesAttribute(ctx, rank, "CenterCropPad's");
  std::optional<std::vector<int64_t>> shape = intsInput(ctx, 1);
  if (!shape)
    return setRankOnly(ctx, 0, rank);
  if (shape->size() != axes.size())
    fail_shape_inference("CenterCropPad's shape has ", shape->size(),
                         " values for ", axes.size(), " axes");
  TensorShapeProto *output = onnx::getOutputShape(ctx, 0);
  for (int64_t i = 0; i < rank; ++i)
    *output->add_dim() = input.dim(static_cast<int>(i));
  for (size_t i = 0; i < axes.size(); ++i) {
    if ((*shape)[i] < 0)
      fail_shape_inference("CenterCropPad's shape has negative extent ",
                           (*shape)[i]);
    auto *dim = output->mutable_dim(static_cast<int>(axes[i]));
    dim->Clear();
    dim->set_dim_value((*shape)[i]);
  }
}

OpSchema centerCropPad() {
  OpSchema schema = base("CenterCropPad");
  schema.Input(0, "input_data", "", "T")
      .Input(1, "shape", "", "Tind")
      .Output(0, "output_data", "", "T")
      .Attr("axes", "", AttributeProto::INTS, false)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(inferCenterCropPad);
  return schema;
}

/// Optional values: opset 18 lets OptionalHasElement and
/// OptionalGetElement take a plain tensor too (or, for HasElement, no
/// input).
std::vector<std::string> optionalOrTensorTypes() {
  std::vector<std::string> types;
  for (const std::string &tensor : OpSchema::all_tensor_types()) {
    types.push_back(tensor);
    types.push_back("optional(" + tensor + ")");
  }
  return types;
}

OpSchema optionalHasElement() {
  OpSchema schema = base("OptionalHasElement");
  schema.Input(0, "input", "", "O", OpSchema::Optional)
      .Output(0, "output", "", "B")
      .TypeConstraint("O", optionalOrTensorTypes(), "")
      .TypeConstraint("B", {"tensor(bool)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
        onnx::getOutputShape(ctx, 0); // a scalar
      });
  return schema;
}

OpSchema optionalGetElement() {
  OpSchema schema = base("OptionalGetElement");
  schema.Input(0, "input", "", "O")
      .Output(0, "output", "", "V")
      .TypeConstraint("O", optionalOrTensorTypes(), "")
      .TypeConstraint("V", OpSchema::all_tensor_types(), "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        const onnx::TypeProto *type = ctx.getInputType(0);
        if (!type)
          return;
        if (type->has_optional_type())
          *ctx.getOutputType(0) = type->optional_type().elem_type();
        else
          *ctx.getOutputType(0) = *type;
      });
  return schema;
}

} // namespace

void registerNewerOpsetSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The registry offers no way to widen a known domain: its maps are only
    // handed out const, but the singleton itself is mutable.
    auto &range = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    const_cast<std::unordered_map<std::string, std::pair<int, int>> &>(
        range.Map())[onnx::ONNX_DOMAIN]
        .second = kNewestOpset;
    const_cast<std::unordered_map<std::string, int> &>(
        range.LastReleaseVersionMap())[onnx::ONNX_DOMAIN] = kNewestOpset;
    std::vector<OpSchema> schemas = {
        // Opset 18.
        pad(18), split(), resize(18), scatter("ScatterElements", "Tind"),
        scatter("ScatterND", "tensor(int64)"), lpPool(),
        bitwiseBinary("BitwiseAnd"), bitwiseBinary("BitwiseOr"),
        bitwiseBinary("BitwiseXor"), bitwiseNot(), mish(),
        groupNormalization(18), col2Im(), centerCropPad(), optionalHasElement(),
        optionalGetElement(),
        // Opset 19.
        pad(19), resize(19), averagePool(),
        // Opset 20.
        dft(), gridSample(), gelu(), affineGrid(),
        // Opset 21.
        groupNormalization(21), quantizeLinear(21), dequantizeLinear(21),
        // Opset 23.
        quantizeLinear(23), dequantizeLinear(23)};
    for (OpSchema &schema : opset23To25NewSchemas())
      schemas.push_back(std::move(schema));
    for (const char *name : {"ReduceL1", "ReduceL2", "ReduceLogSum",
                             "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                             "ReduceMin", "ReduceProd", "ReduceSumSquare"})
      schemas.push_back(reduce(name));
    for (OpSchema &schema : schemas)
      onnx::RegisterSchema(std::move(schema));
  });
}

} // namespace heterps::import
