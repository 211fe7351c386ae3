//===- GridSample.cpp - GridSample and AffineGrid ------------------------===//
//--------------------------===//
//
// GridSample (16) reads X at the points a run-time grid names, so its
// indices are data: it decomposes into elementwise arithmetic on the
// [N, Ho, Wo] planes of the grid's coordinates and one hps.gather per
// neighbour from X laid out as [N * H * W + 1, C] (the last row zeros, read
// by neighbours outside the image under zero padding). The rules follow
// onnxruntime's kernel: coordinates unnormalised by align_corners, border
// padding clamps and reflection padding reflects them (bilinear and
// nearest) and each neighbour index, nearest rounds half to even before
// that, bicubic uses a = -0.75.
// Gradients flow to X through the gathers and to the grid through the
// interpolation weights.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {
namespace {

enum class SampleMode { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

/// The arithmetic on one [N, Ho, Wo] f32 plane, at the node's placement.
class PlaneBuilder {
public:
  PlaneBuilder(ONNXNode node, PatternRewriter &rewriter, RankedTensorType plane)
      : rewriter(rewriter), loc(node.getLoc()),
        device(node.getOp().getDeviceAttr()), plane(plane),
        mask(plane.clone(rewriter.getI1Type())) {}

  Value scalar(double value) {
    return scalarConstant(rewriter, loc, rewriter.getF32Type(), value);
  }
  Value add(Value a, Value b) { return planeOp<AddOp>(a, b); }
  Value sub(Value a, Value b) { return planeOp<SubOp>(a, b); }
  Value mul(Value a, Value b) { return planeOp<MulOp>(a, b); }
  Value div(Value a, Value b) { return planeOp<DivOp>(a, b); }
  Value floor(Value a) { return planeOp<FloorOp>(a); }
  Value round(Value a) { return planeOp<RoundOp>(a); }
  Value clip(Value a, double low, double high) {
    return planeOp<ClipOp>(a, rewriter.getF64FloatAttr(low),
                           rewriter.getF64FloatAttr(high));
  }
  Value less(Value a, Value b) { return maskOp<LessOp>(a, b); }
  Value greater(Value a, Value b) { return maskOp<GreaterOp>(a, b); }
  Value both(Value a, Value b) { return maskOp<AndOp>(a, b); }
  Value either(Value a, Value b) { return maskOp<OrOp>(a, b); }
  Value select(Value condition, Value a, Value b) {
    return rewriter.create<WhereOp>(loc, plane, condition, a, b, device);
  }

  /// onnxruntime's GsReflect: x folded into [low, high] by reflections at
  /// both ends (a degenerate range gives low).
  Value reflect(Value x, double low, double high) {
    const double range = high - low;
    if (range <= 0)
      return add(mul(x, scalar(0)), scalar(low));
    Value below = less(x, scalar(low)), above = greater(x, scalar(high));
    Value distance = select(below, sub(scalar(low), x), sub(x, scalar(high)));
    Value turns = floor(div(distance, scalar(range)));
    Value rest = sub(distance, mul(turns, scalar(range)));
    // turns is a whole number: odd where turns - 2 floor(turns / 2) is 1.
    Value odd =
        greater(sub(turns, mul(floor(mul(turns, scalar(0.5))), scalar(2))),
                scalar(0.5));
    Value fromLow = add(scalar(low), rest), fromHigh = sub(scalar(high), rest);
    return select(below, select(odd, fromHigh, fromLow),
                  select(above, select(odd, fromLow, fromHigh), x));
  }

private:
  template <typename OpTy, typename... Args> Value planeOp(Args... args) {
    return rewriter.create<OpTy>(loc, plane, args..., device);
  }
  template <typename OpTy> Value maskOp(Value a, Value b) {
    return rewriter.create<OpTy>(loc, mask, a, b, device);
  }

