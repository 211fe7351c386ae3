//===- HPSOps.cpp - HeterPS op verifiers and printers ---------------------===//

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/IR/HPSShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace heterps::hps;
namespace shp = heterps::hps::shapes;

//===----------------------------------------------------------------------===//
// Custom type directives: print one type when operands and result agree.
//===----------------------------------------------------------------------===//

static ParseResult parseCompactTypes(OpAsmParser &parser, Type &input,
                                     Type &result) {
  if (parser.parseType(input))
    return failure();
  result = input;
  if (succeeded(parser.parseOptionalArrow()))
    return parser.parseType(result);
  return success();
}

static void printCompactTypes(OpAsmPrinter &printer, Operation *, Type input,
                              Type result) {
  printer << input;
  if (result != input)
    printer << " -> " << result;
}

static ParseResult parseCompactBinaryTypes(OpAsmParser &parser, Type &lhs,
                                           Type &rhs, Type &result) {
  if (parser.parseType(lhs))
    return failure();
  rhs = result = lhs;
  if (succeeded(parser.parseOptionalComma()) && parser.parseType(rhs))
    return failure();
  if (succeeded(parser.parseOptionalArrow()))
    return parser.parseType(result);
  return success();
}

static void printCompactBinaryTypes(OpAsmPrinter &printer, Operation *,
                                    Type lhs, Type rhs, Type result) {
  if (lhs == rhs && rhs == result) {
    printer << lhs;
    return;
  }
  printer << lhs << ", " << rhs << " -> " << result;
}

//===----------------------------------------------------------------------===//
// Helpers.
//===----------------------------------------------------------------------===//

namespace {
using Shapes = SmallVectorImpl<ShapedTypeComponents>;

/// An error a shape rule reports: streamed into a diagnostic when the rule
/// runs with a location (verification), dropped when it runs without one
/// (inference, where rejected operands only mean "no shape"). Converts to
/// failure.
class ShapeError {
public:
  ShapeError() = default;
  explicit ShapeError(InFlightDiagnostic &&diag) : diag(std::move(diag)) {}

  template <typename Arg> ShapeError &operator<<(Arg &&arg) {
    if (diag)
      *diag << std::forward<Arg>(arg);
    return *this;
  }
  operator LogicalResult() const { return failure(); }
  template <typename T> operator FailureOr<T>() const { return failure(); }

private:
  std::optional<InFlightDiagnostic> diag;
};

/// Where a shape rule of the op named `opName` reports; emitOpError words
/// its errors as Operation::emitOpError does. Verifiers without a rule share
/// the rules' checks through the Operation form.
class ShapeErrors {
public:
  ShapeErrors(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}
  explicit ShapeErrors(Operation *op) : op(op) {}

  ShapeError emitOpError(const Twine &message = {}) const {
    if (op)
      return ShapeError(op->emitOpError(message));
    if (!loc)
      return ShapeError();
    return ShapeError(emitError(*loc) << "'" << opName << "' op " << message);
  }

private:
  Operation *op = nullptr;
  std::optional<Location> loc;
  StringRef opName;
};

/// The shape of a ranked tensor value, or null when unranked.
std::optional<ArrayRef<int64_t>> shapeOf(Value value) {
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType()))
    return ranked.getShape();
  return std::nullopt;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += dim == shp::kDynamic ? "?" : std::to_string(dim);
  }
  return text + "]";
}

/// How a shape rule ends: with the shape it computed for the next result.
LogicalResult inferred(Shapes &shapes, ArrayRef<int64_t> shape) {
  shapes.emplace_back(shape);
  return success();
}

/// How a shape rule ends when an operand's rank is unknown: `results`
/// unranked results.
LogicalResult unranked(Shapes &shapes, size_t results = 1) {
  shapes.append(results, ShapedTypeComponents());
  return success();
}

/// Each ranked result of `op` has the shape its rule computed; a dynamic
/// extent on either side matches any.
LogicalResult checkResultShapes(Operation *op,
                                ArrayRef<ShapedTypeComponents> shapes) {
  for (auto [result, shape] : llvm::zip(op->getResults(), shapes)) {
    std::optional<ArrayRef<int64_t>> actual = shapeOf(result);
    if (!actual || !shape.hasRank() ||
        succeeded(verifyCompatibleShape(*actual, shape.getDims())))
      continue;
    return op->emitOpError() << "result shape " << formatShape(*actual)
                             << " does not match the computed shape "
                             << formatShape(shape.getDims());
  }
  return success();
}

/// The verifier of an op with a shape rule: the rule reporting at the op,
/// then `resultChecks` (what the rule cannot see: the result types), then
/// the results against the computed shapes.
template <typename OpTy>
LogicalResult
verifyByShapeRule(OpTy op,
                  function_ref<LogicalResult()> resultChecks = nullptr) {
  SmallVector<ShapedTypeComponents> shapes;
  if (failed(OpTy::inferReturnTypeComponents(
          op.getContext(), op.getLoc(), typename OpTy::Adaptor(op), shapes)) ||
      (resultChecks && failed(resultChecks())))
    return failure();
  return checkResultShapes(op, shapes);
}

/// The inferReturnTypeComponents of an op sharing its rule with others: RULE
/// applied to ARG, an expression of the adaptor `op`.
#define HPS_SHARED_SHAPE_RULE(OP, RULE, ARG)                                   \
  LogicalResult OP::inferReturnTypeComponents(MLIRContext *,                   \
                                              std::optional<Location> loc,     \
                                              Adaptor op, Shapes &shapes) {    \
    return RULE(ShapeErrors(loc, getOperationName()), ARG, shapes);            \
  }

LogicalResult checkRank(const ShapeErrors &errors, Value value, StringRef what,
                        int64_t minRank, int64_t maxRank = INT64_MAX) {
  std::optional<ArrayRef<int64_t>> shape = shapeOf(value);
  if (!shape)
    return success();
  int64_t rank = shape->size();
  if (rank >= minRank && rank <= maxRank)
    return success();
  ShapeError diag = errors.emitOpError();
  diag << what << " has rank " << rank << " but must have rank ";
  if (minRank == maxRank)
    diag << minRank;
  else if (maxRank == INT64_MAX)
    diag << "at least " << minRank;
  else
    diag << minRank << " to " << maxRank;
  return diag;
}

bool staticMismatch(int64_t a, int64_t b) {
  return a != shp::kDynamic && b != shp::kDynamic && a != b;
}

/// Normalizes and de-duplicates axes; reports the first bad one.
FailureOr<SmallVector<int64_t>>
normalizeAxes(const ShapeErrors &errors, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    std::optional<int64_t> normal = shp::normalizeAxis(axis, rank);
    if (!normal)
      return errors.emitOpError()
             << "axis " << axis << " is out of range for rank " << rank;
    if (!seen.insert(*normal).second)
      return errors.emitOpError() << "axis " << axis << " appears twice";
    result.push_back(*normal);
  }
  return result;
}

Type elementTypeOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

bool isInteger(Value value) { return isa<IntegerType>(elementTypeOf(value)); }
} // namespace

//===----------------------------------------------------------------------===//
// Constants, weights and generic nodes.
//===----------------------------------------------------------------------===//

