//===- HPSRTDialect.cpp - Runtime-call dialect ----------------------------===//

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace heterps::hpsrt;

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.cpp.inc"
#include "heterps/Dialect/HPSRT/IR/HPSRTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "heterps/Dialect/HPSRT/IR/HPSRTAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.cpp.inc"

void HPSRTDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "heterps/Dialect/HPSRT/IR/HPSRTAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.cpp.inc"
      >();
}
