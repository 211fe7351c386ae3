//===- DataDependent.cu - NonZero, Unique, NonMaxSuppression on the GPU ---===//
//
// Ops whose result extent depends on the data: the host must learn that
// extent anyway, and their inputs are small (masks, detections), so each
// downloads its inputs, runs the CPU kernels' algorithm
// (common/DataDependentAlgorithms.h) on host scratch the constructor sized,
// and uploads the results. Only the valid part of an output crosses the
// bus; the padding is cleared on the device.
//
// The host scratch is pageable: a download into it returns when the data is
// there, and an upload from it returns once CUDA has staged the data, so the
// next run() may overwrite it at once (pinned scratch would need a wait).
//
//===----------------------------------------------------------------------===//

#include "../common/DataDependentAlgorithms.h"
#include "GpuCommon.cuh"

namespace heterps::rt::gpu {
namespace {

/// How NonZero and Unique compare host copies of element type T (as
/// GpuCommon's dispatchAll names them): 16-bit floats by their bits, Bool
/// by its byte.
template <typename T> struct HostOps { using type = detail::NumberOps<T>; };
template <> struct HostOps<bool> { using type = detail::NumberOps<uint8_t>; };
template <> struct HostOps<__half> {
  using type = detail::Binary16Ops<uint16_t, detail::kHalfInfinityBits>;
};
template <> struct HostOps<__nv_bfloat16> {
  using type = detail::Binary16Ops<uint16_t, detail::kBFloat16InfinityBits>;
};

/// Queues a device -> host copy; the caller synchronises before reading.
void queueDownload(Context &ctx, void *host, const void *device, size_t bytes) {
  if (bytes)
    HPS_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                   streamOf(ctx)));
}

/// dst holds `rows` rows of rowBytes; uploads the first validBytes of each
/// from host (same layout) and zeroes the rest on the device.
void uploadValid(Context &ctx, void *dst, const void *host, size_t rows,
                 size_t validBytes, size_t rowBytes) {
  if (rows == 0 || rowBytes == 0)
    return;
  cudaStream_t stream = streamOf(ctx);
  char *out = static_cast<char *>(dst);
  const char *in = static_cast<const char *>(host);
  if (validBytes == rowBytes || rows == 1) {
    if (validBytes)
      HPS_CUDA_CHECK(cudaMemcpyAsync(out, in,
                                     validBytes + (rows - 1) * rowBytes,
                                     cudaMemcpyHostToDevice, stream));
    if (validBytes < rowBytes)
      HPS_CUDA_CHECK(
          cudaMemsetAsync(out + validBytes, 0, rowBytes - validBytes, stream));
    return;
  }
  // Pitched copies limit pitches; huge rows go one by one.
  constexpr size_t kMaxPitch = size_t(1) << 30;
  if (rowBytes > kMaxPitch) {
    for (size_t row = 0; row < rows; ++row)
      uploadValid(ctx, out + row * rowBytes, in + row * rowBytes, 1, validBytes,
                  rowBytes);
    return;
  }
  if (validBytes)
    HPS_CUDA_CHECK(cudaMemcpy2DAsync(out, rowBytes, in, rowBytes, validBytes,
                                     rows, cudaMemcpyHostToDevice, stream));
  HPS_CUDA_CHECK(cudaMemset2DAsync(out + validBytes, rowBytes, 0,
                                   rowBytes - validBytes, rows, stream));
}

} // namespace

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

struct NonZero::Impl {
  Context &ctx;
  detail::NonZeroPlan plan;
  detail::NonZeroFn fn = nullptr;
  std::vector<unsigned char> x;
  std::vector<int64_t> indices;
  int64_t count = 0;
};

NonZero::NonZero(Context &ctx, DType type, const Shape &x)
    : impl(new Impl{ctx, detail::NonZeroPlan("NonZero", x)}) {
  Impl &p = *impl;
  dispatchAll(type, "NonZero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    p.fn = &detail::runNonZero<typename HostOps<T>::type>;
  });
  p.x.resize(size_t(p.plan.numel()) * dtypeSize(type));
  p.indices.resize(size_t(p.plan.rank() * p.plan.numel()));
}
NonZero::~NonZero() = default;
void NonZero::run(const void *x, void *indices, void *count) {
  Impl &p = *impl;
  p.ctx.download(p.x.data(), x, p.x.size());
  p.count = p.fn(p.plan, p.x.data(), p.indices.data(), /*zeroPadding=*/false);
  const size_t rowBytes = size_t(p.plan.numel()) * sizeof(int64_t);
  uploadValid(p.ctx, indices, p.indices.data(), size_t(p.plan.rank()),
              size_t(p.count) * sizeof(int64_t), rowBytes);
  p.ctx.upload(count, &p.count, sizeof(int64_t));
}

//===----------------------------------------------------------------------===//
// Unique
//===----------------------------------------------------------------------===//

