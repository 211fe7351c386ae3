//===- ControlFlow.cpp - If, Loop and Scan into straight-line ops ---------===//
//
// HeterPS plans static pipelines, so control flow is resolved at compile
// time:
//  - If with a constant condition becomes its taken branch. With a condition
//    computed at run time both branches run and hps.where picks each output,
//    which needs the two branches to yield values of one static type.
//  - Loop with a constant trip count and a condition that is constant (or
//    only passed through), and Scan over a static sequence length, are
//    unrolled.
// The copies of a body are hps.onnx_node ops again, so the other patterns
// legalize them, now seeing each iteration's constants (an iteration number
// becomes a Slice bound, a Gather index).
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace heterps::hps {
namespace {

/// Unrolling stops here: copies of a body beyond this many ops would make
/// compile time, not the model, the bottleneck.
constexpr int64_t kMaxUnrolledOps = 1 << 16;

int64_t countOps(Region &region) {
  int64_t count = 0;
  region.walk([&](Operation *) { ++count; });
  return count;
}

/// True (with the reason in `problem`) if `count` copies of `body` would
/// exceed kMaxUnrolledOps.
bool exceedsUnrollLimit(Region &body, int64_t count, StringRef unit,
                        std::string &problem) {
  if (count <= kMaxUnrolledOps / std::max<int64_t>(1, countOps(body)))
    return false;
  problem = ("unrolling its " + Twine(count) + " " + unit +
             " would copy more than " + Twine(kMaxUnrolledOps) + " ops")
                .str();
  return true;
}

YieldOp yieldOf(Region &region) {
  return cast<YieldOp>(region.front().getTerminator());
}

/// A Loop or Scan node of the default domain whose one subgraph, `body`, is
/// a copy of `region`.
OnnxNodeOp createWithBody(PatternRewriter &rewriter, Location loc,
                          StringRef opType, int64_t opset, ValueRange inputs,
                          TypeRange types, DictionaryAttr attrs,
                          DeviceAttr device, Region &region) {
  auto node = rewriter.create<OnnxNodeOp>(
      loc, types, rewriter.getStringAttr(opType), rewriter.getStringAttr(""),
      rewriter.getI64IntegerAttr(opset), attrs, inputs,
      rewriter.getStrArrayAttr({"body"}), device, /*bodiesCount=*/1);
  Region &body = node.getBodies().front();
  rewriter.cloneRegionBefore(region, body, body.end());
  return node;
}

/// Element `position` of the static `input` along `axis`, the axis dropped
/// (hps.slice, hps.reshape): one step of a scan, one sample of a batch.
Value sliceAt(ONNXNode node, PatternRewriter &rewriter, Value input,
              int64_t axis, int64_t position) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = 1;
  Value slice = rewriter.create<SliceOp>(
      node.getLoc(), RankedTensorType::get(shape, type.getElementType()), input,
      rewriter.getDenseI64ArrayAttr(position),
      rewriter.getDenseI64ArrayAttr(position + 1),
      rewriter.getDenseI64ArrayAttr(axis), rewriter.getDenseI64ArrayAttr(1),
      DeviceAttr());
  shape.erase(shape.begin() + axis);
  return reshapeTo(node, rewriter, slice, shape);
}

/// A constant of `like`'s shape (rank 0 when it is not static) holding
/// `value`: an iteration number or a loop condition.
Value scalarLike(PatternRewriter &rewriter, Location loc, Type like,
                 Type element, int64_t value) {
  auto ranked = dyn_cast<RankedTensorType>(like);
  auto type = ranked && ranked.hasStaticShape() && ranked.getNumElements() == 1
                  ? RankedTensorType::get(ranked.getShape(), element)
                  : RankedTensorType::get({}, element);
  Attribute element0 = element.isInteger(1)
                           ? Attribute(rewriter.getBoolAttr(value != 0))
                           : Attribute(rewriter.getIntegerAttr(element, value));
  return rewriter.create<ConstantOp>(
      loc, DenseElementsAttr::get(type, ArrayRef<Attribute>{element0}));
}

/// Stacks the per-iteration values of a scan output along `axis` (ONNX's
/// range: negative counts from the back of the stacked rank).
Value stack(PatternRewriter &rewriter, Location loc, ArrayRef<Value> values,
            int64_t axis, Type resultType) {
  SmallVector<Value> expanded;
  for (Value value : values) {
    Type type = UnrankedTensorType::get(getElementTypeOrSelf(value.getType()));
    // Opset 11: Unsqueeze's axes are still an attribute.
    expanded.push_back(
        createONNXNode(rewriter, loc, "Unsqueeze", 11, value, type,
                       {rewriter.getNamedAttr(
                           "axes", rewriter.getDenseI64ArrayAttr(axis))})
            .getResult(0));
  }
  if (expanded.size() == 1) {
    expanded.front().setType(resultType);
    return expanded.front();
  }
  return createONNXNode(
             rewriter, loc, "Concat", 11, expanded, resultType,
             {rewriter.getNamedAttr("axis", rewriter.getI64IntegerAttr(axis))})
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

/// Why an If cannot be resolved yet, or std::nullopt when it can.
std::optional<std::string> ifProblem(ONNXNode node) {
  OnnxNodeOp op = node.getOp();
  Region *thenBranch = op.getSubgraph("then_branch");
  Region *elseBranch = op.getSubgraph("else_branch");
  if (!thenBranch || !elseBranch || !node.input(0))
    return "it lacks a branch or its condition";
  for (Region *branch : {thenBranch, elseBranch})
    if (yieldOf(*branch).getNumOperands() != op.getNumResults())
      return "a branch yields " +
             std::to_string(yieldOf(*branch).getNumOperands()) +
             " values for " + std::to_string(op.getNumResults()) + " outputs";
  if (getConstantScalar(node.input(0)))
    return std::nullopt;
  // Inside a body not yet unrolled the condition may become a constant (a
  // test of the iteration number): wait rather than run both branches.
  if (op->getParentOfType<OnnxNodeOp>())
    return "it is inside a subgraph that is not resolved yet";
  auto condition = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!condition || !condition.hasStaticShape() ||
      condition.getNumElements() != 1)
    return "its condition is not a single boolean";
  for (auto [index, values] :
       llvm::enumerate(llvm::zip(yieldOf(*thenBranch).getValues(),
                                 yieldOf(*elseBranch).getValues()))) {
    auto [thenValue, elseValue] = values;
    auto type = dyn_cast<RankedTensorType>(thenValue.getType());
    if (!type || !type.hasStaticShape() ||
        thenValue.getType() != elseValue.getType())
      return "its condition is computed at run time and its branches yield "
             "output " +
             std::to_string(index) + " with different or unknown types";
  }
  return std::nullopt;
}

LogicalResult legalizeIf(ONNXNode node, PatternRewriter &rewriter) {
  if (std::optional<std::string> problem = ifProblem(node))
    return fail(node, rewriter, *problem);
  OnnxNodeOp op = node.getOp();
  Region &thenBranch = *op.getSubgraph("then_branch");
  Region &elseBranch = *op.getSubgraph("else_branch");
  rewriter.setInsertionPoint(op);
  if (std::optional<double> flag = getConstantScalar(node.input(0))) {
    SmallVector<Value> taken =
        cloneSubgraph(*flag != 0 ? thenBranch : elseBranch, {}, rewriter);
    replaceNodeRefining(op, taken, rewriter);
    return success();
  }
  // Both branches run; hps.where picks, element by element, with a rank-0
  // condition so that it broadcasts over any output.
  SmallVector<Value> thenValues = cloneSubgraph(thenBranch, {}, rewriter);
  SmallVector<Value> elseValues = cloneSubgraph(elseBranch, {}, rewriter);
  Value condition = node.input(0);
  if (cast<RankedTensorType>(condition.getType()).getRank() != 0)
    condition = reshapeTo(node, rewriter, condition, {});
  SmallVector<Value> picked;
  for (auto [thenValue, elseValue] : llvm::zip(thenValues, elseValues)) {
    auto where =
        rewriter.create<WhereOp>(op.getLoc(), thenValue.getType(), condition,
                                 thenValue, elseValue, DeviceAttr());
    if (DeviceAttr device = op.getDeviceAttr())
      where.setDeviceAttr(device);
    picked.push_back(where);
  }
  replaceNodeRefining(op, picked, rewriter);
  return success();
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

/// The iteration number of a Loop's first iteration: 0, or how many
/// iterations peeling has already taken off the front.
constexpr llvm::StringLiteral kFirstIteration = "hps.first_iteration";

struct LoopPlan {
  int64_t first = 0, iterations = 0;
  std::optional<int64_t> tripCount;
  unsigned carried = 0, scanned = 0;
  /// The body computes the condition: take one iteration off the front and
  /// wait for its condition to fold (a while loop over a counter).
  bool peel = false;
};

FailureOr<LoopPlan> planLoop(ONNXNode node, std::string &problem) {
  OnnxNodeOp op = node.getOp();
  Region *body = op.getSubgraph("body");
  if (!body || node.numInputs() < 2) {
    problem = "it lacks its body or its inputs";
    return failure();
  }
  LoopPlan plan;
  if (auto first = op->getAttrOfType<IntegerAttr>(kFirstIteration))
    plan.first = first.getInt();
  plan.carried = node.numInputs() - 2;
  Block &block = body->front();
  YieldOp yield = yieldOf(*body);
  if (block.getNumArguments() != plan.carried + 2 ||
      yield.getNumOperands() < plan.carried + 1 ||
      op.getNumResults() != yield.getNumOperands() - 1) {
    problem = "its body's inputs and outputs do not match its own";
    return failure();
  }
  plan.scanned = yield.getNumOperands() - 1 - plan.carried;

  if (Value count = node.input(0)) {
    std::optional<double> value = getConstantScalar(count);
    if (!value) {
      problem = "its trip count is computed at run time";
      return failure();
    }
    // TorchScript's while loops use INT64_MAX, which a double rounds up to
    // 2^63: saturate rather than overflow.
    plan.tripCount = *value >= 0x1p63
                         ? std::numeric_limits<int64_t>::max()
                         : std::max<int64_t>(0, static_cast<int64_t>(*value));
  }
  bool running = true;
  if (Value condition = node.input(1)) {
    std::optional<double> value = getConstantScalar(condition);
    if (!value) {
      problem = plan.first > 0
                    ? "its condition after iteration " +
                          std::to_string(plan.first - 1) +
                          " depends on values computed at run time"
                    : "its initial condition is computed at run time";
      return failure();
    }
    running = *value != 0;
  }
  // The body's condition: passed through (a for loop), a constant, or
  // computed, in which case the loop is peeled one iteration at a time.
  Value next = yield.getOperand(0);
  std::optional<double> constantNext = getConstantScalar(next);
  if (!running || (plan.tripCount && *plan.tripCount == 0))
    plan.iterations = 0;
  else if (next != block.getArgument(1) && !constantNext)
    plan.peel = true;
  else if (constantNext && *constantNext == 0)
    plan.iterations = 1;
  else if (plan.tripCount)
    plan.iterations = *plan.tripCount;
  else {
    problem = "it has no trip count and its condition never turns false";
    return failure();
  }
  if (plan.peel && plan.scanned > 0) {
    problem = "its body computes the loop condition and it has scan outputs "
              "(only loop-carried values are supported there)";
    return failure();
  }
  if (plan.iterations == 0 && plan.scanned > 0 && !plan.peel) {
    problem = "it runs no iteration but has scan outputs (empty tensors)";
    return failure();
  }
  int64_t copies = plan.peel ? plan.first + 1 : plan.iterations;
  if (exceedsUnrollLimit(*body, copies, "iterations", problem))
    return failure();
  return plan;
}

LogicalResult legalizeLoop(ONNXNode node, PatternRewriter &rewriter) {
  std::string problem;
  FailureOr<LoopPlan> plan = planLoop(node, problem);
  if (failed(plan))
    return fail(node, rewriter, problem);
  OnnxNodeOp op = node.getOp();
  Region &body = *op.getSubgraph("body");
  Block &block = body.front();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);

  SmallVector<Value> state(op.getInputs().drop_front(2));
  SmallVector<SmallVector<Value>> scanned(plan->scanned);
  Value condition;
  int64_t copies = plan->peel ? 1 : plan->iterations;
  for (int64_t i = 0; i < copies; ++i) {
    SmallVector<Value> args = {
        scalarLike(rewriter, loc, block.getArgument(0).getType(),
                   rewriter.getI64Type(), plan->first + i),
        scalarLike(rewriter, loc, block.getArgument(1).getType(),
                   rewriter.getI1Type(), 1)};
    args.append(state);
    SmallVector<Value> outputs = cloneSubgraph(body, args, rewriter);
    condition = outputs.front();
    state.assign(outputs.begin() + 1, outputs.begin() + 1 + plan->carried);
    for (unsigned k = 0; k < plan->scanned; ++k)
      scanned[k].push_back(outputs[1 + plan->carried + k]);
  }
  if (plan->peel && (!plan->tripCount || *plan->tripCount > 1)) {
    // The rest of the loop, from the next iteration number, starting from
    // this iteration's condition and values.
    SmallVector<Value> inputs = {
        plan->tripCount
            ? Value(rewriter.create<ConstantOp>(
                  loc, DenseElementsAttr::get(
                           RankedTensorType::get({}, rewriter.getI64Type()),
                           *plan->tripCount - 1)))
            : op.getInputs()[0],
        condition};
    inputs.append(state);
    OnnxNodeOp rest = createWithBody(
        rewriter, loc, "Loop", op.getOpset(), inputs, op.getResultTypes(),
        op.getAttrsAttr(), op.getDeviceAttr(), body);
    rest->setAttr(kFirstIteration, rewriter.getI64IntegerAttr(plan->first + 1));
    rewriter.replaceOp(op, rest->getResults());
    return success();
  }
  SmallVector<Value> results(state);
  for (unsigned k = 0; k < plan->scanned; ++k)
    results.push_back(stack(rewriter, loc, scanned[k], 0,
                            op.getResult(plan->carried + k).getType()));
  replaceNodeRefining(op, results, rewriter);
  return success();
}

//===----------------------------------------------------------------------===//
// Scan (opset 9 on; Scan-8's batch axis and sequence_lens stay generic)
//===----------------------------------------------------------------------===//

struct ScanPlan {
  int64_t length = 0;
  unsigned states = 0, inputs = 0, outputs = 0;
  SmallVector<int64_t> inputAxes, inputDirections, outputAxes, outputDirections;
};

/// A per-input or per-output attribute list of Scan, zeros by default.
std::optional<SmallVector<int64_t>> scanList(ONNXNode node, StringRef name,
                                             unsigned count) {
  std::optional<SmallVector<int64_t>> list = node.getInts(name);
  if (!list)
    return SmallVector<int64_t>(count, 0);
  if (list->size() != count)
    return std::nullopt;
  return list;
}

FailureOr<ScanPlan> planScan(ONNXNode node, std::string &problem) {
  OnnxNodeOp op = node.getOp();
  Region *body = op.getSubgraph("body");
  int64_t scanInputs = node.getInt("num_scan_inputs", 0);
  if (!body || scanInputs < 1 || scanInputs > node.numInputs()) {
    problem = "it lacks its body or a valid num_scan_inputs";
    return failure();
  }
  ScanPlan plan;
  plan.inputs = scanInputs;
  plan.states = node.numInputs() - scanInputs;
  Block &block = body->front();
  YieldOp yield = yieldOf(*body);
  if (block.getNumArguments() != node.numInputs() ||
      yield.getNumOperands() != op.getNumResults() ||
      op.getNumResults() < plan.states) {
    problem = "its body's inputs and outputs do not match its own";
    return failure();
  }
  plan.outputs = op.getNumResults() - plan.states;
  auto inputAxes = scanList(node, "scan_input_axes", plan.inputs);
  auto inputDirections = scanList(node, "scan_input_directions", plan.inputs);
  auto outputAxes = scanList(node, "scan_output_axes", plan.outputs);
  auto outputDirections =
      scanList(node, "scan_output_directions", plan.outputs);
  if (!inputAxes || !inputDirections || !outputAxes || !outputDirections) {
    problem = "an axes or directions list has the wrong length";
    return failure();
  }
  plan.inputDirections = *inputDirections;
  plan.outputAxes = *outputAxes;
  plan.outputDirections = *outputDirections;
  plan.length = -1;
  for (unsigned j = 0; j < plan.inputs; ++j) {
    Value input = node.input(plan.states + j);
    auto type = input ? dyn_cast<RankedTensorType>(input.getType())
                      : RankedTensorType();
    if (!type || !type.hasStaticShape()) {
      problem = "scan input " + std::to_string(j) + " has no static shape";
      return failure();
    }
    int64_t axis = (*inputAxes)[j];
    if (axis < 0)
      axis += type.getRank();
    if (axis < 0 || axis >= type.getRank()) {
      problem = "scan input " + std::to_string(j) + "'s axis is out of range";
      return failure();
    }
    plan.inputAxes.push_back(axis);
    int64_t length = type.getDimSize(axis);
    if (plan.length >= 0 && length != plan.length) {
      problem = "its scan inputs have different lengths";
      return failure();
    }
    plan.length = length;
  }
  if (plan.length == 0) {
    problem = "its sequences are empty";
    return failure();
  }
  if (exceedsUnrollLimit(*body, plan.length, "steps", problem))
    return failure();
  return plan;
}

LogicalResult legalizeScan(ONNXNode node, PatternRewriter &rewriter) {
  std::string problem;
  FailureOr<ScanPlan> plan = planScan(node, problem);
  if (failed(plan))
    return fail(node, rewriter, problem);
  OnnxNodeOp op = node.getOp();
  Region &body = *op.getSubgraph("body");
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);

  SmallVector<Value> state(op.getInputs().take_front(plan->states));
  SmallVector<SmallVector<Value>> scanned(plan->outputs);
  for (int64_t t = 0; t < plan->length; ++t) {
    SmallVector<Value> args(state);
    for (unsigned j = 0; j < plan->inputs; ++j) {
      int64_t position =
          plan->inputDirections[j] != 0 ? plan->length - 1 - t : t;
      args.push_back(sliceAt(node, rewriter, node.input(plan->states + j),
                             plan->inputAxes[j], position));
    }
    SmallVector<Value> outputs = cloneSubgraph(body, args, rewriter);
    state.assign(outputs.begin(), outputs.begin() + plan->states);
    for (unsigned k = 0; k < plan->outputs; ++k)
      scanned[k].push_back(outputs[plan->states + k]);
  }
  SmallVector<Value> results(state);
  for (unsigned k = 0; k < plan->outputs; ++k) {
    if (plan->outputDirections[k] != 0)
      std::reverse(scanned[k].begin(), scanned[k].end());
    results.push_back(stack(rewriter, loc, scanned[k], plan->outputAxes[k],
                            op.getResult(plan->states + k).getType()));
  }
  replaceNodeRefining(op, results, rewriter);
  return success();
}

