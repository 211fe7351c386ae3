//===- DataMovement.cpp - Reshape, Concat, Split, Slice, Gather, ... ------===//
//
// Opset ranges follow the ONNX schemas' version history. Where an older
// opset leaves a negative axis or index undefined (Concat/Split/Squeeze/
// Unsqueeze/Flatten/Slice before 11, Gather indices before 11), it is read
// as opset 11 defines it, as ONNX Runtime does; no valid model differs.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

//===----------------------------------------------------------------------===//
// Symbolic shape tensors: a 1-D integer value whose entries are constants or
// extents of some tensor ("dim d of v"), as exporters build reshape targets
// from Shape -> Gather -> Unsqueeze -> Concat when the batch is dynamic.
//===----------------------------------------------------------------------===//

struct ShapeEntry {
  int64_t constant = 0;
  Value source; // Null for a constant entry.
  int64_t dim = 0;
};
using ShapeEntries = SmallVector<ShapeEntry>;

/// Entries of the dims [start, end) of `input` (hps.shape's selection).
std::optional<ShapeEntries> evaluateShapeOp(ShapeOp shape) {
  auto dims = rankedShape(shape.getInput());
  if (!dims)
    return std::nullopt;
  int64_t rank = dims->size();
  auto clampAxis = [rank](int64_t axis) {
    return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank);
  };
  int64_t start = clampAxis(shape.getStart());
  int64_t end = clampAxis(shape.getEnd().value_or(rank));
  ShapeEntries entries;
  for (int64_t d = start; d < end; ++d)
    entries.push_back((*dims)[d] == ShapedType::kDynamic
                          ? ShapeEntry{0, shape.getInput(), d}
                          : ShapeEntry{(*dims)[d], nullptr, 0});
  return entries;
}

bool isRank1(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 1;
}

/// The entries of the integer tensor `value`, in element order, through
/// constants, hps.shape, and the ops that move shape entries around.
std::optional<ShapeEntries> evaluateShape(Value value, unsigned depth = 0) {
  if (depth > 32)
    return std::nullopt;
  if (auto ints = getConstantInts(value)) {
    ShapeEntries entries;
    for (int64_t v : *ints)
      entries.push_back({v, nullptr, 0});
    return entries;
  }
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto shape = dyn_cast<ShapeOp>(op))
    return evaluateShapeOp(shape);
  // Reshape-like ops keep the elements and their order.
  if (isa<UnsqueezeOp, SqueezeOp, ReshapeOp, FlattenOp>(op))
    return evaluateShape(op->getOperand(0), depth + 1);
  if (isa<CastOp>(op)) {
    // Only integer casts wide enough to keep every extent keep the values.
    auto from = dyn_cast<IntegerType>(getElementTypeOrSelf(op->getOperand(0)));
    auto to = dyn_cast<IntegerType>(getElementTypeOrSelf(value));
    if (!from || !to || to.getWidth() < 32 || to.isUnsigned())
      return std::nullopt;
    return evaluateShape(op->getOperand(0), depth + 1);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    ShapeEntries entries;
    for (Value input : concat.getInputs()) {
      auto part =
          isRank1(input) ? evaluateShape(input, depth + 1) : std::nullopt;
      if (!part)
        return std::nullopt;
      llvm::append_range(entries, *part);
    }
    return entries;
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    if (!isRank1(gather.getData()))
      return std::nullopt;
    auto data = evaluateShape(gather.getData(), depth + 1);
    auto indices = getConstantInts(gather.getIndices());
    if (!data || !indices)
      return std::nullopt;
    ShapeEntries entries;
    int64_t size = data->size();
    for (int64_t index : *indices) {
      if (index < -size || index >= size)
        return std::nullopt;
      entries.push_back((*data)[index < 0 ? index + size : index]);
    }
    return entries;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    if (!isRank1(slice.getInput()) || slice.getStarts().size() != 1)
      return std::nullopt;
    auto data = evaluateShape(slice.getInput(), depth + 1);
    if (!data)
      return std::nullopt;
    int64_t start = 0, step = slice.getSteps()[0];
    int64_t count = shapes::sliceCount(data->size(), slice.getStarts()[0],
                                       slice.getEnds()[0], step, &start);
    ShapeEntries entries;
    for (int64_t i = 0; i < count; ++i)
      entries.push_back((*data)[start + i * step]);
    return entries;
  }
  return std::nullopt;
}

