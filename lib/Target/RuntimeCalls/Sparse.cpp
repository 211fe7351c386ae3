//===- Sparse.cpp - Embedding lookups and parameter-server pulls ----------===//
//
// An inference stage looks rows up in the server's copy of a table (an
// hpsrt.server_table); a training stage pulls the rows of its ids from the
// server (an hps.ps_pull the printer writes as a support call), then pools
// them with a Reduce kernel.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCallPatterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

namespace {

struct EmbeddingLookupCall : public OpRewritePattern<hps::EmbeddingLookupOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::EmbeddingLookupOp lookup,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> table = shapeOf(lookup.getTable());
    replaceWithKernel<hpsrt::EmbeddingLookupOp>(
        rewriter, lookup, lookup.getType(), lookup.getTable(), lookup.getIds(),
        elementTypeOf(lookup.getTable()), table[0], table[1],
        elementTypeOf(lookup.getIds()), shapeOf(lookup.getIds()),
        sameEnumerator<hpsrt::EmbeddingPooling>(lookup.getPooling()));
    return success();
  }
};

struct PSPullCall : public OpRewritePattern<hps::PSPullOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(hps::PSPullOp pull,
                                PatternRewriter &rewriter) const override {
    auto tableType = cast<RankedTensorType>(pull.getTableType());
    if (tableType.getRank() != 2 || !tableType.hasStaticShape())
      return loweringError(
          pull, "parameter-server table must be a static 2-D tensor");
    auto module = pull->getParentOfType<ModuleOp>();
    if (module && module->hasAttr("hps.training"))
      return poolPulledRows(pull, rewriter);
    Type element = tableType.getElementType();
    if (!element.isF32() && !element.isF64())
      return loweringError(pull, "parameter-server table must hold f32 or f64");
    Value table = serverTable(pull, rewriter);
    replaceWithKernel<hpsrt::EmbeddingLookupOp>(
        rewriter, pull, pull.getType(), table, pull.getIds(), element,
        tableType.getDimSize(0), tableType.getDimSize(1),
        elementTypeOf(pull.getIds()), shapeOf(pull.getIds()),
        sameEnumerator<hpsrt::EmbeddingPooling>(pull.getPooling()));
    return success();
  }

  /// The stage's one hpsrt.server_table of the pulled table (the walk puts
  /// each before its first lookup).
  static Value serverTable(hps::PSPullOp pull, PatternRewriter &rewriter) {
    auto stage = pull->getParentOfType<func::FuncOp>();
    for (auto table : stage.getOps<hpsrt::ServerTableOp>())
      if (table.getName() == pull.getTable() &&
          table.getType() == pull.getTableType())
        return table;
    return rewriter.create<hpsrt::ServerTableOp>(
        pull.getLoc(), pull.getTableType(), pull.getTableAttr());
  }

  /// Training: the pull of a pooled lookup pulls the rows alone (the
  /// server has no pooling) and a Reduce pools them.
  static LogicalResult poolPulledRows(hps::PSPullOp pull,
                                      PatternRewriter &rewriter) {
    if (pull.getPooling() == hps::EmbeddingPooling::None)
      return failure(); // stays: the printer calls the server
    auto tableType = cast<RankedTensorType>(pull.getTableType());
    ArrayRef<int64_t> ids = shapeOf(pull.getIds());
    SmallVector<int64_t> unpooled(ids.begin(), ids.end());
    unpooled.push_back(tableType.getDimSize(1));
    auto rowsType = RankedTensorType::get(unpooled, tableType.getElementType());
    auto rows = rewriter.create<hps::PSPullOp>(
        pull.getLoc(), rowsType, pull.getTableAttr(), pull.getTableTypeAttr(),
        pull.getIds(),
        hps::EmbeddingPoolingAttr::get(pull.getContext(),
                                       hps::EmbeddingPooling::None),
        pull.getDeviceAttr());
    for (NamedAttribute attribute : pull->getDiscardableAttrs())
      rows->setAttr(attribute.getName(), attribute.getValue());
    int64_t axis = static_cast<int64_t>(ids.size()) - 1;
    replaceWithKernel<hpsrt::ReduceOp>(
        rewriter, pull, pull.getType(), rows.getResult(),
        tableType.getElementType(),
        pull.getPooling() == hps::EmbeddingPooling::Sum
            ? hpsrt::ReduceKind::Sum
            : hpsrt::ReduceKind::Mean,
        unpooled, ArrayRef<int64_t>{axis}, shapeOf(pull.getRows()));
    return success();
  }
};

} // namespace

void heterps::target::populateSparseCallPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingLookupCall, PSPullCall>(patterns.getContext());
}
