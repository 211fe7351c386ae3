//===- LegalizeONNX.cpp - hps.onnx_node -> hps layer ops ------------------===//

#include "ONNXPattern.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/Rewrite/PatternApplicator.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSLEGALIZEONNX
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

/// The type of `value` with the more static shape its defining hps layer op
/// implies: a refinement only (unranked to ranked, or dynamic extents to
/// static ones), never a change of rank or of a static extent.
std::optional<RankedTensorType> refinedType(Value value) {
  Operation *op = value.getDefiningOp();
  auto current = dyn_cast<ShapedType>(value.getType());
  if (!op || isa<OnnxNodeOp>(op) || !isa<PlacedOpInterface>(op) || !current ||
      (current.hasRank() && current.hasStaticShape()))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> shape = inferValueShape(value);
  if (!shape)
    return std::nullopt;
  if (current.hasRank()) {
    if (current.getRank() != static_cast<int64_t>(shape->size()))
      return std::nullopt;
    bool gained = false;
    for (auto [have, want] : llvm::zip(current.getShape(), *shape)) {
      if (!ShapedType::isDynamic(have) && have != want)
        return std::nullopt;
      gained |= ShapedType::isDynamic(have) && !ShapedType::isDynamic(want);
    }
    if (!gained)
      return std::nullopt;
  }
  return RankedTensorType::get(*shape, current.getElementType());
}

bool isReturned(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    return isa<func::ReturnOp>(user);
  });
}

/// Gives results of hps layer ops the more static shape their operands
/// imply. Exporters emit models whose per-node type checks fail (a float
/// Equal at opset 10) or whose shapes are computed at run time (a channel
/// shuffle's Reshape, a ViT's class token Expand), and ONNX then types
/// nothing downstream. Results that func.return reads keep their type here
/// (it must match the signature; see refineReturnedTypes). Returns true if
/// any type changed.
bool refineResultTypes(ModuleOp module) {
  bool changed = false;
  module.walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      if (isReturned(result))
        continue;
      if (std::optional<RankedTensorType> type = refinedType(result)) {
        result.setType(*type);
        changed = true;
      }
    }
  });
  return changed;
}

/// Results that func.return reads get the static type their operands imply
/// (a symbolic batch bound at import), and the signature follows. Returns
/// true if any type changed.
bool refineReturnedTypes(ModuleOp module) {
  bool refined = false;
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    bool changed = false;
    for (Value value : ret.getOperands()) {
      std::optional<RankedTensorType> type = refinedType(value);
      if (!type || !type->hasStaticShape())
        continue;
      value.setType(*type);
      changed = true;
    }
    if (changed)
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    refined |= changed;
  });
  return refined;
}

/// The results of a node whose extent depends on the data (NonZero's,
/// Unique's, ...) while it is still ONNX.
SmallVector<Value> dataDependentResults(OnnxNodeOp node) {
  SmallVector<Value> results;
  if (!node.getDomain().empty())
    return results;
  StringRef type = node.getOpType();
  if (type == "NonZero" || type == "NonMaxSuppression" ||
      (type == "Compress" && node.getInputs().size() > 1 &&
       !getConstantValue(node.getInputs()[1])))
    results.push_back(node.getResult(0));
  else if (type == "Unique")
    for (unsigned i : {0u, 1u, 3u})
      if (i < node.getNumResults())
        results.push_back(node.getResult(i));
  return results;
}

/// Calls `visit(value, source)` for every value computed, directly or
/// through other ops, from a data-dependent result of an ONNX node
/// `source`, and `read(user, source)` for every op reading one; stops at
/// the first `read` that fails.
LogicalResult forEachDataDependentValue(
    ModuleOp module, function_ref<void(Value)> visit,
    function_ref<LogicalResult(Operation *, OnnxNodeOp)> read) {
  // (tainted value, the data-dependent node it comes from)
  SmallVector<std::pair<Value, OnnxNodeOp>> work;
  module.walk([&](OnnxNodeOp node) {
    for (Value result : dataDependentResults(node))
      work.push_back({result, node});
  });
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    auto [value, source] = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    visit(value);
    for (Operation *user : value.getUsers()) {
      if (failed(read(user, source)))
        return failure();
      for (Value result : user->getResults())
        work.push_back({result, source});
    }
  }
  return success();
}

