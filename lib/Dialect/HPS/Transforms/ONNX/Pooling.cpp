//===- Pooling.cpp - MaxPool, AveragePool, LpPool, global pools -----------===//
//
// Schema history (attributes beyond auto_pad, kernel_shape, pads, strides):
//   MaxPool-1 (7): none          MaxPool-8: storage_order, optional Indices
//   MaxPool-10: ceil_mode, dilations    MaxPool-11/12: SAME_* restated, int8
//   AveragePool-7: count_include_pad    AveragePool-10: ceil_mode
//   AveragePool-11: SAME_* restated    AveragePool-19: dilations
//   LpPool-2: p an int    LpPool-11: SAME_* restated
//   LpPool-18: ceil_mode, dilations
// storage_order only lays out Indices. A read Indices output is computed
// from the windows gathered explicitly (legalizeMaxPoolWithIndices); the
// values still come from hps.max_pool.
// MaxUnpool-9/11 scatters into zeros at those indices.
// MaxPool-12's u8 and i8 inputs (quantized models pool them) are pooled in
// f32, which holds them exactly, between two casts.
//
//===----------------------------------------------------------------------===//

#include "WindowAttrs.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Bounds of the explicit-window form: its constant tables hold a key per
/// (output position, kernel offset), and keys travel as exact f32.
constexpr int64_t kMaxWindowPositions = int64_t(1) << 22;
constexpr int64_t kMaxExactFloatKey = int64_t(1) << 24;

