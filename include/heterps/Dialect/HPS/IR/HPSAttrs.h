//===- HPSAttrs.h - HeterPS attributes --------------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSATTRS_H
#define HETERPS_DIALECT_HPS_IR_HPSATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "heterps/Dialect/HPS/IR/HPSEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "heterps/Dialect/HPS/IR/HPSAttrs.h.inc"

#include "mlir/IR/BuiltinTypes.h"

#define GET_TYPEDEF_CLASSES
#include "heterps/Dialect/HPS/IR/HPSTypes.h.inc"

#endif // HETERPS_DIALECT_HPS_IR_HPSATTRS_H
