//===- RuntimeKinds.h - Which runtime kernel runs an hps op -----*- C++ -*-===//
//
// Private to lib/Target. What the fusion passes and the stage emitter must
// agree on about single hps ops: the runtime's unary and binary kinds they
// map to, and which ops are views (they share their operand's storage and
// run no kernel).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_RUNTIMEKINDS_H
#define HETERPS_LIB_TARGET_RUNTIMEKINDS_H

#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/Operation.h"

#include <limits>
#include <optional>

namespace heterps::target {

/// The runtime's UnaryKind of an elementwise op and its parameters.
struct RuntimeUnary {
  hpsrt::UnaryKind kind = hpsrt::UnaryKind::Identity;
  double alpha = 0, beta = 0;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
};

/// The runtime's UnaryKind and parameters of an elementwise op, or none.
std::optional<RuntimeUnary> runtimeUnary(mlir::Operation *op);

/// The runtime's BinaryKind of an elementwise binary op, or none.
std::optional<hpsrt::BinaryKind> runtimeBinary(mlir::Operation *op);

/// Whether `op` is a view of its first operand: a reshape, or a cast to
/// the same element type.
bool isAlias(mlir::Operation *op);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_RUNTIMEKINDS_H
