//===- GpuKernelsSmokeTest.cpp - GPU kernels against host references ------===//
//
// Runs a few kernels of every family on the GPU and compares with naive host
// loops. Without a CUDA device only the Context's error message is checked
// and the rest is skipped.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/GpuKernels.h"

#include "DeviceFixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace heterps::rt;
using namespace heterps::rt::gpu;

namespace {

TEST(GpuContext, ConstructsOrExplainsWhyNot) {
  try {
    Context ctx(0);
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("no usable CUDA device"), std::string::npos)
        << message;
    EXPECT_NE(message.find("--gpu-stages-on-cpu"), std::string::npos)
        << message;
  }
}

/// Shares one context; skips every test when no device exists.
class GpuKernels : public test::DeviceFixture<Context> {
protected:
  void *deviceZeros(size_t bytes) {
    std::vector<char> zeros(bytes, 0);
    return device(zeros);
  }

  template <typename T> std::vector<T> host(const void *pointer, size_t n) {
    return download<T>(pointer, n);
  }

  static std::vector<float> ramp(size_t n, float scale = 0.37f) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i)
      values[i] = std::sin(float(i) * scale) * 2.0f;
    return values;
  }

  static void expectNear(const std::vector<float> &got,
                         const std::vector<float> &want, float tolerance) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
  }
};

TEST_F(GpuKernels, GemmBroadcastCTransBRelu) {
  const int64_t m = 3, n = 4, k = 5;
  const float alpha = 0.5f, beta = 2.0f;
  std::vector<float> a = ramp(m * k), b = ramp(n * k, 0.71f), c = ramp(n, 1.3f);
  Shape cShape{n};
  Activation relu{UnaryKind::Relu, {}};
  Gemm gemm(*context, DType::F32, m, n, k, false, true, alpha, beta, &cShape,
            relu, true);
  void *y = deviceZeros(m * n * sizeof(float));
  gemm.run(device(a), device(b), device(c), y);
  std::vector<float> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[j * k + p]; // B is [N, K]
      want[i * n + j] = std::max(0.0f, alpha * sum + beta * c[j]);
    }
  expectNear(host<float>(y, m * n), want, 1e-5f);
}

TEST_F(GpuKernels, MatMulBatchBroadcast) {
  // a [2, 1, 3, 4] x b [3, 4, 2] -> y [2, 3, 3, 2]
  std::vector<float> a = ramp(2 * 3 * 4), b = ramp(3 * 4 * 2, 0.53f);
  MatMul matmul(*context, DType::F32, {2, 1, 3, 4}, {3, 4, 2}, {2, 3, 3, 2}, {},
                false);
  void *y = deviceZeros(2 * 3 * 3 * 2 * sizeof(float));
  matmul.run(device(a), device(b), y);
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 2; ++c) {
          float sum = 0;
          for (int p = 0; p < 4; ++p)
            sum += a[(i * 3 + r) * 4 + p] * b[(j * 4 + p) * 2 + c];
          want.push_back(sum);
        }
  expectNear(host<float>(y, want.size()), want, 1e-5f);
}

TEST_F(GpuKernels, ConvGroupedAsymmetricPadBias) {
  // x [1, 4, 5, 6], w [4, 2, 3, 3], group 2, pads begin {1, 0} end {0, 1}.
  const int64_t cin = 4, cout = 4, h = 5, w = 6, kh = 3, kw = 3, group = 2;
  const int64_t oh = h + 1 - kh + 1, ow = w + 1 - kw + 1;
  std::vector<float> x = ramp(cin * h * w), wt = ramp(cout * 2 * kh * kw, 0.9f),
                     bias = {0.1f, -0.2f, 0.3f, -0.4f};
  Conv conv(*context, DType::F32, {1, cin, h, w}, {cout, 2, kh, kw}, true,
            {1, cout, oh, ow}, {1, 1}, {1, 1}, {1, 0}, {0, 1}, group, {}, true);
  void *y = deviceZeros(cout * oh * ow * sizeof(float));
  conv.run(device(x), device(wt), device(bias), y);
  std::vector<float> want(cout * oh * ow);
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t c = 0; c < ow; ++c) {
        float sum = bias[o];
        int64_t g = o / (cout / group);
        for (int64_t ci = 0; ci < cin / group; ++ci)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t ir = r - 1 + i, ic = c + j;
              if (ir < 0 || ir >= h || ic < 0 || ic >= w)
                continue;
              sum += x[((g * (cin / group) + ci) * h + ir) * w + ic] *
                     wt[((o * (cin / group) + ci) * kh + i) * kw + j];
            }
        want[(o * oh + r) * ow + c] = sum;
      }
  expectNear(host<float>(y, want.size()), want, 1e-4f);
}

