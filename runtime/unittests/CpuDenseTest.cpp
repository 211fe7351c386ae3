//===- CpuDenseTest.cpp - Gemm, MatMul and Conv on the CPU ----------------===//
//
// Hand-computed cases, then random data against naive loops written here.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include "../kernels/cpu/WinogradConv.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

std::vector<float> randomData(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> data(n);
  for (float &v : data)
    v = dist(rng);
  return data;
}

void expectClose(const std::vector<float> &actual,
                 const std::vector<float> &expected, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i != actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-4 * (1 + std::fabs(expected[i])))
        << what << " at " << i;
}

/// Within 1e-4 of the largest |expected| (at least 1), the ONNX node suite's
/// criterion: for Winograd's transforms, whose rounding error follows the
/// magnitude of the whole sum rather than of each output (F(4x4, 3x3) over
/// 64 channels of values in [-1, 1]: about 1.5e-4 on outputs up to 10).
void expectCloseToScale(const std::vector<float> &actual,
                        const std::vector<float> &expected,
                        const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  float scale = 1.f;
  for (float e : expected)
    scale = std::max(scale, std::fabs(e));
  for (size_t i = 0; i != actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-4 * scale) << what << " at " << i;
}

/// The activations, written independently of the kernels.
float activate(const Activation &act, float x) {
  switch (act.kind) {
  case UnaryKind::Identity:
    return x;
  case UnaryKind::Relu:
    return std::max(x, 0.f);
  case UnaryKind::LeakyRelu:
    return x < 0 ? act.params.alpha * x : x;
  case UnaryKind::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::GeluErf:
    return x * 0.5f * (1 + std::erf(x / std::sqrt(2.f)));
  case UnaryKind::GeluTanh:
    return 0.5f * x *
           (1 + std::tanh(std::sqrt(2 / float(M_PI)) *
                          (x + 0.044715f * x * x * x)));
  case UnaryKind::Selu:
    return act.params.beta * (x > 0 ? x : act.params.alpha * (std::exp(x) - 1));
  case UnaryKind::HardSigmoid:
    return std::clamp(act.params.alpha * x + act.params.beta, 0.f, 1.f);
  case UnaryKind::Clip:
    return std::clamp<float>(x, act.params.lo, act.params.hi);
  case UnaryKind::Erf:
    return std::erf(x);
  case UnaryKind::Softsign:
    return x / (1 + std::fabs(x));
  case UnaryKind::Celu:
    return std::max(0.f, x) +
           std::min(0.f,
                    act.params.alpha * (std::exp(x / act.params.alpha) - 1));
  default:
    ADD_FAILURE() << "activation not in the test's table";
    return x;
  }
}

Activation makeAct(UnaryKind kind, float alpha = 0, float beta = 0,
                   double lo = -INFINITY, double hi = INFINITY) {
  Activation act;
  act.kind = kind;
  act.params.alpha = alpha;
  act.params.beta = beta;
  act.params.lo = lo;
  act.params.hi = hi;
  return act;
}

/// A mix of fused (oneDNN post-op) and looped activations.
std::vector<Activation> someActivations() {
  return {makeAct(UnaryKind::Identity),
          makeAct(UnaryKind::Relu),
          makeAct(UnaryKind::LeakyRelu, 0.1f),
          makeAct(UnaryKind::Sigmoid),
          makeAct(UnaryKind::Tanh),
          makeAct(UnaryKind::GeluErf),
          makeAct(UnaryKind::GeluTanh),
          makeAct(UnaryKind::Selu, 1.67326f, 1.0507f),
          makeAct(UnaryKind::HardSigmoid, 0.2f, 0.5f),
          makeAct(UnaryKind::Clip, 0, 0, -0.5, 0.25),
          makeAct(UnaryKind::Clip, 0, 0, 0.0, INFINITY),
          makeAct(UnaryKind::Erf),
          makeAct(UnaryKind::Softsign),
          makeAct(UnaryKind::Celu, 0.7f)};
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

std::vector<float>
referenceGemm(int64_t m, int64_t n, int64_t k, bool transA, bool transB,
              float alpha, float beta, const Shape *cShape,
              const std::vector<float> &a, const std::vector<float> &b,
              const std::vector<float> &c, const Activation &act) {
  std::vector<float> y(m * n);
  int64_t cRows = cShape && cShape->size() == 2 ? (*cShape)[0] : 1;
  int64_t cCols = cShape && !cShape->empty() ? cShape->back() : 1;
  for (int64_t i = 0; i != m; ++i)
    for (int64_t j = 0; j != n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p != k; ++p)
        sum += double(transA ? a[p * m + i] : a[i * k + p]) *
               (transB ? b[j * k + p] : b[p * n + j]);
      double value = alpha * sum;
      if (cShape)
        value += beta * c[(cRows == 1 ? 0 : i) * cCols + (cCols == 1 ? 0 : j)];
      y[i * n + j] = activate(act, float(value));
    }
  return y;
}

TEST(CpuDenseGemm, HandComputed) {
  Context ctx(0);
  // [[1,2],[3,4]] x [[5,6],[7,8]] + [1,2] = [[20,24],[44,52]].
  Shape cShape{2};
  Gemm gemm(ctx, DType::F32, 2, 2, 2, false, false, 1.f, 1.f, &cShape,
            Activation{}, false);
  std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8}, c{1, 2}, y(4);
  gemm.run(a.data(), b.data(), c.data(), y.data());
  expectClose(y, {20, 24, 44, 52}, "gemm");

  // relu(2 * A^T B^T - C), C a column: A^T = [[1,3],[2,4]], B^T =
  // [[5,7],[6,8]]; A^T B^T = [[23,31],[34,46]].
  Shape column{2, 1};
  Gemm scaled(ctx, DType::F32, 2, 2, 2, true, true, 2.f, -1.f, &column,
              makeAct(UnaryKind::Relu), true);
  std::vector<float> c2{50, 100};
  scaled.run(a.data(), b.data(), c2.data(), y.data());
  expectClose(y, {0, 12, 0, 0}, "scaled gemm");
}

TEST(CpuDenseGemm, RandomAgainstReference) {
  Context ctx(0);
  struct Case {
    int64_t m, n, k;
  };
  std::vector<Case> sizes{{1, 1, 1}, {7, 5, 3}, {16, 33, 20}, {64, 48, 70}};
  std::vector<std::optional<Shape>> cForms{
      std::nullopt, Shape{},       Shape{-1},  Shape{1, -1},
      Shape{-2, 1}, Shape{-2, -1}, Shape{1, 1}};
  unsigned seed = 1;
  int cases = 0;
  for (const Case &size : sizes)
    for (int trans = 0; trans != 4; ++trans)
      for (const auto &cForm : cForms)
        for (float alpha : {1.f, 0.5f})
          for (float beta : {1.f, 0.f, -2.f}) {
            bool transA = trans & 1, transB = trans & 2;
            bool constantB = (seed % 2) == 0;
            Activation act = someActivations()[seed % someActivations().size()];
            std::optional<Shape> cShape = cForm;
            if (cShape)
              for (int64_t &d : *cShape)
                d = d == -1 ? size.n : d == -2 ? size.m : d;
            auto a = randomData(size.m * size.k, seed++);
            auto b = randomData(size.k * size.n, seed++);
            auto c = randomData(cShape ? numElements(*cShape) : 1, seed++);
            const Shape *cPtr = cShape ? &*cShape : nullptr;
            Gemm gemm(ctx, DType::F32, size.m, size.n, size.k, transA, transB,
                      alpha, beta, cPtr, act, constantB);
            std::vector<float> y(size.m * size.n);
            auto expected =
                referenceGemm(size.m, size.n, size.k, transA, transB, alpha,
                              beta, cPtr, a, b, c, act);
            std::string what =
                "gemm " + std::to_string(size.m) + "x" +
                std::to_string(size.n) + "x" + std::to_string(size.k) +
                " trans " + std::to_string(trans) + " C " +
                (cShape ? shapeString(*cShape) : "none") + " alpha " +
                std::to_string(alpha) + " beta " + std::to_string(beta);
            gemm.run(a.data(), b.data(), c.data(), y.data());
            expectClose(y, expected, what);
            // Second run: constant B comes from the repacked cache.
            std::fill(y.begin(), y.end(), 0.f);
            gemm.run(a.data(), b.data(), c.data(), y.data());
            expectClose(y, expected, what + " (second run)");
            ++cases;
          }
  EXPECT_GT(cases, 0);
}

// Kernels below worthThreads run on one thread: same bits as a one-thread
// context, and the stage's thread count is back afterwards.
TEST(CpuDenseGemm, SmallKernelsRunSerialAndRestoreThreads) {
  // OpenMP is linked by the kernel library only: look it up at run time.
  auto maxThreads =
      reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (!maxThreads)
    GTEST_SKIP() << "omp_get_max_threads not found";
  std::vector<float> a = randomData(196, 1), b = randomData(196 * 128, 2),
                     c = randomData(128, 3), big = randomData(256 * 256, 4);
  Shape cShape{128};
  auto run = [&](int threads, std::vector<float> &y, std::vector<float> &z) {
    Context ctx(threads);
    ctx.enterThread();
    Gemm small(ctx, DType::F32, 1, 128, 196, false, false, 1.f, 1.f, &cShape,
               Activation{UnaryKind::Relu, {}}, true);
    Gemm large(ctx, DType::F32, 64, 256, 256, false, false, 1.f, 0.f, nullptr,
               Activation{}, true);
    EXPECT_EQ(maxThreads(), threads);
    small.run(a.data(), b.data(), c.data(), y.data());
    EXPECT_EQ(maxThreads(), threads) << "after the serial kernel";
    large.run(big.data(), big.data(), nullptr, z.data());
    EXPECT_EQ(maxThreads(), threads) << "after the parallel kernel";
  };
  std::vector<float> y1(128), y2(128), z1(64 * 256), z2(64 * 256);
  run(1, y1, z1);
  run(2, y2, z2);
  EXPECT_EQ(y1, y2);
  std::vector<float> expected(128);
  for (int j = 0; j < 128; ++j) {
    double sum = c[j];
    for (int i = 0; i < 196; ++i)
      sum += double(a[i]) * b[i * 128 + j];
    expected[j] = std::max(float(sum), 0.f);
  }
  expectClose(y2, expected, "serial gemm");
}

