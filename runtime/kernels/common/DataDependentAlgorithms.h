//===- DataDependentAlgorithms.h - NonZero, Unique, NMS ---------*- C++ -*-===//
//
// The algorithms behind both backends' NonZero, Unique and
// NonMaxSuppression (KernelAPI.inc has their contracts): the CPU kernels run
// them on their operands, the GPU kernels on host copies, so both backends
// give the same results. Plain C++ (no oneDNN, no CUDA). A kernel builds one
// plan per op in its constructor; the plan validates the parameters and owns
// every scratch buffer, so run() only reads, sorts and writes.
//
// NonMaxSuppression computes IoUs in float exactly as ONNX's reference does;
// files that include this header build with -ffp-contract=off, so that no
// fused multiply-add moves a borderline comparison.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_COMMON_DATADEPENDENTALGORITHMS_H
#define HETERPS_RUNTIME_KERNELS_COMMON_DATADEPENDENTALGORITHMS_H

#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace heterps::rt::detail {

//===----------------------------------------------------------------------===//
// Element policies: how NonZero tests and Unique orders an element type
//===----------------------------------------------------------------------===//
//
// `less` is a total preorder so that sorting is well defined: NaN above
// every number and equivalent to NaN, -0 equivalent to +0. `equal` is the
// API's "compares equal" (IEEE ==): -0 equals +0, and a NaN equals nothing,
// so every slice holding a NaN is distinct (numpy 2's unique merges NaNs).

/// Integers, float, double; Bool as its uint8_t byte.
template <typename T> struct NumberOps {
  using Storage = T;
  static bool nonzero(T value) { return value != T(0); }
  static bool less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a))
        return false;
      if (std::isnan(b))
        return true;
    }
    return a < b;
  }
  static bool equal(T a, T b) { return a == b; }
};

/// Bits of +infinity: NaNs are the magnitudes above it.
constexpr uint16_t kHalfInfinityBits = 0x7c00;
constexpr uint16_t kBFloat16InfinityBits = 0x7f80;

/// A 16-bit IEEE-style float (binary16, bfloat16) stored as bits in any
/// trivially copyable 2-byte S. Sign-magnitude order needs no conversion to
/// float: magnitudes order like the values they encode.
template <typename S, uint16_t InfinityBits> struct Binary16Ops {
  static_assert(sizeof(S) == 2 && std::is_trivially_copyable_v<S>,
                "16-bit floats are stored as two bytes");
  using Storage = S;
  static uint16_t bits(S value) {
    uint16_t b;
    std::memcpy(&b, &value, 2);
    return b;
  }
  static bool isNan(uint16_t b) { return (b & 0x7fff) > InfinityBits; }
  /// Order of a non-NaN; -0 and +0 both 0.
  static int32_t key(uint16_t b) {
    int32_t magnitude = b & 0x7fff;
    return (b & 0x8000) ? -magnitude : magnitude;
  }
  static bool nonzero(S value) { return (bits(value) & 0x7fff) != 0; }
  static bool less(S a, S b) {
    uint16_t x = bits(a), y = bits(b);
    if (isNan(x))
      return false;
    if (isNan(y))
      return true;
    return key(x) < key(y);
  }
  static bool equal(S a, S b) {
    uint16_t x = bits(a), y = bits(b);
    return !isNan(x) && !isNan(y) && key(x) == key(y);
  }
};

/// The product of `factors`, or Error("KERNEL: WHAT overflows int64") when
/// the buffer it sizes could not exist.
inline int64_t checkedProduct(const char *kernel, const char *what,
                              std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors)
    if (__builtin_mul_overflow(product, factor, &product))
      throw Error(std::string(kernel) + ": " + what + " overflows int64");
  return product;
}

inline void checkNotNegative(const char *kernel, const char *what,
                             int64_t value) {
  if (value < 0)
    throw Error(std::string(kernel) + ": " + what + " " +
                std::to_string(value) + " is negative");
}

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

/// NonZero of a tensor of shape `x`: indices [rank, numel] I64.
class NonZeroPlan {
public:
  NonZeroPlan(const char *kernel, const Shape &x) : dims(x), coords(x.size()) {
    for (int64_t extent : x)
      if (extent < 0)
        throw Error(std::string(kernel) + ": x has a negative extent in " +
                    shapeString(x));
    for (int64_t extent : x)
      n = checkedProduct(kernel, "x's element count", {n, extent});
    checkedProduct(kernel, "the size of indices", {int64_t(x.size()), n});
  }

  int64_t rank() const { return int64_t(dims.size()); }
  int64_t numel() const { return n; }

