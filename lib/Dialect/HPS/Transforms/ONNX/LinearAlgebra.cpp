//===- LinearAlgebra.cpp - Gemm, MatMul, Einsum ---------------------------===//
//
// Gemm-6: C broadcast only with broadcast=1; Gemm-7: C required,
// unidirectionally broadcast to (M, N); Gemm-9: more element types; Gemm-11: C
// optional. MatMul only widened its types (MatMul-9, -13), so one pattern
// covers opsets 7-17. Einsum (12-17) of one or two operands becomes
// reductions, transposes, reshapes and one batched matmul.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace mlir;

namespace heterps::hps {
namespace {

/// Gemm: Y = alpha * op(A) op(B) + beta * C with A and B 2-D. Before opset 11
/// a node without C is malformed and stays generic.
/// Gemm of f64 or integers: hps.gemm's kernels (oneDNN, cuBLAS) take f32,
/// hps.matmul's exact loops the rest. Y = alpha * op(A) op(B) + beta * C.
LogicalResult decomposeGemm(ONNXNode node, PatternRewriter &rewriter,
                            bool transA, bool transB) {
  auto result = dyn_cast<RankedTensorType>(node.resultType());
  auto a = rankedShape(node.input(0)), b = rankedShape(node.input(1));
  if (!result || !a || !b || a->size() != 2 || b->size() != 2)
    return fail(node, rewriter, "unranked operands");
  Location loc = node.getLoc();
  Type element = result.getElementType();
  DeviceAttr device;
  auto transposed = [&](Value value, ArrayRef<int64_t> shape) -> Value {
    return rewriter.create<TransposeOp>(
        loc, RankedTensorType::get({shape[1], shape[0]}, element), value,
        rewriter.getDenseI64ArrayAttr({1, 0}), device);
  };
  Value lhs = transA ? transposed(node.input(0), *a) : node.input(0);
  Value rhs = transB ? transposed(node.input(1), *b) : node.input(1);
  Value y = rewriter.create<MatMulOp>(loc, result, lhs, rhs, device);
  const double alpha = node.getFloat("alpha", 1.0f);
  const double beta = node.getFloat("beta", 1.0f);
  if (alpha != 1)
    y = rewriter.create<MulOp>(
        loc, result, y, scalarConstant(rewriter, loc, element, alpha), device);
  if (Value c = node.input(2)) {
    if (beta != 1)
      c = rewriter.create<MulOp>(loc, c.getType(), c,
                                 scalarConstant(rewriter, loc, element, beta),
                                 device);
    y = rewriter.create<AddOp>(loc, result, y, c, device);
  }
  replaceNodeWith(node, y, rewriter);
  return success();
}

LogicalResult legalizeGemm(ONNXNode node, PatternRewriter &rewriter) {
  if (node.getOpset() < 11 && !node.input(2))
    return fail(node, rewriter, "C is required before opset 11");
  std::optional<bool> transA = getFlag(node, "transA");
  std::optional<bool> transB = getFlag(node, "transB");
  if (!transA || !transB)
    return fail(node, rewriter, "transA/transB must be 0 or 1");
  if (auto type = dyn_cast<ShapedType>(node.resultType());
      type &&
      (type.getElementType().isF64() || type.getElementType().isInteger()))
    return decomposeGemm(node, rewriter, *transA, *transB);
  return replaceNodeChecked<GemmOp>(
      node, rewriter, node.input(0), node.input(1), node.input(2),
      rewriter.getF32FloatAttr(node.getFloat("alpha", 1.0f)),
      rewriter.getF32FloatAttr(node.getFloat("beta", 1.0f)),
      unitIf(rewriter, *transA), unitIf(rewriter, *transB), DeviceAttr());
}

/// numpy matmul; hps.matmul shares its 1-D promotion and batch broadcasting.
LogicalResult legalizeMatMul(ONNXNode node, PatternRewriter &rewriter) {
  return replaceNodeChecked<MatMulOp>(node, rewriter, node.input(0),
                                      node.input(1), DeviceAttr());
}

/// An einsum equation as one label per axis of every operand and of the
/// output: a letter's own code, or kEllipsisLabel + k for the k-th axis
/// that "..." stands for (right-aligned across operands, as numpy does).
struct EinsumLabels {
  SmallVector<SmallVector<int>> inputs;
  SmallVector<int> output;
};
constexpr int kEllipsisLabel = 256;

/// Parses one term ("bij", "...ii") for an operand of `rank` axes (-1: the
/// output, whose "..." spans `ellipsisRank` axes). Fails on any other
/// character, a second "...", or a rank that does not match.
FailureOr<SmallVector<int>> parseEinsumTerm(StringRef term, int64_t rank,
                                            int64_t ellipsisRank) {
  SmallVector<int> labels;
  int64_t letters = llvm::count_if(
      term, [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  bool seenEllipsis = false;
  for (size_t i = 0; i < term.size();) {
    if (term.substr(i).starts_with("...")) {
      if (seenEllipsis)
        return failure();
      seenEllipsis = true;
      int64_t span = rank < 0 ? ellipsisRank : rank - letters;
      if (span < 0 || span > ellipsisRank)
        return failure();
      for (int64_t k = ellipsisRank - span; k < ellipsisRank; ++k)
        labels.push_back(kEllipsisLabel + static_cast<int>(k));
      i += 3;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(term[i])))
      return failure();
    labels.push_back(term[i++]);
  }
  if (rank >= 0 && static_cast<int64_t>(labels.size()) != rank)
    return failure();
  return labels;
}

/// The labels of `equation` for operands of `ranks`; the implicit output
/// (no "->") is the ellipsis axes, then the letters used once, sorted.
FailureOr<EinsumLabels> parseEinsum(StringRef equation,
                                    ArrayRef<int64_t> ranks) {
  std::string compact;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c)))
      compact += c;
  StringRef text(compact);
  auto [lhs, rhs] = text.split("->");
  bool explicitOutput = text.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size())
    return failure();
  // The widest "..." among the operands.
  int64_t ellipsisRank = 0;
  for (auto [term, rank] : llvm::zip(terms, ranks))
    if (term.contains("..."))
      ellipsisRank =
          std::max(ellipsisRank,
                   rank - static_cast<int64_t>(llvm::count_if(term, [](char c) {
                     return std::isalpha(static_cast<unsigned char>(c));
                   })));
  EinsumLabels labels;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    FailureOr<SmallVector<int>> parsed =
        parseEinsumTerm(term, rank, ellipsisRank);
    if (failed(parsed))
      return failure();
    labels.inputs.push_back(*parsed);
  }
  if (explicitOutput) {
    FailureOr<SmallVector<int>> parsed = parseEinsumTerm(rhs, -1, ellipsisRank);
    if (failed(parsed))
      return failure();
    labels.output = *parsed;
  } else {
    std::map<int, int> uses;
    for (const SmallVector<int> &input : labels.inputs)
      for (int label : input)
        ++uses[label];
    for (int64_t k = 0; k < ellipsisRank; ++k)
      labels.output.push_back(kEllipsisLabel + static_cast<int>(k));
    for (auto [label, count] : uses)
      if (count == 1 && label < kEllipsisLabel)
        labels.output.push_back(label);
  }
  return labels;
}

