//===- CpuDeterminantTest.cpp - ONNX Det on the CPU -----------------------===//
//
// Hand-computed determinants (identity, a row swap, singular and 1 x 1
// matrices, f32 and f64), random matrices against the Leibniz formula, and
// the constructor's refusals.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

using namespace heterps::rt;

namespace {

template <typename T>
std::vector<T> determinants(DType type, int64_t batch, int64_t n,
                            const std::vector<T> &x) {
  cpu::Context ctx(1);
  std::vector<T> y(size_t(batch), T(-123));
  cpu::Determinant(ctx, type, batch, n).run(x.data(), y.data());
  return y;
}

/// sum over permutations of sign * product: exact for small n.
double leibniz(const std::vector<double> &m, int n) {
  std::vector<int> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  double total = 0;
  do {
    int inversions = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        inversions += perm[size_t(i)] > perm[size_t(j)];
    double product = inversions % 2 ? -1 : 1;
    for (int i = 0; i < n; ++i)
      product *= m[size_t(i * n + perm[size_t(i)])];
    total += product;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return total;
}

TEST(CpuDeterminant, HandComputed) {
  // identity; [[0, 2], [3, 4]] needs a row swap: 0*4 - 2*3 = -6; a singular
  // matrix; [[2, 1], [1, 3]] = 5.
  std::vector<float> x = {1, 0, 0, 1, 0, 2, 3, 4, 1, 2, 2, 4, 2, 1, 1, 3};
  std::vector<float> y = determinants(DType::F32, 4, 2, x);
  EXPECT_FLOAT_EQ(y[0], 1);
  EXPECT_FLOAT_EQ(y[1], -6);
  EXPECT_FLOAT_EQ(y[2], 0);
  EXPECT_FLOAT_EQ(y[3], 5);
  std::vector<double> one = determinants<double>(DType::F64, 2, 1, {-2.5, 7});
  EXPECT_DOUBLE_EQ(one[0], -2.5);
  EXPECT_DOUBLE_EQ(one[1], 7);
}

TEST(CpuDeterminant, RandomMatricesMatchLeibniz) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> value(-2, 2);
  for (int n : {3, 4, 5, 6}) {
    const int batch = 7;
    std::vector<double> x(size_t(batch * n * n));
    for (double &v : x)
      v = value(rng);
    std::vector<double> y = determinants(DType::F64, batch, n, x);
    std::vector<float> xf(x.begin(), x.end());
    std::vector<float> yf = determinants(DType::F32, batch, n, xf);
    for (int b = 0; b < batch; ++b) {
      std::vector<double> m(x.begin() + b * n * n, x.begin() + (b + 1) * n * n);
      std::vector<double> mf(xf.begin() + b * n * n,
                             xf.begin() + (b + 1) * n * n);
      EXPECT_NEAR(y[size_t(b)], leibniz(m, n), 1e-10) << "n " << n;
      EXPECT_NEAR(yf[size_t(b)], leibniz(mf, n),
                  1e-5 * std::max(1.0, std::fabs(leibniz(mf, n))))
          << "n " << n;
    }
  }
}

TEST(CpuDeterminant, NaNPropagates) {
  std::vector<float> y = determinants<float>(DType::F32, 1, 2, {NAN, 1, 2, 3});
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(CpuDeterminant, RefusesOtherTypes) {
  cpu::Context ctx(1);
  try {
    cpu::Determinant(ctx, DType::I32, 1, 2);
    ADD_FAILURE() << "i32 was accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("Determinant: element type i32"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
