//===- HPSShapesTest.cpp - Shape rules of hps ops -------------------------===//

#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "gtest/gtest.h"

using namespace heterps::hps::shapes;
using llvm::SmallVector;

namespace {

TEST(HPSShapes, NormalizeAxis) {
  EXPECT_EQ(normalizeAxis(-1, 4), 3);
  EXPECT_EQ(normalizeAxis(0, 4), 0);
  EXPECT_EQ(normalizeAxis(-4, 4), 0);
  EXPECT_FALSE(normalizeAxis(4, 4));
  EXPECT_FALSE(normalizeAxis(-5, 4));
}

TEST(HPSShapes, WindowCountFloorAndCeil) {
  // 28 input, kernel 5, SAME padding 2+2, stride 1: 28 windows.
  EXPECT_EQ(windowCount(28, 5, 1, 2, 2, 1, false), 28);
  // 5 input, kernel 2, stride 2: floor 2, ceil 3.
  EXPECT_EQ(windowCount(5, 2, 2, 0, 0, 1, false), 2);
  EXPECT_EQ(windowCount(5, 2, 2, 0, 0, 1, true), 3);
  // Dilation 2 widens a 3-tap kernel to 5.
  EXPECT_EQ(windowCount(7, 3, 1, 0, 0, 2, false), 3);
  // Ceil mode never starts a window inside the end padding: input 5,
  // kernel 2, stride 2, pads 1+1 gives 3 windows, not 4; with input 6 the
  // fourth window still sees input and is kept.
  EXPECT_EQ(windowCount(5, 2, 2, 1, 1, 1, true), 3);
  EXPECT_EQ(windowCount(6, 3, 2, 1, 1, 1, true), 4);
  EXPECT_EQ(windowCount(kDynamic, 3, 1, 0, 0, 1, false), kDynamic);
  // A kernel larger than the padded input yields no window.
  EXPECT_EQ(windowCount(2, 5, 1, 0, 0, 1, false), 0);
}

TEST(HPSShapes, Broadcast) {
  auto shape = broadcast({4, 1, 3}, {2, 1});
  ASSERT_TRUE(shape);
  EXPECT_EQ(*shape, (SmallVector<int64_t>{4, 2, 3}));
  EXPECT_FALSE(broadcast({4, 3}, {2}));
  auto dynamic = broadcast({kDynamic, 3}, {5, 1});
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(*dynamic, (SmallVector<int64_t>{5, 3}));
  auto scalar = broadcast({}, {2, 2});
  ASSERT_TRUE(scalar);
  EXPECT_EQ(*scalar, (SmallVector<int64_t>{2, 2}));
}

TEST(HPSShapes, BroadcastsToIsUnidirectional) {
  EXPECT_TRUE(broadcastsTo({3}, {2, 3}));
  EXPECT_TRUE(broadcastsTo({1, 3}, {2, 3}));
  EXPECT_FALSE(broadcastsTo({2, 3}, {3}));
  EXPECT_FALSE(broadcastsTo({4}, {2, 3}));
}

TEST(HPSShapes, ReshapeCopiesAndInfers) {
  auto copy = reshape({2, 3, 4}, {0, -1}, false);
  ASSERT_TRUE(copy);
  EXPECT_EQ(*copy, (SmallVector<int64_t>{2, 12}));
  auto zero = reshape({0, 3}, {0, 3}, true);
  ASSERT_TRUE(zero);
  EXPECT_EQ(*zero, (SmallVector<int64_t>{0, 3}));
  EXPECT_FALSE(reshape({2, 3}, {4, -1}, false)); // 6 is not a multiple of 4.
  EXPECT_FALSE(reshape({2, 3}, {5}, false));
  EXPECT_FALSE(reshape({2, 3}, {-1, -1}, false));
  auto dynamic = reshape({kDynamic, 4}, {0, 2, -1}, false);
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(*dynamic, (SmallVector<int64_t>{kDynamic, 2, kDynamic}))
      << "with a dynamic element count, -1 cannot be inferred statically";
}

TEST(HPSShapes, SliceCountsFollowONNX) {
  int64_t start = -1;
  EXPECT_EQ(sliceCount(10, 0, 10, 1), 10);
  EXPECT_EQ(sliceCount(10, 2, -2, 3, &start), 2);
  EXPECT_EQ(start, 2);
  EXPECT_EQ(sliceCount(10, -1, INT64_MIN, -1, &start), 10);
  EXPECT_EQ(start, 9);
  EXPECT_EQ(sliceCount(10, 0, INT64_MAX, 4), 3);
  EXPECT_EQ(sliceCount(10, 20, 30, 1), 0);
  EXPECT_EQ(sliceCount(10, 5, 1, 1), 0);
}

TEST(HPSShapes, ElementCount) {
  EXPECT_EQ(elementCount({2, 3, 4}), 24);
  EXPECT_EQ(elementCount({}), 1);
  EXPECT_FALSE(elementCount({2, kDynamic}));
}

} // namespace
