//===- RoiAlign.cpp - RoiAlign into gathers and arithmetic ----------------===//
//
// RoiAlign (10-17) pools each region of interest of X into an output grid,
// averaging (or taking the largest of) sampling_ratio^2 bilinear samples
// per cell. The regions are data, so it decomposes like GridSample: the
// samples' coordinates are arithmetic on [R, rows] and [R, columns] planes
// of the rois, and each of the four neighbours is one hps.gather of X laid
// out as [N * H * W, C] rows. The rules follow onnxruntime's kernel:
// samples more than a pixel outside X read zero, coordinates clamp to the
// last row or column, output_half_pixel (opset 10's only mode) widens
// regions to at least one pixel, max mode takes the largest weighted
// neighbour. sampling_ratio 0 (a per-region sample count) has no static
// shape and stays generic.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Names an op type for the generic lambdas below.
template <typename T> struct Tag { using type = T; };

LogicalResult legalizeRoiAlign(ONNXNode node, PatternRewriter &rewriter,
                               bool halfPixelDefault) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto rois = dyn_cast<RankedTensorType>(node.input(1).getType());
  auto batchIndices = dyn_cast<RankedTensorType>(node.input(2).getType());
  if (!x || !rois || !batchIndices || !x.hasStaticShape() ||
      !rois.hasStaticShape() || !batchIndices.hasStaticShape() ||
      x.getRank() != 4 || !x.getElementType().isF32() ||
      rois.getElementType() != x.getElementType() ||
      !batchIndices.getElementType().isInteger(64))
    return fail(node, rewriter,
                "needs static f32 X [N, C, H, W], rois and i64 indices");
  const int64_t n = x.getDimSize(0), c = x.getDimSize(1), h = x.getDimSize(2),
                w = x.getDimSize(3);
  const int64_t r = rois.getDimSize(0);
  const int64_t outH = node.getInt("output_height", 1),
                outW = node.getInt("output_width", 1),
                ratio = node.getInt("sampling_ratio", 0);
  const std::string mode = node.getString("mode", "avg");
  const std::string transform =
      node.getString("coordinate_transformation_mode",
                     halfPixelDefault ? "half_pixel" : "output_half_pixel");
  if (rois.getRank() != 2 || rois.getDimSize(1) != 4 ||
      batchIndices.getShape() != ArrayRef<int64_t>{r})
    return fail(node, rewriter, "rois must be [R, 4] and batch_indices [R]");
  if (outH < 1 || outW < 1 || ratio < 1)
    return fail(node, rewriter,
                "needs a positive output size and sampling_ratio");
  if ((mode != "avg" && mode != "max") ||
      (transform != "half_pixel" && transform != "output_half_pixel"))
    return fail(node, rewriter, "unknown mode or coordinate transformation");
  if (n * h * w >= (int64_t(1) << 24))
    return fail(node, rewriter, "too many pixels for exact f32 positions");
  auto result = RankedTensorType::get({r, c, outH, outW}, x.getElementType());
  if (!canReplaceWithType(node, result))
    return fail(node, rewriter, "the result is not [R, C, oh, ow]");
  const bool halfPixel = transform == "half_pixel";
  const float scale = node.getFloat("spatial_scale", 1.0f);

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type f32 = rewriter.getF32Type();
  auto typeOf = [&](ArrayRef<int64_t> shape, Type element = {}) {
    return RankedTensorType::get(shape, element ? element : f32);
  };
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  // The broadcast shape of two operands of one rank.
  auto joined = [&](Value a, Value b) {
    SmallVector<int64_t> shape;
    for (auto [p, q] : llvm::zip(shapeOf(a), shapeOf(b)))
      shape.push_back(std::max(p, q));
    return shape;
  };
  auto scalar = [&](double value) {
    return scalarConstant(rewriter, loc, f32, value);
  };
  auto isScalar = [&](Value v) { return shapeOf(v).empty(); };
  auto arith = [&](auto tag, Value a, Value b, Type element = {}) -> Value {
    using OpTy = typename decltype(tag)::type;
    SmallVector<int64_t> shape = isScalar(a) ? SmallVector<int64_t>(shapeOf(b))
                                 : isScalar(b)
                                     ? SmallVector<int64_t>(shapeOf(a))
                                     : joined(a, b);
    return rewriter.create<OpTy>(loc, typeOf(shape, element), a, b, device);
  };
  auto add = [&](Value a, Value b) { return arith(Tag<AddOp>{}, a, b); };
  auto sub = [&](Value a, Value b) { return arith(Tag<SubOp>{}, a, b); };
  auto mul = [&](Value a, Value b) { return arith(Tag<MulOp>{}, a, b); };
  auto div = [&](Value a, Value b) { return arith(Tag<DivOp>{}, a, b); };
  auto max = [&](Value a, Value b) { return arith(Tag<MaxOp>{}, a, b); };
  auto i1 = rewriter.getI1Type();
  auto greaterEqual = [&](Value a, Value b) {
    return arith(Tag<GreaterEqualOp>{}, a, b, i1);
  };
  auto select = [&](Value condition, Value a, Value b) -> Value {
    return rewriter.create<WhereOp>(loc, typeOf(shapeOf(condition)), condition,
                                    a, b, device);
  };
  auto constantRow = [&](ArrayRef<float> values) -> Value {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 typeOf({1, static_cast<int64_t>(values.size())}), values));
  };

  // Region corners in pixel units, [R, 1] each.
  auto corner = [&](int64_t k) -> Value {
    Value part = rewriter.create<SliceOp>(
        loc, typeOf({r, 1}), node.input(1), rewriter.getDenseI64ArrayAttr({k}),
        rewriter.getDenseI64ArrayAttr({k + 1}),
        rewriter.getDenseI64ArrayAttr({1}), rewriter.getDenseI64ArrayAttr({1}),
        device);
    return sub(mul(part, scalar(scale)), scalar(halfPixel ? 0.5 : 0.0));
  };

  struct Axis {
    Value low, high; // neighbour coordinates, [R, samples]
    Value lowWeight, highWeight;
  };
  // One axis' samples: start + cell * bin + (i + 0.5) * bin / ratio, as
  // onnxruntime orders it, then its bilinear neighbours and weights.
  auto axis = [&](Value start, Value end, int64_t cells, int64_t extent) {
    Value size = sub(end, start);
    if (!halfPixel)
      size = max(size, scalar(1));
    Value bin = div(size, scalar(double(cells)));
    SmallVector<float> cellOf, offsetOf;
    for (int64_t cell = 0; cell < cells; ++cell)
      for (int64_t i = 0; i < ratio; ++i) {
        cellOf.push_back(float(cell));
        offsetOf.push_back(float(i) + 0.5f);
      }
    Value at = add(add(start, mul(constantRow(cellOf), bin)),
                   div(mul(constantRow(offsetOf), bin), scalar(double(ratio))));
    // Samples past a pixel outside X read nothing.
    Value inside = rewriter.create<AndOp>(
        loc, typeOf(shapeOf(at), i1), greaterEqual(at, scalar(-1)),
        rewriter.create<LessEqualOp>(loc, typeOf(shapeOf(at), i1), at,
                                     scalar(double(extent)), device),
        device);
    at = max(at, scalar(0));
    Value low = rewriter.create<FloorOp>(loc, at.getType(), at, device);
    Value last = greaterEqual(low, scalar(double(extent - 1)));
    Value lastIndex = scalar(double(extent - 1));
    Value fraction = select(last, scalar(0), sub(at, low));
    Axis result;
    result.low = select(last, lastIndex, low);
    result.high = select(last, lastIndex, add(low, scalar(1)));
    result.highWeight = select(inside, fraction, scalar(0));
    result.lowWeight = select(inside, sub(scalar(1), fraction), scalar(0));
    return result;
  };
  Axis ys = axis(corner(1), corner(3), outH, h);
  Axis xs = axis(corner(0), corner(2), outW, w);
  const int64_t rows = outH * ratio, columns = outW * ratio;

  // X as rows of C values, one per pixel.
  Value table =
      reshapeTo(node, rewriter,
                rewriter.create<TransposeOp>(
                    loc, typeOf({n, h, w, c}), node.input(0),
                    rewriter.getDenseI64ArrayAttr({0, 2, 3, 1}), device),
                {n * h * w, c});
  Value base = mul(reshapeTo(node, rewriter,
                             rewriter.create<CastOp>(loc, typeOf({r}),
                                                     node.input(2), device),
                             {r, 1, 1}),
                   scalar(double(h * w)));
  auto sampleType = typeOf({r, rows, columns, c});
  auto neighbour = [&](Value row, Value rowWeight, Value column,
                       Value columnWeight) -> Value {
    Value position =
        add(base, add(mul(reshapeTo(node, rewriter, row, {r, rows, 1}),
                          scalar(double(w))),
                      reshapeTo(node, rewriter, column, {r, 1, columns})));
    Value indices = rewriter.create<CastOp>(
        loc, typeOf({r, rows, columns}, rewriter.getI64Type()), position,
        device);
    Value sampled = rewriter.create<GatherOp>(
        loc, sampleType, table, indices, rewriter.getI64IntegerAttr(0), device);
    Value weight =
        mul(reshapeTo(node, rewriter, rowWeight, {r, rows, 1, 1}),
            reshapeTo(node, rewriter, columnWeight, {r, 1, columns, 1}));
    return mul(sampled, weight);
  };
  const bool average = mode == "avg";
  auto combine = [&](Value a, Value b) {
    return average ? add(a, b) : max(a, b);
  };
  Value samples = combine(
      combine(neighbour(ys.low, ys.lowWeight, xs.low, xs.lowWeight),
              neighbour(ys.low, ys.lowWeight, xs.high, xs.highWeight)),
      combine(neighbour(ys.high, ys.highWeight, xs.low, xs.lowWeight),
              neighbour(ys.high, ys.highWeight, xs.high, xs.highWeight)));

  // [R, oh, ratio, ow, ratio, C] -> the cells' mean or max -> [R, C, oh, ow].
  Value grouped =
      reshapeTo(node, rewriter, samples, {r, outH, ratio, outW, ratio, c});
  Value pooled = rewriter.create<ReduceOp>(
      loc, typeOf({r, outH, outW, c}),
      ReduceKindAttr::get(rewriter.getContext(),
                          average ? ReduceKind::Mean : ReduceKind::Max),
      grouped, rewriter.getDenseI64ArrayAttr({2, 4}), UnitAttr(), device);
  Value y = rewriter.create<TransposeOp>(
      loc, result, pooled, rewriter.getDenseI64ArrayAttr({0, 3, 1, 2}), device);
  return replaceNodeWithCompatible(node, y, rewriter);
}

} // namespace

void populateRoiAlignPatterns(RewritePatternSet &patterns) {
  static constexpr StringRef kAttrs10[] = {"mode", "output_height",
                                           "output_width", "sampling_ratio",
                                           "spatial_scale"};
  static constexpr StringRef kAttrs16[] = {"coordinate_transformation_mode",
                                           "mode",
                                           "output_height",
                                           "output_width",
                                           "sampling_ratio",
                                           "spatial_scale"};
  addONNXPattern(patterns, "RoiAlign", 10, 15, kAttrs10,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeRoiAlign(node, rewriter, false);
                 });
  addONNXPattern(patterns, "RoiAlign", 16, kMaxOpset, kAttrs16,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeRoiAlign(node, rewriter, true);
                 });
}

} // namespace heterps::hps
