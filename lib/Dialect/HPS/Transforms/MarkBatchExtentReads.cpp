//===- MarkBatchExtentReads.cpp - Outputs computed from the batch's extent ===//
//
// The import binds the batch to the compiled extent, so legalization folds
// a Shape or Size of a batched value to that number. Where the number only
// shapes a value (a Reshape target, a ConstantOfShape), each micro-batch
// gets the right answer; where it is computed with as data (x * Shape(x)[0],
// a Range over it, an output of it), a call of another sample count gets
// the compiled batch's answer. This pass runs before legalization, while
// the reads are still ONNX nodes, follows which elements of each shape
// vector hold the batch's extent, and marks the outputs a data use reaches
// with `hps.mixes_samples`, so the runtime runs whole batches only.
//
//===----------------------------------------------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "NodeNames.h"
#include "ONNX/Support.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSMARKBATCHEXTENTREADS
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

/// Which elements of an integer shape vector hold the batch's extent (or a
/// number computed from it); empty when every element may.
using BatchElements = SmallVector<bool>;

/// Ops through which a shape vector stays shape arithmetic (they fold on
/// constants during legalization).
const llvm::StringSet<> &shapeArithmeticOps() {
  static const llvm::StringSet<> ops = {
      "Identity",   "Cast",      "CastLike",  "Neg",         "Abs",
      "Floor",      "Ceil",      "Round",     "Sqrt",        "Reciprocal",
      "Sign",       "Not",       "Add",       "Sub",         "Mul",
      "Div",        "Mod",       "Max",       "Min",         "Pow",
      "Equal",      "Less",      "Greater",   "LessOrEqual", "GreaterOrEqual",
      "And",        "Or",        "Where",     "Gather",      "Slice",
      "Concat",     "Unsqueeze", "Squeeze",   "Reshape",     "Flatten",
      "ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin",   "Expand",
      "Tile"};
  return ops;
}

/// Whether input `index` of an ONNX op only gives the shape of its result
/// (a target, an extent, slice bounds), so that the batch's extent there is
/// right for every micro-batch.
bool isShapeOperand(StringRef opType, unsigned index) {
  if (index == 0)
    return opType == "ConstantOfShape";
  if (opType == "Slice")
    return index <= 4;
  if (opType == "Pad")
    return index == 1 || index == 3;
  if (opType == "Resize")
    return index <= 3;
  return index == 1 &&
         llvm::is_contained({"Reshape", "Expand", "Tile", "Split", "Squeeze",
                             "Unsqueeze", "Upsample", "ReduceSum", "ReduceMean",
                             "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                             "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                             "ReduceSumSquare", "CumSum"},
                            opType);
}

/// The integers of an hps.constant or of an ONNX Constant node (not
/// legalized yet).
std::optional<SmallVector<int64_t>> constantInts(Value value) {
  if (std::optional<SmallVector<int64_t>> ints = getConstantInts(value))
    return ints;
  auto node = value.getDefiningOp<OnnxNodeOp>();
  if (!node || node.getOpType() != "Constant")
    return std::nullopt;
  Builder builder(node.getContext());
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(
      constantNodeValue(ONNXNode(node), builder));
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (const APInt &element : dense.getValues<APInt>())
    ints.push_back(element.getSExtValue());
  return ints;
}

/// A mask computed element by element: one of zero elements holds no batch
/// (an empty BatchElements would say every element may).
BatchElements exact(const BatchElements &mask) {
  return llvm::is_contained(mask, true) ? mask : BatchElements{false};
}

/// "'Mul' (node 'Mul_3')": the node as a user can find it.
std::string describeNode(OnnxNodeOp node) {
  return describeWithNode(node.getOpType(), node.getLoc());
}

/// The elements of a static integer vector of rank at most 1.
std::optional<int64_t> vectorSize(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > 1 ||
      !type.getElementType().isIntOrIndexOrFloat())
    return std::nullopt;
  return type.getNumElements();
}

class BatchExtentTracker {
public:
  explicit BatchExtentTracker(int64_t batch) : batch(batch) {}

  /// Follows the values of `func` in order; returns, per result of the
  /// function, why it is computed from the batch's extent (or empty).
  SmallVector<std::string> run(func::FuncOp func);

private:
  bool readsBatch(Value value) const { return elements.count(value); }
  bool elementIsBatch(Value value, int64_t i) const {
    const BatchElements &mask = elements.find(value)->second;
    if (mask.empty())
      return true;
    return mask[mask.size() == 1 ? 0 : i];
  }
  /// Keeps `mask` if an element holds the batch (empty: all may).
  void setElements(Value value, BatchElements mask) {
    if (mask.empty() || llvm::is_contained(mask, true))
      elements[value] = std::move(mask);
  }
  /// Every element, or none if no operand reads the batch.
  BatchElements anyOf(OnnxNodeOp node) const;
  std::optional<BatchElements> shapeRead(ONNXNode node) const;
  BatchElements arithmetic(ONNXNode node) const;
  BatchElements elementwise(ONNXNode node) const;
  BatchElements gather(ONNXNode node) const;
  BatchElements slice(ONNXNode node) const;
  BatchElements concat(ONNXNode node) const;

