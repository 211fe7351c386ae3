//===- Passes.td - Passes that prepare stages for printing -*- tablegen -*-===//
//
// The code generator's decisions, made as passes on a partitioned module
// before any stage is printed (CIRCT's rule: the IR is prepared for
// emission, never changed while printing). Each records what it decides as
// IR the stage printer reads.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_TARGET_PASSES_TD
#define HETERPS_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def HPSFuseDenseEpilogues
    : Pass<"hps-fuse-dense-epilogues", "::mlir::func::FuncOp"> {
  let summary = "Fuse residual adds and activations into their dense op";
  let description = [{
    In each stage function (one with `hps.device`): an f32 hps.add of a
    conv's result (its only reader) and a value computed before the conv of
    the same type (a ResNet block's shortcut), then an activation the
    runtime's kernels apply (hpsrt.UnaryKind other than Not) on the only
    reader of a gemm's, matmul's or conv's result (or of such an add), of
    f32, move into one hpsrt.fused_dense at the dense op's place: the
    kernel adds the residual and applies the activation before it stores,
    and the intermediates are never stored. Forward and backward ops
    (`hps.backward`) are never fused together: an evaluating run skips the
    backward ones.
  }];
  let dependentDialects = ["::heterps::hpsrt::HPSRTDialect"];
}

def HPSFormFusedLoops
    : Pass<"hps-form-fused-loops", "::mlir::func::FuncOp"> {
  let summary = "Group chains of elementwise ops into generated loops";
  let description = [{
    In each stage function: elementwise ops the generated loops compute
    exactly (no transcendental functions, whose vector kernels differ) are
    grouped greedily in block order; an op joins the group of an operand's
    producer when both have the same result shape and every read of the
    group's results from outside it comes after the op. Each group of two or
    more ops becomes an hpsrt.fused_loop at its last op's place, yielding
    the members' results read after it; the others stay in registers.
  }];
  let dependentDialects = ["::heterps::hpsrt::HPSRTDialect"];
}

def HPSFuseRecurrenceProjections
    : Pass<"hps-fuse-recurrence-projections", "::mlir::func::FuncOp"> {
  let summary = "Let CPU recurrences project their input themselves";
  let description = [{
    In each CPU stage function: an hps.recurrence whose projected input is,
    through views only, an f32 hps.gemm X W^T + Wb (alpha 1, beta 1, bias
    [G]) read by nothing else becomes, with that gemm and the views, one
    hpsrt.projected_recurrence at the recurrence's place: the kernel
    projects a few steps at a time, and the T x B x G projection is never
    stored. GPU stages keep the gemm (one large GEMM is what a GPU is fast
    at).
  }];
  let dependentDialects = ["::heterps::hpsrt::HPSRTDialect"];
}

def HPSAssignLayouts : Pass<"hps-assign-layouts", "::mlir::func::FuncOp"> {
  let summary = "Keep CPU conv chains in the kernels' native layouts";
  let description = [{
    In each CPU stage function: a 3-D to 5-D value is held in the conv
    kernels' native layout (channel-blocked for f32, whose channel count is
    a multiple of hpsrt.kNativeChannelMultiple; channels-last for the int8
    convs' u8 input) when a conv, or an elementwise op or hpsrt.fused_loop
    over operands in one such layout, produces it and a conv or such an op
    reads it in that layout; values that would only cost a reorder, or whose
    producer would mix layouts, stay plain, until nothing changes. The
    producer gets `hpsrt.held_layouts` (one #hpsrt.layout per result), and
    every reader that wants the value plain (pooling, gemm, a view of
    another shape, a stage output) reads one copy made by an hpsrt.relayout
    right after the producer.
  }];
  let dependentDialects = ["::heterps::hpsrt::HPSRTDialect"];
}

def HPSLowerToRuntimeCalls
    : Pass<"hps-lower-to-runtime-calls", "::mlir::func::FuncOp"> {
  let summary = "Replace each kernel's ops in a stage by its hpsrt kernel op";
  let description = [{
    In each stage function, in block order: every hps op, hpsrt.fused_dense
    and hpsrt.projected_recurrence becomes the hpsrt kernel op that runs it,
    its attributes the kernel's constructor parameters (a dense op's fused
    activation and residual, a conv's held layouts, normalized axes, ONNX
    defaults filled in). A Pow of mixed element types becomes casts around
    a Pow; an inference stage's parameter-server pull becomes a lookup in an
    hpsrt.server_table; a training stage's pooled pull pulls the rows alone
    and pools them with a Reduce. What runs no kernel stays: views, weights
    and constants, stage inputs and outputs, the server's pushes and
    training pulls, and hpsrt.fused_loop (printed as a generated loop). The
    kernel ops keep their op's hps.backward and hpsrt.held_layouts. An op no
    kernel runs, or a value that is not a static tensor of an element type
    the runtime has, is one error naming the op.
  }];
  let dependentDialects = ["::heterps::hpsrt::HPSRTDialect"];
}

def HPSPlanBuffers : Pass<"hps-plan-buffers", "::mlir::func::FuncOp"> {
  let summary = "Plan every stage tensor's place in the stage's arena";
  let description = [{
    In each stage function: every result of an op or fusion op (not views,
    which share their operand's storage, nor weights, constants and static
    shapes, which live in weights.bin) gets a 64-byte aligned offset in one
    arena, first fit in op order; its bytes are free again after the last
    read of it or of a view of it (a fusion's body reads at the fusion). The
    op gets `hpsrt.arena_offsets` (one per result, -1 for none) and the
    function `hpsrt.arena_bytes`, the arena's size: the stage's peak memory.
    Runs last: relayouts are tensors too.
  }];
  let dependentDialects = ["::heterps::hpsrt::HPSRTDialect"];
}

def HPSPackWeights : Pass<"hps-pack-weights", "::mlir::ModuleOp"> {
  let summary = "Place every stage's weights and constants in weights.bin";
  let description = [{
    Stages in pipeline order, each one contiguous share of weights.bin: its
    frozen weights (once per name), constants and static shapes in op order,
    each 64-byte aligned. Each gets `hpsrt.weights_offset` (bytes from the
    file's start) and the stage `hpsrt.weights_range` ([begin, end)).
    Trained weights are served by the parameter server and get none. The
    pass-key program (`@pass_keys`) gets its share after all the stages',
    so that it moves none of theirs.
  }];
}

#endif // HETERPS_TARGET_PASSES_TD
