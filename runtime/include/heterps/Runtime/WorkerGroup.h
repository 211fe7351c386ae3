//===- WorkerGroup.h - The workers of a data-parallel training run -*- C++
//-*-===//
//
// What the training loop (Trainer) needs to run as one of several
// data-parallel workers: each worker runs the whole bundle pipeline on its
// slice of every step's samples, the parameters live in a shared remote
// store, and worker 0 (the leader) prints progress, evaluates, checkpoints
// and dumps. The MPI implementation is runtime/mpi (MpiWorkerGroup); the
// trainer itself depends on no transport.
//
// Every worker reads the same data stream (each the whole step's B rows) and
// trains on its contiguous slice of the step's micro-batches, so the step's
// summed gradient is the single-process run's: each worker divides by the
// step's total micro-batch count, and the store sums the workers' pushes.
//
// An asynchronous group (the store applies pushes on arrival and bounds
// staleness itself) must not meet at every step: the trainer then only
// meets at sync points, the steps where it logs, evaluates or checkpoints
// and the last one, where metrics are gathered, a stop is agreed and the
// leader's checkpoint sees every worker's pushes up to that step and no
// later one.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_WORKERGROUP_H
#define HETERPS_RUNTIME_WORKERGROUP_H

#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/ParameterStore.h"
#include "heterps/Runtime/Types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace heterps::rt::train {

/// The micro-batches [first, first + count) of a step that `worker` of
/// `workers` trains on: contiguous, in worker order, sizes differing by at
/// most one. Throws Error when a worker would get none.
struct StepSlice {
  int64_t first = 0, count = 0;
};
inline StepSlice stepSlice(int64_t microBatches, int workers, int worker) {
  if (workers < 1 || worker < 0 || worker >= workers)
    throw Error("worker " + std::to_string(worker) + " of " +
                std::to_string(workers) + " does not exist");
  if (microBatches < workers)
    throw Error("a step of " + std::to_string(microBatches) +
                " micro-batches cannot be split over " +
                std::to_string(workers) +
                " workers; raise --batch to at least workers x the "
                "bundle's batch");
  StepSlice slice;
  slice.first = microBatches * worker / workers;
  slice.count = microBatches * (worker + 1) / workers - slice.first;
  return slice;
}

/// The slice of a run's short last step, which may hold fewer
/// micro-batches than there are workers: then the first workers train one
/// each and the others sit the step out (count 0), ending it with the
/// parameter server all the same, so that any shape can finish any length.
inline StepSlice lastStepSlice(int64_t microBatches, int workers, int worker) {
  if (microBatches >= workers || worker < 0 || worker >= workers)
    return stepSlice(microBatches, workers, worker);
  return worker < microBatches ? StepSlice{worker, 1}
                               : StepSlice{microBatches, 0};
}

/// Stages that run in other processes (the stage ranks of an MPI job), each
/// with its own TrainingServer on the job's parameter store. The trainer's
/// executor hands them every stage call (RemoteStages); the trainer drives
/// their servers through the step with the calls below, each of which
/// returns once every stage process has done it (throwing the first error,
/// naming the process).
class StageControl : public RemoteStages {
public:
  struct Settings {
    uint64_t seed = 1;   // TrainingServerOptions::seed
    float initScale = 0; // TrainingServerOptions::initScale
    int threads = 0;     // ExecutorOptions::threadsPerStage
    bool gpuStagesOnCpu = false;
    /// The step training continues after (a resumed run's), from which
    /// the stage processes count the steps they finish.
    int64_t step = 0;
  };
  /// Has every stage process create its server (reading the dense
  /// parameters from the store, so after a resume's load) and load its
  /// stage of `bundle`.
  virtual void start(const Bundle &bundle, const Settings &settings) = 0;
  /// A step's end in two halves, around the trainer's own
  /// TrainingServer::finishStep: the stage servers push and wait for the
  /// store to apply the step, which also waits for the trainer's endStep.
  virtual void beginFinishStep(int64_t microBatches) = 0;
  virtual void endFinishStep() = 0;
  virtual void setEvalMode(bool eval) = 0;
  virtual void discardStep() = 0;
};

/// What a worker asks for at a step boundary, as bits that the workers
/// combine (bitwise or) so that all of them act alike after the same step.
enum StepRequest : uint32_t {
  /// SIGINT or SIGTERM: checkpoint and stop (exit 128 + signal).
  kStopOnSignal = 1u << 0,
  /// The stop file (HETERPS_STOP_FILE): checkpoint and stop (exit 0).
  kStopOnRequest = 1u << 1,
  /// The leader's clock: a time-based checkpoint is due.
  kCheckpointNow = 1u << 2,
};

class WorkerGroup {
public:
  virtual ~WorkerGroup() = default;
  /// This worker (0 is the leader) and the number of workers.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool leader() const { return rank() == 0; }
  /// The store every worker's TrainingServer uses; it outlives the run.
  virtual ps::ParameterStore &store() = 0;
  /// The leader's `value` on every worker.
  virtual std::string broadcast(const std::string &value) = 0;
  /// Every worker's StepRequest bits or'ed together, on every worker: one
  /// collective carries every decision of a step boundary.
  virtual uint32_t combineStepRequests(uint32_t requests) = 0;
  /// Whether any worker asks to stop; every worker gets the same answer, so
  /// all stop after the same step.
  bool anyStopRequested(bool local) {
    return combineStepRequests(local ? uint32_t(kStopOnSignal) : 0u) != 0;
  }
  /// Every worker's `values`, concatenated in worker order, on the leader;
  /// empty on the others.
  virtual std::vector<float> gather(const std::vector<float> &values) = 0;
  /// Returns once every worker called it.
  virtual void barrier() = 0;
  /// Kernel threads per stage replica where --threads is not given: this
  /// worker's share of a machine it shares with other ranks (0: OpenMP's
  /// default, every core).
  virtual int defaultThreads() const { return 0; }
  /// Whether the store is asynchronous (see above).
  virtual bool asynchronous() const { return false; }
  /// This worker's stages when they run in other processes, else null.
  virtual StageControl *stageControl() { return nullptr; }
  /// Called by every worker after step `step` is finished and, on the
  /// leader, checkpointed (fault-injection hook for tests).
  virtual void stepFinished(int64_t step) { (void)step; }
};

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_WORKERGROUP_H
