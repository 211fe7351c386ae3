//===- LayerStage.h - One layer prepared as a stage of its own --*- C++ -*-===//
//
// What the layer profiler runs: one hps layer as a one-stage pipeline,
// prepared by the bundle's own stage passes and weights.bin writer, so the
// kernels it times are the ones a bundle constructs for that layer. The
// one difference is that elementwise ops stay one kernel each: a fused loop
// is C++ compiled into a stage program, and the profiler runs kernels in
// process.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_TARGET_LAYERSTAGE_H
#define HETERPS_TARGET_LAYERSTAGE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heterps::target {

struct LayerStageOptions {
  int64_t batch = 256; ///< Extent bound to dynamic dims.
  /// Weights become stage arguments, as the parameters a training step
  /// reads from the server (kernels may not prepack them); otherwise they
  /// are frozen constants in weights.bin.
  bool training = false;
  /// A frozen embedding table larger than this keeps its first rows (still
  /// far larger than the caches, so lookups stay DRAM bound).
  uint64_t maxTableBytes = uint64_t(512) << 20;
  std::string deviceClass = "cpu.local";
};

/// Where a prepared stage keeps a value when it runs.
struct StageSlot {
  enum class Kind { None, Argument, Arena, Weights };
  Kind kind = Kind::None;
  uint64_t offset = 0;   ///< Arena, Weights: bytes from their start.
  unsigned argument = 0; ///< Argument: its position.
};

struct LayerStage {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp stage;
  std::string weights; ///< The stage's share of weights.bin.
  uint64_t arenaBytes = 0;
  /// Per stage argument: the extent its integers index (an embedding
  /// table's rows for ids, a gather's axis for indices), or none.
  std::vector<std::optional<int64_t>> indexExtents;

  /// Where `value`, a value of the stage, lives (a view where its source
  /// does).
  StageSlot slotOf(mlir::Value value) const;
};

/// The runtime's name of an element type ("f32", "bool", ...), as stage
/// programs and manifests spell it; "" for a type the runtime lacks.
std::string runtimeTypeName(mlir::Type type);

/// The bytes of a static tensor of `type` as the runtime stores it.
uint64_t tensorBytes(mlir::Type type);

/// Builds `layer`'s stage in a module of its own (in the layer's context)
/// and prepares it. A layer the stage passes cannot lower comes back as an
/// error with their diagnostics' text.
llvm::Expected<LayerStage> prepareLayerStage(mlir::Operation *layer,
                                             const LayerStageOptions &options);

} // namespace heterps::target

#endif // HETERPS_TARGET_LAYERSTAGE_H
