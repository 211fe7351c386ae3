//===- HPSFolds.cpp - Constant folding of hps ops -------------------------===//
//
// Folds ops whose operands are constants. This is what turns ONNX shape
// arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) into static
// attributes during legalization. Folding is bounded to small results so a
// large weight is never duplicated into the IR.
//
//===----------------------------------------------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <cmath>

using namespace mlir;
using namespace heterps::hps;
namespace shp = heterps::hps::shapes;

namespace {

/// Results larger than this are left unfolded (unless they are splats).
constexpr int64_t kMaxFoldElements = 1 << 16;

DenseElementsAttr dense(Attribute attr) {
  return dyn_cast_or_null<DenseElementsAttr>(attr);
}

/// The static result type of `op` when folding into it is allowed.
RankedTensorType foldableType(Operation *op, bool splat = false) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return nullptr;
  if (!splat && type.getNumElements() > kMaxFoldElements)
    return nullptr;
  return type;
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// For every element of `out`, the index of the element of `in` it reads
/// under numpy broadcasting.
SmallVector<int64_t> broadcastIndices(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out) {
  int64_t total = shp::elementCount(out).value_or(0);
  SmallVector<int64_t> inStrides = stridesOf(in), outStrides = stridesOf(out);
  size_t offset = out.size() - in.size();
  SmallVector<int64_t> indices(total);
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t index = 0;
    for (size_t d = offset; d < out.size(); ++d) {
      int64_t coordinate = (linear / outStrides[d]) % out[d];
      if (in[d - offset] != 1)
        index += coordinate * inStrides[d - offset];
    }
    indices[linear] = index;
  }
  return indices;
}

/// Elementwise fold over broadcast operands, one callback per element that
/// returns the result element or null to give up.
template <typename Fn>
OpFoldResult foldElementwise(Operation *op, ArrayRef<Attribute> operands,
                             Fn &&fn) {
  SmallVector<DenseElementsAttr> inputs;
  for (Attribute attr : operands) {
    if (!dense(attr))
      return {};
    inputs.push_back(dense(attr));
  }
  bool allSplat = llvm::all_of(inputs, [](auto d) { return d.isSplat(); });
  RankedTensorType type = foldableType(op, allSplat);
  if (!type)
    return {};
  if (allSplat) {
    SmallVector<Attribute> values;
    for (DenseElementsAttr input : inputs)
      values.push_back(input.getSplatValue<Attribute>());
    Attribute value = fn(values, type.getElementType());
    if (!value)
      return {};
    return DenseElementsAttr::get(type, value);
  }
  SmallVector<SmallVector<int64_t>> maps;
  SmallVector<SmallVector<Attribute>> elements;
  for (DenseElementsAttr input : inputs) {
    maps.push_back(
        broadcastIndices(input.getType().getShape(), type.getShape()));
    elements.emplace_back(input.getValues<Attribute>());
  }
  SmallVector<Attribute> results;
  results.reserve(type.getNumElements());
  SmallVector<Attribute> values(inputs.size());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k)
      values[k] = elements[k][maps[k][i]];
    Attribute value = fn(values, type.getElementType());
    if (!value)
      return {};
    results.push_back(value);
  }
  return DenseElementsAttr::get(type, results);
}

/// Integer and floating-point arithmetic on scalar attributes. Floats are
/// computed in double and rounded to the result type.
template <typename IntFn, typename FloatFn>
OpFoldResult foldArithmetic(Operation *op, ArrayRef<Attribute> operands,
                            IntFn &&intFn, FloatFn &&floatFn) {
  return foldElementwise(
      op, operands, [&](ArrayRef<Attribute> values, Type type) -> Attribute {
        auto lhsInt = dyn_cast<IntegerAttr>(values[0]);
        auto rhsInt = dyn_cast<IntegerAttr>(values[1]);
        if (lhsInt && rhsInt) {
          bool isUnsigned = lhsInt.getType().isUnsignedInteger();
          std::optional<APInt> r =
              intFn(lhsInt.getValue(), rhsInt.getValue(), isUnsigned);
          return r ? IntegerAttr::get(type, *r) : Attribute();
        }
        auto lhsFloat = dyn_cast<FloatAttr>(values[0]);
        auto rhsFloat = dyn_cast<FloatAttr>(values[1]);
        if (!lhsFloat || !rhsFloat || !isa<FloatType>(type))
          return {};
        std::optional<double> r =
            floatFn(lhsFloat.getValueAsDouble(), rhsFloat.getValueAsDouble());
        return r ? FloatAttr::get(type, *r) : Attribute();
      });
}

