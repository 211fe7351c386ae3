//===- RuntimeKinds.cpp - Which runtime kernel runs an hps op -------------===//

#include "RuntimeKinds.h"
#include "ElementwiseFusion.h"
#include "FusionRegions.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace heterps::hps;

namespace heterps::target {

std::optional<RuntimeUnary> runtimeUnary(Operation *op) {
  using Kind = hpsrt::UnaryKind;
  auto with = [](Kind kind, double alpha = 0, double beta = 0) {
    RuntimeUnary unary;
    unary.kind = kind;
    unary.alpha = alpha;
    unary.beta = beta;
    return std::optional<RuntimeUnary>(unary);
  };
  return llvm::TypeSwitch<Operation *, std::optional<RuntimeUnary>>(op)
      .Case([&](ReluOp) { return with(Kind::Relu); })
      .Case([&](SigmoidOp) { return with(Kind::Sigmoid); })
      .Case([&](TanhOp) { return with(Kind::Tanh); })
      .Case([&](GeluOp g) {
        return with(g.getTanhApproximation() ? Kind::GeluTanh : Kind::GeluErf);
      })
      .Case([&](ErfOp) { return with(Kind::Erf); })
      .Case([&](ExpOp) { return with(Kind::Exp); })
      .Case([&](LogOp) { return with(Kind::Log); })
      .Case([&](SqrtOp) { return with(Kind::Sqrt); })
      .Case([&](AbsOp) { return with(Kind::Abs); })
      .Case([&](NegOp) { return with(Kind::Neg); })
      .Case([&](ReciprocalOp) { return with(Kind::Reciprocal); })
      .Case([&](FloorOp) { return with(Kind::Floor); })
      .Case([&](CeilOp) { return with(Kind::Ceil); })
      .Case([&](RoundOp) { return with(Kind::Round); })
      .Case([&](SignOp) { return with(Kind::Sign); })
      .Case([&](SinOp) { return with(Kind::Sin); })
      .Case([&](CosOp) { return with(Kind::Cos); })
      .Case([&](AsinOp) { return with(Kind::Asin); })
      .Case([&](AcosOp) { return with(Kind::Acos); })
      .Case([&](AtanOp) { return with(Kind::Atan); })
      .Case([&](SoftplusOp) { return with(Kind::Softplus); })
      .Case([&](SoftsignOp) { return with(Kind::Softsign); })
      .Case([&](HardSwishOp) { return with(Kind::HardSwish); })
      .Case([&](NotOp) { return with(Kind::Not); })
      .Case([&](LeakyReluOp o) {
        return with(Kind::LeakyRelu, o.getAlpha().convertToDouble());
      })
      .Case([&](EluOp o) {
        return with(Kind::Elu, o.getAlpha().convertToDouble());
      })
      .Case([&](CeluOp o) {
        return with(Kind::Celu, o.getAlpha().convertToDouble());
      })
      .Case([&](SeluOp o) {
        return with(Kind::Selu, o.getAlpha().convertToDouble(),
                    o.getGamma().convertToDouble());
      })
      .Case([&](HardSigmoidOp o) {
        return with(Kind::HardSigmoid, o.getAlpha().convertToDouble(),
                    o.getBeta().convertToDouble());
      })
      .Case([&](ThresholdedReluOp o) {
        return with(Kind::ThresholdedRelu, o.getAlpha().convertToDouble());
      })
      .Case([&](ClipOp o) {
        std::optional<RuntimeUnary> clip = with(Kind::Clip);
        if (o.getMin())
          clip->lo = o.getMin()->convertToDouble();
        if (o.getMax())
          clip->hi = o.getMax()->convertToDouble();
        return clip;
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<hpsrt::BinaryKind> runtimeBinary(Operation *op) {
  return hpsrt::symbolizeBinaryKind(runtimeBinaryKind(op));
}

unsigned elementBytes(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

bool isAlias(Operation *op) {
  if (isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
    return true;
  if (auto cast = dyn_cast<CastOp>(op))
    return getElementTypeOrSelf(cast.getInput().getType()) ==
           getElementTypeOrSelf(cast.getType());
  return false;
}

/// An elementwise op whose operands each have its result's shape or hold a
/// single element: it reads and writes element i of the full-shape ones at
/// the same offset whatever their (common) layout.
bool isLayoutAgnostic(Operation *op) {
  bool elementwise = runtimeUnary(op) || runtimeBinary(op) || isa<WhereOp>(op);
  if (!elementwise || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && llvm::all_of(op->getOperandTypes(), [&](Type operand) {
           auto ranked = dyn_cast<RankedTensorType>(operand);
           return ranked && ranked.hasStaticShape() &&
                  (ranked.getShape() == type.getShape() ||
                   ranked.getNumElements() == 1);
         });
}

/// The operands of a layout-agnostic op that a layout applies to.
SmallVector<Value> layoutOperands(Operation *op) {
  auto shape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    if (cast<RankedTensorType>(operand.getType()).getShape() == shape)
      operands.push_back(operand);
  return operands;
}

/// The quantized form of hps.conv, 8-bit integers into i32 (the verifier
/// holds the filter, bias and result types), run by IntegerConv.
bool isInt8Conv(ConvOp conv) {
  return getElementTypeOrSelf(conv.getInput().getType()).isInteger(8);
}

hpsrt::Layout heldLayout(Value value) {
  auto result = dyn_cast<OpResult>(viewSource(value));
  if (!result)
    return hpsrt::Layout::Plain;
  auto held = result.getOwner()->getAttrOfType<ArrayAttr>(kHeldLayoutsAttrName);
  if (!held)
    return hpsrt::Layout::Plain;
  return cast<hpsrt::LayoutAttr>(held[result.getResultNumber()]).getValue();
}

} // namespace heterps::target
