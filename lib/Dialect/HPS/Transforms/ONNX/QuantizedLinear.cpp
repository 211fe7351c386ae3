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
// A conv of u8 x by a constant filter within +-64 of its zero points stays
// integer (u8 by i8 into i32), for the CPU's int8 kernels; the zero points
// fold into the constants.
//
// Quantized models hold their filters and B as constants. Where the largest
// accumulator those constants allow stays below 2^24, every partial sum is
// an integer f32 holds exactly, whatever the summation order, so the product
// runs on f32 (oneDNN's kernels rather than the i32 loops) with the
// constant minus its zero point folded at compile time, and is still exact.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "WindowAttrs.h"
#include "mlir/Dialect/Traits.h"

#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"

#include <cstring>

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

/// The operand minus its zero point, in `element` (i32, or f32 where the
/// product is exact in f32).
Value widen(ONNXNode node, PatternRewriter &rewriter,
            const QuantizedOperand &operand, Type element) {
  auto type = cast<RankedTensorType>(operand.value.getType());
  Value value =
      convertTo(node, rewriter, operand.value, element, type.getShape());
  if (!operand.zeroPoint)
    return value;
  Value zero =
      convertTo(node, rewriter, operand.zeroPoint, element, operand.zeroShape);
  return rewriter.create<SubOp>(node.getLoc(), type.clone(element), value, zero,
                                node.getOp().getDeviceAttr());
}

/// The values of an integer constant, inline or a resource blob (weights);
/// std::nullopt for anything else.
std::optional<SmallVector<int64_t>> constantIntegers(Value value) {
  if (!value)
    return std::nullopt;
  ElementsAttr attr = getConstantValue(value);
  if (!attr)
    return std::nullopt;
  if (isa<DenseElementsAttr>(attr))
    return getConstantInts(value);
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  auto integer = dyn_cast<IntegerType>(attr.getElementType());
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || !integer || integer.getWidth() % 8 != 0 ||
      integer.getWidth() > 64)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  unsigned bytes = integer.getWidth() / 8;
  if (int64_t(data.size()) != attr.getNumElements() * bytes)
    return std::nullopt;
  SmallVector<int64_t> values;
  values.reserve(attr.getNumElements());
  for (size_t offset = 0; offset < data.size(); offset += bytes) {
    uint64_t bits = 0;
    std::memcpy(&bits, data.data() + offset, bytes); // little-endian hosts
    APInt element(integer.getWidth(), bits);
    values.push_back(integer.isUnsigned() ? int64_t(element.getZExtValue())
                                          : element.getSExtValue());
  }
  return values;
}

/// The operand's zero points, constant ({0} without any); std::nullopt
/// where they are not constants.
std::optional<SmallVector<int64_t>>
constantZeroPoints(const QuantizedOperand &operand) {
  if (!operand.zeroPoint)
    return SmallVector<int64_t>{0};
  std::optional<SmallVector<int64_t>> zeros =
      constantIntegers(operand.zeroPoint);
  if (!zeros || zeros->empty())
    return std::nullopt;
  return zeros;
}

/// The largest |x - x_zero_point| an operand can hold.
double largestShift(const QuantizedOperand &operand) {
  Type element = cast<ShapedType>(operand.value.getType()).getElementType();
  auto [low, high] = *quantizedRange(element);
  if (!operand.zeroPoint)
    return std::max(-low, high);
  std::optional<SmallVector<int64_t>> zeros =
      constantIntegers(operand.zeroPoint);
  if (!zeros)
    return high - low;
  double largest = 0;
  for (int64_t zero : *zeros)
    largest = std::max({largest, zero - low, high - zero});
  return largest;
}

/// Below this every integer, hence every partial sum, is exact in f32.
constexpr double kExactFloatLimit = double(int64_t(1) << 24);

