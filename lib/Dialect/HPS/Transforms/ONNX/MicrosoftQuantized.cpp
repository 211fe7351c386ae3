//===- MicrosoftQuantized.cpp - com.microsoft QLinear ops -> hps ops ------===//
//
// onnxruntime's quantizer writes quantized Add, Mul, LeakyRelu, Sigmoid and
// GlobalAveragePool as com.microsoft ops (schemas: lib/Import). Each is the
// float op between a dequantization of its inputs and a quantization of its
// result, with per-tensor scales and zero points, and is legalized as
// exactly that:
//
//   y = saturate(round(f((a - a_zero) * a_scale, ...) / y_scale) + y_zero)
//
// in f32, rounding half to even. The elementwise ones become one fused loop
// in the stage program. onnxruntime rearranges the same arithmetic (and
// reads Sigmoid from a table), so the two can differ by one quantum where
// the exact value falls next to a rounding boundary.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;

namespace heterps::hps {
namespace {

constexpr StringRef kDomain = "com.microsoft";

/// A u8 or i8 input with one f32 scale and an optional zero point of its
/// type, at `index`, `index + 1` and `index + 2`.
struct ScalarQuantized {
  Value value, scale, zeroPoint;
};

bool holdsOneValue(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

/// Checks a scale (f32) and optional zero point (of `element`), one value
/// each. Creates nothing.
LogicalResult checkScalars(ONNXNode node, PatternRewriter &rewriter,
                           Value scale, Value zeroPoint, Type element) {
  if (!holdsOneValue(scale) || !getElementTypeOrSelf(scale.getType()).isF32())
    return fail(node, rewriter, "scales must be one f32 value");
  if (isPresent(zeroPoint) &&
      (!holdsOneValue(zeroPoint) ||
       getElementTypeOrSelf(zeroPoint.getType()) != element))
    return fail(node, rewriter,
                "zero points must be one value of the quantized type");
  return success();
}

FailureOr<ScalarQuantized> checkInput(ONNXNode node, PatternRewriter &rewriter,
                                      unsigned index) {
  Value value = node.input(index);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !quantizedRange(type.getElementType()))
    return fail(node, rewriter, "quantized inputs must be ranked u8 or i8");
  ScalarQuantized input{value, node.input(index + 1), node.input(index + 2)};
  if (failed(checkScalars(node, rewriter, input.scale, input.zeroPoint,
                          type.getElementType())))
    return failure();
  return input;
}

/// The result's u8 or i8 type, with its scale and zero point checked.
FailureOr<RankedTensorType>
checkOutput(ONNXNode node, PatternRewriter &rewriter, unsigned scaleIndex) {
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!result || !result.hasStaticShape() ||
      !quantizedRange(result.getElementType()))
    return fail(node, rewriter, "the result must be a static u8 or i8 tensor");
  if (failed(checkScalars(node, rewriter, node.input(scaleIndex),
                          node.input(scaleIndex + 1), result.getElementType())))
    return failure();
  return result;
}

/// x - zero in f32 (exact).
Value shifted(ONNXNode node, PatternRewriter &rewriter,
              const ScalarQuantized &x) {
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto type =
      cast<RankedTensorType>(x.value.getType()).clone(rewriter.getF32Type());
  Value y = rewriter.create<CastOp>(loc, type, x.value, device);
  if (isPresent(x.zeroPoint))
    y = rewriter.create<SubOp>(
        loc, type, y,
        convertTo(node, rewriter, x.zeroPoint, rewriter.getF32Type(), {}),
        device);
  return y;
}

/// (x - zero) * scale in f32.
Value dequantize(ONNXNode node, PatternRewriter &rewriter,
                 const ScalarQuantized &x) {
  Value y = shifted(node, rewriter, x);
  return rewriter.create<MulOp>(
      node.getLoc(), y.getType(), y,
      convertTo(node, rewriter, x.scale, rewriter.getF32Type(), {}),
      node.getOp().getDeviceAttr());
}

/// QuantizeLinear's ops on `y` with the scale and zero point at
/// `scaleIndex` and the input after it.
Value quantizeResult(ONNXNode node, PatternRewriter &rewriter, Value y,
                     unsigned scaleIndex, RankedTensorType result) {
  Type f32 = rewriter.getF32Type();
  Value scale = convertTo(node, rewriter, node.input(scaleIndex), f32, {});
  Value zeroPoint = node.input(scaleIndex + 1);
  return quantize(node, rewriter, y, scale,
                  isPresent(zeroPoint)
                      ? convertTo(node, rewriter, zeroPoint, f32, {})
                      : Value(),
                  result);
}

/// QLinearAdd, QLinearMul: A (3 inputs), B (3), C_scale, C_zero_point;
/// numpy broadcasting.
template <typename OpTy>
LogicalResult legalizeBinary(ONNXNode node, PatternRewriter &rewriter) {
  auto a = checkInput(node, rewriter, 0);
  auto b = checkInput(node, rewriter, 3);
  auto result = checkOutput(node, rewriter, 6);
  if (failed(a) || failed(b) || failed(result))
    return failure();
  if (getElementTypeOrSelf(a->value.getType()) != result->getElementType() ||
      getElementTypeOrSelf(b->value.getType()) != result->getElementType())
    return fail(node, rewriter, "A, B and C must share their quantized type");
  SmallVector<int64_t> broadcast;
  if (!OpTrait::util::getBroadcastedShape(
          cast<RankedTensorType>(a->value.getType()).getShape(),
          cast<RankedTensorType>(b->value.getType()).getShape(), broadcast) ||
      ArrayRef<int64_t>(broadcast) != result->getShape())
    return fail(node, rewriter, "A and B do not broadcast to C");
  auto f32 = result->clone(rewriter.getF32Type());
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto scalar = RankedTensorType::get({}, rewriter.getF32Type());
  auto scaleOf = [&](Value scale) {
    return convertTo(node, rewriter, scale, rewriter.getF32Type(), {});
  };
  Value scaled;
  if constexpr (std::is_same_v<OpTy, MulOp>) {
    // As onnxruntime multiplies: the exact product of the shifted integers
    // times a_scale * b_scale / c_scale.
    Value product =
        rewriter.create<MulOp>(loc, f32, shifted(node, rewriter, *a),
                               shifted(node, rewriter, *b), device);
    Value multiplier = rewriter.create<DivOp>(
        loc, scalar,
        rewriter.create<MulOp>(loc, scalar, scaleOf(a->scale),
                               scaleOf(b->scale), device),
        scaleOf(node.input(6)), device);
    scaled = rewriter.create<MulOp>(loc, f32, product, multiplier, device);
  } else {
    // As onnxruntime adds: each shifted operand times its scale over
    // c_scale, so that sums near a rounding tie round the same way
    // (dequantize, add, divide by c_scale differs in the last bits).
    auto term = [&](const ScalarQuantized &x) {
      Value ratio = rewriter.create<DivOp>(loc, scalar, scaleOf(x.scale),
                                           scaleOf(node.input(6)), device);
      Value v = shifted(node, rewriter, x);
      return rewriter.create<MulOp>(loc, v.getType(), v, ratio, device);
    };
    Value lhs = term(*a);
    Value rhs = term(*b);
    scaled = rewriter.create<AddOp>(loc, f32, lhs, rhs, device);
  }
  // onnxruntime adds C's zero point before rounding (QuantizeLinear rounds
  // first): with ties to even, x.5 + an odd zero point rounds the other way.
  Value zeroPoint = node.input(7);
  if (isPresent(zeroPoint))
    scaled =
        rewriter.create<AddOp>(loc, f32, scaled, scaleOf(zeroPoint), device);
  return replaceNodeWithCompatible(
      node, roundAndSaturate(node, rewriter, scaled, Value(), *result),
      rewriter);
}

/// QLinearLeakyRelu (alpha), QLinearSigmoid: X (3 inputs), Y_scale,
/// Y_zero_point.
LogicalResult legalizeUnary(ONNXNode node, PatternRewriter &rewriter) {
  auto x = checkInput(node, rewriter, 0);
  auto result = checkOutput(node, rewriter, 3);
  if (failed(x) || failed(result))
    return failure();
  if (cast<RankedTensorType>(x->value.getType()) != *result)
    return fail(node, rewriter, "X and Y must have one type");
  Value v = dequantize(node, rewriter, *x);
  DeviceAttr device = node.getOp().getDeviceAttr();
  if (node.getOp().getOpType() == "QLinearSigmoid")
    v = rewriter.create<SigmoidOp>(node.getLoc(), v.getType(), v, device);
  else
    v = rewriter.create<LeakyReluOp>(
        node.getLoc(), v.getType(), v,
        rewriter.getF32FloatAttr(node.getFloat("alpha", 0.01f)), device);
  return replaceNodeWithCompatible(
      node, quantizeResult(node, rewriter, v, 3, *result), rewriter);
}

/// QLinearGlobalAveragePool: X (3 inputs, a zero point required), y_scale,
/// y_zero_point; NC... layout only (channels_last 0, what the quantizer
/// writes for NCHW models).
LogicalResult legalizeGlobalAveragePool(ONNXNode node,
                                        PatternRewriter &rewriter) {
  if (node.getInt("channels_last", 0) != 0)
    return fail(node, rewriter, "channels_last layouts are not supported");
  auto x = checkInput(node, rewriter, 0);
  auto result = checkOutput(node, rewriter, 3);
  if (failed(x) || failed(result))
    return failure();
  auto xType = cast<RankedTensorType>(x->value.getType());
  if (xType.getRank() < 3 || xType.getElementType() != result->getElementType())
    return fail(node, rewriter, "needs X of rank 3 or more and Y of its type");
  SmallVector<int64_t> pooled(xType.getShape());
  std::fill(pooled.begin() + 2, pooled.end(), 1);
  if (ArrayRef<int64_t>(pooled) != result->getShape())
    return fail(node, rewriter, "Y is not X pooled to one value per channel");
  auto f32 = result->clone(rewriter.getF32Type());
  Value v = dequantize(node, rewriter, *x);
  v = rewriter.create<GlobalAvgPoolOp>(node.getLoc(), f32, v,
                                       node.getOp().getDeviceAttr());
  return replaceNodeWithCompatible(
      node, quantizeResult(node, rewriter, v, 3, *result), rewriter);
}

} // namespace

void populateMicrosoftQuantizedPatterns(RewritePatternSet &patterns) {
  addDomainONNXPattern(patterns, kDomain, "QLinearAdd", 1, 1, {},
                       legalizeBinary<AddOp>);
  addDomainONNXPattern(patterns, kDomain, "QLinearMul", 1, 1, {},
                       legalizeBinary<MulOp>);
  static constexpr StringRef kAlpha[] = {"alpha"};
  addDomainONNXPattern(patterns, kDomain, "QLinearLeakyRelu", 1, 1, kAlpha,
                       legalizeUnary);
  addDomainONNXPattern(patterns, kDomain, "QLinearSigmoid", 1, 1, {},
                       legalizeUnary);
  static constexpr StringRef kPool[] = {"channels_last"};
  addDomainONNXPattern(patterns, kDomain, "QLinearGlobalAveragePool", 1, 1,
                       kPool, legalizeGlobalAveragePool);
}

} // namespace heterps::hps