ElementsAttr heterps::hps::getConstantValue(Value value) {
  if (auto constant = value.getDefiningOp<ConstantOp>())
    return constant.getValue();
  if (auto weight = value.getDefiningOp<WeightOp>())
    return weight.getValue();
  return nullptr;
}

std::optional<SmallVector<int64_t>> heterps::hps::getConstantInts(Value value) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(getConstantValue(value));
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (const APInt &v : dense.getValues<APInt>())
    ints.push_back(dense.getElementType().isUnsignedInteger()
                       ? static_cast<int64_t>(v.getZExtValue())
                       : v.getSExtValue());
  return ints;
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("weight name must not be empty");
  return success();
}

LogicalResult OnnxNodeOp::verify() {
  if (getOpType().empty())
    return emitOpError("op_type must not be empty");
  if (getOpset() < 1)
    return emitOpError("opset must be positive, got ") << getOpset();
  size_t named = getSubgraphs() ? getSubgraphs()->size() : 0;
  if (named != getBodies().size())
    return emitOpError("has ") << getBodies().size() << " region(s) but names "
                               << named << " subgraph(s)";
  return success();
}

Region *OnnxNodeOp::getSubgraph(StringRef name) {
  if (ArrayAttr names = getSubgraphsAttr())
    for (auto [subgraphName, region] : llvm::zip(names, getBodies()))
      if (cast<StringAttr>(subgraphName).getValue() == name)
        return &region;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution.
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypeComponents(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getA(), "A", 2, 2)) ||
      failed(checkRank(errors, op.getB(), "B", 2, 2)))
    return failure();
  auto a = shapeOf(op.getA()), b = shapeOf(op.getB());
  if (!a || !b)
    return unranked(shapes);
  int64_t m = op.getTransA() ? (*a)[1] : (*a)[0];
  int64_t k = op.getTransA() ? (*a)[0] : (*a)[1];
  int64_t kb = op.getTransB() ? (*b)[1] : (*b)[0];
  int64_t n = op.getTransB() ? (*b)[0] : (*b)[1];
  if (staticMismatch(k, kb))
    return errors.emitOpError()
           << "inner dimensions differ: " << k << " vs " << kb;
  SmallVector<int64_t> result = {m, n};
  if (op.getC()) {
    if (auto c = shapeOf(op.getC()); c && !shp::broadcastsTo(*c, result))
      return errors.emitOpError()
             << "C of shape " << formatShape(*c) << " does not broadcast to "
             << formatShape(result);
  }
  return inferred(shapes, result);
}

/// Where any operand or result is floating point, all share its element
/// type. The kernels read every operand as the result's type: an f64
/// weight beside an f32 activation was read as f32 bytes (3.75 for 4.0).
/// Integer forms (the quantized products' u8 x i8 -> i32) are their
/// lowerings' to check.
static LogicalResult verifyOneFloatType(Operation *op) {
  SmallVector<Type> elements;
  for (Type type : op->getOperandTypes())
    elements.push_back(getElementTypeOrSelf(type));
  for (Type type : op->getResultTypes())
    elements.push_back(getElementTypeOrSelf(type));
  const Type *floating = llvm::find_if(
      elements, [](Type element) { return isa<FloatType>(element); });
  if (floating == elements.end())
    return success();
  for (Type element : elements)
    if (element != *floating)
      return op->emitOpError("operands and result must share one element "
                             "type, not ")
             << *floating << " and " << element;
  return success();
}

LogicalResult GemmOp::verify() {
  if (failed(verifyOneFloatType(*this)))
    return failure();
  return verifyByShapeRule(*this);
}

LogicalResult MatMulOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getA(), "A", 1)) ||
      failed(checkRank(errors, op.getB(), "B", 1)))
    return failure();
  auto a = shapeOf(op.getA()), b = shapeOf(op.getB());
  if (!a || !b)
    return unranked(shapes);
  SmallVector<int64_t> lhs(*a), rhs(*b);
  bool promoteA = lhs.size() == 1, promoteB = rhs.size() == 1;
  if (promoteA)
    lhs.insert(lhs.begin(), 1);
  if (promoteB)
    rhs.push_back(1);
  if (staticMismatch(lhs.back(), rhs[rhs.size() - 2]))
    return errors.emitOpError() << "inner dimensions differ: " << lhs.back()
                                << " vs " << rhs[rhs.size() - 2];
  auto batch =
      shp::broadcast(ArrayRef(lhs).drop_back(2), ArrayRef(rhs).drop_back(2));
  if (!batch)
    return errors.emitOpError("batch dimensions do not broadcast");
  SmallVector<int64_t> result(*batch);
  if (!promoteA)
    result.push_back(lhs[lhs.size() - 2]);
  if (!promoteB)
    result.push_back(rhs.back());
  return inferred(shapes, result);
}

LogicalResult MatMulOp::verify() {
  if (failed(verifyOneFloatType(*this)))
    return failure();
  return verifyByShapeRule(*this);
}

LogicalResult DeterminantOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location> loc, Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getInput(), "input", 2)))
    return failure();
  Type element = elementTypeOf(op.getInput());
  if (!element.isF32() && !element.isF64())
    return errors.emitOpError("input must be f32 or f64");
  std::optional<ArrayRef<int64_t>> input = shapeOf(op.getInput());
  if (!input)
    return unranked(shapes);
  if (staticMismatch(input->back(), (*input)[input->size() - 2]))
    return errors.emitOpError("input must end in square matrices");
  return inferred(shapes, input->drop_back(2));
}

LogicalResult DeterminantOp::verify() {
  return verifyByShapeRule(*this, [&]() -> LogicalResult {
    if (elementTypeOf(getResult()) != elementTypeOf(getInput()))
      return emitOpError("result must have the input's element type");
    return success();
  });
}

/// Shared checks of windowed ops (conv and pooling) over `spatial` axes.
static LogicalResult verifyWindowAttrs(const ShapeErrors &errors,
                                       int64_t spatial,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> pads,
                                       ArrayRef<int64_t> dilations) {
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return errors.emitOpError()
           << "expects " << spatial << " strides and dilations and "
           << 2 * spatial << " pads for " << spatial << " spatial axes";
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return errors.emitOpError("strides and dilations must be positive");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return errors.emitOpError("pads must not be negative");
  return success();
}

