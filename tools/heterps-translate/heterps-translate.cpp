//===- heterps-translate.cpp - HeterPS translation driver -----------------===//
//
// Translations into and out of the hps dialect: --import-onnx, the placement
// plan as JSON (--hps-to-plan) or Graphviz (--hps-to-dot), and the bundle of
// stage programs (--hps-to-stages -o DIR).
//
//===----------------------------------------------------------------------===//

#include "heterps/Import/ONNXImporter.h"
#include "heterps/Target/PlanExport.h"
#include "heterps/Target/StageBundle.h"
#include "heterps/Version.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

/// --hps-to-stages writes a directory, which mlir-translate's single output
/// file cannot be: its `-o DIR` becomes --bundle-dir=DIR and the stream goes
/// to stdout, where nothing is written.
static std::vector<std::string> bundleArguments(int argc, char **argv) {
  std::vector<std::string> args(argv, argv + argc);
  bool stages = false;
  for (const std::string &arg : args)
    stages |= arg == "--hps-to-stages" || arg == "-hps-to-stages";
  if (!stages)
    return args;
  std::vector<std::string> rewritten;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if ((arg == "-o" || arg == "--o") && i + 1 < args.size()) {
      rewritten.push_back("--bundle-dir=" + args[++i]);
      rewritten.push_back("-o=-");
    } else if (arg.consume_front("-o=") || arg.consume_front("--o=")) {
      rewritten.push_back("--bundle-dir=" + arg.str());
      rewritten.push_back("-o=-");
    } else {
      rewritten.push_back(args[i]);
    }
  }
  return rewritten;
}

int main(int argc, char **argv) {
  heterps::setVersionPrinter();
  heterps::import::registerONNXImportTranslation();
  heterps::target::registerPlanExportTranslations();
  heterps::target::registerStageBundleTranslation();
  std::vector<std::string> args = bundleArguments(argc, argv);
  std::vector<char *> pointers;
  for (std::string &arg : args)
    pointers.push_back(arg.data());
  return mlir::failed(mlir::mlirTranslateMain(static_cast<int>(pointers.size()),
                                              pointers.data(),
                                              "HeterPS translation driver\n"));
}
