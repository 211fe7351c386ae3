//===- Convolution.cpp - Conv ---------------------------------------------===//
//
// Conv-1 and Conv-11 share attributes (auto_pad, dilations, group,
// kernel_shape, pads, strides) and inputs (X, W, optional B); Conv-11 only
// restated how SAME_* pads, which resolveWindow implements.
//
//===----------------------------------------------------------------------===//

#include "WindowAttrs.h"

using namespace mlir;

namespace heterps::hps {
namespace {

LogicalResult legalizeConv(ONNXNode node, PatternRewriter &rewriter) {
  auto filter = rankedShape(node.input(1));
  if (!filter || filter->size() < 3)
    return fail(node, rewriter, "unranked filter");
  // kernel_shape is optional: absent, the filter's spatial extents hold it.
  SmallVector<int64_t> kernel(filter->drop_front(2));
  if (std::optional<SmallVector<int64_t>> given =
          node.getInts("kernel_shape")) {
    if (given->size() != kernel.size())
      return fail(node, rewriter, "kernel_shape has the wrong arity");
    for (auto [k, g] : llvm::zip(kernel, *given)) {
      if (k != ShapedType::kDynamic && k != g)
        return fail(node, rewriter, "kernel_shape differs from the filter");
      k = g;
    }
  }
  FailureOr<WindowAttrs> window = resolveWindow(node, kernel);
  if (failed(window))
    return fail(node, rewriter, "unresolved window attributes");
  return replaceNodeChecked<ConvOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getDenseI64ArrayAttr(window->strides),
      rewriter.getDenseI64ArrayAttr(window->pads),
      rewriter.getDenseI64ArrayAttr(window->dilations),
      rewriter.getI64IntegerAttr(node.getInt("group", 1)), DeviceAttr());
}

} // namespace

void populateConvolutionPatterns(RewritePatternSet &patterns) {
  static constexpr StringRef kConvAttrs[] = {
      "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
  addONNXPattern(patterns, "Conv", kMinOpset, 10, kConvAttrs, legalizeConv);
  addONNXPattern(patterns, "Conv", 11, kMaxOpset, kConvAttrs, legalizeConv);
}

} // namespace heterps::hps