/// MaxPool (8+) whose Indices output is read, on a static f32 input. The
/// values are hps.max_pool's. The indices: every window is gathered from
/// the flattened input (positions outside it read -inf), the first
/// position of the window in row-major scan order that holds the maximum
/// is kept (as ONNX runtimes scan), and it is flattened over the whole
/// input row-major, or with the spatial axes column-major when
/// storage_order is 1. A window holding NaN has no position equal to its
/// maximum and gives an index past its channel.
LogicalResult legalizeMaxPoolWithIndices(ONNXNode node,
                                         PatternRewriter &rewriter,
                                         const WindowAttrs &window, bool ceil,
                                         bool columnMajor) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto valuesType = dyn_cast<RankedTensorType>(node.resultType(0));
  auto indicesType = dyn_cast<RankedTensorType>(node.resultType(1));
  if (!x || !valuesType || !indicesType || !x.hasStaticShape() ||
      !valuesType.hasStaticShape() || x.getRank() < 3 ||
      !x.getElementType().isF32() ||
      indicesType.getShape() != valuesType.getShape() ||
      !indicesType.getElementType().isInteger(64))
    return fail(node, rewriter,
                "Indices need a static f32 input and i64 indices");
  const int64_t rank = x.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> in = x.getShape().drop_front(2);
  ArrayRef<int64_t> out = valuesType.getShape().drop_front(2);
  const int64_t batch = x.getDimSize(0), channels = x.getDimSize(1);
  int64_t area = 1, outputs = 1, taps = 1;
  for (int64_t d = 0; d < spatial; ++d) {
    area *= in[d];
    outputs *= out[d];
    taps *= window.kernel[d];
  }
  if (area >= kMaxExactFloatKey || outputs * taps > kMaxWindowPositions)
    return fail(node, rewriter, "too large for explicit windows");
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto createPool = [&](OpBuilder &builder) {
    return builder.create<MaxPoolOp>(
        loc, valuesType, node.input(0),
        builder.getDenseI64ArrayAttr(window.kernel),
        builder.getDenseI64ArrayAttr(window.strides),
        builder.getDenseI64ArrayAttr(window.pads),
        builder.getDenseI64ArrayAttr(window.dilations), unitIf(builder, ceil),
        device);
  };
  if (!probeVerifies(rewriter.getContext(), createPool))
    return fail(node, rewriter, "the hps op would not verify");

  // Per (output position, kernel offset): the input position it reads,
  // row-major over the spatial axes, or `area` outside the input.
  SmallVector<int64_t> keys;
  keys.reserve(outputs * taps);
  SmallVector<int64_t> o(spatial, 0);
  for (int64_t flatOut = 0; flatOut < outputs; ++flatOut) {
    SmallVector<int64_t> q(spatial, 0);
    for (int64_t flatTap = 0; flatTap < taps; ++flatTap) {
      int64_t position = 0;
      bool inside = true;
      for (int64_t d = 0; d < spatial; ++d) {
        const int64_t i = o[d] * window.strides[d] - window.pads[d] +
                          q[d] * window.dilations[d];
        inside &= i >= 0 && i < in[d];
        position = position * in[d] + i;
      }
      keys.push_back(inside ? position : area);
      for (int64_t d = spatial - 1; d >= 0 && ++q[d] == window.kernel[d]; --d)
        q[d] = 0;
    }
    for (int64_t d = spatial - 1; d >= 0 && ++o[d] == out[d]; --d)
      o[d] = 0;
  }
  SmallVector<int64_t> tableShape(out);
  tableShape.push_back(taps);
  Type f32 = rewriter.getF32Type(), i64 = rewriter.getI64Type();
  auto constant = [&](ArrayRef<int64_t> shape, Type element,
                      auto values) -> Value {
    return rewriter.create<ConstantOp>(
        loc,
        DenseElementsAttr::get(RankedTensorType::get(shape, element), values));
  };

  // The windows: [N, C, out..., taps] from [N, C, area + 1], the last
  // column -inf for positions outside the input.
  Value flat =
      reshapeTo(node, rewriter, node.input(0), {batch, channels, area});
  Value outside =
      constant({batch, channels, 1}, f32,
               ArrayRef<float>(-std::numeric_limits<float>::infinity()));
  Value padded = rewriter.create<ConcatOp>(
      loc, RankedTensorType::get({batch, channels, area + 1}, f32),
      ValueRange{flat, outside}, rewriter.getI64IntegerAttr(2), device);
  SmallVector<int64_t> windowsShape{batch, channels};
  windowsShape.append(tableShape.begin(), tableShape.end());
  Value windows = rewriter.create<GatherOp>(
      loc, RankedTensorType::get(windowsShape, f32), padded,
      constant(tableShape, i64, ArrayRef<int64_t>(keys)),
      rewriter.getI64IntegerAttr(2), device);
  SmallVector<int64_t> keptShape(windowsShape);
  keptShape.back() = 1;
  MLIRContext *context = rewriter.getContext();
  auto lastAxis = rewriter.getDenseI64ArrayAttr({rank});
  Value maximum = rewriter.create<ReduceOp>(
      loc, RankedTensorType::get(keptShape, f32),
      ReduceKindAttr::get(context, ReduceKind::Max), windows, lastAxis,
      rewriter.getUnitAttr(), device);
  Value hits = rewriter.create<EqualOp>(
      loc, RankedTensorType::get(windowsShape, rewriter.getI1Type()), windows,
      maximum, device);
  SmallVector<float> floatKeys(keys.begin(), keys.end());
  Value candidates = rewriter.create<WhereOp>(
      loc, RankedTensorType::get(windowsShape, f32), hits,
      constant(tableShape, f32, ArrayRef<float>(floatKeys)),
      scalarConstant(rewriter, loc, f32, double(area)), device);
  SmallVector<int64_t> resultShape(valuesType.getShape());
  Value first =
      rewriter.create<ReduceOp>(loc, RankedTensorType::get(resultShape, f32),
                                ReduceKindAttr::get(context, ReduceKind::Min),
                                candidates, lastAxis, UnitAttr(), device);
  Value chosen = rewriter.create<CastOp>(loc, indicesType, first, device);
  if (columnMajor) {
    // Row-major position -> the same element's column-major position.
    SmallVector<int64_t> columnOf(area + 1, area);
    for (int64_t position = 0; position < area; ++position) {
      int64_t rest = position, column = 0, stride = 1;
      SmallVector<int64_t> index(spatial);
      for (int64_t d = spatial - 1; d >= 0; --d) {
        index[d] = rest % in[d];
        rest /= in[d];
      }
      for (int64_t d = 0; d < spatial; ++d) {
        column += index[d] * stride;
        stride *= in[d];
      }
      columnOf[position] = column;
    }
    chosen = rewriter.create<GatherOp>(
        loc, indicesType,
        constant({area + 1}, i64, ArrayRef<int64_t>(columnOf)), chosen,
        rewriter.getI64IntegerAttr(0), device);
  }
  // Whole-tensor positions: + (n * C + c) * area.
  SmallVector<int64_t> offsetShape{batch, channels};
  offsetShape.append(spatial, 1);
  SmallVector<int64_t> offsets(batch * channels);
  for (int64_t i = 0; i < batch * channels; ++i)
    offsets[i] = i * area;
  Value indices = rewriter.create<AddOp>(
      loc, indicesType, chosen,
      constant(offsetShape, i64, ArrayRef<int64_t>(offsets)), device);
  MaxPoolOp pool = createPool(rewriter);
  rewriter.replaceOp(node.getOp(), ValueRange{pool.getResult(), indices});
  return success();
}

