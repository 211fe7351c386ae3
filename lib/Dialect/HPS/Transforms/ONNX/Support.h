//===- Support.h - Helpers shared by the layer-op patterns ------*- C++ -*-===//
//
// Schema checks and safe replacement for the linear algebra, convolution,
// pooling, data movement and value patterns.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_SUPPORT_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_SUPPORT_H

#include "../ONNXPattern.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

namespace heterps::hps {

/// Registers one (op type, opset range) pattern whose ONNX schema defines
/// exactly the attributes `known`: a node carrying any other attribute (one
/// a later opset introduced, or a misspelling) stays generic rather than
/// having it silently ignored.
void addONNXPattern(mlir::RewritePatternSet &patterns, llvm::StringRef opType,
                    int64_t minOpset, int64_t maxOpset,
                    llvm::ArrayRef<llvm::StringRef> known, ONNXRewrite rewrite);

/// The same for an op of another domain (com.microsoft).
void addDomainONNXPattern(mlir::RewritePatternSet &patterns,
                          llvm::StringRef domain, llvm::StringRef opType,
                          int64_t minOpset, int64_t maxOpset,
                          llvm::ArrayRef<llvm::StringRef> known,
                          ONNXRewrite rewrite);

/// A 0/1 attribute (ceil_mode, transA, ...); std::nullopt for other values.
std::optional<bool> getFlag(ONNXNode node, llvm::StringRef name,
                            bool fallback = false);

/// A unit attribute when `set`, else null (the hps spelling of a flag).
mlir::UnitAttr unitIf(mlir::Builder &builder, bool set);

/// True if the node's first result may be replaced by a value of `type`:
/// the same type, or (when ONNX shape inference left extents unknown) a
/// compatible one that only hps ops read; func.return needs the exact type.
bool canReplaceWithType(ONNXNode node, mlir::Type type);

/// Replaces the node's first result with `value` (a decomposition's last op)
/// if canReplaceWithType allows; fails the pattern otherwise.
mlir::LogicalResult replaceNodeWithCompatible(ONNXNode node, mlir::Value value,
                                              mlir::PatternRewriter &rewriter);

/// An ONNX axes list (an attribute or a constant input) mapped into
/// [0, rank); std::nullopt when an axis is out of range or repeated.
std::optional<llvm::SmallVector<int64_t>>
normalizeAxisList(llvm::ArrayRef<int64_t> axes, int64_t rank);

/// An hps.reshape of `value` to the static `shape`, at the node's location
/// and placement: the glue of patterns that decompose an op.
mlir::Value reshapeTo(ONNXNode node, mlir::PatternRewriter &rewriter,
                      mlir::Value value, llvm::ArrayRef<int64_t> shape);

/// Repeats every axis i of `input` (static shape) `factors[i]` times, as
/// reshape -> expand -> reshape. `outer` puts the copies outside the axis
/// (Tile), otherwise inside (each element repeated in place, as nearest
/// upsampling by whole factors does).
mlir::Value repeatAxes(ONNXNode node, mlir::PatternRewriter &rewriter,
                       mlir::Value input, llvm::ArrayRef<int64_t> factors,
                       bool outer);

/// GatherElements' semantics on static shapes: out[p] = data[p with p[axis]
/// = indices[p]] (negative indices wrapped), as one hps.gather on the
/// flattened data at constant-offset linear positions. Fails the pattern,
/// creating nothing, when gatherElementsProblem names a problem. Both are
/// defined in Indexing.cpp.
const char *gatherElementsProblem(mlir::Type data, mlir::Type indices,
                                  int64_t axis);
mlir::FailureOr<mlir::Value>
gatherElementsAlong(ONNXNode node, mlir::PatternRewriter &rewriter,
                    mlir::Value data, mlir::Value indices, int64_t axis);

/// ScatterND whose data, indices and updates are all constants (Swin's
/// shifted-window mask is built this way), folded element by element for
/// reductions none, add and mul; fails the pattern, creating nothing,
/// otherwise. Defined in Values.cpp.
mlir::LogicalResult foldConstantScatterND(ONNXNode node,
                                          mlir::PatternRewriter &rewriter);

/// A rank-0 hps.constant of `element` (integer or float) holding `value`,
/// which the broadcasting binary ops and hps.where combine with tensors.
mlir::Value scalarConstant(mlir::PatternRewriter &rewriter, mlir::Location loc,
                           mlir::Type element, double value);

/// The tensor an ONNX Constant node holds (`value`, and from opset 12
/// value_float(s) and value_int(s)); null for strings and sparse values.
mlir::ElementsAttr constantNodeValue(ONNXNode node, mlir::Builder &b);

/// The values of a non-empty constant float tensor, or std::nullopt.
std::optional<llvm::SmallVector<double>> constantFloats(mlir::Value value);

/// An hps.constant of `shape` and the float type `element` holding
/// `values`, each rounded to nearest even: the constant matrices of
/// decompositions (interpolation, DFT), computed in double.
mlir::Value denseFloatConstant(mlir::PatternRewriter &rewriter,
                               mlir::Location loc,
                               llvm::ArrayRef<int64_t> shape,
                               mlir::Type element,
                               llvm::ArrayRef<double> values);

/// True if `op` verifies. Its diagnostics are not reported; the first
/// one's text goes to `firstError` where given.
bool verifiesQuietly(mlir::Operation *op, std::string *firstError = nullptr);

/// True if the op `build` creates with the OpBuilder it is given verifies;
/// otherwise the verifier's first message goes to `why` where given. The
/// builder is detached and the probe destroyed, never inserted: a pattern
/// that fails must leave the IR as it found it.
template <typename Build>
bool probeVerifies(mlir::MLIRContext *context, Build &&build,
                   std::string *why = nullptr) {
  mlir::OpBuilder detached(context);
  mlir::Operation *probe = build(detached);
  bool valid = verifiesQuietly(probe, why);
  probe->destroy();
  return valid;
}

/// replaceNode<OpTy>, but only when the new op would verify: the node's
/// result type comes from ONNX shape inference and an attribute from the
/// model, so a mismatch (or a malformed model) leaves the node generic
/// instead of failing the pass.
template <typename OpTy, typename... Args>
mlir::LogicalResult replaceNodeChecked(ONNXNode node,
                                       mlir::PatternRewriter &rewriter,
                                       Args... args) {
  std::string why;
  if (!probeVerifies(
          rewriter.getContext(),
          [&](mlir::OpBuilder &builder) {
            return builder.create<OpTy>(node.getLoc(), node.resultType(),
                                        args...);
          },
          &why))
    return rewriter.notifyMatchFailure(node.getOp(), why);
  return replaceNode<OpTy>(node, rewriter, args...);
}

/// A generic node that a decomposition needs (Unsqueeze, Concat, Split,
/// SequenceConstruct, ...): its own pattern legalizes it once the shapes
/// of its operands are known. ONNX's rules of `opset` apply to it.
OnnxNodeOp createONNXNode(mlir::PatternRewriter &rewriter, mlir::Location loc,
                          llvm::StringRef opType, int64_t opset,
                          mlir::ValueRange inputs, mlir::TypeRange types,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

/// Copies the single block of a subgraph region before the rewriter's
/// insertion point, its arguments bound to `args`; returns what it yields.
/// Defined in ControlFlow.cpp.
llvm::SmallVector<mlir::Value> cloneSubgraph(mlir::Region &region,
                                             mlir::ValueRange args,
                                             mlir::PatternRewriter &rewriter);

/// The tensors of a sequence whose elements are known (it is a
/// SequenceConstruct node, which the sequence patterns reduce every static
/// sequence to); std::nullopt otherwise. Defined in Sequences.cpp.
std::optional<llvm::SmallVector<mlir::Value>>
sequenceElements(mlir::Value sequence);

/// Replaces every result of `op` with `values`, whose types may differ from
/// ONNX's (control flow types its results by merging iterations or
/// branches; a sequence's elements are typed by what they share): a value
/// takes the more static of both types, an Identity node bridges where it
/// cannot, and a function returning a value now more static gets that type
/// in its signature.
void replaceNodeRefining(OnnxNodeOp op, llvm::ArrayRef<mlir::Value> values,
                         mlir::PatternRewriter &rewriter);

/// Shorthand for the failure every pattern reports.
inline mlir::LogicalResult fail(ONNXNode node, mlir::PatternRewriter &rewriter,
                                const llvm::Twine &why) {
  return rewriter.notifyMatchFailure(node.getOp(), why);
}

/// Fails the pattern because what it computed (`value`, null when nothing)
/// cannot stand for the node's first result, naming both types: a model
/// whose value_info or output declares a wrong shape ends here.
mlir::LogicalResult failReplacementType(ONNXNode node, mlir::Value value,
                                        mlir::PatternRewriter &rewriter);

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNX_SUPPORT_H
