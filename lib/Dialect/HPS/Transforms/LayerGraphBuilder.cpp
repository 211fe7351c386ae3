//===- LayerGraphBuilder.cpp - hps function -> cost::LayerGraph -----------===//

#include "heterps/Dialect/HPS/Transforms/LayerGraphBuilder.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <type_traits>

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;

namespace {

/// Element count of a value's type with dynamic dims taken as `batch`;
/// unranked tensors count as `batch` elements (nothing better is known).
double elementsOf(Type type, int64_t batch) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  if (!shaped.hasRank())
    return static_cast<double>(batch);
  double count = 1;
  for (int64_t dim : shaped.getShape())
    count *= dim == ShapedType::kDynamic ? batch : dim;
  return count;
}

double bytesOf(Type type, int64_t batch) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  Type element = shaped.getElementType();
  double width = element.isIntOrFloat()
                     ? std::max(1u, element.getIntOrFloatBitWidth() / 8)
                     : 4;
  return elementsOf(type, batch) * width;
}

/// The extent of a dim, with dynamic taken as `batch`.
double dimOf(Value value, unsigned index, int64_t batch) {
  auto shaped = dyn_cast<RankedTensorType>(value.getType());
  if (!shaped || index >= shaped.getRank())
    return 1;
  int64_t dim = shaped.getDimSize(index);
  return dim == ShapedType::kDynamic ? batch : dim;
}

bool isParameter(Value value) {
  return value.getDefiningOp<WeightOp>() != nullptr;
}

//===----------------------------------------------------------------------===//
// Each layer op's forward work (LayerWorkOpInterface models)
//===----------------------------------------------------------------------===//

using K = cost::LayerKind;

double resultElements(Operation *op, int64_t batch) {
  return op->getNumResults() ? elementsOf(op->getResult(0).getType(), batch)
                             : 0;
}

LayerWork gemmWork(GemmOp gemm, int64_t batch) {
  double k = dimOf(gemm.getA(), gemm.getTransA() ? 0 : 1, batch);
  double out = resultElements(gemm, batch);
  return {2 * out * k + 2 * out, K::DenseCompute};
}

LayerWork matmulWork(MatMulOp matmul, int64_t batch) {
  auto a = dyn_cast<RankedTensorType>(matmul.getA().getType());
  double k = a ? dimOf(matmul.getA(), a.getRank() - 1, batch) : 1;
  return {2 * resultElements(matmul, batch) * k, K::DenseCompute};
}

/// LU elimination: n^3 / 3 multiply-adds per matrix.
LayerWork determinantWork(DeterminantOp det, int64_t batch) {
  auto input = cast<RankedTensorType>(det.getInput().getType());
  double n = dimOf(det.getInput(), input.getRank() - 1, batch);
  return {2 * resultElements(det, batch) * n * n * n / 3, K::DenseCompute};
}

/// The taps of each output channel's filter.
double filterTaps(Value filter, int64_t batch) {
  double taps = 1;
  if (auto type = dyn_cast<RankedTensorType>(filter.getType()))
    for (int64_t i = 1; i < type.getRank(); ++i)
      taps *= dimOf(filter, i, batch);
  return taps;
}

LayerWork convWork(ConvOp conv, int64_t batch) {
  return {2 * resultElements(conv, batch) * filterTaps(conv.getFilter(), batch),
          K::DenseCompute};
}

/// The forward conv's work: every gradient element meets every tap of its
/// output channel's filter.
template <typename AdjointOp>
LayerWork convAdjointWork(AdjointOp adjoint, int64_t batch) {
  Value filter;
  if constexpr (std::is_same_v<AdjointOp, ConvGradInputOp>)
    filter = adjoint.getFilter();
  else
    filter = adjoint.getResult();
  return {2 * elementsOf(adjoint.getGrad().getType(), batch) *
              filterTaps(filter, batch),
          K::DenseCompute};
}

/// Per step h R^T (2 per multiply-add) plus the gates. The adjoint
/// recomputes the gates, multiplies by R once more and forms dR: about
/// three forward passes.
template <typename RecurrenceKindOp>
LayerWork recurrenceWork(RecurrenceKindOp rec, int64_t batch) {
  auto r = cast<RankedTensorType>(rec.getRecurrence().getType());
  double steps =
      cast<RankedTensorType>(rec.getProjected().getType()).getDimSize(0);
  double perStep =
      elementsOf(rec.getInitialH().getType(), batch) *
      (2.0 * r.getDimSize(0) + 10.0 * r.getDimSize(0) / r.getDimSize(1));
  double passes =
      std::is_same_v<RecurrenceKindOp, RecurrenceGradOp> ? 3.0 : 1.0;
  return {passes * steps * perStep, K::DenseCompute};
}

template <typename PoolOp>
LayerWork windowPoolWork(PoolOp pool, int64_t batch) {
  double window = 1;
  for (int64_t k : pool.getKernelShape())
    window *= k;
  return {resultElements(pool, batch) * window, K::Pooling};
}

/// Global pools and reductions read every input element once.
LayerWork inputSweepWork(Operation *op, int64_t batch) {
  return {elementsOf(op->getOperand(0).getType(), batch), K::Pooling};
}

LayerWork normalizationWork(Operation *op, int64_t batch) {
  return {5 * resultElements(op, batch), K::Normalization};
}

LayerWork embeddingWork(EmbeddingLookupOp lookup, int64_t batch) {
  return {resultElements(lookup, batch), K::EmbeddingLookup};
}

LayerWork dataMovementWork(Operation *, int64_t) {
  return {0.0, K::DataMovement};
}

