//===- DataMovement.cpp - Copies, slices, transposes, gathers on the CPU --===//
//
// These kernels move elements without looking at them, so they work on
// 1/2/4/8-byte words and support every DType. Constructors turn shapes into
// copy plans (merged strided loops, memcpy runs, per-axis index maps); run()
// only copies, on OpenMP threads when the output is large. EmbeddingLookup's
// Sum/Mean pooling and Scatter's reductions are the places that do
// arithmetic.
//
//===----------------------------------------------------------------------===//

#include "Broadcast.h"
#include "CpuContext.h"
#include "DTypeDispatch.h"

#include <cmath>
#include <cstring>

namespace heterps::rt::cpu {
namespace {

/// Bytes beyond which copies are spread over threads. Stricter than
/// worthThreads for a 4-byte element (256 KiB): a memcpy byte costs a
/// fraction of a computed one, so small copies stay serial (and clear of the
/// barrier stalls of a loaded machine). Strided copies use forEachSpan's
/// kParallelElements.
constexpr int64_t kParallelBytes = 1 << 20;
static_assert(kParallelBytes / 4 * kCheapElementWork >= kMinParallelWork);

/// memcpy, split over threads when large (serial inside a parallel region).
void copyBytes(void *dst, const void *src, int64_t bytes) {
  if (bytes <= 0)
    return;
  if (bytes < 4 * kParallelBytes || omp_in_parallel()) {
    std::memcpy(dst, src, size_t(bytes));
    return;
  }
  parallelBlocks(
      bytes,
      [&](int64_t b, int64_t e) {
        std::memcpy(static_cast<char *>(dst) + b,
                    static_cast<const char *>(src) + b, size_t(e - b));
      },
      0);
}

/// Runs body(begin, end) over `tasks` in parallel when `bytes` (the total
/// work) is large.
template <typename F>
void parallelTasks(int64_t tasks, int64_t bytes, F &&body) {
  if (tasks <= 0)
    return;
  if (bytes < kParallelBytes || tasks == 1) {
    body(int64_t(0), tasks);
    return;
  }
#pragma omp parallel
  {
    int64_t team = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t begin = tasks * id / team, end = tasks * (id + 1) / team;
    if (begin < end)
      body(begin, end);
  }
}

//===----------------------------------------------------------------------===//
// Strided copies (Slice, Transpose, Expand)
//===----------------------------------------------------------------------===//

using StridedFn = void (*)(const StridedPlan &plan, const void *x, void *y);

/// y (dense) = x at plan operand 0 offsets; inner spans are memcpy for
/// stride 1, fills for stride 0 (broadcast), strided loops otherwise.
template <size_t Bytes>
void stridedCopy(const StridedPlan &plan, const void *xv, void *yv) {
  using T = typename BitsOf<Bytes>::type;
  const T *x = static_cast<const T *>(xv);
  T *y = static_cast<T *>(yv);
  const int64_t stride = plan.innerStride[0];
  forEachSpan(plan, [&](int64_t o, const int64_t *offsets, int64_t n) {
    const T *src = x + offsets[0];
    T *dst = y + o;
    if (stride == 1)
      std::memcpy(dst, src, size_t(n) * Bytes);
    else if (stride == 0)
      std::fill(dst, dst + n, src[0]);
    else if (stride == -1)
      for (int64_t i = 0; i < n; ++i)
        dst[i] = src[-i];
    else
      for (int64_t i = 0; i < n; ++i)
        dst[i] = src[i * stride];
  });
}

StridedFn stridedFnFor(size_t bytes) {
  return dispatchSize(bytes, [](auto b) {
    return StridedFn(&stridedCopy<decltype(b)::value>);
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Concat / Split
//===----------------------------------------------------------------------===//

namespace {

/// Concat and Split are the same copy in opposite directions: `outer` rows
/// of the joined tensor, each made of one piece per part.
struct JoinPlan {
  int64_t outer = 1;
  std::vector<int64_t> pieceBytes;  // per part, per row
  std::vector<int64_t> pieceOffset; // byte offset in a joined row
  int64_t rowBytes = 0;

  void finish() {
    rowBytes = 0;
    for (int64_t bytes : pieceBytes) {
      pieceOffset.push_back(rowBytes);
      rowBytes += bytes;
    }
  }

  /// toJoined: parts -> joined (Concat); else joined -> parts (Split).
  void run(char *joined, char *const *parts, bool toJoined) const {
    const int64_t k = int64_t(pieceBytes.size());
    const int64_t total = outer * rowBytes;
    if (outer == 1) {
      for (int64_t i = 0; i < k; ++i) {
        char *j = joined + pieceOffset[i];
        if (toJoined)
          copyBytes(j, parts[i], pieceBytes[i]);
        else
          copyBytes(parts[i], j, pieceBytes[i]);
      }
      return;
    }
    parallelTasks(outer * k, total, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        int64_t row = t / k, i = t % k;
        char *j = joined + row * rowBytes + pieceOffset[i];
        char *p = parts[i] + row * pieceBytes[i];
        if (toJoined)
          std::memcpy(j, p, size_t(pieceBytes[i]));
        else
          std::memcpy(p, j, size_t(pieceBytes[i]));
      }
    });
  }
};

} // namespace

struct Concat::Impl {
  JoinPlan plan;
  std::vector<char *> parts;
};

Concat::Concat(Context &, DType type, const std::vector<Shape> &inputs,
               int64_t axis)
    : impl(std::make_unique<Impl>()) {
  if (inputs.empty())
    throw Error("Concat: no inputs");
  const Shape &first = inputs.front();
  int64_t rank = int64_t(first.size());
  if (axis < 0 || axis >= rank)
    throw Error("Concat: axis " + std::to_string(axis) +
                " out of range for rank " + std::to_string(rank));
  for (const Shape &shape : inputs) {
    bool ok = int64_t(shape.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == axis || shape[d] == first[d];
    if (!ok)
      throw Error("Concat: input shape " + shapeString(shape) +
                  " does not match " + shapeString(first) + " off axis " +
                  std::to_string(axis));
  }
  size_t bytes = dtypeSize(type);
  for (int64_t d = 0; d < axis; ++d)
    impl->plan.outer *= first[d];
  for (const Shape &shape : inputs) {
    int64_t piece = int64_t(bytes);
    for (int64_t d = axis; d < rank; ++d)
      piece *= shape[d];
    impl->plan.pieceBytes.push_back(piece);
  }
  impl->plan.finish();
  impl->parts.resize(inputs.size());
}
Concat::~Concat() = default;
void Concat::run(const void *const *sources, void *y) {
  // The plan only reads from the parts when joining.
  for (size_t i = 0; i < impl->parts.size(); ++i)
    impl->parts[i] = const_cast<char *>(static_cast<const char *>(sources[i]));
  impl->plan.run(static_cast<char *>(y), impl->parts.data(), true);
}

struct Split::Impl {
  JoinPlan plan;
};

Split::Split(Context &, DType type, const Shape &x, int64_t axis,
             const std::vector<int64_t> &sizes)
    : impl(std::make_unique<Impl>()) {
  int64_t rank = int64_t(x.size());
  if (axis < 0 || axis >= rank)
    throw Error("Split: axis " + std::to_string(axis) +
                " out of range for rank " + std::to_string(rank));
  int64_t sum = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      throw Error("Split: negative size " + std::to_string(size));
    sum += size;
  }
  if (sum != x[axis])
    throw Error("Split: sizes add up to " + std::to_string(sum) + " but axis " +
                std::to_string(axis) + " of " + shapeString(x) + " has " +
                std::to_string(x[axis]));
  int64_t innerBytes = int64_t(dtypeSize(type));
  for (int64_t d = axis + 1; d < rank; ++d)
    innerBytes *= x[d];
  for (int64_t d = 0; d < axis; ++d)
    impl->plan.outer *= x[d];
  for (int64_t size : sizes)
    impl->plan.pieceBytes.push_back(size * innerBytes);
  impl->plan.finish();
}
Split::~Split() = default;
void Split::run(const void *x, void *const *ys) {
  impl->plan.run(const_cast<char *>(static_cast<const char *>(x)),
                 reinterpret_cast<char *const *>(ys), false);
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

struct Slice::Impl {
  StridedPlan plan;
  int64_t base = 0;
  size_t bytes;
  StridedFn fn;
};

Slice::Slice(Context &, DType type, const Shape &x, const Shape &starts,
             const Shape &steps, const Shape &y)
    : impl(std::make_unique<Impl>()) {
  size_t rank = x.size();
  if (starts.size() != rank || steps.size() != rank || y.size() != rank)
    throw Error("Slice: starts, steps and y must have the rank of x " +
                shapeString(x));
  std::vector<int64_t> xStrides = contiguousStrides(x), strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      throw Error("Slice: step 0 on axis " + std::to_string(d));
    if (y[d] < 0)
      throw Error("Slice: negative extent in y " + shapeString(y));
    if (y[d] > 0) {
      int64_t last = starts[d] + (y[d] - 1) * steps[d];
      if (starts[d] < 0 || starts[d] >= x[d] || last < 0 || last >= x[d])
        throw Error("Slice: axis " + std::to_string(d) + " start " +
                    std::to_string(starts[d]) + " step " +
                    std::to_string(steps[d]) + " extent " +
                    std::to_string(y[d]) + " leaves x " + shapeString(x));
      impl->base += starts[d] * xStrides[d];
    }
    strides[d] = xStrides[d] * steps[d];
  }
  impl->plan = makeStridedPlan(y, {strides});
  impl->bytes = dtypeSize(type);
  impl->fn = stridedFnFor(impl->bytes);
}
Slice::~Slice() = default;
void Slice::run(const void *x, void *y) {
  impl->fn(impl->plan,
           static_cast<const char *>(x) + impl->base * int64_t(impl->bytes), y);
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

namespace {

/// A transpose whose innermost output axis is not x's innermost axis: a
/// batch of 2-D transposes (output axis `rowAxis` reads x contiguously),
/// done in cache-sized tiles.
struct TiledTranspose {
  int64_t rows = 0, cols = 0; // the 2-D problem: y[r][c] = x[r + c*colStride]
  int64_t colStride = 0;      // x stride of the output's inner axis
  int64_t yRowStride = 0;     // y stride of the row axis
  std::vector<int64_t> batchExtents, batchX, batchY;
  int64_t batches = 1;

  template <size_t Bytes> void run(const void *xv, void *yv) const {
    using T = typename BitsOf<Bytes>::type;
    const T *x = static_cast<const T *>(xv);
    T *y = static_cast<T *>(yv);
    constexpr int64_t tile = 64 / Bytes > 8 ? 64 / Bytes : 8;
    const int64_t rowTiles = (rows + tile - 1) / tile;
    const int64_t tasks = batches * rowTiles;
    const int64_t total = batches * rows * cols;
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        int64_t batch = t / rowTiles, r0 = (t % rowTiles) * tile;
        int64_t xOff = 0, yOff = 0, rest = batch;
        for (size_t d = batchExtents.size(); d-- > 0;) {
          int64_t i = rest % batchExtents[d];
          rest /= batchExtents[d];
          xOff += i * batchX[d];
          yOff += i * batchY[d];
        }
        const int64_t r1 = std::min(rows, r0 + tile);
        for (int64_t c0 = 0; c0 < cols; c0 += tile) {
          const int64_t c1 = std::min(cols, c0 + tile);
          for (int64_t r = r0; r < r1; ++r) {
            const T *src = x + xOff + r;
            T *dst = y + yOff + r * yRowStride;
            for (int64_t c = c0; c < c1; ++c)
              dst[c] = src[c * colStride];
          }
        }
      }
    };
    parallelTasks(tasks, total * int64_t(Bytes), body);
  }
};

} // namespace

struct Transpose::Impl {
  StridedPlan plan;
  StridedFn fn = nullptr;
  bool tiled = false;
  TiledTranspose tiles;
  void (TiledTranspose::*tiledFn)(const void *, void *) const = nullptr;
};

Transpose::Transpose(Context &, DType type, const Shape &x,
                     const std::vector<int64_t> &perm)
    : impl(std::make_unique<Impl>()) {
  size_t rank = x.size();
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank)
    throw Error("Transpose: perm has " + std::to_string(perm.size()) +
                " entries for x of shape " + shapeString(x));
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[p])
      throw Error("Transpose: perm is not a permutation of 0.." +
                  std::to_string(rank == 0 ? 0 : rank - 1));
    seen[p] = true;
  }
  std::vector<int64_t> xStrides = contiguousStrides(x), strides(rank);
  Shape y(rank);
  for (size_t i = 0; i < rank; ++i) {
    y[i] = x[perm[i]];
    strides[i] = xStrides[perm[i]];
  }
  Impl &p = *impl;
  p.plan = makeStridedPlan(y, {strides});
  size_t bytes = dtypeSize(type);
  p.fn = stridedFnFor(bytes);
  // Find the output axis reading x contiguously when the inner one does
  // not: then tile, since a strided inner loop touches one cache line per
  // element.
  if (p.plan.innerStride[0] != 1 && p.plan.inner >= 4) {
    const StridedPlan &plan = p.plan;
    int64_t rowAxis = -1;
    for (size_t d = 0; d < plan.outer.size(); ++d)
      if (plan.outerStrides[d][0] == 1)
        rowAxis = int64_t(d);
    if (rowAxis >= 0 && plan.outer[rowAxis] >= 4) {
      TiledTranspose &t = p.tiles;
      t.rows = plan.outer[rowAxis];
      t.cols = plan.inner;
      t.colStride = plan.innerStride[0];
      // y strides of the merged outer axes (y is dense).
      int64_t yStride = plan.inner;
      std::vector<int64_t> yStrides(plan.outer.size());
      for (size_t d = plan.outer.size(); d-- > 0;) {
        yStrides[d] = yStride;
        yStride *= plan.outer[d];
      }
      t.yRowStride = yStrides[rowAxis];
      for (size_t d = 0; d < plan.outer.size(); ++d) {
        if (int64_t(d) == rowAxis)
          continue;
        t.batchExtents.push_back(plan.outer[d]);
        t.batchX.push_back(plan.outerStrides[d][0]);
        t.batchY.push_back(yStrides[d]);
        t.batches *= plan.outer[d];
      }
      p.tiled = true;
      p.tiledFn = dispatchSize(bytes, [](auto b) {
        return &TiledTranspose::run<decltype(b)::value>;
      });
    }
  }
}
Transpose::~Transpose() = default;
void Transpose::run(const void *x, void *y) {
  if (impl->tiled)
    (impl->tiles.*(impl->tiledFn))(x, y);
  else
    impl->fn(impl->plan, x, y);
}