/// Comparisons: i1 results from integer or float operands.
template <typename Compare>
OpFoldResult foldComparison(Operation *op, ArrayRef<Attribute> operands,
                            Compare &&compare) {
  return foldElementwise(
      op, operands, [&](ArrayRef<Attribute> values, Type type) -> Attribute {
        int order;
        if (auto l = dyn_cast<IntegerAttr>(values[0])) {
          auto r = cast<IntegerAttr>(values[1]);
          bool isUnsigned = l.getType().isUnsignedInteger();
          const APInt &a = l.getValue(), &b = r.getValue();
          order = a == b ? 0 : (isUnsigned ? a.ult(b) : a.slt(b)) ? -1 : 1;
        } else if (auto l = dyn_cast<FloatAttr>(values[0])) {
          double a = l.getValueAsDouble();
          double b = cast<FloatAttr>(values[1]).getValueAsDouble();
          if (std::isnan(a) || std::isnan(b))
            return IntegerAttr::get(type, 0);
          order = a == b ? 0 : a < b ? -1 : 1;
        } else {
          return {};
        }
        return IntegerAttr::get(type, compare(order) ? 1 : 0);
      });
}

std::optional<APInt> noInt(const APInt &, const APInt &, bool) {
  return std::nullopt;
}

/// Gathers `indices` of a dense attribute into a new attribute of `type`.
OpFoldResult gatherElements(DenseElementsAttr input, RankedTensorType type,
                            ArrayRef<int64_t> indices) {
  if (input.isSplat())
    return input.resizeSplat(type);
  SmallVector<Attribute> all(input.getValues<Attribute>());
  SmallVector<Attribute> picked;
  picked.reserve(indices.size());
  for (int64_t index : indices)
    picked.push_back(all[index]);
  return DenseElementsAttr::get(type, picked);
}

/// Reshape-like ops keep the element order: a constant input takes the
/// result's type; an input of the result's exact type is the result.
OpFoldResult foldReshapeLike(Operation *op, Value input, Attribute constant) {
  // Equal types mean equal shapes only when they are static.
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (type && type.hasStaticShape() && type == op->getResult(0).getType())
    return input;
  if (DenseElementsAttr value = dense(constant))
    if (RankedTensorType type = foldableType(op, value.isSplat()))
      return value.reshape(type);
  return {};
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Unary ops.
//===----------------------------------------------------------------------===//

namespace {
/// Integer or floating-point map of one constant operand.
template <typename IntFn, typename FloatFn>
OpFoldResult foldUnary(Operation *op, Attribute operand, IntFn &&intFn,
                       FloatFn &&floatFn) {
  return foldElementwise(
      op, operand, [&](ArrayRef<Attribute> values, Type type) -> Attribute {
        if (auto i = dyn_cast<IntegerAttr>(values[0]))
          return IntegerAttr::get(type, intFn(i.getValue()));
        if (auto f = dyn_cast<FloatAttr>(values[0]); f && isa<FloatType>(type))
          return FloatAttr::get(type, floatFn(f.getValueAsDouble()));
        return {};
      });
}
} // namespace

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      *this, adaptor.getInput(), [](const APInt &a) { return -a; },
      [](double a) { return -a; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = getElementTypeOrSelf(getType()).isUnsignedInteger();
  return foldUnary(
      *this, adaptor.getInput(),
      [&](const APInt &a) { return isUnsigned ? a : a.abs(); },
      [](double a) { return std::fabs(a); });
}

// Rounding a float held in a double is exact, and the result is a value of
// the float's own type. Exported shape arithmetic (MobileViT's patch
// counts: ceil(h / p) * p) computes extents this way.
OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      *this, adaptor.getInput(), [](const APInt &a) { return a; },
      [](double a) { return std::floor(a); });
}

OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      *this, adaptor.getInput(), [](const APInt &a) { return a; },
      [](double a) { return std::ceil(a); });
}

OpFoldResult RoundOp::fold(FoldAdaptor adaptor) {
  // Half to even, as the op and ONNX define it.
  return foldUnary(
      *this, adaptor.getInput(), [](const APInt &a) { return a; },
      [](double a) { return std::nearbyint(a); });
}

//===----------------------------------------------------------------------===//
// Binary ops.
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a + b;
      },
      [](double a, double b) -> std::optional<double> { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a - b;
      },
      [](double a, double b) -> std::optional<double> { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a * b;
      },
      [](double a, double b) -> std::optional<double> { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return isUnsigned ? a.udiv(b) : a.sdiv(b);
      },
      [](double a, double b) -> std::optional<double> { return a / b; });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType() != getRhs().getType())
    return {};
  return foldArithmetic(*this, adaptor.getOperands(), noInt,
                        [](double a, double b) -> std::optional<double> {
                          return std::pow(a, b);
                        });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        return (isUnsigned ? a.ugt(b) : a.sgt(b)) ? a : b;
      },
      [](double a, double b) -> std::optional<double> {
        return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        return (isUnsigned ? a.ult(b) : a.slt(b)) ? a : b;
      },
      [](double a, double b) -> std::optional<double> {
        return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      });
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool fmod = getFmod();
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [fmod](const APInt &a, const APInt &b,
             bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        if (isUnsigned)
          return a.urem(b);
        APInt r = a.srem(b);
        // Integer Mod takes the divisor's sign unless fmod is set.
        if (!fmod && !r.isZero() && (r.isNegative() != b.isNegative()))
          r += b;
        return r;
      },
      [fmod](double a, double b) -> std::optional<double> {
        double r = std::fmod(a, b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0)))
          r += b;
        return r;
      });
}

OpFoldResult PReluOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(*this, adaptor.getOperands(), noInt,
                        [](double x, double slope) -> std::optional<double> {
                          return x < 0 ? x * slope : x;
                        });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a & b;
      },
      [](double, double) -> std::optional<double> { return std::nullopt; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a | b;
      },
      [](double, double) -> std::optional<double> { return std::nullopt; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a ^ b;
      },
      [](double, double) -> std::optional<double> { return std::nullopt; });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(),
                        [](int order) { return order == 0; });
}
OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(),
                        [](int order) { return order < 0; });
}
OpFoldResult LessEqualOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(),
                        [](int order) { return order <= 0; });
}
OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(),
                        [](int order) { return order > 0; });
}
OpFoldResult GreaterEqualOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(),
                        [](int order) { return order >= 0; });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(*this, adaptor.getOperands(),
                         [](ArrayRef<Attribute> values, Type) -> Attribute {
                           auto condition = dyn_cast<IntegerAttr>(values[0]);
                           if (!condition)
                             return {};
                           return condition.getValue().isZero() ? values[2]
                                                                : values[1];
                         });
}

