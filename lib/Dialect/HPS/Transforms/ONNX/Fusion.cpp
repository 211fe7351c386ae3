//===- Fusion.cpp - Decomposed LayerNorm, GELU, pooled lookups -> hps ops -===//
//
// Exporters targeting opsets without LayerNormalization (before 17) or Gelu
// spell them out in elementwise ops, and EmbeddingBag as Gather + ReduceSum.
// These patterns run on the legalized hps ops and recognise the exact
// decompositions (constants within 1e-6), so placement and cost models see
// one layer instead of a dozen. The zero-point shifts that quantized models
// add and subtract again between their layers cancel here too.
//
//===----------------------------------------------------------------------===//

#include "../ONNXPattern.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace heterps::hps {
namespace {

constexpr double kTolerance = 1e-6;

bool near(std::optional<double> value, double expected) {
  return value && std::abs(*value - expected) <= kTolerance;
}

/// The other operand of a binary op when one operand is a scalar constant
/// within tolerance of `expected` (any value when std::nullopt), with that
/// constant.
template <typename OpTy>
std::optional<std::pair<Value, double>>
splitConstant(OpTy op, std::optional<double> expected = std::nullopt) {
  for (auto [constant, other] : {std::pair(op.getLhs(), op.getRhs()),
                                 std::pair(op.getRhs(), op.getLhs())}) {
    std::optional<double> value = getConstantScalar(constant);
    if (value && (!expected || near(value, *expected)))
      return std::pair(other, *value);
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// GELU.
//===----------------------------------------------------------------------===//

/// A value read as coefficient * (product of factors), through hps.mul,
/// hps.div by a constant and hps.pow by the constant 2 or 3, so that
/// 0.5 * x * t, x * 0.5 * t and x * t * 0.5 (or x * x * x and pow(x, 3))
/// compare equal.
struct Product {
  double coefficient = 1.0;
  SmallVector<Value, 4> factors;
};

void collectProduct(Value value, Product &product, unsigned depth = 0) {
  if (std::optional<double> constant = getConstantScalar(value)) {
    product.coefficient *= *constant;
    return;
  }
  if (depth < 8) {
    if (auto mul = value.getDefiningOp<MulOp>()) {
      collectProduct(mul.getLhs(), product, depth + 1);
      collectProduct(mul.getRhs(), product, depth + 1);
      return;
    }
    if (auto div = value.getDefiningOp<DivOp>()) {
      std::optional<double> divisor = getConstantScalar(div.getRhs());
      if (divisor && *divisor != 0) {
        collectProduct(div.getLhs(), product, depth + 1);
        product.coefficient /= *divisor;
        return;
      }
    }
    if (auto pow = value.getDefiningOp<PowOp>()) {
      std::optional<double> exponent = getConstantScalar(pow.getRhs());
      for (int n : {2, 3})
        if (near(exponent, n)) {
          for (int i = 0; i < n; ++i)
            collectProduct(pow.getLhs(), product, depth + 1);
          return;
        }
    }
  }
  product.factors.push_back(value);
}

Product productOf(Value value) {
  Product product;
  collectProduct(value, product);
  return product;
}

/// True if `product` is scale * base^n.
bool isScaledPower(Product product, const Product &base, unsigned n,
                   double scale) {
  SmallVector<Value, 4> expected;
  for (unsigned i = 0; i < n; ++i)
    llvm::append_range(expected, base.factors);
  auto byAddress = [](Value a, Value b) {
    return a.getAsOpaquePointer() < b.getAsOpaquePointer();
  };
  llvm::sort(product.factors, byAddress);
  llvm::sort(expected, byAddress);
  return product.factors == expected &&
         near(product.coefficient,
              scale * std::pow(base.coefficient, static_cast<double>(n)));
}

/// 1 + act(u) (in either order): u, else null.
template <typename ActivationOp> Value onePlus(Value value) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  auto other = splitConstant(add, 1.0);
  if (!other)
    return nullptr;
  auto activation = other->first.getDefiningOp<ActivationOp>();
  return activation ? activation.getInput() : nullptr;
}

/// The x of 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) when
/// `rest` is 0.5 * x and `t` the second factor; else null.
Value matchTanhGelu(const Product &rest, Value t) {
  Value u = onePlus<TanhOp>(t);
  if (!u)
    return nullptr;
  Product inner = productOf(u);
  if (inner.factors.size() != 1 ||
      !near(inner.coefficient,
            llvm::numbers::sqrt2 * llvm::numbers::inv_sqrtpi))
    return nullptr;
  auto sum = inner.factors.front().getDefiningOp<AddOp>();
  if (!sum)
    return nullptr;
  for (auto [x, cube] : {std::pair(sum.getLhs(), sum.getRhs()),
                         std::pair(sum.getRhs(), sum.getLhs())}) {
    Product base = productOf(x);
    if (isScaledPower(rest, base, 1, 0.5) &&
        isScaledPower(productOf(cube), base, 3, 0.044715))
      return x;
  }
  return nullptr;
}

/// The x of 0.5 * x * (1 + erf(x / sqrt(2))) (or x * (1 / sqrt(2))) when
/// `rest` is 0.5 * x and `t` the second factor; else null.
Value matchErfGelu(const Product &rest, Value t) {
  Value u = onePlus<ErfOp>(t);
  if (!u)
    return nullptr;
  Value x;
  if (auto div = u.getDefiningOp<DivOp>())
    x = div.getLhs();
  else if (auto mul = u.getDefiningOp<MulOp>())
    if (auto split = splitConstant(mul))
      x = split->first;
  if (!x)
    return nullptr;
  Product base = productOf(x);
  if (isScaledPower(productOf(u), base, 1, llvm::numbers::inv_sqrt2) &&
      isScaledPower(rest, base, 1, 0.5))
    return x;
  return nullptr;
}

/// Rooted at the outermost multiplication: one factor is 1 + tanh(...) or
/// 1 + erf(...), the rest 0.5 * x.
struct FuseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(getElementTypeOrSelf(op.getType())))
      return failure();
    Product product = productOf(op.getResult());
    for (auto [i, t] : llvm::enumerate(product.factors)) {
      Product rest = product;
      rest.factors.erase(rest.factors.begin() + i);
      bool tanh = true;
      Value x = matchTanhGelu(rest, t);
      if (!x) {
        tanh = false;
        x = matchErfGelu(rest, t);
      }
      // The result must be x's shape: nothing broadcast x.
      if (!x || x.getType() != op.getType())
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(
          op, op.getType(), x, tanh ? rewriter.getUnitAttr() : UnitAttr(),
          op.getDeviceAttr());
      return success();
    }
    return failure();
  }
};