/// The constant `operand` minus its zero point as exact f32 values, where
/// every accumulator stays below kExactFloatLimit: the other operand's
/// shifts are at most `otherShift`, `outputOf` maps an element to the one
/// of `outputs` accumulators it feeds (its zero point is that output modulo
/// the number of zero points), and a bias adds at most `biasBound`.
std::optional<SmallVector<float>>
exactFloatOperand(const QuantizedOperand &operand,
                  llvm::function_ref<int64_t(int64_t)> outputOf,
                  int64_t outputs, double otherShift, double biasBound) {
  std::optional<SmallVector<int64_t>> values = constantIntegers(operand.value);
  std::optional<SmallVector<int64_t>> zeros = constantZeroPoints(operand);
  if (!values || !zeros || outputs <= 0)
    return std::nullopt;
  SmallVector<double> sums(outputs, 0.0);
  SmallVector<float> shifted;
  shifted.reserve(values->size());
  for (auto [i, value] : llvm::enumerate(*values)) {
    int64_t output = outputOf(i);
    int64_t difference = value - (*zeros)[output % zeros->size()];
    sums[output] += std::abs(double(difference));
    shifted.push_back(float(difference));
  }
  double largest = *llvm::max_element(sums);
  if (largest * otherShift + biasBound >= kExactFloatLimit)
    return std::nullopt;
  return shifted;
}

/// An hps.constant of `shape` holding `values` as f32.
Value floatConstant(ONNXNode node, PatternRewriter &rewriter,
                    ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, rewriter.getF32Type());
  return rewriter.create<ConstantOp>(node.getLoc(),
                                     DenseElementsAttr::get(type, values));
}

/// The QLinear ops' output: requantizes the exact `accumulator` with
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
  Value scaled = accumulator;
  if (cast<ShapedType>(accumulator.getType()).getElementType() != f32)
    scaled = rewriter.create<CastOp>(loc, f32Result, accumulator, device);
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
  return probeVerifies(node.getOp()->getContext(), [&](OpBuilder &builder) {
    return builder.create<MatMulOp>(node.getLoc(), node.resultType(),
                                    node.input(0), node.input(bIndex),
                                    DeviceAttr());
  });
}

/// The exact product of A and B minus their zero points: in f32 where B is
/// a constant that keeps it exact, else in i32.
Value quantizedMatMul(ONNXNode node, PatternRewriter &rewriter,
                      const QuantizedOperand &a, const QuantizedOperand &b) {
  auto type = cast<RankedTensorType>(node.resultType());
  auto bType = cast<RankedTensorType>(b.value.getType());
  int64_t columns = bType.getRank() >= 2 ? bType.getShape().back() : 1;
  int64_t depth = bType.getRank() >= 2 ? bType.getShape().drop_back().back()
                                       : bType.getShape().back();
  std::optional<SmallVector<float>> exactB;
  if (bType.hasStaticShape() && depth > 0)
    exactB = exactFloatOperand(
        b,
        [&](int64_t i) {
          return i / (depth * columns) * columns + i % columns;
        },
        bType.getNumElements() / depth, largestShift(a), 0);
  // One statement each: the IR comes out in operand order.
  Type element = exactB ? Type(rewriter.getF32Type()) : rewriter.getI32Type();
  Value lhs = widen(node, rewriter, a, element);
  Value rhs = exactB ? floatConstant(node, rewriter, bType.getShape(), *exactB)
                     : widen(node, rewriter, b, element);
  return rewriter.create<MatMulOp>(node.getLoc(), type.clone(element), lhs, rhs,
                                   node.getOp().getDeviceAttr());
}

