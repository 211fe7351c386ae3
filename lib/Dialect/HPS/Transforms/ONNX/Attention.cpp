//===- Attention.cpp - Attention, RotaryEmbedding, TensorScatter ----------===//
//
// The transformer ops of opsets 23 to 25 (Attention, RotaryEmbedding, and
// TensorScatter, the KV-cache update), decomposed into hps ops that have
// kernels on every device and gradient rules: matmul, softmax, transpose,
// reshape, where, add, mul, slice, concat, gather. torch.onnx writes
// Attention for scaled_dot_product_attention from opset 23. Static shapes
// only; a node this file cannot take stays generic and the strict pass
// names it.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace heterps::hps {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

/// Builds hps ops at a node's location and placement, computing each
/// result's static shape.
class Emitter {
public:
  Emitter(ONNXNode node, PatternRewriter &rewriter)
      : node(node), rewriter(rewriter), loc(node.getLoc()),
        device(node.getOp().getDeviceAttr()) {}

  static ArrayRef<int64_t> shapeOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getShape();
  }
  static Type elementOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getElementType();
  }

  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    return binaryTo<OpTy>(elementOf(lhs), lhs, rhs);
  }
  /// A binary op whose result element type is `element` (comparisons).
  template <typename OpTy> Value binaryTo(Type element, Value lhs, Value rhs) {
    SmallVector<int64_t> shape = *shapes::broadcast(shapeOf(lhs), shapeOf(rhs));
    auto type = RankedTensorType::get(shape, element);
    if constexpr (std::is_same_v<OpTy, ModOp>)
      return rewriter.create<ModOp>(loc, type, lhs, rhs, UnitAttr(), device);
    else
      return rewriter.create<OpTy>(loc, type, lhs, rhs, device);
  }
  template <typename OpTy> Value unary(Value x) {
    return rewriter.create<OpTy>(loc, x.getType(), x, device);
  }
  Value where(Value condition, Value x, Value y) {
    SmallVector<int64_t> shape = *shapes::broadcast(
        *shapes::broadcast(shapeOf(condition), shapeOf(x)), shapeOf(y));
    return rewriter.create<WhereOp>(loc,
                                    RankedTensorType::get(shape, elementOf(x)),
                                    condition, x, y, device);
  }
  Value reshape(Value value, ArrayRef<int64_t> shape) {
    return reshapeTo(node, rewriter, value, shape);
  }
  Value transpose(Value value, ArrayRef<int64_t> perm) {
    SmallVector<int64_t> shape;
    for (int64_t axis : perm)
      shape.push_back(shapeOf(value)[axis]);
    return rewriter.create<TransposeOp>(
        loc, RankedTensorType::get(shape, elementOf(value)), value,
        rewriter.getDenseI64ArrayAttr(perm), device);
  }
  Value matmul(Value a, Value b) {
    ArrayRef<int64_t> left = shapeOf(a), right = shapeOf(b);
    SmallVector<int64_t> shape =
        *shapes::broadcast(left.drop_back(2), right.drop_back(2));
    shape.push_back(left[left.size() - 2]);
    shape.push_back(right.back());
    return rewriter.create<MatMulOp>(
        loc, RankedTensorType::get(shape, elementOf(a)), a, b, device);
  }
  /// Elements [start, end) step `step` of `axis`.
  Value slice(Value value, int64_t axis, int64_t start, int64_t end,
              int64_t step = 1) {
    SmallVector<int64_t> shape(shapeOf(value));
    shape[axis] = (end - start + step - 1) / step;
    return rewriter.create<SliceOp>(
        loc, RankedTensorType::get(shape, elementOf(value)), value,
        rewriter.getDenseI64ArrayAttr(start),
        rewriter.getDenseI64ArrayAttr(end), rewriter.getDenseI64ArrayAttr(axis),
        rewriter.getDenseI64ArrayAttr(step), device);
  }
  Value concat(ArrayRef<Value> values, int64_t axis) {
    SmallVector<int64_t> shape(shapeOf(values.front()));
    shape[axis] = 0;
    for (Value value : values)
      shape[axis] += shapeOf(value)[axis];
    return rewriter.create<ConcatOp>(
        loc, RankedTensorType::get(shape, elementOf(values.front())), values,
        rewriter.getI64IntegerAttr(axis), device);
  }
  Value softmax(Value value, int64_t axis) {
    return rewriter.create<SoftmaxOp>(loc, value.getType(), value,
                                      rewriter.getI64IntegerAttr(axis), device);
  }
  Value reduce(ReduceKind kind, Value value, int64_t axis) {
    SmallVector<int64_t> shape(shapeOf(value));
    shape[axis] = 1;
    return rewriter.create<ReduceOp>(
        loc, RankedTensorType::get(shape, elementOf(value)),
        ReduceKindAttr::get(rewriter.getContext(), kind), value,
        rewriter.getDenseI64ArrayAttr(axis), rewriter.getUnitAttr(), device);
  }
  Value gather(Value data, Value indices, int64_t axis) {
    SmallVector<int64_t> shape(shapeOf(data).take_front(axis));
    llvm::append_range(shape, shapeOf(indices));
    llvm::append_range(shape, shapeOf(data).drop_front(axis + 1));
    return rewriter.create<GatherOp>(
        loc, RankedTensorType::get(shape, elementOf(data)), data, indices,
        rewriter.getI64IntegerAttr(axis), device);
  }
  Value scalar(Type element, double value) {
    return scalarConstant(rewriter, loc, element, value);
  }
  Value floats(ArrayRef<int64_t> shape, Type element, ArrayRef<double> values) {
    return denseFloatConstant(rewriter, loc, shape, element, values);
  }
  Value integers(ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 RankedTensorType::get(shape, rewriter.getI64Type()), values));
  }
  /// 0, 1, ... as i64, in `shape`: positions along one axis.
  Value iota(ArrayRef<int64_t> shape) {
    return integers(shape, llvm::to_vector(llvm::seq<int64_t>(
                               0, *shapes::elementCount(shape))));
  }
  /// An additive bias from `allowed`: 0 where true, -inf where false.
  Value biasFrom(Value allowed, Type element) {
    return where(allowed, scalar(element, 0.0),
                 scalar(element, kNegativeInfinity));
  }

