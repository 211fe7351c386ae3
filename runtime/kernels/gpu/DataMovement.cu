//===- DataMovement.cu - Concat, Split, Slice, Transpose, Expand, Pad,
//                      Gather, Scatter, EmbeddingLookup ------------------===//
//
// Data movement works on element bits (1, 2, 4 or 8 bytes) except where a
// value is computed (Pad's constant is converted on the host, pooled
// embeddings add in float). Concat and Split are 2-D strided copies.
//
//===----------------------------------------------------------------------===//

#include "GpuCommon.cuh"

#include <cstring>

namespace heterps::rt::gpu {
namespace {

/// y[i] = x[base + offset(i)]: Slice, Transpose, Expand.
template <typename E>
__global__ void stridedCopyKernel(StridedMap<1> map, int64_t base, const E *x,
                                  E *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t offset[1];
    map.offsets(i, offset);
    y[i] = x[base + offset[0]];
  }
}

void launchStridedCopy(const char *kernel, Context &ctx, DType type,
                       const StridedMap<1> &map, int64_t base, const void *x,
                       void *y, int64_t n) {
  if (n == 0)
    return;
  dispatchBySize(type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    stridedCopyKernel<E><<<gridFor(n), kThreads, 0, streamOf(ctx)>>>(
        map, base, static_cast<const E *>(x), static_cast<E *>(y), n);
    checkLaunch(kernel);
  });
}

/// Rows of `rows` x `bytes` copied between pitched buffers.
void copyRows(Context &ctx, void *dst, size_t dstPitch, const void *src,
              size_t srcPitch, size_t bytes, size_t rows) {
  if (bytes == 0 || rows == 0)
    return;
  // cudaMemcpy2D limits pitches; one row or huge rows go row by row.
  constexpr size_t kMaxPitch = size_t(1) << 30;
  if (rows == 1 || dstPitch > kMaxPitch || srcPitch > kMaxPitch) {
    for (size_t row = 0; row < rows; ++row)
      HPS_CUDA_CHECK(
          cudaMemcpyAsync(static_cast<char *>(dst) + row * dstPitch,
                          static_cast<const char *>(src) + row * srcPitch,
                          bytes, cudaMemcpyDeviceToDevice, streamOf(ctx)));
    return;
  }
  HPS_CUDA_CHECK(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, bytes, rows,
                                   cudaMemcpyDeviceToDevice, streamOf(ctx)));
}

} // namespace

//===----------------------------------------------------------------------===//
// Concat and Split
//===----------------------------------------------------------------------===//

struct Concat::Impl {
  Context &ctx;
  /// Per input: bytes of one outer row of the input.
  std::vector<size_t> rowBytes;
  size_t outRowBytes = 0, outer = 0;
};

Concat::Concat(Context &ctx, DType type, const std::vector<Shape> &inputs,
               int64_t axis)
    : impl(new Impl{ctx, {}}) {
  if (inputs.empty())
    throw Error("Concat: no inputs");
  const Shape &first = inputs[0];
  if (axis < 0 || axis >= int64_t(first.size()))
    throw Error("Concat: axis " + std::to_string(axis) + " out of range for " +
                shapeString(first));
  impl->outer = size_t(numElements(Shape(first.begin(), first.begin() + axis)));
  for (const Shape &input : inputs) {
    Shape expected = first;
    expected[axis] = input.size() == first.size() ? input[axis] : 0;
    if (input != expected)
      throw Error(shapeMismatch("Concat", "an input", input, expected));
    size_t bytes =
        size_t(numElements(Shape(input.begin() + axis, input.end()))) *
        dtypeSize(type);
    impl->rowBytes.push_back(bytes);
    impl->outRowBytes += bytes;
  }
}

Concat::~Concat() = default;

void Concat::run(const void *const *sources, void *y) {
  Impl &s = *impl;
  size_t column = 0;
  for (size_t i = 0; i < s.rowBytes.size(); ++i) {
    copyRows(s.ctx, static_cast<char *>(y) + column, s.outRowBytes, sources[i],
             s.rowBytes[i], s.rowBytes[i], s.outer);
    column += s.rowBytes[i];
  }
}

