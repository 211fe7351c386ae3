//===- Convolution.cpp - Conv ---------------------------------------------===//

#include "WindowAttrs.h"

using namespace mlir;

namespace heterps::hps {
namespace {

LogicalResult legalizeConv(ONNXNode node, PatternRewriter &rewriter) {
  auto filter = rankedShape(node.input(1));
  if (!filter || filter->size() < 3)
    return rewriter.notifyMatchFailure(node.getOp(), "unranked filter");
  // kernel_shape is optional: the filter's spatial extents are the truth.
  SmallVector<int64_t> kernel(filter->drop_front(2));
  if (auto given = node.getInts("kernel_shape"); given && *given != kernel)
    return rewriter.notifyMatchFailure(node.getOp(),
                                       "kernel_shape differs from filter");
  FailureOr<WindowAttrs> window = resolveWindow(node, kernel);
  if (failed(window))
    return rewriter.notifyMatchFailure(node.getOp(), "unresolved padding");
  return replaceNode<ConvOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getDenseI64ArrayAttr(window->strides),
      rewriter.getDenseI64ArrayAttr(window->pads),
      rewriter.getDenseI64ArrayAttr(window->dilations),
      rewriter.getI64IntegerAttr(node.getInt("group", 1)), DeviceAttr());
}

} // namespace

void populateConvolutionPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "Conv", kMinOpset, 10, legalizeConv);
  addONNXPattern(patterns, "Conv", 11, kMaxOpset, legalizeConv);
}

} // namespace heterps::hps
