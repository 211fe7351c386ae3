//===- SimulatorTest.cpp - The trace-driven cluster simulator -------------===//
//
// A toy application with gain 1 and a 1 s step at its one batch, so job
// completion times can be worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Simulator.h"

#include "gtest/gtest.h"

using namespace heterps::autoscale;
using namespace llvm;

namespace {

/// Step 1 s at local batch 10 on one GPU (linear to 2 s at 20); gradient
/// variance 0, so gain is 1 at every batch; 3 epochs ending at progress 300.
ApplicationModels toyModels() {
  ApplicationTrace trace;
  trace.name = "toy";
  cantFail(parsePlacements("placement,local_bsz,step_time,sync_time\n"
                           "1,10,1.0,0.0\n1,20,2.0,0.0\n"
                           "2,10,1.0,0.0\n2,20,2.0,0.0\n"
                           "3,10,1.0,0.0\n3,20,2.0,0.0\n"
                           "4,10,1.0,0.0\n4,20,2.0,0.0\n",
                           "p.csv", trace));
  trace.validation[10] =
      cantFail(parseValidation("progress,iteration,metric,grad_sqr,grad_var\n"
                               "100,100,0,1,0\n200,200,0,1,0\n300,300,0,1,0\n",
                               "v.csv"));
  trace.validation[40] = trace.validation[10];
  ApplicationModels models;
  models["toy"] = std::make_shared<ApplicationModel>(
      cantFail(ApplicationModel::create(std::move(trace))));
  return models;
}

WorkloadJob toyJob(std::string name, double time, int gpus, int64_t batch) {
  return {std::move(name), time, "toy", gpus, batch};
}

SimulatorOptions oneGpu(Policy policy) {
  SimulatorOptions options;
  options.policy = policy;
  options.nodes = 1;
  options.gpusPerNode = 1;
  return options;
}

TEST(SimulatorTest, OneJobAloneTakesItsWorkPlusTheStartCost) {
  auto models = toyModels();
  // 300 progress at 1 per second, after 30 s of start-up.
  auto result = cantFail(
      simulate({toyJob("a", 0, 1, 10)}, models, oneGpu(Policy::Static)));
  EXPECT_EQ(result.jobs, 1);
  EXPECT_EQ(result.completed, 1);
  EXPECT_DOUBLE_EQ(result.meanJct, 330);
  EXPECT_DOUBLE_EQ(result.p99Jct, 330);
  EXPECT_DOUBLE_EQ(result.makespan, 330);
  EXPECT_DOUBLE_EQ(result.utilization, 1.0);
  EXPECT_EQ(result.rescales, 0);
  // Arriving at 10 s it waits for the decision at 60 s.
  result = cantFail(
      simulate({toyJob("a", 10, 1, 10)}, models, oneGpu(Policy::Static)));
  EXPECT_DOUBLE_EQ(result.meanJct, 50 + 330);
}

// The simulation stops at the horizon, not at the end of the interval
// that crosses it: a job due at 330 s is not finished by 310 s, and the
// GPU-seconds end there too.
TEST(SimulatorTest, TheHorizonEndsTheLastInterval) {
  auto models = toyModels();
  SimulatorOptions options = oneGpu(Policy::Static);
  options.horizon = 310;
  auto result = cantFail(simulate({toyJob("a", 0, 1, 10)}, models, options));
  EXPECT_EQ(result.completed, 0);
  EXPECT_DOUBLE_EQ(result.makespan, 310);
  EXPECT_DOUBLE_EQ(result.outcomes[0].gpuSeconds, 310);
  EXPECT_DOUBLE_EQ(result.utilization, 1.0);
}

TEST(SimulatorTest, StaticIsFirstInFirstOut) {
  auto models = toyModels();
  // The second job starts at the first decision after 330 s (360 s).
  auto result =
      cantFail(simulate({toyJob("a", 0, 1, 10), toyJob("b", 0, 1, 10)}, models,
                        oneGpu(Policy::Static)));
  EXPECT_EQ(result.completed, 2);
  EXPECT_DOUBLE_EQ(result.outcomes[1].startTime, 360);
  EXPECT_DOUBLE_EQ(result.meanJct, (330 + 690) / 2.0);
  EXPECT_DOUBLE_EQ(result.p99Jct, 690);
  // A job larger than the cluster is dropped, with the reason.
  result = cantFail(
      simulate({toyJob("big", 0, 2, 10)}, models, oneGpu(Policy::Static)));
  EXPECT_EQ(result.completed, 0);
  EXPECT_EQ(result.queuedOrDropped, 1);
  EXPECT_EQ(result.outcomes[0].reason,
            "asks for more GPUs than the cluster has");
}

TEST(SimulatorTest, TheWindowCountsJobsDoneByTheLastArrival) {
  auto models = toyModels();
  auto result =
      cantFail(simulate({toyJob("a", 0, 1, 10), toyJob("b", 400, 1, 10)},
                        models, oneGpu(Policy::Static)));
  EXPECT_DOUBLE_EQ(result.window, 400);
  EXPECT_EQ(result.completedInWindow, 1);
  // Twice the load: arrivals at half the times.
  SimulatorOptions options = oneGpu(Policy::Static);
  options.load = 2;
  result = cantFail(simulate({toyJob("a", 0, 1, 10), toyJob("b", 400, 1, 10)},
                             models, options));
  EXPECT_DOUBLE_EQ(result.window, 200);
  EXPECT_DOUBLE_EQ(result.outcomes[1].submitTime, 200);
}

TEST(SimulatorTest, ElasticGrowsAJobOnIdleGpus) {
  auto models = toyModels();
  SimulatorOptions options;
  options.nodes = 1;
  options.gpusPerNode = 4;
  options.policy = Policy::Static;
  // Asks for one GPU at batch 10: 330 s under static.
  std::vector<WorkloadJob> jobs = {toyJob("a", 0, 1, 10)};
  auto fixed = cantFail(simulate(jobs, models, options));
  EXPECT_DOUBLE_EQ(fixed.meanJct, 330);
  // The toy's gradient variance is 0, so a larger batch gains nothing: 4 GPUs
  // at batch 40 make the same 1 progress per second. The DP policies must
  // not make it slower than asked.
  options.policy = Policy::Elastic;
  auto elastic = cantFail(simulate(jobs, models, options));
  EXPECT_EQ(elastic.completed, 1);
  EXPECT_LE(elastic.meanJct, 330);
  EXPECT_GT(elastic.decisions, 0);
  options.policy = Policy::FixedBatch;
  auto baseline = cantFail(simulate(jobs, models, options));
  EXPECT_EQ(baseline.completed, 1);
  EXPECT_LE(baseline.meanJct, 330);
}

TEST(SimulatorTest, UnknownApplicationIsAnError) {
  auto models = toyModels();
  WorkloadJob job{"x", 0, "mnist", 1, 10};
  auto result = simulate({job}, models, oneGpu(Policy::Elastic));
  ASSERT_FALSE(bool(result));
  EXPECT_EQ(toString(result.takeError()),
            "job 'x': no traces for application 'mnist'");
}

TEST(SimulatorTest, PolicyNamesRoundTrip) {
  for (Policy policy : allPolicies())
    EXPECT_EQ(parsePolicy(policyName(policy)), policy);
  EXPECT_FALSE(parsePolicy("pollux").has_value());
}

} // namespace
