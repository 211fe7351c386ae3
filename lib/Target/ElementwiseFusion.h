//===- ElementwiseFusion.h - Fused elementwise loops of a stage -*- C++ -*-===//
//
// Private to the stage code generator. Chains of elementwise ops over one
// shape (a quantized model's requantization, a decomposed activation) would
// otherwise run as one kernel per op, each reading and writing the whole
// tensor. Here they are grouped and each group is written into the stage
// program as one loop body (a functor) that the backend's forEachElement
// runs: one pass over memory, intermediates in registers.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_ELEMENTWISEFUSION_H
#define HETERPS_LIB_TARGET_ELEMENTWISEFUSION_H

#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace heterps::target {

/// Elementwise ops with one result shape that run as one loop, emitted where
/// the last of them stands (the anchor).
struct ElementGroup {
  /// In block order; ops.back() is the anchor.
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<int64_t> shape;
  /// Values the group reads from outside it, each once, in first-use order.
  llvm::SmallVector<mlir::Value> inputs;
  /// Members' results read outside the group (stored); the others live in
  /// registers only.
  llvm::SmallVector<mlir::Value> outputs;

  mlir::Operation *anchor() const { return ops.back(); }
};

/// Whether `op` computes an exact per-element function the fused loops
/// implement exactly as the runtime's kernels do (no transcendental
/// functions, whose vector kernels differ), on f32, f64, integer or bool
/// elements.
bool isFusibleElementwise(mlir::Operation *op);

/// Greedy grouping in block order: an op joins the group of an operand's
/// producer when both have the same result shape and every read of the
/// group's results from outside it comes after the op (so the whole group
/// can run at the op's place). Groups of one op are dropped: their kernel
/// runs as before. `exclude` keeps ops out (those fused into dense ops).
std::vector<ElementGroup>
formElementGroups(mlir::Block &block,
                  llvm::function_ref<bool(mlir::Operation *)> exclude);

/// The C++ of a functor `struct NAME` for the backend's forEachElement
/// (heterps/Runtime/CpuKernels.h, GpuKernels.h), whose members are the
/// pointers of the inputs without a literal and then of the outputs, in the
/// group's order. `nativeLayout`: the group's full-shape inputs and outputs
/// are in the native channel-blocked layout (kNativeChannelMultiple) and the
/// others plain. `literalOf` gives a C++ literal for a single-element input
/// or nothing.
std::string fusedLoopSource(
    const ElementGroup &group, llvm::StringRef name, bool nativeLayout,
    int64_t channelBlock,
    llvm::function_ref<std::optional<std::string>(mlir::Value)> literalOf);

/// What a stage program needs of a fused loop: its functors' source, with
/// `placeholder` where each functor's name goes, and the inputs it reads
/// through pointers (single-element constants are literals in the body).
struct FusedLoopFunctors {
  std::string source;
  /// The native layout: one functor per channel block (`placeholder`_8 and
  /// `placeholder`_16), picked at run time by the block oneDNN chose.
  bool perChannelBlock = false;
  llvm::SmallVector<mlir::Value> pointerInputs;
};

/// The functors of `group`, whose outputs are held in `outputLayout`. The
/// layout shapes the loop only where an input is broadcast (element i of a
/// full-shape operand is at offset i in any layout).
FusedLoopFunctors fusedLoopFunctors(const ElementGroup &group,
                                    hpsrt::Layout outputLayout,
                                    llvm::StringRef placeholder);

/// The runtime's BinaryKind enumerator name of an elementwise binary op
/// ("Add", "FMod", ...), or "".
llvm::StringRef runtimeBinaryKind(mlir::Operation *op);

/// Exact C++ literals of type `cpp` ("float", "int8_t", ...): a
/// hexadecimal float (finite values only), a signed or an unsigned integer.
std::string floatLiteral(double value, llvm::StringRef cpp);
std::string signedLiteral(int64_t value, llvm::StringRef cpp);
std::string unsignedLiteral(uint64_t value, llvm::StringRef cpp);

/// The C++ storage type of a supported element type ("float", "uint8_t" for
/// bool, ...), or "".
std::string cppElementType(mlir::Type type);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_ELEMENTWISEFUSION_H
