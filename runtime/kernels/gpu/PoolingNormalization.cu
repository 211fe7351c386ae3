//===- PoolingNormalization.cu - Pooling, normalisation, softmax, reduce --===//
//
// Own CUDA kernels: one thread per output for windowed pooling and small
// reductions, one block per row when a row is long enough to share.
// Arithmetic is in float for float and half types, double for f64.
//
//===----------------------------------------------------------------------===//

#include "GpuCommon.cuh"

namespace heterps::rt::gpu {
namespace {

/// NaN-propagating max / min (numpy semantics); plain for integers.
template <typename A> __device__ inline A maxOf(A a, A b) {
  return (b > a || b != b) ? b : a;
}
template <typename A> __device__ inline A minOf(A a, A b) {
  return (b < a || b != b) ? b : a;
}

/// Rows of at least this many elements get a block each.
constexpr int64_t kBlockRow = 64;

unsigned blocksFor(int64_t rows) {
  return unsigned(std::clamp<int64_t>(rows, 1, 65535));
}

} // namespace

//===----------------------------------------------------------------------===//
// Pool
//===----------------------------------------------------------------------===//

namespace {

/// Spatial geometry padded to 3 dims with unit ones in front.
struct PoolGeometry {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], padBegin[3];
  /// Taps at or past in + padEnd fall outside the clipped window.
  int64_t limit[3];
  PoolKind kind;
};

template <typename T, typename A>
__global__ void poolKernel(PoolGeometry g, const T *x, T *y, int64_t n,
                           A lowest) {
  HPS_GRID_STRIDE(i, n) {
    int64_t rest = i, o[3];
    for (int d = 2; d >= 0; --d) {
      o[d] = rest % g.out[d];
      rest /= g.out[d];
    }
    const T *plane = x + rest * g.in[0] * g.in[1] * g.in[2];
    A best = lowest, sum = A(0);
    int64_t taps = 0, inside = 0;
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      int64_t c0 = o[0] * g.stride[0] - g.padBegin[0] + k0 * g.dilation[0];
      if (c0 >= g.limit[0])
        break;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        int64_t c1 = o[1] * g.stride[1] - g.padBegin[1] + k1 * g.dilation[1];
        if (c1 >= g.limit[1])
          break;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          int64_t c2 = o[2] * g.stride[2] - g.padBegin[2] + k2 * g.dilation[2];
          if (c2 >= g.limit[2])
            break;
          ++taps;
          if (c0 < 0 || c0 >= g.in[0] || c1 < 0 || c1 >= g.in[1] || c2 < 0 ||
              c2 >= g.in[2])
            continue;
          ++inside;
          A v = toAcc(plane[(c0 * g.in[1] + c1) * g.in[2] + c2]);
          best = maxOf(best, v);
          sum += v;
        }
      }
    }
    A result;
    if (g.kind == PoolKind::Max)
      result = best;
    else if (g.kind == PoolKind::AvgExcludePad)
      result = inside ? sum / A(inside) : A(0);
    else
      result = taps ? sum / A(taps) : A(0);
    y[i] = fromAcc<T>(result);
  }
}

} // namespace

struct Pool::Impl {
  Context &ctx;
  DType type;
  PoolGeometry geometry;
  int64_t total;
};