/// Integer shape arithmetic whose every entry is known (e.g. the static
/// extents of a tensor whose batch is dynamic) becomes a constant, so that
/// whatever reads it folds too.
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

//===----------------------------------------------------------------------===//
// Reshape and friends.
//===----------------------------------------------------------------------===//

/// The static target of Reshape(input, shape): known entries stay, an entry
/// that is the input's own dim at the same position becomes 0 (copy, unless
/// allowzero), and a single remaining unknown becomes -1. Two unknowns (or
/// an unknown beside a literal -1) cannot be expressed.
std::optional<SmallVector<int64_t>> reshapeTarget(Value input, Value shape,
                                                  bool allowZero) {
  auto entries = evaluateShape(shape);
  if (!entries)
    return std::nullopt;
  SmallVector<int64_t> target;
  int64_t inferred = 0;
  for (auto [i, entry] : llvm::enumerate(*entries)) {
    if (!entry.source) {
      inferred += entry.constant == -1;
      target.push_back(entry.constant);
      continue;
    }
    if (!allowZero && entry.source == input &&
        static_cast<int64_t>(i) == entry.dim) {
      target.push_back(0);
      continue;
    }
    auto sourceShape = rankedShape(entry.source);
    if (sourceShape && (*sourceShape)[entry.dim] != ShapedType::kDynamic) {
      target.push_back((*sourceShape)[entry.dim]);
      continue;
    }
    ++inferred;
    target.push_back(-1);
  }
  if (inferred > 1)
    return std::nullopt;
  return target;
}

LogicalResult legalizeReshape(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<bool> allowZero = getFlag(node, "allowzero");
  if (!allowZero)
    return fail(node, rewriter, "allowzero must be 0 or 1");
  std::optional<SmallVector<int64_t>> target =
      reshapeTarget(node.input(0), node.input(1), *allowZero);
  if (!target)
    return fail(node, rewriter, "shape not resolved");
  return replaceNodeChecked<ReshapeOp>(
      node, rewriter, node.input(0), rewriter.getDenseI64ArrayAttr(*target),
      unitIf(rewriter, *allowZero), DeviceAttr());
}

/// "2x6": a static shape as the messages write it.
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  for (int64_t dim : shape)
    text += (text.empty() ? "" : "x") + std::to_string(dim);
  return text.empty() ? "a scalar" : text;
}

/// Flatten: axis in [0, rank] (negative from opset 11), default 1.
LogicalResult legalizeFlatten(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNodeChecked<FlattenOp>(
      node, rewriter, node.input(0),
      rewriter.getI64IntegerAttr(node.getInt("axis", 1)), DeviceAttr());
}

/// Squeeze/Unsqueeze axes: an attribute before opset 13, an optional
/// constant input from 13. Empty when absent.
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
    return fail(node, rewriter, "axes not constant");
  if (axes->empty()) {
    // Without axes every size-1 axis goes: only known for static shapes.
    auto shape = rankedShape(node.input(0));
    if (!shape || llvm::is_contained(*shape, ShapedType::kDynamic))
      return fail(node, rewriter,
                  "squeezing all size-1 axes of a dynamic "
                  "shape");
    for (auto [i, dim] : llvm::enumerate(*shape))
      if (dim == 1)
        axes->push_back(i);
  }
  return replaceNodeChecked<SqueezeOp>(node, rewriter, node.input(0),
                                       rewriter.getDenseI64ArrayAttr(*axes),
                                       DeviceAttr());
}

LogicalResult legalizeUnsqueeze(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> axes = squeezeAxes(node);
  if (!axes || axes->empty())
    return fail(node, rewriter, "axes missing or not constant");
  return replaceNodeChecked<UnsqueezeOp>(node, rewriter, node.input(0),
                                         rewriter.getDenseI64ArrayAttr(*axes),
                                         DeviceAttr());
}

LogicalResult legalizeTranspose(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> perm = node.getInts("perm");
  if (!perm) {
    auto shape = rankedShape(node.input(0));
    if (!shape)
      return fail(node, rewriter, "default perm of an unranked input");
    perm.emplace();
    for (int64_t i = shape->size() - 1; i >= 0; --i)
      perm->push_back(i); // The default reverses the axes.
  }
  return replaceNodeChecked<TransposeOp>(node, rewriter, node.input(0),
                                         rewriter.getDenseI64ArrayAttr(*perm),
                                         DeviceAttr());
}

