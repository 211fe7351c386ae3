//===- Recurrent.cpp - RNN, GRU and LSTM kernels --------------------------===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

/// The RecurrentParams of an hps.recurrence or its adjoint; `input` > 0:
/// the kernel projects an input of that size itself.
template <typename OpTy>
hpsrt::RecurrentParamsAttr recurrentParams(OpTy rec, int64_t input = 0) {
  MLIRContext *context = rec.getContext();
  Builder attrs(context);
  auto dims = shapeOf(rec.getProjected());
  int64_t hidden = shapeOf(rec.getRecurrence())[1];
  hpsrt::RecurrentCell cell = rec.getCell() == "rnn" ? hpsrt::RecurrentCell::RNN
                              : rec.getCell() == "gru"
                                  ? hpsrt::RecurrentCell::GRU
                                  : hpsrt::RecurrentCell::LSTM;
  // The runtime's defaults where ONNX names fewer.
  SmallVector<Attribute> activations = {
      hpsrt::UnaryKindAttr::get(context, hpsrt::UnaryKind::Sigmoid),
      hpsrt::UnaryKindAttr::get(context, hpsrt::UnaryKind::Tanh),
      hpsrt::UnaryKindAttr::get(context, hpsrt::UnaryKind::Tanh)};
  // The verifier holds at most three, each Sigmoid, Tanh or Relu.
  for (auto [i, name] : llvm::enumerate(
           rec.getActivations().template getAsValueRange<StringAttr>()))
    activations[i] =
        hpsrt::UnaryKindAttr::get(context, *hpsrt::symbolizeUnaryKind(name));
  std::optional<APFloat> clip = rec.getClip();
  return hpsrt::RecurrentParamsAttr::get(
      context, hpsrt::RecurrentCellAttr::get(context, cell),
      attrs.getI64IntegerAttr(dims[0]), attrs.getI64IntegerAttr(dims[1]),
      attrs.getI64IntegerAttr(hidden), attrs.getBoolAttr(rec.getReverse()),
      attrs.getArrayAttr(activations), attrs.getBoolAttr(clip.has_value()),
      f32Attr(context, clip ? clip->convertToDouble() : 0.0),
      attrs.getBoolAttr(rec.getLinearBeforeReset()),
      /*hasRecurrentBias=*/attrs.getBoolAttr(true),
      attrs.getBoolAttr(bool(rec.getLengths())),
      attrs.getBoolAttr(bool(rec.getPeepholes())),
      attrs.getI64IntegerAttr(input));
}

/// `rec` as one kernel op in `replaced`'s place; with `projection` (an
/// hpsrt.projected_recurrence's gemm) the kernel reads X and gets W and Wb.
void lowerRecurrence(hps::RecurrenceOp rec, hps::GemmOp projection,
                     Operation *replaced, PatternRewriter &rewriter) {
  Value x = projection ? projection.getA() : rec.getProjected();
  int64_t input = projection ? shapeOf(projection.getA()).back() : 0;
  Value cLast = rec.getCLast();
  rewriter.setInsertionPoint(replaced);
  auto kernel = rewriter.create<hpsrt::RecurrentOp>(
      rec.getLoc(), rec.getY().getType(), rec.getHLast().getType(),
      cLast ? cLast.getType() : Type(), x, rec.getRecurrence(),
      rec.getRecurrentBias(), rec.getLengths(), rec.getInitialH(),
      rec.getInitialC(), rec.getPeepholes(),
      projection ? projection.getB() : Value(),
      projection ? projection.getC() : Value(), recurrentParams(rec, input));
  replaceWithKernel(rewriter, replaced, kernel);
}

struct RecurrenceCall : public OpRewritePattern<hps::RecurrenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::RecurrenceOp rec,
                                PatternRewriter &rewriter) const override {
    lowerRecurrence(rec, nullptr, rec, rewriter);
    return success();
  }
};

/// The body is the projection gemm, views of it, and the recurrence; it
/// yields the recurrence's results.
struct ProjectedRecurrenceCall
    : public OpRewritePattern<hpsrt::ProjectedRecurrenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hpsrt::ProjectedRecurrenceOp fusion,
                                PatternRewriter &rewriter) const override {
    auto body = fusion.getBody().front().without_terminator();
    auto gemm = dyn_cast<hps::GemmOp>(*body.begin());
    auto rec = dyn_cast<hps::RecurrenceOp>(*std::prev(body.end()));
    if (!gemm || !rec)
      return loweringError(fusion, "a projected recurrence needs a gemm first "
                                   "and a recurrence last");
    lowerRecurrence(rec, gemm, fusion, rewriter);
    return success();
  }
};

struct RecurrenceGradCall : public OpRewritePattern<hps::RecurrenceGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::RecurrenceGradOp rec,
                                PatternRewriter &rewriter) const override {
    Value dc0 = rec.getGradInitialC(), dPeepholes = rec.getGradPeepholes();
    replaceWithKernel<hpsrt::RecurrentGradOp>(
        rewriter, rec, rec.getGradProjected().getType(),
        rec.getGradRecurrence().getType(), rec.getGradRecurrentBias().getType(),
        rec.getGradInitialH().getType(), dc0 ? dc0.getType() : Type(),
        dPeepholes ? dPeepholes.getType() : Type(), rec.getProjected(),
        rec.getRecurrence(), rec.getRecurrentBias(), rec.getLengths(),
        rec.getInitialH(), rec.getInitialC(), rec.getPeepholes(), rec.getY(),
        rec.getGradY(), rec.getGradHLast(), rec.getGradCLast(),
        recurrentParams(rec));
    return success();
  }
};

} // namespace

void heterps::target::populateRecurrentCallPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RecurrenceCall, ProjectedRecurrenceCall, RecurrenceGradCall>(
      patterns.getContext());
}