//===----------------------------------------------------------------------===//
// Expand
//===----------------------------------------------------------------------===//

struct Expand::Impl {
  StridedPlan plan;
  StridedFn fn;
};

Expand::Expand(Context &, DType type, const Shape &x, const Shape &y)
    : impl(std::make_unique<Impl>()) {
  impl->plan = makeStridedPlan(y, {broadcastStrides("Expand", "x", x, y)});
  impl->fn = stridedFnFor(dtypeSize(type));
}
Expand::~Expand() = default;
void Expand::run(const void *x, void *y) { impl->fn(impl->plan, x, y); }

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

namespace {

/// A contiguous run of one output row: copied from x (src >= 0, an element
/// offset in the x row) or filled with the constant (src < 0).
struct PadRun {
  int64_t dst, length, src;
};

using PadFn = void (*)(const struct PadPlan &plan, const void *x, void *y);

struct PadPlan {
  Shape y;
  std::vector<int64_t> xStrides;
  /// Per outer axis: output index -> x index, -1 for the constant.
  std::vector<std::vector<int64_t>> maps;
  std::vector<PadRun> runs; // of the innermost axis
  int64_t inner = 1, rows = 1;
  uint64_t fillBits = 0; // the constant's bits in the element type
  PadFn fn = nullptr;
};

template <size_t Bytes>
void padRun(const PadPlan &plan, const void *xv, void *yv) {
  using T = typename BitsOf<Bytes>::type;
  const T *x = static_cast<const T *>(xv);
  T *y = static_cast<T *>(yv);
  T fill;
  std::memcpy(&fill, &plan.fillBits, Bytes);
  const size_t depth = plan.maps.size();
  const int64_t inner = plan.inner;
  auto rowsBody = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(depth);
    int64_t rest = begin;
    for (size_t d = depth; d-- > 0;) {
      index[d] = rest % plan.y[d];
      rest /= plan.y[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      T *dst = y + row * inner;
      int64_t src = 0;
      bool inside = true;
      for (size_t d = 0; d < depth; ++d) {
        int64_t i = plan.maps[d][index[d]];
        inside &= i >= 0;
        src += i * plan.xStrides[d];
      }
      if (!inside) {
        std::fill(dst, dst + inner, fill);
      } else {
        const T *s = x + src;
        for (const PadRun &run : plan.runs) {
          if (run.src < 0)
            std::fill(dst + run.dst, dst + run.dst + run.length, fill);
          else if (run.length == 1)
            dst[run.dst] = s[run.src];
          else
            std::memcpy(dst + run.dst, s + run.src, size_t(run.length) * Bytes);
        }
      }
      for (size_t d = depth; d-- > 0;) {
        if (++index[d] < plan.y[d])
          break;
        index[d] = 0;
      }
    }
  };
  parallelTasks(plan.rows, plan.rows * inner * int64_t(Bytes), rowsBody);
}

/// The constant converted to `type`, as bits.
uint64_t padConstantBits(DType type, double value) {
  uint64_t bits = 0;
  dispatchDType(type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    using S = typename DTypeTraits<D>::Storage;
    S v;
    if constexpr (D == DType::Bool)
      v = value != 0;
    else if constexpr (std::is_integral_v<S>)
      v = std::isfinite(value) ? S(int64_t(value)) : S(0);
    else
      v = store<S>(value);
    std::memcpy(&bits, &v, sizeof(S));
  });
  return bits;
}

} // namespace

