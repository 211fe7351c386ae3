//===- ChannelsLast.h - Copies between NC[D]HW and N[D]HWC ------*- C++ -*-===//
//
// Layout::ChannelsLast holds any element type (u8 and s32 between quantized
// convolutions), which oneDNN's reorders do not all cover: these copies
// move elements by their size alone.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_CHANNELSLAST_H
#define HETERPS_RUNTIME_KERNELS_CPU_CHANNELSLAST_H

#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace heterps::rt::cpu {

namespace detail {

/// Each of `batch` row-major [rows, cols] matrices of `src` into its
/// transpose in `dst`, in square tiles so that both sides stay in cache.
template <typename T>
void transposeImages(const T *src, T *dst, int64_t batch, int64_t rows,
                     int64_t cols, bool parallel) {
  constexpr int64_t kTile = 32;
  const int64_t rowTiles = (rows + kTile - 1) / kTile;
  const int64_t colTiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batch * rowTiles * colTiles;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t image = t / (rowTiles * colTiles);
    const int64_t r0 = (t / colTiles) % rowTiles * kTile;
    const int64_t c0 = t % colTiles * kTile;
    const T *from = src + image * rows * cols;
    T *to = dst + image * rows * cols;
    const int64_t r1 = std::min(rows, r0 + kTile);
    const int64_t c1 = std::min(cols, c0 + kTile);
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = r0; r < r1; ++r)
        to[c * rows + r] = from[r * cols + c];
  }
}

} // namespace detail

/// Copies the NC[D]HW tensor of `shape` with elements of `elementBytes`
/// bytes from `from` to `to`, one of them Plain and the other ChannelsLast.
inline void copyChannelsLast(const void *src, void *dst, const Shape &shape,
                             size_t elementBytes, Layout from, Layout to,
                             bool parallel) {
  const int64_t batch = shape[0], channels = shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d)
    spatial *= shape[d];
  if (from == to || channels == 1 || spatial == 1) {
    std::memcpy(dst, src, size_t(batch * channels * spatial) * elementBytes);
    return;
  }
  // Plain images are [channels, spatial] matrices, channels-last ones the
  // transpose.
  const bool toChannelsLast = to == Layout::ChannelsLast;
  const int64_t rows = toChannelsLast ? channels : spatial;
  const int64_t cols = toChannelsLast ? spatial : channels;
  auto run = [&](auto element) {
    using T = decltype(element);
    detail::transposeImages(static_cast<const T *>(src), static_cast<T *>(dst),
                            batch, rows, cols, parallel);
  };
  switch (elementBytes) {
  case 1:
    return run(uint8_t{});
  case 2:
    return run(uint16_t{});
  case 4:
    return run(uint32_t{});
  case 8:
    return run(uint64_t{});
  default:
    throw Error("copyChannelsLast: no copy for elements of " +
                std::to_string(elementBytes) + " bytes");
  }
}

} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_KERNELS_CPU_CHANNELSLAST_H
