//===- Indexing.cpp - Gather, scatter, non-zero, unique and NMS kernels ---===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

struct GatherCall : public OpRewritePattern<hps::GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::GatherOp gather,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::GatherOp>(
        rewriter, gather, gather.getType(), gather.getData(),
        gather.getIndices(), elementTypeOf(gather.getData()),
        shapeOf(gather.getData()), elementTypeOf(gather.getIndices()),
        shapeOf(gather.getIndices()),
        normalizeAxis(gather.getAxis(), rankOf(gather.getData())));
    return success();
  }
};

struct ScatterCall : public OpRewritePattern<hps::ScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::ScatterOp scatter,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::ScatterOp>(
        rewriter, scatter, scatter.getType(), scatter.getData(),
        scatter.getIndices(), scatter.getUpdates(),
        elementTypeOf(scatter.getData()), shapeOf(scatter.getData()),
        elementTypeOf(scatter.getIndices()), shapeOf(scatter.getIndices()),
        normalizeAxis(scatter.getAxis(), rankOf(scatter.getData())),
        sameEnumerator<hpsrt::ScatterReduction>(scatter.getReduction()));
    return success();
  }
};

struct NonZeroCall : public OpRewritePattern<hps::NonZeroOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::NonZeroOp nonZero,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::NonZeroOp>(
        rewriter, nonZero, nonZero.getIndices().getType(),
        nonZero.getCount().getType(), nonZero.getInput(),
        elementTypeOf(nonZero.getInput()), shapeOf(nonZero.getInput()));
    return success();
  }
};

/// The input as [outer, n, inner] around the unique axis.
struct UniqueCall : public OpRewritePattern<hps::UniqueOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::UniqueOp unique,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> dims = shapeOf(unique.getInput());
    int64_t axis = unique.getAxis();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i)
      outer *= dims[i];
    for (size_t i = axis + 1; i < dims.size(); ++i)
      inner *= dims[i];
    replaceWithKernel<hpsrt::UniqueOp>(
        rewriter, unique, unique->getResultTypes(), unique.getInput(),
        elementTypeOf(unique.getInput()), outer, dims[axis], inner,
        unique.getSorted());
    return success();
  }
};

struct NonMaxSuppressionCall
    : public OpRewritePattern<hps::NonMaxSuppressionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::NonMaxSuppressionOp nms,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> scores = shapeOf(nms.getScores());
    replaceWithKernel<hpsrt::NonMaxSuppressionOp>(
        rewriter, nms, nms.getSelected().getType(), nms.getCount().getType(),
        nms.getBoxes(), nms.getScores(), nms.getMaxPerClass(),
        nms.getIouThreshold(), nms.getScoreThreshold(), scores[0], scores[1],
        scores[2], nms.getCenterPointBox(), shapeOf(nms.getSelected())[0]);
    return success();
  }
};

} // namespace

void heterps::target::populateIndexingCallPatterns(
    RewritePatternSet &patterns) {
  patterns.add<GatherCall, ScatterCall, NonZeroCall, UniqueCall,
               NonMaxSuppressionCall>(patterns.getContext());
}
