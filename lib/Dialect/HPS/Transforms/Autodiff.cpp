//===- Autodiff.cpp - --hps-autodiff: loss and backward pass --------------===//
//
// Turns the inference graph of @main into one training step: a label input,
// the per-sample loss as a new result, and the reverse sweep whose gradients
// end in hps.dense_push / hps.ps_push. Backward ops are ordinary hps ops on
// the device of the forward op they derive from, so partitioning and code
// generation need nothing new for them.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "heterps/Dialect/HPS/IR/HPSShapes.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSAUTODIFF
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;
using namespace heterps::hps::autodiff;

namespace {

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

bool isStaticTensor(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape();
}

DeviceAttr placementOf(Operation *op) {
  if (auto placed = dyn_cast_or_null<PlacedOpInterface>(op))
    return placed.getPlacement();
  return nullptr;
}

/// Values that need an adjoint: floating values that depend on a weight
/// (varied) and that the loss depends on (useful).
struct Activity {
  llvm::DenseSet<Value> varied, useful;

  Activity(ArrayRef<Operation *> ops, Value lossInput) {
    for (Operation *op : ops) {
      bool fromWeight =
          isa<WeightOp>(op) || llvm::any_of(op->getOperands(), [&](Value v) {
            return varied.contains(v);
          });
      if (fromWeight)
        for (Value result : op->getResults())
          if (isFloatTensor(result))
            varied.insert(result);
    }
    useful.insert(lossInput);
    for (Operation *op : llvm::reverse(ops))
      if (llvm::any_of(op->getResults(),
                       [&](Value v) { return useful.contains(v); }))
        for (Value operand : differentiableOperands(op))
          useful.insert(operand);
  }

  /// The operands the loss may be differentiated by. Batch norm runs in
  /// inference mode with its running statistics, which are not trained (a
  /// training-mode batch norm would update them from batch statistics, not
  /// by gradient), so they stay constants.
  static OperandRange differentiableOperands(Operation *op) {
    if (isa<BatchNormOp>(op))
      return op->getOperands().take_front(3);
    return op->getOperands();
  }

  bool isActive(Value value) const {
    return varied.contains(value) && useful.contains(value);
  }
};

struct AutodiffPass : public heterps::hps::impl::HPSAutodiffBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

private:
  LogicalResult run();
  /// The reverse sweep from the seed; fills the adjoint of every active
  /// value and emits the pushes of embedding tables.
  LogicalResult sweep(OpBuilder &builder, ArrayRef<Operation *> ops,
                      const Activity &activity);

  llvm::DenseMap<Value, Value> adjoints;
  ConstantCache constants;
};

} // namespace