TEST_F(GpuKernels, ConvGradsGroupedStridedAsymmetricPad) {
  // x [2, 4, 5, 6], w [4, 2, 3, 3], group 2, strides {2, 1}, pads begin
  // {1, 0} end {0, 1}: y [2, 4, 2, 5]. The references scatter every
  // multiply-add of the forward loop onto its two factors.
  const int64_t n = 2, cin = 4, cout = 4, h = 5, w = 6, kh = 3, kw = 3;
  const int64_t group = 2, sh = 2, oh = (h + 1 - kh) / sh + 1,
                ow = w + 1 - kw + 1;
  const int64_t perGroup = cin / group;
  std::vector<float> x = ramp(n * cin * h * w),
                     wt = ramp(cout * perGroup * kh * kw, 0.9f),
                     dy = ramp(n * cout * oh * ow, 0.61f);
  std::vector<float> dxWant(x.size(), 0.f), dwWant(wt.size(), 0.f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t c = 0; c < ow; ++c) {
          float grad = dy[((b * cout + o) * oh + r) * ow + c];
          int64_t g = o / (cout / group);
          for (int64_t ci = 0; ci < perGroup; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t ir = r * sh - 1 + i, ic = c + j;
                if (ir < 0 || ir >= h || ic < 0 || ic >= w)
                  continue;
                int64_t xi = ((b * cin + g * perGroup + ci) * h + ir) * w + ic;
                int64_t wi = ((o * perGroup + ci) * kh + i) * kw + j;
                dxWant[xi] += grad * wt[wi];
                dwWant[wi] += grad * x[xi];
              }
        }
  Shape xs{n, cin, h, w}, ws{cout, perGroup, kh, kw}, ys{n, cout, oh, ow};
  ConvGradInput gradInput(*context, DType::F32, xs, ws, ys, {sh, 1}, {1, 1},
                          {1, 0}, {0, 1}, group);
  ConvGradFilter gradFilter(*context, DType::F32, xs, ws, ys, {sh, 1}, {1, 1},
                            {1, 0}, {0, 1}, group);
  void *dx = deviceZeros(x.size() * sizeof(float));
  void *dw = deviceZeros(wt.size() * sizeof(float));
  gradInput.run(device(dy), device(wt), dx);
  gradFilter.run(device(x), device(dy), dw);
  expectNear(host<float>(dx, x.size()), dxWant, 1e-4f);
  expectNear(host<float>(dw, wt.size()), dwWant, 1e-3f);
}

TEST_F(GpuKernels, BinaryBroadcastAndCompare) {
  // a [2, 3, 1] - b [4] -> [2, 3, 4]; a < b -> bool.
  std::vector<float> a = ramp(6), b = ramp(4, 1.1f);
  Binary sub(*context, BinaryKind::Sub, DType::F32, {2, 3, 1}, {4}, {2, 3, 4});
  Binary less(*context, BinaryKind::Less, DType::F32, {2, 3, 1}, {4},
              {2, 3, 4});
  void *da = device(a), *db = device(b);
  void *y = deviceZeros(24 * sizeof(float)), *mask = deviceZeros(24);
  sub.run(da, db, y);
  less.run(da, db, mask);
  std::vector<float> want;
  std::vector<uint8_t> wantMask;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) {
      want.push_back(a[i] - b[j]);
      wantMask.push_back(a[i] < b[j]);
    }
  expectNear(host<float>(y, 24), want, 1e-6f);
  EXPECT_EQ(host<uint8_t>(mask, 24), wantMask);
}