struct Pad::Impl {
  PadPlan plan;
};

Pad::Pad(Context &, DType type, const Shape &x,
         const std::vector<int64_t> &pads, PadMode mode, double value)
    : impl(std::make_unique<Impl>()) {
  size_t rank = x.size();
  if (pads.size() != 2 * rank)
    throw Error("Pad: " + std::to_string(pads.size()) + " pads for rank " +
                std::to_string(rank) + " (want 2 per axis)");
  PadPlan &p = impl->plan;
  p.xStrides = contiguousStrides(x);
  p.y.resize(rank);
  std::vector<std::vector<int64_t>> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t begin = pads[d], n = x[d];
    p.y[d] = n + begin + pads[rank + d];
    if (p.y[d] < 0)
      throw Error("Pad: pads " + std::to_string(begin) + ", " +
                  std::to_string(pads[rank + d]) + " crop axis " +
                  std::to_string(d) + " of " + shapeString(x) + " below zero");
    if (mode != PadMode::Constant && n == 0 && p.y[d] > 0)
      throw Error(std::string("Pad: ") +
                  (mode == PadMode::Reflect ? "reflect" : "edge") +
                  " padding of empty axis " + std::to_string(d));
    maps[d].resize(p.y[d]);
    for (int64_t i = 0; i < p.y[d]; ++i) {
      int64_t j = i - begin;
      if (j < 0 || j >= n) {
        if (mode == PadMode::Constant) {
          j = -1;
        } else if (mode == PadMode::Edge) {
          j = j < 0 ? 0 : n - 1;
        } else if (n == 1) {
          j = 0;
        } else {
          // Mirror without repeating the edge; period 2 (n - 1).
          int64_t period = 2 * (n - 1);
          j %= period;
          if (j < 0)
            j += period;
          if (j >= n)
            j = period - j;
        }
      }
      maps[d][i] = j;
    }
  }
  if (rank == 0) {
    p.runs.push_back({0, 1, 0});
  } else {
    p.inner = p.y[rank - 1];
    const std::vector<int64_t> &last = maps[rank - 1];
    for (int64_t i = 0; i < p.inner; ++i) {
      int64_t src = last[i];
      PadRun *back = p.runs.empty() ? nullptr : &p.runs.back();
      if (back &&
          ((src < 0 && back->src < 0) ||
           (src >= 0 && back->src >= 0 && back->src + back->length == src)))
        ++back->length;
      else
        p.runs.push_back({i, 1, src});
    }
    for (size_t d = 0; d + 1 < rank; ++d)
      p.rows *= p.y[d];
    maps.pop_back();
    p.xStrides.pop_back();
  }
  p.maps = std::move(maps);
  if (p.inner == 0)
    p.rows = 0;
  p.y.resize(p.maps.size());
  p.fillBits = padConstantBits(type, value);
  p.fn = dispatchSize(dtypeSize(type), [](auto b) {
    return PadFn(&padRun<decltype(b)::value>);
  });
}
Pad::~Pad() = default;
void Pad::run(const void *x, void *y) { impl->plan.fn(impl->plan, x, y); }

