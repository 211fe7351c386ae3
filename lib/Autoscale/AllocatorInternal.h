//===- AllocatorInternal.h - Shared pieces of the allocator -----*- C++ -*-===//
//
// The solvers of the allocator (exact programs, Lagrangian heuristic,
// exhaustive search) work on one reduced problem: per job the options worth
// taking, each with a lexicographic score, so that one comparison serves
// both objectives.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_AUTOSCALE_ALLOCATORINTERNAL_H
#define HETERPS_LIB_AUTOSCALE_ALLOCATORINTERNAL_H

#include "heterps/Autoscale/Allocator.h"

#include <cstdint>
#include <vector>

namespace heterps::autoscale::detail {

/// A choice's contribution. MaxValue compares `value` only; MinCost compares
/// floors met (more is better), then cost (less), then value (more). Both
/// orders are compatible with addition, so dynamic programs over them are
/// exact.
struct Score {
  int met = 0;
  double cost = 0;
  double value = 0;
};

inline Score operator+(const Score &a, const Score &b) {
  return {a.met + b.met, a.cost + b.cost, a.value + b.value};
}
inline Score operator-(const Score &a, const Score &b) {
  return {a.met - b.met, a.cost - b.cost, a.value - b.value};
}

/// Strictly better under the objective.
inline bool better(const Score &a, const Score &b, Objective objective) {
  if (objective == Objective::MaxValue)
    return a.value > b.value;
  if (a.met != b.met)
    return a.met > b.met;
  if (a.cost != b.cost)
    return a.cost < b.cost;
  return a.value > b.value;
}

struct Option {
  int choice = -1;    // index into the job's choices
  const int *devices; // numClasses entries, owned by the request
  Score score;
  double profit = 0; // scalar form of `score` for the Lagrangian heuristic
};

struct Problem {
  Objective objective = Objective::MaxValue;
  int numClasses = 0;
  std::vector<int> capacity;
  /// Per job, the options that can improve on leaving it queued (and fit
  /// the capacity on their own); empty for jobs held out of the problem.
  std::vector<std::vector<Option>> options;
};

/// The solvers return, per job, an index into problem.options[j] or -1.
using Picks = std::vector<int>;

Picks solveSingleClassExact(const Problem &problem);
Picks solveMultiClassExact(const Problem &problem);
/// Several classes, any size: prices per class, greedy repair, local search.
/// `bound` receives the best Lagrangian dual value (MaxValue: an upper bound
/// on the optimum's value).
Picks solveLagrangian(const Problem &problem, double &bound);
Picks solveExhaustive(const Problem &problem);

/// Number of states of the multi-class program: product of (capacity+1),
/// saturated at INT64_MAX.
int64_t multiClassStates(const std::vector<int> &capacity);

Score totalScore(const Problem &problem, const Picks &picks);

} // namespace heterps::autoscale::detail

#endif // HETERPS_LIB_AUTOSCALE_ALLOCATORINTERNAL_H
