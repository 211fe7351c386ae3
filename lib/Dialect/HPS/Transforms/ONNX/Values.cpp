//===- Values.cpp - Constants, shapes, identities -------------------------===//
//
// ONNX nodes that produce values rather than layers: Constant,
// ConstantOfShape, Range, Size and ScatterND of constants fold to
// hps.constant; Shape becomes
// hps.shape (which folds when static); Identity and inference-mode Dropout
// disappear.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cmath>

using namespace mlir;

namespace heterps::hps {
namespace {

/// Replaces the node with `value` if its type allows (see above).
LogicalResult replaceWithValue(ONNXNode node, Value value,
                               PatternRewriter &rewriter) {
  if (!value || !canReplaceWithType(node, value.getType()))
    return fail(node, rewriter, "the replacement's type differs");
  for (unsigned i = 1; i < node.getOp().getNumResults(); ++i)
    if (node.isResultUsed(i))
      return fail(node, rewriter, "a secondary output is used");
  replaceNodeWith(node, value, rewriter);
  return success();
}

/// Replaces the node with an hps.constant holding `value`.
LogicalResult replaceWithConstant(ONNXNode node, ElementsAttr value,
                                  PatternRewriter &rewriter) {
  if (!canReplaceWithType(node, value.getType()))
    return fail(node, rewriter, "constant type differs from the result");
  auto constant = rewriter.create<ConstantOp>(node.getLoc(), value);
  return replaceWithValue(node, constant, rewriter);
}

/// A dense constant of `shape` and `element` built from `values`.
template <typename T>
DenseElementsAttr denseOf(ArrayRef<int64_t> shape, Type element,
                          ArrayRef<T> values) {
  return DenseElementsAttr::get(RankedTensorType::get(shape, element), values);
}

/// Constant: the tensor `value`; from opset 12 also value_float(s) and
/// value_int(s). value_string(s) and sparse_value have no hps form.
LogicalResult legalizeConstant(ONNXNode node, PatternRewriter &rewriter) {
  Builder &b = rewriter;
  ElementsAttr value;
  if (auto tensor = dyn_cast_or_null<ElementsAttr>(node.getAttr("value")))
    value = tensor;
  else if (auto f = dyn_cast_or_null<FloatAttr>(node.getAttr("value_float")))
    value = denseOf<APFloat>({}, b.getF32Type(), f.getValue());
  else if (auto i = dyn_cast_or_null<IntegerAttr>(node.getAttr("value_int")))
    value = denseOf<APInt>({}, b.getI64Type(), i.getValue());
  else if (auto fs = dyn_cast_or_null<DenseF32ArrayAttr>(
               node.getAttr("value_floats")))
    value = denseOf<float>({fs.size()}, b.getF32Type(), fs.asArrayRef());
  else if (auto is =
               dyn_cast_or_null<DenseI64ArrayAttr>(node.getAttr("value_ints")))
    value = denseOf<int64_t>({is.size()}, b.getI64Type(), is.asArrayRef());
  if (!value)
    return fail(node, rewriter, "string or sparse Constant");
  return replaceWithConstant(node, value, rewriter);
}

/// ConstantOfShape: a splat of the one-element `value` (default float 0)
/// over a constant shape.
LogicalResult legalizeConstantOfShape(ONNXNode node,
                                      PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(0));
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return fail(node, rewriter, "shape is not constant");
  Attribute fill = rewriter.getF32FloatAttr(0);
  if (Attribute attr = node.getAttr("value")) {
    auto value = dyn_cast<DenseElementsAttr>(attr);
    if (!value || value.getNumElements() != 1)
      return fail(node, rewriter, "value is not a one-element tensor");
    fill = value.getValues<Attribute>()[0];
  }
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(fill).getType());
  return replaceWithConstant(node, DenseElementsAttr::get(type, fill),
                             rewriter);
}

