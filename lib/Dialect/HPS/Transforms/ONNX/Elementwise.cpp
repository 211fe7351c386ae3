//===- Elementwise.cpp - Unary, binary, Where, Trilu, Clip, Shrink, IsNaN -===//
//
// Opset ranges follow ONNX's version history. Versions that only widened the
// accepted element types (Relu 13/14, Add 13/14, Where 16, ...) share one
// pattern. Opset 7 brought numpy broadcasting; opset-6 binary ops broadcast
// only with broadcast=1, aligning B with A at `axis` (legacy form below).
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace heterps::hps {
namespace {

/// Float attributes of an op and their ONNX defaults.
using FloatAttrDefaults = SmallVector<std::pair<StringRef, float>, 2>;

/// A unary op on the node's first input. Its float attributes take the
/// node's values or, when omitted, the ONNX defaults; every one is written
/// out so the result does not depend on the hps op's own defaults.
template <typename OpTy>
void addUnary(RewritePatternSet &patterns, StringRef opType, int64_t minOpset,
              FloatAttrDefaults attrs = {}) {
  addONNXPattern(
      patterns, opType, minOpset, kMaxOpset,
      [attrs](ONNXNode node, PatternRewriter &rewriter) {
        SmallVector<NamedAttribute> named;
        for (auto [name, fallback] : attrs)
          named.push_back(rewriter.getNamedAttr(
              name, rewriter.getF32FloatAttr(node.getFloat(name, fallback))));
        return replaceNode<OpTy>(node, rewriter, ValueRange{node.input(0)},
                                 named);
      });
}

/// A broadcasting binary op on the node's two inputs.
template <typename OpTy>
void addBinary(RewritePatternSet &patterns, StringRef opType,
               int64_t minOpset) {
  addONNXPattern(patterns, opType, minOpset, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return replaceNode<OpTy>(node, rewriter, node.input(0),
                                            node.input(1), DeviceAttr());
                 });
}

/// True if input i is a tensor of integers wider than i1 (the types ONNX's
/// Bitwise ops take).
bool isIntegerOperand(ONNXNode node, unsigned i) {
  auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(node.input(i)));
  return integer && integer.getWidth() > 1;
}

/// ONNX's BitwiseAnd / Or / Xor (18) as the hps op, bitwise on integers.
template <typename OpTy>
void addBitwise(RewritePatternSet &patterns, StringRef opType) {
  addONNXPattern(patterns, opType, 18, kMaxOpset, {},
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   if (!isIntegerOperand(node, 0) || !isIntegerOperand(node, 1))
                     return fail(node, rewriter, "needs integers");
                   return replaceNodeChecked<OpTy>(node, rewriter,
                                                   node.input(0), node.input(1),
                                                   DeviceAttr());
                 });
}

/// A binary op of opset 6: without broadcast=1 the operands have one shape;
/// with it B is broadcast into A, its dims aligned with A's from `axis`
/// (default: trailing), which hps expresses by reshaping B to A's rank.
template <typename OpTy>
void addLegacyBinary(RewritePatternSet &patterns, StringRef opType) {
  addONNXPattern(
      patterns, opType, 6, 6, {"axis", "broadcast"},
      [](ONNXNode node, PatternRewriter &rewriter) -> LogicalResult {
        Value lhs = node.input(0), rhs = node.input(1);
        auto a = rankedShape(lhs), b = rankedShape(rhs);
        if (!a || !b)
          return rewriter.notifyMatchFailure(node.getOp(), "unranked operand");
        std::optional<bool> broadcast = getFlag(node, "broadcast");
        if (!broadcast)
          return rewriter.notifyMatchFailure(node.getOp(), "bad broadcast");
        if (!*broadcast) {
          if (*a != *b)
            return rewriter.notifyMatchFailure(node.getOp(), "shapes differ");
          return replaceNode<OpTy>(node, rewriter, lhs, rhs, DeviceAttr());
        }
        int64_t rankA = a->size(), rankB = b->size();
        int64_t axis = node.getInt("axis", rankA - rankB);
        if (axis < 0)
          axis += rankA;
        if (rankB > rankA || axis < 0 || axis + rankB > rankA)
          return rewriter.notifyMatchFailure(node.getOp(), "bad axis");
        for (int64_t i = 0; i < rankB; ++i)
          if ((*b)[i] != 1 && (*b)[i] != (*a)[axis + i])
            return rewriter.notifyMatchFailure(node.getOp(),
                                               "B does not fit A at axis");
        if (axis + rankB != rankA) {
          SmallVector<int64_t> aligned(*b);
          aligned.append(rankA - axis - rankB, 1);
          rhs = reshapeTo(node, rewriter, rhs, aligned);
        }
        return replaceNode<OpTy>(node, rewriter, lhs, rhs, DeviceAttr());
      });
}

