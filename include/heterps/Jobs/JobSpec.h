//===- JobSpec.h - The job file of an elastic training job ------*- C++ -*-===//
//
// A training job as `heterps job run` takes it (docs/Jobs.md): the bundle
// and data, the job's length in samples, its initial shape and the elastic
// ranges it may be resized within, the learning-rate rule for batch
// changes, and the checkpoint, restart and backend policies. Plain C++, no
// MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_JOBS_JOBSPEC_H
#define HETERPS_JOBS_JOBSPEC_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heterps::jobs {

/// How many workers, parameter-server shards and samples per step a job
/// runs with.
struct JobShape {
  int workers = 1;
  int shards = 1;
  int64_t batch = 0;
  bool operator==(const JobShape &other) const {
    return workers == other.workers && shards == other.shards &&
           batch == other.batch;
  }
  bool operator!=(const JobShape &other) const { return !(*this == other); }
  /// "2 workers, 1 shard, batch 512".
  std::string describe() const;
};

struct IntRange {
  int64_t min = 0, max = 0;
  bool contains(int64_t value) const { return value >= min && value <= max; }
};

/// How the learning rate follows the global batch: scaled by
/// batch / reference (linear), by its square root (sqrt), or not at all.
enum class LearningRateRule { Linear, Sqrt, None };

const char *learningRateRuleName(LearningRateRule rule);

/// The learning-rate scale of a step of `batch` samples when the bundle's
/// rate was chosen for `referenceBatch`.
double learningRateScale(LearningRateRule rule, int64_t batch,
                         int64_t referenceBatch);

enum class BackendKind { Mpirun, Slurm };

const char *backendName(BackendKind kind);

struct BackendSpec {
  BackendKind kind = BackendKind::Mpirun;
  /// mpirun: hosts and their slots ("host slots=N" lines); empty: this
  /// machine only.
  std::string hostfile;
  std::vector<std::string> mpirunArgs;
  /// slurm: where to submit, and anything else sbatch should get.
  std::string partition;
  int nodes = 0; // 0: as many as the ranks need, up to every node
  std::vector<std::string> sbatchArgs;
  /// Seconds before a time limit or preemption at which Slurm signals the
  /// job, so it checkpoints first.
  double signalLeadSeconds = 60;
};

struct CheckpointPolicy {
  /// As `heterps run --checkpoint-every` takes it: steps ("10") or a time
  /// ("30s", "2m").
  std::string every = "100";
  int keep = 3;
};

struct RestartPolicy {
  int maxRestarts = 3;
  double backoffSeconds = 1; // before the first restart; doubles
  double maxBackoffSeconds = 60;
  /// A job whose step has not advanced for this long is hung.
  double heartbeatTimeoutSeconds = 60;
  /// Failures on one host after which it is left out of the job.
  int excludeHostAfter = 2;
  /// How long to wait for capacity when fewer than the minimum of workers
  /// fit, before giving up.
  double capacityWaitSeconds = 120;
};

struct JobSpec {
  std::string name;
  /// Absolute paths (relative ones in the file are from the file's
  /// directory).
  std::string bundle, data, eval;
  /// The job's length: samples trained in all, across every shape.
  int64_t samples = 0;
  /// Extra flags of `heterps run --train` for every worker.
  std::vector<std::string> trainArgs;
  bool asynchronous = false;
  int64_t staleness = 2;
  JobShape initial;
  IntRange workers, shards, batch;
  /// The gradient noise scale in samples (McCandlish et al.'s B_noise),
  /// when the user knows it: how much a larger batch loses per sample.
  /// The autoscaler values batch b at (noise + initial) / (noise + b) per
  /// sample; 0: unknown (it assumes the initial batch).
  double gradientNoiseScale = 0;
  LearningRateRule learningRateRule = LearningRateRule::Linear;
  int64_t warmupSteps = 0;
  CheckpointPolicy checkpoint;
  RestartPolicy restart;
  BackendSpec backend;

  /// Why `shape` is not one this job may take ("" when it may):
  /// within the ranges, the batch a whole number of micro-batches with at
  /// least one per worker.
  std::string checkShape(const JobShape &shape, int64_t microBatch) const;
};

/// Reads and checks a job file. Errors name the file, line and column and
/// the field. `microBatch` is the bundle's compiled batch (0: not checked).
llvm::Expected<JobSpec> parseJobFile(const std::string &path);

/// What parseJobFile cannot check alone: the shapes against the bundle's
/// micro-batch, and the length.
llvm::Error checkJobAgainstBundle(const JobSpec &job, int64_t microBatch);

/// Parses "30", "30s", "2m", "1h", "250ms" as seconds; nullopt if malformed.
std::optional<double> parseDuration(const std::string &text);

/// The most workers or parameter-server shards a job runs (heterps launch
/// takes as many), its largest batch, and the most of a count such as
/// max_restarts or keep (an int, and past any use).
inline constexpr int64_t kMostRanks = 4096;
inline constexpr int64_t kMostBatch = 100000000;
inline constexpr int64_t kMostCount = 1000000;

/// Why `text` is not a checkpoint interval as `heterps run
/// --checkpoint-every` takes it (steps 1 to 2^53, or a positive time such
/// as 30s or 2m); empty when it is.
std::string checkpointIntervalError(const std::string &text);

} // namespace heterps::jobs

#endif // HETERPS_JOBS_JOBSPEC_H
