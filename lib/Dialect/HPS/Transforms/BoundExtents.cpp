//===- BoundExtents.cpp - Readers of data-dependent extents ---------------===//
//
// A padded value holds valid data in its first `count` positions along one
// axis and zeros after them. It stays correct through any op that computes
// each position along that axis from the same position of its operands, as
// long as the valid positions end up in the same place; this pass checks
// that, op by op in program order, and tells the runtime how to trim the
// outputs.
//
//===----------------------------------------------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "PositionFollower.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSBOUNDEXTENTS
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

class ExtentChecker {
public:
  /// Follows padding through `func`; false after reporting an error.
  bool run(func::FuncOp func);

private:
  /// The padding's axis and the count that ends the valid positions.
  std::optional<FollowedAxis> paddingOf(Value value) const {
    return follower.axisOf(value);
  }
  static void reject(Operation *op, const FollowedAxis &padding,
                     const Twine &why) {
    InFlightDiagnostic diag =
        op->emitError() << "'" << op->getName() << "' reads a value whose "
                        << "extent along axis " << padding.axis
                        << " is data-dependent (it comes from '"
                        << padding.source.getDefiningOp()->getName()
                        << "') and " << why;
    diag.attachNote(padding.source.getLoc()) << "the data-dependent op";
  }

  PositionFollower follower{/*mergesAllowed=*/false};
};

bool ExtentChecker::run(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (failed(follower.propagate(&op, reject)))
      return false;
    if (auto nonZero = dyn_cast<NonZeroOp>(op))
      follower.follow(nonZero.getIndices(), {1, nonZero.getCount()});
    else if (auto unique = dyn_cast<UniqueOp>(op)) {
      follower.follow(unique.getValues(),
                      {int64_t(unique.getAxis()), unique.getCount()});
      follower.follow(unique.getFirstIndices(), {0, unique.getCount()});
      follower.follow(unique.getCounts(), {0, unique.getCount()});
    } else if (auto nms = dyn_cast<NonMaxSuppressionOp>(op))
      follower.follow(nms.getSelected(), {0, nms.getCount()});
  }
  if (follower.empty())
    return true;

  // Returned padded values: each names its axis and a result holding its
  // count, appended after the model's own results.
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  unsigned modelResults = results.size();
  llvm::DenseMap<Value, unsigned> countResult;
  Builder builder(func.getContext());
  SmallVector<std::pair<unsigned, FollowedAxis>> trimmed;
  for (unsigned i = 0; i < modelResults; ++i) {
    std::optional<FollowedAxis> p = paddingOf(results[i]);
    if (!p)
      continue;
    auto [it, added] = countResult.try_emplace(p->source, results.size());
    if (added)
      results.push_back(p->source);
    trimmed.push_back({i, *p});
  }
  if (trimmed.empty())
    return true;
  // The result attributes are one array: grow it with the results.
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < results.size(); ++i)
    resultAttrs.push_back(i < modelResults ? func.getResultAttrDict(i)
                                           : builder.getDictionaryAttr({}));
  for (DictionaryAttr &attrs : resultAttrs)
    if (!attrs)
      attrs = builder.getDictionaryAttr({});
  ret->setOperands(results);
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
  func.setAllResultAttrs(resultAttrs);
  for (auto [i, p] : trimmed) {
    func.setResultAttr(i, "hps.extent_axis", builder.getI64IntegerAttr(p.axis));
    func.setResultAttr(i, "hps.extent_output",
                       builder.getI64IntegerAttr(countResult.lookup(p.source)));
    // Positions along a data-dependent axis are not samples.
    func.removeResultAttr(i, builder.getStringAttr("hps.batched"));
  }
  for (unsigned j = modelResults; j < results.size(); ++j) {
    func.setResultAttr(j, "hps.extent_count", builder.getUnitAttr());
    func.setResultAttr(j, "hps.name",
                       builder.getStringAttr("extent_" + Twine(j)));
  }
  return true;
}

struct BoundExtentsPass
    : public heterps::hps::impl::HPSBoundExtentsBase<BoundExtentsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !ExtentChecker().run(func))
        return signalPassFailure();
  }
};

} // namespace
