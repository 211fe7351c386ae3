//===- LowerToRuntimeCalls.cpp - A stage's hps ops as kernel ops ----------===//
//
// Replaces every op of a prepared stage that runs a kernel by the hpsrt
// kernel op of that kernel, with the patterns of RuntimeCallPatterns.h. The
// driver is a single walk in block order rather than a greedy rewrite: each
// op has exactly one lowering, nothing is folded (a folded constant would
// have no place in weights.bin), and an op no pattern lowers gets one error
// naming it instead of a generic legalization failure.
//
//===----------------------------------------------------------------------===//

#include "../FusionRegions.h"
#include "../KernelCalls.h"
#include "RuntimeCallPatterns.h"
#include "heterps/Target/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace heterps::target {
#define GEN_PASS_DEF_HPSLOWERTORUNTIMECALLS
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

// The hps enums the runtime mirrors case for case (sameEnumerator).
#define HPS_SAME_ENUMERATOR(Enum, Name)                                        \
  static_assert(static_cast<uint32_t>(hps::Enum::Name) ==                      \
                    static_cast<uint32_t>(hpsrt::Enum::Name),                  \
                #Enum "::" #Name " differs between hps and hpsrt");
HPS_SAME_ENUMERATOR(ReduceKind, Sum)
HPS_SAME_ENUMERATOR(ReduceKind, Mean)
HPS_SAME_ENUMERATOR(ReduceKind, Max)
HPS_SAME_ENUMERATOR(ReduceKind, Min)
HPS_SAME_ENUMERATOR(ReduceKind, Prod)
HPS_SAME_ENUMERATOR(ReduceKind, L1)
HPS_SAME_ENUMERATOR(ReduceKind, L2)
HPS_SAME_ENUMERATOR(ReduceKind, LogSum)
HPS_SAME_ENUMERATOR(ReduceKind, LogSumExp)
HPS_SAME_ENUMERATOR(ReduceKind, SumSquare)
HPS_SAME_ENUMERATOR(PadMode, Constant)
HPS_SAME_ENUMERATOR(PadMode, Reflect)
HPS_SAME_ENUMERATOR(PadMode, Edge)
HPS_SAME_ENUMERATOR(ScatterReduction, None)
HPS_SAME_ENUMERATOR(ScatterReduction, Add)
HPS_SAME_ENUMERATOR(ScatterReduction, Mul)
HPS_SAME_ENUMERATOR(ScatterReduction, Max)
HPS_SAME_ENUMERATOR(ScatterReduction, Min)
HPS_SAME_ENUMERATOR(LossKind, BCE)
HPS_SAME_ENUMERATOR(LossKind, SoftmaxCE)
HPS_SAME_ENUMERATOR(LossKind, MSE)
HPS_SAME_ENUMERATOR(EmbeddingPooling, None)
HPS_SAME_ENUMERATOR(EmbeddingPooling, Sum)
HPS_SAME_ENUMERATOR(EmbeddingPooling, Mean)
#undef HPS_SAME_ENUMERATOR

//===----------------------------------------------------------------------===//
// What the patterns share
//===----------------------------------------------------------------------===//

FloatAttr heterps::target::f32Attr(MLIRContext *context, double value) {
  return FloatAttr::get(Float32Type::get(context), value);
}

hpsrt::UnaryParamsAttr
heterps::target::unaryParamsAttr(MLIRContext *context,
                                 const RuntimeUnary &unary) {
  auto f64 = [&](double value) {
    return FloatAttr::get(Float64Type::get(context), value);
  };
  return hpsrt::UnaryParamsAttr::get(context, f32Attr(context, unary.alpha),
                                     f32Attr(context, unary.beta),
                                     f64(unary.lo), f64(unary.hi));
}

hpsrt::ActivationAttr heterps::target::activationAttr(MLIRContext *context,
                                                      Operation *activation) {
  RuntimeUnary unary;
  if (activation)
    unary = *runtimeUnary(activation);
  return hpsrt::ActivationAttr::get(
      context, hpsrt::UnaryKindAttr::get(context, unary.kind),
      unaryParamsAttr(context, unary));
}

bool heterps::target::isConstantOperand(Value value) {
  if (value.getDefiningOp<ConstantOp>())
    return true;
  auto weight = value.getDefiningOp<WeightOp>();
  return weight && !isTrainable(weight);
}

hpsrt::LayoutAttr heterps::target::heldLayoutAttr(Value value) {
  return hpsrt::LayoutAttr::get(value.getContext(), heldLayout(value));
}

void heterps::target::replaceWithKernel(PatternRewriter &rewriter,
                                        Operation *op, Operation *kernel) {
  assert(kernel->getNumResults() == op->getNumResults() &&
         "a kernel op has its op's results");
  for (NamedAttribute attribute : op->getDiscardableAttrs())
    kernel->setAttr(attribute.getName(), attribute.getValue());
  rewriter.replaceOp(op, kernel->getResults());
}

InFlightDiagnostic heterps::target::loweringError(Operation *op,
                                                  const Twine &message) {
  return op->emitError() << "cannot lower to the runtime: " << message;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// Ops that stay as they are: what runs no kernel (views, weights, stage
/// inputs and outputs, the server's pushes and training pulls, which the
/// printer writes as calls of the stage's support functions) and what is
/// lowered already.
bool staysAsIs(Operation *op, bool training) {
  if (isAlias(op) ||
      isa<WeightOp, ConstantOp, ShapeOp, NoneOp, RecvOp, SendOp, PSPushOp,
          DensePushOp, func::ReturnOp, hpsrt::FusedLoopOp, hpsrt::ServerTableOp,
          hpsrt::RelayoutOp>(op))
    return true;
  if (auto pull = dyn_cast<PSPullOp>(op))
    return training && pull.getPooling() == EmbeddingPooling::None;
  return isKernelOp(op);
}

/// Every value the stage's kernels will read or write is a static tensor of
/// an element type the runtime has.
LogicalResult checkTensorTypes(Operation *op) {
  for (Value result : op->getResults()) {
    if (isa<NoneType>(result.getType()))
      continue;
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape())
      return loweringError(op, "result type ")
             << result.getType()
             << " is not static; bind symbolic input dims with --batch, "
                "--dim or --input-shape";
    if (dtypeName(type.getElementType()).empty())
      return loweringError(op, "element type ")
             << type.getElementType() << " has no runtime counterpart";
  }
  return success();
}

struct LowerToRuntimeCalls
    : public target::impl::HPSLowerToRuntimeCallsBase<LowerToRuntimeCalls> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateElementwiseCallPatterns(set);
    populateDenseCallPatterns(set);
    populateRecurrentCallPatterns(set);
    populateNormalizationCallPatterns(set);
    populateReductionCallPatterns(set);
    populateDataMovementCallPatterns(set);
    populateIndexingCallPatterns(set);
    populateSparseCallPatterns(set);
    populateLossCallPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isStageFunction(func) || func.isExternal())
      return;
    auto module = func->getParentOfType<ModuleOp>();
    bool training = module && module->hasAttr("hps.training");
    Block &block = func.getBody().front();
    WalkResult checked = block.walk([](Operation *op) {
      return failed(checkTensorTypes(op)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();

    // A pattern that fails after reporting an error stops the pass.
    unsigned errors = 0;
    ScopedDiagnosticHandler countErrors(&getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        ++errors;
      return failure(); // still reported
    });
    PatternRewriter rewriter(&getContext());
    SmallVector<Operation *> ops =
        llvm::map_to_vector(block, [](Operation &op) { return &op; });
    for (Operation *op : ops) {
      if (staysAsIs(op, training))
        continue;
      if (failed(lower(op, rewriter))) {
        if (errors == 0) {
          if (auto node = dyn_cast<OnnxNodeOp>(op))
            loweringError(op, "ONNX '")
                << node.getOpType()
                << "' stayed generic after legalization and has no kernel";
          else
            loweringError(op, "no kernel for '") << op->getName() << "'";
        }
        return signalPassFailure();
      }
    }
  }

private:
  /// Runs the first pattern for `op` that applies.
  LogicalResult lower(Operation *op, PatternRewriter &rewriter) {
    auto tryAll = [&](const auto &candidates) {
      for (const RewritePattern &pattern :
           llvm::make_pointee_range(candidates)) {
        rewriter.setInsertionPoint(op);
        if (succeeded(pattern.matchAndRewrite(op, rewriter)))
          return success();
      }
      return failure();
    };
    const auto &specific = patterns.getOpSpecificNativePatterns();
    if (auto found = specific.find(op->getName()); found != specific.end())
      if (succeeded(tryAll(found->second)))
        return success();
    SmallVector<const RewritePattern *> any = llvm::map_to_vector(
        patterns.getMatchAnyOpNativePatterns(),
        [](const RewritePattern &pattern) { return &pattern; });
    return tryAll(any);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
