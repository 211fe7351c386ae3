//===- FusionRegions.cpp - Recording a fusion as a region op --------------===//

#include "FusionRegions.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace heterps::target {

bool isStageFunction(func::FuncOp func) { return func->hasAttr("hps.device"); }

bool isFusion(Operation *op) {
  return isa<hpsrt::FusedDenseOp, hpsrt::FusedLoopOp,
             hpsrt::ProjectedRecurrenceOp>(op);
}

SmallVector<Value> fusionInputs(Operation *fusion) {
  Block &body = fusion->getRegion(0).front();
  SmallVector<Value> inputs;
  for (Operation &op : body.without_terminator())
    for (Value operand : op.getOperands())
      if (operand.getParentBlock() != &body &&
          !llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
  return inputs;
}

Value viewSource(Value value) {
  while (Operation *view = value.getDefiningOp()) {
    if (!isAlias(view))
      break;
    value = view->getOperand(0);
  }
  return value;
}

Operation *outlineFusion(OperationName name, ArrayRef<Operation *> ops,
                         ArrayRef<Value> stored, Operation *at) {
  OpBuilder builder(at);
  OperationState state(at->getLoc(), name);
  for (Value value : stored)
    state.types.push_back(value.getType());
  state.addRegion();
  Operation *fusion = builder.create(state);
  if (hps::isBackward(at))
    fusion->setAttr(hps::kBackwardAttrName, builder.getUnitAttr());
  Block *body = new Block();
  fusion->getRegion(0).push_back(body);
  for (Operation *op : ops)
    op->moveBefore(body, body->end());
  for (auto [value, result] : llvm::zip(stored, fusion->getResults()))
    Value(value).replaceUsesWithIf(result, [&](OpOperand &use) {
      return !fusion->isProperAncestor(use.getOwner());
    });
  builder.setInsertionPointToEnd(body);
  builder.create<hpsrt::YieldOp>(at->getLoc(), stored);
  return fusion;
}

} // namespace heterps::target
