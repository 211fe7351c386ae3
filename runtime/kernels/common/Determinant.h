//===- Determinant.h - Determinants by LU decomposition ---------*- C++ -*-===//
//
// The algorithm behind both backends' Determinant kernel (KernelAPI.inc):
// Gaussian elimination with partial pivoting, in double whatever the
// element type, so f32 inputs lose nothing to the elimination itself. The
// GPU kernel runs it on host copies: determinants are small and rare.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_COMMON_DETERMINANT_H
#define HETERPS_RUNTIME_KERNELS_COMMON_DETERMINANT_H

#include "heterps/Runtime/Types.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace heterps::rt::detail {

class DeterminantPlan {
public:
  DeterminantPlan(DType type, int64_t batch, int64_t n)
      : type(type), batch(batch), n(n) {
    if (type != DType::F32 && type != DType::F64)
      throw Error(std::string("Determinant: element type ") + dtypeName(type) +
                  " is not supported (f32 or f64)");
    if (batch < 0 || n < 0)
      throw Error("Determinant: negative batch or matrix size");
    lu.resize(size_t(n * n));
  }

  /// x: batch n x n matrices; y: batch determinants (both of `type`).
  void run(const void *x, void *y) {
    if (type == DType::F32)
      runTyped(static_cast<const float *>(x), static_cast<float *>(y));
    else
      runTyped(static_cast<const double *>(x), static_cast<double *>(y));
  }

private:
  template <typename T> void runTyped(const T *x, T *y) {
    for (int64_t b = 0; b < batch; ++b) {
      const T *matrix = x + b * n * n;
      for (int64_t i = 0; i < n * n; ++i)
        lu[size_t(i)] = double(matrix[i]);
      y[b] = T(eliminate());
    }
  }

  /// The determinant of `lu` (destroyed): the product of the pivots, its
  /// sign flipped per row swap. NaN stays NaN (a NaN pivot is kept).
  double eliminate() {
    double det = 1;
    for (int64_t k = 0; k < n; ++k) {
      int64_t pivot = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (std::fabs(at(i, k)) > std::fabs(at(pivot, k)))
          pivot = i;
      if (at(pivot, k) == 0)
        return 0;
      if (pivot != k) {
        for (int64_t j = k; j < n; ++j)
          std::swap(at(k, j), at(pivot, j));
        det = -det;
      }
      double diagonal = at(k, k);
      det *= diagonal;
      for (int64_t i = k + 1; i < n; ++i) {
        double factor = at(i, k) / diagonal;
        for (int64_t j = k + 1; j < n; ++j)
          at(i, j) -= factor * at(k, j);
      }
    }
    return det;
  }

  double &at(int64_t i, int64_t j) { return lu[size_t(i * n + j)]; }

  DType type;
  int64_t batch, n;
  std::vector<double> lu;
};

} // namespace heterps::rt::detail

#endif // HETERPS_RUNTIME_KERNELS_COMMON_DETERMINANT_H
