//===- BundlePrograms.cpp - The functions a bundle runs -------------------===//

#include "BundlePrograms.h"
#include "heterps/Dialect/HPS/Transforms/PassKeys.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::target;

SmallVector<func::FuncOp> BundlePrograms::inWeightsOrder() const {
  SmallVector<func::FuncOp> programs;
  for (auto [symbol, stage] : stages)
    programs.push_back(stage);
  if (passKeys)
    programs.push_back(passKeys);
  return programs;
}

std::optional<BundlePrograms> heterps::target::bundlePrograms(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  auto pipeline =
      main ? main->getAttrOfType<ArrayAttr>("hps.pipeline") : ArrayAttr();
  if (!pipeline)
    return std::nullopt;
  BundlePrograms programs;
  programs.main = main;
  for (Attribute attr : pipeline) {
    auto symbol = cast<FlatSymbolRefAttr>(attr);
    programs.stages.push_back(
        {symbol, module.lookupSymbol<func::FuncOp>(symbol.getValue())});
  }
  programs.passKeys = hps::getPassKeyProgram(module);
  return programs;
}
