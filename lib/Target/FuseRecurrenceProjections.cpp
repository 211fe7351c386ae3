//===- FuseRecurrenceProjections.cpp - Input projections into recurrences -===//
//
// A recurrence reads its input projected, X W^T + Wb over all T steps: a
// T x B x G tensor written by a gemm and read back. On a CPU the Recurrent
// kernel projects a few steps at a time itself, from X, W and Wb, so the
// projection never goes to memory.
//
//===----------------------------------------------------------------------===//

#include "FusionRegions.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Target/Passes.h"

namespace heterps::target {
#define GEN_PASS_DEF_HPSFUSERECURRENCEPROJECTIONS
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

/// The gemm `rec` may project itself and the views between, in block order,
/// or none.
std::optional<SmallVector<Operation *>> projection(RecurrenceOp rec) {
  Value projected = rec.getProjected();
  while (projected.getDefiningOp() && isAlias(projected.getDefiningOp()))
    projected = projected.getDefiningOp()->getOperand(0);
  auto gemm = projected.getDefiningOp<GemmOp>();
  if (!gemm || gemm.getTransA() || !gemm.getTransB() ||
      gemm.getAlpha().convertToFloat() != 1.0f ||
      isBackward(gemm) != isBackward(rec))
    return std::nullopt;
  auto a = cast<RankedTensorType>(gemm.getA().getType());
  auto w = cast<RankedTensorType>(gemm.getB().getType());
  auto projectedType = cast<RankedTensorType>(rec.getProjected().getType());
  int64_t rows = projectedType.getDimSize(0) * projectedType.getDimSize(1);
  int64_t gates = projectedType.getDimSize(2);
  if (!a.getElementType().isF32() || a.getRank() != 2 ||
      a.getDimSize(0) != rows || w.getDimSize(0) != gates)
    return std::nullopt;
  if (Value c = gemm.getC()) {
    auto bias = cast<RankedTensorType>(c.getType());
    if (bias.getRank() != 1 || bias.getDimSize(0) != gates ||
        gemm.getBeta().convertToFloat() != 1.0f)
      return std::nullopt;
  }
  // Read by the recurrence alone, through views (which move with it).
  SmallVector<Operation *> ops = {gemm};
  SmallVector<Value> values = {gemm.getResult()};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isAlias(user)) {
        ops.push_back(user);
        values.push_back(user->getResult(0));
      } else if (user != rec.getOperation() || use.getOperandNumber() != 0) {
        return std::nullopt;
      }
    }
  }
  llvm::sort(ops,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  ops.push_back(rec);
  return ops;
}

struct FuseRecurrenceProjections
    : public target::impl::HPSFuseRecurrenceProjectionsBase<
          FuseRecurrenceProjections> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto device = func->getAttrOfType<DeviceAttr>("hps.device");
    if (!device || device.getKind() == DeviceKind::GPU || func.isExternal())
      return;
    SmallVector<RecurrenceOp> recurrences(
        func.getBody().front().getOps<RecurrenceOp>());
    for (RecurrenceOp rec : recurrences)
      if (std::optional<SmallVector<Operation *>> ops = projection(rec))
        outlineFusion<hpsrt::ProjectedRecurrenceOp>(
            *ops, SmallVector<Value>(rec->getResults()), rec);
  }
};

} // namespace
