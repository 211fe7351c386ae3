//===- FormFusedLoops.cpp - Elementwise chains into generated loops -------===//
//
// Chains of elementwise ops over one shape (a quantized model's
// requantization, a decomposed activation) would otherwise run as one kernel
// per op, each reading and writing the whole tensor. Each group runs as one
// loop the printer generates (ElementwiseFusion.h): one pass over memory,
// intermediates in registers.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseFusion.h"
#include "FusionRegions.h"
#include "RuntimeKinds.h"
#include "heterps/Target/Passes.h"

namespace heterps::target {
#define GEN_PASS_DEF_HPSFORMFUSEDLOOPS
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

struct FormFusedLoops
    : public target::impl::HPSFormFusedLoopsBase<FormFusedLoops> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isStageFunction(func) || func.isExternal())
      return;
    // Views run no kernel: they stay outside, sharing their operand's
    // storage.
    for (const ElementGroup &group :
         formElementGroups(func.getBody().front(), isAlias))
      outlineFusion<hpsrt::FusedLoopOp>(group.ops, group.outputs,
                                        group.anchor());
  }
};

} // namespace
