//===- WindowAttrs.cpp - Conv/pool attributes with auto_pad ---------------===//

#include "WindowAttrs.h"

using namespace mlir;

namespace heterps::hps {

FailureOr<WindowAttrs> resolveWindow(ONNXNode node, ArrayRef<int64_t> kernel) {
  auto input = rankedShape(node.input(0));
  if (!input || input->size() < 3)
    return failure();
  size_t spatial = input->size() - 2;
  if (kernel.size() != spatial)
    return failure();
  WindowAttrs attrs;
  attrs.kernel.assign(kernel.begin(), kernel.end());
  attrs.strides =
      node.getInts("strides").value_or(SmallVector<int64_t>(spatial, 1));
  attrs.dilations =
      node.getInts("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  attrs.pads =
      node.getInts("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  auto positive = [](int64_t v) { return v >= 1; };
  if (attrs.strides.size() != spatial || attrs.dilations.size() != spatial ||
      attrs.pads.size() != 2 * spatial ||
      !llvm::all_of(attrs.strides, positive) ||
      !llvm::all_of(attrs.dilations, positive) ||
      llvm::any_of(attrs.pads, [](int64_t p) { return p < 0; }))
    return failure();

  std::string autoPad = node.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return attrs;
  if (autoPad == "VALID") {
    attrs.pads.assign(2 * spatial, 0);
    return attrs;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return failure();
  for (size_t i = 0; i < spatial; ++i) {
    int64_t in = (*input)[2 + i];
    if (in == ShapedType::kDynamic || kernel[i] == ShapedType::kDynamic)
      return failure();
    int64_t stride = attrs.strides[i];
    int64_t out = (in + stride - 1) / stride;
    int64_t extent = (kernel[i] - 1) * attrs.dilations[i] + 1;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
    int64_t small = total / 2, large = total - small;
    attrs.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    attrs.pads[spatial + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return attrs;
}

} // namespace heterps::hps
