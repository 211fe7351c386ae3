//===- Elementwise.cpp - Unary, binary, variadic, Where, Cast, Clip -------===//

#include "../ONNXPattern.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include <limits>

using namespace mlir;

namespace heterps::hps {
namespace {

/// A unary op whose only operand is the node's first input.
template <typename OpTy>
void addUnary(RewritePatternSet &patterns, StringRef opType, int64_t minOpset,
              int64_t maxOpset = kMaxOpset) {
  addONNXPattern(patterns, opType, minOpset, maxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return replaceNode<OpTy>(node, rewriter, node.input(0),
                                            DeviceAttr());
                 });
}

/// A unary op with float attributes read from the node with their ONNX
/// defaults, in declaration order.
template <typename OpTy>
void addUnaryWithAttrs(RewritePatternSet &patterns, StringRef opType,
                       int64_t minOpset,
                       SmallVector<std::pair<std::string, float>> attrs) {
  addONNXPattern(
      patterns, opType, minOpset, kMaxOpset,
      [attrs](ONNXNode node, PatternRewriter &rewriter) -> LogicalResult {
        for (unsigned i = 1; i < node.getOp().getNumResults(); ++i)
          if (node.isResultUsed(i))
            return failure();
        OperationState state(node.getLoc(), OpTy::getOperationName());
        state.addOperands(node.input(0));
        state.addTypes(node.resultType());
        auto op = cast<OpTy>(rewriter.create(state));
        for (const auto &[name, fallback] : attrs)
          op->setAttr(name,
                      rewriter.getF32FloatAttr(node.getFloat(name, fallback)));
        if (DeviceAttr device = node.getOp().getDeviceAttr())
          op.setDeviceAttr(device);
        replaceNodeWith(node, op, rewriter);
        return success();
      });
}

template <typename OpTy>
void addBinary(RewritePatternSet &patterns, StringRef opType,
               int64_t minOpset) {
  addONNXPattern(patterns, opType, minOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return replaceNode<OpTy>(node, rewriter, node.input(0),
                                            node.input(1), DeviceAttr());
                 });
}

/// The broadcast type of two operands (unranked if either is).
Type broadcastType(Value lhs, Value rhs, Type element) {
  auto a = rankedShape(lhs), b = rankedShape(rhs);
  if (a && b)
    if (auto shape = shapes::broadcast(*a, *b))
      return RankedTensorType::get(*shape, element);
  return UnrankedTensorType::get(element);
}

/// Max, Min, Sum (and Mean): a left-to-right chain of broadcasting binary
/// ops; the node's own result type ends the chain.
template <typename OpTy>
LogicalResult chainVariadic(ONNXNode node, PatternRewriter &rewriter,
                            bool divideByCount) {
  unsigned count = node.numInputs();
  if (count == 0 || !node.input(0))
    return failure();
  Type resultType = node.resultType();
  Type element = cast<ShapedType>(resultType).getElementType();
  if (divideByCount && !isa<FloatType>(element))
    return rewriter.notifyMatchFailure(node.getOp(), "integer Mean");
  if (count == 1 && !divideByCount) {
    if (node.input(0).getType() != resultType)
      return failure();
    replaceNodeWith(node, node.input(0), rewriter);
    return success();
  }
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value acc = node.input(0);
  for (unsigned i = 1; i < count; ++i) {
    Type type = (i + 1 == count && !divideByCount)
                    ? resultType
                    : broadcastType(acc, node.input(i), element);
    acc =
        rewriter.create<OpTy>(node.getLoc(), type, acc, node.input(i), device);
  }
  if (divideByCount) {
    auto scalar = RankedTensorType::get({}, element);
    Value n = rewriter.create<ConstantOp>(
        node.getLoc(),
        DenseElementsAttr::get(scalar, FloatAttr::get(element, count)));
    acc = rewriter.create<DivOp>(node.getLoc(), resultType, acc, n, device);
  }
  replaceNodeWith(node, acc, rewriter);
  return success();
}