//===----------------------------------------------------------------------===//
// Gather / EmbeddingLookup
//===----------------------------------------------------------------------===//

namespace {

/// Normalises ids (negative from the end) into `out`; throws Error naming
/// the first out-of-range one.
void normaliseIds(const char *kernel, const char *what, DType idType,
                  const void *ids, int64_t count, int64_t limit,
                  std::vector<int64_t> &out) {
  auto check = [&](auto *typed) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t id = int64_t(typed[i]);
      int64_t normal = id < 0 ? id + limit : id;
      if (normal < 0 || normal >= limit)
        throw Error(std::string(kernel) + ": " + what + " " +
                    std::to_string(id) + " out of range [" +
                    std::to_string(-limit) + ", " + std::to_string(limit) +
                    ")");
      out[i] = normal;
    }
  };
  if (idType == DType::I32)
    check(static_cast<const int32_t *>(ids));
  else
    check(static_cast<const int64_t *>(ids));
}

void checkIdType(const char *kernel, DType idType) {
  if (idType != DType::I32 && idType != DType::I64)
    throw Error(std::string(kernel) + ": index type " + dtypeName(idType) +
                " is not i32 or i64");
}

/// `data` around `axis` as Gather and Scatter index it: `outer` blocks of
/// `limit` slices of `inner` elements. Throws Error naming `kernel` when the
/// axis is out of range.
struct AxisSlices {
  int64_t outer = 1, limit = 0, inner = 1;
};
AxisSlices axisSlices(const char *kernel, const Shape &data, int64_t axis) {
  int64_t rank = int64_t(data.size());
  if (axis < 0 || axis >= rank)
    throw Error(std::string(kernel) + ": axis " + std::to_string(axis) +
                " out of range for data of shape " + shapeString(data));
  AxisSlices slices;
  for (int64_t d = 0; d < axis; ++d)
    slices.outer *= data[d];
  slices.limit = data[axis];
  for (int64_t d = axis + 1; d < rank; ++d)
    slices.inner *= data[d];
  return slices;
}

