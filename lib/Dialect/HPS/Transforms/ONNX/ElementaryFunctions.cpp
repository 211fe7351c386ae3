//===- ElementaryFunctions.cpp - Tan, hyperbolic functions, Mish, Swish ---===//
//
// Elementary functions without a kernel of their own, composed from exp,
// log, sqrt, sin and cos, which have kernels on every device and gradient
// rules, so the compositions train too. Float inputs only.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Builds elementwise ops on values of the node's (float) input type.
class Composer {
public:
  Composer(ONNXNode node, PatternRewriter &rewriter, RankedTensorType type)
      : rewriter(rewriter), loc(node.getLoc()),
        device(node.getOp().getDeviceAttr()), type(type) {}

  template <typename OpTy> Value unary(Value x) {
    return rewriter.create<OpTy>(loc, type, x, device);
  }
  template <typename OpTy> Value binary(Value x, Value y) {
    return rewriter.create<OpTy>(loc, type, x, y, device);
  }
  /// A rank-0 constant of the element type (broadcast by the binary ops).
  Value scalar(double value) {
    return scalarConstant(rewriter, loc, type.getElementType(), value);
  }

private:
  PatternRewriter &rewriter;
  Location loc;
  DeviceAttr device;
  RankedTensorType type;
};

/// Registers `opType` (since `minOpset`, with the attributes `known`) as
/// `compose(x)` on a ranked float input.
void addComposition(RewritePatternSet &patterns, StringRef opType,
                    int64_t minOpset,
                    std::function<Value(Composer &, Value, ONNXNode)> compose,
                    ArrayRef<StringRef> known = {}) {
  addONNXPattern(
      patterns, opType, minOpset, kMaxOpset, known,
      [compose = std::move(compose)](ONNXNode node, PatternRewriter &rewriter) {
        auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
        if (!type || !isa<FloatType>(type.getElementType()) ||
            !canReplaceWithType(node, type))
          return fail(node, rewriter, "needs a ranked float input");
        Composer composer(node, rewriter, type);
        return replaceNodeWithCompatible(
            node, compose(composer, node.input(0), node), rewriter);
      });
}

/// exp(x - ln 2) and exp(-x - ln 2): half of e^x and e^-x, without the
/// overflow of e^x where sinh and cosh themselves are still finite.
std::pair<Value, Value> halfExponentials(Composer &c, Value x) {
  Value ln2 = c.scalar(llvm::numbers::ln2);
  Value up = c.unary<ExpOp>(c.binary<SubOp>(x, ln2));
  Value down = c.unary<ExpOp>(c.binary<SubOp>(c.unary<NegOp>(x), ln2));
  return {up, down};
}

} // namespace

void populateElementaryFunctionPatterns(RewritePatternSet &patterns) {
  addComposition(patterns, "Tan", 7, [](Composer &c, Value x, ONNXNode) {
    // Named temporaries fix the order in which the ops are created.
    Value sin = c.unary<SinOp>(x);
    Value cos = c.unary<CosOp>(x);
    return c.binary<DivOp>(sin, cos);
  });
  addComposition(patterns, "Sinh", 9, [](Composer &c, Value x, ONNXNode) {
    auto [up, down] = halfExponentials(c, x);
    return c.binary<SubOp>(up, down);
  });
  addComposition(patterns, "Cosh", 9, [](Composer &c, Value x, ONNXNode) {
    auto [up, down] = halfExponentials(c, x);
    return c.binary<AddOp>(up, down);
  });
  // sign(x) * log(|x| + sqrt(x^2 + 1)): odd by construction, and free of
  // the cancellation log(x + sqrt(x^2 + 1)) suffers for large negative x.
  addComposition(patterns, "Asinh", 9, [](Composer &c, Value x, ONNXNode) {
    Value magnitude = c.unary<AbsOp>(x);
    Value root =
        c.unary<SqrtOp>(c.binary<AddOp>(c.binary<MulOp>(x, x), c.scalar(1.0)));
    Value log = c.unary<LogOp>(c.binary<AddOp>(magnitude, root));
    return c.binary<MulOp>(c.unary<SignOp>(x), log);
  });
  // log(x + sqrt(x - 1) * sqrt(x + 1)): NaN below 1, as acosh is.
  addComposition(patterns, "Acosh", 9, [](Composer &c, Value x, ONNXNode) {
    Value below = c.unary<SqrtOp>(c.binary<SubOp>(x, c.scalar(1.0)));
    Value above = c.unary<SqrtOp>(c.binary<AddOp>(x, c.scalar(1.0)));
    Value root = c.binary<MulOp>(below, above);
    return c.unary<LogOp>(c.binary<AddOp>(x, root));
  });
  // 0.5 * log((1 + x) / (1 - x)).
  addComposition(patterns, "Atanh", 9, [](Composer &c, Value x, ONNXNode) {
    Value one = c.scalar(1.0);
    Value numerator = c.binary<AddOp>(one, x);
    Value denominator = c.binary<SubOp>(one, x);
    Value ratio = c.binary<DivOp>(numerator, denominator);
    Value log = c.unary<LogOp>(ratio);
    return c.binary<MulOp>(log, c.scalar(0.5));
  });
  // Mish (18): x * tanh(softplus(x)).
  addComposition(patterns, "Mish", 18, [](Composer &c, Value x, ONNXNode) {
    Value softplus = c.unary<SoftplusOp>(x);
    return c.binary<MulOp>(x, c.unary<TanhOp>(softplus));
  });
  // Swish (24): x * sigmoid(alpha * x).
  addComposition(patterns, "Swish", 24,
                 [](Composer &c, Value x, ONNXNode node) {
                   float alpha = node.getFloat("alpha", 1.0f);
                   Value scaled =
                       alpha == 1.0f ? x : c.binary<MulOp>(x, c.scalar(alpha));
                   return c.binary<MulOp>(x, c.unary<SigmoidOp>(scaled));
                 },
                 {"alpha"});
}

} // namespace heterps::hps
