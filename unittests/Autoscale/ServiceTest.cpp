//===- ServiceTest.cpp - The autoscaler service's planning and state ------===//

#include "heterps/Autoscale/Service.h"
#include "heterps/Jobs/JobSpec.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <fstream>
#include <limits>

using namespace heterps::autoscale;

namespace {

ServiceJob fakeJob(const std::string &id, int minW, int maxW,
                   const std::string &phase = "queued", int workers = 0) {
  ServiceJob job;
  job.id = id;
  job.name = id;
  job.jobFile = "/jobs/" + id + ".yaml";
  job.microBatch = 64;
  job.minWorkers = minW;
  job.maxWorkers = maxW;
  job.initialWorkers = minW;
  job.minBatch = job.initialBatch = 128;
  job.maxBatch = 256;
  job.phase = phase;
  job.workers = workers;
  job.batch = workers ? 256 : 0;
  return job;
}

const PlannedJob &planned(const Plan &plan, const std::string &id) {
  for (const PlannedJob &p : plan.jobs)
    if (p.id == id)
      return p;
  static PlannedJob none;
  ADD_FAILURE() << "no plan for " << id;
  return none;
}

TEST(ServiceTest, NoBatchLargerThanTheWholeJob) {
  // A large gradient-noise scale makes larger batches pay; none is larger
  // than the job's samples (a batch of 10^8 for 12,800 samples once).
  ServiceState state;
  ServiceJob job = fakeJob("a", 1, 1);
  job.maxBatch = 100000000;
  job.samples = 12800;
  job.noiseScale = 1e308;
  state.jobs.push_back(job);
  Plan plan = planAllocation(state, {4, 0.02, 0.05, 3});
  EXPECT_LE(planned(plan, "a").batch, 12800);
  EXPECT_GE(planned(plan, "a").batch, 128);
}

TEST(ServiceTest, PlansOnTheMostSlots) {
  // kMostServiceSlots bounds the dynamic program's tables (a billion slots
  // ran out of memory); at the bound it plans at once.
  ServiceState state;
  for (int i = 0; i < 8; ++i)
    state.jobs.push_back(fakeJob("j" + std::to_string(i), 1, 64));
  Plan plan = planAllocation(state, {int(kMostServiceSlots), 0.02, 0.05, 3});
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(planned(plan, "j" + std::to_string(i)).workers, 4); // 256 / 64
}

TEST(ServiceTest, LoneJobGetsItsMaximum) {
  ServiceState state;
  state.jobs.push_back(fakeJob("a", 1, 4));
  Plan plan = planAllocation(state, {4, 0.02, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").workers, 4);
  // Four workers need four micro-batches of 64.
  EXPECT_EQ(planned(plan, "a").batch, 256);
}

TEST(ServiceTest, LargerBatchesPayOnlyInGoodput) {
  // Two workers at most: a batch of 256 runs 1.18x as fast as 128 (the
  // prior's per-step overhead), which does not pay for its statistical
  // efficiency unless the gradient noise is large.
  ServiceState state;
  state.jobs.push_back(fakeJob("a", 1, 2));
  EXPECT_DOUBLE_EQ(statisticalEfficiency(state.jobs[0], 256), 2.0 / 3);
  Plan plan = planAllocation(state, {2, 0, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").batch, 128);
  state.jobs[0].noiseScale = 1e6;
  plan = planAllocation(state, {2, 0, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").batch, 256);
}

TEST(ServiceTest, ArrivalShrinksARunningJob) {
  ServiceState state;
  state.jobs.push_back(fakeJob("a", 1, 4, "running", 4));
  state.jobs.push_back(fakeJob("b", 1, 4));
  Plan plan = planAllocation(state, {4, 1.0 / 30, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").workers + planned(plan, "b").workers, 4);
  EXPECT_GT(planned(plan, "b").workers, 0);
  EXPECT_LT(planned(plan, "a").workers, 4);
  EXPECT_GT(plan.valueAfter, plan.valueBefore);
}

TEST(ServiceTest, HighPenaltyKeepsRunningJobsWhereTheyAre) {
  ServiceState state;
  state.jobs.push_back(fakeJob("a", 1, 4, "running", 4));
  state.jobs.push_back(fakeJob("b", 1, 4));
  Plan plan = planAllocation(state, {4, 0.9, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").workers, 4);
  EXPECT_EQ(planned(plan, "b").workers, 0);
  EXPECT_NE(planned(plan, "b").reason.find("slots are free"),
            std::string::npos);
}

TEST(ServiceTest, RunningJobsAreNeverPreempted) {
  ServiceState state;
  // A running job with a resize under way keeps its slots.
  ServiceJob a = fakeJob("a", 2, 2, "running", 2);
  a.pendingResize = "r1";
  state.jobs.push_back(a);
  state.jobs.push_back(fakeJob("b", 2, 2, "running", 2));
  state.jobs.push_back(fakeJob("c", 1, 1));
  Plan plan = planAllocation(state, {4, 0, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").workers, 2);
  EXPECT_EQ(planned(plan, "b").workers, 2);
  EXPECT_EQ(planned(plan, "c").workers, 0);
  EXPECT_EQ(plan.used, 4);
}

TEST(ServiceTest, MinimumAboveCapacityWaitsWithAReason) {
  ServiceState state;
  state.jobs.push_back(fakeJob("big", 6, 8));
  Plan plan = planAllocation(state, {4, 0, 0.05, 3});
  EXPECT_EQ(planned(plan, "big").workers, 0);
  EXPECT_NE(planned(plan, "big").reason.find("above the capacity of 4"),
            std::string::npos)
      << planned(plan, "big").reason;
}

TEST(ServiceTest, ShardsTakeSlots) {
  ServiceState state;
  ServiceJob job = fakeJob("a", 1, 4);
  job.shards = 1;
  state.jobs.push_back(job);
  Plan plan = planAllocation(state, {4, 0, 0.05, 3});
  EXPECT_EQ(planned(plan, "a").workers, 3);
  EXPECT_EQ(plan.used, 4);
  // Two workers and two shards do not fit in 3 slots.
  ServiceJob two = fakeJob("b", 2, 4);
  two.shards = 2;
  state.jobs = {two};
  plan = planAllocation(state, {3, 0, 0.05, 3});
  EXPECT_EQ(planned(plan, "b").workers, 0);
  EXPECT_NE(planned(plan, "b").reason.find(
                "needs at least 4 slots (2 workers + 2 shards), above the "
                "capacity of 3"),
            std::string::npos)
      << planned(plan, "b").reason;
}

TEST(ServiceTest, MeasuredResizePausesReplaceTheConfiguredCost) {
  ServiceState state;
  state.jobs.push_back(fakeJob("a", 1, 4, "running", 2));
  state.jobs.push_back(fakeJob("b", 1, 4, "succeeded", 2));
  EXPECT_DOUBLE_EQ(chargedResizeCost(state, 1.5), 1.5);
  state.jobs[0].resizePauses = {2, 6};
  state.jobs[1].resizePauses = {4};
  EXPECT_DOUBLE_EQ(chargedResizeCost(state, 1.5), 4);
}

TEST(ServiceTest, FinishedJobsAreNotPlanned) {
  ServiceState state;
  state.jobs.push_back(fakeJob("done", 1, 4, "succeeded", 4));
  state.jobs.push_back(fakeJob("b", 1, 4));
  Plan plan = planAllocation(state, {4, 0, 0.05, 3});
  ASSERT_EQ(plan.jobs.size(), 1u);
  EXPECT_EQ(planned(plan, "b").workers, 4);
}

TEST(ServiceTest, ShapesKeepAMicroBatchPerWorker) {
  ServiceState state;
  ServiceJob job = fakeJob("a", 1, 8);
  job.maxBatch = 256; // 4 micro-batches: at most 4 workers
  state.jobs.push_back(job);
  Plan plan = planAllocation(state, {8, 0, 0.05, 3});
  EXPECT_LE(planned(plan, "a").workers, 4);
}

TEST(ServiceTest, MeasuredRatesFitTheOverhead) {
  ServiceJob job = fakeJob("a", 1, 4);
  // A prior only: nearly linear.
  EXPECT_NEAR(modelRate(job, 2, 128) / modelRate(job, 1, 128), 1.8, 0.1);
  // Measured: step = 1 s + batch/workers * 0.01 s. Doubling workers at
  // batch 128 goes from 2.28 s to 1.64 s per step.
  for (auto [w, b] : {std::pair{1, 128}, std::pair{2, 128}})
    job.rates.push_back({w, b, 1 / (1 + 0.01 * b / w)});
  EXPECT_NEAR(modelRate(job, 2, 128) / modelRate(job, 1, 128), 2.28 / 1.64,
              0.01);
}

TEST(ServiceTest, StateRoundTrips) {
  ServiceState state;
  ServiceJob job = fakeJob("a", 1, 4, "running", 3);
  job.pid = 1234;
  job.starts = 1;
  job.pendingResize = "r";
  job.rates.push_back({3, 256, 2.5});
  state.jobs.push_back(job);
  state.decisions.push_back({5, "a", "start", 3, 256, "arrival of a", 0.8});
  state.lastPlan = 5;
  auto parsed = parseServiceState(serviceStateJson(state));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  ASSERT_EQ(parsed->jobs.size(), 1u);
  const ServiceJob &j = parsed->jobs[0];
  EXPECT_EQ(j.id, "a");
  EXPECT_EQ(j.phase, "running");
  EXPECT_EQ(j.workers, 3);
  EXPECT_EQ(j.pid, 1234);
  EXPECT_EQ(j.starts, 1);
  EXPECT_EQ(j.pendingResize, "r");
  ASSERT_EQ(j.rates.size(), 1u);
  EXPECT_DOUBLE_EQ(j.rates[0].stepsPerSecond, 2.5);
  ASSERT_EQ(parsed->decisions.size(), 1u);
  EXPECT_EQ(parsed->decisions[0].describe(),
            "start a: 3 workers, batch 256: arrival of a (predicted gain "
            "+0.800)");
}

TEST(ServiceTest, MalformedStateIsAnError) {
  EXPECT_FALSE(bool(parseServiceState("[1, 2]")));
  auto bad = parseServiceState(R"({"jobs": [{"id": "a"}]})");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("ranges"), std::string::npos);
  // A file edited by hand: each mistake is named, not run as a default.
  ServiceState state;
  state.jobs.push_back(fakeJob("a", 1, 4, "running", 3));
  state.jobs.back().pauseStep = std::numeric_limits<int64_t>::max();
  const std::string good = serviceStateJson(state);
  ASSERT_TRUE(bool(parseServiceState(good)));
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    auto parsed = parseServiceState(text);
    return parsed ? std::string() : llvm::toString(parsed.takeError());
  };
  EXPECT_NE(edited("\"phase\": \"running\"", "\"phase\": \"exploded\"")
                .find("job 'a' has phase 'exploded', none of"),
            std::string::npos);
  EXPECT_NE(edited("\"workers\": 3", "\"workers\": \"two\"")
                .find("job 'a': 'workers' is not a whole number"),
            std::string::npos);
  EXPECT_NE(edited("\"workers\": 3", "\"workers\": 1e300")
                .find("'workers' is not a whole number"),
            std::string::npos);
  // Read as no jobs, the file was rewritten so, every job forgotten.
  EXPECT_NE(edited("\"jobs\": [", "\"jobz\": [")
                .find("the service state has no 'jobs' array"),
            std::string::npos);
  EXPECT_NE(edited("\"workers_range\": [\n        1,",
                   "\"workers_range\": [\n        4294967297,")
                .find("job 'a' has more than 4096 workers in its range"),
            std::string::npos);
  // Out of range, `elastic predict` aborted (a capacity of 2e9), ran for
  // ever (an end at 1e15 s) or printed 1e30 s (a start at -1e300).
  EXPECT_NE(edited("\"capacity\": 0", "\"capacity\": 2000000000")
                .find("'capacity' is not from 0 to 65536 slots"),
            std::string::npos);
  EXPECT_NE(edited("\"submitted_at\": ", "\"submitted_at\": -1e300, \"x\": ")
                .find("job 'a': 'submitted_at' is not a number of seconds "
                      "from 0 to 1e+11"),
            std::string::npos);
  EXPECT_NE(edited("\"ended_at\": ", "\"ended_at\": 1e15, \"y\": ")
                .find("'ended_at' is not a number of seconds"),
            std::string::npos);
  state.jobs.back().rates.push_back({3, 64, 1e-300});
  auto slow = parseServiceState(serviceStateJson(state));
  ASSERT_FALSE(bool(slow));
  EXPECT_NE(llvm::toString(slow.takeError())
                .find("a rate's 'steps_per_second' is not from 1e-09 to 1e9"),
            std::string::npos);
  state.jobs.back().rates.pop_back();
  state.jobs.push_back(state.jobs.back());
  auto twice = parseServiceState(serviceStateJson(state));
  ASSERT_FALSE(bool(twice));
  EXPECT_NE(llvm::toString(twice.takeError()).find("job 'a' is listed twice"),
            std::string::npos);
}

TEST(ServiceTest, SubmissionsGetDistinctIds) {
  std::string dir = testing::TempDir() + "/service-submit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/in/b");
  std::ofstream(dir + "/in/d.tsv") << "";
  ServiceJob job = fakeJob("ctr", 1, 2);
  job.jobFile = dir + "/in/job.yaml";
  std::ofstream(job.jobFile)
      << "name: ctr\nbundle: b\ndata: d.tsv\nsamples: 1280\n"
         "workers: {initial: 1, max: 2}\nps_shards: {initial: 1}\n"
         "batch: {initial: 128, max: 256}\n";
  auto first = submitJob(dir, job);
  auto second = submitJob(dir, job);
  ASSERT_TRUE(bool(first) && bool(second));
  EXPECT_EQ(*first, "ctr-1");
  EXPECT_EQ(*second, "ctr-2");
  // The job as submitted is kept: editing or removing the file after the
  // submit changes nothing the service runs.
  std::filesystem::remove(job.jobFile);
  std::ifstream in(dir + "/inbox/ctr-1.json");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  llvm::Expected<ServiceJob> submitted = parseSubmission(text);
  ASSERT_TRUE(bool(submitted)) << llvm::toString(submitted.takeError());
  const std::string kept = submitted->jobFile;
  EXPECT_NE(kept, job.jobFile);
  llvm::Expected<heterps::jobs::JobSpec> spec =
      heterps::jobs::parseJobFile(kept);
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  EXPECT_EQ(spec->samples, 1280);
  EXPECT_TRUE(std::filesystem::equivalent(spec->data, dir + "/in/d.tsv"));
  // An id the service took out of the inbox (recorded in a state.json
  // this submitter has not yet seen) is never handed out again.
  std::filesystem::remove(dir + "/inbox/ctr-1.json");
  std::filesystem::copy_file(kept, job.jobFile);
  auto third = submitJob(dir, job);
  ASSERT_TRUE(bool(third));
  EXPECT_EQ(*third, "ctr-3");
  // Top-level keys spelled as YAML allows ("workers :", quoted): the
  // service's copy replaced none of them and duplicated both, and the job
  // failed at its start.
  std::ofstream(job.jobFile)
      << "name: ctr\nbundle: b\ndata: d.tsv\nsamples: 1280\n"
         "workers : {initial: 1, max: 2}\nps_shards: {initial: 1}\n"
         "\"batch\": {initial: 128, max: 256}\n...\n";
  auto spelled = submitJob(dir, job);
  ASSERT_TRUE(bool(spelled)) << llvm::toString(spelled.takeError());
  std::ifstream spelledIn(dir + "/inbox/" + *spelled + ".json");
  llvm::Expected<ServiceJob> spelledJob =
      parseSubmission(std::string((std::istreambuf_iterator<char>(spelledIn)),
                                  std::istreambuf_iterator<char>()));
  ASSERT_TRUE(bool(spelledJob)) << llvm::toString(spelledJob.takeError());
  llvm::Expected<heterps::jobs::JobSpec> spelledSpec =
      heterps::jobs::parseJobFile(spelledJob->jobFile);
  ASSERT_TRUE(bool(spelledSpec)) << llvm::toString(spelledSpec.takeError());
  EXPECT_EQ(spelledSpec->batch.max, 256);
  EXPECT_TRUE(bool(requestCancel(dir, "ctr-2")) == false);
  auto missing = requestCancel(dir, "nope");
  EXPECT_TRUE(bool(missing));
  llvm::consumeError(std::move(missing));
  std::filesystem::remove_all(dir);
}

} // namespace
