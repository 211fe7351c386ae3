//===- Sequences.cpp - ONNX sequences folded into their tensors -----------===//
//
// HeterPS's stages pass tensors only, so a sequence must be known element
// by element at compile time. Every sequence op with a known input is
// rewritten into SequenceConstruct of the tensors it holds (SequenceEmpty,
// SequenceInsert, SequenceErase, SplitToSequence, SequenceMap), and the ops
// that read a sequence take the tensors from there (SequenceAt,
// SequenceLength, ConcatFromSequence). A TorchScript loop that appends to a
// list, once unrolled, is a chain of SequenceInserts and folds this way.
// A SequenceConstruct nobody reads any more is erased.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {

std::optional<SmallVector<Value>> sequenceElements(Value sequence) {
  auto node = sequence.getDefiningOp<OnnxNodeOp>();
  if (!node || node.getOpType() != "SequenceConstruct" ||
      !(node.getDomain().empty() || node.getDomain() == "ai.onnx"))
    return std::nullopt;
  return SmallVector<Value>(node.getInputs());
}

namespace {

Value construct(PatternRewriter &rewriter, Location loc, Type type,
                ValueRange elements) {
  return createONNXNode(rewriter, loc, "SequenceConstruct", 11, elements, type)
      .getResult(0);
}

LogicalResult replaceWithSequence(ONNXNode node, PatternRewriter &rewriter,
                                  ValueRange elements) {
  rewriter.replaceOp(node.getOp(), construct(rewriter, node.getLoc(),
                                             node.resultType(), elements));
  return success();
}

/// An optional position input in [0, limit] after wrapping negative ones
/// by `count`; `fallback` when absent; std::nullopt when not constant.
std::optional<int64_t> position(ONNXNode node, unsigned input, int64_t count,
                                int64_t fallback, int64_t limit) {
  Value value = node.input(input);
  if (!value)
    return fallback;
  std::optional<double> constant = getConstantScalar(value);
  if (!constant)
    return std::nullopt;
  auto index = static_cast<int64_t>(*constant);
  if (index < 0)
    index += count;
  if (index < 0 || index > limit)
    return std::nullopt;
  return index;
}

LogicalResult legalizeSequenceEmpty(ONNXNode node, PatternRewriter &rewriter) {
  return replaceWithSequence(node, rewriter, {});
}

/// The canonical form stays while something reads it.
LogicalResult legalizeSequenceConstruct(ONNXNode node,
                                        PatternRewriter &rewriter) {
  if (!node.getOp()->use_empty())
    return fail(node, rewriter, "still read");
  rewriter.eraseOp(node.getOp());
  return success();
}

LogicalResult legalizeSequenceInsert(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<Value>> elements = sequenceElements(node.input(0));
  if (!elements || !node.input(1))
    return fail(node, rewriter, "the sequence is not known");
  auto count = static_cast<int64_t>(elements->size());
  std::optional<int64_t> at = position(node, 2, count, count, count);
  if (!at)
    return fail(node, rewriter, "the position is not a constant in range");
  elements->insert(elements->begin() + *at, node.input(1));
  return replaceWithSequence(node, rewriter, *elements);
}

LogicalResult legalizeSequenceErase(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<Value>> elements = sequenceElements(node.input(0));
  if (!elements || elements->empty())
    return fail(node, rewriter, "the sequence is not known or empty");
  auto count = static_cast<int64_t>(elements->size());
  std::optional<int64_t> at = position(node, 1, count, count - 1, count - 1);
  if (!at)
    return fail(node, rewriter, "the position is not a constant in range");
  elements->erase(elements->begin() + *at);
  return replaceWithSequence(node, rewriter, *elements);
}

LogicalResult legalizeSequenceAt(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<Value>> elements = sequenceElements(node.input(0));
  if (!elements || elements->empty())
    return fail(node, rewriter, "the sequence is not known or empty");
  auto count = static_cast<int64_t>(elements->size());
  std::optional<int64_t> at = position(node, 1, count, -1, count - 1);
  if (!at || *at < 0)
    return fail(node, rewriter, "the position is not a constant in range");
  // The elements may be more static than the sequence's element type (a
  // returned SequenceAt of differently shaped tensors).
  replaceNodeRefining(node.getOp(), (*elements)[*at], rewriter);
  return success();
}

LogicalResult legalizeSequenceLength(ONNXNode node, PatternRewriter &rewriter) {
  std::optional<SmallVector<Value>> elements = sequenceElements(node.input(0));
  if (!elements)
    return fail(node, rewriter, "the sequence is not known");
  // Checked before anything is created: a pattern that changes the IR and
  // then fails would be retried forever.
  auto type = RankedTensorType::get({}, rewriter.getI64Type());
  if (!canReplaceWithType(node, type))
    return fail(node, rewriter, "the result type differs");
  auto length = rewriter.create<ConstantOp>(
      node.getLoc(),
      DenseElementsAttr::get(type, static_cast<int64_t>(elements->size())));
  replaceNodeWith(node, length, rewriter);
  return success();
}

/// Concat (new_axis 0) or Unsqueeze + Concat (new_axis 1) of the elements.
LogicalResult legalizeConcatFromSequence(ONNXNode node,
                                         PatternRewriter &rewriter) {
  std::optional<SmallVector<Value>> elements = sequenceElements(node.input(0));
  if (!elements || elements->empty() || !node.hasAttr("axis"))
    return fail(node, rewriter, "the sequence is not known or empty");
  int64_t axis = node.getInt("axis", 0);
  SmallVector<Value> parts;
  if (node.getInt("new_axis", 0) != 0) {
    for (Value element : *elements) {
      Type type =
          UnrankedTensorType::get(getElementTypeOrSelf(element.getType()));
      parts.push_back(
          createONNXNode(rewriter, node.getLoc(), "Unsqueeze", 11, element,
                         type,
                         {rewriter.getNamedAttr(
                             "axes", rewriter.getDenseI64ArrayAttr(axis))})
              .getResult(0));
    }
  } else {
    parts = *elements;
  }
  rewriter.replaceOp(
      node.getOp(),
      createONNXNode(
          rewriter, node.getLoc(), "Concat", 11, parts, node.resultType(),
          {rewriter.getNamedAttr("axis", rewriter.getI64IntegerAttr(axis))}));
  return success();
}

/// Split along a static axis: into ones (squeezed unless keepdims), into
/// chunks of a scalar `split` (the last one shorter), or into the listed
/// sizes.
LogicalResult legalizeSplitToSequence(ONNXNode node,
                                      PatternRewriter &rewriter) {
  auto input = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!input)
    return fail(node, rewriter, "the input has no known rank");
  std::optional<int64_t> axis = node.getAxis("axis", 0, input.getRank());
  if (!axis || input.isDynamicDim(*axis))
    return fail(node, rewriter, "the axis is out of range or dynamic");
  int64_t extent = input.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (Value split = node.input(1)) {
    auto splitType = dyn_cast<RankedTensorType>(split.getType());
    auto values = dyn_cast_or_null<DenseIntElementsAttr>(
        dyn_cast_or_null<DenseElementsAttr>(getConstantValue(split)));
    if (!splitType || !values || splitType.getRank() > 1)
      return fail(node, rewriter, "split is not a constant scalar or list");
    if (splitType.getRank() == 0) {
      int64_t chunk = (*values.begin()).getSExtValue();
      if (chunk <= 0)
        return fail(node, rewriter, "split is not positive");
      for (int64_t at = 0; at < extent; at += chunk)
        sizes.push_back(std::min(chunk, extent - at));
    } else {
      int64_t total = 0;
      for (const APInt &size : values) {
        sizes.push_back(size.getSExtValue());
        total += sizes.back();
      }
      if (total != extent ||
          llvm::any_of(sizes, [](int64_t size) { return size < 0; }))
        return fail(node, rewriter, "split does not add up to the extent");
    }
  } else {
    sizes.assign(extent, 1);
    squeeze = node.getInt("keepdims", 1) == 0;
  }
  if (sizes.empty())
    return fail(node, rewriter, "an empty input");
  SmallVector<Type> types;
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(input.getShape());
    shape[*axis] = size;
    types.push_back(RankedTensorType::get(shape, input.getElementType()));
  }
  OnnxNodeOp split = createONNXNode(
      rewriter, node.getLoc(), "Split", 11, node.input(0), types,
      {rewriter.getNamedAttr("axis", rewriter.getI64IntegerAttr(*axis)),
       rewriter.getNamedAttr("split", rewriter.getDenseI64ArrayAttr(sizes))});
  SmallVector<Value> pieces(split.getResults());
  if (squeeze)
    for (Value &piece : pieces) {
      SmallVector<int64_t> shape(input.getShape());
      shape.erase(shape.begin() + *axis);
      piece =
          createONNXNode(rewriter, node.getLoc(), "Squeeze", 11, piece,
                         RankedTensorType::get(shape, input.getElementType()),
                         {rewriter.getNamedAttr(
                             "axes", rewriter.getDenseI64ArrayAttr(*axis))})
              .getResult(0);
    }
  return replaceWithSequence(node, rewriter, pieces);
}

