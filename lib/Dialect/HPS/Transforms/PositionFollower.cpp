//===- PositionFollower.cpp - Positions kept apart along an axis ----------===//

#include "PositionFollower.h"

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace heterps::hps {
namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

int64_t rankOf(Value value) {
  return static_cast<int64_t>(shapeOf(value).size());
}

/// `axis` of `value` counted from the front.
int64_t normalized(int64_t axis, Value value) {
  return axis < 0 ? axis + rankOf(value) : axis;
}

/// Whether an operand that is not followed holds the same value at every
/// position along `axis` (of its own shape, or past its rank): an extent
/// of 1 there, or a splat constant. Combined with a followed value, it
/// gives each position the same thing.
bool uniformAlong(Value operand, int64_t axis) {
  if (!isa<RankedTensorType>(operand.getType()))
    return true;
  if (axis < 0 || shapeOf(operand)[axis] == 1)
    return true;
  DenseElementsAttr values;
  return matchPattern(operand, m_Constant(&values)) && values.isSplat();
}

} // namespace

std::optional<FollowedAxis>
PositionFollower::reshaped(Operation *reshape, const FollowedAxis &from) const {
  ArrayRef<int64_t> in = shapeOf(reshape->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(reshape->getResult(0));
  auto inner = [](ArrayRef<int64_t> shape, int64_t axis) {
    return ShapedType::getNumElements(shape.drop_front(axis + 1));
  };
  // Row-major, an element's offset is hi * (count * block) + position *
  // block + lo: the followed position is one digit of it. An axis of `out`
  // holds that digit whole where its stride divides `block` and its span
  // is whole periods of `count * block`.
  const int64_t count = in[from.axis] / (from.group * from.repeat);
  const int64_t block = from.group * inner(in, from.axis);
  std::optional<FollowedAxis> found;
  for (int64_t b = 0; b < static_cast<int64_t>(out.size()); ++b) {
    if (count == 0 || block == 0) {
      // No elements: the axis follows where its extent goes unchanged.
      if (out[b] == in[from.axis] &&
          ShapedType::getNumElements(out.take_front(b)) ==
              ShapedType::getNumElements(in.take_front(from.axis)))
        return FollowedAxis{b, from.source, from.group, from.repeat};
      continue;
    }
    const int64_t stride = inner(out, b);
    if (stride == 0)
      continue;
    if (block % stride != 0 || (out[b] * stride) % (count * block) != 0)
      continue;
    FollowedAxis candidate{b, from.source, block / stride,
                           out[b] * stride / (count * block)};
    if (candidate.whole())
      return candidate;
    if (mergesAllowed && !found && out[b] != 1)
      found = candidate;
  }
  return found;
}

LogicalResult PositionFollower::broadcastRule(Operation *op,
                                              const FollowedAxis &first,
                                              Reject reject) {
  int64_t rank = rankOf(op->getResult(0));
  std::optional<FollowedAxis> result;
  for (Value operand : op->getOperands()) {
    int64_t offset = rank - rankOf(operand);
    if (std::optional<FollowedAxis> p = axisOf(operand)) {
      FollowedAxis aligned = p->at(p->axis + offset);
      if (result && !(*result == aligned)) {
        reject(op, *p, "combines it with positions of another extent or axis");
        return failure();
      }
      result = aligned;
    }
  }
  for (Value operand : op->getOperands())
    if (!axisOf(operand) &&
        !uniformAlong(operand, result->axis - (rank - rankOf(operand)))) {
      reject(op, first, "combines it with a tensor of a fixed extent there");
      return failure();
    }
  setAll(op, *result);
  return success();
}

LogicalResult PositionFollower::propagate(Operation *op, Reject reject) {
  SmallVector<FollowedAxis> inputs;
  for (Value operand : op->getOperands())
    if (std::optional<FollowedAxis> p = axisOf(operand))
      inputs.push_back(*p);
  if (inputs.empty())
    return success();
  const FollowedAxis first = inputs.front();
  auto refuse = [&](Operation *reader, const Twine &why) -> LogicalResult {
    reject(reader, first, why);
    return failure();
  };
  // Every operand followed along the result's axis, or uniform there.
  auto same = [&](Operation *reader) -> LogicalResult {
    for (const FollowedAxis &p : inputs)
      if (!(p == first))
        return refuse(reader,
                      "combines it with positions of another extent or axis");
    for (Value operand : reader->getOperands())
      if (!axisOf(operand) && isa<RankedTensorType>(operand.getType()) &&
          rankOf(operand) == rankOf(reader->getResult(0)) &&
          !uniformAlong(operand, first.axis))
        return refuse(reader,
                      "combines it with a tensor of a fixed extent there");
    setAll(reader, first);
    return success();
  };
  auto through = [&](Operation *reader, std::optional<int64_t> axis,
                     const Twine &why) -> LogicalResult {
    if (!axis)
      return refuse(reader, why);
    setAll(reader, first.at(*axis));
    return success();
  };
  // Only `operand` may be followed, and only along `axis`, which the
  // results keep at `to`.
  auto onlyAlong = [&](Operation *reader, Value operand, int64_t axis,
                       int64_t to, const Twine &why) -> LogicalResult {
    for (Value other : reader->getOperands())
      if (other != operand && axisOf(other))
        return refuse(reader, "reads it as a parameter");
    if (!axisOf(operand) || axisOf(operand)->axis != axis)
      return refuse(reader, why);
    return through(reader, to, "");
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<NonZeroOp, UniqueOp, NonMaxSuppressionOp>([&](Operation *reader) {
        return refuse(reader, "its result would depend on the padding");
      })
      .Case<ShapeOp>([&](Operation *reader) {
        return refuse(reader, "reads the extent of that axis");
      })
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(
          [&](Operation *reader) -> LogicalResult {
            std::optional<FollowedAxis> to = reshaped(reader, first);
            if (!to)
              return refuse(reader, mergesAllowed
                                        ? "splits it across axes"
                                        : "merges or splits that axis");
            setAll(reader, *to);
            return success();
          })
      .Case([&](TransposeOp transpose) {
        ArrayRef<int64_t> perm = transpose.getPerm();
        const int64_t *at = llvm::find(perm, first.axis);
        return through(transpose, at - perm.begin(), "");
      })
      .Case([&](GatherOp gather) {
        int64_t axis = normalized(gather.getAxis(), gather.getData());
        int64_t indexRank = rankOf(gather.getIndices());
        if (inputs.size() > 1)
          return refuse(gather, "indexes it by followed indices");
        if (axisOf(gather.getIndices()))
          return through(gather, axis + first.axis, "");
        if (first.axis == axis)
          return refuse(gather, "gathers along that axis");
        return through(
            gather, first.axis < axis ? first.axis : first.axis + indexRank - 1,
            "");
      })
      .Case([&](EmbeddingLookupOp lookup) {
        if (axisOf(lookup.getTable()))
          return refuse(lookup, "looks up rows in it");
        bool pooled = lookup.getPooling() != EmbeddingPooling::None;
        int64_t last = rankOf(lookup.getIds()) - 1;
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
            return refuse(slice, "slices that axis");
        }
        return through(slice, first.axis, "");
      })
      .Case([&](ReduceOp reduce) {
        // No axes: every axis.
        ArrayRef<int64_t> axes = reduce.getAxes();
        if (axes.empty())
          return refuse(reduce, "reduces over that axis");
        int64_t before = 0;
        for (int64_t axis : axes) {
          int64_t a = normalized(axis, reduce.getInput());
          if (a == first.axis)
            return refuse(reduce, "reduces over that axis");
          before += a < first.axis;
        }
        return through(reduce,
                       reduce.getKeepdims() ? first.axis : first.axis - before,
                       "");
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        if (normalized(softmax.getAxis(), softmax.getInput()) == first.axis)
          return refuse(softmax, "normalizes over that axis");
        return same(softmax);
      })
      .Case([&](LayerNormOp norm) {
        if (first.axis >= normalized(norm.getAxis(), norm.getInput()))
          return refuse(norm, "normalizes over that axis");
        return onlyAlong(norm, norm.getInput(), first.axis, first.axis,
                         "normalizes over that axis");
      })
      .Case([&](ConcatOp concat) {
        if (normalized(concat.getAxis(), concat.getResult()) == first.axis)
          return refuse(concat, "concatenates along that axis");
        if (inputs.size() != concat.getInputs().size())
          return refuse(concat,
                        "concatenates it with a tensor of a fixed extent");
        return same(concat);
      })
      .Case([&](SplitOp split) {
        if (normalized(split.getAxis(), split.getInput()) == first.axis)
          return refuse(split, "splits that axis");
        return same(split);
      })
      .Case([&](ExpandOp expand) {
        int64_t offset = rankOf(expand.getResult()) - rankOf(expand.getInput());
        // An extent of 1 broadcast wider would repeat one position.
        if (shapeOf(expand.getInput())[first.axis] !=
            shapeOf(expand.getResult())[first.axis + offset])
          return refuse(expand, "broadcasts that axis");
        return through(expand, first.axis + offset, "");
      })
      .Case([&](PadOp pad) {
        ArrayRef<int64_t> pads = pad.getPads();
        int64_t rank = rankOf(pad.getInput());
        if (pads[first.axis] != 0 || pads[rank + first.axis] != 0)
          return refuse(pad, "pads that axis");
        return through(pad, first.axis, "");
      })
      .Case([&](GemmOp gemm) {
        // op(A) rows are the result's rows, op(B) columns its columns.
        if (axisOf(gemm.getC()) || (axisOf(gemm.getA()) && axisOf(gemm.getB())))
          return refuse(gemm, "multiplies it by another followed tensor");
        if (axisOf(gemm.getA()))
          return onlyAlong(gemm, gemm.getA(), gemm.getTransA() ? 1 : 0, 0,
                           "contracts over that axis");
        if (gemm.getC() && !uniformAlong(gemm.getC(), rankOf(gemm.getC()) - 1))
          return refuse(gemm, "adds a bias of a fixed extent there");
        return onlyAlong(gemm, gemm.getB(), gemm.getTransB() ? 0 : 1, 1,
                         "contracts over that axis");
      })
      .Case([&](MatMulOp matmul) {
        Value a = matmul.getA(), b = matmul.getB();
        int64_t rank = rankOf(matmul.getResult());
        int64_t rankA = rankOf(a), rankB = rankOf(b);
        // A matrix times a vector keeps the matrix's other axes (A's all
        // but its last; B's all but its second-last), as numpy drops the
        // vector's promoted axis.
        if (rankA < 2 || rankB < 2) {
          Value matrix = rankA < 2 ? b : a, vector = rankA < 2 ? a : b;
          std::optional<FollowedAxis> p = axisOf(matrix);
          if (axisOf(vector) || !p || rankOf(matrix) < 2)
            return refuse(matmul, "multiplies a vector along it");
          const int64_t own = rankOf(matrix);
          const int64_t contracted = matrix == a ? own - 1 : own - 2;
          if (p->axis == contracted)
            return refuse(matmul, "contracts over that axis");
          return through(matmul, p->axis < contracted ? p->axis : p->axis - 1,
                         "");
        }
        // Axes of the batch dimensions, then rows of A, columns of B.
        auto resultAxis = [&](Value operand,
                              int64_t axis) -> std::optional<int64_t> {
          int64_t own = rankOf(operand);
          if (axis == own - 2)
            return operand == a ? std::optional<int64_t>(rank - 2)
                                : std::nullopt;
          if (axis == own - 1)
            return operand == b ? std::optional<int64_t>(rank - 1)
                                : std::nullopt;
          return axis + rank - own;
        };
        std::optional<int64_t> to;
        for (Value operand : {a, b}) {
          std::optional<FollowedAxis> p = axisOf(operand);
          if (!p)
            continue;
          if (p->source != first.source || p->group != first.group ||
              p->repeat != first.repeat)
            return refuse(
                matmul, "combines it with positions of another extent or axis");
          std::optional<int64_t> mine = resultAxis(operand, p->axis);
          if (!mine)
            return refuse(matmul, "contracts over that axis");
          if (to && *to != *mine)
            return refuse(
                matmul, "combines it with positions of another extent or axis");
          to = mine;
        }
        // A batch axis pairs each position with the other operand's.
        for (Value operand : {a, b})
          if (!axisOf(operand) && *to < rank - 2 &&
              !uniformAlong(operand, *to - (rank - rankOf(operand))))
            return refuse(matmul, "pairs its batch positions with a tensor's");
        return through(matmul, to, "");
      })
      .Case<ConvOp, ConvGradInputOp, MaxPoolOp, AvgPoolOp, GlobalMaxPoolOp,
            GlobalAvgPoolOp, BatchNormOp>([&](Operation *reader) {
        // [N, C, spatial...]: each of the N images apart.
        return onlyAlong(reader, reader->getOperand(0), 0, 0,
                         "mixes positions along that axis");
      })
      .Case([&](RecurrenceOp recurrence) -> LogicalResult {
        // Each sequence (projected's axis 1, the states' and lengths' axis
        // 0) runs apart from the others; the weights are shared.
        for (Value weights :
             {recurrence.getRecurrence(), recurrence.getRecurrentBias(),
              recurrence.getPeepholes()})
          if (weights && axisOf(weights))
            return refuse(recurrence, "reads it as a parameter");
        std::pair<Value, int64_t> rows[] = {{recurrence.getProjected(), 1},
                                            {recurrence.getInitialH(), 0},
                                            {recurrence.getLengths(), 0},
                                            {recurrence.getInitialC(), 0}};
        for (auto [operand, axis] : rows) {
          if (!operand)
            continue;
          std::optional<FollowedAxis> p = axisOf(operand);
          if (!p && !uniformAlong(operand, axis))
            return refuse(recurrence,
                          "combines it with a tensor of a fixed extent there");
          if (p && !(*p == first.at(axis)))
            return refuse(recurrence, "runs a sequence across that axis");
        }
        followed[recurrence.getY()] = first.at(1);
        followed[recurrence.getHLast()] = first.at(0);
        if (Value c = recurrence.getCLast())
          followed[c] = first.at(0);
        return success();
      })
      .Case([&](DeterminantOp det) {
        if (first.axis >= rankOf(det.getInput()) - 2)
          return refuse(det, "takes determinants over that axis");
        return through(det, first.axis, "");
      })
      .Case<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, PReluOp,
            AndOp, OrOp, XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
            GreaterEqualOp, WhereOp>([&](Operation *binary) {
        return broadcastRule(binary, first, reject);
      })
      .Case([&](func::ReturnOp) { return success(); })
      .Default([&](Operation *reader) {
        if (reader->hasTrait<OpTrait::SameOperandsAndResultShape>() &&
            reader->getNumResults() == 1 && reader->getNumRegions() == 0)
          return same(reader);
        return refuse(reader, "is not known to keep each position along it "
                              "apart");
      });
}

} // namespace heterps::hps
