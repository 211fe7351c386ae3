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
#include "heterps/Dialect/HPS/Transforms/TrainingOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>
#include <utility>

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

/// The update of a weight that the parameter server changes other than by
/// its gradient ("moving-average", "training-flag"), or null.
StringAttr updateKindOf(WeightOp weight) {
  return weight ? weight->getAttrOfType<StringAttr>("hps.update") : nullptr;
}

/// Whether `weight` stays a constant in training: the user froze it, or it
/// is an exponent (exporters give `x ** 2`'s 2 as an initializer, and its
/// gradient, x^p log x, is NaN wherever x < 0).
bool keptConstant(WeightOp weight, const llvm::StringSet<> &frozen) {
  if (frozen.contains(weight.getName()))
    return true;
  return llvm::any_of(weight.getResult().getUses(), [](OpOperand &use) {
    return isa<PowOp>(use.getOwner()) && use.getOperandNumber() == 1;
  });
}

/// Values that need an adjoint: floating values that depend on a trained
/// weight (varied) and that the loss depends on (useful).
struct Activity {
  llvm::DenseSet<Value> varied, useful;

  Activity(ArrayRef<Operation *> ops, Value lossInput,
           const llvm::StringSet<> &frozen) {
    for (Operation *op : ops) {
      auto weight = dyn_cast<WeightOp>(op);
      bool fromWeight =
          (weight && !updateKindOf(weight) && !keptConstant(weight, frozen)) ||
          llvm::any_of(op->getOperands(),
                       [&](Value v) { return varied.contains(v); });
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

  /// The operands the loss may be differentiated by. Running statistics
  /// that a batch norm reads straight from weights are never trained by
  /// gradient, so they stay constants; statistics computed from the batch
  /// (useBatchStatistics) are differentiated like any value.
  static SmallVector<Value> differentiableOperands(Operation *op) {
    SmallVector<Value> operands;
    bool norm = isa<BatchNormOp>(op);
    for (OpOperand &operand : op->getOpOperands())
      if (!norm || operand.getOperandNumber() < 3 ||
          !operand.get().getDefiningOp<WeightOp>())
        operands.push_back(operand.get());
    return operands;
  }

  bool isActive(Value value) const {
    return varied.contains(value) && useful.contains(value);
  }
};

struct AutodiffPass : public heterps::hps::impl::HPSAutodiffBase<AutodiffPass> {
  using Base::Base;

  /// The ops' gradient rules come with the pass.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    autodiff::registerGradientRules(registry);
  }

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

private:
  LogicalResult run();
  /// batch-norm=batch: rewrites every batch norm of `main` that reads its
  /// running statistics from weights to normalize with batch statistics
  /// while training, and pushes the batch statistics to the running ones.
  LogicalResult useBatchStatistics(func::FuncOp main);
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
  if (std::string error = trainingOptionsError(
          loss, optimizer, learningRate, momentum,
          {"loss", "optimizer", "learning-rate", "momentum"});
      !error.empty())
    return module.emitError("hps-autodiff: ") << error;
  const LossKind kind =
      llvm::StringSwitch<LossKind>(loss)
          .Case("bce", LossKind::BCE)
          .Cases("softmax-ce", "softmax_ce", LossKind::SoftmaxCE)
          .Case("mse", LossKind::MSE);
  if (label.empty())
    return main.emitError("hps-autodiff: the label input needs a name");
  if (!main.getBody().hasOneBlock())
    return main.emitError("hps-autodiff: @main must have a single block");

  // First: it replaces batch norms, which the prediction may be.
  if (batchNorm == BatchNormMode::Batch && failed(useBatchStatistics(main)))
    return failure();

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
  // The runtime cuts a step into samples along the batch: a prediction
  // without one was refused only when the built bundle was opened.
  if (!main.getResultAttr(*outputIndex, "hps.batched"))
    return main.emitError()
           << "hps-autodiff: the prediction '" << predictionName.getValue()
           << "' has no batch dim: the model fixes its leading extent at "
           << predictionType.getDimSize(0)
           << "; a model exported for one sample trains with that dim bound "
              "as the batch (heterps compile --batch B --static-batch)";
  if (kind == LossKind::SoftmaxCE && predictionType.getRank() != 2)
    return main.emitError() << "hps-autodiff: softmax-ce needs a [N, C] "
                               "prediction, got "
                            << prediction.getType();
  // One class: every loss is 0 and nothing trains.
  if (kind == LossKind::SoftmaxCE && predictionType.getDimSize(1) < 2)
    return main.emitError()
           << "hps-autodiff: softmax-ce needs at least 2 "
              "classes, and the prediction "
           << prediction.getType() << " has 1; a single score trains with bce";
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
  if (kind == LossKind::BCE) {
    if (auto sigmoid = dyn_cast_or_null<SigmoidOp>(producer)) {
      lossInput = sigmoid.getInput();
      fromLogits = true;
    }
  } else if (kind == LossKind::SoftmaxCE) {
    fromLogits = true; // Anything but a softmax is taken as logits.
    auto softmax = dyn_cast_or_null<SoftmaxOp>(producer);
    if (softmax &&
        shapes::normalizeAxis(static_cast<int64_t>(softmax.getAxis()), 2) == 1)
      lossInput = softmax.getInput();
  }

  SmallVector<Operation *> ops;
  for (Operation &op : main.front().without_terminator())
    ops.push_back(&op);
  llvm::StringMap<WeightOp> weightsByName;
  for (Operation *op : ops)
    if (auto weight = dyn_cast<WeightOp>(op))
      weightsByName[weight.getName()] = weight;
  llvm::StringSet<> frozenNames;
  for (const std::string &name : frozen) {
    WeightOp weight = weightsByName.lookup(name);
    if (!weight)
      return main.emitError() << "hps-autodiff: frozen weight '" << name
                              << "' (--freeze) is not a weight (initializer) "
                                 "of the model";
    // The server holds every looked-up table and starts its rows from its
    // own initialiser: frozen, such a table would not keep its values.
    if (llvm::any_of(weight.getResult().getUses(), [](OpOperand &use) {
          return isa<EmbeddingLookupOp>(use.getOwner()) &&
                 use.getOperandNumber() == 0;
        }))
      return weight.emitError()
             << "hps-autodiff: frozen weight '" << name
             << "' (--freeze) is an embedding table; the parameter server "
                "starts tables from its own initialiser, so tables cannot be "
                "frozen";
    frozenNames.insert(name);
  }
  Activity activity(ops, lossInput, frozenNames);

  // Trainable parameters; a table also used densely would need both a
  // sparse and a dense update of one parameter.
  SmallVector<WeightOp> trainable;
  for (Operation *op : ops) {
    auto weight = dyn_cast<WeightOp>(op);
    if (!weight || updateKindOf(weight) ||
        !activity.isActive(weight.getResult()))
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
  Type labelType = kind == LossKind::SoftmaxCE
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
  Value perSample = builder.create<LossOp>(loc, lossType, kind, lossInput,
                                           labelValue, fromLogits, lossDevice);
  Value seed =
      builder.create<LossGradOp>(loc, lossInput.getType(), kind, lossInput,
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
                               builder.getStringAttr(stringifyLossKind(kind))),
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

LogicalResult AutodiffPass::useBatchStatistics(func::FuncOp main) {
  SmallVector<BatchNormOp> norms;
  for (Operation &op : main.front())
    if (auto norm = dyn_cast<BatchNormOp>(op);
        norm && norm.getMean().getDefiningOp<WeightOp>() &&
        norm.getVariance().getDefiningOp<WeightOp>())
      norms.push_back(norm);
  if (norms.empty())
    return success();
  for (Operation &op : main.front())
    if (auto weight = dyn_cast<WeightOp>(op);
        weight && weight.getName() == kBatchStatisticsFlag)
      return weight.emitError()
             << "hps-autodiff: the weight name '" << kBatchStatisticsFlag
             << "' is reserved for the batch norm training flag";

  // One flag for the module: 1 while training (batch statistics), 0 while
  // evaluating (running statistics). The runtime serves its value, so the
  // same stages do both.
  OpBuilder builder(&main.front(), main.front().begin());
  Type f32 = builder.getF32Type();
  auto flagType = RankedTensorType::get({1}, f32);
  auto flag = builder.create<WeightOp>(
      main.getLoc(), kBatchStatisticsFlag,
      cast<ElementsAttr>(DenseElementsAttr::get(flagType, 1.0f)));
  flag->setAttr("hps.update", builder.getStringAttr("training-flag"));
  flag->setAttr("hps.trainable", builder.getUnitAttr());

  for (BatchNormOp norm : norms) {
    Value x = norm.getInput();
    auto type = dyn_cast<RankedTensorType>(x.getType());
    if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
        !type.getElementType().isF32())
      return norm.emitError()
             << "hps-autodiff: batch norm with batch statistics needs a "
                "static f32 input of rank >= 2, got "
             << x.getType()
             << " (--batch-norm=running keeps the running statistics)";
    int64_t channels = type.getDimSize(1);
    int64_t perChannel = type.getNumElements() / std::max<int64_t>(channels, 1);
    // The unbiased variance divides by M - 1 (PyTorch refuses M = 1 too).
    if (perChannel < 2)
      return norm.emitError()
             << "hps-autodiff: batch norm with batch statistics needs more "
                "than one value per channel, got input "
             << x.getType()
             << " (--batch-norm=running keeps the running statistics)";
    double momentum = 0.9; // ONNX BatchNormalization's default
    if (auto attr = norm->getAttrOfType<FloatAttr>("hps.momentum"))
      momentum = attr.getValueAsDouble();
    if (!(momentum >= 0.0 && momentum <= 1.0))
      return norm.emitError() << "hps-autodiff: batch norm momentum "
                              << momentum << " is outside [0, 1]";
    auto runningMean = norm.getMean().getDefiningOp<WeightOp>();
    auto runningVar = norm.getVariance().getDefiningOp<WeightOp>();
    for (WeightOp running : {runningMean, runningVar}) {
      // Each running statistic gets one moving-average update per step.
      if (!running.getResult().hasOneUse())
        return running.emitError()
               << "hps-autodiff: running statistic '" << running.getName()
               << "' of a batch norm is used elsewhere too; it can only be "
                  "the moving average of one batch norm "
                  "(--batch-norm=running keeps it constant)";
      if (running.getType() != RankedTensorType::get({channels}, f32))
        return running.emitError()
               << "hps-autodiff: running statistic '" << running.getName()
               << "' has type " << running.getType() << "; expected "
               << RankedTensorType::get({channels}, f32);
    }

    builder.setInsertionPoint(norm);
    DeviceAttr device = placementOf(norm);
    GradientBuilder b(builder, norm.getLoc(), device, constants);
    SmallVector<int64_t> axes{0};
    for (int64_t i = 2, e = type.getRank(); i < e; ++i)
      axes.push_back(i);
    Value batchMean = b.reduce(ReduceKind::Mean, x, axes, /*keepdims=*/true);
    Value centered = b.sub(x, batchMean);
    // Biased, as the normalization uses it.
    Value batchVar =
        b.reduce(ReduceKind::Mean, b.mul(centered, centered), axes, false);
    batchMean = b.reshape(batchMean, {channels});
    // running + flag * (batch - running): the batch's statistic while
    // training, the running one while evaluating.
    auto select = [&](Value running, Value batch) {
      return b.add(running, b.mul(flag.getResult(), b.sub(batch, running)));
    };
    Value meanUsed = select(runningMean, batchMean);
    Value varUsed = select(runningVar, batchVar);
    auto trained = b.create<BatchNormOp>(norm.getType(), x, norm.getScale(),
                                         norm.getBias(), meanUsed, varUsed,
                                         norm.getEpsilonAttr());
    norm.getResult().replaceAllUsesWith(trained.getResult());

    // The server folds these into the running statistics as moving
    // averages (PyTorch keeps the unbiased variance).
    double unbias =
        static_cast<double>(perChannel) / static_cast<double>(perChannel - 1);
    builder.create<DensePushOp>(trained.getLoc(), runningMean.getName(),
                                batchMean, device);
    builder.create<DensePushOp>(trained.getLoc(), runningVar.getName(),
                                b.mul(batchVar, unbias), device);
    for (WeightOp running : {runningMean, runningVar}) {
      running->setAttr("hps.update", builder.getStringAttr("moving-average"));
      running->setAttr("hps.momentum", builder.getF64FloatAttr(momentum));
      running->setAttr("hps.trainable", builder.getUnitAttr());
    }
    // Last: the builder inserts before it.
    norm.erase();
  }
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
