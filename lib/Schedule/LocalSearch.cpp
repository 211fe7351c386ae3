//===- LocalSearch.cpp - Improve a placement by moving runs of layers -----===//
//
// First-improvement hill climbing over the neighbourhood "put layers [i, j)
// on class c", which contains moving a stage boundary, merging two stages and
// splitting one. Repeats until no move improves the plan. Moves are priced
// on the plan's stages, so a move costs O(stages), not O(layers).
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "llvm/ADT/STLExtras.h"

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

double detail::violation(const CostModel &model, const Evaluation &plan,
                         double targetThroughput) {
  if (plan.feasible)
    return 0;
  // Every slow stage and boundary counts, not only the slowest, so that
  // fixing one of several is progress.
  auto shortfall = [&](double throughput) {
    return std::max(0.0, 1.0 - throughput / targetThroughput);
  };
  double total = 0;
  std::vector<unsigned> used(model.numClasses(), 0);
  for (const cost::StagePlan &stage : plan.stages) {
    used[stage.deviceClass] += stage.replicas;
    total += stage.fitsMemory ? shortfall(stage.throughput) : 1.0;
  }
  for (double seconds : plan.boundarySeconds)
    total += shortfall(model.batchSize() / seconds);
  for (unsigned c = 0, e = used.size(); c != e; ++c) {
    unsigned count = model.cluster().classes[c].count;
    if (used[c] > count)
      total += double(used[c] - count) / std::max(1u, count);
  }
  return total;
}

bool detail::isCloser(const CostModel &model, const Evaluation &candidate,
                      const Evaluation &incumbent, double targetThroughput) {
  if (candidate.feasible || incumbent.feasible)
    return isBetter(candidate, incumbent);
  double a = violation(model, candidate, targetThroughput),
         b = violation(model, incumbent, targetThroughput);
  if (a != b)
    return a < b;
  return candidate.throughput > incumbent.throughput;
}

Evaluation detail::improveLocally(const CostModel &model, Evaluation plan,
                                  double targetThroughput) {
  unsigned n = model.numLayers(), numCls = model.numClasses();
  std::vector<unsigned> placement = plan.classOfLayer;
  // Candidate runs: every run of up to kShortRun layers, and every run that
  // covers one to three whole consecutive stages. All runs of every length
  // would cost O(n^3) evaluations per sweep, minutes on 200-layer models;
  // the exact re-placement that follows handles the long-range moves.
  constexpr unsigned kShortRun = 8;
  // A move is priced on the plan's runs (CostModel::evaluateRuns, O(stages))
  // and only an accepted one is evaluated in full (O(layers)).
  auto runsWith = [&](unsigned i, unsigned j, unsigned c) {
    std::vector<cost::LayerRun> runs;
    bool placed = false;
    for (const cost::StagePlan &stage : plan.stages) {
      if (stage.end <= i || stage.begin >= j) {
        if (stage.begin >= j && !placed) {
          runs.push_back({c, i, j});
          placed = true;
        }
        runs.push_back({stage.deviceClass, stage.begin, stage.end});
        continue;
      }
      if (stage.begin < i)
        runs.push_back({stage.deviceClass, stage.begin, i});
      if (!placed) {
        runs.push_back({c, i, j});
        placed = true;
      }
      if (stage.end > j)
        runs.push_back({stage.deviceClass, j, stage.end});
    }
    return runs;
  };
  auto tryRun = [&](unsigned i, unsigned j) {
    bool improved = false;
    for (unsigned c = 0; c != numCls; ++c) {
      // Skip moves that change nothing.
      bool changes = false;
      for (unsigned l = i; l != j && !changes; ++l)
        changes = placement[l] != c;
      if (!changes)
        continue;
      Evaluation next = model.evaluateRuns(runsWith(i, j, c), targetThroughput);
      if (isCloser(model, next, plan, targetThroughput)) {
        std::fill(placement.begin() + i, placement.begin() + j, c);
        plan = model.evaluate(placement, targetThroughput);
        improved = true;
      }
    }
    return improved;
  };
  // On deep graphs short runs start only near a stage boundary: a sweep of
  // all of them is layers x 8 x classes moves of O(stages) each, and a
  // run inside a stage only splits it, which the exact windows that
  // follow weigh better.
  constexpr unsigned kDeepGraph = 512;
  auto nearBoundary = [&](unsigned i) {
    if (n <= kDeepGraph || i + kShortRun >= n)
      return true;
    return llvm::any_of(plan.stages, [&](const cost::StagePlan &stage) {
      return i + kShortRun >= stage.begin && i <= stage.begin + kShortRun;
    });
  };
  bool improved = true;
  while (improved) {
    improved = false;
    for (unsigned i = 0; i != n; ++i)
      if (nearBoundary(i))
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
