//===- Passes.td - HeterPS passes --------------------------*- tablegen -*-===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_TD
#define HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HPSLegalizeONNX : Pass<"hps-legalize-onnx", "::mlir::ModuleOp"> {
  let summary = "Rewrite generic hps.onnx_node ops into hps layer ops";
  let description = [{
    Applies one pattern per (ONNX op, opset range) and folds shape arithmetic
    (Shape / Gather / Concat / ConstantOfShape / Unsqueeze chains on
    constants) so that reshape targets and weights become static. Nodes no
    pattern covers stay `hps.onnx_node`; with `strict` they are errors.
  }];
  let dependentDialects = ["::heterps::hps::HPSDialect"];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Fail when any hps.onnx_node remains after legalization">,
    Option<"recurrenceUnrollLimit", "recurrence-unroll-limit", "int64_t",
           /*default=*/"512",
           "RNN, GRU and LSTM over at most this many steps unroll into "
           "gemms and elementwise ops (which train and run on every device); "
           "longer ones become hps.recurrence">,
  ];
}

def HPSBoundExtents : Pass<"hps-bound-extents", "::mlir::ModuleOp"> {
  let summary = "Check who reads data-dependent extents; outputs carry their "
                "counts";
  let description = [{
    hps.non_zero, hps.unique and hps.non_max_suppression give results whose
    extent along one axis is known only at run time: the type has the
    capacity and the op's `count` result the valid extent. This pass follows
    each such padded value through the ops that read it. Ops that treat the
    positions along the padded axis independently (elementwise ops, casts,
    transposes, reshapes that keep the axis, gathers by padded indices,
    reductions and slices over other axes, ...) pass the padding on; any
    other reader would mix padding into valid data and is an error naming
    it. A padded value returned by @main gets `hps.extent_axis` and
    `hps.extent_output` (the index of a new result, marked
    `hps.extent_count`, holding the count), so the runtime trims it.
  }];
}

def HPSMarkBatchExtentReads
    : Pass<"hps-mark-batch-extent-reads", "::mlir::ModuleOp"> {
  let summary = "Mark the outputs computed with the batch's extent as data";
  let description = [{
    The import binds the batch to the compiled extent, so legalization
    folds a Shape or Size of a batched value to that number. Used as a
    Reshape target or another operand that only shapes a result, it is
    right for every micro-batch; computed with as data (`x * Shape(x)[0]`,
    a Range over it, an output of it) it would give a call of another
    sample count the compiled batch's answer. Run before legalization,
    while the reads are ONNX nodes, this pass follows which elements of
    each shape vector hold the batch's extent through the shape arithmetic
    and marks the @main results a data use reaches with
    `hps.mixes_samples` (see --hps-mark-sample-mixing).
  }];
}

def HPSMarkSampleMixing : Pass<"hps-mark-sample-mixing", "::mlir::ModuleOp"> {
  let summary = "Mark the outputs that mix the samples of a batch";
  let description = [{
    The runtime cuts a call's samples into micro-batches of the compiled
    batch and pads the last one: right only where each output sample is
    computed from the same input sample alone. This pass follows the
    samples of @main's batched inputs (axis 0) through the ops that keep
    positions apart (PositionFollower: the rules of --hps-bound-extents).
    A result that mixes them (a softmax or reduction over the batch, a
    Shape of a batched value, an unbatched result computed from samples)
    gets `hps.mixes_samples`, a string saying which op mixes them; the
    runtime then runs the model on whole batches only.
  }];
}

