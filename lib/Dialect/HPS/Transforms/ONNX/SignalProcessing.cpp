//===- SignalProcessing.cpp - DFT, STFT and MelWeightMatrix (17, 20) ------===//
//
// The Fourier transforms become one hps.matmul with a constant real matrix
// of cosines and sines: row (sample t, real/imaginary part of the input),
// column (bin k, real/imaginary part of the output). That is the O(n^2)
// definition, not an FFT, but it needs no kernel of its own: matmul runs on
// every device and has a gradient rule, so spectrogram front-ends compile,
// run and train like any other layer. Angles are 2 pi (k t mod n) / n in
// double, so long transforms keep their accuracy. STFT first gathers its
// frames (constant positions); a constant window is folded into the
// matrix, a run-time or trainable one multiplies the frames.
// MelWeightMatrix of constant operands folds to a constant.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace heterps::hps {
namespace {

/// The most elements one transform matrix may have (64 MiB of f32): a
/// 2048-point complex DFT, or a real one-sided transform of 4094 points.
constexpr int64_t kMaxMatrixElements = int64_t(1) << 24;

/// cos and sin of 2 pi r / n for 0 <= r < n; exact at quarter turns, where
/// std::cos(pi / 2) would give 6e-17 instead of 0.
std::pair<double, double> unitRoot(int64_t r, int64_t n) {
  if ((4 * r) % n == 0) {
    constexpr double kCos[] = {1, 0, -1, 0}, kSin[] = {0, 1, 0, -1};
    const int64_t quarter = 4 * r / n;
    return {kCos[quarter], kSin[quarter]};
  }
  const double angle =
      2 * llvm::numbers::pi * static_cast<double>(r) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

/// A DFT of `length` points over `samples` (<= length; the rest are zero)
/// input samples of `channels` values (1 real, 2 complex) to `bins` outputs
/// of (real, imaginary) parts, as the [samples * channels, bins * 2] matrix
/// that multiplies the samples from the right. Each sample's rows are
/// scaled by `window[t]` when a window is given, and everything by 1 / n
/// for the inverse transform.
SmallVector<double> dftMatrix(int64_t samples, int64_t channels, int64_t length,
                              int64_t bins, bool inverse,
                              ArrayRef<double> window) {
  const int64_t columns = bins * 2;
  SmallVector<double> matrix(samples * channels * columns, 0.0);
  // x (cos a + i sign sin a) with x = re + i im.
  const double sign = inverse ? 1.0 : -1.0;
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  for (int64_t t = 0; t < samples; ++t) {
    const double weight = scale * (window.empty() ? 1.0 : window[t]);
    double *re = &matrix[t * channels * columns];
    double *im = channels == 2 ? re + columns : nullptr;
    for (int64_t k = 0; k < bins; ++k) {
      const auto [cosine, sine] = unitRoot((k * t) % length, length);
      const double c = weight * cosine;
      const double s = weight * sign * sine;
      re[2 * k] = c;
      re[2 * k + 1] = s;
      if (im) {
        im[2 * k] = -s;
        im[2 * k + 1] = c;
      }
    }
  }
  return matrix;
}

RankedTensorType staticType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

/// `value` transposed by `perm`, at the node's placement.
Value transposeBy(ONNXNode node, PatternRewriter &rewriter, Value value,
                  ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(type.getDimSize(axis));
  return rewriter.create<TransposeOp>(
      node.getLoc(), RankedTensorType::get(shape, type.getElementType()), value,
      rewriter.getDenseI64ArrayAttr(perm), node.getOp().getDeviceAttr());
}

/// `rows` [M, K] times the constant `matrix` [K, N] of the rows' element
/// type.
Value timesConstant(ONNXNode node, PatternRewriter &rewriter, Value rows,
                    int64_t columns, ArrayRef<double> matrix) {
  auto type = cast<RankedTensorType>(rows.getType());
  Type element = type.getElementType();
  const int64_t inner = type.getDimSize(1);
  Value constant = denseFloatConstant(rewriter, node.getLoc(), {inner, columns},
                                      element, matrix);
  return rewriter.create<MatMulOp>(
      node.getLoc(),
      RankedTensorType::get({type.getDimSize(0), columns}, element), rows,
      constant, node.getOp().getDeviceAttr());
}

/// A positive integer constant operand, or std::nullopt.
std::optional<int64_t> positiveConstant(Value value) {
  std::optional<double> scalar =
      value ? getConstantScalar(value) : std::nullopt;
  if (!scalar || *scalar < 1 || *scalar != std::floor(*scalar))
    return std::nullopt;
  return static_cast<int64_t>(*scalar);
}

/// DFT (17, 20): along `axis` of [batch, ..., n, ..., 1 or 2], optionally
/// zero-padded or truncated to dft_length, one-sided (the first n / 2 + 1
/// bins of a real forward transform) or inverse (scaled by 1 / n). The axis
/// is an attribute (default 1) at 17 and a constant scalar input (default
/// -2) from 20.
LogicalResult legalizeDFT(ONNXNode node, PatternRewriter &rewriter) {
  RankedTensorType type = staticType(node.input(0));
  if (!type || type.getRank() < 3 || !isa<FloatType>(type.getElementType()))
    return fail(node, rewriter, "needs a static float signal of rank >= 3");
  const int64_t rank = type.getRank();
  const int64_t channels = type.getDimSize(rank - 1);
  if (channels != 1 && channels != 2)
    return fail(node, rewriter, "the last axis must hold 1 or 2 values");
  int64_t axis = node.getInt("axis", 1);
  if (node.getOpset() >= 20) {
    axis = -2;
    if (Value given = node.input(2)) {
      std::optional<SmallVector<int64_t>> values = getConstantInts(given);
      if (!values || values->size() != 1)
        return fail(node, rewriter, "axis is not a constant scalar");
      axis = values->front();
    }
  }
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank - 2)
    return fail(node, rewriter, "axis must name a signal axis");
  const int64_t extent = type.getDimSize(axis);
  int64_t length = extent;
  if (node.input(1)) {
    std::optional<int64_t> given = positiveConstant(node.input(1));
    if (!given)
      return fail(node, rewriter, "dft_length is not a positive constant");
    length = *given;
  }
  const bool inverse = node.getInt("inverse", 0) != 0;
  const bool onesided = node.getInt("onesided", 0) != 0;
  if (onesided && (inverse || channels == 2))
    return fail(node, rewriter,
                "onesided applies to a forward transform of a real signal");
  const int64_t bins = onesided ? length / 2 + 1 : length;
  const int64_t samples = std::min(extent, length);
  if (extent == 0 || samples * channels * bins * 2 > kMaxMatrixElements)
    return fail(node, rewriter, "the transform matrix would be too large");

  // [others..., samples, channels] -> [M, samples * channels].
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis)
      perm.push_back(i);
  perm.append({axis, rank - 1});
  const bool moved = axis != rank - 2;
  Value signal = node.input(0);
  if (moved)
    signal = transposeBy(node, rewriter, signal, perm);
  const int64_t rows = type.getNumElements() / (extent * channels);
  Value flat = reshapeTo(node, rewriter, signal, {rows, extent * channels});
  if (samples < extent)
    flat = rewriter.create<SliceOp>(
        node.getLoc(),
        RankedTensorType::get({rows, samples * channels},
                              type.getElementType()),
        flat, rewriter.getDenseI64ArrayAttr({0}),
        rewriter.getDenseI64ArrayAttr({samples * channels}),
        rewriter.getDenseI64ArrayAttr({1}), rewriter.getDenseI64ArrayAttr({1}),
        node.getOp().getDeviceAttr());
  Value product =
      timesConstant(node, rewriter, flat, bins * 2,
                    dftMatrix(samples, channels, length, bins, inverse, {}));