/// y[o][k][:] = data[o][ids[k]][:] for `outer` x ids.size() rows of `inner`
/// elements; data has `limit` rows per outer index.
template <size_t Bytes>
void gatherRows(const void *datav, const std::vector<int64_t> &ids,
                int64_t outer, int64_t limit, int64_t inner, void *yv) {
  using T = typename BitsOf<Bytes>::type;
  const T *data = static_cast<const T *>(datav);
  T *y = static_cast<T *>(yv);
  const int64_t k = int64_t(ids.size());
  const int64_t *id = ids.data();
  parallelTasks(outer * k, outer * k * inner * int64_t(Bytes),
                [&](int64_t begin, int64_t end) {
                  for (int64_t t = begin; t < end; ++t) {
                    int64_t o = t / k, i = t % k;
                    const T *src = data + (o * limit + id[i]) * inner;
                    T *dst = y + t * inner;
                    if (inner == 1)
                      *dst = *src;
                    else
                      std::memcpy(dst, src, size_t(inner) * Bytes);
                  }
                });
}

using GatherFn = void (*)(const void *, const std::vector<int64_t> &, int64_t,
                          int64_t, int64_t, void *);

GatherFn gatherFnFor(size_t bytes) {
  return dispatchSize(
      bytes, [](auto b) { return GatherFn(&gatherRows<decltype(b)::value>); });
}

} // namespace