  PatternRewriter &rewriter;
  Location loc;
  DeviceAttr device;
  RankedTensorType plane, mask;
};

LogicalResult legalizeGridSample(ONNXNode node, PatternRewriter &rewriter) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto grid = dyn_cast<RankedTensorType>(node.input(1).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!x || !grid || !result || !x.hasStaticShape() || !grid.hasStaticShape() ||
      !result.hasStaticShape() || x.getRank() != 4 || grid.getRank() != 4 ||
      !x.getElementType().isF32() || !grid.getElementType().isF32() ||
      result.getElementType() != x.getElementType())
    return fail(node, rewriter, "needs static 4-D f32 X and grid");
  const int64_t n = x.getDimSize(0), c = x.getDimSize(1), h = x.getDimSize(2),
                w = x.getDimSize(3);
  const int64_t ho = grid.getDimSize(1), wo = grid.getDimSize(2);
  if (grid.getDimSize(0) != n || grid.getDimSize(3) != 2 ||
      result.getShape() != ArrayRef<int64_t>{n, c, ho, wo})
    return fail(node, rewriter, "grid or result shape mismatch");
  if (n * h * w + 1 >= (int64_t(1) << 24))
    return fail(node, rewriter, "too many pixels for exact f32 positions");
  // Opset 20 renamed bilinear and bicubic to linear and cubic (and went
  // n-D; the 4-D case is the one with a pattern).
  const bool renamed = node.getOpset() >= 20;
  std::string modeName =
      node.getString("mode", renamed ? "linear" : "bilinear");
  std::string paddingName = node.getString("padding_mode", "zeros");
  std::optional<bool> alignCorners = getFlag(node, "align_corners");
  std::optional<SampleMode> mode = modeName == (renamed ? "linear" : "bilinear")
                                       ? std::optional(SampleMode::Bilinear)
                                   : modeName == "nearest"
                                       ? std::optional(SampleMode::Nearest)
                                   : modeName == (renamed ? "cubic" : "bicubic")
                                       ? std::optional(SampleMode::Bicubic)
                                       : std::nullopt;
  std::optional<Padding> padding =
      paddingName == "zeros"        ? std::optional(Padding::Zeros)
      : paddingName == "border"     ? std::optional(Padding::Border)
      : paddingName == "reflection" ? std::optional(Padding::Reflection)
                                    : std::nullopt;
  if (!mode || !padding || !alignCorners)
    return fail(node, rewriter, "unknown mode, padding_mode or align_corners");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type f32 = rewriter.getF32Type();
  auto plane = RankedTensorType::get({n, ho, wo}, f32);
  PlaneBuilder p(node, rewriter, plane);

  // The grid's coordinates, unnormalised to pixel units.
  auto coordinate = [&](int64_t k, int64_t extent) {
    Value part = rewriter.create<SliceOp>(
        loc, RankedTensorType::get({n, ho, wo, 1}, f32), node.input(1),
        rewriter.getDenseI64ArrayAttr({k}),
        rewriter.getDenseI64ArrayAttr({k + 1}),
        rewriter.getDenseI64ArrayAttr({3}), rewriter.getDenseI64ArrayAttr({1}),
        device);
    Value g = reshapeTo(node, rewriter, part, {n, ho, wo});
    // align_corners: -1 and 1 are the centres of the end pixels; else their
    // outer edges.
    Value v = *alignCorners
                  ? p.mul(p.add(g, p.scalar(1)), p.scalar(0.5 * (extent - 1)))
                  : p.mul(p.sub(p.mul(p.add(g, p.scalar(1)),
                                      p.scalar(double(extent))),
                                p.scalar(1)),
                          p.scalar(0.5));
    // Nearest rounds before padding moves a point.
    return *mode == SampleMode::Nearest ? p.round(v) : v;
  };
  Value gx = coordinate(0, w), gy = coordinate(1, h);
  // The image's extent in those units: pixel centres with align_corners,
  // else pixel edges.
  const double xLow = *alignCorners ? 0 : -0.5, yLow = xLow;
  const double xHigh = *alignCorners ? double(w - 1) : double(w) - 0.5;
  const double yHigh = *alignCorners ? double(h - 1) : double(h) - 0.5;
  // Bicubic pads each of its taps only (in pixel()), as PyTorch's
  // grid_sample and onnxruntime do; the others pad the point too.
  const bool padPoint = *mode != SampleMode::Bicubic;
  if (padPoint && *padding == Padding::Border) {
    // Both coordinates clamp to the centres once either is outside.
    Value outside = p.either(
        p.either(p.less(gx, p.scalar(xLow)), p.greater(gx, p.scalar(xHigh))),
        p.either(p.less(gy, p.scalar(yLow)), p.greater(gy, p.scalar(yHigh))));
    gx = p.select(outside, p.clip(gx, 0, double(w - 1)), gx);
    gy = p.select(outside, p.clip(gy, 0, double(h - 1)), gy);
  } else if (padPoint && *padding == Padding::Reflection) {
    gx = p.reflect(gx, xLow, xHigh);
    gy = p.reflect(gy, yLow, yHigh);
  }