/// Clip bounds: attributes before opset 11, optional constant inputs after.
LogicalResult legalizeClip(ONNXNode node, PatternRewriter &rewriter) {
  FloatAttr min, max;
  if (node.getOpset() < 11) {
    float lowest = std::numeric_limits<float>::lowest();
    float highest = std::numeric_limits<float>::max();
    min = rewriter.getF64FloatAttr(node.getFloat("min", lowest));
    max = rewriter.getF64FloatAttr(node.getFloat("max", highest));
  } else {
    for (auto [index, bound] : {std::pair<unsigned, FloatAttr *>{1, &min},
                                std::pair<unsigned, FloatAttr *>{2, &max}}) {
      Value input = node.input(index);
      if (!input)
        continue; // A missing bound is open.
      std::optional<double> value = getConstantScalar(input);
      if (!value)
        return rewriter.notifyMatchFailure(node.getOp(),
                                           "bound is not a constant");
      *bound = rewriter.getF64FloatAttr(*value);
    }
  }
  return replaceNode<ClipOp>(node, rewriter, node.input(0), min, max,
                             DeviceAttr());
}

} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns) {
  addUnary<ReluOp>(patterns, "Relu", kMinOpset);
  addUnary<SigmoidOp>(patterns, "Sigmoid", kMinOpset);
  addUnary<TanhOp>(patterns, "Tanh", kMinOpset);
  addUnary<ExpOp>(patterns, "Exp", kMinOpset);
  addUnary<LogOp>(patterns, "Log", kMinOpset);
  addUnary<SqrtOp>(patterns, "Sqrt", kMinOpset);
  addUnary<AbsOp>(patterns, "Abs", kMinOpset);
  addUnary<NegOp>(patterns, "Neg", kMinOpset);
  addUnary<ReciprocalOp>(patterns, "Reciprocal", kMinOpset);
  addUnary<FloorOp>(patterns, "Floor", kMinOpset);
  addUnary<CeilOp>(patterns, "Ceil", kMinOpset);
  addUnary<SinOp>(patterns, "Sin", kMinOpset);
  addUnary<CosOp>(patterns, "Cos", kMinOpset);
  addUnary<SoftplusOp>(patterns, "Softplus", kMinOpset);
  addUnary<SoftsignOp>(patterns, "Softsign", kMinOpset);
  addUnary<NotOp>(patterns, "Not", kMinOpset);
  addUnary<ErfOp>(patterns, "Erf", 9);
  addUnary<SignOp>(patterns, "Sign", 9);
  addUnary<RoundOp>(patterns, "Round", 11);
  addUnary<HardSwishOp>(patterns, "HardSwish", 14);
  addUnaryWithAttrs<LeakyReluOp>(patterns, "LeakyRelu", kMinOpset,
                                 {{"alpha", 0.01f}});
  addUnaryWithAttrs<EluOp>(patterns, "Elu", kMinOpset, {{"alpha", 1.0f}});
  addUnaryWithAttrs<SeluOp>(patterns, "Selu", kMinOpset,
                            {{"alpha", 1.67326319217681884765625f},
                             {"gamma", 1.05070102214813232421875f}});
  addUnaryWithAttrs<HardSigmoidOp>(patterns, "HardSigmoid", kMinOpset,
                                   {{"alpha", 0.2f}, {"beta", 0.5f}});
  addUnaryWithAttrs<CeluOp>(patterns, "Celu", 12, {{"alpha", 1.0f}});
  addUnaryWithAttrs<ThresholdedReluOp>(patterns, "ThresholdedRelu", 10,
                                       {{"alpha", 1.0f}});
  addONNXPattern(patterns, "Clip", kMinOpset, 10, legalizeClip);
  addONNXPattern(patterns, "Clip", 11, kMaxOpset, legalizeClip);

  addBinary<AddOp>(patterns, "Add", kMinOpset);
  addBinary<SubOp>(patterns, "Sub", kMinOpset);
  addBinary<MulOp>(patterns, "Mul", kMinOpset);
  addBinary<DivOp>(patterns, "Div", kMinOpset);
  addBinary<PowOp>(patterns, "Pow", kMinOpset);
  addBinary<PReluOp>(patterns, "PRelu", kMinOpset);
  addBinary<AndOp>(patterns, "And", kMinOpset);
  addBinary<OrOp>(patterns, "Or", kMinOpset);
  addBinary<XorOp>(patterns, "Xor", kMinOpset);
  addBinary<EqualOp>(patterns, "Equal", kMinOpset);
  addBinary<LessOp>(patterns, "Less", kMinOpset);
  addBinary<GreaterOp>(patterns, "Greater", kMinOpset);
  addBinary<LessEqualOp>(patterns, "LessOrEqual", 12);
  addBinary<GreaterEqualOp>(patterns, "GreaterOrEqual", 12);
  addONNXPattern(patterns, "Mod", 10, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   UnitAttr fmod = node.getInt("fmod", 0)
                                       ? rewriter.getUnitAttr()
                                       : UnitAttr();
                   return replaceNode<ModOp>(node, rewriter, node.input(0),
                                             node.input(1), fmod, DeviceAttr());
                 });

  addONNXPattern(patterns, "Max", kMinOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return chainVariadic<MaxOp>(node, rewriter, false);
                 });
  addONNXPattern(patterns, "Min", kMinOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return chainVariadic<MinOp>(node, rewriter, false);
                 });
  addONNXPattern(patterns, "Sum", kMinOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return chainVariadic<AddOp>(node, rewriter, false);
                 });
  addONNXPattern(patterns, "Mean", kMinOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return chainVariadic<AddOp>(node, rewriter, true);
                 });

  addONNXPattern(patterns, "Where", 9, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return replaceNode<WhereOp>(node, rewriter, node.input(0),
                                               node.input(1), node.input(2),
                                               DeviceAttr());
                 });
  addONNXPattern(patterns, "Cast", kMinOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return replaceNode<CastOp>(node, rewriter, node.input(0),
                                              DeviceAttr());
                 });
}

} // namespace heterps::hps
