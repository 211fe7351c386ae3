//===- LinearAlgebra.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateLinearAlgebraPatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