  // Back to [others..., bins, 2], then to the input's axis order.
  SmallVector<int64_t> shape;
  for (int64_t i : ArrayRef(perm).drop_back(2))
    shape.push_back(type.getDimSize(i));
  shape.append({bins, 2});
  Value result = reshapeTo(node, rewriter, product, shape);
  if (moved) {
    SmallVector<int64_t> back(rank);
    for (int64_t i = 0; i < rank; ++i)
      back[perm[i]] = i;
    result = transposeBy(node, rewriter, result, back);
  }
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// STFT (17): frames of frame_length samples every frame_step samples of
/// [batch, length, 1 or 2], each (times the window) transformed; one-sided
/// by default.
LogicalResult legalizeSTFT(ONNXNode node, PatternRewriter &rewriter) {
  RankedTensorType type = staticType(node.input(0));
  if (!type || type.getRank() != 3 || !isa<FloatType>(type.getElementType()))
    return fail(node, rewriter, "needs a static float signal of rank 3");
  const int64_t batch = type.getDimSize(0), length = type.getDimSize(1),
                channels = type.getDimSize(2);
  if (channels != 1 && channels != 2)
    return fail(node, rewriter, "the last axis must hold 1 or 2 values");
  std::optional<int64_t> step = positiveConstant(node.input(1));
  if (!step)
    return fail(node, rewriter, "frame_step is not a positive constant");
  Value window = node.input(2);
  std::optional<int64_t> frameLength;
  if (node.input(3) && !(frameLength = positiveConstant(node.input(3))))
    return fail(node, rewriter, "frame_length is not a positive constant");
  if (window) {
    RankedTensorType windowType = staticType(window);
    if (!windowType || windowType.getRank() != 1 ||
        windowType.getElementType() != type.getElementType() ||
        (frameLength && windowType.getDimSize(0) != *frameLength))
      return fail(node, rewriter,
                  "window must be 1-D of the signal's type and frame length");
    frameLength = windowType.getDimSize(0);
  }
  if (!frameLength || *frameLength < 1 || *frameLength > length)
    return fail(node, rewriter,
                "needs a window or frame_length within the signal");
  const bool onesided = node.getInt("onesided", 1) != 0;
  if (onesided && channels == 2)
    return fail(node, rewriter, "onesided applies to a real signal");
  const int64_t frames = (length - *frameLength) / *step + 1;
  const int64_t bins = onesided ? *frameLength / 2 + 1 : *frameLength;
  if (*frameLength * channels * bins * 2 > kMaxMatrixElements)
    return fail(node, rewriter, "the transform matrix would be too large");
  // Only an hps.constant window is folded: an initializer is an
  // hps.weight, which training updates, so it multiplies the frames.
  std::optional<SmallVector<double>> windowValues;
  if (window && window.getDefiningOp<ConstantOp>())
    windowValues = constantFloats(window);

  SmallVector<int64_t> positions;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < *frameLength; ++t)
      positions.push_back(f * *step + t);
  auto indexType =
      RankedTensorType::get({frames, *frameLength}, rewriter.getI64Type());
  Value indices = rewriter.create<ConstantOp>(
      node.getLoc(), DenseElementsAttr::get(indexType, ArrayRef(positions)));
  Type element = type.getElementType();
  auto framesType =
      RankedTensorType::get({batch, frames, *frameLength, channels}, element);
  Value framed = rewriter.create<GatherOp>(
      node.getLoc(), framesType, node.input(0), indices,
      rewriter.getI64IntegerAttr(1), node.getOp().getDeviceAttr());
  if (window && !windowValues)
    framed = rewriter.create<MulOp>(
        node.getLoc(), framesType, framed,
        reshapeTo(node, rewriter, window, {*frameLength, 1}),
        node.getOp().getDeviceAttr());
  Value flat = reshapeTo(node, rewriter, framed,
                         {batch * frames, *frameLength * channels});
  Value product =
      timesConstant(node, rewriter, flat, bins * 2,
                    dftMatrix(*frameLength, channels, *frameLength, bins, false,
                              windowValues ? ArrayRef<double>(*windowValues)
                                           : ArrayRef<double>()));
  return replaceNodeWithCompatible(
      node, reshapeTo(node, rewriter, product, {batch, frames, bins, 2}),
      rewriter);
}