Pool::Pool(Context &ctx, DType type, PoolKind kind, const Shape &x,
           const Shape &y, const Shape &kernel, const Shape &strides,
           const Shape &dilations, const Shape &padBegin, const Shape &padEnd)
    : impl(new Impl{ctx, type, {}, numElements(y)}) {
  if (kind == PoolKind::Max) {
    if (type == DType::Bool)
      throwUnsupportedType("Pool", type);
    dispatchAll(type, "Pool", [](auto) {});
  } else {
    dispatchFloat(type, "Pool", [](auto) {});
  }
  size_t rank = x.size() < 3 ? 0 : x.size() - 2;
  if (rank < 1 || rank > 3)
    throw Error("Pool: input " + shapeString(x) +
                " must have 1 to 3 spatial dims");
  if (y.size() != x.size() || y[0] != x[0] || y[1] != x[1] ||
      kernel.size() != rank || strides.size() != rank ||
      dilations.size() != rank || padBegin.size() != rank ||
      padEnd.size() != rank)
    throw Error("Pool: parameter ranks disagree with input " + shapeString(x));
  PoolGeometry &g = impl->geometry;
  g.kind = kind;
  for (int d = 0; d < 3; ++d) {
    g.in[d] = g.out[d] = g.kernel[d] = g.stride[d] = g.dilation[d] = 1;
    g.padBegin[d] = 0;
    g.limit[d] = 1;
  }
  for (size_t d = 0; d < rank; ++d) {
    size_t slot = 3 - rank + d;
    g.in[slot] = x[2 + d];
    g.out[slot] = y[2 + d];
    g.kernel[slot] = kernel[d];
    g.stride[slot] = strides[d];
    g.dilation[slot] = dilations[d];
    g.padBegin[slot] = padBegin[d];
    g.limit[slot] = x[2 + d] + padEnd[d];
    if (kernel[d] < 1 || strides[d] < 1 || dilations[d] < 1)
      throw Error("Pool: kernel, strides and dilations must be positive");
  }
}

Pool::~Pool() = default;

void Pool::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.total == 0)
    return;
  dispatchAll(s.type, "Pool", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using A = Acc<T>;
      poolKernel<T, A><<<gridFor(s.total), kThreads, 0, streamOf(s.ctx)>>>(
          s.geometry, static_cast<const T *>(x), static_cast<T *>(y), s.total,
          lowestValue<A>());
      checkLaunch("Pool");
    }
  });
}

//===----------------------------------------------------------------------===//
// GlobalPool
//===----------------------------------------------------------------------===//

namespace {

template <typename T, typename A>
__global__ void globalPoolKernel(const T *x, T *y, int64_t rows, int64_t cols,
                                 bool max, A lowest) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *in = x + row * cols;
    A acc = max ? lowest : A(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      A v = toAcc(in[j]);
      acc = max ? maxOf(acc, v) : acc + v;
    }
    if (max)
      acc = blockReduce(acc, [](A a, A b) { return maxOf(a, b); });
    else
      acc = blockReduce(acc, SumOp{});
    if (threadIdx.x == 0)
      y[row] = fromAcc<T>(max ? acc : (cols ? acc / A(cols) : A(0)));
  }
}

} // namespace

struct GlobalPool::Impl {
  Context &ctx;
  DType type;
  bool max;
  int64_t rows, cols;
};

GlobalPool::GlobalPool(Context &ctx, DType type, bool max, const Shape &x)
    : impl(new Impl{ctx, type, max, 0, 0}) {
  dispatchFloat(type, "GlobalPool", [](auto) {});
  if (x.size() < 2)
    throw Error("GlobalPool: input " + shapeString(x) + " has no channel dim");
  impl->rows = x[0] * x[1];
  impl->cols = numElements(Shape(x.begin() + 2, x.end()));
}

GlobalPool::~GlobalPool() = default;

void GlobalPool::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.rows == 0)
    return;
  dispatchFloat(s.type, "GlobalPool", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    globalPoolKernel<T, A><<<blocksFor(s.rows), kThreads, 0, streamOf(s.ctx)>>>(
        static_cast<const T *>(x), static_cast<T *>(y), s.rows, s.cols, s.max,
        lowestValue<A>());
    checkLaunch("GlobalPool");
  });
}

//===----------------------------------------------------------------------===//
// BatchNorm
//===----------------------------------------------------------------------===//

namespace {

template <typename T, typename A>
__global__ void batchNormKernel(const T *x, const T *scale, const T *bias,
                                const T *mean, const T *variance, T *y,
                                int64_t channels, int64_t spatial, A epsilon,
                                int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t c = (i / spatial) % channels;
    A inv = A(1) / dSqrt(toAcc(variance[c]) + epsilon);
    A v =
        (toAcc(x[i]) - toAcc(mean[c])) * inv * toAcc(scale[c]) + toAcc(bias[c]);
    y[i] = fromAcc<T>(v);
  }
}

} // namespace

