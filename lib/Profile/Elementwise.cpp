//===- Elementwise.cpp - Activations and broadcasting binary ops ----------===//

#include "Kernel.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace heterps::hps;
using namespace heterps::profile::detail;
using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

void addEltwise(Operation *op, KernelBuilder &b, algorithm kind,
                float alpha = 0, float beta = 0) {
  auto md = b.plain(op->getOperand(0).getType());
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(prop_kind::forward_inference, kind, md, alpha,
                                  beta),
      b.getEngine());
  b.add(pd, dnnl::eltwise_forward(pd));
}

/// Unary ops; false when `op` is not one oneDNN's eltwise computes.
bool buildUnary(Operation *op, KernelBuilder &b) {
  auto f = [](APFloat value) { return value.convertToFloat(); };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](ReluOp) {
        return addEltwise(op, b, algorithm::eltwise_relu), true;
      })
      .Case([&](LeakyReluOp relu) {
        return addEltwise(op, b, algorithm::eltwise_relu, f(relu.getAlpha())),
               true;
      })
      .Case([&](SigmoidOp) {
        return addEltwise(op, b, algorithm::eltwise_logistic), true;
      })
      .Case([&](TanhOp) {
        return addEltwise(op, b, algorithm::eltwise_tanh), true;
      })
      .Case([&](GeluOp gelu) {
        return addEltwise(op, b,
                          gelu.getTanhApproximation()
                              ? algorithm::eltwise_gelu_tanh
                              : algorithm::eltwise_gelu_erf),
               true;
      })
      .Case([&](ExpOp) {
        return addEltwise(op, b, algorithm::eltwise_exp), true;
      })
      .Case([&](LogOp) {
        return addEltwise(op, b, algorithm::eltwise_log), true;
      })
      .Case([&](SqrtOp) {
        return addEltwise(op, b, algorithm::eltwise_sqrt), true;
      })
      .Case([&](AbsOp) {
        return addEltwise(op, b, algorithm::eltwise_abs), true;
      })
      .Case([&](NegOp) {
        return addEltwise(op, b, algorithm::eltwise_linear, -1.f, 0.f), true;
      })
      .Case([&](ReciprocalOp) {
        return addEltwise(op, b, algorithm::eltwise_pow, 1.f, -1.f), true;
      })
      .Case([&](RoundOp) {
        return addEltwise(op, b, algorithm::eltwise_round), true;
      })
      .Case<FloorOp, CeilOp>([&](Operation *) {
        // One rounding instruction per element, like round.
        addEltwise(op, b, algorithm::eltwise_round);
        b.note("timed as round");
        return true;
      })
      .Case([&](SoftplusOp) {
        return addEltwise(op, b, algorithm::eltwise_soft_relu), true;
      })
      .Case([&](HardSwishOp) {
        return addEltwise(op, b, algorithm::eltwise_hardswish), true;
      })
      .Case([&](EluOp elu) {
        return addEltwise(op, b, algorithm::eltwise_elu, f(elu.getAlpha())),
               true;
      })
      .Case([&](SeluOp selu) {
        // elu, then the scale: oneDNN 2.6 runs an eltwise with an eltwise
        // post-op in its slow reference kernel, two jitted passes are closer
        // to a fused kernel.
        addEltwise(op, b, algorithm::eltwise_elu, f(selu.getAlpha()));
        addEltwise(op, b, algorithm::eltwise_linear, f(selu.getGamma()));
        return true;
      })
      .Case([&](ClipOp clip) {
        float lo = clip.getMin() ? f(*clip.getMin())
                                 : std::numeric_limits<float>::lowest();
        float hi = clip.getMax() ? f(*clip.getMax())
                                 : std::numeric_limits<float>::max();
        return addEltwise(op, b, algorithm::eltwise_clip_v2, lo, hi), true;
      })
      .Default([](Operation *) { return false; });
}

std::optional<algorithm> binaryKind(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<algorithm>>(op)
      .Case([](AddOp) { return algorithm::binary_add; })
      .Case([](SubOp) { return algorithm::binary_sub; })
      .Case([](MulOp) { return algorithm::binary_mul; })
      .Case([](DivOp) { return algorithm::binary_div; })
      .Case([](MaxOp) { return algorithm::binary_max; })
      .Case([](MinOp) { return algorithm::binary_min; })
      .Case([](EqualOp) { return algorithm::binary_eq; })
      .Case([](LessOp) { return algorithm::binary_lt; })
      .Case([](LessEqualOp) { return algorithm::binary_le; })
      .Case([](GreaterOp) { return algorithm::binary_gt; })
      .Case([](GreaterEqualOp) { return algorithm::binary_ge; })
      .Default([](Operation *) { return std::nullopt; });
}

void buildBinary(Operation *op, algorithm kind, KernelBuilder &b) {
  Type lhsType = op->getOperand(0).getType(),
       rhsType = op->getOperand(1).getType();
  Type dstType = op->getResult(0).getType();
  Dims dst = b.dims(dstType);
  Dims lhs = padRank(b.dims(lhsType), dst.size());
  Dims rhs = padRank(b.dims(rhsType), dst.size());
  // oneDNN broadcasts only its second source; the operands' order does not
  // change the cost.
  if (lhs != dst && rhs == dst) {
    std::swap(lhs, rhs);
    std::swap(lhsType, rhsType);
  } else if (lhs != dst) {
    lhs = dst;
    b.note("both operands broadcast; timed with the first expanded");
  }
  dnnl::binary::primitive_desc pd(
      dnnl::binary::desc(kind, KernelBuilder::plain(lhs, b.dataType(lhsType)),
                         KernelBuilder::plain(rhs, b.dataType(rhsType)),
                         KernelBuilder::plain(dst, b.dataType(dstType))),
      b.getEngine());
  b.add(pd, dnnl::binary(pd));
}

void buildPRelu(PReluOp prelu, KernelBuilder &b) {
  Type srcType = prelu.getLhs().getType();
  Dims src = b.dims(srcType);
  Dims slope = padRank(b.dims(prelu.getRhs().getType()), src.size());
  dnnl::prelu_forward::primitive_desc pd(
      dnnl::prelu_forward::desc(
          prop_kind::forward_inference, b.plain(srcType),
          KernelBuilder::plain(slope, b.dataType(prelu.getRhs().getType()))),
      b.getEngine());
  b.add(pd, dnnl::prelu_forward(pd));
}

} // namespace

bool heterps::profile::detail::buildElementwise(Operation *op,
                                                KernelBuilder &b) {
  if (buildUnary(op, b))
    return true;
  if (std::optional<algorithm> kind = binaryKind(op)) {
    buildBinary(op, *kind, b);
    return true;
  }
  if (auto prelu = dyn_cast<PReluOp>(op)) {
    buildPRelu(prelu, b);
    return true;
  }
  return false;
}
