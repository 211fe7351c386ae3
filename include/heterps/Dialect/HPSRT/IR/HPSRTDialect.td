//===- HPSRTDialect.td - Runtime-call dialect --------------*- tablegen -*-===//
//
// The hpsrt dialect: one op per kernel class of the runtime's kernel API.
// These definitions are the API's one source: heterps-tblgen generates the
// runtime's class declarations (runtime/include/heterps/Runtime/
// KernelAPI.inc) and the compiler's call printers from them. See
// docs/HPSRTRationale.md.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPSRT_IR_HPSRTDIALECT_TD
#define HETERPS_DIALECT_HPSRT_IR_HPSRTDIALECT_TD

include "mlir/IR/OpBase.td"

def HPSRT_Dialect : Dialect {
  let name = "hpsrt";
  let cppNamespace = "::heterps::hpsrt";
  let summary = "Calls of the runtime's kernel API, one op per kernel class";
  let description = [{
    A stage program is a sequence of kernel calls: each op constructs one
    kernel of the runtime (its attributes are the constructor's parameters,
    in order) and runs it (its operands are what run() reads, its results
    what it writes). Ops are on builtin tensors; where each tensor lives is
    decided before printing.
  }];
  let useDefaultAttributePrinterParser = 1;
  // hpsrt.held_layouts: the layouts --hps-assign-layouts holds an op's
  // results in.
  let hasOperationAttrVerify = 1;
}

#endif // HETERPS_DIALECT_HPSRT_IR_HPSRTDIALECT_TD
