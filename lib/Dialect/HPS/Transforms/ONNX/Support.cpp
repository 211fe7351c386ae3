//===- Support.cpp - Helpers shared by the layer-op patterns --------------===//

#include "Support.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace heterps::hps {

/// `rewrite` behind a check that the node has no attribute but `known`.
static ONNXRewrite withKnownAttributes(ArrayRef<StringRef> known,
                                       ONNXRewrite rewrite) {
  SmallVector<std::string> names(known.begin(), known.end());
  return [names = std::move(names), rewrite = std::move(rewrite)](
             ONNXNode node, PatternRewriter &rewriter) {
    for (NamedAttribute attr : node.getOp().getAttrs())
      if (!llvm::is_contained(names, attr.getName().strref()))
        return fail(node, rewriter,
                    "attribute '" + attr.getName().strref() +
                        "' is not in this opset's schema");
    return rewrite(node, rewriter);
  };
}

void addONNXPattern(RewritePatternSet &patterns, StringRef opType,
                    int64_t minOpset, int64_t maxOpset,
                    ArrayRef<StringRef> known, ONNXRewrite rewrite) {
  addONNXPattern(patterns, opType, minOpset, maxOpset,
                 withKnownAttributes(known, std::move(rewrite)));
}

void addDomainONNXPattern(RewritePatternSet &patterns, StringRef domain,
                          StringRef opType, int64_t minOpset, int64_t maxOpset,
                          ArrayRef<StringRef> known, ONNXRewrite rewrite) {
  addDomainONNXPattern(patterns, domain, opType, minOpset, maxOpset,
                       withKnownAttributes(known, std::move(rewrite)));
}

std::optional<bool> getFlag(ONNXNode node, StringRef name, bool fallback) {
  int64_t value = node.getInt(name, fallback ? 1 : 0);
  if (value != 0 && value != 1)
    return std::nullopt;
  return value == 1;
}

UnitAttr unitIf(Builder &builder, bool set) {
  return set ? builder.getUnitAttr() : UnitAttr();
}

bool canReplaceWithType(ONNXNode node, Type type) {
  Type expected = node.resultType();
  if (type == expected)
    return true;
  // Sequences are compatible when their elements are.
  auto sequence = dyn_cast<SequenceType>(type);
  auto expectedSequence = dyn_cast<SequenceType>(expected);
  if (sequence && expectedSequence) {
    type = sequence.getElementType();
    expected = expectedSequence.getElementType();
  }
  if (getElementTypeOrSelf(type) != getElementTypeOrSelf(expected) ||
      failed(verifyCompatibleShape(type, expected)))
    return false;
  return llvm::all_of(node.result().getUsers(), [](Operation *user) {
    return isa<HPSDialect>(user->getDialect());
  });
}

/// Erases the ops that computed `value` and are used by nothing else: what
/// a decomposition built before finding it cannot replace the node. (A
/// pattern that changes the IR and then fails would have the greedy driver
/// run it again forever.)
static void eraseUnusedChain(Value value, PatternRewriter &rewriter) {
  Operation *op = value ? value.getDefiningOp() : nullptr;
  if (!op || !op->use_empty())
    return;
  SmallVector<Value> operands(op->getOperands());
  rewriter.eraseOp(op);
  for (Value operand : operands)
    eraseUnusedChain(operand, rewriter);
}

LogicalResult failReplacementType(ONNXNode node, Value value,
                                  PatternRewriter &rewriter) {
  if (!value)
    return fail(node, rewriter, "nothing computes its result");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "it computes " << value.getType() << " where the model declares "
     << node.resultType() << " (a wrong shape in the graph's value_info or "
     << "outputs?)";
  return fail(node, rewriter, text);
}

