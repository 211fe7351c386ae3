//===- Commands.h - The subcommands of the heterps driver -------*- C++ -*-===//

#ifndef HETERPS_TOOLS_HETERPS_COMMANDS_H
#define HETERPS_TOOLS_HETERPS_COMMANDS_H

#include "Distributed.h"

#include "heterps/Driver/Compile.h"
#include "heterps/Driver/StageBuild.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heterps::driver {

/// import -> legalize -> place -> partition -> bundle -> build; 0 on success.
int compile(const CompileOptions &options);

struct RunOptions {
  std::string bundle, outputDir;
  std::vector<std::string> inputs; // NAME=FILE
  int threads = 0;
  bool gpuStagesOnCpu = false;
  int framesInFlight = 0;
  unsigned repeat = 0;
};

/// Runs a bundle on input files and writes NAME.npy outputs; 0 on success.
int run(const RunOptions &options);

/// `heterps run BUNDLE --train ...` (see docs/CLI.md).
struct TrainOptions {
  std::string bundle, data, eval, checkpointDir, dumpParameters, lossLog;
  /// --data-input / --eval-input: NAME=FILE.npy, one per bundle input.
  std::vector<std::string> dataInputs, evalInputs;
  int64_t batch = 0, steps = 0, logEvery = 100, evalEvery = 0;
  /// --samples: the run's length in samples instead of --steps (0: none).
  int64_t samples = 0;
  /// --checkpoint-every: steps ("10") or a time ("30s"); "" for none.
  std::string checkpointEvery;
  int64_t hashBuckets = 0;
  /// --lr-scale and --lr-warmup FROM:START:END ("" for none).
  double learningRateScale = 1;
  std::string learningRateWarmup;
  int keepCheckpoints = 2;
  bool resume = false;
  uint64_t seed = 1;
  unsigned psShards = 0; // 0: one per thread
  /// --ps-memory-rows / --ps-storage-dir: the RocksDB tier (0: none).
  int64_t psMemoryRows = 0;
  std::string psStorageDir;
  /// --pass-steps: steps per pass of the pass cache (0: none; empty: the
  /// plan's).
  std::optional<int64_t> passSteps;
  /// --pass-memory: the pass cache's memory bound (empty: none).
  std::string passMemory;
  /// --pass-cache-device gpu: the pass cache in GPU memory (empty: the
  /// plan's).
  std::optional<bool> passCacheOnGpu;
  /// --pass-cache-gpus: the pass cache's CUDA devices (empty: device 0).
  std::optional<std::string> passCacheGpus;
  /// --sparse-staleness: sparse updates one step late (0 or 1; empty: the
  /// plan's).
  std::optional<int> sparseStaleness;
  /// --dense-parameters-on-gpu.
  bool denseParametersOnGpu = true;
  int threads = 0;
  bool gpuStagesOnCpu = false;
  int framesInFlight = 0;
  /// --mpi-worker: train as a worker rank of an MPI job (heterps launch).
  bool mpiWorker = false;
  bool shuffle = false;
  /// --consistency / --staleness of an MPI worker.
  ConsistencyOptions consistency;
};

/// Trains a training bundle on Criteo or .npy data; 0 on success (also when
/// HETERPS_STOP_FILE stopped it, after a checkpoint), 1 on an error, 128 +
/// the signal when SIGINT or SIGTERM stopped it (after a checkpoint).
int train(const TrainOptions &options);

/// Why `workers` workers cannot train steps of `batch` samples (0: the
/// plan's) of the bundle at `bundle`, or "" (the trainer's own check; also
/// "" for a bundle that does not open, which the ranks then report).
std::string trainStepError(const std::string &bundle, int64_t batch,
                           int workers);

struct GradCheckOptions {
  std::string bundle;
  std::vector<std::string> inputs; // NAME=FILE; others are drawn at random
  uint64_t seed = 1;
  int directions = 3;
  /// Step along each unit-norm direction, and the largest relative error
  /// accepted (relative to max(|analytic|, |numeric|, floor)).
  double epsilon = 1e-2, tolerance = 2e-2, floor = 1e-4;
  int threads = 0;
  bool gpuStagesOnCpu = false;
};

/// Compares a training bundle's gradients with finite differences of its
/// forward pass; 0 when every parameter agrees.
int gradcheck(const GradCheckOptions &options);

/// Writes synthetic CTR data with its ground-truth AUC; 0 on success.
/// `modelSeed` fixes the hidden model (a train and an eval file share it);
/// `maxVocab` > 0 caps every field's vocabulary.
int datagen(int64_t rows, uint64_t seed, const std::string &output,
            std::optional<uint64_t> modelSeed, int64_t maxVocab);

/// True when `command` or any of its `args` asks for help (--help, -h):
/// the job and elastic families print their usage then, to stdout.
bool isHelpRequest(llvm::StringRef command,
                   const std::vector<std::string> &args);

/// "heterps <command>: error: " + message, on stderr.
void reportError(llvm::StringRef command, const llvm::Twine &message);

} // namespace heterps::driver

#endif // HETERPS_TOOLS_HETERPS_COMMANDS_H