struct Unique::Impl {
  Context &ctx;
  detail::UniquePlan plan;
  detail::UniqueFn fn = nullptr;
  int64_t outer, extent, inner;
  size_t elementBytes;
  std::vector<unsigned char> x, y;
  std::vector<int64_t> firstIndices, inverse, counts;
  int64_t count = 0;
};

Unique::Unique(Context &ctx, DType type, int64_t outer, int64_t extent,
               int64_t inner, bool sorted)
    : impl(new Impl{ctx,
                    detail::UniquePlan("Unique", dtypeSize(type), outer, extent,
                                       inner, sorted),
                    nullptr, outer, extent, inner, dtypeSize(type)}) {
  Impl &p = *impl;
  dispatchAll(type, "Unique", [&](auto tag) {
    using T = typename decltype(tag)::type;
    p.fn = &detail::runUnique<typename HostOps<T>::type>;
  });
  const size_t bytes = size_t(outer * extent * inner) * p.elementBytes;
  p.x.resize(bytes);
  p.y.resize(bytes);
  p.firstIndices.resize(size_t(extent));
  p.inverse.resize(size_t(extent));
  p.counts.resize(size_t(extent));
}
Unique::~Unique() = default;
void Unique::run(const void *x, void *y, void *firstIndices, void *inverse,
                 void *counts, void *count) {
  Impl &p = *impl;
  p.ctx.download(p.x.data(), x, p.x.size());
  p.count = p.fn(p.plan, p.x.data(), p.y.data(), p.firstIndices.data(),
                 p.inverse.data(), p.counts.data(), /*zeroPadding=*/false);
  const size_t valid = size_t(p.count) * sizeof(int64_t),
               row = size_t(p.extent) * sizeof(int64_t);
  uploadValid(p.ctx, y, p.y.data(), size_t(p.outer),
              size_t(p.count * p.inner) * p.elementBytes,
              size_t(p.extent * p.inner) * p.elementBytes);
  uploadValid(p.ctx, firstIndices, p.firstIndices.data(), 1, valid, row);
  p.ctx.upload(inverse, p.inverse.data(), row);
  uploadValid(p.ctx, counts, p.counts.data(), 1, valid, row);
  p.ctx.upload(count, &p.count, sizeof(int64_t));
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

struct NonMaxSuppression::Impl {
  Context &ctx;
  detail::NmsPlan plan;
  int64_t capacity;
  std::vector<float> boxes, scores;
  std::vector<int64_t> selected;
  int64_t maxPerClass = 0, count = 0;
  float iouThreshold = 0, scoreThreshold = 0;
};

NonMaxSuppression::NonMaxSuppression(Context &ctx, int64_t batches,
                                     int64_t classes, int64_t boxes,
                                     bool centerPointBox, int64_t capacity)
    : impl(new Impl{ctx,
                    detail::NmsPlan("NonMaxSuppression", batches, classes,
                                    boxes, centerPointBox, capacity),
                    capacity}) {
  Impl &p = *impl;
  p.boxes.resize(size_t(p.plan.boxesSize()));
  p.scores.resize(size_t(p.plan.scoresSize()));
  p.selected.resize(size_t(capacity * 3));
}
NonMaxSuppression::~NonMaxSuppression() = default;
void NonMaxSuppression::run(const void *boxes, const void *scores,
                            const void *maxPerClass, const void *iouThreshold,
                            const void *scoreThreshold, void *selected,
                            void *count) {
  Impl &p = *impl;
  // Everything in flight at once, then one wait.
  queueDownload(p.ctx, p.boxes.data(), boxes, p.boxes.size() * sizeof(float));
  queueDownload(p.ctx, p.scores.data(), scores,
                p.scores.size() * sizeof(float));
  if (maxPerClass)
    queueDownload(p.ctx, &p.maxPerClass, maxPerClass, sizeof(int64_t));
  if (iouThreshold)
    queueDownload(p.ctx, &p.iouThreshold, iouThreshold, sizeof(float));
  if (scoreThreshold)
    queueDownload(p.ctx, &p.scoreThreshold, scoreThreshold, sizeof(float));
  p.ctx.synchronize();
  p.count = p.plan.run(p.boxes.data(), p.scores.data(),
                       maxPerClass ? &p.maxPerClass : nullptr,
                       iouThreshold ? &p.iouThreshold : nullptr,
                       scoreThreshold ? &p.scoreThreshold : nullptr,
                       p.selected.data(), /*zeroPadding=*/false);
  uploadValid(p.ctx, selected, p.selected.data(), 1,
              size_t(p.count) * 3 * sizeof(int64_t),
              size_t(p.capacity) * 3 * sizeof(int64_t));
  p.ctx.upload(count, &p.count, sizeof(int64_t));
}

} // namespace heterps::rt::gpu
