//===- DataDependent.cpp - NonZero, Unique, NonMaxSuppression, Compress ---===//
//
// Ops whose result extent depends on the data. Each becomes an hps op whose
// result has the largest possible extent (the capacity) and a `count`
// result; --hps-bound-extents then checks that only position-wise ops read
// the padded values and makes the model's outputs carry their counts.
// Compress with a constant condition is static: it is a gather by constant
// indices.
//
// On constant operands (a mask built from the bound input shapes, as
// transformer exports do) each op folds to its exact result instead, so the
// values downstream keep static shapes. The folds run the runtime's own
// algorithms (DataDependentAlgorithms.h), so compile-time and run-time
// results cannot disagree; this file builds with exceptions (those
// algorithms report bad parameters by throwing) and -ffp-contract=off (NMS
// compares IoUs as the reference does).
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "common/DataDependentAlgorithms.h"

using namespace mlir;

namespace heterps::hps {
namespace {

namespace algo = rt::detail;

/// The capacity of a data-dependent axis is a buffer extent: refuse
/// products that overflow what a stage can allocate.
constexpr int64_t kMaxCapacity = int64_t(1) << 31;

RankedTensorType i64Tensor(Builder &builder, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, builder.getI64Type());
}

/// Calls `run(ops, data)` with the elements of `value` widened for the
/// runtime's algorithms: floats as double (exact for every float type, so
/// order, equality and NaN are kept), integers and booleans as int64_t.
/// std::nullopt for 64-bit unsigned integers, whose order int64_t cannot
/// keep.
template <typename Run>
std::optional<int64_t> runWidened(DenseElementsAttr value, Run &&run) {
  Type element = value.getElementType();
  if (isa<FloatType>(element)) {
    std::vector<double> data;
    data.reserve(value.getNumElements());
    for (APFloat v : value.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      data.push_back(v.convertToDouble());
    }
    return run(algo::NumberOps<double>{}, data);
  }
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer || (integer.isUnsigned() && integer.getWidth() == 64))
    return std::nullopt;
  bool zeroExtend = integer.isUnsigned() || integer.getWidth() == 1;
  std::vector<int64_t> data;
  data.reserve(value.getNumElements());
  for (const APInt &v : value.getValues<APInt>())
    data.push_back(zeroExtend ? int64_t(v.getZExtValue()) : v.getSExtValue());
  return run(algo::NumberOps<int64_t>{}, data);
}

/// Runs a data-dependent algorithm at compile time; the runtime's message
/// becomes the pattern's failure note (the node then stays for its
/// capacity form, which reports the problem when it runs).
template <typename Fn>
std::optional<int64_t> evaluate(ONNXNode node, PatternRewriter &rewriter,
                                Fn &&fn) {
  try {
    return fn();
  } catch (const rt::Error &error) {
    (void)fail(node, rewriter, error.what());
    return std::nullopt;
  }
}

/// The first `count` columns of each of the `rows` rows of a [rows, stride]
/// buffer.
SmallVector<int64_t> leadingColumns(ArrayRef<int64_t> buffer, int64_t rows,
                                    int64_t stride, int64_t count) {
  SmallVector<int64_t> kept;
  kept.reserve(rows * count);
  for (int64_t r = 0; r < rows; ++r)
    kept.append(buffer.begin() + r * stride,
                buffer.begin() + r * stride + count);
  return kept;
}

Value i64Constant(ONNXNode node, PatternRewriter &rewriter,
                  ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  return rewriter.create<ConstantOp>(
      node.getLoc(),
      DenseElementsAttr::get(i64Tensor(rewriter, shape), values));
}

