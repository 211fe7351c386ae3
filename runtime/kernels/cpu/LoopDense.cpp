//===- LoopDense.cpp - MatMul and Conv in the types oneDNN lacks ----------===//
//
// Both loops keep a row (matmul) or an output plane (conv) of accumulators
// and stream the other operand through it, so the innermost loop is a
// contiguous multiply-add the compiler vectorises. Work is split over rows
// or (image, output channel) pairs.
//
//===----------------------------------------------------------------------===//

#include "LoopDense.h"

#include "CpuContext.h"
#include "DTypeDispatch.h"

#include <algorithm>
#include <string>
#include <type_traits>

namespace heterps::rt::cpu {
namespace {

/// The accumulator of D's products: its float compute type, or for integers
/// an unsigned type of at least 32 bits, which wraps (signed overflow is
/// undefined in C++) and truncates to the storage width modulo 2^bits.
template <typename C, bool Float = std::is_floating_point_v<C>>
struct AccumulatorOf {
  using type = C;
};
template <typename C> struct AccumulatorOf<C, false> {
  using type =
      std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;
};
template <DType D>
using Accumulator = AccumulatorOf<typename DTypeTraits<D>::Compute>;

/// A stored value as accumulator A: integers sign- or zero-extended through
/// int64 first, so that the unsigned sums wrap as the signed ones would.
template <typename A, typename S> A widen(S stored) {
  auto value = load(stored);
  if constexpr (std::is_integral_v<decltype(value)>)
    return A(int64_t(value));
  else
    return A(value);
}

template <DType D>
void matmulLoops(const LoopMatMul &p, const void *aData, const void *bData,
                 void *yData) {
  using S = typename DTypeTraits<D>::Storage;
  using A = typename Accumulator<D>::type;
  const S *a = static_cast<const S *>(aData);
  const S *b = static_cast<const S *>(bData);
  S *y = static_cast<S *>(yData);
  const int64_t m = p.m, k = p.k, n = p.n;
  const int64_t rows = int64_t(p.batches.size()) * m;
#pragma omp parallel if (p.parallel)
  {
    std::vector<A> acc(n);
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const auto &offsets = p.batches[row / m];
      const S *aRow = a + offsets[0] + (row % m) * k;
      const S *bMatrix = b + offsets[1];
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t i = 0; i < k; ++i) {
        const A scale = widen<A>(aRow[i]);
        const S *bRow = bMatrix + i * n;
        for (int64_t j = 0; j < n; ++j)
          acc[j] += scale * widen<A>(bRow[j]);
      }
      S *yRow = y + row * n;
      for (int64_t j = 0; j < n; ++j)
        yRow[j] = store<S>(acc[j]);
    }
  }
}

/// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

template <DType D>
void convLoops(const LoopConv &p, const void *xData, const void *wData,
               const void *biasData, void *yData) {
  using S = typename DTypeTraits<D>::Storage;
  using A = typename Accumulator<D>::type;
  const S *x = static_cast<const S *>(xData);
  const S *w = static_cast<const S *>(wData);
  const S *bias = static_cast<const S *>(biasData);
  S *y = static_cast<S *>(yData);
  const auto &in = p.in, &out = p.out, &kernel = p.kernel;
  const int64_t inPlane = in[0] * in[1] * in[2];
  const int64_t outPlane = out[0] * out[1] * out[2];
  const int64_t taps = kernel[0] * kernel[1] * kernel[2];
  const int64_t groupIn = p.inChannels / p.group;
  const int64_t groupOut = p.outChannels / p.group;
  const int64_t planes = p.batch * p.outChannels;
#pragma omp parallel if (p.parallel)
  {
    std::vector<A> acc(outPlane);
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t image = plane / p.outChannels;
      const int64_t channel = plane % p.outChannels;
      const int64_t firstIn = channel / groupOut * groupIn;
      std::fill(acc.begin(), acc.end(),
                p.hasBias ? widen<A>(bias[channel]) : A(0));
      for (int64_t c = 0; c < groupIn; ++c) {
        const S *xPlane = x + (image * p.inChannels + firstIn + c) * inPlane;
        const S *filter = w + (channel * groupIn + c) * taps;
        for (int64_t tap = 0; tap < taps; ++tap) {
          const int64_t kz = tap / (kernel[1] * kernel[2]);
          const int64_t ky = tap / kernel[2] % kernel[1];
          const int64_t kx = tap % kernel[2];
          const A weight = widen<A>(filter[tap]);
          // Input coordinate of output o along an axis: o * stride - pad
          // + tap * dilation; the x range keeps it inside [0, in).
          const int64_t offX = kx * p.dilation[2] - p.pad[2];
          const int64_t xBegin =
              std::max<int64_t>(0, ceilDiv(-offX, p.stride[2]));
          const int64_t xEnd = std::min<int64_t>(
              out[2], floorDiv(in[2] - 1 - offX, p.stride[2]) + 1);
          for (int64_t oz = 0; oz < out[0]; ++oz) {
            const int64_t iz = oz * p.stride[0] - p.pad[0] + kz * p.dilation[0];
            if (iz < 0 || iz >= in[0])
              continue;
            for (int64_t oy = 0; oy < out[1]; ++oy) {
              const int64_t iy =
                  oy * p.stride[1] - p.pad[1] + ky * p.dilation[1];
              if (iy < 0 || iy >= in[1])
                continue;
              const S *xRow = xPlane + (iz * in[1] + iy) * in[2] + offX;
              A *accRow = acc.data() + (oz * out[1] + oy) * out[2];
              for (int64_t ox = xBegin; ox < xEnd; ++ox)
                accRow[ox] += weight * widen<A>(xRow[ox * p.stride[2]]);
            }
          }
        }
      }
      S *yPlane = y + plane * outPlane;
      for (int64_t i = 0; i < outPlane; ++i)
        yPlane[i] = store<S>(acc[i]);
    }
  }
}