/// PRelu-6: a slope of one value, of the input's shape or (as PyTorch's
/// exporter wrote per-channel PReLU) of the channel count, which applies
/// along axis 1. The last is reshaped to [C, 1, ...] for numpy broadcasting.
LogicalResult legalizeLegacyPRelu(ONNXNode node, PatternRewriter &rewriter) {
  Value input = node.input(0), slope = node.input(1);
  auto x = rankedShape(input), s = rankedShape(slope);
  if (!x || !s)
    return fail(node, rewriter, "unranked operand");
  if (s->size() == 1 && x->size() > 2 && (*s)[0] == (*x)[1] &&
      (*s)[0] != ShapedType::kDynamic) {
    SmallVector<int64_t> channel(x->size() - 1, 1);
    channel[0] = (*s)[0];
    slope = reshapeTo(node, rewriter, slope, channel);
  }
  return replaceNodeChecked<PReluOp>(node, rewriter, input, slope,
                                     DeviceAttr());
}

/// A binary op with its opset-6 (legacy broadcast) and 7+ (numpy) forms.
template <typename OpTy>
void addBinarySince6(RewritePatternSet &patterns, StringRef opType) {
  addLegacyBinary<OpTy>(patterns, opType);
  addBinary<OpTy>(patterns, opType, 7);
}

/// The broadcast type of two operands (unranked if either is).
Type broadcastType(Value lhs, Value rhs, Type element) {
  auto a = rankedShape(lhs), b = rankedShape(rhs);
  if (a && b)
    if (auto shape = shapes::broadcast(*a, *b))
      return RankedTensorType::get(*shape, element);
  return UnrankedTensorType::get(element);
}