/// MelWeightMatrix (17) of constant operands: triangular filters between
/// num_mel_bins + 2 points equally spaced on the mel scale, as ONNX's
/// reference computes them (in double), folded to a constant of
/// output_datatype.
LogicalResult legalizeMelWeightMatrix(ONNXNode node,
                                      PatternRewriter &rewriter) {
  std::optional<int64_t> melBins = positiveConstant(node.input(0));
  std::optional<int64_t> dftLength = positiveConstant(node.input(1));
  std::optional<int64_t> sampleRate = positiveConstant(node.input(2));
  std::optional<double> lower = getConstantScalar(node.input(3));
  std::optional<double> upper = getConstantScalar(node.input(4));
  if (!melBins || !dftLength || !sampleRate || !lower || !upper)
    return fail(node, rewriter, "operands are not known constants");
  const int64_t spectrogramBins = *dftLength / 2 + 1;
  auto type = dyn_cast<RankedTensorType>(node.resultType());
  if (!type || !type.hasStaticShape() || type.getRank() != 2 ||
      type.getDimSize(0) != spectrogramBins || type.getDimSize(1) != *melBins)
    return fail(node, rewriter,
                "the result is not [dft_length / 2 + 1, "
                "num_mel_bins]");
  auto toMel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double lowMel = toMel(*lower), highMel = toMel(*upper);
  const double melStep = (highMel - lowMel) / static_cast<double>(*melBins + 2);
  SmallVector<int64_t> points;
  for (int64_t i = 0; i < *melBins + 2; ++i) {
    const double mel = lowMel + static_cast<double>(i) * melStep;
    const double hz = 700 * std::expm1(mel / 2595 * std::log(10.0));
    const double bin = std::floor(static_cast<double>(*dftLength + 1) * hz /
                                  static_cast<double>(*sampleRate));
    if (!(bin >= 0 && bin < static_cast<double>(spectrogramBins)))
      return fail(node, rewriter,
                  "a mel band's edge lies outside the "
                  "spectrogram's bins");
    points.push_back(static_cast<int64_t>(bin));
  }
  SmallVector<double> values(spectrogramBins * *melBins, 0.0);
  auto at = [&](int64_t bin, int64_t mel) -> double & {
    return values[bin * *melBins + mel];
  };
  for (int64_t m = 0; m < *melBins; ++m) {
    const int64_t left = points[m], center = points[m + 1],
                  right = points[m + 2];
    if (center == left)
      at(center, m) = 1;
    for (int64_t j = left; center > left && j <= center; ++j)
      at(j, m) =
          static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; j < right; ++j)
      at(j, m) =
          static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  Type element = type.getElementType();
  Value constant;
  if (isa<FloatType>(element)) {
    constant = denseFloatConstant(rewriter, node.getLoc(), type.getShape(),
                                  element, values);
  } else {
    // Integer outputs truncate, as the reference's astype does.
    SmallVector<Attribute> attrs;
    for (double value : values)
      attrs.push_back(makeScalarAttr(element, std::trunc(value)));
    constant = rewriter.create<ConstantOp>(node.getLoc(),
                                           DenseElementsAttr::get(type, attrs));
  }
  return replaceNodeWithCompatible(node, constant, rewriter);
}

} // namespace

void populateSignalProcessingPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "DFT", 17, 19, {"axis", "inverse", "onesided"},
                 legalizeDFT);
  addONNXPattern(patterns, "DFT", 20, kMaxOpset, {"inverse", "onesided"},
                 legalizeDFT);
  addONNXPattern(patterns, "STFT", 17, kMaxOpset, {"onesided"}, legalizeSTFT);
  addONNXPattern(patterns, "MelWeightMatrix", 17, kMaxOpset,
                 {"output_datatype"}, legalizeMelWeightMatrix);
}

} // namespace heterps::hps