/// `value` (static shape, axes labelled `labels`) with each label that
/// appears twice replaced by one axis, the diagonal: both axes moved last
/// (hps.transpose), viewed as one of n * n (hps.reshape) and gathered at
/// 0, n + 1, 2 (n + 1), ... (hps.gather, any element type). The kept label
/// goes last in `labels`. The two extents must agree (checked by the
/// caller).
Value takeDiagonals(ONNXNode node, PatternRewriter &rewriter, Value value,
                    SmallVector<int> &labels) {
  // The first axis whose label appears again later, and that later axis.
  auto repeatedPair = [&]() -> std::optional<std::pair<int64_t, int64_t>> {
    for (size_t i = 0; i < labels.size(); ++i)
      for (size_t j = i + 1; j < labels.size(); ++j)
        if (labels[i] == labels[j])
          return std::make_pair(static_cast<int64_t>(i),
                                static_cast<int64_t>(j));
    return std::nullopt;
  };
  while (std::optional<std::pair<int64_t, int64_t>> pair = repeatedPair()) {
    auto [p, q] = *pair;
    auto type = cast<RankedTensorType>(value.getType());
    const int label = labels[p];
    const int64_t n = type.getDimSize(p);
    SmallVector<int64_t> perm, shape;
    SmallVector<int> rest;
    for (int64_t axis = 0; axis < type.getRank(); ++axis) {
      if (axis == p || axis == q)
        continue;
      perm.push_back(axis);
      shape.push_back(type.getDimSize(axis));
      rest.push_back(labels[axis]);
    }
    perm.append({p, q});
    Value moved = value;
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      SmallVector<int64_t> movedShape(shape);
      movedShape.append({n, n});
      moved = rewriter.create<TransposeOp>(
          node.getLoc(),
          RankedTensorType::get(movedShape, type.getElementType()), value,
          rewriter.getDenseI64ArrayAttr(perm), node.getOp().getDeviceAttr());
    }
    SmallVector<int64_t> flatShape(shape);
    flatShape.push_back(n * n);
    Value flat = reshapeTo(node, rewriter, moved, flatShape);
    SmallVector<int64_t> positions;
    for (int64_t i = 0; i < n; ++i)
      positions.push_back(i * (n + 1));
    Value indices = rewriter.create<ConstantOp>(
        node.getLoc(), DenseElementsAttr::get(
                           RankedTensorType::get({n}, rewriter.getI64Type()),
                           ArrayRef(positions)));
    shape.push_back(n);
    rest.push_back(label);
    value = rewriter.create<GatherOp>(
        node.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        flat, indices, rewriter.getI64IntegerAttr(flatShape.size() - 1),
        node.getOp().getDeviceAttr());
    labels = rest;
  }
  return value;
}

