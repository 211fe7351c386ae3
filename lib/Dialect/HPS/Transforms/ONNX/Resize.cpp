//===- Resize.cpp - Resize (10-19) and Upsample (7-9) ---------------------===//
//
// Resize is separable, so it becomes one step per resized axis over the
// taps of ResizeTaps.h, with no kernel of its own (and the gradient rules of
// the ops it becomes):
// - every axis repeats each element a whole number of times: reshape ->
//   expand -> reshape (repeatAxes);
// - an axis whose positions each copy one element: hps.gather along it with
//   constant indices (any nearest resize);
// - otherwise (linear, cubic, tf_crop_and_resize extrapolation): hps.matmul
//   with the constant [out, in] interpolation matrix over a [P, in, T] view.
//   A dense matrix costs `in` multiply-adds per output element instead of
//   2 or 4, and an inf or NaN spreads along its whole line; both are the
//   price of reusing the matmul kernels. Extrapolated positions get
//   extrapolation_value from a constant added afterwards.
// Scales must be constant; sizes too, where given. Resize-18's axes,
// keep_aspect_ratio_policy and antialias (wider taps) and Resize-19's
// half_pixel_symmetric fit the same scheme.
//
//===----------------------------------------------------------------------===//

#include "ResizeTaps.h"
#include "Support.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "llvm/ADT/Sequence.h"

#include <limits>

using namespace mlir;

namespace heterps::hps {
namespace {

/// The most elements one interpolation matrix may have (16 MiB of f32).
constexpr int64_t kMaxMatrixElements = int64_t(1) << 22;

bool isPresent(ONNXNode node, unsigned i) {
  return node.numInputs() > i && node.input(i) &&
         !isa<NoneType>(node.input(i).getType());
}

/// `input` with axis `axis` replaced by the positions `taps` selects.
Value gatherAxis(ONNXNode node, PatternRewriter &rewriter, Value input,
                 int64_t axis, const ResizeAxisTaps &taps) {
  auto type = cast<RankedTensorType>(input.getType());
  std::vector<int64_t> indices = taps.selectedIndices();
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = static_cast<int64_t>(indices.size());
  auto indexType =
      RankedTensorType::get({shape[axis]}, rewriter.getIntegerType(64));
  Value constant = rewriter.create<ConstantOp>(
      node.getLoc(),
      DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices)));
  return rewriter.create<GatherOp>(
      node.getLoc(), RankedTensorType::get(shape, type.getElementType()), input,
      constant, rewriter.getI64IntegerAttr(axis), node.getOp().getDeviceAttr());
}

/// `input` with axis `axis` interpolated: the [out, in] matrix of `taps`
/// applied to a [P, in, T] view (x @ M^T on a [P, in] view when T is 1).
Value interpolateAxis(ONNXNode node, PatternRewriter &rewriter, Value input,
                      int64_t axis, const ResizeAxisTaps &taps) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t in = shape[axis], out = static_cast<int64_t>(taps.taps.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < type.getRank(); ++i)
    inner *= shape[i];
  bool last = inner == 1;
  // last: M^T [in, out]; else M [out, in].
  std::vector<double> matrix(in * out, 0.0);
  for (int64_t o = 0; o < out; ++o)
    for (const ResizeTap &tap : taps.taps[o])
      matrix[last ? tap.index * out + o : o * in + tap.index] += tap.weight;
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value result;
  if (last) {
    Value weights =
        denseFloatConstant(rewriter, loc, {in, out}, element, matrix);
    result = rewriter.create<MatMulOp>(
        loc, RankedTensorType::get({outer, out}, element),
        reshapeTo(node, rewriter, input, {outer, in}), weights, device);
  } else {
    Value weights =
        denseFloatConstant(rewriter, loc, {out, in}, element, matrix);
    SmallVector<int64_t> view = {outer, in, inner},
                         viewOut = {outer, out, inner};
    if (outer == 1) {
      view.erase(view.begin());
      viewOut.erase(viewOut.begin());
    }
    result = rewriter.create<MatMulOp>(
        loc, RankedTensorType::get(viewOut, element), weights,
        reshapeTo(node, rewriter, input, view), device);
  }
  SmallVector<int64_t> resized(shape);
  resized[axis] = out;
  return reshapeTo(node, rewriter, result, resized);
}

/// extrapolation_value where any axis extrapolates, 0 elsewhere; unit
/// extents on the axes that never do, so the add broadcasts.
Value extrapolationConstant(ONNXNode node, PatternRewriter &rewriter,
                            ArrayRef<ResizeAxisTaps> axes, Type element,
                            double value) {
  SmallVector<int64_t> shape;
  for (const ResizeAxisTaps &taps : axes)
    shape.push_back(taps.anyExtrapolated()
                        ? static_cast<int64_t>(taps.extrapolated.size())
                        : 1);
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  std::vector<double> values(count, 0.0);
  SmallVector<int64_t> position(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    bool outside = false;
    for (auto [axis, taps] : llvm::enumerate(axes))
      outside |= taps.anyExtrapolated() && taps.extrapolated[position[axis]];
    values[flat] = outside ? value : 0.0;
    for (int64_t axis = static_cast<int64_t>(shape.size()) - 1; axis >= 0;
         --axis) {
      if (++position[axis] < shape[axis])
        break;
      position[axis] = 0;
    }
  }
  return denseFloatConstant(rewriter, node.getLoc(), shape, element, values);
}

