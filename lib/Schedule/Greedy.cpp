//===- Greedy.cpp - Cheapest class for each layer on its own --------------===//
//
// Places each layer on the class that would serve it alone most cheaply per
// sample at the target (the fastest class when none reaches the target),
// ignoring the boundaries this creates.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

Expected<Evaluation> detail::solveGreedy(const CostModel &model,
                                         const Objective &objective,
                                         const StrategyOptions &) {
  unsigned n = model.numLayers(), numCls = model.numClasses();
  std::vector<unsigned> placement(n, 0);
  for (unsigned l = 0; l != n; ++l) {
    bool bestMeets = false;
    double bestScore = 0;
    for (unsigned c = 0; c != numCls; ++c) {
      cost::StagePlan alone =
          model.provision(c, l, l + 1, objective.targetThroughput);
      double price = alone.replicas * model.cluster().classes[c].pricePerHour;
      // Meeting the target comes first, then cost, else raw speed.
      double score = alone.meetsTarget
                         ? cost::costPerMillionSamples(price, alone.throughput)
                         : -alone.throughput;
      if (c == 0 || (alone.meetsTarget && !bestMeets) ||
          (alone.meetsTarget == bestMeets && score < bestScore)) {
        placement[l] = c;
        bestMeets = alone.meetsTarget;
        bestScore = score;
      }
    }
  }
  return model.evaluate(placement, objective.targetThroughput);
}