LogicalResult legalizeExpand(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(1));
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return fail(node, rewriter, "shape not constant");
  return replaceNodeChecked<ExpandOp>(node, rewriter, node.input(0),
                                      rewriter.getDenseI64ArrayAttr(*shape),
                                      DeviceAttr());
}

/// DepthToSpace (6-17; mode DCR or CRD from 11) and SpaceToDepth (6-17) on
/// a static [N, C, H, W]: both are reshape -> transpose -> reshape, the
/// block axes split off the channels (or the spatial axes) and interleaved.
LogicalResult legalizeBlockShuffle(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  int64_t b = node.getInt("blocksize", 0);
  if (!type || type.getRank() != 4 || !type.hasStaticShape() || b < 1)
    return fail(node, rewriter, "needs a static 4-D input and a blocksize");
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  SmallVector<int64_t> split, perm, result;
  if (node.getOp().getOpType() == "DepthToSpace") {
    if (c % (b * b))
      return fail(node, rewriter, "channels not divisible by blocksize^2");
    std::string mode = node.getString("mode", "DCR");
    if (mode == "DCR") {
      split = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return fail(node, rewriter, "mode is not DCR or CRD");
    }
    result = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b || w % b)
      return fail(node, rewriter, "spatial extents not divisible");
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    result = {n, c * b * b, h / b, w / b};
  }
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type element = type.getElementType();
  SmallVector<int64_t> permuted;
  for (int64_t axis : perm)
    permuted.push_back(split[axis]);
  Value moved = rewriter.create<TransposeOp>(
      loc, RankedTensorType::get(permuted, element),
      reshapeTo(node, rewriter, node.input(0), split),
      rewriter.getDenseI64ArrayAttr(perm), device);
  return replaceNodeWithCompatible(
      node, reshapeTo(node, rewriter, moved, result), rewriter);
}

/// Tile (6-17) with constant repeats over a static shape.
LogicalResult legalizeTile(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  std::optional<SmallVector<int64_t>> repeats = getConstantInts(node.input(1));
  if (!type || !type.hasStaticShape())
    return fail(node, rewriter, "the input's shape is not static");
  if (!repeats || repeats->size() != static_cast<size_t>(type.getRank()))
    return fail(node, rewriter, "repeats are not constant, one per axis");
  if (llvm::any_of(*repeats, [](int64_t r) { return r < 1; }))
    return fail(node, rewriter,
                "a repeat below 1 (an empty result) is not supported");
  return replaceNodeWithCompatible(
      node, repeatAxes(node, rewriter, node.input(0), *repeats, true),
      rewriter);
}

//===----------------------------------------------------------------------===//
// Concat, Split, Slice.
//===----------------------------------------------------------------------===//

LogicalResult legalizeConcat(ONNXNode node, PatternRewriter &rewriter) {
  if (!node.hasAttr("axis"))
    return fail(node, rewriter, "axis is required");
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    if (!node.input(i))
      return fail(node, rewriter, "Concat has no optional inputs");
    inputs.push_back(node.input(i));
  }
  return replaceNodeChecked<ConcatOp>(
      node, rewriter, ValueRange(inputs),
      rewriter.getI64IntegerAttr(node.getInt("axis", 0)), DeviceAttr());
}