  int64_t batch;
  /// Values computed from a batched input.
  llvm::DenseSet<Value> fromSamples;
  /// Shape vectors that hold the batch's extent.
  llvm::DenseMap<Value, BatchElements> elements;
  /// Values computed with the batch's extent as data, and which op did.
  llvm::DenseMap<Value, std::string> computedWith;
  /// The node that read the extent each shape vector holds.
  llvm::DenseMap<Value, std::string> readBy;
};

BatchElements BatchExtentTracker::anyOf(OnnxNodeOp node) const {
  for (Value input : node.getInputs())
    if (readsBatch(input))
      return {};
  return {false};
}

/// Shape and Size of a value computed from the samples: the extents equal
/// to the batch are taken for it (where the batch axis went is not known
/// before legalization, and taking more only keeps more calls whole).
std::optional<BatchElements>
BatchExtentTracker::shapeRead(ONNXNode node) const {
  StringRef opType = node.getOp().getOpType();
  if ((opType != "Shape" && opType != "Size") || !node.input(0) ||
      !fromSamples.count(node.input(0)))
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type)
    return std::nullopt;
  ArrayRef<int64_t> dims = type.getShape();
  if (opType == "Size")
    return BatchElements{llvm::is_contained(dims, batch)};
  const int64_t rank = type.getRank();
  auto clamp = [&](int64_t bound) {
    bound = bound < 0 ? bound + rank : bound;
    return std::clamp<int64_t>(bound, 0, rank);
  };
  const int64_t start = clamp(node.getInt("start", 0));
  const int64_t end = clamp(node.getInt("end", rank));
  BatchElements mask;
  for (int64_t i = start; i < end; ++i)
    mask.push_back(dims[i] == batch);
  return exact(mask);
}

BatchElements BatchExtentTracker::elementwise(ONNXNode node) const {
  std::optional<int64_t> size = vectorSize(node.result());
  if (!size)
    return anyOf(node.getOp());
  BatchElements mask(*size, false);
  for (Value input : node.getOp().getInputs()) {
    if (!readsBatch(input))
      continue;
    std::optional<int64_t> inputSize = vectorSize(input);
    if (!inputSize || (*inputSize != 1 && *inputSize != *size))
      return {};
    for (int64_t i = 0; i < *size; ++i)
      mask[i] = mask[i] || elementIsBatch(input, i);
  }
  return exact(mask);
}

BatchElements BatchExtentTracker::gather(ONNXNode node) const {
  Value data = node.input(0);
  std::optional<int64_t> size = vectorSize(data);
  std::optional<SmallVector<int64_t>> indices = constantInts(node.input(1));
  if (readsBatch(node.input(1)) || !size || !indices ||
      !vectorSize(node.result()))
    return anyOf(node.getOp());
  BatchElements mask;
  for (int64_t index : *indices) {
    index = index < 0 ? index + *size : index;
    if (index < 0 || index >= *size)
      return {};
    mask.push_back(elementIsBatch(data, index));
  }
  return exact(mask);
}

BatchElements BatchExtentTracker::slice(ONNXNode node) const {
  Value data = node.input(0);
  std::optional<int64_t> size = vectorSize(data);
  // Bounds of the batch's extent only say how many values are taken.
  if (!readsBatch(data))
    return {false};
  for (unsigned i = 1; i < node.numInputs(); ++i)
    if (!size || (node.input(i) && readsBatch(node.input(i))))
      return {};
  // Opset 10 moved the bounds from attributes to inputs.
  auto bound = [&](unsigned input, StringRef attr,
                   int64_t fallback) -> std::optional<int64_t> {
    std::optional<SmallVector<int64_t>> values;
    if (node.getOpset() < 10)
      values = node.getInts(attr);
    else if (node.input(input))
      values = constantInts(node.input(input));
    else
      return fallback;
    if (!values || values->size() != 1)
      return std::nullopt;
    return values->front();
  };
  std::optional<int64_t> start = bound(1, "starts", 0);
  std::optional<int64_t> end = bound(2, "ends", *size);
  std::optional<int64_t> step = bound(4, "steps", 1);
  if (!start || !end || !step || *step == 0)
    return {};
  auto clamp = [&](int64_t value, int64_t low, int64_t high) {
    value = value < 0 ? value + *size : value;
    return std::clamp(value, low, high);
  };
  BatchElements mask;
  if (*step > 0)
    for (int64_t i = clamp(*start, 0, *size); i < clamp(*end, 0, *size);
         i += *step)
      mask.push_back(elementIsBatch(data, i));
  else
    for (int64_t i = clamp(*start, -1, *size - 1); i > clamp(*end, -1, *size);
         i += *step)
      mask.push_back(elementIsBatch(data, i));
  return exact(mask);
}

