//===- QDQFusion.cpp - Quantized node units of QDQ-format models ----------===//
//
// A QDQ-format model (onnxruntime's and TensorRT's quantizers write them)
// spells a quantized convolution as DequantizeLinear on x, on w and on the
// i32 bias, a float Conv, and QuantizeLinear on its output; likewise a
// quantized residual Add or Mul and a classifier Gemm. Runtimes run such a
// unit as the integer operator it stands for (onnxruntime's QDQ
// transformer makes them QLinearConv, com.microsoft QLinearAdd /
// QLinearMul and QGemm), and the model's scales are chosen for that: the
// float reading rounds differently, and a requantization that lands near a
// rounding boundary then flips to the next integer. So before per-op
// legalization each unit is rewritten into that node, whose own pattern
// computes it as onnxruntime does.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "WindowAttrs.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// The default-domain node of `opType` that defines `value`, or null.
OnnxNodeOp definingNode(Value value, StringRef opType) {
  auto node = value ? value.getDefiningOp<OnnxNodeOp>() : OnnxNodeOp();
  if (!node || node.getDomain() != "" || node.getOpType() != opType)
    return {};
  return node;
}

/// True if every attribute of `node` is one of `known`.
bool onlyAttributes(OnnxNodeOp node, ArrayRef<StringRef> known) {
  return llvm::all_of(node.getAttrs(), [&](NamedAttribute attr) {
    return llvm::is_contained(known, attr.getName().strref());
  });
}

/// The number of elements of a static tensor of rank 0 or 1; std::nullopt
/// for anything else.
std::optional<int64_t> vectorLength(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > 1)
    return std::nullopt;
  return type.getNumElements();
}

/// One DequantizeLinear or QuantizeLinear: its quantized operand (the input
/// of a DequantizeLinear, the result of a QuantizeLinear), f32 scale and
/// zero point (null when omitted).
struct Quantization {
  Value quantized, scale, zeroPoint;
};

/// The quantization `node` describes, if it is one the integer ops can
/// take: opsets 10 to 22 (whose patterns know these attributes), no blocks,
/// an f32 scale of 1 or `channels` values along `channelAxis` (a filter's
/// output channels, the columns of a Gemm's product), and a zero point of
/// the quantized type laid out as the scale.
std::optional<Quantization> quantizationOf(OnnxNodeOp node, Value quantized,
                                           int64_t channels,
                                           int64_t channelAxis = 0) {
  static constexpr StringRef kKnown[] = {"axis", "block_size", "output_dtype",
                                         "saturate"};
  ONNXNode onnx(node);
  if (node.getOpset() > 22 || !onlyAttributes(node, kKnown) ||
      onnx.getInt("block_size", 0) != 0)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(quantized.getType());
  Value scale = onnx.input(1), zeroPoint = onnx.input(2);
  if (!type || !quantizedRange(type.getElementType()) || !scale ||
      !cast<ShapedType>(scale.getType()).getElementType().isF32())
    return std::nullopt;
  std::optional<int64_t> length = vectorLength(scale);
  if (!length || (*length != 1 && *length != channels))
    return std::nullopt;
  if (*length != 1 && onnx.getAxis("axis", 1, type.getRank()) != channelAxis)
    return std::nullopt;
  if (zeroPoint && (vectorLength(zeroPoint) != length ||
                    cast<ShapedType>(zeroPoint.getType()).getElementType() !=
                        type.getElementType()))
    return std::nullopt;
  return Quantization{quantized, scale, zeroPoint};
}

/// The DequantizeLinear that defines `value` (f32), if the integer ops can
/// take it.
std::optional<Quantization> dequantized(Value value, int64_t channels,
                                        int64_t channelAxis = 0) {
  OnnxNodeOp node = definingNode(value, "DequantizeLinear");
  if (!node || !isa<RankedTensorType>(value.getType()) ||
      !cast<ShapedType>(value.getType()).getElementType().isF32())
    return std::nullopt;
  return quantizationOf(node, ONNXNode(node).input(0), channels, channelAxis);
}

