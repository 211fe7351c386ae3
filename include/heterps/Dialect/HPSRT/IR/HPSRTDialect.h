//===- HPSRTDialect.h - Runtime-call dialect --------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPSRT_IR_HPSRTDIALECT_H
#define HETERPS_DIALECT_HPSRT_IR_HPSRTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "heterps/Dialect/HPSRT/IR/HPSRTDialect.h.inc"

#endif // HETERPS_DIALECT_HPSRT_IR_HPSRTDIALECT_H