def HPSPlace : Pass<"hps-place", "::mlir::ModuleOp"> {
  let summary = "Give every layer a device class of the cluster";
  let description = [{
    Extracts the layer graph of @main (FLOPs, bytes, parameters per sample),
    runs a scheduling strategy of the plain C++ scheduler against the cost
    model (minimise cost per million samples subject to throughput >=
    target), writes `device` on every placeable op and records the plan as
    the module attribute `hps.plan`. An unreachable target is reported as a
    warning naming the bottleneck layer and the best reachable throughput,
    and the plan says `feasible = false`. A plan the cluster cannot run at
    all (a stage beyond its class's memory, or more devices of a class than
    the cluster has) is an error naming the stage and the figures, unless
    `allow-unrunnable` keeps it for inspection. A training plan may also take a
    step shape the options allow (passes through a pass cache, stale sparse
    pushes) where the cost model prices it better; the plan then records
    `pass_steps` and `sparse_staleness`, which training follows. A training
    plan also records `micro_batches`, the micro-batches per step that let
    its stages overlap enough to reach the target (or 0.9 of the plan's
    throughput), and `step_throughput`, that of such steps; training takes
    steps of that many micro-batches unless told otherwise.
  }];
  let dependentDialects = ["::heterps::hps::HPSDialect"];
  let options = [
    Option<"clusterFile", "cluster", "std::string", /*default=*/"",
           "Cluster description (YAML), e.g. clusters/paper.yaml">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"rl\"",
           "rl | dp | brute | greedy | cpu-only | gpu-only | sparse-on-cpu">,
    Option<"throughput", "throughput", "double", /*default=*/"0",
           "Target training throughput in samples per second">,
    Option<"seed", "seed", "uint64_t", /*default=*/"1",
           "Seed of the rl strategy (runs are deterministic)">,
    Option<"batch", "batch", "int64_t", /*default=*/"256",
           "Samples per pipeline step; dynamic dims are bound to it">,
    Option<"episodes", "episodes", "unsigned", /*default=*/"1024",
           "Episodes of REINFORCE for the rl strategy">,
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Profile database (JSON) of measured layer times">,
    Option<"inference", "inference", "bool", /*default=*/"false",
           "Plan for inference (forward only) instead of training">,
    Option<"passSteps", "pass-steps", "unsigned", /*default=*/"0",
           "Also price training in passes of this many steps through a "
           "pass cache, and plan with them where that is better">,
    Option<"passDistinctFraction", "pass-distinct-fraction", "double",
           /*default=*/"1.0",
           "Of the keys a pass pulls, the share that are distinct rows "
           "(a training run's `passes:` line reports it)">,
    Option<"sparseStaleness", "sparse-staleness", "unsigned",
           /*default=*/"0",
           "Let sparse pushes lag at most this many steps (0 or 1) where "
           "that makes the plan better">,
    Option<"microBatches", "micro-batches", "unsigned", /*default=*/"0",
           "Training: micro-batches per step (0: the fewest that reach the "
           "target, at most 32)">,
    Option<"allowUnrunnable", "allow-unrunnable", "bool",
           /*default=*/"false",
           "Keep a plan the cluster cannot run (memory, device counts) with "
           "a warning instead of failing, to inspect it">,
  ];
}

def HPSPartition : Pass<"hps-partition", "::mlir::ModuleOp"> {
  let summary = "Split a placed @main into pipeline stage functions";
  let description = [{
    Groups maximal runs of same-class layers (in topological order) into
    stages and outlines each as `func.func @stage_K` carrying `hps.device`,
    `hps.replicas` (from the plan) and `hps.stage`. Every tensor crossing a
    stage boundary gets an explicit `hps.send` / `hps.recv` pair on its own
    channel; sparse embedding lookups become `hps.ps_pull` from the parameter
    server. Weights and constants are cloned into the stages that read them.
    `@main` keeps the model's signature: it sends the inputs and receives the
    outputs, and lists the stages in `hps.pipeline`.
  }];
  let dependentDialects = ["::heterps::hps::HPSDialect"];
}

def HPSVerifyPartition : Pass<"hps-verify-partition", "::mlir::ModuleOp"> {
  let summary = "Check that placement and partition agree";
  let description = [{
    Every op of a stage runs on the stage's device class, every channel has
    exactly one sender and one receiver of the same type, every stage in the
    plan exists with its replica count, and no layer is left in @main. The
    pass-key program (`hps.pass_keys`, from `--hps-outline-pass-keys`) is
    skipped: its channels are the runtime's, not the pipeline's.
  }];
}