TEST_F(GpuKernels, SoftmaxStridedAndLogRows) {
  // Softmax over the middle axis of [2, 3, 4] (strided kernel) and
  // log-softmax over rows of 100 (block kernel).
  std::vector<float> x = ramp(24);
  Softmax softmax(*context, DType::F32, {2, 3, 4}, 1, false);
  void *y = deviceZeros(24 * sizeof(float));
  softmax.run(device(x), y);
  std::vector<float> want(24);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 4; ++i) {
      float sum = 0;
      for (int j = 0; j < 3; ++j)
        sum += std::exp(x[(o * 3 + j) * 4 + i]);
      for (int j = 0; j < 3; ++j)
        want[(o * 3 + j) * 4 + i] = std::exp(x[(o * 3 + j) * 4 + i]) / sum;
    }
  expectNear(host<float>(y, 24), want, 1e-6f);

  std::vector<float> rows = ramp(200, 0.13f);
  Softmax logSoftmax(*context, DType::F32, {2, 100}, 1, true);
  void *ly = deviceZeros(200 * sizeof(float));
  logSoftmax.run(device(rows), ly);
  std::vector<float> wantLog(200);
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int j = 0; j < 100; ++j)
      sum += std::exp(double(rows[r * 100 + j]));
    for (int j = 0; j < 100; ++j)
      wantLog[r * 100 + j] = float(rows[r * 100 + j] - std::log(sum));
  }
  expectNear(host<float>(ly, 200), wantLog, 1e-5f);
}

TEST_F(GpuKernels, ReduceSumMaxLogSumExp) {
  std::vector<float> x = ramp(3 * 4 * 5);
  void *dx = device(x);
  // Sum over axes {0, 2} of [3, 4, 5] -> [4].
  Reduce sum(*context, DType::F32, ReduceKind::Sum, {3, 4, 5}, {0, 2}, {4});
  void *ys = deviceZeros(4 * sizeof(float));
  sum.run(dx, ys);
  std::vector<float> wantSum(4, 0.0f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k)
        wantSum[j] += x[(i * 4 + j) * 5 + k];
  expectNear(host<float>(ys, 4), wantSum, 1e-5f);

  // Max over everything (60 elements: the thread-per-output kernel).
  Reduce max(*context, DType::F32, ReduceKind::Max, {3, 4, 5}, {0, 1, 2},
             {1, 1, 1});
  void *ym = deviceZeros(sizeof(float));
  max.run(dx, ym);
  EXPECT_EQ(host<float>(ym, 1)[0], *std::max_element(x.begin(), x.end()));

  // LogSumExp over the last axis of a long row (block kernel).
  std::vector<float> big = ramp(2 * 1000, 0.01f);
  Reduce lse(*context, DType::F32, ReduceKind::LogSumExp, {2, 1000}, {1}, {2});
  void *yl = deviceZeros(2 * sizeof(float));
  lse.run(device(big), yl);
  std::vector<float> wantLse(2);
  for (int r = 0; r < 2; ++r) {
    double total = 0;
    for (int j = 0; j < 1000; ++j)
      total += std::exp(double(big[r * 1000 + j]));
    wantLse[r] = float(std::log(total));
  }
  expectNear(host<float>(yl, 2), wantLse, 1e-4f);
}

TEST_F(GpuKernels, Transpose) {
  // [2, 3, 4] with perm {2, 0, 1} -> [4, 2, 3].
  std::vector<int32_t> x(24);
  std::iota(x.begin(), x.end(), 0);
  Transpose transpose(*context, DType::I32, {2, 3, 4}, {2, 0, 1});
  void *y = deviceZeros(24 * sizeof(int32_t));
  transpose.run(device(x), y);
  std::vector<int32_t> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        want.push_back(x[(i * 3 + j) * 4 + k]);
  EXPECT_EQ(host<int32_t>(y, 24), want);
}

TEST_F(GpuKernels, EmbeddingLookupRowsMeanAndBadId) {
  const int64_t rows = 5, dim = 3;
  std::vector<float> table = ramp(rows * dim);
  std::vector<int64_t> ids = {4, -1, 0, 2}; // -1 is row 4
  void *dt = device(table), *di = device(ids);

  EmbeddingLookup lookup(*context, DType::F32, rows, dim, DType::I64, {2, 2},
                         EmbeddingPooling::None);
  void *y = deviceZeros(4 * dim * sizeof(float));
  lookup.run(dt, di, y);
  std::vector<float> want;
  for (int64_t id : ids)
    for (int64_t j = 0; j < dim; ++j)
      want.push_back(table[((id + rows) % rows) * dim + j]);
  expectNear(host<float>(y, want.size()), want, 0.0f);

  EmbeddingLookup mean(*context, DType::F32, rows, dim, DType::I64, {2, 2},
                       EmbeddingPooling::Mean);
  void *ym = deviceZeros(2 * dim * sizeof(float));
  mean.run(dt, di, ym);
  std::vector<float> wantMean;
  for (int b = 0; b < 2; ++b)
    for (int64_t j = 0; j < dim; ++j)
      wantMean.push_back(
          (want[(2 * b) * dim + j] + want[(2 * b + 1) * dim + j]) / 2.0f);
  expectNear(host<float>(ym, wantMean.size()), wantMean, 1e-6f);

  std::vector<int64_t> bad = {1, 7};
  EmbeddingLookup strict(*context, DType::F32, rows, dim, DType::I64, {2},
                         EmbeddingPooling::None);
  void *yb = deviceZeros(2 * dim * sizeof(float));
  try {
    strict.run(dt, device(bad), yb);
    ADD_FAILURE() << "out-of-range id did not throw";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("7"), std::string::npos)
        << error.what();
  }
}