/// MaxPool of u8 or i8 (12+): cast to f32, pooled, cast back; exact.
LogicalResult legalizeMaxPoolOfBytes(ONNXNode node, PatternRewriter &rewriter,
                                     const WindowAttrs &window, bool ceil) {
  auto x = cast<RankedTensorType>(node.input(0).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!result || result.getElementType() != x.getElementType())
    return fail(node, rewriter, "the result's type differs from x's");
  Type f32 = rewriter.getF32Type();
  auto createPool = [&](OpBuilder &builder, Value input) {
    return builder.create<MaxPoolOp>(
        node.getLoc(), result.clone(f32), input,
        builder.getDenseI64ArrayAttr(window.kernel),
        builder.getDenseI64ArrayAttr(window.strides),
        builder.getDenseI64ArrayAttr(window.pads),
        builder.getDenseI64ArrayAttr(window.dilations), unitIf(builder, ceil),
        node.getOp().getDeviceAttr());
  };
  if (!probeVerifies(rewriter.getContext(), [&](OpBuilder &builder) {
        return createPool(builder, node.input(0));
      }))
    return fail(node, rewriter, "the hps op would not verify");
  DeviceAttr device = node.getOp().getDeviceAttr();
  Value input = rewriter.create<CastOp>(node.getLoc(), x.clone(f32),
                                        node.input(0), device);
  Value pooled = createPool(rewriter, input);
  return replaceNodeWithCompatible(
      node, rewriter.create<CastOp>(node.getLoc(), result, pooled, device),
      rewriter);
}

/// Window pooling with every attribute the node's opset defines; absent
/// ones take their ONNX defaults (floor mode, dilation 1, pads excluded
/// from averages).
template <typename PoolOp>
LogicalResult legalizeWindowPool(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel || llvm::any_of(*kernel, [](int64_t k) { return k < 1; }))
    return fail(node, rewriter, "kernel_shape missing or invalid");
  FailureOr<WindowAttrs> window = resolveWindow(node, *kernel);
  if (failed(window))
    return fail(node, rewriter, "unresolved window attributes");
  std::optional<bool> ceil = getFlag(node, "ceil_mode");
  if (!ceil || !getFlag(node, "storage_order"))
    return fail(node, rewriter, "unknown ceil_mode or storage_order");
  auto create = [&](auto... extra) {
    // A used Indices output makes replaceNode fail.
    return replaceNodeChecked<PoolOp>(
        node, rewriter, node.input(0),
        rewriter.getDenseI64ArrayAttr(window->kernel),
        rewriter.getDenseI64ArrayAttr(window->strides),
        rewriter.getDenseI64ArrayAttr(window->pads),
        rewriter.getDenseI64ArrayAttr(window->dilations),
        unitIf(rewriter, *ceil), extra..., DeviceAttr());
  };
  if constexpr (std::is_same_v<PoolOp, AvgPoolOp>) {
    std::optional<bool> includePad = getFlag(node, "count_include_pad");
    if (!includePad)
      return fail(node, rewriter, "unknown count_include_pad");
    return create(unitIf(rewriter, *includePad));
  } else {
    auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
    if (x && x.getElementType().isInteger(8) && !node.isResultUsed(1))
      return legalizeMaxPoolOfBytes(node, rewriter, *window, *ceil);
    if (node.isResultUsed(1))
      return legalizeMaxPoolWithIndices(node, rewriter, *window, *ceil,
                                        *getFlag(node, "storage_order"));
    return create();
  }
}

