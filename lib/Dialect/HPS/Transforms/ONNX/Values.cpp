//===- Values.cpp - Constants, shapes, identities -------------------------===//
//
// ONNX nodes that produce values rather than layers: Constant,
// ConstantOfShape, Range and Size fold to hps.constant; Shape becomes
// hps.shape (which folds when static); Identity and inference-mode Dropout
// disappear.
//
//===----------------------------------------------------------------------===//

#include "../ONNXPattern.h"

#include <cmath>

using namespace mlir;

namespace heterps::hps {
namespace {

/// Replaces the node with an hps.constant holding `value`, whose type must be
/// exactly the node's result type (users such as func.return require it).
LogicalResult replaceWithConstant(ONNXNode node, ElementsAttr value,
                                  PatternRewriter &rewriter) {
  if (value.getType() != node.resultType())
    return rewriter.notifyMatchFailure(node.getOp(),
                                       "constant type differs from result");
  auto constant = rewriter.create<ConstantOp>(node.getLoc(), value);
  replaceNodeWith(node, constant, rewriter);
  return success();
}

LogicalResult legalizeConstant(ONNXNode node, PatternRewriter &rewriter) {
  Builder &b = rewriter;
  if (auto tensor = dyn_cast_or_null<ElementsAttr>(node.getAttr("value")))
    return replaceWithConstant(node, tensor, rewriter);
  // Opset 12+ scalar and list forms.
  if (auto f = dyn_cast_or_null<FloatAttr>(node.getAttr("value_float")))
    return replaceWithConstant(
        node,
        DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                               f.getValue()),
        rewriter);
  if (auto i = dyn_cast_or_null<IntegerAttr>(node.getAttr("value_int")))
    return replaceWithConstant(
        node,
        DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                               i.getValue()),
        rewriter);
  if (auto fs =
          dyn_cast_or_null<DenseF32ArrayAttr>(node.getAttr("value_floats")))
    return replaceWithConstant(
        node,
        DenseElementsAttr::get(
            RankedTensorType::get({fs.size()}, b.getF32Type()),
            fs.asArrayRef()),
        rewriter);
  if (auto is = dyn_cast_or_null<DenseI64ArrayAttr>(node.getAttr("value_ints")))
    return replaceWithConstant(
        node,
        DenseElementsAttr::get(
            RankedTensorType::get({is.size()}, b.getI64Type()),
            is.asArrayRef()),
        rewriter);
  // value_string(s) and sparse_value have no hps form.
  return rewriter.notifyMatchFailure(node.getOp(), "unsupported Constant form");
}

LogicalResult legalizeConstantOfShape(ONNXNode node,
                                      PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(0));
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return rewriter.notifyMatchFailure(node.getOp(), "shape is not constant");
  Attribute fill;
  Type element = rewriter.getF32Type();
  if (auto value = dyn_cast_or_null<DenseElementsAttr>(node.getAttr("value"))) {
    element = value.getElementType();
    fill = value.getValues<Attribute>()[0];
  } else {
    fill = rewriter.getF32FloatAttr(0);
  }
  auto type = RankedTensorType::get(*shape, element);
  return replaceWithConstant(node, DenseElementsAttr::get(type, fill),
                             rewriter);
}

LogicalResult legalizeRange(ONNXNode node, PatternRewriter &rewriter) {
  auto resultType = dyn_cast<RankedTensorType>(node.resultType());
  std::optional<double> start = getConstantScalar(node.input(0));
  std::optional<double> limit = getConstantScalar(node.input(1));
  std::optional<double> delta = getConstantScalar(node.input(2));
  if (!resultType || !start || !limit || !delta || *delta == 0)
    return rewriter.notifyMatchFailure(node.getOp(), "inputs not constant");
  int64_t count = std::max<int64_t>(
      0, static_cast<int64_t>(std::ceil((*limit - *start) / *delta)));
  auto type = RankedTensorType::get({count}, resultType.getElementType());
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(
        makeScalarAttr(type.getElementType(), *start + i * *delta));
  return replaceWithConstant(node, DenseElementsAttr::get(type, values),
                             rewriter);
}

LogicalResult legalizeShape(ONNXNode node, PatternRewriter &rewriter) {
  IntegerAttr end;
  if (node.hasAttr("end"))
    end = rewriter.getI64IntegerAttr(node.getInt("end", 0));
  return replaceNode<ShapeOp>(
      node, rewriter, node.input(0),
      rewriter.getI64IntegerAttr(node.getInt("start", 0)), end, DeviceAttr());
}

LogicalResult legalizeSize(ONNXNode node, PatternRewriter &rewriter) {
  auto input = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!input || !input.hasStaticShape())
    return rewriter.notifyMatchFailure(node.getOp(), "dynamic shape");
  auto type = RankedTensorType::get({}, rewriter.getI64Type());
  return replaceWithConstant(
      node,
      DenseElementsAttr::get(
          type, rewriter.getI64IntegerAttr(input.getNumElements())),
      rewriter);
}

/// Replaces the node by its first input when that has the same type.
LogicalResult forwardInput(ONNXNode node, PatternRewriter &rewriter) {
  Value input = node.input(0);
  if (!input || input.getType() != node.resultType())
    return rewriter.notifyMatchFailure(node.getOp(), "type changes");
  for (unsigned i = 1; i < node.getOp().getNumResults(); ++i)
    if (node.isResultUsed(i))
      return rewriter.notifyMatchFailure(node.getOp(), "mask is used");
  replaceNodeWith(node, input, rewriter);
  return success();
}

/// Dropout is the identity at inference, which is what a forward graph
/// means; a training_mode input that is not a constant false stays generic.
LogicalResult legalizeDropout(ONNXNode node, PatternRewriter &rewriter) {
  if (Value training = node.input(2)) {
    std::optional<double> flag = getConstantScalar(training);
    if (!flag || *flag != 0)
      return rewriter.notifyMatchFailure(node.getOp(), "training mode");
  }
  return forwardInput(node, rewriter);
}

} // namespace

void populateValuePatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "Constant", kMinOpset, 11, legalizeConstant);
  addONNXPattern(patterns, "Constant", 12, kMaxOpset, legalizeConstant);
  addONNXPattern(patterns, "ConstantOfShape", 9, kMaxOpset,
                 legalizeConstantOfShape);
  addONNXPattern(patterns, "Range", 11, kMaxOpset, legalizeRange);
  addONNXPattern(patterns, "Shape", kMinOpset, 14, legalizeShape);
  addONNXPattern(patterns, "Shape", 15, kMaxOpset, legalizeShape);
  addONNXPattern(patterns, "Size", kMinOpset, kMaxOpset, legalizeSize);
  addONNXPattern(patterns, "Identity", kMinOpset, kMaxOpset, forwardInput);
  addONNXPattern(patterns, "Dropout", kMinOpset, 11, forwardInput);
  addONNXPattern(patterns, "Dropout", 12, kMaxOpset, legalizeDropout);
}

} // namespace heterps::hps
