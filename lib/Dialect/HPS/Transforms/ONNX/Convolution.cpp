//===- Convolution.cpp - Conv ---------------------------------------------===//
//
// Conv-1 and Conv-11 share attributes (auto_pad, dilations, group,
// kernel_shape, pads, strides) and inputs (X, W, optional B); Conv-11 only
// restated how SAME_* pads, which resolveWindow implements.
//
// ConvTranspose-1 and -11 (same attributes) are the adjoint of a conv with
// respect to its input, which hps already has for training: the transposed
// conv of X by W [C, M/group, k...] is conv_grad_input with X as the
// gradient of a forward conv of the same geometry from M to C channels.
// Col2Im (18) is one too, with a one-hot filter.
//
//===----------------------------------------------------------------------===//

#include "WindowAttrs.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

LogicalResult legalizeConv(ONNXNode node, PatternRewriter &rewriter) {
  auto filter = rankedShape(node.input(1));
  if (!filter || filter->size() < 3)
    return fail(node, rewriter, "unranked filter");
  // kernel_shape is optional: absent, the filter's spatial extents hold it.
  SmallVector<int64_t> kernel(filter->drop_front(2));
  if (std::optional<SmallVector<int64_t>> given =
          node.getInts("kernel_shape")) {
    if (given->size() != kernel.size())
      return fail(node, rewriter, "kernel_shape has the wrong arity");
    for (auto [k, g] : llvm::zip(kernel, *given)) {
      if (k != ShapedType::kDynamic && k != g)
        return fail(node, rewriter, "kernel_shape differs from the filter");
      k = g;
    }
  }
  FailureOr<WindowAttrs> window = resolveWindow(node, kernel);
  if (failed(window))
    return fail(node, rewriter, "unresolved window attributes");
  return replaceNodeChecked<ConvOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getDenseI64ArrayAttr(window->strides),
      rewriter.getDenseI64ArrayAttr(window->pads),
      rewriter.getDenseI64ArrayAttr(window->dilations),
      rewriter.getI64IntegerAttr(node.getInt("group", 1)), DeviceAttr(),
      UnitAttr());
}

/// Per-axis attribute of `count` values, or `fallback` everywhere.
std::optional<SmallVector<int64_t>> intsOr(ONNXNode node, StringRef name,
                                           size_t count, int64_t fallback) {
  std::optional<SmallVector<int64_t>> values = node.getInts(name);
  if (!values)
    return SmallVector<int64_t>(count, fallback);
  if (values->size() != count)
    return std::nullopt;
  return values;
}

