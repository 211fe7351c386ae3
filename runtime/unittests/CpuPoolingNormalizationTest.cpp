//===- CpuPoolingNormalizationTest.cpp - Pools, norms, softmax, reduce ----===//
//
// Hand-computed cases, then random data against naive loops written here.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

std::vector<float> randomData(int64_t n, unsigned seed, float lo = -1.f,
                              float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> data(n);
  for (float &v : data)
    v = dist(rng);
  return data;
}

void expectClose(const std::vector<float> &actual,
                 const std::vector<float> &expected, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i != actual.size(); ++i) {
    if (std::isinf(expected[i]) || std::isnan(expected[i])) {
      ASSERT_EQ(std::isnan(actual[i]), std::isnan(expected[i]))
          << what << " at " << i;
      if (!std::isnan(expected[i])) {
        ASSERT_EQ(actual[i], expected[i]) << what << " at " << i;
      }
      continue;
    }
    ASSERT_NEAR(actual[i], expected[i], 1e-4 * (1 + std::fabs(expected[i])))
        << what << " at " << i;
  }
}

/// Row-major index -> coordinates.
Shape unravel(int64_t index, const Shape &shape) {
  Shape coords(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = index % shape[i];
    index /= shape[i];
  }
  return coords;
}

int64_t ravel(const Shape &coords, const Shape &shape) {
  int64_t index = 0;
  for (size_t i = 0; i != shape.size(); ++i)
    index = index * shape[i] + coords[i];
  return index;
}

//===----------------------------------------------------------------------===//
// Pool
//===----------------------------------------------------------------------===//

struct PoolCase {
  Shape x, kernel, strides, dilations, padBegin, padEnd;
  bool ceil;
};

Shape poolOutput(const PoolCase &c) {
  Shape y{c.x[0], c.x[1]};
  for (size_t i = 0; i != c.kernel.size(); ++i) {
    int64_t extent = (c.kernel[i] - 1) * c.dilations[i] + 1;
    int64_t span = c.x[i + 2] + c.padBegin[i] + c.padEnd[i] - extent;
    int64_t out = (c.ceil ? (span + c.strides[i] - 1) / c.strides[i]
                          : span / c.strides[i]) +
                  1;
    // ONNX: the last window must start inside input + begin pad.
    if (c.ceil && (out - 1) * c.strides[i] >= c.x[i + 2] + c.padBegin[i])
      --out;
    y.push_back(out);
  }
  return y;
}

/// The API's semantics, tap by tap.
std::vector<float> referencePool(PoolKind kind, const PoolCase &c,
                                 const Shape &y, const std::vector<float> &x) {
  size_t spatial = c.kernel.size();
  std::vector<float> out(numElements(y));
  int64_t taps = numElements(c.kernel);
  for (int64_t o = 0; o != int64_t(out.size()); ++o) {
    Shape at = unravel(o, y);
    double sum = 0, best = -INFINITY;
    int64_t inInput = 0, inPadded = 0;
    for (int64_t t = 0; t != taps; ++t) {
      Shape tap = unravel(t, c.kernel);
      Shape pos{at[0], at[1]};
      bool inside = true, padded = true;
      for (size_t i = 0; i != spatial; ++i) {
        int64_t p =
            at[i + 2] * c.strides[i] - c.padBegin[i] + tap[i] * c.dilations[i];
        inside &= p >= 0 && p < c.x[i + 2];
        padded &= p >= -c.padBegin[i] && p < c.x[i + 2] + c.padEnd[i];
        pos.push_back(p);
      }
      inPadded += padded;
      if (!inside)
        continue;
      ++inInput;
      float v = x[ravel(pos, c.x)];
      sum += v;
      // numpy's max: a NaN tap makes the window NaN.
      best = (v > best || v != v) ? double(v) : best;
    }
    switch (kind) {
    case PoolKind::Max:
      out[o] = float(best);
      break;
    case PoolKind::AvgExcludePad:
      out[o] = float(sum / inInput);
      break;
    case PoolKind::AvgIncludePad:
      out[o] = float(sum / inPadded);
      break;
    }
  }
  return out;
}

