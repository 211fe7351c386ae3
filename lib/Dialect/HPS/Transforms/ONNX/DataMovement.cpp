//===- DataMovement.cpp - Reshape, Concat, Split, Slice, Gather, ... ------===//

#include "../ONNXPattern.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

//===----------------------------------------------------------------------===//
// Symbolic shape tensors: a 1-D i64 value whose entries are constants or
// extents of some tensor ("dim d of v"), as exporters build reshape targets
// from Shape -> Gather -> Unsqueeze -> Concat with a dynamic batch.
//===----------------------------------------------------------------------===//

struct ShapeEntry {
  int64_t constant = 0;
  Value source; // Null for a constant entry.
  int64_t dim = 0;
};

std::optional<SmallVector<ShapeEntry>> evaluateShape(Value value,
                                                     unsigned depth = 0) {
  if (depth > 16)
    return std::nullopt;
  if (auto ints = getConstantInts(value)) {
    SmallVector<ShapeEntry> entries;
    for (int64_t v : *ints)
      entries.push_back({v, nullptr, 0});
    return entries;
  }
  Operation *op = value.getDefiningOp();
  if (auto shape = dyn_cast_or_null<ShapeOp>(op)) {
    auto dims = rankedShape(shape.getInput());
    auto result = rankedShape(shape.getResult());
    if (!dims || !result || (*result)[0] == ShapedType::kDynamic)
      return std::nullopt;
    int64_t rank = dims->size(), start = shape.getStart();
    if (start < 0)
      start += rank;
    SmallVector<ShapeEntry> entries;
    for (int64_t i = 0; i < (*result)[0]; ++i) {
      int64_t d = (*dims)[start + i];
      entries.push_back(d == ShapedType::kDynamic
                            ? ShapeEntry{0, shape.getInput(), start + i}
                            : ShapeEntry{d, nullptr, 0});
    }
    return entries;
  }
  if (isa_and_nonnull<UnsqueezeOp, SqueezeOp, CastOp, ReshapeOp>(op))
    return evaluateShape(op->getOperand(0), depth + 1); // Same elements.
  // Beyond this point only 1-D shape vectors are understood.
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() > 1)
    return std::nullopt;
  if (auto concat = dyn_cast_or_null<ConcatOp>(op)) {
    SmallVector<ShapeEntry> entries;
    for (Value input : concat.getInputs()) {
      auto part = evaluateShape(input, depth + 1);
      if (!part)
        return std::nullopt;
      llvm::append_range(entries, *part);
    }
    return entries;
  }
  if (auto gather = dyn_cast_or_null<GatherOp>(op)) {
    auto data = evaluateShape(gather.getData(), depth + 1);
    auto indices = getConstantInts(gather.getIndices());
    auto dataType = dyn_cast<RankedTensorType>(gather.getData().getType());
    if (!data || !indices || !dataType || dataType.getRank() != 1)
      return std::nullopt;
    SmallVector<ShapeEntry> entries;
    int64_t size = data->size();
    for (int64_t index : *indices) {
      if (index < -size || index >= size)
        return std::nullopt;
      entries.push_back((*data)[index < 0 ? index + size : index]);
    }
    return entries;
  }
  if (auto slice = dyn_cast_or_null<SliceOp>(op)) {
    auto data = evaluateShape(slice.getInput(), depth + 1);
    auto dataType = dyn_cast<RankedTensorType>(slice.getInput().getType());
    if (!data || slice.getStarts().size() != 1 || !dataType ||
        dataType.getRank() != 1)
      return std::nullopt;
    int64_t start = 0, step = slice.getSteps()[0];
    int64_t count = shapes::sliceCount(data->size(), slice.getStarts()[0],
                                       slice.getEnds()[0], step, &start);
    SmallVector<ShapeEntry> entries;
    for (int64_t i = 0; i < count; ++i)
      entries.push_back((*data)[start + i * step]);
    return entries;
  }
  return std::nullopt;
}

