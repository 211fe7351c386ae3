//===- Support.cpp - Helpers shared by the layer-op patterns --------------===//

#include "Support.h"

using namespace mlir;

namespace heterps::hps {

void addONNXPattern(RewritePatternSet &patterns, StringRef opType,
                    int64_t minOpset, int64_t maxOpset,
                    ArrayRef<StringRef> known, ONNXRewrite rewrite) {
  SmallVector<std::string> names(known.begin(), known.end());
  addONNXPattern(patterns, opType, minOpset, maxOpset,
                 [names = std::move(names), rewrite = std::move(rewrite)](
                     ONNXNode node, PatternRewriter &rewriter) {
                   for (NamedAttribute attr : node.getOp().getAttrs())
                     if (!llvm::is_contained(names, attr.getName().strref()))
                       return fail(node, rewriter,
                                   "attribute '" + attr.getName().strref() +
                                       "' is not in this opset's schema");
                   return rewrite(node, rewriter);
                 });
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
  if (getElementTypeOrSelf(type) != getElementTypeOrSelf(expected) ||
      failed(verifyCompatibleShape(type, expected)))
    return false;
  return llvm::all_of(node.result().getUsers(), [](Operation *user) {
    return isa<HPSDialect>(user->getDialect());
  });
}

LogicalResult replaceNodeWithCompatible(ONNXNode node, Value value,
                                        PatternRewriter &rewriter) {
  if (!value || !canReplaceWithType(node, value.getType()))
    return fail(node, rewriter, "the replacement's type differs");
  replaceNodeWith(node, value, rewriter);
  return success();
}

Value reshapeTo(ONNXNode node, PatternRewriter &rewriter, Value value,
                ArrayRef<int64_t> shape) {
  Type element = cast<ShapedType>(value.getType()).getElementType();
  return rewriter.create<ReshapeOp>(node.getLoc(),
                                    RankedTensorType::get(shape, element),
                                    value, rewriter.getDenseI64ArrayAttr(shape),
                                    UnitAttr(), node.getOp().getDeviceAttr());
}

bool verifiesQuietly(Operation *op) {
  ScopedDiagnosticHandler quiet(op->getContext(),
                                [](Diagnostic &) { return success(); });
  return succeeded(verify(op));
}

} // namespace heterps::hps
