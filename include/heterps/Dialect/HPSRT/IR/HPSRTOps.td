//===- HPSRTOps.td - One op per kernel class ---------------*- tablegen -*-===//
//
// Each op is one kernel of the runtime (KernelAPI.inc is generated from
// these definitions by heterps-tblgen -gen-kernel-api):
// - the op's attributes, in order, are the kernel constructor's parameters
//   after `Context &ctx` (their runtime C++ types come from HPSRTAttrs.td);
// - its operands are what run() reads (`const void *`; a variadic one
//   `const void *const *`) and its results what run() writes (`void *`;
//   variadic `void *const *`), operands first, unless `runOrder` names them
//   in another order; trailing optional operands default to nullptr;
// - the description is the class's comment in the runtime's header.
//
// Where run() names a pointer like a constructor parameter (Conv's shape `x`
// and run()'s x), the attribute keeps the parameter's name and the operand or
// result is `<name>Data` (ODS needs distinct names; a parameter's name in a
// declaration does not matter to callers).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPSRT_IR_HPSRTOPS_TD
#define HETERPS_DIALECT_HPSRT_IR_HPSRTOPS_TD

include "heterps/Dialect/HPSRT/IR/HPSRTAttrs.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class HPSRT_KernelOp<string mnemonic, string kernel, list<Trait> traits = []>
    : Op<HPSRT_Dialect, mnemonic, traits> {
  /// The runtime class this op constructs and runs. Two ops may share one
  /// class (Loss's run and runGradient): then they have the same attributes.
  string kernelClass = kernel;
  /// The member function that runs it, and that function's comment.
  string runMethod = "run";
  string runDescription = "";
  /// run()'s parameters by operand and result name; empty: the operands,
  /// then the results.
  list<string> runOrder = [];
  /// The element types (the `type` attribute, as MLIR spells them) the
  /// runtime class runs on the CPU, where it refuses others when a stage
  /// builds it; the generated verifier refuses them at compile time. Empty:
  /// it runs every type its op takes.
  list<string> elementTypes = [];
  /// Generated (heterps-tblgen -gen-kernel-verifiers): each shape
  /// attribute `N` is the shape of the operand or result `NData`.
  let hasVerifier = 1;
}

def HPSRT_Buffer : RankedTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Dense
//===----------------------------------------------------------------------===//

