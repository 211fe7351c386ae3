//===- SchedulerTest.cpp - Strategies against each other ------------------===//

#include "heterps/Schedule/Scheduler.h"
#include "RandomModels.h"
#include "Strategies.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace heterps;
using namespace heterps::schedule;
using heterps::testing::ctrGraph;
using heterps::testing::logUniform;
using heterps::testing::randomCluster;
using heterps::testing::randomGraph;
using heterps::testing::shuffleNetGraph;

namespace {

Plan solveOrDie(llvm::StringRef strategy, const cost::LayerGraph &graph,
                const cluster::ClusterSpec &cluster, double target,
                const StrategyOptions &options = {}) {
  llvm::Expected<Plan> plan =
      solve(strategy, graph, cluster, Objective{target}, options);
  if (!plan) {
    ADD_FAILURE() << strategy.str() << ": " << llvm::toString(plan.takeError());
    return Plan();
  }
  return std::move(*plan);
}

/// A target around what the first class alone reaches, so that some are
/// easy, some need several stages or replicas and some cannot be met.
double randomTarget(std::mt19937_64 &rng, const cost::LayerGraph &graph,
                    const cluster::ClusterSpec &cluster, double low,
                    double high) {
  cost::CostModel model(graph, cluster);
  cost::Evaluation alone =
      model.evaluate(std::vector<unsigned>(graph.size(), 0), 1e300);
  return alone.throughput * logUniform(rng, low, high);
}

/// A random cluster of up to three classes of one or two devices, a random
/// graph of 3 to 7 layers and a target of `low` to `high` times what its
/// first class reaches alone.
struct SmallInstance {
  cluster::ClusterSpec cluster;
  cost::LayerGraph graph;
  double target = 0;
};
SmallInstance smallInstance(std::mt19937_64 &rng, double low, double high) {
  SmallInstance instance;
  instance.cluster = randomCluster(rng, 3, true, 2);
  instance.graph = randomGraph(rng, 3 + rng() % 5);
  instance.target =
      randomTarget(rng, instance.graph, instance.cluster, low, high);
  return instance;
}

/// Checks that a plan's numbers are those of its placement.
void expectConsistent(const Plan &plan, const cost::LayerGraph &graph,
                      const cluster::ClusterSpec &cluster, double target) {
  cost::CostModel model(graph, cluster);
  cost::Evaluation again =
      model.evaluate(plan.classOfLayer, target, plan.provisionedFor);
  EXPECT_EQ(again.feasible, plan.feasible);
  EXPECT_DOUBLE_EQ(again.costPerMillionSamples, plan.costPerMillionSamples);
  EXPECT_DOUBLE_EQ(again.throughput, plan.throughput);
}

/// Options whose exact searches provision every stage when asked instead of
/// tabling them (what deep graphs get): the answers must not change.
StrategyOptions untabled() {
  StrategyOptions options;
  options.maxStoredStages = 0;
  return options;
}

TEST(Scheduler, DynamicProgrammingMatchesBruteForce) {
  std::mt19937_64 rng(42);
  unsigned feasible = 0, multiStage = 0;
  for (unsigned trial = 0; trial != 300; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, false);
    cost::LayerGraph graph = randomGraph(rng, 1 + rng() % 7);
    double target = randomTarget(rng, graph, cluster, 0.05, 3);
    Plan brute = solveOrDie("brute", graph, cluster, target);
    Plan dp = solveOrDie("dp", graph, cluster, target);
    ASSERT_EQ(dp.feasible, brute.feasible) << "trial " << trial;
    Plan untabledDp = solveOrDie("dp", graph, cluster, target, untabled());
    EXPECT_EQ(untabledDp.classOfLayer, dp.classOfLayer) << "trial " << trial;
    if (brute.feasible) {
      ++feasible;
      multiStage += brute.stages.size() > 1;
      EXPECT_NEAR(dp.costPerMillionSamples, brute.costPerMillionSamples,
                  1e-9 * brute.costPerMillionSamples)
          << "trial " << trial;
    } else {
      EXPECT_FALSE(dp.infeasibleReason.empty());
      EXPECT_TRUE(dp.bottleneckLayer.has_value());
      EXPECT_LE(dp.throughput, dp.bestReachableThroughput * (1 + 1e-12));
      EXPECT_LE(brute.throughput, dp.bestReachableThroughput * (1 + 1e-12));
    }
    expectConsistent(dp, graph, cluster, target);
  }
  // The generator must exercise the interesting cases.
  EXPECT_GT(feasible, 100u);
  EXPECT_GT(multiStage, 20u);
}

TEST(Scheduler, DynamicProgrammingExactWhenCountsBind) {
  // One or two devices per class: stages compete for them.
  std::mt19937_64 rng(7);
  for (unsigned trial = 0; trial != 150; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true, 2);
    cost::LayerGraph graph = randomGraph(rng, 2 + rng() % 6);
    double target = randomTarget(rng, graph, cluster, 0.2, 2);
    Plan brute = solveOrDie("brute", graph, cluster, target);
    Plan dp = solveOrDie("dp", graph, cluster, target);
    ASSERT_EQ(dp.feasible, brute.feasible) << "trial " << trial;
    Plan untabledDp = solveOrDie("dp", graph, cluster, target, untabled());
    EXPECT_EQ(untabledDp.classOfLayer, dp.classOfLayer) << "trial " << trial;
    if (brute.feasible) {
      EXPECT_NEAR(dp.costPerMillionSamples, brute.costPerMillionSamples,
                  1e-9 * brute.costPerMillionSamples)
          << "trial " << trial;
    }
  }
}

