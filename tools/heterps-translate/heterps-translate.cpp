//===- heterps-translate.cpp - HeterPS translation driver -----------------===//
//
// Translations into and out of the hps dialect: --import-onnx, and the
// placement plan as JSON (--hps-to-plan) or Graphviz (--hps-to-dot).
//
//===----------------------------------------------------------------------===//

#include "heterps/Import/ONNXImporter.h"
#include "heterps/Target/PlanExport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  heterps::import::registerONNXImportTranslation();
  heterps::target::registerPlanExportTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "HeterPS translation driver\n"));
}