LogicalResult ConvOp::inferReturnTypeComponents(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getInput(), "input", 3)))
    return failure();
  auto in = shapeOf(op.getInput()), w = shapeOf(op.getFilter());
  if (!in || !w)
    return unranked(shapes);
  int64_t spatial = in->size() - 2;
  if (w->size() != in->size())
    return errors.emitOpError() << "filter rank " << w->size()
                                << " differs from input rank " << in->size();
  if (failed(verifyWindowAttrs(errors, spatial, op.getStrides(), op.getPads(),
                               op.getDilations())))
    return failure();
  int64_t group = op.getGroup();
  if (group < 1)
    return errors.emitOpError("group must be positive");
  int64_t outChannels = (*w)[0];
  if (outChannels != shp::kDynamic && outChannels % group != 0)
    return errors.emitOpError() << "output channels " << outChannels
                                << " are not divisible by group " << group;
  if ((*in)[1] != shp::kDynamic && (*w)[1] != shp::kDynamic &&
      (*in)[1] != (*w)[1] * group)
    return errors.emitOpError()
           << "input has " << (*in)[1] << " channels but filter expects "
           << (*w)[1] << " x group " << group;
  if (op.getBias()) {
    auto bias = shapeOf(op.getBias());
    if (bias && (bias->size() != 1 || staticMismatch((*bias)[0], outChannels)))
      return errors.emitOpError() << "bias must be 1-D of size " << outChannels;
  }
  SmallVector<int64_t> result = {(*in)[0], outChannels};
  for (int64_t i = 0; i < spatial; ++i) {
    // A window that fits nowhere gave an empty result, which no kernel
    // runs: the bundle compiled and failed on every run.
    const int64_t padded =
        (*in)[2 + i] + op.getPads()[i] + op.getPads()[spatial + i];
    const int64_t window = op.getDilations()[i] * ((*w)[2 + i] - 1) + 1;
    if ((*in)[2 + i] != shp::kDynamic && (*w)[2 + i] != shp::kDynamic &&
        window > padded)
      return errors.emitOpError()
             << "spatial axis " << i << ": the filter's window (" << window
             << " with dilation) is larger than the padded input (" << padded
             << ")";
    result.push_back(shp::windowCount(
        (*in)[2 + i], (*w)[2 + i], op.getStrides()[i], op.getPads()[i],
        op.getPads()[spatial + i], op.getDilations()[i], false));
  }
  return inferred(shapes, result);
}

/// One element type throughout, or the quantized form: u8 or i8 input, i8
/// filter, i32 bias and result.
static LogicalResult verifyConvElementTypes(ConvOp op) {
  Type input = getElementTypeOrSelf(op.getInput().getType());
  Type filter = getElementTypeOrSelf(op.getFilter().getType());
  Type result = getElementTypeOrSelf(op.getResult().getType());
  Type bias =
      op.getBias() ? getElementTypeOrSelf(op.getBias().getType()) : Type();
  if (input.isInteger(8)) {
    if (!filter.isSignlessInteger(8) || !result.isSignlessInteger(32) ||
        (bias && !bias.isSignlessInteger(32)))
      return op.emitOpError("with an 8-bit integer input needs an i8 filter "
                            "and an i32 bias and result, not ")
             << filter << ", " << bias << " and " << result;
    return success();
  }
  if (filter != input || result != input || (bias && bias != input))
    return op.emitOpError("input, filter, bias and result must share an "
                          "element type unless the input is 8-bit integer");
  return success();
}

LogicalResult ConvOp::verify() {
  if (failed(verifyConvElementTypes(*this)))
    return failure();
  return verifyByShapeRule(*this);
}

/// Checks that `in`, `w` and `grad` are the input, filter and result of a
/// conv with the op's geometry: the contract of both conv adjoints.
static LogicalResult verifyConvGeometry(Operation *op, Value in, Value w,
                                        Value grad, ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> pads,
                                        ArrayRef<int64_t> dilations,
                                        int64_t group) {
  ShapeErrors errors(op);
  if (failed(checkRank(errors, in, "input", 3)))
    return failure();
  auto inShape = shapeOf(in), wShape = shapeOf(w), gShape = shapeOf(grad);
  if (!inShape || !wShape || !gShape)
    return success();
  int64_t spatial = inShape->size() - 2;
  if (wShape->size() != inShape->size() || gShape->size() != inShape->size())
    return op->emitOpError() << "input, filter and gradient must have one "
                                "rank, not "
                             << inShape->size() << ", " << wShape->size()
                             << " and " << gShape->size();
  if (failed(verifyWindowAttrs(errors, spatial, strides, pads, dilations)))
    return failure();
  if (group < 1)
    return op->emitOpError("group must be positive");
  int64_t outChannels = (*wShape)[0];
  if (outChannels != shp::kDynamic && outChannels % group != 0)
    return op->emitOpError() << "output channels " << outChannels
                             << " are not divisible by group " << group;
  if ((*inShape)[1] != shp::kDynamic && (*wShape)[1] != shp::kDynamic &&
      (*inShape)[1] != (*wShape)[1] * group)
    return op->emitOpError()
           << "input has " << (*inShape)[1] << " channels but filter expects "
           << (*wShape)[1] << " x group " << group;
  SmallVector<int64_t> result = {(*inShape)[0], outChannels};
  for (int64_t i = 0; i < spatial; ++i)
    result.push_back(shp::windowCount((*inShape)[2 + i], (*wShape)[2 + i],
                                      strides[i], pads[i], pads[spatial + i],
                                      dilations[i], false));
  bool ok = true;
  for (auto [actual, expected] : llvm::zip(*gShape, result))
    ok &= !staticMismatch(actual, expected);
  if (!ok)
    return op->emitOpError()
           << "gradient shape " << formatShape(*gShape)
           << " is not the conv result shape " << formatShape(result);
  return success();
}

LogicalResult ConvGradInputOp::verify() {
  if (failed(verifyOneFloatType(*this)))
    return failure();
  return verifyConvGeometry(*this, getResult(), getFilter(), getGrad(),
                            getStrides(), getPads(), getDilations(),
                            getGroup());
}

LogicalResult ConvGradFilterOp::verify() {
  if (failed(verifyOneFloatType(*this)))
    return failure();
  return verifyConvGeometry(*this, getInput(), getResult(), getGrad(),
                            getStrides(), getPads(), getDilations(),
                            getGroup());
}

namespace {
/// The sizes of a recurrence, from its projected input and R.
struct RecurrenceDims {
  int64_t steps = 0, batch = 0, hidden = 0, gates = 0;
};
} // namespace

/// `v` (when present) has shape `dims`.
static LogicalResult expectShape(Operation *op, Value v, ArrayRef<int64_t> dims,
                                 StringRef name) {
  if (!v)
    return success();
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() != dims)
    return op->emitOpError()
           << name << " has type " << type << "; expected "
           << RankedTensorType::get(dims, type.getElementType());
  return success();
}

