//===- Normalization.cpp - Batch/Instance/LayerNorm, LRN, (Log)Softmax ----===//

#include "Support.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// True when the node declares an output after the first. The importer
/// gives an omitted optional output the first output's type, and a declared
/// one its own type (batch statistics are 1-D, Y at least 2-D) or none.
bool declaresSecondaryOutputs(ONNXNode node) {
  for (unsigned i = 1, e = node.getOp().getNumResults(); i < e; ++i)
    if (node.resultType(i) != node.resultType(0))
      return true;
  return false;
}

/// hps.reduce mean of `value` over `axes`, which `keptType` keeps as 1s.
Value keptMean(ONNXNode node, PatternRewriter &rewriter, Value value,
               ArrayRef<int64_t> axes, RankedTensorType keptType) {
  return rewriter.create<ReduceOp>(
      node.getLoc(), keptType,
      ReduceKindAttr::get(rewriter.getContext(), ReduceKind::Mean), value,
      rewriter.getDenseI64ArrayAttr(axes), rewriter.getUnitAttr(),
      node.getOp().getDeviceAttr());
}

/// BatchNormalization 14-17 with training_mode=1, as ONNX defines it: Y
/// normalized with the batch's mean and population variance over every axis
/// but the channels, and the running statistics outputs moved towards them:
/// running = input * momentum + batch * (1 - momentum).
LogicalResult legalizeTrainingBatchNorm(ONNXNode node,
                                        PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
      !type.getElementType().isF32() || node.resultType(0) != type)
    return fail(node, rewriter, "needs a static f32 [N, C, ...] input");
  const int64_t channels = type.getDimSize(1);
  auto channelType = RankedTensorType::get({channels}, type.getElementType());
  for (unsigned i = 1; i < 5; ++i)
    if (node.input(i).getType() != channelType)
      return fail(node, rewriter, "scale, B, mean and var must be [C] f32");
  for (unsigned i = 1; i < 3; ++i)
    if (node.isResultUsed(i) && node.resultType(i) != channelType)
      return fail(node, rewriter, "running statistics of an unexpected type");
  SmallVector<int64_t> axes = {0}, keptShape(type.getRank(), 1);
  for (int64_t axis = 2; axis < type.getRank(); ++axis)
    axes.push_back(axis);
  keptShape[1] = channels;
  auto keptType = RankedTensorType::get(keptShape, type.getElementType());
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto scalar = [&](float value) {
    return scalarConstant(rewriter, loc, rewriter.getF32Type(), value);
  };
  auto mean = [&](Value value) {
    return keptMean(node, rewriter, value, axes, keptType);
  };
  Value x = node.input(0);
  Value batchMean = mean(x);
  Value centered = rewriter.create<SubOp>(loc, type, x, batchMean, device);
  Value batchVar =
      mean(rewriter.create<MulOp>(loc, type, centered, centered, device));
  Value shifted = rewriter.create<AddOp>(
      loc, keptType, batchVar, scalar(node.getFloat("epsilon", 1e-5f)), device);
  Value inverse = rewriter.create<ReciprocalOp>(
      loc, keptType, rewriter.create<SqrtOp>(loc, keptType, shifted, device),
      device);
  Value scale = reshapeTo(node, rewriter, node.input(1), keptShape);
  Value bias = reshapeTo(node, rewriter, node.input(2), keptShape);
  Value factor = rewriter.create<MulOp>(loc, keptType, inverse, scale, device);
  Value y = rewriter.create<AddOp>(
      loc, type, rewriter.create<MulOp>(loc, type, centered, factor, device),
      bias, device);
  float momentum = node.getFloat("momentum", 0.9f);
  auto running = [&](Value input, Value batch) -> Value {
    Value kept = rewriter.create<MulOp>(loc, channelType, input,
                                        scalar(momentum), device);
    Value moved = rewriter.create<MulOp>(
        loc, channelType, reshapeTo(node, rewriter, batch, {channels}),
        scalar(1.0f - momentum), device);
    return rewriter.create<AddOp>(loc, channelType, kept, moved, device);
  };
  if (node.isResultUsed(1))
    rewriter.replaceAllUsesWith(node.result(1),
                                running(node.input(3), batchMean));
  if (node.isResultUsed(2))
    rewriter.replaceAllUsesWith(node.result(2),
                                running(node.input(4), batchVar));
  replaceNodeWith(node, y, rewriter);
  return success();
}

