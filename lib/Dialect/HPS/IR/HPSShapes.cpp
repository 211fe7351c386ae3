//===- HPSShapes.cpp - Shape rules of hps ops -----------------------------===//

#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include <algorithm>

using namespace llvm;

namespace heterps::hps::shapes {

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

int64_t windowCount(int64_t input, int64_t kernel, int64_t stride,
                    int64_t padBegin, int64_t padEnd, int64_t dilation,
                    bool ceilMode) {
  if (input == kDynamic || kernel == kDynamic)
    return kDynamic;
  int64_t span = input + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t count = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window that starts past the input and its begin padding sees only end
  // padding; ONNX Runtime and PyTorch drop it.
  if (ceilMode && (count - 1) * stride >= input + padBegin)
    --count;
  return count;
}

std::optional<SmallVector<int64_t>> broadcast(ArrayRef<int64_t> lhs,
                                              ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (a == 1)
      result[i] = b;
    else if (b == 1)
      result[i] = a;
    else if (a == kDynamic)
      result[i] = b;
    else if (b == kDynamic || a == b)
      result[i] = a;
    else
      return std::nullopt;
  }
  return result;
}

bool broadcastsTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[i], t = to[offset + i];
    if (f != 1 && f != t && f != kDynamic && t != kDynamic)
      return false;
  }
  return true;
}

std::optional<SmallVector<int64_t>>
reshape(ArrayRef<int64_t> input, ArrayRef<int64_t> shape, bool allowZero) {
  SmallVector<int64_t> result;
  int64_t inferred = -1;
  bool unknown = false;
  int64_t known = 1;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    int64_t extent = dim;
    if (dim == 0 && !allowZero) {
      if (i >= input.size())
        return std::nullopt;
      extent = input[i];
    } else if (dim == -1) {
      if (inferred >= 0)
        return std::nullopt;
      inferred = i;
    } else if (dim < -1) {
      return std::nullopt;
    }
    result.push_back(extent);
    if (dim != -1) {
      if (extent == kDynamic)
        unknown = true;
      else
        known *= extent;
    }
  }
  if (inferred >= 0) {
    std::optional<int64_t> total = elementCount(input);
    if (!total || unknown)
      result[inferred] = kDynamic;
    else if (known == 0 || *total % known != 0)
      return std::nullopt;
    else
      result[inferred] = *total / known;
  } else if (std::optional<int64_t> total = elementCount(input)) {
    if (!unknown && known != *total)
      return std::nullopt;
  }
  return result;
}

int64_t sliceCount(int64_t dim, int64_t start, int64_t end, int64_t step,
                   int64_t *clampedStart) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  if (clampedStart)
    *clampedStart = start;
  int64_t count = step > 0 ? (end - start + step - 1) / step
                           : (start - end + (-step) - 1) / (-step);
  return std::max<int64_t>(count, 0);
}

std::optional<int64_t> elementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim == kDynamic)
      return std::nullopt;
    count *= dim;
  }
  return count;
}

} // namespace heterps::hps::shapes
