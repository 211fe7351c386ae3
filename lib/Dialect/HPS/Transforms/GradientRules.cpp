//===- GradientRules.cpp - Reverse-mode rules of hps ops ------------------===//
//
// One function per op family. Every rule emits ordinary forward hps ops so
// that placement, partitioning and code generation treat the backward pass
// like any other layer; broadcasting is undone by GradientBuilder::sumToShape.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace heterps::hps;
using namespace heterps::hps::autodiff;
namespace shp = heterps::hps::shapes;

//===----------------------------------------------------------------------===//
// GradientBuilder.
//===----------------------------------------------------------------------===//

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}
static ArrayRef<int64_t> shapeOf(Value value) {
  return tensorType(value).getShape();
}
static Type elementOf(Value value) {
  return tensorType(value).getElementType();
}

static int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

/// The type of a broadcasting op's result over `lhs` and `rhs`.
static RankedTensorType broadcastType(Value lhs, Value rhs, Type element) {
  std::optional<SmallVector<int64_t>> shape =
      shp::broadcast(shapeOf(lhs), shapeOf(rhs));
  assert(shape && "operands of a backward op must broadcast");
  return RankedTensorType::get(*shape, element);
}

Value GradientBuilder::splat(RankedTensorType type, double value) {
  auto attr = DenseElementsAttr::get(
      type, ArrayRef<Attribute>{FloatAttr::get(type.getElementType(), value)});
  return constant(llvm::cast<ElementsAttr>(attr));
}

Value GradientBuilder::constant(ElementsAttr value) {
  Value &slot = constants[value];
  if (!slot)
    slot = builder.create<ConstantOp>(loc, value);
  return slot;
}

Value GradientBuilder::scalar(Type elementType, double value) {
  return splat(RankedTensorType::get({}, elementType), value);
}

Value GradientBuilder::add(Value lhs, Value rhs) {
  return create<AddOp>(broadcastType(lhs, rhs, elementOf(lhs)), lhs, rhs);
}
Value GradientBuilder::sub(Value lhs, Value rhs) {
  return create<SubOp>(broadcastType(lhs, rhs, elementOf(lhs)), lhs, rhs);
}
Value GradientBuilder::mul(Value lhs, Value rhs) {
  return create<MulOp>(broadcastType(lhs, rhs, elementOf(lhs)), lhs, rhs);
}
Value GradientBuilder::div(Value lhs, Value rhs) {
  return create<DivOp>(broadcastType(lhs, rhs, elementOf(lhs)), lhs, rhs);
}
Value GradientBuilder::mul(Value lhs, double rhs) {
  if (rhs == 1.0)
    return lhs;
  return mul(lhs, scalar(elementOf(lhs), rhs));
}
Value GradientBuilder::neg(Value value) {
  return create<NegOp>(value.getType(), value);
}

RankedTensorType GradientBuilder::compareType(Value lhs, Value rhs) {
  return broadcastType(lhs, rhs, builder.getI1Type());
}

Value GradientBuilder::where(Value condition, Value x, Value y) {
  RankedTensorType xy = broadcastType(x, y, elementOf(x));
  std::optional<SmallVector<int64_t>> shape =
      shp::broadcast(shapeOf(condition), xy.getShape());
  assert(shape && "where operands must broadcast");
  return create<WhereOp>(RankedTensorType::get(*shape, elementOf(x)), condition,
                         x, y);
}

Value GradientBuilder::reshape(Value value, ArrayRef<int64_t> shape) {
  if (shapeOf(value) == shape)
    return value;
  // Static targets spell every extent, so a 0 is a literal empty axis.
  bool allowZero = llvm::is_contained(shape, 0);
  return create<ReshapeOp>(RankedTensorType::get(shape, elementOf(value)),
                           value, shape, allowZero);
}

Value GradientBuilder::expand(Value value, ArrayRef<int64_t> shape) {
  if (shapeOf(value) == shape)
    return value;
  return create<ExpandOp>(RankedTensorType::get(shape, elementOf(value)), value,
                          shape);
}

Value GradientBuilder::transpose(Value value, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(shapeOf(value)[axis]);
  return create<TransposeOp>(RankedTensorType::get(shape, elementOf(value)),
                             value, perm);
}

Value GradientBuilder::reduce(ReduceKind kind, Value value,
                              ArrayRef<int64_t> axes, bool keepdims) {
  assert(!axes.empty() && "an empty axis list would mean every axis");
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(shapeOf(value))) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
      shape.push_back(dim);
    else if (keepdims)
      shape.push_back(1);
  }
  return create<ReduceOp>(RankedTensorType::get(shape, elementOf(value)), kind,
                          value, axes, keepdims);
}

Value GradientBuilder::sumToShape(Value gradient, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = shapeOf(gradient);
  if (from == shape)
    return gradient;
  assert(from.size() >= shape.size() && "a broadcast never lowers the rank");
  int64_t lead = from.size() - shape.size();
  SmallVector<int64_t> axes;
  for (int64_t i = 0, e = from.size(); i < e; ++i)
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1))
      axes.push_back(i);
  Value summed =
      axes.empty() ? gradient : reduce(ReduceKind::Sum, gradient, axes, false);
  return reshape(summed, shape);
}

Value GradientBuilder::cast(Value value, Type elementType) {
  if (elementOf(value) == elementType)
    return value;
  return create<CastOp>(RankedTensorType::get(shapeOf(value), elementType),
                        value);
}

//===----------------------------------------------------------------------===//
// Rule plumbing.
//===----------------------------------------------------------------------===//

Value Rule::zero(Value like) { return b.scalar(elementOf(like), 0.0); }
Value Rule::one(Value like) { return b.scalar(elementOf(like), 1.0); }

static LogicalResult unsupported(Operation *op, const Twine &why) {
  return op->emitError() << "hps-autodiff: no gradient rule for '"
                         << op->getName() << "' " << why;
}

//===----------------------------------------------------------------------===//
// Linear algebra.
//===----------------------------------------------------------------------===//

static LogicalResult gemmRule(GemmOp op, Rule &r) {
  Value g = r.grad(), a = op.getA(), bm = op.getB();
  bool transA = op.getTransA(), transB = op.getTransB();
  APFloat alpha = op.getAlpha(), one(1.0f);
  auto gemm = [&](Type type, Value x, Value y, bool tx, bool ty) -> Value {
    return r.b.create<GemmOp>(type, x, y, Value(), alpha, one, tx, ty);
  };
  // Y = alpha op(A) op(B): dop(A) = alpha G op(B)^T, dop(B) = alpha op(A)^T G,
  // transposed back where the operand itself was transposed.
  r.set(0, [&] {
    return transA ? gemm(a.getType(), bm, g, transB, true)
                  : gemm(a.getType(), g, bm, false, !transB);
  });
  r.set(1, [&] {
    return transB ? gemm(bm.getType(), g, a, true, transA)
                  : gemm(bm.getType(), a, g, !transA, false);
  });
  if (op.getC())
    r.set(2, [&] {
      Value dc = r.b.sumToShape(g, shapeOf(op.getC()));
      return r.b.mul(dc, op.getBetaAttr().getValueAsDouble());
    });
  return success();
}

