//===- PlanBuffers.cpp - Static buffer plan of a stage --------------------===//
//
// Every tensor a stage computes lives in one arena the stage allocates once:
// first fit in op order, a tensor's bytes free again after the last read of
// it or of a view of it. Views share their operand's storage; weights,
// constants and static shapes live in weights.bin. The arena's size is the
// stage's peak memory.
//
//===----------------------------------------------------------------------===//

#include "FusionRegions.h"
#include "KernelCalls.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Target/Passes.h"

#include "mlir/IR/Builders.h"

#include <map>

namespace heterps::target {
#define GEN_PASS_DEF_HPSPLANBUFFERS
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

/// The bytes of `value` in the arena, or none when it is not a static
/// tensor of an element type the runtime has (the printer reports those).
std::optional<uint64_t> arenaBytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      dtypeName(type.getElementType()).empty())
    return std::nullopt;
  return type.getNumElements() * elementBytes(type.getElementType());
}

/// Ops whose results live in weights.bin, or nowhere.
bool isStoredElsewhere(Operation *op) {
  return isAlias(op) ||
         isa<WeightOp, ConstantOp, ShapeOp, NoneOp, hpsrt::ServerTableOp>(op);
}

struct PlanBuffers : public target::impl::HPSPlanBuffersBase<PlanBuffers> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isStageFunction(func) || func.isExternal())
      return;
    Block &block = func.getBody().front();
    // Where each value is last read: a fusion's body reads at the fusion.
    llvm::DenseMap<Operation *, unsigned> position;
    llvm::DenseMap<Value, unsigned> lastUse;
    for (auto [index, op] : llvm::enumerate(block)) {
      position[&op] = index;
      op.walk([&](Operation *reader) {
        for (Value operand : reader->getOperands())
          if (operand.getParentBlock() == &block) {
            Value root = viewSource(operand);
            lastUse[root] = std::max<unsigned>(lastUse.lookup(root), index);
          }
      });
    }

    std::map<uint64_t, uint64_t> live;       // offset -> bytes
    std::multimap<unsigned, uint64_t> dying; // last use -> offset
    uint64_t arenaBytes = 0;
    auto allocate = [&](uint64_t bytes) {
      bytes = alignUp(std::max<uint64_t>(bytes, 1));
      uint64_t offset = 0;
      for (auto [start, size] : live) {
        if (start >= offset + bytes)
          break;
        offset = std::max(offset, alignUp(start + size));
      }
      live[offset] = bytes;
      arenaBytes = std::max(arenaBytes, offset + bytes);
      return offset;
    };
    Builder builder(func.getContext());
    for (Operation &op : block) {
      unsigned here = position[&op];
      if (!isStoredElsewhere(&op) && op.getNumResults()) {
        SmallVector<int64_t> offsets;
        for (Value result : op.getResults()) {
          std::optional<uint64_t> bytes = arenaBytesOf(result);
          if (!bytes) {
            offsets.push_back(kNotInArena);
            continue;
          }
          uint64_t offset = allocate(*bytes);
          offsets.push_back(offset);
          // A result nobody reads dies right after its op.
          dying.insert(
              {lastUse.count(result) ? lastUse[result] : here, offset});
        }
        op.setAttr(kArenaOffsetsAttrName,
                   builder.getDenseI64ArrayAttr(offsets));
      }
      for (auto it = dying.begin(); it != dying.end() && it->first <= here;) {
        live.erase(it->second);
        it = dying.erase(it);
      }
    }
    func->setAttr(kArenaBytesAttrName,
                  builder.getI64IntegerAttr(int64_t(arenaBytes)));
  }
};

} // namespace
