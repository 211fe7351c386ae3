//===- LegalizeONNX.cpp - hps.onnx_node -> hps layer ops ------------------===//

#include "ONNXPattern.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace heterps::hps {
#define GEN_PASS_DEF_HPSLEGALIZEONNX
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {
struct LegalizeONNXPass
    : public heterps::hps::impl::HPSLegalizeONNXBase<LegalizeONNXPass> {
  using HPSLegalizeONNXBase::HPSLegalizeONNXBase;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateElementwisePatterns(set);
    populateLinearAlgebraPatterns(set);
    populateConvolutionPatterns(set);
    populatePoolingPatterns(set);
    populateNormalizationPatterns(set);
    populateReductionPatterns(set);
    populateDataMovementPatterns(set);
    populateValuePatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    // Shape chains can be long (transformer exports); let the driver
    // iterate until nothing changes.
    config.maxIterations = GreedyRewriteConfig::kNoLimit;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), patterns, config)))
      return signalPassFailure();

    // Omitted-input markers nobody reads any more.
    getOperation().walk([](NoneOp op) {
      if (op->use_empty())
        op->erase();
    });

    if (!strict)
      return;
    bool failedAny = false;
    getOperation().walk([&](OnnxNodeOp node) {
      node.emitError() << "no legalization for ONNX op '" << node.getOpType()
                       << "' (domain '" << node.getDomain() << "', opset "
                       << node.getOpset() << ") with these attributes";
      failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};
} // namespace
