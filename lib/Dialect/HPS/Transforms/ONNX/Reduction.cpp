//===- Reduction.cpp - Reduce* --------------------------------------------===//
//
// Every Reduce* op takes `axes` as an attribute through opset 17, except
// ReduceSum, which made it an optional input in opset 13 (together with
// noop_with_empty_axes). Versions 11 (negative axes) and 12/13 (more element
// types) change nothing a valid model can express differently.
//
//===----------------------------------------------------------------------===//

#include "../ONNXPattern.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// True unless the input's rank is known and `axes` holds an axis out of
/// [-rank, rank) or names one twice (which hps.reduce would reject).
bool axesAreValid(Value input, ArrayRef<int64_t> axes) {
  auto shape = rankedShape(input);
  if (!shape)
    return true;
  int64_t rank = shape->size();
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return false;
    if (!seen.insert(axis < 0 ? axis + rank : axis).second)
      return false;
  }
  return true;
}

/// hps.reduce over `axes` (every axis when empty); keepdims defaults to 1.
LogicalResult replaceWithReduce(ONNXNode node, PatternRewriter &rewriter,
                                ReduceKind kind, ArrayRef<int64_t> axes) {
  if (!axesAreValid(node.input(0), axes))
    return rewriter.notifyMatchFailure(node.getOp(), "invalid axes");
  UnitAttr keepdims =
      node.getInt("keepdims", 1) ? rewriter.getUnitAttr() : UnitAttr();
  return replaceNode<ReduceOp>(
      node, rewriter, ReduceKindAttr::get(rewriter.getContext(), kind),
      node.input(0), rewriter.getDenseI64ArrayAttr(axes), keepdims,
      DeviceAttr());
}

/// Axes as an attribute; none means every axis.
LogicalResult legalizeAttrAxes(ONNXNode node, PatternRewriter &rewriter,
                               ReduceKind kind) {
  // An axes input belongs to later versions: its meaning here is unknown.
  if (node.numInputs() > 1)
    return rewriter.notifyMatchFailure(node.getOp(), "unexpected input");
  SmallVector<int64_t> axes =
      node.getInts("axes").value_or(SmallVector<int64_t>());
  return replaceWithReduce(node, rewriter, kind, axes);
}

/// Axes as an optional input that must be a constant. No (or empty) axes
/// reduce every axis, or with noop_with_empty_axes make the node an
/// identity.
LogicalResult legalizeInputAxes(ONNXNode node, PatternRewriter &rewriter,
                                ReduceKind kind) {
  // Likewise an axes attribute, which this version would ignore.
  if (node.hasAttr("axes"))
    return rewriter.notifyMatchFailure(node.getOp(), "unexpected attribute");
  SmallVector<int64_t> axes;
  if (Value input = node.input(1)) {
    std::optional<SmallVector<int64_t>> values = getConstantInts(input);
    if (!values)
      return rewriter.notifyMatchFailure(node.getOp(), "axes not constant");
    axes = *values;
  }
  if (axes.empty() && node.getInt("noop_with_empty_axes", 0)) {
    if (node.input(0).getType() != node.resultType())
      return rewriter.notifyMatchFailure(node.getOp(), "type mismatch");
    replaceNodeWith(node, node.input(0), rewriter);
    return success();
  }
  return replaceWithReduce(node, rewriter, kind, axes);
}

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  const std::pair<const char *, ReduceKind> attrAxesKinds[] = {
      {"ReduceMean", ReduceKind::Mean},
      {"ReduceMax", ReduceKind::Max},
      {"ReduceMin", ReduceKind::Min},
      {"ReduceProd", ReduceKind::Prod},
      {"ReduceL1", ReduceKind::L1},
      {"ReduceL2", ReduceKind::L2},
      {"ReduceLogSum", ReduceKind::LogSum},
      {"ReduceLogSumExp", ReduceKind::LogSumExp},
      {"ReduceSumSquare", ReduceKind::SumSquare}};
  for (auto [name, kind] : attrAxesKinds)
    addONNXPattern(patterns, name, kMinOpset, kMaxOpset,
                   [kind = kind](ONNXNode node, PatternRewriter &rewriter) {
                     return legalizeAttrAxes(node, rewriter, kind);
                   });
  addONNXPattern(patterns, "ReduceSum", kMinOpset, 12,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeAttrAxes(node, rewriter, ReduceKind::Sum);
                 });
  addONNXPattern(patterns, "ReduceSum", 13, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeInputAxes(node, rewriter, ReduceKind::Sum);
                 });
}

} // namespace heterps::hps