/// SequenceMap: the body once per element, each output a sequence of the
/// copies' values. Sequence inputs must have one known length; tensor
/// inputs are passed to every copy.
LogicalResult legalizeSequenceMap(ONNXNode node, PatternRewriter &rewriter) {
  OnnxNodeOp op = node.getOp();
  Region *body = op.getSubgraph("body");
  if (!body || body->front().getNumArguments() != node.numInputs())
    return fail(node, rewriter, "the body does not match the inputs");
  SmallVector<std::optional<SmallVector<Value>>> inputs;
  std::optional<size_t> count;
  for (Value input : op.getInputs()) {
    if (!isa<SequenceType>(input.getType())) {
      inputs.push_back(std::nullopt);
      continue;
    }
    inputs.push_back(sequenceElements(input));
    if (!inputs.back() || (count && *count != inputs.back()->size()))
      return fail(node, rewriter,
                  "a sequence is not known or its length "
                  "differs");
    count = inputs.back()->size();
  }
  if (!count)
    return fail(node, rewriter, "no sequence input");
  SmallVector<SmallVector<Value>> outputs(op.getNumResults());
  for (size_t k = 0; k < *count; ++k) {
    SmallVector<Value> args;
    for (auto [input, elements] : llvm::zip(op.getInputs(), inputs))
      args.push_back(elements ? (*elements)[k] : input);
    for (auto [j, value] :
         llvm::enumerate(cloneSubgraph(*body, args, rewriter)))
      outputs[j].push_back(value);
  }
  SmallVector<Value> results;
  for (auto [result, values] : llvm::zip(op.getResults(), outputs))
    results.push_back(
        construct(rewriter, node.getLoc(), result.getType(), values));
  rewriter.replaceOp(op, results);
  return success();
}

} // namespace