TEST(Scheduler, OrderedSearchWithinCountsAndItsStepBudget) {
  // cheapest over ordered slots with few devices per class (the label-setting
  // DP runs): the cheapest feasible placement whose stage classes are a
  // subsequence of the slots, checked against enumeration. Under a step
  // budget it returns a feasible placement no cheaper, or none, and never a
  // worse one for a larger budget: it stops the same floors earlier.
  std::mt19937_64 rng(19);
  unsigned checked = 0, cutShort = 0;
  for (unsigned trial = 0; trial != 150; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true, 2 + rng() % 2);
    cost::LayerGraph graph = randomGraph(rng, 3 + rng() % 5);
    double target = randomTarget(rng, graph, cluster, 0.2, 2);
    cost::CostModel model(graph, cluster);
    unsigned n = graph.size(), numCls = cluster.classes.size();
    std::vector<unsigned> slots(3 + rng() % 6);
    for (unsigned &slot : slots)
      slot = rng() % numCls;
    auto followsSlots = [&](const cost::Evaluation &plan) {
      size_t next = 0;
      for (const cost::StagePlan &stage : plan.stages) {
        while (next != slots.size() && slots[next] != stage.deviceClass)
          ++next;
        if (next == slots.size())
          return false;
        ++next;
      }
      return true;
    };
    double cheapest = std::numeric_limits<double>::infinity();
    std::vector<unsigned> placement(n, 0);
    while (true) {
      cost::Evaluation plan = model.evaluate(placement, target);
      if (plan.feasible && followsSlots(plan))
        cheapest = std::min(cheapest, plan.costPerMillionSamples);
      unsigned l = 0;
      while (l != n && ++placement[l] == numCls)
        placement[l++] = 0;
      if (l == n)
        break;
    }
    schedule::detail::ExactPlacementSearch search(model, target);
    std::optional<cost::Evaluation> exact =
        search.cheapest(slots, /*ordered=*/true);
    ASSERT_EQ(exact.has_value(), std::isfinite(cheapest)) << "trial " << trial;
    if (!exact)
      continue;
    ++checked;
    EXPECT_TRUE(exact->feasible && followsSlots(*exact)) << "trial " << trial;
    EXPECT_NEAR(exact->costPerMillionSamples, cheapest, 1e-9 * cheapest)
        << "trial " << trial;
    double previous = std::numeric_limits<double>::infinity();
    for (double steps = 1; steps < 1e7; steps *= 4) {
      std::optional<cost::Evaluation> bounded =
          search.cheapest(slots, /*ordered=*/true, steps);
      double cost = bounded ? bounded->costPerMillionSamples
                            : std::numeric_limits<double>::infinity();
      if (bounded) {
        EXPECT_TRUE(bounded->feasible && followsSlots(*bounded))
            << "trial " << trial;
      }
      EXPECT_GE(cost, cheapest * (1 - 1e-9)) << "trial " << trial;
      EXPECT_LE(cost, previous) << "trial " << trial;
      cutShort += cost > cheapest * (1 + 1e-9);
      previous = cost;
    }
    EXPECT_NEAR(previous, cheapest, 1e-9 * cheapest) << "trial " << trial;
  }
  EXPECT_GT(checked, 40u);
  EXPECT_GT(cutShort, 40u);
  // Plans of many stages (CTR models on the paper preset with fewer
  // devices, at high targets): ordered slots that repeat every class once
  // per layer allow any placement, so the search must agree with dp's.
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  unsigned manyStages = 0;
  for (unsigned trial = 0; trial != 24; ++trial) {
    // Few devices, so that the counts bind.
    for (cluster::DeviceClass &cls : paper->classes)
      cls.count = 2 + rng() % 4;
    cost::LayerGraph graph = ctrGraph(rng, 12 + rng() % 12);
    double target = randomTarget(rng, graph, *paper, 2, 8);
    cost::CostModel model(graph, *paper);
    unsigned n = graph.size(), numCls = paper->classes.size();
    std::vector<unsigned> everyClass, everySequence;
    for (unsigned c = 0; c != numCls; ++c)
      everyClass.push_back(c);
    for (unsigned l = 0; l != n; ++l)
      everySequence.insert(everySequence.end(), everyClass.begin(),
                           everyClass.end());
    schedule::detail::ExactPlacementSearch search(model, target);
    std::optional<cost::Evaluation> dp =
        search.cheapest(everyClass, /*ordered=*/false);
    std::optional<cost::Evaluation> ordered =
        search.cheapest(everySequence, /*ordered=*/true);
    ASSERT_EQ(ordered.has_value(), dp.has_value()) << "trial " << trial;
    if (!dp)
      continue;
    manyStages += dp->stages.size() >= 4;
    EXPECT_NEAR(ordered->costPerMillionSamples, dp->costPerMillionSamples,
                1e-9 * dp->costPerMillionSamples)
        << "trial " << trial;
  }
  EXPECT_GT(manyStages, 3u);
}

TEST(Scheduler, LiftedWindowIsCheapestAboveTheFloor) {
  // cheapestAround's lift mode with the whole model freed is DP(floor):
  // the cheapest placement whose stages and boundaries all run faster than
  // the floor and meet the target, within the class counts.
  std::mt19937_64 rng(11);
  unsigned lifted = 0;
  for (unsigned trial = 0; trial != 150; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true, 1 + rng() % 4);
    cost::LayerGraph graph = randomGraph(rng, 2 + rng() % 5);
    double target = randomTarget(rng, graph, cluster, 0.05, 1);
    Plan dp = solveOrDie("dp", graph, cluster, target);
    if (!dp.feasible)
      continue;
    cost::CostModel model(graph, cluster);
    unsigned n = graph.size(), numCls = cluster.classes.size();
    double floor = dp.throughput;
    double cheapest = std::numeric_limits<double>::infinity();
    std::vector<unsigned> placement(n, 0);
    while (true) {
      cost::Evaluation plan = model.evaluate(placement, target);
      if (plan.feasible && plan.throughput > floor)
        cheapest = std::min(cheapest, plan.pricePerHour);
      unsigned l = 0;
      while (l != n && ++placement[l] == numCls)
        placement[l++] = 0;
      if (l == n)
        break;
    }
    schedule::detail::ExactPlacementSearch search(
        model, target, trial % 2 ? 0 : kDefaultMaxStoredStages);
    std::optional<cost::Evaluation> result =
        search.cheapestAround(dp.classOfLayer, {{0, n}}, floor);
    ASSERT_EQ(result.has_value(), std::isfinite(cheapest)) << "trial " << trial;
    if (!result)
      continue;
    ++lifted;
    EXPECT_TRUE(result->feasible) << "trial " << trial;
    EXPECT_GT(result->throughput, floor) << "trial " << trial;
    EXPECT_NEAR(result->pricePerHour, cheapest, 1e-9 * cheapest)
        << "trial " << trial;
  }
  EXPECT_GT(lifted, 20u);
}

