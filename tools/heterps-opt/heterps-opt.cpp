//===- heterps-opt.cpp - HeterPS optimizer driver -------------------------===//
//
// mlir-opt with the hps and hpsrt dialects, the hps passes and pipelines,
// the passes that prepare stages for printing,
// plus the upstream transforms (canonicalize, cse, symbol-dce, ...).
//
//===----------------------------------------------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"
#include "heterps/Dialect/HPS/Transforms/Pipelines.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h"
#include "heterps/Target/Passes.h"
#include "heterps/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  heterps::setVersionPrinter();
  mlir::registerTransformsPasses();
  heterps::hps::registerHPSPasses();
  heterps::hps::registerHPSPipelines();
  heterps::target::registerStagePreparation();

  mlir::DialectRegistry registry;
  registry.insert<heterps::hps::HPSDialect, heterps::hpsrt::HPSRTDialect,
                  mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "HeterPS optimizer driver\n", registry));
}