struct BatchNorm::Impl {
  Context &ctx;
  DType type;
  float epsilon;
  int64_t channels, spatial, total;
};

BatchNorm::BatchNorm(Context &ctx, DType type, const Shape &x, float epsilon)
    : impl(new Impl{ctx, type, epsilon, 0, 0, numElements(x)}) {
  dispatchFloat(type, "BatchNorm", [](auto) {});
  if (x.size() < 2)
    throw Error("BatchNorm: input " + shapeString(x) + " has no channel dim");
  impl->channels = x[1];
  impl->spatial = numElements(Shape(x.begin() + 2, x.end()));
}

BatchNorm::~BatchNorm() = default;

void BatchNorm::run(const void *x, const void *scale, const void *bias,
                    const void *mean, const void *variance, void *y) {
  Impl &s = *impl;
  if (s.total == 0)
    return;
  dispatchFloat(s.type, "BatchNorm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    batchNormKernel<T, A><<<gridFor(s.total), kThreads, 0, streamOf(s.ctx)>>>(
        static_cast<const T *>(x), static_cast<const T *>(scale),
        static_cast<const T *>(bias), static_cast<const T *>(mean),
        static_cast<const T *>(variance), static_cast<T *>(y), s.channels,
        s.spatial, A(s.epsilon), s.total);
    checkLaunch("BatchNorm");
  });
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

namespace {

/// One block per row; scale / bias offsets of column j come from `map`
/// unless they are laid out like the row (`direct`).
template <typename T, typename A>
__global__ void layerNormKernel(const T *x, const T *scale, const T *bias, T *y,
                                int64_t rows, int64_t cols, A epsilon,
                                StridedMap<1> map, bool direct) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *in = x + row * cols;
    T *out = y + row * cols;
    A sum = A(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      sum += toAcc(in[j]);
    A mean = blockReduce(sum, SumOp{}) / A(cols);
    // Two passes: the centred sum of squares does not cancel.
    A squares = A(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      A d = toAcc(in[j]) - mean;
      squares += d * d;
    }
    A inv = A(1) / dSqrt(blockReduce(squares, SumOp{}) / A(cols) + epsilon);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      int64_t offset[1] = {j};
      if (!direct)
        map.offsets(j, offset);
      A v = (toAcc(in[j]) - mean) * inv * toAcc(scale[offset[0]]);
      if (bias)
        v += toAcc(bias[offset[0]]);
      out[j] = fromAcc<T>(v);
    }
  }
}

} // namespace

struct LayerNorm::Impl {
  Context &ctx;
  DType type;
  float epsilon;
  bool hasBias;
  int64_t rows = 0, cols = 0;
  StridedMap<1> map;
  bool direct = true;
};

LayerNorm::LayerNorm(Context &ctx, DType type, const Shape &x, int64_t axis,
                     float epsilon, const Shape &scaleShape, bool hasBias)
    : impl(new Impl{ctx, type, epsilon, hasBias}) {
  dispatchFloat(type, "LayerNorm", [](auto) {});
  if (axis < 0 || axis > int64_t(x.size()))
    throw Error("LayerNorm: axis " + std::to_string(axis) +
                " out of range for " + shapeString(x));
  Shape normalised(x.begin() + axis, x.end());
  impl->rows = numElements(Shape(x.begin(), x.begin() + axis));
  impl->cols = numElements(normalised);
  impl->map =
      makeMap<1>("LayerNorm", normalised,
                 {broadcastStrides("LayerNorm", scaleShape, normalised)});
  impl->direct = impl->map.rank == 0 ||
                 (impl->map.rank == 1 && impl->map.strides[0][0] == 1);
}

LayerNorm::~LayerNorm() = default;

