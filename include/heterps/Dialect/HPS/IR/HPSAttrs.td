//===- HPSAttrs.td - HeterPS attributes --------------------*- tablegen -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSATTRS_TD
#define HETERPS_DIALECT_HPS_IR_HPSATTRS_TD

include "heterps/Dialect/HPS/IR/HPSDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class HPS_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<HPS_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def HPS_DeviceKind : I32EnumAttr<"DeviceKind", "kind of a device class", [
    I32EnumAttrCase<"CPU", 0, "cpu">,
    I32EnumAttrCase<"GPU", 1, "gpu">
  ]> {
  let cppNamespace = "::heterps::hps";
  let genSpecializedAttr = 0;
}

def HPS_DeviceAttr : HPS_Attr<"Device", "device"> {
  let summary = "A device class of the cluster, such as cpu.xeon or gpu.v100";
  let description = [{
    Names one device class of the cluster description. Placement writes it
    on every layer op; partitioning groups ops by it.
    Example: `#hps.device<"gpu.v100">`.
  }];
  let parameters = (ins StringRefParameter<"device class name">:$name);
  let assemblyFormat = "`<` $name `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// What the class is, from its name's `kind.` prefix (the verifier
    /// holds one): lowering picks CPU or GPU programs by it.
    ::heterps::hps::DeviceKind getKind() const;
  }];
}

def HPS_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Mean", 1, "mean">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"Prod", 4, "prod">,
    I32EnumAttrCase<"L1", 5, "l1">,
    I32EnumAttrCase<"L2", 6, "l2">,
    I32EnumAttrCase<"LogSum", 7, "log_sum">,
    I32EnumAttrCase<"LogSumExp", 8, "log_sum_exp">,
    I32EnumAttrCase<"SumSquare", 9, "sum_square">
  ]> {
  let cppNamespace = "::heterps::hps";
  let genSpecializedAttr = 0;
}
def HPS_ReduceKindAttr : EnumAttr<HPS_Dialect, HPS_ReduceKind, "reduce_kind">;

def HPS_EmbeddingPooling : I32EnumAttr<"EmbeddingPooling",
    "pooling of looked-up embedding rows", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"Mean", 2, "mean">
  ]> {
  let cppNamespace = "::heterps::hps";
  let genSpecializedAttr = 0;
}
def HPS_EmbeddingPoolingAttr
    : EnumAttr<HPS_Dialect, HPS_EmbeddingPooling, "embedding_pooling">;

def HPS_LossKind : I32EnumAttr<"LossKind", "training loss", [
    I32EnumAttrCase<"BCE", 0, "bce">,
    I32EnumAttrCase<"SoftmaxCE", 1, "softmax_ce">,
    I32EnumAttrCase<"MSE", 2, "mse">
  ]> {
  let cppNamespace = "::heterps::hps";
  let genSpecializedAttr = 0;
}

def HPS_LossKindAttr : EnumAttr<HPS_Dialect, HPS_LossKind, "loss_kind">;

def HPS_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"Constant", 0, "constant">,
    I32EnumAttrCase<"Reflect", 1, "reflect">,
    I32EnumAttrCase<"Edge", 2, "edge">
  ]> {
  let cppNamespace = "::heterps::hps";
  let genSpecializedAttr = 0;
}
def HPS_PadModeAttr : EnumAttr<HPS_Dialect, HPS_PadMode, "pad_mode">;

def HPS_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how hps.scatter combines an update with the value it lands on", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Add", 1, "add">,
    I32EnumAttrCase<"Mul", 2, "mul">,
    I32EnumAttrCase<"Max", 3, "max">,
    I32EnumAttrCase<"Min", 4, "min">
  ]> {
  let cppNamespace = "::heterps::hps";
  let genSpecializedAttr = 0;
}
def HPS_ScatterReductionAttr
    : EnumAttr<HPS_Dialect, HPS_ScatterReduction, "scatter_reduction">;

#endif // HETERPS_DIALECT_HPS_IR_HPSATTRS_TD
