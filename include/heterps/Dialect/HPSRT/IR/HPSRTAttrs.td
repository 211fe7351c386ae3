//===- HPSRTAttrs.td - Kernel parameters -------------------*- tablegen -*-===//
//
// The parameter types of the kernel API. Each enum's cases are spelled as
// the runtime's enumerators; each struct attribute's parameters are the
// runtime struct's fields, in order.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPSRT_IR_HPSRTATTRS_TD
#define HETERPS_DIALECT_HPSRT_IR_HPSRTATTRS_TD

include "heterps/Dialect/HPSRT/IR/HPSRTDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Parameter types the runtime spells differently from their storage
//===----------------------------------------------------------------------===//

/// A parameter whose runtime C++ type is `runtimeType` (heterps-tblgen reads
/// it): `base` says how the IR stores it.
class HPSRT_Param<Attr base, string runtime> : Attr<base.predicate,
                                                    base.summary> {
  let storageType = base.storageType;
  let returnType = base.returnType;
  let convertFromStorage = base.convertFromStorage;
  let constBuilderCall = base.constBuilderCall;
  let valueType = base.valueType;
  string runtimeType = runtime;
}

def HPSRT_I64 : HPSRT_Param<I64Attr, "int64_t">;
def HPSRT_Bool : HPSRT_Param<BoolAttr, "bool">;
def HPSRT_F32 : HPSRT_Param<F32Attr, "float">;
def HPSRT_F64 : HPSRT_Param<F64Attr, "double">;
/// An element type of the runtime (DType).
def HPSRT_DType : HPSRT_Param<TypeAttr, "DType">;
/// Extents or per-axis values: the runtime's Shape.
def HPSRT_Shape : HPSRT_Param<DenseI64ArrayAttr, "const Shape &">;
/// A list of axes, sizes or pads: std::vector<int64_t>.
def HPSRT_Int64List : HPSRT_Param<DenseI64ArrayAttr,
                                  "const std::vector<int64_t> &">;
/// Several shapes (Concat's inputs).
def HPSRT_ShapeList : HPSRT_Param<TypedArrayAttrBase<DenseI64ArrayAttr,
                                                     "shapes">,
                                  "const std::vector<Shape> &">;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def HPSRT_UnaryKind : I32EnumAttr<"UnaryKind", "elementwise function of one tensor (parameters in UnaryParams)", [
    I32EnumAttrCase<"Identity", 0>,
    I32EnumAttrCase<"Relu", 1>,
    I32EnumAttrCase<"Sigmoid", 2>,
    I32EnumAttrCase<"Tanh", 3>,
    I32EnumAttrCase<"GeluErf", 4>,
    I32EnumAttrCase<"GeluTanh", 5>,
    I32EnumAttrCase<"Erf", 6>,
    I32EnumAttrCase<"Exp", 7>,
    I32EnumAttrCase<"Log", 8>,
    I32EnumAttrCase<"Sqrt", 9>,
    I32EnumAttrCase<"Abs", 10>,
    I32EnumAttrCase<"Neg", 11>,
    I32EnumAttrCase<"Reciprocal", 12>,
    I32EnumAttrCase<"Floor", 13>,
    I32EnumAttrCase<"Ceil", 14>,
    I32EnumAttrCase<"Round", 15>,
    I32EnumAttrCase<"Sign", 16>,
    I32EnumAttrCase<"Sin", 17>,
    I32EnumAttrCase<"Cos", 18>,
    I32EnumAttrCase<"Asin", 19>,
    I32EnumAttrCase<"Acos", 20>,
    I32EnumAttrCase<"Atan", 21>,
    I32EnumAttrCase<"Softplus", 22>,
    I32EnumAttrCase<"Softsign", 23>,
    I32EnumAttrCase<"HardSwish", 24>,
    I32EnumAttrCase<"Not", 25>,
    I32EnumAttrCase<"LeakyRelu", 26>,
    I32EnumAttrCase<"Elu", 27>,
    I32EnumAttrCase<"Celu", 28>,
    I32EnumAttrCase<"Selu", 29>,
    I32EnumAttrCase<"HardSigmoid", 30>,
    I32EnumAttrCase<"ThresholdedRelu", 31>,
    I32EnumAttrCase<"Clip", 32>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_UnaryKindAttr : EnumAttr<HPSRT_Dialect, HPSRT_UnaryKind, "unary_kind"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "UnaryKind";
}

