//===- Strategies.h - Strategy entry points (internal) ----------*- C++ -*-===//

#ifndef HETERPS_LIB_SCHEDULE_STRATEGIES_H
#define HETERPS_LIB_SCHEDULE_STRATEGIES_H

#include "heterps/Schedule/Scheduler.h"

#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace heterps {
namespace schedule {
namespace detail {

using cost::CostModel;
using cost::Evaluation;

/// The error of a search stopped by options.stopRequested.
llvm::Error stoppedError();

/// True when the caller asked the search to stop.
inline bool stopRequested(const StrategyOptions &options) {
  return options.stopRequested && options.stopRequested();
}

// Each strategy returns its chosen placement evaluated against the target.
llvm::Expected<Evaluation> solveReinforcement(const CostModel &model,
                                              const Objective &objective,
                                              const StrategyOptions &options);
llvm::Expected<Evaluation> solveDynamicProgramming(const CostModel &model,
                                                   const Objective &objective,
                                                   const StrategyOptions &);
llvm::Expected<Evaluation> solveBruteForce(const CostModel &model,
                                           const Objective &objective,
                                           const StrategyOptions &options);
llvm::Expected<Evaluation> solveGreedy(const CostModel &model,
                                       const Objective &objective,
                                       const StrategyOptions &);
llvm::Expected<Evaluation> solveSingleKind(cluster::DeviceKind kind,
                                           const CostModel &model,
                                           const Objective &objective);
llvm::Expected<Evaluation> solveSparseOnCpu(const CostModel &model,
                                            const Objective &objective);

/// Exact cheapest-placement search (docs/Planning.md): over all placements,
/// or over those whose sequence of stage classes is a subsequence of a given
/// one. Builds the per-(class, layer range) stage table once.
class ExactPlacementSearch {
public:
  /// maxStoredStages: see StrategyOptions.
  ExactPlacementSearch(const CostModel &model, double targetThroughput,
                       size_t maxStoredStages = kDefaultMaxStoredStages);
  ~ExactPlacementSearch();

  /// The feasible placement with the lowest cost per million samples whose
  /// stages are on `slotClasses`: any sequence of them (consecutive stages on
  /// different classes) when `ordered` is false; a subsequence of them, in
  /// order, when true. None when no such placement is feasible.
  /// `maxSteps` bounds the work of the search over all its floors: DP
  /// transitions tried and, where the class counts bind, labels built and
  /// dominance tests of the label-setting DP. Past it the search stops and
  /// returns the best placement of the floors it finished (none if none),
  /// which need not be the cheapest.
  std::optional<Evaluation>
  cheapest(llvm::ArrayRef<unsigned> slotClasses, bool ordered,
           double maxSteps = std::numeric_limits<double>::infinity());
  /// cheapest(), its work taken from `stepsLeft`, which keeps what is left
  /// (0: spent, and then none means only that none was found in time).
  std::optional<Evaluation>
  cheapestSpending(llvm::ArrayRef<unsigned> slotClasses, bool ordered,
                   double &stepsLeft);

  /// The placement whose stages are a subsequence of `slotClasses`, in
  /// order, with the lowest sum over stages of replicas x (price + shadow
  /// price), every stage and boundary meeting the target (and running faster
  /// than `above` when given); class counts are not enforced. None when no
  /// such placement exists.
  std::optional<Evaluation> cheapestPriced(llvm::ArrayRef<unsigned> slotClasses,
                                           llvm::ArrayRef<double> shadowPrice,
                                           double above = 0);

