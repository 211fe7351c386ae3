//===- FuseDenseEpilogues.cpp - Residual adds and activations into dense ops =//
//
// The runtime's Gemm, MatMul and Conv kernels apply an activation (and Conv
// adds a residual) before they store: one pass over the result instead of
// two or three, and no intermediate in memory.
//
//===----------------------------------------------------------------------===//

#include "FusionRegions.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Target/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace heterps::target {
#define GEN_PASS_DEF_HPSFUSEDENSEEPILOGUES
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

bool sameDirection(Operation *a, Operation *b) {
  return isBackward(a) == isBackward(b);
}

/// The conv whose result `add` adds a residual to (its only reader, the
/// other operand of the same type computed before it), or null.
ConvOp residualConv(AddOp add, Value &residual) {
  if (!add.getType().getElementType().isF32() ||
      llvm::any_of(add->getOperandTypes(),
                   [&](Type type) { return type != add.getType(); }))
    return nullptr;
  for (unsigned i = 0; i < 2; ++i) {
    Value convResult = add->getOperand(i), other = add->getOperand(1 - i);
    auto conv = convResult.getDefiningOp<ConvOp>();
    Operation *otherProducer = other.getDefiningOp();
    if (!conv || !convResult.hasOneUse() || convResult == other ||
        (otherProducer && !otherProducer->isBeforeInBlock(conv)) ||
        !sameDirection(conv, add))
      continue;
    residual = other;
    return conv;
  }
  return nullptr;
}

struct FuseDenseEpilogues
    : public target::impl::HPSFuseDenseEpiloguesBase<FuseDenseEpilogues> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isStageFunction(func) || func.isExternal())
      return;
    Block &block = func.getBody().front();
    // Each dense op's epilogue, in block order: the ops it fuses.
    llvm::MapVector<Operation *, SmallVector<Operation *, 3>> epilogues;
    llvm::DenseMap<Operation *, Operation *> denseOf; // fused add -> conv
    for (Operation &op : block)
      if (auto add = dyn_cast<AddOp>(op)) {
        Value residual;
        if (ConvOp conv = residualConv(add, residual)) {
          epilogues[conv].push_back(add);
          denseOf[add] = conv;
        }
      }
    for (Operation &op : block) {
      std::optional<RuntimeUnary> unary = runtimeUnary(&op);
      if (!unary || isa<NotOp>(op) ||
          !getElementTypeOrSelf(op.getResult(0).getType()).isF32() ||
          !op.getOperand(0).hasOneUse())
        continue;
      Operation *producer = op.getOperand(0).getDefiningOp();
      if (!producer)
        continue;
      if (Operation *conv = denseOf.lookup(producer))
        producer = conv;
      if (!isa<GemmOp, MatMulOp, ConvOp>(producer) ||
          !sameDirection(producer, &op))
        continue;
      auto &fused = epilogues[producer];
      bool hasActivation =
          llvm::any_of(fused, [](Operation *f) { return !isa<AddOp>(f); });
      if (!hasActivation)
        fused.push_back(&op);
    }
    for (auto &[dense, fused] : epilogues) {
      SmallVector<Operation *> ops = {dense};
      ops.append(fused.begin(), fused.end());
      outlineFusion<hpsrt::FusedDenseOp>(ops, {ops.back()->getResult(0)},
                                         dense);
    }
  }
};

} // namespace