/// Inference-form batch normalization with running statistics. Before
/// opset 14 the number of outputs selects the mode: declaring the batch
/// statistics outputs means training mode, where Y is normalized with batch
/// statistics, so such a node stays generic even if nothing reads them.
/// From opset 14 on, training_mode says so. replaceNode refuses a node
/// whose secondary outputs are read.
LogicalResult legalizeBatchNorm(ONNXNode node, PatternRewriter &rewriter) {
  int64_t opset = node.getOpset();
  if (opset >= 14 && node.getInt("training_mode", 0) != 0)
    return legalizeTrainingBatchNorm(node, rewriter);
  if (opset < 14 && declaresSecondaryOutputs(node))
    return rewriter.notifyMatchFailure(node.getOp(), "training mode");
  // BatchNormalization 15 lets scale and B (T1) and mean and var (T2)
  // differ from X's type; hps.batch_norm takes one, as the kernels read.
  SmallVector<Value, 4> statistics;
  Type element = getElementTypeOrSelf(node.input(0).getType());
  for (unsigned i = 1; i < 5; ++i) {
    Value statistic = node.input(i);
    auto type = dyn_cast<RankedTensorType>(statistic.getType());
    if (opset >= 15 && type && type.getElementType() != element &&
        isa<FloatType>(type.getElementType()) && isa<FloatType>(element))
      statistic = rewriter.create<CastOp>(node.getLoc(), type.clone(element),
                                          statistic, DeviceAttr());
    statistics.push_back(statistic);
  }
  FailureOr<BatchNormOp> norm = replaceNodeWithOp<BatchNormOp>(
      node, rewriter, node.input(0), statistics[0], statistics[1],
      statistics[2], statistics[3],
      rewriter.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)), DeviceAttr());
  if (failed(norm))
    return failure();
  // Kept for training with batch statistics, where the running statistics
  // become moving averages with this momentum (--hps-autodiff).
  if (node.hasAttr("momentum"))
    (*norm)->setAttr("hps.momentum",
                     rewriter.getF32FloatAttr(node.getFloat("momentum", 0.9f)));
  return success();
}

/// BatchNormalization 7 (read at opsets 7-8) with spatial=0 keeps
/// per-element statistics, which hps.batch_norm does not express.
LogicalResult legalizeSpatialBatchNorm(ONNXNode node,
                                       PatternRewriter &rewriter) {
  if (node.getInt("spatial", 1) != 1)
    return rewriter.notifyMatchFailure(node.getOp(), "spatial=0");
  return legalizeBatchNorm(node, rewriter);
}

/// BatchNormalization 6: is_test=1 is the inference form; the default,
/// training, normalizes with batch statistics.
LogicalResult legalizeTestBatchNorm(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getInt("is_test", 0) != 1)
    return rewriter.notifyMatchFailure(node.getOp(), "training mode");
  return legalizeSpatialBatchNorm(node, rewriter);
}

/// True unless the input's rank is known and `axis` (default `fallback`)
/// lies outside [-rank, rank).
bool axisIsValid(ONNXNode node, int64_t fallback) {
  auto shape = rankedShape(node.input(0));
  return !shape || node.getAxis("axis", fallback, shape->size()).has_value();
}