TEST(Scheduler, PricedSearchMinimisesTheLagrangian) {
  // rl's device trading relaxes the class counts with a shadow price per
  // device. With the whole model freed, cheapestAround's priced mode, and
  // cheapestPriced over every class sequence, must return the placement
  // minimising sum of replicas x (price + shadow price) over those whose
  // stages and boundaries all meet the target (and run faster than a floor
  // when given), counts not enforced: checked against enumeration.
  std::mt19937_64 rng(13);
  unsigned checked = 0, steered = 0;
  for (unsigned trial = 0; trial != 200; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true, 1 + rng() % 2);
    cost::LayerGraph graph = randomGraph(rng, 2 + rng() % 6);
    double target = randomTarget(rng, graph, cluster, 0.1, 1.5);
    cost::CostModel model(graph, cluster);
    unsigned n = graph.size(), numCls = cluster.classes.size();
    std::vector<double> shadow(numCls);
    for (double &price : shadow)
      price = rng() % 2 ? logUniform(rng, 0.01, 10) : 0.0;
    double floor = rng() % 2 ? 0.0 : target * logUniform(rng, 1, 2);
    auto lagrangian = [&](const cost::Evaluation &plan) {
      double total = 0;
      for (const cost::StagePlan &stage : plan.stages)
        total +=
            stage.replicas * (cluster.classes[stage.deviceClass].pricePerHour +
                              shadow[stage.deviceClass]);
      return total;
    };
    auto admissible = [&](const cost::Evaluation &plan) {
      for (const cost::StagePlan &stage : plan.stages)
        if (!stage.meetsTarget || (floor > 0 && !(stage.throughput > floor)))
          return false;
      for (double seconds : plan.boundarySeconds) {
        double throughput = model.batchSize() / seconds;
        if (throughput < target || (floor > 0 && !(throughput > floor)))
          return false;
      }
      return true;
    };
    double cheapest = std::numeric_limits<double>::infinity();
    // The same without any device of class c.
    std::vector<double> cheapestWithout(
        numCls, std::numeric_limits<double>::infinity());
    std::vector<unsigned> placement(n, 0);
    while (true) {
      cost::Evaluation plan = model.evaluate(placement, target);
      if (admissible(plan)) {
        cheapest = std::min(cheapest, lagrangian(plan));
        for (unsigned c = 0; c != numCls; ++c)
          if (std::find(placement.begin(), placement.end(), c) ==
              placement.end())
            cheapestWithout[c] = std::min(cheapestWithout[c], lagrangian(plan));
      }
      unsigned l = 0;
      while (l != n && ++placement[l] == numCls)
        placement[l++] = 0;
      if (l == n)
        break;
    }
    schedule::detail::ExactPlacementSearch search(
        model, target, trial % 2 ? 0 : kDefaultMaxStoredStages);
    std::optional<cost::Evaluation> window = search.cheapestAround(
        std::vector<unsigned>(n, 0), {{0, n}}, floor, shadow);
    std::vector<unsigned> everySequence;
    for (unsigned l = 0; l != n; ++l)
      for (unsigned c = 0; c != numCls; ++c)
        everySequence.push_back(c);
    std::optional<cost::Evaluation> sequence =
        search.cheapestPriced(everySequence, shadow, floor);
    ASSERT_EQ(window.has_value(), std::isfinite(cheapest)) << "trial " << trial;
    ASSERT_EQ(sequence.has_value(), std::isfinite(cheapest))
        << "trial " << trial;
    if (!window)
      continue;
    ++checked;
    EXPECT_TRUE(admissible(*window)) << "trial " << trial;
    EXPECT_TRUE(admissible(*sequence)) << "trial " << trial;
    EXPECT_NEAR(lagrangian(*window), cheapest, 1e-9 * cheapest)
        << "trial " << trial;
    EXPECT_NEAR(lagrangian(*sequence), cheapest, 1e-9 * cheapest)
        << "trial " << trial;
    // A prohibitive shadow price on a class the optimum uses moves its
    // layers to other classes wherever that is possible: the prices steer
    // which classes the search spends devices of.
    unsigned used = window->classOfLayer[0];
    if (!std::isfinite(cheapestWithout[used]))
      continue;
    ++steered;
    double saved = shadow[used];
    shadow[used] += 1e6;
    std::optional<cost::Evaluation> away = search.cheapestAround(
        std::vector<unsigned>(n, 0), {{0, n}}, floor, shadow);
    ASSERT_TRUE(away.has_value()) << "trial " << trial;
    EXPECT_EQ(
        std::count(away->classOfLayer.begin(), away->classOfLayer.end(), used),
        0)
        << "trial " << trial;
    EXPECT_NEAR(lagrangian(*away), cheapestWithout[used],
                1e-9 * cheapestWithout[used])
        << "trial " << trial;
    shadow[used] = saved;
  }
  EXPECT_GT(checked, 40u);
  EXPECT_GT(steered, 10u);
}

TEST(Scheduler, CostBoundIsALowerBound) {
  // No placement with price P costs less per sample than costBound(P).
  std::mt19937_64 rng(17);
  for (unsigned trial = 0; trial != 100; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true, 1 + rng() % 4);
    cost::LayerGraph graph = randomGraph(rng, 2 + rng() % 5);
    cost::CostModel model(graph, cluster);
    schedule::detail::ExactPlacementSearch search(model, 1.0);
    unsigned n = graph.size(), numCls = cluster.classes.size();
    std::vector<unsigned> placement(n, 0);
    while (true) {
      // Any replica counts: the most each stage may have.
      cost::Evaluation plan = model.evaluate(placement, 1e300);
      if (plan.throughput > 0) {
        double cost =
            cost::costPerMillionSamples(plan.pricePerHour, plan.throughput);
        EXPECT_LE(search.costBound(plan.pricePerHour), cost * (1 + 1e-12))
            << "trial " << trial;
      }
      unsigned l = 0;
      while (l != n && ++placement[l] == numCls)
        placement[l++] = 0;
      if (l == n)
        break;
    }
  }
}

TEST(Scheduler, HeuristicsNeverBeatTheOptimum) {
  std::mt19937_64 rng(3);
  for (unsigned trial = 0; trial != 40; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true);
    cost::LayerGraph graph = randomGraph(rng, 5 + rng() % 20);
    double target = randomTarget(rng, graph, cluster, 0.05, 2);
    Plan dp = solveOrDie("dp", graph, cluster, target);
    for (const char *name :
         {"greedy", "cpu-only", "gpu-only", "sparse-on-cpu"}) {
      Plan plan = solveOrDie(name, graph, cluster, target);
      expectConsistent(plan, graph, cluster, target);
      EXPECT_FALSE(isBetter(plan, dp)) << name << ", trial " << trial;
    }
  }
}

