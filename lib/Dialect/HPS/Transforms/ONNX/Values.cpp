//===- Values.cpp - Constants, shapes, identities -------------------------===//
//
// ONNX nodes that produce values rather than layers: Constant,
// ConstantOfShape, Range, Size, EyeLike, the window functions and ScatterND
// of constants (for Indexing.cpp's ScatterND pattern) fold to hps.constant;
// Shape becomes
// hps.shape (which folds when static); Identity and inference-mode Dropout
// disappear.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace heterps::hps {
namespace {

/// Replaces the node with `value` if its type allows (see above).
LogicalResult replaceWithValue(ONNXNode node, Value value,
                               PatternRewriter &rewriter) {
  if (!value || !canReplaceWithType(node, value.getType()))
    return failReplacementType(node, value, rewriter);
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

/// Constant: value_string(s) and sparse_value have no hps form.
LogicalResult legalizeConstant(ONNXNode node, PatternRewriter &rewriter) {
  ElementsAttr value = constantNodeValue(node, rewriter);
  if (!value)
    return fail(node, rewriter, "string or sparse Constant");
  return replaceWithConstant(node, value, rewriter);
}

/// Folded constants end up in the bundle's weights: past these they could
/// be neither built (a Range folds one attribute per element) nor written
/// (a ConstantOfShape of 2^40 elements aborted the compiler out of memory).
constexpr int64_t kMostConstantElements = int64_t(1) << 31;
constexpr int64_t kMostRangeElements = int64_t(1) << 24;

/// The elements of `shape`, or std::nullopt past int64.
std::optional<int64_t> elementsOf(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count))
      return std::nullopt;
  return count;
}

/// The elements of Range(start, limit, delta) (0 for a delta of 0, which
/// the callers refuse first), saturated at int64's largest, without the
/// overflow of limit - start.
int64_t rangeCount(int64_t start, int64_t limit, int64_t delta) {
  const __int128 span = static_cast<__int128>(limit) - start;
  if (delta == 0 || (delta > 0 && span <= 0) || (delta < 0 && span >= 0))
    return 0;
  const __int128 magnitude = delta > 0 ? delta : -static_cast<__int128>(delta);
  const __int128 distance = span > 0 ? span : -span;
  const __int128 count = (distance + magnitude - 1) / magnitude;
  return count > INT64_MAX ? INT64_MAX : static_cast<int64_t>(count);
}

/// ConstantOfShape: a splat of the one-element `value` (default float 0)
/// over a constant shape.
LogicalResult legalizeConstantOfShape(ONNXNode node,
                                      PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(0));
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return fail(node, rewriter, "shape is not constant");
  std::optional<int64_t> elements = elementsOf(*shape);
  if (!elements || *elements > kMostConstantElements)
    return fail(node, rewriter, "too many elements");
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
    // Counted, not stepped: start + i * delta may pass int64 at the limit.
    const int64_t count = rangeCount(start, limit, delta);
    if (count > kMostRangeElements)
      return fail(node, rewriter, "too many elements");
    for (int64_t i = 0; i < count; ++i)
      values.push_back(IntegerAttr::get(element, start + i * delta));
  } else {
    std::optional<double> start = getConstantScalar(node.input(0));
    std::optional<double> limit = getConstantScalar(node.input(1));
    std::optional<double> delta = getConstantScalar(node.input(2));
    if (!start || !limit || !delta || *delta == 0 || !isa<FloatType>(element))
      return fail(node, rewriter, "inputs not constant scalars");
    const double steps = std::ceil((*limit - *start) / *delta);
    if (!std::isfinite(steps) || steps > double(kMostRangeElements))
      return fail(node, rewriter, "too many elements");
    int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
    for (int64_t i = 0; i < count; ++i)
      values.push_back(FloatAttr::get(element, *start + i * *delta));
  }
  auto type =
      RankedTensorType::get({static_cast<int64_t>(values.size())}, element);
  return replaceWithConstant(node, DenseElementsAttr::get(type, values),
                             rewriter);
}

} // namespace

ElementsAttr constantNodeValue(ONNXNode node, Builder &b) {
  if (auto tensor = dyn_cast_or_null<ElementsAttr>(node.getAttr("value")))
    return tensor;
  if (auto f = dyn_cast_or_null<FloatAttr>(node.getAttr("value_float")))
    return denseOf<APFloat>({}, b.getF32Type(), f.getValue());
  if (auto i = dyn_cast_or_null<IntegerAttr>(node.getAttr("value_int")))
    return denseOf<APInt>({}, b.getI64Type(), i.getValue());
  if (auto fs =
          dyn_cast_or_null<DenseF32ArrayAttr>(node.getAttr("value_floats")))
    return denseOf<float>({fs.size()}, b.getF32Type(), fs.asArrayRef());
  if (auto is = dyn_cast_or_null<DenseI64ArrayAttr>(node.getAttr("value_ints")))
    return denseOf<int64_t>({is.size()}, b.getI64Type(), is.asArrayRef());
  return nullptr;
}