  // X as rows of C values, one per pixel, and a zero row after them.
  auto elementType = x.getElementType();
  Value rows = reshapeTo(
      node, rewriter,
      rewriter.create<TransposeOp>(
          loc, RankedTensorType::get({n, h, w, c}, elementType), node.input(0),
          rewriter.getDenseI64ArrayAttr({0, 2, 3, 1}), device),
      {n * h * w, c});
  Value zeroRow = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({1, c}, elementType),
                                  makeScalarAttr(elementType, 0)));
  Value table = rewriter.create<ConcatOp>(
      loc, RankedTensorType::get({n * h * w + 1, c}, elementType),
      ValueRange{rows, zeroRow}, rewriter.getI64IntegerAttr(0), device);
  SmallVector<float> bases(n * ho * wo);
  for (int64_t i = 0; i < n; ++i)
    std::fill_n(bases.begin() + i * ho * wo, ho * wo, float(i * h * w));
  Value batchBase = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(plane, ArrayRef<float>(bases)));
  auto sampledType = RankedTensorType::get({n, ho, wo, c}, elementType);

  // The values at whole pixel coordinates (row, column): onnxruntime's
  // PixelAtGrid, as [N, Ho, Wo, C].
  auto pixel = [&](Value row, Value column) -> Value {
    Value position;
    if (*padding == Padding::Zeros) {
      Value inside = p.both(p.both(p.greater(column, p.scalar(-1)),
                                   p.less(column, p.scalar(double(w)))),
                            p.both(p.greater(row, p.scalar(-1)),
                                   p.less(row, p.scalar(double(h)))));
      position = p.select(
          inside,
          p.add(batchBase, p.add(p.mul(row, p.scalar(double(w))), column)),
          p.scalar(double(n * h * w)));
    } else {
      if (*padding == Padding::Border) {
        column = p.clip(column, 0, double(w - 1));
        row = p.clip(row, 0, double(h - 1));
      } else {
        // Whole numbers reflect to whole numbers at either extent.
        column = p.reflect(column, xLow, xHigh);
        row = p.reflect(row, yLow, yHigh);
      }
      position =
          p.add(batchBase, p.add(p.mul(row, p.scalar(double(w))), column));
    }
    Value indices = rewriter.create<CastOp>(
        loc, RankedTensorType::get({n, ho, wo}, rewriter.getI64Type()),
        position, device);
    return rewriter.create<GatherOp>(loc, sampledType, table, indices,
                                     rewriter.getI64IntegerAttr(0), device);
  };
  auto weighted = [&](Value sum, Value weight, Value sample) -> Value {
    Value term = rewriter.create<MulOp>(
        loc, sampledType, sample,
        reshapeTo(node, rewriter, weight, {n, ho, wo, 1}), device);
    return sum ? Value(rewriter.create<AddOp>(loc, sampledType, sum, term,
                                              device))
               : term;
  };

  Value sampled;
  switch (*mode) {
  case SampleMode::Nearest:
    sampled = pixel(gy, gx);
    break;
  case SampleMode::Bilinear: {
    Value x0 = p.floor(gx), y0 = p.floor(gy);
    Value x1 = p.add(x0, p.scalar(1)), y1 = p.add(y0, p.scalar(1));
    Value wx1 = p.sub(gx, x0), wy1 = p.sub(gy, y0);
    Value wx0 = p.sub(p.scalar(1), wx1), wy0 = p.sub(p.scalar(1), wy1);
    sampled = weighted(sampled, p.mul(wy0, wx0), pixel(y0, x0));
    sampled = weighted(sampled, p.mul(wy0, wx1), pixel(y0, x1));
    sampled = weighted(sampled, p.mul(wy1, wx0), pixel(y1, x0));
    sampled = weighted(sampled, p.mul(wy1, wx1), pixel(y1, x1));
    break;
  }
  case SampleMode::Bicubic: {
    // Cubic convolution weights of the four taps around t in [0, 1).
    auto cubicWeights = [&](Value t) {
      const double a = -0.75;
      auto poly = [&](Value s, double c3, double c2, double c1, double c0) {
        // ((c3 s + c2) s + c1) s + c0
        Value v = p.add(p.mul(s, p.scalar(c3)), p.scalar(c2));
        v = p.add(p.mul(v, s), p.scalar(c1));
        return p.add(p.mul(v, s), p.scalar(c0));
      };
      Value outer = p.add(t, p.scalar(1)), far = p.sub(p.scalar(2), t);
      Value inner = t, near = p.sub(p.scalar(1), t);
      // |s| in [1, 2): a s^3 - 5a s^2 + 8a s - 4a; |s| < 1: (a+2) s^3 -
      // (a+3) s^2 + 1.
      return std::array<Value, 4>{poly(outer, a, -5 * a, 8 * a, -4 * a),
                                  poly(inner, a + 2, -(a + 3), 0, 1),
                                  poly(near, a + 2, -(a + 3), 0, 1),
                                  poly(far, a, -5 * a, 8 * a, -4 * a)};
    };
    Value x0 = p.floor(gx), y0 = p.floor(gy);
    std::array<Value, 4> wx = cubicWeights(p.sub(gx, x0));
    std::array<Value, 4> wy = cubicWeights(p.sub(gy, y0));
    for (int i = 0; i < 4; ++i) {
      Value row = p.add(y0, p.scalar(i - 1));
      for (int j = 0; j < 4; ++j)
        sampled = weighted(sampled, p.mul(wy[i], wx[j]),
                           pixel(row, p.add(x0, p.scalar(j - 1))));
    }
    break;
  }
  }
  Value y = rewriter.create<TransposeOp>(
      loc, result, sampled, rewriter.getDenseI64ArrayAttr({0, 3, 1, 2}),
      device);
  return replaceNodeWithCompatible(node, y, rewriter);
}