def HPSRT_BinaryKind : I32EnumAttr<"BinaryKind", "elementwise function of two tensors with numpy broadcasting", [
    I32EnumAttrCase<"Add", 0>,
    I32EnumAttrCase<"Sub", 1>,
    I32EnumAttrCase<"Mul", 2>,
    I32EnumAttrCase<"Div", 3>,
    I32EnumAttrCase<"Pow", 4>,
    I32EnumAttrCase<"Max", 5>,
    I32EnumAttrCase<"Min", 6>,
    I32EnumAttrCase<"Mod", 7>,
    I32EnumAttrCase<"FMod", 8>,
    I32EnumAttrCase<"PRelu", 9>,
    I32EnumAttrCase<"And", 10>,
    I32EnumAttrCase<"Or", 11>,
    I32EnumAttrCase<"Xor", 12>,
    I32EnumAttrCase<"Equal", 13>,
    I32EnumAttrCase<"Less", 14>,
    I32EnumAttrCase<"LessEqual", 15>,
    I32EnumAttrCase<"Greater", 16>,
    I32EnumAttrCase<"GreaterEqual", 17>,
    I32EnumAttrCase<"BitAnd", 18>,
    I32EnumAttrCase<"BitOr", 19>,
    I32EnumAttrCase<"BitXor", 20>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_BinaryKindAttr : EnumAttr<HPSRT_Dialect, HPSRT_BinaryKind, "binary_kind"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "BinaryKind";
}

def HPSRT_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
    I32EnumAttrCase<"Sum", 0>,
    I32EnumAttrCase<"Mean", 1>,
    I32EnumAttrCase<"Max", 2>,
    I32EnumAttrCase<"Min", 3>,
    I32EnumAttrCase<"Prod", 4>,
    I32EnumAttrCase<"L1", 5>,
    I32EnumAttrCase<"L2", 6>,
    I32EnumAttrCase<"LogSum", 7>,
    I32EnumAttrCase<"LogSumExp", 8>,
    I32EnumAttrCase<"SumSquare", 9>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_ReduceKindAttr : EnumAttr<HPSRT_Dialect, HPSRT_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "ReduceKind";
}

def HPSRT_PoolKind : I32EnumAttr<"PoolKind", "windowed pooling", [
    I32EnumAttrCase<"Max", 0>,
    I32EnumAttrCase<"AvgExcludePad", 1>,
    I32EnumAttrCase<"AvgIncludePad", 2>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_PoolKindAttr : EnumAttr<HPSRT_Dialect, HPSRT_PoolKind, "pool_kind"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "PoolKind";
}

def HPSRT_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"Constant", 0>,
    I32EnumAttrCase<"Reflect", 1>,
    I32EnumAttrCase<"Edge", 2>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_PadModeAttr : EnumAttr<HPSRT_Dialect, HPSRT_PadMode, "pad_mode"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "PadMode";
}

def HPSRT_EmbeddingPooling : I32EnumAttr<"EmbeddingPooling", "pooling of looked-up rows", [
    I32EnumAttrCase<"None", 0>,
    I32EnumAttrCase<"Sum", 1>,
    I32EnumAttrCase<"Mean", 2>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_EmbeddingPoolingAttr : EnumAttr<HPSRT_Dialect, HPSRT_EmbeddingPooling, "embedding_pooling"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "EmbeddingPooling";
}

def HPSRT_ScatterReduction : I32EnumAttr<"ScatterReduction", "how Scatter combines an update with the element it lands on", [
    I32EnumAttrCase<"None", 0>,
    I32EnumAttrCase<"Add", 1>,
    I32EnumAttrCase<"Mul", 2>,
    I32EnumAttrCase<"Max", 3>,
    I32EnumAttrCase<"Min", 4>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_ScatterReductionAttr : EnumAttr<HPSRT_Dialect, HPSRT_ScatterReduction, "scatter_reduction"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "ScatterReduction";
}

def HPSRT_LossKind : I32EnumAttr<"LossKind", "training loss", [
    I32EnumAttrCase<"BCE", 0>,
    I32EnumAttrCase<"SoftmaxCE", 1>,
    I32EnumAttrCase<"MSE", 2>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_LossKindAttr : EnumAttr<HPSRT_Dialect, HPSRT_LossKind, "loss_kind"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "LossKind";
}

def HPSRT_Layout : I32EnumAttr<"Layout", "memory layout of an NC[D]HW activation", [
    I32EnumAttrCase<"Plain", 0>,
    I32EnumAttrCase<"Native", 1>,
    I32EnumAttrCase<"ChannelsLast", 2>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_LayoutAttr : EnumAttr<HPSRT_Dialect, HPSRT_Layout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "Layout";
}

def HPSRT_RecurrentCell : I32EnumAttr<"RecurrentCell", "cell of an ONNX recurrent op", [
    I32EnumAttrCase<"RNN", 0>,
    I32EnumAttrCase<"GRU", 1>,
    I32EnumAttrCase<"LSTM", 2>
  ]> {
  let cppNamespace = "::heterps::hpsrt";
  let genSpecializedAttr = 0;
}
def HPSRT_RecurrentCellAttr : EnumAttr<HPSRT_Dialect, HPSRT_RecurrentCell, "recurrent_cell"> {
  let assemblyFormat = "`<` $value `>`";
  string runtimeType = "RecurrentCell";
}