/// `accumulator` (exact, i32 or f32) as the node's i32 result.
Value asI32(ONNXNode node, PatternRewriter &rewriter, Value accumulator) {
  auto type = cast<RankedTensorType>(accumulator.getType());
  if (type.getElementType().isSignlessInteger(32))
    return accumulator;
  return rewriter.create<CastOp>(node.getLoc(),
                                 type.clone(rewriter.getI32Type()), accumulator,
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
  return replaceNodeWithCompatible(
      node, asI32(node, rewriter, quantizedMatMul(node, rewriter, *a, *b)),
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
  Value y = requantize(node, rewriter, quantizedMatMul(node, rewriter, *a, *b),
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
  // The hps conv's shape rule on the node's operands: the shapes the convs
  // built below will have, whatever their element types.
  Builder b(node.getOp()->getContext());
  ConvOp::Properties geometryAttrs;
  geometryAttrs.setStrides(b.getDenseI64ArrayAttr(window->strides));
  geometryAttrs.setPads(b.getDenseI64ArrayAttr(window->pads));
  geometryAttrs.setDilations(b.getDenseI64ArrayAttr(window->dilations));
  geometryAttrs.setGroup(b.getI64IntegerAttr(geometry.group));
  SmallVector<ShapedTypeComponents> shapes;
  LogicalResult inferred = ConvOp::inferReturnTypeComponents(
      b.getContext(), std::nullopt,
      ConvOp::Adaptor(ValueRange{node.input(0), node.input(filterIndex)},
                      nullptr, geometryAttrs),
      shapes);
  auto resultType = dyn_cast<RankedTensorType>(node.resultType());
  if (failed(inferred) || !shapes.front().hasRank() || !resultType ||
      failed(verifyCompatibleShape(shapes.front().getDims(),
                                   resultType.getShape())))
    return fail(node, rewriter, "the hps conv would not verify");
  return geometry;
}

/// The largest |w - w_zero_point| the CPU's int8 convolutions sum exactly
/// without VNNI (see the runtime's IntegerConv); onnxruntime's quantizer
/// stays within it with reduce_range, its advice for such CPUs.
constexpr int64_t kMaxInt8ConvWeight = 64;

/// The convolution of a u8 x by a constant filter within
/// kMaxInt8ConvWeight of its zero points, as one integer hps.conv (u8 by
/// i8 into i32) for the int8 kernels: the filter's zero points are folded
/// into the i8 constant and x's into the bias (as -x_zero_point * sum(w)),
/// x being padded with its zero point first where the conv pads. Null where
/// the operands do not allow it, or a sum could leave f32's exact integers.
Value int8Conv(ONNXNode node, PatternRewriter &rewriter,
               const ConvGeometry &geometry, const QuantizedOperand &x,
               const QuantizedOperand &w, Value bias) {
  auto xType = cast<RankedTensorType>(x.value.getType());
  auto wType = cast<RankedTensorType>(w.value.getType());
  if (!xType.getElementType().isUnsignedInteger(8) || !wType.hasStaticShape() ||
      wType.getNumElements() == 0)
    return {};
  std::optional<SmallVector<int64_t>> xZeros = constantZeroPoints(x);
  std::optional<SmallVector<int64_t>> wZeros = constantZeroPoints(w);
  if (!xZeros || xZeros->size() != 1 || !wZeros)
    return {};
  int64_t xZero = xZeros->front();
  std::optional<SmallVector<int64_t>> biasValues;
  if (bias && !(biasValues = constantIntegers(bias)))
    return {};
  std::optional<SmallVector<int64_t>> values = constantIntegers(w.value);
  if (!values)
    return {};
  int64_t channels = wType.getDimSize(0);
  int64_t perOutput = wType.getNumElements() / channels;
  SmallVector<int8_t> filter;
  filter.reserve(values->size());
  SmallVector<int64_t> sums(channels, 0), absSums(channels, 0);
  for (auto [i, value] : llvm::enumerate(*values)) {
    int64_t channel = int64_t(i) / perOutput;
    int64_t shifted = value - (*wZeros)[channel % wZeros->size()];
    if (std::abs(shifted) > kMaxInt8ConvWeight)
      return {};
    filter.push_back(int8_t(shifted));
    sums[channel] += shifted;
    absSums[channel] += std::abs(shifted);
  }
  SmallVector<int32_t> biasOut(channels);
  for (int64_t channel = 0; channel < channels; ++channel) {
    int64_t value =
        (biasValues ? (*biasValues)[channel] : 0) - xZero * sums[channel];
    if (255. * double(absSums[channel]) + std::abs(double(value)) >=
        kExactFloatLimit)
      return {};
    biasOut[channel] = int32_t(value);
  }

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  const WindowAttrs &window = geometry.window;
  Value input = x.value;
  SmallVector<int64_t> convPads(window.pads);
  if (xZero != 0 && llvm::any_of(window.pads, [](int64_t p) { return p; })) {
    int64_t rank = xType.getRank(), spatial = rank - 2;
    SmallVector<int64_t> pads(2 * rank, 0);
    SmallVector<int64_t> shape(xType.getShape());
    for (int64_t d = 0; d < spatial; ++d) {
      if (ShapedType::isDynamic(shape[2 + d]))
        return {};
      pads[2 + d] = window.pads[d];
      pads[rank + 2 + d] = window.pads[spatial + d];
      shape[2 + d] += window.pads[d] + window.pads[spatial + d];
    }
    input = rewriter.create<PadOp>(
        loc, xType.clone(shape), x.value, rewriter.getDenseI64ArrayAttr(pads),
        PadModeAttr::get(rewriter.getContext(), PadMode::Constant),
        makeScalarAttr(xType.getElementType(), double(xZero)), device);
    convPads.assign(convPads.size(), 0);
  }
  Value filterValue = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(wType.clone(rewriter.getI8Type()),
                                  ArrayRef(filter)));
  Value biasValue;
  if (bias || xZero != 0)
    biasValue = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 RankedTensorType::get({channels}, rewriter.getI32Type()),
                 ArrayRef(biasOut)));
  auto type = cast<RankedTensorType>(node.resultType());
  return rewriter.create<ConvOp>(
      loc, type.clone(rewriter.getI32Type()), input, filterValue, biasValue,
      rewriter.getDenseI64ArrayAttr(window.strides),
      rewriter.getDenseI64ArrayAttr(convPads),
      rewriter.getDenseI64ArrayAttr(window.dilations),
      rewriter.getI64IntegerAttr(geometry.group), device, UnitAttr());
}

