//===- Pooling.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populatePoolingPatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
