//===- QDQFusion.cpp - Quantized node units of QDQ-format models ----------===//
//
// A QDQ-format model (onnxruntime's and TensorRT's quantizers write them)
// spells a quantized convolution as DequantizeLinear on x, on w and on the
// i32 bias, a float Conv, and QuantizeLinear on its output. Runtimes run
// such a unit as the integer operator it stands for (onnxruntime's QDQ
// transformer makes it a QLinearConv), and the model's scales are chosen
// for that: the float reading rounds differently, and a requantization
// that lands near a rounding boundary then flips to the next integer. So
// before per-op legalization the unit is rewritten into that QLinearConv
// node, whose own pattern computes the accumulator exactly.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Conv's attributes: what QLinearConv takes as well.
constexpr StringRef kConvAttrs[] = {"auto_pad",     "dilations", "group",
                                    "kernel_shape", "pads",      "strides"};

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

/// The quantization `node` describes, if it is one QLinearConv can take:
/// opsets 10 to 22 (whose patterns know these attributes), no blocks, an
/// f32 scale of 1 or `channels` values along axis 0, and a zero point of
/// the quantized type laid out as the scale.
std::optional<Quantization> quantizationOf(OnnxNodeOp node, Value quantized,
                                           int64_t channels) {
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
  // A scale per channel runs along axis 0 (the filter's output channels).
  if (*length != 1 && onnx.getAxis("axis", 1, type.getRank()) != 0)
    return std::nullopt;
  if (zeroPoint && (vectorLength(zeroPoint) != length ||
                    cast<ShapedType>(zeroPoint.getType()).getElementType() !=
                        type.getElementType()))
    return std::nullopt;
  return Quantization{quantized, scale, zeroPoint};
}

/// The DequantizeLinear that defines `value` (f32), if QLinearConv can take
/// it.
std::optional<Quantization> dequantized(Value value, int64_t channels) {
  OnnxNodeOp node = definingNode(value, "DequantizeLinear");
  if (!node || !isa<RankedTensorType>(value.getType()) ||
      !cast<ShapedType>(value.getType()).getElementType().isF32())
    return std::nullopt;
  return quantizationOf(node, ONNXNode(node).input(0), channels);
}

/// True if the bias dequantizes as QLinearConv's B: i32 [channels] with no
/// zero point (or zeros), in units of x_scale * w_scale, up to the rounding
/// of that product (the quantizer computes it in f32).
bool isAccumulatorBias(Value bias, const Quantization &x, const Quantization &w,
                       int64_t channels) {
  OnnxNodeOp node = definingNode(bias, "DequantizeLinear");
  if (!node)
    return false;
  Value integers = ONNXNode(node).input(0);
  auto type = dyn_cast<RankedTensorType>(integers.getType());
  if (!type || !type.getElementType().isSignlessInteger(32) ||
      type.getShape() != ArrayRef<int64_t>{channels})
    return false;
  Value scale = ONNXNode(node).input(1), zeroPoint = ONNXNode(node).input(2);
  if (zeroPoint) {
    std::optional<SmallVector<int64_t>> zeros = getConstantInts(zeroPoint);
    if (!zeros || llvm::any_of(*zeros, [](int64_t z) { return z != 0; }))
      return false;
  }
  std::optional<double> xScale = getConstantScalar(x.scale);
  std::optional<SmallVector<double>> wScales = constantFloats(w.scale);
  std::optional<SmallVector<double>> biasScales =
      scale ? constantFloats(scale) : std::nullopt;
  if (!xScale || !wScales || !biasScales ||
      (biasScales->size() != 1 && int64_t(biasScales->size()) != channels))
    return false;
  for (int64_t c = 0; c < channels; ++c) {
    double expected = *xScale * (*wScales)[c % wScales->size()];
    double given = (*biasScales)[c % biasScales->size()];
    if (std::abs(given - expected) > 1e-6 * std::abs(expected))
      return false;
  }
  return true;
}

/// QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w)
/// [, DequantizeLinear(B)])) -> QLinearConv(x, w, B), the conv read by
/// nothing else. The DequantizeLinear nodes stay for their other readers.
LogicalResult fuseQuantizedConv(OnnxNodeOp quantize,
                                PatternRewriter &rewriter) {
  if (quantize.getDomain() != "" || quantize.getOpType() != "QuantizeLinear" ||
      quantize->getNumResults() != 1)
    return failure();
  OnnxNodeOp conv = definingNode(ONNXNode(quantize).input(0), "Conv");
  if (!conv || !conv->hasOneUse() || !onlyAttributes(conv, kConvAttrs))
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
  if (bias && !isAccumulatorBias(bias, *x, *w, channels))
    return rewriter.notifyMatchFailure(quantize, "a bias of another scale");

  Location loc = quantize.getLoc();
  auto orNone = [&](Value value) -> Value {
    return value ? value
                 : rewriter.create<NoneOp>(loc, rewriter.getNoneType())
                       .getResult();
  };
  SmallVector<Value> inputs{x->quantized,
                            x->scale,
                            orNone(x->zeroPoint),
                            w->quantized,
                            w->scale,
                            orNone(w->zeroPoint),
                            y->scale,
                            orNone(y->zeroPoint)};
  if (bias)
    inputs.push_back(ONNXNode(bias.getDefiningOp<OnnxNodeOp>()).input(0));
  OnnxNodeOp fused =
      createONNXNode(rewriter, loc, "QLinearConv", conv.getOpset(), inputs,
                     result, conv.getAttrs().getValue());
  if (DeviceAttr device = quantize.getDeviceAttr())
    fused.setDeviceAttr(device);
  rewriter.replaceOp(quantize, fused.getResults());
  rewriter.eraseOp(conv);
  return success();
}

} // namespace

void populateQDQFusionPatterns(RewritePatternSet &patterns) {
  patterns.add(fuseQuantizedConv);
}

} // namespace heterps::hps