/// LayerNormalization 17. stash_type (the precision of the statistics)
/// other than the default float is not expressible. Y is one layer_norm;
/// the Mean and InvStdDev outputs, where read, are rebuilt from reductions
/// over the normalized axes (keeping them as 1s, as ONNX shapes them):
/// mean(x) and 1 / sqrt(mean((x - mean)^2) + epsilon).
LogicalResult legalizeLayerNorm(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getInt("stash_type", 1) != 1)
    return rewriter.notifyMatchFailure(node.getOp(), "stash_type");
  if (!axisIsValid(node, -1))
    return rewriter.notifyMatchFailure(node.getOp(), "axis out of range");
  float epsilon = node.getFloat("epsilon", 1e-5f);
  bool statistics = node.isResultUsed(1) || node.isResultUsed(2);
  if (!statistics)
    return replaceNode<LayerNormOp>(
        node, rewriter, node.input(0), node.input(1), node.input(2),
        rewriter.getI64IntegerAttr(node.getInt("axis", -1)),
        rewriter.getF32FloatAttr(epsilon), DeviceAttr());

  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return fail(node, rewriter, "statistics need a static f32 input");
  int64_t rank = type.getRank();
  int64_t axis = *node.getAxis("axis", -1, rank);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t a : axes)
    keptShape[a] = 1;
  auto keptType = RankedTensorType::get(keptShape, type.getElementType());
  for (unsigned i = 1; i < 3; ++i)
    if (node.isResultUsed(i) && node.resultType(i) != keptType)
      return fail(node, rewriter, "statistics outputs of an unexpected type");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value x = node.input(0);
  Value y = rewriter.create<LayerNormOp>(
      loc, node.resultType(0), x, node.input(1), node.input(2),
      rewriter.getI64IntegerAttr(axis), rewriter.getF32FloatAttr(epsilon),
      device);
  auto mean = [&](Value value) {
    return keptMean(node, rewriter, value, axes, keptType);
  };
  Value average = mean(x);
  Value deviation = rewriter.create<SubOp>(loc, type, x, average, device);
  Value variance =
      mean(rewriter.create<MulOp>(loc, type, deviation, deviation, device));
  Value shifted = rewriter.create<AddOp>(
      loc, keptType, variance,
      scalarConstant(rewriter, loc, rewriter.getF32Type(), epsilon), device);
  Value inverse = rewriter.create<ReciprocalOp>(
      loc, keptType, rewriter.create<SqrtOp>(loc, keptType, shifted, device),
      device);
  Value results[] = {y, average, inverse};
  for (unsigned i = 0; i < 3; ++i)
    if (i == 0 || node.isResultUsed(i))
      rewriter.replaceAllUsesWith(node.result(i), results[i]);
  rewriter.eraseOp(node.getOp());
  return success();
}

/// MeanVarianceNormalization (9-17) over `axes` (default 0, 2, 3), as
/// ONNX's function body defines it: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) +
/// 1e-9), the means kept broadcastable.
LogicalResult legalizeMeanVarianceNorm(ONNXNode node,
                                       PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      !canReplaceWithType(node, type))
    return fail(node, rewriter, "needs a static f32 input");
  const int64_t rank = type.getRank();
  SmallVector<int64_t> axes =
      node.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      return fail(node, rewriter, "axis out of range");
    axis = axis < 0 ? axis + rank : axis;
    keptShape[axis] = 1;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return fail(node, rewriter, "repeated axis");
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto keptType = RankedTensorType::get(keptShape, type.getElementType());
  auto mean = [&](Value value) {
    return keptMean(node, rewriter, value, axes, keptType);
  };
  Value x = node.input(0);
  Value average = mean(x);
  Value meanOfSquares = mean(rewriter.create<MulOp>(loc, type, x, x, device));
  Value squaredMean =
      rewriter.create<MulOp>(loc, keptType, average, average, device);
  Value deviation = rewriter.create<SqrtOp>(
      loc, keptType,
      rewriter.create<SubOp>(loc, keptType, meanOfSquares, squaredMean, device),
      device);
  Value denominator = rewriter.create<AddOp>(
      loc, keptType, deviation,
      scalarConstant(rewriter, loc, rewriter.getF32Type(), 1e-9f), device);
  Value centered = rewriter.create<SubOp>(loc, type, x, average, device);
  return replaceNodeWithCompatible(
      node, rewriter.create<DivOp>(loc, type, centered, denominator, device),
      rewriter);
}

