//===- Trainer.h - The training loop of `heterps run --train` ---*- C++ -*-===//
//
// Trains a training bundle on data from a BatchSource: Criteo-format TSV
// (CriteoBatchSource) or one .npy array per bundle input (NpyBatchSource),
// looped over epochs. Every step runs B samples through the Executor (which
// cuts them into micro-batches of the compiled batch) and finishes the step
// on the TrainingServer. Progress lines, evaluation (loss; AUC and log-loss
// for bce, accuracy for softmax_ce), checksummed checkpoints with resume,
// and a parameter dump for comparing runs.
//
// Determinism: the data order, the servers' initialisers (functions of the
// seed and the row id) and the order in which a step's gradients are summed
// are all fixed, so two runs with the same flags end with the same
// parameters, and so does a run killed and resumed from one of its
// checkpoints.
//
// Checkpoints: DIR/step-<k>/ holds ps/ (ParameterServer::save) and
// trainer-state, a text file with the step, samples, data position (the
// source's position text), seed, the bundle's identity (a hash of its
// manifest.json), the size and CRC32 of every file of the checkpoint and a
// CRC32 of itself. It is written into DIR/step-<k>.tmp and renamed into
// place, so a killed run leaves either a complete checkpoint or none; then
// all but the newest --keep-checkpoints older ones are deleted.
//
// For a job supervisor (docs/Distributed.md, "Liveness and fault
// injection"): the run keeps a heartbeat file and watches a stop file as the
// environment says (Heartbeat.h), fails on purpose as HETERPS_FAULT says
// (FaultInjection.h), may be given its length in samples, checkpoints by the
// clock and scales the learning rate, and ends with a `data:` line giving
// the samples trained and the data position.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TRAINER_H
#define HETERPS_RUNTIME_TRAINER_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/CriteoBatchSource.h"
#include "heterps/Runtime/NpyBatchSource.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace heterps::rt::train {

class WorkerGroup;

/// --checkpoint-every: steps ("10") or a time ("30s", "2m", "1h"); one of
/// the two is positive.
struct CheckpointInterval {
  int64_t steps = 0;
  double seconds = 0;
};
/// The checkpoint interval of a run given a checkpoint directory and none
/// (five minutes, as worker 0's clock tells).
constexpr double kDefaultCheckpointSeconds = 300;

/// Parses --checkpoint-every's value; throws Error saying what it takes.
CheckpointInterval parseCheckpointInterval(const std::string &text);

/// The learning-rate scale of every step (--lr-scale X, --lr-warmup
/// FROM:START:END): X, or during a warm-up a linear ramp from FROM after
/// step START to X at step END. The parameter store applies it to every
/// optimizer update (ParameterStore::setLearningRateScale).
struct LearningRateSchedule {
  double scale = 1;
  /// A warm-up when end > start: `from` up to step `start`, then linear.
  double from = 1;
  int64_t start = 0, end = 0;

  bool warmup() const { return end > start; }
  /// The scale of training step `step` (the first step is 1).
  double at(int64_t step) const;
  /// Throws Error naming the flag of a value out of range.
  void check() const;
};
/// Parses --lr-warmup's FROM:START:END into `schedule`; throws Error naming
/// the flag and what it takes.
void parseLearningRateWarmup(const std::string &text,
                             LearningRateSchedule &schedule);

