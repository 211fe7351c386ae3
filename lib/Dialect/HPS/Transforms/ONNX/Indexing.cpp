//===- Indexing.cpp - Gathers and scatters by element or slice, OneHot ----===//
//
// Ops that select by run-time indices, decomposed into index arithmetic on
// existing ops so they get gradients from their parts: GatherElements and
// GatherND become one hps.gather on the flattened data at computed linear
// positions, ScatterElements and ScatterND one hps.scatter at the same
// positions, OneHot an equality with a constant iota.
// Both need static shapes (the index arithmetic is built from them).
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// The most elements of a constant of positions this file builds (32 MiB
/// of i64).
constexpr int64_t kMaxPositions = int64_t(1) << 22;

/// `indices` with negative entries wrapped by `extent` (index + extent where
/// index < 0), in the indices' own integer type.
Value wrapNegative(ONNXNode node, PatternRewriter &rewriter, Value indices,
                   int64_t extent) {
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto type = cast<RankedTensorType>(indices.getType());
  auto scalar = [&](int64_t value) {
    return scalarConstant(rewriter, loc, type.getElementType(),
                          static_cast<double>(value));
  };
  Value negative = rewriter.create<LessOp>(
      loc, RankedTensorType::get(type.getShape(), rewriter.getI1Type()),
      indices, scalar(0), device);
  Value wrapped =
      rewriter.create<AddOp>(loc, type, indices, scalar(extent), device);
  return rewriter.create<WhereOp>(loc, type, negative, wrapped, indices,
                                  device);
}

} // namespace

const char *gatherElementsProblem(Type data, Type indices, int64_t axis) {
  auto dataType = dyn_cast<RankedTensorType>(data);
  auto indexType = dyn_cast<RankedTensorType>(indices);
  if (!dataType || !indexType || !dataType.hasStaticShape() ||
      !indexType.hasStaticShape())
    return "needs static data and indices shapes";
  Type indexElement = indexType.getElementType();
  if (!indexElement.isInteger(32) && !indexElement.isInteger(64))
    return "indices must be i32 or i64";
  const int64_t rank = dataType.getRank();
  if (rank == 0 || indexType.getRank() != rank)
    return "data and indices need the same rank >= 1";
  if (axis < -rank || axis >= rank)
    return "axis out of range";
  axis = axis < 0 ? axis + rank : axis;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis && indexType.getDimSize(i) > dataType.getDimSize(i))
      return "indices exceed data off the axis";
  if (indexType.getNumElements() > kMaxPositions ||
      (indexElement.isInteger(32) &&
       dataType.getNumElements() > (int64_t(1) << 31) - 1))
    return "too many positions for constant offsets";
  return nullptr;
}

