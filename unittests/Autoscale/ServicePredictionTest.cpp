//===- ServicePredictionTest.cpp - Replaying a service run ---------------===//

#include "heterps/Autoscale/ServicePrediction.h"

#include "gtest/gtest.h"

using namespace heterps::autoscale;

namespace {

/// A finished job that ran in one shape at `stepsPerSecond`.
ServiceJob finishedJob(const std::string &id, double submitted, double ended,
                       int minW, int maxW, double stepsPerSecond) {
  ServiceJob job;
  job.id = job.name = id;
  job.microBatch = 64;
  job.shards = 1;
  job.samples = 25600;
  job.minWorkers = job.initialWorkers = minW;
  job.maxWorkers = maxW;
  job.minBatch = job.initialBatch = job.maxBatch = 256;
  job.phase = "succeeded";
  job.workers = maxW;
  job.batch = 256;
  job.submittedAt = submitted;
  job.endedAt = ended;
  job.startupSeconds = 2;
  job.rates.push_back({maxW, 256, stepsPerSecond});
  return job;
}

ServiceState finishedState(std::vector<ServiceJob> jobs, int capacity) {
  ServiceState state;
  state.jobs = std::move(jobs);
  state.capacity = capacity;
  state.intervalSeconds = 30;
  state.resizeCostSeconds = 1;
  return state;
}

TEST(ServicePredictionTest, MeasuredShapeIsExactOthersScaleTheModel) {
  ServiceJob job = finishedJob("a", 0, 10, 1, 4, 4);
  EXPECT_DOUBLE_EQ(measuredSamplesPerSecond(job, 4, 256), 1024);
  // Another shape: the model's ratio times the measured speed.
  double expected = 1024 * modelRate(job, 2, 256) / modelRate(job, 4, 256);
  EXPECT_NEAR(measuredSamplesPerSecond(job, 2, 256), expected, 1e-9);
  EXPECT_LT(measuredSamplesPerSecond(job, 2, 256), 1024);
  job.rates.clear();
  EXPECT_EQ(measuredSamplesPerSecond(job, 4, 256), 0);
}

TEST(ServicePredictionTest, LoneJobTakesItsStartAndItsWork) {
  // 25600 samples at 1024/s after a 2 s start: 27 s.
  ServiceState state = finishedState({finishedJob("a", 100, 128, 2, 2, 4)}, 3);
  auto prediction = predictService(state, {});
  ASSERT_TRUE(bool(prediction)) << toString(prediction.takeError());
  ASSERT_EQ(prediction->jobs.size(), 1u);
  const PredictedJob &a = prediction->jobs[0];
  EXPECT_NEAR(a.predictedJct, 27, 0.6);
  EXPECT_DOUBLE_EQ(a.measuredJct, 28);
  EXPECT_NEAR(a.relativeError(), -1.0 / 28, 0.03);
  EXPECT_EQ(a.predictedStartWorkers, 2);
  EXPECT_DOUBLE_EQ(prediction->startupSeconds, 2);
}

TEST(ServicePredictionTest, ArrivalShrinksTheFirstJobInTheReplayToo) {
  // Two jobs of 1-4 workers and one shard on 6 slots: the first starts on
  // 4 workers (5 slots) and gives up slots when the second arrives.
  ServiceJob a = finishedJob("a", 0, 60, 1, 4, 4);
  ServiceJob b = finishedJob("b", 10, 60, 1, 4, 4);
  a.resizes = 1;
  a.resizePauses = {3};
  ServiceState state = finishedState({a, b}, 6);
  auto prediction = predictService(state, {});
  ASSERT_TRUE(bool(prediction)) << toString(prediction.takeError());
  EXPECT_EQ(prediction->jobs[0].predictedStartWorkers, 4);
  EXPECT_GE(prediction->jobs[0].predictedResizes, 1);
  EXPECT_GT(prediction->jobs[1].predictedStartWorkers, 0);
  EXPECT_DOUBLE_EQ(prediction->resizePauseSeconds, 3);
  // Shrinking slows the first job below its solo time (2 s + 25 s).
  EXPECT_GT(prediction->jobs[0].predictedJct, 27.5);
  std::string table = predictionTable(*prediction);
  EXPECT_NE(table.find("mean |error|"), std::string::npos) << table;
}

TEST(ServicePredictionTest, RunsThatCannotBeReplayedAreErrors) {
  ServiceJob failed = finishedJob("f", 0, 10, 1, 1, 4);
  failed.phase = "failed";
  auto prediction = predictService(finishedState({failed}, 2), {});
  ASSERT_FALSE(bool(prediction));
  EXPECT_NE(toString(prediction.takeError()).find("job 'f' ended failed"),
            std::string::npos);
  ServiceJob unmeasured = finishedJob("u", 0, 10, 1, 1, 4);
  unmeasured.rates.clear();
  prediction = predictService(finishedState({unmeasured}, 2), {});
  ASSERT_FALSE(bool(prediction));
  EXPECT_NE(toString(prediction.takeError()).find("no measured speed"),
            std::string::npos);
  prediction = predictService(finishedState({}, 0), {});
  ASSERT_FALSE(bool(prediction));
  EXPECT_NE(toString(prediction.takeError()).find("never planned"),
            std::string::npos);
}

} // namespace
