//===- ResizeTaps.h - ONNX Resize as per-axis interpolation taps -*- C++
//-*-===//
//
// ONNX Resize (and Upsample) is separable: every output element along a
// resized axis is a weighted sum of a few input elements of that axis. These
// functions compute those taps for one axis exactly as the ONNX reference
// implementation defines them, with no MLIR types, so the legalization
// pattern only has to turn them into gathers or matmuls.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_RESIZETAPS_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_RESIZETAPS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace heterps::hps {

enum class ResizeMode { Nearest, Linear, Cubic };

/// The node's interpolation settings (Resize-11+ attributes; older opsets
/// map onto them, see the pattern).
struct ResizeOptions {
  ResizeMode mode = ResizeMode::Nearest;
  /// half_pixel, pytorch_half_pixel, align_corners, asymmetric,
  /// tf_half_pixel_for_nn, tf_crop_and_resize or (Resize-19)
  /// half_pixel_symmetric.
  std::string transform = "half_pixel";
  /// round_prefer_floor, round_prefer_ceil, floor, ceil; or "simple", the
  /// rule of Upsample and Resize-10 as ONNX Runtime applies it (floor when
  /// enlarging, ceil when shrinking).
  std::string nearestMode = "round_prefer_floor";
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  /// Resize-18: when shrinking, linear and cubic stretch their filter by
  /// 1 / scale so that every input element contributes.
  bool antialias = false;
};

/// One axis: its extents and the scale the coordinate transform divides by
/// (the scales input, or output / input extent when sizes were given).
struct ResizeAxis {
  int64_t inputExtent = 1;
  int64_t outputExtent = 1;
  double scale = 1;
  /// The axis's [start, end] of roi, normalized (tf_crop_and_resize only).
  double roiStart = 0, roiEnd = 1;
};

struct ResizeTap {
  int64_t index; // in [0, inputExtent)
  double weight;
};

struct ResizeAxisTaps {
  int64_t inputExtent = 1;
  /// taps[o]: what output position o sums; empty where extrapolated.
  std::vector<std::vector<ResizeTap>> taps;
  /// Output positions whose source lies outside the roi's crop
  /// (tf_crop_and_resize): they take the extrapolation value.
  std::vector<bool> extrapolated;

  bool anyExtrapolated() const;
  /// Every output position copies one input element (weight 1).
  bool isSelection() const;
  /// The copied index of every position (only when isSelection()).
  std::vector<int64_t> selectedIndices() const;
  /// output o reads input o / factor for the whole factor
  /// outputExtent / inputExtent (1: the axis is unchanged).
  bool isRepeat(int64_t &factor) const;
};

/// The taps of one axis; an error names an unknown mode or transform.
llvm::Expected<ResizeAxisTaps> computeResizeTaps(const ResizeAxis &axis,
                                                 const ResizeOptions &options);

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_RESIZETAPS_H
