//===- Pooling.cpp - MaxPool, AveragePool, global pools -------------------===//

#include "WindowAttrs.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Window pooling; ceil_mode and dilations exist from opset 10 (absent
/// attributes read as their defaults before that).
template <typename PoolOp>
LogicalResult legalizeWindowPool(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel)
    return rewriter.notifyMatchFailure(node.getOp(), "no kernel_shape");
  FailureOr<WindowAttrs> window = resolveWindow(node, *kernel);
  if (failed(window))
    return rewriter.notifyMatchFailure(node.getOp(), "unresolved padding");
  UnitAttr ceil =
      node.getInt("ceil_mode", 0) ? rewriter.getUnitAttr() : UnitAttr();
  auto common = [&](auto... extra) {
    return replaceNode<PoolOp>(node, rewriter, node.input(0),
                               rewriter.getDenseI64ArrayAttr(window->kernel),
                               rewriter.getDenseI64ArrayAttr(window->strides),
                               rewriter.getDenseI64ArrayAttr(window->pads),
                               rewriter.getDenseI64ArrayAttr(window->dilations),
                               ceil, extra..., DeviceAttr());
  };
  if constexpr (std::is_same_v<PoolOp, AvgPoolOp>) {
    UnitAttr includePad = node.getInt("count_include_pad", 0)
                              ? rewriter.getUnitAttr()
                              : UnitAttr();
    return common(includePad);
  } else {
    return common(); // A used Indices output makes replaceNode fail.
  }
}

template <typename PoolOp>
LogicalResult legalizeGlobalPool(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNode<PoolOp>(node, rewriter, node.input(0), DeviceAttr());
}

} // namespace

void populatePoolingPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "MaxPool", kMinOpset, 9,
                 legalizeWindowPool<MaxPoolOp>);
  addONNXPattern(patterns, "MaxPool", 10, kMaxOpset,
                 legalizeWindowPool<MaxPoolOp>);
  addONNXPattern(patterns, "AveragePool", kMinOpset, 9,
                 legalizeWindowPool<AvgPoolOp>);
  addONNXPattern(patterns, "AveragePool", 10, kMaxOpset,
                 legalizeWindowPool<AvgPoolOp>);
  addONNXPattern(patterns, "GlobalMaxPool", kMinOpset, kMaxOpset,
                 legalizeGlobalPool<GlobalMaxPoolOp>);
  addONNXPattern(patterns, "GlobalAveragePool", kMinOpset, kMaxOpset,
                 legalizeGlobalPool<GlobalAvgPoolOp>);
}

} // namespace heterps::hps