namespace {

/// Whether constant `indices` hold a value outside [-extent, extent), where
/// extent is that of data axis `extentOf(position in indices)`: such a
/// model is refused when it is compiled rather than when it runs.
bool constantIndexOutOfRange(Value indices,
                             llvm::function_ref<int64_t(int64_t)> extentOf) {
  std::optional<SmallVector<int64_t>> values = getConstantInts(indices);
  if (!values)
    return false;
  for (auto [position, index] : llvm::enumerate(*values)) {
    int64_t extent = extentOf(static_cast<int64_t>(position));
    if (index < -extent || index >= extent)
      return true;
  }
  return false;
}

/// The flat row-major positions in `dataType` that GatherElements and
/// ScatterElements address: wrap(indices) * stride[axis] plus a constant
/// offset for the other coordinates, shaped as the indices; run-time
/// indices out of range map past the end. The caller has checked
/// gatherElementsProblem.
Value elementPositions(ONNXNode node, PatternRewriter &rewriter,
                       RankedTensorType dataType, Value indices, int64_t axis) {
  auto indexType = cast<RankedTensorType>(indices.getType());
  Type indexElement = indexType.getElementType();
  const int64_t rank = dataType.getRank();
  axis = axis < 0 ? axis + rank : axis;
  ArrayRef<int64_t> dataShape = dataType.getShape(),
                    indexShape = indexType.getShape();
  const int64_t count = indexType.getNumElements();

  // Row-major strides of the data; base[p] = sum over i != axis of p_i *
  // stride_i, enumerated in the indices' row-major order.
  SmallVector<int64_t> stride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    stride[i] = stride[i + 1] * dataShape[i + 1];
  SmallVector<int64_t> base(count), position(rank, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t offset = 0;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        offset += position[i] * stride[i];
    base[flat] = offset;
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++position[i] < indexShape[i])
        break;
      position[i] = 0;
    }
  }

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  const bool known = getConstantInts(indices).has_value();
  indices = wrapNegative(node, rewriter, indices, dataShape[axis]);
  SmallVector<int32_t> base32(base.begin(), base.end());
  DenseElementsAttr baseAttr =
      indexElement.isInteger(64)
          ? DenseElementsAttr::get(indexType, ArrayRef<int64_t>(base))
          : DenseElementsAttr::get(indexType, ArrayRef<int32_t>(base32));
  Value positions = indices;
  if (stride[axis] != 1)
    positions = rewriter.create<MulOp>(
        loc, indexType, positions,
        scalarConstant(rewriter, loc, indexElement, double(stride[axis])),
        device);
  positions = rewriter.create<AddOp>(loc, indexType, positions,
                                     rewriter.create<ConstantOp>(loc, baseAttr),
                                     device);
  if (known)
    return positions; // the patterns checked constant indices
  // An index outside [-extent, extent) would land silently on another row
  // of the flattened data; it goes past the end instead, where the kernel's
  // range check stops the run.
  auto flags = RankedTensorType::get(indexShape, rewriter.getI1Type());
  auto scalar = [&](int64_t value) {
    return scalarConstant(rewriter, loc, indexElement, double(value));
  };
  Value inRange = rewriter.create<AndOp>(
      loc, flags,
      rewriter.create<GreaterEqualOp>(loc, flags, indices, scalar(0), device),
      rewriter.create<LessOp>(loc, flags, indices, scalar(dataShape[axis]),
                              device),
      device);
  return rewriter.create<WhereOp>(loc, indexType, inRange, positions,
                                  scalar(dataType.getNumElements()), device);
}

} // namespace

FailureOr<Value> gatherElementsAlong(ONNXNode node, PatternRewriter &rewriter,
                                     Value data, Value indices, int64_t axis) {
  if (const char *problem =
          gatherElementsProblem(data.getType(), indices.getType(), axis))
    return fail(node, rewriter, problem);
  auto dataType = cast<RankedTensorType>(data.getType());
  auto indexType = cast<RankedTensorType>(indices.getType());
  int64_t extent =
      dataType.getDimSize(axis < 0 ? axis + dataType.getRank() : axis);
  if (constantIndexOutOfRange(indices, [&](int64_t) { return extent; }))
    return fail(node, rewriter, "index out of range");
  Value positions = elementPositions(node, rewriter, dataType, indices, axis);
  Value flat = reshapeTo(node, rewriter, data, {dataType.getNumElements()});
  return rewriter
      .create<GatherOp>(node.getLoc(),
                        RankedTensorType::get(indexType.getShape(),
                                              dataType.getElementType()),
                        flat, positions, rewriter.getI64IntegerAttr(0),
                        node.getOp().getDeviceAttr())
      .getResult();
}

