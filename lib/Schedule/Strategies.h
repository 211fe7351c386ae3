//===- Strategies.h - Strategy entry points (internal) ----------*- C++ -*-===//

#ifndef HETERPS_LIB_SCHEDULE_STRATEGIES_H
#define HETERPS_LIB_SCHEDULE_STRATEGIES_H

#include "heterps/Schedule/Scheduler.h"

#include <memory>
#include <optional>
#include <vector>

namespace heterps {
namespace schedule {
namespace detail {

using cost::CostModel;
using cost::Evaluation;

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

/// Exact cheapest-placement search (docs/Planning.md): over all placements,
/// or over those whose sequence of stage classes is a subsequence of a given
/// one. Builds the per-(class, layer range) stage table once.
class ExactPlacementSearch {
public:
  ExactPlacementSearch(const CostModel &model, double targetThroughput);
  ~ExactPlacementSearch();

  /// The feasible placement with the lowest cost per million samples whose
  /// stages are on `slotClasses`: any sequence of them (consecutive stages on
  /// different classes) when `ordered` is false; a subsequence of them, in
  /// order, when true. None when no such placement is feasible.
  std::optional<Evaluation> cheapest(llvm::ArrayRef<unsigned> slotClasses,
                                     bool ordered);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The placement with the highest throughput when every stage may use up to
/// its class's count (counts shared between stages not enforced), and that
/// throughput: a max-min dynamic program over the topological order.
std::vector<unsigned> maxThroughputPlacement(const CostModel &model,
                                             double &throughput);

/// Moves whole runs of layers [i, j) to another class while that improves
/// the plan (isBetter); returns the improved plan.
Evaluation improveLocally(const CostModel &model, Evaluation plan,
                          double targetThroughput);

} // namespace detail
} // namespace schedule
} // namespace heterps

#endif // HETERPS_LIB_SCHEDULE_STRATEGIES_H
