//===- HPSOps.h - HeterPS ops -----------------------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSOPS_H
#define HETERPS_DIALECT_HPS_IR_HPSOPS_H

#include "heterps/Dialect/HPS/IR/HPSAttrs.h"
#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace heterps::hps::autodiff {
/// What a gradient rule works with (GradientRules.h).
struct Rule;
} // namespace heterps::hps::autodiff

#include "heterps/Dialect/HPS/IR/HPSInterfaces.h.inc"

#define GET_OP_CLASSES
#include "heterps/Dialect/HPS/IR/HPSOps.h.inc"

namespace heterps::hps {

/// The constant value behind `value` when it is produced by hps.constant or
/// hps.weight, else null. Weights count: their values are known at compile
/// time even though they must not fold away.
mlir::ElementsAttr getConstantValue(mlir::Value value);

/// The int64 values of a constant integer tensor, or std::nullopt.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value value);

/// True if every element of the float tensor `value` is known to be an
/// integer: rounded, converted from an integer type, or sums, differences
/// and integer-bounded clips of such (a quantized value in f32).
bool holdsIntegers(mlir::Value value);

/// The shape the operands of `value`'s op imply for it (any result, e.g.
/// each piece of an hps.split): its operand's with
/// SameOperandsAndResultShape, else the op's InferShapedTypeOpInterface rule
/// (asked without a location, so a rule that rejects the operands stays
/// silent); nullopt where an operand's rank is unknown, the operands are
/// inconsistent or the op has no such rule. Import leaves results unranked
/// where ONNX shape inference gave up (shapes computed at run time), and
/// legalization refines them with this.
std::optional<llvm::SmallVector<int64_t>> inferValueShape(mlir::Value value);

/// Set by partitioning on a training module's backward ops (the loss
/// gradient and every op after it); an evaluating run skips them.
inline constexpr const char *kBackwardAttrName = "hps.backward";
inline bool isBackward(mlir::Operation *op) {
  return op->hasAttr(kBackwardAttrName);
}

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_IR_HPSOPS_H