/// Max, Min, Sum and Mean: a left-to-right chain of broadcasting binary ops
/// (Mean then divides by the input count); the node's own result type ends
/// the chain. A single input is the identity.
template <typename OpTy>
LogicalResult chainVariadic(ONNXNode node, PatternRewriter &rewriter,
                            bool divideByCount) {
  unsigned count = node.numInputs();
  for (unsigned i = 0; i < count; ++i)
    if (!node.input(i))
      return rewriter.notifyMatchFailure(node.getOp(), "missing input");
  if (count == 0)
    return rewriter.notifyMatchFailure(node.getOp(), "no inputs");
  Type resultType = node.resultType();
  if (count == 1) {
    if (node.input(0).getType() != resultType)
      return rewriter.notifyMatchFailure(node.getOp(), "type mismatch");
    replaceNodeWith(node, node.input(0), rewriter);
    return success();
  }
  Type element = cast<ShapedType>(resultType).getElementType();
  if (divideByCount && !isa<FloatType>(element))
    return rewriter.notifyMatchFailure(node.getOp(), "integer Mean");
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

void addVariadic(RewritePatternSet &patterns, StringRef opType,
                 LogicalResult (*chain)(ONNXNode, PatternRewriter &, bool),
                 bool divideByCount = false) {
  addONNXPattern(
      patterns, opType, kMinOpset, kMaxOpset,
      [chain, divideByCount](ONNXNode node, PatternRewriter &rewriter) {
        return chain(node, rewriter, divideByCount);
      });
}

/// A Clip bound given as an input (opset 11+): null when omitted (an open
/// bound), failure when it is not a known scalar constant or, for integer
/// clips, when it does not survive the trip through the f64 attribute.
FailureOr<FloatAttr> clipBoundInput(ONNXNode node, unsigned index,
                                    PatternRewriter &rewriter) {
  Value input = node.input(index);
  if (!input)
    return FloatAttr();
  std::optional<double> value = getConstantScalar(input);
  if (!value)
    return failure();
  // Integers of magnitude up to 2^53 are exact in an f64.
  constexpr int64_t kExact = int64_t(1) << 53;
  if (auto ints = getConstantInts(input))
    if (ints->front() > kExact || ints->front() < -kExact)
      return failure();
  return rewriter.getF64FloatAttr(*value);
}

/// Clip 6 (read from opset 7) to 10: float min/max attributes whose
/// defaults are the float range, as the spec gives them.
LogicalResult legalizeClipAttrs(ONNXNode node, PatternRewriter &rewriter) {
  float lowest = std::numeric_limits<float>::lowest();
  float highest = std::numeric_limits<float>::max();
  return replaceNode<ClipOp>(
      node, rewriter, node.input(0),
      rewriter.getF64FloatAttr(node.getFloat("min", lowest)),
      rewriter.getF64FloatAttr(node.getFloat("max", highest)), DeviceAttr());
}

/// Clip 11+: optional min/max inputs that must be constants to become
/// attributes; an omitted one is an open bound.
LogicalResult legalizeClipInputs(ONNXNode node, PatternRewriter &rewriter) {
  FailureOr<FloatAttr> min = clipBoundInput(node, 1, rewriter);
  FailureOr<FloatAttr> max = clipBoundInput(node, 2, rewriter);
  if (succeeded(min) && succeeded(max))
    return replaceNode<ClipOp>(node, rewriter, node.input(0), *min, *max,
                               DeviceAttr());
  // Bounds known only at run time: min(max(x, low), high), each scalar
  // bound broadcast by the binary op (an omitted one is open).
  Value x = node.input(0), low = node.input(1), high = node.input(2);
  auto type = dyn_cast<RankedTensorType>(x.getType());
  for (Value bound : {low, high}) {
    auto boundType = bound ? dyn_cast<RankedTensorType>(bound.getType())
                           : RankedTensorType();
    if (bound && (!type || !boundType || boundType.getNumElements() != 1 ||
                  boundType.getElementType() != type.getElementType()))
      return fail(node, rewriter, "bounds must be one-element tensors");
  }
  if (!canReplaceWithType(node, type))
    return fail(node, rewriter, "result type differs from the input's");
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  if (low)
    x = rewriter.create<MaxOp>(loc, type, x, low, device);
  if (high)
    x = rewriter.create<MinOp>(loc, type, x, high, device);
  return replaceNodeWithCompatible(node, x, rewriter);
}

/// Shrink (9-17): x + bias below -lambd, x - bias above lambd, else 0.
LogicalResult legalizeShrink(ONNXNode node, PatternRewriter &rewriter) {
  Value x = node.input(0);
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || !canReplaceWithType(node, type))
    return fail(node, rewriter, "needs a ranked input of the result's type");
  Type element = type.getElementType();
  double lambd = node.getFloat("lambd", 0.5f);
  double bias = node.getFloat("bias", 0.0f);
  if (!isa<FloatType>(element) &&
      (lambd != std::trunc(lambd) || bias != std::trunc(bias)))
    return fail(node, rewriter, "fractional lambd or bias on integers");
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto scalar = [&](double value) {
    return scalarConstant(rewriter, loc, element, value);
  };
  auto maskType = RankedTensorType::get(type.getShape(), rewriter.getI1Type());
  Value below =
      rewriter.create<LessOp>(loc, maskType, x, scalar(-lambd), device);
  Value above =
      rewriter.create<GreaterOp>(loc, maskType, x, scalar(lambd), device);
  Value raised = rewriter.create<AddOp>(loc, type, x, scalar(bias), device);
  Value lowered = rewriter.create<SubOp>(loc, type, x, scalar(bias), device);
  Value outer =
      rewriter.create<WhereOp>(loc, type, above, lowered, scalar(0), device);
  return replaceNodeWithCompatible(
      node, rewriter.create<WhereOp>(loc, type, below, raised, outer, device),
      rewriter);
}

/// IsNaN (9-17): x != x, as not(equal(x, x)) (a NaN equals nothing).
LogicalResult legalizeIsNaN(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return fail(node, rewriter, "needs a ranked float input");
  auto maskType = RankedTensorType::get(type.getShape(), rewriter.getI1Type());
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value x = node.input(0);
  Value same = rewriter.create<EqualOp>(loc, maskType, x, x, device);
  return replaceNodeWithCompatible(
      node, rewriter.create<NotOp>(loc, maskType, same, device), rewriter);
}

