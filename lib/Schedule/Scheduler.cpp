//===- Scheduler.cpp - Strategy dispatch and plan helpers -----------------===//

#include "heterps/Schedule/Scheduler.h"
#include "Strategies.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

using namespace llvm;
using namespace heterps;
using namespace heterps::schedule;

ArrayRef<StringRef> schedule::strategyNames() {
  static const StringRef names[] = {
      "rl", "dp", "brute", "greedy", "cpu-only", "gpu-only", "sparse-on-cpu"};
  return names;
}

/// Strategies that search placements, rather than apply a preset.
static bool isSearching(StringRef strategy) {
  return strategy == "rl" || strategy == "dp" || strategy == "brute" ||
         strategy == "greedy";
}

bool schedule::isBetter(const cost::Evaluation &candidate,
                        const cost::Evaluation &incumbent) {
  if (candidate.feasible != incumbent.feasible)
    return candidate.feasible;
  if (candidate.feasible)
    return candidate.costPerMillionSamples < incumbent.costPerMillionSamples;
  // A plan the cluster can run beats a faster one it cannot.
  if (candidate.runnable != incumbent.runnable)
    return candidate.runnable;
  return candidate.throughput > incumbent.throughput;
}

/// isBetter, and by at least `gain` (a fraction) in the measure that
/// decides between the two: cost when both are feasible, else throughput.
static bool isClearlyBetter(const cost::Evaluation &candidate,
                            const cost::Evaluation &incumbent, double gain) {
  if (!isBetter(candidate, incumbent))
    return false;
  if (candidate.feasible && incumbent.feasible)
    return candidate.costPerMillionSamples <=
           incumbent.costPerMillionSamples * (1 - gain);
  if (candidate.feasible != incumbent.feasible ||
      candidate.runnable != incumbent.runnable)
    return true;
  return candidate.throughput >= incumbent.throughput * (1 + gain);
}

/// `strategy`'s placement against `objective`, priced by `model`.
static Expected<cost::Evaluation> runStrategy(StringRef strategy,
                                              const cost::CostModel &model,
                                              const Objective &objective,
                                              const StrategyOptions &options) {
  if (strategy == "rl")
    return schedule::detail::solveReinforcement(model, objective, options);
  if (strategy == "dp")
    return schedule::detail::solveDynamicProgramming(model, objective, options);
  if (strategy == "brute")
    return schedule::detail::solveBruteForce(model, objective, options);
  if (strategy == "greedy")
    return schedule::detail::solveGreedy(model, objective, options);
  if (strategy == "cpu-only")
    return schedule::detail::solveSingleKind(cluster::DeviceKind::CPU, model,
                                             objective);
  if (strategy == "gpu-only")
    return schedule::detail::solveSingleKind(cluster::DeviceKind::GPU, model,
                                             objective);
  return schedule::detail::solveSparseOnCpu(model, objective);
}

/// Samples per second of training steps of `microBatches` through `plan`.
static double stepThroughputOf(const cost::CostModel &model,
                               const cost::Evaluation &plan,
                               unsigned microBatches) {
  return microBatches * model.batchSize() /
         model.stepSeconds(plan, microBatches);
}

Error schedule::detail::stoppedError() {
  return createStringError(inconvertibleErrorCode(),
                           "the search was interrupted");
}