def HPSOutlinePassKeys : Pass<"hps-outline-pass-keys", "::mlir::ModuleOp"> {
  let summary = "Outline the ids of every parameter-server pull as a CPU "
                "program of the bundle inputs";
  let description = [{
    For a partitioned training module (`hps.training`): traces the ids of
    every `hps.ps_pull` of the pipeline's stages (pipeline order, op order)
    back through the stages' ops and channels to `@main`'s graph inputs, and
    clones that slice into `func.func @pass_keys()` on `cpu.host`, placed
    after the stages. It receives the inputs it needs on channels
    `pass_keys.inK` (their bundle input indices in `hps.pass_key_inputs`),
    computes each value once, and sends each pull's ids on
    `pass_keys.outK` (their tables in `hps.pass_keys`, one per pull). The
    runtime's pass cache runs it over a pass's batches to learn every key
    the pass pulls before running the stages.

    A slice may hold constants, frozen weights and pure hps ops without
    regions. Where some pull's ids depend on anything else (another pull, a
    push, a trained or server-updated weight, an op with regions or side
    effects) no program is made: the module attribute
    `hps.pass_keys_unavailable` says why, naming the table and the op. That
    is not an error; the bundle still trains without a pass cache. A module
    without pulls, or not training, is left as it is.
  }];
  let dependentDialects = ["::heterps::hps::HPSDialect"];
}

def HPSAutodiff : Pass<"hps-autodiff", "::mlir::ModuleOp"> {
  let summary = "Append the loss and the reverse-mode backward pass to @main";
  let description = [{
    Trains the chosen result of `@main` against a new label input: appends
    the label argument and the per-sample `hps.loss` result, seeds the
    backward pass with `hps.loss_grad` and sweeps @main's ops in reverse,
    emitting each active op's gradient rule as ordinary hps ops placed on the
    forward op's device. Every floating `hps.weight` that reaches the loss
    is marked `hps.trainable` and its gradient pushed with
    `hps.dense_push`; embedding tables push row gradients with
    `hps.ps_push`. Weights named in `frozen`, and a weight that is the
    exponent of an `hps.pow`, stay constants. The loss, label, prediction and optimizer settings are
    recorded as the module attribute `hps.training`. Runs after
    `--hps-place` so that backward ops run where their forward ops run.

    With `batch-norm=batch` (the default) every `hps.batch_norm` whose
    running statistics are `hps.weight`s trains the way PyTorch does: it
    normalizes with the batch's mean and biased variance, computed from
    ordinary hps ops, while a training flag (the weight
    "hps.batch_statistics", served as 1 while training and 0 while
    evaluating) switches back to the running statistics for evaluation.
    The running statistics are pushed the batch mean and unbiased variance
    and marked `hps.update = "moving-average"` with the ONNX momentum, so
    the parameter server keeps their moving averages. `batch-norm=running`
    keeps inference-mode batch norm (running statistics as constants).
  }];
  let dependentDialects = ["::heterps::hps::HPSDialect"];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"",
           "Training loss: bce | softmax-ce | mse (required)">,
    Option<"label", "label", "std::string", /*default=*/"\"label\"",
           "Name of the new label input of @main">,
    Option<"output", "output", "std::string", /*default=*/"",
           "Name of the @main result to train (default: the first)">,
    Option<"optimizer", "optimizer", "std::string",
           /*default=*/"\"adagrad\"", "sgd | adam | adagrad">,
    Option<"learningRate", "learning-rate", "double", /*default=*/"0.01",
           "Learning rate of the optimizer">,
    Option<"momentum", "momentum", "double", /*default=*/"0",
           "Momentum of sgd">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "First-moment decay of adam">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Second-moment decay of adam">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8",
           "Denominator epsilon of adam and adagrad">,
    Option<"initialAccumulator", "initial-accumulator", "double",
           /*default=*/"0.1", "Initial squared-gradient sum of adagrad">,
    ListOption<"frozen", "frozen", "std::string",
               "Weights (initializers, by name) kept constant: not trained">,
    Option<"batchNorm", "batch-norm", "::heterps::hps::BatchNormMode",
           /*default=*/"::heterps::hps::BatchNormMode::Batch",
           "Batch norm statistics while training: batch | running",
           [{::llvm::cl::values(
               clEnumValN(::heterps::hps::BatchNormMode::Batch, "batch",
                          "batch statistics; running ones kept as moving "
                          "averages for evaluation"),
               clEnumValN(::heterps::hps::BatchNormMode::Running, "running",
                          "the running statistics, as constants"))}]>,
  ];
}

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_PASSES_TD