struct TrainerOptions {
  std::string data; // Criteo TSV to train on (looped over epochs)
  std::string eval; // Criteo TSV to evaluate on; empty: no evaluation
  /// Instead of `data`: one .npy array per bundle input (looped over
  /// epochs), and optionally the same for evaluation instead of `eval`.
  std::vector<data::NpyInput> dataInputs, evalInputs;
  /// Visit the training samples in a new random order every epoch (from
  /// the seed; .npy data only).
  bool shuffle = false;
  /// Samples per step, a multiple of the bundle's batch (0: the batch).
  int64_t batch = 0;
  /// The step to train up to (counted from the start, also on resume).
  int64_t steps = 0;
  /// Instead of `steps`: train until this many samples (counted from the
  /// start) are trained. The last step takes what remains, which must be a
  /// whole number of micro-batches (and, in a group, at least one per
  /// worker); its gradients are averaged over its own micro-batches.
  int64_t samples = 0;
  int64_t logEvery = 100;
  /// Also evaluate every this many steps (0: only at the end).
  int64_t evalEvery = 0;
  std::string checkpointDir;
  /// Checkpoint every this many steps or, instead, once this many seconds
  /// have passed since the last checkpoint (or the start) by the leader's
  /// clock, decided at the next step boundary (asynchronous groups: at the
  /// next sync point). Neither, with a checkpointDir: every
  /// kDefaultCheckpointSeconds.
  int64_t checkpointEvery = 0;
  double checkpointEverySeconds = 0;
  int keepCheckpoints = 2;
  bool resume = false;
  uint64_t seed = 1;
  /// Hash buckets per sparse field of Criteo data (0: a single table's rows
  /// / 26).
  int64_t hashBuckets = 0;
  /// Shards of every sparse table (0: one per thread of `threads`).
  size_t psShards = 0;
  /// Keep at most this many rows of each sparse table per shard in memory,
  /// the rest in RocksDB under psStorageDir (0: all in memory). A single
  /// process only.
  int64_t psMemoryRows = 0;
  std::string psStorageDir;
  /// Train in passes of this many steps through a pass cache (PassCache.h):
  /// the pass's sparse rows are loaded once, before its steps, and written
  /// back after them (0: every pull and push goes to the server). Needs the
  /// bundle's pass-key program; a single process only. Empty: as the
  /// bundle's plan says (Bundle::plannedStep), else 0.
  std::optional<int64_t> passSteps;
  /// With passSteps: the most memory the pass cache may hold, the running
  /// pass and the next one prepared beside it (PassCache::setMemoryLimit);
  /// a pass ends early where its next step's rows would not fit. 0: none.
  int64_t passMemoryBytes = 0;
  /// Take passMemoryBytes from the bundle's plan instead
  /// (Bundle::plannedPassMemoryBytes; --pass-memory auto).
  bool passMemoryFromPlan = false;
  /// With passSteps: keep the pass cache in GPU memory (the HBM tier,
  /// CudaPassCache.h) instead of host memory. Empty: as the plan says, else
  /// host memory.
  std::optional<bool> passCacheOnGpu;
  /// With the pass cache in GPU memory: the CUDA devices that share its
  /// rows, each holding the keys that hash to it (--pass-cache-gpus; empty:
  /// device 0 alone).
  std::vector<int> passCacheGpus;
  /// 1: each step's sparse update is applied one step late, overlapping the
  /// next step after its pulls (TrainingServerOptions::sparseStaleness);
  /// checkpoints, evaluations, dumps and pass ends apply it first. A single
  /// process only. Empty: as the plan says, else 0.
  std::optional<int> sparseStaleness;
  /// GPU stages keep the dense parameters they train in GPU memory and run
  /// their optimizer there (TrainingServerOptions::denseCache, stage ABI
  /// 5), bit for bit the host's update; false: their values and gradients
  /// cross to the host server every step. A single process only (an MPI
  /// worker's parameters live in the shared store).
  bool denseParametersOnGpu = true;
  int threads = 0;
  bool gpuStagesOnCpu = false;
  int framesInFlight = 0; ///< ExecutorOptions::framesInFlight.
  /// Where to write every parameter as .npy after training; empty: nowhere.
  std::string dumpParameters;
  /// Where to write each step's mean per-sample loss, one "STEP LOSS" line
  /// per step with 9 significant digits (the progress lines round to 4);
  /// empty: nowhere. A single process only; a resumed run appends.
  std::string lossLog;
  /// Polled between steps: when set (by a signal handler), the trainer
  /// writes a checkpoint (where checkpoints are configured) and stops. So
  /// it does when HETERPS_STOP_FILE appears (Heartbeat.h), reporting
  /// StopReason::Request instead.
  const std::atomic<bool> *stopRequested = nullptr;
  LearningRateSchedule learningRate;
  /// Data-parallel training as one worker of `group` (WorkerGroup.h): the
  /// parameters live in group->store() (psShards is unused), this worker
  /// trains on its slice of every step, and only the leader logs,
  /// evaluates, checkpoints and dumps. Null: a single process.
  WorkerGroup *group = nullptr;
};