/// The instance of `loops` for `type`; Bool has no arithmetic.
template <typename Fn, typename Pick>
Fn pickLoops(const char *kernel, DType type, Pick &&pick) {
  if (type == DType::Bool)
    throw Error(std::string(kernel) + ": element type " + dtypeName(type) +
                " is not supported");
  return dispatchDType(type, [&](auto tag) -> Fn { return pick(tag); });
}

} // namespace

LoopMatMul::LoopMatMul(DType type, const Shape &a, const Shape &b,
                       const Shape &y, bool parallel)
    : parallel(parallel) {
  size_t rank = y.size();
  m = y[rank - 2];
  n = y[rank - 1];
  k = a[rank - 1];
  // Row-major strides of a's and b's batch dims, 0 where they broadcast.
  int64_t aStride = m * k, bStride = k * n;
  Shape aStrides(rank - 2), bStrides(rank - 2);
  for (size_t d = rank - 2; d-- > 0;) {
    aStrides[d] = a[d] == 1 ? 0 : aStride;
    bStrides[d] = b[d] == 1 ? 0 : bStride;
    aStride *= a[d];
    bStride *= b[d];
  }
  int64_t count = numElements(Shape(y.begin(), y.end() - 2));
  batches.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    std::array<int64_t, 2> offset{0, 0};
    int64_t rest = i;
    for (size_t d = rank - 2; d-- > 0;) {
      int64_t coordinate = rest % y[d];
      rest /= y[d];
      offset[0] += coordinate * aStrides[d];
      offset[1] += coordinate * bStrides[d];
    }
    batches.push_back(offset);
  }
  fn = pickLoops<Fn>("MatMul", type, [](auto tag) -> Fn {
    return &matmulLoops<decltype(tag)::value>;
  });
}

void LoopMatMul::run(const void *a, const void *b, void *y) const {
  fn(*this, a, b, y);
}

LoopConv::LoopConv(DType type, const Shape &x, const Shape &w, bool hasBias,
                   const Shape &y, const Shape &strides, const Shape &dilations,
                   const Shape &padBegin, int64_t group, bool parallel)
    : batch(x[0]), inChannels(x[1]), outChannels(w[0]), group(group),
      hasBias(hasBias), parallel(parallel) {
  // Spatial axes right-aligned in the three slots: unit leading axes.
  size_t spatial = x.size() - 2, first = 3 - spatial;
  for (size_t i = 0; i < spatial; ++i) {
    in[first + i] = x[2 + i];
    out[first + i] = y[2 + i];
    kernel[first + i] = w[2 + i];
    stride[first + i] = strides[i];
    dilation[first + i] = dilations[i];
    pad[first + i] = padBegin[i];
  }
  fn = pickLoops<Fn>("Conv", type, [](auto tag) -> Fn {
    return &convLoops<decltype(tag)::value>;
  });
}

void LoopConv::run(const void *x, const void *w, const void *bias,
                   void *y) const {
  fn(*this, x, w, bias, y);
}

} // namespace heterps::rt::cpu
