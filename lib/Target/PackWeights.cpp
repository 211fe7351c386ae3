//===- PackWeights.cpp - Where weights and constants go in weights.bin ----===//
//
// A bundle's weights.bin holds every stage's weights, constants and static
// shapes, each 64-byte aligned, a stage's share one contiguous range (a GPU
// stage uploads it in one copy), stages in pipeline order, then the
// pass-key program's share (BundlePrograms.h). Trained parameters are not
// there: the parameter server serves them. What follows the programs'
// shares (the training section's initial values, tables) is the bundle
// writer's.
//
//===----------------------------------------------------------------------===//

#include "BundlePrograms.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Target/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

namespace heterps::target {
#define GEN_PASS_DEF_HPSPACKWEIGHTS
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

/// The bytes `op`'s result takes in weights.bin, or none when it is not
/// stored there.
std::optional<uint64_t> weightBytes(Operation *op) {
  if (auto weight = dyn_cast<WeightOp>(op); weight && isTrainable(weight))
    return std::nullopt;
  if (auto shape = dyn_cast<ShapeOp>(op))
    return cast<RankedTensorType>(shape.getType()).getNumElements() *
           sizeof(int64_t);
  if (!isa<WeightOp, ConstantOp>(op))
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt; // the printer names what it cannot store
  return type.getNumElements() * elementBytes(type.getElementType());
}

struct PackWeights : public target::impl::HPSPackWeightsBase<PackWeights> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<BundlePrograms> programs = bundlePrograms(module);
    if (!programs)
      return; // not partitioned: the translation says so
    Builder builder(module.getContext());
    uint64_t size = 0;
    for (func::FuncOp stage : programs->inWeightsOrder()) {
      if (!stage || stage.isExternal())
        continue; // the translation reports it
      size = alignUp(size);
      uint64_t begin = size;
      // A frozen weight read twice under one name is stored once.
      llvm::StringMap<std::pair<uint64_t, WeightOp>> named;
      for (Operation &op : stage.getBody().front()) {
        std::optional<uint64_t> bytes = weightBytes(&op);
        if (!bytes)
          continue;
        auto weight = dyn_cast<WeightOp>(op);
        uint64_t offset = alignUp(size);
        if (weight) {
          auto [found, added] =
              named.try_emplace(weight.getName(), offset, weight);
          offset = found->second.first;
          if (WeightOp first = found->second.second;
              !added && (first.getType() != weight.getType() ||
                         first.getValue() != weight.getValue())) {
            InFlightDiagnostic diag = weight.emitError()
                                      << "a second weight named '"
                                      << weight.getName() << "' holds ";
            if (first.getType() != weight.getType())
              diag << "a " << weight.getType() << ", the first a "
                   << first.getType();
            else
              diag << "other values than the first";
            diag << ": one name is one weight";
            diag.attachNote(first.getLoc()) << "the first";
            return signalPassFailure();
          }
          if (!added) {
            op.setAttr(kWeightsOffsetAttrName,
                       builder.getI64IntegerAttr(int64_t(offset)));
            continue;
          }
        }
        size = offset + *bytes;
        op.setAttr(kWeightsOffsetAttrName,
                   builder.getI64IntegerAttr(int64_t(offset)));
      }
      stage->setAttr(
          kWeightsRangeAttrName,
          builder.getDenseI64ArrayAttr({int64_t(begin), int64_t(size)}));
    }
  }
};

} // namespace