/// The i32 [channels] integers that `bias` dequantizes, if they can be
/// QLinearConv's B (or QGemm's C): no zero point (or zeros), in units of
/// x_scale * w_scale up to the rounding of that product (the quantizer
/// computes it in f32); null otherwise.
Value accumulatorBias(Value bias, const Quantization &x, const Quantization &w,
                      int64_t channels) {
  OnnxNodeOp node = definingNode(bias, "DequantizeLinear");
  if (!node)
    return {};
  Value integers = ONNXNode(node).input(0);
  auto type = dyn_cast<RankedTensorType>(integers.getType());
  if (!type || !type.getElementType().isSignlessInteger(32) ||
      type.getShape() != ArrayRef<int64_t>{channels})
    return {};
  Value scale = ONNXNode(node).input(1), zeroPoint = ONNXNode(node).input(2);
  if (zeroPoint) {
    std::optional<SmallVector<int64_t>> zeros = getConstantInts(zeroPoint);
    if (!zeros || llvm::any_of(*zeros, [](int64_t z) { return z != 0; }))
      return {};
  }
  std::optional<double> xScale = getConstantScalar(x.scale);
  std::optional<SmallVector<double>> wScales = constantFloats(w.scale);
  std::optional<SmallVector<double>> biasScales =
      scale ? constantFloats(scale) : std::nullopt;
  if (!xScale || !wScales || !biasScales ||
      (biasScales->size() != 1 && int64_t(biasScales->size()) != channels))
    return {};
  for (int64_t c = 0; c < channels; ++c) {
    double expected = *xScale * (*wScales)[c % wScales->size()];
    double given = (*biasScales)[c % biasScales->size()];
    if (std::abs(given - expected) > 1e-6 * std::abs(expected))
      return {};
  }
  return integers;
}

/// The `opType` node that only `quantize` (a QuantizeLinear) reads, or
/// null.
OnnxNodeOp quantizedProducer(OnnxNodeOp quantize, StringRef opType) {
  if (quantize.getDomain() != "" || quantize.getOpType() != "QuantizeLinear" ||
      quantize->getNumResults() != 1)
    return {};
  OnnxNodeOp producer = definingNode(ONNXNode(quantize).input(0), opType);
  if (!producer || !producer->hasOneUse() || producer->getNumResults() != 1)
    return {};
  return producer;
}

/// A placeholder for an omitted optional input where `value` is null.
Value orNone(PatternRewriter &rewriter, Location loc, Value value) {
  return value
             ? value
             : rewriter.create<NoneOp>(loc, rewriter.getNoneType()).getResult();
}

/// The integer ops' inputs: each input's quantized value, scale and zero
/// point (or a placeholder), then the output's scale and zero point.
SmallVector<Value> operandsOf(PatternRewriter &rewriter, Location loc,
                              ArrayRef<Quantization> inputs,
                              const Quantization &output) {
  SmallVector<Value> operands;
  for (const Quantization &q : inputs)
    operands.append({q.quantized, q.scale, orNone(rewriter, loc, q.zeroPoint)});
  operands.append({output.scale, orNone(rewriter, loc, output.zeroPoint)});
  return operands;
}

/// Replaces `quantize` with a new `opType` node of `domain` and `opset`
/// reading `inputs`, and erases the float op it read.
LogicalResult replaceUnit(PatternRewriter &rewriter, OnnxNodeOp quantize,
                          OnnxNodeOp producer, StringRef opType,
                          StringRef domain, int64_t opset,
                          ArrayRef<Value> inputs,
                          ArrayRef<NamedAttribute> attrs) {
  auto fused = rewriter.create<OnnxNodeOp>(
      quantize.getLoc(), quantize->getResultTypes(),
      rewriter.getStringAttr(opType), rewriter.getStringAttr(domain),
      rewriter.getI64IntegerAttr(opset), rewriter.getDictionaryAttr(attrs),
      inputs, ArrayAttr(), quantize.getDeviceAttr(), /*bodiesCount=*/0);
  rewriter.replaceOp(quantize, fused.getResults());
  rewriter.eraseOp(producer);
  return success();
}

/// QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w)
/// [, DequantizeLinear(B)])) -> QLinearConv(x, w, B), the conv read by
/// nothing else. The DequantizeLinear nodes stay for their other readers.
LogicalResult fuseQuantizedConv(OnnxNodeOp quantize,
                                PatternRewriter &rewriter) {
  OnnxNodeOp conv = quantizedProducer(quantize, "Conv");
  if (!conv || !onlyAttributes(conv, kConvAttributes))
    return rewriter.notifyMatchFailure(quantize, "not a Conv's only reader");
  ONNXNode convNode(conv);
  auto filter = rankedShape(convNode.input(1));
  if (!filter || filter->size() < 3 || ShapedType::isDynamic((*filter)[0]))
    return rewriter.notifyMatchFailure(quantize, "a filter of unknown width");
  int64_t channels = (*filter)[0];
  std::optional<Quantization> x = dequantized(convNode.input(0), 1);
  std::optional<Quantization> w = dequantized(convNode.input(1), channels);
  std::optional<Quantization> y =
      quantizationOf(quantize, quantize.getResult(0), 1);
  auto result = dyn_cast<RankedTensorType>(quantize.getResult(0).getType());
  auto convResult = dyn_cast<RankedTensorType>(conv.getResult(0).getType());
  if (!x || !w || !y || !result || !convResult ||
      result.getShape() != convResult.getShape())
    return rewriter.notifyMatchFailure(quantize, "not a quantized conv unit");
  Value bias = convNode.input(2);
  Value integerBias = bias ? accumulatorBias(bias, *x, *w, channels) : Value();
  if (bias && !integerBias)
    return rewriter.notifyMatchFailure(quantize, "a bias of another scale");

  SmallVector<Value> inputs =
      operandsOf(rewriter, quantize.getLoc(), {*x, *w}, *y);
  if (integerBias)
    inputs.push_back(integerBias);
  return replaceUnit(rewriter, quantize, conv, "QLinearConv", "",
                     conv.getOpset(), inputs, conv.getAttrs().getValue());
}

/// QuantizeLinear(Add(DequantizeLinear(a), DequantizeLinear(b))) ->
/// com.microsoft QLinearAdd(a, b), and Mul -> QLinearMul: every scale and
/// zero point per tensor, a, b and the result of one quantized type, the
/// Add read by nothing else.
LogicalResult fuseQuantizedBinary(OnnxNodeOp quantize,
                                  PatternRewriter &rewriter) {
  OnnxNodeOp binary = quantizedProducer(quantize, "Add");
  if (!binary)
    binary = quantizedProducer(quantize, "Mul");
  if (!binary || ONNXNode(binary).numInputs() != 2)
    return rewriter.notifyMatchFailure(quantize, "not an Add's only reader");
  std::optional<Quantization> a = dequantized(ONNXNode(binary).input(0), 1);
  std::optional<Quantization> b = dequantized(ONNXNode(binary).input(1), 1);
  std::optional<Quantization> c =
      quantizationOf(quantize, quantize.getResult(0), 1);
  auto result = dyn_cast<RankedTensorType>(quantize.getResult(0).getType());
  auto sum = dyn_cast<RankedTensorType>(binary.getResult(0).getType());
  if (!a || !b || !c || !result || !sum || !result.hasStaticShape() ||
      result.getShape() != sum.getShape() ||
      getElementTypeOrSelf(a->quantized.getType()) != result.getElementType() ||
      getElementTypeOrSelf(b->quantized.getType()) != result.getElementType())
    return rewriter.notifyMatchFailure(quantize, "not a quantized binary unit");
  return replaceUnit(rewriter, quantize, binary,
                     ("QLinear" + binary.getOpType()).str(), "com.microsoft", 1,
                     operandsOf(rewriter, quantize.getLoc(), {*a, *b}, *c), {});
}

