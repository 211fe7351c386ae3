//===- TrainMetricsTest.cpp - Tests of gathered per-sample results --------===//

#include "../train/TrainMetrics.h"

#include <gtest/gtest.h>

using namespace heterps::rt;
using namespace heterps::rt::train;

namespace {

/// Batch b of `size` samples: sample i's loss is 10 b + i, its score
/// 100 + 10 b + i and its label b % 2.
SampleResults batchResults(int b, int size) {
  SampleResults results;
  for (int i = 0; i < size; ++i) {
    results.losses.push_back(float(10 * b + i));
    results.scores.push_back(float(100 + 10 * b + i));
    results.labels.push_back(float(b % 2));
  }
  return results;
}

TEST(TrainMetrics, RoundRobinBatchesGoBackInBatchOrder) {
  // Five batches on three workers, the last one short: worker 0 ran
  // batches 0 and 3, worker 1 batches 1 and 4, worker 2 batch 2.
  const std::vector<int> sizes{4, 4, 4, 4, 2};
  SampleResults gathered, expected;
  std::vector<float> gatheredSizes;
  for (int b : {0, 3, 1, 4, 2}) {
    append(gathered, batchResults(b, sizes[b]));
    gatheredSizes.push_back(float(sizes[b]));
  }
  for (int b = 0; b < 5; ++b)
    append(expected, batchResults(b, sizes[b]));
  SampleResults ordered = inBatchOrder(gathered, gatheredSizes, 5, 3);
  EXPECT_EQ(ordered.losses, expected.losses);
  EXPECT_EQ(ordered.scores, expected.scores);
  EXPECT_EQ(ordered.labels, expected.labels);
}

TEST(TrainMetrics, ResultsWithoutScoresAndOneWorker) {
  // mse: losses only. One worker's results are already in order.
  SampleResults gathered;
  gathered.losses = {1, 2, 3, 4, 5};
  SampleResults ordered = inBatchOrder(gathered, {3, 2}, 2, 1);
  EXPECT_EQ(ordered.losses, gathered.losses);
  EXPECT_TRUE(ordered.scores.empty());
  EXPECT_TRUE(inBatchOrder({}, {}, 0, 4).losses.empty());
}

TEST(TrainMetrics, ResultsThatDoNotMatchTheBatchSizesAreRefused) {
  SampleResults gathered = batchResults(0, 4);
  gathered.scores.pop_back();
  EXPECT_THROW(inBatchOrder(gathered, {2, 2}, 2, 2), Error);
  // A worker that ran another number of batches than the others expect.
  EXPECT_THROW(inBatchOrder(batchResults(0, 4), {4}, 2, 2), Error);
}

} // namespace
