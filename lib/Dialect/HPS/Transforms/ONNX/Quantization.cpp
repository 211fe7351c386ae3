//===- Quantization.cpp - QuantizeLinear and friends into hps ops ---------===//
//
// Linear quantization is elementwise arithmetic on f32 followed by a
// saturating cast, so it decomposes into hps.div, hps.round (half to even,
// as ONNX rounds), hps.add, hps.clip and hps.cast; no kernel of its own.
// Per-axis scales (opset 13) broadcast by a reshape to [1.., C, ..1];
// blocked scales (opset 21) are repeated along their axis first.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

using namespace mlir;

namespace heterps::hps {

std::optional<std::pair<double, double>> quantizedRange(Type element) {
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer || integer.getWidth() != 8)
    return std::nullopt;
  if (integer.isUnsigned())
    return std::make_pair(0., 255.);
  return std::make_pair(-128., 127.);
}

bool isPresent(Value value) { return value && !isa<NoneType>(value.getType()); }

Value convertTo(ONNXNode node, PatternRewriter &rewriter, Value value,
                Type element, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() != element)
    value = rewriter.create<CastOp>(node.getLoc(), type.clone(element), value,
                                    node.getOp().getDeviceAttr());
  if (type.getShape() != shape)
    value = reshapeTo(node, rewriter, value, shape);
  return value;
}

Value roundAndSaturate(ONNXNode node, PatternRewriter &rewriter, Value scaled,
                       Value zeroPoint, RankedTensorType result) {
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto f32Type = result.clone(rewriter.getF32Type());
  Value q = rewriter.create<RoundOp>(loc, f32Type, scaled, device);
  if (zeroPoint)
    q = rewriter.create<AddOp>(loc, f32Type, q, zeroPoint, device);
  auto [low, high] = *quantizedRange(result.getElementType());
  q = rewriter.create<ClipOp>(loc, f32Type, q, rewriter.getF64FloatAttr(low),
                              rewriter.getF64FloatAttr(high), device);
  return rewriter.create<CastOp>(loc, result, q, device);
}

Value quantize(ONNXNode node, PatternRewriter &rewriter, Value x, Value scale,
               Value zeroPoint, RankedTensorType result) {
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto f32Type = result.clone(rewriter.getF32Type());
  Value q = rewriter.create<DivOp>(loc, f32Type, x, scale, device);
  return roundAndSaturate(node, rewriter, q, zeroPoint, result);
}

namespace {

/// Where a scale (and its zero point) sit against the quantized tensor: one
/// value for all, or one per index of `axis` (opset 13). `broadcastShape` is
/// the shape a per-axis operand is reshaped to; empty for a scalar.
struct ScaleLayout {
  SmallVector<int64_t> broadcastShape;
  /// Opset 21's blocked quantization: each scale covers `block` consecutive
  /// elements along `axis` (the last block may be shorter); 0 otherwise.
  int64_t block = 0, axis = 0;
};

/// Checks a scale or zero point against `x`; creates nothing.
FailureOr<ScaleLayout> scaleLayout(ONNXNode node, PatternRewriter &rewriter,
                                   RankedTensorType x, Value operand) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  if (!type || !type.hasStaticShape())
    return fail(node, rewriter, "needs a static scale shape");
  ScaleLayout layout;
  int64_t block = node.getInt("block_size", 0);
  if (block < 0)
    return fail(node, rewriter, "a negative block_size");
  if (block > 0) {
    std::optional<int64_t> axis = node.getAxis("axis", 1, x.getRank());
    if (!axis || !x.hasStaticShape() || type.getRank() != x.getRank())
      return fail(node, rewriter,
                  "blocked scales need a static x of their "
                  "rank and an axis in range");
    for (int64_t d = 0; d < x.getRank(); ++d) {
      int64_t want = d == *axis ? llvm::divideCeil(x.getDimSize(d), block)
                                : x.getDimSize(d);
      if (type.getDimSize(d) != want)
        return fail(node, rewriter, "the blocked scale's shape does not match");
    }
    layout.block = block;
    layout.axis = *axis;
    layout.broadcastShape.assign(x.getShape().begin(), x.getShape().end());
    return layout;
  }
  if (type.getNumElements() == 1 && type.getRank() <= 1)
    return layout;
  if (node.getOpset() < 13 || type.getRank() != 1)
    return fail(node, rewriter, "the scale must be a scalar or 1-D per axis");
  std::optional<int64_t> axis = node.getAxis("axis", 1, x.getRank());
  if (!axis)
    return fail(node, rewriter, "axis out of range");
  if (x.isDynamicDim(*axis) || x.getDimSize(*axis) != type.getDimSize(0))
    return fail(node, rewriter, "the scale's length differs from the axis");
  layout.broadcastShape.assign(x.getRank(), 1);
  layout.broadcastShape[*axis] = type.getDimSize(0);
  return layout;
}

