//===- LayerStage.cpp - One layer prepared as a stage of its own ----------===//

#include "heterps/Target/LayerStage.h"
#include "FusionRegions.h"
#include "KernelCalls.h"
#include "RuntimeKinds.h"
#include "WeightsFile.h"
#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Target/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

std::string heterps::target::runtimeTypeName(Type type) {
  return dtypeName(type);
}

uint64_t heterps::target::tensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * elementBytes(tensor.getElementType());
}

StageSlot LayerStage::slotOf(Value value) const {
  value = viewSource(value);
  if (auto argument = dyn_cast<BlockArgument>(value))
    return {StageSlot::Kind::Argument, 0, argument.getArgNumber()};
  Operation *op = value.getDefiningOp();
  if (auto offset = op->getAttrOfType<IntegerAttr>(kWeightsOffsetAttrName)) {
    auto range = stage->getAttrOfType<DenseI64ArrayAttr>(kWeightsRangeAttrName);
    return {StageSlot::Kind::Weights, uint64_t(offset.getInt() - range[0]), 0};
  }
  if (auto offsets =
          op->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttrName)) {
    int64_t offset = offsets[cast<OpResult>(value).getResultNumber()];
    if (offset != kNotInArena)
      return {StageSlot::Kind::Arena, uint64_t(offset), 0};
  }
  return {};
}

namespace {

/// `type` with its dynamic extents bound to `batch`.
FailureOr<RankedTensorType> boundType(Type type, int64_t batch) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return failure();
  SmallVector<int64_t> shape(tensor.getShape());
  for (int64_t &extent : shape)
    if (ShapedType::isDynamic(extent))
      extent = batch;
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// The extent operand `index` of `layer` indexes, when it holds indices.
std::optional<int64_t> indexedExtent(Operation *layer, unsigned index,
                                     int64_t batch) {
  auto extentOf = [&](Value data, int64_t axis) -> std::optional<int64_t> {
    FailureOr<RankedTensorType> type = boundType(data.getType(), batch);
    if (failed(type) || type->getRank() == 0)
      return std::nullopt;
    int64_t rank = type->getRank();
    return type->getDimSize(((axis % rank) + rank) % rank);
  };
  if (auto lookup = dyn_cast<EmbeddingLookupOp>(layer))
    if (layer->getOperand(index) == lookup.getIds())
      return extentOf(lookup.getTable(), 0);
  if (auto gather = dyn_cast<GatherOp>(layer))
    if (layer->getOperand(index) == gather.getIndices())
      return extentOf(gather.getData(), gather.getAxis());
  if (auto scatter = dyn_cast<ScatterOp>(layer))
    if (layer->getOperand(index) == scatter.getIndices())
      return extentOf(scatter.getData(), scatter.getAxis());
  return std::nullopt;
}

} // namespace

