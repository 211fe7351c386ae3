//===- PlanExport.h - Placement plan as JSON and Graphviz -------*- C++ -*-===//

#ifndef HETERPS_TARGET_PLANEXPORT_H
#define HETERPS_TARGET_PLANEXPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace heterps::target {

/// Prints the module's `hps.plan` (from --hps-place) as JSON.
/// The module's placement plan (hps.plan) as JSON; an error when it has
/// none.
mlir::FailureOr<llvm::json::Value> planJSON(mlir::ModuleOp module);

mlir::LogicalResult exportPlanJSON(mlir::ModuleOp module,
                                   llvm::raw_ostream &os);

/// Draws @main's layers and data edges, coloured by device class.
mlir::LogicalResult exportPlacedGraphDot(mlir::ModuleOp module,
                                         llvm::raw_ostream &os);

/// Registers --hps-to-plan and --hps-to-dot.
void registerPlanExportTranslations();

} // namespace heterps::target

#endif // HETERPS_TARGET_PLANEXPORT_H