static LogicalResult matmulRule(MatMulOp op, Rule &r) {
  Value a = op.getA(), bm = op.getB();
  // Work on the promoted operands: 1-D A is [1, K], 1-D B is [K, 1].
  SmallVector<int64_t> aShape(shapeOf(a)), bShape(shapeOf(bm));
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back(), n = bShape.back();
  SmallVector<int64_t> full = *shp::broadcast(ArrayRef(aShape).drop_back(2),
                                              ArrayRef(bShape).drop_back(2));
  full.append({m, n});
  GradientBuilder &b = r.b;
  Value g = b.reshape(r.grad(), full);
  // Only the adjoint of A reads B and the other way round.
  auto a2 = [&] { return b.reshape(a, aShape); };
  auto b2 = [&] { return b.reshape(bm, bShape); };
  Type element = elementOf(g);
  auto swapLast = [&](Value value) {
    SmallVector<int64_t> perm(shapeOf(value).size());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return b.transpose(value, perm);
  };
  auto matmul = [&](Value x, Value y) -> Value {
    ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
    SmallVector<int64_t> shape =
        *shp::broadcast(xs.drop_back(2), ys.drop_back(2));
    shape.append({xs[xs.size() - 2], ys.back()});
    return b.create<MatMulOp>(RankedTensorType::get(shape, element), x, y);
  };
  auto gemm = [&](ArrayRef<int64_t> shape, Value x, Value y, bool tx,
                  bool ty) -> Value {
    return b.create<GemmOp>(RankedTensorType::get(shape, element), x, y,
                            Value(), APFloat(1.0f), APFloat(1.0f), tx, ty);
  };
  // A 2-D B is shared by every batch of A: fold A's batch into its rows and
  // use one gemm, which also sums dB over the batch.
  bool sharedB = bShape.size() == 2;
  int64_t rows = product(full) / n;
  Value gRows = sharedB ? b.reshape(g, {rows, n}) : Value();
  r.set(0, [&] {
    Value da =
        sharedB ? b.reshape(gemm({rows, k}, gRows, b2(), false, true), aShape)
                : b.sumToShape(matmul(g, swapLast(b2())), aShape);
    return b.reshape(da, shapeOf(a));
  });
  r.set(1, [&] {
    Value db =
        sharedB ? gemm({k, n}, b.reshape(a2(), {rows, k}), gRows, true, false)
                : b.sumToShape(matmul(swapLast(a2()), g), bShape);
    return b.reshape(db, shapeOf(bm));
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops and where.
//===----------------------------------------------------------------------===//

static LogicalResult binaryRule(Operation *op, Rule &r) {
  GradientBuilder &b = r.b;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Value g = r.grad(), y = op->getResult(0);
  auto toLhs = [&](Value grad) { return b.sumToShape(grad, shapeOf(lhs)); };
  auto toRhs = [&](Value grad) { return b.sumToShape(grad, shapeOf(rhs)); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AddOp) {
        r.set(0, [&] { return toLhs(g); });
        r.set(1, [&] { return toRhs(g); });
        return success();
      })
      .Case([&](SubOp) {
        r.set(0, [&] { return toLhs(g); });
        r.set(1, [&] { return b.neg(toRhs(g)); });
        return success();
      })
      .Case([&](MulOp) {
        r.set(0, [&] { return toLhs(b.mul(g, rhs)); });
        r.set(1, [&] { return toRhs(b.mul(g, lhs)); });
        return success();
      })
      .Case([&](DivOp) {
        r.set(0, [&] { return toLhs(b.div(g, rhs)); });
        // d(l/r)/dr = -y / r.
        r.set(1, [&] { return b.neg(toRhs(b.div(b.mul(g, y), rhs))); });
        return success();
      })
      .Case([&](PowOp) {
        // The exponent may have another element type (integer powers).
        Type element = elementOf(lhs);
        r.set(0, [&] {
          Value exponent = b.cast(rhs, element);
          Value lower = b.create<PowOp>(broadcastType(lhs, exponent, element),
                                        lhs, b.sub(exponent, r.one(lhs)));
          return toLhs(b.mul(g, b.mul(exponent, lower)));
        });
        r.set(1, [&] {
          Value grad = b.mul(g, b.mul(y, b.unary<LogOp>(lhs)));
          return b.cast(toRhs(grad), elementOf(rhs));
        });
        return success();
      })
      .Case<MaxOp, MinOp>([&](Operation *minMax) {
        // A tie gives each operand half of g, as PyTorch's maximum and
        // minimum do: the two adjoints still add up to g.
        const bool max = isa<MaxOp>(minMax);
        Value lhsWins =
            max ? b.compare<GreaterOp>(lhs, rhs) : b.compare<LessOp>(lhs, rhs);
        Value rhsWins =
            max ? b.compare<GreaterOp>(rhs, lhs) : b.compare<LessOp>(rhs, lhs);
        Value zero = r.zero(g);
        auto share = [&](Value wins) {
          return b.where(
              wins, g,
              b.where(b.compare<EqualOp>(lhs, rhs), b.mul(g, 0.5), zero));
        };
        r.set(0, [&] { return toLhs(share(lhsWins)); });
        r.set(1, [&] { return toRhs(share(rhsWins)); });
        return success();
      })
      .Case([&](ModOp mod) {
        // l mod r = l - q r with q = trunc(l / r) for fmod, floor(l / r)
        // otherwise; q is piecewise constant. Only floats get here (Activity
        // skips integers).
        r.set(0, [&] { return toLhs(g); });
        r.set(1, [&] {
          Value ratio = b.div(lhs, rhs);
          Value down = b.unary<FloorOp>(ratio);
          Value quotient =
              mod.getFmod()
                  ? b.where(b.compare<GreaterEqualOp>(ratio, r.zero(ratio)),
                            down, b.unary<CeilOp>(ratio))
                  : down;
          return b.neg(toRhs(b.mul(g, quotient)));
        });
        return success();
      })
      .Case([&](PReluOp) {
        // At 0 the slope, as in PyTorch (and as Relu's 0 there).
        Value positive = b.compare<GreaterOp>(lhs, r.zero(lhs));
        r.set(0, [&] { return b.where(positive, g, b.mul(g, rhs)); });
        r.set(1, [&] {
          return toRhs(b.where(positive, r.zero(g), b.mul(g, lhs)));
        });
        return success();
      })
      .Default([](Operation *) -> LogicalResult {
        llvm_unreachable("not a differentiable binary op");
      });
}

static LogicalResult whereRule(WhereOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value g = r.grad(), zero = r.zero(g);
  r.set(1, [&] {
    return b.sumToShape(b.where(op.getCondition(), g, zero),
                        shapeOf(op.getX()));
  });
  r.set(2, [&] {
    return b.sumToShape(b.where(op.getCondition(), zero, g),
                        shapeOf(op.getY()));
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Unary elementwise ops.
//===----------------------------------------------------------------------===//

/// d tanh-approximated or exact gelu / dx.
static Value geluDerivative(GradientBuilder &b, Value x, Value one,
                            bool tanhApproximation) {
  Value x2 = b.mul(x, x);
  if (!tanhApproximation) {
    // Phi(x) + x phi(x).
    Value cdf = b.mul(
        b.add(b.unary<ErfOp>(b.mul(x, 1 / llvm::numbers::sqrt2)), one), 0.5);
    Value pdf = b.mul(b.unary<ExpOp>(b.mul(x2, -0.5)),
                      llvm::numbers::inv_sqrtpi / llvm::numbers::sqrt2);
    return b.add(cdf, b.mul(x, pdf));
  }
  // y = x/2 (1 + tanh(u)), u = k (x + c x^3):
  // dy = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2).
  constexpr double c = 0.044715;
  double k = std::sqrt(2.0 / llvm::numbers::pi);
  Value t = b.unary<TanhOp>(b.mul(b.add(x, b.mul(b.mul(x2, x), c)), k));
  Value left = b.mul(b.add(t, one), 0.5);
  Value du = b.mul(b.add(b.mul(x2, 3 * c), one), k);
  Value right = b.mul(b.mul(b.mul(x, b.sub(one, b.mul(t, t))), du), 0.5);
  return b.add(left, right);
}

static LogicalResult unaryRule(Operation *op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op->getOperand(0), y = op->getResult(0), g = r.grad();
  // Created on demand: most rules need neither.
  auto zero = [&] { return r.zero(x); };
  auto one = [&] { return r.one(x); };
  auto gt = [&](Value v, double bound) {
    return b.compare<GreaterOp>(v, b.scalar(elementOf(v), bound));
  };
  auto lt = [&](Value v, double bound) {
    return b.compare<LessOp>(v, b.scalar(elementOf(v), bound));
  };
  Value dx =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](NegOp) { return b.neg(g); })
          .Case([&](ReluOp) { return b.where(gt(x, 0), g, zero()); })
          .Case([&](LeakyReluOp relu) {
            // At 0 the slope alpha, as in PyTorch (and as Relu's 0 there).
            return b.where(gt(x, 0), g,
                           b.mul(g, relu.getAlphaAttr().getValueAsDouble()));
          })
          .Case([&](EluOp elu) {
            // Below zero y = alpha (e^x - 1), so dy/dx = y + alpha.
            Value alpha =
                b.scalar(elementOf(x), elu.getAlphaAttr().getValueAsDouble());
            return b.where(gt(x, 0), g, b.mul(g, b.add(y, alpha)));
          })
          .Case([&](SeluOp selu) {
            double alpha = selu.getAlphaAttr().getValueAsDouble();
            double gamma = selu.getGammaAttr().getValueAsDouble();
            Value slope = b.scalar(elementOf(x), gamma * alpha);
            return b.where(gt(x, 0), b.mul(g, gamma),
                           b.mul(g, b.add(y, slope)));
          })
          .Case([&](CeluOp celu) {
            double alpha = celu.getAlphaAttr().getValueAsDouble();
            Value slope = b.unary<ExpOp>(b.mul(x, 1.0 / alpha));
            return b.where(gt(x, 0), g, b.mul(g, slope));
          })
          .Case([&](ThresholdedReluOp relu) {
            return b.where(gt(x, relu.getAlphaAttr().getValueAsDouble()), g,
                           zero());
          })
          .Case([&](SigmoidOp) { return b.mul(g, b.mul(y, b.sub(one(), y))); })
          .Case([&](HardSigmoidOp hardSigmoid) {
            // Flat where clamped: the slope alpha only strictly inside.
            double alpha = hardSigmoid.getAlphaAttr().getValueAsDouble();
            Value clamped = zero();
            return b.where(
                gt(y, 0), b.where(lt(y, 1), b.mul(g, alpha), clamped), clamped);
          })
          .Case([&](HardSwishOp) {
            Value middle = b.mul(
                g, b.add(b.mul(x, 1.0 / 3.0), b.scalar(elementOf(x), 0.5)));
            return b.where(lt(x, -3), zero(), b.where(gt(x, 3), g, middle));
          })
          .Case([&](TanhOp) { return b.mul(g, b.sub(one(), b.mul(y, y))); })
          .Case([&](ExpOp) { return b.mul(g, y); })
          .Case([&](LogOp) { return b.div(g, x); })
          .Case([&](SqrtOp) { return b.div(b.mul(g, 0.5), y); })
          .Case([&](AbsOp) { return b.mul(g, b.unary<SignOp>(x)); })
          .Case([&](ReciprocalOp) { return b.neg(b.mul(g, b.mul(y, y))); })
          .Case([&](SoftplusOp) { return b.mul(g, b.unary<SigmoidOp>(x)); })
          .Case([&](SoftsignOp) {
            Value d = b.add(b.unary<AbsOp>(x), one());
            return b.div(g, b.mul(d, d));
          })
          .Case([&](GeluOp gelu) {
            return b.mul(
                g, geluDerivative(b, x, one(), gelu.getTanhApproximation()));
          })
          .Case([&](ErfOp) {
            Value bell = b.unary<ExpOp>(b.neg(b.mul(x, x)));
            return b.mul(g, b.mul(bell, 2 * llvm::numbers::inv_sqrtpi));
          })
          .Case([&](SinOp) { return b.mul(g, b.unary<CosOp>(x)); })
          .Case([&](CosOp) { return b.neg(b.mul(g, b.unary<SinOp>(x))); })
          .Case<AsinOp, AcosOp>([&](Operation *inverse) {
            // d asin = -d acos = 1 / sqrt(1 - x^2).
            Value root = b.unary<SqrtOp>(b.sub(one(), b.mul(x, x)));
            Value dx = b.div(g, root);
            return isa<AsinOp>(inverse) ? dx : b.neg(dx);
          })
          .Case([&](AtanOp) { return b.div(g, b.add(b.mul(x, x), one())); })
          .Case([&](ClipOp clip) {
            // The bounds themselves still pass the gradient.
            Value dx = g, outside = clip.getMaxAttr() || clip.getMinAttr()
                                        ? zero()
                                        : Value();
            if (FloatAttr max = clip.getMaxAttr())
              dx = b.where(
                  b.compare<LessEqualOp>(
                      x, b.scalar(elementOf(x), max.getValueAsDouble())),
                  dx, outside);
            if (FloatAttr min = clip.getMinAttr())
              dx = b.where(
                  b.compare<GreaterEqualOp>(
                      x, b.scalar(elementOf(x), min.getValueAsDouble())),
                  dx, outside);
            return dx;
          })
          .Case([&](CastOp) { return b.cast(g, elementOf(x)); })
          .Default([](Operation *) -> Value {
            llvm_unreachable("not a differentiable unary op");
          });
  r.set(0, [&] { return dx; });
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

static int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

static LogicalResult concatRule(ConcatOp op, Rule &r) {
  if (op.getInputs().size() == 1) {
    r.set(0, [&] { return r.grad(); });
    return success();
  }
  int64_t axis = normalized(op.getAxis(), shapeOf(r.grad()).size());
  SmallVector<Type> types;
  SmallVector<int64_t> sizes;
  for (Value input : op.getInputs()) {
    types.push_back(input.getType());
    sizes.push_back(shapeOf(input)[axis]);
  }
  auto split = r.b.create<SplitOp>(TypeRange(types), r.grad(),
                                   static_cast<uint64_t>(axis), sizes);
  for (unsigned i = 0, e = types.size(); i < e; ++i)
    r.set(i, [&] { return split.getResult(i); });
  return success();
}

static LogicalResult splitRule(SplitOp op, Rule &r) {
  SmallVector<Value> pieces;
  for (auto [result, grad] : llvm::zip(op.getResults(), r.resultGrads))
    pieces.push_back(grad ? grad : r.b.splat(tensorType(result), 0.0));
  int64_t axis = normalized(op.getAxis(), shapeOf(op.getInput()).size());
  r.set(0, [&]() -> Value {
    if (pieces.size() == 1)
      return pieces.front();
    return r.b.create<ConcatOp>(op.getInput().getType(), ValueRange(pieces),
                                static_cast<uint64_t>(axis));
  });
  return success();
}

/// `value` padded with zeros by `pads` (begins, then ends; negative crops).
static Value zeroPad(GradientBuilder &b, Value value, ArrayRef<int64_t> pads) {
  if (llvm::all_of(pads, [](int64_t pad) { return pad == 0; }))
    return value;
  SmallVector<int64_t> shape(shapeOf(value));
  int64_t rank = shape.size();
  for (int64_t i = 0; i < rank; ++i)
    shape[i] += pads[i] + pads[rank + i];
  return b.create<PadOp>(RankedTensorType::get(shape, elementOf(value)), value,
                         pads, PadMode::Constant,
                         FloatAttr::get(elementOf(value), 0.0));
}

/// `value` padded with zeros (or cropped) along one axis only.
static Value zeroPadAxis(GradientBuilder &b, Value value, int64_t axis,
                         int64_t begin, int64_t end) {
  int64_t rank = shapeOf(value).size();
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[axis] = begin;
  pads[rank + axis] = end;
  return zeroPad(b, value, pads);
}

/// `value` sliced along one axis with ONNX bounds.
static Value sliceAxis(GradientBuilder &b, Value value, int64_t axis,
                       int64_t start, int64_t end, int64_t step) {
  SmallVector<int64_t> shape(shapeOf(value));
  shape[axis] = shp::sliceCount(shape[axis], start, end, step);
  return b.create<SliceOp>(RankedTensorType::get(shape, elementOf(value)),
                           value, ArrayRef<int64_t>{start},
                           ArrayRef<int64_t>{end}, ArrayRef<int64_t>{axis},
                           ArrayRef<int64_t>{step});
}

/// The adjoint scatters the gradient into zeros at the sliced positions
/// without a scatter op: negative-step axes are reversed so that positions
/// ascend, strided axes get step - 1 zeros after every element (pad of an
/// inserted unit axis), and one pad moves the result to the first position
/// taken (cropping what the last stride overshoots).
static LogicalResult sliceRule(SliceOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput();
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  r.set(0, [&]() -> Value {
    Value g = r.grad();
    // Nothing taken, nothing to scatter (and no first position).
    if (product(shapeOf(g)) == 0)
      return b.splat(tensorType(x), 0.0);
    SmallVector<int64_t> pads(2 * rank, 0), strides(rank, 1);
    SmallVector<int64_t> reverseStarts, reverseEnds, reverseAxes;
    for (auto [i, axisValue] : llvm::enumerate(op.getAxes())) {
      int64_t axis = normalized(axisValue, rank), step = op.getSteps()[i];
      int64_t start = 0;
      int64_t count = shp::sliceCount(in[axis], op.getStarts()[i],
                                      op.getEnds()[i], step, &start);
      int64_t first = step > 0 ? start : start + (count - 1) * step;
      strides[axis] = std::abs(step);
      pads[axis] = first;
      pads[rank + axis] = in[axis] - first - count * strides[axis];
      if (step < 0) {
        // From the last element to one before the first.
        reverseStarts.push_back(count - 1);
        reverseEnds.push_back(-count - 1);
        reverseAxes.push_back(axis);
      }
    }
    if (!reverseAxes.empty())
      g = b.create<SliceOp>(
          g.getType(), g, reverseStarts, reverseEnds, reverseAxes,
          SmallVector<int64_t>(reverseAxes.size(), int64_t{-1}));
    for (int64_t axis = 0; axis < rank; ++axis) {
      if (strides[axis] == 1)
        continue;
      // [outer, count, 1, inner] padded to [outer, count, stride, inner]
      // keeps the rank small for the kernels.
      ArrayRef<int64_t> shape = shapeOf(g);
      int64_t count = shape[axis];
      SmallVector<int64_t> split{product(shape.take_front(axis)), count, 1,
                                 product(shape.drop_front(axis + 1))};
      Value spread = zeroPad(b, b.reshape(g, split),
                             {0, 0, 0, 0, 0, 0, strides[axis] - 1, 0});
      SmallVector<int64_t> merged(shape);
      merged[axis] = count * strides[axis];
      g = b.reshape(spread, merged);
    }
    return zeroPad(b, g, pads);
  });
  return success();
}

/// The index of `x` that position `i` of an axis of extent `n` padded by
/// `begin` copies, as the runtime's pad kernels compute it (reflect repeats
/// with period 2 (n - 1), so pads may exceed the extent).
static int64_t padSource(int64_t i, int64_t n, int64_t begin, PadMode mode) {
  int64_t j = i - begin;
  if (j >= 0 && j < n)
    return j;
  if (mode == PadMode::Edge)
    return j < 0 ? 0 : n - 1;
  if (n == 1)
    return 0;
  int64_t period = 2 * (n - 1);
  j %= period;
  if (j < 0)
    j += period;
  return j >= n ? period - j : j;
}

/// Folds the gradient `g` of one axis padded by (`begin`, `end` >= 0) in
/// reflect or edge mode back onto the `n` source elements: the middle is
/// the identity, and each padded side is cut into runs whose sources move
/// by +1 (a slice), -1 (a reversed slice) or 0 (edge: a sum), each padded
/// with zeros to its sources and added.
static Value foldPaddedAxis(GradientBuilder &b, Value g, int64_t axis,
                            int64_t n, int64_t begin, int64_t end,
                            PadMode mode) {
  int64_t m = begin + n + end;
  auto source = [&](int64_t i) { return padSource(i, n, begin, mode); };
  Value dx = sliceAxis(b, g, axis, begin, begin + n, 1);
  auto addRuns = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to;) {
      int64_t delta = i + 1 < to ? source(i + 1) - source(i) : 1;
      assert(delta >= -1 && delta <= 1 && "pad sources move by one at most");
      int64_t last = i;
      while (last + 1 < to && source(last + 1) - source(last) == delta)
        ++last;
      Value piece;
      int64_t low = std::min(source(i), source(last)), extent = 1;
      if (delta == 0) {
        piece = b.reduce(ReduceKind::Sum, sliceAxis(b, g, axis, i, last + 1, 1),
                         {axis}, true);
      } else {
        // Reversed so that the sources ascend; `i - 1 - m` normalizes to
        // one before `i` even when `i` is 0.
        piece = delta > 0 ? sliceAxis(b, g, axis, i, last + 1, 1)
                          : sliceAxis(b, g, axis, last, i - 1 - m, -1);
        extent = last - i + 1;
      }
      dx = b.add(dx, zeroPadAxis(b, piece, axis, low, n - low - extent));
      i = last + 1;
    }
  };
  addRuns(0, begin);
  addRuns(begin + n, m);
  return dx;
}

static LogicalResult padRule(PadOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput();
  ArrayRef<int64_t> in = shapeOf(x), pads = op.getPads();
  int64_t rank = in.size();
  if (op.getMode() == PadMode::Constant) {
    // Padding with negated pads crops what was added and restores (as
    // zeros) what a negative pad cropped.
    SmallVector<int64_t> negated =
        llvm::map_to_vector(pads, [](int64_t pad) -> int64_t { return -pad; });
    r.set(0, [&] { return zeroPad(b, r.grad(), negated); });
    return success();
  }
  r.set(0, [&]() -> Value {
    if (product(in) == 0 || product(shapeOf(r.grad())) == 0)
      return b.splat(tensorType(x), 0.0);
    // A negative pad crops after the copy: its positions get no gradient,
    // which leaves only the non-negative pads to fold.
    SmallVector<int64_t> restore = llvm::map_to_vector(
        pads, [](int64_t pad) { return std::max<int64_t>(-pad, 0); });
    Value g = zeroPad(b, r.grad(), restore);
    for (int64_t axis = 0; axis < rank; ++axis) {
      int64_t begin = std::max<int64_t>(pads[axis], 0);
      int64_t end = std::max<int64_t>(pads[rank + axis], 0);
      if (begin != 0 || end != 0)
        g = foldPaddedAxis(b, g, axis, in[axis], begin, end, op.getMode());
    }
    return g;
  });
  return success();
}

static LogicalResult transposeRule(TransposeOp op, Rule &r) {
  int64_t rank = shapeOf(op.getInput()).size();
  SmallVector<int64_t> perm(op.getPerm());
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<int64_t> inverse(rank);
  for (auto [i, axis] : llvm::enumerate(perm))
    inverse[axis] = i;
  r.set(0, [&] { return r.b.transpose(r.grad(), inverse); });
  return success();
}

static LogicalResult gatherRule(GatherOp op, Rule &r) {
  // The adjoint of a gather is an add-scatter of the gradient into zeros,
  // which also sums the slices of duplicate indices.
  GradientBuilder &b = r.b;
  r.set(0, [&] {
    auto dataType =
        RankedTensorType::get(shapeOf(op.getData()), elementOf(r.grad()));
    return b
        .create<ScatterOp>(dataType, b.splat(dataType, 0.0), op.getIndices(),
                           r.grad(), op.getAxis(), ScatterReduction::Add)
        .getResult();
  });
  return success();
}

static LogicalResult scatterRule(ScatterOp op, Rule &r) {
  ScatterReduction reduction = op.getReduction();
  if (reduction != ScatterReduction::None && reduction != ScatterReduction::Add)
    return unsupported(op, "with reduction '" +
                               stringifyScatterReduction(reduction) +
                               "' (only none and add are differentiable "
                               "here)");
  GradientBuilder &b = r.b;
  Value g = r.grad();
  // Replaced elements of data get no gradient; added-to ones all of it.
  r.set(0, [&]() -> Value {
    if (reduction == ScatterReduction::Add)
      return g;
    Value zeros = b.splat(tensorType(op.getUpdates()), 0.0);
    return b
        .create<ScatterOp>(g.getType(), g, op.getIndices(), zeros, op.getAxis(),
                           ScatterReduction::None)
        .getResult();
  });
  // Each update slice's gradient is that of the slice it landed on.
  r.set(2, [&] {
    return b
        .create<GatherOp>(tensorType(op.getUpdates()), g, op.getIndices(),
                          op.getAxis())
        .getResult();
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, softmax and normalization.
//===----------------------------------------------------------------------===//

/// Normalized, sorted axes of a reduction over `rank` axes (all when empty).
static SmallVector<int64_t> reducedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      result.push_back(i);
  for (int64_t axis : axes)
    result.push_back(normalized(axis, rank));
  llvm::sort(result);
  return result;
}

/// The adjoint of a max or min over `axes` whose result and gradient keep
/// those axes as size 1: the elements equal to the result get the gradient,
/// ties sharing it equally.
static Value extremumGradient(Rule &r, Value x, Value keptResult,
                              Value keptGrad, ArrayRef<int64_t> axes) {
  GradientBuilder &b = r.b;
  Value zero = r.zero(x);
  Value hit = b.compare<EqualOp>(x, keptResult);
  Value ties =
      b.reduce(ReduceKind::Sum, b.where(hit, r.one(x), zero), axes, true);
  return b.where(hit, b.div(keptGrad, ties), zero);
}

/// The adjoint of a product over `axes` (gradient kept as size 1 there):
/// each element gets the product of the others in its group. Dividing the
/// result by the element would give 0 / 0 at a zero, so the product of the
/// group's nonzero elements (zeros counted as ones) is divided instead, and
/// an element gets nothing when another element of its group is zero. With
/// one zero only the zero gets the product of the others; with two or more
/// nobody gets anything, as in PyTorch.
static Value productGradient(Rule &r, Value x, Value keptGrad,
                             ArrayRef<int64_t> axes) {
  GradientBuilder &b = r.b;
  Value zero = r.zero(x), one = r.one(x);
  Value isZero = b.compare<EqualOp>(x, zero);
  Value nonZero = b.where(isZero, one, x);
  Value zeroFlags = b.where(isZero, one, zero);
  Value zeros = b.reduce(ReduceKind::Sum, zeroFlags, axes, true);
  Value othersHaveZero = b.compare<GreaterOp>(b.sub(zeros, zeroFlags), zero);
  Value others =
      b.div(b.reduce(ReduceKind::Prod, nonZero, axes, true), nonZero);
  return b.where(othersHaveZero, zero, b.mul(keptGrad, others));
}

static LogicalResult reduceRule(ReduceOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput();
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> axes = reducedAxes(op.getAxes(), in.size());
  // The gradient and result with the reduced axes kept as 1, so that they
  // broadcast against the input.
  SmallVector<int64_t> kept(in);
  int64_t count = 1;
  for (int64_t axis : axes) {
    count *= in[axis];
    kept[axis] = 1;
  }
  Value g = b.reshape(r.grad(), kept);
  auto keptResult = [&] { return b.reshape(op.getResult(), kept); };
  std::optional<Value> dx;
  switch (op.getKind()) {
  case ReduceKind::Sum:
    dx = b.expand(g, in);
    break;
  case ReduceKind::Mean:
    dx = b.expand(b.mul(g, 1.0 / static_cast<double>(count)), in);
    break;
  case ReduceKind::SumSquare:
    dx = b.mul(b.mul(x, 2.0), g);
    break;
  case ReduceKind::L1:
    dx = b.mul(b.unary<SignOp>(x), g);
    break;
  case ReduceKind::L2:
    dx = b.mul(x, b.div(g, keptResult()));
    break;
  case ReduceKind::LogSum:
    dx = b.expand(b.div(g, b.unary<ExpOp>(keptResult())), in);
    break;
  case ReduceKind::LogSumExp:
    dx = b.mul(b.unary<ExpOp>(b.sub(x, keptResult())), g);
    break;
  case ReduceKind::Max:
  case ReduceKind::Min:
    dx = extremumGradient(r, x, keptResult(), g, axes);
    break;
  case ReduceKind::Prod:
    dx = productGradient(r, x, g, axes);
    break;
  }
  r.set(0, [&] { return *dx; });
  return success();
}

static LogicalResult softmaxRule(Operation *op, int64_t axisValue, Rule &r) {
  GradientBuilder &b = r.b;
  Value g = r.grad(), y = op->getResult(0);
  int64_t axis = normalized(axisValue, shapeOf(y).size());
  r.set(0, [&] {
    if (isa<SoftmaxOp>(op)) {
      // dx = y (g - sum(g y)).
      Value dot = b.reduce(ReduceKind::Sum, b.mul(g, y), {axis}, true);
      return b.mul(y, b.sub(g, dot));
    }
    // log_softmax: dx = g - softmax(x) sum(g).
    Value total = b.reduce(ReduceKind::Sum, g, {axis}, true);
    return b.sub(g, b.mul(b.unary<ExpOp>(y), total));
  });
  return success();
}

static LogicalResult layerNormRule(LayerNormOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput(), g = r.grad(), scale = op.getScale();
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> axes;
  for (int64_t i = normalized(op.getAxis(), rank); i < rank; ++i)
    axes.push_back(i);
  auto mean = [&](Value v) {
    return b.reduce(ReduceKind::Mean, v, axes, true);
  };
  // Recompute the normalized input rather than keep forward temporaries;
  // only the bias's adjoint does without it.
  Value rstd, xhat;
  if (r.needed[0] || r.needed[1]) {
    Value centered = b.sub(x, mean(x));
    Value variance = mean(b.mul(centered, centered));
    Value epsilon =
        b.scalar(elementOf(x), op.getEpsilonAttr().getValueAsDouble());
    rstd = b.unary<ReciprocalOp>(b.unary<SqrtOp>(b.add(variance, epsilon)));
    xhat = b.mul(centered, rstd);
  }
  r.set(0, [&] {
    Value dxhat = b.mul(g, scale);
    Value projection = b.mul(xhat, mean(b.mul(dxhat, xhat)));
    return b.mul(rstd, b.sub(b.sub(dxhat, mean(dxhat)), projection));
  });
  r.set(1, [&] { return b.sumToShape(b.mul(g, xhat), shapeOf(scale)); });
  if (Value bias = op.getBias())
    r.set(2, [&] { return b.sumToShape(g, shapeOf(bias)); });
  return success();
}

static LogicalResult globalAvgPoolRule(GlobalAvgPoolOp op, Rule &r) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  double count = static_cast<double>(product(in.drop_front(2)));
  r.set(0, [&] { return r.b.expand(r.b.mul(r.grad(), 1.0 / count), in); });
  return success();
}

static LogicalResult globalMaxPoolRule(GlobalMaxPoolOp op, Rule &r) {
  Value x = op.getInput();
  SmallVector<int64_t> spatial;
  for (int64_t axis = 2, rank = shapeOf(x).size(); axis < rank; ++axis)
    spatial.push_back(axis);
  // The result and its gradient already keep the spatial axes as 1.
  r.set(0, [&] {
    return extremumGradient(r, x, op.getResult(), r.grad(), spatial);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Recurrence.
//===----------------------------------------------------------------------===//

/// One hps.recurrence_grad (backpropagation through time in one kernel)
/// gives every operand's adjoint at once; lengths get none.
static LogicalResult recurrenceRule(RecurrenceOp op, Rule &r) {
  SmallVector<Type> cellTypes;
  if (Value c0 = op.getInitialC())
    cellTypes.push_back(c0.getType());
  if (Value peepholes = op.getPeepholes())
    cellTypes.push_back(peepholes.getType());
  Value gradCLast = op.getCLast() ? r.resultGrads[2] : Value();
  auto adjoint = r.b.create<RecurrenceGradOp>(
      op.getProjected().getType(), op.getRecurrence().getType(),
      op.getRecurrentBias().getType(), op.getInitialH().getType(), cellTypes,
      op.getProjected(), op.getRecurrence(), op.getRecurrentBias(),
      op.getInitialH(), op.getLengths(), op.getInitialC(), op.getPeepholes(),
      op.getY(), r.resultGrads[0], r.resultGrads[1], gradCLast,
      op.getCellAttr(), op.getActivationsAttr(), op.getClipAttr(),
      op.getReverseAttr(), op.getLinearBeforeResetAttr());
  r.set(0, [&] { return adjoint.getGradProjected(); });
  r.set(1, [&] { return adjoint.getGradRecurrence(); });
  r.set(2, [&] { return adjoint.getGradRecurrentBias(); });
  r.set(3, [&] { return adjoint.getGradInitialH(); });
  // The optional operands follow in order: lengths, initial_c, peepholes.
  unsigned next = op.getLengths() ? 5 : 4;
  if (op.getInitialC())
    r.set(next++, [&] { return adjoint.getGradInitialC(); });
  if (op.getPeepholes())
    r.set(next, [&] { return adjoint.getGradPeepholes(); });
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling.
//===----------------------------------------------------------------------===//

static LogicalResult convRule(ConvOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value g = r.grad(), x = op.getInput(), w = op.getFilter();
  int64_t group = op.getGroup();
  r.set(0, [&] {
    return b.create<ConvGradInputOp>(x.getType(), g, w, op.getStrides(),
                                     op.getPads(), op.getDilations(), group);
  });
  r.set(1, [&] {
    return b.create<ConvGradFilterOp>(w.getType(), x, g, op.getStrides(),
                                      op.getPads(), op.getDilations(), group);
  });
  if (op.getBias())
    r.set(2, [&] {
      // The bias is broadcast over the batch and every spatial position.
      SmallVector<int64_t> axes{0};
      for (int64_t i = 2, e = shapeOf(g).size(); i < e; ++i)
        axes.push_back(i);
      return b.reduce(ReduceKind::Sum, g, axes, false);
    });
  return success();
}

/// conv_grad_input as a layer (ONNX ConvTranspose): y = conv^T(x, w). Its
/// adjoints are the forward conv of dy by w, and the filter adjoint of the
/// forward conv whose input is dy and whose result gradient is x.
static LogicalResult convGradInputRule(ConvGradInputOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value g = r.grad(), x = op.getGrad(), w = op.getFilter();
  int64_t group = op.getGroup();
  r.set(0, [&] {
    return b.create<ConvOp>(x.getType(), g, w, Value(), op.getStrides(),
                            op.getPads(), op.getDilations(), group);
  });
  r.set(1, [&] {
    return b.create<ConvGradFilterOp>(w.getType(), g, x, op.getStrides(),
                                      op.getPads(), op.getDilations(), group);
  });
  return success();
}

/// Per axis of a pooling window, how many of each output position's taps
/// fall inside the input ([0, in)) and inside input plus explicit pads.
static void windowTaps(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                       int64_t dilation, int64_t padBegin, int64_t padEnd,
                       SmallVectorImpl<int64_t> &inside,
                       SmallVectorImpl<int64_t> &insidePadded) {
  for (int64_t o = 0; o < out; ++o) {
    int64_t real = 0, padded = 0;
    for (int64_t t = 0; t < kernel; ++t) {
      int64_t pos = o * stride - padBegin + t * dilation;
      real += pos >= 0 && pos < in;
      padded += pos >= -padBegin && pos < in + padEnd;
    }
    inside.push_back(real);
    insidePadded.push_back(padded);
  }
}

/// The pads of the convolution that has a pool's windows: the pool's, with
/// the end pad grown where ceil_mode adds a last window past it (that
/// window's taps past the input receive nothing).
static SmallVector<int64_t>
windowConvPads(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
               ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads) {
  int64_t spatial = in.size() - 2;
  SmallVector<int64_t> convPads(pads);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    int64_t floorOut =
        (in[2 + i] + pads[i] + pads[spatial + i] - extent) / strides[i] + 1;
    if (floorOut != out[2 + i])
      convPads[spatial + i] =
          (out[2 + i] - 1) * strides[i] + extent - in[2 + i] - pads[i];
  }
  return convPads;
}

/// Average pooling is a depthwise convolution with a filter of ones followed
/// by a per-position division, so its adjoint is conv_grad_input of the
/// gradient divided by each window's divisor (taps inside the input, plus
/// the explicit pads with count_include_pad). The divisors are known at
/// compile time and become a [1, 1, out...] constant.
static LogicalResult avgPoolRule(AvgPoolOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput(), g = r.grad();
  ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(g);
  int64_t spatial = in.size() - 2;
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    dilations = op.getDilations(), pads = op.getPads();
  SmallVector<int64_t> convPads =
      windowConvPads(in, out, kernel, strides, dilations, pads);
  SmallVector<SmallVector<int64_t>> divisors(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    SmallVector<int64_t> inside, insidePadded;
    windowTaps(in[2 + i], out[2 + i], kernel[i], strides[i], dilations[i],
               pads[i], pads[spatial + i], inside, insidePadded);
    divisors[i] = op.getCountIncludePad() ? insidePadded : inside;
  }
  SmallVector<int64_t> scaleShape{1, 1};
  scaleShape.append(out.begin() + 2, out.end());
  int64_t positions = product(ArrayRef(scaleShape));
  auto floatType = cast<FloatType>(elementOf(g));
  SmallVector<APFloat> scale;
  scale.reserve(positions);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t divisor = 1;
    for (int64_t rest = p, i = spatial - 1; i >= 0; --i) {
      divisor *= divisors[i][rest % out[2 + i]];
      rest /= out[2 + i];
    }
    // A window without taps passes no gradient to the input.
    APFloat value(divisor ? 1.0 / static_cast<double>(divisor) : 0.0);
    bool lost;
    value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
    scale.push_back(value);
  }
  r.set(0, [&] {
    Value scaleValue = b.constant(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get(scaleShape, floatType), scale)));
    SmallVector<int64_t> filterShape{in[1], 1};
    filterShape.append(kernel.begin(), kernel.end());
    Value ones = b.splat(RankedTensorType::get(filterShape, floatType), 1.0);
    return b.create<ConvGradInputOp>(x.getType(), b.mul(g, scaleValue), ones,
                                     strides, convPads, dilations, in[1]);
  });
  return success();
}

/// Max pooling routes each window's gradient to the taps equal to its max
/// (ties share it equally, as for reduce max). Built from layer ops: the
/// input padded with -inf is cut into one strided slice per tap, each
/// compared with the result; the masked gradient, stacked as C * taps
/// channels, goes back to the input through conv_grad_input with one-hot
/// depthwise filters (channel c * taps + t selects tap t).
static LogicalResult maxPoolRule(MaxPoolOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput(), g = r.grad(), y = op.getResult();
  ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(g);
  int64_t spatial = in.size() - 2, channels = in[1];
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    dilations = op.getDilations(), pads = op.getPads();
  int64_t taps = product(kernel);
  constexpr int64_t kMaxTaps = 64;
  if (taps > kMaxTaps)
    return unsupported(op, "with a " + Twine(taps) + "-tap window (at most " +
                               Twine(kMaxTaps) + " taps are differentiated)");
  SmallVector<int64_t> convPads =
      windowConvPads(in, out, kernel, strides, dilations, pads);
  auto floatType = cast<FloatType>(elementOf(x));
  r.set(0, [&] {
    // Padding never wins the max.
    SmallVector<int64_t> padAll(2 * in.size(), 0), padded(in);
    for (int64_t i = 0; i < spatial; ++i) {
      padAll[2 + i] = convPads[i];
      padAll[in.size() + 2 + i] = convPads[spatial + i];
      padded[2 + i] += convPads[i] + convPads[spatial + i];
    }
    Value source = b.create<PadOp>(
        RankedTensorType::get(padded, floatType), x, padAll, PadMode::Constant,
        FloatAttr::get(floatType, -std::numeric_limits<double>::infinity()));
    // [N, C, 1, out...]: one tap's window values, or the result, with the
    // tap axis for broadcasting.
    SmallVector<int64_t> tapShape{in[0], channels, 1};
    tapShape.append(out.begin() + 2, out.end());
    SmallVector<int64_t> axes, steps(strides);
    for (int64_t i = 0; i < spatial; ++i)
      axes.push_back(2 + i);
    SmallVector<Value> windows;
    for (int64_t t = 0; t < taps; ++t) {
      SmallVector<int64_t> starts(spatial), ends(spatial);
      for (int64_t rest = t, i = spatial - 1; i >= 0; --i) {
        starts[i] = (rest % kernel[i]) * dilations[i];
        ends[i] = starts[i] + (out[2 + i] - 1) * strides[i] + 1;
        rest /= kernel[i];
      }
      Value slice = b.create<SliceOp>(RankedTensorType::get(out, floatType),
                                      source, starts, ends, axes, steps);
      windows.push_back(b.reshape(slice, tapShape));
    }
    SmallVector<int64_t> stackedShape(tapShape);
    stackedShape[2] = taps;
    Value stacked =
        windows.size() == 1
            ? windows.front()
            : b.create<ConcatOp>(RankedTensorType::get(stackedShape, floatType),
                                 ValueRange(windows), uint64_t{2});
    Value hit = b.compare<EqualOp>(stacked, b.reshape(y, tapShape));
    Value zero = r.zero(x);
    Value ties =
        b.reduce(ReduceKind::Sum, b.where(hit, r.one(x), zero), {2}, true);
    Value routed = b.where(hit, b.div(b.reshape(g, tapShape), ties), zero);
    SmallVector<int64_t> channelShape{in[0], channels * taps};
    channelShape.append(out.begin() + 2, out.end());
    APFloat zeroValue = APFloat::getZero(floatType.getFloatSemantics());
    APFloat oneValue = APFloat::getOne(floatType.getFloatSemantics());
    SmallVector<APFloat> oneHot(channels * taps * taps, zeroValue);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t t = 0; t < taps; ++t)
        oneHot[(c * taps + t) * taps + t] = oneValue;
    SmallVector<int64_t> filterShape{channels * taps, 1};
    filterShape.append(kernel.begin(), kernel.end());
    Value filter = b.constant(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get(filterShape, floatType), oneHot)));
    return b.create<ConvGradInputOp>(x.getType(),
                                     b.reshape(routed, channelShape), filter,
                                     strides, convPads, dilations, channels);
  });
  return success();
}

