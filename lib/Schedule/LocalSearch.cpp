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
  // Candidate runs: every run of up to kShortRun layers, and every run that
  // covers one to three whole consecutive stages. All runs of every length
  // would cost O(n^3) evaluations per sweep, minutes on 200-layer models;
  // the exact re-placement that follows handles the long-range moves.
  constexpr unsigned kShortRun = 8;
  auto tryRun = [&](unsigned i, unsigned j) {
    bool improved = false;
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
    return improved;
  };
  bool improved = true;
  while (improved) {
    improved = false;
    for (unsigned i = 0; i != n; ++i)
      for (unsigned j = i + 1; j <= std::min(n, i + kShortRun); ++j)
        improved |= tryRun(i, j);
    for (size_t s = 0; s < plan.stages.size(); ++s)
      for (size_t t = s; t < std::min(plan.stages.size(), s + 3); ++t) {
        unsigned begin = plan.stages[s].begin, end = plan.stages[t].end;
        // A move may merge stages; the loop bounds are re-read each time.
        improved |= tryRun(begin, end);
      }
  }
  return plan;
}