/// rl on `graph`: within 1% of dp, never worse than the baselines, never
/// better than the optimum. Returns rl cost / dp cost (0 when infeasible).
double checkReinforcement(const cost::LayerGraph &graph,
                          const cluster::ClusterSpec &cluster, double target,
                          unsigned episodes, unsigned maxPolicySteps = 512) {
  StrategyOptions options;
  options.episodes = episodes;
  options.maxPolicySteps = maxPolicySteps;
  Plan dp = solveOrDie("dp", graph, cluster, target);
  Plan rl = solveOrDie("rl", graph, cluster, target, options);
  expectConsistent(rl, graph, cluster, target);
  EXPECT_EQ(rl.feasible, dp.feasible);
  for (const char *name : {"greedy", "cpu-only", "gpu-only"}) {
    Plan baseline = solveOrDie(name, graph, cluster, target);
    EXPECT_FALSE(isBetter(baseline, rl)) << name;
  }
  if (!dp.feasible)
    return 0;
  EXPECT_GE(rl.costPerMillionSamples, dp.costPerMillionSamples * (1 - 1e-9));
  EXPECT_LE(rl.costPerMillionSamples, dp.costPerMillionSamples * 1.01);
  return rl.costPerMillionSamples / dp.costPerMillionSamples;
}

TEST(Scheduler, ReinforcementWithinOnePercentOfOptimumOnRandomGraphs) {
  std::mt19937_64 rng(11);
  double worst = 1;
  for (unsigned trial = 0; trial != 20; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true);
    cost::LayerGraph graph = randomGraph(rng, 10 + rng() % 51);
    double target = randomTarget(rng, graph, cluster, 0.1, 2);
    SCOPED_TRACE("trial " + std::to_string(trial));
    worst = std::max(worst, checkReinforcement(graph, cluster, target, 256));
  }
  RecordProperty("worst_rl_over_dp", std::to_string(worst));
}

// Deep graphs: the policy decides runs of layers (here 12 runs of 5 to 10
// layers), and local improvement refines single layers.
TEST(Scheduler, ReinforcementOverRunsOfLayersWithinOnePercentOfOptimum) {
  std::mt19937_64 rng(17);
  double worst = 1;
  for (unsigned trial = 0; trial != 10; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true);
    cost::LayerGraph graph = randomGraph(rng, 60 + rng() % 61);
    double target = randomTarget(rng, graph, cluster, 0.1, 2);
    SCOPED_TRACE("trial " + std::to_string(trial));
    worst =
        std::max(worst, checkReinforcement(graph, cluster, target, 128, 12));
  }
  RecordProperty("worst_rl_over_dp", std::to_string(worst));
}

TEST(Scheduler, ReinforcementWithinOnePercentOfOptimumOnCtrModels) {
  std::mt19937_64 rng(5);
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  for (unsigned numLayers : {10u, 40u, 100u, 200u}) {
    cost::LayerGraph graph = ctrGraph(rng, numLayers);
    for (double factor : {0.3, 1.0, 3.0}) {
      double target = randomTarget(rng, graph, *paper, factor, factor);
      SCOPED_TRACE(std::to_string(numLayers) + " layers, target " +
                   std::to_string(target));
      checkReinforcement(graph, *paper, target, numLayers > 100 ? 64 : 256);
    }
  }
}

TEST(Scheduler, ReinforcementWithinOnePercentOfOptimumOnDeepManyStagePlans) {
  // High targets on deep CTR models: the optimum has several stages, past
  // the budget of rl's whole-plan exact neighbourhood at 200 layers, so its
  // windowed exact re-placement has to close the gap (and repair plans that
  // overuse the cluster).
  std::mt19937_64 rng(17);
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  unsigned manyStages = 0;
  double worst = 1;
  for (unsigned numLayers : {120u, 200u}) {
    cost::LayerGraph graph = ctrGraph(rng, numLayers);
    for (double factor : {4.0, 8.0, 16.0}) {
      double target = randomTarget(rng, graph, *paper, factor, factor);
      SCOPED_TRACE(std::to_string(numLayers) + " layers, target " +
                   std::to_string(target));
      Plan dp = solveOrDie("dp", graph, *paper, target);
      manyStages += dp.feasible && dp.stages.size() >= 3;
      worst = std::max(worst, checkReinforcement(graph, *paper, target, 64));
    }
  }
  EXPECT_GE(manyStages, 2u);
  RecordProperty("worst_rl_over_dp", std::to_string(worst));
}

// Repeated branchy blocks (ShuffleNet v2: channel split, a 1x1 - depthwise
// 3x3 - 1x1 branch, concat and channel shuffle) on the paper preset at 0.9 x
// the reachable throughput. Many stages run at about the same throughput and
// dp's plan (13 stages) uses every V100: rl's windows, lifting and priced
// re-cut stopped 0.79% above it; the exact re-cut of the whole plan with the
// counts reaches it.
TEST(Scheduler, ReinforcementReachesOptimumOnRepeatedBranchyBlocks) {
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  cost::LayerGraph graph = shuffleNetGraph(24, {4, 8, 4});
  ASSERT_FALSE(llvm::errorToBool(graph.verify()));
  Plan ceiling = solveOrDie("dp", graph, *paper, 1e15);
  double target = std::round(ceiling.bestReachableThroughput * 0.9 * 10) / 10;
  StrategyOptions options;
  options.episodes = 64;
  Plan dp = solveOrDie("dp", graph, *paper, target);
  Plan rl = solveOrDie("rl", graph, *paper, target, options);
  ASSERT_TRUE(dp.feasible);
  EXPECT_GE(dp.stages.size(), 8u);
  ASSERT_TRUE(rl.feasible);
  expectConsistent(rl, graph, *paper, target);
  EXPECT_LE(rl.costPerMillionSamples, dp.costPerMillionSamples * (1 + 1e-9));
  EXPECT_GE(rl.costPerMillionSamples, dp.costPerMillionSamples * (1 - 1e-9));
}