BatchElements BatchExtentTracker::concat(ONNXNode node) const {
  BatchElements mask;
  for (Value input : node.getOp().getInputs()) {
    std::optional<int64_t> size = vectorSize(input);
    if (!size)
      return anyOf(node.getOp());
    for (int64_t i = 0; i < *size; ++i)
      mask.push_back(readsBatch(input) && elementIsBatch(input, i));
  }
  return exact(mask);
}

BatchElements BatchExtentTracker::arithmetic(ONNXNode node) const {
  StringRef opType = node.getOp().getOpType();
  if (opType == "Gather")
    return gather(node);
  if (opType == "Slice")
    return slice(node);
  if (opType == "Concat")
    return concat(node);
  if (llvm::is_contained({"Unsqueeze", "Squeeze", "Reshape", "Flatten"},
                         opType)) {
    // They keep the elements in order; a second input only shapes them.
    Value data = node.input(0);
    if (!readsBatch(data))
      return {false};
    std::optional<int64_t> size = vectorSize(data);
    return size && vectorSize(node.result()) == size ? elements.lookup(data)
                                                     : BatchElements{};
  }
  if (opType.starts_with("Reduce") || opType == "Expand" || opType == "Tile")
    return readsBatch(node.input(0)) ? BatchElements{} : BatchElements{false};
  return elementwise(node);
}

SmallVector<std::string> BatchExtentTracker::run(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "hps.batched"))
      fromSamples.insert(arg);

  for (Operation &op : body) {
    // What op reads, its subgraphs' captures included.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op.getRegions(), captured);
    SmallVector<Value> inputs(op.getOperands());
    inputs.append(captured.begin(), captured.end());
    const bool samples = llvm::any_of(
        inputs, [&](Value input) { return fromSamples.count(input); });
    auto markResults = [&](const std::string &why) {
      for (Value result : op.getResults()) {
        if (samples)
          fromSamples.insert(result);
        if (!why.empty())
          computedWith[result] = why;
      }
    };
    std::string why;
    for (Value input : inputs)
      if (auto found = computedWith.find(input); found != computedWith.end()) {
        why = found->second;
        break;
      }
    auto node = dyn_cast<OnnxNodeOp>(op);
    if (!why.empty() || !node) {
      markResults(why);
      continue;
    }
    // A shape vector's values come from the extents, not the samples.
    ONNXNode onnx(node);
    if (std::optional<BatchElements> mask = shapeRead(onnx)) {
      setElements(node.getResult(0), *mask);
      readBy[node.getResult(0)] = describeNode(node);
      continue;
    }
    auto read =
        llvm::find_if(inputs, [&](Value input) { return readsBatch(input); });
    if (read == inputs.end()) {
      markResults("");
      continue;
    }
    StringRef opType = node.getOpType();
    if (!samples && node.getNumRegions() == 0 &&
        shapeArithmeticOps().contains(opType)) {
      BatchElements mask = arithmetic(onnx);
      for (Value result : node.getResults()) {
        setElements(result, mask);
        readBy[result] = readBy[*read];
      }
      continue;
    }
    bool onlyShapes = node.getNumRegions() == 0;
    for (auto [index, input] : llvm::enumerate(node.getInputs()))
      if (readsBatch(input) && !isShapeOperand(opType, index))
        onlyShapes = false;
    markResults(onlyShapes ? ""
                           : describeNode(node) +
                                 " computes with the batch's extent that " +
                                 readBy[*read] + " reads");
  }

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<std::string> reasons;
  for (Value value : ret.getOperands()) {
    if (auto found = computedWith.find(value); found != computedWith.end())
      reasons.push_back(found->second);
    else if (readsBatch(value))
      reasons.push_back("it is the batch's extent that " + readBy[value] +
                        " reads");
    else
      reasons.emplace_back();
  }
  return reasons;
}

struct MarkBatchExtentReadsPass
    : public heterps::hps::impl::HPSMarkBatchExtentReadsBase<
          MarkBatchExtentReadsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto batch = func->getAttrOfType<IntegerAttr>("hps.batch");
      if (func.isExternal() || !batch)
        continue;
      SmallVector<std::string> reasons =
          BatchExtentTracker(batch.getInt()).run(func);
      Builder builder(func.getContext());
      for (auto [i, why] : llvm::enumerate(reasons))
        if (!why.empty())
          func.setResultAttr(i, "hps.mixes_samples",
                             builder.getStringAttr(why));
    }
  }
};

} // namespace