//===----------------------------------------------------------------------===//
// Structs: parameters are the runtime struct's fields, in order
//===----------------------------------------------------------------------===//

class HPSRT_Struct<string name, string attrMnemonic>
    : AttrDef<HPSRT_Dialect, name> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  /// The runtime struct, and how a constructor takes it.
  string structName = name;
  string runtimeType = name;
  /// The runtime's default of each field as the code generator prints it:
  /// trailing fields at their default are left out of a printed literal.
  /// Empty: none left out. KernelClasses.inc checks them against the
  /// runtime's struct.
  list<string> defaults = [];
}

def HPSRT_UnaryParamsAttr : HPSRT_Struct<"UnaryParams", "unary_params"> {
  let summary = "parameters of a UnaryKind";
  let description = [{
    alpha: LeakyRelu, Elu, Celu, Selu, HardSigmoid, ThresholdedRelu; beta:
    Selu's gamma, HardSigmoid's beta; lo and hi: Clip's bounds (open bounds
    are infinite).
  }];
  let parameters = (ins "::mlir::FloatAttr":$alpha, "::mlir::FloatAttr":$beta,
                        "::mlir::FloatAttr":$lo, "::mlir::FloatAttr":$hi);
  let defaults = ["0.000000000e+00f", "0.000000000e+00f",
                  "-std::numeric_limits<double>::infinity()",
                  "std::numeric_limits<double>::infinity()"];
}

def HPSRT_ActivationAttr : HPSRT_Struct<"Activation", "activation"> {
  let summary = "an activation fused after a dense kernel";
  let parameters = (ins "UnaryKindAttr":$kind, "UnaryParamsAttr":$params);
  let defaults = ["UnaryKind::Identity", "UnaryParams{}"];
}

def HPSRT_ConvLayoutsAttr : HPSRT_Struct<"ConvLayouts", "conv_layouts"> {
  let summary = "layouts of a convolution's x-shaped and y-shaped tensors";
  let parameters = (ins "LayoutAttr":$x, "LayoutAttr":$y);
  let defaults = ["Layout::Plain", "Layout::Plain"];
}

def HPSRT_ConvOptionsAttr : HPSRT_Struct<"ConvOptions", "conv_options"> {
  let summary = "a Conv's layouts, fused residual and exactness";
  let parameters = (ins "LayoutAttr":$x, "LayoutAttr":$y,
                        "::mlir::BoolAttr":$residual, "::mlir::BoolAttr":$exact);
  let defaults = ["Layout::Plain", "Layout::Plain", "false", "false"];
}

def HPSRT_RecurrentParamsAttr
    : HPSRT_Struct<"RecurrentParams", "recurrent_params"> {
  let summary = "one direction of a recurrent op";
  let runtimeType = "const RecurrentParams &";
  let parameters = (ins "RecurrentCellAttr":$cell, "::mlir::IntegerAttr":$steps,
                        "::mlir::IntegerAttr":$batch,
                        "::mlir::IntegerAttr":$hidden,
                        "::mlir::BoolAttr":$reverse,
                        "::mlir::ArrayAttr":$activations,
                        "::mlir::BoolAttr":$hasClip, "::mlir::FloatAttr":$clip,
                        "::mlir::BoolAttr":$linearBeforeReset,
                        "::mlir::BoolAttr":$hasRecurrentBias,
                        "::mlir::BoolAttr":$hasLengths,
                        "::mlir::BoolAttr":$hasPeepholes,
                        "::mlir::IntegerAttr":$input);
}

/// A struct parameter that runtime callers may leave out: the runtime's
/// declaration defaults it to `{}`; the IR always holds it.
class HPSRT_Defaulted<HPSRT_Struct base> : HPSRT_Param<base, base.runtimeType> {
  string runtimeDefault = "{}";
}

//===----------------------------------------------------------------------===//
// Constants the compiler and the runtime share
//===----------------------------------------------------------------------===//

/// The runtime defines it (heterps/Runtime/Types.h) and KernelClasses.inc
/// checks its value; the compiler reads `heterps::hpsrt::<name>`
/// (HPSRTConstants.h.inc).
class HPSRT_SharedConstant<string constantName, string constantType,
                           string constantValue> {
  string name = constantName;
  string type = constantType;
  string value = constantValue;
}

/// Channel counts the native (channel-blocked) layout holds without
/// padding: a tensor with such a count has the bytes of a plain one.
def HPSRT_NativeChannelMultiple
    : HPSRT_SharedConstant<"kNativeChannelMultiple", "int64_t", "16">;

#endif // HETERPS_DIALECT_HPSRT_IR_HPSRTATTRS_TD