TEST(CpuPoolingPool, HandComputedCeilMode) {
  Context ctx(0);
  // x = [1..5], kernel 2, stride 2, ceil mode: windows [1,2] [3,4] [5].
  std::vector<float> x{1, 2, 3, 4, 5}, y(3);
  Pool max(ctx, DType::F32, PoolKind::Max, {1, 1, 5}, {1, 1, 3}, {2}, {2}, {1},
           {0}, {0});
  max.run(x.data(), y.data());
  expectClose(y, {2, 4, 5}, "max");
  // The clipped last window counts its one input tap only.
  Pool include(ctx, DType::F32, PoolKind::AvgIncludePad, {1, 1, 5}, {1, 1, 3},
               {2}, {2}, {1}, {0}, {0});
  include.run(x.data(), y.data());
  expectClose(y, {1.5f, 3.5f, 5}, "avg include pad, ceil");
  // Explicit pads count for include-pad: begin pad 1 -> windows [p,1] [2,3]
  // [4,5] -> [0.5, 2.5, 4.5]; exclude-pad -> [1, 2.5, 4.5].
  Pool padded(ctx, DType::F32, PoolKind::AvgIncludePad, {1, 1, 5}, {1, 1, 3},
              {2}, {2}, {1}, {1}, {0});
  padded.run(x.data(), y.data());
  expectClose(y, {0.5f, 2.5f, 4.5f}, "avg include pad");
  Pool excluded(ctx, DType::F32, PoolKind::AvgExcludePad, {1, 1, 5}, {1, 1, 3},
                {2}, {2}, {1}, {1}, {0});
  excluded.run(x.data(), y.data());
  expectClose(y, {1, 2.5f, 4.5f}, "avg exclude pad");
}