LogicalResult replaceNodeWithCompatible(ONNXNode node, Value value,
                                        PatternRewriter &rewriter) {
  Type expected = node.resultType();
  Operation *last = value ? value.getDefiningOp() : nullptr;
  // A result func.return reads must keep the declared type (the signature
  // becomes static in refineReturnedTypes): give it to the op the
  // decomposition ended with, which accepts less static shapes.
  if (last && value.use_empty() && last->getNumResults() == 1 &&
      isa<HPSDialect>(last->getDialect()) &&
      !canReplaceWithType(node, value.getType()) &&
      getElementTypeOrSelf(value.getType()) == getElementTypeOrSelf(expected) &&
      succeeded(verifyCompatibleShape(value.getType(), expected))) {
    Type refined = value.getType();
    rewriter.modifyOpInPlace(last, [&] { value.setType(expected); });
    if (!verifiesQuietly(last))
      rewriter.modifyOpInPlace(last, [&] { value.setType(refined); });
  }
  // A value no op made here (a function argument: Einsum "ij->ij") or that
  // others read keeps its type: a view of it takes the declared one.
  auto staticType =
      value ? dyn_cast<RankedTensorType>(value.getType()) : RankedTensorType();
  if (staticType && staticType.hasStaticShape() &&
      !canReplaceWithType(node, staticType) &&
      getElementTypeOrSelf(staticType) == getElementTypeOrSelf(expected) &&
      succeeded(verifyCompatibleShape(staticType, expected))) {
    ArrayRef<int64_t> shape = staticType.getShape();
    value = rewriter.create<ReshapeOp>(
        node.getLoc(), expected, value, rewriter.getDenseI64ArrayAttr(shape),
        llvm::is_contained(shape, 0) ? rewriter.getUnitAttr() : UnitAttr(),
        node.getOp().getDeviceAttr());
  }
  if (!value || !canReplaceWithType(node, value.getType())) {
    // Named before the chain that computed it goes.
    LogicalResult failure = failReplacementType(node, value, rewriter);
    eraseUnusedChain(value, rewriter);
    return failure;
  }
  replaceNodeWith(node, value, rewriter);
  return success();
}

std::optional<SmallVector<double>> constantFloats(Value value) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(getConstantValue(value));
  if (!dense || dense.getNumElements() == 0)
    return std::nullopt;
  SmallVector<double> values;
  for (const APFloat &f : dense.getValues<APFloat>())
    values.push_back(f.convertToDouble());
  return values;
}

Value denseFloatConstant(PatternRewriter &rewriter, Location loc,
                         ArrayRef<int64_t> shape, Type element,
                         ArrayRef<double> values) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(element).getFloatSemantics();
  SmallVector<APFloat> floats;
  floats.reserve(values.size());
  for (double value : values) {
    APFloat f(value);
    bool lost;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    floats.push_back(f);
  }
  auto type = RankedTensorType::get(shape, element);
  return rewriter.create<ConstantOp>(loc, DenseElementsAttr::get(type, floats));
}

Value scalarConstant(PatternRewriter &rewriter, Location loc, Type element,
                     double value) {
  return rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                  makeScalarAttr(element, value)));
}

std::optional<SmallVector<int64_t>> normalizeAxisList(ArrayRef<int64_t> axes,
                                                      int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    std::optional<int64_t> normalized = shapes::normalizeAxis(axis, rank);
    if (!normalized || llvm::is_contained(result, *normalized))
      return std::nullopt;
    result.push_back(*normalized);
  }
  return result;
}

Value reshapeTo(ONNXNode node, PatternRewriter &rewriter, Value value,
                ArrayRef<int64_t> shape) {
  // A reshape of a reshape (decomposition steps that each build a view)
  // is one reshape of the first one's input; a static input of the shape
  // needs none.
  if (auto inner = value.getDefiningOp<ReshapeOp>()) {
    auto source = dyn_cast<RankedTensorType>(inner.getInput().getType());
    if (source && source.hasStaticShape())
      value = inner.getInput();
  }
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType());
      ranked && ranked.hasStaticShape() && ranked.getShape() == shape)
    return value;
  Type element = cast<ShapedType>(value.getType()).getElementType();
  // A 0 in the target is an empty axis, not a copy of the input's.
  UnitAttr allowZero =
      llvm::is_contained(shape, 0) ? rewriter.getUnitAttr() : UnitAttr();
  return rewriter.create<ReshapeOp>(node.getLoc(),
                                    RankedTensorType::get(shape, element),
                                    value, rewriter.getDenseI64ArrayAttr(shape),
                                    allowZero, node.getOp().getDeviceAttr());
}