/// Why a Scan-8 cannot be resolved, or std::nullopt.
std::optional<std::string> scan8Problem(ONNXNode node) {
  OnnxNodeOp op = node.getOp();
  int64_t scanInputs = node.getInt("num_scan_inputs", 0);
  int64_t states = static_cast<int64_t>(node.numInputs()) - 1 - scanInputs;
  if (!op.getSubgraph("body") || scanInputs < 1 || states < 0 ||
      static_cast<int64_t>(op.getNumResults()) < states)
    return "it lacks its body or a valid num_scan_inputs";
  std::optional<int64_t> batch, length;
  for (unsigned i = 1; i < node.numInputs(); ++i) {
    auto type = node.input(i)
                    ? dyn_cast<RankedTensorType>(node.input(i).getType())
                    : RankedTensorType();
    bool scanned = static_cast<int64_t>(i) > states;
    if (!type || !type.hasStaticShape() || type.getRank() < (scanned ? 2 : 1))
      return "input " + std::to_string(i) + " has no static [batch, ...] shape";
    if (batch && *batch != type.getDimSize(0))
      return std::string("its inputs' batch extents differ");
    batch = type.getDimSize(0);
    if (scanned) {
      if (length && *length != type.getDimSize(1))
        return std::string("its scan inputs have different lengths");
      length = type.getDimSize(1);
    }
  }
  // Sequence lengths that differ per batch element would need padding
  // semantics; all equal to the full length is the plain scan.
  if (Value lengths = node.input(0)) {
    auto values = dyn_cast_or_null<DenseIntElementsAttr>(
        dyn_cast_or_null<DenseElementsAttr>(getConstantValue(lengths)));
    if (!values || llvm::any_of(values, [&](const APInt &value) {
          return value.getSExtValue() != *length;
        }))
      return std::string("its sequence_lens are not all the full length");
  }
  return std::nullopt;
}