/// Range with constant scalar inputs: max(ceil((limit - start) / delta), 0)
/// elements start + i * delta, exact for integer types.
LogicalResult legalizeRange(ONNXNode node, PatternRewriter &rewriter) {
  Type element = getElementTypeOrSelf(node.resultType());
  SmallVector<Attribute> values;
  if (isa<IntegerType>(element)) {
    auto s = getConstantInts(node.input(0)), l = getConstantInts(node.input(1)),
         d = getConstantInts(node.input(2));
    if (!s || !l || !d || s->size() != 1 || l->size() != 1 || d->size() != 1 ||
        (*d)[0] == 0)
      return fail(node, rewriter, "inputs not constant scalars");
    int64_t start = (*s)[0], limit = (*l)[0], delta = (*d)[0];
    for (int64_t v = start; delta > 0 ? v < limit : v > limit; v += delta)
      values.push_back(IntegerAttr::get(element, v));
  } else {
    std::optional<double> start = getConstantScalar(node.input(0));
    std::optional<double> limit = getConstantScalar(node.input(1));
    std::optional<double> delta = getConstantScalar(node.input(2));
    if (!start || !limit || !delta || *delta == 0 || !isa<FloatType>(element))
      return fail(node, rewriter, "inputs not constant scalars");
    int64_t count = std::max<int64_t>(
        0, static_cast<int64_t>(std::ceil((*limit - *start) / *delta)));
    for (int64_t i = 0; i < count; ++i)
      values.push_back(FloatAttr::get(element, *start + i * *delta));
  }
  auto type =
      RankedTensorType::get({static_cast<int64_t>(values.size())}, element);
  return replaceWithConstant(node, DenseElementsAttr::get(type, values),
                             rewriter);
}

/// ScatterND of constants (Swin's shifted-window mask is built this way):
/// folded here, element by element. Reductions none, add and mul; a
/// run-time operand keeps it generic, as the runtime has no scatter kernel.
LogicalResult legalizeScatterND(ONNXNode node, PatternRewriter &rewriter) {
  auto data =
      dyn_cast_or_null<DenseElementsAttr>(getConstantValue(node.input(0)));
  auto updates =
      dyn_cast_or_null<DenseElementsAttr>(getConstantValue(node.input(2)));
  std::optional<SmallVector<int64_t>> indices = getConstantInts(node.input(1));
  auto indicesType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!data || !updates || !indices || !indicesType ||
      indicesType.getRank() < 1)
    return fail(node, rewriter, "operands are not constants");
  std::string reduction = node.getString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return fail(node, rewriter, "reduction is not none, add or mul");
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t k = indicesType.getShape().back();
  int64_t rank = shape.size();
  if (k < 1 || k > rank)
    return fail(node, rewriter, "index tuples longer than the data's rank");
  // Each index tuple addresses a slice of `sliceSize` elements.
  int64_t sliceSize = 1;
  for (int64_t extent : shape.drop_front(k))
    sliceSize *= extent;
  int64_t tuples = static_cast<int64_t>(indices->size()) / k;
  if (updates.getNumElements() != tuples * sliceSize)
    return fail(node, rewriter, "updates do not match the indexed slices");
  SmallVector<Attribute> values(data.getValues<Attribute>());
  auto update = llvm::to_vector(updates.getValues<Attribute>());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t i = 0; i < k; ++i) {
      int64_t index = (*indices)[t * k + i];
      if (index < 0)
        index += shape[i];
      if (index < 0 || index >= shape[i])
        return fail(node, rewriter, "index out of range");
      offset = offset * shape[i] + index;
    }
    offset *= sliceSize;
    for (int64_t e = 0; e < sliceSize; ++e) {
      Attribute &target = values[offset + e];
      Attribute source = update[t * sliceSize + e];
      if (reduction == "none") {
        target = source;
      } else if (auto f = dyn_cast<FloatAttr>(target)) {
        APFloat value = f.getValue(),
                other = cast<FloatAttr>(source).getValue();
        if (reduction == "add")
          value.add(other, APFloat::rmNearestTiesToEven);
        else
          value.multiply(other, APFloat::rmNearestTiesToEven);
        target = FloatAttr::get(f.getType(), value);
      } else {
        auto i = cast<IntegerAttr>(target);
        APInt other = cast<IntegerAttr>(source).getValue();
        target = IntegerAttr::get(i.getType(), reduction == "add"
                                                   ? i.getValue() + other
                                                   : i.getValue() * other);
      }
    }
  }
  return replaceWithConstant(
      node, DenseElementsAttr::get(data.getType(), values), rewriter);
}