/// Integer shape arithmetic whose every entry is known (e.g. the static
/// extents of a tensor whose batch is dynamic) becomes a constant, so that
/// arithmetic on it folds too.
struct FoldResolvedShapeValue : public RewritePattern {
  FoldResolvedShapeValue(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<GatherOp, UnsqueezeOp, SqueezeOp, ConcatOp, SliceOp, CastOp>(op))
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || type.getRank() > 1 ||
        !type.getElementType().isInteger(64))
      return failure();
    auto entries = evaluateShape(op->getResult(0));
    if (!entries ||
        static_cast<int64_t>(entries->size()) != type.getNumElements() ||
        llvm::any_of(*entries, [](const ShapeEntry &e) { return e.source; }))
      return failure();
    SmallVector<int64_t> values;
    for (const ShapeEntry &entry : *entries)
      values.push_back(entry.constant);
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, DenseIntElementsAttr::get(type, values));
    return success();
  }
};

/// The static reshape target of `node` (input 0 reshaped by input 1): an
/// entry that is the input's own dim at the same position becomes 0 (copy),
/// one unknown entry becomes -1; more unknowns leave the node generic.
std::optional<SmallVector<int64_t>> reshapeTarget(ONNXNode node,
                                                  bool allowZero) {
  auto entries = evaluateShape(node.input(1));
  if (!entries)
    return std::nullopt;
  auto inputShape = rankedShape(node.input(0));
  SmallVector<int64_t> target;
  int unknown = 0;
  bool hasInferred = false;
  for (auto [i, entry] : llvm::enumerate(*entries)) {
    if (!entry.source) {
      hasInferred |= entry.constant == -1;
      target.push_back(entry.constant);
      continue;
    }
    if (!allowZero && entry.source == node.input(0) &&
        static_cast<int64_t>(i) == entry.dim) {
      target.push_back(0);
      continue;
    }
    auto sourceShape = rankedShape(entry.source);
    int64_t extent =
        sourceShape ? (*sourceShape)[entry.dim] : ShapedType::kDynamic;
    if (extent != ShapedType::kDynamic) {
      target.push_back(extent);
      continue;
    }
    ++unknown;
    target.push_back(-1);
  }
  (void)inputShape;
  if (unknown > 1 || (unknown == 1 && hasInferred))
    return std::nullopt;
  return target;
}

LogicalResult legalizeReshape(ONNXNode node, PatternRewriter &rewriter) {
  bool allowZero = node.getInt("allowzero", 0) != 0;
  std::optional<SmallVector<int64_t>> target = reshapeTarget(node, allowZero);
  if (!target)
    return rewriter.notifyMatchFailure(node.getOp(), "shape not resolved");
  auto expected =
      rankedShape(node.input(0))
          ? shapes::reshape(*rankedShape(node.input(0)), *target, allowZero)
          : std::optional<SmallVector<int64_t>>(
                SmallVector<int64_t>(target->size(), ShapedType::kDynamic));
  if (!expected)
    return rewriter.notifyMatchFailure(node.getOp(), "invalid reshape");
  return replaceNode<ReshapeOp>(
      node, rewriter, node.input(0), rewriter.getDenseI64ArrayAttr(*target),
      allowZero ? rewriter.getUnitAttr() : UnitAttr(), DeviceAttr());
}

LogicalResult legalizeFlatten(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNode<FlattenOp>(
      node, rewriter, node.input(0),
      rewriter.getI64IntegerAttr(node.getInt("axis", 1)), DeviceAttr());
}

LogicalResult legalizeConcat(ONNXNode node, PatternRewriter &rewriter) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < node.numInputs(); ++i)
    if (Value input = node.input(i))
      inputs.push_back(input);
  if (!node.hasAttr("axis"))
    return failure();
  return replaceNode<ConcatOp>(
      node, rewriter, inputs,
      rewriter.getI64IntegerAttr(node.getInt("axis", 0)), DeviceAttr());
}