/// The checks hps.recurrence and its adjoint share: the attributes and the
/// forward operands. Fills `dims`.
template <typename OpTy>
static LogicalResult verifyRecurrenceInputs(OpTy op, RecurrenceDims &dims) {
  StringRef cell = op.getCell();
  int64_t gatesPerHidden = llvm::StringSwitch<int64_t>(cell)
                               .Case("rnn", 1)
                               .Case("gru", 3)
                               .Case("lstm", 4)
                               .Default(0);
  if (!gatesPerHidden)
    return op.emitOpError()
           << "cell '" << cell << "' is none of rnn, gru and lstm";
  bool lstm = cell == "lstm";
  size_t activations = lstm ? 3 : gatesPerHidden == 3 ? 2 : 1;
  if (op.getActivations().size() != activations)
    return op.emitOpError()
           << "a " << cell << " cell takes " << activations
           << " activations, got " << op.getActivations().size();
  for (Attribute name : op.getActivations())
    if (!llvm::is_contained({"Sigmoid", "Tanh", "Relu"},
                            cast<StringAttr>(name).getValue()))
      return op.emitOpError()
             << "activation " << name << " is none of Sigmoid, Tanh and Relu";
  if (auto clip = op.getClip(); clip && !(clip->convertToFloat() >= 0.0f))
    return op.emitOpError() << "clip must be non-negative";
  if (lstm != bool(op.getInitialC()))
    return op.emitOpError() << "initial_c is there exactly for lstm";
  if (op.getPeepholes() && !lstm)
    return op.emitOpError() << "peepholes belong to lstm cells only";
  if (op.getLinearBeforeReset() && cell != "gru")
    return op.emitOpError() << "linear_before_reset belongs to gru cells only";
  auto projected = cast<RankedTensorType>(op.getProjected().getType());
  auto recurrence = cast<RankedTensorType>(op.getRecurrence().getType());
  if (!projected.hasStaticShape() || projected.getRank() != 3 ||
      !recurrence.hasStaticShape() || recurrence.getRank() != 2)
    return op.emitOpError() << "needs a static [T, N, G] projected input and a "
                               "static [G, H] recurrence";
  dims.steps = projected.getDimSize(0);
  dims.batch = projected.getDimSize(1);
  dims.hidden = recurrence.getDimSize(1);
  dims.gates = gatesPerHidden * dims.hidden;
  int64_t n = dims.batch, h = dims.hidden, g = dims.gates;
  Operation *o = op.getOperation();
  return success(
      succeeded(
          expectShape(o, op.getProjected(), {dims.steps, n, g}, "projected")) &&
      succeeded(expectShape(o, op.getRecurrence(), {g, h}, "recurrence")) &&
      succeeded(expectShape(o, op.getRecurrentBias(), {g}, "recurrent_bias")) &&
      succeeded(expectShape(o, op.getLengths(), {n}, "lengths")) &&
      succeeded(expectShape(o, op.getInitialH(), {n, h}, "initial_h")) &&
      succeeded(expectShape(o, op.getInitialC(), {n, h}, "initial_c")) &&
      succeeded(expectShape(o, op.getPeepholes(), {3 * h}, "peepholes")));
}

LogicalResult RecurrenceOp::verify() {
  RecurrenceDims d;
  if (failed(verifyRecurrenceInputs(*this, d)))
    return failure();
  if (bool(getInitialC()) != bool(getCLast()))
    return emitOpError() << "initial_c and c_last are there exactly for lstm";
  Operation *o = getOperation();
  return success(
      succeeded(expectShape(o, getY(), {d.steps, d.batch, d.hidden}, "y")) &&
      succeeded(expectShape(o, getHLast(), {d.batch, d.hidden}, "h_last")) &&
      succeeded(expectShape(o, getCLast(), {d.batch, d.hidden}, "c_last")));
}

LogicalResult RecurrenceGradOp::verify() {
  RecurrenceDims d;
  if (failed(verifyRecurrenceInputs(*this, d)))
    return failure();
  bool lstm = getCell() == "lstm";
  if (getGradCLast() && !lstm)
    return emitOpError() << "grad_c_last belongs to lstm cells only";
  size_t cellGrads = lstm ? (getPeepholes() ? 2 : 1) : 0;
  if (getCellGrads().size() != cellGrads)
    return emitOpError() << "a " << getCell() << " cell"
                         << (getPeepholes() ? " with peepholes" : "") << " has "
                         << cellGrads << " cell adjoints, got "
                         << getCellGrads().size();
  Operation *o = getOperation();
  SmallVector<int64_t> sequence{d.steps, d.batch, d.hidden},
      state{d.batch, d.hidden};
  return success(
      succeeded(expectShape(o, getY(), sequence, "y")) &&
      succeeded(expectShape(o, getGradY(), sequence, "grad_y")) &&
      succeeded(expectShape(o, getGradHLast(), state, "grad_h_last")) &&
      succeeded(expectShape(o, getGradCLast(), state, "grad_c_last")) &&
      succeeded(expectShape(o, getGradProjected(), {d.steps, d.batch, d.gates},
                            "grad_projected")) &&
      succeeded(expectShape(o, getGradRecurrence(), {d.gates, d.hidden},
                            "grad_recurrence")) &&
      succeeded(expectShape(o, getGradRecurrentBias(), {d.gates},
                            "grad_recurrent_bias")) &&
      succeeded(expectShape(o, getGradInitialH(), state, "grad_initial_h")) &&
      succeeded(expectShape(o, getGradInitialC(), state, "grad_initial_c")) &&
      succeeded(expectShape(o, getGradPeepholes(), {3 * d.hidden},
                            "grad_peepholes")));
}

//===----------------------------------------------------------------------===//
// Pooling and normalization.
//===----------------------------------------------------------------------===//

template <typename PoolAdaptor>
static LogicalResult windowPoolShape(const ShapeErrors &errors, PoolAdaptor op,
                                     Shapes &shapes) {
  if (failed(checkRank(errors, op.getInput(), "input", 3)))
    return failure();
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  int64_t spatial = in->size() - 2;
  ArrayRef<int64_t> kernel = op.getKernelShape();
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return errors.emitOpError() << "expects " << spatial << " kernel extents";
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return errors.emitOpError("kernel extents must be positive");
  if (failed(verifyWindowAttrs(errors, spatial, op.getStrides(), op.getPads(),
                               op.getDilations())))
    return failure();
  ArrayRef<int64_t> pads = op.getPads();
  for (int64_t i = 0; i < spatial; ++i)
    if (pads[i] >= kernel[i] || pads[spatial + i] >= kernel[i])
      return errors.emitOpError("pads must be smaller than the kernel");
  SmallVector<int64_t> result = {(*in)[0], (*in)[1]};
  for (int64_t i = 0; i < spatial; ++i)
    result.push_back(shp::windowCount(
        (*in)[2 + i], kernel[i], op.getStrides()[i], pads[i], pads[spatial + i],
        op.getDilations()[i], op.getCeilMode()));
  return inferred(shapes, result);
}

static LogicalResult globalPoolShape(const ShapeErrors &errors, Value input,
                                     Shapes &shapes) {
  if (failed(checkRank(errors, input, "input", 3)))
    return failure();
  auto in = shapeOf(input);
  if (!in)
    return unranked(shapes);
  SmallVector<int64_t> expected(in->size(), 1);
  expected[0] = (*in)[0];
  expected[1] = (*in)[1];
  return inferred(shapes, expected);
}

template <typename SoftmaxAdaptor>
static LogicalResult softmaxShape(const ShapeErrors &errors, SoftmaxAdaptor op,
                                  Shapes &shapes) {
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  if (!shp::normalizeAxis(op.getAxis(), in->size()))
    return errors.emitOpError() << "axis " << static_cast<int64_t>(op.getAxis())
                                << " is out of range";
  return inferred(shapes, *in);
}

