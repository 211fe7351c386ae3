//===- Convolution.cpp - ONNX legalization patterns -----------------------===//

#include "../ONNXPattern.h"

using namespace mlir;

namespace heterps::hps {

void populateConvolutionPatterns(RewritePatternSet &patterns) {}

} // namespace heterps::hps
