//===- QuantizedLinear.cpp - MatMulInteger, ConvInteger and QLinear* ------===//
//
// The integer products widen both operands to i32 and subtract their zero
// points there, then run hps.matmul or hps.conv on i32 (exact loops on the
// CPU, wrapping as onnxruntime's do); a zero-padded conv of x - x_zero_point
// is the conv of x padded with its zero point, as the spec pads. The QLinear
// ops then requantize the i32 accumulator as onnxruntime does: converted to
// f32, times one multiplier x_scale * w_scale / y_scale computed first,
// rounded half to even, plus y's zero point, saturated.
//
// Zero points and scales are per tensor, or per row of A / per column of B
// (the matmuls) and per output channel of the filter (the convs).
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "WindowAttrs.h"

#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// A u8 or i8 operand with its zero point and scale (both optional), and
/// the shapes they are reshaped to so that they broadcast against it (or
/// against the product, for a scale); empty for one value for all.
struct QuantizedOperand {
  Value value, zeroPoint, scale;
  SmallVector<int64_t> zeroShape, scaleShape;
};

/// The broadcast shape of a zero point or scale: {} for one value, or
/// `perAxis` where it holds `length` values; std::nullopt for neither.
std::optional<SmallVector<int64_t>> layoutOf(Value operand, int64_t length,
                                             ArrayRef<int64_t> perAxis) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  if (type.getNumElements() == 1 && type.getRank() <= 1)
    return SmallVector<int64_t>();
  if (type.getRank() == 1 && length != ShapedType::kDynamic &&
      type.getDimSize(0) == length)
    return SmallVector<int64_t>(perAxis);
  return std::nullopt;
}

/// Where the `length` values of a per-axis zero point and scale go: the
/// zero point against the operand, the scale against the product.
struct PerAxis {
  int64_t length = 1;
  SmallVector<int64_t> zeroShape, scaleShape;
};

/// Checks operand `index` of the node (u8 or i8), the zero point at
/// `zeroIndex` (its element type) and, when `scaleIndex` >= 0, the f32
/// scale there; each holds one value or `axis.length`. Creates nothing.
FailureOr<QuantizedOperand> checkOperand(ONNXNode node,
                                         PatternRewriter &rewriter,
                                         unsigned index, unsigned zeroIndex,
                                         int scaleIndex, const PerAxis &axis) {
  QuantizedOperand operand;
  operand.value = node.input(index);
  auto type = dyn_cast<RankedTensorType>(operand.value.getType());
  if (!type || !quantizedRange(type.getElementType()))
    return fail(node, rewriter, "the quantized operands must be u8 or i8");
  if (Value zeroPoint = node.input(zeroIndex); isPresent(zeroPoint)) {
    auto layout = layoutOf(zeroPoint, axis.length, axis.zeroShape);
    if (!layout || cast<ShapedType>(zeroPoint.getType()).getElementType() !=
                       type.getElementType())
      return fail(node, rewriter,
                  "a zero point of another type or of the wrong length");
    operand.zeroPoint = zeroPoint;
    operand.zeroShape = *layout;
  }
  if (scaleIndex >= 0) {
    Value scale = node.input(scaleIndex);
    auto layout = isPresent(scale)
                      ? layoutOf(scale, axis.length, axis.scaleShape)
                      : std::optional<SmallVector<int64_t>>();
    if (!layout || !cast<ShapedType>(scale.getType()).getElementType().isF32())
      return fail(node, rewriter,
                  "a scale that is not f32 of the right length");
    operand.scale = scale;
    operand.scaleShape = *layout;
  }
  return operand;
}

/// `value` converted to `element` and reshaped to `shape`.
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

/// The operand minus its zero point, in i32.
Value widen(ONNXNode node, PatternRewriter &rewriter,
            const QuantizedOperand &operand) {
  Type i32 = rewriter.getI32Type();
  auto type = cast<RankedTensorType>(operand.value.getType());
  Value value = convertTo(node, rewriter, operand.value, i32, type.getShape());
  if (!operand.zeroPoint)
    return value;
  Value zero =
      convertTo(node, rewriter, operand.zeroPoint, i32, operand.zeroShape);
  return rewriter.create<SubOp>(node.getLoc(), type.clone(i32), value, zero,
                                node.getOp().getDeviceAttr());
}

