//===- ONNXPattern.h - Building blocks of ONNX legalization -----*- C++ -*-===//
//
// Each ONNX op is legalized by small patterns, one per (op type, opset range),
// registered by the populate functions below (one file per op family).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNXPATTERN_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNXPATTERN_H

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/IR/ONNXOpsets.h"

#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace heterps::hps {

constexpr int64_t kMinOpset = kMinONNXOpset;
constexpr int64_t kMaxOpset = kMaxONNXOpset;

/// Read access to an hps.onnx_node in ONNX terms: attributes with their
/// defaults, optional inputs, result types.
class ONNXNode {
public:
  explicit ONNXNode(OnnxNodeOp op) : op(op) {}

  OnnxNodeOp getOp() const { return op; }
  mlir::Location getLoc() const { return op.getLoc(); }
  int64_t getOpset() const { return op.getOpset(); }

  /// The i-th input, or null when it is absent or omitted (hps.none).
  mlir::Value input(unsigned i) const;
  unsigned numInputs() const { return op.getInputs().size(); }
  mlir::Value result(unsigned i = 0) const { return op.getResult(i); }
  mlir::Type resultType(unsigned i = 0) const {
    return op.getResult(i).getType();
  }
  /// True when result i exists and something reads it.
  bool isResultUsed(unsigned i) const {
    return i < op.getNumResults() && !op.getResult(i).use_empty();
  }

  bool hasAttr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t fallback) const;
  float getFloat(llvm::StringRef name, float fallback) const;
  std::string getString(llvm::StringRef name, llvm::StringRef fallback) const;
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name) const;
  mlir::Attribute getAttr(llvm::StringRef name) const;
  /// The axis attribute `name` (default `fallback`) mapped into [0, rank),
  /// or std::nullopt when out of range.
  std::optional<int64_t> getAxis(llvm::StringRef name, int64_t fallback,
                                 int64_t rank) const;

private:
  mutable OnnxNodeOp op;
};

/// A pattern body: rewrites the node or fails to leave it generic.
using ONNXRewrite =
    std::function<mlir::LogicalResult(ONNXNode, mlir::PatternRewriter &)>;

/// Matches hps.onnx_node ops of one op type in one domain ("" for the
/// default ONNX domain) whose opset lies in [minOpset, maxOpset].
class ONNXPattern : public mlir::OpRewritePattern<OnnxNodeOp> {
public:
  ONNXPattern(mlir::MLIRContext *context, llvm::StringRef opType,
              int64_t minOpset, int64_t maxOpset, ONNXRewrite rewrite,
              llvm::StringRef domain = "");

  mlir::LogicalResult
  matchAndRewrite(OnnxNodeOp op, mlir::PatternRewriter &rewriter) const final;

private:
  std::string opType, domain;
  int64_t minOpset, maxOpset;
  ONNXRewrite rewrite;
};

/// Registers one (op type, opset range) pattern.
void addONNXPattern(mlir::RewritePatternSet &patterns, llvm::StringRef opType,
                    int64_t minOpset, int64_t maxOpset, ONNXRewrite rewrite);

/// Registers one pattern for an op of another domain (com.microsoft).
void addDomainONNXPattern(mlir::RewritePatternSet &patterns,
                          llvm::StringRef domain, llvm::StringRef opType,
                          int64_t minOpset, int64_t maxOpset,
                          ONNXRewrite rewrite);

/// Replaces the node's first result with `value` and erases the node.
void replaceNodeWith(ONNXNode node, mlir::Value value,
                     mlir::PatternRewriter &rewriter);

/// Replaces the node's first result with a new op of type OpTy, carrying the
/// node's placement, and erases the node (whose other results must be
/// unused). Returns the new op.
template <typename OpTy, typename... Args>
mlir::FailureOr<OpTy> replaceNodeWithOp(ONNXNode node,
                                        mlir::PatternRewriter &rewriter,
                                        Args &&...args) {
  for (unsigned i = 1; i < node.getOp().getNumResults(); ++i)
    if (node.isResultUsed(i))
      return rewriter.notifyMatchFailure(node.getOp(),
                                         "a secondary output is used");
  auto op = rewriter.create<OpTy>(node.getLoc(), node.resultType(),
                                  std::forward<Args>(args)...);
  if (DeviceAttr device = node.getOp().getDeviceAttr())
    op.setDeviceAttr(device);
  replaceNodeWith(node, op.getResult(), rewriter);
  return op;
}

