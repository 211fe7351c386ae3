//===- LinearAlgebra.cpp - Gemm and MatMul --------------------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Gemm: C is required and unidirectionally broadcast before opset 11,
/// optional after; both map to hps.gemm with an optional C.
LogicalResult legalizeGemm(ONNXNode node, PatternRewriter &rewriter) {
  UnitAttr transA =
      node.getInt("transA", 0) ? rewriter.getUnitAttr() : UnitAttr();
  UnitAttr transB =
      node.getInt("transB", 0) ? rewriter.getUnitAttr() : UnitAttr();
  return replaceNode<GemmOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getF32FloatAttr(node.getFloat("alpha", 1.0f)),
      rewriter.getF32FloatAttr(node.getFloat("beta", 1.0f)), transA, transB,
      DeviceAttr());
}

LogicalResult legalizeMatMul(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNode<MatMulOp>(node, rewriter, node.input(0), node.input(1),
                               DeviceAttr());
}

} // namespace

void populateLinearAlgebraPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "Gemm", kMinOpset, 10, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 11, kMaxOpset, legalizeGemm);
  addONNXPattern(patterns, "MatMul", kMinOpset, kMaxOpset, legalizeMatMul);
}

} // namespace heterps::hps
