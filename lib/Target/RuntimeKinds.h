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

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

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

/// An elementwise op whose operands each have its result's shape or hold a
/// single element: it reads and writes element i of the full-shape ones at
/// the same offset whatever their (common) layout.
bool isLayoutAgnostic(mlir::Operation *op);

/// The operands of a layout-agnostic op that a layout applies to.
llvm::SmallVector<mlir::Value> layoutOperands(mlir::Operation *op);

/// The quantized form of hps.conv, 8-bit integers into i32, run by
/// IntegerConv.
bool isInt8Conv(hps::ConvOp conv);

/// The size of one element of `type` in the runtime's buffers (i1: a byte).
unsigned elementBytes(mlir::Type type);

/// The alignment of everything in weights.bin and a stage's arena.
constexpr uint64_t kAlignment = 64;
inline uint64_t alignUp(uint64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

/// Where --hps-plan-buffers puts an op's results in the stage's arena (one
/// byte offset per result, kNotInArena for those stored elsewhere), and the
/// arena's size on the stage function.
inline constexpr const char *kArenaOffsetsAttrName = "hpsrt.arena_offsets";
inline constexpr const char *kArenaBytesAttrName = "hpsrt.arena_bytes";
constexpr int64_t kNotInArena = -1;

/// Where --hps-pack-weights puts a weight's, constant's or static shape's
/// bytes in weights.bin, and each stage's share of it ([begin, end)).
inline constexpr const char *kWeightsOffsetAttrName = "hpsrt.weights_offset";
inline constexpr const char *kWeightsRangeAttrName = "hpsrt.weights_range";

/// Whether `weight` is trained (the parameter server serves its value).
inline bool isTrainable(hps::WeightOp weight) {
  return weight && weight->hasAttr("hps.trainable");
}

/// The layouts (#hpsrt.layout, one per result) an op's results are held in
/// when one is not plain: set by --hps-assign-layouts, read by the printer.
inline constexpr const char *kHeldLayoutsAttrName = "hpsrt.held_layouts";

/// The layout `value` (or the value it is a view of) is held in, as its
/// producer's hpsrt.held_layouts says; Plain when none.
hpsrt::Layout heldLayout(mlir::Value value);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_RUNTIMEKINDS_H