/// AffineGrid (20) for a constant size [N, C, H, W] (or [N, C, D, H, W])
/// and a static f32 theta [N, r, r + 1]: every output point is theta[n] @
/// (x, y[, z], 1), the base coordinates spread over [-1, 1] (align_corners:
/// the end points are the corner pixels' centres, else their outer edges).
/// One hps.matmul of the constant base [P, r + 1] by
/// theta transposed [N, r + 1, r], reshaped to [N, spatial..., r]; the
/// gradient reaches theta through the matmul.
LogicalResult legalizeAffineGrid(ONNXNode node, PatternRewriter &rewriter) {
  auto theta = dyn_cast<RankedTensorType>(node.input(0).getType());
  std::optional<SmallVector<int64_t>> size = getConstantInts(node.input(1));
  std::optional<bool> alignCorners = getFlag(node, "align_corners");
  if (!theta || !theta.hasStaticShape() || theta.getRank() != 3 ||
      !theta.getElementType().isF32() || !size || !alignCorners)
    return fail(node, rewriter, "needs a static f32 theta, a constant size");
  const int64_t r = theta.getDimSize(1);
  if ((r != 2 && r != 3) || theta.getDimSize(2) != r + 1 ||
      static_cast<int64_t>(size->size()) != r + 2 ||
      (*size)[0] != theta.getDimSize(0) ||
      llvm::any_of(*size, [](int64_t s) { return s < 1; }))
    return fail(node, rewriter, "theta and size disagree");
  SmallVector<int64_t> spatial(size->begin() + 2, size->end());
  int64_t points = 1;
  for (int64_t extent : spatial)
    points *= extent;
  // Rows (x, y[, z], 1): x runs along the last axis.
  // A one-long axis under align_corners has no spacing: onnxruntime (an
  // Eigen LinSpaced of one point) puts it at the high end, 1.
  auto coordinate = [&](int64_t i, int64_t extent) {
    if (*alignCorners)
      return extent == 1 ? 1.0 : -1.0 + 2.0 * double(i) / double(extent - 1);
    return -1.0 + (2.0 * double(i) + 1.0) / double(extent);
  };
  std::vector<double> base;
  base.reserve(points * (r + 1));
  SmallVector<int64_t> index(r, 0);
  for (int64_t p = 0; p < points; ++p) {
    for (int64_t k = r - 1; k >= 0; --k)
      base.push_back(coordinate(index[k], spatial[k]));
    base.push_back(1.0);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++index[k] < spatial[k])
        break;
      index[k] = 0;
    }
  }
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type f32 = rewriter.getF32Type();
  int64_t n = theta.getDimSize(0);
  Value baseGrid =
      denseFloatConstant(rewriter, loc, {points, r + 1}, f32, base);
  Value transposed = rewriter.create<TransposeOp>(
      loc, RankedTensorType::get({n, r + 1, r}, f32), node.input(0),
      rewriter.getDenseI64ArrayAttr({0, 2, 1}), device);
  Value grid =
      rewriter.create<MatMulOp>(loc, RankedTensorType::get({n, points, r}, f32),
                                baseGrid, transposed, device);
  SmallVector<int64_t> shape = {n};
  shape.append(spatial.begin(), spatial.end());
  shape.push_back(r);
  return replaceNodeWithCompatible(node, reshapeTo(node, rewriter, grid, shape),
                                   rewriter);
}

} // namespace

void populateGridSamplePatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "AffineGrid", 20, kMaxOpset, {"align_corners"},
                 legalizeAffineGrid);
  addONNXPattern(patterns, "GridSample", 16, 19,
                 {"align_corners", "mode", "padding_mode"}, legalizeGridSample);
  addONNXPattern(patterns, "GridSample", 20, kMaxOpset,
                 {"align_corners", "mode", "padding_mode"}, legalizeGridSample);
}

} // namespace heterps::hps
