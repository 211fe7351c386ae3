//===- HPSDialect.cpp - HeterPS dialect -----------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/IR/HPSAttrs.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace heterps::hps;

#include "heterps/Dialect/HPS/IR/HPSDialect.cpp.inc"
#include "heterps/Dialect/HPS/IR/HPSEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "heterps/Dialect/HPS/IR/HPSAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "heterps/Dialect/HPS/IR/HPSTypes.cpp.inc"

void HPSDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "heterps/Dialect/HPS/IR/HPSAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "heterps/Dialect/HPS/IR/HPSTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "heterps/Dialect/HPS/IR/HPSOps.cpp.inc"
      >();
}

Operation *HPSDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

LogicalResult
DeviceAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                   StringRef name) {
  // Class names are `kind.model`, e.g. cpu.xeon; the kind drives lowering.
  if (name.empty())
    return emitError() << "device class name must not be empty";
  if (!name.starts_with("cpu") && !name.starts_with("gpu"))
    return emitError() << "device class '" << name
                       << "' must start with 'cpu' or 'gpu'";
  return success();
}

DeviceKind DeviceAttr::getKind() const {
  return getName().starts_with("gpu") ? DeviceKind::GPU : DeviceKind::CPU;
}

namespace {

/// hps.training: what --hps-autodiff records for the bundle writer and the
/// runtime's trainer.
LogicalResult verifyTraining(Operation *op, DictionaryAttr training) {
  if (!isa<ModuleOp>(op))
    return op->emitError("'hps.training' belongs on the module");
  auto text = [&](StringRef key) { return training.getAs<StringAttr>(key); };
  for (StringRef key : {"loss", "label", "prediction", "optimizer"})
    if (!text(key) || text(key).getValue().empty())
      return op->emitError("'hps.training' needs a non-empty '")
             << key << "' string";
  if (!symbolizeLossKind(text("loss").getValue()))
    return op->emitError("'hps.training' loss '")
           << text("loss").getValue() << "' is not bce, softmax_ce or mse";
  if (!llvm::is_contained({"sgd", "adam", "adagrad"},
                          text("optimizer").getValue()))
    return op->emitError("'hps.training' optimizer '")
           << text("optimizer").getValue() << "' is not sgd, adam or adagrad";
  for (StringRef key : {"learning_rate", "momentum", "beta1", "beta2",
                        "epsilon", "initial_accumulator"})
    if (Attribute value = training.get(key); value && !isa<FloatAttr>(value))
      return op->emitError("'hps.training' ") << key << " must be a float";
  return success();
}

} // namespace

LogicalResult HPSDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  Attribute value = attribute.getValue();
  // "'NAME' <what>" unless `holds`.
  auto require = [&](bool holds, const Twine &what) -> LogicalResult {
    if (holds)
      return success();
    return op->emitError("'") << name << "' " << what;
  };
  auto integerAtLeast = [&](int64_t lowest) {
    auto integer = dyn_cast<IntegerAttr>(value);
    return require(integer && integer.getInt() >= lowest,
                   "must be an integer of at least " + Twine(lowest));
  };
  if (name == "hps.device")
    return require(isa<DeviceAttr>(value), "must be a #hps.device");
  if (name == "hps.replicas" || name == "hps.batch")
    return integerAtLeast(1);
  if (name == "hps.stage")
    return integerAtLeast(0);
  if (name == "hps.pipeline") {
    auto stages = dyn_cast<ArrayAttr>(value);
    return require(stages &&
                       llvm::all_of(stages, llvm::IsaPred<FlatSymbolRefAttr>),
                   "must list the stage functions (@stage_0, ...)");
  }
  if (name == "hps.plan")
    return require(isa<DictionaryAttr>(value), "must be a dictionary");
  if (name == "hps.training") {
    auto training = dyn_cast<DictionaryAttr>(value);
    if (failed(require(bool(training), "must be a dictionary")))
      return failure();
    return verifyTraining(op, training);
  }
  if (name == "hps.trainable")
    return require(isa<UnitAttr>(value) && isa<WeightOp>(op),
                   "is a unit attribute of hps.weight");
  if (name == "hps.momentum")
    return require(isa<FloatAttr>(value), "must be a float");
  if (name == "hps.update") {
    // Parameters the server changes other than by the optimizer.
    auto kind = dyn_cast<StringAttr>(value);
    if (failed(require(
            kind && llvm::is_contained({"moving-average", "training-flag"},
                                       kind.getValue()),
            "must be \"moving-average\" or \"training-flag\"")))
      return failure();
    if (kind.getValue() == "moving-average" && !op->hasAttr("hps.momentum"))
      return op->emitError("a moving-average parameter needs 'hps.momentum'");
    return success();
  }
  // Other hps.* attributes are the importer's metadata.
  return success();
}