/// ConvTranspose with explicit pads (auto_pad NOTSET or VALID) or an
/// output_shape: out = s (in - 1) + output_padding + d (k - 1) + 1 - pads.
/// output_padding must stay below the stride so that the forward conv maps
/// the result back onto X's extent. SAME_UPPER and SAME_LOWER (without an
/// output_shape) make out = in * s, the excess padding split as the spec and
/// onnxruntime split it: an odd unit at the end (UPPER) or the start.
LogicalResult legalizeConvTranspose(ONNXNode node, PatternRewriter &rewriter) {
  auto x = rankedShape(node.input(0)), w = rankedShape(node.input(1));
  if (!x || !w || x->size() < 3 || w->size() != x->size())
    return fail(node, rewriter, "unranked input or filter");
  size_t n = x->size() - 2;
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (autoPad != "NOTSET" && autoPad != "VALID" && !same)
    return fail(node, rewriter, "unknown auto_pad");
  int64_t group = node.getInt("group", 1);
  auto strides = intsOr(node, "strides", n, 1);
  auto dilations = intsOr(node, "dilations", n, 1);
  auto outputPadding = intsOr(node, "output_padding", n, 0);
  auto pads = intsOr(node, "pads", 2 * n, 0);
  if (!strides || !dilations || !outputPadding || !pads || group < 1)
    return fail(node, rewriter, "attribute of the wrong arity");
  if (autoPad == "VALID")
    pads->assign(2 * n, 0);
  ArrayRef<int64_t> kernel = w->drop_front(2);
  if (auto given = node.getInts("kernel_shape");
      given && ArrayRef<int64_t>(*given) != kernel)
    return fail(node, rewriter, "kernel_shape differs from the filter");
  std::optional<SmallVector<int64_t>> outputShape =
      node.getInts("output_shape");
  if (outputShape && outputShape->size() < n)
    return fail(node, rewriter, "output_shape has too few extents");
  if (same && outputShape)
    return fail(node, rewriter, "SAME_* auto_pad with an output_shape");
  if ((*w)[1] == ShapedType::kDynamic)
    return fail(node, rewriter, "dynamic filter");

  SmallVector<int64_t> result = {(*x)[0], (*w)[1] * group};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = (*x)[2 + i], k = kernel[i], s = (*strides)[i],
            d = (*dilations)[i], op = (*outputPadding)[i];
    if (in == ShapedType::kDynamic || k == ShapedType::kDynamic || s < 1 ||
        d < 1 || op < 0 || op >= s)
      return fail(node, rewriter, "dynamic extent or bad stride/padding");
    int64_t full = s * (in - 1) + op + d * (k - 1) + 1;
    if (outputShape) {
      // Pads split the excess evenly. An odd excess is refused: the spec
      // and onnxruntime put its odd unit at opposite ends. A shortfall
      // (below the stride, which the conv_grad_input verifier checks) is
      // output padding at the end.
      int64_t out = (*outputShape)[outputShape->size() - n + i];
      int64_t total = std::max<int64_t>(full - out, 0);
      if (total % 2)
        return fail(node, rewriter, "output_shape leaves an odd padding");
      (*pads)[i] = (*pads)[n + i] = total / 2;
      result.push_back(out);
    } else if (same) {
      int64_t total = full - in * s;
      if (total < 0)
        return fail(node, rewriter, "SAME_* auto_pad needs output padding");
      int64_t half = total / 2;
      (*pads)[i] = autoPad == "SAME_UPPER" ? half : total - half;
      (*pads)[n + i] = total - (*pads)[i];
      result.push_back(in * s);
    } else {
      result.push_back(full - (*pads)[i] - (*pads)[n + i]);
    }
    if (result.back() < 1)
      return fail(node, rewriter, "empty output");
  }

  Type element = cast<ShapedType>(node.input(0).getType()).getElementType();
  auto type = RankedTensorType::get(result, element);
  if (!canReplaceWithType(node, type))
    return fail(node, rewriter, "result type differs from ONNX's");
  DeviceAttr device = node.getOp().getDeviceAttr();
  Location loc = node.getLoc();
  auto adjoint = rewriter.create<ConvGradInputOp>(
      loc, type, node.input(0), node.input(1),
      rewriter.getDenseI64ArrayAttr(*strides),
      rewriter.getDenseI64ArrayAttr(*pads),
      rewriter.getDenseI64ArrayAttr(*dilations),
      rewriter.getI64IntegerAttr(group), device);
  if (!verifiesQuietly(adjoint)) {
    rewriter.eraseOp(adjoint);
    return fail(node, rewriter, "the hps op would not verify");
  }
  Value value = adjoint;
  if (Value bias = node.input(2)) {
    // B [M] added per output channel: [M, 1, ...] broadcasts over space.
    SmallVector<int64_t> channel(n + 1, 1);
    channel[0] = result[1];
    Value shaped = reshapeTo(node, rewriter, bias, channel);
    value = rewriter.create<AddOp>(loc, type, value, shaped, device);
  }
  replaceNodeWith(node, value, rewriter);
  return success();
}

