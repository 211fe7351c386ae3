//===- HPSDialect.cpp - HeterPS dialect -----------------------------------===//

#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/IR/HPSAttrs.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "mlir/IR/Builders.h"
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