/// `strategy`'s plan for the step shape of options.costOptions.
static Expected<Plan> solveShape(StringRef strategy,
                                 const cost::LayerGraph &graph,
                                 const cluster::ClusterSpec &cluster,
                                 const Objective &objective,
                                 const StrategyOptions &options) {
  if (schedule::detail::stopRequested(options))
    return schedule::detail::stoppedError();
  auto start = std::chrono::steady_clock::now();
  cost::CostModel model(graph, cluster, options.costOptions, options.profiles);
  Expected<cost::Evaluation> result =
      runStrategy(strategy, model, objective, options);
  if (!result)
    return result.takeError();
  // Training runs steps, not the pipeline full: a plan whose pipeline meets
  // the target but whose steps of the most micro-batches allowed do not is
  // searched again against a target raised by the shortfall, a few times.
  // The strategies price the pipeline (the max-min dynamic program cannot
  // carry the sum of stage latencies that fills a step), so this prices
  // the step around them. A plan found so replaces the first only where
  // its steps reach the target: a raised target can give a dearer plan
  // whose steps are no faster (fewer, longer stages fill worse), which the
  // search kept before 2026-12-01 (44% more per sample for 2% slower
  // steps), and the exact strategies then differed by how they break ties.
  const unsigned mostMicroBatches = options.mostMicroBatches();
  unsigned stepSearches = 0;
  double firstStepThroughput = 0, firstCost = 0;
  if (graph.training() && isSearching(strategy) && result->feasible) {
    double reached = stepThroughputOf(model, *result, mostMicroBatches);
    firstStepThroughput = reached;
    firstCost = result->costPerMillionSamples;
    Objective raised = objective;
    for (unsigned round = 0; round < options.maxStepSearches &&
                             reached < objective.targetThroughput;
         ++round) {
      raised.targetThroughput *= objective.targetThroughput / reached;
      if (schedule::detail::stopRequested(options))
        return schedule::detail::stoppedError();
      Expected<cost::Evaluation> again =
          runStrategy(strategy, model, raised, options);
      if (!again)
        return again.takeError();
      if (!again->feasible)
        break;
      reached = stepThroughputOf(model, *again, mostMicroBatches);
      if (reached >= objective.targetThroughput) {
        result = std::move(again);
        stepSearches = round + 1;
      }
    }
  }

  Plan plan;
  static_cast<cost::Evaluation &>(plan) = std::move(*result);
  plan.strategy = strategy.str();
  double bound = 0;
  if (plan.feasible) {
    plan.bestReachableThroughput = plan.throughput;
  } else if (std::optional<cost::Evaluation> fastest =
                 schedule::detail::fastestRunnablePlacement(
                     model, objective.targetThroughput, options.maxStoredStages,
                     options.runnableSearchBudget, bound)) {
    plan.bestReachableThroughput =
        std::max(fastest->throughput, plan.runnable ? plan.throughput : 0.0);
    // A target the cluster reaches (greedy's placement missed it by
    // overrunning the counts): that placement provisioned for the target,
    // the contract, not for all it reaches (greedy added replicas dp never
    // would).
    if (fastest->throughput >= objective.targetThroughput) {
      cost::Evaluation atTarget =
          model.evaluate(fastest->classOfLayer, objective.targetThroughput);
      if (atTarget.feasible)
        fastest = std::move(atTarget);
    }
    // The searching strategies answer a missed target with the fastest plan
    // the cluster can run; the presets keep their fixed placement.
    if (isSearching(strategy) && isBetter(*fastest, plan))
      static_cast<cost::Evaluation &>(plan) = std::move(*fastest);
  } else {
    plan.bestReachableThroughput =
        std::max(bound, plan.runnable ? plan.throughput : 0.0);
    plan.bestReachableIsBound = true;
    // Too large to search for the fastest runnable plan: the strategy's
    // own placement, provisioned down until the cluster can run it (as
    // provisioned for the missed target, stages sharing a class overran
    // its count).
    // Where its stages outnumber a class's devices, the fastest
    // single-class placement (one stage) so provisioned.
    // Where nothing fits in memory, the counts still hold: the plan's
    // numbers are of devices the cluster has (greedy's overran them).
    auto fastestProvisioned = [&](bool memoryAside) {
      std::optional<cost::Evaluation> best =
          schedule::detail::provisionedWithinCounts(model, plan.classOfLayer,
                                                    objective.targetThroughput,
                                                    memoryAside);
      for (unsigned c = 0; c != model.numClasses(); ++c) {
        std::vector<unsigned> single(model.numLayers(), c);
        std::optional<cost::Evaluation> candidate =
            schedule::detail::provisionedWithinCounts(
                model, single, objective.targetThroughput, memoryAside);
        if (candidate && (!best || candidate->throughput > best->throughput))
          best = std::move(candidate);
      }
      return best;
    };
    if (isSearching(strategy) && !plan.runnable) {
      std::optional<cost::Evaluation> best = fastestProvisioned(false);
      if (!best && !plan.withinCounts)
        best = fastestProvisioned(true);
      if (best)
        static_cast<cost::Evaluation &>(plan) = std::move(*best);
    }
  }
  plan.passCacheMemoryBytes = model.passCacheMemoryBytes(plan);
  plan.step = options.costOptions.step;
  plan.passCacheOnGpu = model.passCacheOnGpu(plan);
  if (graph.training()) {
    // Steps that reach the target where some number of micro-batches
    // allowed does; else most of what the full pipeline gives.
    const double goal =
        stepThroughputOf(model, plan, mostMicroBatches) >=
                objective.targetThroughput
            ? objective.targetThroughput
            : std::min(objective.targetThroughput,
                       options.stepShareOfPipeline * plan.throughput);
    plan.microBatches = options.microBatches
                            ? options.microBatches
                            : model.fewestMicroBatchesReaching(
                                  plan, goal, options.maxMicroBatches);
    plan.stepThroughput = stepThroughputOf(model, plan, plan.microBatches);
    if (stepSearches > 0) {
      plan.stepSearches = stepSearches;
      plan.firstPlanStepThroughput = firstStepThroughput;
      plan.firstPlanCostPerMillionSamples = firstCost;
    }
  }
  plan.solveSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return plan;
}

