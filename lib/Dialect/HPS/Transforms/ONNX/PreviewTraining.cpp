//===- PreviewTraining.cpp - ai.onnx.preview.training optimizers ----------===//
//
// ONNX's Adagrad, Adam and Momentum (domain ai.onnx.preview.training,
// opset 1) update a list of tensors in one node: inputs R (learning rate),
// T (step count), then the tensors, their gradients and their states, each
// list n long; outputs the new tensors and states. Each update is a few
// elementwise ops, so each node becomes hps elementwise ops, in f32 as the
// kernels run them; where an update depends on T > 0 an hps.where picks.
// HeterPS's own training (--hps-autodiff) does not use these nodes: its
// optimizers run in the parameter server.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {
namespace {

constexpr StringLiteral kDomain = "ai.onnx.preview.training";

/// Builds the updates' ops; a binary op's result has its higher-rank
/// operand's type (R, T and the constants are scalars).
class Updates {
public:
  Updates(ONNXNode node, PatternRewriter &rewriter)
      : rewriter(rewriter), loc(node.getLoc()),
        device(node.getOp().getDeviceAttr()) {}

  template <typename OpTy> Value binary(Value a, Value b) {
    Type type = rank(a) >= rank(b) ? a.getType() : b.getType();
    return rewriter.create<OpTy>(loc, type, a, b, device);
  }
  Value add(Value a, Value b) { return binary<AddOp>(a, b); }
  Value sub(Value a, Value b) { return binary<SubOp>(a, b); }
  Value mul(Value a, Value b) { return binary<MulOp>(a, b); }
  Value div(Value a, Value b) { return binary<DivOp>(a, b); }
  Value sqrt(Value x) { return rewriter.create<SqrtOp>(loc, x.getType(), x); }
  Value scalar(double value) {
    return scalarConstant(rewriter, loc, rewriter.getF32Type(), value);
  }
  /// T as f32 (a step count: exact below 2^24).
  Value steps(Value t) {
    return rewriter.create<CastOp>(
        loc, RankedTensorType::get({}, rewriter.getF32Type()), t, device);
  }
  /// `whenPositive` where T > 0, else `otherwise` (scalars).
  Value ifStarted(Value t, Value whenPositive, Value otherwise) {
    Value zero = scalarConstant(rewriter, loc, getElementTypeOrSelf(t), 0);
    Value started = rewriter.create<GreaterOp>(
        loc, RankedTensorType::get({}, rewriter.getI1Type()), t, zero, device);
    return rewriter.create<WhereOp>(loc, whenPositive.getType(), started,
                                    whenPositive, otherwise, device);
  }
  /// norm * x + g: the gradient of the objective plus L2 regularisation.
  Value regularized(Value x, Value g, double norm) {
    return add(mul(scalar(norm), x), g);
  }

private:
  static int64_t rank(Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  }

  PatternRewriter &rewriter;
  Location loc;
  DeviceAttr device;
};

bool isF32Scalar(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 0 && type.getElementType().isF32();
}

/// Checks R, T and the `lists` lists of n tensors (static f32, the same
/// shape at each position); returns n, or 0 when they are not that.
int64_t tensorCount(ONNXNode node, int64_t lists) {
  int64_t inputs = node.numInputs();
  if (inputs < 2 + lists || (inputs - 2) % lists != 0 || !node.input(0) ||
      !node.input(1) || !isF32Scalar(node.input(0)))
    return 0;
  auto t = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!t || t.getRank() != 0 || !t.getElementType().isInteger(64))
    return 0;
  int64_t n = (inputs - 2) / lists;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t list = 0; list < lists; ++list) {
      Value value = node.input(2 + list * n + i);
      auto type = value ? dyn_cast<RankedTensorType>(value.getType())
                        : RankedTensorType();
      if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
          type != node.input(2 + i).getType())
        return 0;
    }
  return n;
}

LogicalResult legalizeAdagrad(ONNXNode node, PatternRewriter &rewriter) {
  int64_t n = tensorCount(node, 3);
  if (n == 0 || node.getOp().getNumResults() != unsigned(2 * n))
    return fail(node, rewriter, "needs R, T and n static f32 X, G, H");
  double decay = node.getFloat("decay_factor", 0);
  double epsilon = node.getFloat("epsilon", 1e-6f);
  double norm = node.getFloat("norm_coefficient", 0);
  Updates u(node, rewriter);
  Value r = node.input(0), t = node.input(1);
  // r / (1 + t * decay_factor)
  Value rate = u.div(r, u.add(u.scalar(1), u.mul(u.steps(t), u.scalar(decay))));
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = node.input(2 + i), g = node.input(2 + n + i),
          h = node.input(2 + 2 * n + i);
    Value gr = u.regularized(x, g, norm);
    Value hNew = u.add(h, u.mul(gr, gr));
    Value scale = u.add(u.sqrt(hNew), u.scalar(epsilon));
    xs.push_back(u.sub(x, u.div(u.mul(rate, gr), scale)));
    hs.push_back(hNew);
  }
  xs.append(hs);
  replaceNodeRefining(node.getOp(), xs, rewriter);
  return success();
}