void populateSequencePatterns(RewritePatternSet &patterns) {
  addONNXPattern(patterns, "SequenceEmpty", 11, kMaxOpset, {"dtype"},
                 legalizeSequenceEmpty);
  addONNXPattern(patterns, "SequenceConstruct", 11, kMaxOpset, {},
                 legalizeSequenceConstruct);
  addONNXPattern(patterns, "SequenceInsert", 11, kMaxOpset, {},
                 legalizeSequenceInsert);
  addONNXPattern(patterns, "SequenceErase", 11, kMaxOpset, {},
                 legalizeSequenceErase);
  addONNXPattern(patterns, "SequenceAt", 11, kMaxOpset, {}, legalizeSequenceAt);
  addONNXPattern(patterns, "SequenceLength", 11, kMaxOpset, {},
                 legalizeSequenceLength);
  addONNXPattern(patterns, "ConcatFromSequence", 11, kMaxOpset,
                 {"axis", "new_axis"}, legalizeConcatFromSequence);
  addONNXPattern(patterns, "SplitToSequence", 11, kMaxOpset,
                 {"axis", "keepdims"}, legalizeSplitToSequence);
  addONNXPattern(patterns, "SequenceMap", 17, kMaxOpset, {},
                 legalizeSequenceMap);
}

} // namespace heterps::hps