LogicalResult foldConstantNonZero(ONNXNode node, PatternRewriter &rewriter) {
  auto value =
      dyn_cast_or_null<DenseElementsAttr>(getConstantValue(node.input(0)));
  if (!value || cast<ShapedType>(value.getType()).getRank() == 0)
    return fail(node, rewriter, "the input is not a constant of rank >= 1");
  auto type = cast<RankedTensorType>(value.getType());
  rt::Shape shape(type.getShape().begin(), type.getShape().end());
  int64_t rank = int64_t(shape.size()), numel = value.getNumElements();
  std::vector<int64_t> indices;
  std::optional<int64_t> count = evaluate(node, rewriter, [&] {
    algo::NonZeroPlan plan("NonZero", shape);
    indices.resize(size_t(rank * numel));
    return runWidened(value, [&](auto ops, const auto &data) {
      return plan.run<decltype(ops)>(data.data(), indices.data(),
                                     /*zeroPadding=*/false);
    });
  });
  if (!count)
    return fail(node, rewriter, "the input's element type is not foldable");
  replaceNodeRefining(
      node.getOp(),
      {i64Constant(node, rewriter, {rank, *count},
                   leadingColumns(indices, rank, numel, *count))},
      rewriter);
  return success();
}

/// Unique's slices along `axis` of x viewed as [outer, extent, inner].
LogicalResult foldConstantUnique(ONNXNode node, PatternRewriter &rewriter) {
  auto value =
      dyn_cast_or_null<DenseElementsAttr>(getConstantValue(node.input(0)));
  std::optional<bool> sorted = getFlag(node, "sorted", true);
  if (!value || cast<ShapedType>(value.getType()).getRank() == 0 || !sorted)
    return fail(node, rewriter, "the input is not a constant of rank >= 1");
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (!node.hasAttr("axis"))
    shape = {type.getNumElements()};
  std::optional<int64_t> axis =
      node.getAxis("axis", 0, static_cast<int64_t>(shape.size()));
  if (!axis)
    return fail(node, rewriter, "axis out of range");
  int64_t outer = 1, extent = shape[*axis], inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= shape[d];
  for (int64_t d = *axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];

  std::vector<int64_t> first(extent), inverse(extent), counts(extent);
  std::optional<int64_t> count = evaluate(node, rewriter, [&] {
    return runWidened(value, [&](auto ops, const auto &data) {
      using Ops = decltype(ops);
      algo::UniquePlan plan("Unique", sizeof(typename Ops::Storage), outer,
                            extent, inner, *sorted);
      std::vector<typename Ops::Storage> slices(data.size());
      return plan.run<Ops>(data.data(), slices.data(), first.data(),
                           inverse.data(), counts.data(),
                           /*zeroPadding=*/false);
    });
  });
  if (!count)
    return fail(node, rewriter, "the input's element type is not foldable");

  // The unique slices, taken from the constant itself so that every element
  // type keeps its exact values.
  auto elements = llvm::to_vector(value.getValues<Attribute>());
  SmallVector<Attribute> kept;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < *count; ++g)
      for (int64_t i = 0; i < inner; ++i)
        kept.push_back(elements[(o * extent + first[g]) * inner + i]);
  shape[*axis] = *count;
  Value values = rewriter.create<ConstantOp>(
      node.getLoc(),
      DenseElementsAttr::get(
          RankedTensorType::get(shape, type.getElementType()), kept));
  first.resize(size_t(*count));
  counts.resize(size_t(*count));
  replaceNodeRefining(node.getOp(),
                      {values, i64Constant(node, rewriter, {*count}, first),
                       i64Constant(node, rewriter, {extent}, inverse),
                       i64Constant(node, rewriter, {*count}, counts)},
                      rewriter);
  return success();
}

/// The one element of an optional scalar operand that is absent or
/// constant; false when it is present but not constant.
template <typename T>
bool constantScalarOrAbsent(Value value, std::optional<T> &scalar) {
  if (!value)
    return true;
  auto attr = dyn_cast_or_null<DenseElementsAttr>(getConstantValue(value));
  if (!attr || attr.getNumElements() != 1)
    return false;
  if constexpr (std::is_floating_point_v<T>)
    scalar = T((*attr.getValues<APFloat>().begin()).convertToFloat());
  else
    scalar = T((*attr.getValues<APInt>().begin()).getSExtValue());
  return true;
}

std::vector<float> floatsOf(DenseElementsAttr attr) {
  std::vector<float> values;
  values.reserve(attr.getNumElements());
  for (APFloat v : attr.getValues<APFloat>())
    values.push_back(v.convertToFloat());
  return values;
}

