//===- LegalizeONNX.cpp - hps.onnx_node -> hps layer ops ------------------===//

#include "ONNXPattern.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSLEGALIZEONNX
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

/// The shape an hps op's semantics give its (single) result, when ONNX
/// shape inference left it unranked but the operands are ranked; exporters
/// emit models whose per-node type checks fail (a float Equal at opset 10)
/// and ONNX then types nothing downstream.
std::optional<SmallVector<int64_t>> inferResultShape(Operation *op) {
  auto shapeOf = [](Value v) { return rankedShape(v); };
  if (op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
      isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, BatchNormOp>(op)) {
    if (auto s = shapeOf(op->getOperand(0)))
      return SmallVector<int64_t>(*s);
    return std::nullopt;
  }
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, AndOp, OrOp,
          XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
          WhereOp>(op)) {
    std::optional<SmallVector<int64_t>> shape = SmallVector<int64_t>{};
    for (Value operand : op->getOperands()) {
      auto s = shapeOf(operand);
      if (!s || !shape)
        return std::nullopt;
      shape = shapes::broadcast(*shape, *s);
    }
    return shape;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    auto s = shapeOf(slice.getInput());
    if (!s)
      return std::nullopt;
    SmallVector<int64_t> shape(*s);
    for (auto [i, axis] : llvm::enumerate(slice.getAxes())) {
      auto a = shapes::normalizeAxis(axis, shape.size());
      if (!a)
        return std::nullopt;
      if (shape[*a] != ShapedType::kDynamic)
        shape[*a] = shapes::sliceCount(shape[*a], slice.getStarts()[i],
                                       slice.getEnds()[i], slice.getSteps()[i]);
    }
    return shape;
  }
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    auto a = shapeOf(matmul.getA()), b = shapeOf(matmul.getB());
    if (!a || !b || a->empty() || b->empty())
      return std::nullopt;
    SmallVector<int64_t> lhs(*a), rhs(*b);
    if (lhs.size() == 1)
      lhs.insert(lhs.begin(), 1);
    if (rhs.size() == 1)
      rhs.push_back(1);
    auto shape = shapes::broadcast(ArrayRef(lhs).drop_back(2),
                                   ArrayRef(rhs).drop_back(2));
    if (!shape)
      return std::nullopt;
    if (a->size() > 1)
      shape->push_back(lhs[lhs.size() - 2]);
    if (b->size() > 1)
      shape->push_back(rhs.back());
    return shape;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    auto s = shapeOf(reduce.getInput());
    if (!s)
      return std::nullopt;
    SmallVector<bool> reduced(s->size(), reduce.getAxes().empty());
    for (int64_t axis : reduce.getAxes()) {
      auto a = shapes::normalizeAxis(axis, s->size());
      if (!a)
        return std::nullopt;
      reduced[*a] = true;
    }
    SmallVector<int64_t> shape;
    for (auto [dim, gone] : llvm::zip(*s, reduced))
      if (!gone)
        shape.push_back(dim);
      else if (reduce.getKeepdims())
        shape.push_back(1);
    return shape;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    if (auto s = shapeOf(reshape.getInput()))
      return shapes::reshape(*s, reshape.getShape(), reshape.getAllowzero());
  if (auto transpose = dyn_cast<TransposeOp>(op))
    if (auto s = shapeOf(transpose.getInput())) {
      SmallVector<int64_t> shape;
      for (int64_t p : transpose.getPerm())
        shape.push_back((*s)[p]);
      return shape;
    }
  return std::nullopt;
}

/// Gives unranked results of hps layer ops the shape their operands imply.
/// Results that func.return reads keep their type (it must match the
/// signature). Returns true if any type changed.
bool refineResultTypes(ModuleOp module) {
  bool changed = false;
  module.walk([&](Operation *op) {
    if (op->getNumResults() != 1 || isa<OnnxNodeOp>(op) ||
        !isa<PlacedOpInterface>(op))
      return;
    Value result = op->getResult(0);
    auto unranked = dyn_cast<UnrankedTensorType>(result.getType());
    if (!unranked || llvm::any_of(result.getUsers(), [](Operation *user) {
          return isa<func::ReturnOp>(user);
        }))
      return;
    std::optional<SmallVector<int64_t>> shape = inferResultShape(op);
    if (!shape)
      return;
    result.setType(RankedTensorType::get(*shape, unranked.getElementType()));
    changed = true;
  });
  return changed;
}

/// Results that func.return reads get the more static type their operands
/// imply (a symbolic batch bound at import), and the signature follows: a
/// refinement, never a change of rank or of a static extent.
void refineReturnedTypes(ModuleOp module) {
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    bool changed = false;
    for (Value value : ret.getOperands()) {
      Operation *op = value.getDefiningOp();
      auto current = dyn_cast<ShapedType>(value.getType());
      if (!op || op->getNumResults() != 1 || isa<OnnxNodeOp>(op) ||
          !isa<PlacedOpInterface>(op) || !current ||
          (current.hasRank() && current.hasStaticShape()))
        continue;
      std::optional<SmallVector<int64_t>> shape = inferResultShape(op);
      if (!shape || llvm::any_of(*shape, ShapedType::isDynamic))
        continue;
      if (current.hasRank()) {
        if (current.getRank() != static_cast<int64_t>(shape->size()))
          continue;
        bool compatible = true;
        for (auto [have, want] : llvm::zip(current.getShape(), *shape))
          compatible &= ShapedType::isDynamic(have) || have == want;
        if (!compatible)
          continue;
      }
      value.setType(RankedTensorType::get(*shape, current.getElementType()));
      changed = true;
    }
    if (changed)
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
  });
}

struct LegalizeONNXPass
    : public heterps::hps::impl::HPSLegalizeONNXBase<LegalizeONNXPass> {
  using HPSLegalizeONNXBase::HPSLegalizeONNXBase;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateElementwisePatterns(set);
    populateLinearAlgebraPatterns(set);
    populateConvolutionPatterns(set);
    populatePoolingPatterns(set);
    populateNormalizationPatterns(set);
    populateReductionPatterns(set);
    populateDataMovementPatterns(set);
    populateValuePatterns(set);
    populateFusionPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    // Shape chains can be long (transformer exports); let the driver
    // iterate until nothing changes.
    config.maxIterations = GreedyRewriteConfig::kNoLimit;
    // Refining a result type can enable patterns that need ranks (the
    // pre-13 Softmax), so alternate until neither changes anything.
    do {
      if (failed(
              applyPatternsAndFoldGreedily(getOperation(), patterns, config)))
        return signalPassFailure();
    } while (refineResultTypes(getOperation()));
    refineReturnedTypes(getOperation());

    // Omitted-input markers nobody reads any more.
    getOperation().walk([](NoneOp op) {
      if (op->use_empty())
        op->erase();
    });

    if (!strict)
      return;
    bool failedAny = false;
    getOperation().walk([&](OnnxNodeOp node) {
      node.emitError() << "no legalization for ONNX op '" << node.getOpType()
                       << "' (domain '" << node.getDomain() << "', opset "
                       << node.getOpset() << ") with these attributes";
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};
} // namespace
