//===- TraceTest.cpp - Trace reading and the job model --------------------===//
//
// A toy application whose numbers are easy to follow by hand, plus checks
// against the shared Pollux traces when they are beside the project.
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Trace.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace heterps::autoscale;
using namespace llvm;

namespace {

const char *const kPlacements = "placement,local_bsz,step_time,sync_time\n"
                                "1,10,1.0,0.0\n"
                                "1,20,2.0,0.0\n"
                                "2,10,1.5,0.5\n"
                                "2,20,2.5,0.5\n"
                                "11,10,2.0,1.0\n"
                                "11,20,3.0,1.0\n"
                                "12,10,2.2,1.0\n"
                                "12,20,3.2,1.0\n"
                                "22,10,3.0,1.0\n"
                                "22,20,4.0,1.0\n";
const char *const kScalability =
    "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
    "4,8,10,5.0,2.0\n"
    "4,8,20,6.0,2.0\n"
    "4,16,10,7.0,2.0\n"
    "4,16,20,8.0,2.0\n";
const char *const kValidation10 =
    "progress,iteration,metric,grad_sqr,grad_var\n"
    "100,100,0.5,1,3\n"
    "200,200,0.6,1,3\n"
    "300,300,0.7,1,3\n";
const char *const kValidation40 =
    "progress,iteration,metric,grad_sqr,grad_var\n"
    "110,30,0.5,2,6\n"
    "190,60,0.6,2,6\n"
    "320,90,0.7,2,6\n";

ApplicationModel toyModel() {
  ApplicationTrace trace;
  trace.name = "toy";
  EXPECT_FALSE(errorToBool(parsePlacements(kPlacements, "p.csv", trace)));
  EXPECT_FALSE(errorToBool(parseScalability(kScalability, "s.csv", trace)));
  trace.validation[10] = cantFail(parseValidation(kValidation10, "v10.csv"));
  trace.validation[40] = cantFail(parseValidation(kValidation40, "v40.csv"));
  return cantFail(ApplicationModel::create(std::move(trace)));
}

std::string errorOf(Error error) { return toString(std::move(error)); }

template <typename T> std::string errorOf(Expected<T> value) {
  return value ? "" : toString(value.takeError());
}

TEST(TraceTest, ToyModelLimitsAndWork) {
  ApplicationModel model = toyModel();
  EXPECT_EQ(model.initBatch(), 10);
  EXPECT_EQ(model.maxBatch(), 40);
  EXPECT_EQ(model.minLocalBatch(), 10);
  EXPECT_EQ(model.maxLocalBatch(), 20);
  // Not one of the study's six: as many epochs as every file has rows.
  EXPECT_EQ(model.maxEpochs(), 3);
  // Epoch e ends at the smallest progress of row e-1 over the files.
  EXPECT_DOUBLE_EQ(model.progressAt(0), 0);
  EXPECT_DOUBLE_EQ(model.progressAt(1), 100);
  EXPECT_DOUBLE_EQ(model.progressAt(2), 190);
  EXPECT_DOUBLE_EQ(model.progressAt(3), 300);
  EXPECT_DOUBLE_EQ(model.totalWork(), 300);
}

TEST(TraceTest, StepTimeMeasuredPlacements) {
  ApplicationModel model = toyModel();
  // Linear in the local batch on a measured placement.
  EXPECT_DOUBLE_EQ(model.stepTime({1}, 15).step, 1.5);
  EXPECT_DOUBLE_EQ(model.stepTime({2}, 12).step, 1.7);
  EXPECT_DOUBLE_EQ(model.stepTime({2}, 12).sync, 0.5);
  // Clamped outside the measured local batches.
  EXPECT_DOUBLE_EQ(model.stepTime({1}, 5).step, 1.0);
  EXPECT_DOUBLE_EQ(model.stepTime({1}, 40).step, 2.0);
  // A rotation of a measured placement, and empty nodes, are that placement.
  EXPECT_DOUBLE_EQ(model.stepTime({2, 1}, 10).step, 2.2);
  EXPECT_DOUBLE_EQ(model.stepTime({0, 2, 0, 1}, 10).step, 2.2);
}

TEST(TraceTest, StepTimeInterpolatedOverTheGrid) {
  ApplicationModel model = toyModel();
  // 4 nodes, 12 replicas: halfway between the (4, 8) and (4, 16) samples.
  EXPECT_DOUBLE_EQ(model.stepTime({3, 3, 3, 3}, 10).step, 6.0);
  // 3 nodes, 2 per node: halfway between (2 nodes, 4) = 3.0 and
  // (4 nodes, 8) = 5.0.
  StepTime three = model.stepTime({2, 2, 2}, 10);
  EXPECT_DOUBLE_EQ(three.step, 4.0);
  EXPECT_DOUBLE_EQ(three.sync, 1.5);
  // Beyond the largest node count: the node count is clamped to it and the
  // replicas kept (as the study does): (4 nodes, 16) at local batch 20.
  EXPECT_DOUBLE_EQ(model.stepTime({2, 2, 2, 2, 2, 2, 2, 2}, 20).step, 8.0);
}

TEST(TraceTest, NodesOfTenOrMoreReplicasKeepTheirOwnStepTime) {
  // Nodes of 10 or more GPUs (--gpus-per-node above 9) once all read as 9
  // replicas: 4 nodes of 13 replicas and of 15 shared one cached step time.
  ApplicationModel model = toyModel();
  EXPECT_DOUBLE_EQ(model.stepTime({10, 1, 1, 1}, 10).step, 6.25);
  EXPECT_DOUBLE_EQ(model.stepTime({12, 1, 1, 1}, 10).step, 6.75);
  EXPECT_DOUBLE_EQ(model.stepTime({1, 1, 12, 1}, 10).step, 6.75);
}

TEST(TraceTest, GradientStatisticsAndGain) {
  ApplicationModel model = toyModel();
  auto [sqr, var] = model.gradStats(20, 0);
  EXPECT_DOUBLE_EQ(sqr, 4.0 / 3);
  EXPECT_DOUBLE_EQ(var, 4.0);
  // s = 20 / 10 = 2: (4 + 4/3) / (4/2 + 4/3) = 1.6.
  EXPECT_DOUBLE_EQ(model.gain(20, 0), 1.6);
  // At the smallest batch every sample counts fully.
  EXPECT_DOUBLE_EQ(model.gain(10, 2), 1.0);
  // s = 4 at the largest: (6 + 2) / (6/4 + 2) = 16/7.
  EXPECT_DOUBLE_EQ(model.gain(40, 1), 16.0 / 7);
  // Clamped above the largest validated batch, but s keeps growing.
  EXPECT_DOUBLE_EQ(model.gain(80, 1), 8.0 / (6.0 / 8 + 2));
}

TEST(TraceTest, BatchSplitAndGoodput) {
  ApplicationModel model = toyModel();
  // 40 on one GPU: local 40 above the largest measured 20, so two
  // micro-steps of 20; step 2.0 + one accumulation step of 2.0 - 0.0.
  BatchConfig one = model.configure({1}, 40);
  EXPECT_EQ(one.accumSteps, 1);
  EXPECT_EQ(one.atomicBatch, 20);
  EXPECT_EQ(one.batch, 40);
  EXPECT_DOUBLE_EQ(one.stepTime, 4.0);
  BatchConfig two = model.configure({2}, 30);
  EXPECT_EQ(two.accumSteps, 0);
  EXPECT_EQ(two.atomicBatch, 15);
  EXPECT_DOUBLE_EQ(two.stepTime, 2.0);
  // Capped at the largest validated batch before the split: 100 on 2 GPUs
  // runs 40, local 20 in one step. Split first (the study's simulator), it
  // ran 3 micro-steps of 6 (36), and 10,000 ran 500 in 250 micro-steps of 1.
  for (int64_t request : {100, 10'000}) {
    BatchConfig capped = model.configure({2}, request);
    EXPECT_EQ(capped.accumSteps, 0);
    EXPECT_EQ(capped.atomicBatch, 20);
    EXPECT_EQ(capped.batch, 40);
    EXPECT_DOUBLE_EQ(capped.stepTime, model.stepTime({2}, 20).step);
  }
  EXPECT_DOUBLE_EQ(model.goodput({1}, 10, 0), 1.0);
  // 16/7 per step of 4.0 s.
  EXPECT_DOUBLE_EQ(model.goodput({1}, 40, 1), 16.0 / 7 / 4.0);
}

TEST(TraceTest, PackedPlacement) {
  EXPECT_EQ(packedPlacement(10, 4), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(packedPlacement(8, 4), (std::vector<int>{4, 4}));
  EXPECT_EQ(packedPlacement(3, 4), (std::vector<int>{3}));
}

TEST(TraceTest, MalformedTraceFilesNameFileAndLine) {
  ApplicationTrace trace;
  EXPECT_EQ(errorOf(parsePlacements("placement,local_bsz,step_time,sync_time\n"
                                    "1,10,1.0,0.0\n1,x,1.0,0.0\n",
                                    "p.csv", trace)),
            "p.csv:3: error: column 'local_bsz': 'x' is not an integer");
  EXPECT_EQ(errorOf(parsePlacements("placement,local_bsz,step_time\n", "p.csv",
                                    trace)),
            "p.csv:1: error: missing column 'sync_time' in the header "
            "'placement,local_bsz,step_time'");
  EXPECT_EQ(errorOf(parseScalability(
                "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                "2,1,10,1.0,0.0\n",
                "s.csv", trace)),
            "s.csv:2: error: nodes, replicas, local batch and step time must "
            "be positive (and replicas at least the nodes)");
  EXPECT_EQ(errorOf(parsePlacements(
                "placement,local_bsz,step_time,sync_time,step_time\n", "p.csv",
                trace)),
            "p.csv:1: error: column 'step_time' appears twice in the header");
  EXPECT_EQ(errorOf(parsePlacements("placement,local_bsz,step_time,sync_time\n"
                                    "1,4294967306,1.0,0.0\n",
                                    "p.csv", trace)),
            "p.csv:2: error: local_bsz must be at most 1e6");
  // A step of accumulated micro-batches would take no time (or less).
  EXPECT_EQ(errorOf(parsePlacements("placement,local_bsz,step_time,sync_time\n"
                                    "1,10,0.5,0.5\n",
                                    "p.csv", trace)),
            "p.csv:2: error: sync_time must be below step_time (it is a part "
            "of the step)");
  EXPECT_EQ(errorOf(parseValidation("progress,iteration,metric,grad_sqr,"
                                    "grad_var\n2,1,0,1,1\n1,2,0,1,1\n",
                                    "v.csv")),
            "v.csv:3: error: progress decreases");
  // Before 2026-12-02 -4294967295 nodes became 1 in the cast to int, and
  // gradient statistics near the largest double made the goodput NaN.
  EXPECT_EQ(errorOf(parseScalability(
                "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                "-4294967295,1,10,1.0,0.0\n",
                "s.csv", trace)),
            "s.csv:2: error: num_nodes and num_replicas must be from 1 to 1e6");
  EXPECT_EQ(errorOf(parseValidation("progress,iteration,metric,grad_sqr,"
                                    "grad_var\n1,1,0,1e308,1e308\n",
                                    "v.csv")),
            "v.csv:2: error: grad_sqr and grad_var must be at most 1e100");
}

TEST(TraceTest, WorkloadParsesAndRejectsBadRows) {
  auto jobs = parseWorkload("name,time,application,num_replicas,batch_size\n"
                            "a,10,cifar10,4,512\n"
                            "b,20.5,ncf,1,32768\n",
                            "w.csv");
  ASSERT_TRUE(bool(jobs));
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[1].name, "b");
  EXPECT_DOUBLE_EQ((*jobs)[1].submitTime, 20.5);
  EXPECT_EQ((*jobs)[1].batch, 32768);
  const std::string header = "name,time,application,num_replicas,batch_size\n";
  EXPECT_EQ(errorOf(parseWorkload(header + "a,10,cifar10,4,512\n"
                                           "b,soon,ncf,1,32768\n",
                                  "w.csv")),
            "w.csv:3: error: column 'time': 'soon' is not a number");
  EXPECT_EQ(errorOf(parseWorkload(header + "a,10,cifar10,4\n", "w.csv")),
            "w.csv:2: error: expected 5 fields, found 4");
  EXPECT_EQ(errorOf(parseWorkload(header + "a,10,mnist,4,512\n", "w.csv")),
            "w.csv:2: error: column 'application': unknown application "
            "'mnist' (bert, cifar10, deepspeech2, imagenet, ncf, yolov3)");
  EXPECT_EQ(
      errorOf(parseWorkload(header + "a,1,ncf,1,1\na,2,ncf,1,1\n", "w.csv")),
      "w.csv:3: error: job 'a' repeats the name of line 2");
  EXPECT_EQ(errorOf(parseWorkload(header + "a,1,ncf,0,1\n", "w.csv")),
            "w.csv:2: error: column 'num_replicas': must be a positive count");
  EXPECT_EQ(errorOf(parseWorkload(header, "w.csv")), "w.csv: error: no jobs");
  // A column the simulator does not read is refused, not dropped.
  EXPECT_EQ(
      errorOf(parseWorkload("name,time,application,num_replicas,batch_size,"
                            "priority\na,1,ncf,1,1,9\n",
                            "w.csv")),
      "w.csv:1: error: column 'priority' is not one this file has (name, "
      "time, application, num_replicas, batch_size)");
  EXPECT_EQ(errorOf(parseWorkload("name,time\n", "w.csv")),
            "w.csv:1: error: missing column 'application' in the header "
            "'name,time'");
}

TEST(TraceTest, GeneratorIsDeterministicAndPoisson) {
  GeneratorOptions options;
  options.jobs = 2000;
  options.ratePerHour = 30;
  options.seed = 7;
  auto a = cantFail(generateWorkload(options));
  auto b = cantFail(generateWorkload(options));
  ASSERT_EQ(a.size(), 2000u);
  EXPECT_EQ(formatWorkload(a), formatWorkload(b));
  // 2000 arrivals at 30 an hour: about 240,000 s (within 10%).
  EXPECT_NEAR(a.back().submitTime, 240000, 24000);
  // Round trip through the CSV.
  auto parsed = cantFail(parseWorkload(formatWorkload(a), "gen.csv"));
  EXPECT_EQ(parsed.size(), a.size());
  options.mix = {{"ncf", 1}};
  for (const WorkloadJob &job : cantFail(generateWorkload(options))) {
    EXPECT_EQ(job.application, "ncf");
    EXPECT_EQ(job.gpus, 1);
  }
  options.mix = {{"mnist", 1}};
  EXPECT_EQ(errorOf(generateWorkload(options)),
            "--mix: unknown application 'mnist'");
}

/// ../shared/traces/pollux-osdi21 beside the project, if there.
std::string sharedTraces() {
  SmallString<256> path(__FILE__);
  for (int i = 0; i < 3; ++i)
    sys::path::remove_filename(path);
  sys::path::append(path, "..", "shared", "traces", "pollux-osdi21");
  return sys::fs::is_directory(path) ? std::string(path) : std::string();
}

TEST(TraceTest, SharedTracesFollowTheStudysRules) {
  std::string dir = sharedTraces();
  if (dir.empty())
    GTEST_SKIP() << "../shared/traces/pollux-osdi21 not present";
  auto models = cantFail(loadApplicationModels(dir));
  ASSERT_EQ(models.size(), 6u);
  EXPECT_EQ(models["bert"]->maxEpochs(), 2);
  EXPECT_EQ(models["cifar10"]->maxEpochs(), 100);
  EXPECT_EQ(models["imagenet"]->maxEpochs(), 90);
  EXPECT_EQ(models["yolov3"]->maxLocalBatch(), 8);
  EXPECT_EQ(models["cifar10"]->initBatch(), 128);
  // bert: the work is the smaller progress of row 1 of its files.
  double smallest = INFINITY;
  for (auto &[batch, rows] : models["bert"]->traces().validation)
    smallest = std::min(smallest, rows[1].progress);
  EXPECT_DOUBLE_EQ(models["bert"]->totalWork(), smallest);
  // The first row of cifar10's placements.csv, read back.
  EXPECT_DOUBLE_EQ(models["cifar10"]->stepTime({1}, 32).step,
                   0.0427886962890625);
  // More GPUs at the same local batch never make a step shorter.
  for (auto &[name, model] : models) {
    double one = model->stepTime({4}, model->minLocalBatch()).step;
    double many =
        model->stepTime({4, 4, 4, 4, 4, 4, 4, 4}, model->minLocalBatch()).step;
    EXPECT_GE(many, one * 0.99) << name;
  }
}

} // namespace