namespace {

/// GatherElements (11-13): out[p] = data[p with p[axis] = indices[p]].
LogicalResult legalizeGatherElements(ONNXNode node, PatternRewriter &rewriter) {
  FailureOr<Value> gathered = gatherElementsAlong(
      node, rewriter, node.input(0), node.input(1), node.getInt("axis", 0));
  if (failed(gathered))
    return failure();
  return replaceNodeWithCompatible(node, *gathered, rewriter);
}

/// Where GatherND and ScatterND address the data: viewed as [rows, rest...]
/// with rows the product of its first batch_dims + depth axes (depth =
/// the indices' last extent), slices are picked at sum_k
/// wrap(indices[..., k]) * stride_k plus a constant offset for the batch
/// coordinates, shaped as indices.shape[:-1]. ndLayout checks the operands
/// and creates nothing; ndPositions then builds the positions.
struct NDLayout {
  int64_t batchDims, depth;
  SmallVector<int64_t> stride;    ///< of the first batch_dims + depth axes
  SmallVector<int64_t> positions; ///< indices.shape[:-1]
  SmallVector<int64_t> view;      ///< [rows] + data.shape[batch_dims + depth:]
  SmallVector<int64_t> slices;    ///< positions + the same rest
};

FailureOr<NDLayout> ndLayout(ONNXNode node, PatternRewriter &rewriter,
                             Value data, Value indices, int64_t batchDims) {
  auto dataType = dyn_cast<RankedTensorType>(data.getType());
  auto indexType = dyn_cast<RankedTensorType>(indices.getType());
  if (!dataType || !indexType || !dataType.hasStaticShape() ||
      !indexType.hasStaticShape() || indexType.getRank() < 1)
    return fail(node, rewriter, "needs static data and indices shapes");
  if (!indexType.getElementType().isInteger(64))
    return fail(node, rewriter, "indices must be i64");
  ArrayRef<int64_t> dataShape = dataType.getShape(),
                    indexShape = indexType.getShape();
  const int64_t depth = indexShape.back();
  if (batchDims < 0 || batchDims >= indexType.getRank() ||
      batchDims + depth > dataType.getRank() || depth < 1)
    return fail(node, rewriter, "batch_dims or the index depth out of range");
  for (int64_t i = 0; i < batchDims; ++i)
    if (indexShape[i] != dataShape[i])
      return fail(node, rewriter, "batch axes of data and indices differ");
  NDLayout layout{batchDims, depth};
  const int64_t leading = batchDims + depth;
  layout.stride.assign(leading, 1);
  for (int64_t i = leading - 2; i >= 0; --i)
    layout.stride[i] = layout.stride[i + 1] * dataShape[i + 1];
  layout.positions.assign(indexShape.begin(), indexShape.end() - 1);
  int64_t count = 1;
  for (int64_t extent : layout.positions)
    count *= extent;
  if (count > kMaxPositions)
    return fail(node, rewriter, "too many positions for constant offsets");
  layout.view = {layout.stride[0] * dataShape[0]};
  layout.view.append(dataShape.begin() + leading, dataShape.end());
  layout.slices = layout.positions;
  layout.slices.append(dataShape.begin() + leading, dataShape.end());
  return layout;
}

Value ndPositions(ONNXNode node, PatternRewriter &rewriter,
                  const NDLayout &layout, Value data, Value indices) {
  ArrayRef<int64_t> dataShape =
      cast<RankedTensorType>(data.getType()).getShape();
  auto indexType = cast<RankedTensorType>(indices.getType());
  ArrayRef<int64_t> positionsShape = layout.positions;
  const int64_t batchDims = layout.batchDims, depth = layout.depth;
  const int64_t indexRank = indexType.getRank();
  int64_t count = 1;
  for (int64_t extent : positionsShape)
    count *= extent;

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto i64Tensor = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 RankedTensorType::get(shape, rewriter.getI64Type()), values));
  };
  // Negative components wrap by their own axis's extent.
  SmallVector<int64_t> extents(dataShape.begin() + batchDims,
                               dataShape.begin() + batchDims + depth);
  Value extentValues = i64Tensor({depth}, extents);
  Value zero = i64Tensor({}, {0});
  auto flags =
      RankedTensorType::get(indexType.getShape(), rewriter.getI1Type());
  Value negative = rewriter.create<LessOp>(loc, flags, indices, zero, device);
  Value wrapped = rewriter.create<WhereOp>(
      loc, indexType, negative,
      rewriter.create<AddOp>(loc, indexType, indices, extentValues, device),
      indices, device);
  // The batch coordinates' offsets, over the positions in row-major order.
  SmallVector<int64_t> base(count, 0), position(positionsShape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    for (int64_t i = 0; i < batchDims; ++i)
      base[flat] += position[i] * layout.stride[i];
    for (int64_t i = static_cast<int64_t>(position.size()) - 1; i >= 0; --i) {
      if (++position[i] < positionsShape[i])
        break;
      position[i] = 0;
    }
  }
  SmallVector<int64_t> componentShape(positionsShape);
  componentShape.push_back(1);
  auto componentType =
      RankedTensorType::get(componentShape, rewriter.getI64Type());
  auto positionsType =
      RankedTensorType::get(positionsShape, rewriter.getI64Type());
  Value positions =
      batchDims > 0 ? Value(i64Tensor(positionsShape, base)) : Value();
  // Run-time indices: whether every component of a position lies in
  // [-extent, extent) of its own axis. A component out of range can still
  // give a flattened position inside the data (another row), so each is
  // checked; constant indices were checked by the patterns.
  const bool known = getConstantInts(indices).has_value();
  auto okType = RankedTensorType::get(positionsShape, rewriter.getI1Type());
  Value allInRange;
  for (int64_t k = 0; k < depth; ++k) {
    Value component = rewriter.create<SliceOp>(
        loc, componentType, wrapped, rewriter.getDenseI64ArrayAttr({k}),
        rewriter.getDenseI64ArrayAttr({k + 1}),
        rewriter.getDenseI64ArrayAttr({indexRank - 1}),
        rewriter.getDenseI64ArrayAttr({1}), device);
    component = reshapeTo(node, rewriter, component, positionsShape);
    if (!known) {
      // Wrapped, a component in range lies in [0, extent).
      Value inRange = rewriter.create<AndOp>(
          loc, okType,
          rewriter.create<GreaterEqualOp>(loc, okType, component, zero, device),
          rewriter.create<LessOp>(loc, okType, component,
                                  i64Tensor({}, {extents[k]}), device),
          device);
      allInRange = allInRange ? Value(rewriter.create<AndOp>(
                                    loc, okType, allInRange, inRange, device))
                              : inRange;
    }
    if (int64_t by = layout.stride[batchDims + k]; by != 1)
      component = rewriter.create<MulOp>(loc, positionsType, component,
                                         i64Tensor({}, {by}), device);
    positions =
        positions ? Value(rewriter.create<AddOp>(loc, positionsType, positions,
                                                 component, device))
                  : component;
  }
  if (!allInRange)
    return positions;
  // Out of range goes past the end of the [rows, rest...] view, where the
  // kernel's range check stops the run.
  return rewriter.create<WhereOp>(loc, positionsType, allInRange, positions,
                                  i64Tensor({}, {layout.view[0]}), device);
}

