//===- StageEmitter.h - One stage function -> its C++ program ---*- C++ -*-===//
//
// Private to the bundle writer. A stage function of a partitioned module
// becomes one C++ translation unit over the runtime's kernel API: a `Stage`
// struct whose constructor builds every kernel once and whose run() calls
// them on buffers planned statically by liveness.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_STAGEEMITTER_H
#define HETERPS_LIB_TARGET_STAGEEMITTER_H

#include "RuntimeKinds.h"
#include "WeightsFile.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Target/StageBundle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace heterps::target {

/// A sparse table the parameter server serves (from ps_pull).
struct TableEntry {
  std::string dtype;
  llvm::SmallVector<int64_t> shape;
  uint64_t offset = 0;
};

/// What a training bundle's parameter server trains (from autodiff's marks
/// and the stages' ps_pull ops).
struct TrainedState {
  /// Trainable dense parameters by name: their weight op (initial value).
  llvm::MapVector<llvm::StringRef, hps::WeightOp> parameters;
  /// Sparse tables: rows and dim.
  llvm::MapVector<llvm::StringRef, std::pair<int64_t, int64_t>> tables;
};

/// One stage's program and what the manifest says of it.
struct StageProgram {
  /// The translation unit.
  std::string text;
  uint64_t arenaBytes = 0;
  /// The stage's share of weights.bin.
  uint64_t weightsBegin = 0, weightsEnd = 0;
  llvm::SmallVector<std::string> inputChannels, outputChannels, tableNames;
  unsigned kernelCount = 0;
};

/// The program of `stage` (a function with hps.device, prepared by
/// --hps-prepare-stages), for a GPU class when `gpu`. The tables it serves
/// inference lookups from go to `tables`; `trained` (null for inference
/// bundles) collects what the parameter server trains. On failure an error
/// names the op.
mlir::FailureOr<StageProgram>
emitStageProgram(mlir::func::FuncOp stage, bool gpu,
                 llvm::StringMap<TableEntry> &tables, TrainedState *trained);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_STAGEEMITTER_H