/// IsInf (10-17): equal to +inf (detect_positive) or -inf
/// (detect_negative); both flags 0 give all false.
LogicalResult legalizeIsInf(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return fail(node, rewriter, "needs a ranked float input");
  std::optional<bool> positive = getFlag(node, "detect_positive", true);
  std::optional<bool> negative = getFlag(node, "detect_negative", true);
  if (!positive || !negative)
    return fail(node, rewriter, "detect_positive/negative are 0 or 1");
  Type element = type.getElementType();
  auto maskType = RankedTensorType::get(type.getShape(), rewriter.getI1Type());
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  const double inf = std::numeric_limits<double>::infinity();
  auto equalTo = [&](double value) -> Value {
    Value constant = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                    makeScalarAttr(element, value)));
    return rewriter.create<EqualOp>(loc, maskType, node.input(0), constant,
                                    device);
  };
  Value result;
  if (*positive && *negative)
    result = rewriter.create<OrOp>(loc, maskType, equalTo(inf), equalTo(-inf),
                                   device);
  else if (*positive || *negative)
    result = equalTo(*positive ? inf : -inf);
  else
    result = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(maskType, false));
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// Trilu (14-17) with a constant k: where(mask, x, 0), the [rows, cols]
/// mask constant (upper keeps j - i >= k, lower j - i <= k) and broadcast
/// over the leading axes; the gradient is where's.
LogicalResult legalizeTrilu(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() < 2 || type.isDynamicDim(type.getRank() - 1) ||
      type.isDynamicDim(type.getRank() - 2))
    return fail(node, rewriter, "needs static last two axes");
  int64_t k = 0;
  if (node.numInputs() > 1 && node.input(1) &&
      !isa<NoneType>(node.input(1).getType())) {
    std::optional<SmallVector<int64_t>> values = getConstantInts(node.input(1));
    if (!values || values->size() != 1)
      return fail(node, rewriter, "k is not a constant scalar");
    k = values->front();
  }
  std::optional<bool> upper = getFlag(node, "upper", true);
  if (!upper)
    return fail(node, rewriter, "upper must be 0 or 1");
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t cols = type.getDimSize(type.getRank() - 1);
  SmallVector<bool> keep;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(*upper ? j - i >= k : j - i <= k);
  Type element = type.getElementType();
  TypedAttr zero;
  if (isa<FloatType>(element))
    zero = rewriter.getFloatAttr(element, 0);
  else if (isa<IntegerType>(element))
    zero = rewriter.getIntegerAttr(element, 0);
  else
    return fail(node, rewriter, "unsupported element type");
  Location loc = node.getLoc();
  Value mask = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({rows, cols}, rewriter.getI1Type()),
               ArrayRef<bool>(keep)));
  Value zeros = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({}, element), zero));
  return replaceNodeChecked<WhereOp>(node, rewriter, mask, node.input(0), zeros,
                                     DeviceAttr());
}

