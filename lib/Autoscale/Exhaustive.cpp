//===- Exhaustive.cpp - Brute-force allocation, the tests' reference ------===//
//
// Every combination of one option (or nothing) per job, pruned only by
// capacity. Exponential: for tests on small instances.
//
//===----------------------------------------------------------------------===//

#include "AllocatorInternal.h"

using namespace heterps::autoscale;
using namespace heterps::autoscale::detail;

namespace {

struct Search {
  const Problem &problem;
  std::vector<int> free;
  Picks picks, bestPicks;
  Score score, bestScore;

  void visit(size_t j) {
    if (j == problem.options.size()) {
      if (better(score, bestScore, problem.objective)) {
        bestScore = score;
        bestPicks = picks;
      }
      return;
    }
    picks[j] = -1;
    visit(j + 1);
    const std::vector<Option> &options = problem.options[j];
    for (size_t o = 0; o < options.size(); ++o) {
      const int *devices = options[o].devices;
      bool fits = true;
      for (int c = 0; c < problem.numClasses && fits; ++c)
        fits = devices[c] <= free[c];
      if (!fits)
        continue;
      for (int c = 0; c < problem.numClasses; ++c)
        free[c] -= devices[c];
      Score saved = score;
      score = score + options[o].score;
      picks[j] = static_cast<int>(o);
      visit(j + 1);
      score = saved;
      picks[j] = -1;
      for (int c = 0; c < problem.numClasses; ++c)
        free[c] += devices[c];
    }
  }
};

} // namespace

Picks heterps::autoscale::detail::solveExhaustive(const Problem &problem) {
  size_t numJobs = problem.options.size();
  Search search{
      problem, problem.capacity, Picks(numJobs, -1), Picks(numJobs, -1),
      Score(), Score()};
  search.visit(0);
  return search.bestPicks;
}