  /// Writes the coordinates of x's nonzero elements (row-major order) into
  /// the first `count` columns of indices and returns count; with
  /// zeroPadding, also zeroes the other columns. A rank-0 x writes nothing
  /// and counts its one element.
  template <class Ops>
  int64_t run(const typename Ops::Storage *x, int64_t *indices,
              bool zeroPadding) {
    const int64_t r = rank();
    if (r == 0)
      return Ops::nonzero(x[0]) ? 1 : 0;
    int64_t count = 0;
    if (n > 0) {
      // One pass: a nonzero's column is the count so far, whatever the
      // total. The leading coordinates only change between rows of the
      // innermost axis.
      const int64_t last = dims.back(), rows = n / last;
      int64_t *lastRow = indices + (r - 1) * n;
      std::fill(coords.begin(), coords.end(), 0);
      for (int64_t row = 0; row < rows; ++row) {
        const typename Ops::Storage *values = x + row * last;
        for (int64_t j = 0; j < last; ++j) {
          if (!Ops::nonzero(values[j]))
            continue;
          for (int64_t d = 0; d + 1 < r; ++d)
            indices[d * n + count] = coords[d];
          lastRow[count++] = j;
        }
        for (int64_t d = r - 2; d >= 0; --d) {
          if (++coords[d] < dims[d])
            break;
          coords[d] = 0;
        }
      }
    }
    if (zeroPadding)
      for (int64_t d = 0; d < r; ++d)
        std::fill(indices + d * n + count, indices + (d + 1) * n, int64_t(0));
    return count;
  }

private:
  Shape dims;
  int64_t n = 1;
  std::vector<int64_t> coords;
};

/// A NonZeroPlan::run instance behind a pointer a kernel picks once.
using NonZeroFn = int64_t (*)(NonZeroPlan &plan, const void *x,
                              int64_t *indices, bool zeroPadding);
template <class Ops>
int64_t runNonZero(NonZeroPlan &plan, const void *x, int64_t *indices,
                   bool zeroPadding) {
  return plan.run<Ops>(static_cast<const typename Ops::Storage *>(x), indices,
                       zeroPadding);
}

//===----------------------------------------------------------------------===//
// Unique
//===----------------------------------------------------------------------===//

/// Unique over the `extent` slices of x viewed as [outer, extent, inner].
class UniquePlan {
public:
  UniquePlan(const char *kernel, size_t elementBytes, int64_t outer,
             int64_t extent, int64_t inner, bool sorted)
      : outer(outer), extent(extent), inner(inner), sorted(sorted) {
    checkNotNegative(kernel, "outer", outer);
    checkNotNegative(kernel, "extent", extent);
    checkNotNegative(kernel, "inner", inner);
    sliceSize = checkedProduct(kernel, "the slice size", {outer, inner});
    int64_t elements = checkedProduct(kernel, "x's size", {sliceSize, extent});
    checkedProduct(kernel, "x's size in bytes",
                   {elements, int64_t(elementBytes)});
    order.resize(size_t(extent));
    groupFirst.resize(size_t(extent));
    groupCount.resize(size_t(extent));
    // Slices are strided when outer > 1: comparisons then read a contiguous
    // copy, one slice per row.
    if (outer > 1)
      gathered.resize(size_t(elements) * elementBytes);
  }

  /// Writes y's first `count` slices (zeroes the rest with zeroPadding),
  /// the first `count` entries of firstIndices and counts (likewise), all
  /// of inverse, and returns count.
  template <class Ops>
  int64_t run(const typename Ops::Storage *x, typename Ops::Storage *y,
              int64_t *firstIndices, int64_t *inverse, int64_t *counts,
              bool zeroPadding) {
    using S = typename Ops::Storage;
    const int64_t size = sliceSize;
    const S *slices = x;
    if (outer > 1) {
      S *rows = reinterpret_cast<S *>(gathered.data());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < extent; ++k)
          std::copy_n(x + (o * extent + k) * inner, inner,
                      rows + k * size + o * inner);
      slices = rows;
    }