Expected<Plan> schedule::solve(StringRef strategy,
                               const cost::LayerGraph &graph,
                               const cluster::ClusterSpec &cluster,
                               const Objective &objective,
                               const StrategyOptions &options) {
  if (!is_contained(strategyNames(), strategy)) {
    std::string known;
    for (StringRef name : strategyNames())
      known += (known.empty() ? "" : ", ") + name.str();
    return createStringError(inconvertibleErrorCode(),
                             "unknown scheduling strategy '" + strategy +
                                 "' (expected one of: " + known + ")");
  }
  if (Error error = graph.verify())
    return std::move(error);
  if (cluster.classes.empty())
    return createStringError(inconvertibleErrorCode(),
                             "the cluster has no device classes");
  // A target of 1e40 printed as about 1e30.
  if (!(objective.targetThroughput > 0) ||
      !(objective.targetThroughput <= kMostTargetThroughput))
    return createStringError(
        inconvertibleErrorCode(),
        "the throughput target %g must be above 0 and at most 1e15 samples/s",
        objective.targetThroughput);
  if (!(options.costOptions.batchSize >= 1))
    return createStringError(inconvertibleErrorCode(),
                             "the batch size must be at least 1");
  const cost::CostOptions &base = options.costOptions;
  if (!(base.passDistinctFraction > 0 && base.passDistinctFraction <= 1))
    return createStringError(inconvertibleErrorCode(),
                             "the distinct share of a pass's keys must be in "
                             "(0, 1]");
  if (base.step.sparseStaleness > 1 || options.maxSparseStaleness > 1)
    return createStringError(inconvertibleErrorCode(),
                             "sparse staleness must be 0 or 1");

  // Inference has one step; training, each offered pass length (the
  // base's first) with each staleness up to the most allowed.
  std::vector<cost::StepShape> shapes;
  std::vector<unsigned> passChoices = {base.step.passSteps};
  if (graph.training() && options.passSteps > 0 &&
      options.passSteps != base.step.passSteps)
    passChoices.push_back(options.passSteps);
  const unsigned mostStale =
      graph.training()
          ? std::max(base.step.sparseStaleness, options.maxSparseStaleness)
          : base.step.sparseStaleness;
  for (unsigned passSteps : passChoices)
    for (unsigned stale = base.step.sparseStaleness; stale <= mostStale;
         ++stale)
      shapes.push_back({passSteps, stale});
  // The best exact plan and the best with stale pushes, kept apart: stale
  // pushes change the training's numbers, so they must win by a margin.
  std::optional<Plan> exact, stale;
  std::vector<Plan::PricedShape> priced;
  double seconds = 0;
  for (const cost::StepShape &shape : shapes) {
    StrategyOptions shaped = options;
    shaped.costOptions.step = shape;
    Expected<Plan> plan =
        solveShape(strategy, graph, cluster, objective, shaped);
    if (!plan)
      return plan.takeError();
    seconds += plan->solveSeconds;
    priced.push_back(
        {shape, plan->feasible, plan->throughput, plan->costPerMillionSamples});
    std::optional<Plan> &best = shape.sparseStaleness > 0 ? stale : exact;
    if (!best || isBetter(*plan, *best))
      best = std::move(*plan);
  }
  std::optional<Plan> &best =
      !exact || (stale &&
                 isClearlyBetter(*stale, *exact, options.minimumStaleGain))
          ? stale
          : exact;
  best->solveSeconds = seconds;
  if (priced.size() > 1)
    best->pricedShapes = std::move(priced);
  return std::move(*best);
}

void schedule::printPlan(const Plan &plan, const cost::LayerGraph &graph,
                         const cluster::ClusterSpec &cluster, raw_ostream &os) {
  os << "strategy " << plan.strategy << ": "
     << (plan.feasible ? "feasible" : "INFEASIBLE") << ", "
     << format("%.1f", plan.throughput) << " samples/s, $"
     << format("%.2f", plan.pricePerHour) << "/h, $"
     << format("%.4f", plan.costPerMillionSamples)
     << " per million samples, solved in " << format("%.3f", plan.solveSeconds)
     << " s\n";
  for (unsigned s = 0, e = plan.stages.size(); s != e; ++s) {
    const cost::StagePlan &stage = plan.stages[s];
    os << "  stage " << s << ": " << stage.replicas << " x "
       << cluster.classes[stage.deviceClass].name << ", layers " << stage.begin
       << ".." << stage.end - 1 << " ('" << graph.layers[stage.begin].name
       << "'..'" << graph.layers[stage.end - 1].name << "'), "
       << format("%.6f", stage.seconds) << " s/batch, "
       << format("%.1f", stage.throughput) << " samples/s\n";
  }
  if (plan.step.passSteps > 0 || plan.step.sparseStaleness > 0)
    os << "  step: "
       << (plan.step.passSteps > 0
               ? "passes of " + std::to_string(plan.step.passSteps) + " steps"
               : std::string("direct"))
       << ", sparse staleness " << plan.step.sparseStaleness << "\n";
  if (plan.microBatches > 0)
    os << "  steps of " << plan.microBatches
       << (plan.microBatches == 1 ? " micro-batch: " : " micro-batches: ")
       << format("%.1f", plan.stepThroughput) << " samples/s\n";
  if (!plan.feasible) {
    os << "  reason: " << plan.infeasibleReason << "\n";
    os << "  best reachable throughput: "
       << format("%.1f", plan.bestReachableThroughput) << " samples/s\n";
  }
  if (plan.bottleneckLayer)
    os << "  bottleneck layer: " << *plan.bottleneckLayer << " ('"
       << graph.layers[*plan.bottleneckLayer].name << "')\n";
}