struct Split::Impl {
  Context &ctx;
  std::vector<size_t> rowBytes;
  size_t inRowBytes = 0, outer = 0;
};

Split::Split(Context &ctx, DType type, const Shape &x, int64_t axis,
             const std::vector<int64_t> &sizes)
    : impl(new Impl{ctx, {}}) {
  if (axis < 0 || axis >= int64_t(x.size()))
    throw Error("Split: axis " + std::to_string(axis) + " out of range for " +
                shapeString(x));
  int64_t inner = numElements(Shape(x.begin() + axis + 1, x.end()));
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      throw Error("Split: negative piece size " + std::to_string(size));
    total += size;
    impl->rowBytes.push_back(size_t(size * inner) * dtypeSize(type));
  }
  if (total != x[axis])
    throw Error("Split: pieces add up to " + std::to_string(total) +
                ", not to dim " + std::to_string(x[axis]) + " of " +
                shapeString(x));
  impl->outer = size_t(numElements(Shape(x.begin(), x.begin() + axis)));
  impl->inRowBytes = size_t(x[axis] * inner) * dtypeSize(type);
}

Split::~Split() = default;

void Split::run(const void *x, void *const *ys) {
  Impl &s = *impl;
  size_t column = 0;
  for (size_t i = 0; i < s.rowBytes.size(); ++i) {
    copyRows(s.ctx, ys[i], s.rowBytes[i], static_cast<const char *>(x) + column,
             s.inRowBytes, s.rowBytes[i], s.outer);
    column += s.rowBytes[i];
  }
}

//===----------------------------------------------------------------------===//
// Slice, Transpose, Expand
//===----------------------------------------------------------------------===//

struct Slice::Impl {
  Context &ctx;
  DType type;
  StridedMap<1> map;
  int64_t base = 0, n = 0;
};

Slice::Slice(Context &ctx, DType type, const Shape &x, const Shape &starts,
             const Shape &steps, const Shape &y)
    : impl(new Impl{ctx, type, {}}) {
  if (starts.size() != x.size() || steps.size() != x.size() ||
      y.size() != x.size())
    throw Error("Slice: starts, steps and result must have the rank of " +
                shapeString(x));
  Shape dense = denseStrides(x), strides(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    if (steps[d] == 0)
      throw Error("Slice: step 0 on axis " + std::to_string(d));
    int64_t last = starts[d] + (y[d] - 1) * steps[d];
    if (y[d] > 0 &&
        (starts[d] < 0 || starts[d] >= x[d] || last < 0 || last >= x[d]))
      throw Error("Slice: axis " + std::to_string(d) + " reads outside " +
                  shapeString(x));
    impl->base += y[d] > 0 ? starts[d] * dense[d] : 0;
    strides[d] = steps[d] * dense[d];
  }
  impl->map = makeMap<1>("Slice", y, {strides});
  impl->n = numElements(y);
}

Slice::~Slice() = default;

void Slice::run(const void *x, void *y) {
  Impl &s = *impl;
  launchStridedCopy("Slice", s.ctx, s.type, s.map, s.base, x, y, s.n);
}

struct Transpose::Impl {
  Context &ctx;
  DType type;
  StridedMap<1> map;
  int64_t n = 0;
};

Transpose::Transpose(Context &ctx, DType type, const Shape &x,
                     const std::vector<int64_t> &perm)
    : impl(new Impl{ctx, type, {}}) {
  if (perm.size() != x.size())
    throw Error("Transpose: permutation rank differs from " + shapeString(x));
  Shape dense = denseStrides(x), dims(x.size()), strides(x.size());
  std::vector<bool> seen(x.size(), false);
  for (size_t d = 0; d < perm.size(); ++d) {
    int64_t from = perm[d];
    if (from < 0 || from >= int64_t(x.size()) || seen[from])
      throw Error("Transpose: invalid permutation for " + shapeString(x));
    seen[from] = true;
    dims[d] = x[from];
    strides[d] = dense[from];
  }
  impl->map = makeMap<1>("Transpose", dims, {strides});
  impl->n = numElements(x);
}