/// The QLinear ops' output: requantizes the i32 `accumulator` with
/// `lhs.scale * rhs.scale / y_scale` and y's zero point (inputs
/// `yScaleIndex` and the one after it) into the node's u8 or i8 result.
Value requantize(ONNXNode node, PatternRewriter &rewriter, Value accumulator,
                 const QuantizedOperand &lhs, const QuantizedOperand &rhs,
                 unsigned yScaleIndex) {
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type f32 = rewriter.getF32Type();
  auto result = cast<RankedTensorType>(node.resultType());
  Value lhsScale = convertTo(node, rewriter, lhs.scale, f32, lhs.scaleShape);
  Value rhsScale = convertTo(node, rewriter, rhs.scale, f32, rhs.scaleShape);
  Value yScale = convertTo(node, rewriter, node.input(yScaleIndex), f32, {});
  auto shape = shapes::broadcast(lhs.scaleShape, rhs.scaleShape);
  auto multiplierType = RankedTensorType::get(*shape, f32);
  Value multiplier =
      rewriter.create<MulOp>(loc, multiplierType, lhsScale, rhsScale, device);
  multiplier =
      rewriter.create<DivOp>(loc, multiplierType, multiplier, yScale, device);
  auto f32Result = result.clone(f32);
  Value scaled = rewriter.create<CastOp>(loc, f32Result, accumulator, device);
  scaled = rewriter.create<MulOp>(loc, f32Result, scaled, multiplier, device);
  Value yZero = node.input(yScaleIndex + 1);
  Value zero =
      isPresent(yZero) ? convertTo(node, rewriter, yZero, f32, {}) : Value();
  return roundAndSaturate(node, rewriter, scaled, zero, result);
}

/// Checks y_scale (f32) and y_zero_point (u8 or i8, the result's type), one
/// value each, at `yScaleIndex` and the input after it. Creates nothing.
LogicalResult checkOutputQuantization(ONNXNode node, PatternRewriter &rewriter,
                                      unsigned yScaleIndex) {
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!result || !quantizedRange(result.getElementType()))
    return fail(node, rewriter, "the result must be u8 or i8");
  Value scale = node.input(yScaleIndex), zero = node.input(yScaleIndex + 1);
  if (!isPresent(scale) || !layoutOf(scale, 1, {}) ||
      !cast<ShapedType>(scale.getType()).getElementType().isF32())
    return fail(node, rewriter, "y_scale must be one f32");
  if (isPresent(zero) && (!layoutOf(zero, 1, {}) ||
                          cast<ShapedType>(zero.getType()).getElementType() !=
                              result.getElementType()))
    return fail(node, rewriter, "y_zero_point must be one of y's type");
  return success();
}

/// A matmul's rows of A and columns of B: [M, 1] lays a per-row value
/// along both A [..., M, K] and the product [..., M, N], [N] a per-column
/// one along B [..., K, N] and the product.
struct MatMulAxes {
  PerAxis rows, columns;
};

std::optional<MatMulAxes> matmulAxes(Value a, Value b) {
  auto aType = dyn_cast<RankedTensorType>(a.getType());
  auto bType = dyn_cast<RankedTensorType>(b.getType());
  if (!aType || !bType || aType.getRank() < 1 || bType.getRank() < 1)
    return std::nullopt;
  int64_t rows =
      aType.getRank() >= 2 ? aType.getDimSize(aType.getRank() - 2) : 1;
  int64_t columns =
      bType.getRank() >= 2 ? bType.getDimSize(bType.getRank() - 1) : 1;
  return MatMulAxes{{rows, {rows, 1}, {rows, 1}},
                    {columns, {columns}, {columns}}};
}

/// A matmul of the node's A (input 0) and B (input `bIndex`) would verify
/// with the node's result shape. Creates nothing.
bool matmulVerifies(ONNXNode node, unsigned bIndex) {
  OpBuilder detached(node.getOp()->getContext());
  auto probe =
      detached.create<MatMulOp>(node.getLoc(), node.resultType(), node.input(0),
                                node.input(bIndex), DeviceAttr());
  bool valid = verifiesQuietly(probe);
  probe->destroy();
  return valid;
}