LogicalResult foldConstantNonMaxSuppression(ONNXNode node,
                                            PatternRewriter &rewriter) {
  auto boxes =
      dyn_cast_or_null<DenseElementsAttr>(getConstantValue(node.input(0)));
  auto scores =
      dyn_cast_or_null<DenseElementsAttr>(getConstantValue(node.input(1)));
  std::optional<int64_t> maxPerClass;
  std::optional<float> iou, scoreThreshold;
  std::optional<bool> center = getFlag(node, "center_point_box", false);
  if (!boxes || !scores || !boxes.getElementType().isF32() ||
      !scores.getElementType().isF32() || boxes.getType().getRank() != 3 ||
      scores.getType().getRank() != 3 || !center ||
      !constantScalarOrAbsent(node.input(2), maxPerClass) ||
      !constantScalarOrAbsent(node.input(3), iou) ||
      !constantScalarOrAbsent(node.input(4), scoreThreshold))
    return fail(node, rewriter, "the operands are not f32 constants");
  int64_t batches = boxes.getType().getDimSize(0);
  int64_t boxCount = boxes.getType().getDimSize(1);
  int64_t classes = scores.getType().getDimSize(1);
  int64_t perClass =
      maxPerClass ? std::clamp<int64_t>(*maxPerClass, 0, boxCount) : 0;
  int64_t capacity = batches * classes * perClass;
  if (capacity > kMaxCapacity)
    return fail(node, rewriter, "too many boxes");
  std::vector<float> boxData = floatsOf(boxes), scoreData = floatsOf(scores);
  std::vector<int64_t> selected;
  std::optional<int64_t> count = evaluate(node, rewriter, [&] {
    algo::NmsPlan plan("NonMaxSuppression", batches, classes, boxCount, *center,
                       capacity);
    if (int64_t(boxData.size()) != plan.boxesSize() ||
        int64_t(scoreData.size()) != plan.scoresSize())
      throw rt::Error("boxes and scores disagree on the batches or boxes");
    selected.resize(size_t(capacity * 3));
    return plan.run(
        boxData.data(), scoreData.data(), maxPerClass ? &*maxPerClass : nullptr,
        iou ? &*iou : nullptr, scoreThreshold ? &*scoreThreshold : nullptr,
        selected.data(), /*zeroPadding=*/false);
  });
  if (!count)
    return failure();
  selected.resize(size_t(*count * 3));
  replaceNodeRefining(node.getOp(),
                      {i64Constant(node, rewriter, {*count, 3}, selected)},
                      rewriter);
  return success();
}

LogicalResult legalizeNonZero(ONNXNode node, PatternRewriter &rewriter) {
  if (succeeded(foldConstantNonZero(node, rewriter)))
    return success();
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
  if (succeeded(foldConstantUnique(node, rewriter)))
    return success();
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
  if (succeeded(foldConstantNonMaxSuppression(node, rewriter)))
    return success();
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
LogicalResult compress(ONNXNode node, PatternRewriter &rewriter,
                       bool byRuntimeCondition) {
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
    if (!byRuntimeCondition)
      return fail(node, rewriter, "the condition is not a constant");
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

LogicalResult compressByConstant(ONNXNode node, PatternRewriter &rewriter) {
  return compress(node, rewriter, /*byRuntimeCondition=*/false);
}

LogicalResult legalizeCompress(ONNXNode node, PatternRewriter &rewriter) {
  return compress(node, rewriter, /*byRuntimeCondition=*/true);
}

} // namespace

void populateDataDependentPatterns(RewritePatternSet &patterns,
                                   DataDependentForms forms) {
  const bool capacity = forms == DataDependentForms::WithCapacity;
  addONNXPattern(patterns, "NonZero", 9, kMaxOpset, {},
                 capacity ? legalizeNonZero : foldConstantNonZero);
  addONNXPattern(patterns, "Unique", 11, kMaxOpset, {"axis", "sorted"},
                 capacity ? legalizeUnique : foldConstantUnique);
  addONNXPattern(
      patterns, "NonMaxSuppression", 10, kMaxOpset, {"center_point_box"},
      capacity ? legalizeNonMaxSuppression : foldConstantNonMaxSuppression);
  addONNXPattern(patterns, "Compress", 9, kMaxOpset, {"axis"},
                 capacity ? legalizeCompress : compressByConstant);
}

} // namespace heterps::hps