/// GatherND (11-17; batch_dims from 12): one hps.gather along axis 0 of the
/// data's [rows, rest...] view.
LogicalResult legalizeGatherND(ONNXNode node, PatternRewriter &rewriter) {
  Value data = node.input(0), indices = node.input(1);
  FailureOr<NDLayout> layout =
      ndLayout(node, rewriter, data, indices, node.getInt("batch_dims", 0));
  if (failed(layout))
    return failure();
  Value positions = ndPositions(node, rewriter, *layout, data, indices);
  Type element = cast<RankedTensorType>(data.getType()).getElementType();
  Value gathered = rewriter.create<GatherOp>(
      node.getLoc(), RankedTensorType::get(layout->slices, element),
      reshapeTo(node, rewriter, data, layout->view), positions,
      rewriter.getI64IntegerAttr(0), node.getOp().getDeviceAttr());
  return replaceNodeWithCompatible(node, gathered, rewriter);
}

/// The reduction attribute of ScatterElements / ScatterND (none before
/// opset 16).
FailureOr<ScatterReduction> scatterReductionOf(ONNXNode node,
                                               PatternRewriter &rewriter) {
  std::string name = node.getString("reduction", "none");
  std::optional<ScatterReduction> reduction = symbolizeScatterReduction(name);
  if (!reduction)
    return fail(node, rewriter,
                "reduction '" + name + "' is not none, add, mul, max or min");
  return *reduction;
}

