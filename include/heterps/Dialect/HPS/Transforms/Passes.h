//===- Passes.h - HeterPS passes --------------------------------*- C++ -*-===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_H
#define HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_H

#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace heterps::hps {

#define GEN_PASS_DECL
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_H
