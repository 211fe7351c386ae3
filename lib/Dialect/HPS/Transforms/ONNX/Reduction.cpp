//===- Reduction.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateReductionPatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
