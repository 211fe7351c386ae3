//===- Normalization.cpp - BatchNorm, LayerNorm, Softmax, LogSoftmax ------===//

#include "../ONNXPattern.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Inference-form batch normalization with running statistics. Opsets 7-8
/// with spatial=0 normalize per element, and opset 14+ training mode
/// computes batch statistics: both stay generic.
LogicalResult legalizeBatchNorm(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getOpset() < 9 && node.getInt("spatial", 1) != 1)
    return rewriter.notifyMatchFailure(node.getOp(), "spatial=0");
  if (node.getInt("training_mode", 0) != 0)
    return rewriter.notifyMatchFailure(node.getOp(), "training mode");
  return replaceNode<BatchNormOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      node.input(3), node.input(4),
      rewriter.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)), DeviceAttr());
}

LogicalResult legalizeLayerNorm(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNode<LayerNormOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getI64IntegerAttr(node.getInt("axis", -1)),
      rewriter.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)), DeviceAttr());
}

/// Softmax and LogSoftmax before opset 13 coerce the input to 2-D at `axis`
/// (default 1) and normalize each row: a softmax over every axis from
/// `axis` on. That is one hps op when `axis` is the last axis, otherwise
/// flatten -> softmax over axis 1 -> reshape back (static shapes only).
template <typename SoftmaxLike>
LogicalResult legalizeCoercedSoftmax(ONNXNode node, PatternRewriter &rewriter) {
  auto shape = rankedShape(node.input(0));
  if (!shape)
    return rewriter.notifyMatchFailure(node.getOp(), "unranked input");
  int64_t rank = shape->size();
  std::optional<int64_t> axisIndex = node.getAxis("axis", 1, rank);
  if (!axisIndex)
    return rewriter.notifyMatchFailure(node.getOp(), "axis out of range");
  int64_t axis = *axisIndex;
  if (axis == rank - 1)
    return replaceNode<SoftmaxLike>(node, rewriter, node.input(0),
                                    rewriter.getI64IntegerAttr(-1),
                                    DeviceAttr());
  auto outer = shapes::elementCount(shape->take_front(axis));
  auto inner = shapes::elementCount(shape->drop_front(axis));
  if (!outer || !inner || node.resultType() != node.input(0).getType())
    return rewriter.notifyMatchFailure(node.getOp(), "dynamic shape");
  Type element = cast<ShapedType>(node.resultType()).getElementType();
  auto flatType = RankedTensorType::get({*outer, *inner}, element);
  DeviceAttr device = node.getOp().getDeviceAttr();
  Location loc = node.getLoc();
  Value flat = rewriter.create<FlattenOp>(
      loc, flatType, node.input(0), rewriter.getI64IntegerAttr(axis), device);
  Value normalized = rewriter.create<SoftmaxLike>(
      loc, flatType, flat, rewriter.getI64IntegerAttr(1), device);
  Value back = rewriter.create<ReshapeOp>(loc, node.resultType(), normalized,
                                          rewriter.getDenseI64ArrayAttr(*shape),
                                          UnitAttr(), device);
  replaceNodeWith(node, back, rewriter);
  return success();
}

template <typename SoftmaxLike>
LogicalResult legalizeAxisSoftmax(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNode<SoftmaxLike>(
      node, rewriter, node.input(0),
      rewriter.getI64IntegerAttr(node.getInt("axis", -1)), DeviceAttr());
}

} // namespace

void populateNormalizationPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "BatchNormalization", kMinOpset, 8,
                 legalizeBatchNorm);
  addONNXPattern(patterns, "BatchNormalization", 9, 13, legalizeBatchNorm);
  addONNXPattern(patterns, "BatchNormalization", 14, kMaxOpset,
                 legalizeBatchNorm);
  addONNXPattern(patterns, "LayerNormalization", 17, kMaxOpset,
                 legalizeLayerNorm);
  addONNXPattern(patterns, "Softmax", kMinOpset, 12,
                 legalizeCoercedSoftmax<SoftmaxOp>);
  addONNXPattern(patterns, "Softmax", 13, kMaxOpset,
                 legalizeAxisSoftmax<SoftmaxOp>);
  addONNXPattern(patterns, "LogSoftmax", kMinOpset, 12,
                 legalizeCoercedSoftmax<LogSoftmaxOp>);
  addONNXPattern(patterns, "LogSoftmax", 13, kMaxOpset,
                 legalizeAxisSoftmax<LogSoftmaxOp>);
}

} // namespace heterps::hps
