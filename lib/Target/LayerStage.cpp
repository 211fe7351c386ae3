//===- LayerStage.cpp - One layer prepared as a stage of its own ----------===//

#include "heterps/Target/LayerStage.h"
#include "FusionRegions.h"
#include "KernelCalls.h"
#include "RuntimeKinds.h"
#include "WeightsFile.h"
#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"
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

/// The extent `operand` of `layer` indexes, when it holds indices.
std::optional<int64_t> indexedExtent(Operation *layer, Value operand,
                                     int64_t batch) {
  auto extentOf = [&](Value data, int64_t axis) -> std::optional<int64_t> {
    FailureOr<RankedTensorType> type = boundType(data.getType(), batch);
    if (failed(type))
      return std::nullopt;
    std::optional<int64_t> normal =
        shapes::normalizeAxis(axis, type->getRank());
    return normal ? std::optional(type->getDimSize(*normal)) : std::nullopt;
  };
  if (auto lookup = dyn_cast<EmbeddingLookupOp>(layer);
      lookup && operand == lookup.getIds())
    return extentOf(lookup.getTable(), 0);
  if (auto gather = dyn_cast<GatherOp>(layer);
      gather && operand == gather.getIndices())
    return extentOf(gather.getData(), gather.getAxis());
  if (auto scatter = dyn_cast<ScatterOp>(layer);
      scatter && operand == scatter.getIndices())
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
    FailureOr<RankedTensorType> type =
        boundType(operand.getType(), options.batch);
    if (failed(type))
      return error("operand " + Twine(index) + " is not a ranked tensor");
    Operation *def = operand.getDefiningOp();
    auto lookup = dyn_cast<EmbeddingLookupOp>(layer);
    bool largeTable = lookup && operand == lookup.getTable() &&
                      tensorBytes(*type) > options.maxTableBytes;
    if (isa_and_nonnull<ConstantOp>(def) ||
        (isa_and_nonnull<WeightOp>(def) && !options.training && !largeTable)) {
      if (!llvm::is_contained(stored, def))
        stored.push_back(def);
      continue;
    }
    if (largeTable) {
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
  // A pipeline of one stage, as the stage passes expect it.
  auto stage = builder.create<func::FuncOp>(
      layer->getLoc(), "layer", builder.getFunctionType(argumentTypes, {}));
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
  for (OpResult value : clone->getResults()) {
    if (isa<NoneType>(value.getType()))
      continue; // an optional result left out
    FailureOr<RankedTensorType> type =
        boundType(value.getType(), options.batch);
    if (failed(type))
      return error("a result is not a ranked tensor");
    std::optional<SmallVector<int64_t>> shape = inferValueShape(value);
    if (shape && !ShapedType::isDynamicShape(*shape))
      *type = RankedTensorType::get(*shape, type->getElementType());
    value.setType(*type);
  }
  stage.setType(
      builder.getFunctionType(argumentTypes, clone->getResultTypes()));
  builder.create<func::ReturnOp>(layer->getLoc(), clone->getResults());
  result.stage = stage;
  for (Value value : arguments)
    result.indexExtents.push_back(indexedExtent(layer, value, options.batch));

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
  std::string weightsBytes;
  llvm::raw_string_ostream weightsStream(weightsBytes);
  WeightsFile weights(weightsStream);
  if (failed(writeStageWeights(stage, weights)))
    return error(diagnostics);
  weightsStream.flush();
  auto range = stage->getAttrOfType<DenseI64ArrayAttr>(kWeightsRangeAttrName);
  result.weights = weightsBytes.substr(range[0], range[1] - range[0]);
  if (auto bytes = stage->getAttrOfType<IntegerAttr>(kArenaBytesAttrName))
    result.arenaBytes = bytes.getInt();
  return std::move(result);
}