def HPSRT_GemmOp : HPSRT_KernelOp<"gemm", "Gemm"> {
  let elementTypes = ["f32"];
  let summary = "y = act(alpha * op(A) x op(B) + beta * C)";
  let description = [{
    y = act(alpha * op(A) x op(B) + beta * C): A is [M,K] ([K,M] when transA),
    B is [K,N] ([N,K] when transB), C (optional: cShape == nullptr) is
    unidirectionally broadcast to [M,N] (rank 0, 1 ([N]) or 2 ([1|M, 1|N])).
  }];
  let arguments = (ins HPSRT_Buffer:$a, HPSRT_Buffer:$b,
                       Optional<HPSRT_Buffer>:$c,
                       HPSRT_DType:$type, HPSRT_I64:$m, HPSRT_I64:$n,
                       HPSRT_I64:$k, HPSRT_Bool:$transA, HPSRT_Bool:$transB,
                       HPSRT_F32:$alpha, HPSRT_F32:$beta,
                       OptionalAttr<HPSRT_Shape>:$cShape,
                       HPSRT_ActivationAttr:$act, HPSRT_Bool:$constantB);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_MatMulOp : HPSRT_KernelOp<"matmul", "MatMul"> {
  let summary = "numpy matmul with a fused activation";
  let description = [{
    numpy matmul: 1-D operands promoted (and the unit dim dropped from y),
    batch dims broadcast; y has shape `y`. act fused after.
  }];
  let arguments = (ins HPSRT_Buffer:$aData, HPSRT_Buffer:$bData,
                       HPSRT_DType:$type, HPSRT_Shape:$a, HPSRT_Shape:$b,
                       HPSRT_Shape:$y, HPSRT_ActivationAttr:$act,
                       HPSRT_Bool:$constantB);
  let results = (outs HPSRT_Buffer:$yData);
}

def HPSRT_ConvOp : HPSRT_KernelOp<"conv", "Conv",
                                  [AttrSizedOperandSegments]> {
  let summary = "N-d grouped convolution";
  let description = [{
    N-d (1-3 spatial) grouped convolution, NC[D]HW activations, filter
    [Cout, Cin/group, k...], optional bias [Cout]. dilations are ONNX's (1 =
    dense); pads are split into begins and ends. y has shape `y`. x and y
    are in the layouts `options` names; with options.residual, run() adds
    `residual` (y's shape and layout) before the activation.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_Buffer:$wData,
                       Optional<HPSRT_Buffer>:$bias,
                       Optional<HPSRT_Buffer>:$residual,
                       HPSRT_DType:$type, HPSRT_Shape:$x, HPSRT_Shape:$w,
                       HPSRT_Bool:$hasBias, HPSRT_Shape:$y,
                       HPSRT_Shape:$strides, HPSRT_Shape:$dilations,
                       HPSRT_Shape:$padBegin, HPSRT_Shape:$padEnd,
                       HPSRT_I64:$group, HPSRT_ActivationAttr:$act,
                       HPSRT_Bool:$constantWeights,
                       HPSRT_Defaulted<HPSRT_ConvOptionsAttr>:$options);
  let results = (outs HPSRT_Buffer:$yData);
  let runOrder = ["xData", "wData", "bias", "yData", "residual"];
}

def HPSRT_IntegerConvOp : HPSRT_KernelOp<"integer_conv", "IntegerConv"> {
  let summary = "exact integer convolution (ConvInteger, QLinearConv)";
  let description = [{
    The exact integer convolution of ConvInteger and QLinearConv: x u8 or i8
    (`xType`), an i8 filter, an optional i32 bias, an i32 y; geometry as
    Conv's, zero padding, sums wrapping modulo 2^32. x and y are Plain or
    ChannelsLast (`layouts`); the filter and bias are plain.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_Buffer:$wData,
                       Optional<HPSRT_Buffer>:$bias,
                       HPSRT_DType:$xType, HPSRT_Shape:$x, HPSRT_Shape:$w,
                       HPSRT_Bool:$hasBias, HPSRT_Shape:$y,
                       HPSRT_Shape:$strides, HPSRT_Shape:$dilations,
                       HPSRT_Shape:$padBegin, HPSRT_Shape:$padEnd,
                       HPSRT_I64:$group, HPSRT_Bool:$constantWeights,
                       HPSRT_Defaulted<HPSRT_ConvLayoutsAttr>:$layouts);
  let results = (outs HPSRT_Buffer:$yData);
}

def HPSRT_RelayoutOp : HPSRT_KernelOp<"relayout", "Relayout"> {
  let elementTypes = ["f32"];
  let summary = "copies an NC[D]HW tensor into another layout";
  let description = [{
    Copies an NC[D]HW tensor of `shape` from layout `from` into layout `to`
    (where a Native or ChannelsLast tensor meets a kernel that reads plain
    ones). Native tensors are f32; ChannelsLast ones of any element type.
  }];
  let arguments = (ins HPSRT_Buffer:$x, HPSRT_DType:$type,
                       HPSRT_Shape:$shape, HPSRT_LayoutAttr:$from,
                       HPSRT_LayoutAttr:$to);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_ConvGradInputOp
    : HPSRT_KernelOp<"conv_grad_input", "ConvGradInput"> {
  let elementTypes = ["f32"];
  let summary = "the adjoint of Conv with respect to its input";
  let description = [{
    The adjoints of Conv (training): x, w, y, strides, dilations, pads and
    group describe the forward convolution exactly as for Conv (y
    authoritative). ConvGradInput computes dx [x] from dy [y] and the filter;
    ConvGradFilter computes dw [w] from x and dy. Both overwrite their
    output; the bias's adjoint is a Reduce. `layouts` are those of the x-shaped
    (dx, or x) and y-shaped (dy) activations; dw and the filter are plain.
  }];
  let arguments = (ins HPSRT_Buffer:$dy, HPSRT_Buffer:$wData,
                       HPSRT_DType:$type, HPSRT_Shape:$x, HPSRT_Shape:$w,
                       HPSRT_Shape:$y, HPSRT_Shape:$strides,
                       HPSRT_Shape:$dilations, HPSRT_Shape:$padBegin,
                       HPSRT_Shape:$padEnd, HPSRT_I64:$group,
                       HPSRT_Defaulted<HPSRT_ConvLayoutsAttr>:$layouts);
  let results = (outs HPSRT_Buffer:$dx);
}

// No description: the runtime's header documents ConvGradFilter together with
// ConvGradInput, in the comment above that class.
def HPSRT_ConvGradFilterOp
    : HPSRT_KernelOp<"conv_grad_filter", "ConvGradFilter"> {
  let elementTypes = ["f32"];
  let summary = "the adjoint of Conv with respect to its filter";
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_Buffer:$dy,
                       HPSRT_DType:$type, HPSRT_Shape:$x, HPSRT_Shape:$w,
                       HPSRT_Shape:$y, HPSRT_Shape:$strides,
                       HPSRT_Shape:$dilations, HPSRT_Shape:$padBegin,
                       HPSRT_Shape:$padEnd, HPSRT_I64:$group,
                       HPSRT_Defaulted<HPSRT_ConvLayoutsAttr>:$layouts);
  let results = (outs HPSRT_Buffer:$dw);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def HPSRT_PoolOp : HPSRT_KernelOp<"pool", "Pool"> {
  let elementTypes = ["f32"];
  let summary = "windowed pooling over the spatial axes";
  let description = [{
    Windowed pooling over the spatial axes of NC[D]HW. `y` is the result shape
    the compiler computed (ceil_mode already reflected in it): windows that run
    past padBegin + input + padEnd are clipped to it. AvgIncludePad divides by
    the window's taps inside input + explicit pads; AvgExcludePad by its taps
    inside the input. Max ignores padding.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_PoolKindAttr:$kind, HPSRT_Shape:$x,
                       HPSRT_Shape:$y, HPSRT_Shape:$kernel,
                       HPSRT_Shape:$strides, HPSRT_Shape:$dilations,
                       HPSRT_Shape:$padBegin, HPSRT_Shape:$padEnd);
  let results = (outs HPSRT_Buffer:$yData);
}

def HPSRT_GlobalPoolOp : HPSRT_KernelOp<"global_pool", "GlobalPool"> {
  let elementTypes = ["f32"];
  let summary = "max or mean over all spatial axes";
  let description = [{
    Max or mean over all spatial axes of NC...; y is [N, C, 1, ...].
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Bool:$max, HPSRT_Shape:$x);
  let results = (outs HPSRT_Buffer:$y);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def HPSRT_BatchNormOp : HPSRT_KernelOp<"batch_norm", "BatchNorm"> {
  let elementTypes = ["f32"];
  let summary = "inference batch norm with running statistics";
  let description = [{
    Inference batch norm over axis 1 with running statistics; scale, bias,
    mean, variance are [C].
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_Buffer:$scale,
                       HPSRT_Buffer:$bias, HPSRT_Buffer:$mean,
                       HPSRT_Buffer:$variance, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_F32:$epsilon);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_LayerNormOp : HPSRT_KernelOp<"layer_norm", "LayerNorm"> {
  let elementTypes = ["f32"];
  let summary = "normalisation over the trailing axes";
  let description = [{
    Normalises over axes [axis, rank); scale (and bias when hasBias) have the
    shape x[axis:] (after unidirectional broadcasting: `scaleShape` is given
    as stored, rank <= rank - axis).
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_Buffer:$scale,
                       Optional<HPSRT_Buffer>:$bias, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_I64:$axis, HPSRT_F32:$epsilon,
                       HPSRT_Shape:$scaleShape, HPSRT_Bool:$hasBias);
  let results = (outs HPSRT_Buffer:$y);
}

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

def HPSRT_RecurrentOp : HPSRT_KernelOp<"recurrent", "Recurrent",
                                       [AttrSizedOperandSegments]> {
  let summary = "one direction of an ONNX RNN, GRU or LSTM";
  let description = [{
    One direction of an ONNX RNN, GRU or LSTM over a whole sequence, for
    sequences too long to unroll (the input projection X W^T + Wb is a Gemm
    before it). f32 throughout: projected [T, B, G] (G = gates x H: RNN 1,
    GRU 3 (z, r, h), LSTM 4 (i, o, f, c)); r [G, H]; recurrentBias [G] (Rb,
    when hasRecurrentBias); lengths [B] i64 (when hasLengths: steps t >=
    lengths[b] keep the state and give y = 0; rows of length 0 end with a
    zero hLast and cLast, as onnxruntime gives them); h0, c0 [B, H] (c0 LSTM only,
    else null); peepholes [3H] (i, o, f; LSTM with hasPeepholes). Outputs
    y [T, B, H], hLast [B, H], cLast [B, H] (LSTM; null otherwise). A
    reverse direction runs t = T-1 down to 0 and writes y in t's place.
    The step semantics are ONNX's, as the unrolled legalization spells them.
    With params.input = I > 0, `projected` is X [T, B, I] and
    the kernel adds X W^T + Wb itself: inputWeights W [G, I], inputBias Wb
    [G] (null: none).
  }];
  let arguments = (ins HPSRT_Buffer:$projected, HPSRT_Buffer:$r,
                       Optional<HPSRT_Buffer>:$recurrentBias,
                       Optional<HPSRT_Buffer>:$lengths,
                       Optional<HPSRT_Buffer>:$h0,
                       Optional<HPSRT_Buffer>:$c0,
                       Optional<HPSRT_Buffer>:$peepholes,
                       Optional<HPSRT_Buffer>:$inputWeights,
                       Optional<HPSRT_Buffer>:$inputBias,
                       HPSRT_RecurrentParamsAttr:$params);
  let results = (outs HPSRT_Buffer:$y, HPSRT_Buffer:$hLast,
                      Optional<HPSRT_Buffer>:$cLast);
  let runOrder = ["projected", "r", "recurrentBias", "lengths", "h0", "c0",
                  "peepholes", "y", "hLast", "cLast", "inputWeights",
                  "inputBias"];
}

def HPSRT_RecurrentGradOp
    : HPSRT_KernelOp<"recurrent_grad", "RecurrentGrad",
                     [AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "backpropagation through time of a Recurrent";
  let description = [{
    The adjoint of a Recurrent (backpropagation through time). Inputs are the
    forward's (same params, same meaning) plus its y and the adjoints of its
    results: dy [T, B, H], dhLast and dcLast [B, H], each null when zero
    (dcLast LSTM only). The gates are recomputed from y (y's steps are every
    step's previous h), then the steps run backwards. Outputs: dProjected
    [T, B, G], dR [G, H], dRb [G], dh0 [B, H], and for LSTM dc0 [B, H] and,
    with peepholes, dPeepholes [3H] (else null). Steps past a row's length
    get a zero dProjected; a row of length 0 gets a zero dh0 and dc0.
  }];
  let arguments = (ins HPSRT_Buffer:$projected, HPSRT_Buffer:$r,
                       Optional<HPSRT_Buffer>:$recurrentBias,
                       Optional<HPSRT_Buffer>:$lengths,
                       Optional<HPSRT_Buffer>:$h0,
                       Optional<HPSRT_Buffer>:$c0,
                       Optional<HPSRT_Buffer>:$peepholes, HPSRT_Buffer:$y,
                       Optional<HPSRT_Buffer>:$dy,
                       Optional<HPSRT_Buffer>:$dhLast,
                       Optional<HPSRT_Buffer>:$dcLast,
                       HPSRT_RecurrentParamsAttr:$params);
  let results = (outs HPSRT_Buffer:$dProjected, HPSRT_Buffer:$dR,
                      Optional<HPSRT_Buffer>:$dRecurrentBias,
                      HPSRT_Buffer:$dh0, Optional<HPSRT_Buffer>:$dc0,
                      Optional<HPSRT_Buffer>:$dPeepholes);
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

def HPSRT_SoftmaxOp : HPSRT_KernelOp<"softmax", "Softmax"> {
  let elementTypes = ["f32", "f64"];
  let summary = "softmax or log-softmax along one axis";
  let description = [{
    Softmax (or log-softmax) along one axis.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_I64:$axis, HPSRT_Bool:$log);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_ReduceOp : HPSRT_KernelOp<"reduce", "Reduce"> {
  let elementTypes = ["f32", "f64", "i32", "i64"];
  let summary = "reduction over axes";
  let description = [{
    Reduction over `axes` (sorted, distinct, normalised; never empty: the
    compiler passes every axis for "all"). `y` is the result shape, with or
    without the reduced unit dims (the data layout is the same).
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_ReduceKindAttr:$kind, HPSRT_Shape:$x,
                       HPSRT_Int64List:$axes, HPSRT_Shape:$y);
  let results = (outs HPSRT_Buffer:$yData);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def HPSRT_UnaryOp : HPSRT_KernelOp<"unary", "Unary"> {
  let summary = "y = f(x) elementwise";
  let description = [{
    y = f(x) elementwise over n elements; x == y (in place) is allowed.
    Integer types support Identity, Relu, Abs, Neg, Sign, Clip; Bool supports
    Not and Identity; float types support all but Not.
  }];
  let arguments = (ins HPSRT_Buffer:$x, HPSRT_DType:$type,
                       HPSRT_UnaryKindAttr:$kind,
                       HPSRT_UnaryParamsAttr:$params, HPSRT_I64:$n);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_BinaryOp : HPSRT_KernelOp<"binary", "Binary"> {
  let summary = "y = lhs OP rhs with numpy broadcasting";
  let description = [{
    y = lhs OP rhs with numpy broadcasting to `y`. `in` is the operands'
    type; y is Bool for comparisons, else `in`. y may alias an operand of the
    same shape.
  }];
  let arguments = (ins HPSRT_Buffer:$aData, HPSRT_Buffer:$bData,
                       HPSRT_BinaryKindAttr:$kind, HPSRT_DType:$in,
                       HPSRT_Shape:$a, HPSRT_Shape:$b, HPSRT_Shape:$y);
  let results = (outs HPSRT_Buffer:$yData);
}

def HPSRT_WhereOp : HPSRT_KernelOp<"where", "Where"> {
  let summary = "out = cond ? x : y with broadcasting";
  let description = [{
    out = cond ? x : y, all three broadcast to `out`; cond is Bool.
  }];
  let arguments = (ins HPSRT_Buffer:$condData, HPSRT_Buffer:$xData,
                       HPSRT_Buffer:$yData, HPSRT_DType:$type,
                       HPSRT_Shape:$cond, HPSRT_Shape:$x, HPSRT_Shape:$y,
                       HPSRT_Shape:$out);
  let results = (outs HPSRT_Buffer:$outData);
}

def HPSRT_CastOp : HPSRT_KernelOp<"cast", "Cast"> {
  let summary = "element type conversion";
  let description = [{
    Element type conversion (ONNX Cast: float -> int truncates toward zero,
    -> Bool is != 0).
  }];
  let arguments = (ins HPSRT_Buffer:$x, HPSRT_DType:$from, HPSRT_DType:$to,
                       HPSRT_I64:$n);
  let results = (outs HPSRT_Buffer:$y);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def HPSRT_ConcatOp : HPSRT_KernelOp<"concat", "Concat"> {
  let summary = "joins tensors along an axis";
  let description = [{
    Joins `inputs` along `axis`.
  }];
  let arguments = (ins Variadic<HPSRT_Buffer>:$sources, HPSRT_DType:$type,
                       HPSRT_ShapeList:$inputs, HPSRT_I64:$axis);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_SplitOp : HPSRT_KernelOp<"split", "Split"> {
  let summary = "cuts a tensor along an axis";
  let description = [{
    Cuts x along `axis` into pieces of `sizes`.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_I64:$axis,
                       HPSRT_Int64List:$sizes);
  let results = (outs Variadic<HPSRT_Buffer>:$ys);
}

def HPSRT_SliceOp : HPSRT_KernelOp<"slice", "Slice"> {
  let summary = "strided slice";
  let description = [{
    y[i...] = x[start + i * step ...] per axis (start in range, step != 0,
    possibly negative; the compiler has clamped everything). y has shape `y`.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_Shape:$starts,
                       HPSRT_Shape:$steps, HPSRT_Shape:$y);
  let results = (outs HPSRT_Buffer:$yData);
}

def HPSRT_TransposeOp : HPSRT_KernelOp<"transpose", "Transpose"> {
  let summary = "permutes the axes";
  let description = [{
    y dim i = x dim perm[i].
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_Int64List:$perm);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_ExpandOp : HPSRT_KernelOp<"expand", "Expand"> {
  let summary = "numpy broadcast to a shape";
  let description = [{
    numpy broadcast of x to `y` (x's rank <= y's rank).
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_Shape:$y);
  let results = (outs HPSRT_Buffer:$yData);
}

def HPSRT_PadOp : HPSRT_KernelOp<"pad", "Pad"> {
  let summary = "pads or crops every axis";
  let description = [{
    Pads every axis: pads = [begin_0..begin_r-1, end_0..end_r-1], negative
    crops. Constant fills `value` (converted to the type); Reflect mirrors
    without repeating the edge; Edge repeats it.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x, HPSRT_Int64List:$pads,
                       HPSRT_PadModeAttr:$mode, HPSRT_F64:$value);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_GatherOp : HPSRT_KernelOp<"gather", "Gather"> {
  let summary = "ONNX Gather";
  let description = [{
    ONNX Gather: y = data indexed along `axis` by indices (I32 or I64;
    negative counts from the end; out of range throws Error naming the index).
  }];
  let arguments = (ins HPSRT_Buffer:$dataData, HPSRT_Buffer:$indicesData,
                       HPSRT_DType:$type, HPSRT_Shape:$data,
                       HPSRT_DType:$indexType, HPSRT_Shape:$indices,
                       HPSRT_I64:$axis);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_ScatterOp : HPSRT_KernelOp<"scatter", "Scatter"> {
  let summary = "the adjoint of Gather";
  let description = [{
    The adjoint of Gather: y = data, then slice k of `updates` (shaped as
    Gather's result) is combined into slice indices[k] of y along `axis`, in
    index order (with None the last duplicate wins on the CPU; on a GPU
    duplicates under None land in no set order, as ONNX leaves them). Mul,
    Max and Min need a numeric type, Add a numeric or bool one. Indices are
    I32 or I64, negative counts from the end; out of range throws Error
    naming the index. `data` and `y` may be the same buffer.
  }];
  let arguments = (ins HPSRT_Buffer:$dataData, HPSRT_Buffer:$indicesData,
                       HPSRT_Buffer:$updates, HPSRT_DType:$type,
                       HPSRT_Shape:$data, HPSRT_DType:$indexType,
                       HPSRT_Shape:$indices, HPSRT_I64:$axis,
                       HPSRT_ScatterReductionAttr:$reduction);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_EmbeddingLookupOp
    : HPSRT_KernelOp<"embedding_lookup", "EmbeddingLookup"> {
  let summary = "rows of a table picked by ids, optionally pooled";
  let description = [{
    Rows of a [rows, dim] table picked by ids (I32 or I64, negative counts
    from the end, out of range throws Error). None: y = ids.shape + [dim];
    Sum / Mean pool over the last axis of ids: y = ids.shape[:-1] + [dim].
  }];
  let arguments = (ins HPSRT_Buffer:$table, HPSRT_Buffer:$idsData,
                       HPSRT_DType:$type, HPSRT_I64:$rows, HPSRT_I64:$dim,
                       HPSRT_DType:$idType, HPSRT_Shape:$ids,
                       HPSRT_EmbeddingPoolingAttr:$pooling);
  let results = (outs HPSRT_Buffer:$y);
}

def HPSRT_ServerTableOp : Op<HPSRT_Dialect, "server_table", [Pure]> {
  let summary = "a table the parameter server serves to an inference stage";
  let description = [{
    The rows of the sparse table `name`, held by the parameter server for
    the whole run (not a kernel: the stage reads the server's buffer in
    place, and it takes no room in the arena or in weights.bin).
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs HPSRT_Buffer:$table);
  let assemblyFormat = "$name attr-dict `:` type($table)";
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def HPSRT_LossOp : HPSRT_KernelOp<"loss", "Loss"> {
  let summary = "per-sample training loss";
  let description = [{
    Training losses (hps.loss / hps.loss_grad). `prediction` is [n, m]
    (m = elements per sample; softmax_ce: m = classes); `label` is [n, m] of
    the same type (bce, mse) or i64 class ids [n] (softmax_ce). F32 only.
    Without fromLogits, bce and softmax_ce clamp probabilities to
    [1e-7, 1 - 1e-7] and differentiate the formula at the clamped value (a
    saturated wrong prediction keeps a finite, non-zero gradient). Class ids
    outside [0, m) make run() and runGradient() throw Error naming the sample.
  }];
  let runDescription = [{
    perSample[n]: each sample's loss averaged over its m elements (bce,
    mse) or its cross-entropy (softmax_ce).
  }];
  let arguments = (ins HPSRT_Buffer:$prediction, HPSRT_Buffer:$label,
                       HPSRT_DType:$type, HPSRT_LossKindAttr:$kind,
                       HPSRT_Bool:$fromLogits, HPSRT_I64:$n, HPSRT_I64:$m);
  let results = (outs HPSRT_Buffer:$perSample);
}

def HPSRT_LossGradOp : HPSRT_KernelOp<"loss_grad", "Loss"> {
  let summary = "the gradient of the mean training loss";
  let runMethod = "runGradient";
  let runDescription = [{
    gradient[n*m] of (1/n) * sum(perSample) with respect to prediction.
  }];
  let arguments = (ins HPSRT_Buffer:$prediction, HPSRT_Buffer:$label,
                       HPSRT_DType:$type, HPSRT_LossKindAttr:$kind,
                       HPSRT_Bool:$fromLogits, HPSRT_I64:$n, HPSRT_I64:$m);
  let results = (outs HPSRT_Buffer:$gradient);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def HPSRT_DeterminantOp : HPSRT_KernelOp<"determinant", "Determinant"> {
  let summary = "ONNX Det: determinants of a batch of square matrices";
  let description = [{
    ONNX Det: the determinants of `batch` row-major n x n matrices of x (F32
    or F64), by LU decomposition with partial pivoting accumulated in
    double; y holds `batch` values of x's type. A singular matrix gives 0.
  }];
  let arguments = (ins HPSRT_Buffer:$x, HPSRT_DType:$type, HPSRT_I64:$batch,
                       HPSRT_I64:$n);
  let results = (outs HPSRT_Buffer:$y);
}

//===----------------------------------------------------------------------===//
// Data-dependent extents
//===----------------------------------------------------------------------===//

def HPSRT_NonZeroOp : HPSRT_KernelOp<"non_zero", "NonZero"> {
  let summary = "ONNX NonZero: coordinates of the nonzero elements";
  let description = [{
    Data-dependent extents. Each of these writes a result whose extent along
    one axis is known only when it runs: the code generator gives it the
    largest possible extent (the capacity), and the kernel writes the valid
    extent as one I64 scalar `count`. Positions past `count` along that axis
    are zero, so a Gather reading them as indices stays in range; the runtime
    trims them off the model's outputs.

    ONNX NonZero: the coordinates of x's nonzero elements in row-major order,
    as indices [rank(x), numel(x)] I64 whose first `count` columns are valid.
    Rank 0 is refused by the code generator.
  }];
  let arguments = (ins HPSRT_Buffer:$xData, HPSRT_DType:$type,
                       HPSRT_Shape:$x);
  let results = (outs HPSRT_Buffer:$indices, HPSRT_Buffer:$count);
}

def HPSRT_UniqueOp : HPSRT_KernelOp<"unique", "Unique"> {
  let summary = "ONNX Unique over slices";
  let description = [{
    ONNX Unique over the slices of x viewed as [outer, extent, inner]: slice k
    is x[:, k, :] (ONNX's flattened form is outer = inner = 1). Two slices
    are equal when every element compares equal. Outputs, each with `count`
    valid entries along the extent axis:
    - y [outer, extent, inner]: the distinct slices, in ascending
      lexicographic order (element 0 of the slice, then 1, ...) when
      `sorted`, else in order of first occurrence;
    - firstIndices [extent] I64: where each distinct slice first occurs;
    - inverse [extent] I64 (all valid): the position in y of slice k;
    - counts [extent] I64: how many times each distinct slice occurs;
    - count: I64 scalar.
  }];
  let arguments = (ins HPSRT_Buffer:$x, HPSRT_DType:$type, HPSRT_I64:$outer,
                       HPSRT_I64:$extent, HPSRT_I64:$inner,
                       HPSRT_Bool:$sorted);
  let results = (outs HPSRT_Buffer:$y, HPSRT_Buffer:$firstIndices,
                      HPSRT_Buffer:$inverse, HPSRT_Buffer:$counts,
                      HPSRT_Buffer:$count);
}

def HPSRT_NonMaxSuppressionOp
    : HPSRT_KernelOp<"non_max_suppression", "NonMaxSuppression",
                     [AttrSizedOperandSegments]> {
  let summary = "ONNX NonMaxSuppression";
  let description = [{
    ONNX NonMaxSuppression (10, 11): boxes [batches, boxes, 4] F32 (corners
    [y1, x1, y2, x2] in either order, or [x_center, y_center, width, height]
    with centerPointBox), scores [batches, classes, boxes] F32. Optional
    scalars (null when absent): maxPerClass I64 (absent or negative: 0),
    iouThreshold F32 (absent: 0), scoreThreshold F32 (absent: every box is a
    candidate; present: only scores strictly above it). Per batch, then per
    class: candidates by descending score (equal scores: lower box index
    first), each kept unless its IoU with a kept box is above iouThreshold,
    until maxPerClass are kept. selected [capacity, 3] I64 rows (batch,
    class, box) in that order, `count` of them valid; more than `capacity`
    selections throw Error.
  }];
  let arguments = (ins HPSRT_Buffer:$boxesData, HPSRT_Buffer:$scores,
                       Optional<HPSRT_Buffer>:$maxPerClass,
                       Optional<HPSRT_Buffer>:$iouThreshold,
                       Optional<HPSRT_Buffer>:$scoreThreshold,
                       HPSRT_I64:$batches, HPSRT_I64:$classes,
                       HPSRT_I64:$boxes, HPSRT_Bool:$centerPointBox,
                       HPSRT_I64:$capacity);
  let results = (outs HPSRT_Buffer:$selected, HPSRT_Buffer:$count);
}

//===----------------------------------------------------------------------===//
// Fusion regions
//
// The passes that prepare stages for printing (include/heterps/Target/
// Passes.td) record each fusion they decide as one of these ops, placed
// where the fused kernel runs, with the hps ops it fuses in its body (as
// IREE's dispatch regions hold the ops one dispatch runs). The body reads
// values from above; its results are the values the kernel stores.
//===----------------------------------------------------------------------===//

class HPSRT_FusionOp<string mnemonic, list<Trait> traits = []>
    : Op<HPSRT_Dialect, mnemonic, !listconcat(traits, [SingleBlock])> {
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? $body attr-dict";
  let hasVerifier = 1;
}

def HPSRT_FusedDenseOp : HPSRT_FusionOp<"fused_dense"> {
  let summary = "a dense op and its epilogue, run as one kernel";
  let description = [{
    The body is an hps.gemm, hps.matmul or hps.conv, then, for a conv, an
    f32 hps.add of its result and a value computed before it (a residual,
    read by the kernel), then an activation the kernel applies
    (hpsrt.UnaryKind), each reading the op before it; it yields the last.
    The kernel writes that value alone: the intermediates are never stored.
  }];
}

def HPSRT_FusedLoopOp : HPSRT_FusionOp<"fused_loop"> {
  let summary = "elementwise ops over one shape, run as one generated loop";
  let description = [{
    The body's ops are elementwise with one result shape; the loop reads each
    value from above once per element and keeps the members' results in
    registers, storing only those it yields (the ones read after it).
  }];
}

def HPSRT_ProjectedRecurrenceOp : HPSRT_FusionOp<"projected_recurrence"> {
  let summary = "a recurrence that projects its input itself";
  let description = [{
    The body is an hps.gemm X W^T + Wb, views of its result, and the
    hps.recurrence that reads them as its projected input; it yields the
    recurrence's results. The kernel takes X, W and Wb and projects a few
    steps at a time: the T x B x G projection is never stored.
  }];
}

def HPSRT_YieldOp : Op<HPSRT_Dialect, "yield",
    [Pure, Terminator,
     ParentOneOf<["FusedDenseOp", "FusedLoopOp", "ProjectedRecurrenceOp"]>]> {
  let summary = "the values a fusion region's kernel stores";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // HETERPS_DIALECT_HPSRT_IR_HPSRTOPS_TD