    // Ties broken by index: the order of a stable sort, without the
    // buffer std::stable_sort allocates. A group's first member is then
    // where its slice first occurs.
    std::iota(order.begin(), order.end(), int64_t(0));
    if (size == 1)
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        if (Ops::less(slices[a], slices[b]))
          return true;
        if (Ops::less(slices[b], slices[a]))
          return false;
        return a < b;
      });
    else
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const S *p = slices + a * size, *q = slices + b * size;
        for (int64_t j = 0; j < size; ++j) {
          if (Ops::less(p[j], q[j]))
            return true;
          if (Ops::less(q[j], p[j]))
            return false;
        }
        return a < b;
      });

    // Equal slices are adjacent now (equal implies equivalent, and within
    // one equivalence class slices are either all equal or all NaN-holding
    // singletons), so each group is a run equal to its first member.
    int64_t count = 0;
    for (int64_t j = 0; j < extent; ++j) {
      const int64_t k = order[j];
      if (count == 0 || !equalSlices<Ops>(slices, k, groupFirst[count - 1])) {
        groupFirst[count] = k;
        groupCount[count] = 0;
        ++count;
      }
      ++groupCount[count - 1];
      inverse[k] = count - 1;
    }

    if (sorted) {
      std::copy_n(groupFirst.begin(), count, firstIndices);
      std::copy_n(groupCount.begin(), count, counts);
    } else {
      // Renumber groups by first occurrence: the first slice met of a group
      // is its first occurrence. `order` is free again.
      std::vector<int64_t> &position = order;
      std::fill_n(position.begin(), count, int64_t(-1));
      int64_t next = 0;
      for (int64_t k = 0; k < extent; ++k) {
        int64_t &at = position[size_t(inverse[k])];
        if (at < 0)
          at = next++;
        inverse[k] = at;
      }
      for (int64_t g = 0; g < count; ++g) {
        firstIndices[position[g]] = groupFirst[g];
        counts[position[g]] = groupCount[g];
      }
    }

    for (int64_t o = 0; o < outer; ++o) {
      S *row = y + o * extent * inner;
      for (int64_t g = 0; g < count; ++g)
        std::copy_n(x + (o * extent + firstIndices[g]) * inner, inner,
                    row + g * inner);
      if (zeroPadding && count < extent && inner > 0)
        std::memset(static_cast<void *>(row + count * inner), 0,
                    size_t((extent - count) * inner) * sizeof(S));
    }
    if (zeroPadding) {
      std::fill(firstIndices + count, firstIndices + extent, int64_t(0));
      std::fill(counts + count, counts + extent, int64_t(0));
    }
    return count;
  }

private:
  template <class Ops>
  bool equalSlices(const typename Ops::Storage *slices, int64_t a,
                   int64_t b) const {
    const typename Ops::Storage *p = slices + a * sliceSize,
                                *q = slices + b * sliceSize;
    for (int64_t j = 0; j < sliceSize; ++j)
      if (!Ops::equal(p[j], q[j]))
        return false;
    return true;
  }

  int64_t outer, extent, inner, sliceSize = 0;
  bool sorted;
  std::vector<int64_t> order, groupFirst, groupCount;
  std::vector<unsigned char> gathered;
};

/// A UniquePlan::run instance behind a pointer a kernel picks once.
using UniqueFn = int64_t (*)(UniquePlan &plan, const void *x, void *y,
                             int64_t *firstIndices, int64_t *inverse,
                             int64_t *counts, bool zeroPadding);
