//===- Reduction.cpp - Reduce*, ArgMax/Min, Hardmax, CumSum, TopK ---------===//
//
// Every Reduce* op takes `axes` as an attribute through opset 17, except
// ReduceSum, which made it an optional input in opset 13 (together with
// noop_with_empty_axes); the others followed in opset 18. Versions 11 (negative
// axes) and 12/13 (more element types) change nothing a valid model can express
// differently.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/ADT/SmallSet.h"

#include <limits>

using namespace mlir;

namespace heterps::hps {
namespace {

/// True unless the input's rank is known and `axes` holds an axis out of
/// [-rank, rank) or names one twice (which hps.reduce would reject).
bool axesAreValid(Value input, ArrayRef<int64_t> axes) {
  auto shape = rankedShape(input);
  if (!shape)
    return true;
  int64_t rank = shape->size();
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return false;
    if (!seen.insert(axis < 0 ? axis + rank : axis).second)
      return false;
  }
  return true;
}

/// hps.reduce over `axes` (every axis when empty); keepdims defaults to 1.
LogicalResult replaceWithReduce(ONNXNode node, PatternRewriter &rewriter,
                                ReduceKind kind, ArrayRef<int64_t> axes) {
  if (!axesAreValid(node.input(0), axes))
    return rewriter.notifyMatchFailure(node.getOp(), "invalid axes");
  UnitAttr keepdims =
      node.getInt("keepdims", 1) ? rewriter.getUnitAttr() : UnitAttr();
  return replaceNode<ReduceOp>(
      node, rewriter, ReduceKindAttr::get(rewriter.getContext(), kind),
      node.input(0), rewriter.getDenseI64ArrayAttr(axes), keepdims,
      DeviceAttr());
}

/// Axes as an attribute; none means every axis.
LogicalResult legalizeAttrAxes(ONNXNode node, PatternRewriter &rewriter,
                               ReduceKind kind) {
  // An axes input belongs to later versions: its meaning here is unknown.
  if (node.numInputs() > 1)
    return rewriter.notifyMatchFailure(node.getOp(), "unexpected input");
  SmallVector<int64_t> axes =
      node.getInts("axes").value_or(SmallVector<int64_t>());
  return replaceWithReduce(node, rewriter, kind, axes);
}

/// Axes as an optional input that must be a constant. No (or empty) axes
/// reduce every axis, or with noop_with_empty_axes make the node an
/// identity.
LogicalResult legalizeInputAxes(ONNXNode node, PatternRewriter &rewriter,
                                ReduceKind kind) {
  // Likewise an axes attribute, which this version would ignore.
  if (node.hasAttr("axes"))
    return rewriter.notifyMatchFailure(node.getOp(), "unexpected attribute");
  SmallVector<int64_t> axes;
  if (Value input = node.input(1)) {
    std::optional<SmallVector<int64_t>> values = getConstantInts(input);
    if (!values)
      return rewriter.notifyMatchFailure(node.getOp(), "axes not constant");
    axes = *values;
  }
  if (axes.empty() && node.getInt("noop_with_empty_axes", 0)) {
    if (node.input(0).getType() != node.resultType())
      return rewriter.notifyMatchFailure(node.getOp(), "type mismatch");
    // No axis is reduced, but each element still takes the reduction's
    // own map, as onnxruntime and the ONNX reference compute it (the
    // spec's "equivalent to the input" read literally gave x for |x|).
    Value x = node.input(0);
    Location loc = node.getLoc();
    DeviceAttr device = node.getOp().getDeviceAttr();
    if (kind == ReduceKind::L1 || kind == ReduceKind::L2)
      x = rewriter.create<AbsOp>(loc, x.getType(), x, device);
    else if (kind == ReduceKind::SumSquare)
      x = rewriter.create<MulOp>(loc, x.getType(), x, x, device);
    else if (kind == ReduceKind::LogSum)
      x = rewriter.create<LogOp>(loc, x.getType(), x, device);
    replaceNodeWith(node, x, rewriter);
    return success();
  }
  return replaceWithReduce(node, rewriter, kind, axes);
}

/// 0, 1, ..., extent - 1 as f32 along `axis` of an otherwise unit shape of
/// `rank` axes: the positions ArgMax and TopK pick from.
Value floatIota(PatternRewriter &rewriter, Location loc, int64_t rank,
                int64_t axis, int64_t extent) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = extent;
  SmallVector<float> positions;
  for (int64_t i = 0; i < extent; ++i)
    positions.push_back(static_cast<float>(i));
  return rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get(shape, rewriter.getF32Type()),
               ArrayRef<float>(positions)));
}