HPS_SHARED_SHAPE_RULE(MaxPoolOp, windowPoolShape, op)
HPS_SHARED_SHAPE_RULE(AvgPoolOp, windowPoolShape, op)
HPS_SHARED_SHAPE_RULE(GlobalMaxPoolOp, globalPoolShape, op.getInput())
HPS_SHARED_SHAPE_RULE(GlobalAvgPoolOp, globalPoolShape, op.getInput())
HPS_SHARED_SHAPE_RULE(SoftmaxOp, softmaxShape, op)
HPS_SHARED_SHAPE_RULE(LogSoftmaxOp, softmaxShape, op)
LogicalResult MaxPoolOp::verify() { return verifyByShapeRule(*this); }
LogicalResult AvgPoolOp::verify() { return verifyByShapeRule(*this); }
LogicalResult GlobalMaxPoolOp::verify() { return verifyByShapeRule(*this); }
LogicalResult GlobalAvgPoolOp::verify() { return verifyByShapeRule(*this); }
LogicalResult SoftmaxOp::verify() { return verifyByShapeRule(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifyByShapeRule(*this); }

LogicalResult BatchNormOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location> loc, Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getInput(), "input", 2)))
    return failure();
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  for (Value stat :
       {op.getScale(), op.getBias(), op.getMean(), op.getVariance()}) {
    auto shape = shapeOf(stat);
    if (shape && (shape->size() != 1 || staticMismatch((*shape)[0], (*in)[1])))
      return errors.emitOpError()
             << "scale, bias, mean and variance must be 1-D of "
                "the channel count "
             << (*in)[1];
  }
  return inferred(shapes, *in);
}

LogicalResult BatchNormOp::verify() {
  if (failed(verifyOneFloatType(*this)))
    return failure();
  return verifyByShapeRule(*this);
}

LogicalResult LayerNormOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location> loc, Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  std::optional<int64_t> axis = shp::normalizeAxis(op.getAxis(), in->size());
  if (!axis)
    return errors.emitOpError() << "axis " << static_cast<int64_t>(op.getAxis())
                                << " is out of range";
  ArrayRef<int64_t> normalized = in->drop_front(*axis);
  for (Value param : {op.getScale(), op.getBias()}) {
    if (!param)
      continue;
    if (auto shape = shapeOf(param);
        shape && !shp::broadcastsTo(*shape, normalized))
      return errors.emitOpError() << "scale and bias must broadcast to the "
                                     "normalized shape "
                                  << formatShape(normalized);
  }
  return inferred(shapes, *in);
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyOneFloatType(*this)))
    return failure();
  return verifyByShapeRule(*this);
}

LogicalResult ReduceOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(errors, op.getAxes(), in->size());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> result;
  for (int64_t i = 0, e = in->size(); i < e; ++i) {
    bool reduced = axes->empty() || llvm::is_contained(*axes, i);
    if (!reduced)
      result.push_back((*in)[i]);
    else if (op.getKeepdims())
      result.push_back(1);
  }
  return inferred(shapes, result);
}

LogicalResult ReduceOp::verify() { return verifyByShapeRule(*this); }

//===----------------------------------------------------------------------===//
// Elementwise ops.
//===----------------------------------------------------------------------===//

/// Broadcasting binary ops: comparisons and logic produce i1, arithmetic
/// keeps the operands' element type.
template <typename OpTy>
static LogicalResult binaryShape(const ShapeErrors &errors,
                                 typename OpTy::Adaptor op, Shapes &shapes) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  if (!std::is_same_v<OpTy, PowOp> && elementTypeOf(lhs) != elementTypeOf(rhs))
    return errors.emitOpError("operands must have the same element type");
  // On i1 logical, on wider integers bitwise.
  if (llvm::is_one_of<OpTy, AndOp, OrOp, XorOp>::value &&
      !isa<IntegerType>(elementTypeOf(lhs)))
    return errors.emitOpError("operands must be integer (or i1) tensors");
  auto a = shapeOf(lhs), b = shapeOf(rhs);
  if (!a || !b)
    return unranked(shapes);
  if (std::is_same_v<OpTy, PReluOp>) {
    if (!shp::broadcastsTo(*b, *a))
      return errors.emitOpError("slope must broadcast to the input shape");
    return inferred(shapes, *a);
  }
  auto shape = shp::broadcast(*a, *b);
  if (!shape)
    return errors.emitOpError()
           << "operand shapes " << formatShape(*a) << " and " << formatShape(*b)
           << " do not broadcast";
  return inferred(shapes, *shape);
}

template <typename OpTy> static LogicalResult verifyBinary(OpTy op) {
  return verifyByShapeRule(op, [&]() -> LogicalResult {
    Type resultElement = elementTypeOf(op.getResult());
    bool isComparison = llvm::is_one_of<OpTy, EqualOp, LessOp, LessEqualOp,
                                        GreaterOp, GreaterEqualOp>::value;
    if (isComparison && !resultElement.isInteger(1))
      return op.emitOpError("result element type must be i1");
    if (!isComparison && resultElement != elementTypeOf(op.getLhs()))
      return op.emitOpError("result element type must match the operands");
    return success();
  });
}

#define HPS_BINARY_OP(OP)                                                      \
  HPS_SHARED_SHAPE_RULE(OP, binaryShape<OP>, op)                               \
  LogicalResult OP::verify() { return verifyBinary(*this); }
HPS_BINARY_OP(AddOp)
HPS_BINARY_OP(SubOp)
HPS_BINARY_OP(MulOp)
HPS_BINARY_OP(DivOp)
HPS_BINARY_OP(PowOp)
HPS_BINARY_OP(MaxOp)
HPS_BINARY_OP(MinOp)
HPS_BINARY_OP(ModOp)
HPS_BINARY_OP(PReluOp)
HPS_BINARY_OP(AndOp)
HPS_BINARY_OP(OrOp)
HPS_BINARY_OP(XorOp)
HPS_BINARY_OP(EqualOp)
HPS_BINARY_OP(LessOp)
HPS_BINARY_OP(LessEqualOp)
HPS_BINARY_OP(GreaterOp)
HPS_BINARY_OP(GreaterEqualOp)
#undef HPS_BINARY_OP
#undef HPS_SHARED_SHAPE_RULE

LogicalResult WhereOp::inferReturnTypeComponents(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (!elementTypeOf(op.getCondition()).isInteger(1))
    return errors.emitOpError("condition must be an i1 tensor");
  auto c = shapeOf(op.getCondition()), x = shapeOf(op.getX()),
       y = shapeOf(op.getY());
  if (!c || !x || !y)
    return unranked(shapes);
  auto xy = shp::broadcast(*x, *y);
  auto all = xy ? shp::broadcast(*c, *xy) : std::nullopt;
  if (!all)
    return errors.emitOpError("condition, x and y do not broadcast together");
  return inferred(shapes, *all);
}

LogicalResult WhereOp::verify() {
  return verifyByShapeRule(*this, [&]() -> LogicalResult {
    if (elementTypeOf(getX()) != elementTypeOf(getY()) ||
        elementTypeOf(getX()) != elementTypeOf(getResult()))
      return emitOpError("x, y and the result must share an element type");
    return success();
  });
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (op.getInputs().empty())
    return errors.emitOpError("needs at least one input");
  auto first = shapeOf(op.getInputs().front());
  if (!first)
    return unranked(shapes);
  int64_t rank = first->size();
  std::optional<int64_t> axis = shp::normalizeAxis(op.getAxis(), rank);
  if (!axis)
    return errors.emitOpError() << "axis " << static_cast<int64_t>(op.getAxis())
                                << " is out of range";
  SmallVector<int64_t> result(*first);
  result[*axis] = 0;
  for (Value input : op.getInputs()) {
    auto shape = shapeOf(input);
    if (!shape)
      return unranked(shapes);
    if (static_cast<int64_t>(shape->size()) != rank)
      return errors.emitOpError("inputs must have the same rank");
    for (int64_t i = 0; i < rank; ++i) {
      if (i == *axis)
        continue;
      if (staticMismatch((*shape)[i], result[i]))
        return errors.emitOpError() << "inputs differ in dimension " << i;
      if (result[i] == shp::kDynamic)
        result[i] = (*shape)[i];
    }
    int64_t extent = (*shape)[*axis];
    result[*axis] = (extent == shp::kDynamic || result[*axis] == shp::kDynamic)
                        ? shp::kDynamic
                        : result[*axis] + extent;
  }
  return inferred(shapes, result);
}

