//===- RuntimeCallPatterns.h - hps ops -> hpsrt kernel ops ------*- C++ -*-===//
//
// Private to --hps-lower-to-runtime-calls. One file per op family
// populates the patterns that replace an hps op (or a fusion region) of a
// prepared stage with the hpsrt kernel op that runs it, its attributes
// exactly the kernel's constructor parameters. A pattern that finds its op
// malformed reports one error naming it and fails; the pass stops there.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_RUNTIMECALLS_RUNTIMECALLPATTERNS_H
#define HETERPS_LIB_TARGET_RUNTIMECALLS_RUNTIMECALLPATTERNS_H

#include "../RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/PatternMatch.h"

namespace heterps::target {

void populateElementwiseCallPatterns(mlir::RewritePatternSet &patterns);
void populateDenseCallPatterns(mlir::RewritePatternSet &patterns);
void populateRecurrentCallPatterns(mlir::RewritePatternSet &patterns);
void populateNormalizationCallPatterns(mlir::RewritePatternSet &patterns);
void populateReductionCallPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementCallPatterns(mlir::RewritePatternSet &patterns);
void populateIndexingCallPatterns(mlir::RewritePatternSet &patterns);
void populateSparseCallPatterns(mlir::RewritePatternSet &patterns);
void populateLossCallPatterns(mlir::RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// What the patterns share
//===----------------------------------------------------------------------===//

/// The static shape and element type of a tensor value (the pass checked
/// every value is a static tensor before any pattern runs).
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
}
inline mlir::Type elementTypeOf(mlir::Value value) {
  return mlir::getElementTypeOrSelf(value.getType());
}
inline int64_t rankOf(mlir::Value value) {
  return static_cast<int64_t>(shapeOf(value).size());
}
inline int64_t numElementsOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType()).getNumElements();
}

/// ONNX's negative axes counted from the end.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Convolution and pooling geometry per spatial axis (`n` of them), ONNX's
/// default filled in where the attribute is absent.
inline llvm::SmallVector<int64_t> perAxis(llvm::ArrayRef<int64_t> values,
                                          size_t n, int64_t fallback) {
  llvm::SmallVector<int64_t> out(values.begin(), values.end());
  if (out.size() != n)
    out.assign(n, fallback);
  return out;
}

/// An f32 attribute (the kernels' float parameters).
mlir::FloatAttr f32Attr(mlir::MLIRContext *context, double value);

/// The activation a dense kernel applies after its op: `activation`'s
/// unary kind and parameters, Identity when null.
hpsrt::ActivationAttr activationAttr(mlir::MLIRContext *context,
                                     mlir::Operation *activation);

/// The parameters of a runtime unary kind.
hpsrt::UnaryParamsAttr unaryParamsAttr(mlir::MLIRContext *context,
                                       const RuntimeUnary &unary);

/// Whether a kernel may repack `value` once: a constant or a frozen weight
/// (trained weights change every step).
bool isConstantOperand(mlir::Value value);

/// The layout --hps-assign-layouts holds `value` in (Plain when none).
hpsrt::LayoutAttr heldLayoutAttr(mlir::Value value);

/// Replaces `op` by `kernel` (built before it): the kernel's results are
/// the op's, in order, and it keeps the op's discardable attributes
/// (hps.backward, hpsrt.held_layouts).
void replaceWithKernel(mlir::PatternRewriter &rewriter, mlir::Operation *op,
                       mlir::Operation *kernel);

/// Builds kernel op `KernelOp` before `op` at `loc` and replaces `op` by it.
template <typename KernelOp, typename... Args>
KernelOp replaceWithKernelAt(mlir::PatternRewriter &rewriter,
                             mlir::Operation *op, mlir::Location loc,
                             Args &&...args) {
  rewriter.setInsertionPoint(op);
  auto kernel = rewriter.create<KernelOp>(loc, std::forward<Args>(args)...);
  replaceWithKernel(rewriter, op, kernel);
  return kernel;
}
template <typename KernelOp, typename... Args>
KernelOp replaceWithKernel(mlir::PatternRewriter &rewriter, mlir::Operation *op,
                           Args &&...args) {
  return replaceWithKernelAt<KernelOp>(rewriter, op, op->getLoc(),
                                       std::forward<Args>(args)...);
}

/// Reports that `op` cannot run on the runtime, naming it.
mlir::InFlightDiagnostic loweringError(mlir::Operation *op,
                                       const llvm::Twine &message);

/// The hps enums the runtime mirrors case for case (checked by value in
/// RuntimeCallPatterns.cpp).
template <typename To, typename From> To sameEnumerator(From value) {
  return static_cast<To>(static_cast<uint32_t>(value));
}

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_RUNTIMECALLS_RUNTIMECALLPATTERNS_H