/// MaxUnpool (9, 11): zeros of the default shape ((in - 1) * stride +
/// kernel - pads per spatial axis) with X written at the whole-tensor
/// positions in I, as MaxPool's Indices give them (an hps.scatter on the
/// flattened tensor), then zeros appended at the end of each spatial axis
/// up to output_shape when it is given (as the ONNX reference and
/// onnxruntime do). A run-time index outside [0, default size) stops the
/// run.
LogicalResult legalizeMaxUnpool(ONNXNode node, PatternRewriter &rewriter) {
  auto x = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto indicesType = dyn_cast<RankedTensorType>(node.input(1).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!x || !indicesType || !result || !x.hasStaticShape() || x.getRank() < 3 ||
      indicesType.getShape() != x.getShape() ||
      !indicesType.getElementType().isInteger(64) ||
      result.getElementType() != x.getElementType())
    return fail(node, rewriter, "needs static X and i64 indices of its shape");
  const int64_t rank = x.getRank(), spatial = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  SmallVector<int64_t> strides(spatial, 1), pads(2 * spatial, 0);
  if (auto given = node.getInts("strides"))
    strides = *given;
  if (auto given = node.getInts("pads"))
    pads = *given;
  if (!kernel || static_cast<int64_t>(kernel->size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return fail(node, rewriter, "kernel_shape, strides or pads malformed");
  SmallVector<int64_t> shape{x.getDimSize(0), x.getDimSize(1)};
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back((x.getDimSize(2 + d) - 1) * strides[d] + (*kernel)[d] -
                    pads[d] - pads[spatial + d]);
  SmallVector<int64_t> padded = shape;
  if (Value outputShape = node.input(2);
      outputShape && !isa<NoneType>(outputShape.getType())) {
    std::optional<SmallVector<int64_t>> given = getConstantInts(outputShape);
    if (!given)
      return fail(node, rewriter, "output_shape is not a constant");
    padded = *given;
    if (padded.size() != shape.size() || padded[0] != shape[0] ||
        padded[1] != shape[1] ||
        llvm::any_of(llvm::seq<size_t>(2, shape.size()),
                     [&](size_t d) { return padded[d] < shape[d]; }))
      return fail(node, rewriter, "output_shape below the default shape");
  }
  if (!result.hasStaticShape() ||
      ArrayRef<int64_t>(padded) != result.getShape())
    return fail(node, rewriter, "the output shape differs from the result's");
  int64_t total = 1;
  for (int64_t extent : shape)
    total *= extent;
  if (total <= 0)
    return fail(node, rewriter, "an empty output");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type element = x.getElementType();
  auto flatType = RankedTensorType::get({total}, element);
  Value zeros = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(flatType, makeScalarAttr(element, 0)));
  Value positions = node.input(1);
  if (!getConstantInts(positions)) {
    // A negative index would count from the end; send it past the end.
    Type i64 = rewriter.getI64Type();
    positions = rewriter.create<WhereOp>(
        loc, indicesType,
        rewriter.create<GreaterEqualOp>(
            loc, RankedTensorType::get(x.getShape(), rewriter.getI1Type()),
            positions, scalarConstant(rewriter, loc, i64, 0), device),
        positions, scalarConstant(rewriter, loc, i64, double(total)), device);
  }
  Value scattered = rewriter.create<ScatterOp>(
      loc, flatType, zeros, positions, node.input(0),
      rewriter.getI64IntegerAttr(0),
      ScatterReductionAttr::get(rewriter.getContext(), ScatterReduction::None),
      device);
  Value y = reshapeTo(node, rewriter, scattered, shape);
  if (padded != shape) {
    SmallVector<int64_t> growth(2 * rank, 0);
    for (int64_t d = 2; d < rank; ++d)
      growth[rank + d] = padded[d] - shape[d];
    y = rewriter.create<PadOp>(
        loc, result, y, rewriter.getDenseI64ArrayAttr(growth),
        PadModeAttr::get(rewriter.getContext(), PadMode::Constant),
        makeScalarAttr(element, 0), device);
  }
  return replaceNodeWithCompatible(node, y, rewriter);
}

/// LpPool (2-17: auto_pad, kernel_shape, p, pads, strides; 18 adds
/// ceil_mode and dilations) on a static f32 [N, C, spatial...]: each
/// window's (sum |x|^p)^(1/p), pads adding zeros. |x|^p (x * x for p = 2,
/// |x| for 1, else pow) summed by a depthwise hps.conv with a ones filter
/// [C, 1, kernel...], then sqrt (p = 2) or pow(1 / p); every piece has a
/// gradient rule. ceil_mode stays generic where it adds a window.
LogicalResult legalizeLpPool(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  if (!type || !type.hasStaticShape() || type.getRank() < 3 ||
      !type.getElementType().isF32() || !result || !result.hasStaticShape())
    return fail(node, rewriter, "needs a static f32 [N, C, spatial...]");
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (!kernel || llvm::any_of(*kernel, [](int64_t k) { return k < 1; }))
    return fail(node, rewriter, "kernel_shape missing or invalid");
  FailureOr<WindowAttrs> window = resolveWindow(node, *kernel);
  std::optional<bool> ceil = getFlag(node, "ceil_mode");
  int64_t p = node.getInt("p", 2);
  if (failed(window) || !ceil || p < 1)
    return fail(node, rewriter, "unresolved window, ceil_mode or p");
  size_t n = kernel->size();
  SmallVector<int64_t> floorShape = {type.getDimSize(0), type.getDimSize(1)};
  for (size_t i = 0; i < n; ++i) {
    int64_t count = shapes::windowCount(
        type.getDimSize(2 + i), (*kernel)[i], window->strides[i],
        window->pads[i], window->pads[n + i], window->dilations[i],
        /*ceilMode=*/false);
    if (count < 1)
      return fail(node, rewriter, "window larger than the padded input");
    floorShape.push_back(count);
  }
  if (ArrayRef<int64_t>(floorShape) != result.getShape())
    return fail(node, rewriter, "ceil_mode adds a window, or a shape differs");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type f32 = rewriter.getF32Type();
  Value x = node.input(0);
  Value powered =
      p == 1 ? rewriter.create<AbsOp>(loc, type, x, device).getResult()
      : p == 2
          ? rewriter.create<MulOp>(loc, type, x, x, device).getResult()
          : rewriter
                .create<PowOp>(loc, type,
                               rewriter.create<AbsOp>(loc, type, x, device),
                               scalarConstant(rewriter, loc, f32, p), device)
                .getResult();
  int64_t channels = type.getDimSize(1);
  SmallVector<int64_t> filterShape = {channels, 1};
  filterShape.append(kernel->begin(), kernel->end());
  Value ones = rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get(filterShape, f32),
                                  rewriter.getF32FloatAttr(1)));
  Value sums = rewriter.create<ConvOp>(
      loc, result, powered, ones, Value(),
      rewriter.getDenseI64ArrayAttr(window->strides),
      rewriter.getDenseI64ArrayAttr(window->pads),
      rewriter.getDenseI64ArrayAttr(window->dilations),
      rewriter.getI64IntegerAttr(channels), device, UnitAttr());
  Value norm =
      p == 1   ? sums
      : p == 2 ? rewriter.create<SqrtOp>(loc, result, sums, device).getResult()
               : rewriter
                     .create<PowOp>(loc, result, sums,
                                    scalarConstant(rewriter, loc, f32, 1.0 / p),
                                    device)
                     .getResult();
  return replaceNodeWithCompatible(node, norm, rewriter);
}

