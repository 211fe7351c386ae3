//===- BruteForce.cpp - Every placement of a small graph ------------------===//
//
// The reference the other strategies are tested against: evaluates all
// classes^layers placements with the cost model.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include <cmath>

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

Expected<Evaluation> detail::solveBruteForce(const CostModel &model,
                                             const Objective &objective,
                                             const StrategyOptions &options) {
  unsigned n = model.numLayers(), numCls = model.numClasses();
  double placements = std::pow(double(numCls), double(n));
  if (n > options.bruteForceMaxLayers ||
      placements > double(options.bruteForceMaxPlacements))
    return createStringError(
        inconvertibleErrorCode(),
        "brute force refuses %u layers on %u device classes (%.3g "
        "placements; the limit is %u layers and %llu placements): use dp",
        n, numCls, placements, options.bruteForceMaxLayers,
        static_cast<unsigned long long>(options.bruteForceMaxPlacements));

  std::vector<unsigned> placement(n, 0);
  std::optional<Evaluation> best;
  while (true) {
    Evaluation plan = model.evaluate(placement, objective.targetThroughput);
    if (!best || isBetter(plan, *best))
      best = std::move(plan);
    // Next placement, as an odometer in base numCls.
    unsigned l = 0;
    while (l != n && ++placement[l] == numCls)
      placement[l++] = 0;
    if (l == n)
      break;
  }
  return *best;
}
