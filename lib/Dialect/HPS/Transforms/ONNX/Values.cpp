//===- Values.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateValuePatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
