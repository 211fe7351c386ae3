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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSBOUNDEXTENTS
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

/// Where a value's padding is: the axis and the count that ends the valid
/// positions.
struct Padding {
  int64_t axis;
  Value count;
  bool operator==(const Padding &other) const {
    return axis == other.axis && count == other.count;
  }
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// `axis` of `value` counted from the front.
int64_t normalized(int64_t axis, Value value) {
  return axis < 0 ? axis + static_cast<int64_t>(shapeOf(value).size()) : axis;
}

/// The axis of `to` (a row-major reshape of `from`) holding exactly the
/// positions of `from`'s `axis`, if there is one.
std::optional<int64_t> reshapedAxis(ArrayRef<int64_t> from, int64_t axis,
                                    ArrayRef<int64_t> to) {
  int64_t before = ShapedType::getNumElements(from.take_front(axis));
  for (int64_t b = 0; b < static_cast<int64_t>(to.size()); ++b)
    if (to[b] == from[axis] &&
        ShapedType::getNumElements(to.take_front(b)) == before)
      return b;
  return std::nullopt;
}

class ExtentChecker {
public:
  /// Follows padding through `func`; false after reporting an error.
  bool run(func::FuncOp func);

private:
  std::optional<Padding> paddingOf(Value value) const {
    auto found = padded.find(value);
    if (found == padded.end())
      return std::nullopt;
    return found->second;
  }
  /// The padding of `op`'s results, or failure after reporting why `op`
  /// cannot read its padded operands.
  LogicalResult propagate(Operation *op);
  LogicalResult broadcastRule(Operation *op);
  LogicalResult reject(Operation *op, const Padding &padding,
                       const Twine &why) {
    InFlightDiagnostic diag =
        op->emitError() << "'" << op->getName() << "' reads a value whose "
                        << "extent along axis " << padding.axis
                        << " is data-dependent (it comes from '"
                        << padding.count.getDefiningOp()->getName() << "') and "
                        << why;
    diag.attachNote(padding.count.getLoc()) << "the data-dependent op";
    return failure();
  }
  void setAll(Operation *op, Padding padding) {
    for (Value result : op->getResults())
      padded[result] = padding;
  }