//===----------------------------------------------------------------------===//
// LayerNorm.
//===----------------------------------------------------------------------===//

/// The first normalized axis when `value` is a keepdims hps.reduce mean over
/// a suffix of its input's axes (the layer-norm axes).
std::optional<int64_t> suffixMeanAxis(Value value) {
  auto reduce = value.getDefiningOp<ReduceOp>();
  if (!reduce || reduce.getKind() != ReduceKind::Mean || !reduce.getKeepdims())
    return std::nullopt;
  auto shape = rankedShape(reduce.getInput());
  if (!shape || reduce.getAxes().empty())
    return std::nullopt;
  int64_t rank = shape->size();
  SmallVector<int64_t> axes;
  for (int64_t axis : reduce.getAxes()) {
    std::optional<int64_t> normal = shapes::normalizeAxis(axis, rank);
    if (!normal)
      return std::nullopt;
    axes.push_back(*normal);
  }
  llvm::sort(axes);
  int64_t first = rank - static_cast<int64_t>(axes.size());
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis != first + static_cast<int64_t>(i))
      return std::nullopt;
  return first;
}

struct Normalized {
  Value input;
  int64_t axis; // First normalized axis, in [0, rank).
  double epsilon;
};

/// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps), the means over the
/// same suffix of axes with keepdims.
std::optional<Normalized> matchNormalized(Value value) {
  auto div = value.getDefiningOp<DivOp>();
  if (!div)
    return std::nullopt;
  Value centered = div.getLhs();
  auto sub = centered.getDefiningOp<SubOp>();
  if (!sub || sub.getRhs().getDefiningOp<ReduceOp>() == nullptr ||
      sub.getRhs().getDefiningOp<ReduceOp>().getInput() != sub.getLhs())
    return std::nullopt;
  Value x = sub.getLhs();
  std::optional<int64_t> axis = suffixMeanAxis(sub.getRhs());
  auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
  auto shifted = sqrt ? sqrt.getInput().getDefiningOp<AddOp>() : AddOp();
  auto variance = shifted ? splitConstant(shifted) : std::nullopt;
  if (!axis || !variance || variance->second < 0 ||
      suffixMeanAxis(variance->first) != axis)
    return std::nullopt;
  Value squared = variance->first.getDefiningOp<ReduceOp>().getInput();
  if (!isScaledPower(productOf(squared), productOf(centered), 2, 1.0) ||
      x.getType() != value.getType())
    return std::nullopt;
  return Normalized{x, *axis, variance->second};
}