/// layer_norm with unit scale, no bias and the node's epsilon over the last
/// axis of X viewed as `rows` ([N, groups, members]): each (sample, group)
/// normalized with its population variance.
Value normalizeRows(ONNXNode node, PatternRewriter &rewriter,
                    ArrayRef<int64_t> rows) {
  Location loc = node.getLoc();
  Type element = cast<ShapedType>(node.input(0).getType()).getElementType();
  auto onesType = RankedTensorType::get({rows.back()}, element);
  Value ones = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(onesType, rewriter.getFloatAttr(element, 1)));
  return rewriter.create<LayerNormOp>(
      loc, RankedTensorType::get(rows, element),
      reshapeTo(node, rewriter, node.input(0), rows), ones, Value(),
      rewriter.getI64IntegerAttr(2),
      rewriter.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)),
      node.getOp().getDeviceAttr());
}

/// `normalized` viewed as X's `type` [N, C, ...], times the node's scale
/// input [C] plus its bias input [C], each reshaped to [C, 1, ...]; then
/// replaces the node.
LogicalResult scaleAndShiftPerChannel(ONNXNode node, PatternRewriter &rewriter,
                                      Value normalized, RankedTensorType type) {
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> perChannel(shape.size() - 1, 1);
  perChannel[0] = shape[1];
  Value scaled = rewriter.create<MulOp>(
      loc, type, reshapeTo(node, rewriter, normalized, shape),
      reshapeTo(node, rewriter, node.input(1), perChannel), device);
  Value shifted = rewriter.create<AddOp>(
      loc, type, scaled, reshapeTo(node, rewriter, node.input(2), perChannel),
      device);
  return replaceNodeWithCompatible(node, shifted, rewriter);
}

/// InstanceNormalization (6-17): each (sample, channel) normalized over its
/// spatial extent with the population variance, then scaled and shifted per
/// channel. That is a layer_norm over the flattened spatial axis of a
/// [N, C, L] view (unit scale), back to X's shape, times scale [C, 1, ...]
/// plus B [C, 1, ...]; every piece has a kernel and a gradient rule.
LogicalResult legalizeInstanceNorm(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() < 3 || !type.hasStaticShape())
    return fail(node, rewriter, "needs a static [N, C, spatial...] input");
  ArrayRef<int64_t> shape = type.getShape();
  int64_t channels = shape[1];
  int64_t spatial = 1;
  for (int64_t extent : shape.drop_front(2))
    spatial *= extent;
  for (unsigned i = 1; i < 3; ++i) {
    auto param = rankedShape(node.input(i));
    if (!param || param->size() != 1 || (*param)[0] != channels)
      return fail(node, rewriter, "scale and B must be [C]");
  }
  Value normalized =
      normalizeRows(node, rewriter, {shape[0], channels, spatial});
  return scaleAndShiftPerChannel(node, rewriter, normalized, type);
}