/// Parses --pass-memory's value into `options`: "auto" (the plan's), bytes,
/// or a number with K, M, G or T (powers of 1024; "512M", "1.5G"); throws
/// Error saying what it takes.
void parsePassMemory(const std::string &text, TrainerOptions &options);

/// Parses --pass-cache-gpus' value, CUDA device ordinals separated by
/// commas ("0,1,2,3"; one may repeat: those shards share the device), into
/// `options`; throws Error saying what it takes.
void parsePassCacheGpus(const std::string &text, TrainerOptions &options);

/// The steps a pass of the run reads ahead (0: no passes): --pass-steps,
/// else the plan's; an MPI job's workers do not take the single-process
/// shapes.
int64_t passStepsOf(const Bundle &bundle, const TrainerOptions &options);

/// Why a run stopped before its last step: a signal (stopRequested) or the
/// stop file; a signal to any worker wins.
enum class StopReason { None, Signal, Request };

struct TrainSummary {
  int64_t firstStep = 0; // the step training started after (resume)
  int64_t steps = 0;     // the step reached
  int64_t samples = 0;   // samples trained on, from the start
  double seconds = 0;    // wall time of this run's steps
  /// Over the last progress window: the mean loss and, as the loss has
  /// them, the AUC (bce) or the accuracy (softmax_ce); NaN where none (a
  /// run stopped before its first step has none).
  double trainLoss = std::numeric_limits<double>::quiet_NaN(),
         trainAuc = std::numeric_limits<double>::quiet_NaN(),
         trainAccuracy = std::numeric_limits<double>::quiet_NaN();
  bool evaluated = false;
  /// The mean loss, and the AUC and log-loss (bce) or accuracy (softmax_ce).
  double evalLoss = 0, evalAuc = 0, evalLogLoss = 0, evalAccuracy = 0;
  int64_t evalSamples = 0;
  bool interrupted = false;
  StopReason stopReason = StopReason::None;
  std::string lastCheckpoint; // empty if none was written or resumed from
  std::string position;       // the data position after the last step
  /// Where this run's training steps spent their wall time, in seconds:
  /// waiting for their data (and a pass's start), running the stages, and
  /// ending the steps (the server's update, a pass's end); and, inside the
  /// stages, their parameter-server calls, summed over the stage threads.
  struct StepTimes {
    double data = 0, stages = 0, update = 0, serverCalls = 0;
  } stepTimes;
};

// How Criteo data maps onto a bundle (CriteoBatchSource.h).
using data::CtrInputs;
using data::mapCtrInputs;

class Trainer {
public:
  /// Progress, warnings and the summary go to `log`.
  Trainer(const Bundle &bundle, TrainerOptions options, std::ostream &log);
  /// Trains (and evaluates, checkpoints, dumps) as the options say; throws
  /// Error naming what went wrong. A failed step leaves the parameters of
  /// the last finished step, which are checkpointed before the error
  /// propagates if checkpoints are configured.
  TrainSummary run();

private:
  const Bundle &bundle;
  TrainerOptions options;
  std::ostream &log;
};

//===----------------------------------------------------------------------===//
// Checkpoints (used by Trainer; public for tools and tests)
//===----------------------------------------------------------------------===//

/// The flags that change what a run's steps compute, which a checkpoint
/// records so that a resume under others is caught.
struct TrainingRecipe {
  bool shuffle = false;
  /// BatchSource::hashBuckets(): what --hash-buckets resolved to.
  int64_t hashBuckets = 0;
  LearningRateSchedule learningRate;
  int sparseStaleness = 0;
};