template <typename OpTy, auto rule>
struct WorkModel
    : public LayerWorkOpInterface::ExternalModel<WorkModel<OpTy, rule>, OpTy> {
  LayerWork getForwardWork(Operation *op, int64_t batch) const {
    return rule(cast<OpTy>(op), batch);
  }
};

template <auto rule, typename... Ops> void attach(MLIRContext *context) {
  (Ops::template attachInterface<WorkModel<Ops, rule>>(*context), ...);
}

std::string signatureOf(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef() << "(";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << ")->(";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ")";
  return text;
}

std::string nameOf(Operation *op, unsigned index) {
  if (auto named = dyn_cast<NameLoc>(op->getLoc()))
    return named.getName().str();
  return (op->getName().getStringRef() + "_" + std::to_string(index)).str();
}

} // namespace

void heterps::hps::registerLayerWorkModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, HPSDialect *) {
    attach<gemmWork, GemmOp>(context);
    attach<matmulWork, MatMulOp>(context);
    attach<determinantWork, DeterminantOp>(context);
    attach<convWork, ConvOp>(context);
    attach<convAdjointWork<ConvGradInputOp>, ConvGradInputOp>(context);
    attach<convAdjointWork<ConvGradFilterOp>, ConvGradFilterOp>(context);
    attach<recurrenceWork<RecurrenceOp>, RecurrenceOp>(context);
    attach<recurrenceWork<RecurrenceGradOp>, RecurrenceGradOp>(context);
    attach<windowPoolWork<MaxPoolOp>, MaxPoolOp>(context);
    attach<windowPoolWork<AvgPoolOp>, AvgPoolOp>(context);
    attach<inputSweepWork, GlobalMaxPoolOp, GlobalAvgPoolOp, ReduceOp>(context);
    attach<normalizationWork, BatchNormOp, LayerNormOp, SoftmaxOp,
           LogSoftmaxOp>(context);
    attach<embeddingWork, EmbeddingLookupOp>(context);
    attach<dataMovementWork, ConcatOp, SplitOp, SliceOp, ReshapeOp, TransposeOp,
           FlattenOp, SqueezeOp, UnsqueezeOp, ExpandOp, PadOp, GatherOp,
           ScatterOp, CastOp, ShapeOp>(context);
  });
}

ExtractedLayerGraph heterps::hps::buildLayerGraph(func::FuncOp func,
                                                  int64_t batch,
                                                  cost::Mode mode) {
  // Without the models every layer would silently price as elementwise.
  if (!OperationName(GemmOp::getOperationName(), func.getContext())
           .hasInterface<LayerWorkOpInterface>())
    llvm::report_fatal_error("buildLayerGraph: the layer work models are not "
                             "registered (registerLayerWorkModels)");
  ExtractedLayerGraph result;
  result.graph.mode = mode;
  // Samples one run of the function carries: the leading extent of its
  // first input when static (an exported batch), else the bound batch.
  int64_t graphBatch = batch;
  if (func.getNumArguments() > 0)
    if (auto first = dyn_cast<RankedTensorType>(func.getArgument(0).getType());
        first && first.getRank() > 0 && !first.isDynamicDim(0))
      graphBatch = first.getDimSize(0);
  double samples = static_cast<double>(std::max<int64_t>(graphBatch, 1));
  llvm::DenseMap<Operation *, unsigned> layerOf;

  for (Operation &op : func.getBody().front()) {
    if (!isa<PlacedOpInterface>(op))
      continue;
    unsigned index = result.ops.size();
    cost::Layer layer;
    layer.name = nameOf(&op, index);
    layer.opName = op.getName().getStringRef().str();
    layer.signature = signatureOf(&op);
    // Elementwise ops and generic ONNX nodes: one op per output element.
    LayerWork work = {resultElements(&op, batch), cost::LayerKind::Elementwise};
    if (auto costed = dyn_cast<LayerWorkOpInterface>(op))
      work = costed.getForwardWork(batch);
    layer.kind = work.kind;
    layer.forwardFlopsPerSample = work.flops / samples;

    double activationBytes = 0, parameterBytes = 0;
    for (Value operand : op.getOperands()) {
      double bytes = bytesOf(operand.getType(), batch);
      if (isParameter(operand))
        parameterBytes += bytes;
      else
        activationBytes += bytes;
      if (Operation *producer = operand.getDefiningOp()) {
        auto it = layerOf.find(producer);
        if (it != layerOf.end() &&
            !llvm::is_contained(layer.inputs, it->second))
          layer.inputs.push_back(it->second);
      }
    }
    double outputBytes = 0;
    for (Type type : op.getResultTypes())
      outputBytes += bytesOf(type, batch);

    if (auto lookup = dyn_cast<EmbeddingLookupOp>(op)) {
      // The table lives in the parameter server: rows are pulled, not held.
      auto table = cast<ShapedType>(lookup.getTable().getType());
      layer.embeddingRows = table.hasStaticShape() ? table.getDimSize(0) : 0;
      layer.embeddingRowBytes =
          bytesOf(table, batch) / std::max<double>(1, layer.embeddingRows);
      layer.lookupsPerSample =
          elementsOf(lookup.getIds().getType(), batch) / samples;
      // The cost model adds the pulled rows' bytes itself.
      layer.memoryBytesPerSample = (activationBytes + outputBytes) / samples;
    } else {
      layer.parameterBytes = parameterBytes;
      layer.memoryBytesPerSample =
          (activationBytes + outputBytes + parameterBytes) / samples;
    }
    layer.outputBytesPerSample = outputBytes / samples;
    layerOf[&op] = index;
    result.ops.push_back(&op);
    result.graph.layers.push_back(std::move(layer));
  }
  return result;
}

#include "heterps/Dialect/HPS/Transforms/LayerWorkInterface.cpp.inc"