LogicalResult legalizeResize(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return fail(node, rewriter, "needs a static input shape");
  int64_t rank = type.getRank();
  int64_t opset = node.getOpset();
  bool isUpsample = node.getOp().getOpType() == "Upsample";

  ResizeOptions options;
  std::string mode = node.getString("mode", "nearest");
  if (mode == "nearest")
    options.mode = ResizeMode::Nearest;
  else if (mode == "linear")
    options.mode = ResizeMode::Linear;
  else if (mode == "cubic" && !isUpsample && opset >= 11)
    options.mode = ResizeMode::Cubic;
  else
    return fail(node, rewriter, "unknown mode '" + mode + "'");
  double extrapolation = 0;
  if (isUpsample || opset < 11) {
    // Before Resize-11 the transform was asymmetric, and ONNX Runtime's
    // nearest rule floors when enlarging and ceils when shrinking.
    options.transform = "asymmetric";
    options.nearestMode = "simple";
  } else {
    options.transform =
        node.getString("coordinate_transformation_mode", "half_pixel");
    if (options.transform == "half_pixel_symmetric" && opset < 19)
      return fail(node, rewriter, "half_pixel_symmetric needs opset 19");
    options.nearestMode = node.getString("nearest_mode", "round_prefer_floor");
    options.cubicCoeffA = node.getFloat("cubic_coeff_a", -0.75f);
    std::optional<bool> exclude = getFlag(node, "exclude_outside");
    if (!exclude)
      return fail(node, rewriter, "exclude_outside must be 0 or 1");
    options.excludeOutside = *exclude;
    extrapolation = node.getFloat("extrapolation_value", 0.0f);
  }
  std::optional<bool> antialias = getFlag(node, "antialias");
  if (!antialias)
    return fail(node, rewriter, "antialias must be 0 or 1");
  options.antialias = *antialias;
  // Resize-18: scales, sizes and roi may cover only the listed axes.
  SmallVector<int64_t> axesListed =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (std::optional<SmallVector<int64_t>> given = node.getInts("axes")) {
    std::optional<SmallVector<int64_t>> listed =
        normalizeAxisList(*given, rank);
    if (!listed)
      return fail(node, rewriter, "axes out of range or repeated");
    axesListed = std::move(*listed);
  }
  std::string policy = node.getString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return fail(node, rewriter, "unknown keep_aspect_ratio_policy");

  // Scales: an attribute (Upsample-7), input 1 (Upsample-9, Resize-10) or
  // input 2; else sizes, input 3 (Resize-11+).
  std::optional<SmallVector<double>> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (isUpsample && opset < 9) {
    if (auto attr = node.getOp().getAttrs().getAs<DenseF32ArrayAttr>("scales"))
      scales = SmallVector<double>(attr.asArrayRef().begin(),
                                   attr.asArrayRef().end());
  } else if (opset < 11) {
    scales = constantFloats(node.input(1));
  } else {
    if (isPresent(node, 2))
      scales = constantFloats(node.input(2));
    if (!scales && isPresent(node, 3))
      sizes = getConstantInts(node.input(3));
  }
  size_t listed = axesListed.size();
  if (sizes) {
    if (sizes->size() != listed ||
        llvm::any_of(*sizes, [](int64_t s) { return s < 1; }))
      return fail(node, rewriter, "sizes must be positive, one per axis");
    SmallVector<int64_t> full(type.getShape());
    scales.emplace(rank, 1.0);
    if (policy == "stretch") {
      for (auto [axis, size] : llvm::zip(axesListed, *sizes)) {
        full[axis] = size;
        (*scales)[axis] = double(size) / double(type.getDimSize(axis));
      }
    } else {
      // One scale for the listed axes, in float as ONNX Runtime and shape
      // inference compute it; extents round to nearest.
      float scale =
          policy == "not_larger" ? std::numeric_limits<float>::max() : 0.0f;
      for (auto [axis, size] : llvm::zip(axesListed, *sizes)) {
        float ratio = static_cast<float>(size) /
                      static_cast<float>(type.getDimSize(axis));
        scale = policy == "not_larger" ? std::min(scale, ratio)
                                       : std::max(scale, ratio);
      }
      for (int64_t axis : axesListed) {
        full[axis] = static_cast<int64_t>(
            std::round(scale * static_cast<float>(type.getDimSize(axis))));
        (*scales)[axis] = scale;
      }
    }
    sizes = std::move(full);
  } else if (!scales) {
    return fail(node, rewriter, "scales (or sizes) are not constant");
  } else if (scales->size() != listed) {
    return fail(node, rewriter, "scales must have one entry per axis");
  } else if (listed != static_cast<size_t>(rank)) {
    SmallVector<double> full(rank, 1.0);
    for (auto [axis, scale] : llvm::zip(axesListed, *scales))
      full[axis] = scale;
    scales = std::move(full);
  }

  SmallVector<double> roi;
  if (options.transform == "tf_crop_and_resize") {
    std::optional<SmallVector<double>> values =
        isPresent(node, 1) ? constantFloats(node.input(1)) : std::nullopt;
    if (!values || values->size() != 2 * listed)
      return fail(node, rewriter,
                  "tf_crop_and_resize needs a constant roi of 2 x axes");
    // Axes not listed keep the whole extent: [0, 1].
    roi.assign(rank, 0.0);
    roi.append(rank, 1.0);
    for (auto [i, axis] : llvm::enumerate(axesListed)) {
      roi[axis] = (*values)[i];
      roi[rank + axis] = (*values)[listed + i];
    }
  }

  SmallVector<ResizeAxisTaps> axes;
  SmallVector<int64_t> resultShape;
  for (int64_t axis = 0; axis < rank; ++axis) {
    ResizeAxis spec;
    spec.inputExtent = type.getDimSize(axis);
    spec.scale = (*scales)[axis];
    if (!(spec.scale > 0))
      return fail(node, rewriter, "scales must be positive");
    // The extent ONNX shape inference and ONNX Runtime compute: the float
    // product, floored.
    spec.outputExtent = sizes ? (*sizes)[axis]
                              : static_cast<int64_t>(std::floor(
                                    static_cast<float>(spec.scale) *
                                    static_cast<float>(spec.inputExtent)));
    if (spec.outputExtent < 1)
      return fail(node, rewriter, "an axis would be empty");
    if (!roi.empty()) {
      spec.roiStart = roi[axis];
      spec.roiEnd = roi[rank + axis];
    }
    llvm::Expected<ResizeAxisTaps> taps = computeResizeTaps(spec, options);
    if (!taps)
      return fail(node, rewriter, llvm::toString(taps.takeError()));
    axes.push_back(std::move(*taps));
    resultShape.push_back(spec.outputExtent);
  }

  // Every axis a whole-factor repeat: one reshape -> expand -> reshape.
  SmallVector<int64_t> factors;
  for (const ResizeAxisTaps &taps : axes) {
    int64_t factor = 0;
    if (!taps.isRepeat(factor))
      break;
    factors.push_back(factor);
  }
  if (factors.size() == static_cast<size_t>(rank))
    return replaceNodeWithCompatible(
        node, repeatAxes(node, rewriter, node.input(0), factors, false),
        rewriter);

  Type element = type.getElementType();
  bool needsMatrix = llvm::any_of(axes, [](const ResizeAxisTaps &taps) {
    return !taps.isSelection() || taps.anyExtrapolated();
  });
  if (needsMatrix && !isa<FloatType>(element))
    return fail(node, rewriter, "interpolation needs a floating-point input");
  for (auto [axis, taps] : llvm::enumerate(axes))
    if ((!taps.isSelection() || taps.anyExtrapolated()) &&
        taps.inputExtent * static_cast<int64_t>(taps.taps.size()) >
            kMaxMatrixElements)
      return fail(node, rewriter,
                  "axis " + Twine(axis) +
                      "'s interpolation matrix would be too large");

  // Shrinking axes first, so that later steps run on fewer elements.
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return resultShape[a] * type.getDimSize(b) <
           resultShape[b] * type.getDimSize(a);
  });
  Value current = node.input(0);
  for (int64_t axis : order) {
    const ResizeAxisTaps &taps = axes[axis];
    int64_t factor = 0;
    if (taps.isRepeat(factor) && factor == 1)
      continue; // unchanged
    if (taps.isSelection() && !taps.anyExtrapolated())
      current = gatherAxis(node, rewriter, current, axis, taps);
    else
      current = interpolateAxis(node, rewriter, current, axis, taps);
  }
  bool extrapolates = llvm::any_of(
      axes, [](const ResizeAxisTaps &taps) { return taps.anyExtrapolated(); });
  if (extrapolates && extrapolation != 0)
    current = rewriter.create<AddOp>(
        node.getLoc(), current.getType(), current,
        extrapolationConstant(node, rewriter, axes, element, extrapolation),
        node.getOp().getDeviceAttr());
  return replaceNodeWithCompatible(node, current, rewriter);
}

} // namespace

void populateResizePatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "Upsample", 7, 8, {"mode", "scales"},
                 legalizeResize);
  addONNXPattern(patterns, "Upsample", 9, 9, {"mode"}, legalizeResize);
  addONNXPattern(patterns, "Resize", 10, 10, {"mode"}, legalizeResize);
  addONNXPattern(patterns, "Resize", 11, 17,
                 {"coordinate_transformation_mode", "cubic_coeff_a",
                  "exclude_outside", "extrapolation_value", "mode",
                  "nearest_mode"},
                 legalizeResize);
  addONNXPattern(patterns, "Resize", 18, kMaxOpset,
                 {"antialias", "axes", "coordinate_transformation_mode",
                  "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                  "keep_aspect_ratio_policy", "mode", "nearest_mode"},
                 legalizeResize);
}

} // namespace heterps::hps
