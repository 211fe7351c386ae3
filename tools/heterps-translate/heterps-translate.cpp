//===- heterps-translate.cpp - HeterPS translation driver -----------------===//
//
// Translations into and out of the hps dialect: --import-onnx now; plans,
// graphs and stage bundles come with placement and code generation.
//
//===----------------------------------------------------------------------===//

#include "heterps/Import/ONNXImporter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  heterps::import::registerONNXImportTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "HeterPS translation driver\n"));
}