LogicalResult ConcatOp::verify() {
  return verifyByShapeRule(*this, [&]() -> LogicalResult {
    Type element = elementTypeOf(getResult());
    if (llvm::any_of(getInputs(),
                     [&](Value in) { return elementTypeOf(in) != element; }))
      return emitOpError("inputs and result must share an element type");
    return success();
  });
}

LogicalResult SplitOp::inferReturnTypeComponents(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (llvm::any_of(op.getSizes(), [](int64_t s) { return s < 0; }))
    return errors.emitOpError("sizes must not be negative");
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes, op.getSizes().size());
  std::optional<int64_t> axis = shp::normalizeAxis(op.getAxis(), in->size());
  if (!axis)
    return errors.emitOpError() << "axis " << static_cast<int64_t>(op.getAxis())
                                << " is out of range";
  int64_t total = 0;
  for (int64_t size : op.getSizes())
    total += size;
  if (staticMismatch((*in)[*axis], total))
    return errors.emitOpError() << "sizes add up to " << total
                                << " but the axis has " << (*in)[*axis];
  // Each piece is the input with the axis cut to the piece's size.
  for (int64_t size : op.getSizes()) {
    SmallVector<int64_t> shape(*in);
    shape[*axis] = size;
    shapes.emplace_back(ArrayRef<int64_t>(shape));
  }
  return success();
}

LogicalResult SplitOp::verify() {
  if (getSizes().size() != getResults().size())
    return emitOpError() << "has " << getResults().size() << " results but "
                         << getSizes().size() << " sizes";
  return verifyByShapeRule(*this);
}

LogicalResult SliceOp::inferReturnTypeComponents(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  size_t count = op.getStarts().size();
  if (op.getEnds().size() != count || op.getAxes().size() != count ||
      op.getSteps().size() != count)
    return errors.emitOpError(
        "starts, ends, axes and steps must have one entry "
        "per sliced axis");
  if (llvm::is_contained(op.getSteps(), 0))
    return errors.emitOpError("steps must not be zero");
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(errors, op.getAxes(), in->size());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> result(*in);
  for (size_t i = 0; i < count; ++i) {
    int64_t dim = (*in)[(*axes)[i]];
    result[(*axes)[i]] =
        dim == shp::kDynamic
            ? shp::kDynamic
            : shp::sliceCount(dim, op.getStarts()[i], op.getEnds()[i],
                              op.getSteps()[i]);
  }
  return inferred(shapes, result);
}

LogicalResult SliceOp::verify() { return verifyByShapeRule(*this); }

LogicalResult ReshapeOp::inferReturnTypeComponents(MLIRContext *,
                                                   std::optional<Location> loc,
                                                   Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (llvm::count(op.getShape(), -1) > 1)
    return errors.emitOpError("at most one dimension may be -1");
  if (llvm::any_of(op.getShape(), [](int64_t d) { return d < -1; }))
    return errors.emitOpError("dimensions must be -1 or more");
  if (op.getAllowzero() && llvm::is_contained(op.getShape(), 0) &&
      llvm::is_contained(op.getShape(), -1))
    return errors.emitOpError("with allowzero, 0 and -1 cannot both appear");
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  auto result = shp::reshape(*in, op.getShape(), op.getAllowzero());
  if (!result)
    return errors.emitOpError() << "cannot reshape " << formatShape(*in)
                                << " to " << formatShape(op.getShape());
  return inferred(shapes, *result);
}

LogicalResult ReshapeOp::verify() { return verifyByShapeRule(*this); }

LogicalResult TransposeOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location> loc, Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  ArrayRef<int64_t> perm = op.getPerm();
  if (perm.size() != in->size())
    return errors.emitOpError()
           << "perm has " << perm.size() << " entries for rank " << in->size();
  SmallVector<int64_t> result;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in->size()) ||
        !seen.insert(p).second)
      return errors.emitOpError("perm must be a permutation of the axes");
    result.push_back((*in)[p]);
  }
  return inferred(shapes, result);
}

LogicalResult TransposeOp::verify() { return verifyByShapeRule(*this); }

LogicalResult FlattenOp::inferReturnTypeComponents(MLIRContext *,
                                                   std::optional<Location> loc,
                                                   Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  // Flatten allows axis == rank (everything in the outer dimension).
  int64_t rank = in->size(), axisValue = static_cast<int64_t>(op.getAxis());
  std::optional<int64_t> axis;
  if (axisValue >= -rank && axisValue <= rank)
    axis = axisValue < 0 ? axisValue + rank : axisValue;
  else
    return errors.emitOpError() << "axis " << axisValue << " is out of range";
  auto outer = shp::elementCount(in->take_front(*axis));
  auto inner = shp::elementCount(in->drop_front(*axis));
  return inferred(
      shapes, {outer.value_or(shp::kDynamic), inner.value_or(shp::kDynamic)});
}

LogicalResult FlattenOp::verify() { return verifyByShapeRule(*this); }

LogicalResult SqueezeOp::inferReturnTypeComponents(MLIRContext *,
                                                   std::optional<Location> loc,
                                                   Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(errors, op.getAxes(), in->size());
  if (failed(axes))
    return failure();
  SmallVector<int64_t> result;
  for (int64_t i = 0, e = in->size(); i < e; ++i) {
    int64_t dim = (*in)[i];
    bool listed = llvm::is_contained(*axes, i);
    if (listed && staticMismatch(dim, 1))
      return errors.emitOpError()
             << "cannot squeeze axis " << i << " of extent " << dim;
    if (axes->empty() && dim == shp::kDynamic)
      return unranked(shapes); // Which axes go depends on runtime extents.
    if (listed || (axes->empty() && dim == 1))
      continue;
    result.push_back(dim);
  }
  return inferred(shapes, result);
}

LogicalResult SqueezeOp::verify() { return verifyByShapeRule(*this); }

LogicalResult UnsqueezeOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location> loc, Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  int64_t rank = in->size() + op.getAxes().size();
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(errors, op.getAxes(), rank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> result;
  auto next = in->begin();
  for (int64_t i = 0; i < rank; ++i)
    result.push_back(llvm::is_contained(*axes, i) ? 1 : *next++);
  return inferred(shapes, result);
}

LogicalResult UnsqueezeOp::verify() { return verifyByShapeRule(*this); }

LogicalResult ExpandOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  auto result = shp::broadcast(*in, op.getShape());
  if (!result)
    return errors.emitOpError() << "cannot expand " << formatShape(*in)
                                << " to " << formatShape(op.getShape());
  return inferred(shapes, *result);
}