/// GlobalLpPool (2+, p) on an f32 [N, C, spatial...]: hps.reduce over the
/// spatial axes, keeping them: L1 for p = 1, L2 for p = 2, else the sum of
/// |x|^p to the power 1 / p.
LogicalResult legalizeGlobalLpPool(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  int64_t p = node.getInt("p", 2);
  if (!type || type.getRank() < 3 || !type.getElementType().isF32() || p < 1)
    return fail(node, rewriter, "needs an f32 [N, C, spatial...] and p >= 1");
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(2, type.getRank()));
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  MLIRContext *context = rewriter.getContext();
  auto reduce = [&](ReduceKind kind, Value value) -> Value {
    return rewriter.create<ReduceOp>(
        loc, node.resultType(), ReduceKindAttr::get(context, kind), value,
        rewriter.getDenseI64ArrayAttr(axes), rewriter.getUnitAttr(), device);
  };
  if (!canReplaceWithType(node, node.resultType()))
    return fail(node, rewriter, "result type");
  if (p <= 2)
    return replaceNodeWithCompatible(
        node, reduce(p == 1 ? ReduceKind::L1 : ReduceKind::L2, node.input(0)),
        rewriter);
  Type f32 = rewriter.getF32Type();
  Value powered = rewriter.create<PowOp>(
      loc, type, rewriter.create<AbsOp>(loc, type, node.input(0), device),
      scalarConstant(rewriter, loc, f32, p), device);
  Value sums = reduce(ReduceKind::Sum, powered);
  return replaceNodeWithCompatible(
      node,
      rewriter.create<PowOp>(loc, sums.getType(), sums,
                             scalarConstant(rewriter, loc, f32, 1.0 / p),
                             device),
      rewriter);
}

