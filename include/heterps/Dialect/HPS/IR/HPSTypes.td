//===- HPSTypes.td - HeterPS types -------------------------*- tablegen -*-===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSTYPES_TD
#define HETERPS_DIALECT_HPS_IR_HPSTYPES_TD

include "heterps/Dialect/HPS/IR/HPSDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def HPS_SequenceType : TypeDef<HPS_Dialect, "Sequence"> {
  let mnemonic = "sequence";
  let summary = "An ONNX sequence of tensors of one element type";
  let description = [{
    The value of ONNX's sequence ops (SequenceEmpty, SequenceInsert,
    SplitToSequence, ...) and of a loop that appends to a list. Only generic
    `hps.onnx_node` ops carry it: legalization folds every sequence whose
    tensors it can name into those tensors, and layer ops, stages and the
    runtime only ever see tensors. `elementType` is what ONNX knows of every
    element (unranked when the elements' shapes differ).
  }];
  let parameters = (ins "::mlir::TensorType":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

#endif // HETERPS_DIALECT_HPS_IR_HPSTYPES_TD