/// Split: sizes from the `split` attribute (before 13) or the optional
/// constant input (13+), else equal parts.
LogicalResult legalizeSplit(ONNXNode node, PatternRewriter &rewriter) {
  auto shape = rankedShape(node.input(0));
  if (!shape)
    return rewriter.notifyMatchFailure(node.getOp(), "unranked input");
  std::optional<int64_t> axisIndex = node.getAxis("axis", 0, shape->size());
  if (!axisIndex)
    return failure();
  int64_t axis = *axisIndex;
  unsigned outputs = node.getOp().getNumResults();
  std::optional<SmallVector<int64_t>> sizes;
  if (node.getOpset() >= 13) {
    if (Value split = node.input(1))
      if (!(sizes = getConstantInts(split)))
        return rewriter.notifyMatchFailure(node.getOp(), "split not constant");
  } else {
    sizes = node.getInts("split");
  }
  if (!sizes) {
    int64_t extent = (*shape)[axis];
    if (extent == ShapedType::kDynamic || extent % outputs != 0)
      return rewriter.notifyMatchFailure(node.getOp(), "uneven split");
    sizes = SmallVector<int64_t>(outputs, extent / outputs);
  }
  if (sizes->size() != outputs)
    return failure();
  auto split = rewriter.create<SplitOp>(
      node.getLoc(), node.getOp().getResultTypes(), node.input(0),
      rewriter.getI64IntegerAttr(axis), rewriter.getDenseI64ArrayAttr(*sizes),
      node.getOp().getDeviceAttr());
  rewriter.replaceOp(node.getOp(), split.getResults());
  return success();
}

/// Slice: starts/ends/axes attributes before opset 10, constant inputs
/// (with optional axes and steps) from 10.
LogicalResult legalizeSlice(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (node.getOpset() < 10) {
    starts = node.getInts("starts");
    ends = node.getInts("ends");
    axes = node.getInts("axes");
  } else {
    starts = getConstantInts(node.input(1));
    ends = getConstantInts(node.input(2));
    if (Value a = node.input(3); a && !(axes = getConstantInts(a)))
      return rewriter.notifyMatchFailure(node.getOp(), "axes not constant");
    if (Value s = node.input(4); s && !(steps = getConstantInts(s)))
      return rewriter.notifyMatchFailure(node.getOp(), "steps not constant");
  }
  if (!starts || !ends || starts->size() != ends->size())
    return rewriter.notifyMatchFailure(node.getOp(), "bounds not constant");
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i)
      axes->push_back(i);
  }
  if (!steps)
    steps = SmallVector<int64_t>(starts->size(), 1);
  return replaceNode<SliceOp>(
      node, rewriter, node.input(0), rewriter.getDenseI64ArrayAttr(*starts),
      rewriter.getDenseI64ArrayAttr(*ends),
      rewriter.getDenseI64ArrayAttr(*axes),
      rewriter.getDenseI64ArrayAttr(*steps), DeviceAttr());
}

LogicalResult legalizeTranspose(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> perm = node.getInts("perm");
  if (!perm) {
    auto shape = rankedShape(node.input(0));
    if (!shape)
      return failure();
    perm.emplace();
    for (int64_t i = shape->size() - 1; i >= 0; --i)
      perm->push_back(i); // The default reverses the axes.
  }
  return replaceNode<TransposeOp>(node, rewriter, node.input(0),
                                  rewriter.getDenseI64ArrayAttr(*perm),
                                  DeviceAttr());
}

/// Squeeze/Unsqueeze axes: an attribute before 13, a constant input after.
std::optional<SmallVector<int64_t>> squeezeAxes(ONNXNode node) {
  if (node.getOpset() < 13)
    return node.getInts("axes").value_or(SmallVector<int64_t>{});
  if (Value axes = node.input(1))
    return getConstantInts(axes);
  return SmallVector<int64_t>{};
}

LogicalResult legalizeSqueeze(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> axes = squeezeAxes(node);
  if (!axes)
    return rewriter.notifyMatchFailure(node.getOp(), "axes not constant");
  if (axes->empty()) {
    // Without axes every size-1 axis goes: only known for static shapes.
    auto shape = rankedShape(node.input(0));
    if (!shape || llvm::is_contained(*shape, ShapedType::kDynamic))
      return rewriter.notifyMatchFailure(node.getOp(), "dynamic shape");
    for (auto [i, dim] : llvm::enumerate(*shape))
      if (dim == 1)
        axes->push_back(i);
  }
  return replaceNode<SqueezeOp>(node, rewriter, node.input(0),
                                rewriter.getDenseI64ArrayAttr(*axes),
                                DeviceAttr());
}

LogicalResult legalizeUnsqueeze(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> axes = squeezeAxes(node);
  if (!axes || axes->empty())
    return rewriter.notifyMatchFailure(node.getOp(), "axes not constant");
  return replaceNode<UnsqueezeOp>(node, rewriter, node.input(0),
                                  rewriter.getDenseI64ArrayAttr(*axes),
                                  DeviceAttr());
}