/// True if `param` can be a layer-norm scale or bias of `input` normalized
/// from `axis` on.
bool fitsNormalizedShape(Value param, Value input, int64_t axis) {
  auto shape = rankedShape(param), in = rankedShape(input);
  return shape && in &&
         getElementTypeOrSelf(param.getType()) ==
             getElementTypeOrSelf(input.getType()) &&
         shapes::broadcastsTo(*shape, in->drop_front(axis));
}

/// normalized * scale (either order) -> hps.layer_norm without bias.
struct FuseLayerNormScale : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(getElementTypeOrSelf(op.getType())))
      return failure();
    for (auto [value, scale] : {std::pair(op.getLhs(), op.getRhs()),
                                std::pair(op.getRhs(), op.getLhs())}) {
      std::optional<Normalized> n = matchNormalized(value);
      if (!n || op.getType() != n->input.getType() ||
          !fitsNormalizedShape(scale, n->input, n->axis))
        continue;
      int64_t rank = rankedShape(n->input)->size();
      rewriter.replaceOpWithNewOp<LayerNormOp>(
          op, op.getType(), n->input, scale, Value(),
          rewriter.getI64IntegerAttr(n->axis - rank),
          rewriter.getF32FloatAttr(n->epsilon), op.getDeviceAttr());
      return success();
    }
    return failure();
  }
};

/// layer_norm(x, scale) + bias (either order) -> layer_norm(x, scale, bias).
struct FuseLayerNormBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [value, bias] : {std::pair(op.getLhs(), op.getRhs()),
                               std::pair(op.getRhs(), op.getLhs())}) {
      auto norm = value.getDefiningOp<LayerNormOp>();
      if (!norm || norm.getBias() || op.getType() != norm.getType())
        continue;
      auto rank = rankedShape(norm.getInput());
      std::optional<int64_t> axis =
          rank ? shapes::normalizeAxis(norm.getAxis(), rank->size())
               : std::nullopt;
      if (!axis || !fitsNormalizedShape(bias, norm.getInput(), *axis))
        continue;
      rewriter.replaceOpWithNewOp<LayerNormOp>(
          op, op.getType(), norm.getInput(), norm.getScale(), bias,
          norm.getAxisAttr(), norm.getEpsilonAttr(), op.getDeviceAttr());
      return success();
    }
    return failure();
  }
};