/// hps.scatter of `updates` into `view` (a reshape of the node's data) along
/// axis 0 at `positions`, reshaped back to the data's shape. The caller has
/// checked every operand (a pattern that fails must create nothing).
LogicalResult replaceWithScatter(ONNXNode node, PatternRewriter &rewriter,
                                 ArrayRef<int64_t> view, Value positions,
                                 Value updates, ScatterReduction reduction) {
  Value data = node.input(0);
  auto dataType = cast<RankedTensorType>(data.getType());
  auto viewType = RankedTensorType::get(view, dataType.getElementType());
  auto scatter = rewriter.create<ScatterOp>(
      node.getLoc(), viewType, reshapeTo(node, rewriter, data, view), positions,
      updates, rewriter.getI64IntegerAttr(0),
      ScatterReductionAttr::get(rewriter.getContext(), reduction),
      node.getOp().getDeviceAttr());
  return replaceNodeWithCompatible(
      node, reshapeTo(node, rewriter, scatter, dataType.getShape()), rewriter);
}

/// ScatterElements (11-18) and Scatter (9-10, the same op under its old
/// name): updates land on the flattened data at GatherElements' positions.
LogicalResult legalizeScatterElements(ONNXNode node,
                                      PatternRewriter &rewriter) {
  FailureOr<ScatterReduction> reduction = scatterReductionOf(node, rewriter);
  if (failed(reduction))
    return failure();
  Value data = node.input(0), indices = node.input(1), updates = node.input(2);
  int64_t axis = node.getInt("axis", 0);
  if (const char *problem =
          gatherElementsProblem(data.getType(), indices.getType(), axis))
    return fail(node, rewriter, problem);
  if (updates.getType() !=
      RankedTensorType::get(
          cast<RankedTensorType>(indices.getType()).getShape(),
          cast<RankedTensorType>(data.getType()).getElementType()))
    return fail(node, rewriter,
                "updates must have the indices' shape and the data's type");
  auto dataType = cast<RankedTensorType>(data.getType());
  int64_t extent =
      dataType.getDimSize(axis < 0 ? axis + dataType.getRank() : axis);
  if (constantIndexOutOfRange(indices, [&](int64_t) { return extent; }))
    return fail(node, rewriter, "index out of range");
  if (!canReplaceWithType(node, dataType))
    return fail(node, rewriter, "the result type differs from the data's");
  Value positions = elementPositions(node, rewriter, dataType, indices, axis);
  return replaceWithScatter(node, rewriter, {dataType.getNumElements()},
                            positions, updates, *reduction);
}

/// ScatterND (11-18) with a run-time operand (constants fold in Values.cpp):
/// updates land on GatherND's slices of the data's [rows, rest...] view.
LogicalResult legalizeScatterNDAt(ONNXNode node, PatternRewriter &rewriter) {
  if (succeeded(foldConstantScatterND(node, rewriter)))
    return success();
  FailureOr<ScatterReduction> reduction = scatterReductionOf(node, rewriter);
  if (failed(reduction))
    return failure();
  Value data = node.input(0), indices = node.input(1), updates = node.input(2);
  FailureOr<NDLayout> layout = ndLayout(node, rewriter, data, indices, 0);
  if (failed(layout))
    return failure();
  auto dataType = cast<RankedTensorType>(data.getType());
  if (constantIndexOutOfRange(indices, [&](int64_t position) {
        return dataType.getDimSize(position % layout->depth);
      }))
    return fail(node, rewriter, "index out of range");
  if (updates.getType() !=
      RankedTensorType::get(layout->slices, dataType.getElementType()))
    return fail(node, rewriter, "updates do not match the indexed slices");
  if (!canReplaceWithType(node, dataType))
    return fail(node, rewriter, "the result type differs from the data's");
  Value positions = ndPositions(node, rewriter, *layout, data, indices);
  return replaceWithScatter(node, rewriter, layout->view, positions, updates,
                            *reduction);
}

