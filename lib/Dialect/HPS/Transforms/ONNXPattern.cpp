//===- ONNXPattern.cpp - Building blocks of ONNX legalization -------------===//

#include "ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

Value ONNXNode::input(unsigned i) const {
  if (i >= op.getInputs().size())
    return nullptr;
  Value value = op.getInputs()[i];
  return isa<NoneType>(value.getType()) ? nullptr : value;
}

Attribute ONNXNode::getAttr(StringRef name) const {
  return op.getAttrs().get(name);
}

bool ONNXNode::hasAttr(StringRef name) const {
  return static_cast<bool>(getAttr(name));
}

int64_t ONNXNode::getInt(StringRef name, int64_t fallback) const {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(getAttr(name)))
    return attr.getInt();
  return fallback;
}

float ONNXNode::getFloat(StringRef name, float fallback) const {
  if (auto attr = dyn_cast_or_null<FloatAttr>(getAttr(name)))
    return attr.getValueAsDouble();
  return fallback;
}

std::string ONNXNode::getString(StringRef name, StringRef fallback) const {
  if (auto attr = dyn_cast_or_null<StringAttr>(getAttr(name)))
    return attr.str();
  return fallback.str();
}

std::optional<int64_t> ONNXNode::getAxis(StringRef name, int64_t fallback,
                                         int64_t rank) const {
  int64_t axis = getInt(name, fallback);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

std::optional<SmallVector<int64_t>> ONNXNode::getInts(StringRef name) const {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(getAttr(name)))
    return SmallVector<int64_t>(attr.asArrayRef());
  return std::nullopt;
}

ONNXPattern::ONNXPattern(MLIRContext *context, StringRef opType,
                         int64_t minOpset, int64_t maxOpset,
                         ONNXRewrite rewrite, StringRef domain)
    : OpRewritePattern(context), opType(opType), domain(domain),
      minOpset(minOpset), maxOpset(maxOpset), rewrite(std::move(rewrite)) {}

LogicalResult ONNXPattern::matchAndRewrite(OnnxNodeOp op,
                                           PatternRewriter &rewriter) const {
  StringRef nodeDomain = op.getDomain();
  if (nodeDomain == "ai.onnx")
    nodeDomain = "";
  auto opset = static_cast<int64_t>(op.getOpset()); // Verified positive.
  if (op.getOpType() != opType || nodeDomain != domain || opset < minOpset ||
      opset > maxOpset)
    return failure();
  return rewrite(ONNXNode(op), rewriter);
}

void addONNXPattern(RewritePatternSet &patterns, StringRef opType,
                    int64_t minOpset, int64_t maxOpset, ONNXRewrite rewrite) {
  patterns.add<ONNXPattern>(patterns.getContext(), opType, minOpset, maxOpset,
                            std::move(rewrite));
}

void addDomainONNXPattern(RewritePatternSet &patterns, StringRef domain,
                          StringRef opType, int64_t minOpset, int64_t maxOpset,
                          ONNXRewrite rewrite) {
  patterns.add<ONNXPattern>(patterns.getContext(), opType, minOpset, maxOpset,
                            std::move(rewrite), domain);
}

void replaceNodeWith(ONNXNode node, Value value, PatternRewriter &rewriter) {
  rewriter.replaceAllUsesWith(node.result(0), value);
  rewriter.eraseOp(node.getOp());
}

std::optional<double> getConstantScalar(Value value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(getConstantValue(value));
  if (!dense || (!dense.isSplat() && dense.getNumElements() != 1))
    return std::nullopt;
  Attribute element = dense.getSplatValue<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(element))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(element))
    return i.getType().isUnsignedInteger()
               ? static_cast<double>(i.getValue().getZExtValue())
               : static_cast<double>(i.getValue().getSExtValue());
  return std::nullopt;
}

TypedAttr makeScalarAttr(Type elementType, double value) {
  if (isa<FloatType>(elementType))
    return FloatAttr::get(elementType, value);
  return IntegerAttr::get(elementType, static_cast<int64_t>(value));
}

std::optional<ArrayRef<int64_t>> rankedShape(Value value) {
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    return type.getShape();
  return std::nullopt;
}

} // namespace heterps::hps
