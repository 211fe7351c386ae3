//===- HPSOps.td - HeterPS layer ops -----------------------*- tablegen -*-===//
//
// Layer ops of the hps dialect. Every layer op:
//  - works on builtin tensor types and is free of side effects,
//  - carries an optional inherent `device` attribute (PlacedOpInterface),
//  - has a verifier that checks ranks and attributes. An op whose result
//    shapes follow from its operands (HPS_ShapeRuleOp) implements
//    inferReturnTypeComponents with that rule, and its verifier checks the
//    results against it, dynamic extents matching any.
// Semantics follow ONNX (numpy broadcasting, NCHW layouts); the legalization
// patterns resolve ONNX's per-opset variations into these canonical forms.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSOPS_TD
#define HETERPS_DIALECT_HPS_IR_HPSOPS_TD

include "heterps/Dialect/HPS/IR/HPSDialect.td"
include "heterps/Dialect/HPS/IR/HPSAttrs.td"
include "heterps/Dialect/HPS/IR/HPSInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class HPS_Op<string mnemonic, list<Trait> traits = []>
    : Op<HPS_Dialect, mnemonic, traits>;

// Every layer op ends its arguments with this placement attribute.
defvar Placement = (ins OptionalAttr<HPS_DeviceAttr>:$device);

class HPS_LayerOp<string mnemonic, list<Trait> traits = []>
    : HPS_Op<mnemonic, !listconcat([Pure, HPS_PlacedOpInterface], traits)> {
  let hasVerifier = 1;
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

// A layer op whose result shapes its operands and attributes give: the rule
// is its inferReturnTypeComponents (also what shape refinement asks).
class HPS_ShapeRuleOp<string mnemonic, list<Trait> traits = []>
    : HPS_LayerOp<mnemonic, !listconcat([InferShapedTypeOpAdaptor], traits)>;

//===----------------------------------------------------------------------===//
// Values: constants, weights, absent optional inputs, generic ONNX nodes.
//===----------------------------------------------------------------------===//

def HPS_ConstantOp : HPS_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor that is not a trainable parameter";
  let description = [{
    Holds shape tensors, indices, folded values and other constants. Unlike
    `hps.weight` it folds and may be merged with equal constants.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

def HPS_WeightOp : HPS_Op<"weight",
    [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A named model parameter with its initial value";
  let description = [{
    A trainable parameter (an ONNX initializer). Large values are held as
    `dense_resource` blobs so they stay out of the op's text. Weights never
    fold: two weights with equal values are still distinct parameters.

    Example: `%w = hps.weight "fc1.weight" dense_resource<fc1_weight> : tensor<128x784xf32>`
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$name attr-dict $value";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), name, value);
  }]>];
}

def HPS_NoneOp : HPS_Op<"none", [Pure]> {
  let summary = "Stands for an omitted optional input of an ONNX node";
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

def HPS_OnnxNodeOp : HPS_Op<"onnx_node", [HPS_PlacedOpInterface]> {
  let summary = "An ONNX node with no dedicated hps op (yet)";
  let description = [{
    Every ONNX node is first imported as this op, with its op type, domain,
    opset version and attributes preserved, so any model imports and can be
    placed. `--hps-legalize-onnx` rewrites supported nodes into layer ops.
    Omitted optional inputs are `hps.none` values.

    Graph attributes (the branches of If, the bodies of Loop and Scan) are
    regions, named in order by `subgraphs`. A region's block arguments are
    the subgraph's formal inputs and `hps.yield` returns its outputs; like an
    ONNX subgraph, a region reads values of the enclosing scopes directly.

    A node ONNX's strict shape inference rejects carries why, in the
    discardable string attribute `onnx.shape_inference_error`: the import
    takes such models (runtimes accept what exporters write), and the
    legalizer says it where the node then fails to legalize.
  }];
  let arguments = (ins StrAttr:$op_type, StrAttr:$domain, I64Attr:$opset,
                   DictionaryAttr:$attrs, Variadic<AnyType>:$inputs,
                   OptionalAttr<StrArrayAttr>:$subgraphs,
                   OptionalAttr<HPS_DeviceAttr>:$device);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region VariadicRegion<SizedRegion<1>>:$bodies);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)
    ($bodies^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The region of the graph attribute `name`, or null.
    ::mlir::Region *getSubgraph(::llvm::StringRef name);
    /// Why ONNX's strict shape inference rejects the node (a StringAttr).
    static constexpr ::llvm::StringLiteral kShapeInferenceErrorAttr =
        "onnx.shape_inference_error";
  }];
}