// Four classes of one to three devices: rl's plan used both P-class GPUs
// (the counts bind), so its whole-plan re-cut kept only the plan's own
// stage classes, and the cheapest plan, on a V-class GPU and one P, was
// out of its reach: 1.54x dp's cost on ShuffleNet v2 (torchvision's
// x0.5, 2026-12-01). The re-cut now offers the other classes too.
TEST(Scheduler, ReinforcementReachesClassesItsPlanDoesNotUse) {
  llvm::Expected<cluster::ClusterSpec> cluster = cluster::parseClusterSpec(
      R"(name: ones4
device_classes:
  - {name: cpu.a, kind: cpu, peak_gflops: 1500, memory_bandwidth_gbps: 40, memory_gib: 8, price_per_hour: 0.6, count: 2}
  - {name: cpu.b, kind: cpu, peak_gflops: 700, memory_bandwidth_gbps: 25, memory_gib: 4, price_per_hour: 0.25, count: 3}
  - {name: gpu.v, kind: gpu, peak_gflops: 15700, memory_bandwidth_gbps: 900, memory_gib: 3, price_per_hour: 3.0, count: 1}
  - {name: gpu.p, kind: gpu, peak_gflops: 11000, memory_bandwidth_gbps: 350, memory_gib: 6, price_per_hour: 2.0, count: 2, per_machine: 2}
network: {bandwidth_gbps: 0.8, latency_us: 100}
parameter_server: {bandwidth_gbps: 2, latency_us: 50}
)",
      "ones4.yaml");
  ASSERT_TRUE(!!cluster) << llvm::toString(cluster.takeError());
  cost::LayerGraph graph = shuffleNetGraph(24, {4, 8, 4});
  Plan ceiling = solveOrDie("dp", graph, *cluster, 1e15);
  double worst = 1;
  for (double fraction : {0.2, 0.35, 0.5}) {
    double target =
        std::round(ceiling.bestReachableThroughput * fraction * 10) / 10;
    SCOPED_TRACE("target " + std::to_string(target));
    worst = std::max(worst, checkReinforcement(graph, *cluster, target, 64));
  }
  RecordProperty("worst_rl_over_dp", std::to_string(worst));
}

TEST(Scheduler, ReinforcementIsDeterministic) {
  std::mt19937_64 rng(9);
  cluster::ClusterSpec cluster = randomCluster(rng, 3, true);
  cost::LayerGraph graph = randomGraph(rng, 30);
  double target = randomTarget(rng, graph, cluster, 0.3, 0.3);
  StrategyOptions options;
  options.episodes = 128;
  options.seed = 1234;
  unsigned calls = 0;
  options.progress = [&](unsigned episode, double) { ++calls; };
  Plan first = solveOrDie("rl", graph, cluster, target, options);
  Plan second = solveOrDie("rl", graph, cluster, target, options);
  EXPECT_EQ(first.classOfLayer, second.classOfLayer);
  EXPECT_EQ(calls, 2u * 128 / options.episodesPerUpdate);
}

// A caller's stop (Ctrl-C in Python) ends the search at the next policy
// update with an error, not a plan.
TEST(Scheduler, ReinforcementStopsWhenAsked) {
  std::mt19937_64 rng(9);
  cluster::ClusterSpec cluster = randomCluster(rng, 3, true);
  cost::LayerGraph graph = randomGraph(rng, 30);
  double target = randomTarget(rng, graph, cluster, 0.3, 0.3);
  StrategyOptions options;
  options.episodes = 1u << 30; // hours, unless stopped
  unsigned updates = 0;
  options.progress = [&](unsigned, double) { ++updates; };
  options.stopRequested = [&] { return updates == 3; };
  llvm::Expected<Plan> plan =
      solve("rl", graph, cluster, Objective{target}, options);
  ASSERT_FALSE(plan);
  EXPECT_EQ(llvm::toString(plan.takeError()), "the search was interrupted");
  EXPECT_EQ(updates, 3u);
  // Asked before any search: no strategy runs at all.
  options.stopRequested = [] { return true; };
  plan = solve("dp", graph, cluster, Objective{target}, options);
  ASSERT_FALSE(plan);
  EXPECT_EQ(llvm::toString(plan.takeError()), "the search was interrupted");
}

TEST(Scheduler, ReinforcementWithOneClassReturnsItsOnlyPlacement) {
  std::mt19937_64 rng(5);
  cluster::ClusterSpec cluster = randomCluster(rng, 1, false);
  ASSERT_EQ(cluster.classes.size(), 1u);
  cost::LayerGraph graph = randomGraph(rng, 40);
  StrategyOptions options;
  unsigned calls = 0;
  options.progress = [&](unsigned, double) { ++calls; };
  for (double target : {randomTarget(rng, graph, cluster, 0.3, 0.3), 1e12}) {
    Plan rl = solveOrDie("rl", graph, cluster, target, options);
    Plan dp = solveOrDie("dp", graph, cluster, target);
    EXPECT_EQ(rl.classOfLayer, std::vector<unsigned>(graph.size(), 0));
    EXPECT_EQ(rl.feasible, dp.feasible);
    EXPECT_DOUBLE_EQ(rl.throughput, dp.throughput);
    EXPECT_DOUBLE_EQ(rl.costPerMillionSamples, dp.costPerMillionSamples);
    expectConsistent(rl, graph, cluster, target);
  }
  // Nothing to learn: no episode ran.
  EXPECT_EQ(calls, 0u);
}

TEST(Scheduler, MissedTargetsGetTheFastestRunnablePlan) {
  // One or two devices per class, targets past what the cluster reaches:
  // every searching strategy answers with a plan the cluster can run, and
  // the best reachable throughput is exact to the bisection's tolerance: dp
  // meets a target just under it and misses one just over it.
  std::mt19937_64 rng(5);
  unsigned shared = 0;
  for (unsigned trial = 0; trial != 60; ++trial) {
    auto [cluster, graph, target] = smallInstance(rng, 20, 100);
    Plan dp = solveOrDie("dp", graph, cluster, target);
    if (dp.feasible)
      continue;
    ASSERT_FALSE(dp.bestReachableIsBound) << "trial " << trial;
    EXPECT_TRUE(dp.runnable) << "trial " << trial;
    EXPECT_DOUBLE_EQ(dp.throughput, dp.bestReachableThroughput)
        << "trial " << trial;
    expectConsistent(dp, graph, cluster, target);
    double reachable = dp.bestReachableThroughput;
    EXPECT_TRUE(
        solveOrDie("dp", graph, cluster, reachable * (1 - 1e-9)).feasible)
        << "trial " << trial;
    EXPECT_FALSE(solveOrDie("dp", graph, cluster,
                            reachable * (1 + 2 * detail::kRunnableTolerance))
                     .feasible)
        << "trial " << trial;
    for (const char *name : {"rl", "greedy", "brute"}) {
      Plan plan = solveOrDie(name, graph, cluster, target);
      EXPECT_TRUE(plan.runnable) << name << ", trial " << trial;
      EXPECT_DOUBLE_EQ(plan.bestReachableThroughput, reachable)
          << name << ", trial " << trial;
    }
    // Where the fastest placement regardless of counts overruns them.
    double bound = 0;
    cost::CostModel model(graph, cluster);
    shared +=
        !model.evaluate(detail::maxThroughputPlacement(model, bound), target)
             .runnable;
  }
  EXPECT_GT(shared, 5u);
}

