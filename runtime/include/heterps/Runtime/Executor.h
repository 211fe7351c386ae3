//===- Executor.h - Runs a bundle's stages as a pipeline --------*- C++ -*-===//
//
// One process: every replica of every stage is a thread with its own stage
// instance; micro-batches ("frames") flow through bounded queues, so the
// stages work on different micro-batches at the same time. A frame carries
// the buffers of every channel, so stages on any device class and any
// replica order compose; the caller gets outputs back in input order.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_EXECUTOR_H
#define HETERPS_RUNTIME_EXECUTOR_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace heterps::rt {

/// The server side of a training run: what stages reach through the
/// training callbacks of HpsStageConfig (StageABI.h), with the same meaning
/// and error convention. `context` is passed back to every callback.
struct StageServer {
  void *context = nullptr;
  const float *(*lookupParameter)(void *context, const char *name) = nullptr;
  int (*pullRows)(void *context, const char *table, const int64_t *ids,
                  size_t count, float *rows, char *error,
                  size_t errorBytes) = nullptr;
  int (*pushRows)(void *context, const char *table, const int64_t *ids,
                  size_t count, const float *gradients, char *error,
                  size_t errorBytes) = nullptr;
  int (*pushDense)(void *context, const char *name, const float *gradient,
                   size_t count, char *error, size_t errorBytes) = nullptr;
  /// Optional (GPU stages; null: rows come through the host).
  int (*rowsOnDevice)(void *context, const char *table) = nullptr;
  int (*pullRowsToDevice)(void *context, const char *table, const int64_t *ids,
                          size_t count, float *rows, char *error,
                          size_t errorBytes) = nullptr;
  /// Optional (null: stages upload parameters on every run).
  uint64_t (*parameterVersion)(void *context) = nullptr;
  /// Optional, with rowsOnDevice (null: gradients come through the host).
  int (*pushRowsFromDevice)(void *context, const char *table,
                            const int64_t *ids, size_t count,
                            const float *gradients, char *error,
                            size_t errorBytes) = nullptr;
  /// Optional, both or neither (GPU stages; null: dense parameters and
  /// their gradients come through the host).
  int (*parameterOnDevice)(void *context, const char *name,
                           const float **values, char *error,
                           size_t errorBytes) = nullptr;
  int (*pushDenseFromDevice)(void *context, const char *name,
                             const float *gradient, size_t count, char *error,
                             size_t errorBytes) = nullptr;
  /// Optional, with pullRowsToDevice (null: ids come through the host).
  int (*pullRowsByDeviceIds)(void *context, const char *table,
                             const int64_t *ids, size_t count, float *rows,
                             char *error, size_t errorBytes) = nullptr;
};

/// Which micro-batch the calling thread is running a stage on, valid inside
/// the callbacks of a StageServer (a stage calls them from the thread that
/// runs it). Replicas push concurrently in no fixed order; a server that
/// sums pushes in (microBatch, stage) order instead of arrival order gets
/// the same floats on every run. Outside a stage both are -1.
struct MicroBatchContext {
  int64_t microBatch = -1; // index within the current Executor::run call
  int stage = -1;
};
MicroBatchContext currentMicroBatch();

/// Sets the calling thread's MicroBatchContext for its lifetime. The
/// executor opens one around every stage run; a driver calling a server's
/// callbacks by itself (tests, tools) can too.
class MicroBatchScope {
public:
  MicroBatchScope(int64_t microBatch, int stage);
  ~MicroBatchScope();
  MicroBatchScope(const MicroBatchScope &) = delete;
  MicroBatchScope &operator=(const MicroBatchScope &) = delete;

private:
  MicroBatchContext saved;
};

/// Stages that run elsewhere and schedule themselves (the stage ranks of an
/// MPI job, MpiTraining.h). An executor given one loads no stage and starts
/// no thread: per call it starts the call's micro-batches on the remote
/// stages, sends each micro-batch's channels that come from outside the
/// stages and receives those that leave them. The remote stages pass every
/// other channel among themselves and run each micro-batch as soon as its
/// inputs are there, so the caller is in no stage's critical path and
/// several micro-batches are in flight across the stages.
class RemoteStages {
public:
  virtual ~RemoteStages() = default;
  /// Starts micro-batches [0, count) of one call on every stage.
  virtual void begin(int64_t count) = 0;
  /// Sends micro-batch `microBatch`'s channels whose producer is the caller
  /// (ChannelSpec::from < 0); `channels` holds every channel's buffer by
  /// channel index. The buffers may be reused once this returns.
  virtual void sendInputs(int64_t microBatch, const char *const *channels) = 0;
  /// Receives micro-batch `microBatch`'s channels whose consumer is the
  /// caller (ChannelSpec::to < 0) into `channels`. False when a stage failed
  /// on this micro-batch; end() then returns the error.
  virtual bool receiveOutputs(int64_t microBatch, char *const *channels) = 0;
  /// Waits until every stage has finished the call: "" or the first error,
  /// naming the stage.
  virtual std::string end() = 0;
};

/// The most kernel threads a stage replica (or a trainer) may be given.
constexpr int kMostThreadsPerStage = 4096;