/// reduce sum / mean over the bag axis (the ids' last) of an unpooled
/// embedding lookup -> the lookup with sum / mean pooling (+ a reshape for
/// keepdims). Exported EmbeddingBags and CTR models spell pooling this way;
/// pooling in the lookup never materialises the [.., bag, dim] rows, and
/// the parameter server and its gradients handle pooled lookups already.
struct FuseEmbeddingPooling : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    ReduceKind kind = op.getKind();
    if (kind != ReduceKind::Sum && kind != ReduceKind::Mean)
      return failure();
    auto lookup = op.getInput().getDefiningOp<EmbeddingLookupOp>();
    if (!lookup || lookup.getPooling() != EmbeddingPooling::None ||
        !lookup->hasOneUse() || lookup.getDeviceAttr() != op.getDeviceAttr())
      return failure();
    auto ids = rankedShape(lookup.getIds());
    auto rows = rankedShape(lookup.getResult());
    if (!ids || !rows || ids->empty() || op.getAxes().size() != 1)
      return failure();
    const int64_t bagAxis = static_cast<int64_t>(ids->size()) - 1;
    std::optional<int64_t> axis =
        shapes::normalizeAxis(op.getAxes()[0], rows->size());
    // An empty bag averages to NaN in a reduce but to 0 in a lookup.
    int64_t bag = ids->back();
    if (axis != bagAxis || bag == shapes::kDynamic ||
        (kind == ReduceKind::Mean && bag == 0))
      return failure();
    SmallVector<int64_t> pooledShape(ids->drop_back());
    pooledShape.push_back(rows->back());
    auto pooledType = RankedTensorType::get(
        pooledShape, getElementTypeOrSelf(lookup.getResult().getType()));
    Value pooled = rewriter.create<EmbeddingLookupOp>(
        lookup.getLoc(), pooledType, lookup.getTable(), lookup.getIds(),
        EmbeddingPoolingAttr::get(rewriter.getContext(),
                                  kind == ReduceKind::Sum
                                      ? EmbeddingPooling::Sum
                                      : EmbeddingPooling::Mean),
        lookup.getDeviceAttr());
    if (pooled.getType() == op.getType()) {
      rewriter.replaceOp(op, pooled);
      return success();
    }
    auto resultShape = rankedShape(op.getResult());
    if (!resultShape || llvm::is_contained(*resultShape, shapes::kDynamic))
      return failure();
    // A 0 in the target is an empty axis, not a copy of the input's.
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, op.getType(), pooled, rewriter.getDenseI64ArrayAttr(*resultShape),
        llvm::is_contained(*resultShape, 0) ? rewriter.getUnitAttr()
                                            : UnitAttr(),
        op.getDeviceAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Zero points between quantization and dequantization.
//===----------------------------------------------------------------------===//

/// clip(v + z, lo, hi) - z -> clip(v, lo - z, hi - z) for a v of integers
/// and a scalar integer constant z: a QuantizeLinear (or a QLinear op's
/// requantization) adds its zero point, and the DequantizeLinear or QLinear
/// product reading it subtracts the same one; two passes over memory fewer.
/// Exact: below 2^24 both sides compute the same integers, and a v far
/// enough out for v + z to round saturates both at the same bound.
struct CancelZeroPointShift : OpRewritePattern<SubOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SubOp sub,
                                PatternRewriter &rewriter) const override {
    auto clip = sub.getLhs().getDefiningOp<ClipOp>();
    std::optional<double> zero = getConstantScalar(sub.getRhs());
    if (!clip || !clip->hasOneUse() || !clip.getMinAttr() ||
        !clip.getMaxAttr() || !zero || *zero != std::floor(*zero) ||
        std::abs(*zero) > 65536 || sub.getType() != clip.getType())
      return failure();
    auto add = clip.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      return failure();
    std::optional<std::pair<Value, double>> split = splitConstant(add, *zero);
    if (!split || split->second != *zero ||
        split->first.getType() != sub.getType() || !holdsIntegers(split->first))
      return failure();
    double low = clip.getMinAttr().getValueAsDouble();
    double high = clip.getMaxAttr().getValueAsDouble();
    rewriter.replaceOpWithNewOp<ClipOp>(
        sub, sub.getType(), split->first, rewriter.getF64FloatAttr(low - *zero),
        rewriter.getF64FloatAttr(high - *zero), sub.getDeviceAttr());
    return success();
  }
};

} // namespace

void populateFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGelu, FuseLayerNormScale, FuseLayerNormBias,
               FuseEmbeddingPooling, CancelZeroPointShift>(
      patterns.getContext());
}

} // namespace heterps::hps
