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

#endif // HETERPS_DIALECT_HPS_IR_HPSINTERFACES_TD
