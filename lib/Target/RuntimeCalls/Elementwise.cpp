//===- Elementwise.cpp - Unary, binary, cast and where kernels ------------===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

/// Any op with a runtime UnaryKind -> hpsrt.unary.
struct UnaryCall : public RewritePattern {
  explicit UnaryCall(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::optional<RuntimeUnary> unary = runtimeUnary(op);
    if (!unary)
      return failure();
    Value x = op->getOperand(0), y = op->getResult(0);
    replaceWithKernel<hpsrt::UnaryOp>(
        rewriter, op, y.getType(), x, elementTypeOf(x), unary->kind,
        unaryParamsAttr(op->getContext(), *unary), numElementsOf(y));
    return success();
  }
};

/// Any op with a runtime BinaryKind -> hpsrt.binary; a Pow of mixed types
/// computes in a common type between casts.
struct BinaryCall : public RewritePattern {
  explicit BinaryCall(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::optional<hpsrt::BinaryKind> kind = runtimeBinary(op);
    if (!kind)
      return failure();
    Value a = op->getOperand(0), b = op->getOperand(1), y = op->getResult(0);
    if (elementTypeOf(a) == elementTypeOf(b)) {
      replaceWithKernel<hpsrt::BinaryOp>(rewriter, op, y.getType(), a, b, *kind,
                                         elementTypeOf(a), shapeOf(a),
                                         shapeOf(b), shapeOf(y));
      return success();
    }
    // Only Pow mixes types (ONNX 12+): a float base takes the exponent
    // converted to its type; an integer base is raised in f64 and the
    // result truncated back, as onnxruntime does.
    if (!isa<hps::PowOp>(op))
      return loweringError(op, "operands of different element types");
    Location loc = op->getLoc();
    bool floatBase = isa<FloatType>(elementTypeOf(a));
    Type computeType = floatBase ? elementTypeOf(a) : rewriter.getF64Type();
    auto converted = [&](Value v) -> Value {
      if (elementTypeOf(v) == computeType)
        return v;
      return rewriter.create<hpsrt::CastOp>(
          loc, RankedTensorType::get(shapeOf(v), computeType), v,
          elementTypeOf(v), computeType, numElementsOf(v));
    };
    Value lhs = converted(a), rhs = converted(b);
    auto powType = RankedTensorType::get(shapeOf(y), computeType);
    if (floatBase) {
      replaceWithKernel<hpsrt::BinaryOp>(rewriter, op, powType, lhs, rhs,
                                         hpsrt::BinaryKind::Pow, computeType,
                                         shapeOf(a), shapeOf(b), shapeOf(y));
      return success();
    }
    auto pow = rewriter.create<hpsrt::BinaryOp>(
        loc, powType, lhs, rhs, hpsrt::BinaryKind::Pow, computeType, shapeOf(a),
        shapeOf(b), shapeOf(y));
    replaceWithKernel<hpsrt::CastOp>(rewriter, op, y.getType(), pow,
                                     computeType, elementTypeOf(y),
                                     numElementsOf(y));
    return success();
  }
};

struct CastCall : public OpRewritePattern<hps::CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::CastOp cast,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::CastOp>(
        rewriter, cast, cast.getType(), cast.getInput(),
        elementTypeOf(cast.getInput()), elementTypeOf(cast.getResult()),
        numElementsOf(cast.getResult()));
    return success();
  }
};

struct WhereCall : public OpRewritePattern<hps::WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::WhereOp where,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::WhereOp>(
        rewriter, where, where.getType(), where.getCondition(), where.getX(),
        where.getY(), elementTypeOf(where.getX()),
        shapeOf(where.getCondition()), shapeOf(where.getX()),
        shapeOf(where.getY()), shapeOf(where.getResult()));
    return success();
  }
};

} // namespace

void heterps::target::populateElementwiseCallPatterns(
    RewritePatternSet &patterns) {
  patterns.add<UnaryCall, BinaryCall, CastCall, WhereCall>(
      patterns.getContext());
}
