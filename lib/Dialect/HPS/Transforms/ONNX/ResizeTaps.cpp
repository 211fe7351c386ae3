//===- ResizeTaps.cpp - ONNX Resize as per-axis interpolation taps --------===//
//
// Follows the ONNX reference implementation (onnx/reference/ops/op_resize.py)
// term by term: the source coordinate of each output position, its floor and
// ratio (1, not 0, at an exact integer, so the left neighbour is preferred),
// 2 or 4 neighbours around it with edge replication, and exclude_outside's
// renormalization, and Resize-18's antialiasing filters. pytorch_half_pixel
// maps a 1-long output to 0 as the spec text and ONNX Runtime do.
//
//===----------------------------------------------------------------------===//

#include "ResizeTaps.h"

#include <algorithm>
#include <cmath>

namespace heterps::hps {

bool ResizeAxisTaps::anyExtrapolated() const {
  return std::find(extrapolated.begin(), extrapolated.end(), true) !=
         extrapolated.end();
}

bool ResizeAxisTaps::isSelection() const {
  return std::all_of(taps.begin(), taps.end(), [](const auto &position) {
    return position.size() == 1 && position.front().weight == 1.0;
  });
}

std::vector<int64_t> ResizeAxisTaps::selectedIndices() const {
  std::vector<int64_t> indices;
  for (const auto &position : taps)
    indices.push_back(position.front().index);
  return indices;
}

bool ResizeAxisTaps::isRepeat(int64_t &factor) const {
  if (!isSelection() || taps.empty())
    return false;
  std::vector<int64_t> indices = selectedIndices();
  int64_t outputExtent = static_cast<int64_t>(indices.size());
  if (outputExtent % inputExtent)
    return false;
  factor = outputExtent / inputExtent;
  for (int64_t o = 0; o < outputExtent; ++o)
    if (indices[o] != o / factor)
      return false;
  return true;
}

namespace {

/// The source coordinate of output position `o`, or nullopt where
/// tf_crop_and_resize extrapolates.
llvm::Expected<std::optional<double>>
sourceCoordinate(const ResizeAxis &axis, const std::string &transform,
                 int64_t o) {
  double x = static_cast<double>(o);
  double in = static_cast<double>(axis.inputExtent);
  // The reference's output width is scale * input, not the rounded extent.
  double outWidth = axis.scale * in;
  if (transform == "half_pixel")
    return (x + 0.5) / axis.scale - 0.5;
  if (transform == "half_pixel_symmetric") {
    // Resize-19: half_pixel, shifted so that the rounding of the output
    // extent is shared evenly by both ends.
    double adjustment = static_cast<double>(axis.outputExtent) / outWidth;
    double offset = in / 2 * (1 - adjustment);
    return offset + (x + 0.5) / axis.scale - 0.5;
  }
  if (transform == "pytorch_half_pixel")
    return axis.outputExtent > 1 ? (x + 0.5) / axis.scale - 0.5 : 0.0;
  if (transform == "align_corners")
    return outWidth == 1 ? 0.0 : x * (in - 1) / (outWidth - 1);
  if (transform == "asymmetric")
    return x / axis.scale;
  if (transform == "tf_half_pixel_for_nn")
    return (x + 0.5) / axis.scale;
  if (transform == "tf_crop_and_resize") {
    double span = axis.roiEnd - axis.roiStart;
    double source = outWidth == 1 ? span * (in - 1) / 2
                                  : x * span * (in - 1) / (outWidth - 1);
    source += axis.roiStart * (in - 1);
    if (source < 0 || source > in - 1)
      return std::optional<double>();
    return source;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown coordinate_transformation_mode '" +
                                     transform + "'");
}

/// Keys' cubic convolution kernel at the 4 neighbours of a point `ratio`
/// past the second one.
std::vector<double> cubicCoefficients(double ratio, double a) {
  auto near = [a](double d) { // |d| <= 1
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  };
  auto far = [a](double d) { // 1 < |d| < 2
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  };
  return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
}

/// Antialiased linear or cubic taps when shrinking by `scale` < 1: the
/// filter (triangle of radius 1, or Keys' cubic of radius 2) stretched by
/// 1 / scale, at the neighbours floor + start ... floor + 1 - start around
/// the source point, normalized to sum 1 (the reference's
/// _linear_coeffs_antialias and _cubic_coeffs_antialias).
std::vector<ResizeTap> antialiasedTaps(ResizeMode mode, int64_t floor,
                                       double ratio, double scale, double a) {
  double radius = mode == ResizeMode::Linear ? 1.0 : 2.0;
  auto filter = [&](double x) {
    x = std::abs(x);
    if (mode == ResizeMode::Linear)
      return std::max(0.0, 1 - x);
    if (x <= 1)
      return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
      return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  };
  int64_t start = static_cast<int64_t>(std::floor(-radius / scale)) + 1;
  std::vector<ResizeTap> taps;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    double weight = filter(scale * (static_cast<double>(i) - ratio));
    taps.push_back({floor + i, weight});
    sum += weight;
  }
  for (ResizeTap &tap : taps)
    tap.weight /= sum;
  return taps;
}

/// The index nearest_mode picks for a source coordinate with floor `floor`
/// and fractional part `ratio` in (0, 1).
llvm::Expected<int64_t> nearestIndex(const std::string &mode, int64_t floor,
                                     double ratio, double scale) {
  if (mode == "round_prefer_floor")
    return ratio <= 0.5 ? floor : floor + 1;
  if (mode == "round_prefer_ceil")
    return ratio < 0.5 ? floor : floor + 1;
  if (mode == "floor")
    return floor;
  if (mode == "ceil")
    return floor + 1;
  if (mode == "simple")
    return scale < 1 ? floor + 1 : floor;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown nearest_mode '" + mode + "'");
}

} // namespace