Value integerMatMul(ONNXNode node, PatternRewriter &rewriter,
                    const QuantizedOperand &a, const QuantizedOperand &b) {
  auto type = cast<RankedTensorType>(node.resultType());
  // One statement each: the IR comes out in operand order.
  Value lhs = widen(node, rewriter, a);
  Value rhs = widen(node, rewriter, b);
  return rewriter.create<MatMulOp>(node.getLoc(),
                                   type.clone(rewriter.getI32Type()), lhs, rhs,
                                   node.getOp().getDeviceAttr());
}

/// MatMulInteger (10): A and B u8 or i8, optional zero points, an i32
/// result.
LogicalResult legalizeMatMulInteger(ONNXNode node, PatternRewriter &rewriter) {
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  auto axes = matmulAxes(node.input(0), node.input(1));
  if (!result || !result.getElementType().isSignlessInteger(32) || !axes ||
      !matmulVerifies(node, 1))
    return fail(node, rewriter, "needs ranked A and B and an i32 product");
  auto a = checkOperand(node, rewriter, 0, 2, -1, axes->rows);
  auto b = checkOperand(node, rewriter, 1, 3, -1, axes->columns);
  if (failed(a) || failed(b))
    return failure();
  return replaceNodeWithCompatible(node, integerMatMul(node, rewriter, *a, *b),
                                   rewriter);
}

/// QLinearMatMul (10): a, a_scale, a_zero_point, b, b_scale, b_zero_point,
/// y_scale, y_zero_point.
LogicalResult legalizeQLinearMatMul(ONNXNode node, PatternRewriter &rewriter) {
  auto axes = matmulAxes(node.input(0), node.input(3));
  if (!axes || !matmulVerifies(node, 3))
    return fail(node, rewriter, "needs ranked a and b of the result's shape");
  auto a = checkOperand(node, rewriter, 0, 2, 1, axes->rows);
  auto b = checkOperand(node, rewriter, 3, 5, 4, axes->columns);
  if (failed(a) || failed(b) ||
      failed(checkOutputQuantization(node, rewriter, 6)))
    return failure();
  Value y = requantize(node, rewriter, integerMatMul(node, rewriter, *a, *b),
                       *a, *b, 6);
  return replaceNodeWithCompatible(node, y, rewriter);
}

/// The geometry of ConvInteger and QLinearConv, whose attributes are Conv's;
/// `filterIndex` is W's input.
struct ConvGeometry {
  WindowAttrs window;
  int64_t group = 1;
  /// Per output channel: [M, 1...] against the filter and the result.
  PerAxis channels;
};

FailureOr<ConvGeometry> convGeometry(ONNXNode node, PatternRewriter &rewriter,
                                     unsigned filterIndex) {
  auto filter = rankedShape(node.input(filterIndex));
  if (!filter || filter->size() < 3 || (*filter)[0] == ShapedType::kDynamic)
    return fail(node, rewriter, "needs a filter of known output channels");
  SmallVector<int64_t> kernel(filter->drop_front(2));
  if (auto given = node.getInts("kernel_shape");
      given && ArrayRef<int64_t>(*given) != ArrayRef<int64_t>(kernel))
    return fail(node, rewriter, "kernel_shape differs from the filter");
  FailureOr<WindowAttrs> window = resolveWindow(node, kernel);
  if (failed(window))
    return fail(node, rewriter, "unresolved window attributes");
  ConvGeometry geometry{*window, node.getInt("group", 1), {}};
  PerAxis &channels = geometry.channels;
  channels.length = (*filter)[0];
  channels.zeroShape.assign(filter->size(), 1);
  channels.scaleShape.assign(filter->size() - 1, 1);
  channels.zeroShape[0] = channels.scaleShape[0] = channels.length;
  OpBuilder detached(node.getOp()->getContext());
  auto probe = detached.create<ConvOp>(
      node.getLoc(), node.resultType(), node.input(0), node.input(filterIndex),
      Value(), detached.getDenseI64ArrayAttr(window->strides),
      detached.getDenseI64ArrayAttr(window->pads),
      detached.getDenseI64ArrayAttr(window->dilations),
      detached.getI64IntegerAttr(geometry.group), DeviceAttr());
  bool valid = verifiesQuietly(probe);
  probe->destroy();
  if (!valid)
    return fail(node, rewriter, "the hps conv would not verify");
  return geometry;
}