  llvm::DenseMap<Value, Padding> padded;
};

LogicalResult ExtentChecker::broadcastRule(Operation *op) {
  int64_t rank = shapeOf(op->getResult(0)).size();
  std::optional<Padding> result;
  for (Value operand : op->getOperands()) {
    int64_t offset = rank - static_cast<int64_t>(shapeOf(operand).size());
    if (std::optional<Padding> p = paddingOf(operand)) {
      Padding aligned{p->axis + offset, p->count};
      if (result && !(*result == aligned))
        return reject(op, *p, "combines it with another data-dependent extent");
      result = aligned;
    }
  }
  for (Value operand : op->getOperands()) {
    if (paddingOf(operand))
      continue;
    ArrayRef<int64_t> shape = shapeOf(operand);
    int64_t at = result->axis - (rank - static_cast<int64_t>(shape.size()));
    if (at >= 0 && shape[at] != 1)
      return reject(op, *result,
                    "combines it with a tensor of a fixed extent there");
  }
  setAll(op, *result);
  return success();
}

LogicalResult ExtentChecker::propagate(Operation *op) {
  SmallVector<Padding> inputs;
  for (Value operand : op->getOperands())
    if (std::optional<Padding> p = paddingOf(operand))
      inputs.push_back(*p);
  if (inputs.empty())
    return success();
  const Padding first = inputs.front();
  auto same = [&](Operation *reader) -> LogicalResult {
    for (const Padding &p : inputs)
      if (!(p == first))
        return reject(reader, p,
                      "combines it with another data-dependent extent");
    for (Value operand : reader->getOperands())
      if (!paddingOf(operand) && isa<RankedTensorType>(operand.getType()) &&
          shapeOf(operand).size() == shapeOf(reader->getResult(0)).size())
        return reject(reader, first,
                      "combines it with a tensor of a fixed extent there");
    setAll(reader, first);
    return success();
  };
  auto through = [&](Operation *reader, std::optional<int64_t> axis,
                     const Twine &why) -> LogicalResult {
    if (!axis)
      return reject(reader, first, why);
    setAll(reader, {*axis, first.count});
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<NonZeroOp, UniqueOp, NonMaxSuppressionOp>([&](Operation *reader) {
        return reject(reader, first, "its result would depend on the padding");
      })
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(
          [&](Operation *reader) {
            return through(reader,
                           reshapedAxis(shapeOf(reader->getOperand(0)),
                                        first.axis,
                                        shapeOf(reader->getResult(0))),
                           "merges or splits that axis");
          })
      .Case([&](TransposeOp transpose) {
        ArrayRef<int64_t> perm = transpose.getPerm();
        const int64_t *at = llvm::find(perm, first.axis);
        return through(transpose, at - perm.begin(), "");
      })
      .Case([&](GatherOp gather) {
        int64_t axis = normalized(gather.getAxis(), gather.getData());
        int64_t indexRank = shapeOf(gather.getIndices()).size();
        if (inputs.size() > 1)
          return reject(gather, first, "indexes it by padded indices");
        if (paddingOf(gather.getIndices()))
          return through(gather, axis + first.axis, "");
        if (first.axis == axis)
          return reject(gather, first, "gathers along that axis");
        return through(
            gather, first.axis < axis ? first.axis : first.axis + indexRank - 1,
            "");
      })
      .Case([&](EmbeddingLookupOp lookup) {
        if (paddingOf(lookup.getTable()))
          return reject(lookup, first, "looks up rows in it");
        bool pooled = lookup.getPooling() != EmbeddingPooling::None;
        int64_t last = shapeOf(lookup.getIds()).size() - 1;
        return through(lookup,
                       pooled && first.axis == last
                           ? std::nullopt
                           : std::optional<int64_t>(first.axis),
                       "pools over that axis");
      })
      .Case([&](SliceOp slice) {
        int64_t extent = shapeOf(slice.getInput())[first.axis];
        for (auto [i, axis] : llvm::enumerate(slice.getAxes())) {
          if (normalized(axis, slice.getInput()) != first.axis)
            continue;
          int64_t start = 0;
          int64_t kept = shapes::sliceCount(extent, slice.getStarts()[i],
                                            slice.getEnds()[i],
                                            slice.getSteps()[i], &start);
          if (slice.getSteps()[i] != 1 || start != 0 || kept != extent)
            return reject(slice, first, "slices that axis");
        }
        return through(slice, first.axis, "");
      })
      .Case([&](ReduceOp reduce) {
        // No axes: every axis.
        ArrayRef<int64_t> axes = reduce.getAxes();
        if (axes.empty())
          return reject(reduce, first, "reduces over that axis");
        int64_t before = 0;
        for (int64_t axis : axes) {
          int64_t a = normalized(axis, reduce.getInput());
          if (a == first.axis)
            return reject(reduce, first, "reduces over that axis");
          before += a < first.axis;
        }
        return through(reduce,
                       reduce.getKeepdims() ? first.axis : first.axis - before,
                       "");
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        if (normalized(softmax.getAxis(), softmax.getInput()) == first.axis)
          return reject(softmax, first, "normalizes over that axis");
        return same(softmax);
      })
      .Case([&](ConcatOp concat) {
        if (normalized(concat.getAxis(), concat.getResult()) == first.axis)
          return reject(concat, first, "concatenates along that axis");
        if (inputs.size() != concat.getInputs().size())
          return reject(concat, first,
                        "concatenates it with a tensor of a fixed extent");
        return same(concat);
      })
      .Case([&](SplitOp split) {
        if (normalized(split.getAxis(), split.getInput()) == first.axis)
          return reject(split, first, "splits that axis");
        return same(split);
      })
      .Case([&](ExpandOp expand) {
        int64_t offset = shapeOf(expand.getResult()).size() -
                         shapeOf(expand.getInput()).size();
        // A capacity of 1 broadcast wider would repeat one position.
        if (shapeOf(expand.getInput())[first.axis] !=
            shapeOf(expand.getResult())[first.axis + offset])
          return reject(expand, first, "broadcasts that axis");
        return through(expand, first.axis + offset, "");
      })
      .Case<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, PReluOp,
            AndOp, OrOp, XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
            GreaterEqualOp, WhereOp>(
          [&](Operation *binary) { return broadcastRule(binary); })
      .Case([&](func::ReturnOp) { return success(); })
      .Default([&](Operation *reader) {
        if (reader->hasTrait<OpTrait::SameOperandsAndResultShape>() &&
            reader->getNumResults() == 1 && reader->getNumRegions() == 0)
          return same(reader);
        return reject(reader, first,
                      "is not known to keep each position along it apart");
      });
}

bool ExtentChecker::run(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (failed(propagate(&op)))
      return false;
    if (auto nonZero = dyn_cast<NonZeroOp>(op))
      padded[nonZero.getIndices()] = {1, nonZero.getCount()};
    else if (auto unique = dyn_cast<UniqueOp>(op)) {
      padded[unique.getValues()] = {int64_t(unique.getAxis()),
                                    unique.getCount()};
      padded[unique.getFirstIndices()] = {0, unique.getCount()};
      padded[unique.getCounts()] = {0, unique.getCount()};
    } else if (auto nms = dyn_cast<NonMaxSuppressionOp>(op))
      padded[nms.getSelected()] = {0, nms.getCount()};
  }
  if (padded.empty())
    return true;

  // Returned padded values: each names its axis and a result holding its
  // count, appended after the model's own results.
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  unsigned modelResults = results.size();
  llvm::DenseMap<Value, unsigned> countResult;
  Builder builder(func.getContext());
  SmallVector<std::pair<unsigned, Padding>> trimmed;
  for (unsigned i = 0; i < modelResults; ++i) {
    std::optional<Padding> p = paddingOf(results[i]);
    if (!p)
      continue;
    auto [it, added] = countResult.try_emplace(p->count, results.size());
    if (added)
      results.push_back(p->count);
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
                       builder.getI64IntegerAttr(countResult.lookup(p.count)));
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
