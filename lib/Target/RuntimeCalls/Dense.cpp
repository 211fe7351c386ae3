//===- Dense.cpp - Gemm, matmul, conv and their fused epilogues -----------===//
//
// A dense op alone, or an hpsrt.fused_dense region (the dense op, a conv's
// residual add, an activation), becomes one kernel op that applies the
// epilogue itself.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCallPatterns.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

/// What a dense kernel applies after its op.
struct Epilogue {
  Operation *activation = nullptr;
  Value residual; // a conv's
};

/// `dense` (possibly inside `replaced`, a fusion region) as one kernel op
/// that takes `replaced`'s place.
LogicalResult lowerDense(Operation *dense, Operation *replaced,
                         const Epilogue &epilogue, PatternRewriter &rewriter) {
  MLIRContext *context = dense->getContext();
  Location loc = dense->getLoc();
  Type resultType = replaced->getResult(0).getType();
  hpsrt::ActivationAttr act = activationAttr(context, epilogue.activation);
  rewriter.setInsertionPoint(replaced);
  auto replace = [&](Operation *kernel) {
    replaceWithKernel(rewriter, replaced, kernel);
    return success();
  };
  if (auto gemm = dyn_cast<hps::GemmOp>(dense)) {
    auto a = shapeOf(gemm.getA());
    auto b = shapeOf(gemm.getB());
    if (a.size() != 2 || b.size() != 2)
      return loweringError(dense, "gemm operands must be 2-D");
    int64_t m = gemm.getTransA() ? a[1] : a[0];
    int64_t k = gemm.getTransA() ? a[0] : a[1];
    int64_t n = gemm.getTransB() ? b[0] : b[1];
    DenseI64ArrayAttr cShape;
    if (gemm.getC())
      cShape = rewriter.getDenseI64ArrayAttr(shapeOf(gemm.getC()));
    return replace(rewriter.create<hpsrt::GemmOp>(
        loc, resultType, gemm.getA(), gemm.getB(), gemm.getC(),
        TypeAttr::get(elementTypeOf(gemm.getA())),
        rewriter.getI64IntegerAttr(m), rewriter.getI64IntegerAttr(n),
        rewriter.getI64IntegerAttr(k), rewriter.getBoolAttr(gemm.getTransA()),
        rewriter.getBoolAttr(gemm.getTransB()),
        f32Attr(context, gemm.getAlpha().convertToDouble()),
        f32Attr(context, gemm.getBeta().convertToDouble()), cShape, act,
        rewriter.getBoolAttr(isConstantOperand(gemm.getB()))));
  }
  if (auto matmul = dyn_cast<hps::MatMulOp>(dense))
    return replace(rewriter.create<hpsrt::MatMulOp>(
        loc, resultType, matmul.getA(), matmul.getB(),
        elementTypeOf(matmul.getA()), shapeOf(matmul.getA()),
        shapeOf(matmul.getB()), shapeOf(matmul.getResult()), act,
        isConstantOperand(matmul.getB())));
  auto conv = cast<hps::ConvOp>(dense);
  size_t n = rankOf(conv.getInput()) - 2;
  SmallVector<int64_t> pads(conv.getPads().begin(), conv.getPads().end());
  if (pads.size() != 2 * n)
    pads.assign(2 * n, 0);
  SmallVector<int64_t> strides = perAxis(conv.getStrides(), n, 1);
  SmallVector<int64_t> dilations = perAxis(conv.getDilations(), n, 1);
  int64_t group = std::max<int64_t>(conv.getGroup(), 1);
  hpsrt::LayoutAttr x = heldLayoutAttr(conv.getInput());
  hpsrt::LayoutAttr y = heldLayoutAttr(replaced->getResult(0));
  if (isInt8Conv(conv))
    return replace(rewriter.create<hpsrt::IntegerConvOp>(
        loc, resultType, conv.getInput(), conv.getFilter(), conv.getBias(),
        elementTypeOf(conv.getInput()), shapeOf(conv.getInput()),
        shapeOf(conv.getFilter()), bool(conv.getBias()),
        shapeOf(conv.getResult()), strides, dilations,
        ArrayRef(pads).take_front(n), ArrayRef(pads).drop_front(n), group,
        isConstantOperand(conv.getFilter()),
        hpsrt::ConvLayoutsAttr::get(context, x, y)));
  auto options = hpsrt::ConvOptionsAttr::get(
      context, x, y, rewriter.getBoolAttr(bool(epilogue.residual)),
      rewriter.getBoolAttr(conv.getExact()));
  return replace(rewriter.create<hpsrt::ConvOp>(
      loc, resultType, conv.getInput(), conv.getFilter(), conv.getBias(),
      epilogue.residual, elementTypeOf(conv.getInput()),
      shapeOf(conv.getInput()), shapeOf(conv.getFilter()), bool(conv.getBias()),
      shapeOf(conv.getResult()), strides, dilations,
      ArrayRef(pads).take_front(n), ArrayRef(pads).drop_front(n), group, act,
      isConstantOperand(conv.getFilter()), options));
}