Value integerConv(ONNXNode node, PatternRewriter &rewriter,
                  const ConvGeometry &geometry, const QuantizedOperand &x,
                  const QuantizedOperand &w, Value bias) {
  auto type = cast<RankedTensorType>(node.resultType());
  const WindowAttrs &window = geometry.window;
  Value input = widen(node, rewriter, x);
  Value filter = widen(node, rewriter, w);
  return rewriter.create<ConvOp>(
      node.getLoc(), type.clone(rewriter.getI32Type()), input, filter, bias,
      rewriter.getDenseI64ArrayAttr(window.strides),
      rewriter.getDenseI64ArrayAttr(window.pads),
      rewriter.getDenseI64ArrayAttr(window.dilations),
      rewriter.getI64IntegerAttr(geometry.group), node.getOp().getDeviceAttr());
}

/// ConvInteger (10): x and w u8 or i8, x's zero point one value, w's one or
/// per output channel; an i32 result without bias.
LogicalResult legalizeConvInteger(ONNXNode node, PatternRewriter &rewriter) {
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!result || !result.getElementType().isSignlessInteger(32))
    return fail(node, rewriter, "needs an i32 result");
  FailureOr<ConvGeometry> geometry = convGeometry(node, rewriter, 1);
  if (failed(geometry))
    return failure();
  auto x = checkOperand(node, rewriter, 0, 2, -1, PerAxis());
  auto w = checkOperand(node, rewriter, 1, 3, -1, geometry->channels);
  if (failed(x) || failed(w))
    return failure();
  return replaceNodeWithCompatible(
      node, integerConv(node, rewriter, *geometry, *x, *w, Value()), rewriter);
}

/// QLinearConv (10): x, x_scale, x_zero_point, w, w_scale, w_zero_point,
/// y_scale, y_zero_point, optional i32 bias B [M] (in x_scale * w_scale
/// units, added to the accumulator).
LogicalResult legalizeQLinearConv(ONNXNode node, PatternRewriter &rewriter) {
  FailureOr<ConvGeometry> geometry = convGeometry(node, rewriter, 3);
  if (failed(geometry))
    return failure();
  auto x = checkOperand(node, rewriter, 0, 2, 1, PerAxis());
  auto w = checkOperand(node, rewriter, 3, 5, 4, geometry->channels);
  if (failed(x) || failed(w) ||
      failed(checkOutputQuantization(node, rewriter, 6)))
    return failure();
  Value bias = node.input(8);
  if (isPresent(bias)) {
    auto type = dyn_cast<RankedTensorType>(bias.getType());
    if (!type || !type.getElementType().isSignlessInteger(32) ||
        type.getShape() != ArrayRef<int64_t>{geometry->channels.length})
      return fail(node, rewriter, "B must be i32 with one value per channel");
  } else {
    bias = Value();
  }
  Value y = requantize(node, rewriter,
                       integerConv(node, rewriter, *geometry, *x, *w, bias), *x,
                       *w, 6);
  return replaceNodeWithCompatible(node, y, rewriter);
}

} // namespace

void populateQuantizedLinearPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "MatMulInteger", 10, kMaxOpset, {},
                 legalizeMatMulInteger);
  addONNXPattern(patterns, "QLinearMatMul", 10, kMaxOpset, {},
                 legalizeQLinearMatMul);
  static constexpr StringRef kConvAttrs[] = {
      "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
  addONNXPattern(patterns, "ConvInteger", 10, kMaxOpset, kConvAttrs,
                 legalizeConvInteger);
  addONNXPattern(patterns, "QLinearConv", 10, kMaxOpset, kConvAttrs,
                 legalizeQLinearConv);
}

} // namespace heterps::hps
