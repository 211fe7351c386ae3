//===- Recurrent.cpp - RNN, GRU and LSTM unrolled over a static sequence --===//
//
// ONNX's recurrent ops, unrolled over their static sequence length into
// gemms and elementwise ops, which have kernels on every device and
// gradient rules, so recurrent models run and train without a kernel of
// their own. Unrolling costs about fifteen ops a step, so sequences longer
// than the pass's limit keep one hps.recurrence per direction instead
// (after the same input projection). The input projection of every step is one
// gemm per direction; each step then adds H_{t-1} R^T + Rb (one gemm), splits
// the gates and applies the activations. sequence_lens masks the steps past a
// sequence's end (the state is kept and Y is zero there), which serves the
// reverse direction too: its steps past the end come first and leave the
// initial state alone. A row of length 0 ends with a zero state (Y_h, Y_c),
// as onnxruntime gives it.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace heterps::hps {
namespace {

enum class RecurrentKind { RNN, GRU, LSTM };
enum class Activation { Sigmoid, Tanh, Relu, Unknown };

/// Gates per step: RNN one, GRU three (z, r, h), LSTM four (i, o, f, c).
int64_t gateCount(RecurrentKind kind) {
  return kind == RecurrentKind::RNN ? 1 : kind == RecurrentKind::GRU ? 3 : 4;
}

/// The ONNX defaults, per direction: f for RNN; f, g for GRU; f, g, h for
/// LSTM.
SmallVector<Activation> defaultActivations(RecurrentKind kind) {
  using A = Activation;
  switch (kind) {
  case RecurrentKind::RNN:
    return {A::Tanh};
  case RecurrentKind::GRU:
    return {A::Sigmoid, A::Tanh};
  case RecurrentKind::LSTM:
    return {A::Sigmoid, A::Tanh, A::Tanh};
  }
  llvm_unreachable("recurrent kind");
}

/// The ONNX names of `activations`, as hps.recurrence spells them.
SmallVector<StringRef> activationNames(ArrayRef<Activation> activations) {
  SmallVector<StringRef> names;
  for (Activation activation : activations)
    names.push_back(activation == Activation::Sigmoid ? "Sigmoid"
                    : activation == Activation::Tanh  ? "Tanh"
                                                      : "Relu");
  return names;
}

/// Builds the unrolled ops at the node's location and placement; every
/// value is a static f32 tensor.
class Unroller {
public:
  Unroller(ONNXNode node, PatternRewriter &rewriter)
      : node(node), rewriter(rewriter), loc(node.getLoc()),
        device(node.getOp().getDeviceAttr()), f32(rewriter.getF32Type()) {}

  static ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  RankedTensorType type(ArrayRef<int64_t> dims, Type element = {}) {
    return RankedTensorType::get(dims, element ? element : f32);
  }