TEST(CpuPoolingPool, RandomAgainstReference) {
  Context ctx(0);
  std::vector<PoolCase> cases{
      {{2, 3, 8, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false},
      {{1, 2, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
      {{1, 2, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true},
      {{2, 2, 6, 7}, {3, 2}, {2, 3}, {1, 1}, {0, 0}, {0, 0}, true},
      {{1, 3, 11, 10}, {3, 3}, {2, 1}, {2, 2}, {2, 1}, {0, 2}, true},
      {{1, 2, 9, 8}, {2, 3}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, false},
      {{2, 3, 10}, {3}, {2}, {1}, {1}, {1}, false},
      {{2, 3, 10}, {4}, {3}, {1}, {1}, {0}, true},
      {{1, 2, 12}, {3}, {2}, {2}, {0}, {2}, true},
      {{1, 2, 5, 6, 7},
       {2, 3, 2},
       {2, 2, 2},
       {1, 1, 1},
       {0, 1, 0},
       {1, 0, 0},
       true},
  };
  unsigned seed = 900;
  for (const PoolCase &c : cases)
    for (PoolKind kind :
         {PoolKind::Max, PoolKind::AvgExcludePad, PoolKind::AvgIncludePad}) {
      Shape y = poolOutput(c);
      auto x = randomData(numElements(c.x), seed++);
      Pool pool(ctx, DType::F32, kind, c.x, y, c.kernel, c.strides, c.dilations,
                c.padBegin, c.padEnd);
      std::vector<float> out(numElements(y));
      pool.run(x.data(), out.data());
      expectClose(out, referencePool(kind, c, y, x),
                  "pool " + shapeString(c.x) + " -> " + shapeString(y) +
                      " kind " + std::to_string(int(kind)));
    }
}

// The kernel's own loops: the 2x2 stride-2 tiling (C == 1 as in MNIST and
// C > 1, even and odd sizes), and the general loop with stride 1, 2 and 3,
// pads, dilations and ceil-mode overhangs; a NaN tap makes max NaN, as on
// the GPU (before 2026-12-02 the loops skipped it, and a window of NaN or
// -inf gave the lowest finite float).
TEST(CpuPoolingPool, OwnLoopsAgainstReference) {
  Context ctx(0);
  std::vector<PoolCase> cases{
      {{4, 1, 28, 28}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false},
      {{3, 5, 16, 12}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false},
      {{2, 3, 9, 11}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false},
      {{2, 3, 9, 11}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true},
      {{2, 4, 14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
      {{1, 2, 13, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {{1, 2, 13, 17}, {5, 4}, {3, 3}, {1, 2}, {2, 1}, {2, 2}, true},
      {{3, 1, 40}, {2}, {2}, {1}, {0}, {0}, false},
      {{1, 3, 6, 8, 8},
       {2, 2, 2},
       {2, 2, 2},
       {1, 1, 1},
       {0, 0, 0},
       {0, 0, 0},
       false},
  };
  unsigned seed = 1300;
  for (const PoolCase &c : cases)
    for (PoolKind kind :
         {PoolKind::Max, PoolKind::AvgExcludePad, PoolKind::AvgIncludePad}) {
      Shape y = poolOutput(c);
      auto x = randomData(numElements(c.x), seed++);
      if (kind == PoolKind::Max) {
        x[x.size() / 3] = NAN;
        // A window of -inf only, where one lies wholly inside the input.
        for (size_t i = x.size() / 2; i != x.size() / 2 + 6 && i < x.size();
             ++i)
          x[i] = -INFINITY;
      }
      Pool pool(ctx, DType::F32, kind, c.x, y, c.kernel, c.strides, c.dilations,
                c.padBegin, c.padEnd);
      std::vector<float> out(numElements(y), -7.f);
      pool.run(x.data(), out.data());
      expectClose(out, referencePool(kind, c, y, x),
                  "own pool " + shapeString(c.x) + " -> " + shapeString(y) +
                      " kind " + std::to_string(int(kind)));
    }
}

// Windows of NaN or -inf: numpy's max, on the 2x2 tiling and on the
// general loop (before 2026-12-02 both gave -3.4e38 for a window of -inf
// and for one of NaN only).
TEST(CpuPoolingPool, MaxOfNaNAndInfinities) {
  Context ctx(0);
  const float inf = INFINITY;
  std::vector<float> x{-inf, -inf, 1, NAN, -inf, -inf, 3, 4,
                       NAN,  NAN,  5, 6,   NAN,  NAN,  7, 8};
  std::vector<float> y(4);
  Pool tiled(ctx, DType::F32, PoolKind::Max, {1, 1, 4, 4}, {1, 1, 2, 2}, {2, 2},
             {2, 2}, {1, 1}, {0, 0}, {0, 0});
  tiled.run(x.data(), y.data());
  expectClose(y, {-inf, NAN, NAN, 8}, "2x2 tiling");
  std::vector<float> general(9);
  Pool loop(ctx, DType::F32, PoolKind::Max, {1, 1, 4, 4}, {1, 1, 3, 3}, {2, 2},
            {1, 1}, {1, 1}, {0, 0}, {0, 0});
  loop.run(x.data(), general.data());
  expectClose(general, {-inf, 3, NAN, NAN, NAN, 6, NAN, NAN, 8},
              "general loop");
}

// The 2x2 tiling's vector path (four windows at a time): a NaN in any of
// a window's four taps, in each lane, and a window of -inf; the ninth
// window is the scalar remainder.
TEST(CpuPoolingPool, TiledMaxVectorPathKeepsNaN) {
  Context ctx(0);
  const float inf = INFINITY;
  std::vector<float> x{
      NAN, 1, 2,   3, -inf, -inf, 4,  5, 6,
      NAN, 8, 9,   1, 2,    -1,   -2, 5, 6, // top row, 18 columns
      0,   0, NAN, 1, -inf, -inf, 9,  2, 1,
      1,   0, 0,   3, NAN,  -3,   -4, 7, 8};
  std::vector<float> y(9);
  Pool tiled(ctx, DType::F32, PoolKind::Max, {1, 1, 2, 18}, {1, 1, 1, 9},
             {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0});
  tiled.run(x.data(), y.data());
  expectClose(y, {NAN, NAN, -inf, 9, NAN, 9, NAN, -1, 8}, "2x2 vector path");
}

TEST(CpuPoolingPool, RejectsBadParameters) {
  Context ctx(0);
  EXPECT_THROW(Pool(ctx, DType::F32, PoolKind::Max, {1, 1, 5}, {1, 1, 3},
                    {2, 2}, {2}, {1}, {0}, {0}),
               Error);
  EXPECT_THROW(Pool(ctx, DType::F16, PoolKind::Max, {1, 1, 5}, {1, 1, 2}, {2},
                    {2}, {1}, {0}, {0}),
               Error);
}

//===----------------------------------------------------------------------===//
// GlobalPool
//===----------------------------------------------------------------------===//

TEST(CpuPoolingGlobalPool, HandComputedAndRandom) {
  Context ctx(0);
  std::vector<float> x{1, 5, 3, -2, -4, 0}, y(2);
  GlobalPool max(ctx, DType::F32, true, {1, 2, 3});
  max.run(x.data(), y.data());
  expectClose(y, {5, 0}, "global max");
  // NaN anywhere in a plane gives NaN; a plane of -inf gives -inf.
  std::vector<float> special{1, NAN, 3, -INFINITY, -INFINITY, -INFINITY};
  max.run(special.data(), y.data());
  expectClose(y, {NAN, -INFINITY}, "global max of NaN and -inf");
  GlobalPool mean(ctx, DType::F32, false, {1, 2, 3});
  mean.run(x.data(), y.data());
  expectClose(y, {3, -2}, "global mean");

  for (Shape shape : {Shape{2, 3, 17, 5}, Shape{3, 4, 2, 3, 4}, Shape{2, 5}}) {
    auto data = randomData(numElements(shape), 77);
    int64_t planes = shape[0] * shape[1];
    int64_t size = numElements(shape) / planes;
    std::vector<float> expectedMax(planes), expectedMean(planes), out(planes);
    for (int64_t p = 0; p != planes; ++p) {
      double sum = 0, best = -INFINITY;
      for (int64_t i = 0; i != size; ++i) {
        sum += data[p * size + i];
        best = std::max<double>(best, data[p * size + i]);
      }
      expectedMax[p] = float(best);
      expectedMean[p] = float(sum / size);
    }
    GlobalPool(ctx, DType::F32, true, shape).run(data.data(), out.data());
    expectClose(out, expectedMax, "global max " + shapeString(shape));
    GlobalPool(ctx, DType::F32, false, shape).run(data.data(), out.data());
    expectClose(out, expectedMean, "global mean " + shapeString(shape));
  }
}

//===----------------------------------------------------------------------===//
// BatchNorm
//===----------------------------------------------------------------------===//

TEST(CpuPoolingBatchNorm, HandComputedAndRandom) {
  Context ctx(0);
  // One channel: (x - 1) / sqrt(4) * 3 + 0.5.
  std::vector<float> x{1, 3, 5}, y(3), scale{3}, bias{0.5f}, mean{1},
      variance{4};
  BatchNorm bn(ctx, DType::F32, {1, 1, 3}, 0.f);
  bn.run(x.data(), scale.data(), bias.data(), mean.data(), variance.data(),
         y.data());
  expectClose(y, {0.5f, 3.5f, 6.5f}, "batch norm");

  for (Shape shape :
       {Shape{2, 3}, Shape{2, 4, 5, 6}, Shape{1, 3, 7}, Shape{2, 2, 3, 4, 5}}) {
    int64_t channels = shape[1];
    int64_t inner = numElements(shape) / (shape[0] * channels);
    auto data = randomData(numElements(shape), 5);
    auto s = randomData(channels, 6), b = randomData(channels, 7),
         m = randomData(channels, 8), v = randomData(channels, 9, 0.1f, 2.f);
    float epsilon = 1e-3f;
    std::vector<float> expected(data.size()), out(data.size());
    for (size_t i = 0; i != data.size(); ++i) {
      int64_t c = (i / inner) % channels;
      expected[i] = (data[i] - m[c]) / std::sqrt(v[c] + epsilon) * s[c] + b[c];
    }
    BatchNorm norm(ctx, DType::F32, shape, epsilon);
    norm.run(data.data(), s.data(), b.data(), m.data(), v.data(), out.data());
    expectClose(out, expected, "batch norm " + shapeString(shape));
  }
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

TEST(CpuPoolingLayerNorm, HandComputed) {
  Context ctx(0);
  // Row [1, 3]: mean 2, variance 1 -> [-1, 1] * [2, 3] + [1, 1].
  std::vector<float> x{1, 3}, y(2), scale{2, 3}, bias{1, 1};
  LayerNorm norm(ctx, DType::F32, {1, 2}, 1, 0.f, {2}, true);
  norm.run(x.data(), scale.data(), bias.data(), y.data());
  expectClose(y, {-1, 4}, "layer norm");
}

TEST(CpuPoolingLayerNorm, RandomAgainstReference) {
  Context ctx(0);
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
  };
  std::vector<Case> cases{
      {{4, 16}, 1, {16}},           {{2, 3, 4}, 1, {3, 4}},
      {{2, 3, 4}, 1, {4}},          {{2, 3, 4}, 1, {1, 4}},
      {{2, 3, 4}, 1, {3, 1}},       {{2, 3, 4, 5}, 2, {4, 5}},
      {{2, 3, 4, 5}, 1, {3, 1, 5}}, {{3, 5, 7}, 0, {5, 7}},
      {{3, 5, 7}, 2, {}},
  };
  unsigned seed = 40;
  for (const Case &c : cases)
    for (bool hasBias : {true, false}) {
      Shape normalised(c.x.begin() + c.axis, c.x.end());
      int64_t inner = numElements(normalised);
      int64_t outer = numElements(c.x) / inner;
      auto x = randomData(numElements(c.x), seed++, -2.f, 3.f);
      auto scale = randomData(numElements(c.scale), seed++);
      auto bias = randomData(numElements(c.scale), seed++);
      float epsilon = 1e-5f;
      // Broadcast lookup of scale/bias for a normalised position.
      auto param = [&](const std::vector<float> &values, int64_t p) {
        Shape at = unravel(p, normalised);
        size_t offset = normalised.size() - c.scale.size();
        Shape local(c.scale.size());
        for (size_t i = 0; i != c.scale.size(); ++i)
          local[i] = c.scale[i] == 1 ? 0 : at[offset + i];
        return values[ravel(local, c.scale)];
      };
      std::vector<float> expected(x.size()), out(x.size());
      for (int64_t r = 0; r != outer; ++r) {
        double mean = 0, var = 0;
        for (int64_t p = 0; p != inner; ++p)
          mean += x[r * inner + p];
        mean /= inner;
        for (int64_t p = 0; p != inner; ++p)
          var += (x[r * inner + p] - mean) * (x[r * inner + p] - mean);
        var /= inner;
        for (int64_t p = 0; p != inner; ++p)
          expected[r * inner + p] =
              float((x[r * inner + p] - mean) / std::sqrt(var + epsilon) *
                        param(scale, p) +
                    (hasBias ? param(bias, p) : 0.f));
      }
      LayerNorm norm(ctx, DType::F32, c.x, c.axis, epsilon, c.scale, hasBias);
      norm.run(x.data(), scale.data(), hasBias ? bias.data() : nullptr,
               out.data());
      expectClose(out, expected,
                  "layer norm " + shapeString(c.x) + " axis " +
                      std::to_string(c.axis) + " scale " +
                      shapeString(c.scale));
    }
}

TEST(CpuPoolingLayerNorm, RejectsBadScale) {
  Context ctx(0);
  EXPECT_THROW(LayerNorm(ctx, DType::F32, {2, 3, 4}, 1, 1e-5f, {2, 4}, false),
               Error);
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

TEST(CpuPoolingSoftmax, HandComputed) {
  Context ctx(0);
  std::vector<float> x{0, std::log(3.f)}, y(2);
  Softmax softmax(ctx, DType::F32, {1, 2}, 1, false);
  softmax.run(x.data(), y.data());
  expectClose(y, {0.25f, 0.75f}, "softmax");
  Softmax logSoftmax(ctx, DType::F32, {1, 2}, 1, true);
  logSoftmax.run(x.data(), y.data());
  expectClose(y, {std::log(0.25f), std::log(0.75f)}, "log softmax");
}

TEST(CpuPoolingSoftmax, RowsWithNaNOrInfinityAreNaN) {
  // exp(x - max) is NaN somewhere in such a row, so is its sum, and so is
  // every entry (as in onnxruntime); other rows are untouched. Along the
  // innermost axis (oneDNN) and another (the loop).
  Context ctx(0);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool log : {false, true}) {
    std::vector<float> x{inf, 0, 1, nan, 0, 1, 0, 0, 0}, y(9);
    Softmax rows(ctx, DType::F32, {3, 3}, 1, log);
    rows.run(x.data(), y.data());
    for (int i = 0; i < 6; ++i)
      EXPECT_TRUE(std::isnan(y[i])) << i << (log ? " log" : "");
    for (int i = 6; i < 9; ++i)
      EXPECT_NEAR(y[i], log ? -std::log(3.f) : 1.f / 3, 1e-5) << i;
    Softmax columns(ctx, DType::F32, {3, 3}, 0, log);
    std::vector<float> t{inf, nan, 0, 0, 0, 0, 1, 1, 0};
    columns.run(t.data(), y.data());
    for (int i : {0, 1, 3, 4, 6, 7})
      EXPECT_TRUE(std::isnan(y[i])) << i << (log ? " log" : "");
    for (int i : {2, 5, 8})
      EXPECT_FALSE(std::isnan(y[i])) << i;
  }
}

TEST(CpuPoolingSoftmax, Float64KeepsDoublePrecision) {
  // Logits 2^-40 apart: equal in f32, not in f64.
  Context ctx(0);
  const double tiny = std::ldexp(1.0, -40);
  std::vector<double> x{0, tiny, 1, 1 + tiny}, y(4);
  for (bool log : {false, true})
    for (int64_t axis : {0, 1}) {
      Softmax softmax(ctx, DType::F64, {2, 2}, axis, log);
      softmax.run(x.data(), y.data());
      for (int i = 0; i < 4; ++i) {
        const int a = axis == 1 ? i - i % 2 : i % 2,
                  b = axis == 1 ? a + 1 : a + 2;
        const double top = std::max(x[a], x[b]);
        const double sum = std::exp(x[a] - top) + std::exp(x[b] - top);
        const double want =
            log ? x[i] - top - std::log(sum) : std::exp(x[i] - top) / sum;
        EXPECT_NEAR(y[i], want, 1e-15) << i << " axis " << axis;
      }
      if (axis == 1) // the row [0, 2^-40]: two values
        EXPECT_NE(y[0], y[1]);
    }
}

TEST(CpuPoolingSoftmax, RandomAgainstReference) {
  Context ctx(0);
  struct Case {
    Shape x;
    int64_t axis;
  };
  std::vector<Case> cases{{{4, 10}, 1},   {{2, 5, 3}, 1},    {{2, 5, 3}, 0},
                          {{2, 5, 3}, 2}, {{3, 4, 5, 6}, 2}, {{7}, 0}};
  unsigned seed = 60;
  for (const Case &c : cases)
    for (bool log : {false, true}) {
      // Large values: the reference must shift too.
      auto x = randomData(numElements(c.x), seed++, -30.f, 30.f);
      int64_t axisSize = c.x[c.axis];
      int64_t inner = numElements(Shape(c.x.begin() + c.axis + 1, c.x.end()));
      int64_t outer = numElements(c.x) / (axisSize * inner);
      std::vector<float> expected(x.size()), out(x.size());
      for (int64_t o = 0; o != outer; ++o)
        for (int64_t i = 0; i != inner; ++i) {
          auto at = [&](int64_t a) { return (o * axisSize + a) * inner + i; };
          double top = -INFINITY, sum = 0;
          for (int64_t a = 0; a != axisSize; ++a)
            top = std::max<double>(top, x[at(a)]);
          for (int64_t a = 0; a != axisSize; ++a)
            sum += std::exp(x[at(a)] - top);
          for (int64_t a = 0; a != axisSize; ++a)
            expected[at(a)] = log ? float(x[at(a)] - top - std::log(sum))
                                  : float(std::exp(x[at(a)] - top) / sum);
        }
      Softmax softmax(ctx, DType::F32, c.x, c.axis, log);
      softmax.run(x.data(), out.data());
      expectClose(out, expected,
                  std::string(log ? "log " : "") + "softmax " +
                      shapeString(c.x) + " axis " + std::to_string(c.axis));
    }
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

std::vector<float> referenceReduce(ReduceKind kind, const Shape &x,
                                   const std::vector<int64_t> &axes,
                                   const std::vector<float> &data) {
  Shape kept = x;
  for (int64_t axis : axes)
    kept[axis] = 1;
  int64_t outputs = numElements(kept);
  std::vector<std::vector<double>> groups(outputs);
  for (int64_t i = 0; i != int64_t(data.size()); ++i) {
    Shape at = unravel(i, x);
    for (int64_t axis : axes)
      at[axis] = 0;
    groups[ravel(at, kept)].push_back(data[i]);
  }
  std::vector<float> out(outputs);
  for (int64_t o = 0; o != outputs; ++o) {
    const std::vector<double> &g = groups[o];
    double r = 0;
    switch (kind) {
    case ReduceKind::Sum:
      for (double v : g)
        r += v;
      break;
    case ReduceKind::Mean:
      for (double v : g)
        r += v;
      r /= g.size();
      break;
    case ReduceKind::Max:
      r = -INFINITY;
      for (double v : g)
        r = std::max(r, v);
      break;
    case ReduceKind::Min:
      r = INFINITY;
      for (double v : g)
        r = std::min(r, v);
      break;
    case ReduceKind::Prod:
      r = 1;
      for (double v : g)
        r *= v;
      break;
    case ReduceKind::L1:
      for (double v : g)
        r += std::fabs(v);
      break;
    case ReduceKind::L2:
      for (double v : g)
        r += v * v;
      r = std::sqrt(r);
      break;
    case ReduceKind::LogSum:
      for (double v : g)
        r += v;
      r = std::log(r);
      break;
    case ReduceKind::LogSumExp: {
      double top = -INFINITY;
      for (double v : g)
        top = std::max(top, v);
      for (double v : g)
        r += std::exp(v - top);
      r = top + std::log(r);
      break;
    }
    case ReduceKind::SumSquare:
      for (double v : g)
        r += v * v;
      break;
    }
    out[o] = float(r);
  }
  return out;
}

const ReduceKind allReduceKinds[] = {
    ReduceKind::Sum,      ReduceKind::Mean,   ReduceKind::Max,
    ReduceKind::Min,      ReduceKind::Prod,   ReduceKind::L1,
    ReduceKind::L2,       ReduceKind::LogSum, ReduceKind::LogSumExp,
    ReduceKind::SumSquare};

TEST(CpuPoolingReduce, HandComputed) {
  Context ctx(0);
  // [[1, 2, 3], [4, 5, 6]] over axis 1.
  std::vector<float> x{1, 2, 3, 4, 5, 6}, y(2);
  struct Expect {
    ReduceKind kind;
    std::vector<float> values;
  };
  std::vector<Expect> expects{
      {ReduceKind::Sum, {6, 15}},
      {ReduceKind::Mean, {2, 5}},
      {ReduceKind::Max, {3, 6}},
      {ReduceKind::Min, {1, 4}},
      {ReduceKind::Prod, {6, 120}},
      {ReduceKind::L1, {6, 15}},
      {ReduceKind::L2, {std::sqrt(14.f), std::sqrt(77.f)}},
      {ReduceKind::LogSum, {std::log(6.f), std::log(15.f)}},
      {ReduceKind::LogSumExp,
       {std::log(std::exp(1.f) + std::exp(2.f) + std::exp(3.f)),
        std::log(std::exp(4.f) + std::exp(5.f) + std::exp(6.f))}},
      {ReduceKind::SumSquare, {14, 77}}};
  for (const Expect &e : expects) {
    Reduce reduce(ctx, DType::F32, e.kind, {2, 3}, {1}, {2});
    reduce.run(x.data(), y.data());
    expectClose(y, e.values, "reduce kind " + std::to_string(int(e.kind)));
  }
}

// oneDNN 2.6 starts max from the lowest finite float: a row of only -inf
// (an attention row with every key masked) must still give -inf, and one
// of only +inf give +inf under min; a row holding the lowest float itself
// keeps it.
TEST(CpuPoolingReduce, InfiniteRowsKeepTheirInfinity) {
  Context ctx(0);
  const float inf = std::numeric_limits<float>::infinity();
  const float lowest = std::numeric_limits<float>::lowest();
  std::vector<float> x{-inf, -inf, -inf, -inf,   0,    -inf,   inf, inf, inf,
                       inf,  inf,  inf,  lowest, -inf, lowest, 1,   2,   3};
  std::vector<float> y(6);
  Reduce max(ctx, DType::F32, ReduceKind::Max, {6, 3}, {1}, {6, 1});
  max.run(x.data(), y.data());
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[4], lowest);
  EXPECT_EQ(y[5], 3.f);
  Reduce min(ctx, DType::F32, ReduceKind::Min, {6, 3}, {1}, {6, 1});
  min.run(x.data(), y.data());
  EXPECT_EQ(y[2], inf);
  EXPECT_EQ(y[3], inf);
  EXPECT_EQ(y[1], -inf);
}

TEST(CpuPoolingReduce, IntegersAreExactAndWrap) {
  Context ctx(0);
  // 2^53 + 1 is lost in double; the sums of the second row wrap.
  const int64_t big = int64_t(1) << 53,
                top = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> x{big, 1, -3, top, 2, -1};
  std::vector<int64_t> y(2);
  Reduce sum(ctx, DType::I64, ReduceKind::Sum, {2, 3}, {1}, {2, 1});
  sum.run(x.data(), y.data());
  EXPECT_EQ(y[0], big - 2);
  EXPECT_EQ(y[1], std::numeric_limits<int64_t>::min()); // top + 1 wraps
  Reduce max(ctx, DType::I64, ReduceKind::Max, {2, 3}, {1}, {2, 1});
  max.run(x.data(), y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{big, top}));
  std::vector<int32_t> small{-7, 2, 3, 4}, columns(2);
  Reduce mean(ctx, DType::I32, ReduceKind::Mean, {2, 2}, {0}, {1, 2});
  mean.run(small.data(), columns.data());
  EXPECT_EQ(columns, (std::vector<int32_t>{-2, 3})); // (-7 + 3) / 2, 6 / 2
}

TEST(CpuPoolingReduce, Float64KeepsDoublePrecision) {
  Context ctx(0);
  // 1 + 2^-40 and its neighbours differ below f32's resolution: every kind
  // must see them as the f64 values they are.
  const double tiny = std::ldexp(1.0, -40);
  std::vector<double> x{1 + tiny, 1 + 2 * tiny, 1 + 3 * tiny,
                        -2,       0.5,          3 + tiny};
  std::vector<double> y(2);
  for (ReduceKind kind : allReduceKinds) {
    Reduce reduce(ctx, DType::F64, kind, {2, 3}, {1}, {2, 1});
    reduce.run(x.data(), y.data());
    for (int row = 0; row < 2; ++row) {
      const double *g = x.data() + 3 * row;
      double want = 0;
      switch (kind) {
      case ReduceKind::Sum:
        want = g[0] + g[1] + g[2];
        break;
      case ReduceKind::Mean:
        want = (g[0] + g[1] + g[2]) / 3;
        break;
      case ReduceKind::Max:
        want = std::max({g[0], g[1], g[2]});
        break;
      case ReduceKind::Min:
        want = std::min({g[0], g[1], g[2]});
        break;
      case ReduceKind::Prod:
        want = g[0] * g[1] * g[2];
        break;
      case ReduceKind::L1:
        want = std::fabs(g[0]) + std::fabs(g[1]) + std::fabs(g[2]);
        break;
      case ReduceKind::L2:
        want = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        break;
      case ReduceKind::LogSum:
        want = std::log(g[0] + g[1] + g[2]); // both rows sum above 0
        break;
      case ReduceKind::LogSumExp:
        want = std::log(std::exp(g[0]) + std::exp(g[1]) + std::exp(g[2]));
        break;
      case ReduceKind::SumSquare:
        want = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        break;
      }
      EXPECT_NEAR(y[row], want, 1e-15 * std::max(1.0, std::fabs(want)))
          << "kind " << int(kind) << " row " << row;
    }
  }
  // Distinguishable in f64 only: the sum of the first row is 3 + 6 tiny.
  Reduce sum(ctx, DType::F64, ReduceKind::Sum, {2, 3}, {1}, {2});
  sum.run(x.data(), y.data());
  EXPECT_EQ(3 + 6 * tiny, y[0]);
  EXPECT_THROW(Reduce(ctx, DType::F16, ReduceKind::Sum, {2, 3}, {1}, {2}),
               Error);
}

TEST(CpuPoolingReduce, RandomAgainstReference) {
  Context ctx(0);
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
  };
  std::vector<Case> cases{
      {{4, 6}, {1}},
      {{4, 6}, {0}},
      {{4, 6}, {0, 1}},
      {{3, 4, 5}, {1}},
      {{3, 4, 5}, {0, 2}},
      {{3, 4, 5}, {2}},
      {{3, 4, 5}, {0, 1}},
      {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {1, 2}},
      {{2, 1, 4}, {1}},
      {{9}, {0}},
      {{2, 64, 33}, {2}},
  };
  unsigned seed = 300;
  for (const Case &c : cases)
    for (ReduceKind kind : allReduceKinds)
      for (bool keepDims : {true, false}) {
        // Positive data where a log of the sum needs it; modest magnitudes
        // keep Prod representable.
        bool positive = kind == ReduceKind::LogSum;
        auto x =
            randomData(numElements(c.x), seed++, positive ? 0.1f : -1.5f, 1.5f);
        Shape y;
        for (size_t i = 0; i != c.x.size(); ++i) {
          bool reduced =
              std::find(c.axes.begin(), c.axes.end(), i) != c.axes.end();
          if (!reduced)
            y.push_back(c.x[i]);
          else if (keepDims)
            y.push_back(1);
        }
        Reduce reduce(ctx, DType::F32, kind, c.x, c.axes, y);
        std::vector<float> out(numElements(y));
        reduce.run(x.data(), out.data());
        expectClose(out, referenceReduce(kind, c.x, c.axes, x),
                    "reduce " + shapeString(c.x) + " kind " +
                        std::to_string(int(kind)));
      }
}

TEST(CpuPoolingReduce, LogSumExpIsStable) {
  Context ctx(0);
  std::vector<float> x{1000, 1000, -1000, -1001}, y(2);
  Reduce reduce(ctx, DType::F32, ReduceKind::LogSumExp, {2, 2}, {1}, {2, 1});
  reduce.run(x.data(), y.data());
  expectClose(y, {1000 + std::log(2.f), -1000 + std::log1p(std::exp(-1.f))},
              "log-sum-exp");
}

TEST(CpuPoolingReduce, EmptySetGivesIdentities) {
  Context ctx(0);
  std::vector<float> y(3);
  float dummy = 0;
  std::vector<std::pair<ReduceKind, float>> identities{
      {ReduceKind::Sum, 0.f},       {ReduceKind::Prod, 1.f},
      {ReduceKind::Max, -INFINITY}, {ReduceKind::Min, INFINITY},
      {ReduceKind::L2, 0.f},        {ReduceKind::LogSumExp, -INFINITY}};
  for (auto [kind, identity] : identities) {
    Reduce reduce(ctx, DType::F32, kind, {3, 0}, {1}, {3});
    reduce.run(&dummy, y.data());
    expectClose(y, std::vector<float>(3, identity),
                "empty reduce kind " + std::to_string(int(kind)));
  }
}

TEST(CpuPoolingReduce, RejectsBadParameters) {
  Context ctx(0);
  EXPECT_THROW(Reduce(ctx, DType::F32, ReduceKind::Sum, {2, 3}, {2}, {2}),
               Error);
  EXPECT_THROW(Reduce(ctx, DType::F32, ReduceKind::Sum, {2, 3}, {1}, {3}),
               Error);
  EXPECT_THROW(Reduce(ctx, DType::U8, ReduceKind::Sum, {2, 3}, {1}, {2}),
               Error);
}

} // namespace