void LayerNorm::run(const void *x, const void *scale, const void *bias,
                    void *y) {
  Impl &s = *impl;
  if (s.rows == 0 || s.cols == 0)
    return;
  dispatchFloat(s.type, "LayerNorm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    layerNormKernel<T, A><<<blocksFor(s.rows), kThreads, 0, streamOf(s.ctx)>>>(
        static_cast<const T *>(x), static_cast<const T *>(scale),
        s.hasBias ? static_cast<const T *>(bias) : nullptr, static_cast<T *>(y),
        s.rows, s.cols, A(s.epsilon), s.map, s.direct);
    checkLaunch("LayerNorm");
  });
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

namespace {

/// Long contiguous rows (inner == 1): one block per row.
template <typename T, typename A>
__global__ void softmaxRowKernel(const T *x, T *y, int64_t rows, int64_t n,
                                 bool log, A lowest) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *in = x + row * n;
    T *out = y + row * n;
    A best = lowest;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      best = maxOf(best, toAcc(in[j]));
    best = blockReduce(best, [](A a, A b) { return maxOf(a, b); });
    A sum = A(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += dExp(toAcc(in[j]) - best);
    sum = blockReduce(sum, SumOp{});
    A logSum = dLog(sum), inv = A(1) / sum;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      A shifted = toAcc(in[j]) - best;
      out[j] = fromAcc<T>(log ? shifted - logSum : dExp(shifted) * inv);
    }
  }
}

/// Any layout: one thread per (outer, inner) pair walks the axis; threads
/// next to each other read neighbouring inner elements.
template <typename T, typename A>
__global__ void softmaxStridedKernel(const T *x, T *y, int64_t outer, int64_t n,
                                     int64_t inner, bool log, A lowest) {
  HPS_GRID_STRIDE(i, outer * inner) {
    int64_t base = (i / inner) * n * inner + i % inner;
    A best = lowest;
    for (int64_t j = 0; j < n; ++j)
      best = maxOf(best, toAcc(x[base + j * inner]));
    A sum = A(0);
    for (int64_t j = 0; j < n; ++j)
      sum += dExp(toAcc(x[base + j * inner]) - best);
    A logSum = dLog(sum), inv = A(1) / sum;
    for (int64_t j = 0; j < n; ++j) {
      A shifted = toAcc(x[base + j * inner]) - best;
      y[base + j * inner] =
          fromAcc<T>(log ? shifted - logSum : dExp(shifted) * inv);
    }
  }
}

} // namespace

struct Softmax::Impl {
  Context &ctx;
  DType type;
  bool log;
  int64_t outer = 0, n = 0, inner = 0;
};

Softmax::Softmax(Context &ctx, DType type, const Shape &x, int64_t axis,
                 bool log)
    : impl(new Impl{ctx, type, log}) {
  dispatchFloat(type, "Softmax", [](auto) {});
  if (axis < 0 || axis >= int64_t(x.size()))
    throw Error("Softmax: axis " + std::to_string(axis) + " out of range for " +
                shapeString(x));
  impl->outer = numElements(Shape(x.begin(), x.begin() + axis));
  impl->n = x[axis];
  impl->inner = numElements(Shape(x.begin() + axis + 1, x.end()));
}

Softmax::~Softmax() = default;

void Softmax::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.outer * s.n * s.inner == 0)
    return;
  dispatchFloat(s.type, "Softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    const T *in = static_cast<const T *>(x);
    T *out = static_cast<T *>(y);
    cudaStream_t stream = streamOf(s.ctx);
    if (s.inner == 1 && s.n >= kBlockRow)
      softmaxRowKernel<T, A><<<blocksFor(s.outer), kThreads, 0, stream>>>(
          in, out, s.outer, s.n, s.log, lowestValue<A>());
    else
      softmaxStridedKernel<T, A>
          <<<gridFor(s.outer * s.inner), kThreads, 0, stream>>>(
              in, out, s.outer, s.n, s.inner, s.log, lowestValue<A>());
    checkLaunch("Softmax");
  });
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