LogicalResult legalizeExpand(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(1));
  if (!shape)
    return rewriter.notifyMatchFailure(node.getOp(), "shape not constant");
  return replaceNode<ExpandOp>(node, rewriter, node.input(0),
                               rewriter.getDenseI64ArrayAttr(*shape),
                               DeviceAttr());
}

/// Pad: pads/mode/value attributes before 11; pads and the optional
/// constant_value as constant inputs from 11.
LogicalResult legalizePad(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> pads;
  double value = 0;
  if (node.getOpset() < 11) {
    pads = node.getInts("pads");
    value = node.getFloat("value", 0.0f);
  } else {
    pads = getConstantInts(node.input(1));
    if (Value constant = node.input(2)) {
      std::optional<double> v = getConstantScalar(constant);
      if (!v)
        return rewriter.notifyMatchFailure(node.getOp(), "value not constant");
      value = *v;
    }
  }
  if (!pads)
    return rewriter.notifyMatchFailure(node.getOp(), "pads not constant");
  std::string modeName = node.getString("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode)
    return rewriter.notifyMatchFailure(node.getOp(), "unsupported mode");
  Type element = cast<ShapedType>(node.input(0).getType()).getElementType();
  return replaceNode<PadOp>(node, rewriter, node.input(0),
                            rewriter.getDenseI64ArrayAttr(*pads),
                            PadModeAttr::get(rewriter.getContext(), *mode),
                            makeScalarAttr(element, value), DeviceAttr());
}

/// Gather on a 2-D weight along axis 0 with integer ids is a sparse
/// embedding lookup (served by the parameter server); any other gather is
/// dense.
LogicalResult legalizeGather(ONNXNode node, PatternRewriter &rewriter) {
  Value data = node.input(0), indices = node.input(1);
  int64_t axis = node.getInt("axis", 0);
  auto table = rankedShape(data);
  if (data.getDefiningOp<WeightOp>() && table && table->size() == 2 &&
      (axis == 0 || axis == -2))
    return replaceNode<EmbeddingLookupOp>(
        node, rewriter, data, indices,
        EmbeddingPoolingAttr::get(rewriter.getContext(),
                                  EmbeddingPooling::None),
        DeviceAttr());
  return replaceNode<GatherOp>(node, rewriter, data, indices,
                               rewriter.getI64IntegerAttr(axis), DeviceAttr());
}

} // namespace

void populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldResolvedShapeValue>(patterns.getContext());
  addONNXPattern(patterns, "Reshape", kMinOpset, 13, legalizeReshape);
  addONNXPattern(patterns, "Reshape", 14, kMaxOpset, legalizeReshape);
  addONNXPattern(patterns, "Flatten", kMinOpset, 10, legalizeFlatten);
  addONNXPattern(patterns, "Flatten", 11, kMaxOpset, legalizeFlatten);
  addONNXPattern(patterns, "Concat", kMinOpset, kMaxOpset, legalizeConcat);
  addONNXPattern(patterns, "Split", kMinOpset, 12, legalizeSplit);
  addONNXPattern(patterns, "Split", 13, kMaxOpset, legalizeSplit);
  addONNXPattern(patterns, "Slice", kMinOpset, 9, legalizeSlice);
  addONNXPattern(patterns, "Slice", 10, kMaxOpset, legalizeSlice);
  addONNXPattern(patterns, "Transpose", kMinOpset, kMaxOpset,
                 legalizeTranspose);
  addONNXPattern(patterns, "Squeeze", kMinOpset, 12, legalizeSqueeze);
  addONNXPattern(patterns, "Squeeze", 13, kMaxOpset, legalizeSqueeze);
  addONNXPattern(patterns, "Unsqueeze", kMinOpset, 12, legalizeUnsqueeze);
  addONNXPattern(patterns, "Unsqueeze", 13, kMaxOpset, legalizeUnsqueeze);
  addONNXPattern(patterns, "Expand", 8, kMaxOpset, legalizeExpand);
  addONNXPattern(patterns, "Pad", kMinOpset, 10, legalizePad);
  addONNXPattern(patterns, "Pad", 11, kMaxOpset, legalizePad);
  addONNXPattern(patterns, "Gather", kMinOpset, kMaxOpset, legalizeGather);
}

} // namespace heterps::hps