/// holdsIntegers, looking at most 8 producers deep.
static bool holdsIntegersWithin(Value value, int depth) {
  if (depth > 8)
    return false;
  Operation *op = value.getDefiningOp();
  if (!op)
    return false;
  if (isa<RoundOp>(op))
    return true;
  // A constant of whole numbers (a float zero point); not a weight that
  // training updates.
  DenseElementsAttr constant = dense(getConstantValue(value));
  if (constant && !op->hasAttr("hps.trainable")) {
    if (!isa<FloatType>(constant.getElementType()))
      return true;
    return llvm::all_of(constant.getValues<APFloat>(),
                        [](const APFloat &v) { return v.isInteger(); });
  }
  if (auto conversion = dyn_cast<CastOp>(op))
    return isa<IntegerType>(getElementTypeOrSelf(conversion.getInput()));
  if (isa<AddOp, SubOp>(op))
    return holdsIntegersWithin(op->getOperand(0), depth + 1) &&
           holdsIntegersWithin(op->getOperand(1), depth + 1);
  if (auto clip = dyn_cast<ClipOp>(op)) {
    auto integral = [](FloatAttr bound) {
      return !bound ||
             bound.getValueAsDouble() == std::floor(bound.getValueAsDouble());
    };
    return integral(clip.getMinAttr()) && integral(clip.getMaxAttr()) &&
           holdsIntegersWithin(clip.getInput(), depth + 1);
  }
  return false;
}

bool heterps::hps::holdsIntegers(Value value) {
  return holdsIntegersWithin(value, 0);
}

