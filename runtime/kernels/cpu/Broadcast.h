//===- Broadcast.h - Strided iteration plans --------------------*- C++ -*-===//
//
// Private to the CPU elementwise and data-movement kernels. A StridedPlan
// walks a dense row-major output and, for each of up to three operands, an
// element stride per output axis (0 for broadcast axes, negative for
// reversed slices). Axes the operands all traverse contiguously are merged
// at construction, so that the work becomes rows of one inner span whose
// loop the compiler vectorises; forEachSpan spreads rows (or pieces of a
// long row) over OpenMP threads when the output is large.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_BROADCAST_H
#define HETERPS_RUNTIME_KERNELS_CPU_BROADCAST_H

#include "CpuContext.h"
#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <array>
#include <omp.h>
#include <vector>

namespace heterps::rt::cpu {

constexpr int kMaxOperands = 3;
/// Below this many output elements a kernel runs on the calling thread:
/// waking the OpenMP team costs more than it saves (worthThreads for a
/// memory-bound op: 64K elements).
constexpr int64_t kParallelElements =
    int64_t(kMinParallelWork / kCheapElementWork);

struct StridedPlan {
  int operands = 0;
  int64_t total = 0;
  /// The merged innermost axis.
  int64_t inner = 1;
  std::array<int64_t, kMaxOperands> innerStride{};
  /// The merged outer axes, outermost first, and the operands' strides.
  std::vector<int64_t> outer;
  std::vector<std::array<int64_t, kMaxOperands>> outerStrides;
  int64_t rows = 1;
  /// Elements per span beyond which one row is split between threads.
  int64_t parallelThreshold = kParallelElements;
};

/// Builds a plan from the output extents and each operand's strides per
/// output axis (all the same rank). Unit output axes are dropped and
/// contiguous neighbours merged.
inline StridedPlan
makeStridedPlan(const Shape &out,
                const std::vector<std::vector<int64_t>> &strides) {
  StridedPlan plan;
  plan.operands = int(strides.size());
  plan.total = numElements(out);
  // Merge from the innermost axis outwards.
  std::vector<int64_t> extents;
  std::vector<std::array<int64_t, kMaxOperands>> axisStrides;
  for (int64_t d = int64_t(out.size()) - 1; d >= 0; --d) {
    if (out[d] == 1)
      continue;
    std::array<int64_t, kMaxOperands> s{};
    for (int k = 0; k < plan.operands; ++k)
      s[k] = strides[k][d];
    if (!extents.empty()) {
      bool mergeable = true;
      for (int k = 0; k < plan.operands; ++k)
        mergeable &= s[k] == axisStrides.back()[k] * extents.back();
      if (mergeable) {
        extents.back() *= out[d];
        continue;
      }
    }
    extents.push_back(out[d]);
    axisStrides.push_back(s);
  }
  if (!extents.empty()) {
    plan.inner = extents.front();
    plan.innerStride = axisStrides.front();
    for (size_t i = extents.size(); i-- > 1;) {
      plan.outer.push_back(extents[i]);
      plan.outerStrides.push_back(axisStrides[i]);
    }
  }
  plan.rows = plan.inner ? plan.total / plan.inner : 0;
  return plan;
}

/// Contiguous row-major strides of `shape`.
inline std::vector<int64_t> contiguousStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

/// numpy broadcasting of `in` to `out`: strides per output axis, 0 where
/// `in` is broadcast. Throws Error naming `kernel` and `operand` when the
/// shapes do not broadcast.
inline std::vector<int64_t> broadcastStrides(const char *kernel,
                                             const char *operand,
                                             const Shape &in,
                                             const Shape &out) {
  auto fail = [&]() {
    throw Error(std::string(kernel) + ": " + operand + " shape " +
                shapeString(in) + " does not broadcast to " + shapeString(out));
  };
  if (in.size() > out.size())
    fail();
  std::vector<int64_t> inStrides = contiguousStrides(in);
  std::vector<int64_t> strides(out.size(), 0);
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out[offset + i])
      strides[offset + i] = in[i] == 1 ? 0 : inStrides[i];
    else if (in[i] != 1)
      fail();
  }
  return strides;
}