TEST(Scheduler, MissedTargetsOfLargeGraphsGetARunnablePlan) {
  // Past its work budget (StrategyOptions::runnableSearchBudget, here
  // nearly none) the bisection with the exact search gives up: the plan's
  // own placement is provisioned within the counts instead (before, dp's
  // and rl's plans for a missed target overran them: 25 V100s of a 16-V100
  // cluster for SqueezeNet), and the best reachable throughput is a bound.
  // With the default budget the same graphs get the fastest plan, which no
  // fallback beats.
  std::mt19937_64 rng(7);
  unsigned checked = 0, bounded = 0;
  StrategyOptions starved;
  starved.runnableSearchBudget = 100;
  for (unsigned trial = 0; trial != 8; ++trial) {
    cluster::ClusterSpec cluster = randomCluster(rng, 3, true, 2);
    cost::LayerGraph graph = randomGraph(rng, 60);
    double target = randomTarget(rng, graph, cluster, 20, 100);
    Plan fastest = solveOrDie("dp", graph, cluster, target);
    for (const char *name : {"dp", "rl"}) {
      Plan plan = solveOrDie(name, graph, cluster, target, starved);
      if (plan.feasible)
        continue;
      ++checked;
      bounded += plan.bestReachableIsBound;
      EXPECT_TRUE(plan.runnable) << name << ", trial " << trial;
      EXPECT_LE(plan.throughput, plan.bestReachableThroughput * (1 + 1e-12))
          << name << ", trial " << trial;
      expectConsistent(plan, graph, cluster, target);
      ASSERT_FALSE(fastest.feasible) << "trial " << trial;
      EXPECT_FALSE(fastest.bestReachableIsBound) << "trial " << trial;
      EXPECT_TRUE(fastest.runnable) << "trial " << trial;
      EXPECT_LE(plan.throughput, fastest.throughput * (1 + 1e-12))
          << name << ", trial " << trial;
      EXPECT_GE(plan.bestReachableThroughput,
                fastest.bestReachableThroughput * (1 - 1e-12))
          << name << ", trial " << trial;
    }
  }
  EXPECT_GT(checked, 4u);
  EXPECT_GT(bounded, 2u);
}

TEST(Scheduler, GreedyKeepsTheProvisioningContract) {
  // Greedy's own placement may overrun the class counts where another one
  // meets the target: its answer is then provisioned for the target, as
  // every plan is, not for all it reaches (before, stages got replicas
  // beyond the target, and greedy undercut dp's cost per sample).
  std::mt19937_64 rng(11);
  unsigned overran = 0;
  for (unsigned trial = 0; trial != 150; ++trial) {
    auto [cluster, graph, target] = smallInstance(rng, 0.05, 0.5);
    cost::CostModel model(graph, cluster);
    llvm::Expected<cost::Evaluation> own =
        detail::solveGreedy(model, Objective{target}, StrategyOptions{});
    ASSERT_TRUE(bool(own));
    Plan greedy = solveOrDie("greedy", graph, cluster, target);
    if (!greedy.feasible || own->runnable)
      continue;
    ++overran;
    cost::Evaluation atTarget = model.evaluate(greedy.classOfLayer, target);
    ASSERT_EQ(greedy.stages.size(), atTarget.stages.size());
    for (size_t s = 0; s != atTarget.stages.size(); ++s)
      EXPECT_EQ(greedy.stages[s].replicas, atTarget.stages[s].replicas)
          << "trial " << trial << ", stage " << s;
    Plan dp = solveOrDie("dp", graph, cluster, target);
    EXPECT_LE(dp.costPerMillionSamples,
              greedy.costPerMillionSamples * (1 + 1e-12))
        << "trial " << trial;
  }
  EXPECT_GT(overran, 3u);
}

TEST(Scheduler, InfeasibleTargetReportsBottleneck) {
  std::mt19937_64 rng(1);
  cluster::ClusterSpec cluster = randomCluster(rng, 2, true);
  cost::LayerGraph graph = randomGraph(rng, 8);
  for (cost::Layer &layer : graph.layers) {
    layer.kind = cost::LayerKind::Elementwise;
    layer.embeddingRows = 0;
    layer.lookupsPerSample = 0;
    layer.forwardFlopsPerSample = 1e3;
    layer.memoryBytesPerSample = 1e3;
    layer.parameterBytes = 0;
    layer.outputBytesPerSample = 10;
  }
  // Layer 5 is a thousand times heavier than the rest.
  graph.layers[5].kind = cost::LayerKind::DenseCompute;
  graph.layers[5].forwardFlopsPerSample = 1e9;
  for (const char *name : {"dp", "rl", "greedy", "brute"}) {
    Plan plan = solveOrDie(name, graph, cluster, 1e12);
    EXPECT_FALSE(plan.feasible) << name;
    ASSERT_TRUE(plan.bottleneckLayer.has_value()) << name;
    EXPECT_EQ(*plan.bottleneckLayer, 5u) << name;
    EXPECT_GT(plan.bestReachableThroughput, 0) << name;
    EXPECT_LT(plan.bestReachableThroughput, 1e12) << name;
    EXPECT_NE(plan.infeasibleReason.find("'l5'"), std::string::npos)
        << name << ": " << plan.infeasibleReason;
  }
  // dp and brute return the fastest placement there is.
  Plan dp = solveOrDie("dp", graph, cluster, 1e12);
  Plan brute = solveOrDie("brute", graph, cluster, 1e12);
  EXPECT_DOUBLE_EQ(dp.throughput, brute.throughput);
  EXPECT_DOUBLE_EQ(dp.bestReachableThroughput, dp.throughput);
}

