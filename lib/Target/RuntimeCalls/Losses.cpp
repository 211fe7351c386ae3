//===- Losses.cpp - Training loss kernels ---------------------------------===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

/// hps.loss -> Loss::run, hps.loss_grad -> Loss::runGradient: one kernel
/// class, the prediction as [n, m].
template <typename LossOp, typename KernelOp>
struct LossCall : public OpRewritePattern<LossOp> {
  using OpRewritePattern<LossOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(LossOp loss,
                                PatternRewriter &rewriter) const override {
    Value prediction = loss.getPrediction();
    int64_t n = shapeOf(prediction)[0];
    int64_t m = numElementsOf(prediction) / std::max<int64_t>(n, 1);
    replaceWithKernel<KernelOp>(rewriter, loss, loss.getType(), prediction,
                                loss.getLabel(), elementTypeOf(prediction),
                                sameEnumerator<hpsrt::LossKind>(loss.getKind()),
                                loss.getFromLogits(), n, m);
    return success();
  }
};

} // namespace

void heterps::target::populateLossCallPatterns(RewritePatternSet &patterns) {
  patterns.add<LossCall<hps::LossOp, hpsrt::LossOp>,
               LossCall<hps::LossGradOp, hpsrt::LossGradOp>>(
      patterns.getContext());
}
