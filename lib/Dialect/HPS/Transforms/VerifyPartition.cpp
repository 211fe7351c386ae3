//===- VerifyPartition.cpp - placement and partition agree ----------------===//

#include "heterps/Dialect/HPS/Transforms/PassKeys.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "llvm/ADT/StringMap.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSVERIFYPARTITION
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

struct VerifyPartitionPass
    : public heterps::hps::impl::HPSVerifyPartitionBase<VerifyPartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    auto fail = [&](Operation *op) {
      ok = false;
      return op->emitError();
    };

    // The pass-key program's channels are the runtime's, not the
    // pipeline's, and it is no stage.
    func::FuncOp passKeys = getPassKeyProgram(module);
    llvm::StringMap<SendOp> senders;
    llvm::StringMap<RecvOp> receivers;
    unsigned stageCount = 0;
    module.walk([&](Operation *op) {
      if (passKeys && passKeys->isProperAncestor(op))
        return;
      if (auto send = dyn_cast<SendOp>(op)) {
        if (!senders.try_emplace(send.getChannel(), send).second)
          fail(op) << "channel '" << send.getChannel()
                   << "' has more than one sender";
      } else if (auto recv = dyn_cast<RecvOp>(op)) {
        if (!receivers.try_emplace(recv.getChannel(), recv).second)
          fail(op) << "channel '" << recv.getChannel()
                   << "' has more than one receiver";
      }
    });
    for (auto &entry : senders) {
      RecvOp recv = receivers.lookup(entry.getKey());
      if (!recv)
        fail(entry.getValue())
            << "channel '" << entry.getKey() << "' has no receiver";
      else if (recv.getType() != entry.getValue().getValue().getType())
        fail(recv) << "channel '" << entry.getKey()
                   << "' receives a different type than is sent";
    }
    for (auto &entry : receivers)
      if (!senders.count(entry.getKey()))
        fail(entry.getValue())
            << "channel '" << entry.getKey() << "' has no sender";

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func == passKeys)
        continue;
      auto device = func->getAttrOfType<DeviceAttr>("hps.device");
      if (!device) {
        // @main: the driver, which must hold no layer any more.
        func.walk([&](PlacedOpInterface op) {
          fail(op) << "layer outside any stage";
        });
        continue;
      }
      ++stageCount;
      // The dialect verified its value where it is present.
      if (!func->hasAttr("hps.replicas"))
        fail(func) << "stage has no hps.replicas";
      func.walk([&](PlacedOpInterface op) {
        if (op.getPlacement() != device)
          fail(op) << "placed on " << op.getPlacement()
                   << " but its stage runs on " << device;
      });
    }

    // A training module adds at most one backward stage per plan stage but
    // the last (whose backward joins it).
    bool training = module->hasAttr("hps.training");
    if (auto plan = module->getAttrOfType<DictionaryAttr>("hps.plan"))
      if (auto stages = plan.getAs<ArrayAttr>("stages"); stages && stageCount)
        if (training ? stageCount < stages.size() ||
                           stageCount > 2 * stages.size() - 1
                     : stages.size() != stageCount)
          fail(module) << "the plan has " << stages.size()
                       << " stages but the module has " << stageCount
                       << (training ? " (training)" : "");
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
