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

bool verifiesQuietly(Operation *op) {
  ScopedDiagnosticHandler quiet(op->getContext(),
                                [](Diagnostic &) { return success(); });
  return succeeded(verify(op));
}

} // namespace heterps::hps
