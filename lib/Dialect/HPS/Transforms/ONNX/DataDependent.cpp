//===- DataDependent.cpp - NonZero, Unique, NonMaxSuppression, Compress ---===//
//
// Ops whose result extent depends on the data. Each becomes an hps op whose
// result has the largest possible extent (the capacity) and a `count`
// result; --hps-bound-extents then checks that only position-wise ops read
// the padded values and makes the model's outputs carry their counts.
// Compress with a constant condition is static: it is a gather by constant
// indices.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {
namespace {

RankedTensorType i64Tensor(Builder &builder, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, builder.getI64Type());
}

/// The capacity of a data-dependent axis is a buffer extent: refuse
/// products that overflow what a stage can allocate.
constexpr int64_t kMaxCapacity = int64_t(1) << 31;

LogicalResult legalizeNonZero(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return fail(node, rewriter, "needs a static input of rank >= 1");
  int64_t numel = type.getNumElements();
  if (numel * type.getRank() > kMaxCapacity)
    return fail(node, rewriter, "too many elements");
  auto op = rewriter.create<NonZeroOp>(
      node.getLoc(), i64Tensor(rewriter, {type.getRank(), numel}),
      i64Tensor(rewriter, {}), node.input(0), node.getOp().getDeviceAttr());
  replaceNodeRefining(node.getOp(), {op.getIndices()}, rewriter);
  return success();
}

LogicalResult legalizeUnique(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return fail(node, rewriter, "needs a static input of rank >= 1");
  std::optional<bool> sorted = getFlag(node, "sorted", true);
  if (!sorted)
    return fail(node, rewriter, "sorted is 0 or 1");
  // Without an axis: axis 0 of the flattened input.
  std::optional<int64_t> axis = node.getAxis("axis", 0, type.getRank());
  if (!axis)
    return fail(node, rewriter, "axis out of range");
  Value input = node.input(0);
  if (!node.hasAttr("axis") && type.getRank() != 1)
    input = reshapeTo(node, rewriter, input, {type.getNumElements()});
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t extent = inputType.getDimSize(*axis);
  auto list = i64Tensor(rewriter, {extent});
  auto op = rewriter.create<UniqueOp>(
      node.getLoc(), inputType, list, list, list, i64Tensor(rewriter, {}),
      input, rewriter.getI64IntegerAttr(*axis), unitIf(rewriter, *sorted),
      node.getOp().getDeviceAttr());
  replaceNodeRefining(
      node.getOp(),
      {op.getValues(), op.getFirstIndices(), op.getInverse(), op.getCounts()},
      rewriter);
  return success();
}