llvm::Expected<LayerStage>
heterps::target::prepareLayerStage(Operation *layer,
                                   const LayerStageOptions &options) {
  MLIRContext *context = layer->getContext();
  auto error = [&](const Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
  };
  LayerStage result;
  result.module = ModuleOp::create(layer->getLoc());
  OpBuilder builder(result.module->getBodyRegion());

  // Operands become stage arguments, except constants (and frozen weights)
  // cloned into the stage as a bundle keeps them.
  SmallVector<Value> arguments;
  SmallVector<Type> argumentTypes;
  SmallVector<Operation *> stored;
  for (auto [index, operand] : llvm::enumerate(layer->getOperands())) {
    if (llvm::is_contained(arguments, operand))
      continue;
    Operation *def = operand.getDefiningOp();
    auto weight = dyn_cast_or_null<WeightOp>(def);
    bool table = isa<EmbeddingLookupOp>(layer) &&
                 operand == cast<EmbeddingLookupOp>(layer).getTable();
    if (isa_and_nonnull<ConstantOp>(def) ||
        (weight && !options.training &&
         !(table && tensorBytes(weight.getType()) > options.maxTableBytes))) {
      if (!llvm::is_contained(stored, def))
        stored.push_back(def);
      continue;
    }
    FailureOr<RankedTensorType> type =
        boundType(operand.getType(), options.batch);
    if (failed(type))
      return error("operand " + Twine(index) + " is not a ranked tensor");
    if (table && tensorBytes(*type) > options.maxTableBytes) {
      int64_t rowBytes =
          tensorBytes(*type) / std::max<int64_t>(type->getDimSize(0), 1);
      *type = RankedTensorType::get(
          {std::max<int64_t>(int64_t(options.maxTableBytes) / rowBytes, 1),
           type->getDimSize(1)},
          type->getElementType());
    }
    arguments.push_back(operand);
    argumentTypes.push_back(*type);
  }
  SmallVector<Type> resultTypes;
  for (Type type : layer->getResultTypes()) {
    if (isa<NoneType>(type)) { // an optional result left out
      resultTypes.push_back(type);
      continue;
    }
    FailureOr<RankedTensorType> bound = boundType(type, options.batch);
    if (failed(bound))
      return error("a result is not a ranked tensor");
    resultTypes.push_back(*bound);
  }

  // A pipeline of one stage, as the stage passes expect it.
  auto stage = builder.create<func::FuncOp>(
      layer->getLoc(), "layer",
      builder.getFunctionType(argumentTypes, resultTypes));
  stage->setAttr("hps.device", DeviceAttr::get(context, options.deviceClass));
  auto main = builder.create<func::FuncOp>(layer->getLoc(), "main",
                                           builder.getFunctionType({}, {}));
  main.setPrivate();
  main->setAttr("hps.pipeline",
                builder.getArrayAttr(FlatSymbolRefAttr::get(stage)));
  Block *body = stage.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [value, argument] : llvm::zip(arguments, body->getArguments()))
    mapping.map(value, argument);
  for (Operation *op : stored)
    builder.clone(*op, mapping);
  Operation *clone = builder.clone(*layer, mapping);
  // The bound operands imply the results' shapes where the op has a shape
  // rule (a concat along the batch axis is twice the batch); elsewhere
  // dynamic extents are the batch.
  for (auto [value, type] : llvm::zip(clone->getResults(), resultTypes)) {
    std::optional<SmallVector<int64_t>> shape = inferValueShape(value);
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && shape && !ShapedType::isDynamicShape(*shape))
      type = RankedTensorType::get(*shape, tensor.getElementType());
    value.setType(type);
  }
  stage.setType(builder.getFunctionType(argumentTypes, resultTypes));
  builder.create<func::ReturnOp>(layer->getLoc(), clone->getResults());
  result.stage = stage;
  for (Value value : arguments) {
    unsigned index =
        llvm::find(layer->getOperands(), value) - layer->getOperands().begin();
    result.indexExtents.push_back(indexedExtent(layer, index, options.batch));
  }

  // The passes' diagnostics become the error.
  std::string diagnostics;
  ScopedDiagnosticHandler collect(context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "; ") + diagnostic.str();
    return success();
  });
  PassManager pm(context, ModuleOp::getOperationName());
  buildStagePreparationPipeline(pm, /*fuseElementwise=*/false);
  if (failed(pm.run(*result.module)))
    return error(diagnostics.empty() ? "the stage passes failed" : diagnostics);
  WeightsFile weights;
  if (failed(writeStageWeights(stage, weights)))
    return error(diagnostics);
  auto range = stage->getAttrOfType<DenseI64ArrayAttr>(kWeightsRangeAttrName);
  result.weights = weights.data.substr(range[0], range[1] - range[0]);
  if (auto bytes = stage->getAttrOfType<IntegerAttr>(kArenaBytesAttrName))
    result.arenaBytes = bytes.getInt();
  return std::move(result);
}