  Value reshape(Value v, ArrayRef<int64_t> dims) {
    return reshapeTo(node, rewriter, v, dims);
  }
  /// v[start:end] along `axis`.
  Value slice(Value v, int64_t axis, int64_t start, int64_t end) {
    SmallVector<int64_t> dims(shape(v));
    dims[axis] = end - start;
    auto element = cast<RankedTensorType>(v.getType()).getElementType();
    return rewriter.create<SliceOp>(loc, type(dims, element), v,
                                    rewriter.getDenseI64ArrayAttr({start}),
                                    rewriter.getDenseI64ArrayAttr({end}),
                                    rewriter.getDenseI64ArrayAttr({axis}),
                                    rewriter.getDenseI64ArrayAttr({1}), device);
  }
  /// Direction d of a [directions, rest...] operand, as [rest...].
  Value direction(Value v, int64_t d) {
    return reshape(slice(v, 0, d, d + 1), shape(v).drop_front());
  }
  /// Equal pieces of `v` along `axis`.
  SmallVector<Value> split(Value v, int64_t axis, int64_t pieces) {
    SmallVector<int64_t> dims(shape(v));
    dims[axis] /= pieces;
    SmallVector<Type> types(pieces, type(dims));
    auto op = rewriter.create<SplitOp>(
        loc, types, v, rewriter.getI64IntegerAttr(axis),
        rewriter.getDenseI64ArrayAttr(SmallVector<int64_t>(pieces, dims[axis])),
        device);
    return SmallVector<Value>(op.getResults());
  }
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    SmallVector<int64_t> dims(shape(parts.front()));
    dims[axis] = 0;
    for (Value part : parts)
      dims[axis] += shape(part)[axis];
    return rewriter.create<ConcatOp>(loc, type(dims), parts,
                                     rewriter.getI64IntegerAttr(axis), device);
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    SmallVector<int64_t> dims;
    for (int64_t axis : perm)
      dims.push_back(shape(v)[axis]);
    return rewriter.create<TransposeOp>(
        loc, type(dims), v, rewriter.getDenseI64ArrayAttr(perm), device);
  }
  /// a [M, K] times b [N, K] transposed, plus the [N] bias when given.
  Value gemm(Value a, Value b, Value bias) {
    return rewriter.create<GemmOp>(loc, type({shape(a)[0], shape(b)[0]}), a, b,
                                   bias, rewriter.getF32FloatAttr(1),
                                   rewriter.getF32FloatAttr(1), UnitAttr(),
                                   rewriter.getUnitAttr(), device);
  }
  /// Elementwise ops on operands of one shape or a broadcast [N] operand;
  /// the result has the larger shape.
  template <typename OpTy> Value binary(Value a, Value b) {
    Value larger = shape(a).size() >= shape(b).size() ? a : b;
    return rewriter.create<OpTy>(loc, larger.getType(), a, b, device);
  }
  Value add(Value a, Value b) { return binary<AddOp>(a, b); }
  Value sub(Value a, Value b) { return binary<SubOp>(a, b); }
  Value mul(Value a, Value b) { return binary<MulOp>(a, b); }
  Value zeros(ArrayRef<int64_t> dims) {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(type(dims), rewriter.getF32FloatAttr(0)));
  }
  /// condition [B, 1] ? a : b, for [B, H] values.
  Value select(Value condition, Value a, Value b) {
    return rewriter.create<WhereOp>(loc, a.getType(), condition, a, b, device);
  }
  /// The activation of the gate's pre-activation, clipped to +-clip first
  /// when the node asks.
  Value activate(Activation activation, Value v, std::optional<float> clip) {
    if (clip)
      v = rewriter.create<ClipOp>(loc, v.getType(), v,
                                  rewriter.getF64FloatAttr(-*clip),
                                  rewriter.getF64FloatAttr(*clip), device);
    switch (activation) {
    case Activation::Sigmoid:
      return rewriter.create<SigmoidOp>(loc, v.getType(), v, device);
    case Activation::Tanh:
      return rewriter.create<TanhOp>(loc, v.getType(), v, device);
    case Activation::Relu:
      return rewriter.create<ReluOp>(loc, v.getType(), v, device);
    case Activation::Unknown:
      break;
    }
    llvm_unreachable("activations are checked before building");
  }
  /// One direction's hps.recurrence over `projected` [T, B, G]; `lens`
  /// (any integer type) is converted to i64.
  RecurrenceOp recurrence(RecurrentKind kind, Value projected, Value r,
                          Value rb, Value lens, Value h, Value c, Value peep,
                          ArrayRef<StringRef> activations,
                          std::optional<float> clip, bool reverse,
                          bool linearBeforeReset) {
    ArrayRef<int64_t> dims = shape(projected);
    int64_t steps = dims[0], batch = dims[1], hidden = shape(r)[1];
    if (lens) {
      auto i64 = rewriter.getI64Type();
      if (cast<RankedTensorType>(lens.getType()).getElementType() != i64)
        lens = rewriter.create<CastOp>(loc, type({batch}, i64), lens, device);
    }
    StringRef cell = kind == RecurrentKind::RNN   ? "rnn"
                     : kind == RecurrentKind::GRU ? "gru"
                                                  : "lstm";
    return rewriter.create<RecurrenceOp>(
        loc, type({steps, batch, hidden}), type({batch, hidden}),
        kind == RecurrentKind::LSTM ? Type(type({batch, hidden})) : Type(),
        projected, r, rb, h, lens, c, peep, cell,
        rewriter.getStrArrayAttr(activations),
        clip ? rewriter.getF32FloatAttr(*clip) : FloatAttr(), reverse,
        linearBeforeReset, device);
  }
  /// [B, 1] booleans: step t lies inside each sequence (t < lens[b]).
  Value stepMask(Value lens, int64_t t) {
    auto lensType = cast<RankedTensorType>(lens.getType());
    Type element = lensType.getElementType();
    Value step = scalarConstant(rewriter, loc, element, double(t));
    Value inside = rewriter.create<GreaterOp>(
        loc, type(lensType.getShape(), rewriter.getI1Type()), lens, step,
        device);
    return reshape(inside, {lensType.getDimSize(0), 1});
  }

private:
  ONNXNode node;
  PatternRewriter &rewriter;
  Location loc;
  DeviceAttr device;
  Type f32;
};