/// GroupNormalization on a static [N, C, spatial...]: the C channels fall
/// into num_groups groups of C / num_groups, each (sample, group)
/// normalized over its channels and spatial extent with the population
/// variance: layer_norm over the last axis of a [N, G, C / G * spatial]
/// view. Opset 18 then scales and shifts per group (scale and bias
/// [num_groups], as [G, 1] on the view) and reshapes back; opset 21 (scale
/// and bias [C]; stash_type 1, statistics in f32, is what kernels compute)
/// reshapes back first and applies them per channel, as
/// InstanceNormalization does.
LogicalResult legalizeGroupNorm(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || type.getRank() < 2 || !type.hasStaticShape())
    return fail(node, rewriter, "needs a static [N, C, spatial...] input");
  bool perChannel = node.getOpset() >= 21;
  if (node.getInt("stash_type", 1) != 1)
    return fail(node, rewriter, "stash_type other than 1 (float)");
  ArrayRef<int64_t> shape = type.getShape();
  int64_t groups = node.getInt("num_groups", 0);
  if (groups < 1 || shape[1] % groups != 0)
    return fail(node, rewriter, "num_groups must divide the channels");
  int64_t paramLength = perChannel ? shape[1] : groups;
  for (unsigned i = 1; i < 3; ++i) {
    auto param = rankedShape(node.input(i));
    if (!param || param->size() != 1 || (*param)[0] != paramLength)
      return fail(node, rewriter,
                  "scale and bias must be [num_groups] "
                  "(18) or [C] (21)");
  }
  int64_t members = shape[1] / groups;
  for (int64_t extent : shape.drop_front(2))
    members *= extent;
  Value normalized = normalizeRows(node, rewriter, {shape[0], groups, members});
  if (perChannel)
    return scaleAndShiftPerChannel(node, rewriter, normalized, type);
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto rowsType = cast<RankedTensorType>(normalized.getType());
  SmallVector<int64_t> perGroup = {groups, 1};
  Value scaled = rewriter.create<MulOp>(
      loc, rowsType, normalized,
      reshapeTo(node, rewriter, node.input(1), perGroup), device);
  Value shifted = rewriter.create<AddOp>(
      loc, rowsType, scaled, reshapeTo(node, rewriter, node.input(2), perGroup),
      device);
  return replaceNodeWithCompatible(
      node, reshapeTo(node, rewriter, shifted, shape), rewriter);
}

/// RMSNormalization (23) on a static float X, as ONNX's function body
/// defines it: X / sqrt(mean(X^2 over the axes from `axis` on) + epsilon)
/// * scale, the scale broadcast to X. stash_type 1 (float statistics) is
/// what the f32 kernels compute.
LogicalResult legalizeRMSNorm(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto scaleShape = rankedShape(node.input(1));
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      !scaleShape || !canReplaceWithType(node, type))
    return fail(node, rewriter, "needs a static f32 input and a ranked scale");
  if (node.getInt("stash_type", 1) != 1)
    return fail(node, rewriter, "stash_type other than 1 (float)");
  if (getElementTypeOrSelf(node.input(1).getType()) != type.getElementType() ||
      !shapes::broadcastsTo(*scaleShape, type.getShape()))
    return fail(node, rewriter, "scale must broadcast to X in X's type");
  const int64_t rank = type.getRank();
  std::optional<int64_t> axis = node.getAxis("axis", -1, rank);
  if (!axis)
    return fail(node, rewriter, "axis out of range");
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(*axis, rank));
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t a : axes)
    keptShape[a] = 1;
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto keptType = RankedTensorType::get(keptShape, type.getElementType());
  Value x = node.input(0);
  Value meanSquare =
      keptMean(node, rewriter, rewriter.create<MulOp>(loc, type, x, x, device),
               axes, keptType);
  Value rms = rewriter.create<SqrtOp>(
      loc, keptType,
      rewriter.create<AddOp>(loc, keptType, meanSquare,
                             scalarConstant(rewriter, loc,
                                            type.getElementType(),
                                            node.getFloat("epsilon", 1e-5f)),
                             device),
      device);
  Value normalized = rewriter.create<DivOp>(loc, type, x, rms, device);
  return replaceNodeWithCompatible(
      node,
      rewriter.create<MulOp>(loc, type, normalized, node.input(1), device),
      rewriter);
}

