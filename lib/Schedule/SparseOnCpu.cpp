//===- SparseOnCpu.cpp - The hand-made heterogeneous baseline -------------===//
//
// What an expert places by hand for a CTR model (the HeterPS paper's
// motivating split): embedding lookups and the layers that pool their rows
// stay on a CPU class next to the parameter server; the dense tower after
// them goes to a GPU class.
// Every (CPU class, GPU class) pair is tried and the best by the scheduler's
// order kept, so the plan differs from rl's only in its fixed split.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include <algorithm>

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

/// The layers the split keeps on the CPU: the prefix of the layer order
/// through the last layer of the sparse side, where the sparse side is the
/// lookups and the non-dense layers that read only lookups' rows (pooling,
/// reshapes, concats). Stages are runs of one class in layer order, so a
/// prefix gives one CPU stage and one GPU stage; the cheap layers of other
/// branches that precede the last lookup (id arithmetic, a wide part's small
/// gemm) come along instead of splitting the CPU side in two.
static std::vector<bool> sparseSide(const cost::LayerGraph &graph) {
  std::vector<bool> fromLookups(graph.size(), false);
  unsigned end = 0;
  for (unsigned l = 0; l != graph.size(); ++l) {
    const cost::Layer &layer = graph.layers[l];
    bool sparse = layer.kind == cost::LayerKind::EmbeddingLookup;
    if (!sparse && layer.kind != cost::LayerKind::DenseCompute &&
        !layer.inputs.empty()) {
      sparse = true;
      for (unsigned input : layer.inputs)
        sparse = sparse && fromLookups[input];
    }
    fromLookups[l] = sparse;
    if (sparse)
      end = l + 1;
  }
  std::vector<bool> onCpu(graph.size(), false);
  std::fill(onCpu.begin(), onCpu.begin() + end, true);
  return onCpu;
}

Expected<Evaluation> detail::solveSparseOnCpu(const CostModel &model,
                                              const Objective &objective) {
  std::vector<unsigned> cpuClasses, gpuClasses;
  for (unsigned c = 0; c != model.numClasses(); ++c)
    (model.cluster().classes[c].kind == cluster::DeviceKind::CPU ? cpuClasses
                                                                 : gpuClasses)
        .push_back(c);
  if (cpuClasses.empty() || gpuClasses.empty())
    return createStringError(
        inconvertibleErrorCode(),
        std::string("sparse-on-cpu needs a cpu and a gpu device class; the "
                    "cluster has ") +
            (cpuClasses.empty() ? "no cpu class" : "no gpu class"));
  std::vector<bool> onCpu = sparseSide(model.graph());
  std::optional<Evaluation> best;
  for (unsigned cpu : cpuClasses) {
    for (unsigned gpu : gpuClasses) {
      std::vector<unsigned> placement(model.numLayers());
      for (unsigned l = 0; l != model.numLayers(); ++l)
        placement[l] = onCpu[l] ? cpu : gpu;
      Evaluation plan = model.evaluate(placement, objective.targetThroughput);
      if (!best || isBetter(plan, *best))
        best = std::move(plan);
    }
  }
  return *best;
}