/// Repeats every axis i of `input` (static shape) `factors[i]` times, as
/// reshape -> expand -> reshape: a new unit axis beside each repeated one
/// is broadcast to the factor and folded back in. `outer` puts the copies
/// outside the axis (Tile: whole copies one after another), otherwise
/// inside (nearest upsampling: each element repeated in place).
Value repeatAxes(ONNXNode node, PatternRewriter &rewriter, Value input,
                 ArrayRef<int64_t> factors, bool outer) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> split, expanded, result;
  for (auto [extent, factor] : llvm::zip(type.getShape(), factors)) {
    if (factor != 1 && outer) {
      split.push_back(1);
      expanded.push_back(factor);
    }
    split.push_back(extent);
    expanded.push_back(extent);
    if (factor != 1 && !outer) {
      split.push_back(1);
      expanded.push_back(factor);
    }
    result.push_back(extent * factor);
  }
  if (result == type.getShape())
    return input;
  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  Type element = type.getElementType();
  Value copies = rewriter.create<ExpandOp>(
      loc, RankedTensorType::get(expanded, element),
      reshapeTo(node, rewriter, input, split),
      rewriter.getDenseI64ArrayAttr(expanded), device);
  return reshapeTo(node, rewriter, copies, result);
}

bool verifiesQuietly(Operation *op, std::string *firstError) {
  ScopedDiagnosticHandler quiet(op->getContext(), [&](Diagnostic &diag) {
    if (firstError && firstError->empty())
      *firstError = diag.str();
    return success();
  });
  return succeeded(verify(op));
}

OnnxNodeOp createONNXNode(PatternRewriter &rewriter, Location loc,
                          StringRef opType, int64_t opset, ValueRange inputs,
                          TypeRange types, ArrayRef<NamedAttribute> attrs) {
  return rewriter.create<OnnxNodeOp>(
      loc, types, rewriter.getStringAttr(opType), rewriter.getStringAttr(""),
      rewriter.getI64IntegerAttr(opset), rewriter.getDictionaryAttr(attrs),
      inputs, ArrayAttr(), DeviceAttr(), /*bodiesCount=*/0);
}

/// The more static of two compatible tensor types; null if they conflict.
static Type meetTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto firstSequence = dyn_cast<SequenceType>(a);
  auto secondSequence = dyn_cast<SequenceType>(b);
  if (firstSequence && secondSequence) {
    auto element = dyn_cast_or_null<TensorType>(meetTypes(
        firstSequence.getElementType(), secondSequence.getElementType()));
    return element ? SequenceType::get(a.getContext(), element) : Type();
  }
  auto first = dyn_cast<TensorType>(a), second = dyn_cast<TensorType>(b);
  if (!first || !second || first.getElementType() != second.getElementType())
    return {};
  if (!first.hasRank())
    return b;
  if (!second.hasRank())
    return a;
  if (first.getRank() != second.getRank())
    return {};
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(first.getShape(), second.getShape())) {
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return {};
    shape.push_back(ShapedType::isDynamic(x) ? y : x);
  }
  return RankedTensorType::get(shape, first.getElementType());
}

/// `value`, standing for a control-flow result of type `wanted`. ONNX types
/// loop results by merging iterations, so either type may be the more
/// static one: the value takes the meet of both (a refinement, which every
/// use accepts); a block argument or constant that is less static than
/// `wanted` gets an Identity node of type `wanted`, which legalizes once
/// the types agree.
static Value adoptType(Value value, Type wanted, PatternRewriter &rewriter,
                       Location loc) {
  if (value.getType() == wanted)
    return value;
  Type meet = meetTypes(value.getType(), wanted);
  if (meet && meet == value.getType())
    return value;
  Operation *def = value.getDefiningOp();
  if (meet && def && !def->hasTrait<OpTrait::ConstantLike>()) {
    rewriter.modifyOpInPlace(def, [&] { value.setType(meet); });
    return value;
  }
  return createONNXNode(rewriter, loc, "Identity", 13, value, wanted)
      .getResult(0);
}

void replaceNodeRefining(OnnxNodeOp op, ArrayRef<Value> values,
                         PatternRewriter &rewriter) {
  SmallVector<Value> adopted;
  // An unused result needs no value of its type.
  for (auto [result, value] : llvm::zip(op.getResults(), values))
    adopted.push_back(result.use_empty() ? value
                                         : adoptType(value, result.getType(),
                                                     rewriter, op.getLoc()));
  rewriter.replaceOp(op, adopted);
  for (Value value : adopted)
    for (Operation *user : value.getUsers())
      if (auto ret = dyn_cast<func::ReturnOp>(user)) {
        auto func = ret->getParentOfType<func::FuncOp>();
        auto type = FunctionType::get(op.getContext(), func.getArgumentTypes(),
                                      ret.getOperandTypes());
        if (type != func.getFunctionType())
          rewriter.modifyOpInPlace(func, [&] { func.setFunctionType(type); });
      }
}

} // namespace heterps::hps