/// OneHot (9-11): where(wrap(indices) == iota(depth), on, off) with the new
/// axis of extent depth at `axis`. depth must be a constant; the values
/// [off, on] may be computed (two one-element slices broadcast). Indices
/// outside [-depth, depth) match no position and give off everywhere.
LogicalResult legalizeOneHot(ONNXNode node, PatternRewriter &rewriter) {
  auto indexType = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto valuesType = dyn_cast<RankedTensorType>(node.input(2).getType());
  if (!indexType || !indexType.hasStaticShape() || !valuesType)
    return fail(node, rewriter, "needs static indices and ranked values");
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return fail(node, rewriter, "values must be [off, on]");
  std::optional<double> depthValue = getConstantScalar(node.input(1));
  if (!depthValue)
    return fail(node, rewriter, "depth must be a constant scalar");
  const auto depth = static_cast<int64_t>(*depthValue);
  if (depth < 1)
    return fail(node, rewriter, "depth must be positive");
  const int64_t rank = indexType.getRank() + 1;
  int64_t axis = node.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return fail(node, rewriter, "axis out of range");
  axis = axis < 0 ? axis + rank : axis;
  SmallVector<int64_t> outShape(indexType.getShape());
  outShape.insert(outShape.begin() + axis, depth);
  if (indexType.getNumElements() * depth > kMaxPositions * 16)
    return fail(node, rewriter, "the one-hot tensor is too large");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  // Float indices are truncated to integers, as onnxruntime does.
  Value indices = node.input(0);
  Type i64 = rewriter.getI64Type();
  if (!indexType.getElementType().isInteger(64)) {
    indexType = RankedTensorType::get(indexType.getShape(), i64);
    indices = rewriter.create<CastOp>(loc, indexType, indices, device);
  }
  indices = wrapNegative(node, rewriter, indices, depth);
  SmallVector<int64_t> unitShape(outShape), iotaShape(rank, 1);
  unitShape[axis] = 1;
  iotaShape[axis] = depth;
  SmallVector<int64_t> iota(depth);
  for (int64_t i = 0; i < depth; ++i)
    iota[i] = i;
  Value iotaValue = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get(iotaShape, i64),
                                  ArrayRef<int64_t>(iota)));
  Value hits = rewriter.create<EqualOp>(
      loc, RankedTensorType::get(outShape, rewriter.getI1Type()),
      reshapeTo(node, rewriter, indices, unitShape), iotaValue, device);
  Type element = valuesType.getElementType();
  auto pick = [&](int64_t which) -> Value {
    return rewriter.create<SliceOp>(loc, RankedTensorType::get({1}, element),
                                    node.input(2),
                                    rewriter.getDenseI64ArrayAttr({which}),
                                    rewriter.getDenseI64ArrayAttr({which + 1}),
                                    rewriter.getDenseI64ArrayAttr({0}),
                                    rewriter.getDenseI64ArrayAttr({1}), device);
  };
  Value result =
      rewriter.create<WhereOp>(loc, RankedTensorType::get(outShape, element),
                               hits, pick(1), pick(0), device);
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// ReverseSequence (10): along time_axis, the first sequence_lens[b]
/// elements of batch entry b are reversed and the rest kept. A
/// GatherElements along the time axis at where(t < len, len - 1 - t, t),
/// built on a [batch, time] (or [time, batch]) grid and expanded over the
/// other axes; a length above the time extent indexes out of range and
/// stops the run.
LogicalResult legalizeReverseSequence(ONNXNode node,
                                      PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto lensType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2)
    return fail(node, rewriter, "needs static data of rank >= 2");
  const int64_t batchAxis = node.getInt("batch_axis", 1);
  const int64_t timeAxis = node.getInt("time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return fail(node, rewriter, "batch_axis and time_axis must be 0 and 1");
  const int64_t batch = type.getDimSize(batchAxis);
  const int64_t time = type.getDimSize(timeAxis);
  if (!lensType || !lensType.getElementType().isInteger(64) ||
      lensType.getShape() != ArrayRef<int64_t>{batch})
    return fail(node, rewriter, "sequence_lens must be i64 [batch]");
  auto indexType =
      RankedTensorType::get(type.getShape(), rewriter.getI64Type());
  if (const char *problem = gatherElementsProblem(type, indexType, timeAxis))
    return fail(node, rewriter, problem);

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type i64 = rewriter.getI64Type();
  SmallVector<int64_t> gridShape(2), lensShape(2, 1), timeShape(2, 1);
  gridShape[batchAxis] = lensShape[batchAxis] = batch;
  gridShape[timeAxis] = timeShape[timeAxis] = time;
  SmallVector<int64_t> steps(time);
  for (int64_t t = 0; t < time; ++t)
    steps[t] = t;
  Value t = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get(timeShape, i64),
                                  ArrayRef<int64_t>(steps)));
  Value lens = reshapeTo(node, rewriter, node.input(1), lensShape);
  auto gridType = RankedTensorType::get(gridShape, i64);
  Value last =
      rewriter.create<SubOp>(loc, lensType.clone(lensShape), lens,
                             scalarConstant(rewriter, loc, i64, 1), device);
  Value reversed = rewriter.create<SubOp>(loc, gridType, last, t, device);
  Value inside = rewriter.create<LessOp>(
      loc, RankedTensorType::get(gridShape, rewriter.getI1Type()), t, lens,
      device);
  Value grid =
      rewriter.create<WhereOp>(loc, gridType, inside, reversed, t, device);
  SmallVector<int64_t> unitRest(gridShape);
  unitRest.append(type.getRank() - 2, 1);
  Value indices = grid;
  if (type.getRank() > 2)
    indices = rewriter.create<ExpandOp>(
        loc, indexType, reshapeTo(node, rewriter, grid, unitRest),
        rewriter.getDenseI64ArrayAttr(type.getShape()), device);
  FailureOr<Value> gathered =
      gatherElementsAlong(node, rewriter, node.input(0), indices, timeAxis);
  if (failed(gathered)) // not reached: checked above
    return failure();
  return replaceNodeWithCompatible(node, *gathered, rewriter);
}

} // namespace

void populateIndexingPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "GatherElements", 11, kMaxOpset, {"axis"},
                 legalizeGatherElements);
  addONNXPattern(patterns, "GatherND", 11, 11, {}, legalizeGatherND);
  addONNXPattern(patterns, "GatherND", 12, kMaxOpset, {"batch_dims"},
                 legalizeGatherND);
  addONNXPattern(patterns, "OneHot", 9, kMaxOpset, {"axis"}, legalizeOneHot);
  addONNXPattern(patterns, "ReverseSequence", 10, kMaxOpset,
                 {"batch_axis", "time_axis"}, legalizeReverseSequence);
  addONNXPattern(patterns, "Scatter", 9, kMaxOpset, {"axis"},
                 legalizeScatterElements);
  addONNXPattern(patterns, "ScatterElements", 11, 15, {"axis"},
                 legalizeScatterElements);
  addONNXPattern(patterns, "ScatterElements", 16, kMaxOpset,
                 {"axis", "reduction"}, legalizeScatterElements);
  addONNXPattern(patterns, "ScatterND", 11, 15, {}, legalizeScatterNDAt);
  addONNXPattern(patterns, "ScatterND", 16, kMaxOpset, {"reduction"},
                 legalizeScatterNDAt);
}

} // namespace heterps::hps
