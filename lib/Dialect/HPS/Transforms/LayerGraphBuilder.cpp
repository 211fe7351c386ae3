//===- LayerGraphBuilder.cpp - hps function -> cost::LayerGraph -----------===//

#include "heterps/Dialect/HPS/Transforms/LayerGraphBuilder.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
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

/// Forward FLOPs of a whole batch and the layer kind.
std::pair<double, cost::LayerKind> workOf(Operation *op, int64_t batch) {
  double out =
      op->getNumResults() ? elementsOf(op->getResult(0).getType(), batch) : 0;
  using K = cost::LayerKind;
  return TypeSwitch<Operation *, std::pair<double, K>>(op)
      .Case<GemmOp>([&](GemmOp gemm) {
        double k = dimOf(gemm.getA(), gemm.getTransA() ? 0 : 1, batch);
        return std::make_pair(2 * out * k + 2 * out, K::DenseCompute);
      })
      .Case<MatMulOp>([&](MatMulOp matmul) {
        auto a = dyn_cast<RankedTensorType>(matmul.getA().getType());
        double k = a ? dimOf(matmul.getA(), a.getRank() - 1, batch) : 1;
        return std::make_pair(2 * out * k, K::DenseCompute);
      })
      .Case<DeterminantOp>([&](DeterminantOp det) {
        // LU elimination: n^3 / 3 multiply-adds per matrix.
        auto input = cast<RankedTensorType>(det.getInput().getType());
        double n = dimOf(det.getInput(), input.getRank() - 1, batch);
        return std::make_pair(2 * out * n * n * n / 3, K::DenseCompute);
      })
      .Case<ConvOp>([&](ConvOp conv) {
        auto filter = dyn_cast<RankedTensorType>(conv.getFilter().getType());
        double taps = 1;
        if (filter)
          for (int64_t i = 1; i < filter.getRank(); ++i)
            taps *= dimOf(conv.getFilter(), i, batch);
        return std::make_pair(2 * out * taps, K::DenseCompute);
      })
      .Case<ConvGradInputOp, ConvGradFilterOp>([&](auto adjoint) {
        // The forward conv's work: every gradient element meets every tap
        // of its output channel's filter.
        Value filter;
        if constexpr (std::is_same_v<decltype(adjoint), ConvGradInputOp>)
          filter = adjoint.getFilter();
        else
          filter = adjoint.getResult();
        double taps = 1;
        if (auto type = dyn_cast<RankedTensorType>(filter.getType()))
          for (int64_t i = 1; i < type.getRank(); ++i)
            taps *= dimOf(filter, i, batch);
        return std::make_pair(
            2 * elementsOf(adjoint.getGrad().getType(), batch) * taps,
            K::DenseCompute);
      })
      .Case<RecurrenceOp, RecurrenceGradOp>([&](auto rec) {
        // Per step h R^T (2 per multiply-add) plus the gates. The adjoint
        // recomputes the gates, multiplies by R once more and forms dR: about
        // three forward passes.
        auto r = cast<RankedTensorType>(rec.getRecurrence().getType());
        double steps =
            cast<RankedTensorType>(rec.getProjected().getType()).getDimSize(0);
        double perStep =
            elementsOf(rec.getInitialH().getType(), batch) *
            (2.0 * r.getDimSize(0) + 10.0 * r.getDimSize(0) / r.getDimSize(1));
        double passes =
            std::is_same_v<decltype(rec), RecurrenceGradOp> ? 3.0 : 1.0;
        return std::make_pair(passes * steps * perStep, K::DenseCompute);
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto pool) {
        double window = 1;
        for (int64_t k : pool.getKernelShape())
          window *= k;
        return std::make_pair(out * window, K::Pooling);
      })
      .Case<GlobalMaxPoolOp, GlobalAvgPoolOp, ReduceOp>([&](Operation *) {
        return std::make_pair(elementsOf(op->getOperand(0).getType(), batch),
                              K::Pooling);
      })
      .Case<BatchNormOp, LayerNormOp, SoftmaxOp, LogSoftmaxOp>(
          [&](Operation *) {
            return std::make_pair(5 * out, K::Normalization);
          })
      .Case<EmbeddingLookupOp>([&](EmbeddingLookupOp lookup) {
        return std::make_pair(out, K::EmbeddingLookup);
      })
      .Case<ConcatOp, SplitOp, SliceOp, ReshapeOp, TransposeOp, FlattenOp,
            SqueezeOp, UnsqueezeOp, ExpandOp, PadOp, GatherOp, ScatterOp,
            CastOp, ShapeOp>(
          [&](Operation *) { return std::make_pair(0.0, K::DataMovement); })
      .Default([&](Operation *) {
        // Elementwise ops and generic ONNX nodes: one op per output element.
        return std::make_pair(out, K::Elementwise);
      });
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

ExtractedLayerGraph heterps::hps::buildLayerGraph(func::FuncOp func,
                                                  int64_t batch,
                                                  cost::Mode mode) {
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
    auto [flops, kind] = workOf(&op, batch);
    layer.kind = kind;
    layer.forwardFlopsPerSample = flops / samples;

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