/// Forgets the extents declared for data-dependent values and for what ONNX
/// computed from them (ONNX's test models declare this run's): nothing may
/// read them as static until their producer folds on constants or takes
/// its capacity form.
void forgetDataDependentExtents(ModuleOp module) {
  (void)forEachDataDependentValue(
      module,
      [](Value value) {
        if (auto type = dyn_cast<RankedTensorType>(value.getType()))
          value.setType(RankedTensorType::get(
              SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic),
              type.getElementType()));
      },
      [](Operation *, OnnxNodeOp) { return success(); });
  module.walk([](func::FuncOp func) {
    if (func.isExternal())
      return;
    Operation *ret = func.getBody().back().getTerminator();
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), ret->getOperandTypes()));
  });
}

/// Once every value that can fold has, Shape and Size of a value whose
/// extent still depends on the data would fold to its capacity after the
/// producer is legalized, so they are refused.
LogicalResult refuseDataDependentShapes(ModuleOp module) {
  return forEachDataDependentValue(
      module, [](Value) {},
      [](Operation *user, OnnxNodeOp source) -> LogicalResult {
        StringRef reader;
        if (auto node = dyn_cast<OnnxNodeOp>(user)) {
          if (node.getOpType() == "Shape" || node.getOpType() == "Size")
            reader = node.getOpType();
        } else if (isa<ShapeOp>(user)) {
          reader = "Shape";
        }
        if (reader.empty())
          return success();
        return user->emitError()
               << "ONNX '" << reader
               << "' reads the extent of a value that depends on the data "
                  "(from '"
               << source.getOpType()
               << "'); HeterPS plans static shapes and supports such values "
                  "only as they flow position by position to the outputs";
      });
}

/// Why the patterns of `node`'s op type and opset turn it down, as they
/// said it with notifyMatchFailure, "; "-joined; empty if none said. The
/// patterns are at their fixpoint, so trying them again changes nothing.
std::string patternFailureReasons(OnnxNodeOp node,
                                  const FrozenRewritePatternSet &patterns) {
  struct Collector : public RewriterBase::Listener {
    std::string reasons;
    void notifyMatchFailure(Location loc,
                            function_ref<void(Diagnostic &)> reason) override {
      Diagnostic diag(loc, DiagnosticSeverity::Remark);
      reason(diag);
      std::string text = diag.str();
      // A verifier's message starts with the hps op's name ("'hps.conv'
      // op "), which the user never wrote.
      if (StringRef(text).starts_with("'hps.")) {
        size_t end = text.find("' op ");
        if (end != std::string::npos)
          text = text.substr(end + 5);
      }
      if (!text.empty() && reasons.find(text) == std::string::npos)
        reasons += (reasons.empty() ? "" : "; ") + text;
    }
  } collector;
  PatternRewriter rewriter(node.getContext());
  rewriter.setListener(&collector);
  rewriter.setInsertionPoint(node);
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  (void)applicator.matchAndRewrite(node, rewriter);
  return collector.reasons;
}