/// A static f32 operand of exactly `dims`, or a null one when `optional`.
bool hasShape(Value v, ArrayRef<int64_t> dims, bool optional = false) {
  if (!v)
    return optional;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32() && type.getShape() == dims;
}

LogicalResult legalizeRecurrent(ONNXNode node, PatternRewriter &rewriter,
                                RecurrentKind kind, int64_t unrollLimit) {
  // Attributes.
  std::string directionName = node.getString("direction", "forward");
  if (directionName != "forward" && directionName != "reverse" &&
      directionName != "bidirectional")
    return fail(node, rewriter, "unknown direction");
  const int64_t directions = directionName == "bidirectional" ? 2 : 1;
  const bool batchFirst = node.getInt("layout", 0) != 0;
  if (node.hasAttr("activation_alpha") || node.hasAttr("activation_beta"))
    return fail(node, rewriter, "activations with parameters");
  if (kind == RecurrentKind::LSTM && node.getInt("input_forget", 0) != 0)
    return fail(node, rewriter, "coupled input and forget gates");
  const bool linearBeforeReset =
      kind == RecurrentKind::GRU && node.getInt("linear_before_reset", 0) != 0;
  std::optional<float> clip;
  if (node.hasAttr("clip"))
    clip = node.getFloat("clip", 0.0f);
  SmallVector<Activation> perDirection = defaultActivations(kind);
  SmallVector<Activation> activations;
  if (auto names = dyn_cast_or_null<ArrayAttr>(node.getAttr("activations"))) {
    if (names.size() != perDirection.size() * directions)
      return fail(node, rewriter, "activations for every direction");
    for (Attribute name : names) {
      auto text = dyn_cast<StringAttr>(name);
      Activation activation =
          llvm::StringSwitch<Activation>(text ? text.getValue() : "")
              .Case("Sigmoid", Activation::Sigmoid)
              .Case("Tanh", Activation::Tanh)
              .Case("Relu", Activation::Relu)
              .Default(Activation::Unknown);
      if (activation == Activation::Unknown)
        return fail(node, rewriter,
                    "an activation other than Sigmoid, Tanh "
                    "or Relu");
      activations.push_back(activation);
    }
  } else {
    for (int64_t d = 0; d < directions; ++d)
      llvm::append_range(activations, perDirection);
  }

  // Operands: X [T, B, I] ([B, T, I] batch first), W [D, gH, I],
  // R [D, gH, H], B [D, 2gH], sequence_lens [B], initial_h and initial_c
  // [D, B, H] ([B, D, H] batch first), P [D, 3H] (LSTM).
  const bool isLSTM = kind == RecurrentKind::LSTM;
  Value x = node.input(0), w = node.input(1), r = node.input(2),
        bias = node.input(3), lens = node.input(4), initialH = node.input(5),
        initialC = isLSTM ? node.input(6) : Value(),
        peepholes = isLSTM ? node.input(7) : Value();
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  auto rType = dyn_cast<RankedTensorType>(r.getType());
  if (!xType || !rType || !xType.hasStaticShape() || xType.getRank() != 3 ||
      !rType.hasStaticShape() || rType.getRank() != 3)
    return fail(node, rewriter, "needs static X and R");
  const int64_t steps = xType.getDimSize(batchFirst ? 1 : 0);
  const int64_t batch = xType.getDimSize(batchFirst ? 0 : 1);
  const int64_t inputSize = xType.getDimSize(2);
  const int64_t hidden = rType.getDimSize(2);
  const int64_t gates = gateCount(kind) * hidden;
  if (node.getInt("hidden_size", hidden) != hidden)
    return fail(node, rewriter, "hidden_size differs from R's");
  if (steps < 1)
    return fail(node, rewriter, "an empty sequence");
  const bool unroll = steps <= unrollLimit;
  SmallVector<int64_t> stateDims =
      batchFirst ? SmallVector<int64_t>{batch, directions, hidden}
                 : SmallVector<int64_t>{directions, batch, hidden};
  if (!hasShape(x, xType.getShape()) ||
      !hasShape(w, {directions, gates, inputSize}) ||
      !hasShape(r, {directions, gates, hidden}) ||
      !hasShape(bias, {directions, 2 * gates}, true) ||
      !hasShape(initialH, stateDims, true) ||
      !hasShape(initialC, stateDims, true) ||
      !hasShape(peepholes, {directions, 3 * hidden}, true))
    return fail(node, rewriter, "operand shapes or types do not match");
  if (lens) {
    auto lensType = dyn_cast<RankedTensorType>(lens.getType());
    if (!lensType || lensType.getShape() != ArrayRef<int64_t>{batch} ||
        !isa<IntegerType>(lensType.getElementType()))
      return fail(node, rewriter, "sequence_lens must be [batch] integers");
    // Full-length sequences need no mask.
    if (auto known = getConstantInts(lens);
        known && llvm::all_of(*known, [&](int64_t n) { return n == steps; }))
      lens = Value();
  }
  auto f32 = rewriter.getF32Type();
  auto yType = RankedTensorType::get(
      batchFirst ? SmallVector<int64_t>{batch, steps, directions, hidden}
                 : SmallVector<int64_t>{steps, directions, batch, hidden},
      f32);
  auto stateType = RankedTensorType::get(stateDims, f32);
  for (unsigned i = 0, e = isLSTM ? 3 : 2; i < e; ++i)
    if (node.isResultUsed(i) &&
        node.resultType(i) != (i == 0 ? Type(yType) : Type(stateType)))
      return fail(node, rewriter, "outputs of unexpected types");
  if (node.getOp().getNumResults() > (isLSTM ? 3u : 2u))
    return fail(node, rewriter, "unexpected outputs");

  Unroller u(node, rewriter);
  Value timeMajor = batchFirst ? u.transpose(x, {1, 0, 2}) : x;
  Value flatX = u.reshape(timeMajor, {steps * batch, inputSize});
  auto timeMajorState = [&](Value state) -> Value {
    if (!state)
      return u.zeros({directions, batch, hidden});
    return batchFirst ? u.transpose(state, {1, 0, 2}) : state;
  };
  Value h0 = timeMajorState(initialH), c0 = timeMajorState(initialC);
  SmallVector<Value> masks;
  if (lens && unroll)
    for (int64_t t = 0; t < steps; ++t)
      masks.push_back(u.stepMask(lens, t));

  SmallVector<Value> directionY, lastH, lastC;
  for (int64_t d = 0; d < directions; ++d) {
    bool reverse = directionName == "reverse" || d == 1;
    ArrayRef<Activation> act =
        ArrayRef<Activation>(activations)
            .slice(d * perDirection.size(), perDirection.size());
    Value wd = u.direction(w, d), rd = u.direction(r, d);
    Value wb, rb;
    if (bias) {
      Value bd = u.direction(bias, d);
      wb = u.slice(bd, 0, 0, gates);
      rb = u.slice(bd, 0, gates, 2 * gates);
    }
    // One gemm projects every step's input: [T, B, gH] as T pieces.
    Value projected = u.gemm(flatX, wd, wb);
    SmallVector<Value> inputs =
        u.split(u.reshape(projected, {steps, batch, gates}), 0, steps);
    for (Value &in : inputs)
      in = u.reshape(in, {batch, gates});
    // GRU without linear_before_reset applies R_h to r * H, after r.
    Value recurrent = rd, recurrentBias = rb, candidateR, candidateBias;
    if (kind == RecurrentKind::GRU && !linearBeforeReset) {
      recurrent = u.slice(rd, 0, 0, 2 * hidden);
      candidateR = u.slice(rd, 0, 2 * hidden, 3 * hidden);
      if (rb) {
        recurrentBias = u.slice(rb, 0, 0, 2 * hidden);
        candidateBias = u.slice(rb, 0, 2 * hidden, 3 * hidden);
      }
    }
    SmallVector<Value> peep;
    if (peepholes)
      peep = u.split(u.direction(peepholes, d), 0, 3); // i, o, f

    Value h = u.direction(h0, d), c = u.direction(c0, d);
    if (!unroll) {
      auto recurrence = u.recurrence(
          kind, u.reshape(projected, {steps, batch, gates}), rd,
          rb ? rb : u.zeros({gates}), lens, h, isLSTM ? c : Value(),
          peepholes ? u.direction(peepholes, d) : Value(), activationNames(act),
          clip, reverse, linearBeforeReset);
      directionY.push_back(
          u.reshape(recurrence.getY(), {steps, 1, batch, hidden}));
      lastH.push_back(u.reshape(recurrence.getHLast(), {1, batch, hidden}));
      if (isLSTM)
        lastC.push_back(u.reshape(recurrence.getCLast(), {1, batch, hidden}));
      continue;
    }
    SmallVector<Value> ys(steps);
    for (int64_t s = 0; s < steps; ++s) {
      int64_t t = reverse ? steps - 1 - s : s;
      Value fromH = u.gemm(h, recurrent, recurrentBias);
      Value newH, newC;
      switch (kind) {
      case RecurrentKind::RNN:
        newH = u.activate(act[0], u.add(inputs[t], fromH), clip);
        break;
      case RecurrentKind::LSTM: {
        SmallVector<Value> gate = u.split(u.add(inputs[t], fromH), 1, 4);
        Value in = gate[0], out = gate[1], forget = gate[2];
        if (peepholes) {
          in = u.add(in, u.mul(peep[0], c));
          forget = u.add(forget, u.mul(peep[2], c));
        }
        in = u.activate(act[0], in, clip);
        forget = u.activate(act[0], forget, clip);
        Value candidate = u.activate(act[1], gate[3], clip);
        newC = u.add(u.mul(forget, c), u.mul(in, candidate));
        if (peepholes)
          out = u.add(out, u.mul(peep[1], newC));
        out = u.activate(act[0], out, clip);
        newH = u.mul(out, u.activate(act[2], newC, std::nullopt));
        break;
      }
      case RecurrentKind::GRU: {
        SmallVector<Value> xs = u.split(inputs[t], 1, 3);
        SmallVector<Value> hs = u.split(fromH, 1, linearBeforeReset ? 3 : 2);
        Value update = u.activate(act[0], u.add(xs[0], hs[0]), clip);
        Value reset = u.activate(act[0], u.add(xs[1], hs[1]), clip);
        Value gated = linearBeforeReset
                          ? u.mul(reset, hs[2])
                          : u.gemm(u.mul(reset, h), candidateR, candidateBias);
        Value candidate = u.activate(act[1], u.add(xs[2], gated), clip);
        // (1 - z) * candidate + z * H = candidate + z * (H - candidate).
        newH = u.add(candidate, u.mul(update, u.sub(h, candidate)));
        break;
      }
      }
      Value y = newH;
      if (lens) {
        newH = u.select(masks[t], newH, h);
        if (newC)
          newC = u.select(masks[t], newC, c);
        y = u.select(masks[t], y, u.zeros({batch, hidden}));
      }
      h = newH;
      c = newC;
      ys[t] = u.reshape(y, {1, 1, batch, hidden});
    }
    // Rows of length 0 end with a zero state, as onnxruntime gives them
    // (masks[0] is lens > 0).
    if (lens) {
      h = u.select(masks[0], h, u.zeros({batch, hidden}));
      if (c)
        c = u.select(masks[0], c, u.zeros({batch, hidden}));
    }
    directionY.push_back(u.concat(ys, 0));
    lastH.push_back(u.reshape(h, {1, batch, hidden}));
    if (isLSTM)
      lastC.push_back(u.reshape(c, {1, batch, hidden}));
  }

  Value results[3];
  results[0] = directions == 1 ? directionY[0] : u.concat(directionY, 1);
  results[1] = directions == 1 ? lastH[0] : u.concat(lastH, 0);
  if (isLSTM)
    results[2] = directions == 1 ? lastC[0] : u.concat(lastC, 0);
  if (batchFirst) {
    results[0] = u.transpose(results[0], {2, 0, 1, 3});
    results[1] = u.transpose(results[1], {1, 0, 2});
    if (isLSTM)
      results[2] = u.transpose(results[2], {1, 0, 2});
  }
  for (unsigned i = 0, e = node.getOp().getNumResults(); i < e; ++i)
    if (node.isResultUsed(i))
      rewriter.replaceAllUsesWith(node.result(i), results[i]);
  rewriter.eraseOp(node.getOp());
  return success();
}

} // namespace

void populateRecurrentPatterns(RewritePatternSet &patterns,
                               int64_t unrollLimit) {
  // Opset 14 added `layout`; the earlier versions (7) mean the same with
  // layout 0.
  auto add = [&](StringRef name, RecurrentKind kind,
                 ArrayRef<StringRef> extra) {
    SmallVector<StringRef> known = {
        "activation_alpha", "activation_beta", "activations", "clip",
        "direction",        "hidden_size",     "layout"};
    llvm::append_range(known, extra);
    addONNXPattern(
        patterns, name, 7, kMaxOpset, known,
        [kind, unrollLimit](ONNXNode node, PatternRewriter &rewriter) {
          return legalizeRecurrent(node, rewriter, kind, unrollLimit);
        });
  };
  add("RNN", RecurrentKind::RNN, {});
  add("GRU", RecurrentKind::GRU, {"linear_before_reset"});
  add("LSTM", RecurrentKind::LSTM, {"input_forget"});
}

} // namespace heterps::hps
