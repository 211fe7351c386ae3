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

#include <string>

namespace heterps::target {

/// Writes the bundle of `module` (after --hps-partition and, for its fusions,
/// --hps-prepare-stages: include/heterps/Target/Passes.h) into `directory`,
/// which is created. On failure an error is emitted naming the stage and op
/// at fault and nothing is left in `directory`.
mlir::LogicalResult writeStageBundle(mlir::ModuleOp module,
                                     llvm::StringRef directory);

/// Prints the program of every stage of `module` (after --hps-partition) to
/// `os` in pipeline order, each after a `// ----- stage_K.cpp -----` line:
/// the text writeStageBundle writes as stage_K.cpp or stage_K.cu.
mlir::LogicalResult printStagePrograms(mlir::ModuleOp module,
                                       llvm::raw_ostream &os);

/// Registers --hps-to-stages (the output file names the bundle directory)
/// and --hps-to-stage-programs (the programs to the output stream).
void registerStageBundleTranslation();

} // namespace heterps::target

#endif // HETERPS_TARGET_STAGEBUNDLE_H