/// Col2Im (18) folds [N, C * prod(block), L] sliding blocks back into an
/// image [N, C, image...], summing where blocks overlap. That is the
/// transposed conv of the blocks viewed as [N, C * K, L_1, ..., L_n]
/// (K = prod(block), L_i the block positions along axis i) in C groups,
/// each with a one-hot filter [K, 1, block...] that sends channel k of its
/// group to offset k of the block: conv_grad_input, as ConvTranspose. An
/// image extent the blocks do not reach up to the end (a stride remainder)
/// is output padding.
LogicalResult legalizeCol2Im(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  std::optional<SmallVector<int64_t>> image = getConstantInts(node.input(1));
  std::optional<SmallVector<int64_t>> block = getConstantInts(node.input(2));
  if (!type || type.getRank() != 3 || !type.hasStaticShape() ||
      !type.getElementType().isF32())
    return fail(node, rewriter, "needs a static f32 [N, C*K, L] input");
  if (!image || !block || image->empty() || image->size() != block->size())
    return fail(node, rewriter,
                "image_shape and block_shape must be "
                "constants of one length");
  size_t n = image->size();
  auto strides = intsOr(node, "strides", n, 1);
  auto dilations = intsOr(node, "dilations", n, 1);
  auto pads = intsOr(node, "pads", 2 * n, 0);
  if (!strides || !dilations || !pads)
    return fail(node, rewriter, "attribute of the wrong arity");
  int64_t blockSize = 1;
  for (int64_t b : *block)
    blockSize *= b > 0 ? b : 0;
  int64_t channels = blockSize ? type.getDimSize(1) / blockSize : 0;
  if (!blockSize || channels * blockSize != type.getDimSize(1))
    return fail(node, rewriter, "input dim 1 is not C * prod(block_shape)");
  SmallVector<int64_t> blocksShape = {type.getDimSize(0), channels * blockSize};
  int64_t positions = 1;
  for (size_t i = 0; i < n; ++i) {
    int64_t s = (*strides)[i], d = (*dilations)[i];
    int64_t count =
        s < 1 || d < 1 || (*image)[i] < 1
            ? 0
            : shapes::windowCount((*image)[i], (*block)[i], s, (*pads)[i],
                                  (*pads)[n + i], d, /*ceilMode=*/false);
    if (count < 1)
      return fail(node, rewriter, "blocks do not fit the padded image");
    blocksShape.push_back(count);
    positions *= count;
  }
  if (positions != type.getDimSize(2))
    return fail(node, rewriter, "L is not the number of block positions");

  SmallVector<int64_t> filterShape = {channels * blockSize, 1};
  filterShape.append(block->begin(), block->end());
  std::vector<double> filter(channels * blockSize * blockSize, 0.0);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < blockSize; ++k)
      filter[(c * blockSize + k) * blockSize + k] = 1.0;
  Location loc = node.getLoc();
  Type element = type.getElementType();
  Value weights =
      denseFloatConstant(rewriter, loc, filterShape, element, filter);
  SmallVector<int64_t> result = {type.getDimSize(0), channels};
  result.append(image->begin(), image->end());
  auto resultType = RankedTensorType::get(result, element);
  if (!canReplaceWithType(node, resultType))
    return fail(node, rewriter, "result type differs from ONNX's");
  auto adjoint = rewriter.create<ConvGradInputOp>(
      loc, resultType, reshapeTo(node, rewriter, node.input(0), blocksShape),
      weights, rewriter.getDenseI64ArrayAttr(*strides),
      rewriter.getDenseI64ArrayAttr(*pads),
      rewriter.getDenseI64ArrayAttr(*dilations),
      rewriter.getI64IntegerAttr(channels), node.getOp().getDeviceAttr());
  if (!verifiesQuietly(adjoint)) {
    rewriter.eraseOp(adjoint);
    return fail(node, rewriter, "the hps op would not verify");
  }
  return replaceNodeWithCompatible(node, adjoint, rewriter);
}

} // namespace

void populateConvolutionPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "Conv", kMinOpset, 10, kConvAttributes,
                 legalizeConv);
  addONNXPattern(patterns, "Conv", 11, kMaxOpset, kConvAttributes,
                 legalizeConv);
  static constexpr StringRef kConvTransposeAttrs[] = {
      "auto_pad",       "dilations",    "group", "kernel_shape",
      "output_padding", "output_shape", "pads",  "strides"};
  addONNXPattern(patterns, "ConvTranspose", kMinOpset, 10, kConvTransposeAttrs,
                 legalizeConvTranspose);
  addONNXPattern(patterns, "ConvTranspose", 11, kMaxOpset, kConvTransposeAttrs,
                 legalizeConvTranspose);
  addONNXPattern(patterns, "Col2Im", 18, kMaxOpset,
                 {"dilations", "pads", "strides"}, legalizeCol2Im);
}

} // namespace heterps::hps
