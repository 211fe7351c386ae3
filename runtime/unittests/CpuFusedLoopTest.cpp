//===- CpuFusedLoopTest.cpp - forEachElement on the CPU -------------------===//
//
// The loop driver of the fused elementwise loops code generation writes:
// every (row, j) visited exactly once whatever the split over threads
// (partial rows at block edges, one long row, many short ones), on one
// thread and on several, and the scalar functions it shares with the
// kernels.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"
#include "heterps/Runtime/ScalarOps.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <vector>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

/// Counts the visits of each element; heavy enough per element that large
/// shapes take the threaded path.
template <int64_t Rows, int64_t Inner> struct CountVisits {
  static constexpr int64_t kRows = Rows, kInner = Inner;
  static constexpr double kElementWork = 4096;
  std::atomic<int> *visits;
  void operator()(int64_t row, int64_t j) const {
    visits[row * kInner + j].fetch_add(1, std::memory_order_relaxed);
  }
};

template <int64_t Rows, int64_t Inner> void expectEachOnce(int threads) {
  Context ctx(threads);
  ctx.enterThread();
  std::vector<std::atomic<int>> visits(Rows * Inner);
  for (auto &v : visits)
    v = 0;
  forEachElement(ctx, CountVisits<Rows, Inner>{visits.data()});
  for (int64_t i = 0; i < Rows * Inner; ++i)
    ASSERT_EQ(visits[i].load(), 1) << "element " << i << " of " << Rows << "x"
                                   << Inner << " on " << threads << " threads";
}

TEST(CpuFusedLoop, EachElementOnceAcrossSplits) {
  for (int threads : {1, 2, 3}) {
    expectEachOnce<1, 1>(threads);
    expectEachOnce<1, 100003>(threads); // one long row, split inside it
    expectEachOnce<4099, 1>(threads);   // many rows of one element
    expectEachOnce<997, 13>(threads);   // rows straddling block edges
    expectEachOnce<64, 8>(threads);     // a channel-blocked layout's lanes
  }
}

TEST(CpuFusedLoop, EmptyIsANoOp) {
  Context ctx(2);
  forEachElement(ctx, CountVisits<0, 8>{nullptr});
  forEachElement(ctx, CountVisits<8, 0>{nullptr});
}

/// y = clip(round(x * s), -128, 127) per channel on a [2, 3, 5] tensor, as a
/// fused loop body writes it: the inner dim contiguous, the scale indexed by
/// the row.
struct Requantize {
  static constexpr int64_t kRows = 6, kInner = 5;
  static constexpr double kElementWork = 20;
  const float *x, *scale;
  float *y;
  void operator()(int64_t row, int64_t j) const {
    const int64_t channel = row % 3;
    float v = scalar::binaryOp<BinaryKind::Mul, float>(x[row * 5 + j],
                                                       scale[channel]);
    v = scalar::unaryOp<UnaryKind::Round, float>(v, {});
    y[row * 5 + j] =
        scalar::clipHigh<float>(scalar::clipLow<float>(v, -128.0f), 127.0f);
  }
};

TEST(CpuFusedLoop, RequantizeMatchesReference) {
  std::vector<float> x(30), y(30, -1.0f);
  for (int i = 0; i < 30; ++i)
    x[i] = float(i - 15) * 2.5f + 0.25f;
  const float scale[3] = {0.5f, 4.0f, 20.0f};
  Context ctx(2);
  forEachElement(ctx, Requantize{x.data(), scale, y.data()});
  for (int i = 0; i < 30; ++i) {
    float expected = std::nearbyint(x[i] * scale[(i / 5) % 3]);
    expected = std::fmin(std::fmax(expected, -128.0f), 127.0f);
    EXPECT_EQ(y[i], expected) << "element " << i;
  }
  // Round half to even, as the kernels round: 2.5 -> 2, 3.5 -> 4.
  EXPECT_EQ((scalar::unaryOp<UnaryKind::Round, float>(2.5f, {})), 2.0f);
  EXPECT_EQ((scalar::unaryOp<UnaryKind::Round, float>(3.5f, {})), 4.0f);
  // Clip lets NaN through, as the kernels do.
  EXPECT_TRUE(std::isnan(scalar::clipLow<float>(NAN, 0.0f)));
}

TEST(CpuFusedLoop, NativeLayoutBlockIsAVectorWidth) {
  int64_t block = nativeLayoutBlock();
  EXPECT_TRUE(block == 8 || block == 16) << block;
}

} // namespace