/// What a checkpoint records besides the parameter server.
struct TrainerState {
  int64_t step = 0;
  int64_t samples = 0;
  /// BatchSource::position(): "offset=O line=L epoch=E" for Criteo data,
  /// "npy rows=N row=R epoch=E" for .npy arrays.
  std::string position;
  uint64_t seed = 0;
  std::string bundle; // bundleIdentity() of the bundle that trained
  int64_t batch = 0;  // samples per step
  /// Absent from checkpoints written before trainer-state version 2.
  std::optional<TrainingRecipe> recipe;
};

/// The samples of a training step of `bundle` given --batch `batch` (0:
/// the plan's micro-batches on each of `workers`), checked as the trainer
/// checks it: whole micro-batches, at least one for each worker. Throws
/// Error saying what to change. `heterps launch` asks it before any rank
/// starts.
int64_t stepSamples(const Bundle &bundle, int64_t batch, int workers);

/// A stable identity of a bundle: 16 hex digits of a hash of its
/// manifest.json (which names every stage, tensor and parameter), less the
/// plan's solve_seconds, so that compiling a model again with the same
/// command gives the same identity.
std::string bundleIdentity(const Bundle &bundle);
/// The identities a checkpoint of `bundle` may record: bundleIdentity's,
/// then the hash of the whole manifest that checkpoints written before
/// 2026-12-02 recorded.
std::vector<std::string> acceptedBundleIdentities(const Bundle &bundle);

struct CheckpointEntry {
  int64_t step = 0;
  std::string path;
};
/// The complete checkpoints DIR/step-<k> in DIR, oldest first (temporaries
/// are not listed); none if DIR does not exist.
std::vector<CheckpointEntry> listCheckpoints(const std::string &directory);

/// Finishes what a killed run left behind in DIR: removes temporaries
/// (step-<k>.tmp) and puts back a checkpoint moved aside to be replaced
/// (step-<k>.old without step-<k>).
void tidyCheckpointDirectory(const std::string &directory);

/// Renames the checkpoints of DIR past step `after` (all for -1) to
/// damaged-step-<k> (a ".N" added where that name is taken), out of the
/// way of resumes and of the count of checkpoints kept, and returns their
/// new names, comma-separated. A resume sets aside the newer checkpoints
/// it skipped as corrupt: counted among the kept ones, a corrupt step-20
/// pushed out the good step-10 and step-14 once training passed step 20.
std::string setAsideCheckpoints(const std::string &directory, int64_t after);

/// Writes DIR/step-<state.step>: `writeServer(path)` writes the parameter
/// server's checkpoint at `path`, then the trainer state is added and the
/// directory renamed into place (replacing one of the same step); then all
/// but the `keep` newest checkpoints up to this step are deleted. Returns
/// the checkpoint's path.
std::string
writeCheckpoint(const std::string &directory, const TrainerState &state,
                const std::function<void(const std::string &)> &writeServer,
                int keep);

/// Reads and verifies a checkpoint (the trainer state's own checksum, then
/// the size and CRC32 of every file it lists); throws Error naming the file
/// that is missing or corrupt.
TrainerState verifyCheckpoint(const std::string &checkpoint);

struct FoundCheckpoint {
  std::string path; // the checkpoint directory; the server's is path/ps
  TrainerState state;
};
/// Thrown by findResumeCheckpoint where checkpoints exist and none
/// verifies.
struct NoCheckpointVerifies : Error {
  using Error::Error;
};
/// The newest checkpoint of DIR that verifies. A corrupt one is named in a
/// warning on `warnings` and the previous one tried; none at all is
/// nullopt; checkpoints that all fail (NoCheckpointVerifies), or a verified
/// one written by another bundle (one recording none of `identities`, the
/// bundle's acceptedBundleIdentities), are an Error.
std::optional<FoundCheckpoint>
findResumeCheckpoint(const std::string &directory,
                     const std::vector<std::string> &identities,
                     std::ostream &warnings);

/// "2.31e4": a rate with three significant digits, as progress lines print.
std::string formatRate(double value);

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_TRAINER_H