template <typename PoolOp>
LogicalResult legalizeGlobalPool(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNodeChecked<PoolOp>(node, rewriter, node.input(0),
                                    DeviceAttr());
}

} // namespace

void populatePoolingPatterns(RewritePatternSet &patterns) {
  auto maxPool = legalizeWindowPool<MaxPoolOp>;
  auto avgPool = legalizeWindowPool<AvgPoolOp>;
  addONNXPattern(patterns, "MaxPool", kMinOpset, 7,
                 {"auto_pad", "kernel_shape", "pads", "strides"}, maxPool);
  addONNXPattern(
      patterns, "MaxPool", 8, 9,
      {"auto_pad", "kernel_shape", "pads", "storage_order", "strides"},
      maxPool);
  static constexpr StringRef kMaxPool10[] = {
      "auto_pad", "ceil_mode",     "dilations", "kernel_shape",
      "pads",     "storage_order", "strides"};
  addONNXPattern(patterns, "MaxPool", 10, 10, kMaxPool10, maxPool);
  addONNXPattern(patterns, "MaxPool", 11, kMaxOpset, kMaxPool10, maxPool);

  addONNXPattern(
      patterns, "AveragePool", kMinOpset, 9,
      {"auto_pad", "count_include_pad", "kernel_shape", "pads", "strides"},
      avgPool);
  static constexpr StringRef kAvgPool10[] = {
      "auto_pad",     "ceil_mode", "count_include_pad",
      "kernel_shape", "pads",      "strides"};
  addONNXPattern(patterns, "AveragePool", 10, 10, kAvgPool10, avgPool);
  addONNXPattern(patterns, "AveragePool", 11, 18, kAvgPool10, avgPool);
  static constexpr StringRef kAvgPool19[] = {
      "auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
      "pads",     "strides"};
  addONNXPattern(patterns, "AveragePool", 19, kMaxOpset, kAvgPool19, avgPool);

  addONNXPattern(patterns, "MaxUnpool", 9, kMaxOpset,
                 {"kernel_shape", "pads", "strides"}, legalizeMaxUnpool);

  static constexpr StringRef kLpPool2[] = {"auto_pad", "kernel_shape", "p",
                                           "pads", "strides"};
  addONNXPattern(patterns, "LpPool", kMinOpset, 10, kLpPool2, legalizeLpPool);
  addONNXPattern(patterns, "LpPool", 11, 17, kLpPool2, legalizeLpPool);
  static constexpr StringRef kLpPool18[] = {
      "auto_pad", "ceil_mode", "dilations", "kernel_shape",
      "p",        "pads",      "strides"};
  addONNXPattern(patterns, "LpPool", 18, kMaxOpset, kLpPool18, legalizeLpPool);

  addONNXPattern(patterns, "GlobalLpPool", kMinOpset, kMaxOpset, {"p"},
                 legalizeGlobalLpPool);
  addONNXPattern(patterns, "GlobalMaxPool", kMinOpset, kMaxOpset, {},
                 legalizeGlobalPool<GlobalMaxPoolOp>);
  addONNXPattern(patterns, "GlobalAveragePool", kMinOpset, kMaxOpset, {},
                 legalizeGlobalPool<GlobalAvgPoolOp>);
}

} // namespace heterps::hps
