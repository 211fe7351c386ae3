//===- Pipelines.h - The compile pipeline -----------------------*- C++ -*-===//
//
// What `heterps compile` runs on an imported model, as named pipelines:
// heterps-opt runs the same passes with the same options, so any step of a
// compile can be reproduced and bisected. `heterps compile
// --print-pipeline` prints the textual pipeline it runs.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_PIPELINES_H
#define HETERPS_DIALECT_HPS_TRANSFORMS_PIPELINES_H

#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <functional>
#include <string>

namespace heterps::hps {

struct CompilePipelineOptions
    : public mlir::PassPipelineOptions<CompilePipelineOptions> {
  // By default every RNN, GRU and LSTM runs as hps.recurrence (1.8x to 4.9x
  // faster than the unrolled steps, and compiled 1.7x to 25x faster, over
  // 16 to 512 steps), in training too, where its adjoint is one
  // hps.recurrence_grad.
  Option<int64_t> recurrenceUnrollLimit{
      *this, "recurrence-unroll-limit",
      llvm::cl::desc("Unroll recurrences of at most this many steps"),
      llvm::cl::init(0)};
  Option<std::string> cluster{*this, "cluster",
                              llvm::cl::desc("Cluster description (YAML)")};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("Placement method"),
                               llvm::cl::init("rl")};
  Option<double> throughput{*this, "throughput",
                            llvm::cl::desc("Target samples per second"),
                            llvm::cl::init(0)};
  Option<uint64_t> seed{*this, "seed", llvm::cl::desc("Placement seed"),
                        llvm::cl::init(1)};
  Option<int64_t> batch{*this, "batch",
                        llvm::cl::desc("Batch the plan is costed for"),
                        llvm::cl::init(256)};
  Option<unsigned> episodes{*this, "episodes",
                            llvm::cl::desc("Episodes of the rl method"),
                            llvm::cl::init(1024)};
  Option<std::string> profile{*this, "profile",
                              llvm::cl::desc("Layer profile database")};
  Option<unsigned> passSteps{
      *this, "pass-steps",
      llvm::cl::desc("Also plan training in passes of this many steps"),
      llvm::cl::init(0)};
  Option<double> passDistinctFraction{
      *this, "pass-distinct-fraction",
      llvm::cl::desc("Share of a pass's keys that are distinct rows"),
      llvm::cl::init(1.0)};
  Option<unsigned> sparseStaleness{
      *this, "sparse-staleness",
      llvm::cl::desc("Let sparse pushes lag at most this many steps"),
      llvm::cl::init(0)};
  Option<unsigned> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Training: micro-batches per step (0: the planner's)"),
      llvm::cl::init(0)};
  Option<bool> partition{
      *this, "partition",
      llvm::cl::desc("Partition into stages after placing (false: place "
                     "only, as `heterps place` does)"),
      llvm::cl::init(true)};
  Option<bool> train{*this, "train",
                     llvm::cl::desc("Append the loss and backward pass"),
                     llvm::cl::init(false)};
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("bce | softmax-ce | mse")};
  Option<std::string> label{*this, "label",
                            llvm::cl::desc("Name of the label input"),
                            llvm::cl::init("label")};
  Option<std::string> output{*this, "output",
                             llvm::cl::desc("The result to train")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd | adam | adagrad"),
                                llvm::cl::init("adagrad")};
  Option<double> learningRate{*this, "learning-rate",
                              llvm::cl::desc("Learning rate"),
                              llvm::cl::init(0.01)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("Momentum of sgd"),
                          llvm::cl::init(0)};
  ListOption<std::string> frozen{
      *this, "frozen",
      llvm::cl::desc("Training: weights (by name) kept constant")};
  Option<BatchNormMode> batchNorm{
      *this, "batch-norm",
      llvm::cl::desc("Batch norm statistics while training: batch | running"),
      llvm::cl::init(BatchNormMode::Batch),
      llvm::cl::values(clEnumValN(BatchNormMode::Batch, "batch",
                                  "batch statistics, PyTorch's training"),
                       clEnumValN(BatchNormMode::Running, "running",
                                  "the running statistics, as constants"))};
};

/// --hps-legalize-onnx (strict), --hps-bound-extents and
/// --hps-mark-sample-mixing.
void buildLegalizePipeline(mlir::OpPassManager &pm,
                           const CompilePipelineOptions &options);

/// --hps-place, then with `partition` [--hps-autodiff when training]
/// --hps-partition and --hps-verify-partition. The placement search asks
/// `stopRequested`, when given, as it goes.
void buildPlanPipeline(mlir::OpPassManager &pm,
                       const CompilePipelineOptions &options,
                       std::function<bool()> stopRequested = {});

/// Registers --hps-compile-pipeline (both of the above) with heterps-opt.
void registerHPSPipelines();

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_PIPELINES_H