/// Batch norm y = (x - mean) * scale * rstd + bias with rstd = 1 /
/// sqrt(var + eps). With running statistics (constant weights) only x,
/// scale and bias are active and dx is a per-channel scaling of the
/// gradient. Training with batch statistics feeds mean and var from ops on
/// x (autodiff's rewrite), so their adjoints carry the statistics' share
/// of dx back through those ops:
///   dmean = -sum(g) * scale * rstd,
///   dvar = -0.5 * sum(g * (x - mean)) * scale * rstd^3   (per channel).
static LogicalResult batchNormRule(BatchNormOp op, Rule &r) {
  GradientBuilder &b = r.b;
  Value x = op.getInput(), g = r.grad();
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t channels = in[1];
  // [1, C, 1, ...]: the per-channel operands broadcast against x.
  SmallVector<int64_t> perChannel(in.size(), 1);
  perChannel[1] = channels;
  auto channelwise = [&](Value value) { return b.reshape(value, perChannel); };
  // Only the bias's adjoint does without 1 / sqrt(var + eps).
  Value rstdC, rstd;
  if (r.needed[0] || r.needed[1] || r.needed[3] || r.needed[4]) {
    Value epsilon =
        b.scalar(elementOf(x), op.getEpsilonAttr().getValueAsDouble());
    rstdC = b.unary<ReciprocalOp>(
        b.unary<SqrtOp>(b.add(op.getVariance(), epsilon)));
    rstd = channelwise(rstdC);
  }
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2, e = in.size(); i < e; ++i)
    axes.push_back(i);
  auto perChannelSum = [&](Value value) {
    return b.reshape(b.reduce(ReduceKind::Sum, value, axes, false), {channels});
  };
  // x - mean and sum(g), each built once for the adjoints that share them.
  Value centeredValue, gSumValue;
  auto centered = [&] {
    if (!centeredValue)
      centeredValue = b.sub(x, channelwise(op.getMean()));
    return centeredValue;
  };
  auto gSum = [&] {
    if (!gSumValue)
      gSumValue = perChannelSum(g);
    return gSumValue;
  };
  r.set(0, [&] { return b.mul(g, b.mul(channelwise(op.getScale()), rstd)); });
  r.set(1, [&] { return perChannelSum(b.mul(g, b.mul(centered(), rstd))); });
  r.set(2, gSum);
  r.set(3, [&] { return b.neg(b.mul(gSum(), b.mul(op.getScale(), rstdC))); });
  r.set(4, [&] {
    Value rstd3 = b.mul(rstdC, b.mul(rstdC, rstdC));
    return b.mul(
        b.mul(perChannelSum(b.mul(g, centered())), b.mul(op.getScale(), rstd3)),
        -0.5);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Views, expand, softmax and piecewise-constant ops.
//===----------------------------------------------------------------------===//

static LogicalResult reshapeBackRule(Operation *op, Rule &r) {
  r.set(0, [&] { return r.b.reshape(r.grad(), shapeOf(op->getOperand(0))); });
  return success();
}

static LogicalResult expandRule(ExpandOp expand, Rule &r) {
  r.set(0,
        [&] { return r.b.sumToShape(r.grad(), shapeOf(expand.getInput())); });
  return success();
}

template <typename SoftmaxOp>
static LogicalResult axisSoftmaxRule(SoftmaxOp op, Rule &r) {
  return softmaxRule(op, op.getAxis(), r);
}

/// Piecewise constant: the derivative is zero almost everywhere, so no
/// adjoint flows to the operand.
static LogicalResult piecewiseConstantRule(Operation *, Rule &) {
  return success();
}

//===----------------------------------------------------------------------===//
// Entry points.
//===----------------------------------------------------------------------===//

namespace {
/// `OpTy`'s DifferentiableOpInterface: its rule, `rule`.
template <typename OpTy, auto rule>
struct GradientRule
    : public DifferentiableOpInterface::ExternalModel<GradientRule<OpTy, rule>,
                                                      OpTy> {
  LogicalResult buildAdjoint(Operation *op, Rule &r) const {
    return rule(cast<OpTy>(op), r);
  }
};

template <auto rule, typename... Ops> void attach(MLIRContext *context) {
  (Ops::template attachInterface<GradientRule<Ops, rule>>(*context), ...);
}
} // namespace

void autodiff::registerGradientRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, HPSDialect *) {
    attach<gemmRule, GemmOp>(context);
    attach<matmulRule, MatMulOp>(context);
    attach<binaryRule, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp,
           PReluOp>(context);
    attach<whereRule, WhereOp>(context);
    attach<unaryRule, NegOp, ReluOp, LeakyReluOp, EluOp, SeluOp, CeluOp,
           ThresholdedReluOp, SigmoidOp, HardSigmoidOp, HardSwishOp, TanhOp,
           ExpOp, LogOp, SqrtOp, AbsOp, ReciprocalOp, SoftplusOp, SoftsignOp,
           GeluOp, ErfOp, SinOp, CosOp, AsinOp, AcosOp, AtanOp, ClipOp, CastOp>(
        context);
    attach<concatRule, ConcatOp>(context);
    attach<splitRule, SplitOp>(context);
    attach<sliceRule, SliceOp>(context);
    attach<padRule, PadOp>(context);
    attach<reshapeBackRule, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(
        context);
    attach<transposeRule, TransposeOp>(context);
    attach<expandRule, ExpandOp>(context);
    attach<gatherRule, GatherOp>(context);
    attach<scatterRule, ScatterOp>(context);
    attach<reduceRule, ReduceOp>(context);
    attach<axisSoftmaxRule<SoftmaxOp>, SoftmaxOp>(context);
    attach<axisSoftmaxRule<LogSoftmaxOp>, LogSoftmaxOp>(context);
    attach<layerNormRule, LayerNormOp>(context);
    attach<globalAvgPoolRule, GlobalAvgPoolOp>(context);
    attach<globalMaxPoolRule, GlobalMaxPoolOp>(context);
    attach<piecewiseConstantRule, FloorOp, CeilOp, RoundOp, SignOp>(context);
    attach<recurrenceRule, RecurrenceOp>(context);
    attach<convRule, ConvOp>(context);
    attach<convGradInputRule, ConvGradInputOp>(context);
    attach<avgPoolRule, AvgPoolOp>(context);
    attach<maxPoolRule, MaxPoolOp>(context);
    attach<batchNormRule, BatchNormOp>(context);
  });
}

