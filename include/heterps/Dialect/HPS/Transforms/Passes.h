//===- Passes.h - HeterPS passes --------------------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_H
#define HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_H

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace heterps::hps {

/// Which statistics a trained hps.batch_norm normalizes with
/// (--hps-autodiff's batch-norm option).
enum class BatchNormMode {
  /// The batch's, as PyTorch trains; running ones become moving averages.
  Batch,
  /// The running statistics, as constants (inference-mode batch norm).
  Running,
};

/// The name of the training flag weight that batch-mode batch norm adds: the
/// runtime serves it as 1 while training and 0 while evaluating.
inline constexpr const char *kBatchStatisticsFlag = "hps.batch_statistics";

#define GEN_PASS_DECL
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"

/// hps-place whose search asks `stopRequested` as it goes and fails when it
/// answers true: how a driver passes on a Ctrl-C it caught.
std::unique_ptr<mlir::Pass> createHPSPlace(const HPSPlaceOptions &options,
                                           std::function<bool()> stopRequested);

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_H
