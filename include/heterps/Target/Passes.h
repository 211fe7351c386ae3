//===- Passes.h - Passes that prepare stages for printing -------*- C++ -*-===//

#ifndef HETERPS_TARGET_PASSES_H
#define HETERPS_TARGET_PASSES_H

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace heterps::target {

#define GEN_PASS_DECL
#include "heterps/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "heterps/Target/Passes.h.inc"

/// What --hps-prepare-stages runs: the stage printer's decisions, in order
/// (loops are formed around fused dense ops; layouts over both).
/// `fuseElementwise` false leaves elementwise ops one kernel each;
/// `nativeLayouts` false keeps every tensor plain (for comparisons).
void buildStagePreparationPipeline(mlir::OpPassManager &pm,
                                   bool fuseElementwise = true,
                                   bool nativeLayouts = true);

/// Registers the passes and --hps-prepare-stages.
void registerStagePreparation();

} // namespace heterps::target

#endif // HETERPS_TARGET_PASSES_H