/// float -> integer -> the same float type is the identity where the value
/// is already an integer the integer type holds: a quantized value that is
/// dequantized next (QuantizeLinear, then a QLinear op or DequantizeLinear)
/// skips two passes over memory. NaN, for which the first conversion is
/// undefined, stays NaN.
static Value foldIntegerRoundTrip(CastOp outer) {
  auto inner = outer.getInput().getDefiningOp<CastOp>();
  if (!inner || inner.getInput().getType() != outer.getType())
    return {};
  auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(inner.getType()));
  auto clip = inner.getInput().getDefiningOp<ClipOp>();
  if (!integer || integer.getWidth() < 2 || integer.getWidth() > 16 || !clip ||
      !isa<FloatType>(getElementTypeOrSelf(outer.getType())) ||
      !clip.getMinAttr() || !clip.getMaxAttr() || !holdsIntegers(clip))
    return {};
  unsigned bits = integer.getWidth();
  double low = integer.isUnsigned() ? 0 : -std::ldexp(1.0, bits - 1);
  double high = integer.isUnsigned() ? std::ldexp(1.0, bits) - 1
                                     : std::ldexp(1.0, bits - 1) - 1;
  if (clip.getMinAttr().getValueAsDouble() < low ||
      clip.getMaxAttr().getValueAsDouble() > high)
    return {};
  return clip;
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (Value value = foldIntegerRoundTrip(*this))
    return value;
  return foldElementwise(
      *this, adaptor.getOperands(),
      [](ArrayRef<Attribute> values, Type to) -> Attribute {
        auto toInt = dyn_cast<IntegerType>(to);
        if (auto i = dyn_cast<IntegerAttr>(values[0])) {
          bool fromUnsigned = i.getType().isUnsignedInteger();
          const APInt &v = i.getValue();
          if (toInt) {
            if (toInt.getWidth() == 1)
              return IntegerAttr::get(to, v.isZero() ? 0 : 1);
            bool fromBool = v.getBitWidth() == 1;
            return IntegerAttr::get(to, fromUnsigned || fromBool
                                            ? v.zextOrTrunc(toInt.getWidth())
                                            : v.sextOrTrunc(toInt.getWidth()));
          }
          if (!isa<FloatType>(to))
            return {};
          double d = fromUnsigned || v.getBitWidth() == 1
                         ? static_cast<double>(v.getZExtValue())
                         : static_cast<double>(v.getSExtValue());
          return FloatAttr::get(to, d);
        }
        auto f = dyn_cast<FloatAttr>(values[0]);
        if (!f)
          return {};
        double d = f.getValueAsDouble();
        if (isa<FloatType>(to))
          return FloatAttr::get(to, d);
        if (!toInt)
          return {};
        if (toInt.getWidth() == 1)
          return IntegerAttr::get(to, d != 0 ? 1 : 0);
        if (std::isnan(d) || std::isinf(d))
          return {};
        return IntegerAttr::get(to, APInt(toInt.getWidth(),
                                          static_cast<int64_t>(std::trunc(d)),
                                          /*isSigned=*/!toInt.isUnsigned()));
      });
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}
OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}
OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}
OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, getInput(), adaptor.getInput());
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  DenseElementsAttr input = dense(adaptor.getInput());
  RankedTensorType type =
      input ? foldableType(*this, input.isSplat()) : nullptr;
  if (!type)
    return {};
  return gatherElements(
      input, type,
      broadcastIndices(input.getType().getShape(), type.getShape()));
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
    return static_cast<int64_t>(it.index()) == it.value();
  });
  if (identity && getInput().getType() == getType())
    return getInput();
  DenseElementsAttr input = dense(adaptor.getInput());
  RankedTensorType type =
      input ? foldableType(*this, input.isSplat()) : nullptr;
  if (!type)
    return {};
  ArrayRef<int64_t> inShape = input.getType().getShape();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  SmallVector<int64_t> outStrides = stridesOf(type.getShape());
  SmallVector<int64_t> indices(type.getNumElements());
  for (int64_t linear = 0; linear < type.getNumElements(); ++linear) {
    int64_t index = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      index +=
          ((linear / outStrides[d]) % type.getDimSize(d)) * inStrides[perm[d]];
    indices[linear] = index;
  }
  return gatherElements(input, type, indices);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  RankedTensorType type = foldableType(*this);
  if (!type)
    return {};
  int64_t axis = *shp::normalizeAxis(getAxis(), type.getRank());
  int64_t inner =
      shp::elementCount(type.getShape().drop_front(axis + 1)).value();
  int64_t outer = shp::elementCount(type.getShape().take_front(axis)).value();
  SmallVector<SmallVector<Attribute>> inputs;
  SmallVector<int64_t> extents;
  for (auto [value, attr] : llvm::zip(getInputs(), adaptor.getInputs())) {
    DenseElementsAttr input = dense(attr);
    if (!input)
      return {};
    SmallVector<Attribute> all;
    int64_t count = input.getNumElements();
    all.reserve(count);
    for (int64_t i = 0; i < count; ++i)
      all.push_back(input.isSplat() ? input.getSplatValue<Attribute>()
                                    : input.getValues<Attribute>()[i]);
    inputs.push_back(std::move(all));
    extents.push_back(input.getType().getDimSize(axis));
  }
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  for (int64_t o = 0; o < outer; ++o)
    for (auto [input, extent] : llvm::zip(inputs, extents))
      for (int64_t i = 0; i < extent * inner; ++i)
        result.push_back(input[o * extent * inner + i]);
  return DenseElementsAttr::get(type, result);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape() &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }) &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }))
    return getInput();
  DenseElementsAttr input = dense(adaptor.getInput());
  RankedTensorType type =
      input ? foldableType(*this, input.isSplat()) : nullptr;
  if (!type)
    return {};
  ArrayRef<int64_t> inShape = input.getType().getShape();
  int64_t rank = inShape.size();
  SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
  for (auto [i, axis] : llvm::enumerate(getAxes())) {
    int64_t a = *shp::normalizeAxis(axis, rank);
    steps[a] = getSteps()[i];
    shp::sliceCount(inShape[a], getStarts()[i], getEnds()[i], steps[a],
                    &starts[a]);
  }
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  SmallVector<int64_t> outStrides = stridesOf(type.getShape());
  SmallVector<int64_t> indices(type.getNumElements());
  for (int64_t linear = 0; linear < type.getNumElements(); ++linear) {
    int64_t index = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coordinate = (linear / outStrides[d]) % type.getDimSize(d);
      index += (starts[d] + coordinate * steps[d]) * inStrides[d];
    }
    indices[linear] = index;
  }
  return gatherElements(input, type, indices);
}

