//===- MpiTraining.h - Training over MPI: PS shards and workers -*- C++ -*-===//
//
// Multi-process training (docs/Distributed.md). An MPI job has two kinds of
// ranks, each told its role by the command it runs:
//
// * parameter-server shards (`heterps ps-shard`): shard r of S owns the
//   sparse rows whose key % S == r and the dense parameters whose name
//   hashes (FNV-1a) to r, in a local ps::ParameterServer; it serves the
//   workers' requests one message at a time. Synchronous jobs apply a step
//   once every worker has ended it; asynchronous jobs apply each push as it
//   arrives and hold back a worker that runs more than `staleness` steps
//   ahead of the slowest (runParameterServerShard);
// * workers (`heterps run --train --mpi-worker`): data-parallel copies of
//   the whole bundle pipeline whose TrainingServer talks to the shards
//   through an MpiParameterClient, and whose Trainer coordinates through an
//   MpiWorkerGroup.
//
// The ranks may come in any order (mpirun MPMD, srun --multi-prog): MpiJob
// exchanges roles at start-up and numbers shards and workers in rank order.
// This header does not include mpi.h.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_MPITRAINING_H
#define HETERPS_RUNTIME_MPITRAINING_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/ParameterServer.h"
#include "heterps/Runtime/ParameterStore.h"
#include "heterps/Runtime/StableHash.h"
#include "heterps/Runtime/WorkerGroup.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace heterps::rt::mpi {

//===----------------------------------------------------------------------===//
// Routing (plain functions: the same on every rank, tested without MPI)
//===----------------------------------------------------------------------===//

/// The shard that owns sparse key `key`: key % shards.
size_t shardOfKey(uint64_t key, size_t shards);
/// The shard that owns dense parameter `name`: stableHash(name) % shards.
size_t shardOfDense(const std::string &name, size_t shards);
/// Positions of `keys` grouped by owning shard (each group in input order).
std::vector<std::vector<uint32_t>>
groupKeysByShard(const uint64_t *keys, size_t count, size_t shards);
/// "shard-<r>": shard r's part of a checkpoint's ps/ directory.
std::string shardCheckpointName(size_t shard);

/// How the ranks of a job on one machine share its cores.
struct HostShare {
  /// Kernel threads of a worker or stage rank (when --threads is not given).
  int computeThreads = 1;
  /// OpenMP threads of a shard's local server.
  int shardThreads = 1;
  /// Whether a waiting rank polls without pausing: only when every thread
  /// on the machine has a core of its own.
  bool spin = true;
};

/// `cores` CPUs shared by `computeRanks` workers and stage ranks and
/// `shardRanks` shards. A shard keeps a core where there are enough (it
/// serves while the workers wait on it); compute ranks split the rest, and
/// shards alone split all of them. Every rank gets at least one thread.
/// OpenMP teams that outnumber the cores spin at their barriers while a
/// partner is descheduled, which made a 2-worker job on 2 cores 18x slower
/// than one process.
HostShare shareHost(int cores, int computeRanks, int shardRanks);

/// Throws Error unless HETERPS_MPI_WAIT is unset, empty, "spin" or
/// "backoff" (a launcher checks once what every rank would reject).
void checkWaitEnvironment();

//===----------------------------------------------------------------------===//
// The job
//===----------------------------------------------------------------------===//

/// Shards serve parameters; workers run the training loop (and, without
/// stage ranks, every stage); stage ranks run one replica of one stage for
/// the single worker of their job (stage ranks, see below).
enum class Role { Shard = 0, Worker = 1, Stage = 2 };

/// How a job's workers see each other's updates; every rank of a job must
/// be started with the same (MpiJob checks). Synchronous: a step is applied
/// once, on the sum of every worker's pushes, before any worker starts the
/// next one (the same math as one process). Asynchronous: pushes are applied
/// on arrival, and a worker may finish up to `staleness` steps more than
/// the slowest worker (< 0: no bound), which then blocks it (stale
/// synchronous parallel).
struct Consistency {
  ps::ConsistencyMode mode = ps::ConsistencyMode::Synchronous;
  int64_t staleness = 0;