LogicalResult AutodiffPass::run() {
  ModuleOp module = getOperation();
  adjoints.clear();
  constants.clear();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError("hps-autodiff: the module has no @main to train");

  std::optional<LossKind> kind =
      llvm::StringSwitch<std::optional<LossKind>>(loss)
          .Case("bce", LossKind::BCE)
          .Cases("softmax-ce", "softmax_ce", LossKind::SoftmaxCE)
          .Case("mse", LossKind::MSE)
          .Default(std::nullopt);
  if (loss.empty())
    return main.emitError("hps-autodiff: the loss option is required (bce, "
                          "softmax-ce or mse)");
  if (!kind)
    return main.emitError() << "hps-autodiff: unknown loss '" << loss
                            << "' (expected bce, softmax-ce or mse)";
  if (!llvm::is_contained({"sgd", "adam", "adagrad"}, StringRef(optimizer)))
    return main.emitError() << "hps-autodiff: unknown optimizer '" << optimizer
                            << "' (expected sgd, adam or adagrad)";
  if (label.empty())
    return main.emitError("hps-autodiff: the label input needs a name");
  if (!main.getBody().hasOneBlock())
    return main.emitError("hps-autodiff: @main must have a single block");

  // The prediction: the named result, or the first one.
  auto returnOp = cast<func::ReturnOp>(main.front().getTerminator());
  std::optional<unsigned> outputIndex;
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
    auto name = main.getResultAttrOfType<StringAttr>(i, "hps.name");
    if (output.empty() ? i == 0 : name && name.getValue() == output) {
      outputIndex = i;
      break;
    }
  }
  if (!outputIndex) {
    if (output.empty())
      return main.emitError("hps-autodiff: @main has no result to train");
    return main.emitError()
           << "hps-autodiff: @main has no result named '" << output << "'";
  }
  // The runtime finds the prediction and the label by name.
  auto predictionName =
      main.getResultAttrOfType<StringAttr>(*outputIndex, "hps.name");
  if (!predictionName)
    return main.emitError() << "hps-autodiff: result " << *outputIndex
                            << " of @main has no hps.name";
  Value prediction = returnOp.getOperand(*outputIndex);
  auto predictionType = dyn_cast<RankedTensorType>(prediction.getType());
  if (!predictionType || !predictionType.hasStaticShape() ||
      predictionType.getRank() < 1 || !isFloatTensor(prediction))
    return main.emitError() << "hps-autodiff: the prediction must be a "
                               "statically shaped, batch-first float tensor, "
                               "got "
                            << prediction.getType();
  if (*kind == LossKind::SoftmaxCE && predictionType.getRank() != 2)
    return main.emitError() << "hps-autodiff: softmax-ce needs a [N, C] "
                               "prediction, got "
                            << prediction.getType();
  for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
    if (auto name = main.getArgAttrOfType<StringAttr>(i, "hps.name");
        name && name.getValue() == label)
      return main.emitError() << "hps-autodiff: @main already has an input "
                                 "named '"
                              << label << "'; choose another label name";
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
    if (auto name = main.getResultAttrOfType<StringAttr>(i, "hps.name");
        name && name.getValue() == "loss")
      return main.emitError("hps-autodiff: @main already has a result named "
                            "'loss'");

  // Fuse the final activation into the loss for numerical stability.
  Operation *producer = prediction.getDefiningOp();
  Value lossInput = prediction;
  bool fromLogits = false;
  if (*kind == LossKind::BCE) {
    if (auto sigmoid = dyn_cast_or_null<SigmoidOp>(producer)) {
      lossInput = sigmoid.getInput();
      fromLogits = true;
    }
  } else if (*kind == LossKind::SoftmaxCE) {
    fromLogits = true; // Anything but a softmax is taken as logits.
    auto softmax = dyn_cast_or_null<SoftmaxOp>(producer);
    if (softmax &&
        shapes::normalizeAxis(static_cast<int64_t>(softmax.getAxis()), 2) == 1)
      lossInput = softmax.getInput();
  }

  SmallVector<Operation *> ops;
  for (Operation &op : main.front().without_terminator())
    ops.push_back(&op);
  Activity activity(ops, lossInput);

  // Trainable parameters; a table also used densely would need both a
  // sparse and a dense update of one parameter.
  SmallVector<WeightOp> trainable;
  for (Operation *op : ops) {
    auto weight = dyn_cast<WeightOp>(op);
    if (!weight || !activity.isActive(weight.getResult()))
      continue;
    trainable.push_back(weight);
    bool asTable = false, otherwise = false;
    for (OpOperand &use : weight.getResult().getUses()) {
      if (isa<EmbeddingLookupOp>(use.getOwner()) && use.getOperandNumber() == 0)
        asTable = true;
      else if (llvm::any_of(use.getOwner()->getResults(), [&](Value v) {
                 return activity.useful.contains(v);
               }))
        otherwise = true;
    }
    if (asTable && otherwise)
      return weight.emitError()
             << "hps-autodiff: weight '" << weight.getName()
             << "' is used both as an embedding table and by other ops";
  }
  if (trainable.empty())
    return main.emitError("hps-autodiff: no trainable parameter reaches the "
                          "loss");

  // The label input and the per-sample loss, on the prediction's device.
  OpBuilder builder(returnOp);
  Location loc = main.getLoc();
  int64_t batch = predictionType.getDimSize(0);
  Type labelType = *kind == LossKind::SoftmaxCE
                       ? RankedTensorType::get({batch}, builder.getI64Type())
                       : lossInput.getType();
  auto batchedAttrs = [&](StringRef name) {
    return builder.getDictionaryAttr(
        {builder.getNamedAttr("hps.name", builder.getStringAttr(name)),
         builder.getNamedAttr("hps.batched", builder.getUnitAttr())});
  };
  unsigned labelIndex = main.getNumArguments();
  main.insertArgument(labelIndex, labelType, batchedAttrs(label), loc);
  Value labelValue = main.getArgument(labelIndex);
  DeviceAttr lossDevice = placementOf(producer);
  auto lossType =
      RankedTensorType::get({batch}, predictionType.getElementType());
  Value perSample = builder.create<LossOp>(loc, lossType, *kind, lossInput,
                                           labelValue, fromLogits, lossDevice);
  Value seed =
      builder.create<LossGradOp>(loc, lossInput.getType(), *kind, lossInput,
                                 labelValue, fromLogits, lossDevice);
  adjoints[lossInput] = seed;

  if (failed(sweep(builder, ops, activity)))
    return failure();

  for (WeightOp weight : trainable) {
    weight->setAttr("hps.trainable", builder.getUnitAttr());
    // Tables pushed their rows during the sweep.
    Value gradient = adjoints.lookup(weight.getResult());
    if (!gradient)
      continue;
    builder.create<DensePushOp>(weight.getLoc(), weight.getName(), gradient,
                                placementOf(gradient.getDefiningOp()));
  }

  returnOp->insertOperands(returnOp->getNumOperands(), perSample);
  main.insertResult(main.getNumResults(), lossType, batchedAttrs("loss"));

  auto f64 = [&](double value) { return builder.getF64FloatAttr(value); };
  module->setAttr(
      "hps.training",
      builder.getDictionaryAttr({
          builder.getNamedAttr("loss",
                               builder.getStringAttr(stringifyLossKind(*kind))),
          builder.getNamedAttr("label", builder.getStringAttr(label)),
          builder.getNamedAttr("prediction", predictionName),
          builder.getNamedAttr("optimizer", builder.getStringAttr(optimizer)),
          builder.getNamedAttr("learning_rate", f64(learningRate)),
          builder.getNamedAttr("momentum", f64(momentum)),
          builder.getNamedAttr("beta1", f64(beta1)),
          builder.getNamedAttr("beta2", f64(beta2)),
          builder.getNamedAttr("epsilon", f64(epsilon)),
          builder.getNamedAttr("initial_accumulator", f64(initialAccumulator)),
      }));
  return success();
}

