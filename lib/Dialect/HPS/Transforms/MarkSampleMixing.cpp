//===- MarkSampleMixing.cpp - Outputs that mix a batch's samples ----------===//
//
// A model run on N samples with a compiled batch B runs ceil(N / B)
// micro-batches, the last padded with zeros, and joins their batched
// outputs; an unbatched output comes from the first micro-batch. Where an
// output sample depends on other samples (a softmax over the batch, a
// reduction over it, a Shape of a batched value), that gives another
// answer than the model's unless N == B. This pass marks such outputs;
// the runtime refuses other sample counts for them.
//
//===----------------------------------------------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "NodeNames.h"
#include "PositionFollower.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSMARKSAMPLEMIXING
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

/// "'hps.softmax' (node 'Softmax_0')": the op as a user can find it.
std::string describeOp(Operation *op) {
  return describeWithNode(op->getName().getStringRef(), op->getLoc());
}

void markFunction(func::FuncOp func) {
  Block &body = func.getBody().front();
  PositionFollower follower(/*mergesAllowed=*/true);
  Value source;
  for (BlockArgument arg : body.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "hps.batched") &&
        isa<RankedTensorType>(arg.getType())) {
      source = source ? source : arg;
      follower.follow(arg, {0, source});
    }
  if (!source)
    return;

  // Values computed from mixed samples, and which op mixed them.
  llvm::DenseMap<Value, std::string> mixed;
  for (Operation &op : body) {
    std::string why;
    for (Value operand : op.getOperands())
      if (auto found = mixed.find(operand); found != mixed.end()) {
        why = found->second;
        break;
      }
    if (why.empty())
      (void)follower.propagate(&op, [&](Operation *reader,
                                        const FollowedAxis &samples,
                                        const Twine &how) {
        why = describeOp(reader) + " reads the samples along axis " +
              std::to_string(samples.axis) + " and " + how.str();
      });
    if (!why.empty())
      for (Value result : op.getResults())
        mixed[result] = why;
  }

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Builder builder(func.getContext());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    const bool batched = func.getResultAttr(i, "hps.batched") != nullptr;
    std::optional<FollowedAxis> samples = follower.axisOf(value);
    std::string why;
    if (auto found = mixed.find(value); found != mixed.end())
      why = found->second;
    else if (batched && samples && samples->axis != 0)
      why = "it holds the samples along axis " + std::to_string(samples->axis) +
            ", not 0";
    else if (batched && samples && !samples->whole())
      why = "it holds the samples along axis 0 merged with other positions";
    else if (!batched && samples)
      why = "it holds the samples, but its leading extent is fixed";
    if (!why.empty())
      func.setResultAttr(i, "hps.mixes_samples", builder.getStringAttr(why));
  }
}

struct MarkSampleMixingPass
    : public heterps::hps::impl::HPSMarkSampleMixingBase<MarkSampleMixingPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        markFunction(func);
  }
};

} // namespace