  bool asynchronous() const {
    return mode == ps::ConsistencyMode::Asynchronous;
  }
  bool operator==(const Consistency &other) const {
    return mode == other.mode &&
           (!asynchronous() || staleness == other.staleness);
  }
};

/// "synchronous", "asynchronous (staleness K)" or "asynchronous (no
/// staleness bound)".
std::string describe(const Consistency &consistency);

/// MPI of this process: initialises MPI (thread level SERIALIZED: stage
/// threads issue requests one at a time under mutex()), learns every rank's
/// role and finalises MPI when destroyed. Throws Error when MPI cannot start,
/// the job lacks shards or workers, or its ranks disagree on consistency.
class MpiJob {
public:
  MpiJob(int *argc, char ***argv, Role role, Consistency consistency = {});
  ~MpiJob();
  MpiJob(const MpiJob &) = delete;
  MpiJob &operator=(const MpiJob &) = delete;

  Role role() const { return role_; }
  const Consistency &consistency() const { return consistency_; }
  /// This process's index among the ranks of its role.
  int index() const { return index_; }
  int worldRank() const { return worldRank_; }
  int shards() const { return static_cast<int>(shardRanks.size()); }
  int workers() const { return static_cast<int>(workerRanks.size()); }
  int stages() const { return static_cast<int>(stageRanks.size()); }
  /// The parameter server's clients: workers and stage ranks, in rank order.
  int clients() const { return static_cast<int>(clientRanks.size()); }
  /// World ranks of shard s / worker w / stage rank i / client c.
  int shardRank(int shard) const { return shardRanks.at(shard); }
  int workerRank(int worker) const { return workerRanks.at(worker); }
  int stageRank(int stage) const { return stageRanks.at(stage); }
  int clientRank(int client) const { return clientRanks.at(client); }
  /// The client index of world rank `rank`, or -1 for a shard.
  int clientOf(int rank) const;
  /// Serialises this process's MPI calls.
  std::mutex &mutex() { return mutex_; }
  /// This machine's share (shareHost over the ranks on it and the CPUs this
  /// process may run on), and those counts for messages.
  const HostShare &hostShare() const { return hostShare_; }
  int ranksOnHost() const { return ranksOnHost_; }
  int coresOnHost() const { return coresOnHost_; }
  /// OpenMP threads of this rank's kernels (a shard's: its local server)
  /// by default: its role's share, or 0 where OMP_NUM_THREADS decides.
  int kernelThreads() const;
  /// "R ranks on C cores here: T kernel threads per worker, waits spin".
  std::string describeHostShare() const;

  /// MPI_Abort of the whole job with `code` (after MPI started; otherwise a
  /// plain exit): a failed rank must not leave the others waiting forever.
  [[noreturn]] static void abort(int code);
  /// Whether MPI is initialised and not yet finalised in this process.
  static bool running();

  struct Comms;
  Comms &comms() { return *comms_; }

private:
  Role role_;
  Consistency consistency_;
  int index_ = 0, worldRank_ = 0;
  std::vector<int> shardRanks, workerRanks, stageRanks, clientRanks;
  /// Counts the ranks on this machine and sets the share and wait policy.
  void shareMachine(const std::vector<int64_t> &roles);

  std::unique_ptr<Comms> comms_;
  std::mutex mutex_;
  HostShare hostShare_;
  int ranksOnHost_ = 1, coresOnHost_ = 1;
};

//===----------------------------------------------------------------------===//
// Shard server
//===----------------------------------------------------------------------===//

struct ShardOptions {
  /// Where tables with a row cache keep RocksDB (DIR/shard-<r>); empty:
  /// tables must keep every row in memory.
  std::string storageDirectory;
  /// Lock shards of the local ParameterServer (does not change results).
  size_t localShards = 4;
};

