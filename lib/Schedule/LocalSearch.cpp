//===- LocalSearch.cpp - Improve a placement by moving runs of layers -----===//
//
// First-improvement hill climbing over the neighbourhood "put layers [i, j)
// on class c", which contains moving a stage boundary, merging two stages and
// splitting one. Repeats until no move improves the plan.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

Evaluation detail::improveLocally(const CostModel &model, Evaluation plan,
                                  double targetThroughput) {
  unsigned n = model.numLayers(), numCls = model.numClasses();
  std::vector<unsigned> placement = plan.classOfLayer;
  bool improved = true;
  while (improved) {
    improved = false;
    for (unsigned i = 0; i != n; ++i)
      for (unsigned j = i + 1; j <= n; ++j)
        for (unsigned c = 0; c != numCls; ++c) {
          // Skip moves that change nothing.
          bool changes = false;
          for (unsigned l = i; l != j && !changes; ++l)
            changes = placement[l] != c;
          if (!changes)
            continue;
          std::vector<unsigned> candidate = placement;
          std::fill(candidate.begin() + i, candidate.begin() + j, c);
          Evaluation next = model.evaluate(candidate, targetThroughput);
          if (isBetter(next, plan)) {
            plan = std::move(next);
            placement = std::move(candidate);
            improved = true;
          }
        }
  }
  return plan;
}