struct Gather::Impl : AxisSlices {
  DType indexType;
  std::vector<int64_t> ids;
  GatherFn fn;
};

Gather::Gather(Context &, DType type, const Shape &data, DType indexType,
               const Shape &indices, int64_t axis)
    : impl(std::make_unique<Impl>()) {
  checkIdType("Gather", indexType);
  Impl &p = *impl;
  static_cast<AxisSlices &>(p) = axisSlices("Gather", data, axis);
  p.indexType = indexType;
  p.ids.resize(size_t(numElements(indices)));
  p.fn = gatherFnFor(dtypeSize(type));
}
Gather::~Gather() = default;
void Gather::run(const void *data, const void *indices, void *y) {
  Impl &p = *impl;
  normaliseIds("Gather", "index", p.indexType, indices, int64_t(p.ids.size()),
               p.limit, p.ids);
  if (p.inner > 0)
    p.fn(data, p.ids, p.outer, p.limit, p.inner, y);
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

namespace {

/// Columns of a slice one task combines: tasks split the rows' columns, and
/// each walks every index in order, so duplicates apply in index order and
/// no two threads touch one element.
constexpr int64_t kScatterColumns = 1024;

/// `into` combined with `update` by reduction R, in D's compute type. Bool:
/// Add and Max are or, Mul and Min are and.
template <DType D, ScatterReduction R>
inline void combine(typename DTypeTraits<D>::Storage &into,
                    typename DTypeTraits<D>::Storage update) {
  using S = typename DTypeTraits<D>::Storage;
  if constexpr (R == ScatterReduction::None) {
    into = update;
  } else if constexpr (D == DType::Bool) {
    if constexpr (R == ScatterReduction::Add || R == ScatterReduction::Max)
      into = S(into | update);
    else
      into = S(into & update);
  } else {
    auto a = load(into), b = load(update);
    if constexpr (R == ScatterReduction::Add)
      into = store<S>(a + b);
    else if constexpr (R == ScatterReduction::Mul)
      into = store<S>(a * b);
    else if constexpr (R == ScatterReduction::Max)
      into = store<S>(b > a ? b : a);
    else
      into = store<S>(b < a ? b : a);
  }
}

using ScatterFn = void (*)(const std::vector<int64_t> &ids, const void *,
                           int64_t outer, int64_t limit, int64_t inner, void *);

/// y[o][ids[k]][c] = combine(y[o][ids[k]][c], updates[o][k][c]).
template <DType D, ScatterReduction R>
void scatterRows(const std::vector<int64_t> &ids, const void *updatesv,
                 int64_t outer, int64_t limit, int64_t inner, void *yv) {
  using S = typename DTypeTraits<D>::Storage;
  const S *updates = static_cast<const S *>(updatesv);
  S *y = static_cast<S *>(yv);
  const int64_t count = int64_t(ids.size());
  const int64_t blocks = (inner + kScatterColumns - 1) / kScatterColumns;
  parallelTasks(outer * blocks, outer * count * inner * int64_t(sizeof(S)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t t = begin; t < end; ++t) {
                    int64_t o = t / blocks,
                            first = t % blocks * kScatterColumns;
                    int64_t last = std::min(inner, first + kScatterColumns);
                    for (int64_t k = 0; k < count; ++k) {
                      S *dst = y + (o * limit + ids[size_t(k)]) * inner;
                      const S *src = updates + (o * count + k) * inner;
                      for (int64_t c = first; c < last; ++c)
                        combine<D, R>(dst[c], src[c]);
                    }
                  }
                });
}

ScatterFn scatterFnFor(DType type, ScatterReduction reduction) {
  return dispatchDType(type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    switch (reduction) {
    case ScatterReduction::None:
      return ScatterFn(&scatterRows<D, ScatterReduction::None>);
    case ScatterReduction::Add:
      return ScatterFn(&scatterRows<D, ScatterReduction::Add>);
    case ScatterReduction::Mul:
      return ScatterFn(&scatterRows<D, ScatterReduction::Mul>);
    case ScatterReduction::Max:
      return ScatterFn(&scatterRows<D, ScatterReduction::Max>);
    case ScatterReduction::Min:
      break;
    }
    return ScatterFn(&scatterRows<D, ScatterReduction::Min>);
  });
}

} // namespace

