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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"

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

/// The more static of two compatible tensor types; null if they conflict.
Type meetTypes(Type a, Type b) {
  if (a == b)
    return a;
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

/// A generic node the unrolled code needs (Unsqueeze, Concat, Identity):
/// its own pattern legalizes it once its operands' shapes are known.
Value genericNode(PatternRewriter &rewriter, Location loc, StringRef opType,
                  ValueRange inputs, Type type,
                  ArrayRef<NamedAttribute> attrs = {}) {
  auto op = rewriter.create<OnnxNodeOp>(
      loc, TypeRange{type}, rewriter.getStringAttr(opType),
      rewriter.getStringAttr(""), rewriter.getI64IntegerAttr(13),
      rewriter.getDictionaryAttr(attrs), inputs, ArrayAttr(), DeviceAttr(),
      /*bodiesCount=*/0);
  return op.getResult(0);
}

/// Copies the single block of `region` before the rewriter's insertion
/// point with its arguments bound to `args`; returns what it yields. The
/// copies are added to `copied`.
SmallVector<Value> cloneBody(Region &region, ValueRange args,
                             PatternRewriter &rewriter,
                             llvm::SmallPtrSetImpl<Operation *> &copied) {
  IRMapping mapping;
  mapping.map(region.front().getArguments(), args);
  for (Operation &op : region.front().without_terminator())
    copied.insert(rewriter.clone(op, mapping));
  SmallVector<Value> yielded;
  for (Value value : yieldOf(region).getValues())
    yielded.push_back(mapping.lookupOrDefault(value));
  return yielded;
}

/// `value`, standing for a control-flow result of type `wanted`. ONNX types
/// loop results by merging iterations, so either type may be the more
/// static one: an op made by the unrolling takes the meet of both; another
/// value more static than `wanted` serves as it is; otherwise an Identity
/// node of type `wanted` bridges until the types agree.
Value adoptType(Value value, Type wanted, PatternRewriter &rewriter,
                Location loc,
                const llvm::SmallPtrSetImpl<Operation *> &copied) {
  if (value.getType() == wanted)
    return value;
  Type meet = meetTypes(value.getType(), wanted);
  Operation *def = value.getDefiningOp();
  if (meet && def && copied.contains(def) &&
      !def->hasTrait<OpTrait::ConstantLike>()) {
    rewriter.modifyOpInPlace(def, [&] { value.setType(meet); });
    return value;
  }
  if (meet && meet == value.getType())
    return value;
  return genericNode(rewriter, loc, "Identity", value, wanted);
}

/// Replaces the control-flow node's results; a function whose return now
/// reads a more static value gets that type in its signature.
void replaceResults(OnnxNodeOp op, ArrayRef<Value> values,
                    const llvm::SmallPtrSetImpl<Operation *> &copied,
                    PatternRewriter &rewriter) {
  SmallVector<Value> adopted;
  for (auto [result, value] : llvm::zip(op.getResults(), values))
    adopted.push_back(
        adoptType(value, result.getType(), rewriter, op.getLoc(), copied));
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
    expanded.push_back(genericNode(
        rewriter, loc, "Unsqueeze", value, type,
        {rewriter.getNamedAttr("axes", rewriter.getDenseI64ArrayAttr(axis))}));
  }
  // Unsqueeze at opset 13 reads axes from an input: build it as opset 11.
  for (Value value : expanded)
    cast<OnnxNodeOp>(value.getDefiningOp())
        .setOpsetAttr(rewriter.getI64IntegerAttr(11));
  if (expanded.size() == 1) {
    expanded.front().setType(resultType);
    return expanded.front();
  }
  return genericNode(
      rewriter, loc, "Concat", expanded, resultType,
      {rewriter.getNamedAttr("axis", rewriter.getI64IntegerAttr(axis))});
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
  llvm::SmallPtrSet<Operation *, 16> copied;
  rewriter.setInsertionPoint(op);
  if (std::optional<double> flag = getConstantScalar(node.input(0))) {
    SmallVector<Value> taken =
        cloneBody(*flag != 0 ? thenBranch : elseBranch, {}, rewriter, copied);
    replaceResults(op, taken, copied, rewriter);
    return success();
  }
  // Both branches run; hps.where picks, element by element, with a rank-0
  // condition so that it broadcasts over any output.
  SmallVector<Value> thenValues = cloneBody(thenBranch, {}, rewriter, copied);
  SmallVector<Value> elseValues = cloneBody(elseBranch, {}, rewriter, copied);
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
  replaceResults(op, picked, copied, rewriter);
  return success();
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

struct LoopPlan {
  int64_t iterations = 0;
  unsigned carried = 0, scanned = 0;
};

FailureOr<LoopPlan> planLoop(ONNXNode node, std::string &problem) {
  OnnxNodeOp op = node.getOp();
  Region *body = op.getSubgraph("body");
  if (!body || node.numInputs() < 2) {
    problem = "it lacks its body or its inputs";
    return failure();
  }
  LoopPlan plan;
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

  std::optional<int64_t> tripCount;
  if (Value count = node.input(0)) {
    std::optional<double> value = getConstantScalar(count);
    if (!value) {
      problem = "its trip count is computed at run time";
      return failure();
    }
    tripCount = std::max<int64_t>(0, static_cast<int64_t>(*value));
  }
  bool running = true;
  if (Value condition = node.input(1)) {
    std::optional<double> value = getConstantScalar(condition);
    if (!value) {
      problem = "its initial condition is computed at run time";
      return failure();
    }
    running = *value != 0;
  }
  // The body's condition must be known for every iteration: passed through
  // (a for loop) or a constant.
  Value next = yield.getOperand(0);
  std::optional<double> constantNext = getConstantScalar(next);
  if (next != block.getArgument(1) && !constantNext) {
    problem = "its body computes the loop condition (a while loop whose exit "
              "depends on values)";
    return failure();
  }
  if (!running)
    plan.iterations = 0;
  else if (constantNext && *constantNext == 0)
    plan.iterations = tripCount ? std::min<int64_t>(*tripCount, 1) : 1;
  else if (tripCount)
    plan.iterations = *tripCount;
  else {
    problem = "it has no trip count and its condition never turns false";
    return failure();
  }
  if (plan.iterations == 0 && plan.scanned > 0) {
    problem = "it runs no iteration but has scan outputs (empty tensors)";
    return failure();
  }
  if (exceedsUnrollLimit(*body, plan.iterations, "iterations", problem))
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

  llvm::SmallPtrSet<Operation *, 32> copied;
  SmallVector<Value> state(op.getInputs().drop_front(2));
  SmallVector<SmallVector<Value>> scanned(plan->scanned);
  for (int64_t i = 0; i < plan->iterations; ++i) {
    SmallVector<Value> args = {
        scalarLike(rewriter, loc, block.getArgument(0).getType(),
                   rewriter.getI64Type(), i),
        scalarLike(rewriter, loc, block.getArgument(1).getType(),
                   rewriter.getI1Type(), 1)};
    args.append(state);
    SmallVector<Value> outputs = cloneBody(body, args, rewriter, copied);
    state.assign(outputs.begin() + 1, outputs.begin() + 1 + plan->carried);
    for (unsigned k = 0; k < plan->scanned; ++k)
      scanned[k].push_back(outputs[1 + plan->carried + k]);
  }
  SmallVector<Value> results(state);
  for (unsigned k = 0; k < plan->scanned; ++k)
    results.push_back(stack(rewriter, loc, scanned[k], 0,
                            op.getResult(plan->carried + k).getType()));
  replaceResults(op, results, copied, rewriter);
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

  llvm::SmallPtrSet<Operation *, 32> copied;
  SmallVector<Value> state(op.getInputs().take_front(plan->states));
  SmallVector<SmallVector<Value>> scanned(plan->outputs);
  for (int64_t t = 0; t < plan->length; ++t) {
    SmallVector<Value> args(state);
    for (unsigned j = 0; j < plan->inputs; ++j) {
      Value input = node.input(plan->states + j);
      auto type = cast<RankedTensorType>(input.getType());
      int64_t axis = plan->inputAxes[j];
      int64_t position =
          plan->inputDirections[j] != 0 ? plan->length - 1 - t : t;
      SmallVector<int64_t> sliceShape(type.getShape());
      sliceShape[axis] = 1;
      Value slice = rewriter.create<SliceOp>(
          loc, RankedTensorType::get(sliceShape, type.getElementType()), input,
          rewriter.getDenseI64ArrayAttr(position),
          rewriter.getDenseI64ArrayAttr(position + 1),
          rewriter.getDenseI64ArrayAttr(axis), rewriter.getDenseI64ArrayAttr(1),
          DeviceAttr());
      sliceShape.erase(sliceShape.begin() + axis);
      args.push_back(reshapeTo(node, rewriter, slice, sliceShape));
    }
    SmallVector<Value> outputs = cloneBody(body, args, rewriter, copied);
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
  replaceResults(op, results, copied, rewriter);
  return success();
}

} // namespace

std::optional<std::string> explainControlFlow(OnnxNodeOp op) {
  ONNXNode node(op);
  std::string problem;
  if (op.getOpType() == "If")
    return ifProblem(node);
  if (op.getOpType() == "Loop" && failed(planLoop(node, problem)))
    return problem;
  if (op.getOpType() == "Scan") {
    if (op.getOpset() < 9)
      return std::string("Scan before opset 9 (batched, with sequence_lens) "
                         "is not supported");
    if (failed(planScan(node, problem)))
      return problem;
  }
  return std::nullopt;
}

void populateControlFlowPatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "If", kMinOpset, kMaxOpset, {}, legalizeIf);
  addONNXPattern(patterns, "Loop", kMinOpset, kMaxOpset, {}, legalizeLoop);
  addONNXPattern(patterns, "Scan", 9, kMaxOpset,
                 {"num_scan_inputs", "scan_input_axes", "scan_input_directions",
                  "scan_output_axes", "scan_output_directions"},
                 legalizeScan);
}

} // namespace heterps::hps