/// Calls f(outOffset, operandOffsets, length) for every span of the plan;
/// operand k's elements are at operandOffsets[k] + i * innerStride[k].
/// Parallel when the plan is large; f must not throw.
template <typename F> void forEachSpan(const StridedPlan &plan, F &&f) {
  if (plan.total == 0)
    return;
  const int64_t inner = plan.inner;
  const size_t depth = plan.outer.size();
  // Runs rows [begin, end) with a counter per outer axis.
  auto runRows = [&](int64_t begin, int64_t end) {
    std::array<int64_t, kMaxOperands> offsets{};
    int64_t counters[16];
    std::vector<int64_t> counterHeap;
    int64_t *index = counters;
    if (depth > 16) {
      counterHeap.resize(depth);
      index = counterHeap.data();
    }
    int64_t rest = begin;
    for (size_t d = depth; d-- > 0;) {
      index[d] = rest % plan.outer[d];
      rest /= plan.outer[d];
      for (int k = 0; k < plan.operands; ++k)
        offsets[k] += index[d] * plan.outerStrides[d][k];
    }
    for (int64_t row = begin; row < end; ++row) {
      f(row * inner, offsets.data(), inner);
      for (size_t d = depth; d-- > 0;) {
        for (int k = 0; k < plan.operands; ++k)
          offsets[k] += plan.outerStrides[d][k];
        if (++index[d] < plan.outer[d])
          break;
        for (int k = 0; k < plan.operands; ++k)
          offsets[k] -= plan.outer[d] * plan.outerStrides[d][k];
        index[d] = 0;
      }
    }
  };
  int threads =
      plan.total >= plan.parallelThreshold ? omp_get_max_threads() : 1;
  if (threads <= 1) {
    runRows(0, plan.rows);
    return;
  }
  if (plan.rows >= 4 * int64_t(threads)) {
    // Enough rows: contiguous blocks of rows per thread.
#pragma omp parallel num_threads(threads)
    {
      int64_t team = omp_get_num_threads(), id = omp_get_thread_num();
      int64_t begin = plan.rows * id / team;
      int64_t end = plan.rows * (id + 1) / team;
      if (begin < end)
        runRows(begin, end);
    }
    return;
  }
  // Few long rows: cut each into pieces (a multiple of 64 elements).
  int64_t pieceLength =
      std::max<int64_t>(4096, (plan.total / (4 * threads) + 63) / 64 * 64);
  int64_t pieces = (inner + pieceLength - 1) / pieceLength;
  int64_t tasks = plan.rows * pieces;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t task = 0; task < tasks; ++task) {
    int64_t row = task / pieces, piece = task % pieces;
    std::array<int64_t, kMaxOperands> offsets{};
    int64_t rest = row;
    for (size_t d = depth; d-- > 0;) {
      int64_t i = rest % plan.outer[d];
      rest /= plan.outer[d];
      for (int k = 0; k < plan.operands; ++k)
        offsets[k] += i * plan.outerStrides[d][k];
    }
    int64_t start = piece * pieceLength;
    for (int k = 0; k < plan.operands; ++k)
      offsets[k] += start * plan.innerStride[k];
    f(row * inner + start, offsets.data(),
      std::min(pieceLength, inner - start));
  }
}

/// Runs body(begin, end) over [0, n) in blocks, on OpenMP threads when n is
/// at least `threshold`. Blocks are multiples of 64 elements.
template <typename F>
void parallelBlocks(int64_t n, F &&body,
                    int64_t threshold = kParallelElements) {
  if (n <= 0)
    return;
  int threads = n >= threshold ? omp_get_max_threads() : 1;
  if (threads <= 1) {
    body(int64_t(0), n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int64_t team = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t blocks = (n + 63) / 64;
    int64_t begin = std::min(n, blocks * id / team * 64);
    int64_t end = std::min(n, blocks * (id + 1) / team * 64);
    if (begin < end)
      body(begin, end);
  }
}

} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_KERNELS_CPU_BROADCAST_H