/// Split: sizes from the `split` attribute (before 13) or the optional
/// constant input (13+); absent (or empty) means equal parts, one per
/// output, which must divide the axis. From 18, num_outputs instead asks
/// for chunks of ceil(extent / num_outputs), the last one smaller.
LogicalResult legalizeSplit(ONNXNode node, PatternRewriter &rewriter) {
  auto shape = rankedShape(node.input(0));
  if (!shape)
    return fail(node, rewriter, "unranked input");
  std::optional<int64_t> axis = node.getAxis("axis", 0, shape->size());
  if (!axis)
    return fail(node, rewriter, "axis out of range");
  unsigned outputs = node.getOp().getNumResults();
  std::optional<SmallVector<int64_t>> sizes;
  if (node.getOpset() < 13) {
    sizes = node.getInts("split");
  } else if (Value split = node.input(1)) {
    if (!(sizes = getConstantInts(split)))
      return fail(node, rewriter, "split not constant");
  }
  if (node.getOpset() >= 18 && node.hasAttr("num_outputs")) {
    int64_t extent = (*shape)[*axis];
    int64_t count = node.getInt("num_outputs", 0);
    if (sizes)
      return fail(node, rewriter, "both split and num_outputs are given");
    if (count != static_cast<int64_t>(outputs))
      return fail(node, rewriter, "num_outputs differs from the outputs");
    if (extent == ShapedType::kDynamic)
      return fail(node, rewriter, "the split axis is not static");
    int64_t chunk = (extent + count - 1) / count;
    if (extent - chunk * (count - 1) < 0)
      return fail(node, rewriter, "num_outputs leaves an empty tail");
    sizes = SmallVector<int64_t>(outputs, chunk);
    sizes->back() = extent - chunk * (count - 1);
  }
  if (!sizes || sizes->empty()) {
    int64_t extent = (*shape)[*axis];
    if (extent == ShapedType::kDynamic || extent % outputs != 0)
      return fail(node, rewriter, "no equal split");
    sizes = SmallVector<int64_t>(outputs, extent / outputs);
  }
  // Multiple results: built here rather than through replaceNode.
  auto build = [&](OpBuilder &builder) {
    return builder.create<SplitOp>(
        node.getLoc(), node.getOp().getResultTypes(), node.input(0),
        builder.getI64IntegerAttr(*axis), builder.getDenseI64ArrayAttr(*sizes),
        node.getOp().getDeviceAttr());
  };
  if (!probeVerifies(rewriter.getContext(), build))
    return fail(node, rewriter, "sizes do not match the outputs");
  rewriter.replaceOp(node.getOp(), build(rewriter).getResults());
  return success();
}

/// Slice: starts/ends/axes attributes before opset 10; from 10 constant
/// inputs starts, ends and optional axes and steps. Axes default to
/// 0..n-1, steps to 1.
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
      return fail(node, rewriter, "axes not constant");
    if (Value s = node.input(4); s && !(steps = getConstantInts(s)))
      return fail(node, rewriter, "steps not constant");
  }
  if (!starts || !ends)
    return fail(node, rewriter, "starts/ends missing or not constant");
  if (!axes)
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  if (!steps)
    steps = SmallVector<int64_t>(starts->size(), 1);
  return replaceNodeChecked<SliceOp>(
      node, rewriter, node.input(0), rewriter.getDenseI64ArrayAttr(*starts),
      rewriter.getDenseI64ArrayAttr(*ends),
      rewriter.getDenseI64ArrayAttr(*axes),
      rewriter.getDenseI64ArrayAttr(*steps), DeviceAttr());
}

//===----------------------------------------------------------------------===//
// Pad, Gather.
//===----------------------------------------------------------------------===//

/// The pad value of an opset-11+ Pad: the single element of a constant of
/// the input's element type; zero when omitted.
FailureOr<TypedAttr> padValueInput(ONNXNode node, Type element) {
  Value input = node.input(2);
  if (!input)
    return makeScalarAttr(element, 0);
  auto value = dyn_cast_or_null<DenseElementsAttr>(getConstantValue(input));
  if (!value || value.getNumElements() != 1 ||
      value.getElementType() != element)
    return failure();
  return cast<TypedAttr>(value.getSplatValue<Attribute>());
}