namespace {

/// Integers accumulate in 64 bits of their signedness, floats as Acc.
template <typename T> struct ReduceAccOf {
  using type = std::conditional_t<
      kIsFloat<T>, Acc<T>,
      std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
};
template <typename T> using ReduceAcc = typename ReduceAccOf<T>::type;

template <typename A> struct ReduceParams {
  ReduceKind kind;
  /// Output index -> offset of its first input; reduced index -> offset
  /// from there.
  StridedMap<1> kept, reduced;
  int64_t count;
  A lowest, highest;
};

template <typename A>
__device__ inline A reduceIdentity(const ReduceParams<A> &p, ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Max:
    return p.lowest;
  case ReduceKind::Min:
    return p.highest;
  case ReduceKind::Prod:
    return A(1);
  default:
    return A(0);
  }
}

template <typename A>
__device__ inline A reduceCombine(ReduceKind kind, A a, A b) {
  switch (kind) {
  case ReduceKind::Max:
    return maxOf(a, b);
  case ReduceKind::Min:
    return minOf(a, b);
  case ReduceKind::Prod:
    return a * b;
  default:
    return a + b;
  }
}

/// Accumulates reduced elements begin, begin + step, ... of the output whose
/// first input is at `base`. `kind` is Max for LogSumExp's first pass and
/// LogSumExp for its second, which sums exp(v - shift).
template <typename T, typename A>
__device__ A reducePartial(const ReduceParams<A> &p, ReduceKind kind,
                           const T *x, int64_t base, int64_t begin,
                           int64_t step, A shift) {
  A acc = reduceIdentity(p, kind);
  for (int64_t r = begin; r < p.count; r += step) {
    int64_t offset[1];
    p.reduced.offsets(r, offset);
    A v = A(toAcc(x[base + offset[0]]));
    switch (kind) {
    case ReduceKind::L1:
      if constexpr (std::is_signed_v<A>)
        v = v < A(0) ? -v : v;
      acc += v;
      break;
    case ReduceKind::L2:
    case ReduceKind::SumSquare:
      acc += v * v;
      break;
    case ReduceKind::LogSumExp:
      if constexpr (std::is_floating_point_v<A>)
        acc += dExp(v - shift);
      break;
    default:
      acc = reduceCombine(kind, acc, v);
    }
  }
  return acc;
}

template <typename A>
__device__ A reduceFinish(const ReduceParams<A> &p, A acc, A shift) {
  if (p.kind == ReduceKind::Mean) {
    // Floats: the mean of nothing is 0 / 0 = NaN; integers have no NaN.
    if constexpr (std::is_floating_point_v<A>)
      return acc / A(p.count);
    else
      return p.count ? acc / A(p.count) : A(0);
  }
  if constexpr (std::is_floating_point_v<A>) {
    switch (p.kind) {
    case ReduceKind::L2:
      return dSqrt(acc);
    case ReduceKind::LogSum:
      return dLog(acc);
    case ReduceKind::LogSumExp:
      // An infinite or NaN maximum is the answer (also log of an empty sum).
      return isfinite(shift) ? shift + dLog(acc) : shift;
    default:
      break;
    }
  }
  return acc;
}

/// Many outputs: one thread each.
template <typename T, typename A>
__global__ void reduceThreadKernel(ReduceParams<A> p, const T *x, T *y,
                                   int64_t outputs) {
  HPS_GRID_STRIDE(i, outputs) {
    int64_t base[1];
    p.kept.offsets(i, base);
    A shift = A(0);
    if (p.kind == ReduceKind::LogSumExp)
      shift = reducePartial(p, ReduceKind::Max, x, base[0], 0, 1, shift);
    A acc = reducePartial(p, p.kind, x, base[0], 0, 1, shift);
    y[i] = fromAcc<T>(reduceFinish(p, acc, shift));
  }
}

