//===- HPSInterfaces.td - HeterPS op interfaces ------------*- tablegen -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSINTERFACES_TD
#define HETERPS_DIALECT_HPS_IR_HPSINTERFACES_TD

include "mlir/IR/OpBase.td"

def HPS_PlacedOpInterface : OpInterface<"PlacedOpInterface"> {
  let cppNamespace = "::heterps::hps";
  let description = [{
    An op that runs on one device class of the cluster. The class is an
    inherent attribute of the op (`device`), so rewrites that keep the op
    keep its placement, unlike a discardable attribute.
  }];
  let methods = [
    InterfaceMethod<"The device class this op runs on, or null if unplaced.",
      "::heterps::hps::DeviceAttr", "getPlacement", (ins), [{}],
      [{ return $_op.getDeviceAttr(); }]>,
    InterfaceMethod<"Places this op on a device class (null unplaces it).",
      "void", "setPlacement", (ins "::heterps::hps::DeviceAttr":$device), [{}],
      [{ $_op.setDeviceAttr(device); }]>,
  ];
}

def HPS_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::heterps::hps";
  let description = [{
    An op --hps-autodiff can differentiate: its rule reads the op and the
    adjoints of its results and emits ordinary hps ops computing the
    adjoints of its operands. The rules are autodiff's
    (lib/Dialect/HPS/Transforms/GradientRules.cpp) and are attached to the
    ops as external models (autodiff::registerGradientRules), so the dialect
    does not depend on the builder they use. An op without the interface
    has no gradient, and autodiff reports it where an adjoint must cross it.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the adjoints of the operands `rule` asks for from the adjoints
        of the results it holds. Failure: the rule rejects this instance
        (a geometry it does not differentiate) and has reported why.
      }],
      "::mlir::LogicalResult", "buildAdjoint",
      (ins "::heterps::hps::autodiff::Rule &":$rule)>,
  ];
}

#endif // HETERPS_DIALECT_HPS_IR_HPSINTERFACES_TD