LogicalResult legalizeAdam(ONNXNode node, PatternRewriter &rewriter) {
  int64_t n = tensorCount(node, 4);
  if (n == 0 || node.getOp().getNumResults() != unsigned(3 * n))
    return fail(node, rewriter, "needs R, T and n static f32 X, G, V, H");
  double alpha = node.getFloat("alpha", 0.9f);
  double beta = node.getFloat("beta", 0.999f);
  double epsilon = node.getFloat("epsilon", 1e-6f);
  double norm = node.getFloat("norm_coefficient", 0);
  double normPost = node.getFloat("norm_coefficient_post", 0);
  Updates u(node, rewriter);
  Value r = node.input(0), t = node.input(1);
  // Bias correction from the first step on: r sqrt(1 - beta^t) / (1 -
  // alpha^t). At t = 0 it divides by zero, which the select discards.
  Value tf = u.steps(t);
  Value corrected = u.div(
      u.mul(r, u.sqrt(u.sub(u.scalar(1), u.binary<PowOp>(u.scalar(beta), tf)))),
      u.sub(u.scalar(1), u.binary<PowOp>(u.scalar(alpha), tf)));
  Value rate = u.ifStarted(t, corrected, r);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = node.input(2 + i), g = node.input(2 + n + i),
          v = node.input(2 + 2 * n + i), h = node.input(2 + 3 * n + i);
    Value gr = u.regularized(x, g, norm);
    Value vNew =
        u.add(u.mul(u.scalar(alpha), v), u.mul(u.scalar(1 - alpha), gr));
    Value hNew = u.add(u.mul(u.scalar(beta), h),
                       u.mul(u.scalar(1 - beta), u.mul(gr, gr)));
    Value scale = u.add(u.sqrt(hNew), u.scalar(epsilon));
    Value xNew = u.sub(x, u.mul(rate, u.div(vNew, scale)));
    xs.push_back(u.mul(u.scalar(1 - normPost), xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  xs.append(vs);
  xs.append(hs);
  replaceNodeRefining(node.getOp(), xs, rewriter);
  return success();
}

LogicalResult legalizeMomentum(ONNXNode node, PatternRewriter &rewriter) {
  int64_t n = tensorCount(node, 3);
  if (n == 0 || node.getOp().getNumResults() != unsigned(2 * n))
    return fail(node, rewriter, "needs R, T and n static f32 X, G, V");
  std::string mode = node.getString("mode", "");
  if ((mode != "standard" && mode != "nesterov") || !node.hasAttr("alpha") ||
      !node.hasAttr("beta") || !node.hasAttr("norm_coefficient"))
    return fail(node, rewriter,
                "needs alpha, beta, norm_coefficient and a standard or "
                "nesterov mode");
  double alpha = node.getFloat("alpha", 0);
  double norm = node.getFloat("norm_coefficient", 0);
  Updates u(node, rewriter);
  Value r = node.input(0), t = node.input(1);
  // The first step takes the whole gradient.
  Value beta = u.ifStarted(t, u.scalar(node.getFloat("beta", 0)), u.scalar(1));
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = node.input(2 + i), g = node.input(2 + n + i),
          v = node.input(2 + 2 * n + i);
    Value gr = u.regularized(x, g, norm);
    Value vNew = u.add(u.mul(u.scalar(alpha), v), u.mul(beta, gr));
    Value step =
        mode == "standard" ? vNew : u.add(gr, u.mul(u.scalar(alpha), vNew));
    xs.push_back(u.sub(x, u.mul(r, step)));
    vs.push_back(vNew);
  }
  xs.append(vs);
  replaceNodeRefining(node.getOp(), xs, rewriter);
  return success();
}

} // namespace

void populatePreviewTrainingPatterns(RewritePatternSet &patterns) {
  addDomainONNXPattern(patterns, kDomain, "Adagrad", 1, 1,
                       {"decay_factor", "epsilon", "norm_coefficient"},
                       legalizeAdagrad);
  addDomainONNXPattern(
      patterns, kDomain, "Adam", 1, 1,
      {"alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post"},
      legalizeAdam);
  addDomainONNXPattern(patterns, kDomain, "Momentum", 1, 1,
                       {"alpha", "beta", "mode", "norm_coefficient"},
                       legalizeMomentum);
}

} // namespace heterps::hps