/// A scalar operand of NonMaxSuppression: absent, or one element.
bool isScalarOrAbsent(Value value) {
  if (!value)
    return true;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

LogicalResult legalizeNonMaxSuppression(ONNXNode node,
                                        PatternRewriter &rewriter) {
  Value boxes = node.input(0), scores = node.input(1);
  auto boxesType = dyn_cast<RankedTensorType>(boxes.getType());
  auto scoresType = dyn_cast<RankedTensorType>(scores.getType());
  if (!boxesType || !scoresType || !boxesType.hasStaticShape() ||
      !scoresType.hasStaticShape() || boxesType.getRank() != 3 ||
      scoresType.getRank() != 3 || !boxesType.getElementType().isF32() ||
      !scoresType.getElementType().isF32())
    return fail(node, rewriter, "needs static f32 boxes and scores of rank 3");
  Value maxPerClass = node.input(2), iou = node.input(3),
        scoreThreshold = node.input(4);
  if (!isScalarOrAbsent(maxPerClass) || !isScalarOrAbsent(iou) ||
      !isScalarOrAbsent(scoreThreshold))
    return fail(node, rewriter, "the optional inputs have one element");
  std::optional<bool> center = getFlag(node, "center_point_box", false);
  if (!center)
    return fail(node, rewriter, "center_point_box is 0 or 1");
  int64_t batches = boxesType.getDimSize(0), boxCount = boxesType.getDimSize(1);
  int64_t classes = scoresType.getDimSize(1);
  // A constant limit bounds the selections per class; absent, ONNX selects
  // none.
  int64_t perClass = maxPerClass ? boxCount : 0;
  if (maxPerClass)
    if (auto limit = dyn_cast_or_null<DenseIntElementsAttr>(
            getConstantValue(maxPerClass)))
      perClass =
          std::clamp<int64_t>((*limit.begin()).getSExtValue(), 0, boxCount);
  int64_t capacity = batches * classes * perClass;
  if (capacity > kMaxCapacity)
    return fail(node, rewriter, "too many boxes");
  auto op = rewriter.create<NonMaxSuppressionOp>(
      node.getLoc(), i64Tensor(rewriter, {capacity, 3}),
      i64Tensor(rewriter, {}), boxes, scores, maxPerClass, iou, scoreThreshold,
      unitIf(rewriter, *center), node.getOp().getDeviceAttr());
  replaceNodeRefining(node.getOp(), {op.getSelected()}, rewriter);
  return success();
}

/// Compress: a gather along `axis` (of the flattened input without one) by
/// the positions where the condition holds; constant positions when the
/// condition is constant, else NonZero's.
LogicalResult legalizeCompress(ONNXNode node, PatternRewriter &rewriter) {
  Value input = node.input(0), condition = node.input(1);
  auto type = dyn_cast<RankedTensorType>(input.getType());
  auto condType = dyn_cast<RankedTensorType>(condition.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 || !condType ||
      !condType.hasStaticShape() || condType.getRank() != 1)
    return fail(node, rewriter, "needs a static input and a 1-D condition");
  // Without an axis: axis 0 of the flattened input.
  std::optional<int64_t> axis = node.getAxis("axis", 0, type.getRank());
  if (!axis)
    return fail(node, rewriter, "axis out of range");
  int64_t extent =
      node.hasAttr("axis") ? type.getDimSize(*axis) : type.getNumElements();
  int64_t length = condType.getDimSize(0);
  if (length > extent)
    return fail(node, rewriter, "the condition is longer than the axis");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value positions;
  if (auto constant = getConstantValue(condition)) {
    SmallVector<int64_t> kept;
    int64_t i = 0;
    for (APInt bit : cast<DenseIntElementsAttr>(constant).getValues<APInt>()) {
      if (!bit.isZero())
        kept.push_back(i);
      ++i;
    }
    positions = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(i64Tensor(rewriter, {int64_t(kept.size())}),
                                    ArrayRef<int64_t>(kept)));
  } else {
    if (!isa<IntegerType>(condType.getElementType()))
      return fail(node, rewriter, "the condition must be bool");
    auto nonZero =
        rewriter.create<NonZeroOp>(loc, i64Tensor(rewriter, {1, length}),
                                   i64Tensor(rewriter, {}), condition, device);
    positions = reshapeTo(node, rewriter, nonZero.getIndices(), {length});
  }
  if (!node.hasAttr("axis"))
    input = reshapeTo(node, rewriter, input, {type.getNumElements()});
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(inputType.getShape());
  shape[*axis] = cast<RankedTensorType>(positions.getType()).getDimSize(0);
  auto gather = rewriter.create<GatherOp>(
      loc, RankedTensorType::get(shape, inputType.getElementType()), input,
      positions, rewriter.getI64IntegerAttr(*axis), device);
  replaceNodeRefining(node.getOp(), {gather.getResult()}, rewriter);
  return success();
}

} // namespace

void populateDataDependentPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "NonZero", 9, kMaxOpset, {}, legalizeNonZero);
  addONNXPattern(patterns, "Unique", 11, kMaxOpset, {"axis", "sorted"},
                 legalizeUnique);
  addONNXPattern(patterns, "NonMaxSuppression", 10, kMaxOpset,
                 {"center_point_box"}, legalizeNonMaxSuppression);
  addONNXPattern(patterns, "Compress", 9, kMaxOpset, {"axis"},
                 legalizeCompress);
}

} // namespace heterps::hps