Transpose::~Transpose() = default;

void Transpose::run(const void *x, void *y) {
  Impl &s = *impl;
  launchStridedCopy("Transpose", s.ctx, s.type, s.map, 0, x, y, s.n);
}

struct Expand::Impl {
  Context &ctx;
  DType type;
  StridedMap<1> map;
  int64_t n = 0;
};

Expand::Expand(Context &ctx, DType type, const Shape &x, const Shape &y)
    : impl(new Impl{ctx, type, {}}) {
  impl->map = makeMap<1>("Expand", y, {broadcastStrides("Expand", x, y)});
  impl->n = numElements(y);
}

Expand::~Expand() = default;

void Expand::run(const void *x, void *y) {
  Impl &s = *impl;
  launchStridedCopy("Expand", s.ctx, s.type, s.map, 0, x, y, s.n);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

namespace {

struct PadGeometry {
  int rank = 0;
  int64_t in[kMaxDims] = {}, out[kMaxDims] = {}, begin[kMaxDims] = {};
  PadMode mode = PadMode::Constant;
};

template <typename E>
__global__ void padKernel(PadGeometry g, const E *x, E *y, E value, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t rest = i, offset = 0, stride = 1;
    bool inside = true;
    for (int d = g.rank - 1; d >= 0; --d) {
      int64_t size = g.in[d];
      int64_t c = rest % g.out[d] - g.begin[d];
      rest /= g.out[d];
      if (c < 0 || c >= size) {
        if (g.mode == PadMode::Constant) {
          inside = false;
        } else if (g.mode == PadMode::Edge) {
          c = c < 0 ? 0 : size - 1;
        } else if (size == 1) {
          c = 0;
        } else {
          // Reflect about the edges without repeating them: the pattern
          // repeats every 2 * (size - 1).
          int64_t period = 2 * (size - 1);
          c %= period;
          if (c < 0)
            c += period;
          if (c >= size)
            c = period - c;
        }
      }
      offset += c * stride;
      stride *= size;
    }
    y[i] = inside ? x[offset] : value;
  }
}

/// Pad's constant converted to the element type, as bits of its size.
uint64_t padValueBits(DType type, double value) {
  uint64_t bits = 0;
  auto store = [&](auto v) {
    static_assert(sizeof(v) <= sizeof(bits));
    std::memcpy(&bits, &v, sizeof(v));
  };
  if (type == DType::F32)
    store(float(value));
  else if (type == DType::F64)
    store(value);
  else if (type == DType::F16)
    store(__float2half_rn(float(value)));
  else if (type == DType::BF16)
    store(__float2bfloat16_rn(float(value)));
  else if (type == DType::Bool)
    store(uint8_t(value != 0.0));
  else if (std::isfinite(value) && std::fabs(value) < 0x1p63)
    // Integers: truncate toward zero, then keep the low bytes (two's
    // complement wrap, the same for signed and unsigned types).
    store(int64_t(value));
  else if (value >= 0x1p63 && value < 0x1p64)
    store(uint64_t(value));
  return bits;
}

} // namespace

struct Pad::Impl {
  Context &ctx;
  DType type;
  PadGeometry geometry;
  uint64_t valueBits = 0;
  int64_t n = 0;
};