private:
  ONNXNode node;
  PatternRewriter &rewriter;
  Location loc;
  DeviceAttr device;
};

/// A static, ranked tensor of a float type, or null.
RankedTensorType staticFloat(Value value) {
  auto type =
      value ? dyn_cast<RankedTensorType>(value.getType()) : RankedTensorType();
  if (!type || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return {};
  return type;
}

/// True if each used result i may take a value of `types[i]`: the same
/// element type and a compatible shape (ONNX inference may leave extents
/// unknown; replaceNodeRefining then makes them static).
bool resultsAccept(ONNXNode node, ArrayRef<RankedTensorType> types) {
  for (auto [i, type] : llvm::enumerate(types)) {
    if (!node.isResultUsed(i))
      continue;
    Type expected = node.resultType(i);
    if (getElementTypeOrSelf(expected) != type.getElementType() ||
        failed(verifyCompatibleShape(expected, type)))
      return false;
  }
  return true;
}

/// The shapes Attention computes with, read from its inputs and
/// attributes; every check is done before an op is created.
struct AttentionShape {
  bool packed = false; // 3-D Q, K, V: [B, S, heads * size]
  int64_t batch = 0, qHeads = 0, kvHeads = 0;
  int64_t qLength = 0, kvLength = 0, pastLength = 0;
  int64_t headSize = 0, valueHeadSize = 0;
  int64_t total() const { return pastLength + kvLength; }
  int64_t groups() const { return qHeads / kvHeads; }
};

FailureOr<AttentionShape> readAttentionShape(ONNXNode node,
                                             PatternRewriter &rewriter) {
  RankedTensorType q = staticFloat(node.input(0)),
                   k = staticFloat(node.input(1)),
                   v = staticFloat(node.input(2));
  if (!q || !k || !v)
    return fail(node, rewriter, "needs static float Q, K and V");
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return fail(node, rewriter, "Q, K and V must share one element type");
  int64_t rank = q.getRank();
  if ((rank != 3 && rank != 4) || k.getRank() != rank || v.getRank() != rank)
    return fail(node, rewriter, "Q, K and V must all be 3-D or all 4-D");
  AttentionShape shape;
  shape.packed = rank == 3;
  shape.batch = q.getDimSize(0);
  if (shape.packed) {
    shape.qHeads = node.getInt("q_num_heads", 0);
    shape.kvHeads = node.getInt("kv_num_heads", 0);
    if (shape.qHeads <= 0 || shape.kvHeads <= 0)
      return fail(node, rewriter, "3-D inputs need q_num_heads, kv_num_heads");
    if (q.getDimSize(2) % shape.qHeads || k.getDimSize(2) % shape.kvHeads ||
        v.getDimSize(2) % shape.kvHeads)
      return fail(node, rewriter, "hidden sizes must divide by the heads");
    shape.qLength = q.getDimSize(1);
    shape.kvLength = k.getDimSize(1);
    shape.headSize = q.getDimSize(2) / shape.qHeads;
    if (k.getDimSize(2) / shape.kvHeads != shape.headSize)
      return fail(node, rewriter, "Q and K head sizes differ");
    shape.valueHeadSize = v.getDimSize(2) / shape.kvHeads;
    if (v.getDimSize(1) != shape.kvLength)
      return fail(node, rewriter, "K and V sequence lengths differ");
  } else {
    shape.qHeads = q.getDimSize(1);
    shape.kvHeads = k.getDimSize(1);
    if ((node.hasAttr("q_num_heads") &&
         node.getInt("q_num_heads", 0) != shape.qHeads) ||
        (node.hasAttr("kv_num_heads") &&
         node.getInt("kv_num_heads", 0) != shape.kvHeads))
      return fail(node, rewriter, "head counts contradict 4-D Q and K");
    shape.qLength = q.getDimSize(2);
    shape.kvLength = k.getDimSize(2);
    shape.headSize = q.getDimSize(3);
    shape.valueHeadSize = v.getDimSize(3);
    if (k.getDimSize(3) != shape.headSize)
      return fail(node, rewriter, "Q and K head sizes differ");
    if (v.getDimSize(1) != shape.kvHeads || v.getDimSize(2) != shape.kvLength)
      return fail(node, rewriter, "K and V differ in heads or length");
  }
  if (k.getDimSize(0) != shape.batch || v.getDimSize(0) != shape.batch)
    return fail(node, rewriter, "Q, K and V batch sizes differ");
  if (shape.qHeads % shape.kvHeads)
    return fail(node, rewriter, "q heads must be a multiple of kv heads");

  Value pastKey = node.input(4), pastValue = node.input(5);
  if (!pastKey != !pastValue)
    return fail(node, rewriter, "past_key and past_value come together");
  if (pastKey) {
    RankedTensorType pk = staticFloat(pastKey), pv = staticFloat(pastValue);
    if (!pk || !pv || pk.getRank() != 4 || pv.getRank() != 4 ||
        pk.getElementType() != q.getElementType() ||
        pv.getElementType() != q.getElementType())
      return fail(node, rewriter, "past_key, past_value: static 4-D floats");
    shape.pastLength = pk.getDimSize(2);
    if (pk.getShape() != ArrayRef<int64_t>{shape.batch, shape.kvHeads,
                                           shape.pastLength, shape.headSize} ||
        pv.getShape() != ArrayRef<int64_t>{shape.batch, shape.kvHeads,
                                           shape.pastLength,
                                           shape.valueHeadSize})
      return fail(node, rewriter, "past_key or past_value of another shape");
  }
  return shape;
}

/// The attention bias's parts, each broadcastable to [B, q heads, q length,
/// total]: what is known at compile time (causal and window masks without
/// nonpad_kv_seqlen) folded into one [q length, total] constant, and what
/// is not (attn_mask, nonpad_kv_seqlen) as values. Validated before any op
/// is created.
struct BiasPlan {
  std::vector<double> constant; // empty: none
  bool fullyMaskedConstantRow = false;
  Value mask; // attn_mask, when given
  bool boolMask = false;
  Value nonpad; // nonpad_kv_seqlen, when given
  bool causal = false;
  int64_t left = -1, right = -1;
};

FailureOr<BiasPlan> planBias(ONNXNode node, PatternRewriter &rewriter,
                             const AttentionShape &shape, Type element) {
  BiasPlan plan;
  plan.causal = node.getInt("is_causal", 0) != 0;
  plan.left = node.getInt("left_window_size", -1);
  plan.right = node.getInt("right_window_size", -1);
  if (plan.left < -1 || plan.right < -1)
    return fail(node, rewriter, "window sizes must be -1 or nonnegative");
  bool windowed = plan.left >= 0 || plan.right >= 0;
  plan.nonpad = node.numInputs() > 6 ? node.input(6) : Value();
  if (plan.nonpad) {
    auto type = dyn_cast<RankedTensorType>(plan.nonpad.getType());
    if (!type || type.getShape() != ArrayRef<int64_t>{shape.batch} ||
        !type.getElementType().isInteger(64))
      return fail(node, rewriter, "nonpad_kv_seqlen must be i64 [batch]");
    if (node.input(4))
      return fail(node, rewriter, "nonpad_kv_seqlen with a past cache");
    if (windowed)
      return fail(node, rewriter, "windows with nonpad_kv_seqlen");
  }
  if (Value mask = node.input(3)) {
    auto type = dyn_cast<RankedTensorType>(mask.getType());
    if (!type || !type.hasStaticShape() || type.getRank() < 1 ||
        type.getRank() > 4)
      return fail(node, rewriter, "attn_mask must be static of rank 1 to 4");
    plan.boolMask = type.getElementType().isInteger(1);
    if (!plan.boolMask && type.getElementType() != element)
      return fail(node, rewriter, "attn_mask must be bool or Q's type");
    SmallVector<int64_t> padded(type.getShape());
    if (padded.back() > shape.total())
      return fail(node, rewriter, "attn_mask longer than the keys");
    padded.back() = shape.total();
    if (!shapes::broadcastsTo(
            padded, {shape.batch, shape.qHeads, shape.qLength, shape.total()}))
      return fail(node, rewriter, "attn_mask does not broadcast to scores");
    plan.mask = mask;
  }
  // Causal and window masks with the scalar offset of a past cache (or
  // none): query i attends key j iff j <= i + offset (causal) and
  // -right <= i + offset - j <= left (windows).
  if ((plan.causal && !plan.nonpad) || windowed) {
    int64_t rows = shape.qLength, columns = shape.total();
    int64_t offset = shape.pastLength;
    plan.constant.assign(rows * columns, 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      bool any = false;
      for (int64_t j = 0; j < columns; ++j) {
        int64_t distance = i + offset - j;
        bool allowed = !(plan.causal && distance < 0) &&
                       !(plan.left >= 0 && distance > plan.left) &&
                       !(plan.right >= 0 && -distance > plan.right);
        plan.constant[i * columns + j] = allowed ? 0.0 : kNegativeInfinity;
        any |= allowed;
      }
      plan.fullyMaskedConstantRow |= !any;
    }
  }
  return plan;
}

/// Sums the bias parts into one value (null when there is none).
Value buildBias(Emitter &e, const BiasPlan &plan, const AttentionShape &shape,
                Type element) {
  Value bias;
  auto accumulate = [&](Value part) {
    bias = bias ? e.binary<AddOp>(bias, part) : part;
  };
  if (!plan.constant.empty())
    accumulate(
        e.floats({shape.qLength, shape.total()}, element, plan.constant));
  if (plan.mask) {
    Value mask = plan.boolMask ? e.biasFrom(plan.mask, element) : plan.mask;
    // A mask shorter than the keys leaves the rest masked: -inf pads it.
    int64_t missing = shape.total() - Emitter::shapeOf(mask).back();
    if (missing > 0) {
      SmallVector<int64_t> padShape(Emitter::shapeOf(mask));
      padShape.back() = missing;
      std::vector<double> fill(*shapes::elementCount(padShape),
                               kNegativeInfinity);
      mask = e.concat({mask, e.floats(padShape, element, fill)},
                      static_cast<int64_t>(padShape.size()) - 1);
    }
    accumulate(mask);
  }
  if (plan.nonpad) {
    // Key j of sample b is real iff j < nonpad[b]; with is_causal, query i
    // attends it iff j <= i + nonpad[b] - q length, i.e. j - i + q length
    // <= nonpad[b].
    Type i1 = IntegerType::get(element.getContext(), 1);
    Value lengths = e.reshape(plan.nonpad, {shape.batch, 1, 1, 1});
    Value allowed =
        e.binaryTo<LessOp>(i1, e.iota({1, 1, 1, shape.total()}), lengths);
    if (plan.causal) {
      std::vector<int64_t> reach(shape.qLength * shape.total());
      for (int64_t i = 0; i < shape.qLength; ++i)
        for (int64_t j = 0; j < shape.total(); ++j)
          reach[i * shape.total() + j] = j - i + shape.qLength;
      Value causal = e.binaryTo<LessEqualOp>(
          i1, e.integers({1, 1, shape.qLength, shape.total()}, reach), lengths);
      allowed = e.binaryTo<AndOp>(i1, allowed, causal);
    }
    accumulate(e.biasFrom(allowed, element));
  }
  return bias;
}

/// Attention (23 to 25) on static shapes. Q [B, Hq, S, D] (or [B, S, Hq *
/// D], viewed so) is scaled, multiplied by K^T, optionally soft-capped
/// (c * tanh(x / c)), biased by the mask (a bool mask as 0 / -inf, a
/// float mask added; shorter masks padded with -inf), the causal and
/// window masks (offset by the past cache) and nonpad_kv_seqlen's padding,
/// softmaxed and multiplied by V. Grouped-query heads share K and V
/// through a [B, Hkv, group * S, D] view of Q, not copies. A query row
/// with every key masked gives zeros, as ONNX specifies: its bias is
/// zeroed before the softmax and its probabilities after.
LogicalResult legalizeAttention(ONNXNode node, PatternRewriter &rewriter) {
  FailureOr<AttentionShape> read = readAttentionShape(node, rewriter);
  if (failed(read))
    return failure();
  const AttentionShape &shape = *read;
  Type element = Emitter::elementOf(node.input(0));
  int64_t mode = node.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return fail(node, rewriter, "qk_matmul_output_mode must be 0 to 3");
  if (node.hasAttr("softmax_precision") &&
      node.getInt("softmax_precision", 0) != 1)
    return fail(node, rewriter, "softmax_precision other than float (1)");
  if (!element.isF32())
    return fail(node, rewriter, "only f32 attention");
  FailureOr<BiasPlan> plan = planBias(node, rewriter, shape, element);
  if (failed(plan))
    return failure();
  int64_t b = shape.batch, hq = shape.qHeads, hkv = shape.kvHeads;
  int64_t s = shape.qLength, t = shape.total();
  SmallVector<RankedTensorType> types = {
      RankedTensorType::get(
          shape.packed ? SmallVector<int64_t>{b, s, hq * shape.valueHeadSize}
                       : SmallVector<int64_t>{b, hq, s, shape.valueHeadSize},
          element),
      RankedTensorType::get({b, hkv, t, shape.headSize}, element),
      RankedTensorType::get({b, hkv, t, shape.valueHeadSize}, element),
      RankedTensorType::get({b, hq, s, t}, element)};
  if (!resultsAccept(node, types))
    return fail(node, rewriter, "results of unexpected types");

  Emitter e(node, rewriter);
  auto heads = [&](Value value, int64_t count) {
    if (!shape.packed)
      return value;
    ArrayRef<int64_t> packed = Emitter::shapeOf(value);
    return e.transpose(
        e.reshape(value, {packed[0], packed[1], count, packed[2] / count}),
        {0, 2, 1, 3});
  };
  Value q = heads(node.input(0), hq);
  Value k = heads(node.input(1), hkv);
  Value v = heads(node.input(2), hkv);
  if (Value pastKey = node.input(4)) {
    k = e.concat({pastKey, k}, 2);
    v = e.concat({node.input(5), v}, 2);
  }
  double scale = node.hasAttr("scale")
                     ? node.getFloat("scale", 1.0f)
                     : 1.0 / std::sqrt(static_cast<double>(shape.headSize));
  Value scaledQ = e.binary<MulOp>(q, e.scalar(element, scale));
  // Grouped heads: query head h reads kv head h / group.
  Value grouped =
      e.reshape(scaledQ, {b, hkv, shape.groups() * s, shape.headSize});
  Value scores =
      e.reshape(e.matmul(grouped, e.transpose(k, {0, 1, 3, 2})), {b, hq, s, t});
  Value qkOutput = scores;
  if (float cap = node.getFloat("softcap", 0.0f); cap > 0) {
    Value capValue = e.scalar(element, cap);
    scores = e.binary<MulOp>(e.unary<TanhOp>(e.binary<DivOp>(scores, capValue)),
                             capValue);
    if (mode == 1)
      qkOutput = scores;
  }
  Value bias = buildBias(e, *plan, shape, element);
  bool runtime = plan->mask || plan->nonpad;
  Value fullyMasked;
  if (bias) {
    if (mode == 2)
      qkOutput = e.binary<AddOp>(scores, bias);
    if (runtime || plan->fullyMaskedConstantRow) {
      Type i1 = IntegerType::get(rewriter.getContext(), 1);
      int64_t last = static_cast<int64_t>(Emitter::shapeOf(bias).size()) - 1;
      fullyMasked =
          e.binaryTo<EqualOp>(i1, e.reduce(ReduceKind::Max, bias, last),
                              e.scalar(element, kNegativeInfinity));
      bias = e.where(fullyMasked, e.scalar(element, 0.0), bias);
    }
    scores = e.binary<AddOp>(scores, bias);
  } else if (mode == 2) {
    qkOutput = scores;
  }
  Value probabilities = e.softmax(scores, 3);
  if (fullyMasked)
    probabilities = e.where(fullyMasked, e.scalar(element, 0.0), probabilities);
  if (mode == 3)
    qkOutput = probabilities;
  Value y = e.reshape(
      e.matmul(e.reshape(probabilities, {b, hkv, shape.groups() * s, t}), v),
      {b, hq, s, shape.valueHeadSize});
  if (shape.packed)
    y = e.reshape(e.transpose(y, {0, 2, 1, 3}),
                  {b, s, hq * shape.valueHeadSize});
  SmallVector<Value> results = {y, k, v, qkOutput};
  results.resize(node.getOp().getNumResults());
  for (Value &result : results)
    if (!result)
      result = y;
  replaceNodeRefining(node.getOp(), results, rewriter);
  return success();
}

/// RotaryEmbedding (23) on static shapes: X [B, H, S, D] or [B, S, H * D]
/// (num_heads) viewed as [B, S, H, D]. The first rotary_embedding_dim (by
/// default D) features of each head are rotated by the angles cos_cache /
/// sin_cache give per (sample, position), read through position_ids when
/// given: halves (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos), or the
/// even and odd features when interleaved; the rest pass through.
LogicalResult legalizeRotaryEmbedding(ONNXNode node,
                                      PatternRewriter &rewriter) {
  RankedTensorType x = staticFloat(node.input(0));
  RankedTensorType cosType = staticFloat(node.input(1));
  RankedTensorType sinType = staticFloat(node.input(2));
  if (!x || !cosType || !sinType || (x.getRank() != 3 && x.getRank() != 4))
    return fail(node, rewriter, "needs static float X (3-D or 4-D), caches");
  if (!canReplaceWithType(node, x))
    return fail(node, rewriter, "a result of an unexpected type");
  bool packed = x.getRank() == 3;
  int64_t batch = x.getDimSize(0);
  int64_t heads = packed ? node.getInt("num_heads", 0) : x.getDimSize(1);
  if (heads <= 0 || (packed && x.getDimSize(2) % heads))
    return fail(node, rewriter, "num_heads must divide X's hidden size");
  int64_t length = packed ? x.getDimSize(1) : x.getDimSize(2);
  int64_t headSize = packed ? x.getDimSize(2) / heads : x.getDimSize(3);
  int64_t rotary = node.getInt("rotary_embedding_dim", 0);
  if (rotary == 0)
    rotary = headSize;
  if (rotary < 0 || rotary > headSize || rotary % 2)
    return fail(node, rewriter, "rotary_embedding_dim: even, <= head size");
  int64_t half = rotary / 2;
  Value positions = node.input(3);
  SmallVector<int64_t> angles = {batch, length, half};
  if (positions) {
    auto type = dyn_cast<RankedTensorType>(positions.getType());
    if (!type || type.getShape() != ArrayRef<int64_t>{batch, length} ||
        cosType.getRank() != 2 || cosType.getDimSize(1) != half ||
        sinType.getShape() != cosType.getShape())
      return fail(node, rewriter,
                  "position_ids [B, S] need caches [positions, dim / 2]");
  } else if (cosType.getShape() != ArrayRef<int64_t>(angles) ||
             sinType.getShape() != cosType.getShape()) {
    return fail(node, rewriter, "caches must be [B, S, dim / 2]");
  }

  Emitter e(node, rewriter);
  // [B, S, H, D]: heads next to the features, so one angle per (B, S)
  // broadcasts over them.
  Value input = packed
                    ? e.reshape(node.input(0), {batch, length, heads, headSize})
                    : e.transpose(node.input(0), {0, 2, 1, 3});
  Value cos = node.input(1), sin = node.input(2);
  if (positions) {
    cos = e.gather(cos, positions, 0);
    sin = e.gather(sin, positions, 0);
  }
  cos = e.reshape(cos, {batch, length, 1, half});
  sin = e.reshape(sin, {batch, length, 1, half});
  bool interleaved = node.getInt("interleaved", 0) != 0;
  Value first = interleaved ? e.slice(input, 3, 0, rotary, 2)
                            : e.slice(input, 3, 0, half);
  Value second = interleaved ? e.slice(input, 3, 1, rotary, 2)
                             : e.slice(input, 3, half, rotary);
  Value real = e.binary<SubOp>(e.binary<MulOp>(cos, first),
                               e.binary<MulOp>(sin, second));
  Value imaginary = e.binary<AddOp>(e.binary<MulOp>(sin, first),
                                    e.binary<MulOp>(cos, second));
  Value rotated;
  if (interleaved) {
    SmallVector<int64_t> pairs = {batch, length, heads, half, 1};
    rotated = e.reshape(
        e.concat({e.reshape(real, pairs), e.reshape(imaginary, pairs)}, 4),
        {batch, length, heads, rotary});
  } else {
    rotated = e.concat({real, imaginary}, 3);
  }
  if (rotary < headSize)
    rotated = e.concat({rotated, e.slice(input, 3, rotary, headSize)}, 3);
  Value result = packed ? e.reshape(rotated, x.getShape())
                        : e.transpose(rotated, {0, 2, 1, 3});
  return replaceNodeWithCompatible(node, result, rewriter);
}

/// TensorScatter (24) on static shapes: `update` [B, ..., L, ...] written
/// into a copy of `past_cache` [B, ..., M, ...] along `axis` from position
/// write_indices[b] (0 when absent) of each sample, modulo M in circular
/// mode. Without write_indices it is a concat of the update and the
/// cache's tail. Otherwise each sample gathers, for every cache position
/// p, update position p - write_indices[b] (mod M), and keeps the cache
/// where that is outside [0, L).
LogicalResult legalizeTensorScatter(ONNXNode node, PatternRewriter &rewriter) {
  auto past = dyn_cast<RankedTensorType>(node.input(0).getType());
  auto update = dyn_cast<RankedTensorType>(node.input(1).getType());
  if (!past || !update || !past.hasStaticShape() || !update.hasStaticShape() ||
      past.getRank() != update.getRank() || past.getRank() < 2 ||
      past.getElementType() != update.getElementType())
    return fail(node, rewriter, "needs static past_cache, update of one rank");
  if (!canReplaceWithType(node, past))
    return fail(node, rewriter, "a result of an unexpected type");
  std::optional<int64_t> axis = node.getAxis("axis", -2, past.getRank());
  if (!axis || *axis == 0)
    return fail(node, rewriter, "axis must be in range and not the batch");
  std::string mode = node.getString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return fail(node, rewriter, "mode must be linear or circular");
  int64_t capacity = past.getDimSize(*axis), length = update.getDimSize(*axis);
  for (int64_t i = 0; i < past.getRank(); ++i)
    if (i != *axis && past.getDimSize(i) != update.getDimSize(i))
      return fail(node, rewriter, "update differs from the cache off axis");
  if (length > capacity)
    return fail(node, rewriter, "update longer than the cache");
  Value writeIndices = node.input(2);
  int64_t batch = past.getDimSize(0);
  if (writeIndices) {
    auto type = dyn_cast<RankedTensorType>(writeIndices.getType());
    if (!type || type.getShape() != ArrayRef<int64_t>{batch} ||
        !type.getElementType().isInteger(64))
      return fail(node, rewriter, "write_indices must be i64 [batch]");
  }

  Emitter e(node, rewriter);
  Value cache = node.input(0), incoming = node.input(1);
  if (!writeIndices) {
    Value result =
        length == capacity
            ? incoming
            : e.concat({incoming, e.slice(cache, *axis, length, capacity)},
                       *axis);
    return replaceNodeWithCompatible(node, result, rewriter);
  }
  Type i1 = rewriter.getI1Type(), i64 = rewriter.getI64Type();
  Value cachePositions = e.iota({capacity});
  SmallVector<int64_t> alongAxis(past.getRank(), 1);
  alongAxis[*axis] = capacity;
  SmallVector<Value> samples;
  for (int64_t b = 0; b < batch; ++b) {
    Value source =
        e.binary<SubOp>(cachePositions, e.slice(writeIndices, 0, b, b + 1));
    if (mode == "circular")
      source = e.binary<ModOp>(source, e.scalar(i64, capacity));
    Value valid = e.binaryTo<LessOp>(i1, source, e.scalar(i64, length));
    if (mode == "linear")
      valid = e.binaryTo<AndOp>(
          i1, valid, e.binaryTo<GreaterEqualOp>(i1, source, e.scalar(i64, 0)));
    Value clamped = e.where(valid, source, e.scalar(i64, 0));
    Value gathered = e.gather(e.slice(incoming, 0, b, b + 1), clamped, *axis);
    samples.push_back(e.where(e.reshape(valid, alongAxis), gathered,
                              e.slice(cache, 0, b, b + 1)));
  }
  Value result = samples.size() == 1 ? samples.front() : e.concat(samples, 0);
  return replaceNodeWithCompatible(node, result, rewriter);
}

} // namespace

void populateAttentionPatterns(RewritePatternSet &patterns) {
  const SmallVector<StringRef> attentionAttrs = {
      "is_causal", "kv_num_heads", "q_num_heads",      "qk_matmul_output_mode",
      "scale",     "softcap",      "softmax_precision"};
  addONNXPattern(patterns, "Attention", 23, 24, attentionAttrs,
                 legalizeAttention);
  SmallVector<StringRef> windowed = attentionAttrs;
  windowed.append({"left_window_size", "right_window_size"});
  addONNXPattern(patterns, "Attention", 25, kMaxOpset, windowed,
                 legalizeAttention);
  addONNXPattern(patterns, "TensorScatter", 24, kMaxOpset, {"axis", "mode"},
                 legalizeTensorScatter);
  addONNXPattern(patterns, "RotaryEmbedding", 23, kMaxOpset,
                 {"interleaved", "num_heads", "rotary_embedding_dim"},
                 legalizeRotaryEmbedding);
}

} // namespace heterps::hps