/// Checks the scale (f32) and the optional zero point (of `zeroElement`,
/// laid out as the scale) of a node quantizing or dequantizing `x`; creates
/// nothing.
FailureOr<ScaleLayout> checkScaleAndZeroPoint(ONNXNode node,
                                              PatternRewriter &rewriter,
                                              RankedTensorType x,
                                              Type zeroElement) {
  Value scale = node.input(1), zeroPoint = node.input(2);
  if (!isPresent(scale) ||
      !cast<ShapedType>(scale.getType()).getElementType().isF32())
    return fail(node, rewriter, "the scale must be f32");
  FailureOr<ScaleLayout> layout = scaleLayout(node, rewriter, x, scale);
  if (failed(layout) || !isPresent(zeroPoint))
    return layout;
  FailureOr<ScaleLayout> zeroLayout = scaleLayout(node, rewriter, x, zeroPoint);
  if (failed(zeroLayout) ||
      zeroLayout->broadcastShape != layout->broadcastShape ||
      cast<ShapedType>(zeroPoint.getType()).getElementType() != zeroElement)
    return fail(node, rewriter, "the zero point differs from the scale");
  return layout;
}

/// A blocked operand (of any element type) repeated `block` times in place
/// along the axis and cut to x's extent: one value per element of x.
Value expandBlocks(ONNXNode node, PatternRewriter &rewriter,
                   const ScaleLayout &layout, Value operand) {
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> factors(type.getRank(), 1);
  factors[layout.axis] = layout.block;
  Value repeated =
      repeatAxes(node, rewriter, operand, factors, /*outer=*/false);
  int64_t extent = layout.broadcastShape[layout.axis];
  if (type.getDimSize(layout.axis) * layout.block == extent)
    return repeated;
  return rewriter.create<SliceOp>(
      node.getLoc(),
      RankedTensorType::get(layout.broadcastShape, type.getElementType()),
      repeated, rewriter.getDenseI64ArrayAttr(0),
      rewriter.getDenseI64ArrayAttr(extent),
      rewriter.getDenseI64ArrayAttr(layout.axis),
      rewriter.getDenseI64ArrayAttr(1), node.getOp().getDeviceAttr());
}

/// `operand` (a scale or zero point) as f32, shaped to broadcast against x.
Value broadcastOperand(ONNXNode node, PatternRewriter &rewriter,
                       const ScaleLayout &layout, Value operand) {
  if (layout.block == 0)
    return convertTo(node, rewriter, operand, rewriter.getF32Type(),
                     layout.broadcastShape);
  auto type = cast<RankedTensorType>(operand.getType());
  return expandBlocks(node, rewriter, layout,
                      convertTo(node, rewriter, operand, rewriter.getF32Type(),
                                type.getShape()));
}