TEST(Scheduler, Errors) {
  std::mt19937_64 rng(2);
  cluster::ClusterSpec cluster = randomCluster(rng, 1, false);
  cluster.classes.resize(1);
  cluster.classes[0].kind = cluster::DeviceKind::CPU;
  cluster.links.clear();
  cost::LayerGraph graph = randomGraph(rng, 20);

  auto errorOf = [&](llvm::StringRef strategy, double target,
                     StrategyOptions options = {}) {
    llvm::Expected<Plan> plan =
        solve(strategy, graph, cluster, Objective{target}, options);
    if (plan)
      return std::string("(no error)");
    return llvm::toString(plan.takeError());
  };
  EXPECT_NE(errorOf("magic", 1).find("unknown scheduling strategy 'magic'"),
            std::string::npos);
  EXPECT_NE(errorOf("gpu-only", 1).find("no gpu device class"),
            std::string::npos);
  EXPECT_NE(errorOf("sparse-on-cpu", 1).find("needs a cpu and a gpu"),
            std::string::npos);
  EXPECT_NE(errorOf("dp", 0).find("must be above 0 and at most 1e15"),
            std::string::npos);
  EXPECT_NE(errorOf("dp", 1e40).find("the throughput target 1e+40 must be"),
            std::string::npos);
  EXPECT_NE(errorOf("brute", 1).find("brute force refuses 20 layers"),
            std::string::npos);
  graph.layers[3].inputs = {7};
  EXPECT_NE(errorOf("dp", 1).find("not earlier in topological order"),
            std::string::npos);
}

TEST(Scheduler, SparseOnCpuKeepsLookupsBesideTheServer) {
  // Lookups and the concat of their rows on the CPU class, every gemm and
  // activation of the tower on the GPU class: two stages.
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  std::mt19937_64 rng(5);
  cost::LayerGraph graph = ctrGraph(rng, 24);
  Plan plan = solveOrDie("sparse-on-cpu", graph, *paper, 1000);
  expectConsistent(plan, graph, *paper, 1000);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(paper->classes[plan.stages[0].deviceClass].kind,
            cluster::DeviceKind::CPU);
  EXPECT_EQ(paper->classes[plan.stages[1].deviceClass].kind,
            cluster::DeviceKind::GPU);
  EXPECT_EQ(graph.layers[plan.stages[1].begin].kind,
            cost::LayerKind::DenseCompute);
  EXPECT_EQ(graph.layers[plan.stages[0].end - 1].name, "concat");
}

// A training plan says how many micro-batches a step takes for its stages
// to reach the target; a count the user fixes is priced as given.
TEST(Scheduler, TrainingPlansChooseTheirMicroBatchesPerStep) {
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  std::mt19937_64 rng(5);
  cost::LayerGraph graph = ctrGraph(rng, 24);
  ASSERT_TRUE(graph.training());
  // Near what the pipeline reaches, so that a step of one micro-batch
  // does not.
  const double target =
      0.95 * solveOrDie("sparse-on-cpu", graph, *paper, 1000).throughput;
  Plan plan = solveOrDie("sparse-on-cpu", graph, *paper, target);
  ASSERT_TRUE(plan.feasible) << plan.infeasibleReason;
  ASSERT_EQ(plan.stages.size(), 2u);
  cost::CostModel model(graph, *paper);
  auto stepThroughput = [&](unsigned count) {
    return count * model.batchSize() / model.stepSeconds(plan, count);
  };
  // The target where some step count allowed reaches it, else most of the
  // pipeline.
  const double goal = stepThroughput(32) >= target
                          ? target
                          : std::min(target, 0.9 * plan.throughput);
  ASSERT_GT(plan.microBatches, 1u);
  EXPECT_DOUBLE_EQ(plan.stepThroughput, stepThroughput(plan.microBatches));
  EXPECT_GE(plan.stepThroughput, goal);
  EXPECT_LT(stepThroughput(plan.microBatches - 1), goal);
  EXPECT_LE(plan.stepThroughput, plan.throughput);

  StrategyOptions one;
  one.microBatches = 1;
  Plan single = solveOrDie("sparse-on-cpu", graph, *paper, target, one);
  EXPECT_EQ(single.microBatches, 1u);
  EXPECT_DOUBLE_EQ(single.stepThroughput, stepThroughput(1));
  EXPECT_LT(single.stepThroughput, plan.stepThroughput);
  std::string text;
  llvm::raw_string_ostream os(text);
  printPlan(single, graph, *paper, os);
  EXPECT_NE(text.find("steps of 1 micro-batch: "), std::string::npos) << text;

  graph.mode = cost::Mode::Inference;
  EXPECT_EQ(solveOrDie("sparse-on-cpu", graph, *paper, target).microBatches,
            0u);
}

TEST(Scheduler, SearchesAgainUntilTrainingStepsMeetTheTarget) {
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  std::mt19937_64 rng(5);
  cost::LayerGraph graph = ctrGraph(rng, 24);
  cost::CostModel model(graph, *paper);
  auto stepThroughput = [&](const Plan &plan, unsigned count) {
    return count * model.batchSize() / model.stepSeconds(plan, count);
  };
  StrategyOptions pipelineOnly;
  pipelineOnly.maxStepSearches = 0;
  // Targets that the cheapest plan's full pipeline meets and its steps
  // (which fill and drain the pipeline) do not: searched again against
  // raised targets, the plan's steps meet them where the raised searches
  // find such a plan, else the last plan found stands.
  unsigned raised = 0;
  double target = 0;
  for (double asked = 1e5; asked < 1e8; asked *= 1.1) {
    Plan first = solveOrDie("dp", graph, *paper, asked, pipelineOnly);
    if (!first.feasible || stepThroughput(first, 32) >= asked)
      continue;
    SCOPED_TRACE(asked);
    EXPECT_LT(first.stepThroughput, asked);
    Plan plan = solveOrDie("dp", graph, *paper, asked);
    ASSERT_TRUE(plan.feasible) << plan.infeasibleReason;
    EXPECT_EQ(first.stepSearches, 0u);
    // Never a slower pipeline than the first plan's, which it remembers.
    EXPECT_GE(plan.throughput, first.throughput);
    if (plan.stepSearches > 0) {
      EXPECT_DOUBLE_EQ(plan.firstPlanStepThroughput, stepThroughput(first, 32));
      EXPECT_DOUBLE_EQ(plan.firstPlanCostPerMillionSamples,
                       first.costPerMillionSamples);
    }
    if (plan.stepThroughput >= asked) {
      ++raised;
      EXPECT_GT(plan.stepSearches, 0u);
      target = asked;
      EXPECT_GT(plan.throughput, first.throughput);
      EXPECT_LT(stepThroughput(plan, plan.microBatches - 1), asked);
    }
  }
  EXPECT_GT(raised, 0u);
  ASSERT_GT(target, 0);
  // Presets keep their placement.
  Plan preset = solveOrDie("sparse-on-cpu", graph, *paper, target);
  Plan presetFirst =
      solveOrDie("sparse-on-cpu", graph, *paper, target, pipelineOnly);
  EXPECT_DOUBLE_EQ(preset.throughput, presetFirst.throughput);
  // Inference has no steps.
  graph.mode = cost::Mode::Inference;
  EXPECT_DOUBLE_EQ(
      solveOrDie("dp", graph, *paper, target).throughput,
      solveOrDie("dp", graph, *paper, target, pipelineOnly).throughput);
}