Pad::Pad(Context &ctx, DType type, const Shape &x,
         const std::vector<int64_t> &pads, PadMode mode, double value)
    : impl(new Impl{ctx, type, {}}) {
  size_t rank = x.size();
  if (pads.size() != 2 * rank)
    throw Error("Pad: " + std::to_string(pads.size()) + " pads for rank " +
                std::to_string(rank));
  if (rank > size_t(kMaxDims))
    throw Error("Pad: rank " + std::to_string(rank) + " above " +
                std::to_string(kMaxDims));
  PadGeometry &g = impl->geometry;
  g.rank = int(rank);
  g.mode = mode;
  Shape y(rank);
  for (size_t d = 0; d < rank; ++d) {
    g.in[d] = x[d];
    g.begin[d] = pads[d];
    g.out[d] = y[d] = x[d] + pads[d] + pads[rank + d];
    if (y[d] < 0)
      throw Error("Pad: axis " + std::to_string(d) + " of " + shapeString(x) +
                  " cropped below zero");
  }
  impl->n = numElements(y);
  if (mode != PadMode::Constant && impl->n > 0 && numElements(x) == 0)
    throw Error("Pad: reflect and edge padding of an empty tensor");
  impl->valueBits = padValueBits(type, value);
}

Pad::~Pad() = default;

void Pad::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  dispatchBySize(s.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    E value;
    std::memcpy(&value, &s.valueBits, sizeof(E)); // little-endian host
    padKernel<E><<<gridFor(s.n), kThreads, 0, streamOf(s.ctx)>>>(
        s.geometry, static_cast<const E *>(x), static_cast<E *>(y), value, s.n);
    checkLaunch("Pad");
  });
}

//===----------------------------------------------------------------------===//
// Gather and EmbeddingLookup
//===----------------------------------------------------------------------===//

namespace {

/// Device-side report of the first out-of-range index: [0] is set to 1 by
/// the thread that finds one, [1] holds its value.
struct IndexError {
  unsigned long long *slot;

  __device__ void report(int64_t index) const {
    if (atomicCAS(slot, 0ull, 1ull) == 0ull)
      slot[1] = static_cast<unsigned long long>(index);
  }
};

/// Index `raw` into a dim of `size`, negative counting from the end; -1 when
/// out of range (after reporting it).
template <typename I>
__device__ int64_t normaliseIndex(I raw, int64_t size, IndexError error) {
  int64_t index = int64_t(raw);
  if (index < 0)
    index += size;
  if (index < 0 || index >= size) {
    error.report(int64_t(raw));
    return -1;
  }
  return index;
}

/// The element of data ([outer, axisSize, inner]) that element i of
/// gather's result ([outer, count, inner]) reads and a scatter's update i
/// writes; -1 when its index is out of range (after reporting it).
template <typename I>
__device__ int64_t gatheredElement(int64_t i, const I *indices, int64_t count,
                                   int64_t axisSize, int64_t inner,
                                   IndexError error) {
  int64_t in = i % inner, rest = i / inner;
  int64_t j = rest % count, o = rest / count;
  int64_t index = normaliseIndex(indices[j], axisSize, error);
  return index < 0 ? -1 : (o * axisSize + index) * inner + in;
}

template <typename E, typename I>
__global__ void gatherKernel(const E *data, const I *indices, E *y,
                             int64_t count, int64_t axisSize, int64_t inner,
                             IndexError error, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t at = gatheredElement(i, indices, count, axisSize, inner, error);
    y[i] = at < 0 ? E(0) : data[at];
  }
}

template <typename E, typename I>
__global__ void embeddingKernel(const E *table, const I *ids, E *y,
                                int64_t rows, int64_t dim, IndexError error,
                                int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t row = normaliseIndex(ids[i / dim], rows, error);
    y[i] = row < 0 ? E(0) : table[row * dim + i % dim];
  }
}

/// y[b, :] = sum (or mean) over l of table[ids[b, l], :].
template <typename T, typename I>
__global__ void embeddingPoolKernel(const T *table, const I *ids, T *y,
                                    int64_t rows, int64_t dim, int64_t bag,
                                    bool mean, IndexError error, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t b = i / dim, column = i % dim;
    Acc<T> sum = 0;
    for (int64_t l = 0; l < bag; ++l) {
      int64_t row = normaliseIndex(ids[b * bag + l], rows, error);
      if (row >= 0)
        sum += toAcc(table[row * dim + column]);
    }
    if (mean && bag > 0)
      sum /= Acc<T>(bag);
    y[i] = fromAcc<T>(sum);
  }
}