/// QuantizeLinear (10-12: scalar scale; 13: per-axis scales too): f32 x,
/// f32 scale, a u8 or i8 zero point (u8 0 when absent).
LogicalResult legalizeQuantizeLinear(ONNXNode node, PatternRewriter &rewriter) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!x || !result || !x.getElementType().isF32() ||
      x.getShape() != result.getShape())
    return fail(node, rewriter, "needs f32 x of the result's shape");
  if (!quantizedRange(result.getElementType()))
    return fail(node, rewriter, "the result must be u8 or i8");
  FailureOr<ScaleLayout> layout =
      checkScaleAndZeroPoint(node, rewriter, x, result.getElementType());
  if (failed(layout))
    return failure();
  Value scale = node.input(1), zeroPoint = node.input(2);
  Value scaleF32 = broadcastOperand(node, rewriter, *layout, scale);
  Value zeroF32 = isPresent(zeroPoint)
                      ? broadcastOperand(node, rewriter, *layout, zeroPoint)
                      : Value();
  return replaceNodeWithCompatible(
      node, quantize(node, rewriter, node.input(0), scaleF32, zeroF32, result),
      rewriter);
}

/// DequantizeLinear (10-12; 13: per-axis): (x - zeroPoint) * scale in f32
/// for u8, i8 or i32 x (an i32 x is subtracted in i32, then converted).
LogicalResult legalizeDequantizeLinear(ONNXNode node,
                                       PatternRewriter &rewriter) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!x || !result || !result.getElementType().isF32() ||
      x.getShape() != result.getShape())
    return fail(node, rewriter, "needs x of the f32 result's shape");
  Type element = x.getElementType();
  const bool i32 = element.isSignlessInteger(32);
  if (!quantizedRange(element) && !i32)
    return fail(node, rewriter, "x must be u8, i8 or i32");
  FailureOr<ScaleLayout> layout =
      checkScaleAndZeroPoint(node, rewriter, x, element);
  if (failed(layout))
    return failure();
  Value scale = node.input(1), zeroPoint = node.input(2);
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value shifted = node.input(0);
  if (i32 && isPresent(zeroPoint)) {
    Value zero = zeroPoint;
    if (layout->block != 0)
      zero = expandBlocks(node, rewriter, *layout, zero);
    else if (!layout->broadcastShape.empty() &&
             layout->broadcastShape !=
                 SmallVector<int64_t>(
                     cast<RankedTensorType>(zero.getType()).getShape()))
      zero = reshapeTo(node, rewriter, zero, layout->broadcastShape);
    shifted = rewriter.create<SubOp>(loc, x, shifted, zero, device);
  }
  Value y = rewriter.create<CastOp>(loc, result, shifted, device);
  if (!i32 && isPresent(zeroPoint))
    y = rewriter.create<SubOp>(
        loc, result, y, broadcastOperand(node, rewriter, *layout, zeroPoint),
        device);
  y = rewriter.create<MulOp>(
      loc, result, y, broadcastOperand(node, rewriter, *layout, scale), device);
  return replaceNodeWithCompatible(node, y, rewriter);
}

