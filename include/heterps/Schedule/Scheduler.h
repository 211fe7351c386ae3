//===- Scheduler.h - Choose a device class per layer ------------*- C++ -*-===//
//
// Every strategy answers the same question: which device class runs each
// layer (stages are maximal runs of one class in topological order) and how
// many replicas each stage gets, so that the pipeline reaches the target
// throughput at the lowest cost per million samples.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_SCHEDULE_SCHEDULER_H
#define HETERPS_SCHEDULE_SCHEDULER_H

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cost/CostModel.h"
#include "heterps/Cost/LayerGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <string>

namespace heterps {
namespace schedule {

/// Minimise cost per million samples subject to throughput >= target.
/// The largest target solve takes: past it no cluster reaches, and plans'
/// arithmetic and messages lose their digits.
constexpr double kMostTargetThroughput = 1e15;

struct Objective {
  /// Samples per second, above 0 and at most kMostTargetThroughput.
  double targetThroughput = 0;
};

/// StrategyOptions::maxStoredStages by default: 384 MiB of stage table.
constexpr size_t kDefaultMaxStoredStages = size_t(1) << 24;

struct StrategyOptions {
  /// Prices placements; its `step` is the step shape every plan starts
  /// from (the direct, exact step by default).
  cost::CostOptions costOptions;
  const cost::ProfileDatabase *profiles = nullptr;

  // Step shapes a training plan may take besides costOptions.step: each is
  // solved, and the best plan wins; on a tie the earlier shape (direct
  // before passes), and an exact one unless a stale one is clearly better
  // (minimumStaleGain).
  /// Passes of this many steps (0: none).
  unsigned passSteps = 0;
  /// Sparse pushes lagging at most this many steps (0 or 1).
  unsigned maxSparseStaleness = 0;
  /// A plan with stale pushes (whose losses differ from the exact step's)
  /// wins only when it is this much better than the best exact one: this
  /// fraction cheaper, or faster where no plan meets the target.
  double minimumStaleGain = 0.05;

  /// Training: micro-batches per step. 0: the fewest, at most
  /// maxMicroBatches, whose step reaches the target, or stepShareOfPipeline
  /// of the plan's throughput where no step count allowed reaches it (the
  /// search prices the pipeline full; a step of a few micro-batches fills
  /// and drains it).
  unsigned microBatches = 0;
  unsigned maxMicroBatches = 32;
  double stepShareOfPipeline = 0.9;
  /// The most micro-batches a step may take: the fixed count, or the most.
  unsigned mostMicroBatches() const {
    return microBatches ? microBatches : maxMicroBatches;
  }
  /// Training, searching strategies: how many times a plan whose pipeline
  /// meets the target but whose steps (of microBatches, else
  /// maxMicroBatches) do not is searched again against a target raised by
  /// the shortfall; a plan so found replaces it only where its steps reach
  /// the target. 0: the pipeline's plan stands.
  unsigned maxStepSearches = 3;

  // rl: the HeterPS LSTM policy trained with REINFORCE.
  uint64_t seed = 1;
  unsigned episodes = 1024;
  unsigned episodesPerUpdate = 8;
  unsigned hiddenSize = 32;
  /// The policy decides for at most this many runs of consecutive layers
  /// (deeper graphs: equal runs, one decision each; local improvement then
  /// works on single layers), so that an episode's cost is bounded.
  unsigned maxPolicySteps = 512;
  double learningRate = 0.05;
  double entropyWeight = 0.01;
  /// Reward penalty per unit of relative throughput shortfall.
  double infeasiblePenalty = 2.0;
  /// Finish with a local-improvement pass over the best plan seen.
  bool localSearch = true;

