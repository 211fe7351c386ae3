//===- WinogradConv.h - 3x3 convolutions, Winograd --------------*- C++ -*-===//
//
// A 3x3 stride-1 convolution gets each 2x2 block of outputs from a 4x4
// patch of input with 16 multiplies per pair of channels instead of 36, or
// each 4x4 block from a 6x6 patch with 36 instead of 144 (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", CVPR 2016): patch
// and filter are transformed (V = B^T d B, U = G g G^T), multiplied
// position by position as small products over the input channels, and the
// sums transformed back (Y = A^T M A). On the two AVX2
// cores oneDNN 2.6's direct convolutions and onnxruntime's run ResNet-20's
// 3x3 layers near the same 70-130 GFLOP/s, so fewer multiplies is the way
// past both (docs/benchmarks/conv-layers.md).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_WINOGRADCONV_H
#define HETERPS_RUNTIME_KERNELS_CPU_WINOGRADCONV_H

#include "heterps/Runtime/Types.h"

#include <memory>

namespace heterps::rt::cpu {

/// A 2-D convolution as the Winograd kernel sees it: x [N, C, H, W] and
/// y [N, K, OH, OW], both channel-blocked with `block` channels per block
/// (the native layout: 8, or 16 with AVX-512). The 3x3 filter slides with
/// stride 1 from (-padTop, -padLeft); reads outside x are zeros.
struct WinogradGeometry {
  int64_t batch = 0, inChannels = 0, height = 0, width = 0;
  int64_t outChannels = 0, outHeight = 0, outWidth = 0;
  int64_t padTop = 0, padLeft = 0;
  int64_t block = 8;
  /// The filter passed to run() is that of the forward convolution from
  /// this one's y to its x ([C, K, 3, 3]): run its input adjoint, the
  /// convolution by the flipped, transposed filter (ConvGradInput).
  bool adjoint = false;
  /// Output tile: 2 (F(2x2, 3x3)), 4 (F(4x4, 3x3)), or 0 for the default:
  /// 4 while its filter stays small (chooseTile in the .cpp says why).
  int64_t outputTile = 0;
};

class WinogradConv {
public:
  /// Whether Conv should run x * w this way: 3x3, stride 1, no dilation, one
  /// group, channels in whole blocks of 16, at least 32 in and out or else x
  /// and y within 2 MiB together (16-channel transforms move more bytes
  /// per multiply than memory keeps up with), and transformed filters
  /// (16 x C x K floats) within 4 MiB, read once per six tiles. Off when the
  /// environment sets HETERPS_CPU_WINOGRAD=0 (=2 keeps F(2x2, 3x3) only).
  static bool suits(const Shape &x, const Shape &w, const Shape &strides,
                    const Shape &dilations, int64_t group);

  /// The geometry of a convolution from `in` [N, C, H, W] to `out`
  /// [N, K, OH, OW], both in the native layout of this CPU, whose window
  /// starts at (-padTop, -padLeft).
  static WinogradGeometry nativeGeometry(const Shape &in, const Shape &out,
                                         int64_t padTop, int64_t padLeft);

  /// Whether ConvGradInput should compute dx this way for the convolution
  /// x * w = y: as suits() for dy * w^T (y's channels in, x's out), with
  /// begin pads of at most 2 (the adjoint's are 2 minus them).
  static bool suitsInputAdjoint(const Shape &x, const Shape &w, const Shape &y,
                                const Shape &strides, const Shape &dilations,
                                const Shape &padBegin, int64_t group);

  /// `constantWeights`: w is the same at the same address in every run, so
  /// it is transformed once.
  WinogradConv(const WinogradGeometry &geometry, bool hasBias, bool residual,
               Activation act, bool constantWeights);
  ~WinogradConv();
  WinogradConv(WinogradConv &&) noexcept;
  WinogradConv &operator=(WinogradConv &&) noexcept;

  /// y = act(x * w + bias + residual); w is ONNX's [K, C, 3, 3], bias [K]
  /// (when declared), residual in y's shape and layout (when declared).
  /// `parallel`: split the tiles over the calling thread's OpenMP team.
  void run(const float *x, const float *w, const float *bias,
           const float *residual, float *y, bool parallel);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_KERNELS_CPU_WINOGRADCONV_H