/// Scan-8: every input has a batch axis 0 the body does not see, and scan
/// inputs scan along axis 1. It becomes one Scan-9 per batch element (on
/// that element's slices, its directions as scan_input_directions), whose
/// results are stacked back along axis 0.
LogicalResult legalizeScan8(ONNXNode node, PatternRewriter &rewriter) {
  if (std::optional<std::string> problem = scan8Problem(node))
    return fail(node, rewriter, *problem);
  OnnxNodeOp op = node.getOp();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs(op.getInputs().drop_front(1));
  int64_t batch =
      cast<RankedTensorType>(inputs.front().getType()).getDimSize(0);
  SmallVector<NamedAttribute> attrs = {rewriter.getNamedAttr(
      "num_scan_inputs",
      rewriter.getI64IntegerAttr(node.getInt("num_scan_inputs", 0)))};
  if (std::optional<SmallVector<int64_t>> directions =
          node.getInts("directions"))
    attrs.push_back(rewriter.getNamedAttr(
        "scan_input_directions", rewriter.getDenseI64ArrayAttr(*directions)));
  SmallVector<Type> types;
  for (Value result : op.getResults())
    types.push_back(
        UnrankedTensorType::get(getElementTypeOrSelf(result.getType())));
  SmallVector<SmallVector<Value>> perElement(op.getNumResults());
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> slices;
    for (Value input : inputs)
      slices.push_back(sliceAt(node, rewriter, input, 0, b));
    OnnxNodeOp scan =
        createWithBody(rewriter, loc, "Scan", 9, slices, types,
                       rewriter.getDictionaryAttr(attrs), op.getDeviceAttr(),
                       *op.getSubgraph("body"));
    for (auto [j, result] : llvm::enumerate(scan.getResults()))
      perElement[j].push_back(result);
  }
  SmallVector<Value> results;
  for (auto [result, values] : llvm::zip(op.getResults(), perElement))
    results.push_back(stack(rewriter, loc, values, 0, result.getType()));
  replaceNodeRefining(op, results, rewriter);
  return success();
}

} // namespace