LogicalResult ExpandOp::verify() { return verifyByShapeRule(*this); }

LogicalResult PadOp::inferReturnTypeComponents(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  int64_t rank = in->size();
  if (static_cast<int64_t>(op.getPads().size()) != 2 * rank)
    return errors.emitOpError()
           << "expects " << 2 * rank << " pads for rank " << rank;
  if (op.getValue().getType() != elementTypeOf(op.getInput()))
    return errors.emitOpError("pad value must have the input's element type");
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = (*in)[i];
    result.push_back(dim == shp::kDynamic
                         ? dim
                         : dim + op.getPads()[i] + op.getPads()[rank + i]);
    if (result.back() < 0 && dim != shp::kDynamic)
      return errors.emitOpError() << "pads crop axis " << i << " below zero";
  }
  return inferred(shapes, result);
}

LogicalResult PadOp::verify() { return verifyByShapeRule(*this); }

/// The [start, end) axis range ONNX Shape selects, clamped to the rank; `op`
/// is a ShapeOp or its adaptor.
template <typename ShapeLike>
static std::pair<int64_t, int64_t> shapeRange(ShapeLike op, int64_t rank) {
  auto clampAxis = [rank](int64_t axis) {
    if (axis < 0)
      axis += rank;
    return std::clamp<int64_t>(axis, 0, rank);
  };
  int64_t start = clampAxis(op.getStart());
  int64_t end = clampAxis(op.getEnd().value_or(rank));
  return {start, std::max(start, end)};
}

LogicalResult ShapeOp::inferReturnTypeComponents(MLIRContext *,
                                                 std::optional<Location>,
                                                 Adaptor op, Shapes &shapes) {
  auto in = shapeOf(op.getInput());
  if (!in)
    return unranked(shapes);
  auto [start, end] = shapeRange(op, in->size());
  return inferred(shapes, {end - start});
}

LogicalResult ShapeOp::verify() { return verifyByShapeRule(*this); }

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto in = shapeOf(getInput());
  if (!in)
    return {};
  auto [start, end] = shapeRange(*this, in->size());
  ArrayRef<int64_t> dims = in->slice(start, end - start);
  if (llvm::is_contained(dims, shp::kDynamic))
    return {};
  auto type =
      RankedTensorType::get({end - start}, IntegerType::get(getContext(), 64));
  return DenseIntElementsAttr::get(type, dims);
}

/// Gather's result shape, data.shape[:axis] + indices.shape +
/// data.shape[axis+1:], which is also the shape of a scatter's updates;
/// std::nullopt when unknown (unranked operands), failure() once reported.
static FailureOr<std::optional<SmallVector<int64_t>>>
gatheredShape(const ShapeErrors &errors, Value dataValue, Value indicesValue,
              int64_t axisValue) {
  if (!isInteger(indicesValue))
    return errors.emitOpError("indices must be an integer tensor");
  auto data = shapeOf(dataValue), indices = shapeOf(indicesValue);
  if (!data || !indices)
    return std::optional<SmallVector<int64_t>>();
  if (data->empty())
    return errors.emitOpError("data must have rank at least 1");
  std::optional<int64_t> axis = shp::normalizeAxis(axisValue, data->size());
  if (!axis)
    return errors.emitOpError() << "axis " << axisValue << " is out of range";
  SmallVector<int64_t> result(data->take_front(*axis));
  llvm::append_range(result, *indices);
  llvm::append_range(result, data->drop_front(*axis + 1));
  return std::optional<SmallVector<int64_t>>(std::move(result));
}

LogicalResult GatherOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto gathered =
      gatheredShape(errors, op.getData(), op.getIndices(), op.getAxis());
  if (failed(gathered))
    return failure();
  if (!*gathered)
    return unranked(shapes);
  return inferred(shapes, **gathered);
}

LogicalResult GatherOp::verify() { return verifyByShapeRule(*this); }

/// Scatter writes gather's result shape back into data's shape.
LogicalResult ScatterOp::inferReturnTypeComponents(MLIRContext *,
                                                   std::optional<Location> loc,
                                                   Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto gathered =
      gatheredShape(errors, op.getData(), op.getIndices(), op.getAxis());
  if (failed(gathered))
    return failure();
  if (!*gathered)
    return unranked(shapes);
  const SmallVector<int64_t> &expected = **gathered;
  if (auto updates = shapeOf(op.getUpdates())) {
    bool ok = updates->size() == expected.size();
    for (size_t i = 0; ok && i < expected.size(); ++i)
      ok = !staticMismatch((*updates)[i], expected[i]);
    if (!ok)
      return errors.emitOpError()
             << "updates shape " << formatShape(*updates)
             << " does not match the gathered shape " << formatShape(expected);
  }
  return inferred(shapes, *shapeOf(op.getData()));
}

LogicalResult ScatterOp::verify() {
  if (elementTypeOf(getUpdates()) != elementTypeOf(getData()) ||
      elementTypeOf(getResult()) != elementTypeOf(getData()))
    return emitOpError(
        "data, updates and result must have the same element type");
  return verifyByShapeRule(*this);
}

/// Shared by the lookup and its parameter-server form: rows of a [rows, dim]
/// table picked by integer ids, optionally pooled over the ids' last axis.
static LogicalResult lookupShape(const ShapeErrors &errors, Value ids,
                                 int64_t dim, EmbeddingPooling pooling,
                                 Shapes &shapes) {
  if (!isInteger(ids))
    return errors.emitOpError("ids must be an integer tensor");
  auto idsShape = shapeOf(ids);
  if (!idsShape)
    return unranked(shapes);
  SmallVector<int64_t> expected(*idsShape);
  if (pooling != EmbeddingPooling::None) {
    if (idsShape->empty())
      return errors.emitOpError("pooling needs ids of rank at least 1");
    expected.pop_back();
  }
  expected.push_back(dim);
  return inferred(shapes, expected);
}

LogicalResult EmbeddingLookupOp::inferReturnTypeComponents(
    MLIRContext *, std::optional<Location> loc, Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getTable(), "table", 2, 2)))
    return failure();
  auto table = shapeOf(op.getTable());
  return lookupShape(errors, op.getIds(), table ? (*table)[1] : shp::kDynamic,
                     op.getPooling(), shapes);
}

LogicalResult EmbeddingLookupOp::verify() { return verifyByShapeRule(*this); }

LogicalResult PSPullOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  auto table = cast<RankedTensorType>(op.getTableType());
  if (table.getRank() != 2)
    return errors.emitOpError("table must be 2-D (rows x dim)");
  return lookupShape(errors, op.getIds(), table.getDimSize(1), op.getPooling(),
                     shapes);
}

LogicalResult PSPullOp::verify() { return verifyByShapeRule(*this); }