/// An f32 scalar constant.
Value floatScalar(PatternRewriter &rewriter, Location loc, float value) {
  return scalarConstant(rewriter, loc, rewriter.getF32Type(), value);
}

/// ArgMax / ArgMin (6-17) of an f32 input with a static extent along
/// `axis`, from ops that have kernels: m = reduce max (min) keeping the
/// axis; positions equal to m take their index (a float iota, exact below
/// 2^24) and the others the extent (-1 with select_last_index); the min
/// (max) of those, cast to i64, is the first (last) extreme's index. Where
/// ONNX Runtime returns the index of a NaN, this finds no position.
template <ReduceKind extremeKind>
LogicalResult legalizeArgExtreme(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() == 0 || !type.getElementType().isF32())
    return fail(node, rewriter, "needs a ranked f32 input");
  auto resultType = dyn_cast<RankedTensorType>(node.resultType());
  if (resultType && !resultType.getElementType().isInteger(64))
    return fail(node, rewriter, "the result must be i64");
  int64_t rank = type.getRank();
  int64_t axis = node.getInt("axis", 0);
  if (axis < -rank || axis >= rank)
    return fail(node, rewriter, "axis out of range");
  axis = axis < 0 ? axis + rank : axis;
  int64_t extent = type.getDimSize(axis);
  if (ShapedType::isDynamic(extent) || extent > (int64_t(1) << 24))
    return fail(node, rewriter, "needs a static extent below 2^24 on axis");
  std::optional<bool> keepdims = getFlag(node, "keepdims", true);
  std::optional<bool> last = getFlag(node, "select_last_index", false);
  if (!keepdims || !last)
    return fail(node, rewriter, "keepdims and select_last_index are 0 or 1");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  MLIRContext *context = rewriter.getContext();
  Type f32 = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> kept(shape), dropped(shape);
  kept[axis] = 1;
  dropped.erase(dropped.begin() + axis);
  auto axes = rewriter.getDenseI64ArrayAttr({axis});
  Value x = node.input(0);
  Value extreme =
      rewriter.create<ReduceOp>(loc, RankedTensorType::get(kept, f32),
                                ReduceKindAttr::get(context, extremeKind), x,
                                axes, rewriter.getUnitAttr(), device);
  Value hits = rewriter.create<EqualOp>(
      loc, RankedTensorType::get(shape, rewriter.getI1Type()), x, extreme,
      device);
  Value iota = floatIota(rewriter, loc, rank, axis, extent);
  Value miss = floatScalar(rewriter, loc, *last ? -1.0f : float(extent));
  Value candidates =
      rewriter.create<WhereOp>(loc, type, hits, iota, miss, device);
  ArrayRef<int64_t> outShape = *keepdims ? kept : dropped;
  Value index = rewriter.create<ReduceOp>(
      loc, RankedTensorType::get(outShape, f32),
      ReduceKindAttr::get(context, *last ? ReduceKind::Max : ReduceKind::Min),
      candidates, axes, *keepdims ? rewriter.getUnitAttr() : UnitAttr(),
      device);
  // No position equals the extreme where NaN made it NaN: the index would
  // be the miss, past the axis. Such a row answers 0, as onnxruntime does
  // for a row that starts with NaN (or holds nothing else).
  auto outFloat = RankedTensorType::get(outShape, f32);
  auto outFlags = RankedTensorType::get(outShape, rewriter.getI1Type());
  Value missed =
      *last
          ? Value(rewriter.create<LessOp>(
                loc, outFlags, index, floatScalar(rewriter, loc, 0.0f), device))
          : Value(rewriter.create<GreaterEqualOp>(
                loc, outFlags, index, floatScalar(rewriter, loc, float(extent)),
                device));
  index = rewriter.create<WhereOp>(
      loc, outFloat, missed, floatScalar(rewriter, loc, 0.0f), index, device);
  Value result = rewriter.create<CastOp>(
      loc, RankedTensorType::get(outShape, rewriter.getI64Type()), index,
      device);
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// Hardmax of an f32 input with a static shape: 1 at the first position of
/// the maximum along the axis, 0 elsewhere (ArgMax's decomposition, then
/// equal with the iota). Before 13 the input is coerced to 2-D at `axis`
/// (default 1) and the maximum taken over the second dimension; from 13
/// along `axis` (default -1). The output is piecewise constant: no gradient
/// reaches x.
LogicalResult legalizeHardmax(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
      !type.getElementType().isF32())
    return fail(node, rewriter, "needs a static f32 input");
  const bool coerced = node.getOpset() < 13;
  const int64_t rank = type.getRank();
  int64_t axis = node.getInt("axis", coerced ? 1 : -1);
  if (axis < -rank || axis >= rank)
    return fail(node, rewriter, "axis out of range");
  axis = axis < 0 ? axis + rank : axis;
  Value x = node.input(0);
  SmallVector<int64_t> shape(type.getShape());
  if (coerced) {
    int64_t rows = 1, cols = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? rows : cols) *= shape[i];
    shape = {rows, cols};
    axis = 1;
    x = reshapeTo(node, rewriter, x, shape);
  }
  const int64_t extent = shape[axis];
  if (extent > (int64_t(1) << 24))
    return fail(node, rewriter, "needs an extent below 2^24 on the axis");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  MLIRContext *context = rewriter.getContext();
  auto f32Type = RankedTensorType::get(shape, rewriter.getF32Type());
  auto maskType = RankedTensorType::get(shape, rewriter.getI1Type());
  SmallVector<int64_t> kept(shape);
  kept[axis] = 1;
  auto keptType = RankedTensorType::get(kept, rewriter.getF32Type());
  auto axes = rewriter.getDenseI64ArrayAttr({axis});
  const auto viewRank = static_cast<int64_t>(shape.size());
  Value iota = floatIota(rewriter, loc, viewRank, axis, extent);
  Value extreme = rewriter.create<ReduceOp>(
      loc, keptType, ReduceKindAttr::get(context, ReduceKind::Max), x, axes,
      rewriter.getUnitAttr(), device);
  Value hits = rewriter.create<EqualOp>(loc, maskType, x, extreme, device);
  Value candidates = rewriter.create<WhereOp>(
      loc, f32Type, hits, iota,
      floatScalar(rewriter, loc, static_cast<float>(extent)), device);
  Value first = rewriter.create<ReduceOp>(
      loc, keptType, ReduceKindAttr::get(context, ReduceKind::Min), candidates,
      axes, rewriter.getUnitAttr(), device);
  Value chosen = rewriter.create<EqualOp>(loc, maskType, iota, first, device);
  Value result = rewriter.create<WhereOp>(
      loc, f32Type, chosen, floatScalar(rewriter, loc, 1.0f),
      floatScalar(rewriter, loc, 0.0f), device);
  if (coerced)
    result = reshapeTo(node, rewriter, result, type.getShape());
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// CumSum (11-14) of a static-shape input along a constant axis, as a
/// log-step scan (Hillis-Steele): ceil(log2 L) rounds of x += x shifted by
/// 1, 2, 4, ... along the axis, each shift one hps.pad that pads zeros on
/// one side and crops the other. O(N log L) work in ops of every element
/// type (integers stay exact), and the gradient comes from pad and add.
/// exclusive shifts by one first; reverse shifts the other way.
LogicalResult legalizeCumSum(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape())
    return fail(node, rewriter, "needs a static input shape of rank >= 1");
  Type element = type.getElementType();
  if (element.isInteger(1))
    return fail(node, rewriter, "needs a numeric input");
  std::optional<SmallVector<int64_t>> axisValues =
      getConstantInts(node.input(1));
  if (!axisValues || axisValues->size() != 1)
    return fail(node, rewriter, "axis must be a constant scalar");
  const int64_t rank = type.getRank();
  int64_t axis = (*axisValues)[0];
  if (axis < -rank || axis >= rank)
    return fail(node, rewriter, "axis out of range");
  axis = axis < 0 ? axis + rank : axis;
  std::optional<bool> exclusive = getFlag(node, "exclusive");
  std::optional<bool> reverse = getFlag(node, "reverse");
  if (!exclusive || !reverse)
    return fail(node, rewriter, "exclusive and reverse are 0 or 1");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  const int64_t extent = type.getDimSize(axis);
  TypedAttr zero = makeScalarAttr(element, 0);
  auto shift = [&](Value value, int64_t by) -> Value {
    SmallVector<int64_t> pads(2 * rank, 0);
    pads[axis] = *reverse ? -by : by;
    pads[rank + axis] = *reverse ? by : -by;
    return rewriter.create<PadOp>(
        loc, type, value, rewriter.getDenseI64ArrayAttr(pads),
        PadModeAttr::get(rewriter.getContext(), PadMode::Constant), zero,
        device);
  };
  Value sum = node.input(0);
  if (*exclusive)
    sum = shift(sum, 1);
  for (int64_t by = 1; by < extent; by *= 2)
    sum = rewriter.create<AddOp>(loc, type, sum, shift(sum, by), device);
  return replaceNodeWithCompatible(node, sum, rewriter);
}