  /// The feasible placement with the lowest cost per million samples that
  /// agrees with `placement` outside the windows, layer ranges [begin, end)
  /// (any classes inside; stages may extend across the windows' edges).
  /// Costs about the sum of (end - begin)^2 table steps plus a pass over the
  /// model, not n^2.
  /// When `placement` is infeasible, repairs instead: the cheapest windows
  /// that meet the target themselves, within the replicas the plan's stages
  /// outside them leave, except that of a class the plan overuses they need
  /// only give back one device (the result may still be infeasible).
  /// With `liftAbove` > 0, lifts instead: the cheapest windows whose stages
  /// and boundaries all run faster than `liftAbove`, the stages outside taken
  /// as they are (the caller frees every stage at or below it).
  /// With `shadowPrice` (one per class, per device and hour), prices
  /// instead: the windows minimise the sum over all stages of replicas x
  /// (price + shadow price) with every stage they change meeting the target
  /// (and running faster than `liftAbove` when given), the plan's stages
  /// outside taken as they are, and class counts not enforced: the shadow
  /// prices stand for them (a Lagrangian relaxation of the counts).
  /// `maxSteps` bounds the work as for cheapest().
  std::optional<Evaluation>
  cheapestAround(llvm::ArrayRef<unsigned> placement,
                 llvm::ArrayRef<std::pair<unsigned, unsigned>> windows,
                 double liftAbove = 0, llvm::ArrayRef<double> shadowPrice = {},
                 double maxSteps = std::numeric_limits<double>::infinity());

  /// An upper bound on the throughput of any placement.
  double throughputBound() const;

  /// A lower bound on the cost per million samples of any placement whose
  /// price per hour is at least `price`: with price P no stage has more
  /// than P / price_c devices of class c, which bounds every layer's
  /// throughput. At least price / throughputBound().
  double costBound(double price) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The placement with the highest throughput when every stage may use up to
/// its class's count (counts shared between stages not enforced), and that
/// throughput: a max-min dynamic program over the topological order.
std::vector<unsigned> maxThroughputPlacement(const CostModel &model,
                                             double &throughput);

/// The fastest runnable placement (Evaluation::runnable: within memory and
/// the class counts, shared between stages), evaluated against `target`:
/// the max-min placement when it is runnable, else found by bisection over
/// the throughput with the exact search (within kRunnableTolerance). None
/// when no placement is runnable, or when the graph is too large for
/// repeated exact searches (kMaxRunnableSearchSteps) or they would take
/// more than `budget` steps (StrategyOptions::runnableSearchBudget).
/// `bound` is set to the max-min placement's throughput either way.
std::optional<Evaluation>
fastestRunnablePlacement(const CostModel &model, double target,
                         size_t maxStoredStages, double budget, double &bound);

/// `classOfLayer` provisioned for the highest throughput the cluster's
/// class counts hold (a bisection over the throughput: each probe is one
/// evaluation), evaluated against `target`; none when no provisioning is
/// runnable (a stage fits no device's memory). For graphs too large for
/// fastestRunnablePlacement's search: a plan the cluster can run, though
/// perhaps not its fastest one. With `memoryAside`, only the counts must
/// hold: for a cluster where nothing fits, a plan on devices it has.
std::optional<Evaluation>
provisionedWithinCounts(const CostModel &model,
                        llvm::ArrayRef<unsigned> classOfLayer, double target,
                        bool memoryAside = false);

/// Layers^2 x classes^2 past which fastestRunnablePlacement gives up at
/// once: each probe of its bisection is one exact search, whose floors cost
/// about that many steps each (about 1,000 layers on three classes).
constexpr double kMaxRunnableSearchSteps = 1e7;
/// The bisection stops when its bounds are this close (relative).
constexpr double kRunnableTolerance = 1e-4;

/// How far an infeasible plan is from feasible: the relative throughput
/// shortfall of each stage and boundary, plus the relative overuse of each
/// class's count, plus one per stage that does not fit in memory. 0 for a
/// feasible plan.
double violation(const CostModel &model, const Evaluation &plan,
                 double targetThroughput);

/// isBetter, except that of two infeasible plans the one with the smaller
/// violation wins (then the faster): a plan that overuses a class's count
/// improves by merging stages, which isBetter alone would not reward.
bool isCloser(const CostModel &model, const Evaluation &candidate,
              const Evaluation &incumbent, double targetThroughput);

/// Moves whole runs of layers [i, j) to another class while that improves
/// the plan (isCloser); returns the improved plan.
Evaluation improveLocally(const CostModel &model, Evaluation plan,
                          double targetThroughput);

} // namespace detail
} // namespace schedule
} // namespace heterps

#endif // HETERPS_LIB_SCHEDULE_STRATEGIES_H