template <typename F>
void dispatchIndex(DType type, const char *kernel, F &&f) {
  if (type == DType::I32)
    return f(Tag<int32_t>{});
  if (type == DType::I64)
    return f(Tag<int64_t>{});
  throw Error(std::string(kernel) + ": index type " + dtypeName(type) +
              " is not i32 or i64");
}

/// Clears the error slot before a kernel that reports into it.
void resetIndexError(Context &ctx, const DeviceBuffer &slot) {
  HPS_CUDA_CHECK(cudaMemsetAsync(slot.get(), 0, slot.bytes(), streamOf(ctx)));
}

/// Waits for the kernel and throws naming the first bad index it saw.
void checkIndexError(Context &ctx, const DeviceBuffer &slot, const char *kernel,
                     const char *what, int64_t size) {
  unsigned long long host[2] = {0, 0};
  HPS_CUDA_CHECK(cudaMemcpyAsync(host, slot.get(), sizeof(host),
                                 cudaMemcpyDeviceToHost, streamOf(ctx)));
  HPS_CUDA_CHECK(cudaStreamSynchronize(streamOf(ctx)));
  if (host[0])
    throw Error(std::string(kernel) + ": " + what + " " +
                std::to_string(static_cast<int64_t>(host[1])) +
                " is out of range for size " + std::to_string(size));
}

/// Fills the count, axisSize, inner and n (gather's result size) of a
/// Gather or Scatter and its index-error slot; throws Error naming `kernel`
/// for an axis out of range.
template <typename Impl>
void setAxisGeometry(Impl &s, const char *kernel, const Shape &data,
                     const Shape &indices, int64_t axis) {
  if (axis < 0 || axis >= int64_t(data.size()))
    throw Error(std::string(kernel) + ": axis " + std::to_string(axis) +
                " out of range for " + shapeString(data));
  s.count = numElements(indices);
  s.axisSize = data[axis];
  s.inner = numElements(Shape(data.begin() + axis + 1, data.end()));
  s.n =
      numElements(Shape(data.begin(), data.begin() + axis)) * s.count * s.inner;
  s.error = DeviceBuffer(kernel, 2 * sizeof(unsigned long long));
}

} // namespace

struct Gather::Impl {
  Context &ctx;
  DType type, indexType;
  int64_t count = 0, axisSize = 0, inner = 0, n = 0;
  DeviceBuffer error;
};

Gather::Gather(Context &ctx, DType type, const Shape &data, DType indexType,
               const Shape &indices, int64_t axis)
    : impl(new Impl{ctx, type, indexType}) {
  dispatchIndex(indexType, "Gather", [](auto) {});
  setAxisGeometry(*impl, "Gather", data, indices, axis);
}

Gather::~Gather() = default;

void Gather::run(const void *data, const void *indices, void *y) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  resetIndexError(s.ctx, s.error);
  dispatchBySize(s.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    dispatchIndex(s.indexType, "Gather", [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      gatherKernel<E, I><<<gridFor(s.n), kThreads, 0, streamOf(s.ctx)>>>(
          static_cast<const E *>(data), static_cast<const I *>(indices),
          static_cast<E *>(y), s.count, s.axisSize, s.inner,
          IndexError{static_cast<unsigned long long *>(s.error.get())}, s.n);
      checkLaunch("Gather");
    });
  });
  checkIndexError(s.ctx, s.error, "Gather", "index", s.axisSize);
}