/// LRN (1-17) on a static [N, C, ...]: x * (bias + alpha / size *
/// square_sum)^-beta, where square_sum adds x^2 over the channels
/// [c - floor((size-1)/2), c + ceil((size-1)/2)]. That window sum is an
/// avg_pool (pads counted, so the mean is the sum / size) of x^2 viewed as
/// [N, 1, C, spatial]; no kernel of its own, and the gradient comes from
/// the rules of mul, avg_pool, add and pow.
LogicalResult legalizeLRN(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
      !isa<FloatType>(type.getElementType()))
    return fail(node, rewriter, "needs a static float [N, C, ...] input");
  if (!node.hasAttr("size") || node.getInt("size", 0) < 1)
    return fail(node, rewriter, "size must be positive");
  int64_t size = node.getInt("size", 1);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t spatial = 1;
  for (int64_t extent : shape.drop_front(2))
    spatial *= extent;
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type element = type.getElementType();
  auto scalar = [&](double value) -> Value {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                    rewriter.getFloatAttr(element, value)));
  };
  SmallVector<int64_t> view = {shape[0], 1, shape[1], spatial};
  auto viewType = RankedTensorType::get(view, element);
  Value x = node.input(0);
  Value squares = rewriter.create<MulOp>(loc, type, x, x, device);
  Value mean = rewriter.create<AvgPoolOp>(
      loc, viewType, reshapeTo(node, rewriter, squares, view),
      rewriter.getDenseI64ArrayAttr({size, 1}),
      rewriter.getDenseI64ArrayAttr({1, 1}),
      rewriter.getDenseI64ArrayAttr({(size - 1) / 2, 0, size / 2, 0}),
      rewriter.getDenseI64ArrayAttr({1, 1}), UnitAttr(), rewriter.getUnitAttr(),
      device);
  Value scaled = rewriter.create<MulOp>(
      loc, viewType, mean, scalar(node.getFloat("alpha", 1e-4f)), device);
  Value shifted = rewriter.create<AddOp>(
      loc, viewType, scaled, scalar(node.getFloat("bias", 1.0f)), device);
  Value factor = rewriter.create<PowOp>(
      loc, viewType, shifted, scalar(-node.getFloat("beta", 0.75f)), device);
  Value result = rewriter.create<MulOp>(
      loc, type, x, reshapeTo(node, rewriter, factor, shape), device);
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// Softmax and LogSoftmax before opset 13 coerce the input to 2-D at `axis`
/// (default 1) and normalize each row: a softmax over every axis from
/// `axis` on. When the axes after `axis` are all of size 1 (in particular
/// when `axis` is the last) that is one hps op along `axis`; otherwise
/// flatten -> softmax over axis 1 -> reshape back, which needs static axes
/// from `axis` on and at most one dynamic axis before it (the reshape's -1).
template <typename SoftmaxLike>
LogicalResult legalizeCoercedSoftmax(ONNXNode node, PatternRewriter &rewriter) {
  auto shape = rankedShape(node.input(0));
  if (!shape)
    return rewriter.notifyMatchFailure(node.getOp(), "unranked input");
  int64_t rank = shape->size();
  std::optional<int64_t> axisIndex = node.getAxis("axis", 1, rank);
  if (!axisIndex)
    return rewriter.notifyMatchFailure(node.getOp(), "axis out of range");
  int64_t axis = *axisIndex;
  ArrayRef<int64_t> trailing = shape->drop_front(axis + 1);
  if (llvm::all_of(trailing, [](int64_t dim) { return dim == 1; }))
    return replaceNode<SoftmaxLike>(
        node, rewriter, node.input(0),
        rewriter.getI64IntegerAttr(axis == rank - 1 ? -1 : axis), DeviceAttr());

  std::optional<int64_t> inner = shapes::elementCount(shape->drop_front(axis));
  SmallVector<int64_t> target(*shape);
  int64_t dynamicOuter = 0;
  for (int64_t &dim : MutableArrayRef(target).take_front(axis))
    if (dim == ShapedType::kDynamic) {
      dim = -1;
      ++dynamicOuter;
    }
  if (!inner || dynamicOuter > 1 ||
      (dynamicOuter && llvm::is_contained(target, 0)))
    return rewriter.notifyMatchFailure(node.getOp(), "dynamic shape");
  std::optional<int64_t> outer = shapes::elementCount(shape->take_front(axis));

  Type element = cast<ShapedType>(node.input(0).getType()).getElementType();
  auto flatType = RankedTensorType::get(
      {outer.value_or(ShapedType::kDynamic), *inner}, element);
  DeviceAttr device = node.getOp().getDeviceAttr();
  Location loc = node.getLoc();
  Value flat = rewriter.create<FlattenOp>(
      loc, flatType, node.input(0), rewriter.getI64IntegerAttr(axis), device);
  Value normalized = rewriter.create<SoftmaxLike>(
      loc, flatType, flat, rewriter.getI64IntegerAttr(1), device);
  // A 0 in the target is an empty axis, not a copy of the input's.
  UnitAttr allowZero =
      llvm::is_contained(target, 0) ? rewriter.getUnitAttr() : UnitAttr();
  Value back = rewriter.create<ReshapeOp>(loc, node.resultType(), normalized,
                                          rewriter.getDenseI64ArrayAttr(target),
                                          allowZero, device);
  replaceNodeWith(node, back, rewriter);
  return success();
}