/// QuantizeLinear(Gemm(DequantizeLinear(A), DequantizeLinear(B)
/// [, DequantizeLinear(C)])) -> com.microsoft QGemm(A, B, C) with a
/// quantized Y: A per tensor, B per tensor or per column of the product,
/// C (beta 1) i32 per column in units of a_scale * b_scale, the Gemm read
/// by nothing else.
LogicalResult fuseQuantizedGemm(OnnxNodeOp quantize,
                                PatternRewriter &rewriter) {
  static constexpr StringRef kGemmAttrs[] = {"alpha", "beta", "transA",
                                             "transB"};
  OnnxNodeOp gemm = quantizedProducer(quantize, "Gemm");
  if (!gemm || !onlyAttributes(gemm, kGemmAttrs))
    return rewriter.notifyMatchFailure(quantize, "not a Gemm's only reader");
  ONNXNode gemmNode(gemm);
  auto bShape = rankedShape(gemmNode.input(1));
  std::optional<bool> transB = getFlag(gemmNode, "transB");
  if (!bShape || bShape->size() != 2 || !transB ||
      ShapedType::isDynamic((*bShape)[*transB ? 0 : 1]))
    return rewriter.notifyMatchFailure(quantize, "a B of unknown width");
  int64_t columns = (*bShape)[*transB ? 0 : 1];
  std::optional<Quantization> a = dequantized(gemmNode.input(0), 1);
  std::optional<Quantization> b =
      dequantized(gemmNode.input(1), columns, *transB ? 0 : 1);
  std::optional<Quantization> y =
      quantizationOf(quantize, quantize.getResult(0), 1);
  if (!a || !b || !y)
    return rewriter.notifyMatchFailure(quantize, "not a quantized Gemm unit");
  Value bias = gemmNode.input(2);
  Value integerBias = bias ? accumulatorBias(bias, *a, *b, columns) : Value();
  if (bias && (!integerBias || gemmNode.getFloat("beta", 1.0f) != 1.0f))
    return rewriter.notifyMatchFailure(quantize, "a bias of another scale");
  Location loc = quantize.getLoc();
  // QGemm takes C between B and the output's quantization.
  SmallVector<Value> inputs = operandsOf(rewriter, loc, {*a, *b}, *y);
  inputs.insert(inputs.begin() + 6, orNone(rewriter, loc, integerBias));
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : gemm.getAttrs())
    if (attr.getName() != "beta")
      attrs.push_back(attr);
  return replaceUnit(rewriter, quantize, gemm, "QGemm", "com.microsoft", 1,
                     inputs, attrs);
}

/// QuantizeLinear(Relu(v)) -> QuantizeLinear(v) where the zero point is
/// the least value of the quantized type (u8 0, i8 -128): a negative v
/// rounds to at most zero and saturates to the same least value, so the
/// Relu changes nothing (onnxruntime drops it too), and the unit before it
/// becomes fusable.
LogicalResult dropReluBeforeQuantize(OnnxNodeOp quantize,
                                     PatternRewriter &rewriter) {
  if (quantize.getDomain() != "" || quantize.getOpType() != "QuantizeLinear")
    return failure();
  OnnxNodeOp relu = definingNode(ONNXNode(quantize).input(0), "Relu");
  auto result = dyn_cast<RankedTensorType>(quantize.getResult(0).getType());
  if (!relu || !result || relu->getNumOperands() != 1)
    return failure();
  std::optional<std::pair<double, double>> range =
      quantizedRange(result.getElementType());
  Value zeroPoint = ONNXNode(quantize).input(2);
  std::optional<double> zero =
      zeroPoint ? getConstantScalar(zeroPoint) : std::optional<double>(0.0);
  if (!range || !zero || *zero != range->first)
    return rewriter.notifyMatchFailure(quantize,
                                       "a zero point above the least");
  rewriter.modifyOpInPlace(
      quantize, [&] { quantize->setOperand(0, relu->getOperand(0)); });
  if (relu->use_empty())
    rewriter.eraseOp(relu);
  return success();
}

} // namespace

void populateQDQFusionPatterns(RewritePatternSet &patterns) {
  patterns.add(dropReluBeforeQuantize);
  patterns.add(fuseQuantizedConv);
  patterns.add(fuseQuantizedBinary);
  patterns.add(fuseQuantizedGemm);
}

} // namespace heterps::hps
