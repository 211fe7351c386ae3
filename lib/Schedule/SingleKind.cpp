//===- SingleKind.cpp - The cpu-only and gpu-only baselines ---------------===//
//
// Everything on one class of the given kind: the best such class by the
// scheduler's order (what a user without a heterogeneous planner picks).
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

Expected<Evaluation> detail::solveSingleKind(cluster::DeviceKind kind,
                                             const CostModel &model,
                                             const Objective &objective) {
  std::optional<Evaluation> best;
  for (unsigned c = 0; c != model.numClasses(); ++c) {
    if (model.cluster().classes[c].kind != kind)
      continue;
    std::vector<unsigned> placement(model.numLayers(), c);
    Evaluation plan = model.evaluate(placement, objective.targetThroughput);
    if (!best || isBetter(plan, *best))
      best = std::move(plan);
  }
  if (!best)
    return createStringError(inconvertibleErrorCode(),
                             "the cluster has no %s device class",
                             cluster::toString(kind).str().c_str());
  return *best;
}