/// Integer sum, product, max and min, and float max and min (without
/// NaN): the reductions whose result does not depend on the order the
/// runtime adds in. Empty inputs are left to the runtime.
OpFoldResult ReduceOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr input = dense(adaptor.getInput());
  RankedTensorType type = input ? foldableType(*this) : nullptr;
  if (!type || input.getNumElements() == 0)
    return {};
  Type element = input.getElementType();
  ReduceKind kind = getKind();
  bool extreme = kind == ReduceKind::Max || kind == ReduceKind::Min;
  auto integer = dyn_cast<IntegerType>(element);
  if (integer
          ? !(extreme || kind == ReduceKind::Sum || kind == ReduceKind::Prod)
          : !(isa<FloatType>(element) && extreme))
    return {};

  // The output position each input dim moves along (0 where reduced).
  ArrayRef<int64_t> inShape = input.getType().getShape();
  int64_t rank = static_cast<int64_t>(inShape.size());
  SmallVector<bool> reduced(rank, getAxes().empty());
  for (int64_t axis : getAxes()) {
    std::optional<int64_t> normalized = shp::normalizeAxis(axis, rank);
    if (!normalized)
      return {};
    reduced[*normalized] = true;
  }
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d])
      kept.push_back(inShape[d]);
  SmallVector<int64_t> keptStrides = stridesOf(kept),
                       inStrides = stridesOf(inShape);
  SmallVector<int64_t> outStride(rank, 0);
  for (int64_t d = 0, k = 0; d < rank; ++d)
    if (!reduced[d])
      outStride[d] = keptStrides[k++];
  auto outputOf = [&](int64_t linear) {
    int64_t index = 0;
    for (int64_t d = 0; d < rank; ++d)
      index += (linear / inStrides[d]) % inShape[d] * outStride[d];
    return index;
  };

  int64_t outputs = type.getNumElements();
  SmallVector<bool> started(outputs, false);
  if (integer) {
    bool isUnsigned = integer.isUnsigned();
    SmallVector<APInt> acc(outputs);
    int64_t linear = 0;
    for (const APInt &v : input.getValues<APInt>()) {
      int64_t o = outputOf(linear++);
      if (!started[o]) {
        acc[o] = v;
        started[o] = true;
      } else if (kind == ReduceKind::Sum) {
        acc[o] += v;
      } else if (kind == ReduceKind::Prod) {
        acc[o] *= v;
      } else {
        bool less = isUnsigned ? v.ult(acc[o]) : v.slt(acc[o]);
        if (less == (kind == ReduceKind::Min) && v != acc[o])
          acc[o] = v;
      }
    }
    return DenseElementsAttr::get(type, acc);
  }
  SmallVector<APFloat> acc(outputs, APFloat(0.0f));
  int64_t linear = 0;
  for (const APFloat &v : input.getValues<APFloat>()) {
    if (v.isNaN())
      return {};
    int64_t o = outputOf(linear++);
    if (!started[o] || (kind == ReduceKind::Max ? acc[o] < v : v < acc[o]))
      acc[o] = v;
    started[o] = true;
  }
  return DenseElementsAttr::get(type, acc);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr data = dense(adaptor.getData());
  std::optional<SmallVector<int64_t>> indexValues =
      getConstantInts(getIndices());
  RankedTensorType type = data ? foldableType(*this) : nullptr;
  if (!type || !indexValues)
    return {};
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  int64_t axis = *shp::normalizeAxis(getAxis(), dataShape.size());
  int64_t extent = dataShape[axis];
  int64_t inner = shp::elementCount(dataShape.drop_front(axis + 1)).value();
  int64_t outer = shp::elementCount(dataShape.take_front(axis)).value();
  SmallVector<int64_t> indices;
  indices.reserve(type.getNumElements());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : *indexValues) {
      if (index < -extent || index >= extent)
        return {}; // Out of range: left for the runtime to report.
      if (index < 0)
        index += extent;
      for (int64_t i = 0; i < inner; ++i)
        indices.push_back((o * extent + index) * inner + i);
    }
  return gatherElements(data, type, indices);
}