/// Pad's "wrap" mode (19) on a static input: per axis, a crop (negative
/// pads) by hps.slice, then the last `begin` and first `end` elements
/// copied around the axis by hps.slice and hps.concat. Pads wider than the
/// (cropped) axis would wrap more than once and stay generic.
LogicalResult legalizeWrapPad(ONNXNode node, PatternRewriter &rewriter,
                              ArrayRef<int64_t> pads) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() ||
      static_cast<int64_t>(pads.size()) != 2 * type.getRank())
    return fail(node, rewriter, "wrap needs a static input");
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t kept = shape[axis] + std::min<int64_t>(pads[axis], 0) +
                   std::min<int64_t>(pads[rank + axis], 0);
    if (kept < 1 || pads[axis] > kept || pads[rank + axis] > kept)
      return fail(node, rewriter, "wrap pads exceed the axis");
  }
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type element = type.getElementType();
  auto slice = [&](Value value, int64_t axis, int64_t start, int64_t end) {
    SmallVector<int64_t> sliced(cast<ShapedType>(value.getType()).getShape());
    sliced[axis] = end - start;
    return rewriter.create<SliceOp>(loc, RankedTensorType::get(sliced, element),
                                    value,
                                    rewriter.getDenseI64ArrayAttr({start}),
                                    rewriter.getDenseI64ArrayAttr({end}),
                                    rewriter.getDenseI64ArrayAttr({axis}),
                                    rewriter.getDenseI64ArrayAttr({1}), device);
  };
  Value current = node.input(0);
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t begin = pads[axis], end = pads[rank + axis];
    if (begin < 0 || end < 0) {
      current = slice(current, axis, std::max<int64_t>(-begin, 0),
                      shape[axis] - std::max<int64_t>(-end, 0));
      shape[axis] = cast<ShapedType>(current.getType()).getDimSize(axis);
    }
    SmallVector<Value> parts;
    if (begin > 0)
      parts.push_back(slice(current, axis, shape[axis] - begin, shape[axis]));
    parts.push_back(current);
    if (end > 0)
      parts.push_back(slice(current, axis, 0, end));
    if (parts.size() == 1)
      continue;
    shape[axis] += std::max<int64_t>(begin, 0) + std::max<int64_t>(end, 0);
    current = rewriter.create<ConcatOp>(
        loc, RankedTensorType::get(shape, element), parts,
        rewriter.getI64IntegerAttr(axis), device);
  }
  return replaceNodeWithCompatible(node, current, rewriter);
}

/// Pad: pads/mode/value attributes before 11; pads and the optional
/// constant_value as constant inputs from 11, and from 18 an optional
/// constant axes input naming the axes pads covers (the others keep their
/// extent); mode "wrap" from 19. Negative pads crop.
LogicalResult legalizePad(ONNXNode node, PatternRewriter &rewriter) {
  auto inputType = dyn_cast<ShapedType>(node.input(0).getType());
  if (!inputType)
    return fail(node, rewriter, "input is not a tensor");
  Type element = inputType.getElementType();
  std::optional<SmallVector<int64_t>> pads;
  FailureOr<TypedAttr> value = failure();
  if (node.getOpset() < 11) {
    pads = node.getInts("pads");
    value = makeScalarAttr(element, node.getFloat("value", 0.0f));
  } else {
    pads = getConstantInts(node.input(1));
    value = padValueInput(node, element);
  }
  if (!pads)
    return fail(node, rewriter, "pads missing or not constant");
  if (Value axesInput = node.getOpset() >= 18 ? node.input(3) : Value()) {
    std::optional<SmallVector<int64_t>> axes = getConstantInts(axesInput);
    if (!axes)
      return fail(node, rewriter, "axes not constant");
    if (!inputType.hasRank())
      return fail(node, rewriter, "unranked input");
    int64_t rank = inputType.getRank(), count = axes->size();
    if (static_cast<int64_t>(pads->size()) != 2 * count)
      return fail(node, rewriter, "pads needs two values per axis");
    std::optional<SmallVector<int64_t>> listed = normalizeAxisList(*axes, rank);
    if (!listed)
      return fail(node, rewriter, "axes out of range or repeated");
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate(*listed)) {
      full[a] = (*pads)[i];
      full[rank + a] = (*pads)[count + i];
    }
    pads = std::move(full);
  }
  if (failed(value))
    return fail(node, rewriter, "constant_value not a constant scalar");
  std::string modeName = node.getString("mode", "constant");
  if (modeName == "wrap" && node.getOpset() >= 19)
    return legalizeWrapPad(node, rewriter, *pads);
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode)
    return fail(node, rewriter, "unknown mode");
  return replaceNodeChecked<PadOp>(
      node, rewriter, node.input(0), rewriter.getDenseI64ArrayAttr(*pads),
      PadModeAttr::get(rewriter.getContext(), *mode), *value, DeviceAttr());
}