namespace {

/// *address = op(*address, update) atomically. Elements narrower than a
/// word are updated through a compare-and-swap on their aligned 32-bit word
/// (allocations are 256-byte aligned, so the word is always mapped).
template <typename T, typename Op>
__device__ void atomicCombine(T *address, T update, Op op) {
  if constexpr (sizeof(T) == 8 || sizeof(T) == 4) {
    using Word =
        std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;
    Word *word = reinterpret_cast<Word *>(address);
    Word seen = *word, expected;
    do {
      expected = seen;
      T current;
      memcpy(&current, &expected, sizeof(T));
      T next = op(current, update);
      Word desired;
      memcpy(&desired, &next, sizeof(T));
      seen = atomicCAS(word, expected, desired);
    } while (seen != expected);
  } else {
    auto bytes = reinterpret_cast<uintptr_t>(address);
    unsigned int *word =
        reinterpret_cast<unsigned int *>(bytes & ~uintptr_t(3));
    const unsigned shift = unsigned(bytes & 3) * 8;
    const unsigned mask = ((1u << (8 * sizeof(T))) - 1u) << shift;
    unsigned int seen = *word, expected;
    do {
      expected = seen;
      unsigned int bits = (expected & mask) >> shift;
      T current;
      memcpy(&current, &bits, sizeof(T));
      T next = op(current, update);
      unsigned int nextBits = 0;
      memcpy(&nextBits, &next, sizeof(T));
      seen =
          atomicCAS(word, expected, (expected & ~mask) | (nextBits << shift));
    } while (seen != expected);
  }
}

/// The combination of one ScatterReduction in T's arithmetic type; bool:
/// Add and Max are or, Mul and Min are and.
template <typename T, ScatterReduction R> struct ScatterCombine {
  __device__ T operator()(T into, T update) const {
    if constexpr (std::is_same_v<T, bool>) {
      if constexpr (R == ScatterReduction::Add || R == ScatterReduction::Max)
        return into || update;
      else
        return into && update;
    } else {
      Acc<T> a = toAcc(into), b = toAcc(update);
      if constexpr (R == ScatterReduction::Add)
        return fromAcc<T>(a + b);
      else if constexpr (R == ScatterReduction::Mul)
        return fromAcc<T>(a * b);
      else if constexpr (R == ScatterReduction::Max)
        return fromAcc<T>(b > a ? b : a);
      else
        return fromAcc<T>(b < a ? b : a);
    }
  }
};

/// One thread per update element; under None duplicates race (last store
/// wins in no set order), the others combine atomically.
template <typename T, typename I, ScatterReduction R>
__global__ void scatterKernel(const I *indices, const T *updates, T *y,
                              int64_t count, int64_t axisSize, int64_t inner,
                              IndexError error, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t at = gatheredElement(i, indices, count, axisSize, inner, error);
    if (at < 0)
      continue;
    T *target = y + at;
    if constexpr (R == ScatterReduction::None)
      *target = updates[i];
    else
      atomicCombine(target, updates[i], ScatterCombine<T, R>{});
  }
}

} // namespace

struct Scatter::Impl {
  Context &ctx;
  DType type, indexType;
  ScatterReduction reduction;
  int64_t count = 0, axisSize = 0, inner = 0, n = 0, bytes = 0;
  DeviceBuffer error;
};

Scatter::Scatter(Context &ctx, DType type, const Shape &data, DType indexType,
                 const Shape &indices, int64_t axis, ScatterReduction reduction)
    : impl(new Impl{ctx, type, indexType, reduction}) {
  dispatchIndex(indexType, "Scatter", [](auto) {});
  dispatchAll(type, "Scatter", [](auto) {});
  setAxisGeometry(*impl, "Scatter", data, indices, axis);
  impl->bytes = numElements(data) * int64_t(dtypeSize(type));
}

Scatter::~Scatter() = default;

