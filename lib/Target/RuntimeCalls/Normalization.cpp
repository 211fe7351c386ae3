//===- Normalization.cpp - Batch norm, layer norm and softmax kernels -----===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

struct BatchNormCall : public OpRewritePattern<hps::BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::BatchNormOp>(
        rewriter, bn, bn.getType(), bn.getInput(), bn.getScale(), bn.getBias(),
        bn.getMean(), bn.getVariance(),
        TypeAttr::get(elementTypeOf(bn.getInput())),
        rewriter.getDenseI64ArrayAttr(shapeOf(bn.getInput())),
        f32Attr(bn.getContext(), bn.getEpsilon().convertToDouble()));
    return success();
  }
};

struct LayerNormCall : public OpRewritePattern<hps::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::LayerNormOp ln,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::LayerNormOp>(
        rewriter, ln, ln.getType(), ln.getInput(), ln.getScale(), ln.getBias(),
        TypeAttr::get(elementTypeOf(ln.getInput())),
        rewriter.getDenseI64ArrayAttr(shapeOf(ln.getInput())),
        rewriter.getI64IntegerAttr(
            normalizeAxis(ln.getAxis(), rankOf(ln.getInput()))),
        f32Attr(ln.getContext(), ln.getEpsilon().convertToDouble()),
        rewriter.getDenseI64ArrayAttr(shapeOf(ln.getScale())),
        rewriter.getBoolAttr(bool(ln.getBias())));
    return success();
  }
};

template <typename SoftmaxOp>
struct SoftmaxCall : public OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern<SoftmaxOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    constexpr bool log = std::is_same_v<SoftmaxOp, hps::LogSoftmaxOp>;
    Value x = softmax.getInput();
    replaceWithKernel<hpsrt::SoftmaxOp>(
        rewriter, softmax, softmax.getType(), x, elementTypeOf(x), shapeOf(x),
        normalizeAxis(softmax.getAxis(), rankOf(x)), log);
    return success();
  }
};

} // namespace

void heterps::target::populateNormalizationCallPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BatchNormCall, LayerNormCall, SoftmaxCall<hps::SoftmaxOp>,
               SoftmaxCall<hps::LogSoftmaxOp>>(patterns.getContext());
}
