//===- FusionRegions.h - Recording a fusion as a region op ------*- C++ -*-===//
//
// Private to lib/Target: what the fusion passes share.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_FUSIONREGIONS_H
#define HETERPS_LIB_TARGET_FUSIONREGIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

namespace heterps::target {

/// Whether `func` is a stage (has hps.device): only stages are printed.
bool isStageFunction(mlir::func::FuncOp func);

/// Whether `op` is one of hpsrt's fusion ops.
bool isFusion(mlir::Operation *op);

/// The values the body of `fusion` reads from above it, each once, in
/// first-use order.
llvm::SmallVector<mlir::Value> fusionInputs(mlir::Operation *fusion);

/// The value `value` is a view of (through any chain of views), or itself.
mlir::Value viewSource(mlir::Value value);

/// Moves `ops` (in block order, all in one block) into the body of a new
/// fusion op of kind `name` that takes the place of `at` (one of them): its
/// results are `stored`, and every use of those outside the body reads the
/// fusion's result instead. The fusion is hps.backward when `at` is.
mlir::Operation *outlineFusion(mlir::OperationName name,
                               llvm::ArrayRef<mlir::Operation *> ops,
                               llvm::ArrayRef<mlir::Value> stored,
                               mlir::Operation *at);

template <typename FusionOp>
FusionOp outlineFusion(llvm::ArrayRef<mlir::Operation *> ops,
                       llvm::ArrayRef<mlir::Value> stored,
                       mlir::Operation *at) {
  return llvm::cast<FusionOp>(outlineFusion(
      mlir::OperationName(FusionOp::getOperationName(), at->getContext()), ops,
      stored, at));
}

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_FUSIONREGIONS_H
