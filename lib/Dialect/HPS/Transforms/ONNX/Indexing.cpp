//===- Indexing.cpp - GatherElements, GatherND, OneHot --------------------===//
//
// Ops that select by run-time indices, decomposed into index arithmetic on
// existing ops so they need no kernels of their own and get gradients from
// their parts: GatherElements and GatherND become one hps.gather on the
// flattened data at computed linear positions, OneHot an equality with a
// constant iota.
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

FailureOr<Value> gatherElementsAlong(ONNXNode node, PatternRewriter &rewriter,
                                     Value data, Value indices, int64_t axis) {
  if (const char *problem =
          gatherElementsProblem(data.getType(), indices.getType(), axis))
    return fail(node, rewriter, problem);
  auto dataType = cast<RankedTensorType>(data.getType());
  auto indexType = cast<RankedTensorType>(indices.getType());
  Type indexElement = indexType.getElementType();
  const int64_t rank = dataType.getRank();
  axis = axis < 0 ? axis + rank : axis;
  ArrayRef<int64_t> dataShape = dataType.getShape(),
                    indexShape = indexType.getShape();
  const int64_t count = indexType.getNumElements(),
                total = dataType.getNumElements();

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
  indices = wrapNegative(node, rewriter, indices, dataShape[axis]);
  SmallVector<int32_t> base32(base.begin(), base.end());
  DenseElementsAttr baseAttr =
      indexElement.isInteger(64)
          ? DenseElementsAttr::get(indexType, ArrayRef<int64_t>(base))
          : DenseElementsAttr::get(indexType, ArrayRef<int32_t>(base32));
  Value positions = indices;
  if (stride[axis] != 1) {
    Value strideValue = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 RankedTensorType::get({}, indexElement),
                 makeScalarAttr(indexElement, double(stride[axis]))));
    positions =
        rewriter.create<MulOp>(loc, indexType, positions, strideValue, device);
  }
  positions = rewriter.create<AddOp>(loc, indexType, positions,
                                     rewriter.create<ConstantOp>(loc, baseAttr),
                                     device);
  Value flat = reshapeTo(node, rewriter, data, {total});
  return rewriter
      .create<GatherOp>(
          loc, RankedTensorType::get(indexShape, dataType.getElementType()),
          flat, positions, rewriter.getI64IntegerAttr(0), device)
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

/// GatherND (11-17; batch_dims from 12): the data viewed as [P, rest...]
/// with P the product of its first batch_dims + K axes, gathered along
/// axis 0 at sum_k wrap(indices[..., k]) * stride_k plus a constant offset
/// for the batch coordinates.
LogicalResult legalizeGatherND(ONNXNode node, PatternRewriter &rewriter) {
  auto dataType = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto indexType = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!dataType || !indexType || !dataType.hasStaticShape() ||
      !indexType.hasStaticShape() || indexType.getRank() < 1)
    return fail(node, rewriter, "needs static data and indices shapes");
  Type indexElement = indexType.getElementType();
  if (!indexElement.isInteger(64))
    return fail(node, rewriter, "indices must be i64");
  ArrayRef<int64_t> dataShape = dataType.getShape(),
                    indexShape = indexType.getShape();
  const int64_t batchDims = node.getInt("batch_dims", 0);
  const int64_t depth = indexShape.back();
  const int64_t indexRank = indexType.getRank();
  if (batchDims < 0 || batchDims >= indexRank ||
      batchDims + depth > dataType.getRank() || depth < 1)
    return fail(node, rewriter, "batch_dims or the index depth out of range");
  for (int64_t i = 0; i < batchDims; ++i)
    if (indexShape[i] != dataShape[i])
      return fail(node, rewriter, "batch axes of data and indices differ");
  const int64_t leading = batchDims + depth;
  SmallVector<int64_t> stride(leading, 1);
  for (int64_t i = leading - 2; i >= 0; --i)
    stride[i] = stride[i + 1] * dataShape[i + 1];
  const int64_t rows = stride[0] * dataShape[0];
  SmallVector<int64_t> positionsShape(indexShape.drop_back());
  int64_t count = 1;
  for (int64_t extent : positionsShape)
    count *= extent;
  if (count > kMaxPositions)
    return fail(node, rewriter, "too many positions for constant offsets");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto i64Tensor = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 RankedTensorType::get(shape, rewriter.getI64Type()), values));
  };
  // Negative components wrap by their own axis's extent.
  SmallVector<int64_t> extents(dataShape.begin() + batchDims,
                               dataShape.begin() + leading);
  Value extentValues = i64Tensor({depth}, extents);
  Value zero = i64Tensor({}, {0});
  auto flags = RankedTensorType::get(indexShape, rewriter.getI1Type());
  Value negative =
      rewriter.create<LessOp>(loc, flags, node.input(1), zero, device);
  Value wrapped = rewriter.create<WhereOp>(
      loc, indexType, negative,
      rewriter.create<AddOp>(loc, indexType, node.input(1), extentValues,
                             device),
      node.input(1), device);
  // The batch coordinates' offsets, over the positions in row-major order.
  SmallVector<int64_t> base(count, 0), position(positionsShape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    for (int64_t i = 0; i < batchDims; ++i)
      base[flat] += position[i] * stride[i];
    for (int64_t i = static_cast<int64_t>(position.size()) - 1; i >= 0; --i) {
      if (++position[i] < positionsShape[i])
        break;
      position[i] = 0;
    }
  }
  auto componentType = RankedTensorType::get(
      [&] {
        SmallVector<int64_t> shape(positionsShape);
        shape.push_back(1);
        return shape;
      }(),
      rewriter.getI64Type());
  auto positionsType =
      RankedTensorType::get(positionsShape, rewriter.getI64Type());
  Value positions =
      batchDims > 0 ? Value(i64Tensor(positionsShape, base)) : Value();
  for (int64_t k = 0; k < depth; ++k) {
    Value component = rewriter.create<SliceOp>(
        loc, componentType, wrapped, rewriter.getDenseI64ArrayAttr({k}),
        rewriter.getDenseI64ArrayAttr({k + 1}),
        rewriter.getDenseI64ArrayAttr({indexRank - 1}),
        rewriter.getDenseI64ArrayAttr({1}), device);
    component = reshapeTo(node, rewriter, component, positionsShape);
    if (int64_t by = stride[batchDims + k]; by != 1)
      component = rewriter.create<MulOp>(loc, positionsType, component,
                                         i64Tensor({}, {by}), device);
    positions =
        positions ? Value(rewriter.create<AddOp>(loc, positionsType, positions,
                                                 component, device))
                  : component;
  }
  SmallVector<int64_t> view{rows}, result(positionsShape);
  view.append(dataShape.begin() + leading, dataShape.end());
  result.append(dataShape.begin() + leading, dataShape.end());
  Value gathered = rewriter.create<GatherOp>(
      loc, RankedTensorType::get(result, dataType.getElementType()),
      reshapeTo(node, rewriter, node.input(0), view), positions,
      rewriter.getI64IntegerAttr(0), device);
  return replaceNodeWithCompatible(node, gathered, rewriter);
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

} // namespace

void populateIndexingPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "GatherElements", 11, kMaxOpset, {"axis"},
                 legalizeGatherElements);
  addONNXPattern(patterns, "GatherND", 11, 11, {}, legalizeGatherND);
  addONNXPattern(patterns, "GatherND", 12, kMaxOpset, {"batch_dims"},
                 legalizeGatherND);
  addONNXPattern(patterns, "OneHot", 9, kMaxOpset, {"axis"}, legalizeOneHot);
}

} // namespace heterps::hps
