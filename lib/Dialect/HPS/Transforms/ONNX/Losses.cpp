//===- Losses.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ----===//
//
// ONNX's loss ops, decomposed into ops with kernels and gradient rules: the
// picked log-probabilities are one GatherElements-style gather along the
// class axis, weights one gather of the weight vector, ignore_index a
// select, and the reduction a sum (over the summed weights for "mean").
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace heterps::hps {
namespace {

enum class LossReduction { None, Sum, Mean, Unknown };

/// The node's `reduction` attribute (default "mean").
LossReduction lossReduction(ONNXNode node) {
  return llvm::StringSwitch<LossReduction>(node.getString("reduction", "mean"))
      .Case("none", LossReduction::None)
      .Case("sum", LossReduction::Sum)
      .Case("mean", LossReduction::Mean)
      .Default(LossReduction::Unknown);
}

/// Why the negative log-likelihood of a [N, C, d...] `probType` at an
/// [N, d...] target with an optional [C] weight cannot be built, or null.
const char *likelihoodProblem(ONNXNode node, Type probType, Type targetType,
                              Value weight) {
  auto prob = dyn_cast<RankedTensorType>(probType);
  auto target = dyn_cast<RankedTensorType>(targetType);
  if (!prob || !target || !prob.hasStaticShape() || !target.hasStaticShape() ||
      prob.getRank() < 2 || !isa<FloatType>(prob.getElementType()))
    return "needs a static float [N, C, ...] input";
  ArrayRef<int64_t> probShape = prob.getShape();
  SmallVector<int64_t> expected = {probShape[0]};
  llvm::append_range(expected, probShape.drop_front(2));
  if (target.getShape() != ArrayRef<int64_t>(expected))
    return "target must be [N, d1, ...]";
  if (weight) {
    auto weightType = dyn_cast<RankedTensorType>(weight.getType());
    if (!weightType ||
        weightType.getShape() != ArrayRef<int64_t>{probShape[1]} ||
        weightType.getElementType() != prob.getElementType())
      return "weight must be [C] of the input's type";
  }
  LossReduction reduction = lossReduction(node);
  if (reduction == LossReduction::Unknown)
    return "reduction must be none, sum or mean";
  Type lossType =
      reduction == LossReduction::None
          ? RankedTensorType::get(target.getShape(), prob.getElementType())
          : RankedTensorType::get({}, prob.getElementType());
  if (!canReplaceWithType(node, lossType))
    return "the loss's type differs from the node's";
  SmallVector<int64_t> pickShape(target.getShape());
  pickShape.insert(pickShape.begin() + 1, 1);
  return gatherElementsProblem(
      prob, RankedTensorType::get(pickShape, target.getElementType()), 1);
}

/// loss[n, d...] = -logProb[n, target[n, d...], d...] * weight[target] (0
/// where target == ignore_index), reduced as the node asks. The operands
/// must have passed likelihoodProblem.
Value negativeLogLikelihood(ONNXNode node, PatternRewriter &rewriter,
                            Value logProb, Value target, Value weight) {
  auto probType = cast<RankedTensorType>(logProb.getType());
  auto targetType = cast<RankedTensorType>(target.getType());
  LossReduction reduction = lossReduction(node);
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type element = probType.getElementType();
  Type targetElement = targetType.getElementType();
  auto lossType = RankedTensorType::get(targetType.getShape(), element);
  auto maskType =
      RankedTensorType::get(targetType.getShape(), rewriter.getI1Type());
  auto scalar = [&](Type type, double value) {
    return scalarConstant(rewriter, loc, type, value);
  };

  // An ignored target may hold any value, even one outside [0, C): it
  // reads class 0 and is masked out afterwards.
  Value ignored;
  if (node.hasAttr("ignore_index")) {
    double ignoreIndex = static_cast<double>(node.getInt("ignore_index", 0));
    ignored = rewriter.create<EqualOp>(
        loc, maskType, target, scalar(targetElement, ignoreIndex), device);
    target = rewriter.create<WhereOp>(loc, targetType, ignored,
                                      scalar(targetElement, 0), target, device);
  }
  SmallVector<int64_t> pickShape(targetType.getShape());
  pickShape.insert(pickShape.begin() + 1, 1);
  FailureOr<Value> picked = gatherElementsAlong(
      node, rewriter, logProb, reshapeTo(node, rewriter, target, pickShape), 1);
  assert(succeeded(picked) && "checked by likelihoodProblem");
  Value loss = reshapeTo(node, rewriter, *picked, targetType.getShape());

  Value weights;
  if (weight)
    weights = rewriter.create<GatherOp>(loc, lossType, weight, target,
                                        rewriter.getI64IntegerAttr(0), device);
  if (ignored)
    weights = rewriter.create<WhereOp>(
        loc, lossType, ignored, scalar(element, 0),
        weights ? weights : scalar(element, 1), device);
  if (weights)
    loss = rewriter.create<MulOp>(loc, lossType, loss, weights, device);
  loss = rewriter.create<NegOp>(loc, lossType, loss, device);
  if (reduction == LossReduction::None)
    return loss;

  auto total = [&](Value value, ReduceKind kind) -> Value {
    return rewriter.create<ReduceOp>(
        loc, RankedTensorType::get({}, element),
        ReduceKindAttr::get(rewriter.getContext(), kind), value,
        rewriter.getDenseI64ArrayAttr({}), UnitAttr(), device);
  };
  if (reduction == LossReduction::Sum || !weights)
    return total(loss, reduction == LossReduction::Sum ? ReduceKind::Sum
                                                       : ReduceKind::Mean);
  // The weighted mean divides by the weights actually applied.
  auto scalarType = RankedTensorType::get({}, element);
  Value lossSum = total(loss, ReduceKind::Sum);
  Value weightSum = total(weights, ReduceKind::Sum);
  return rewriter.create<DivOp>(loc, scalarType, lossSum, weightSum, device)
      .getResult();
}

/// NegativeLogLikelihoodLoss (12-17): input [N, C, d...] of
/// log-probabilities, target [N, d...], optional weight [C].
/// SoftmaxCrossEntropyLoss (12-17, `fromScores`): the same of
/// log_softmax(scores) along the class axis 1; its optional second output
/// is that log_softmax.
LogicalResult legalizeLikelihoodLoss(ONNXNode node, PatternRewriter &rewriter,
                                     bool fromScores) {
  Value input = node.input(0), target = node.input(1), weight = node.input(2);
  if (const char *problem =
          likelihoodProblem(node, input.getType(), target.getType(), weight))
    return fail(node, rewriter, problem);
  bool logProbRead = fromScores && node.isResultUsed(1);
  if (logProbRead && node.resultType(1) != input.getType())
    return fail(node, rewriter, "log_prob of an unexpected type");
  if (fromScores)
    input = rewriter.create<LogSoftmaxOp>(node.getLoc(), input.getType(), input,
                                          rewriter.getI64IntegerAttr(1),
                                          node.getOp().getDeviceAttr());
  Value loss = negativeLogLikelihood(node, rewriter, input, target, weight);
  if (logProbRead)
    rewriter.replaceAllUsesWith(node.result(1), input);
  return replaceNodeWithCompatible(node, loss, rewriter);
}

} // namespace

void populateLossPatterns(RewritePatternSet &patterns) {
  for (bool fromScores : {false, true})
    addONNXPattern(patterns,
                   fromScores ? "SoftmaxCrossEntropyLoss"
                              : "NegativeLogLikelihoodLoss",
                   12, kMaxOpset, {"ignore_index", "reduction"},
                   [fromScores](ONNXNode node, PatternRewriter &rewriter) {
                     return legalizeLikelihoodLoss(node, rewriter, fromScores);
                   });
}

} // namespace heterps::hps
