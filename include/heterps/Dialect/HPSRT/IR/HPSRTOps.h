//===- HPSRTOps.h - One op per kernel class ---------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPSRT_IR_HPSRTOPS_H
#define HETERPS_DIALECT_HPSRT_IR_HPSRTOPS_H

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "heterps/Dialect/HPSRT/IR/HPSRTEnums.h.inc"

namespace heterps::hpsrt {
#include "heterps/Dialect/HPSRT/IR/HPSRTConstants.h.inc"
} // namespace heterps::hpsrt

#define GET_ATTRDEF_CLASSES
#include "heterps/Dialect/HPSRT/IR/HPSRTAttrs.h.inc"

#define GET_OP_CLASSES
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h.inc"

#endif // HETERPS_DIALECT_HPSRT_IR_HPSRTOPS_H