/// Softmax and LogSoftmax 13+: one axis, default -1.
template <typename SoftmaxLike>
LogicalResult legalizeAxisSoftmax(ONNXNode node, PatternRewriter &rewriter) {
  if (!axisIsValid(node, -1))
    return rewriter.notifyMatchFailure(node.getOp(), "axis out of range");
  return replaceNode<SoftmaxLike>(
      node, rewriter, node.input(0),
      rewriter.getI64IntegerAttr(node.getInt("axis", -1)), DeviceAttr());
}

} // namespace

void populateNormalizationPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "BatchNormalization", 6, 6,
                 {"epsilon", "is_test", "momentum", "spatial"},
                 legalizeTestBatchNorm);
  addONNXPattern(patterns, "BatchNormalization", 7, 8,
                 legalizeSpatialBatchNorm);
  addONNXPattern(patterns, "BatchNormalization", 9, 13, legalizeBatchNorm);
  addONNXPattern(patterns, "BatchNormalization", 14, kMaxOpset,
                 legalizeBatchNorm);
  addONNXPattern(patterns, "InstanceNormalization", kMinOpset, kMaxOpset,
                 {"epsilon"}, legalizeInstanceNorm);
  addONNXPattern(patterns, "GroupNormalization", 18, 20,
                 {"epsilon", "num_groups"}, legalizeGroupNorm);
  addONNXPattern(patterns, "GroupNormalization", 21, kMaxOpset,
                 {"epsilon", "num_groups", "stash_type"}, legalizeGroupNorm);
  addONNXPattern(patterns, "MeanVarianceNormalization", 9, kMaxOpset, {"axes"},
                 legalizeMeanVarianceNorm);
  addONNXPattern(patterns, "RMSNormalization", 23, kMaxOpset,
                 {"axis", "epsilon", "stash_type"}, legalizeRMSNorm);
  addONNXPattern(patterns, "LRN", kMinOpset, kMaxOpset,
                 {"alpha", "beta", "bias", "size"}, legalizeLRN);
  addONNXPattern(patterns, "LayerNormalization", 17, kMaxOpset,
                 legalizeLayerNorm);
  addONNXPattern(patterns, "Softmax", kMinOpset, 12,
                 legalizeCoercedSoftmax<SoftmaxOp>);
  addONNXPattern(patterns, "Softmax", 13, kMaxOpset,
                 legalizeAxisSoftmax<SoftmaxOp>);
  addONNXPattern(patterns, "LogSoftmax", kMinOpset, 12,
                 legalizeCoercedSoftmax<LogSoftmaxOp>);
  addONNXPattern(patterns, "LogSoftmax", 13, kMaxOpset,
                 legalizeAxisSoftmax<LogSoftmaxOp>);
}

} // namespace heterps::hps
