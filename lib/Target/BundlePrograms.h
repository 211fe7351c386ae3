//===- BundlePrograms.h - The functions a bundle runs -----------*- C++ -*-===//
//
// Private to lib/Target. Which functions of a partitioned module become
// programs of its bundle, and the order of their shares of weights.bin:
// --hps-pack-weights lays the shares out in this order and the bundle
// writer writes them in it.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_BUNDLEPROGRAMS_H
#define HETERPS_LIB_TARGET_BUNDLEPROGRAMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <utility>

namespace heterps::target {

struct BundlePrograms {
  mlir::func::FuncOp main;
  /// @main's hps.pipeline: each stage's symbol and its function, null
  /// where the module lacks it (the caller reports that).
  llvm::SmallVector<std::pair<mlir::FlatSymbolRefAttr, mlir::func::FuncOp>>
      stages;
  /// The pass-key program (--hps-outline-pass-keys), or null.
  mlir::func::FuncOp passKeys;

  /// The programs in weights.bin order: the pipeline's stages, then the
  /// pass-key program, whose share follows all of theirs so that it moves
  /// none of them. Null where a stage is missing.
  llvm::SmallVector<mlir::func::FuncOp> inWeightsOrder() const;
};

/// The programs of `module`; none when it is not partitioned (@main has no
/// hps.pipeline).
std::optional<BundlePrograms> bundlePrograms(mlir::ModuleOp module);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_BUNDLEPROGRAMS_H
