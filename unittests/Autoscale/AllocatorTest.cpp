//===- AllocatorTest.cpp - The autoscaler's allocation optimizer ----------===//
//
// The exact programs against the exhaustive search on random small
// instances, the heterogeneous heuristic's measured gap (documented in
// docs/Autoscaler.md), the cost objective and the edge cases.
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Allocator.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

using namespace heterps::autoscale;

namespace {

struct InstanceShape {
  int classes = 1;
  int maxCapacity = 12;
  int maxDevicesPerClass = 6;
  bool running = false; // some jobs run now, with penalty and hysteresis
  bool floors = false;  // MinCost floors
};

AllocationRequest randomRequest(std::mt19937 &rng, const InstanceShape &shape) {
  auto uniformInt = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  AllocationRequest request;
  for (int c = 0; c < shape.classes; ++c)
    request.capacity.push_back(uniformInt(0, shape.maxCapacity));
  std::vector<double> pricePerDevice;
  for (int c = 0; c < shape.classes; ++c)
    pricePerDevice.push_back(uniform(0.5, 4));
  int numJobs = uniformInt(2, 6);
  for (int j = 0; j < numJobs; ++j) {
    AllocationJob job;
    job.id = "job" + std::to_string(j);
    int numChoices = uniformInt(1, 5);
    for (int c = 0; c < numChoices; ++c) {
      JobChoice choice;
      int total = 0;
      while (total == 0) {
        choice.devices.assign(shape.classes, 0);
        for (int k = 0; k < shape.classes; ++k) {
          // Several classes: a job often uses only some of them.
          if (shape.classes > 1 && uniformInt(0, 2) == 0)
            continue;
          choice.devices[k] = uniformInt(1, shape.maxDevicesPerClass);
          total += choice.devices[k];
        }
      }
      choice.batch = 32 << uniformInt(0, 4);
      choice.value = uniform(0, 10);
      for (int k = 0; k < shape.classes; ++k)
        choice.costPerHour += choice.devices[k] * pricePerDevice[k];
      choice.costPerHour *= uniform(0.8, 1.2);
      job.choices.push_back(choice);
    }
    if (shape.running && uniformInt(0, 1) == 0)
      job.current = uniformInt(0, numChoices - 1);
    if (shape.floors && uniformInt(0, 4) < 3)
      job.floor =
          job.choices[uniformInt(0, numChoices - 1)].value * uniform(0.3, 1.0);
    request.jobs.push_back(job);
  }
  if (shape.running) {
    request.reallocationPenalty = uniform(0, 0.5);
    request.hysteresis = uniformInt(0, 1) ? uniform(0, 0.3) : 0;
  }
  if (shape.floors)
    request.objective = Objective::MinCost;
  return request;
}

void expectValid(const AllocationRequest &request,
                 const AllocationResult &result) {
  EXPECT_EQ(validateAllocation(request, result), "");
  ASSERT_EQ(result.reasons.size(), request.jobs.size());
  for (size_t j = 0; j < request.jobs.size(); ++j)
    EXPECT_TRUE(result.choice[j] >= 0 || !result.reasons[j].empty())
        << request.jobs[j].id;
}

TEST(AllocatorTest, SingleClassProgramEqualsExhaustiveSearch) {
  std::mt19937 rng(38);
  for (int running = 0; running < 2; ++running) {
    InstanceShape shape;
    shape.running = running;
    for (int i = 0; i < 500; ++i) {
      AllocationRequest request = randomRequest(rng, shape);
      AllocationResult result = allocate(request);
      AllocationResult reference = allocateExhaustively(request);
      expectValid(request, result);
      EXPECT_NEAR(result.value, reference.value, 1e-9) << "instance " << i;
      EXPECT_EQ(result.keptCurrent, reference.keptCurrent) << "instance " << i;
      if (!result.keptCurrent) {
        EXPECT_NEAR(result.bound, result.value, 1e-12);
      }
      EXPECT_GE(result.bound, result.value - 1e-12);
      EXPECT_TRUE(result.method == AllocationMethod::SingleClassDP ||
                  result.method == AllocationMethod::Empty);
    }
  }
}

TEST(AllocatorTest, MultiClassProgramEqualsExhaustiveSearch) {
  std::mt19937 rng(380);
  for (int classes = 2; classes <= 3; ++classes)
    for (int running = 0; running < 2; ++running) {
      InstanceShape shape;
      shape.classes = classes;
      shape.maxCapacity = 8;
      shape.maxDevicesPerClass = 4;
      shape.running = running;
      for (int i = 0; i < 150; ++i) {
        AllocationRequest request = randomRequest(rng, shape);
        AllocationResult result = allocate(request);
        AllocationResult reference = allocateExhaustively(request);
        expectValid(request, result);
        EXPECT_NEAR(result.value, reference.value, 1e-9) << "instance " << i;
        EXPECT_NE(result.method, AllocationMethod::Lagrangian);
      }
    }
}

/// The heuristic against the optimum: always feasible, and the gap
/// docs/Autoscaler.md quotes (these bounds are the measured worst case and
/// mean, rounded down, for this fixed seed).
TEST(AllocatorTest, LagrangianHeuristicGapAgainstExhaustiveSearch) {
  std::mt19937 rng(3800);
  double worst = 1, sum = 0;
  int counted = 0, optimal = 0;
  for (int classes = 2; classes <= 3; ++classes)
    for (int running = 0; running < 2; ++running) {
      InstanceShape shape;
      shape.classes = classes;
      shape.maxCapacity = 10;
      shape.maxDevicesPerClass = 5;
      shape.running = running;
      for (int i = 0; i < 250; ++i) {
        AllocationRequest request = randomRequest(rng, shape);
        request.exactStateLimit = 0;
        AllocationResult result = allocate(request);
        AllocationResult reference = allocateExhaustively(request);
        expectValid(request, result);
        EXPECT_TRUE(result.method == AllocationMethod::Lagrangian ||
                    result.method == AllocationMethod::Empty);
        EXPECT_EQ(validateAllocation(request, reference), "");
        EXPECT_GE(result.bound, reference.value - 1e-9);
        if (reference.value <= 0)
          continue;
        double ratio = result.value / reference.value;
        worst = std::min(worst, ratio);
        sum += ratio;
        ++counted;
        optimal += ratio > 1 - 1e-9;
      }
    }
  double mean = sum / counted;
  std::printf("Lagrangian/exhaustive over %d instances: mean %.4f, worst %.4f, "
              "optimal in %d\n",
              counted, mean, worst, optimal);
  EXPECT_GE(mean, 0.999);
  EXPECT_GE(worst, 0.9);
}

TEST(AllocatorTest, MinCostEqualsExhaustiveSearch) {
  std::mt19937 rng(3801);
  int infeasible = 0;
  for (int classes = 1; classes <= 3; ++classes)
    for (int running = 0; running < 2; ++running) {
      InstanceShape shape;
      shape.classes = classes;
      shape.maxCapacity = classes == 1 ? 12 : 8;
      shape.maxDevicesPerClass = classes == 1 ? 6 : 4;
      shape.running = running;
      shape.floors = true;
      for (int i = 0; i < (classes == 1 ? 300 : 100); ++i) {
        AllocationRequest request = randomRequest(rng, shape);
        AllocationResult result = allocate(request);
        AllocationResult reference = allocateExhaustively(request);
        expectValid(request, result);
        EXPECT_EQ(result.feasible, reference.feasible) << "instance " << i;
        EXPECT_NEAR(result.costPerHour, reference.costPerHour, 1e-9)
            << "instance " << i;
        if (!result.feasible) {
          ++infeasible;
          bool named = false;
          for (size_t j = 0; j < request.jobs.size(); ++j)
            named |= result.reasons[j].find("floor") != std::string::npos;
          EXPECT_TRUE(named);
        }
      }
    }
  EXPECT_GT(infeasible, 0); // the random floors cover the infeasible case
}

TEST(AllocatorTest, MinCostHeuristicAgainstExhaustiveSearch) {
  std::mt19937 rng(3802);
  int sameFeasibility = 0, counted = 0;
  double worst = 1;
  for (int i = 0; i < 400; ++i) {
    InstanceShape shape;
    shape.classes = 2 + i % 2;
    shape.maxCapacity = 10;
    shape.maxDevicesPerClass = 5;
    shape.floors = true;
    AllocationRequest request = randomRequest(rng, shape);
    request.exactStateLimit = 0;
    AllocationResult result = allocate(request);
    AllocationResult reference = allocateExhaustively(request);
    expectValid(request, result);
    ++counted;
    sameFeasibility += result.feasible == reference.feasible;
    if (result.feasible && reference.feasible && result.costPerHour > 0)
      worst = std::min(worst, reference.costPerHour / result.costPerHour);
    // It never claims a plan meets floors the exhaustive search cannot.
    EXPECT_TRUE(!result.feasible || reference.feasible);
  }
  std::printf("MinCost heuristic: same feasibility in %d of %d, worst "
              "optimum/cost %.4f\n",
              sameFeasibility, counted, worst);
  EXPECT_GE(sameFeasibility, counted * 99 / 100);
  EXPECT_GE(worst, 0.95);
}

JobChoice choice(int devices, double value, int64_t batch = 0) {
  JobChoice c;
  c.devices = {devices};
  c.value = value;
  c.batch = batch;
  c.costPerHour = devices;
  return c;
}

TEST(AllocatorTest, NoJobs) {
  AllocationRequest request;
  request.capacity = {8};
  AllocationResult result = allocate(request);
  EXPECT_TRUE(result.choice.empty());
  EXPECT_EQ(result.value, 0);
  EXPECT_TRUE(result.feasible);
  EXPECT_EQ(result.method, AllocationMethod::Empty);
}

TEST(AllocatorTest, ZeroCapacityQueuesEveryJob) {
  AllocationRequest request;
  request.capacity = {0};
  request.classNames = {"gpu.a"};
  request.jobs.push_back({"a", {choice(1, 1), choice(2, 1.5)}});
  AllocationResult result = allocate(request);
  EXPECT_EQ(result.choice, std::vector<int>({-1}));
  EXPECT_EQ(result.reasons[0], "needs at least 1 device of gpu.a, only 0 free "
                               "in all");
}

TEST(AllocatorTest, MinimumAboveCapacityGetsAReason) {
  AllocationRequest request;
  request.capacity = {6};
  request.classNames = {"gpu.a"};
  request.jobs.push_back({"big", {choice(8, 5), choice(16, 9)}});
  request.jobs.push_back({"small", {choice(2, 1), choice(4, 3)}});
  request.jobs.push_back({"medium", {choice(4, 0.5)}});
  AllocationResult result = allocate(request);
  EXPECT_EQ(result.choice, std::vector<int>({-1, 1, -1}));
  EXPECT_EQ(result.reasons[0],
            "needs at least 8 devices of gpu.a, only 6 free in all");
  EXPECT_EQ(result.reasons[1], "");
  EXPECT_EQ(result.reasons[2],
            "needs at least 4 devices of gpu.a, 2 free after higher-value "
            "jobs");
}

// A choice worth nothing would not serve the job: the reason names the
// smallest one that would (it named the 1-device choice worth 0).
TEST(AllocatorTest, ReasonsSkipChoicesWorthNothing) {
  AllocationRequest request;
  request.capacity = {4};
  request.classNames = {"gpu.a"};
  request.jobs.push_back({"a", {choice(1, 0), choice(8, 1)}});
  AllocationResult result = allocate(request);
  EXPECT_EQ(result.choice, std::vector<int>({-1}));
  EXPECT_EQ(result.reasons[0],
            "needs at least 8 devices of gpu.a, only 4 free in all");
  request.jobs[0].choices.pop_back();
  EXPECT_EQ(allocate(request).reasons[0], "no choice has a positive value");
}

TEST(AllocatorTest, FixedBatchBaselineIsTheSameProgramOnFewerChoices) {
  // Elastic: any of 3 batches on 1 to 4 GPUs; the baseline keeps batch 128.
  AllocationRequest elastic, fixed;
  elastic.capacity = fixed.capacity = {8};
  for (int j = 0; j < 4; ++j) {
    AllocationJob job{"job" + std::to_string(j), {}};
    AllocationJob baseline = job;
    for (int g = 1; g <= 4; ++g)
      for (int64_t batch : {64, 128, 256}) {
        // Larger batches scale better, up to a per-job limit.
        double value = g * (batch / 256.0 + 0.5) / (1 + 0.1 * j * g);
        job.choices.push_back(choice(g, value, batch));
        if (batch == 128)
          baseline.choices.push_back(choice(g, value, batch));
      }
    elastic.jobs.push_back(job);
    fixed.jobs.push_back(baseline);
  }
  AllocationResult withBatch = allocate(elastic);
  AllocationResult withoutBatch = allocate(fixed);
  expectValid(fixed, withoutBatch);
  for (size_t j = 0; j < fixed.jobs.size(); ++j)
    if (withoutBatch.choice[j] >= 0) {
      EXPECT_EQ(fixed.jobs[j].choices[withoutBatch.choice[j]].batch, 128);
    }
  EXPECT_GT(withBatch.value, withoutBatch.value);
  EXPECT_NEAR(withoutBatch.value, allocateExhaustively(fixed).value, 1e-12);
}

TEST(AllocatorTest, PenaltyAndHysteresisKeepRunningJobs) {
  // Job a runs on 4 GPUs (value 4); moving it to 6 gains 10% before the
  // penalty, less than nothing after a 20% penalty.
  AllocationRequest request;
  request.capacity = {8};
  request.jobs.push_back({"a", {choice(4, 4), choice(6, 4.4)}, 0});
  request.jobs.push_back({"b", {choice(2, 1), choice(4, 1.2)}});
  AllocationResult free = allocate(request);
  EXPECT_EQ(free.choice, std::vector<int>({1, 0}));
  request.reallocationPenalty = 0.2;
  AllocationResult penalised = allocate(request);
  EXPECT_EQ(penalised.choice, std::vector<int>({0, 1}));
  EXPECT_NEAR(penalised.value, 5.2, 1e-12);
  // Without penalty but with 20% hysteresis the 5.4 vs 5.2 gain is too small.
  request.reallocationPenalty = 0;
  request.hysteresis = 0.2;
  AllocationResult held = allocate(request);
  EXPECT_TRUE(held.keptCurrent);
  EXPECT_EQ(held.choice, std::vector<int>({0, 1}));
  // The bound still covers the plan not taken (it was the kept plan's 5.2).
  EXPECT_NEAR(held.bound, 5.4, 1e-12);
  // A big enough gain moves it.
  request.jobs[0].choices[1].value = 8;
  EXPECT_EQ(allocate(request).choice, std::vector<int>({1, 0}));
}

TEST(AllocatorTest, RunningJobsThatNoLongerFitAreReplanned) {
  AllocationRequest request;
  request.capacity = {4}; // shrunk: the current choices need 6
  request.jobs.push_back({"a", {choice(2, 2), choice(4, 3)}, 1});
  request.jobs.push_back({"b", {choice(2, 2)}, 0});
  request.hysteresis = 0.5;
  AllocationResult result = allocate(request);
  EXPECT_FALSE(result.keptCurrent);
  EXPECT_EQ(validateAllocation(request, result), "");
  EXPECT_NEAR(result.value, 4, 1e-12);
}

TEST(AllocatorTest, MalformedChoicesAreIgnored) {
  AllocationRequest request;
  request.capacity = {4, 4};
  AllocationJob job{"bad", {}};
  JobChoice wrongSize;
  wrongSize.devices = {1};
  wrongSize.value = 5;
  JobChoice negative;
  negative.devices = {-1, 2};
  negative.value = 5;
  job.choices = {wrongSize, negative};
  request.jobs.push_back(job);
  AllocationResult result = allocate(request);
  EXPECT_EQ(result.choice, std::vector<int>({-1}));
  EXPECT_NE(result.reasons[0].find("no well-formed choice"), std::string::npos);
}

// A floor is judged after the re-allocation penalty in the reasons too,
// and what the job holds below its floor is free to it: a job whose only
// fitting choice reaches the floor before the penalty was told it needed
// 1 device with "0 free after the other floors", its own device.
TEST(AllocatorTest, MinCostReasonsWeighThePenalty) {
  AllocationRequest request;
  request.objective = Objective::MinCost;
  request.reallocationPenalty = 0.5;
  request.capacity = {1};
  request.classNames = {"gpu.a"};
  // Runs on 2 devices (no longer there); 1 device is worth 1.5 x 0.5.
  request.jobs.push_back({"a", {choice(2, 1), choice(1, 1.5)}, 0, 1});
  AllocationResult result = allocate(request);
  EXPECT_FALSE(result.feasible);
  EXPECT_EQ(result.reasons[0], "floor 1 unmet: needs at least 2 devices of "
                               "gpu.a, only 1 free in all");
  request.capacity = {2};
  request.jobs.push_back({"b", {choice(1, 1)}, -1, 1});
  request.jobs[0].choices[0] = choice(3, 1);
  result = allocate(request);
  EXPECT_EQ(result.reasons[0], "floor 1 unmet: needs at least 3 devices of "
                               "gpu.a, only 2 free in all");
}

TEST(AllocatorTest, MinCostNamesTheJobsWhoseFloorsCannotBeMet) {
  AllocationRequest request;
  request.objective = Objective::MinCost;
  request.capacity = {4};
  request.classNames = {"gpu.a"};
  request.jobs.push_back({"a", {choice(2, 2), choice(4, 4)}, -1, 3});
  request.jobs.push_back({"b", {choice(2, 2)}, -1, 2});
  request.jobs.push_back({"c", {choice(1, 1)}, -1, 5});
  request.jobs.push_back({"d", {choice(1, 1)}, -1, 0});
  AllocationResult result = allocate(request);
  EXPECT_FALSE(result.feasible);
  // a's floor needs all four GPUs; b's then has none: one of them is unmet,
  // c's cannot be met at all, d needs nothing and gets nothing.
  EXPECT_EQ(result.reasons[2], "floor 5 unmet: no choice reaches it (best "
                               "value 1)");
  EXPECT_NE(result.reasons[3].find("no floor"), std::string::npos);
  EXPECT_TRUE(result.choice[0] >= 0 || result.choice[1] >= 0);
  EXPECT_EQ(result.choice[3], -1);
  // Lower a's floor: both fit on two GPUs each, the cheapest plan.
  request.jobs[0].floor = 2;
  request.jobs[2].floor = 0;
  AllocationResult relaxed = allocate(request);
  EXPECT_TRUE(relaxed.feasible);
  EXPECT_EQ(relaxed.choice, std::vector<int>({0, 0, -1, -1}));
  EXPECT_NEAR(relaxed.costPerHour, 4, 1e-12);
}

// One class past the exact program's table bound: the heuristic, still
// feasible and near the optimum (a 52 GB table aborted before).
TEST(AllocatorTest, SingleClassPastTheTableBoundUsesTheHeuristic) {
  std::mt19937 rng(11);
  InstanceShape shape;
  shape.classes = 1;
  shape.maxCapacity = 10;
  shape.maxDevicesPerClass = 5;
  for (int i = 0; i < 100; ++i) {
    AllocationRequest request = randomRequest(rng, shape);
    AllocationResult exact = allocate(request);
    request.exactTableCells = 1;
    AllocationResult result = allocate(request);
    expectValid(request, result);
    EXPECT_TRUE(result.method == AllocationMethod::Lagrangian ||
                result.method == AllocationMethod::Empty)
        << "instance " << i;
    EXPECT_GE(result.value, 0.9 * exact.value - 1e-12) << "instance " << i;
  }
}

TEST(AllocatorTest, LargeHeterogeneousInstanceIsFeasibleAndNearItsBound) {
  std::mt19937 rng(7);
  AllocationRequest request;
  request.capacity = {96, 64, 128};
  for (int j = 0; j < 200; ++j) {
    AllocationJob job{"job" + std::to_string(j), {}};
    double speed = std::uniform_real_distribution<double>(0.5, 2)(rng);
    for (int k = 0; k < 3; ++k)
      for (int g : {1, 2, 4, 8}) {
        JobChoice c;
        c.devices = {0, 0, 0};
        c.devices[k] = g;
        c.value = speed * (k + 1) * std::pow(g, 0.8) / (1 + j % 5);
        job.choices.push_back(c);
      }
    request.jobs.push_back(job);
  }
  AllocationResult result = allocate(request);
  EXPECT_EQ(result.method, AllocationMethod::Lagrangian);
  EXPECT_EQ(validateAllocation(request, result), "");
  EXPECT_GE(result.bound, result.value);
  EXPECT_GE(result.value, 0.99 * result.bound);
}

} // namespace

// Pollux's factor (T - S d) / (T + d): young or often-moved jobs stay.
TEST(AllocatorTest, ReallocationPenaltyFallsWithAgeAndRisesWithMoves) {
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(0, 0, 30), 1);
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(300, 0, 30), 1 - 300.0 / 330);
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(300, 5, 30), 1 - 150.0 / 330);
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(300, 20, 30), 1);
  // A clock that went back, and no resize cost at all.
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(-5, 0, 30), 1);
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(0, 0, 0), 1);
  EXPECT_DOUBLE_EQ(reallocationPenaltyAfter(100, 0, 0), 0);
}