struct ExecutorOptions {
  /// Kernel threads of each stage replica (0: backend default; at most
  /// kMostThreadsPerStage).
  int threadsPerStage = 0;
  /// Run GPU-class stages with their CPU build instead of failing when no
  /// GPU is usable.
  bool gpuStagesOnCpu = false;
  /// Micro-batches in flight at once (bounded queues between stages); 0:
  /// one per stage replica and one more, at least 4, so that a step of as
  /// many micro-batches keeps every replica working, as the plan's step
  /// is priced (docs/Planning.md, "The step"); beyond 4 only within an
  /// eighth of the machine's memory.
  int framesInFlight = 0;
  /// Training: the parameter server the stages read dense parameters and
  /// sparse rows from and push gradients to; it must outlive the executor.
  /// Null for inference (the training callbacks are then null and a training
  /// stage reports that it needs a training run).
  const StageServer *server = nullptr;
  /// Run every stage through this instead of in-process (it must outlive
  /// the executor); `server`, threads and GPU options then do not apply,
  /// and `framesInFlight` bounds how far the caller sends ahead.
  RemoteStages *remote = nullptr;
};

/// The bytes of each buffer a stage program reads and writes, in the order
/// of its C ABI's arrays (StageABI.h's hps_stage_buffers).
struct StageBuffers {
  std::vector<uint64_t> inputs, outputs;
};

/// The stage ABI's entry points of a loaded stage library (Executor.cpp).
struct StageEntryPoints;

/// "" when the stage library `path` loads as a run loads it (a stage
/// program of a stage ABI this runtime takes), else why not. The library
/// is unloaded again.
std::string stageLibraryError(const std::string &path);

/// The replicas of one stage, loaded and created in this process: what the
/// executor runs per stage, and what a stage rank of an MPI job runs alone.
class StageProgram {
public:
  /// Loads stage `index` of `bundle` (its GPU or CPU build as `options`
  /// say) and creates `replicas` instances; throws Error naming the stage,
  /// also when its library (stage ABI 6 and later) does not take buffers of
  /// its channels' bytes.
  StageProgram(const Bundle &bundle, int index, const ExecutorOptions &options,
               int replicas);
  /// The same for a program of `bundle` that is not a pipeline stage (the
  /// pass-key program), whose buffers are `buffers`; `spec` must outlive
  /// this.
  StageProgram(const Bundle &bundle, const StageSpec &spec,
               const StageBuffers &buffers, const ExecutorOptions &options,
               int replicas);
  ~StageProgram();
  StageProgram(const StageProgram &) = delete;
  StageProgram &operator=(const StageProgram &) = delete;

  const StageSpec &spec() const { return *stage; }
  /// Runs replica `replica` on a micro-batch; "" or the error, naming the
  /// stage. Sets the thread's MicroBatchContext for the stage's callbacks.
  std::string run(int replica, int64_t microBatch, const void *const *inputs,
                  void *const *outputs);

private:
  const Bundle &bundle;
  const StageSpec *stage;
  ExecutorOptions options;
  std::unique_ptr<StageEntryPoints> library;
  std::vector<void *> instances;

  /// Throws Error naming the stage unless its library takes `buffers`
  /// (libraries before stage ABI 6 do not say and are trusted).
  void checkBuffers(const StageBuffers &buffers) const;

  static const void *lookupTable(void *self, const char *name);
  static const float *lookupParameter(void *self, const char *name);
  static int pullRows(void *self, const char *table, const int64_t *ids,
                      size_t count, float *rows, char *error,
                      size_t errorBytes);
  static int pushRows(void *self, const char *table, const int64_t *ids,
                      size_t count, const float *gradients, char *error,
                      size_t errorBytes);
  static int pushDense(void *self, const char *name, const float *gradient,
                       size_t count, char *error, size_t errorBytes);
  static int rowsOnDevice(void *self, const char *table);
  static uint64_t parameterVersion(void *self);
  static int pullRowsToDevice(void *self, const char *table, const int64_t *ids,
                              size_t count, float *rows, char *error,
                              size_t errorBytes);
  static int pushRowsFromDevice(void *self, const char *table,
                                const int64_t *ids, size_t count,
                                const float *gradients, char *error,
                                size_t errorBytes);
  static int parameterOnDevice(void *self, const char *name,
                               const float **values, char *error,
                               size_t errorBytes);
  static int pushDenseFromDevice(void *self, const char *name,
                                 const float *gradient, size_t count,
                                 char *error, size_t errorBytes);
  static int pullRowsByDeviceIds(void *self, const char *table,
                                 const int64_t *ids, size_t count, float *rows,
                                 char *error, size_t errorBytes);
};

/// The samples in one run of `bundle` on `inputs` (in its input order): the
/// leading extent its batched inputs share, -1 where none is batched.
/// Throws Error naming the input or output at fault where an input does not
/// match its spec, batched inputs disagree, or the bundle runs whole batches
/// only (an output mixes samples or has a data-dependent extent) and the
/// inputs hold another number.
int64_t samplesOfRun(const Bundle &bundle,
                     const std::vector<TensorView> &inputs);

class Executor {
public:
  /// Loads every stage library and creates every stage replica; throws Error
  /// naming the stage at fault.
  Executor(const Bundle &bundle, ExecutorOptions options);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Runs the model on `inputs` (in the bundle's input order). Batched inputs
  /// may hold any number of samples: they are cut into micro-batches of the
  /// compiled batch (the last one padded) and batched outputs are joined.
  /// Inputs are read in place where they fill a micro-batch exactly.
  std::vector<HostTensor> run(const std::vector<TensorView> &inputs);
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs) {
    return run(viewsOf(inputs));
  }
  /// Micro-batches in flight at once (ExecutorOptions::framesInFlight).
  size_t framesInFlight() const;
  /// False in a child forked after the executor was made: its stage
  /// threads stayed in the parent, so it does not run (and is not torn
  /// down) there; make another.
  bool madeInThisProcess() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
  int ownerProcess; // the process id that made it
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_EXECUTOR_H