/// Serves the workers until each has said goodbye. Requests are answered
/// in arrival order. Synchronous jobs: a push is added to its worker's share
/// of the current step and endStep is answered, to every worker at once,
/// after the sum of all workers' shares (in worker order) went into the
/// local server. Asynchronous jobs: a push goes into the local server at
/// once, and endStep is answered as soon as its worker is no more than
/// `staleness` steps ahead of the slowest worker still in the job. A
/// request that fails is answered with the error (the worker throws it);
/// an MPI failure aborts the job. Throws Error for a malformed message. The
/// shard keeps a heartbeat of the steps it applied and carries out the
/// faults of HETERPS_FAULT (a malformed one is an Error at once).
void runParameterServerShard(MpiJob &job, const ShardOptions &options);

//===----------------------------------------------------------------------===//
// Worker side
//===----------------------------------------------------------------------===//

/// A ParameterStore whose rows and parameters live on the job's shards.
/// Thread-safe: requests are serialised (one outstanding exchange per
/// worker), each exchange sends one message per shard involved and waits
/// for every reply.
class MpiParameterClient : public ps::ParameterStore {
public:
  explicit MpiParameterClient(MpiJob &job);
  ~MpiParameterClient() override;

  void createSparseTable(const ps::SparseTableConfig &config) override;
  void createDenseParam(const std::string &name, std::vector<float> initial,
                        const ps::OptimizerConfig &optimizer) override;
  void pull(const std::string &table, const uint64_t *ids, size_t count,
            float *out) override;
  void peek(const std::string &table, const uint64_t *ids, size_t count,
            float *out) override;
  void push(const std::string &table, const uint64_t *ids, size_t count,
            const float *gradients) override;
  std::vector<float> pullDense(const std::string &name) override;
  void pushDense(const std::string &name,
                 const std::vector<float> &gradient) override;
  std::vector<std::vector<float>>
  pullDenseMany(const std::vector<std::string> &names) override;
  void pushDenseMany(const std::vector<std::string> &names,
                     const std::vector<std::vector<float>> &gradients) override;
  /// Synchronous: blocks until every worker ended the step and the shards
  /// applied it. Asynchronous: blocks while this worker is too far ahead.
  void endStep() override;
  /// Every shard scales its updates from the next one it applies (request
  /// lr-scale).
  void setLearningRateScale(float scale) override;
  /// Every shard counts its applied steps from `step` (resumed-at-step).
  void resumedAtStep(int64_t step) override;
  std::optional<std::vector<float>> readRow(const std::string &table,
                                            uint64_t key) override;
  std::vector<std::optional<std::vector<float>>>
  readRows(const std::string &table,
           const std::vector<uint64_t> &keys) override;
  std::vector<float> readDense(const std::string &name) override;
  size_t rowCount(const std::string &table) override;
  const ps::SparseTableConfig &
  tableConfig(const std::string &table) const override;
  /// Every shard writes DIR/shard-<r> (a ParameterServer checkpoint of its
  /// part); DIR itself is created here.
  void save(const std::string &directory) override;
  /// Collective over the workers: worker 0 lists DIR's parts (any shard
  /// count, or a single process's checkpoint) and every shard loads the
  /// rows and dense parameters routed to it; all return once done.
  void load(const std::string &directory) override;

  /// Tells every shard this worker is done (after its last request).
  void goodbye();

private:
  struct Request {
    int shard;
    std::vector<char> bytes;
  };
  /// Sends `requests` (tag `op`) and returns each shard's reply payload
  /// (after the status byte), in the order of `requests`; throws Error with
  /// the first shard error.
  std::vector<std::vector<char>> exchange(int op,
                                          std::vector<Request> &requests);
  /// pull (op kPull) or peek (kPeek): rows grouped by shard, one request
  /// each, scattered back into `out`.
  void fetchRows(int op, const std::string &table, const uint64_t *ids,
                 size_t count, float *out);
  std::vector<std::vector<char>> toAllShards(int op,
                                             const std::vector<char> &bytes);

  MpiJob &job;
  mutable std::mutex tablesMutex;
  std::map<std::string, ps::SparseTableConfig> tables;
};