struct Scatter::Impl : AxisSlices {
  DType indexType;
  int64_t bytes;
  std::vector<int64_t> ids;
  ScatterFn fn;
};

Scatter::Scatter(Context &, DType type, const Shape &data, DType indexType,
                 const Shape &indices, int64_t axis, ScatterReduction reduction)
    : impl(std::make_unique<Impl>()) {
  checkIdType("Scatter", indexType);
  Impl &p = *impl;
  static_cast<AxisSlices &>(p) = axisSlices("Scatter", data, axis);
  p.indexType = indexType;
  p.bytes = numElements(data) * int64_t(dtypeSize(type));
  p.ids.resize(size_t(numElements(indices)));
  p.fn = scatterFnFor(type, reduction);
}
Scatter::~Scatter() = default;
void Scatter::run(const void *data, const void *indices, const void *updates,
                  void *y) {
  Impl &p = *impl;
  normaliseIds("Scatter", "index", p.indexType, indices, int64_t(p.ids.size()),
               p.limit, p.ids);
  if (data != y)
    copyBytes(y, data, p.bytes);
  if (p.inner > 0 && !p.ids.empty())
    p.fn(p.ids, updates, p.outer, p.limit, p.inner, y);
}

namespace {

using PoolFn = void (*)(const void *table, const std::vector<int64_t> &ids,
                        int64_t groups, int64_t length, int64_t dim, bool mean,
                        void *y);

/// y[g][:] = sum (or mean) of table[ids[g][l]][:] over l; accumulated in the
/// compute type (float for F16/BF16), directly in y when that is the
/// storage type.
template <DType D>
void poolRows(const void *tablev, const std::vector<int64_t> &ids,
              int64_t groups, int64_t length, int64_t dim, bool mean,
              void *yv) {
  using S = typename DTypeTraits<D>::Storage;
  using C = typename DTypeTraits<D>::Compute;
  const S *table = static_cast<const S *>(tablev);
  S *y = static_cast<S *>(yv);
  const int64_t *id = ids.data();
  parallelTasks(groups, groups * length * dim * int64_t(sizeof(S)),
                [&](int64_t begin, int64_t end) {
                  std::vector<C> scratch;
                  if constexpr (!std::is_same_v<S, C>)
                    scratch.resize(size_t(dim));
                  for (int64_t g = begin; g < end; ++g) {
                    C *acc;
                    if constexpr (std::is_same_v<S, C>)
                      acc = y + g * dim;
                    else
                      acc = scratch.data();
                    std::fill(acc, acc + dim, C(0));
                    for (int64_t l = 0; l < length; ++l) {
                      const S *row = table + id[g * length + l] * dim;
                      for (int64_t j = 0; j < dim; ++j)
                        acc[j] = C(acc[j] + load(row[j]));
                    }
                    if (mean && length > 0) {
                      if constexpr (std::is_floating_point_v<C>) {
                        const C scale = C(1) / C(length);
                        for (int64_t j = 0; j < dim; ++j)
                          acc[j] *= scale;
                      } else {
                        for (int64_t j = 0; j < dim; ++j)
                          acc[j] = C(acc[j] / C(length));
                      }
                    }
                    if constexpr (!std::is_same_v<S, C>)
                      for (int64_t j = 0; j < dim; ++j)
                        y[g * dim + j] = store<S>(acc[j]);
                  }
                });
}

} // namespace