template <class Ops>
int64_t runUnique(UniquePlan &plan, const void *x, void *y,
                  int64_t *firstIndices, int64_t *inverse, int64_t *counts,
                  bool zeroPadding) {
  using S = typename Ops::Storage;
  return plan.run<Ops>(static_cast<const S *>(x), static_cast<S *>(y),
                       firstIndices, inverse, counts, zeroPadding);
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

/// ONNX NonMaxSuppression over boxes [batches, boxes, 4] and scores
/// [batches, classes, boxes], into selected [capacity, 3].
class NmsPlan {
public:
  NmsPlan(const char *kernel, int64_t batches, int64_t classes, int64_t boxes,
          bool centerPointBox, int64_t capacity)
      : kernel(kernel), batches(batches), classes(classes), boxes(boxes),
        capacity(capacity), centerPointBox(centerPointBox) {
    checkNotNegative(kernel, "batches", batches);
    checkNotNegative(kernel, "classes", classes);
    checkNotNegative(kernel, "boxes", boxes);
    checkNotNegative(kernel, "capacity", capacity);
    checkedProduct(kernel, "the size of boxes", {batches, boxes, 4});
    checkedProduct(kernel, "the size of scores", {batches, classes, boxes});
    checkedProduct(kernel, "the size of selected", {capacity, 3});
    rects.resize(size_t(boxes));
    candidates.resize(size_t(boxes));
    kept.resize(size_t(boxes));
  }

  int64_t boxesSize() const { return batches * boxes * 4; }
  int64_t scoresSize() const { return batches * classes * boxes; }

  /// Optional scalars are host pointers or null. Writes the selections'
  /// rows into selected (with zeroPadding, zeroes the other rows) and
  /// returns their number; throws Error when there are more than capacity.
  int64_t run(const float *boxData, const float *scores,
              const int64_t *maxPerClass, const float *iouThreshold,
              const float *scoreThreshold, int64_t *selected,
              bool zeroPadding) {
    const int64_t limit = maxPerClass ? std::max<int64_t>(*maxPerClass, 0) : 0;
    const float iou = iouThreshold ? *iouThreshold : 0.0f;
    int64_t count = 0;
    for (int64_t b = 0; b < batches && limit > 0; ++b) {
      prepareRects(boxData + b * boxes * 4);
      for (int64_t c = 0; c < classes; ++c) {
        const float *classScores = scores + (b * classes + c) * boxes;
        int64_t candidateCount = 0;
        for (int64_t i = 0; i < boxes; ++i)
          // NaN fails `>`, so it is never above a threshold.
          if (!scoreThreshold || classScores[i] > *scoreThreshold)
            candidates[candidateCount++] = {classScores[i], i};
        std::sort(candidates.begin(), candidates.begin() + candidateCount,
                  before);
        int64_t keptCount = 0;
        for (int64_t j = 0; j < candidateCount && keptCount < limit; ++j) {
          const int64_t box = candidates[j].index;
          bool suppressed = false;
          for (int64_t k = 0; k < keptCount && !suppressed; ++k)
            suppressed = suppresses(rects[box], rects[kept[k]], iou);
          if (suppressed)
            continue;
          kept[keptCount++] = box;
          if (count == capacity)
            throw Error(std::string(kernel) + ": more than " +
                        std::to_string(capacity) +
                        " boxes selected, the capacity of selected");
          int64_t *row = selected + count * 3;
          row[0] = b;
          row[1] = c;
          row[2] = box;
          ++count;
        }
      }
    }
    if (zeroPadding)
      std::fill(selected + count * 3, selected + capacity * 3, int64_t(0));
    return count;
  }

private:
  /// A box's extents and area, computed once per batch with the reference's
  /// float operations.
  struct Rect {
    float xMin, xMax, yMin, yMax, area;
  };
  struct Candidate {
    float score;
    int64_t index;
  };

  /// Descending score, then ascending index; NaN scores (possible without a
  /// score threshold) last, so the order is total.
  static bool before(const Candidate &a, const Candidate &b) {
    bool aNan = std::isnan(a.score), bNan = std::isnan(b.score);
    if (aNan != bNan)
      return bNan;
    if (!aNan && a.score != b.score)
      return a.score > b.score;
    return a.index < b.index;
  }

  /// The reference's max_min: (min, max) of two coordinates.
  static void order(float lhs, float rhs, float &lo, float &hi) {
    bool swap = lhs >= rhs;
    lo = swap ? rhs : lhs;
    hi = swap ? lhs : rhs;
  }

  void prepareRects(const float *batchBoxes) {
    for (int64_t i = 0; i < boxes; ++i) {
      const float *box = batchBoxes + i * 4;
      Rect &r = rects[i];
      if (centerPointBox) {
        // [x_center, y_center, width, height]
        float halfWidth = box[2] / 2, halfHeight = box[3] / 2;
        r.xMin = box[0] - halfWidth;
        r.xMax = box[0] + halfWidth;
        r.yMin = box[1] - halfHeight;
        r.yMax = box[1] + halfHeight;
      } else {
        // [y1, x1, y2, x2], corners in either order
        order(box[1], box[3], r.xMin, r.xMax);
        order(box[0], box[2], r.yMin, r.yMax);
      }
      r.area = (r.xMax - r.xMin) * (r.yMax - r.yMin);
    }
  }

  /// The reference's suppress_by_iou: whether `candidate` overlaps `kept`
  /// by more than `threshold`. std::max/min pick like Python's max/min,
  /// NaN included.
  static bool suppresses(const Rect &candidate, const Rect &kept,
                         float threshold) {
    float xMin = std::max(candidate.xMin, kept.xMin);
    float xMax = std::min(candidate.xMax, kept.xMax);
    if (xMax <= xMin)
      return false;
    float yMin = std::max(candidate.yMin, kept.yMin);
    float yMax = std::min(candidate.yMax, kept.yMax);
    if (yMax <= yMin)
      return false;
    float intersection = (xMax - xMin) * (yMax - yMin);
    if (intersection <= 0)
      return false;
    float unionArea = candidate.area + kept.area - intersection;
    if (candidate.area <= 0 || kept.area <= 0 || unionArea <= 0)
      return false;
    return intersection / unionArea > threshold;
  }

  const char *kernel;
  int64_t batches, classes, boxes, capacity;
  bool centerPointBox;
  std::vector<Rect> rects;
  std::vector<Candidate> candidates;
  std::vector<int64_t> kept;
};

} // namespace heterps::rt::detail

#endif // HETERPS_RUNTIME_KERNELS_COMMON_DATADEPENDENTALGORITHMS_H
