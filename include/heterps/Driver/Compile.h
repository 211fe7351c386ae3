//===- Compile.h - ONNX model to built bundle, as a library -----*- C++ -*-===//
//
// What `heterps compile` does (import -> legalize -> place [-> autodiff] ->
// partition -> lower -> build), callable from other front ends (the Python
// bindings): diagnostics go to a stream the caller chooses, so a caller can
// show them as the CLI does or carry them in an exception.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DRIVER_COMPILE_H
#define HETERPS_DRIVER_COMPILE_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace heterps::driver {

struct CompileOptions {
  std::string model, cluster, strategy, profile, output;
  /// The model's bytes when they are not in the file `model` (which then
  /// only names the model in diagnostics).
  std::optional<std::string> modelBytes;
  double throughput = 0;
  uint64_t seed = 1;
  int64_t batch = 0;
  /// Treat a static leading 1 of the inputs as the batch (--static-batch).
  bool staticBatch = false;
  /// --recurrence-unroll-limit: RNN, GRU and LSTM over at most this many
  /// steps unroll; longer ones run as the recurrence kernel.
  int64_t recurrenceUnrollLimit = 0;
  std::vector<std::string> inputShapes;
  std::vector<std::string> dims; // NAME=N bindings of symbolic dims
  unsigned episodes = 1024;
  /// Training step shapes the plan may take (--pass-steps,
  /// --pass-distinct-fraction, --sparse-staleness; hps-place's options).
  unsigned passSteps = 0;
  double passDistinctFraction = 1.0;
  unsigned sparseStaleness = 0;
  /// --micro-batches: a training step's micro-batches (0: the planner's).
  unsigned microBatches = 0;
  bool keepSources = true;
  /// CPU stages keep conv chains in the native layout (--native-layouts).
  bool nativeLayouts = true;
  /// Chains of elementwise ops run as one generated loop (--fuse-elementwise).
  bool fuseElementwise = true;
  /// --train: a training bundle (autodiff after placement).
  bool train = false;
  std::string loss, label = "label", trainOutput, optimizer = "adagrad";
  /// --freeze: weights (initializers, by name) kept constant in training.
  std::vector<std::string> frozen;
  double learningRate = 0.01, momentum = 0;
  /// --train: "batch" (batch statistics) or "running" (inference-mode).
  std::string batchNorm = "batch";
  /// Print the pass pipeline (heterps-opt's textual form) to the
  /// diagnostics stream (--print-pipeline).
  bool printPipeline = false;
  /// Asked between steps, during the placement search and while the stage
  /// compilers run: true stops the compile, which then fails with
  /// "interrupted" and writes nothing. How a front end that catches Ctrl-C
  /// itself (the CLI's handler, Python's KeyboardInterrupt) stops it.
  std::function<bool()> stopRequested;
};

/// Compiles `options.model` into the bundle directory `options.output`,
/// which appears only when every step succeeded. Errors are printed to
/// `diagnostics` as "FILE:LINE:COL: error: ..." (compiler passes) or
/// "heterps compile: error: ..." (everything else). True on success.
bool compileBundle(const CompileOptions &options,
                   llvm::raw_ostream &diagnostics);

/// Imports, legalizes and places the model as compileBundle would (the
/// options' output and build settings are unused) and returns the plan as
/// `heterps-translate --hps-to-plan` prints it (JSON); nullopt after printing
/// the errors to `diagnostics`.
std::optional<std::string> placeModel(const CompileOptions &options,
                                      llvm::raw_ostream &diagnostics);

} // namespace heterps::driver

#endif // HETERPS_DRIVER_COMPILE_H
