//===- GradientRules.h - Reverse-mode rules of hps ops ----------*- C++ -*-===//
//
// The backward rule of every differentiable hps op, used by --hps-autodiff.
// A rule reads the forward op and the adjoints of its results and emits
// ordinary hps ops computing the adjoints of its operands, all with static
// shapes and placed on the forward op's device.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_GRADIENTRULES_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_GRADIENTRULES_H

#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace heterps::hps::autodiff {

/// Constants already emitted by the sweep, by value. Backward ops are only
/// appended, so an earlier constant dominates every later use.
using ConstantCache = llvm::DenseMap<mlir::Attribute, mlir::Value>;

/// Creates backward ops at the insertion point of `builder`, each with the
/// location and device of the forward op it derives from.
class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &builder, mlir::Location loc,
                  DeviceAttr device, ConstantCache &constants)
      : builder(builder), loc(loc), device(device), constants(constants) {}

  /// Creates a layer op through its typed builder; `args` are everything
  /// before the trailing device (result types first).
  template <typename OpTy, typename... Args> OpTy create(Args &&...args) {
    return builder.create<OpTy>(loc, std::forward<Args>(args)..., device);
  }

  /// A rank-0 constant of `elementType` that broadcasting ops stretch.
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A splat constant of `type`.
  mlir::Value splat(mlir::RankedTensorType type, double value);
  /// A constant holding `value`, shared with equal earlier ones.
  mlir::Value constant(mlir::ElementsAttr value);

  // Elementwise arithmetic with numpy broadcasting; the result takes the
  // broadcast shape and `lhs`'s element type.
  mlir::Value add(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sub(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, double rhs);
  mlir::Value neg(mlir::Value value);
  /// An i1 comparison of `OpTy` (greater, less_equal, equal...).
  template <typename OpTy>
  mlir::Value compare(mlir::Value lhs, mlir::Value rhs) {
    return create<OpTy>(compareType(lhs, rhs), lhs, rhs);
  }
  /// condition ? x : y with broadcasting.
  mlir::Value where(mlir::Value condition, mlir::Value x, mlir::Value y);
  /// An attribute-free unary op of `OpTy` with the input's type.
  template <typename OpTy> mlir::Value unary(mlir::Value input) {
    return create<OpTy>(input.getType(), input);
  }
  /// `value` converted to `elementType` (itself when it already is).
  mlir::Value cast(mlir::Value value, mlir::Type elementType);

  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::Value expand(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int64_t> perm);
  /// Reduces `value` over `axes` (normalized, sorted, non-empty).
  mlir::Value reduce(ReduceKind kind, mlir::Value value,
                     llvm::ArrayRef<int64_t> axes, bool keepdims);

  /// The heart of broadcasting rules: sums a gradient of a broadcast result
  /// back to the shape of the operand that was broadcast (leading axes and
  /// stretched size-1 axes), then reshapes it to exactly that shape.
  mlir::Value sumToShape(mlir::Value gradient, llvm::ArrayRef<int64_t> shape);

private:
  mlir::RankedTensorType compareType(mlir::Value lhs, mlir::Value rhs);

  mlir::OpBuilder &builder;
  mlir::Location loc;
  DeviceAttr device;
  ConstantCache &constants;
};

/// What a gradient rule (DifferentiableOpInterface::buildAdjoint) works
/// with: the builder, the adjoints of the op's results, and the operands
/// whose adjoints are wanted.
struct Rule {
  GradientBuilder &b;
  llvm::ArrayRef<mlir::Value> resultGrads;
  llvm::ArrayRef<bool> needed;
  llvm::SmallVectorImpl<mlir::Value> &grads;

  mlir::Value grad() const { return resultGrads[0]; }
  /// Records the adjoint of operand `i` if it is wanted; `make` runs only
  /// then, so inactive operands cost no ops.
  template <typename Fn> void set(unsigned i, Fn &&make) {
    if (needed[i])
      grads[i] = make();
  }
  /// Rank-0 constants of `like`'s element type.
  mlir::Value zero(mlir::Value like);
  mlir::Value one(mlir::Value like);
};

/// Attaches every hps op's gradient rule to it as its
/// DifferentiableOpInterface (an extension of the hps dialect).
void registerGradientRules(mlir::DialectRegistry &registry);

/// Applies the gradient rule of `op`. `resultGrads` holds the adjoint of each
/// result (null where none reached it, at least one is set); `needed` says
/// which operands are active. Fills `operandGrads` with one adjoint per
/// operand (null where not needed). Returns std::nullopt when `op` has no
/// rule; failure() when the rule rejects this instance (it has reported
/// why).
std::optional<mlir::LogicalResult>
applyGradientRule(GradientBuilder &builder, mlir::Operation *op,
                  llvm::ArrayRef<mlir::Value> resultGrads,
                  llvm::ArrayRef<bool> needed,
                  llvm::SmallVectorImpl<mlir::Value> &operandGrads);

/// The gradient of every looked-up row of `lookup` (ids.shape + [dim]) from
/// the adjoint of its (possibly pooled) result.
mlir::Value embeddingRowGradients(GradientBuilder &builder,
                                  EmbeddingLookupOp lookup,
                                  mlir::Value resultGrad);

} // namespace heterps::hps::autodiff

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_GRADIENTRULES_H
