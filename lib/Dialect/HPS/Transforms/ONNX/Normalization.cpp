//===- Normalization.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateNormalizationPatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