/// The exact convolution of x and w minus their zero points, plus the i32
/// bias: on int8 where int8Conv allows, in f32 where w (and the bias) are
/// constants that keep it exact, else in i32.
Value quantizedConv(ONNXNode node, PatternRewriter &rewriter,
                    const ConvGeometry &geometry, const QuantizedOperand &x,
                    const QuantizedOperand &w, Value bias) {
  if (Value conv = int8Conv(node, rewriter, geometry, x, w, bias))
    return conv;
  auto type = cast<RankedTensorType>(node.resultType());
  auto wType = cast<RankedTensorType>(w.value.getType());
  const WindowAttrs &window = geometry.window;
  std::optional<SmallVector<int64_t>> biasValues = constantIntegers(bias);
  std::optional<SmallVector<float>> exactW;
  if (wType.hasStaticShape() && (!bias || biasValues)) {
    double biasBound = 0;
    for (int64_t value : biasValues.value_or(SmallVector<int64_t>()))
      biasBound = std::max(biasBound, std::abs(double(value)));
    int64_t perOutput = wType.getNumElements() / geometry.channels.length;
    exactW = exactFloatOperand(
        w, [&](int64_t i) { return i / perOutput; }, geometry.channels.length,
        largestShift(x), biasBound);
  }
  Type element = exactW ? Type(rewriter.getF32Type()) : rewriter.getI32Type();
  Value input = widen(node, rewriter, x, element);
  Value filter = exactW
                     ? floatConstant(node, rewriter, wType.getShape(), *exactW)
                     : widen(node, rewriter, w, element);
  if (bias && exactW) {
    SmallVector<float> values(biasValues->begin(), biasValues->end());
    bias = floatConstant(node, rewriter, {int64_t(values.size())}, values);
  }
  // On f32 the sums are exact only if no kernel rounds in between.
  return rewriter.create<ConvOp>(
      node.getLoc(), type.clone(element), input, filter, bias,
      rewriter.getDenseI64ArrayAttr(window.strides),
      rewriter.getDenseI64ArrayAttr(window.pads),
      rewriter.getDenseI64ArrayAttr(window.dilations),
      rewriter.getI64IntegerAttr(geometry.group), node.getOp().getDeviceAttr(),
      exactW ? rewriter.getUnitAttr() : UnitAttr());
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
  Value accumulator = quantizedConv(node, rewriter, *geometry, *x, *w, Value());
  return replaceNodeWithCompatible(node, asI32(node, rewriter, accumulator),
                                   rewriter);
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
                       quantizedConv(node, rewriter, *geometry, *x, *w, bias),
                       *x, *w, 6);
  return replaceNodeWithCompatible(node, y, rewriter);
}