TEST(Scheduler, StepShapesWinWhereTheyPriceBetter) {
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  std::mt19937_64 rng(21);
  cost::LayerGraph graph = ctrGraph(rng, 24);
  StrategyOptions shapes;
  shapes.passSteps = 32;
  shapes.maxSparseStaleness = 1;
  shapes.costOptions.passDistinctFraction = 0.05;
  // Answers a missed target with the fastest plan: throughput decides.
  const double target = 1e12;
  auto priced = [&](llvm::StringRef strategy, cost::StepShape shape) {
    StrategyOptions options;
    options.costOptions.passDistinctFraction = 0.05;
    options.costOptions.step = shape;
    return solveOrDie(strategy, graph, *paper, target, options);
  };

  // Lookups on GPUs: passes keep rows in HBM and win, exact: a stale push
  // on top gains less than minimumStaleGain.
  Plan gpu = solveOrDie("gpu-only", graph, *paper, target, shapes);
  EXPECT_EQ(gpu.step, (cost::StepShape{32, 0}));
  EXPECT_TRUE(gpu.passCacheOnGpu);
  Plan gpuDirect = priced("gpu-only", {});
  EXPECT_EQ(gpuDirect.step, cost::StepShape{});
  EXPECT_GT(gpu.throughput, gpuDirect.throughput);
  EXPECT_GT(gpu.throughput, priced("gpu-only", {0, 1}).throughput);
  const double stalePasses = priced("gpu-only", {32, 1}).throughput;
  EXPECT_GE(stalePasses, gpu.throughput);
  EXPECT_LT(stalePasses, gpu.throughput * (1 + shapes.minimumStaleGain));
  EXPECT_DOUBLE_EQ(gpu.throughput, priced("gpu-only", gpu.step).throughput);
  // The plan keeps every shape's price, in the order solved.
  ASSERT_EQ(gpu.pricedShapes.size(), 4u);
  EXPECT_EQ(gpu.pricedShapes[0].step, cost::StepShape{});
  EXPECT_DOUBLE_EQ(gpu.pricedShapes[0].throughput, gpuDirect.throughput);
  EXPECT_EQ(gpu.pricedShapes[3].step, (cost::StepShape{32, 1}));

  // Lookups on CPUs: passes through host memory cost more than they save,
  // and a stale push shares the cores: the exact direct step.
  Plan cpu = solveOrDie("cpu-only", graph, *paper, target, shapes);
  EXPECT_EQ(cpu.step, cost::StepShape{});
  EXPECT_FALSE(cpu.passCacheOnGpu);
  EXPECT_DOUBLE_EQ(cpu.throughput, priced("cpu-only", {}).throughput);

  // Without passes on offer, a stale push helps the GPU step.
  StrategyOptions staleOnly;
  staleOnly.maxSparseStaleness = 1;
  Plan stale = solveOrDie("gpu-only", graph, *paper, target, staleOnly);
  EXPECT_EQ(stale.step, (cost::StepShape{0, 1}));
  EXPECT_GT(stale.throughput,
            gpuDirect.throughput * (1 + staleOnly.minimumStaleGain));
  // A margin no stale plan reaches keeps the exact step.
  StrategyOptions demanding = staleOnly;
  demanding.minimumStaleGain = 100;
  EXPECT_EQ(solveOrDie("gpu-only", graph, *paper, target, demanding).step,
            cost::StepShape{});
  EXPECT_EQ(stale.pricedShapes.size(), 2u);
  EXPECT_TRUE(
      solveOrDie("gpu-only", graph, *paper, target).pricedShapes.empty());

  // Inference has one step shape.
  graph.mode = cost::Mode::Inference;
  EXPECT_EQ(solveOrDie("gpu-only", graph, *paper, target, shapes).step,
            cost::StepShape{});

  StrategyOptions bad = shapes;
  bad.maxSparseStaleness = 2;
  EXPECT_FALSE(!!solve("dp", graph, *paper, Objective{1000}, bad));
  bad = shapes;
  bad.costOptions.passDistinctFraction = 0;
  llvm::Expected<Plan> refused =
      solve("dp", graph, *paper, Objective{1000}, bad);
  ASSERT_FALSE(!!refused);
  EXPECT_NE(llvm::toString(refused.takeError()).find("distinct share"),
            std::string::npos);
}

TEST(Scheduler, PaperPresetSplitsCtrModel) {
  // A CTR model on the paper's cluster at a high target: embeddings stay on
  // the CPU servers next to the parameter server, the dense tower goes to a
  // GPU, and the plan is cheaper than either single-kind plan.
  llvm::Expected<cluster::ClusterSpec> paper = cluster::loadClusterSpec(
      std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper) << llvm::toString(paper.takeError());
  std::mt19937_64 rng(21);
  cost::LayerGraph graph = ctrGraph(rng, 60);
  double target = randomTarget(rng, graph, *paper, 1, 1);
  Plan dp = solveOrDie("dp", graph, *paper, target);
  ASSERT_TRUE(dp.feasible) << dp.infeasibleReason;
  Plan cpu = solveOrDie("cpu-only", graph, *paper, target);
  Plan gpu = solveOrDie("gpu-only", graph, *paper, target);
  EXPECT_FALSE(isBetter(cpu, dp));
  EXPECT_FALSE(isBetter(gpu, dp));
  std::string text;
  llvm::raw_string_ostream os(text);
  printPlan(dp, graph, *paper, os);
  EXPECT_NE(text.find("strategy dp: feasible"), std::string::npos) << text;
}

} // namespace