/// Few long outputs: one block each.
template <typename T, typename A>
__global__ void reduceBlockKernel(ReduceParams<A> p, const T *x, T *y,
                                  int64_t outputs) {
  for (int64_t i = blockIdx.x; i < outputs; i += gridDim.x) {
    int64_t base[1];
    p.kept.offsets(i, base);
    A shift = A(0);
    if (p.kind == ReduceKind::LogSumExp) {
      shift = reducePartial(p, ReduceKind::Max, x, base[0], threadIdx.x,
                            blockDim.x, shift);
      shift = blockReduce(shift, [](A a, A b) { return maxOf(a, b); });
    }
    A acc =
        reducePartial(p, p.kind, x, base[0], threadIdx.x, blockDim.x, shift);
    ReduceKind combine = p.kind == ReduceKind::Max ||
                                 p.kind == ReduceKind::Min ||
                                 p.kind == ReduceKind::Prod
                             ? p.kind
                             : ReduceKind::Sum;
    acc = blockReduce(
        acc, [combine](A a, A b) { return reduceCombine(combine, a, b); });
    if (threadIdx.x == 0)
      y[i] = fromAcc<T>(reduceFinish(p, acc, shift));
  }
}

} // namespace

struct Reduce::Impl {
  Context &ctx;
  DType type;
  ReduceKind kind;
  int64_t outputs = 0, count = 0;
  StridedMap<1> kept, reduced;
};

Reduce::Reduce(Context &ctx, DType type, ReduceKind kind, const Shape &x,
               const std::vector<int64_t> &axes, const Shape &y)
    : impl(new Impl{ctx, type, kind}) {
  const char *kernel = "Reduce";
  if (type == DType::Bool)
    throwUnsupportedType(kernel, type);
  dispatchAll(type, kernel, [](auto) {});
  if (!isFloat(type) && (kind == ReduceKind::L2 || kind == ReduceKind::LogSum ||
                         kind == ReduceKind::LogSumExp))
    throw Error(std::string("Reduce: ") + reduceKindName(kind) +
                " needs a float type, not " + dtypeName(type));
  Shape strides = denseStrides(x);
  Shape keptDims, keptStrides, reducedDims, reducedStrides;
  size_t next = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    if (next < axes.size() && axes[next] == int64_t(d)) {
      reducedDims.push_back(x[d]);
      reducedStrides.push_back(strides[d]);
      ++next;
    } else {
      keptDims.push_back(x[d]);
      keptStrides.push_back(strides[d]);
    }
  }
  if (next != axes.size())
    throw Error("Reduce: axes must be sorted, distinct and within rank " +
                std::to_string(x.size()));
  impl->outputs = numElements(keptDims);
  impl->count = numElements(reducedDims);
  if (numElements(y) != impl->outputs)
    throw Error(shapeMismatch(kernel, "result", y, keptDims));
  impl->kept = makeMap<1>(kernel, keptDims, {keptStrides});
  impl->reduced = makeMap<1>(kernel, reducedDims, {reducedStrides});
}

Reduce::~Reduce() = default;

void Reduce::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.outputs == 0)
    return;
  dispatchAll(s.type, "Reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using A = ReduceAcc<T>;
      ReduceParams<A> p{s.kind,  s.kept,           s.reduced,
                        s.count, lowestValue<A>(), highestValue<A>()};
      const T *in = static_cast<const T *>(x);
      T *out = static_cast<T *>(y);
      cudaStream_t stream = streamOf(s.ctx);
      // Block per output when there are too few outputs to fill the GPU
      // with threads, or when each output's inputs are contiguous (a block
      // then reads them coalesced, a thread would read them alone).
      bool contiguous =
          s.reduced.rank > 0 && s.reduced.strides[0][s.reduced.rank - 1] == 1;
      if (s.count >= kBlockRow && (s.outputs < 8192 || contiguous))
        reduceBlockKernel<T, A><<<blocksFor(s.outputs), kThreads, 0, stream>>>(
            p, in, out, s.outputs);
      else
        reduceThreadKernel<T, A><<<gridFor(s.outputs), kThreads, 0, stream>>>(
            p, in, out, s.outputs);
      checkLaunch("Reduce");
    }
  });
}

} // namespace heterps::rt::gpu