/// CenterCropPad (18): each axis in `axes` (default all) cropped or
/// zero-padded to the constant `shape`, centred; an odd difference puts the
/// extra element at the end. One hps.pad (negative pads crop).
LogicalResult legalizeCenterCropPad(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape())
    return fail(node, rewriter, "needs a static input shape");
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(1));
  if (!shape)
    return fail(node, rewriter, "shape not constant");
  std::optional<SmallVector<int64_t>> axes =
      normalizeAxisList(node.getInts("axes").value_or(
                            llvm::to_vector(llvm::seq<int64_t>(0, rank))),
                        rank);
  if (!axes || axes->size() != shape->size() ||
      llvm::any_of(*shape, [](int64_t target) { return target < 0; }))
    return fail(node, rewriter,
                "axes out of range or repeated, or shape "
                "not one extent per axis");
  SmallVector<int64_t> pads(2 * rank, 0);
  for (auto [a, target] : llvm::zip(*axes, *shape)) {
    int64_t difference = target - type.getDimSize(a);
    int64_t begin = (difference < 0 ? -difference : difference) / 2;
    pads[a] = difference < 0 ? -begin : begin;
    pads[rank + a] = difference - pads[a];
  }
  return replaceNodeChecked<PadOp>(
      node, rewriter, node.input(0), rewriter.getDenseI64ArrayAttr(pads),
      PadModeAttr::get(rewriter.getContext(), PadMode::Constant),
      makeScalarAttr(type.getElementType(), 0), DeviceAttr());
}

/// Gather on a 2-D weight along axis 0 with integer ids is a sparse
/// embedding lookup (served by the parameter server); any other gather is
/// dense.
LogicalResult legalizeGather(ONNXNode node, PatternRewriter &rewriter) {
  Value data = node.input(0), indices = node.input(1);
  int64_t axis = node.getInt("axis", 0);
  auto table = rankedShape(data);
  bool integerIds = isa<IntegerType>(getElementTypeOrSelf(indices));
  // Constant indices out of range: the bundle compiled and failed on every
  // run ("Gather: index 7 out of range [-4, 4)").
  if (std::optional<int64_t> at =
          table ? node.getAxis("axis", 0, table->size()) : std::nullopt) {
    const int64_t extent = (*table)[*at];
    if (extent != ShapedType::kDynamic)
      if (std::optional<SmallVector<int64_t>> constant =
              getConstantInts(indices))
        for (int64_t index : *constant)
          if (index < -extent || index >= extent)
            return fail(node, rewriter,
                        "index " + std::to_string(index) +
                            " is out of range [" + std::to_string(-extent) +
                            ", " + std::to_string(extent) + ") of axis " +
                            std::to_string(axis));
  }
  if (data.getDefiningOp<WeightOp>() && table && table->size() == 2 &&
      (axis == 0 || axis == -2) && integerIds)
    return replaceNodeChecked<EmbeddingLookupOp>(
        node, rewriter, data, indices,
        EmbeddingPoolingAttr::get(rewriter.getContext(),
                                  EmbeddingPooling::None),
        DeviceAttr());
  return replaceNodeChecked<GatherOp>(node, rewriter, data, indices,
                                      rewriter.getI64IntegerAttr(axis),
                                      DeviceAttr());
}

} // namespace

std::optional<std::string> explainDataMovement(OnnxNodeOp op) {
  ONNXNode node(op);
  if (op.getOpType() != "Reshape" || !node.input(1))
    return std::nullopt;
  auto input = rankedShape(node.input(0));
  std::optional<bool> allowZero = getFlag(node, "allowzero");
  if (!input || llvm::is_contained(*input, ShapedType::kDynamic) || !allowZero)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> target =
      reshapeTarget(node.input(0), node.input(1), *allowZero);
  if (!target)
    return std::nullopt;
  int64_t elements = 1, kept = 1;
  bool inferred = false;
  for (int64_t dim : *input)
    elements *= dim;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == -1)
      inferred = true;
    else if (dim == 0 && !*allowZero && i < input->size())
      kept *= (*input)[i];
    else if (dim < 0)
      return "its shape holds " + std::to_string(dim) +
             ", which is neither -1 nor an extent";
    else
      kept *= dim;
  }
  std::string shape;
  for (int64_t dim : *target)
    shape += (shape.empty() ? "" : ", ") + std::to_string(dim);
  const std::string what = "it reshapes " + formatShape(*input) + " (" +
                           std::to_string(elements) + " elements) to [" +
                           shape + "]";
  if (!inferred && kept != elements)
    return what + ", " + std::to_string(kept) + " elements";
  if (inferred && (kept == 0 || elements % kept != 0))
    return what + ", whose known extents (" + std::to_string(kept) +
           " elements) do not divide it";
  return std::nullopt;
}

void populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldResolvedShapeValue>(patterns.getContext());
  addONNXPattern(patterns, "Reshape", kMinOpset, 13, {}, legalizeReshape);
  addONNXPattern(patterns, "Reshape", 14, kMaxOpset, {"allowzero"},
                 legalizeReshape);
  addONNXPattern(patterns, "Flatten", kMinOpset, 8, {"axis"}, legalizeFlatten);
  addONNXPattern(patterns, "Flatten", 9, 10, {"axis"}, legalizeFlatten);
  addONNXPattern(patterns, "Flatten", 11, kMaxOpset, {"axis"}, legalizeFlatten);
  addONNXPattern(patterns, "Concat", kMinOpset, 10, {"axis"}, legalizeConcat);
  addONNXPattern(patterns, "Concat", 11, kMaxOpset, {"axis"}, legalizeConcat);
  addONNXPattern(patterns, "Split", kMinOpset, 10, {"axis", "split"},
                 legalizeSplit);
  addONNXPattern(patterns, "Split", 11, 12, {"axis", "split"}, legalizeSplit);
  addONNXPattern(patterns, "Split", 13, 17, {"axis"}, legalizeSplit);
  addONNXPattern(patterns, "Split", 18, kMaxOpset, {"axis", "num_outputs"},
                 legalizeSplit);
  addONNXPattern(patterns, "Slice", kMinOpset, 9, {"axes", "ends", "starts"},
                 legalizeSlice);
  addONNXPattern(patterns, "Slice", 10, 10, {}, legalizeSlice);
  addONNXPattern(patterns, "Slice", 11, kMaxOpset, {}, legalizeSlice);
  addONNXPattern(patterns, "Transpose", kMinOpset, kMaxOpset, {"perm"},
                 legalizeTranspose);
  addONNXPattern(patterns, "Squeeze", kMinOpset, 10, {"axes"}, legalizeSqueeze);
  addONNXPattern(patterns, "Squeeze", 11, 12, {"axes"}, legalizeSqueeze);
  addONNXPattern(patterns, "Squeeze", 13, kMaxOpset, {}, legalizeSqueeze);
  addONNXPattern(patterns, "Unsqueeze", kMinOpset, 10, {"axes"},
                 legalizeUnsqueeze);
  addONNXPattern(patterns, "Unsqueeze", 11, 12, {"axes"}, legalizeUnsqueeze);
  addONNXPattern(patterns, "Unsqueeze", 13, kMaxOpset, {}, legalizeUnsqueeze);
  addONNXPattern(patterns, "Expand", 8, kMaxOpset, {}, legalizeExpand);
  addONNXPattern(patterns, "Tile", kMinOpset, kMaxOpset, {}, legalizeTile);
  addONNXPattern(patterns, "DepthToSpace", kMinOpset, 10, {"blocksize"},
                 legalizeBlockShuffle);
  addONNXPattern(patterns, "DepthToSpace", 11, kMaxOpset, {"blocksize", "mode"},
                 legalizeBlockShuffle);
  addONNXPattern(patterns, "SpaceToDepth", kMinOpset, kMaxOpset, {"blocksize"},
                 legalizeBlockShuffle);
  addONNXPattern(patterns, "Pad", kMinOpset, 10, {"mode", "pads", "value"},
                 legalizePad);
  addONNXPattern(patterns, "Pad", 11, 17, {"mode"}, legalizePad);
  addONNXPattern(patterns, "Pad", 18, 18, {"mode"}, legalizePad);
  addONNXPattern(patterns, "Pad", 19, kMaxOpset, {"mode"}, legalizePad);
  addONNXPattern(patterns, "CenterCropPad", 18, kMaxOpset, {"axes"},
                 legalizeCenterCropPad);
  addONNXPattern(patterns, "Gather", kMinOpset, 10, {"axis"}, legalizeGather);
  addONNXPattern(patterns, "Gather", 11, kMaxOpset, {"axis"}, legalizeGather);
}

} // namespace heterps::hps