struct EmbeddingLookup::Impl {
  DType idType;
  int64_t rows, dim;
  EmbeddingPooling pooling;
  int64_t groups = 1, length = 1;
  std::vector<int64_t> ids;
  GatherFn gather = nullptr;
  PoolFn pool = nullptr;
};

EmbeddingLookup::EmbeddingLookup(Context &, DType type, int64_t rows,
                                 int64_t dim, DType idType, const Shape &ids,
                                 EmbeddingPooling pooling)
    : impl(std::make_unique<Impl>()) {
  checkIdType("EmbeddingLookup", idType);
  if (rows < 0 || dim < 0)
    throw Error("EmbeddingLookup: bad table shape " + shapeString({rows, dim}));
  Impl &p = *impl;
  p.idType = idType;
  p.rows = rows;
  p.dim = dim;
  p.pooling = pooling;
  p.ids.resize(size_t(numElements(ids)));
  if (pooling == EmbeddingPooling::None) {
    p.gather = gatherFnFor(dtypeSize(type));
    return;
  }
  const char *name = pooling == EmbeddingPooling::Sum ? "sum" : "mean";
  if (ids.empty())
    throw Error(std::string("EmbeddingLookup: ") + name +
                " pooling needs ids of rank >= 1");
  if (type == DType::Bool)
    throw Error(std::string("EmbeddingLookup: ") + name +
                " pooling is not supported for element type bool");
  p.length = ids.back();
  p.groups = numElements(Shape(ids.begin(), ids.end() - 1));
  p.pool = dispatchDType(
      type, [](auto d) { return PoolFn(&poolRows<decltype(d)::value>); });
}
EmbeddingLookup::~EmbeddingLookup() = default;
void EmbeddingLookup::run(const void *table, const void *ids, void *y) {
  Impl &p = *impl;
  normaliseIds("EmbeddingLookup", "id", p.idType, ids, int64_t(p.ids.size()),
               p.rows, p.ids);
  if (p.dim == 0)
    return;
  if (p.gather)
    p.gather(table, p.ids, 1, p.rows, p.dim, y);
  else
    p.pool(table, p.ids, p.groups, p.length, p.dim,
           p.pooling == EmbeddingPooling::Mean, y);
}

} // namespace heterps::rt::cpu