struct LegalizeONNXPass
    : public heterps::hps::impl::HPSLegalizeONNXBase<LegalizeONNXPass> {
  using HPSLegalizeONNXBase::HPSLegalizeONNXBase;

  LogicalResult initialize(MLIRContext *context) override {
    // The same patterns twice: first with the data-dependent ops folding on
    // constants only, then with their capacity forms (see runOnOperation).
    for (DataDependentForms forms :
         {DataDependentForms::ConstantOnly, DataDependentForms::WithCapacity}) {
      RewritePatternSet set(context);
      populateElementwisePatterns(set);
      populateLinearAlgebraPatterns(set);
      populateConvolutionPatterns(set);
      populatePoolingPatterns(set);
      populateNormalizationPatterns(set);
      populateReductionPatterns(set);
      populateDataMovementPatterns(set);
      populateResizePatterns(set);
      populateIndexingPatterns(set);
      populateLossPatterns(set);
      populateElementaryFunctionPatterns(set);
      populateRecurrentPatterns(set, recurrenceUnrollLimit);
      populateValuePatterns(set);
      populateQuantizationPatterns(set);
      populateQuantizedLinearPatterns(set);
      populateMicrosoftQuantizedPatterns(set);
      populateGridSamplePatterns(set);
      populateRoiAlignPatterns(set);
      populateSignalProcessingPatterns(set);
      populateControlFlowPatterns(set);
      populateSequencePatterns(set);
      populateAttentionPatterns(set);
      populateDataDependentPatterns(set, forms);
      populatePreviewTrainingPatterns(set);
      populateFusionPatterns(set);
      (forms == DataDependentForms::ConstantOnly ? constantFolding : patterns) =
          FrozenRewritePatternSet(std::move(set));
    }
    RewritePatternSet units(context);
    populateQDQFusionPatterns(units);
    quantizedUnits = FrozenRewritePatternSet(std::move(units));
    return success();
  }

  /// Applies `set` until neither it nor type refinement changes anything.
  LogicalResult legalizeToFixpoint(const FrozenRewritePatternSet &set) {
    GreedyRewriteConfig config;
    // Shape chains can be long (transformer exports); let the driver
    // iterate until nothing changes.
    config.maxIterations = GreedyRewriteConfig::kNoLimit;
    // Refining a result type can enable patterns that need ranks (the
    // pre-13 Softmax), so alternate until neither changes anything. A
    // returned value may feed other ops too (an unrolled loop's state is
    // both the loop's result and the next step's input), so the signature
    // is refined in the same loop.
    bool refined;
    do {
      if (failed(applyPatternsAndFoldGreedily(getOperation(), set, config)))
        return failure();
      refined = refineResultTypes(getOperation());
      refined |= refineReturnedTypes(getOperation());
    } while (refined);
    return success();
  }

  void runOnOperation() override {
    forgetDataDependentExtents(getOperation());
    GreedyRewriteConfig config;
    config.maxIterations = GreedyRewriteConfig::kNoLimit;
    // Before any node of a unit is legalized on its own.
    if (failed(applyPatternsAndFoldGreedily(getOperation(), quantizedUnits,
                                            config)))
      return signalPassFailure();
    // A data-dependent op whose operands are constant once the input shapes
    // are bound (a transformer's mask from NonZero(ConstantOfShape(Shape)))
    // folds to its exact result; only after everything that can fold has is
    // it known which ones stay data-dependent and who reads their extents.
    if (failed(legalizeToFixpoint(constantFolding)) ||
        failed(refuseDataDependentShapes(getOperation())) ||
        failed(legalizeToFixpoint(patterns)))
      return signalPassFailure();

    // Omitted-input markers nobody reads any more.
    getOperation().walk([](NoneOp op) {
      if (op->use_empty())
        op->erase();
    });

    if (!strict)
      return;
    // One error per op type, at its first node; a model with a missing op
    // has it everywhere (a transformer's attention in every layer).
    llvm::MapVector<StringRef, SmallVector<OnnxNodeOp>> unlegalized;
    getOperation().walk([&](OnnxNodeOp node) {
      // Nodes of a subgraph wait for their If, Loop or Scan, which is
      // reported with the reason it stays.
      if (!node->getParentOfType<OnnxNodeOp>())
        unlegalized[node.getOpType()].push_back(node);
    });
    for (auto &[opType, nodes] : unlegalized) {
      OnnxNodeOp node = nodes.front();
      InFlightDiagnostic diag = node.emitError()
                                << "no legalization for ONNX op '" << opType
                                << "' (domain '" << node.getDomain()
                                << "', opset " << node.getOpset() << ")";
      // Most patterns need ranked operands; say so rather than blame the
      // attributes when shape inference is what gave up.
      OpOperand *unknown = nullptr;
      for (OpOperand &operand : node->getOpOperands()) {
        auto type = dyn_cast<ShapedType>(operand.get().getType());
        if (type && !type.hasRank()) {
          unknown = &operand;
          break;
        }
      }
      if (std::optional<std::string> why = explainControlFlow(node))
        diag << ": " << *why;
      else if (std::optional<std::string> why = explainDataMovement(node))
        diag << ": " << *why;
      else if (std::optional<std::string> why = explainValues(node))
        diag << ": " << *why;
      else if (auto rejected = node->getAttrOfType<StringAttr>(
                   OnnxNodeOp::kShapeInferenceErrorAttr))
        diag << ": ONNX shape inference rejects it: " << rejected.getValue();
      else if (unknown)
        diag << ": its input " << unknown->getOperandNumber()
             << " has no known rank (its shape is computed at run time)";
      else if (std::string why = patternFailureReasons(node, patterns);
               !why.empty())
        diag << ": " << why;
      else
        diag << " with these attributes and input types";
      if (nodes.size() > 1)
        diag << "; " << nodes.size() - 1 << " more '" << opType
             << "' node(s) are not legalized either";
    }
    bool failedAny = !unlegalized.empty();
    if (failedAny)
      signalPassFailure();
  }

  /// Every pattern, data-dependent ops folding on constants only.
  FrozenRewritePatternSet constantFolding;
  /// Every pattern, data-dependent ops also taking their capacity forms.
  FrozenRewritePatternSet patterns;
  /// QDQ node units, fused before the per-op patterns run.
  FrozenRewritePatternSet quantizedUnits;
};
} // namespace