TEST_F(GpuKernels, ScatterReductionsNarrowTypesAndBadIndex) {
  // [2, 4, 3] along axis 1 with duplicate and negative indices: every
  // reduction but None is order-free, so it must match the host exactly.
  const Shape shape{2, 4, 3};
  std::vector<int64_t> ids = {1, -1, 1, 0}; // -1 is 3
  std::vector<float> data = ramp(24), updates = ramp(24, 0.91f);
  const ScatterReduction kinds[] = {
      ScatterReduction::Add, ScatterReduction::Mul, ScatterReduction::Max,
      ScatterReduction::Min};
  for (ScatterReduction kind : kinds) {
    Scatter scatter(*context, DType::F32, shape, DType::I64, {4}, 1, kind);
    void *y = deviceZeros(24 * sizeof(float));
    scatter.run(device(data), device(ids), device(updates), y);
    std::vector<float> want = data;
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t k = 0; k < 4; ++k)
        for (int64_t c = 0; c < 3; ++c) {
          float &into = want[(o * 4 + (ids[k] + 4) % 4) * 3 + c];
          float u = updates[(o * 4 + k) * 3 + c];
          into = kind == ScatterReduction::Add   ? into + u
                 : kind == ScatterReduction::Mul ? into * u
                 : kind == ScatterReduction::Max ? std::max(into, u)
                                                 : std::min(into, u);
        }
    expectNear(host<float>(y, 24), want, 1e-5f);
  }

  // 1- and 2-byte elements go through a CAS on their 32-bit word; the
  // neighbours must survive. Adds of small integers are exact in f16.
  std::vector<int8_t> bytes = {1, 2, 3, 4, 5}, byteUpdates = {10, 20, 30};
  std::vector<int32_t> at = {1, 1, 4};
  Scatter byteAdd(*context, DType::I8, {5}, DType::I32, {3}, 0,
                  ScatterReduction::Add);
  void *yb = deviceZeros(5);
  byteAdd.run(device(bytes), device(at), device(byteUpdates), yb);
  EXPECT_EQ((std::vector<int8_t>{1, 32, 3, 4, 35}), host<int8_t>(yb, 5));

  // In place, None with distinct indices.
  std::vector<float> rows = {1, 2, 3, 4};
  std::vector<int64_t> two = {3, 0};
  std::vector<float> values = {30, 10};
  void *inPlace = device(rows);
  Scatter(*context, DType::F32, {4}, DType::I64, {2}, 0, ScatterReduction::None)
      .run(inPlace, device(two), device(values), inPlace);
  expectNear(host<float>(inPlace, 4), {10, 2, 3, 30}, 0.0f);

  std::vector<int64_t> bad = {0, 9};
  try {
    Scatter(*context, DType::F32, {4}, DType::I64, {2}, 0,
            ScatterReduction::Add)
        .run(inPlace, device(bad), device(values), inPlace);
    ADD_FAILURE() << "out-of-range index did not throw";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("9"), std::string::npos)
        << error.what();
  }
}

TEST_F(GpuKernels, DeterminantsOfABatch) {
  // identity, a row swap (-6), a singular matrix, [[2, 1], [1, 3]] = 5.
  std::vector<float> x = {1, 0, 0, 1, 0, 2, 3, 4, 1, 2, 2, 4, 2, 1, 1, 3};
  void *y = deviceZeros(4 * sizeof(float));
  Determinant(*context, DType::F32, 4, 2).run(device(x), y);
  expectNear(host<float>(y, 4), {1, -6, 0, 5}, 1e-6f);
}

} // namespace