void Scatter::run(const void *data, const void *indices, const void *updates,
                  void *y) {
  Impl &s = *impl;
  if (data != y && s.bytes > 0)
    HPS_CUDA_CHECK(cudaMemcpyAsync(y, data, size_t(s.bytes),
                                   cudaMemcpyDeviceToDevice, streamOf(s.ctx)));
  if (s.n == 0)
    return;
  resetIndexError(s.ctx, s.error);
  auto launch = [&](auto typeTag, auto indexTag, auto reductionConstant) {
    using T = typename decltype(typeTag)::type;
    using I = typename decltype(indexTag)::type;
    constexpr ScatterReduction R = decltype(reductionConstant)::value;
    scatterKernel<T, I, R><<<gridFor(s.n), kThreads, 0, streamOf(s.ctx)>>>(
        static_cast<const I *>(indices), static_cast<const T *>(updates),
        static_cast<T *>(y), s.count, s.axisSize, s.inner,
        IndexError{static_cast<unsigned long long *>(s.error.get())}, s.n);
    checkLaunch("Scatter");
  };
  dispatchIndex(s.indexType, "Scatter", [&](auto indexTag) {
    using Reduction = ScatterReduction;
    if (s.reduction == Reduction::None)
      return dispatchBySize(s.type, [&](auto typeTag) {
        launch(typeTag, indexTag,
               std::integral_constant<Reduction, Reduction::None>{});
      });
    dispatchAll(s.type, "Scatter", [&](auto typeTag) {
      switch (s.reduction) {
      case Reduction::Add:
        return launch(typeTag, indexTag,
                      std::integral_constant<Reduction, Reduction::Add>{});
      case Reduction::Mul:
        return launch(typeTag, indexTag,
                      std::integral_constant<Reduction, Reduction::Mul>{});
      case Reduction::Max:
        return launch(typeTag, indexTag,
                      std::integral_constant<Reduction, Reduction::Max>{});
      default:
        return launch(typeTag, indexTag,
                      std::integral_constant<Reduction, Reduction::Min>{});
      }
    });
  });
  checkIndexError(s.ctx, s.error, "Scatter", "index", s.axisSize);
}

struct EmbeddingLookup::Impl {
  Context &ctx;
  DType type, idType;
  int64_t rows, dim;
  EmbeddingPooling pooling;
  int64_t bag = 0, n = 0;
  DeviceBuffer error;
};

EmbeddingLookup::EmbeddingLookup(Context &ctx, DType type, int64_t rows,
                                 int64_t dim, DType idType, const Shape &ids,
                                 EmbeddingPooling pooling)
    : impl(new Impl{ctx, type, idType, rows, dim, pooling}) {
  const char *kernel = "EmbeddingLookup";
  dispatchIndex(idType, kernel, [](auto) {});
  Impl &s = *impl;
  if (pooling == EmbeddingPooling::None) {
    s.n = numElements(ids) * dim;
  } else {
    // Pooled rows are added, which needs a float type.
    dispatchFloat(type, kernel, [](auto) {});
    if (ids.empty())
      throw Error("EmbeddingLookup: pooling needs ids of rank >= 1");
    s.bag = ids.back();
    s.n = numElements(Shape(ids.begin(), ids.end() - 1)) * dim;
  }
  s.error = DeviceBuffer(kernel, 2 * sizeof(unsigned long long));
}

EmbeddingLookup::~EmbeddingLookup() = default;

void EmbeddingLookup::run(const void *table, const void *ids, void *y) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  const char *kernel = "EmbeddingLookup";
  resetIndexError(s.ctx, s.error);
  IndexError error{static_cast<unsigned long long *>(s.error.get())};
  cudaStream_t stream = streamOf(s.ctx);
  dispatchIndex(s.idType, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    const I *idsT = static_cast<const I *>(ids);
    if (s.pooling == EmbeddingPooling::None) {
      dispatchBySize(s.type, [&](auto tag) {
        using E = typename decltype(tag)::type;
        embeddingKernel<E, I><<<gridFor(s.n), kThreads, 0, stream>>>(
            static_cast<const E *>(table), idsT, static_cast<E *>(y), s.rows,
            s.dim, error, s.n);
      });
    } else {
      dispatchFloat(s.type, kernel, [&](auto tag) {
        using T = typename decltype(tag)::type;
        embeddingPoolKernel<T, I><<<gridFor(s.n), kThreads, 0, stream>>>(
            static_cast<const T *>(table), idsT, static_cast<T *>(y), s.rows,
            s.dim, s.bag, s.pooling == EmbeddingPooling::Mean, error, s.n);
      });
    }
    checkLaunch(kernel);
  });
  checkIndexError(s.ctx, s.error, kernel, "id", s.rows);
}

} // namespace heterps::rt::gpu