/// Einsum of one or two static-shape operands. Axes whose label neither
/// the output nor the other operand has are summed first; then two
/// operands are transposed to [batch, free, contracted] and [batch,
/// contracted, free], multiplied as [B, L, K] x [B, K, R], and the result
/// is reshaped and transposed into the output's order. A label repeated
/// within one operand takes the diagonal first (takeDiagonals). Not
/// supported (the node stays generic): extents that differ or broadcast,
/// three or more operands, and element types other than f32 and f64 where
/// a sum or product is needed.
LogicalResult legalizeEinsum(ONNXNode node, PatternRewriter &rewriter) {
  unsigned count = node.numInputs();
  if (count < 1 || count > 2)
    return fail(node, rewriter, "needs one or two operands");
  SmallVector<RankedTensorType> types;
  SmallVector<int64_t> ranks;
  for (unsigned i = 0; i < count; ++i) {
    auto type = dyn_cast<RankedTensorType>(node.input(i).getType());
    if (!type || !type.hasStaticShape())
      return fail(node, rewriter, "needs static operand shapes");
    types.push_back(type);
    ranks.push_back(type.getRank());
  }
  Type element = types[0].getElementType();
  if (count == 2 && types[1].getElementType() != element)
    return fail(node, rewriter, "operands of different element types");
  FailureOr<EinsumLabels> labels =
      parseEinsum(node.getString("equation", ""), ranks);
  if (failed(labels))
    return fail(node, rewriter, "cannot parse the equation");
  llvm::DenseMap<int, int64_t> extent;
  for (unsigned i = 0; i < count; ++i) {
    ArrayRef<int> input = labels->inputs[i];
    for (auto [axis, label] : llvm::enumerate(input)) {
      int64_t size = types[i].getDimSize(axis);
      auto [it, inserted] = extent.try_emplace(label, size);
      if (!inserted && it->second != size)
        return fail(node, rewriter, "a label with two extents");
    }
  }
  SmallVector<int> output = labels->output;
  for (int label : output)
    if (!extent.count(label) || llvm::count(output, label) > 1)
      return fail(node, rewriter, "an output label unused or repeated");

  // A pure permutation moves any element type; sums and products are f32
  // or f64 (the element types the reduction kernels take).
  bool permutation = count == 1 && llvm::all_of(labels->inputs[0], [&](int l) {
                       return llvm::is_contained(output, l);
                     });
  if (!permutation && !element.isF32() && !element.isF64())
    return fail(node, rewriter, "sums and products need f32 or f64");

  Location loc = node.getLoc();
  DeviceAttr device = node.getOp().getDeviceAttr();
  auto shapeOf = [&](ArrayRef<int> order) {
    SmallVector<int64_t> shape;
    for (int label : order)
      shape.push_back(extent[label]);
    return shape;
  };
  auto has = [](ArrayRef<int> list, int label) {
    return llvm::is_contained(list, label);
  };
  // Sums the axes of `value` (labels `order`) whose label is in neither
  // `keep` list; updates `order`.
  auto sumAway = [&](Value value, SmallVector<int> &order, ArrayRef<int> keep,
                     ArrayRef<int> alsoKeep) -> Value {
    SmallVector<int64_t> axes;
    SmallVector<int> kept;
    for (auto [axis, label] : llvm::enumerate(order)) {
      if (has(keep, label) || has(alsoKeep, label))
        kept.push_back(label);
      else
        axes.push_back(static_cast<int64_t>(axis));
    }
    if (axes.empty())
      return value;
    order = kept;
    return rewriter.create<ReduceOp>(
        loc, RankedTensorType::get(shapeOf(kept), element),
        ReduceKindAttr::get(rewriter.getContext(), ReduceKind::Sum), value,
        rewriter.getDenseI64ArrayAttr(axes), UnitAttr(), device);
  };
  // `value` (labels `order`) with its axes in the order `wanted`.
  auto permute = [&](Value value, ArrayRef<int> order,
                     ArrayRef<int> wanted) -> Value {
    SmallVector<int64_t> perm;
    for (int label : wanted)
      perm.push_back(llvm::find(order, label) - order.begin());
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return value;
    return rewriter.create<TransposeOp>(
        loc, RankedTensorType::get(shapeOf(wanted), element), value,
        rewriter.getDenseI64ArrayAttr(perm), device);
  };
  auto product = [&](ArrayRef<int> group) {
    int64_t size = 1;
    for (int label : group)
      size *= extent[label];
    return size;
  };

  SmallVector<Value> operands;
  SmallVector<SmallVector<int>> inputLabels;
  for (unsigned i = 0; i < count; ++i) {
    inputLabels.push_back(labels->inputs[i]);
    operands.push_back(
        takeDiagonals(node, rewriter, node.input(i), inputLabels.back()));
  }

  Value result;
  SmallVector<int> order;
  if (count == 1) {
    order = inputLabels[0];
    result = sumAway(operands[0], order, output, {});
  } else {
    SmallVector<int> a = inputLabels[0], b = inputLabels[1];
    Value left = sumAway(operands[0], a, output, b);
    Value right = sumAway(operands[1], b, output, a);
    SmallVector<int> batch, contracted, leftFree, rightFree;
    for (int label : output)
      if (has(a, label) && has(b, label))
        batch.push_back(label);
    for (int label : a) {
      if (has(b, label) && !has(output, label))
        contracted.push_back(label);
      else if (!has(b, label))
        leftFree.push_back(label);
    }
    for (int label : b)
      if (!has(a, label))
        rightFree.push_back(label);
    int64_t batchSize = product(batch), l = product(leftFree),
            k = product(contracted), r = product(rightFree);
    SmallVector<int> leftOrder = batch, rightOrder = batch;
    leftOrder.append(leftFree);
    leftOrder.append(contracted);
    rightOrder.append(contracted);
    rightOrder.append(rightFree);
    SmallVector<int64_t> leftView = {batchSize, l, k},
                         rightView = {batchSize, k, r},
                         productView = {batchSize, l, r};
    if (batch.empty()) {
      leftView.erase(leftView.begin());
      rightView.erase(rightView.begin());
      productView.erase(productView.begin());
    }
    left = reshapeTo(node, rewriter, permute(left, a, leftOrder), leftView);
    right = reshapeTo(node, rewriter, permute(right, b, rightOrder), rightView);
    Value multiplied = rewriter.create<MatMulOp>(
        loc, RankedTensorType::get(productView, element), left, right, device);
    order = batch;
    order.append(leftFree);
    order.append(rightFree);
    result = reshapeTo(node, rewriter, multiplied, shapeOf(order));
  }
  return replaceNodeWithCompatible(node, permute(result, order, output),
                                   rewriter);
}

} // namespace