  // dp, and rl's exact windows: the provisioned stage of every class and
  // layer range is kept in a table (classes x layers^2 / 2 entries of 24
  // bytes) up to this many entries, and computed when asked beyond it, so
  // that deep graphs are planned in bounded memory.
  size_t maxStoredStages = kDefaultMaxStoredStages;
  /// A missed target: the work (exact-search steps, about 2e8 a second on
  /// the 2-core build machine) the search for the fastest runnable plan may
  /// take before the plan falls back to a bound (bestReachableIsBound).
  /// densenet121 on the paper preset took 1.45e9 in 7.7 s.
  double runnableSearchBudget = 2e9;
  /// Called after every policy update with (episodes so far, best cost per
  /// million samples so far, infinity while nothing feasible was seen).
  std::function<void(unsigned, double)> progress;
  /// Asked between policy updates and between searches: true stops the
  /// search with an error (a Ctrl-C in a caller that cannot take signals
  /// itself, as Python's).
  std::function<bool()> stopRequested;

  // brute: refuse graphs with more layers, or more than this many placements.
  unsigned bruteForceMaxLayers = 16;
  uint64_t bruteForceMaxPlacements = 50'000'000;
};

/// The answer of every strategy.
struct Plan : cost::Evaluation {
  std::string strategy;
  /// When infeasible: the highest throughput of any runnable placement
  /// (within memory and the class counts); when feasible, equal to
  /// `throughput`. On graphs too large to search for it exactly, or when no
  /// placement is runnable, an upper bound instead (bestReachableIsBound):
  /// the max-min placement with every stage on at most its class's count,
  /// counts shared between stages not enforced.
  double bestReachableThroughput = 0;
  bool bestReachableIsBound = false;
  double solveSeconds = 0;
  /// What a pass cache may hold (CostModel::passCacheMemoryBytes).
  std::optional<double> passCacheMemoryBytes;
  /// The step shape the plan was priced with.
  cost::StepShape step;
  /// Its pass cache belongs in GPU memory (CostModel::passCacheOnGpu).
  bool passCacheOnGpu = false;
  /// Training: micro-batches per step that the run takes
  /// (StrategyOptions::microBatches), and the throughput of such steps
  /// (CostModel::stepSeconds); 0 for inference.
  unsigned microBatches = 0;
  double stepThroughput = 0;
  /// Training, searching strategies: how many searches against a raised
  /// target (StrategyOptions::maxStepSearches) made this plan, and the
  /// first plan's steps of the most micro-batches allowed and cost per
  /// million samples, which made them necessary; 0 when none was.
  unsigned stepSearches = 0;
  double firstPlanStepThroughput = 0;
  double firstPlanCostPerMillionSamples = 0;
  /// Where several step shapes were priced: each one's best plan, in the
  /// order solved (the chosen one among them), to show why it won.
  struct PricedShape {
    cost::StepShape step;
    bool feasible = false;
    double throughput = 0;
    double costPerMillionSamples = 0;
  };
  std::vector<PricedShape> pricedShapes;
};

/// The strategy names `solve` accepts: rl, dp, brute, greedy, cpu-only,
/// gpu-only, sparse-on-cpu.
llvm::ArrayRef<llvm::StringRef> strategyNames();

/// The best plan of `strategy` over the step shapes `options` allows.
llvm::Expected<Plan> solve(llvm::StringRef strategy,
                           const cost::LayerGraph &graph,
                           const cluster::ClusterSpec &cluster,
                           const Objective &objective,
                           const StrategyOptions &options = {});

/// Orders placements: feasible before infeasible; feasible by lower cost per
/// million samples; infeasible ones runnable first (Evaluation::runnable),
/// then by higher throughput.
bool isBetter(const cost::Evaluation &candidate,
              const cost::Evaluation &incumbent);

/// A human-readable table of the plan's stages.
void printPlan(const Plan &plan, const cost::LayerGraph &graph,
               const cluster::ClusterSpec &cluster, llvm::raw_ostream &os);

} // namespace schedule
} // namespace heterps

#endif // HETERPS_SCHEDULE_SCHEDULER_H