std::optional<LogicalResult>
autodiff::applyGradientRule(GradientBuilder &builder, Operation *op,
                            ArrayRef<Value> resultGrads, ArrayRef<bool> needed,
                            SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(op->getNumOperands(), Value());
  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable)
    return std::nullopt;
  Rule r{builder, resultGrads, needed, operandGrads};
  return differentiable.buildAdjoint(r);
}

Value autodiff::embeddingRowGradients(GradientBuilder &builder,
                                      EmbeddingLookupOp lookup,
                                      Value resultGrad) {
  EmbeddingPooling pooling = lookup.getPooling();
  if (pooling == EmbeddingPooling::None)
    return resultGrad;
  // Every id of a pooled bag gets the bag's gradient (scaled for mean).
  ArrayRef<int64_t> ids = shapeOf(lookup.getIds());
  int64_t dim = shapeOf(lookup.getTable())[1];
  Value grad = resultGrad;
  if (pooling == EmbeddingPooling::Mean)
    grad = builder.mul(grad, 1.0 / static_cast<double>(ids.back()));
  SmallVector<int64_t> unsqueezed(ids.drop_back());
  unsqueezed.append({1, dim});
  Value bag = builder.create<UnsqueezeOp>(
      RankedTensorType::get(unsqueezed, elementOf(grad)), grad,
      ArrayRef<int64_t>{static_cast<int64_t>(ids.size()) - 1});
  SmallVector<int64_t> rows(ids);
  rows.push_back(dim);
  return builder.expand(bag, rows);
}