/// Shapes both loss ops share: a batch-first prediction and a label of the
/// kind's form; static shapes only (losses come after import bound them).
static LogicalResult verifyLossOperands(Operation *op, LossKind kind,
                                        Value prediction, Value label) {
  auto pred = dyn_cast<RankedTensorType>(prediction.getType());
  auto lab = dyn_cast<RankedTensorType>(label.getType());
  if (!pred || !lab || !pred.hasStaticShape() || !lab.hasStaticShape())
    return op->emitOpError("needs statically shaped prediction and label");
  if (pred.getRank() < 1)
    return op->emitOpError("prediction needs a batch axis");
  if (!isa<FloatType>(pred.getElementType()))
    return op->emitOpError("prediction must be floating point");
  if (kind == LossKind::SoftmaxCE) {
    if (pred.getRank() != 2)
      return op->emitOpError("softmax_ce needs a [N, C] prediction");
    bool idsShape = (lab.getRank() == 1 ||
                     (lab.getRank() == 2 && lab.getDimSize(1) == 1)) &&
                    lab.getDimSize(0) == pred.getDimSize(0);
    if (!idsShape || !lab.getElementType().isInteger(64))
      return op->emitOpError("softmax_ce needs i64 class ids of shape [N] or "
                             "[N, 1], got ")
             << label.getType();
    return success();
  }
  if (lab.getShape() != pred.getShape() ||
      lab.getElementType() != pred.getElementType())
    return op->emitOpError("label must have the prediction's type ")
           << prediction.getType() << ", got " << label.getType();
  return success();
}

LogicalResult LossOp::verify() {
  if (failed(verifyLossOperands(*this, getKind(), getPrediction(), getLabel())))
    return failure();
  auto pred = cast<RankedTensorType>(getPrediction().getType());
  auto result = dyn_cast<RankedTensorType>(getResult().getType());
  if (!result || result.getRank() != 1 ||
      result.getDimSize(0) != pred.getDimSize(0) ||
      result.getElementType() != pred.getElementType())
    return emitOpError("result must be the per-sample loss [N], got ")
           << getResult().getType();
  return success();
}

LogicalResult LossGradOp::verify() {
  if (failed(verifyLossOperands(*this, getKind(), getPrediction(), getLabel())))
    return failure();
  if (getResult().getType() != getPrediction().getType())
    return emitOpError("result must have the prediction's type");
  return success();
}

//===----------------------------------------------------------------------===//
// Data-dependent extents.
//===----------------------------------------------------------------------===//

/// `count` of a data-dependent op: an i64 scalar.
static LogicalResult verifyCount(Operation *op, Value count) {
  return checkRank(ShapeErrors(op), count, "count", 0, 0);
}

LogicalResult NonZeroOp::inferReturnTypeComponents(MLIRContext *,
                                                   std::optional<Location> loc,
                                                   Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getInput(), "input", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> input = shapeOf(op.getInput());
  if (!input)
    return unranked(shapes, 2);
  std::optional<int64_t> numel = shp::elementCount(*input);
  shapes.emplace_back(
      ArrayRef<int64_t>{int64_t(input->size()), numel.value_or(shp::kDynamic)});
  return inferred(shapes, {}); // count
}

LogicalResult NonZeroOp::verify() {
  return verifyByShapeRule(*this,
                           [&] { return verifyCount(*this, getCount()); });
}

LogicalResult UniqueOp::inferReturnTypeComponents(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor op, Shapes &shapes) {
  ShapeErrors errors(loc, getOperationName());
  if (failed(checkRank(errors, op.getInput(), "input", 1)))
    return failure();
  std::optional<ArrayRef<int64_t>> input = shapeOf(op.getInput());
  if (!input)
    return unranked(shapes, 5);
  int64_t rank = input->size();
  auto axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0 || axis >= rank)
    return errors.emitOpError()
           << "axis " << axis << " is not in [0, " << rank << ")";
  // values, then first_indices, inverse and counts, then count.
  shapes.emplace_back(*input);
  shapes.append(3, ShapedTypeComponents(ArrayRef<int64_t>{(*input)[axis]}));
  return inferred(shapes, {});
}

LogicalResult UniqueOp::verify() {
  return verifyByShapeRule(*this, [&]() -> LogicalResult {
    if (failed(verifyCount(*this, getCount())))
      return failure();
    if (getValues().getType() != getInput().getType())
      return emitOpError("values must have the input's type");
    return success();
  });
}

LogicalResult NonMaxSuppressionOp::verify() {
  ShapeErrors errors(*this);
  if (failed(checkRank(errors, getBoxes(), "boxes", 3, 3)) ||
      failed(checkRank(errors, getScores(), "scores", 3, 3)) ||
      failed(checkRank(errors, getSelected(), "selected", 2, 2)) ||
      failed(verifyCount(*this, getCount())))
    return failure();
  for (Value scalar :
       {getMaxPerClass(), getIouThreshold(), getScoreThreshold()}) {
    if (!scalar)
      continue;
    std::optional<ArrayRef<int64_t>> shape = shapeOf(scalar);
    std::optional<int64_t> numel =
        shape ? shp::elementCount(*shape) : std::nullopt;
    if (numel && *numel != 1)
      return emitOpError("max_per_class, iou_threshold and score_threshold "
                         "must have one element");
  }
  std::optional<ArrayRef<int64_t>> boxes = shapeOf(getBoxes()),
                                   scores = shapeOf(getScores()),
                                   selected = shapeOf(getSelected());
  if (boxes && staticMismatch((*boxes)[2], 4))
    return emitOpError("boxes must be [batches, boxes, 4]");
  if (boxes && scores &&
      (staticMismatch((*boxes)[0], (*scores)[0]) ||
       staticMismatch((*boxes)[1], (*scores)[2])))
    return emitOpError("scores must be [batches, classes, boxes] of boxes "
                       "[batches, boxes, 4]");
  if (selected && staticMismatch((*selected)[1], 3))
    return emitOpError("selected must be [capacity, 3]");
  return success();
}

/// The shapes the rule of `op` gives its results, unranked where unknown;
/// nullopt where `op` has no rule or the rule rejects the operands (the
/// verifier reports that).
static std::optional<SmallVector<ShapedTypeComponents>>
inferResultShapes(Operation *op) {
  SmallVector<ShapedTypeComponents> shapes;
  if (op->hasTrait<OpTrait::SameOperandsAndResultShape>()) {
    if (op->getNumOperands() == 0)
      return std::nullopt;
    std::optional<ArrayRef<int64_t>> shape = shapeOf(op->getOperand(0));
    shapes.append(op->getNumResults(), shape ? ShapedTypeComponents(*shape)
                                             : ShapedTypeComponents());
    return shapes;
  }
  auto rule = dyn_cast<InferShapedTypeOpInterface>(op);
  if (!rule ||
      failed(rule.inferReturnTypeComponents(
          op->getContext(), std::nullopt, op->getOperands(),
          op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
          op->getRegions(), shapes)) ||
      shapes.size() != op->getNumResults())
    return std::nullopt;
  return shapes;
}

std::optional<SmallVector<int64_t>> heterps::hps::inferValueShape(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return std::nullopt;
  auto shapes = inferResultShapes(result.getOwner());
  if (!shapes || !(*shapes)[result.getResultNumber()].hasRank())
    return std::nullopt;
  return SmallVector<int64_t>((*shapes)[result.getResultNumber()].getDims());
}

#define GET_OP_CLASSES
#include "heterps/Dialect/HPS/IR/HPSOps.cpp.inc"

#include "heterps/Dialect/HPS/IR/HPSInterfaces.cpp.inc"
