//===- HPSDialect.td - HeterPS dialect definition ----------*- tablegen -*-===//
//
// The hps dialect: layer-level ops on builtin tensors, each placeable on a
// device class of a heterogeneous cluster. See docs/HPSRationale.md.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSDIALECT_TD
#define HETERPS_DIALECT_HPS_IR_HPSDIALECT_TD

include "mlir/IR/OpBase.td"

def HPS_Dialect : Dialect {
  let name = "hps";
  let cppNamespace = "::heterps::hps";
  let summary = "Layer-level ops of deep models, placed on device classes";
  let description = [{
    The `hps` dialect holds a deep model as a graph of layer ops on builtin
    tensor types. ONNX nodes first arrive as generic `hps.onnx_node` ops and
    are legalized into dedicated layer ops one (op, opset) pattern at a time.
    Every layer op carries an optional inherent `device` attribute (through
    the `PlacedOpInterface`) that the placement pass fills in.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // The discardable hps.* attributes passes hand each other (the pipeline
  // and stage structure, training settings) are verified wherever they
  // appear: see HPSDialect::verifyOperationAttribute.
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // HETERPS_DIALECT_HPS_IR_HPSDIALECT_TD