/// BitShift (11) on unsigned integers: x * 2^y (LEFT, wrapping as the type
/// does) or x / 2^y (RIGHT), 2^y looked up in a constant table by y clamped
/// to [0, bits]. A shift by the width or more gives 0, as numpy's shifts
/// do (C leaves it undefined).
LogicalResult legalizeBitShift(ONNXNode node, PatternRewriter &rewriter) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto y = dyn_cast<RankedTensorType>(node.input(1).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!x || !y || !result || x.getElementType() != y.getElementType() ||
      result.getElementType() != x.getElementType() ||
      !x.getElementType().isUnsignedInteger())
    return fail(node, rewriter, "needs unsigned integer operands of one type");
  std::string direction = node.getString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return fail(node, rewriter, "direction must be LEFT or RIGHT");
  // Checked here, as nothing may fail once ops are created.
  auto shape = shapes::broadcast(x.getShape(), y.getShape());
  if (!x.hasStaticShape() || !y.hasStaticShape() || !shape ||
      ArrayRef<int64_t>(*shape) != result.getShape())
    return fail(node, rewriter, "needs static shapes that broadcast");
  const bool left = direction == "LEFT";
  Type element = x.getElementType();
  const unsigned bits = element.getIntOrFloatBitWidth();
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  // powers[k] = 2^k; powers[bits] is what a too-wide shift multiplies by
  // (0) or divides by (1, its quotient then replaced by 0).
  SmallVector<APInt> powers;
  for (unsigned k = 0; k < bits; ++k)
    powers.push_back(APInt::getOneBitSet(bits, k));
  powers.push_back(APInt(bits, left ? 0 : 1));
  Value table = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({int64_t(bits) + 1}, element), powers));
  Value clamped = rewriter.create<ClipOp>(
      loc, y, node.input(1), rewriter.getF64FloatAttr(0),
      rewriter.getF64FloatAttr(bits), device);
  Value positions = rewriter.create<CastOp>(loc, y.clone(rewriter.getI64Type()),
                                            clamped, device);
  Value factors = rewriter.create<GatherOp>(
      loc, y, table, positions, rewriter.getI64IntegerAttr(0), device);
  Value shifted;
  if (left) {
    shifted =
        rewriter.create<MulOp>(loc, result, node.input(0), factors, device);
  } else {
    Value quotient =
        rewriter.create<DivOp>(loc, result, node.input(0), factors, device);
    Value tooWide = rewriter.create<GreaterEqualOp>(
        loc, y.clone(rewriter.getI1Type()), node.input(1),
        scalarConstant(rewriter, loc, element, double(bits)), device);
    shifted = rewriter.create<WhereOp>(
        loc, result, tooWide, scalarConstant(rewriter, loc, element, 0),
        quotient, device);
  }
  replaceNodeWith(node, shifted, rewriter);
  return success();
}

} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns) {
  // Unary ops without attributes.
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
  addUnary<AsinOp>(patterns, "Asin", 7);
  addUnary<AcosOp>(patterns, "Acos", 7);
  addUnary<AtanOp>(patterns, "Atan", 7);
  addUnary<ErfOp>(patterns, "Erf", 9);
  addUnary<SignOp>(patterns, "Sign", 9);
  addUnary<RoundOp>(patterns, "Round", 11);
  addUnary<HardSwishOp>(patterns, "HardSwish", 14);
  // Gelu (20): exact, or approximate = "tanh".
  addONNXPattern(patterns, "Gelu", 20, kMaxOpset, {"approximate"},
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   std::string approximate =
                       node.getString("approximate", "none");
                   if (approximate != "none" && approximate != "tanh")
                     return fail(node, rewriter,
                                 "approximate is not none "
                                 "or tanh");
                   return replaceNode<GeluOp>(
                       node, rewriter, node.input(0),
                       unitIf(rewriter, approximate == "tanh"), DeviceAttr());
                 });

  // Unary ops with float attributes (ONNX defaults).
  addUnary<LeakyReluOp>(patterns, "LeakyRelu", kMinOpset, {{"alpha", 0.01f}});
  addUnary<EluOp>(patterns, "Elu", kMinOpset, {{"alpha", 1.0f}});
  addUnary<SeluOp>(patterns, "Selu", kMinOpset,
                   {{"alpha", 1.67326319217681884765625f},
                    {"gamma", 1.05070102214813232421875f}});
  addUnary<HardSigmoidOp>(patterns, "HardSigmoid", kMinOpset,
                          {{"alpha", 0.2f}, {"beta", 0.5f}});
  addUnary<CeluOp>(patterns, "Celu", 12, {{"alpha", 1.0f}});
  addUnary<ThresholdedReluOp>(patterns, "ThresholdedRelu", 10,
                              {{"alpha", 1.0f}});

  // Clip moved its bounds from attributes to inputs in opset 11.
  addONNXPattern(patterns, "Clip", kMinOpset, 10, legalizeClipAttrs);
  addONNXPattern(patterns, "Clip", 11, kMaxOpset, legalizeClipInputs);

  // Broadcasting binary ops.
  addBinarySince6<AddOp>(patterns, "Add");
  addBinarySince6<SubOp>(patterns, "Sub");
  addBinarySince6<MulOp>(patterns, "Mul");
  addBinarySince6<DivOp>(patterns, "Div");
  addBinarySince6<PowOp>(patterns, "Pow");
  addONNXPattern(patterns, "PRelu", 6, 6, {}, legalizeLegacyPRelu);
  addBinary<PReluOp>(patterns, "PRelu", 7);
  addBinarySince6<AndOp>(patterns, "And");
  addBinarySince6<OrOp>(patterns, "Or");
  addBinarySince6<XorOp>(patterns, "Xor");
  addBinarySince6<EqualOp>(patterns, "Equal");
  addBinarySince6<LessOp>(patterns, "Less");
  addBinarySince6<GreaterOp>(patterns, "Greater");
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

  // Variadic ops. Version 6 (read from opset 7) required equal shapes and
  // version 8 added broadcasting: the broadcasting chain covers both.
  addVariadic(patterns, "Max", chainVariadic<MaxOp>);
  addVariadic(patterns, "Min", chainVariadic<MinOp>);
  addVariadic(patterns, "Sum", chainVariadic<AddOp>);
  addVariadic(patterns, "Mean", chainVariadic<AddOp>, /*divideByCount=*/true);

  addONNXPattern(patterns, "Where", 9, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return replaceNode<WhereOp>(node, rewriter, node.input(0),
                                               node.input(1), node.input(2),
                                               DeviceAttr());
                 });
  addONNXPattern(patterns, "Trilu", 14, kMaxOpset, {"upper"}, legalizeTrilu);
  addONNXPattern(patterns, "IsNaN", 9, kMaxOpset, {}, legalizeIsNaN);
  addONNXPattern(patterns, "IsInf", 10, kMaxOpset,
                 {"detect_negative", "detect_positive"}, legalizeIsInf);
  // Cast 6+ takes `to` as a data type enum, which the importer already
  // made the result's element type. A `to` that names no type (99) left
  // the declared output type in place: ONNX's inference says why.
  addONNXPattern(
      patterns, "Cast", kMinOpset, kMaxOpset,
      [](ONNXNode node, PatternRewriter &rewriter) {
        if (!isa<TensorType>(node.resultType()))
          return rewriter.notifyMatchFailure(node.getOp(), "untyped result");
        if (auto why = node.getOp()->getAttrOfType<StringAttr>(
                OnnxNodeOp::kShapeInferenceErrorAttr))
          return fail(node, rewriter, why.getValue());
        return replaceNode<CastOp>(node, rewriter, node.input(0), DeviceAttr());
      });
  // CastLike 15+: the importer gave the result the element type of
  // `target_type`; the second input supplies nothing else.
  addONNXPattern(
      patterns, "CastLike", 15, kMaxOpset, {},
      [](ONNXNode node, PatternRewriter &rewriter) {
        if (!isa<TensorType>(node.resultType()))
          return rewriter.notifyMatchFailure(node.getOp(), "untyped result");
        return replaceNode<CastOp>(node, rewriter, node.input(0), DeviceAttr());
      });
  addONNXPattern(patterns, "Shrink", 9, kMaxOpset, {"bias", "lambd"},
                 legalizeShrink);
  // Bitwise ops (18) on integers: hps.and / or / xor, which are bitwise on
  // integers; not x is allOnes - x (-1 - x or MAX - x), which never
  // overflows.
  addBitwise<AndOp>(patterns, "BitwiseAnd");
  addBitwise<OrOp>(patterns, "BitwiseOr");
  addBitwise<XorOp>(patterns, "BitwiseXor");
  addONNXPattern(
      patterns, "BitwiseNot", 18, kMaxOpset, {},
      [](ONNXNode node, PatternRewriter &rewriter) {
        Type element = getElementTypeOrSelf(node.input(0));
        if (!isIntegerOperand(node, 0))
          return fail(node, rewriter, "needs integers");
        auto integer = cast<IntegerType>(element);
        APInt ones = APInt::getAllOnes(integer.getWidth());
        Value allOnes = rewriter.create<ConstantOp>(
            node.getLoc(),
            DenseElementsAttr::get(RankedTensorType::get({}, element), ones));
        return replaceNode<SubOp>(node, rewriter, allOnes, node.input(0),
                                  DeviceAttr());
      });
  addONNXPattern(patterns, "BitShift", 11, kMaxOpset, {"direction"},
                 legalizeBitShift);
}

} // namespace heterps::hps
