//===- Passes.td - HeterPS passes --------------------------*- tablegen -*-===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_TD
#define HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HPSLegalizeONNX : Pass<"hps-legalize-onnx", "::mlir::ModuleOp"> {
  let summary = "Rewrite generic hps.onnx_node ops into hps layer ops";
  let description = [{
    Applies one pattern per (ONNX op, opset range) and folds shape arithmetic
    (Shape / Gather / Concat / ConstantOfShape / Unsqueeze chains on
    constants) so that reshape targets and weights become static. Nodes no
    pattern covers stay `hps.onnx_node`; with `strict` they are errors.
  }];
  let dependentDialects = ["::heterps::hps::HPSDialect"];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Fail when any hps.onnx_node remains after legalization">,
  ];
}

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_TD
