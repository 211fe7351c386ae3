//===- PlanExport.cpp - Placement plan as JSON and Graphviz ---------------===//

#include "heterps/Target/PlanExport.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace mlir;
using namespace heterps;

namespace {

/// Converts the plan dictionary (strings, numbers, booleans, device
/// attributes, arrays and nested dictionaries) to JSON.
llvm::json::Value toJSON(Attribute attr) {
  if (auto str = dyn_cast<StringAttr>(attr))
    return str.str();
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return flag.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getInt();
  // JSON has no inf or NaN (llvm::json would write them as such, which no
  // reader takes): a number that is not finite is null.
  if (auto real = dyn_cast<FloatAttr>(attr)) {
    const double value = real.getValueAsDouble();
    return std::isfinite(value) ? llvm::json::Value(value) : nullptr;
  }
  if (auto device = dyn_cast<hps::DeviceAttr>(attr))
    return device.getName().str();
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array values;
    for (Attribute element : array)
      values.push_back(toJSON(element));
    return values;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute field : dict)
      object[field.getName().str()] = toJSON(field.getValue());
    return object;
  }
  return nullptr;
}

/// A fixed palette; classes get colours in order of first appearance.
constexpr const char *kPalette[] = {"#8ecae6", "#ffb703", "#90be6d",
                                    "#f28482", "#cdb4db", "#bde0fe"};

} // namespace

FailureOr<llvm::json::Value> target::planJSON(ModuleOp module) {
  auto plan = module->getAttrOfType<DictionaryAttr>("hps.plan");
  if (!plan)
    return module.emitError(
        "the module has no plan: run heterps-opt --hps-place first");
  return toJSON(plan);
}

LogicalResult target::exportPlanJSON(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<llvm::json::Value> plan = planJSON(module);
  if (failed(plan))
    return failure();
  os << llvm::formatv("{0:2}", *plan) << "\n";
  return success();
}

LogicalResult target::exportPlacedGraphDot(ModuleOp module,
                                           llvm::raw_ostream &os) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the module has no function @main");
  llvm::DenseMap<Operation *, unsigned> ids;
  llvm::StringMap<std::string> colours;
  os << "digraph placed {\n  rankdir=TB;\n  node [shape=box, style=filled, "
        "fontname=\"Helvetica\"];\n";
  for (Operation &op : main.getBody().front()) {
    auto placed = dyn_cast<hps::PlacedOpInterface>(op);
    if (!placed)
      continue;
    unsigned id = ids.size();
    ids[&op] = id;
    std::string device = "unplaced";
    if (hps::DeviceAttr attr = placed.getPlacement())
      device = attr.getName().str();
    std::string &colour = colours[device];
    if (colour.empty())
      colour = device == "unplaced"
                   ? "#ffffff"
                   : kPalette[(colours.size() - 1) % std::size(kPalette)];
    std::string label = op.getName().getStringRef().str();
    if (auto name = dyn_cast<NameLoc>(op.getLoc()))
      label = name.getName().str() + "\\n" + label;
    os << "  n" << id << " [label=\"" << label << "\\n"
       << device << "\", fillcolor=\"" << colour << "\"];\n";
    for (Value operand : op.getOperands())
      if (Operation *producer = operand.getDefiningOp())
        if (auto it = ids.find(producer); it != ids.end())
          os << "  n" << it->second << " -> n" << id << ";\n";
  }
  os << "  subgraph cluster_legend {\n    label=\"device classes\";\n";
  for (auto &entry : colours)
    os << "    \"" << entry.getKey() << "\" [fillcolor=\"" << entry.getValue()
       << "\"];\n";
  os << "  }\n}\n";
  return success();
}

void target::registerPlanExportTranslations() {
  auto dialects = [](DialectRegistry &registry) {
    registry.insert<hps::HPSDialect, func::FuncDialect>();
  };
  TranslateFromMLIRRegistration planJSON(
      "hps-to-plan", "Print the placement plan of a placed module as JSON",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportPlanJSON(cast<ModuleOp>(op), os);
      },
      dialects);
  TranslateFromMLIRRegistration dot(
      "hps-to-dot", "Draw the placed graph, coloured by device class",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportPlacedGraphDot(cast<ModuleOp>(op), os);
      },
      dialects);
}