/// Det (11-25): hps.determinant of a static [..., n, n] f32 or f64 input.
LogicalResult legalizeDet(ONNXNode node, PatternRewriter &rewriter) {
  auto type = dyn_cast<RankedTensorType>(node.input(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
      (!type.getElementType().isF32() && !type.getElementType().isF64()))
    return fail(node, rewriter, "needs a static f32 or f64 [..., n, n] input");
  auto resultType = RankedTensorType::get(type.getShape().drop_back(2),
                                          type.getElementType());
  if (!canReplaceWithType(node, resultType))
    return fail(node, rewriter, "result type differs from ONNX's");
  return replaceNodeWithCompatible(
      node,
      rewriter.create<DeterminantOp>(node.getLoc(), resultType, node.input(0),
                                     node.getOp().getDeviceAttr()),
      rewriter);
}

void populateLinearAlgebraPatterns(RewritePatternSet &patterns) {
  static constexpr StringRef kGemmAttrs[] = {"alpha", "beta", "transA",
                                             "transB"};
  // Gemm-6 broadcasts C only with broadcast=1 (else C is (M, N)): both are
  // cases of Gemm-7's unidirectional broadcast.
  static constexpr StringRef kGemm6Attrs[] = {"alpha", "beta", "broadcast",
                                              "transA", "transB"};
  addONNXPattern(patterns, "Gemm", 6, 6, kGemm6Attrs, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 7, 8, kGemmAttrs, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 9, 10, kGemmAttrs, legalizeGemm);
  addONNXPattern(patterns, "Gemm", 11, kMaxOpset, kGemmAttrs, legalizeGemm);
  addONNXPattern(patterns, "MatMul", kMinOpset, kMaxOpset, {}, legalizeMatMul);
  addONNXPattern(patterns, "Einsum", 12, kMaxOpset, {"equation"},
                 legalizeEinsum);
  addONNXPattern(patterns, "Det", 11, kMaxOpset, {}, legalizeDet);
}

} // namespace heterps::hps
