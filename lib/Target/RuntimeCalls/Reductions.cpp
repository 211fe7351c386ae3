//===- Reductions.cpp - Pooling and reduction kernels ---------------------===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

template <typename PoolOp> struct PoolCall : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(PoolOp pool,
                                PatternRewriter &rewriter) const override {
    Value x = pool.getInput();
    size_t n = rankOf(x) - 2;
    SmallVector<int64_t> pads(pool.getPads().begin(), pool.getPads().end());
    if (pads.size() != 2 * n)
      pads.assign(2 * n, 0);
    hpsrt::PoolKind kind = hpsrt::PoolKind::Max;
    if constexpr (std::is_same_v<PoolOp, hps::AvgPoolOp>)
      kind = pool.getCountIncludePad() ? hpsrt::PoolKind::AvgIncludePad
                                       : hpsrt::PoolKind::AvgExcludePad;
    replaceWithKernel<hpsrt::PoolOp>(
        rewriter, pool, pool.getType(), x, elementTypeOf(x), kind, shapeOf(x),
        shapeOf(pool.getResult()), pool.getKernelShape(),
        perAxis(pool.getStrides(), n, 1), perAxis(pool.getDilations(), n, 1),
        ArrayRef(pads).take_front(n), ArrayRef(pads).drop_front(n));
    return success();
  }
};

template <typename PoolOp>
struct GlobalPoolCall : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(PoolOp pool,
                                PatternRewriter &rewriter) const override {
    constexpr bool max = std::is_same_v<PoolOp, hps::GlobalMaxPoolOp>;
    replaceWithKernel<hpsrt::GlobalPoolOp>(
        rewriter, pool, pool.getType(), pool.getInput(),
        elementTypeOf(pool.getInput()), max, shapeOf(pool.getInput()));
    return success();
  }
};

struct ReduceCall : public OpRewritePattern<hps::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::ReduceOp reduce,
                                PatternRewriter &rewriter) const override {
    int64_t rank = rankOf(reduce.getInput());
    std::vector<int64_t> axes;
    for (int64_t axis : reduce.getAxes())
      axes.push_back(normalizeAxis(axis, rank));
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    llvm::sort(axes);
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    replaceWithKernel<hpsrt::ReduceOp>(
        rewriter, reduce, reduce.getType(), reduce.getInput(),
        elementTypeOf(reduce.getInput()),
        sameEnumerator<hpsrt::ReduceKind>(reduce.getKind()),
        shapeOf(reduce.getInput()), axes, shapeOf(reduce.getResult()));
    return success();
  }
};

} // namespace

void heterps::target::populateReductionCallPatterns(
    RewritePatternSet &patterns) {
  patterns.add<PoolCall<hps::MaxPoolOp>, PoolCall<hps::AvgPoolOp>,
               GlobalPoolCall<hps::GlobalMaxPoolOp>,
               GlobalPoolCall<hps::GlobalAvgPoolOp>, ReduceCall>(
      patterns.getContext());
}
