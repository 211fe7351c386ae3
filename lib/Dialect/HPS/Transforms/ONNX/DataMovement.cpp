//===- DataMovement.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateDataMovementPatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