/// replaceNodeWithOp for patterns that need not see the new op.
template <typename OpTy, typename... Args>
mlir::LogicalResult replaceNode(ONNXNode node, mlir::PatternRewriter &rewriter,
                                Args &&...args) {
  return mlir::success(succeeded(
      replaceNodeWithOp<OpTy>(node, rewriter, std::forward<Args>(args)...)));
}

/// The value of a constant tensor with a single element (or a splat), as a
/// double; std::nullopt when it is not a known constant.
std::optional<double> getConstantScalar(mlir::Value value);

/// A scalar attribute of `elementType` holding `value` (integer or float).
mlir::TypedAttr makeScalarAttr(mlir::Type elementType, double value);

/// The ranked shape of a value, or std::nullopt.
std::optional<llvm::ArrayRef<int64_t>> rankedShape(mlir::Value value);

// One function per op family, each in ONNX/<Family>.cpp.
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateLinearAlgebraPatterns(mlir::RewritePatternSet &patterns);
void populateConvolutionPatterns(mlir::RewritePatternSet &patterns);
void populatePoolingPatterns(mlir::RewritePatternSet &patterns);
void populateNormalizationPatterns(mlir::RewritePatternSet &patterns);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns);
void populateResizePatterns(mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(mlir::RewritePatternSet &patterns);
void populateLossPatterns(mlir::RewritePatternSet &patterns);
void populateElementaryFunctionPatterns(mlir::RewritePatternSet &patterns);
/// Sequences of at most `unrollLimit` steps unroll; longer ones become
/// hps.recurrence.
void populateRecurrentPatterns(mlir::RewritePatternSet &patterns,
                               int64_t unrollLimit);
void populateValuePatterns(mlir::RewritePatternSet &patterns);
void populateQuantizationPatterns(mlir::RewritePatternSet &patterns);
void populateQuantizedLinearPatterns(mlir::RewritePatternSet &patterns);
void populateMicrosoftQuantizedPatterns(mlir::RewritePatternSet &patterns);
void populateGridSamplePatterns(mlir::RewritePatternSet &patterns);
void populateRoiAlignPatterns(mlir::RewritePatternSet &patterns);
void populateSignalProcessingPatterns(mlir::RewritePatternSet &patterns);
void populateControlFlowPatterns(mlir::RewritePatternSet &patterns);
void populateSequencePatterns(mlir::RewritePatternSet &patterns);
void populateAttentionPatterns(mlir::RewritePatternSet &patterns);
/// Which forms of the ops whose extent depends on the data to legalize.
enum class DataDependentForms {
  /// Only exact results of constant operands (and Compress by a constant
  /// condition); the others wait until every value that can fold has.
  ConstantOnly,
  /// Those, else the capacity form with a count.
  WithCapacity,
};
void populateDataDependentPatterns(mlir::RewritePatternSet &patterns,
                                   DataDependentForms forms);
void populatePreviewTrainingPatterns(mlir::RewritePatternSet &patterns);
/// Why an If, Loop or Scan node (or a sequence) cannot be resolved at
/// compile time, for the strict pass's error; std::nullopt for other nodes.
std::optional<std::string> explainControlFlow(OnnxNodeOp op);

/// Why a data-movement node the patterns left stays (a Reshape to another
/// element count), or std::nullopt. Defined in ONNX/DataMovement.cpp.
std::optional<std::string> explainDataMovement(OnnxNodeOp op);

/// Why a ConstantOfShape or Range the patterns left stays (too many
/// elements to fold), or std::nullopt. Defined in ONNX/Values.cpp.
std::optional<std::string> explainValues(OnnxNodeOp op);
/// Not per op: recognises decomposed layers (LayerNorm, GELU) in hps ops.
void populateFusionPatterns(mlir::RewritePatternSet &patterns);
/// Not per op, and applied before all others: rewrites the quantized node
/// units of QDQ-format models into the integer ONNX ops they stand for.
void populateQDQFusionPatterns(mlir::RewritePatternSet &patterns);

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_ONNXPATTERN_H