//===----------------------------------------------------------------------===//
// Stage ranks
//===----------------------------------------------------------------------===//
//
// With stage ranks (`heterps launch --stage-ranks`) the plan's stages run in
// processes of their own, possibly on other machines: one rank per replica
// of every stage, serving the job's single worker. The worker keeps the
// data, the progress and the checkpoints. Per executor call it tells every
// stage rank how many micro-batches to run, sends each micro-batch's data
// to the ranks of the stages that read it and receives the loss and
// predictions; the stage ranks schedule themselves: each runs its
// micro-batches in order as their channels arrive from the producing ranks
// and sends its outputs straight to the consuming ones. Each stage rank
// pushes its own gradients to the shards through its own TrainingServer,
// and the worker ends every step on all of them (StageControl).

/// Which stage and replica each stage rank runs: the bundle's replicas in
/// stage order (stage 0's replicas first).
struct StageSlot {
  int stage = 0, replica = 0;
};
std::vector<StageSlot> stageSlots(const Bundle &bundle);

/// Serves the job's worker as stage rank job.index() of `bundle` until the
/// worker says goodbye (then says goodbye to the shards). Throws Error when
/// the job's stage ranks do not match the bundle's replicas. Keeps a
/// heartbeat of the steps it pushed and the faults of HETERPS_FAULT, like a
/// shard.
void runStageRank(MpiJob &job, const Bundle &bundle);

/// The worker's side of its stage ranks.
class MpiStageRanks : public train::StageControl {
public:
  explicit MpiStageRanks(MpiJob &job);
  ~MpiStageRanks() override;
  void start(const Bundle &bundle, const Settings &settings) override;
  void begin(int64_t count) override;
  void sendInputs(int64_t microBatch, const char *const *channels) override;
  bool receiveOutputs(int64_t microBatch, char *const *channels) override;
  std::string end() override;
  void beginFinishStep(int64_t microBatches) override;
  void endFinishStep() override;
  void setEvalMode(bool eval) override;
  void discardStep() override;
  /// Tells every stage rank to leave (after the worker's last step).
  void goodbye();

private:
  /// Sends `op` with `payload` to every stage rank / receives every answer,
  /// returning the first error ("" if none).
  void sendToAll(int op, const std::vector<char> &payload);
  std::string receiveFromAll(int op);
  /// Both, throwing the first error.
  void request(int op, const std::vector<char> &payload);

  MpiJob &job;
  const Bundle *bundle = nullptr;
  /// World rank of each stage's replicas.
  std::vector<std::vector<int>> ranks;
  /// Per stage: the positions of the inputs the worker sends and of the
  /// outputs it receives; the stage ranks exchange all other channels.
  std::vector<std::vector<size_t>> fromWorker, toWorker;
  /// The control request in flight (its buffer and sends), and the worker's
  /// channel messages on their way.
  struct Control;
  std::unique_ptr<Control> control;
};

/// The Trainer's view of the job's workers. stepFinished() honours
/// HETERPS_DEBUG_KILL_AFTER_STEP=N (and HETERPS_DEBUG_KILL_WORKER=w, default
/// 0): that worker SIGKILLs itself after step N, for fault-injection tests.
class MpiWorkerGroup : public train::WorkerGroup {
public:
  explicit MpiWorkerGroup(MpiJob &job);
  int rank() const override { return job.index(); }
  int size() const override { return job.workers(); }
  ps::ParameterStore &store() override { return client; }
  std::string broadcast(const std::string &value) override;
  uint32_t combineStepRequests(uint32_t requests) override;
  std::vector<float> gather(const std::vector<float> &values) override;
  void barrier() override;
  bool asynchronous() const override {
    return job.consistency().asynchronous();
  }
  int defaultThreads() const override { return job.kernelThreads(); }
  /// The job's stage ranks, when it has some.
  train::StageControl *stageControl() override { return stageRanks.get(); }
  /// After training: tells the stage ranks and the shards this worker is
  /// done.
  void finish();
  void stepFinished(int64_t step) override;
  MpiParameterClient &parameterClient() { return client; }

private:
  MpiJob &job;
  MpiParameterClient client;
  std::unique_ptr<MpiStageRanks> stageRanks;
  int64_t killAfterStep = -1;
  int killWorker = 0;
};

} // namespace heterps::rt::mpi

#endif // HETERPS_RUNTIME_MPITRAINING_H
