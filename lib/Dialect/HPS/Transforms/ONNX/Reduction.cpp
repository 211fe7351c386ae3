//===- Reduction.cpp - Reduce* --------------------------------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Reduce ops: axes an attribute (ReduceSum before 13, the others through
/// 17) or an optional constant input (ReduceSum 13+). No axes means every
/// axis, unless noop_with_empty_axes makes the node an identity.
LogicalResult legalizeReduce(ONNXNode node, PatternRewriter &rewriter,
                             ReduceKind kind, bool axesInput) {
  SmallVector<int64_t> axes;
  if (axesInput) {
    if (Value input = node.input(1)) {
      std::optional<SmallVector<int64_t>> values = getConstantInts(input);
      if (!values)
        return rewriter.notifyMatchFailure(node.getOp(), "axes not constant");
      axes = *values;
    }
  } else if (auto values = node.getInts("axes")) {
    axes = *values;
  }
  if (axes.empty() && node.getInt("noop_with_empty_axes", 0)) {
    if (node.input(0).getType() != node.resultType())
      return failure();
    replaceNodeWith(node, node.input(0), rewriter);
    return success();
  }
  UnitAttr keepdims =
      node.getInt("keepdims", 1) ? rewriter.getUnitAttr() : UnitAttr();
  return replaceNode<ReduceOp>(
      node, rewriter, ReduceKindAttr::get(rewriter.getContext(), kind),
      node.input(0), rewriter.getDenseI64ArrayAttr(axes), keepdims,
      DeviceAttr());
}

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  const std::pair<const char *, ReduceKind> kinds[] = {
      {"ReduceMean", ReduceKind::Mean},
      {"ReduceMax", ReduceKind::Max},
      {"ReduceMin", ReduceKind::Min},
      {"ReduceProd", ReduceKind::Prod},
      {"ReduceL1", ReduceKind::L1},
      {"ReduceL2", ReduceKind::L2},
      {"ReduceLogSum", ReduceKind::LogSum},
      {"ReduceLogSumExp", ReduceKind::LogSumExp},
      {"ReduceSumSquare", ReduceKind::SumSquare}};
  for (auto [name, kind] : kinds)
    addONNXPattern(patterns, name, kMinOpset, kMaxOpset,
                   [kind = kind](ONNXNode node, PatternRewriter &rewriter) {
                     return legalizeReduce(node, rewriter, kind, false);
                   });
  addONNXPattern(patterns, "ReduceSum", kMinOpset, 12,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeReduce(node, rewriter, ReduceKind::Sum,
                                         false);
                 });
  addONNXPattern(patterns, "ReduceSum", 13, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeReduce(node, rewriter, ReduceKind::Sum, true);
                 });
}

} // namespace heterps::hps
