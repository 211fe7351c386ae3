//===- Pooling.cpp - MaxPool, AveragePool, global pools -------------------===//
//
// Schema history (attributes beyond auto_pad, kernel_shape, pads, strides):
//   MaxPool-1 (7): none          MaxPool-8: storage_order, optional Indices
//   MaxPool-10: ceil_mode, dilations    MaxPool-11/12: SAME_* restated, int8
//   AveragePool-7: count_include_pad    AveragePool-10: ceil_mode
//   AveragePool-11: SAME_* restated
// storage_order only lays out Indices, which must be unused to legalize.
//
//===----------------------------------------------------------------------===//

#include "WindowAttrs.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Window pooling with every attribute the node's opset defines; absent
/// ones take their ONNX defaults (floor mode, dilation 1, pads excluded
/// from averages).
template <typename PoolOp>
LogicalResult legalizeWindowPool(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel || llvm::any_of(*kernel, [](int64_t k) { return k < 1; }))
    return fail(node, rewriter, "kernel_shape missing or invalid");
  FailureOr<WindowAttrs> window = resolveWindow(node, *kernel);
  if (failed(window))
    return fail(node, rewriter, "unresolved window attributes");
  std::optional<bool> ceil = getFlag(node, "ceil_mode");
  if (!ceil || !getFlag(node, "storage_order"))
    return fail(node, rewriter, "unknown ceil_mode or storage_order");
  auto create = [&](auto... extra) {
    // A used Indices output makes replaceNode fail.
    return replaceNodeChecked<PoolOp>(
        node, rewriter, node.input(0),
        rewriter.getDenseI64ArrayAttr(window->kernel),
        rewriter.getDenseI64ArrayAttr(window->strides),
        rewriter.getDenseI64ArrayAttr(window->pads),
        rewriter.getDenseI64ArrayAttr(window->dilations),
        unitIf(rewriter, *ceil), extra..., DeviceAttr());
  };
  if constexpr (std::is_same_v<PoolOp, AvgPoolOp>) {
    std::optional<bool> includePad = getFlag(node, "count_include_pad");
    if (!includePad)
      return fail(node, rewriter, "unknown count_include_pad");
    return create(unitIf(rewriter, *includePad));
  } else {
    return create();
  }
}

template <typename PoolOp>
LogicalResult legalizeGlobalPool(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNodeChecked<PoolOp>(node, rewriter, node.input(0),
                                    DeviceAttr());
}

} // namespace

void populatePoolingPatterns(RewritePatternSet &patterns) {
  auto maxPool = legalizeWindowPool<MaxPoolOp>;
  auto avgPool = legalizeWindowPool<AvgPoolOp>;
  addONNXPattern(patterns, "MaxPool", kMinOpset, 7,
                 {"auto_pad", "kernel_shape", "pads", "strides"}, maxPool);
  addONNXPattern(
      patterns, "MaxPool", 8, 9,
      {"auto_pad", "kernel_shape", "pads", "storage_order", "strides"},
      maxPool);
  static constexpr StringRef kMaxPool10[] = {
      "auto_pad", "ceil_mode",     "dilations", "kernel_shape",
      "pads",     "storage_order", "strides"};
  addONNXPattern(patterns, "MaxPool", 10, 10, kMaxPool10, maxPool);
  addONNXPattern(patterns, "MaxPool", 11, kMaxOpset, kMaxPool10, maxPool);

  addONNXPattern(
      patterns, "AveragePool", kMinOpset, 9,
      {"auto_pad", "count_include_pad", "kernel_shape", "pads", "strides"},
      avgPool);
  static constexpr StringRef kAvgPool10[] = {
      "auto_pad",     "ceil_mode", "count_include_pad",
      "kernel_shape", "pads",      "strides"};
  addONNXPattern(patterns, "AveragePool", 10, 10, kAvgPool10, avgPool);
  addONNXPattern(patterns, "AveragePool", 11, kMaxOpset, kAvgPool10, avgPool);

  addONNXPattern(patterns, "GlobalMaxPool", kMinOpset, kMaxOpset, {},
                 legalizeGlobalPool<GlobalMaxPoolOp>);
  addONNXPattern(patterns, "GlobalAveragePool", kMinOpset, kMaxOpset, {},
                 legalizeGlobalPool<GlobalAvgPoolOp>);
}

} // namespace heterps::hps
