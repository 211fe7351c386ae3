//===- StageBundle.h - Partitioned module -> stage programs -----*- C++ -*-===//
//
// Lowers every stage function of a partitioned module to a C++ program over
// the runtime's kernel API (runtime/include/heterps/Runtime/KernelAPI.inc)
// and writes a bundle: manifest.json, stage_K.cpp (CPU classes) or
// stage_K.cu (GPU classes; the same text also builds for the CPU), and
// weights.bin. The runtime reads bundles and never the compiler's IR.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_TARGET_STAGEBUNDLE_H
#define HETERPS_TARGET_STAGEBUNDLE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

namespace heterps::target {

/// Writes the bundle of `module` (after --hps-partition) into `directory`,
/// which is created. On failure an error is emitted naming the stage and op
/// at fault and nothing is left in `directory`.
mlir::LogicalResult writeStageBundle(mlir::ModuleOp module,
                                     llvm::StringRef directory);

/// Registers --hps-to-stages (the output file names the bundle directory).
void registerStageBundleTranslation();

} // namespace heterps::target

#endif // HETERPS_TARGET_STAGEBUNDLE_H