/// Shape: all extents before opset 15; from 15 those in [start, end).
LogicalResult legalizeShape(ONNXNode node, PatternRewriter &rewriter) {
  IntegerAttr end;
  if (node.hasAttr("end"))
    end = rewriter.getI64IntegerAttr(node.getInt("end", 0));
  return replaceNodeChecked<ShapeOp>(
      node, rewriter, node.input(0),
      rewriter.getI64IntegerAttr(node.getInt("start", 0)), end, DeviceAttr());
}

LogicalResult legalizeSize(ONNXNode node, PatternRewriter &rewriter) {
  auto input = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!input || !input.hasStaticShape())
    return fail(node, rewriter, "dynamic shape");
  return replaceWithConstant(
      node, denseOf<int64_t>({}, rewriter.getI64Type(), input.getNumElements()),
      rewriter);
}

LogicalResult legalizeIdentity(ONNXNode node, PatternRewriter &rewriter) {
  return replaceWithValue(node, node.input(0), rewriter);
}

/// Dropout is the identity at inference, which is what a forward graph
/// means (opset 6: only with is_test=1); from opset 12 a training_mode input
/// that is not a constant false keeps it generic (ratio and seed only matter in
/// training). A used mask also keeps it generic.
LogicalResult legalizeDropout(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getOpset() < 7 && node.getInt("is_test", 0) != 1)
    return fail(node, rewriter, "training mode (is_test=0)");
  if (Value training = node.getOpset() >= 12 ? node.input(2) : Value()) {
    std::optional<double> flag = getConstantScalar(training);
    if (!flag || *flag != 0)
      return fail(node, rewriter, "training mode");
  }
  return replaceWithValue(node, node.input(0), rewriter);
}

} // namespace

void populateValuePatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "Constant", kMinOpset, 10, {"value"},
                 legalizeConstant);
  addONNXPattern(patterns, "Constant", 11, 11, {"sparse_value", "value"},
                 legalizeConstant);
  addONNXPattern(patterns, "Constant", 12, kMaxOpset,
                 {"sparse_value", "value", "value_float", "value_floats",
                  "value_int", "value_ints", "value_string", "value_strings"},
                 legalizeConstant);
  addONNXPattern(patterns, "ConstantOfShape", 9, kMaxOpset, {"value"},
                 legalizeConstantOfShape);
  addONNXPattern(patterns, "Range", 11, kMaxOpset, {}, legalizeRange);
  addONNXPattern(patterns, "ScatterND", 11, 15, {}, legalizeScatterND);
  addONNXPattern(patterns, "ScatterND", 16, kMaxOpset, {"reduction"},
                 legalizeScatterND);
  addONNXPattern(patterns, "Shape", kMinOpset, 14, {}, legalizeShape);
  addONNXPattern(patterns, "Shape", 15, kMaxOpset, {"end", "start"},
                 legalizeShape);
  addONNXPattern(patterns, "Size", kMinOpset, kMaxOpset, {}, legalizeSize);
  addONNXPattern(patterns, "Identity", kMinOpset, kMaxOpset, {},
                 legalizeIdentity);
  addONNXPattern(patterns, "Dropout", 6, 6, {"is_test", "ratio"},
                 legalizeDropout);
  addONNXPattern(patterns, "Dropout", 7, 11, {"ratio"}, legalizeDropout);
  addONNXPattern(patterns, "Dropout", 12, kMaxOpset, {"seed"}, legalizeDropout);
}

} // namespace heterps::hps
