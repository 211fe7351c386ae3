//===- StagePreparation.cpp - The passes before stages are printed --------===//

#include "heterps/Target/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace heterps::target {

namespace {
struct StagePreparationOptions
    : public PassPipelineOptions<StagePreparationOptions> {
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Run chains of elementwise ops as generated loops"),
      llvm::cl::init(true)};
  Option<bool> nativeLayouts{
      *this, "native-layouts",
      llvm::cl::desc("Keep CPU conv chains in the native activation layout"),
      llvm::cl::init(true)};
};
} // namespace

void buildStagePreparationPipeline(OpPassManager &pm, bool fuseElementwise,
                                   bool nativeLayouts) {
  OpPassManager &stage = pm.nest<func::FuncOp>();
  stage.addPass(createHPSFuseDenseEpilogues());
  if (fuseElementwise)
    stage.addPass(createHPSFormFusedLoops());
  stage.addPass(createHPSFuseRecurrenceProjections());
  if (nativeLayouts)
    stage.addPass(createHPSAssignLayouts());
  stage.addPass(createHPSLowerToRuntimeCalls());
  stage.addPass(createHPSPlanBuffers());
  pm.addPass(createHPSPackWeights());
}

void registerStagePreparation() {
  registerTargetPasses();
  PassPipelineRegistration<StagePreparationOptions>(
      "hps-prepare-stages",
      "Make the stage printer's decisions as IR: fuse dense epilogues, form "
      "elementwise loops, fuse recurrence projections, assign layouts, lower "
      "to kernel ops, plan buffers, pack weights",
      [](OpPassManager &pm, const StagePreparationOptions &options) {
        buildStagePreparationPipeline(pm, options.fuseElementwise,
                                      options.nativeLayouts);
      });
}

} // namespace heterps::target