std::optional<std::string> explainValues(OnnxNodeOp op) {
  ONNXNode node(op);
  if (op.getOpType() == "ConstantOfShape") {
    std::optional<SmallVector<int64_t>> shape = getConstantInts(node.input(0));
    if (!shape)
      return std::nullopt;
    // A negative extent was said as "over 2^63 elements".
    for (auto [axis, extent] : llvm::enumerate(*shape))
      if (extent < 0)
        return "its shape input gives axis " + std::to_string(axis) +
               " the negative extent " + std::to_string(extent);
    std::optional<int64_t> elements = elementsOf(*shape);
    if (elements && *elements <= kMostConstantElements)
      return std::nullopt;
    return "its constant would hold " +
           (elements ? std::to_string(*elements) : std::string("over 2^63")) +
           " elements, more than the " + std::to_string(kMostConstantElements) +
           " a folded constant may";
  }
  if (op.getOpType() == "Range") {
    auto s = getConstantInts(node.input(0)), l = getConstantInts(node.input(1)),
         d = getConstantInts(node.input(2));
    std::optional<double> fs = getConstantScalar(node.input(0)),
                          fl = getConstantScalar(node.input(1)),
                          fd = getConstantScalar(node.input(2));
    double count = 0;
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 &&
        (*d)[0] != 0)
      count = double(rangeCount((*s)[0], (*l)[0], (*d)[0]));
    else if (fs && fl && fd && *fd != 0)
      count = std::ceil((*fl - *fs) / *fd);
    else
      return std::nullopt;
    if (count <= double(kMostRangeElements))
      return std::nullopt;
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", count);
    return std::string("it makes ") + text + " elements, more than the " +
           std::to_string(kMostRangeElements) + " a folded Range may";
  }
  return std::nullopt;
}

LogicalResult foldConstantScatterND(ONNXNode node, PatternRewriter &rewriter) {
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

namespace {

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
/// training), unless the ratio is a constant 0, which drops nothing.
LogicalResult legalizeDropout(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getOpset() < 7 && node.getInt("is_test", 0) != 1)
    return fail(node, rewriter, "training mode (is_test=0)");
  if (Value training = node.getOpset() >= 12 ? node.input(2) : Value()) {
    std::optional<double> flag = getConstantScalar(training);
    std::optional<double> ratio =
        node.input(1) ? getConstantScalar(node.input(1)) : std::nullopt;
    if ((!flag || *flag != 0) && (!ratio || *ratio != 0))
      return fail(node, rewriter, "training mode");
  }
  // At inference every element is kept: the mask is all true (1 before
  // opset 10, where it has the data's type).
  if (node.isResultUsed(1)) {
    auto maskType = dyn_cast<RankedTensorType>(node.resultType(1));
    if (!maskType || !maskType.hasStaticShape())
      return fail(node, rewriter, "a used mask of a dynamic shape");
    if (!canReplaceWithType(node, node.input(0).getType()))
      return failReplacementType(node, node.input(0), rewriter);
    Value mask = rewriter.create<ConstantOp>(
        node.getLoc(),
        DenseElementsAttr::get(maskType,
                               makeScalarAttr(maskType.getElementType(), 1.0)));
    rewriter.replaceAllUsesWith(node.result(1), mask);
  }
  return replaceWithValue(node, node.input(0), rewriter);
}

/// EyeLike (9-17): ones where column - row == k in a static 2-D shape, of
/// `dtype` (default the input's element type, which the importer made the
/// result's).
LogicalResult legalizeEyeLike(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.resultType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return fail(node, rewriter, "needs a static 2-D shape");
  const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  const int64_t k = node.getInt("k", 0);
  Type element = type.getElementType();
  Attribute one = makeScalarAttr(element, 1.0),
            zero = makeScalarAttr(element, 0.0);
  SmallVector<Attribute> values(rows * cols, zero);
  for (int64_t r = 0; r < rows; ++r)
    if (int64_t c = r + k; c >= 0 && c < cols)
      values[r * cols + c] = one;
  return replaceWithConstant(node, DenseElementsAttr::get(type, values),
                             rewriter);
}

/// The generalized cosine windows of opset 17 (HannWindow, HammingWindow,
/// BlackmanWindow) over a constant size: a0 - a1 cos(2 pi n / N') + a2
/// cos(4 pi n / N') with N' = size (periodic, the default) or size - 1, in
/// double, then rounded to output_datatype (the result's element type).
LogicalResult legalizeWindow(ONNXNode node, PatternRewriter &rewriter,
                             double a0, double a1, double a2) {
  std::optional<SmallVector<int64_t>> size = getConstantInts(node.input(0));
  auto type = dyn_cast<RankedTensorType>(node.resultType());
  if (!size || size->size() != 1 || (*size)[0] < 0 || !type ||
      type.getRank() != 1 || type.getDimSize(0) != (*size)[0])
    return fail(node, rewriter, "size is not a known constant");
  const int64_t n = (*size)[0];
  const double period = node.getInt("periodic", 1) ? n : n - 1;
  Type element = type.getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double angle = 2 * llvm::numbers::pi * static_cast<double>(i) / period;
    double value = a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle);
    // Integer outputs truncate, as a cast from the reference's float does.
    values.push_back(isa<FloatType>(element)
                         ? makeScalarAttr(element, value)
                         : makeScalarAttr(element, std::trunc(value)));
  }
  return replaceWithConstant(node, DenseElementsAttr::get(type, values),
                             rewriter);
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
  addONNXPattern(patterns, "EyeLike", 9, kMaxOpset, {"dtype", "k"},
                 legalizeEyeLike);
  const std::tuple<StringRef, double, double, double> windows[] = {
      {"HannWindow", 0.5, 0.5, 0.0},
      {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0},
      {"BlackmanWindow", 0.42, 0.5, 0.08}};
  for (auto [name, a0, a1, a2] : windows)
    addONNXPattern(
        patterns, name, 17, kMaxOpset, {"output_datatype", "periodic"},
        [a0 = a0, a1 = a1, a2 = a2](ONNXNode node, PatternRewriter &rewriter) {
          return legalizeWindow(node, rewriter, a0, a1, a2);
        });
}

} // namespace heterps::hps