TEST(CpuDenseGemm, EmptyInnerDimension) {
  Context ctx(0);
  Shape cShape{3};
  Gemm gemm(ctx, DType::F32, 2, 3, 0, false, false, 1.f, 2.f, &cShape,
            Activation{}, false);
  std::vector<float> c{1, 2, 3}, y(6, -7.f);
  gemm.run(nullptr, nullptr, c.data(), y.data());
  expectClose(y, {2, 4, 6, 2, 4, 6}, "k = 0");
}

TEST(CpuDenseGemm, RejectsBadParameters) {
  Context ctx(0);
  Shape bad{3, 2};
  EXPECT_THROW(Gemm(ctx, DType::F32, 2, 2, 2, false, false, 1.f, 1.f, &bad,
                    Activation{}, false),
               Error);
  try {
    Gemm(ctx, DType::F16, 2, 2, 2, false, false, 1.f, 1.f, nullptr,
         Activation{}, false);
    FAIL() << "f16 accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("Gemm"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("f16"), std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

/// numpy matmul on row-major data.
std::vector<float> referenceMatMul(Shape a, Shape b,
                                   const std::vector<float> &aData,
                                   const std::vector<float> &bData,
                                   const Activation &act) {
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  int64_t m = a[rank - 2], k = a[rank - 1], n = b[rank - 1];
  Shape batch(rank - 2);
  for (size_t i = 0; i + 2 < rank; ++i)
    batch[i] = std::max(a[i], b[i]);
  int64_t batches = numElements(batch);
  std::vector<float> y(batches * m * n);
  for (int64_t t = 0; t != batches; ++t) {
    // Batch index -> offsets into a and b with broadcasting.
    int64_t rest = t, aBatch = 0, bBatch = 0, aStride = 1, bStride = 1;
    for (size_t i = rank - 2; i-- > 0;) {
      int64_t idx = rest % batch[i];
      rest /= batch[i];
      aBatch += (a[i] == 1 ? 0 : idx) * aStride;
      bBatch += (b[i] == 1 ? 0 : idx) * bStride;
      aStride *= a[i];
      bStride *= b[i];
    }
    for (int64_t i = 0; i != m; ++i)
      for (int64_t j = 0; j != n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p != k; ++p)
          sum += double(aData[(aBatch * m + i) * k + p]) *
                 bData[(bBatch * k + p) * n + j];
        y[(t * m + i) * n + j] = activate(act, float(sum));
      }
  }
  return y;
}

TEST(CpuDenseMatMul, HandComputed) {
  Context ctx(0);
  // [1,2] . [[1,2,3],[4,5,6]] = [9,12,15].
  MatMul vecMat(ctx, DType::F32, {2}, {2, 3}, {3}, Activation{}, false);
  std::vector<float> a{1, 2}, b{1, 2, 3, 4, 5, 6}, y(3);
  vecMat.run(a.data(), b.data(), y.data());
  expectClose(y, {9, 12, 15}, "vector x matrix");
  // [1,2] . [3,-4] = -5, relu -> 0.
  MatMul dot(ctx, DType::F32, {2}, {2}, {}, makeAct(UnaryKind::Relu), false);
  std::vector<float> v{3, -4}, scalar(1);
  dot.run(a.data(), v.data(), scalar.data());
  expectClose(scalar, {0}, "dot");
}

TEST(CpuDenseMatMul, RandomAgainstReference) {
  Context ctx(0);
  struct Case {
    Shape a, b, y;
  };
  std::vector<Case> cases{
      {{3, 4}, {4, 5}, {3, 5}},
      {{4}, {4, 5}, {5}},
      {{3, 4}, {4}, {3}},
      {{7}, {7}, {}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},
      {{1, 3, 3, 4}, {2, 1, 4, 6}, {2, 3, 3, 6}},
      {{2, 3, 4}, {4}, {2, 3}},
      {{4}, {2, 4, 5}, {2, 5}},
      {{2, 2, 17, 33}, {33, 9}, {2, 2, 17, 9}},
  };
  unsigned seed = 100;
  for (const Case &c : cases)
    for (bool constantB : {false, true})
      for (const Activation &act :
           {makeAct(UnaryKind::Identity), makeAct(UnaryKind::GeluErf),
            makeAct(UnaryKind::Erf)}) {
        auto a = randomData(numElements(c.a), seed++);
        auto b = randomData(numElements(c.b), seed++);
        MatMul matmul(ctx, DType::F32, c.a, c.b, c.y, act, constantB);
        std::vector<float> y(numElements(c.y));
        auto expected = referenceMatMul(c.a, c.b, a, b, act);
        std::string what =
            "matmul " + shapeString(c.a) + " x " + shapeString(c.b);
        matmul.run(a.data(), b.data(), y.data());
        expectClose(y, expected, what);
        std::fill(y.begin(), y.end(), 0.f);
        matmul.run(a.data(), b.data(), y.data());
        expectClose(y, expected, what + " (second run)");
      }
}

TEST(CpuDenseMatMul, RejectsBadShapes) {
  Context ctx(0);
  EXPECT_THROW(
      MatMul(ctx, DType::F32, {3, 4}, {5, 6}, {3, 6}, Activation{}, false),
      Error);
  EXPECT_THROW(MatMul(ctx, DType::F32, {2, 3, 4}, {3, 4, 5}, {3, 3, 5},
                      Activation{}, false),
               Error);
  EXPECT_THROW(
      MatMul(ctx, DType::F32, {3, 4}, {4, 5}, {3, 4}, Activation{}, false),
      Error);
  // Bool has no arithmetic; the loops of other types fuse no activation.
  EXPECT_THROW(
      MatMul(ctx, DType::Bool, {3, 4}, {4, 5}, {3, 5}, Activation{}, false),
      Error);
  EXPECT_THROW(MatMul(ctx, DType::I32, {3, 4}, {4, 5}, {3, 5},
                      Activation{UnaryKind::Relu, {}}, false),
               Error);
}

/// MatMul in f64 and the integers (LoopDense.cpp): batch broadcasting
/// against a plain loop, and i32 sums that overflow wrap as numpy's do.
TEST(CpuDenseMatMul, LoopTypes) {
  Context ctx(0);
  // [2, 1, 3, 4] x [3, 4, 2] -> [2, 3, 3, 2] in f64.
  std::vector<double> a(2 * 3 * 4), b(3 * 4 * 2), y(2 * 3 * 3 * 2);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = 0.25 * double(i) - 1.0;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 1.0 / double(i + 1);
  MatMul f64(ctx, DType::F64, {2, 1, 3, 4}, {3, 4, 2}, {2, 3, 3, 2},
             Activation{}, false);
  f64.run(a.data(), b.data(), y.data());
  for (int n = 0; n < 2; ++n)
    for (int batch = 0; batch < 3; ++batch)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j) {
          double sum = 0;
          for (int k = 0; k < 4; ++k)
            sum += a[(n * 3 + i) * 4 + k] * b[(batch * 4 + k) * 2 + j];
          EXPECT_DOUBLE_EQ(y[((n * 3 + batch) * 3 + i) * 2 + j], sum);
        }
  // 2^30 * 4 + 2^30 * 4 = 2^33, which wraps to 0 in 32 bits; -3 * 5 + 2.
  std::vector<int32_t> p{1 << 30, 1 << 30, -3, 1}, q{4, 5, 4, 2}, r(4);
  MatMul i32(ctx, DType::I32, {2, 2}, {2, 2}, {2, 2}, Activation{}, false);
  i32.run(p.data(), q.data(), r.data());
  EXPECT_EQ(r, (std::vector<int32_t>{0, int32_t(uint32_t(7) << 30), -8, -13}));
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

struct ConvCase {
  Shape x, w;
  Shape strides, dilations, padBegin, padEnd;
  int64_t group;
};

/// y shape by the floor formula.
Shape convOutput(const ConvCase &c) {
  Shape y{c.x[0], c.w[0]};
  for (size_t i = 0; i + 2 < c.x.size(); ++i) {
    int64_t extent = (c.w[i + 2] - 1) * c.dilations[i] + 1;
    y.push_back(
        (c.x[i + 2] + c.padBegin[i] + c.padEnd[i] - extent) / c.strides[i] + 1);
  }
  return y;
}

std::vector<float> referenceConv(const ConvCase &c, const Shape &y,
                                 const std::vector<float> &x,
                                 const std::vector<float> &w,
                                 const std::vector<float> *bias,
                                 const Activation &act) {
  size_t spatial = c.x.size() - 2;
  int64_t inPerGroup = c.w[1], outPerGroup = c.w[0] / c.group;
  int64_t outSpatial = numElements(Shape(y.begin() + 2, y.end()));
  int64_t inSpatial = numElements(Shape(c.x.begin() + 2, c.x.end()));
  int64_t taps = numElements(Shape(c.w.begin() + 2, c.w.end()));
  std::vector<float> out(numElements(y));
  for (int64_t n = 0; n != y[0]; ++n)
    for (int64_t oc = 0; oc != y[1]; ++oc) {
      int64_t g = oc / outPerGroup;
      for (int64_t o = 0; o != outSpatial; ++o) {
        Shape outIdx(spatial);
        for (int64_t rest = o, i = spatial; i-- > 0;) {
          outIdx[i] = rest % y[i + 2];
          rest /= y[i + 2];
        }
        double sum = bias ? (*bias)[oc] : 0.0;
        for (int64_t ic = 0; ic != inPerGroup; ++ic)
          for (int64_t t = 0; t != taps; ++t) {
            int64_t inOffset = 0;
            bool inside = true;
            for (int64_t rest = t, stride = 1, i = spatial; i-- > 0;) {
              int64_t tap = rest % c.w[i + 2];
              rest /= c.w[i + 2];
              int64_t pos = outIdx[i] * c.strides[i] - c.padBegin[i] +
                            tap * c.dilations[i];
              inside &= pos >= 0 && pos < c.x[i + 2];
              inOffset += pos * stride;
              stride *= c.x[i + 2];
            }
            if (!inside)
              continue;
            int64_t channel = g * inPerGroup + ic;
            sum += double(x[(n * c.x[1] + channel) * inSpatial + inOffset]) *
                   w[(oc * inPerGroup + ic) * taps + t];
          }
        out[(n * y[1] + oc) * outSpatial + o] = activate(act, float(sum));
      }
    }
  return out;
}

TEST(CpuDenseConv, HandComputed) {
  Context ctx(0);
  // 1-D: [1,2,3,4] * [1,1] + 0.5 = [3.5,5.5,7.5].
  Conv conv(ctx, DType::F32, {1, 1, 4}, {1, 1, 2}, true, {1, 1, 3}, {1}, {1},
            {0}, {0}, 1, Activation{}, false);
  std::vector<float> x{1, 2, 3, 4}, w{1, 1}, bias{0.5f}, y(3);
  conv.run(x.data(), w.data(), bias.data(), y.data());
  expectClose(y, {3.5f, 5.5f, 7.5f}, "conv 1-D");
  // Padded by one on both sides, stride 2, no bias: windows [0,1], [2,3],
  // [4,0] -> [1, 5, 4] with w=[1,1]... x padded = [0,1,2,3,4,0].
  Conv padded(ctx, DType::F32, {1, 1, 4}, {1, 1, 2}, false, {1, 1, 3}, {2}, {1},
              {1}, {1}, 1, Activation{}, true);
  padded.run(x.data(), w.data(), nullptr, y.data());
  expectClose(y, {1, 5, 4}, "conv 1-D padded");
}

/// Plain, padded, strided, dilated, grouped and depthwise 2-D convolutions,
/// and 1-D and 3-D ones.
const std::vector<ConvCase> &mixedConvCases() {
  static const std::vector<ConvCase> cases{
      // 2-D plain, padded, strided, dilated, grouped, depthwise.
      {{2, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{1, 4, 7, 9}, {6, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{2, 4, 9, 9}, {8, 2, 3, 3}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, 2},
      {{1, 6, 10, 11}, {6, 1, 3, 3}, {1, 2}, {2, 2}, {2, 1}, {2, 3}, 6},
      {{1, 16, 12, 12}, {32, 16, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{1, 8, 13, 13}, {12, 4, 5, 3}, {3, 2}, {1, 2}, {2, 1}, {2, 1}, 2},
      // 1-D.
      {{2, 3, 20}, {5, 3, 4}, {1}, {1}, {0}, {0}, 1},
      {{1, 4, 17}, {6, 2, 3}, {2}, {3}, {2}, {1}, 2},
      // 3-D.
      {{1, 2, 5, 6, 7},
       {3, 2, 3, 2, 3},
       {1, 2, 1},
       {1, 1, 2},
       {1, 0, 1},
       {1, 1, 0},
       1},
  };
  return cases;
}

TEST(CpuDenseConv, RandomAgainstReference) {
  Context ctx(0);
  const std::vector<ConvCase> &cases = mixedConvCases();
  unsigned seed = 500;
  for (const ConvCase &c : cases)
    for (bool hasBias : {true, false})
      for (bool constant : {false, true}) {
        Activation act = someActivations()[seed % someActivations().size()];
        Shape y = convOutput(c);
        auto x = randomData(numElements(c.x), seed++);
        auto w = randomData(numElements(c.w), seed++);
        auto bias = randomData(c.w[0], seed++);
        Conv conv(ctx, DType::F32, c.x, c.w, hasBias, y, c.strides, c.dilations,
                  c.padBegin, c.padEnd, c.group, act, constant);
        std::vector<float> out(numElements(y));
        auto expected =
            referenceConv(c, y, x, w, hasBias ? &bias : nullptr, act);
        std::string what = "conv x " + shapeString(c.x) + " w " +
                           shapeString(c.w) + " group " +
                           std::to_string(c.group);
        conv.run(x.data(), w.data(), bias.data(), out.data());
        expectClose(out, expected, what);
        std::fill(out.begin(), out.end(), 0.f);
        conv.run(x.data(), w.data(), bias.data(), out.data());
        expectClose(out, expected, what + " (second run)");
      }
}

// Channels >= 8 take oneDNN's direct convolution on channel-blocked copies
// of x and y, a few images at a time: batches that split into several
// chunks (6 images of 16x32x32 run 3 at a time), grouped, strided, padded,
// dilated and 1-D/3-D shapes, the 3-channel stem (plain x, blocked y), and
// weights that change between runs at the same address.
TEST(CpuDenseConv, BlockedPathAgainstReference) {
  Context ctx(0);
  std::vector<ConvCase> cases{
      {{6, 16, 32, 32}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{5, 3, 32, 32}, {16, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 16, 20, 18}, {32, 16, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 1}, 1},
      {{2, 16, 15, 15}, {32, 16, 1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{2, 32, 9, 11}, {32, 8, 3, 3}, {1, 2}, {2, 1}, {2, 1}, {1, 0}, 4},
      {{3, 16, 10, 10}, {16, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 16},
      {{2, 64, 8, 8}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 8, 31}, {16, 8, 5}, {2}, {1}, {2}, {2}, 1},
      {{2, 8, 4, 6, 5},
       {16, 8, 3, 3, 3},
       {1, 2, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 0, 1},
       1},
  };
  unsigned seed = 700;
  for (const ConvCase &c : cases)
    for (bool constant : {false, true}) {
      Activation act = someActivations()[seed % someActivations().size()];
      Shape y = convOutput(c);
      auto x = randomData(numElements(c.x), seed++);
      auto w = randomData(numElements(c.w), seed++);
      auto bias = randomData(c.w[0], seed++);
      Conv conv(ctx, DType::F32, c.x, c.w, true, y, c.strides, c.dilations,
                c.padBegin, c.padEnd, c.group, act, constant);
      std::string what =
          "blocked conv x " + shapeString(c.x) + " w " + shapeString(c.w) +
          " group " + std::to_string(c.group) + (constant ? " constant" : "");
      std::vector<float> out(numElements(y));
      conv.run(x.data(), w.data(), bias.data(), out.data());
      expectClose(out, referenceConv(c, y, x, w, &bias, act), what);
      // New input, and new weights in the same buffer where not constant.
      x = randomData(numElements(c.x), seed++);
      if (!constant)
        w = randomData(numElements(c.w), seed++);
      std::fill(out.begin(), out.end(), 0.f);
      conv.run(x.data(), w.data(), bias.data(), out.data());
      expectClose(out, referenceConv(c, y, x, w, &bias, act),
                  what + " (second run)");
    }
}

/// `plain` in `layout` (a copy through Relayout when Native).
std::vector<float> toLayout(Context &ctx, const std::vector<float> &plain,
                            const Shape &shape, Layout from, Layout to) {
  std::vector<float> out(plain.size());
  Relayout(ctx, DType::F32, shape, from, to).run(plain.data(), out.data());
  return out;
}

// Convolutions between native (channel-blocked) and plain tensors, with and
// without a fused residual: every combination the code generator emits, on
// shapes where oneDNN picks its direct, 1x1 and grouped kernels, 1-D and
// 3-D, and one batch large enough for the reorder path to chunk it.
TEST(CpuDenseConv, NativeLayoutsAndResidual) {
  Context ctx(0);
  std::vector<ConvCase> cases{
      {{2, 16, 12, 12}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 3, 10, 10}, {16, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{2, 16, 15, 15}, {32, 16, 1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{2, 32, 9, 11}, {16, 8, 3, 3}, {1, 2}, {2, 1}, {2, 1}, {1, 0}, 4},
      {{2, 16, 10, 10}, {16, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 16},
      {{8, 16, 32, 32}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 16, 31}, {32, 16, 5}, {2}, {1}, {2}, {2}, 1},
      {{2, 16, 4, 6, 5},
       {16, 16, 3, 3, 3},
       {1, 2, 1},
       {1, 1, 1},
       {1, 1, 1},
       {1, 0, 1},
       1},
  };
  unsigned seed = 900;
  for (const ConvCase &c : cases) {
    Shape y = convOutput(c);
    auto x = randomData(numElements(c.x), seed++);
    auto w = randomData(numElements(c.w), seed++);
    auto bias = randomData(c.w[0], seed++);
    auto r = randomData(numElements(y), seed++);
    std::vector<float> linear = referenceConv(c, y, x, w, &bias, Activation{});
    for (Layout xLayout : {Layout::Plain, Layout::Native})
      for (Layout yLayout : {Layout::Plain, Layout::Native})
        for (bool residual : {false, true}) {
          if ((xLayout == Layout::Native && c.x[1] % 16 != 0) ||
              (yLayout == Layout::Native && y[1] % 16 != 0))
            continue;
          Activation act = someActivations()[seed++ % someActivations().size()];
          std::vector<float> expected(linear.size());
          for (size_t i = 0; i != expected.size(); ++i)
            expected[i] = activate(act, linear[i] + (residual ? r[i] : 0.f));
          std::string what = "conv x " + shapeString(c.x) +
                             (xLayout == Layout::Native ? " native" : "") +
                             " y " + shapeString(y) +
                             (yLayout == Layout::Native ? " native" : "") +
                             (residual ? " with residual" : "");
          Conv conv(ctx, DType::F32, c.x, c.w, true, y, c.strides, c.dilations,
                    c.padBegin, c.padEnd, c.group, act, true,
                    ConvOptions{xLayout, yLayout, residual});
          auto xIn = toLayout(ctx, x, c.x, Layout::Plain, xLayout);
          auto rIn = toLayout(ctx, r, y, Layout::Plain, yLayout);
          std::vector<float> out(numElements(y));
          conv.run(xIn.data(), w.data(), bias.data(), out.data(),
                   residual ? rIn.data() : nullptr);
          expectClose(toLayout(ctx, out, y, yLayout, Layout::Plain), expected,
                      what);
        }
  }
}

// 3x3 stride-1 convolutions between native tensors of 32 channels or more
// (16 on small batches) run Winograd's F(2x2, 3x3) (WinogradConv):
// ResNet's shapes, no, odd and
// asymmetric padding, outputs of odd extent, in != out channels, groups of
// tiles that straddle images, a 1x1 image, a residual, the vector and the
// lane-by-lane activations, and weights changed at the same address.
const std::vector<ConvCase> &winogradCases() {
  static const std::vector<ConvCase> cases{
      {{3, 32, 16, 16}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{2, 64, 8, 8}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 32, 7, 9}, {48, 32, 3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{2, 48, 5, 6}, {32, 48, 3, 3}, {1, 1}, {1, 1}, {2, 1}, {0, 2}, 1},
      {{5, 32, 3, 10}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{2, 32, 1, 1}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 16, 11, 12}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 256, 7, 7}, {256, 256, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
  };
  return cases;
}

/// The Winograd cases must run the kernel also on AVX-512 machines, where by
/// default oneDNN takes the small ones (WinogradConv.cpp): unless the
/// environment says otherwise, choose as on AVX2 machines. Set before the
/// first test, which is before the kernels read the setting.
[[maybe_unused]] const bool kWinogradAsOnAvx2 =
    setenv("HETERPS_CPU_WINOGRAD", "1", /*overwrite=*/0) == 0;

/// Whether the environment leaves WinogradConv on (HETERPS_CPU_WINOGRAD).
bool winogradEnabled() {
  const char *setting = std::getenv("HETERPS_CPU_WINOGRAD");
  return !setting || std::string(setting) != "0";
}

TEST(CpuDenseConv, WinogradAgainstReference) {
  if (!winogradEnabled())
    GTEST_SKIP() << "HETERPS_CPU_WINOGRAD=0 turns the kernel off";
  Context ctx(0);
  const std::vector<Activation> activations{
      makeAct(UnaryKind::Identity), makeAct(UnaryKind::Relu),
      makeAct(UnaryKind::LeakyRelu, 0.1f), makeAct(UnaryKind::Sigmoid)};
  unsigned seed = 1100;
  for (const ConvCase &c : winogradCases()) {
    EXPECT_TRUE(WinogradConv::suits(c.x, c.w, c.strides, c.dilations, c.group))
        << shapeString(c.x) << " " << shapeString(c.w);
    Shape y = convOutput(c);
    for (bool residual : {false, true})
      for (bool constant : {false, true}) {
        Activation act = activations[seed % activations.size()];
        auto x = randomData(numElements(c.x), seed++);
        auto w = randomData(numElements(c.w), seed++);
        auto bias = randomData(c.w[0], seed++);
        auto r = randomData(numElements(y), seed++);
        std::string what =
            "winograd conv x " + shapeString(c.x) + " w " + shapeString(c.w) +
            (residual ? " with residual" : "") + (constant ? " constant" : "");
        Conv conv(ctx, DType::F32, c.x, c.w, true, y, c.strides, c.dilations,
                  c.padBegin, c.padEnd, c.group, act, constant,
                  ConvOptions{Layout::Native, Layout::Native, residual});
        auto expected = [&] {
          std::vector<float> out =
              referenceConv(c, y, x, w, &bias, Activation{});
          for (size_t i = 0; i != out.size(); ++i)
            out[i] = activate(act, out[i] + (residual ? r[i] : 0.f));
          return out;
        };
        auto rIn = toLayout(ctx, r, y, Layout::Plain, Layout::Native);
        std::vector<float> out(numElements(y));
        for (int round = 0; round < 2; ++round) {
          auto xIn = toLayout(ctx, x, c.x, Layout::Plain, Layout::Native);
          conv.run(xIn.data(), w.data(), bias.data(), out.data(),
                   residual ? rIn.data() : nullptr);
          expectCloseToScale(
              toLayout(ctx, out, y, Layout::Native, Layout::Plain), expected(),
              what + (round ? " (second run)" : ""));
          // New input, and new weights in the same buffer where not constant.
          x = randomData(numElements(c.x), seed++);
          if (!constant)
            w = randomData(numElements(c.w), seed++);
        }
      }
  }
}

/// `plain` [N, C, spatial] in blocks of `block` channels, by hand: the
/// native layout of the other ISA (16 on AVX2 machines, 8 on AVX-512 ones).
std::vector<float> toBlocks(const std::vector<float> &plain, int64_t images,
                            int64_t channels, int64_t pixels, int64_t block,
                            bool back = false) {
  std::vector<float> out(plain.size());
  for (int64_t n = 0; n < images; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < pixels; ++p) {
        int64_t flat = (n * channels + c) * pixels + p;
        int64_t blocked =
            ((n * (channels / block) + c / block) * pixels + p) * block +
            c % block;
        (back ? out[flat] : out[blocked]) = plain[back ? blocked : flat];
      }
  return out;
}

// The kernel itself with both output tiles (F(2x2, 3x3) and F(4x4, 3x3)),
// in both native blocks, on the calling thread and split over threads.
TEST(CpuDenseConv, WinogradBothTilesAndBlocks) {
  unsigned seed = 1300;
  for (const ConvCase &c : winogradCases())
    for (int64_t tile : {2, 4})
      for (int64_t block : {8, 16}) {
        bool parallel = block == 16;
        Shape y = convOutput(c);
        WinogradGeometry g;
        g.batch = c.x[0];
        g.inChannels = c.x[1];
        g.height = c.x[2];
        g.width = c.x[3];
        g.outChannels = y[1];
        g.outHeight = y[2];
        g.outWidth = y[3];
        g.padTop = c.padBegin[0];
        g.padLeft = c.padBegin[1];
        g.block = block;
        g.outputTile = tile;
        Activation act = makeAct(UnaryKind::Relu);
        WinogradConv conv(g, true, true, act, true);
        auto x = randomData(numElements(c.x), seed++);
        auto w = randomData(numElements(c.w), seed++);
        auto bias = randomData(c.w[0], seed++);
        auto r = randomData(numElements(y), seed++);
        const int64_t inPixels = c.x[2] * c.x[3], outPixels = y[2] * y[3];
        auto xIn = toBlocks(x, g.batch, g.inChannels, inPixels, block);
        auto rIn = toBlocks(r, g.batch, g.outChannels, outPixels, block);
        std::vector<float> out(numElements(y));
        conv.run(xIn.data(), w.data(), bias.data(), rIn.data(), out.data(),
                 parallel);
        std::vector<float> expected =
            referenceConv(c, y, x, w, &bias, Activation{});
        for (size_t i = 0; i != expected.size(); ++i)
          expected[i] = std::max(expected[i] + r[i], 0.f);
        expectCloseToScale(
            toBlocks(out, g.batch, g.outChannels, outPixels, block, true),
            expected,
            "winograd tile " + std::to_string(tile) + " block " +
                std::to_string(block) + " x " + shapeString(c.x) + " w " +
                shapeString(c.w) + (parallel ? " parallel" : ""));
      }
  // 16 channels while x and y fit 2 MiB, not past (nothing is taken with
  // the kernels turned off).
  EXPECT_EQ(
      WinogradConv::suits({16, 16, 32, 32}, {16, 16, 3, 3}, {1, 1}, {1, 1}, 1),
      winogradEnabled());
  EXPECT_FALSE(
      WinogradConv::suits({17, 16, 32, 32}, {16, 16, 3, 3}, {1, 1}, {1, 1}, 1));
  // Not taken: strides, dilations, groups, other filters, unblocked
  // channels, filters past L2.
  EXPECT_FALSE(
      WinogradConv::suits({1, 32, 8, 8}, {32, 32, 3, 3}, {2, 2}, {1, 1}, 1));
  EXPECT_FALSE(
      WinogradConv::suits({1, 32, 8, 8}, {32, 32, 3, 3}, {1, 1}, {2, 2}, 1));
  EXPECT_FALSE(
      WinogradConv::suits({1, 64, 8, 8}, {64, 32, 3, 3}, {1, 1}, {1, 1}, 2));
  EXPECT_FALSE(
      WinogradConv::suits({1, 32, 8, 8}, {32, 32, 5, 5}, {1, 1}, {1, 1}, 1));
  EXPECT_FALSE(
      WinogradConv::suits({1, 40, 8, 8}, {32, 40, 3, 3}, {1, 1}, {1, 1}, 1));
  EXPECT_FALSE(
      WinogradConv::suits({1, 512, 7, 7}, {512, 512, 3, 3}, {1, 1}, {1, 1}, 1));
}

TEST(CpuDenseConv, RelayoutRoundTripAndRejections) {
  Context ctx(0);
  for (Shape shape :
       {Shape{2, 32, 5, 7}, Shape{3, 16, 9}, Shape{1, 48, 2, 3, 4}}) {
    auto x = randomData(numElements(shape), 77);
    auto native = toLayout(ctx, x, shape, Layout::Plain, Layout::Native);
    EXPECT_NE(native, x) << shapeString(shape); // really another layout
    expectClose(toLayout(ctx, native, shape, Layout::Native, Layout::Plain), x,
                "relayout " + shapeString(shape));
    expectClose(toLayout(ctx, x, shape, Layout::Plain, Layout::Plain), x,
                "plain copy " + shapeString(shape));
  }
  // Channels a native layout would pad, and no channel axis at all.
  EXPECT_THROW(
      Relayout(ctx, DType::F32, {1, 12, 4, 4}, Layout::Plain, Layout::Native),
      Error);
  EXPECT_THROW(
      Relayout(ctx, DType::F32, {4, 16}, Layout::Native, Layout::Plain), Error);
  EXPECT_THROW(Conv(ctx, DType::F32, {1, 8, 4, 4}, {16, 8, 3, 3}, false,
                    {1, 16, 2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1,
                    Activation{}, true, ConvOptions{Layout::Native}),
               Error);
  // A declared residual that is not passed.
  Conv conv(ctx, DType::F32, {1, 16, 4, 4}, {16, 16, 3, 3}, false,
            {1, 16, 2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1, Activation{},
            true, ConvOptions{Layout::Plain, Layout::Plain, true});
  std::vector<float> x(256), w(16 * 16 * 9), y(64);
  EXPECT_THROW(conv.run(x.data(), w.data(), nullptr, y.data()), Error);
}

TEST(CpuDenseConv, RejectsBadParameters) {
  Context ctx(0);
  // Channels do not fit the group.
  EXPECT_THROW(Conv(ctx, DType::F32, {1, 3, 4, 4}, {4, 2, 3, 3}, false,
                    {1, 4, 2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 2,
                    Activation{}, false),
               Error);
  // 4 spatial axes.
  EXPECT_THROW(Conv(ctx, DType::F32, {1, 1, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1},
                    false, {1, 1, 2, 2, 2, 2}, {1, 1, 1, 1}, {1, 1, 1, 1},
                    {0, 0, 0, 0}, {0, 0, 0, 0}, 1, Activation{}, false),
               Error);
  // Loops of types other than f32 fuse no activation or residual and read
  // plain layouts only; Bool has no arithmetic.
  EXPECT_THROW(Conv(ctx, DType::F64, {1, 1, 4}, {1, 1, 2}, false, {1, 1, 3},
                    {1}, {1}, {0}, {0}, 1, Activation{UnaryKind::Relu, {}},
                    false),
               Error);
  EXPECT_THROW(Conv(ctx, DType::I32, {1, 1, 4}, {1, 1, 2}, false, {1, 1, 3},
                    {1}, {1}, {0}, {0}, 1, Activation{}, false,
                    ConvOptions{Layout::Plain, Layout::Plain, true}),
               Error);
  EXPECT_THROW(Conv(ctx, DType::Bool, {1, 1, 4}, {1, 1, 2}, false, {1, 1, 3},
                    {1}, {1}, {0}, {0}, 1, Activation{}, false),
               Error);
}

/// Conv in f64 and i32 (LoopDense.cpp) against the f32 reference on the
/// same values: small integers, so that every type computes them exactly.
TEST(CpuDenseConv, LoopTypes) {
  Context ctx(0);
  unsigned seed = 900;
  auto integers = [&](int64_t n) {
    std::vector<float> values = randomData(n, seed++);
    for (float &v : values)
      v = std::round(v * 7);
    return values;
  };
  for (const ConvCase &c : mixedConvCases()) {
    Shape y = convOutput(c);
    auto x = integers(numElements(c.x)), w = integers(numElements(c.w)),
         bias = integers(c.w[0]);
    auto expected = referenceConv(c, y, x, w, &bias, Activation{});
    std::string what = "conv x " + shapeString(c.x) + " w " + shapeString(c.w);
    auto check = [&](DType type, auto zero) {
      using T = decltype(zero);
      std::vector<T> tx(x.begin(), x.end()), tw(w.begin(), w.end()),
          tb(bias.begin(), bias.end()), out(numElements(y));
      Conv conv(ctx, type, c.x, c.w, true, y, c.strides, c.dilations,
                c.padBegin, c.padEnd, c.group, Activation{}, true);
      conv.run(tx.data(), tw.data(), tb.data(), out.data());
      expectClose(std::vector<float>(out.begin(), out.end()), expected,
                  what + " " + dtypeName(type));
    };
    check(DType::F64, 0.0);
    check(DType::I32, int32_t(0));
  }
}

/// `bytes` (elements of `type`) of an NC[D]HW tensor copied from layout
/// `from` to `to` by Relayout.
template <typename T>
std::vector<T> relayoutCopy(Context &ctx, DType type, const std::vector<T> &x,
                            const Shape &shape, Layout from, Layout to) {
  std::vector<T> out(x.size());
  Relayout(ctx, type, shape, from, to).run(x.data(), out.data());
  return out;
}

TEST(CpuDenseConv, RelayoutChannelsLastOfEveryElementSize) {
  Context ctx(0);
  for (Shape shape : {Shape{2, 3, 5, 7}, Shape{3, 40, 9}, Shape{1, 5, 2, 3, 4},
                      Shape{2, 64, 33, 35}}) {
    std::string what = shapeString(shape);
    std::vector<uint8_t> bytes(numElements(shape));
    std::vector<int64_t> wide(bytes.size());
    for (size_t i = 0; i != bytes.size(); ++i) {
      bytes[i] = uint8_t(i * 7 + 3);
      wide[i] = int64_t(i) * 1000003;
    }
    auto last = relayoutCopy(ctx, DType::U8, bytes, shape, Layout::Plain,
                             Layout::ChannelsLast);
    // Element (n, c, s) of the plain tensor is at (n, s, c).
    int64_t channels = shape[1],
            spatial = numElements(shape) / shape[0] / channels;
    for (int64_t n = 0; n != shape[0]; ++n)
      for (int64_t c = 0; c != channels; ++c)
        for (int64_t i = 0; i != spatial; ++i)
          ASSERT_EQ(last[(n * spatial + i) * channels + c],
                    bytes[(n * channels + c) * spatial + i])
              << what << " at " << n << ", " << c << ", " << i;
    EXPECT_EQ(relayoutCopy(ctx, DType::U8, last, shape, Layout::ChannelsLast,
                           Layout::Plain),
              bytes)
        << what;
    auto wideLast = relayoutCopy(ctx, DType::I64, wide, shape, Layout::Plain,
                                 Layout::ChannelsLast);
    EXPECT_EQ(relayoutCopy(ctx, DType::I64, wideLast, shape,
                           Layout::ChannelsLast, Layout::Plain),
              wide)
        << what;
  }
  EXPECT_THROW(Relayout(ctx, DType::F32, {1, 16, 4, 4}, Layout::Native,
                        Layout::ChannelsLast),
               Error);
  EXPECT_THROW(
      Relayout(ctx, DType::U8, {4, 16}, Layout::Plain, Layout::ChannelsLast),
      Error);
  EXPECT_THROW(
      Relayout(ctx, DType::U8, {1, 16, 4, 4}, Layout::Plain, Layout::Native),
      Error);
}

/// IntegerConv against the f32 reference of the same integers (exact: every
/// sum stays below 2^24). Filters within +-64 take oneDNN's int8 kernels;
/// full-range ones, i8 x and a bias past f32's integers must fall back to
/// loops (oneDNN's 16-bit pair sums would saturate on the mostly-255 x).
/// Every path takes x and y plain or channels-last.
TEST(CpuDenseConv, IntegerConvExactOnEveryPath) {
  Context ctx(0);
  std::mt19937 rng(77);
  auto uniform = [&](int64_t n, int lo, int hi) {
    std::uniform_int_distribution<int> dist(lo, hi);
    std::vector<float> values(n);
    for (float &v : values)
      v = float(dist(rng));
    return values;
  };
  std::vector<ConvCase> cases = mixedConvCases();
  // A batch that the oneDNN path runs in several chunks.
  cases.push_back(
      {{24, 16, 20, 20}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1});
  for (const ConvCase &c : cases) {
    Shape y = convOutput(c);
    std::string what = "x " + shapeString(c.x) + " w " + shapeString(c.w);
    struct Variant {
      const char *name;
      DType xType;
      int wMax, biasOffset;
    };
    for (Variant v : {Variant{"7-bit filter", DType::U8, 64, 0},
                      Variant{"8-bit filter", DType::U8, 127, 0},
                      Variant{"i8 x", DType::I8, 64, 0},
                      Variant{"large bias", DType::U8, 64, 1 << 30}}) {
      bool signedX = v.xType == DType::I8;
      auto x =
          uniform(numElements(c.x), signedX ? -128 : 200, signedX ? 127 : 255);
      auto w = uniform(numElements(c.w), -v.wMax, v.wMax);
      auto bias = uniform(c.w[0], -100000, 100000);
      auto expected = referenceConv(c, y, x, w, &bias, Activation{});
      std::vector<uint8_t> xBytes(x.size());
      for (size_t i = 0; i != x.size(); ++i)
        xBytes[i] = signedX ? uint8_t(int8_t(x[i])) : uint8_t(x[i]);
      std::vector<int8_t> wBytes(w.begin(), w.end());
      std::vector<int32_t> b(bias.begin(), bias.end()), out(numElements(y));
      for (int32_t &value : b)
        value += v.biasOffset;
      for (ConvLayouts layouts :
           {ConvLayouts{}, ConvLayouts{Layout::ChannelsLast, Layout::Plain},
            ConvLayouts{Layout::Plain, Layout::ChannelsLast},
            ConvLayouts{Layout::ChannelsLast, Layout::ChannelsLast}}) {
        IntegerConv conv(ctx, v.xType, c.x, c.w, true, y, c.strides,
                         c.dilations, c.padBegin, c.padEnd, c.group, true,
                         layouts);
        auto xIn =
            relayoutCopy(ctx, DType::U8, xBytes, c.x, Layout::Plain, layouts.x);
        std::string variant = std::string(v.name) + " x " +
                              std::to_string(int(layouts.x)) + " y " +
                              std::to_string(int(layouts.y));
        for (int repeat = 0; repeat != 2; ++repeat) {
          std::fill(out.begin(), out.end(), -1);
          conv.run(xIn.data(), wBytes.data(), b.data(), out.data());
          auto plain =
              relayoutCopy(ctx, DType::I32, out, y, layouts.y, Layout::Plain);
          for (size_t i = 0; i != plain.size(); ++i)
            ASSERT_EQ(int64_t(plain[i]), int64_t(expected[i]) + v.biasOffset)
                << what << " " << variant << " at " << i;
        }
      }
    }
  }
}

/// A filter that is not constant is measured on every run: the same buffer
/// first within +-64, then full range, then back.
TEST(CpuDenseConv, IntegerConvRemeasuresChangingFilters) {
  Context ctx(0);
  ConvCase c{{2, 16, 9, 9}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1};
  Shape y = convOutput(c);
  std::vector<float> x(numElements(c.x), 255.f);
  std::vector<uint8_t> xBytes(x.size(), 255);
  std::vector<int8_t> wBytes(numElements(c.w));
  std::vector<int32_t> out(numElements(y));
  IntegerConv conv(ctx, DType::U8, c.x, c.w, false, y, c.strides, c.dilations,
                   c.padBegin, c.padEnd, c.group, false);
  for (int magnitude : {64, 127, 60}) {
    std::fill(wBytes.begin(), wBytes.end(), int8_t(magnitude));
    std::vector<float> w(wBytes.begin(), wBytes.end());
    auto expected = referenceConv(c, y, x, w, nullptr, Activation{});
    conv.run(xBytes.data(), wBytes.data(), nullptr, out.data());
    for (size_t i = 0; i != out.size(); ++i)
      ASSERT_EQ(int64_t(out[i]), int64_t(expected[i]))
          << "|w| = " << magnitude << " at " << i;
  }
  EXPECT_THROW(IntegerConv(ctx, DType::F32, c.x, c.w, false, y, c.strides,
                           c.dilations, c.padBegin, c.padEnd, 1, true),
               Error);
  EXPECT_THROW(IntegerConv(ctx, DType::U8, c.x, c.w, false, {2, 16, 8, 8},
                           c.strides, c.dilations, c.padBegin, c.padEnd, 3,
                           true),
               Error);
}

//===----------------------------------------------------------------------===//
// ConvGradInput, ConvGradFilter
//===----------------------------------------------------------------------===//

/// dx and dw of the convolution `c` for the result gradient dy, by scattering
/// every multiply-add of referenceConv's loop back onto its two factors.
void referenceConvGrads(const ConvCase &c, const Shape &y,
                        const std::vector<float> &x,
                        const std::vector<float> &w,
                        const std::vector<float> &dy, std::vector<double> &dx,
                        std::vector<double> &dw) {
  size_t spatial = c.x.size() - 2;
  int64_t inPerGroup = c.w[1], outPerGroup = c.w[0] / c.group;
  int64_t outSpatial = numElements(Shape(y.begin() + 2, y.end()));
  int64_t inSpatial = numElements(Shape(c.x.begin() + 2, c.x.end()));
  int64_t taps = numElements(Shape(c.w.begin() + 2, c.w.end()));
  dx.assign(numElements(c.x), 0.0);
  dw.assign(numElements(c.w), 0.0);
  for (int64_t n = 0; n != y[0]; ++n)
    for (int64_t oc = 0; oc != y[1]; ++oc) {
      int64_t g = oc / outPerGroup;
      for (int64_t o = 0; o != outSpatial; ++o) {
        Shape outIdx(spatial);
        for (int64_t rest = o, i = spatial; i-- > 0;) {
          outIdx[i] = rest % y[i + 2];
          rest /= y[i + 2];
        }
        double grad = dy[(n * y[1] + oc) * outSpatial + o];
        for (int64_t ic = 0; ic != inPerGroup; ++ic)
          for (int64_t t = 0; t != taps; ++t) {
            int64_t inOffset = 0;
            bool inside = true;
            for (int64_t rest = t, stride = 1, i = spatial; i-- > 0;) {
              int64_t tap = rest % c.w[i + 2];
              rest /= c.w[i + 2];
              int64_t pos = outIdx[i] * c.strides[i] - c.padBegin[i] +
                            tap * c.dilations[i];
              inside &= pos >= 0 && pos < c.x[i + 2];
              inOffset += pos * stride;
              stride *= c.x[i + 2];
            }
            if (!inside)
              continue;
            int64_t xIndex =
                (n * c.x[1] + g * inPerGroup + ic) * inSpatial + inOffset;
            int64_t wIndex = (oc * inPerGroup + ic) * taps + t;
            dx[xIndex] += grad * w[wIndex];
            dw[wIndex] += grad * x[xIndex];
          }
      }
    }
}

std::vector<float> toFloats(const std::vector<double> &values) {
  return std::vector<float>(values.begin(), values.end());
}

// Plain, padded (symmetric and not), strided with an end pad the floor
// drops, dilated, grouped, depthwise, 1-D and 3-D, and batches of several
// images; each run twice to check the output is overwritten, not summed.
TEST(CpuDenseConvGrad, RandomAgainstReference) {
  Context ctx(0);
  std::vector<ConvCase> cases{
      {{2, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{1, 4, 7, 9}, {6, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{2, 4, 9, 9}, {8, 2, 3, 3}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, 2},
      {{1, 6, 10, 11}, {6, 1, 3, 3}, {1, 2}, {2, 2}, {2, 1}, {2, 3}, 6},
      {{3, 16, 12, 12}, {32, 16, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1},
      {{1, 8, 13, 13}, {12, 4, 5, 3}, {3, 2}, {1, 2}, {2, 1}, {2, 1}, 2},
      {{4, 16, 10, 10}, {16, 16, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1},
      // dx by Winograd where x and dy are native (suitsInputAdjoint): no,
      // odd, asymmetric and wide pads, y's channels != x's.
      {{2, 32, 9, 10}, {48, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 48, 7, 6}, {32, 48, 3, 3}, {1, 1}, {1, 1}, {0, 2}, {2, 1}, 1},
      {{3, 16, 8, 8}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{2, 3, 20}, {5, 3, 4}, {1}, {1}, {0}, {0}, 1},
      {{1, 4, 17}, {6, 2, 3}, {2}, {3}, {2}, {1}, 2},
      {{1, 2, 5, 6, 7},
       {3, 2, 3, 2, 3},
       {1, 2, 1},
       {1, 1, 2},
       {1, 0, 1},
       {1, 1, 0},
       1},
  };
  unsigned seed = 1300;
  for (const ConvCase &c : cases) {
    Shape y = convOutput(c);
    auto x = randomData(numElements(c.x), seed++);
    auto w = randomData(numElements(c.w), seed++);
    auto dy = randomData(numElements(y), seed++);
    std::vector<double> dxRef, dwRef;
    referenceConvGrads(c, y, x, w, dy, dxRef, dwRef);
    std::string what = "conv grads x " + shapeString(c.x) + " w " +
                       shapeString(c.w) + " group " + std::to_string(c.group);
    // Native layouts where the channels allow them: x and dx share one,
    // dy has the other.
    for (Layout xLayout : {Layout::Plain, Layout::Native})
      for (Layout yLayout : {Layout::Plain, Layout::Native}) {
        if ((xLayout == Layout::Native && c.x[1] % 16 != 0) ||
            (yLayout == Layout::Native && y[1] % 16 != 0))
          continue;
        ConvLayouts layouts{xLayout, yLayout};
        if (winogradEnabled() && xLayout == Layout::Native &&
            yLayout == Layout::Native && c.x.size() == 4 && c.w[2] == 3 &&
            c.strides == Shape{1, 1}) {
          EXPECT_TRUE(WinogradConv::suitsInputAdjoint(
              c.x, c.w, y, c.strides, c.dilations, c.padBegin, c.group))
              << what;
        }
        std::string named = what +
                            (xLayout == Layout::Native ? " native x" : "") +
                            (yLayout == Layout::Native ? " native dy" : "");
        ConvGradInput gradInput(ctx, DType::F32, c.x, c.w, y, c.strides,
                                c.dilations, c.padBegin, c.padEnd, c.group,
                                layouts);
        ConvGradFilter gradFilter(ctx, DType::F32, c.x, c.w, y, c.strides,
                                  c.dilations, c.padBegin, c.padEnd, c.group,
                                  layouts);
        auto xIn = toLayout(ctx, x, c.x, Layout::Plain, xLayout);
        auto dyIn = toLayout(ctx, dy, y, Layout::Plain, yLayout);
        std::vector<float> dx(numElements(c.x)), dw(numElements(c.w));
        for (int run = 0; run != 2; ++run) {
          gradInput.run(dyIn.data(), w.data(), dx.data());
          gradFilter.run(xIn.data(), dyIn.data(), dw.data());
          std::string pass = run ? " (second run)" : "";
          expectClose(toLayout(ctx, dx, c.x, xLayout, Layout::Plain),
                      toFloats(dxRef), named + " dx" + pass);
          expectClose(dw, toFloats(dwRef), named + " dw" + pass);
        }
      }
  }
}

// The adjoints of a conv whose y needs a larger end pad than given (the
// ceil-like shape the Conv kernel also accepts: y is authoritative).
TEST(CpuDenseConvGrad, OutputShapeIsAuthoritative) {
  Context ctx(0);
  // x 1x1x5, w 1x1x2, stride 2, no pads: floor gives 2 outputs; y has 3,
  // the third window covering x[4] and one zero past the end.
  ConvCase c{{1, 1, 5}, {1, 1, 2}, {2}, {1}, {0}, {0}, 1};
  Shape y{1, 1, 3};
  std::vector<float> x{1, 2, 3, 4, 5}, w{2, 3}, dy{1, 10, 100}, dx(5), dw(2);
  ConvGradInput gradInput(ctx, DType::F32, c.x, c.w, y, c.strides, c.dilations,
                          c.padBegin, c.padEnd, 1);
  gradInput.run(dy.data(), w.data(), dx.data());
  expectClose(dx, {2, 3, 20, 30, 200}, "conv grad input, ceil-like y");
  ConvGradFilter gradFilter(ctx, DType::F32, c.x, c.w, y, c.strides,
                            c.dilations, c.padBegin, c.padEnd, 1);
  gradFilter.run(x.data(), dy.data(), dw.data());
  // dw0 = 1*1 + 10*3 + 100*5, dw1 = 1*2 + 10*4 + 100*0.
  expectClose(dw, {531, 42}, "conv grad filter, ceil-like y");
}

TEST(CpuDenseConvGrad, RejectsBadParameters) {
  Context ctx(0);
  EXPECT_THROW(ConvGradInput(ctx, DType::F32, {1, 3, 4, 4}, {4, 2, 3, 3},
                             {1, 4, 2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 2),
               Error);
  EXPECT_THROW(ConvGradFilter(ctx, DType::F32, {1, 3, 4, 4}, {4, 3, 3, 3},
                              {1, 5, 2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1),
               Error);
  EXPECT_THROW(ConvGradInput(ctx, DType::F64, {1, 1, 4}, {1, 1, 2}, {1, 1, 3},
                             {1}, {1}, {0}, {0}, 1),
               Error);
}

//===----------------------------------------------------------------------===//
// Kernels built on one thread and run on another
//===----------------------------------------------------------------------===//

// oneDNN's library-managed scratchpad is per thread: a primitive built on
// the main thread and executed on a stage's worker thread must bring its
// own. The references are naive loops; the kernels run inside a std::thread.
TEST(CpuDense, KernelsRunOnAnotherThread) {
  Context ctx(0);

  // Conv: the 5x5 "same" convolution of a 28x28 MNIST image.
  ConvCase convCase{{1, 1, 28, 28}, {8, 1, 5, 5}, {1, 1}, {1, 1},
                    {2, 2},         {2, 2},       1};
  Shape convY = convOutput(convCase);
  ASSERT_EQ(convY, (Shape{1, 8, 28, 28}));
  Conv conv(ctx, DType::F32, convCase.x, convCase.w, false, convY,
            convCase.strides, convCase.dilations, convCase.padBegin,
            convCase.padEnd, 1, Activation{}, true);
  auto convX = randomData(numElements(convCase.x), 900);
  auto convW = randomData(numElements(convCase.w), 901);
  std::vector<float> convOut(numElements(convY));

  // Gemm with a constant (repacked) B, a bias row and a fused Relu.
  const int64_t m = 64, n = 48, k = 70;
  Shape cShape{n};
  Gemm gemm(ctx, DType::F32, m, n, k, false, false, 1.f, 1.f, &cShape,
            makeAct(UnaryKind::Relu), true);
  auto gemmA = randomData(m * k, 902), gemmB = randomData(k * n, 903),
       gemmC = randomData(n, 904);
  std::vector<float> gemmOut(m * n);

  // Max pool, 3x3 windows with stride 2 and one pad on each side.
  Shape poolX{2, 3, 16, 16}, poolY{2, 3, 8, 8};
  Pool pool(ctx, DType::F32, PoolKind::Max, poolX, poolY, {3, 3}, {2, 2},
            {1, 1}, {1, 1}, {1, 1});
  auto poolIn = randomData(numElements(poolX), 905);
  std::vector<float> poolOut(numElements(poolY));

  // Softmax over the innermost axis.
  const int64_t rows = 8, cols = 100;
  Softmax softmax(ctx, DType::F32, {rows, cols}, 1, false);
  auto softIn = randomData(rows * cols, 906);
  std::vector<float> softOut(rows * cols);

  // Sum over the middle axis.
  Shape reduceX{16, 64, 8}, reduceY{16, 1, 8};
  Reduce reduce(ctx, DType::F32, ReduceKind::Sum, reduceX, {1}, reduceY);
  auto reduceIn = randomData(numElements(reduceX), 907);
  std::vector<float> reduceOut(numElements(reduceY));

  std::string failure;
  std::thread worker([&] {
    try {
      // Twice: the second run reuses the scratchpads and repacked weights.
      for (int i = 0; i != 2; ++i) {
        conv.run(convX.data(), convW.data(), nullptr, convOut.data());
        gemm.run(gemmA.data(), gemmB.data(), gemmC.data(), gemmOut.data());
        pool.run(poolIn.data(), poolOut.data());
        softmax.run(softIn.data(), softOut.data());
        reduce.run(reduceIn.data(), reduceOut.data());
      }
    } catch (const std::exception &error) {
      failure = error.what();
    }
  });
  worker.join();
  ASSERT_EQ(failure, "");

  expectClose(
      convOut,
      referenceConv(convCase, convY, convX, convW, nullptr, Activation{}),
      "conv on another thread");
  expectClose(gemmOut,
              referenceGemm(m, n, k, false, false, 1.f, 1.f, &cShape, gemmA,
                            gemmB, gemmC, makeAct(UnaryKind::Relu)),
              "gemm on another thread");

  std::vector<float> poolExpected(numElements(poolY));
  for (int64_t plane = 0; plane != poolX[0] * poolX[1]; ++plane)
    for (int64_t oh = 0; oh != poolY[2]; ++oh)
      for (int64_t ow = 0; ow != poolY[3]; ++ow) {
        float best = -INFINITY;
        for (int64_t kh = 0; kh != 3; ++kh)
          for (int64_t kw = 0; kw != 3; ++kw) {
            int64_t ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
            if (ih >= 0 && ih < poolX[2] && iw >= 0 && iw < poolX[3])
              best = std::max(best,
                              poolIn[(plane * poolX[2] + ih) * poolX[3] + iw]);
          }
        poolExpected[(plane * poolY[2] + oh) * poolY[3] + ow] = best;
      }
  expectClose(poolOut, poolExpected, "pool on another thread");

  std::vector<float> softExpected(rows * cols);
  for (int64_t r = 0; r != rows; ++r) {
    const float *row = softIn.data() + r * cols;
    float top = *std::max_element(row, row + cols);
    double sum = 0;
    for (int64_t c = 0; c != cols; ++c)
      sum += std::exp(double(row[c]) - top);
    for (int64_t c = 0; c != cols; ++c)
      softExpected[r * cols + c] = float(std::exp(double(row[c]) - top) / sum);
  }
  expectClose(softOut, softExpected, "softmax on another thread");

  std::vector<float> reduceExpected(numElements(reduceY));
  for (int64_t i = 0; i != reduceX[0]; ++i)
    for (int64_t j = 0; j != reduceX[2]; ++j) {
      double sum = 0;
      for (int64_t r = 0; r != reduceX[1]; ++r)
        sum += reduceIn[(i * reduceX[1] + r) * reduceX[2] + j];
      reduceExpected[i * reduceX[2] + j] = float(sum);
    }
  expectClose(reduceOut, reduceExpected, "reduce on another thread");
}

} // namespace

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

// A one-unit RNN with Relu, worked by hand: h_t = relu(x_t + 0.5 h_{t-1} +
// 0.25) over 3 steps, forward and reverse, with the second row ending after
// one step (its state stays, its later y are 0).
TEST(CpuRecurrent, HandComputedRnn) {
  Context ctx(1);
  RecurrentParams p;
  p.cell = RecurrentCell::RNN;
  p.steps = 3;
  p.batch = 2;
  p.hidden = 1;
  p.activations[0] = UnaryKind::Relu;
  p.hasRecurrentBias = true;
  p.hasLengths = true;
  std::vector<float> x = {1, 2, -1, 0, 3, 5}; // [T=3, B=2, G=1]
  std::vector<float> r = {0.5f}, rb = {0.25f}, h0 = {0, 4};
  std::vector<int64_t> lengths = {3, 1};
  std::vector<float> y(6), hLast(2);
  Recurrent(ctx, p).run(x.data(), r.data(), rb.data(), lengths.data(),
                        h0.data(), nullptr, nullptr, y.data(), hLast.data(),
                        nullptr);
  // Row 0: 1.25, relu(-1 + 0.625 + 0.25) = 0, 3.25. Row 1: relu(2 + 2 +
  // 0.25) = 4.25, then kept.
  expectClose(y, {1.25f, 4.25f, 0, 0, 3.25f, 0}, "forward y");
  expectClose(hLast, {3.25f, 4.25f}, "forward h");
  p.reverse = true;
  Recurrent(ctx, p).run(x.data(), r.data(), rb.data(), lengths.data(),
                        h0.data(), nullptr, nullptr, y.data(), hLast.data(),
                        nullptr);
  // Row 0 from t = 2: 3.25, -1 + 1.625 + 0.25 = 0.875, 1 + 0.4375 + 0.25 =
  // 1.6875. Row 1 takes only t = 0: relu(2 + 2 + 0.25).
  expectClose(y, {1.6875f, 4.25f, 0.875f, 0, 3.25f, 0}, "reverse y");
  expectClose(hLast, {1.6875f, 4.25f}, "reverse h");
}

// Batch rows are independent: a batch split into blocks of rows, each run
// through every step by its own thread and product, gives each row what
// running that row alone gives. Every cell, GRU both ways, peepholes, a
// reverse run and sequence lengths (one 0) on 18 rows, 2 blocks of 9.
TEST(CpuRecurrent, RowBlocksMatchRowByRow) {
  Context ctx(2);
  ctx.enterThread();
  const int64_t steps = 5, batch = 18, hidden = 96;
  struct Variant {
    RecurrentCell cell;
    bool linearBeforeReset, peepholes, reverse;
  };
  for (Variant v : {Variant{RecurrentCell::LSTM, false, true, false},
                    Variant{RecurrentCell::GRU, false, false, true},
                    Variant{RecurrentCell::GRU, true, false, false},
                    Variant{RecurrentCell::RNN, false, false, false}}) {
    RecurrentParams p;
    p.cell = v.cell;
    p.steps = steps;
    p.batch = batch;
    p.hidden = hidden;
    p.reverse = v.reverse;
    p.activations[0] =
        v.cell == RecurrentCell::RNN ? UnaryKind::Tanh : UnaryKind::Sigmoid;
    p.linearBeforeReset = v.linearBeforeReset;
    p.hasRecurrentBias = p.hasLengths = true;
    p.hasPeepholes = v.peepholes;
    const int64_t gates = gatesPerUnit(v.cell) * hidden;
    auto x = randomData(steps * batch * gates, 5);
    auto r = randomData(gates * hidden, 6), rb = randomData(gates, 7);
    auto h0 = randomData(batch * hidden, 8), c0 = randomData(batch * hidden, 9);
    auto peep = randomData(3 * hidden, 10);
    for (float &w : r)
      w *= 0.1f;
    std::vector<int64_t> lengths(batch, steps);
    lengths[3] = 0;
    lengths[10] = 2;
    std::vector<float> y(steps * batch * hidden), hLast(batch * hidden),
        cLast(batch * hidden);
    Recurrent(ctx, p).run(x.data(), r.data(), rb.data(), lengths.data(),
                          h0.data(), c0.data(), peep.data(), y.data(),
                          hLast.data(), cLast.data());
    RecurrentParams one = p;
    one.batch = 1;
    Recurrent single(ctx, one);
    std::vector<float> yRows(y.size()), hRows(hLast.size()),
        cRows(cLast.size());
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<float> xb(steps * gates), yb(steps * hidden);
      for (int64_t t = 0; t < steps; ++t)
        std::copy_n(x.data() + (t * batch + b) * gates, gates,
                    xb.data() + t * gates);
      single.run(xb.data(), r.data(), rb.data(), &lengths[b],
                 h0.data() + b * hidden, c0.data() + b * hidden, peep.data(),
                 yb.data(), hRows.data() + b * hidden,
                 cRows.data() + b * hidden);
      for (int64_t t = 0; t < steps; ++t)
        std::copy_n(yb.data() + t * hidden, hidden,
                    yRows.data() + (t * batch + b) * hidden);
    }
    std::string what = "cell " + std::to_string(int(v.cell)) +
                       (v.linearBeforeReset ? " linear" : "") +
                       (v.reverse ? " reverse" : "");
    expectClose(y, yRows, what + " y");
    expectClose(hLast, hRows, what + " h");
    if (v.cell == RecurrentCell::LSTM)
      expectClose(cLast, cRows, what + " c");
  }
}

// The input projected inside the kernel (params.input) gives what the
// projection made before it gives: every cell (LSTM with peepholes, GRU
// with its candidate apart), forward and reverse over 37 steps (projected a
// chunk at a time, the last chunk shorter), on row blocks with Gemms (18
// rows) and on packed panels (3 rows), with and without Wb.
TEST(CpuRecurrent, InputProjectedInTheKernel) {
  Context ctx(2);
  ctx.enterThread();
  const int64_t steps = 37, hidden = 80, input = 24;
  for (RecurrentCell cell :
       {RecurrentCell::LSTM, RecurrentCell::GRU, RecurrentCell::RNN})
    for (int64_t batch : {18, 3})
      for (bool inputBias : {true, false}) {
        RecurrentParams p;
        p.cell = cell;
        p.steps = steps;
        p.batch = batch;
        p.hidden = hidden;
        p.activations[0] =
            cell == RecurrentCell::RNN ? UnaryKind::Tanh : UnaryKind::Sigmoid;
        p.hasRecurrentBias = p.hasLengths = true;
        p.hasPeepholes = cell == RecurrentCell::LSTM;
        p.reverse = !inputBias;
        const int64_t gates = gatesPerUnit(cell) * hidden;
        auto x = randomData(steps * batch * input, 11);
        auto w = randomData(gates * input, 12), wb = randomData(gates, 13);
        auto r = randomData(gates * hidden, 14), rb = randomData(gates, 15);
        auto h0 = randomData(batch * hidden, 16);
        auto c0 = randomData(batch * hidden, 17);
        auto peep = randomData(3 * hidden, 18);
        for (float &v : r)
          v *= 0.1f;
        std::vector<int64_t> lengths(batch, steps);
        lengths[1] = 20;
        // X W^T + Wb, as the Gemm before the kernel makes it.
        std::vector<float> projected(steps * batch * gates);
        for (int64_t row = 0; row < steps * batch; ++row)
          for (int64_t j = 0; j < gates; ++j) {
            double sum = inputBias ? wb[j] : 0.0;
            for (int64_t k = 0; k < input; ++k)
              sum += double(x[row * input + k]) * double(w[j * input + k]);
            projected[row * gates + j] = float(sum);
          }
        auto runWith = [&](const RecurrentParams &params, const float *in,
                           const float *weights, const float *bias) {
          std::vector<float> y(steps * batch * hidden), hLast(batch * hidden),
              cLast(batch * hidden);
          Recurrent(ctx, params)
              .run(in, r.data(), rb.data(), lengths.data(), h0.data(),
                   c0.data(), peep.data(), y.data(), hLast.data(), cLast.data(),
                   weights, bias);
          y.insert(y.end(), hLast.begin(), hLast.end());
          if (cell == RecurrentCell::LSTM)
            y.insert(y.end(), cLast.begin(), cLast.end());
          return y;
        };
        auto expected = runWith(p, projected.data(), nullptr, nullptr);
        RecurrentParams fused = p;
        fused.input = input;
        expectClose(
            runWith(fused, x.data(), w.data(), inputBias ? wb.data() : nullptr),
            expected,
            "cell " + std::to_string(int(cell)) + " batch " +
                std::to_string(batch) + (inputBias ? " Wb" : ""));
      }
  RecurrentParams negative;
  negative.steps = negative.batch = 1;
  negative.hidden = 2;
  negative.input = -3;
  EXPECT_THROW(Recurrent(ctx, negative), Error);
}

TEST(CpuRecurrent, RejectsBadParametersAndLengths) {
  Context ctx(1);
  RecurrentParams p;
  p.cell = RecurrentCell::GRU;
  p.steps = 2;
  p.batch = 1;
  p.hidden = 2;
  p.activations[0] = UnaryKind::Sigmoid;
  p.activations[1] = UnaryKind::Exp;
  EXPECT_THROW(Recurrent(ctx, p), Error);
  p.activations[1] = UnaryKind::Tanh;
  p.hasPeepholes = true;
  EXPECT_THROW(Recurrent(ctx, p), Error);
  p.hasPeepholes = false;
  p.hidden = 0;
  EXPECT_THROW(Recurrent(ctx, p), Error);
  p.hidden = 2;
  p.hasLengths = true;
  Recurrent gru(ctx, p);
  std::vector<float> x(12), r(12), rb(6), h0(2), y(4), hLast(2);
  std::vector<int64_t> tooLong = {3};
  try {
    gru.run(x.data(), r.data(), rb.data(), tooLong.data(), h0.data(), nullptr,
            nullptr, y.data(), hLast.data(), nullptr);
    FAIL() << "a sequence_lens past the steps ran";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("sequence_lens[0] = 3"),
              std::string::npos)
        << error.what();
  }
}
