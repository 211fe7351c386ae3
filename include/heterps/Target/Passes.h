//===- Passes.h - Passes that prepare stages for printing -------*- C++ -*-===//

#ifndef HETERPS_TARGET_PASSES_H
#define HETERPS_TARGET_PASSES_H

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace heterps::target {

#define GEN_PASS_DECL
#include "heterps/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "heterps/Target/Passes.h.inc"

/// What --hps-prepare-stages runs: every decision of the stage printer, in
/// order (loops are formed around fused dense ops, projections last).
/// `fuseElementwise` false leaves elementwise ops one kernel each.
void buildStagePreparationPipeline(mlir::OpPassManager &pm,
                                   bool fuseElementwise = true);

/// Registers the passes and --hps-prepare-stages.
void registerStagePreparation();

} // namespace heterps::target

#endif // HETERPS_TARGET_PASSES_H