/// `value` [R, C] as [C, R]: a constant of integers is transposed here (so
/// that the product can still run on exact f32), anything else by
/// hps.transpose.
Value transposed(ONNXNode node, PatternRewriter &rewriter, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto result = RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                                      type.getElementType());
  if (std::optional<SmallVector<int64_t>> values = constantIntegers(value);
      values && type.hasStaticShape()) {
    int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
    unsigned width = type.getElementTypeBitWidth();
    bool isSigned = !type.getElementType().isUnsignedInteger();
    SmallVector<APInt> moved;
    moved.reserve(values->size());
    for (int64_t c = 0; c < columns; ++c)
      for (int64_t r = 0; r < rows; ++r)
        moved.push_back(
            APInt(width, uint64_t((*values)[r * columns + c]), isSigned));
    return rewriter.create<ConstantOp>(node.getLoc(),
                                       DenseElementsAttr::get(result, moved));
  }
  return rewriter.create<TransposeOp>(node.getLoc(), result, value,
                                      rewriter.getDenseI64ArrayAttr({1, 0}),
                                      node.getOp().getDeviceAttr());
}

/// com.microsoft QGemm (1): A, a_scale, a_zero_point, B, b_scale,
/// b_zero_point (per tensor, or per column of the product), C (optional
/// i32 bias with scale a_scale * b_scale), y_scale and y_zero_point
/// (optional: without them Y is f32); alpha, transA, transB. As onnxruntime
/// computes it: the exact product plus C in i32, then times b_scale *
/// (a_scale * alpha) (/ y_scale, rounded and saturated).
LogicalResult legalizeQGemm(ONNXNode node, PatternRewriter &rewriter) {
  auto aType = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto bType = dyn_cast<RankedTensorType>(node.input(3).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  std::optional<bool> transA = getFlag(node, "transA");
  std::optional<bool> transB = getFlag(node, "transB");
  if (!aType || !bType || !result || aType.getRank() != 2 ||
      bType.getRank() != 2 || result.getRank() != 2 ||
      !result.hasStaticShape() || !transA || !transB)
    return fail(node, rewriter, "needs 2-D A, B and Y and 0/1 transA, transB");
  int64_t rows = result.getDimSize(0), columns = result.getDimSize(1);
  int64_t depth = aType.getDimSize(*transA ? 0 : 1);
  if (aType.getDimSize(*transA ? 1 : 0) != rows ||
      bType.getDimSize(*transB ? 1 : 0) != depth ||
      bType.getDimSize(*transB ? 0 : 1) != columns)
    return fail(node, rewriter, "A and B do not multiply to Y");
  PerAxis single;
  PerAxis perColumn{columns, {columns}, {columns}};
  auto a = checkOperand(node, rewriter, 0, 2, 1, single);
  auto b = checkOperand(node, rewriter, 3, 5, 4, perColumn);
  if (failed(a) || failed(b))
    return failure();
  Value bias = node.input(6), yScale = node.input(7);
  bool quantizedY = isPresent(yScale);
  if (quantizedY ? failed(checkOutputQuantization(node, rewriter, 7))
                 : !result.getElementType().isF32())
    return fail(node, rewriter, "Y must be u8/i8 with y_scale, else f32");
  SmallVector<int64_t> biasShape;
  if (isPresent(bias)) {
    auto type = dyn_cast<RankedTensorType>(bias.getType());
    if (!type || !type.getElementType().isSignlessInteger(32) ||
        !OpTrait::util::getBroadcastedShape(type.getShape(), result.getShape(),
                                            biasShape) ||
        ArrayRef<int64_t>(biasShape) != result.getShape())
      return fail(node, rewriter, "C must be i32 broadcasting to Y");
  }
  // Creates from here on.
  if (*transA)
    a->value = transposed(node, rewriter, a->value);
  if (*transB)
    b->value = transposed(node, rewriter, b->value);
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type f32 = rewriter.getF32Type();
  auto accumulatorType = result.clone(rewriter.getI32Type());
  Value accumulator = rewriter.create<CastOp>(
      loc, accumulatorType, quantizedMatMul(node, rewriter, *a, *b), device);
  if (accumulator.getType() == accumulatorType && isPresent(bias))
    accumulator =
        rewriter.create<AddOp>(loc, accumulatorType, accumulator, bias, device);
  // b_scale * (a_scale * alpha) [/ y_scale], per column or for all.
  auto scalar = RankedTensorType::get({}, f32);
  Value aScale = convertTo(node, rewriter, a->scale, f32, {});
  Value alpha = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(scalar, node.getFloat("alpha", 1.0f)));
  Value multiplier = rewriter.create<MulOp>(loc, scalar, aScale, alpha, device);
  Value bScale = convertTo(node, rewriter, b->scale, f32, b->scaleShape);
  auto multiplierType = cast<RankedTensorType>(bScale.getType());
  multiplier =
      rewriter.create<MulOp>(loc, multiplierType, bScale, multiplier, device);
  if (quantizedY)
    multiplier = rewriter.create<DivOp>(
        loc, multiplierType, multiplier,
        convertTo(node, rewriter, yScale, f32, {}), device);
  auto f32Result = result.clone(f32);
  Value scaled = rewriter.create<CastOp>(loc, f32Result, accumulator, device);
  scaled = rewriter.create<MulOp>(loc, f32Result, scaled, multiplier, device);
  if (!quantizedY)
    return replaceNodeWithCompatible(node, scaled, rewriter);
  Value yZero = node.input(8);
  return replaceNodeWithCompatible(
      node,
      roundAndSaturate(node, rewriter, scaled,
                       isPresent(yZero)
                           ? convertTo(node, rewriter, yZero, f32, {})
                           : Value(),
                       result),
      rewriter);
}

} // namespace

void populateQuantizedLinearPatterns(RewritePatternSet &patterns) {
  static constexpr StringRef kGemmAttrs[] = {"alpha", "transA", "transB"};
  addDomainONNXPattern(patterns, "com.microsoft", "QGemm", 1, 1, kGemmAttrs,
                       legalizeQGemm);
  addONNXPattern(patterns, "MatMulInteger", 10, kMaxOpset, {},
                 legalizeMatMulInteger);
  addONNXPattern(patterns, "QLinearMatMul", 10, kMaxOpset, {},
                 legalizeQLinearMatMul);
  addONNXPattern(patterns, "ConvInteger", 10, kMaxOpset, kConvAttributes,
                 legalizeConvInteger);
  addONNXPattern(patterns, "QLinearConv", 10, kMaxOpset, kConvAttributes,
                 legalizeQLinearConv);
}

} // namespace heterps::hps