/// DynamicQuantizeLinear (11): u8 quantization of f32 x with the scale and
/// zero point that map [min(0, min x), max(0, max x)] onto [0, 255].
LogicalResult legalizeDynamicQuantizeLinear(ONNXNode node,
                                            PatternRewriter &rewriter) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!x || !x.hasStaticShape() || !x.getElementType().isF32() ||
      x.getNumElements() == 0)
    return fail(node, rewriter, "needs a static, non-empty f32 x");
  auto y = dyn_cast<RankedTensorType>(node.resultType(0));
  auto u8 = IntegerType::get(rewriter.getContext(), 8, IntegerType::Unsigned);
  if (!y || y.getShape() != x.getShape() || y.getElementType() != u8 ||
      node.getOp().getNumResults() != 3)
    return fail(node, rewriter, "needs a u8 y of x's shape and three results");
  auto scalarF32 = RankedTensorType::get({}, rewriter.getF32Type());
  auto scalarU8 = RankedTensorType::get({}, u8);
  if (node.resultType(1) != scalarF32 || node.resultType(2) != scalarU8)
    return fail(node, rewriter, "y_scale and y_zero_point must be scalars");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  MLIRContext *context = rewriter.getContext();
  auto reduceAll = [&](ReduceKind kind) -> Value {
    return rewriter.create<ReduceOp>(
        loc, scalarF32, ReduceKindAttr::get(context, kind), node.input(0),
        rewriter.getDenseI64ArrayAttr({}), UnitAttr(), device);
  };
  Type f32 = rewriter.getF32Type();
  Value zero = scalarConstant(rewriter, loc, f32, 0);
  Value low = rewriter.create<MinOp>(loc, scalarF32, reduceAll(ReduceKind::Min),
                                     zero, device);
  Value high = rewriter.create<MaxOp>(loc, scalarF32,
                                      reduceAll(ReduceKind::Max), zero, device);
  Value scale = rewriter.create<DivOp>(
      loc, scalarF32, rewriter.create<SubOp>(loc, scalarF32, high, low, device),
      scalarConstant(rewriter, loc, f32, 255), device);
  // zero point = saturate(round(0 - low / scale)), kept in f32 for y.
  Value zeroPoint = rewriter.create<NegOp>(
      loc, scalarF32,
      rewriter.create<DivOp>(loc, scalarF32, low, scale, device), device);
  zeroPoint = rewriter.create<RoundOp>(loc, scalarF32, zeroPoint, device);
  zeroPoint = rewriter.create<ClipOp>(loc, scalarF32, zeroPoint,
                                      rewriter.getF64FloatAttr(0),
                                      rewriter.getF64FloatAttr(255), device);
  Value quantized =
      quantize(node, rewriter, node.input(0), scale, zeroPoint, y);
  Value zeroPointU8 = rewriter.create<CastOp>(loc, scalarU8, zeroPoint, device);
  rewriter.replaceOp(node.getOp(), ValueRange{quantized, scale, zeroPointU8});
  return success();
}

/// `rewrite`, for nodes whose element-type attribute `name` is unset (0)
/// or float (1).
ONNXRewrite onlyFloat(StringRef name, ONNXRewrite rewrite) {
  return [name, rewrite = std::move(rewrite)](ONNXNode node,
                                              PatternRewriter &rewriter) {
    int64_t type = node.getInt(name, 0);
    if (type != 0 && type != 1)
      return fail(node, rewriter, name + " other than float");
    return rewrite(node, rewriter);
  };
}

} // namespace

void populateQuantizationPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "QuantizeLinear", 10, 12, {},
                 legalizeQuantizeLinear);
  addONNXPattern(patterns, "QuantizeLinear", 13, 20, {"axis"},
                 legalizeQuantizeLinear);
  // 21: blocked scales; output_dtype only names the result type, and
  // saturate only matters for float8.
  addONNXPattern(patterns, "QuantizeLinear", 21, 22,
                 {"axis", "block_size", "output_dtype", "saturate"},
                 legalizeQuantizeLinear);
  // 23: precision, the type the division is computed in; float (the
  // scale's type here) or unset.
  addONNXPattern(
      patterns, "QuantizeLinear", 23, kMaxOpset,
      {"axis", "block_size", "output_dtype", "precision", "saturate"},
      onlyFloat("precision", legalizeQuantizeLinear));
  addONNXPattern(patterns, "DequantizeLinear", 10, 12, {},
                 legalizeDequantizeLinear);
  addONNXPattern(patterns, "DequantizeLinear", 13, 20, {"axis"},
                 legalizeDequantizeLinear);
  addONNXPattern(patterns, "DequantizeLinear", 21, 22, {"axis", "block_size"},
                 legalizeDequantizeLinear);
  // 23: output_dtype, the result type: float (the scale's) or unset.
  addONNXPattern(patterns, "DequantizeLinear", 23, kMaxOpset,
                 {"axis", "block_size", "output_dtype"},
                 onlyFloat("output_dtype", legalizeDequantizeLinear));
  addONNXPattern(patterns, "DynamicQuantizeLinear", 11, kMaxOpset, {},
                 legalizeDynamicQuantizeLinear);
}

} // namespace heterps::hps
