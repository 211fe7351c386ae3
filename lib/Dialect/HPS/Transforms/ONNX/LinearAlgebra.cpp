//===- LinearAlgebra.cpp - Gemm and MatMul --------------------------------===//
//
// Gemm-6: C broadcast only with broadcast=1; Gemm-7: C required,
// unidirectionally broadcast to (M, N); Gemm-9: more element types; Gemm-11: C
// optional. MatMul only widened its types (MatMul-9, -13), so one pattern
// covers opsets 7-17.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Gemm: Y = alpha * op(A) op(B) + beta * C with A and B 2-D. Before opset 11
/// a node without C is malformed and stays generic.
LogicalResult legalizeGemm(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getOpset() < 11 && !node.input(2))
    return fail(node, rewriter, "C is required before opset 11");
  std::optional<bool> transA = getFlag(node, "transA");
  std::optional<bool> transB = getFlag(node, "transB");
  if (!transA || !transB)
    return fail(node, rewriter, "transA/transB must be 0 or 1");
  return replaceNodeChecked<GemmOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getF32FloatAttr(node.getFloat("alpha", 1.0f)),
      rewriter.getF32FloatAttr(node.getFloat("beta", 1.0f)),
      unitIf(rewriter, *transA), unitIf(rewriter, *transB), DeviceAttr());
}

/// numpy matmul; hps.matmul shares its 1-D promotion and batch broadcasting.
LogicalResult legalizeMatMul(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNodeChecked<MatMulOp>(node, rewriter, node.input(0),
                                      node.input(1), DeviceAttr());
}

} // namespace

void populateLinearAlgebraPatterns(RewritePatternSet &patterns) {
  static constexpr StringRef kGemmAttrs[] = {"alpha", "beta", "transA",
                                             "transB"};
  // Gemm-6 broadcasts C only with broadcast=1 (else C is (M, N)): both are
  // cases of Gemm-7's unidirectional broadcast.
  static constexpr StringRef kGemm6Attrs[] = {"alpha", "beta", "broadcast",
                                              "transA", "transB"};
  addONNXPattern(patterns, "Gemm", 6, 6, kGemm6Attrs, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 7, 8, kGemmAttrs, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 9, 10, kGemmAttrs, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 11, kMaxOpset, kGemmAttrs, legalizeGemm);
  addONNXPattern(patterns, "MatMul", kMinOpset, kMaxOpset, {}, legalizeMatMul);
}

} // namespace heterps::hps
