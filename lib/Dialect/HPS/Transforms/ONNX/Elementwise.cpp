//===- Elementwise.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateElementwisePatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
