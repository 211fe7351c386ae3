//===- LayerWorkInterface.td - An op's work for the cost model -*- tablegen -*-===//
//
// Declared beside the layer-graph builder rather than in the dialect: its
// answer is in the planning library's terms (cost::LayerKind), which the
// dialect does not depend on.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_LAYERWORKINTERFACE_TD
#define HETERPS_DIALECT_HPS_TRANSFORMS_LAYERWORKINTERFACE_TD

include "mlir/IR/OpBase.td"

def HPS_LayerWorkOpInterface : OpInterface<"LayerWorkOpInterface"> {
  let cppNamespace = "::heterps::hps";
  let description = [{
    The forward work of a layer op for the cost model: its FLOPs over a
    whole batch and the kind of layer the cost model prices it as. Attached
    as external models by registerLayerWorkModels; an op without it (an
    elementwise op, a generic ONNX node) is one elementwise operation per
    output element.
  }];
  let methods = [
    InterfaceMethod<[{
        The forward FLOPs of one run with dynamic dims taken as `batch`, and
        the layer's kind.
      }],
      "::heterps::hps::LayerWork", "getForwardWork", (ins "int64_t":$batch)>,
  ];
}

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_LAYERWORKINTERFACE_TD