llvm::Expected<ResizeAxisTaps> computeResizeTaps(const ResizeAxis &axis,
                                                 const ResizeOptions &options) {
  if (axis.inputExtent < 1 || axis.outputExtent < 1 || !(axis.scale > 0))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "empty axis or non-positive scale");
  int64_t last = axis.inputExtent - 1;
  ResizeAxisTaps result;
  result.inputExtent = axis.inputExtent;
  result.taps.resize(axis.outputExtent);
  result.extrapolated.assign(axis.outputExtent, false);
  for (int64_t o = 0; o < axis.outputExtent; ++o) {
    auto source = sourceCoordinate(axis, options.transform, o);
    if (!source)
      return source.takeError();
    if (!*source) {
      result.extrapolated[o] = true;
      continue;
    }
    double x = **source;
    // At an exact integer k the reference takes floor k - 1 and ratio 1.
    double floorX = std::floor(x);
    bool integral = floorX == x;
    int64_t floor = static_cast<int64_t>(floorX) - (integral ? 1 : 0);
    double ratio = integral ? 1.0 : x - floorX;

    std::vector<ResizeTap> raw; // indices before edge replication
    if (options.antialias && axis.scale < 1 &&
        options.mode != ResizeMode::Nearest)
      raw = antialiasedTaps(options.mode, floor, ratio, axis.scale,
                            options.cubicCoeffA);
    else
      switch (options.mode) {
      case ResizeMode::Nearest: {
        int64_t index = floor + 1;
        if (!integral) {
          auto picked =
              nearestIndex(options.nearestMode, floor, ratio, axis.scale);
          if (!picked)
            return picked.takeError();
          index = *picked;
        }
        raw.push_back({index, 1.0});
        break;
      }
      case ResizeMode::Linear:
        raw = {{floor, 1 - ratio}, {floor + 1, ratio}};
        break;
      case ResizeMode::Cubic: {
        std::vector<double> c = cubicCoefficients(ratio, options.cubicCoeffA);
        for (int k = 0; k < 4; ++k)
          raw.push_back({floor - 1 + k, c[k]});
        break;
      }
      }
    if (options.excludeOutside && options.mode != ResizeMode::Nearest) {
      double sum = 0;
      for (ResizeTap &tap : raw) {
        if (tap.index < 0 || tap.index > last)
          tap.weight = 0;
        sum += tap.weight;
      }
      for (ResizeTap &tap : raw)
        tap.weight /= sum;
    }
    // Edge replication: clamp, then merge taps that land on one element.
    std::vector<ResizeTap> &taps = result.taps[o];
    for (ResizeTap tap : raw) {
      if (tap.weight == 0)
        continue;
      tap.index = std::clamp<int64_t>(tap.index, 0, last);
      auto same = std::find_if(taps.begin(), taps.end(), [&](const auto &t) {
        return t.index == tap.index;
      });
      if (same != taps.end())
        same->weight += tap.weight;
      else
        taps.push_back(tap);
    }
  }
  return result;
}

} // namespace heterps::hps