/// The most elements TopK may select per slice: each is one round of
/// nine ops.
constexpr int64_t kMaxTopK = 32;

/// TopK (1-17) of an f32 input with a static shape and a constant k of at
/// most kMaxTopK: k rounds, each taking the extreme of the positions not yet
/// taken (reduce max/min), the first position holding it (as ArgMax does:
/// equal, where over a float iota, reduce min) and marking it taken. Values
/// and indices come out sorted, which sorted=0 allows; equal values keep
/// their order, as ONNX asks. A NaN is never selected (its index reads as
/// the axis extent).
LogicalResult legalizeTopK(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
      !type.getElementType().isF32())
    return fail(node, rewriter, "needs a static f32 input");
  std::optional<int64_t> k;
  if (node.getOpset() < 10) {
    k = node.getInt("k", -1);
  } else if (std::optional<SmallVector<int64_t>> values =
                 getConstantInts(node.input(1));
             values && values->size() == 1) {
    k = (*values)[0];
  }
  if (!k)
    return fail(node, rewriter, "k must be a constant");
  const int64_t rank = type.getRank();
  int64_t axis = node.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return fail(node, rewriter, "axis out of range");
  axis = axis < 0 ? axis + rank : axis;
  const int64_t extent = type.getDimSize(axis);
  if (*k < 1 || *k > extent || *k > kMaxTopK || extent > (int64_t(1) << 24))
    return fail(node, rewriter, "k must be in [1, min(extent, 32)]");
  std::optional<bool> largest = getFlag(node, "largest", true);
  std::optional<bool> sortedFlag = getFlag(node, "sorted", true);
  if (!largest || !sortedFlag)
    return fail(node, rewriter, "largest and sorted are 0 or 1");
  SmallVector<int64_t> outShape(type.getShape());
  outShape[axis] = *k;
  auto valuesType = RankedTensorType::get(outShape, type.getElementType());
  auto indicesType = RankedTensorType::get(outShape, rewriter.getI64Type());
  // ONNX leaves the extent unknown where k is computed (read from a shape).
  auto declares = [&](unsigned i, RankedTensorType type) {
    Type declared = node.resultType(i);
    return getElementTypeOrSelf(declared) == type.getElementType() &&
           succeeded(verifyCompatibleShape(declared, type));
  };
  if (node.getOp().getNumResults() != 2 || !declares(0, valuesType) ||
      !declares(1, indicesType))
    return fail(node, rewriter, "the declared results are not [.., k, ..]");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  MLIRContext *context = rewriter.getContext();
  Type f32 = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> kept(shape);
  kept[axis] = 1;
  auto keptType = RankedTensorType::get(kept, f32);
  auto maskType = RankedTensorType::get(shape, rewriter.getI1Type());
  auto axes = rewriter.getDenseI64ArrayAttr({axis});
  Value iota = floatIota(rewriter, loc, rank, axis, extent);
  const float inf = std::numeric_limits<float>::infinity();
  Value excluded = floatScalar(rewriter, loc, *largest ? -inf : inf);
  Value missing = floatScalar(rewriter, loc, static_cast<float>(extent));
  ReduceKind extremeKind = *largest ? ReduceKind::Max : ReduceKind::Min;
  Value x = node.input(0), taken;
  SmallVector<Value> values, indices;
  for (int64_t round = 0; round < *k; ++round) {
    Value rest = taken ? Value(rewriter.create<WhereOp>(loc, type, taken,
                                                        excluded, x, device))
                       : x;
    Value extreme = rewriter.create<ReduceOp>(
        loc, keptType, ReduceKindAttr::get(context, extremeKind), rest, axes,
        rewriter.getUnitAttr(), device);
    Value hits = rewriter.create<EqualOp>(loc, maskType, rest, extreme, device);
    if (taken)
      hits = rewriter.create<AndOp>(
          loc, maskType, hits,
          rewriter.create<NotOp>(loc, maskType, taken, device), device);
    Value candidates =
        rewriter.create<WhereOp>(loc, type, hits, iota, missing, device);
    Value index = rewriter.create<ReduceOp>(
        loc, keptType, ReduceKindAttr::get(context, ReduceKind::Min),
        candidates, axes, rewriter.getUnitAttr(), device);
    values.push_back(extreme);
    indices.push_back(index);
    if (round + 1 == *k)
      break;
    Value chosen = rewriter.create<EqualOp>(loc, maskType, iota, index, device);
    taken =
        taken
            ? Value(rewriter.create<OrOp>(loc, maskType, taken, chosen, device))
            : chosen;
  }
  auto join = [&](ArrayRef<Value> parts) -> Value {
    if (parts.size() == 1)
      return parts.front();
    return rewriter.create<ConcatOp>(loc, RankedTensorType::get(outShape, f32),
                                     ValueRange(parts), axis, device);
  };
  Value joinedValues = join(values);
  Value joinedIndices =
      rewriter.create<CastOp>(loc, indicesType, join(indices), device);
  replaceNodeRefining(node.getOp(), {joinedValues, joinedIndices}, rewriter);
  return success();
}

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  const std::pair<const char *, ReduceKind> attrAxesKinds[] = {
      {"ReduceMean", ReduceKind::Mean},
      {"ReduceMax", ReduceKind::Max},
      {"ReduceMin", ReduceKind::Min},
      {"ReduceProd", ReduceKind::Prod},
      {"ReduceL1", ReduceKind::L1},
      {"ReduceL2", ReduceKind::L2},
      {"ReduceLogSum", ReduceKind::LogSum},
      {"ReduceLogSumExp", ReduceKind::LogSumExp},
      {"ReduceSumSquare", ReduceKind::SumSquare}};
  for (auto [name, kind] : attrAxesKinds) {
    addONNXPattern(patterns, name, kMinOpset, 17,
                   [kind = kind](ONNXNode node, PatternRewriter &rewriter) {
                     return legalizeAttrAxes(node, rewriter, kind);
                   });
    addONNXPattern(patterns, name, 18, kMaxOpset,
                   [kind = kind](ONNXNode node, PatternRewriter &rewriter) {
                     return legalizeInputAxes(node, rewriter, kind);
                   });
  }
  addONNXPattern(patterns, "ReduceSum", kMinOpset, 12,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeAttrAxes(node, rewriter, ReduceKind::Sum);
                 });
  auto argMax = legalizeArgExtreme<ReduceKind::Max>;
  auto argMin = legalizeArgExtreme<ReduceKind::Min>;
  addONNXPattern(patterns, "ArgMax", kMinOpset, 11, {"axis", "keepdims"},
                 argMax);
  addONNXPattern(patterns, "ArgMax", 12, kMaxOpset,
                 {"axis", "keepdims", "select_last_index"}, argMax);
  addONNXPattern(patterns, "ArgMin", kMinOpset, 11, {"axis", "keepdims"},
                 argMin);
  addONNXPattern(patterns, "ArgMin", 12, kMaxOpset,
                 {"axis", "keepdims", "select_last_index"}, argMin);
  addONNXPattern(patterns, "CumSum", 11, kMaxOpset, {"exclusive", "reverse"},
                 legalizeCumSum);
  addONNXPattern(patterns, "Hardmax", kMinOpset, 12, {"axis"}, legalizeHardmax);
  addONNXPattern(patterns, "Hardmax", 13, kMaxOpset, {"axis"}, legalizeHardmax);
  addONNXPattern(patterns, "TopK", kMinOpset, 9, {"axis", "k"}, legalizeTopK);
  addONNXPattern(patterns, "TopK", 10, 10, {"axis"}, legalizeTopK);
  addONNXPattern(patterns, "TopK", 11, kMaxOpset, {"axis", "largest", "sorted"},
                 legalizeTopK);
  addONNXPattern(patterns, "ReduceSum", 13, kMaxOpset,
                 [](ONNXNode node, PatternRewriter &rewriter) {
                   return legalizeInputAxes(node, rewriter, ReduceKind::Sum);
                 });
}

} // namespace heterps::hps
