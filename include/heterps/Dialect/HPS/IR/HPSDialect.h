//===- HPSDialect.h - HeterPS dialect ---------------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSDIALECT_H
#define HETERPS_DIALECT_HPS_IR_HPSDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "heterps/Dialect/HPS/IR/HPSDialect.h.inc"

#endif // HETERPS_DIALECT_HPS_IR_HPSDIALECT_H
