//===- Pipelines.cpp - The compile pipeline -------------------------------===//

#include "heterps/Dialect/HPS/Transforms/Pipelines.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace heterps::hps {

void buildLegalizePipeline(OpPassManager &pm,
                           const CompilePipelineOptions &options) {
  HPSLegalizeONNXOptions legalize;
  legalize.strict = true;
  legalize.recurrenceUnrollLimit = options.recurrenceUnrollLimit;
  pm.addPass(createHPSMarkBatchExtentReads());
  pm.addPass(createHPSLegalizeONNX(legalize));
  pm.addPass(createHPSBoundExtents());
  pm.addPass(createHPSMarkSampleMixing());
}

void buildPlanPipeline(OpPassManager &pm, const CompilePipelineOptions &options,
                       std::function<bool()> stopRequested) {
  HPSPlaceOptions place;
  place.clusterFile = options.cluster;
  place.strategy = options.strategy;
  place.throughput = options.throughput;
  place.seed = options.seed;
  place.episodes = options.episodes;
  place.profile = options.profile;
  place.batch = options.batch;
  place.passSteps = options.passSteps;
  place.passDistinctFraction = options.passDistinctFraction;
  place.sparseStaleness = options.sparseStaleness;
  place.microBatches = options.microBatches;
  // A training bundle is placed for forward + backward work; autodiff then
  // puts every backward op where its forward op runs.
  place.inference = !options.train;
  pm.addPass(createHPSPlace(place, std::move(stopRequested)));
  if (!options.partition)
    return;
  if (options.train) {
    HPSAutodiffOptions autodiff;
    autodiff.loss = options.loss;
    autodiff.label = options.label;
    autodiff.output = options.output;
    autodiff.optimizer = options.optimizer;
    autodiff.learningRate = options.learningRate;
    autodiff.momentum = options.momentum;
    autodiff.batchNorm = options.batchNorm;
    // The options hold a view; the pass copies it as it is made.
    const std::vector<std::string> frozen(options.frozen.begin(),
                                          options.frozen.end());
    autodiff.frozen = frozen;
    pm.addPass(createHPSAutodiff(autodiff));
  }
  pm.addPass(createHPSPartition());
  pm.addPass(createHPSVerifyPartition());
  // The runtime's pass cache computes a pass's keys with it.
  if (options.train)
    pm.addPass(createHPSOutlinePassKeys());
}

void registerHPSPipelines() {
  PassPipelineRegistration<CompilePipelineOptions>(
      "hps-compile-pipeline",
      "What `heterps compile` runs on an imported model: legalize, bound "
      "extents, place, [autodiff,] partition, verify[, outline pass keys]",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        buildLegalizePipeline(pm, options);
        buildPlanPipeline(pm, options);
      });
}

} // namespace heterps::hps