SmallVector<Value> cloneSubgraph(Region &region, ValueRange args,
                                 PatternRewriter &rewriter) {
  IRMapping mapping;
  mapping.map(region.front().getArguments(), args);
  for (Operation &op : region.front().without_terminator())
    rewriter.clone(op, mapping);
  SmallVector<Value> yielded;
  for (Value value : yieldOf(region).getValues())
    yielded.push_back(mapping.lookupOrDefault(value));
  return yielded;
}

std::optional<std::string> explainControlFlow(OnnxNodeOp op) {
  ONNXNode node(op);
  std::string problem;
  if (op.getOpType() == "If")
    return ifProblem(node);
  if (op.getOpType() == "SequenceConstruct")
    return std::string("a node reading this sequence could not be resolved "
                       "at compile time");
  if (op.getOpType() == "Loop" && failed(planLoop(node, problem)))
    return problem;
  if (op.getOpType() == "Scan") {
    if (op.getOpset() < 9)
      return scan8Problem(node);
    if (failed(planScan(node, problem)))
      return problem;
  }
  return std::nullopt;
}

void populateControlFlowPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "If", kMinOpset, kMaxOpset, {}, legalizeIf);
  addONNXPattern(patterns, "Loop", kMinOpset, kMaxOpset, {}, legalizeLoop);
  addONNXPattern(patterns, "Scan", 8, 8, {"num_scan_inputs", "directions"},
                 legalizeScan8);
  addONNXPattern(patterns, "Scan", 9, kMaxOpset,
                 {"num_scan_inputs", "scan_input_axes", "scan_input_directions",
                  "scan_output_axes", "scan_output_directions"},
                 legalizeScan);
}

} // namespace heterps::hps