LogicalResult AutodiffPass::sweep(OpBuilder &builder, ArrayRef<Operation *> ops,
                                  const Activity &activity) {
  SmallVector<Value> resultGrads, operandGrads;
  SmallVector<bool> needed;
  for (Operation *op : llvm::reverse(ops)) {
    resultGrads.clear();
    for (Value result : op->getResults())
      resultGrads.push_back(adjoints.lookup(result));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    needed.clear();
    for (Value operand : op->getOperands())
      needed.push_back(activity.isActive(operand));
    if (!llvm::is_contained(needed, true))
      continue;
    if (!llvm::all_of(op->getOperandTypes(), isStaticTensor) ||
        !llvm::all_of(op->getResultTypes(), isStaticTensor))
      return op->emitError() << "hps-autodiff: '" << op->getName()
                             << "' needs static shapes to be differentiated";

    GradientBuilder gradients(builder, op->getLoc(), placementOf(op),
                              constants);
    if (auto lookup = dyn_cast<EmbeddingLookupOp>(op)) {
      auto table = lookup.getTable().getDefiningOp<WeightOp>();
      if (!table)
        return op->emitError("hps-autodiff: the table of a trained embedding "
                             "lookup must be an hps.weight");
      Value rows = embeddingRowGradients(gradients, lookup, resultGrads[0]);
      builder.create<PSPushOp>(op->getLoc(), table.getName(), lookup.getIds(),
                               rows, placementOf(op));
      continue;
    }

    std::optional<LogicalResult> applied =
        applyGradientRule(gradients, op, resultGrads, needed, operandGrads);
    if (!applied) {
      InFlightDiagnostic diag = op->emitError()
                                << "hps-autodiff: no gradient rule for '"
                                << op->getName() << "'";
      if (auto node = dyn_cast<OnnxNodeOp>(op))
        diag << " (ONNX " << node.getOpType() << ")";
      return diag;
    }
    if (failed(*applied))
      return failure();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad)
        continue;
      if (grad.getType() != operand.getType())
        return op->emitError()
               << "hps-autodiff: the gradient rule of '" << op->getName()
               << "' produced " << grad.getType() << " for an operand of type "
               << operand.getType();
      Value &slot = adjoints[operand];
      slot = slot ? gradients.add(slot, grad) : grad;
    }
  }
  return success();
}
