//===- DataMovement.cpp - Concat, split, slice, transpose, expand, pad ----===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

struct ConcatCall : public OpRewritePattern<hps::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    SmallVector<Attribute> shapes;
    for (Value input : concat.getInputs())
      shapes.push_back(rewriter.getDenseI64ArrayAttr(shapeOf(input)));
    replaceWithKernel<hpsrt::ConcatOp>(
        rewriter, concat, concat.getType(), concat.getInputs(),
        elementTypeOf(concat.getResult()), rewriter.getArrayAttr(shapes),
        normalizeAxis(concat.getAxis(), rankOf(concat.getResult())));
    return success();
  }
};

struct SplitCall : public OpRewritePattern<hps::SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::SplitOp split,
                                PatternRewriter &rewriter) const override {
    Value x = split.getInput();
    replaceWithKernel<hpsrt::SplitOp>(rewriter, split, split.getResultTypes(),
                                      x, elementTypeOf(x), shapeOf(x),
                                      normalizeAxis(split.getAxis(), rankOf(x)),
                                      split.getSizes());
    return success();
  }
};

/// ONNX's starts clamped per axis as the runtime reads them.
struct SliceCall : public OpRewritePattern<hps::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::SliceOp slice,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> in = shapeOf(slice.getInput());
    int64_t rank = in.size();
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    for (auto [i, axisAttr] : llvm::enumerate(slice.getAxes())) {
      int64_t axis = normalizeAxis(axisAttr, rank);
      if (axis < 0 || axis >= rank)
        return loweringError(slice, "slice axis out of range");
      int64_t dim = in[axis];
      int64_t step = i < slice.getSteps().size() ? slice.getSteps()[i] : 1;
      int64_t start = slice.getStarts()[i];
      if (start < 0)
        start += dim;
      start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                       : std::clamp<int64_t>(start, 0, dim - 1);
      starts[axis] = std::max<int64_t>(start, 0);
      steps[axis] = step;
    }
    replaceWithKernel<hpsrt::SliceOp>(
        rewriter, slice, slice.getType(), slice.getInput(),
        elementTypeOf(slice.getInput()), in, starts, steps,
        shapeOf(slice.getResult()));
    return success();
  }
};

struct TransposeCall : public OpRewritePattern<hps::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    int64_t rank = rankOf(transpose.getInput());
    SmallVector<int64_t> perm(transpose.getPerm().begin(),
                              transpose.getPerm().end());
    if (perm.empty())
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    replaceWithKernel<hpsrt::TransposeOp>(
        rewriter, transpose, transpose.getType(), transpose.getInput(),
        elementTypeOf(transpose.getInput()), shapeOf(transpose.getInput()),
        perm);
    return success();
  }
};

struct ExpandCall : public OpRewritePattern<hps::ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::ExpandOp expand,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::ExpandOp>(
        rewriter, expand, expand.getType(), expand.getInput(),
        elementTypeOf(expand.getInput()), shapeOf(expand.getInput()),
        shapeOf(expand.getResult()));
    return success();
  }
};

struct PadCall : public OpRewritePattern<hps::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::PadOp pad,
                                PatternRewriter &rewriter) const override {
    double value = 0;
    if (auto f = dyn_cast<FloatAttr>(pad.getValue()))
      value = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(pad.getValue()))
      value = static_cast<double>(i.getValue().getSExtValue());
    replaceWithKernel<hpsrt::PadOp>(
        rewriter, pad, pad.getType(), pad.getInput(),
        elementTypeOf(pad.getInput()), shapeOf(pad.getInput()), pad.getPads(),
        sameEnumerator<hpsrt::PadMode>(pad.getMode()), APFloat(value));
    return success();
  }
};

} // namespace

void heterps::target::populateDataMovementCallPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConcatCall, SplitCall, SliceCall, TransposeCall, ExpandCall,
               PadCall>(patterns.getContext());
}