template <typename DenseOp>
struct DenseCall : public OpRewritePattern<DenseOp> {
  using OpRewritePattern<DenseOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(DenseOp op,
                                PatternRewriter &rewriter) const override {
    return lowerDense(op, op, Epilogue(), rewriter);
  }
};

struct FusedDenseCall : public OpRewritePattern<hpsrt::FusedDenseOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hpsrt::FusedDenseOp fusion,
                                PatternRewriter &rewriter) const override {
    auto body = fusion.getBody().front().without_terminator();
    Operation *dense = &*body.begin();
    Epilogue epilogue;
    for (Operation &fused : llvm::drop_begin(body)) {
      auto add = dyn_cast<hps::AddOp>(fused);
      if (add && isa<hps::ConvOp>(dense)) {
        Value result = dense->getResult(0);
        epilogue.residual =
            add.getLhs() == result ? add.getRhs() : add.getLhs();
      } else if (!runtimeUnary(&fused) || isa<hps::NotOp>(fused)) {
        return loweringError(&fused, "no activation the dense kernels apply");
      } else {
        epilogue.activation = &fused;
      }
    }
    return lowerDense(dense, fusion, epilogue, rewriter);
  }
};

/// The adjoints of a conv carry its geometry, so the kernels take the
/// forward shapes: x, filter and y (the gradient's shape).
template <typename AdjointOp>
struct ConvAdjointCall : public OpRewritePattern<AdjointOp> {
  using OpRewritePattern<AdjointOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(AdjointOp adjoint,
                                PatternRewriter &rewriter) const override {
    constexpr bool input = std::is_same_v<AdjointOp, hps::ConvGradInputOp>;
    Value x, w, dy = adjoint.getGrad();
    if constexpr (input) {
      x = adjoint.getResult();
      w = adjoint.getFilter();
    } else {
      x = adjoint.getInput();
      w = adjoint.getResult();
    }
    size_t n = rankOf(x) - 2;
    ArrayRef<int64_t> pads = adjoint.getPads();
    auto layouts = hpsrt::ConvLayoutsAttr::get(
        adjoint.getContext(), heldLayoutAttr(x), heldLayoutAttr(dy));
    if constexpr (input)
      replaceWithKernel<hpsrt::ConvGradInputOp>(
          rewriter, adjoint, x.getType(), dy, w, elementTypeOf(dy), shapeOf(x),
          shapeOf(w), shapeOf(dy), adjoint.getStrides(), adjoint.getDilations(),
          pads.take_front(n), pads.drop_front(n), adjoint.getGroup(), layouts);
    else
      replaceWithKernel<hpsrt::ConvGradFilterOp>(
          rewriter, adjoint, w.getType(), x, dy, elementTypeOf(dy), shapeOf(x),
          shapeOf(w), shapeOf(dy), adjoint.getStrides(), adjoint.getDilations(),
          pads.take_front(n), pads.drop_front(n), adjoint.getGroup(), layouts);
    return success();
  }
};

struct DeterminantCall : public OpRewritePattern<hps::DeterminantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::DeterminantOp det,
                                PatternRewriter &rewriter) const override {
    replaceWithKernel<hpsrt::DeterminantOp>(
        rewriter, det, det.getType(), det.getInput(),
        elementTypeOf(det.getInput()), numElementsOf(det.getResult()),
        shapeOf(det.getInput()).back());
    return success();
  }
};

} // namespace

void heterps::target::populateDenseCallPatterns(RewritePatternSet &patterns) {
  patterns.add<DenseCall<hps::GemmOp>, DenseCall<hps::MatMulOp>,
               DenseCall<hps::ConvOp>, FusedDenseCall,
               ConvAdjointCall<hps::ConvGradInputOp>,
               ConvAdjointCall<hps::ConvGradFilterOp>, DeterminantCall>(
      patterns.getContext());
}