def HPS_YieldOp : HPS_Op<"yield", [Pure, ReturnLike, Terminator,
                                   HasParent<"OnnxNodeOp">]> {
  let summary = "The outputs of an ONNX subgraph (a region of hps.onnx_node)";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution.
//===----------------------------------------------------------------------===//

def HPS_GemmOp : HPS_ShapeRuleOp<"gemm"> {
  let summary = "alpha * op(A) x op(B) + beta * C, C broadcast to (M, N)";
  let arguments = !con((ins AnyTensor:$a, AnyTensor:$b, Optional<AnyTensor>:$c,
                        DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                        DefaultValuedAttr<F32Attr, "1.0">:$beta,
                        UnitAttr:$trans_a, UnitAttr:$trans_b), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_MatMulOp : HPS_ShapeRuleOp<"matmul"> {
  let summary = "numpy matmul: batched, broadcasting, 1-D operands promoted";
  let arguments = !con((ins AnyTensor:$a, AnyTensor:$b), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_DeterminantOp : HPS_ShapeRuleOp<"determinant"> {
  let summary = "Determinants of the trailing square matrices (ONNX Det)";
  let description = [{
    `input` is [..., n, n] f32 or f64; the result has the leading shape and
    holds each n x n matrix's determinant.
  }];
  let arguments = !con((ins AnyTensor:$input), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_ConvOp : HPS_ShapeRuleOp<"conv"> {
  let summary = "N-d grouped convolution, NC[D]HW layout, explicit padding";
  let description = [{
    `pads` holds the begin pads of every spatial axis, then the end pads.
    ONNX's `auto_pad` is resolved into explicit pads by legalization.
    `exact` marks an f32 conv of integer values whose sums f32 holds exactly
    in any order (a quantized product): kernels must not use algorithms
    that round in between, such as Winograd's or FFT transforms.

    Operands and result share one element type, except in the quantized
    form: a u8 or i8 input, an i8 filter, an i32 bias and result, summed
    exactly (wrapping modulo 2^32), for the CPU's int8 kernels.
  }];
  let arguments = !con((ins AnyTensor:$input, AnyTensor:$filter,
                        Optional<AnyTensor>:$bias,
                        DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                        DenseI64ArrayAttr:$dilations,
                        DefaultValuedAttr<I64Attr, "1">:$group), Placement,
                       (ins UnitAttr:$exact));
  let results = (outs AnyTensor:$result);
}

// The two adjoints of hps.conv (emitted by --hps-autodiff). They carry the
// forward conv's geometry; the bias's adjoint is a plain reduce-sum.
def HPS_ConvGradInputOp : HPS_LayerOp<"conv_grad_input"> {
  let summary = "Adjoint of a conv's input: dX from dY and the filter";
  let description = [{
    The result has the forward input's shape, which it names (with ceil-like
    output shapes the input is not derivable from dY); `grad` has the
    forward conv's result shape. Attributes are the forward conv's.
  }];
  let arguments = !con((ins AnyTensor:$grad, AnyTensor:$filter,
                        DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                        DenseI64ArrayAttr:$dilations,
                        DefaultValuedAttr<I64Attr, "1">:$group), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_ConvGradFilterOp : HPS_LayerOp<"conv_grad_filter"> {
  let summary = "Adjoint of a conv's filter: dW from X and dY";
  let description = [{
    The result has the forward filter's shape [Cout, Cin/group, k...];
    attributes are the forward conv's.
  }];
  let arguments = !con((ins AnyTensor:$input, AnyTensor:$grad,
                        DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                        DenseI64ArrayAttr:$dilations,
                        DefaultValuedAttr<I64Attr, "1">:$group), Placement);
  let results = (outs AnyTensor:$result);
}

//===----------------------------------------------------------------------===//
// Recurrence.
//===----------------------------------------------------------------------===//

def HPS_RecurrenceOp : HPS_LayerOp<"recurrence", [AttrSizedOperandSegments]> {
  let summary = "One direction of an ONNX RNN, GRU or LSTM over a sequence";
  let description = [{
    The recurrence of a sequence too long to unroll into gemms and
    elementwise ops (which is how shorter ones legalize). The input
    projection X W^T + Wb of every step is a gemm before it: `projected` is
    [T, N, G] with G = gates x H (rnn 1; gru 3: z, r, h; lstm 4: i, o, f,
    c), `recurrence` is R [G, H], `recurrent_bias` Rb [G]. `lengths` [N]
    (i64, optional) ends each row's sequence: later steps keep its state
    and give y = 0, and a row of length 0 ends with a zero state (as
    onnxruntime gives it). `initial_h` (and for lstm `initial_c`) are [N, H];
    lstm's optional `peepholes` are [3H] (i, o, f). `activations` are
    ONNX's f; f, g; or f, g, h (Sigmoid, Tanh or Relu), and `clip` bounds
    the inputs of f and g. With `reverse` the steps run from T-1 down to 0.
    Results: y [T, N, H], the last h [N, H] and, for lstm, the last c.
  }];
  let arguments = !con((ins F32Tensor:$projected, F32Tensor:$recurrence,
                        F32Tensor:$recurrent_bias, F32Tensor:$initial_h,
                        Optional<I64Tensor>:$lengths,
                        Optional<F32Tensor>:$initial_c,
                        Optional<F32Tensor>:$peepholes,
                        StrAttr:$cell, StrArrayAttr:$activations,
                        OptionalAttr<F32Attr>:$clip, UnitAttr:$reverse,
                        UnitAttr:$linear_before_reset), Placement);
  let results = (outs F32Tensor:$y, F32Tensor:$h_last,
                 Optional<F32Tensor>:$c_last);
  let assemblyFormat = [{
    $projected `,` $recurrence `,` $recurrent_bias `,` $initial_h
    (`lengths` $lengths^)? (`initial_c` $initial_c^)?
    (`peepholes` $peepholes^)? attr-dict `:` functional-type(operands, results)
  }];
}

// The adjoint of hps.recurrence (emitted by --hps-autodiff): backpropagation
// through time in one kernel, so that long sequences train without
// unrolling.
def HPS_RecurrenceGradOp : HPS_LayerOp<"recurrence_grad",
                                       [AttrSizedOperandSegments]> {
  let summary = "Adjoints of an hps.recurrence's inputs (backpropagation "
                "through time)";
  let description = [{
    Operands and attributes are the forward recurrence's, then its result
    `y` (whose steps give every step's previous h, so the gates are
    recomputed with one product over all steps rather than stored) and the
    adjoints of its results: `grad_y`, `grad_h_last`, `grad_c_last`, each
    optional (absent: zero). Results are the adjoints of projected,
    recurrence, recurrent_bias and initial_h, then `cell_grads`: for lstm
    the adjoint of initial_c and, when the forward has them, of peepholes;
    none for the other cells. `lengths` gets none.
  }];
  let arguments = !con((ins F32Tensor:$projected, F32Tensor:$recurrence,
                        F32Tensor:$recurrent_bias, F32Tensor:$initial_h,
                        Optional<I64Tensor>:$lengths,
                        Optional<F32Tensor>:$initial_c,
                        Optional<F32Tensor>:$peepholes, F32Tensor:$y,
                        Optional<F32Tensor>:$grad_y,
                        Optional<F32Tensor>:$grad_h_last,
                        Optional<F32Tensor>:$grad_c_last,
                        StrAttr:$cell, StrArrayAttr:$activations,
                        OptionalAttr<F32Attr>:$clip, UnitAttr:$reverse,
                        UnitAttr:$linear_before_reset), Placement);
  let results = (outs F32Tensor:$grad_projected, F32Tensor:$grad_recurrence,
                 F32Tensor:$grad_recurrent_bias, F32Tensor:$grad_initial_h,
                 Variadic<F32Tensor>:$cell_grads);
  let extraClassDeclaration = [{
    /// The adjoints of lstm's initial_c and peepholes (null when absent).
    mlir::Value getGradInitialC() {
      return getCellGrads().empty() ? mlir::Value() : getCellGrads()[0];
    }
    mlir::Value getGradPeepholes() {
      return getCellGrads().size() < 2 ? mlir::Value() : getCellGrads()[1];
    }
  }];
  let assemblyFormat = [{
    $projected `,` $recurrence `,` $recurrent_bias `,` $initial_h
    (`lengths` $lengths^)? (`initial_c` $initial_c^)?
    (`peepholes` $peepholes^)? `y` $y (`grad_y` $grad_y^)?
    (`grad_h_last` $grad_h_last^)? (`grad_c_last` $grad_c_last^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Pooling and normalization.
//===----------------------------------------------------------------------===//

class HPS_WindowPoolOp<string mnemonic, dag extra>
    : HPS_ShapeRuleOp<mnemonic> {
  let arguments = !con((ins AnyTensor:$input,
                        DenseI64ArrayAttr:$kernel_shape,
                        DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                        DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode),
                       extra, Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_MaxPoolOp : HPS_WindowPoolOp<"max_pool", (ins)> {
  let summary = "Max pooling over spatial windows; pads never win the max";
}

def HPS_AvgPoolOp : HPS_WindowPoolOp<"avg_pool",
                                     (ins UnitAttr:$count_include_pad)> {
  let summary = "Average pooling over spatial windows";
}

def HPS_GlobalMaxPoolOp : HPS_ShapeRuleOp<"global_max_pool"> {
  let summary = "Max over all spatial axes, keeping them as size 1";
  let arguments = !con((ins AnyTensor:$input), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_GlobalAvgPoolOp : HPS_ShapeRuleOp<"global_avg_pool"> {
  let summary = "Mean over all spatial axes, keeping them as size 1";
  let arguments = !con((ins AnyTensor:$input), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_BatchNormOp : HPS_ShapeRuleOp<"batch_norm"> {
  let summary = "Batch normalization with running statistics (axis 1)";
  let arguments = !con((ins AnyTensor:$input, AnyTensor:$scale,
                        AnyTensor:$bias, AnyTensor:$mean, AnyTensor:$variance,
                        DefaultValuedAttr<F32Attr, "1e-5">:$epsilon),
                       Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_LayerNormOp : HPS_ShapeRuleOp<"layer_norm"> {
  let summary = "Normalizes over the axes from `axis` to the last";
  let arguments = !con((ins AnyTensor:$input, AnyTensor:$scale,
                        Optional<AnyTensor>:$bias,
                        DefaultValuedAttr<I64Attr, "-1">:$axis,
                        DefaultValuedAttr<F32Attr, "1e-5">:$epsilon),
                       Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_SoftmaxOp : HPS_ShapeRuleOp<"softmax"> {
  let summary = "Softmax along one axis";
  let arguments = !con((ins AnyTensor:$input,
                        DefaultValuedAttr<I64Attr, "-1">:$axis), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_LogSoftmaxOp : HPS_ShapeRuleOp<"log_softmax"> {
  let summary = "Log of softmax along one axis";
  let arguments = !con((ins AnyTensor:$input,
                        DefaultValuedAttr<I64Attr, "-1">:$axis), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_ReduceOp : HPS_ShapeRuleOp<"reduce"> {
  let summary = "Reduction over `axes` (all axes when empty)";
  let arguments = !con((ins HPS_ReduceKindAttr:$kind, AnyTensor:$input,
                        DenseI64ArrayAttr:$axes, UnitAttr:$keepdims),
                       Placement);
  let results = (outs AnyTensor:$result);
  let assemblyFormat =
      "$kind $input attr-dict `:` functional-type($input, $result)";
  // Folded where exact: shape arithmetic (ReduceProd of a shape's extents
  // in flatten exports) must become constant.
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops.
//===----------------------------------------------------------------------===//

class HPS_UnaryOp<string mnemonic, string doc, dag attrs = (ins)>
    : HPS_LayerOp<mnemonic, [SameOperandsAndResultShape,
                             SameOperandsAndResultElementType]> {
  let summary = doc;
  let arguments = !con((ins AnyTensor:$input), attrs, Placement);
  let results = (outs AnyTensor:$result);
  let hasVerifier = 0;
  let assemblyFormat =
      "$input attr-dict `:` custom<CompactTypes>(type($input), type($result))";
}

def HPS_ReluOp : HPS_UnaryOp<"relu", "max(x, 0)">;
def HPS_SigmoidOp : HPS_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def HPS_TanhOp : HPS_UnaryOp<"tanh", "tanh(x)">;
def HPS_GeluOp : HPS_UnaryOp<"gelu", "x * Phi(x), exact or tanh-approximated",
                             (ins UnitAttr:$tanh_approximation)>;
def HPS_ErfOp : HPS_UnaryOp<"erf", "the error function">;
def HPS_ExpOp : HPS_UnaryOp<"exp", "e^x">;
def HPS_LogOp : HPS_UnaryOp<"log", "natural logarithm">;
def HPS_SqrtOp : HPS_UnaryOp<"sqrt", "square root">;
// Folded: shape arithmetic in exported function bodies negates constants.
def HPS_AbsOp : HPS_UnaryOp<"abs", "|x|"> { let hasFolder = 1; }
def HPS_NegOp : HPS_UnaryOp<"neg", "-x"> { let hasFolder = 1; }
def HPS_ReciprocalOp : HPS_UnaryOp<"reciprocal", "1 / x">;
def HPS_FloorOp : HPS_UnaryOp<"floor", "round down"> { let hasFolder = 1; }
def HPS_CeilOp : HPS_UnaryOp<"ceil", "round up"> { let hasFolder = 1; }
def HPS_RoundOp : HPS_UnaryOp<"round", "round half to even"> {
  let hasFolder = 1;
}
def HPS_SignOp : HPS_UnaryOp<"sign", "-1, 0 or 1">;
def HPS_SinOp : HPS_UnaryOp<"sin", "sine">;
def HPS_CosOp : HPS_UnaryOp<"cos", "cosine">;
def HPS_AsinOp : HPS_UnaryOp<"asin", "arcsine">;
def HPS_AcosOp : HPS_UnaryOp<"acos", "arccosine">;
def HPS_AtanOp : HPS_UnaryOp<"atan", "arctangent">;
def HPS_SoftplusOp : HPS_UnaryOp<"softplus", "log(1 + exp(x))">;
def HPS_SoftsignOp : HPS_UnaryOp<"softsign", "x / (1 + |x|)">;
def HPS_HardSwishOp : HPS_UnaryOp<"hard_swish", "x * max(0, min(1, x/6 + 1/2))">;
def HPS_NotOp : HPS_UnaryOp<"not", "logical not">;
def HPS_LeakyReluOp : HPS_UnaryOp<"leaky_relu", "x if x >= 0 else alpha * x",
    (ins DefaultValuedAttr<F32Attr, "0.01">:$alpha)>;
def HPS_EluOp : HPS_UnaryOp<"elu", "x if x > 0 else alpha * (exp(x) - 1)",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha)>;
def HPS_CeluOp : HPS_UnaryOp<"celu", "max(0,x) + min(0, alpha*(exp(x/alpha)-1))",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha)>;
def HPS_SeluOp : HPS_UnaryOp<"selu", "gamma * elu(x, alpha)",
    (ins DefaultValuedAttr<F32Attr, "1.67326319217681884765625">:$alpha,
         DefaultValuedAttr<F32Attr, "1.05070102214813232421875">:$gamma)>;
def HPS_HardSigmoidOp : HPS_UnaryOp<"hard_sigmoid", "max(0, min(1, alpha*x + beta))",
    (ins DefaultValuedAttr<F32Attr, "0.2">:$alpha,
         DefaultValuedAttr<F32Attr, "0.5">:$beta)>;
def HPS_ThresholdedReluOp : HPS_UnaryOp<"thresholded_relu", "x if x > alpha else 0",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha)>;
def HPS_ClipOp : HPS_UnaryOp<"clip", "min(max(x, min), max); a missing bound is open",
    (ins OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max)>;

class HPS_BinaryOp<string mnemonic, string doc, list<Trait> traits = []>
    : HPS_ShapeRuleOp<mnemonic, traits> {
  let summary = doc # " (numpy broadcasting)";
  let arguments = !con((ins AnyTensor:$lhs, AnyTensor:$rhs), Placement);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:`
    custom<CompactBinaryTypes>(type($lhs), type($rhs), type($result))
  }];
  let hasFolder = 1;
}

def HPS_AddOp : HPS_BinaryOp<"add", "lhs + rhs", [Commutative]>;
def HPS_SubOp : HPS_BinaryOp<"sub", "lhs - rhs">;
def HPS_MulOp : HPS_BinaryOp<"mul", "lhs * rhs", [Commutative]>;
def HPS_DivOp : HPS_BinaryOp<"div", "lhs / rhs (truncating for integers)">;
def HPS_PowOp : HPS_BinaryOp<"pow", "lhs ^ rhs">;
def HPS_MaxOp : HPS_BinaryOp<"max", "max(lhs, rhs)", [Commutative]>;
def HPS_MinOp : HPS_BinaryOp<"min", "min(lhs, rhs)", [Commutative]>;
def HPS_ModOp : HPS_BinaryOp<"mod", "remainder; sign of the divisor unless fmod"> {
  let arguments = !con((ins AnyTensor:$lhs, AnyTensor:$rhs, UnitAttr:$fmod),
                       Placement);
}
def HPS_PReluOp : HPS_BinaryOp<"prelu", "lhs if lhs >= 0 else rhs * lhs">;
def HPS_AndOp : HPS_BinaryOp<"and", "logical and on i1, bitwise on integers", [Commutative]>;
def HPS_OrOp : HPS_BinaryOp<"or", "logical or on i1, bitwise on integers", [Commutative]>;
def HPS_XorOp : HPS_BinaryOp<"xor", "logical xor on i1, bitwise on integers", [Commutative]>;
def HPS_EqualOp : HPS_BinaryOp<"equal", "lhs == rhs", [Commutative]>;
def HPS_LessOp : HPS_BinaryOp<"less", "lhs < rhs">;
def HPS_LessEqualOp : HPS_BinaryOp<"less_equal", "lhs <= rhs">;
def HPS_GreaterOp : HPS_BinaryOp<"greater", "lhs > rhs">;
def HPS_GreaterEqualOp : HPS_BinaryOp<"greater_equal", "lhs >= rhs">;

def HPS_WhereOp : HPS_ShapeRuleOp<"where"> {
  let summary = "condition ? x : y, all three broadcast together";
  let arguments = !con((ins AnyTensor:$condition, AnyTensor:$x, AnyTensor:$y),
                       Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_CastOp : HPS_LayerOp<"cast", [SameOperandsAndResultShape]> {
  let summary = "Converts the element type; the result type says to what";
  let arguments = !con((ins AnyTensor:$input), Placement);
  let results = (outs AnyTensor:$result);
  let hasVerifier = 0;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

def HPS_ConcatOp : HPS_ShapeRuleOp<"concat"> {
  let summary = "Joins tensors along `axis`";
  let arguments = !con((ins Variadic<AnyTensor>:$inputs, I64Attr:$axis),
                       Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_SplitOp : HPS_ShapeRuleOp<"split"> {
  let summary = "Cuts a tensor along `axis` into pieces of `sizes`";
  let arguments = !con((ins AnyTensor:$input, I64Attr:$axis,
                        DenseI64ArrayAttr:$sizes), Placement);
  let results = (outs Variadic<AnyTensor>:$results);
}

def HPS_SliceOp : HPS_ShapeRuleOp<"slice"> {
  let summary = "Strided slice with ONNX semantics (negative and clamped bounds)";
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$starts,
                        DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                        DenseI64ArrayAttr:$steps), Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_ReshapeOp : HPS_ShapeRuleOp<"reshape"> {
  let summary = "Reshape to `shape`: -1 infers one dim, 0 copies the input dim";
  let description = [{
    A 0 in `shape` copies the input's dim at that position unless `allowzero`
    is set, in which case it is a literal 0, as in ONNX.
  }];
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$shape,
                        UnitAttr:$allowzero), Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_TransposeOp : HPS_ShapeRuleOp<"transpose"> {
  let summary = "Permutes axes: result dim i is input dim perm[i]";
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$perm),
                       Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_FlattenOp : HPS_ShapeRuleOp<"flatten"> {
  let summary = "Collapses to 2-D: dims before `axis`, dims from `axis` on";
  let arguments = !con((ins AnyTensor:$input, I64Attr:$axis), Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_SqueezeOp : HPS_ShapeRuleOp<"squeeze"> {
  let summary = "Removes size-1 `axes` (all size-1 axes when empty)";
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$axes),
                       Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_UnsqueezeOp : HPS_ShapeRuleOp<"unsqueeze"> {
  let summary = "Inserts size-1 `axes`, numbered in the result";
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$axes),
                       Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_ExpandOp : HPS_ShapeRuleOp<"expand"> {
  let summary = "Broadcasts the input together with `shape`";
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$shape),
                       Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_PadOp : HPS_ShapeRuleOp<"pad"> {
  let summary = "Pads every axis by `pads` (begins, then ends; negative crops)";
  let arguments = !con((ins AnyTensor:$input, DenseI64ArrayAttr:$pads,
                        HPS_PadModeAttr:$mode, TypedAttrInterface:$value), Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_ShapeOp : HPS_ShapeRuleOp<"shape"> {
  let summary = "The extents of `input` from axis `start` to `end` as i64";
  let description = [{
    Folds to a constant when those extents are static; otherwise it feeds
    shape arithmetic that legalization resolves symbolically.
  }];
  let arguments = !con((ins AnyTensor:$input,
                        DefaultValuedAttr<I64Attr, "0">:$start,
                        OptionalAttr<I64Attr>:$end), Placement);
  let results = (outs 1DTensorOf<[I64]>:$result);
  let hasFolder = 1;
}

def HPS_GatherOp : HPS_ShapeRuleOp<"gather"> {
  let summary = "Dense gather of `data` slices along `axis` by `indices`";
  let description = [{
    Negative indices count from the end of the axis, as in ONNX.
  }];
  let arguments = !con((ins AnyTensor:$data, AnyTensor:$indices,
                        DefaultValuedAttr<I64Attr, "0">:$axis), Placement);
  let results = (outs AnyTensor:$result);
  let hasFolder = 1;
}

def HPS_ScatterOp : HPS_ShapeRuleOp<"scatter"> {
  let summary = "Writes `updates` into a copy of `data` along `axis` at "
                "`indices`";
  let description = [{
    The adjoint of hps.gather: `updates` has gather's result shape,
    data.shape[:axis] + indices.shape + data.shape[axis+1:], and slice k of
    it lands on slice indices[k] of the result, which starts as `data`.
    `reduction` combines a landing slice with what is there (`none`
    replaces it); updates apply in index order, so with `none` the last
    duplicate wins. Negative indices count from the end of the axis. ONNX
    ScatterElements and ScatterND are this op on the flattened data, and
    gather's gradient is a `add` scatter into zeros.
  }];
  let arguments = !con((ins AnyTensor:$data, AnyTensor:$indices,
                        AnyTensor:$updates,
                        DefaultValuedAttr<I64Attr, "0">:$axis,
                        DefaultValuedAttr<HPS_ScatterReductionAttr,
                          "::heterps::hps::ScatterReduction::None">:$reduction),
                       Placement);
  let results = (outs AnyTensor:$result);
}

def HPS_EmbeddingLookupOp : HPS_ShapeRuleOp<"embedding_lookup"> {
  let summary = "Sparse embedding lookup: rows of `table` picked by `ids`";
  let description = [{
    `table` is [rows, dim]; the result is ids.shape + [dim] without pooling,
    or ids.shape[:-1] + [dim] with `sum` or `mean` pooling over the last axis
    of `ids`. The parameter server serves this op's table; ids are feature
    ids (negative ids count from the end of the table, as ONNX Gather does).
  }];
  let arguments = !con((ins AnyTensor:$table, AnyTensor:$ids,
                        DefaultValuedAttr<HPS_EmbeddingPoolingAttr,
                          "::heterps::hps::EmbeddingPooling::None">:$pooling),
                       Placement);
  let results = (outs AnyTensor:$result);
}

//===----------------------------------------------------------------------===//
// Data-dependent extents. Each op's first result has one axis whose extent
// is known only at run time; its type carries the capacity (the largest
// possible extent) and the op's last result, `count`, the valid extent.
// Positions past `count` hold zeros. What may read such a padded value, and
// how the model's outputs are trimmed, is in HPSRationale.md ("Data-dependent
// extents").
//===----------------------------------------------------------------------===//

def HPS_NonZeroOp : HPS_ShapeRuleOp<"non_zero"> {
  let summary = "Coordinates of the nonzero elements (ONNX NonZero)";
  let description = [{
    `indices` is [rank(input), numel(input)]: column k holds the coordinates
    of the k-th nonzero element in row-major order; the first `count`
    columns are valid.
  }];
  let arguments = !con((ins AnyTensor:$input), Placement);
  let results = (outs I64Tensor:$indices, I64Tensor:$count);
}

def HPS_UniqueOp : HPS_ShapeRuleOp<"unique"> {
  let summary = "The distinct slices of `input` along `axis` (ONNX Unique)";
  let description = [{
    Slices along `axis` compare equal when every element does. `values` has
    the input's shape, its first `count` slices along `axis` the distinct
    ones (ascending lexicographically with `sorted`, else in order of first
    occurrence). `first_indices`, `counts` (first `count` valid) and
    `inverse` (all valid) are [extent of axis] I64. ONNX's form without an
    axis is this op on the flattened input.
  }];
  let arguments = !con((ins AnyTensor:$input, I64Attr:$axis, UnitAttr:$sorted),
                       Placement);
  let results = (outs AnyTensor:$values, I64Tensor:$first_indices,
                 I64Tensor:$inverse, I64Tensor:$counts, I64Tensor:$count);
}

def HPS_NonMaxSuppressionOp : HPS_LayerOp<"non_max_suppression",
                                          [AttrSizedOperandSegments]> {
  let summary = "Greedy non-maximum suppression of boxes (ONNX "
                "NonMaxSuppression)";
  let description = [{
    `boxes` [batches, boxes, 4] and `scores` [batches, classes, boxes] are
    f32; the optional one-element operands are ONNX's
    max_output_boxes_per_class (i64), iou_threshold and score_threshold
    (f32). `selected` is [capacity, 3] rows (batch, class, box), the first
    `count` valid; a run selecting more than the capacity fails.
  }];
  let arguments = !con((ins F32Tensor:$boxes, F32Tensor:$scores,
                        Optional<I64Tensor>:$max_per_class,
                        Optional<F32Tensor>:$iou_threshold,
                        Optional<F32Tensor>:$score_threshold,
                        UnitAttr:$center_point_box), Placement);
  let results = (outs I64Tensor:$selected, I64Tensor:$count);
  let assemblyFormat = [{
    $boxes `,` $scores (`max_per_class` $max_per_class^)?
    (`iou_threshold` $iou_threshold^)? (`score_threshold` $score_threshold^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Training: losses (emitted by --hps-autodiff).
//===----------------------------------------------------------------------===//

class HPS_LossLikeOp<string mnemonic> : HPS_LayerOp<mnemonic> {
  let arguments = !con((ins HPS_LossKindAttr:$kind, AnyTensor:$prediction,
                        AnyTensor:$label, UnitAttr:$from_logits), Placement);
  let assemblyFormat = [{
    $kind $prediction `,` $label attr-dict `:`
    functional-type(operands, results)
  }];
}

def HPS_LossOp : HPS_LossLikeOp<"loss"> {
  let summary = "Per-sample training loss of a prediction against its label";
  let description = [{
    `prediction` is [N, ...] with the batch first; the result is [N], each
    sample's loss averaged over its other elements.
    - `bce`: binary cross-entropy; `label` has the prediction's shape and
      holds 0..1. With `from_logits` the prediction is the logit z and the
      loss is max(z,0) - z*y + log(1 + exp(-|z|)); otherwise a probability,
      clamped to [1e-7, 1 - 1e-7].
    - `softmax_ce`: `prediction` is [N, C]; `label` holds class ids (i64 [N]
      or [N, 1]). With `from_logits` the prediction is logits, otherwise
      probabilities (clamped as above).
    - `mse`: squared error; `label` has the prediction's shape.
  }];
  let results = (outs AnyTensor:$result);
}

def HPS_LossGradOp : HPS_LossLikeOp<"loss_grad"> {
  let summary = "Gradient of the batch-mean loss with respect to the prediction";
  let description = [{
    d(mean over the N samples of `hps.loss`) / d(prediction), shaped like the
    prediction: the seed of the backward pass.
  }];
  let results = (outs AnyTensor:$result);
}

include "heterps/Dialect/HPS/IR/HPSPipelineOps.td"

#endif // HETERPS_DIALECT_HPS_IR_HPSOPS_TD
