//===- TrainingServer.h - The parameter server of a training run -*- C++
//-*-===//
//
// The server side of a training bundle's stages (StageABI.h, version 2):
// dense parameters and sparse tables live in a ps::ParameterServer built from
// the bundle's TrainingSpec, and the four training callbacks of the stages
// are answered here.
//
// Steps are synchronous. While the executor runs a step's micro-batches,
// stages read parameters that do not change (lookupParameter hands out live
// host buffers, pullRows reads the server) and their pushes only accumulate:
// a list of gradients per dense parameter and a list of (ids, gradients) per
// sparse table. finishStep(M) then sums every list in (micro-batch, stage,
// arrival) order, divides by the M micro-batches (the step's gradient is the
// mean of the micro-batches' mean-loss gradients), pushes the result into the
// ParameterServer (which merges duplicate ids and applies the optimizer) and
// refreshes the live dense buffers. The fixed summation order makes a step's
// result independent of how replicas interleave, so a run is reproducible to
// the bit, and a run resumed from a checkpoint ends where an uninterrupted
// one does.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TRAININGSERVER_H
#define HETERPS_RUNTIME_TRAININGSERVER_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/DenseCache.h"
#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/ParameterServer.h"
#include "heterps/Runtime/ParameterStore.h"
#include "heterps/Runtime/PassCache.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace heterps::rt::train {

/// Where the dense parameters that stages train in their own memory live
/// (TrainingServerOptions::denseCache).
enum class DenseCacheKind {
  /// Nowhere: every stage reads the server's host values.
  None,
  /// Host memory (HostDenseCache): what a GPU's cache does, testable
  /// without one; stages gain nothing by it.
  Host,
  /// GPU memory (makeCudaDenseCache), made when a GPU stage first asks.
  Gpu,
};

struct TrainingServerOptions {
  /// Seeds the sparse tables' first-touch initialiser (each table draws from
  /// a seed derived from this and its name).
  uint64_t seed = 1;
  /// Shards of every sparse table (a checkpoint loads into any shard count).
  size_t shards = 1;
  /// Sparse rows start uniform in (-initScale, initScale).
  float initScale = 0.01f;
  /// Where the parameters live instead of an in-process ParameterServer
  /// (`shards` is then unused): the shared store of a multi-process run
  /// (runtime/mpi). It must outlive the server.
  ps::ParameterStore *store = nullptr;
  /// Re-read only the dense parameters some stage looked up (a stage rank
  /// runs one stage; the others' parameters are not its to refresh). The
  /// first refresh, before any lookup, still reads all of them.
  bool refreshOnlyLookedUp = false;
  /// In-process server only: keep at most this many rows of each sparse
  /// table per shard in memory and the rest in RocksDB under
  /// `storageDirectory` (the SSD tier); 0: every row in memory.
  size_t memoryRowsPerShard = 0;
  std::string storageDirectory;
  /// In-process server only: serve the pulls and pushes of a pass from a
  /// pass cache (PassCache.h) between beginPass and endPass.
  bool passCache = false;
  /// With the pass cache: the most memory it may hold (PassCache.h's
  /// setMemoryLimit: a pass at most half of it); 0: no bound.
  size_t passMemoryBytes = 0;
  /// Keep the pass cache's rows in GPU memory (CudaPassCache.h) instead of
  /// host memory.
  bool passCacheOnGpu = false;
  /// With passCacheOnGpu: the CUDA devices it keeps them on, a shard of
  /// each pass's keys on each (ps/ShardedPassCache.h).
  std::vector<int> passCacheGpus = {0};
  /// In-process server only: 1 applies a step's sparse update (the
  /// embedding rows' pushes) one step late, while the next step runs after
  /// its pulls, so step t pulls rows as updated through step t - 2; dense
  /// parameters stay exact. 0: every update before the next step.
  int sparseStaleness = 0;
  /// In-process server only: serve parameterInCache and pushDenseInCache
  /// (stage ABI 5's parameterOnDevice and pushDenseFromDevice, offered with
  /// Gpu) from a dense cache (DenseCache.h): a parameter a stage asks for
  /// that way is updated in the cache's memory from then on, bit for bit
  /// as on the host.
  DenseCacheKind denseCache = DenseCacheKind::None;
};

/// The optimizer of a bundle as the parameter server takes it.
ps::OptimizerConfig optimizerConfig(const OptimizerSpec &spec);

class TrainingServer {
public:
  /// Builds the server of `spec`: dense parameters from their initial values
  /// in `weights` (the bundle's weights.bin), sparse tables with the spec's
  /// dims. Throws Error naming the parameter or table at fault.
  TrainingServer(const TrainingSpec &spec, const char *weights,
                 size_t weightsBytes, TrainingServerOptions options);
  /// The same for a training bundle; throws Error for an inference bundle.
  TrainingServer(const Bundle &bundle, TrainingServerOptions options);
  ~TrainingServer();
  TrainingServer(const TrainingServer &) = delete;
  TrainingServer &operator=(const TrainingServer &) = delete;

  /// What ExecutorOptions::server takes; valid while this server lives.
  const StageServer *stageServer() const { return &callbacks; }
  /// Changes whenever a value lookupParameter handed out may have changed:
  /// after each refresh of the dense parameters (every step, a load) and a
  /// switch between training and evaluation (StageABI.h's
  /// parameterVersion).
  uint64_t parameterVersion() const { return parameterVersion_.load(); }

  // The callbacks as C++ (they throw Error; the C entry points turn that
  // into their error text). Safe to call from several threads at once.

  /// The live host value of dense parameter `name`, or null. A training
  /// flag reads 1, or 0 in eval mode.
  const float *lookupParameter(const std::string &name) const;
  /// Rows of `table` for `ids` (negative ids count from the end, as in ONNX
  /// Gather); ids outside [-rows, rows) are an error naming table and id.
  void pullRows(const std::string &table, const int64_t *ids, size_t count,
                float *rows);
  /// Whether a pass of a pass cache in GPU memory holds `table`'s rows now,
  /// so pullRowsToDevice serves them.
  bool rowsOnDevice(const std::string &table) const;
  /// pullRows into the memory of the current CUDA device; throws Error
  /// unless rowsOnDevice(table).
  void pullRowsToDevice(const std::string &table, const int64_t *ids,
                        size_t count, float *deviceRows);
  /// pullRows with `ids` and `rows` in the pass cache's memory (GPU memory
  /// for the GPU cache: a GPU stage's own buffers), the ids checked and
  /// looked up there: neither crosses to the host. Needs an open pass.
  void pullRowsInCache(const std::string &table, const int64_t *ids,
                       size_t count, float *rows);
  /// Accumulates the gradients of one micro-batch (dropped in eval mode).
  void pushRows(const std::string &table, const int64_t *ids, size_t count,
                const float *gradients);
  /// pushRows with `gradients` in the pass cache's memory (GPU memory for
  /// the GPU cache: a GPU stage's own buffer), staged there for the step's
  /// push (PassCache::stageGradients) instead of copied to the host: the
  /// same update, bit for bit. Needs an open pass and no sparse staleness
  /// (its held-back update keeps gradients in host memory); a step's
  /// pushes of one table come all one way or all the other.
  void pushRowsInCache(const std::string &table, const int64_t *ids,
                       size_t count, const float *gradients);
  void pushDense(const std::string &name, const float *gradient, size_t count);
  /// Dense parameter `name` in the dense cache's memory (GPU memory for the
  /// GPU cache), taken into the cache on first use: it stays at that
  /// address, updated in place between steps. Null for a training flag
  /// (served on the host only). Throws Error without a dense cache.
  const float *parameterInCache(const std::string &name);
  /// pushDense with `gradient` in the dense cache's memory, staged there
  /// for the step's update: the same update, bit for bit.
  void pushDenseInCache(const std::string &name, const float *gradient,
                        size_t count);
  /// Wall time the stages spent in this server's callbacks so far, summed
  /// over the threads calling them.
  double serverCallSeconds() const {
    return 1e-9 * double(callNanoseconds.load(std::memory_order_relaxed));
  }
  /// Whether dense parameter `name` is updated in the dense cache.
  bool denseInCache(const std::string &name) const;

  /// Starts a training step of `microBatches` micro-batches. Optional; with
  /// sparse staleness it lets the previous step's sparse update start as
  /// soon as this step's last pull is served instead of at finishStep.
  void beginStep(int64_t microBatches);
  /// Ends a synchronous step of `microBatches` micro-batches: averages what
  /// was pushed, applies it and refreshes the dense parameters. Must not run
  /// while stages do. In eval mode there is nothing to apply. With sparse
  /// staleness the sparse part waits for the next step (see
  /// TrainingServerOptions::sparseStaleness).
  void finishStep(int64_t microBatches);
  /// Applies a sparse update sparse staleness holds back, if any: before
  /// anything reads or replaces the server's rows (checkpoints, evaluation,
  /// dumps, the end of a pass); those do it themselves.
  void applyDeferredUpdate();
  /// Drops what the current step pushed (a step that failed half-way), so
  /// the parameters stay those of the last finished step.
  void discardStep();
  /// Eval mode: pushes are discarded, parameters stay as they are.
  /// Throws Error when turned on during a pass.
  void setEvalMode(bool eval);
  bool evalMode() const { return evalMode_.load(); }

  /// The pass cache (TrainingServerOptions::passCache): records ids the
  /// next pass pulls from `table` (bundle table name; checked like a pull's
  /// ids), between passes.
  void addPassKeys(const std::string &table, const int64_t *ids, size_t count);
  /// One pull's ids as the pass cache takes them (checked like a pull's
  /// ids), for addStepPassKeys; any thread.
  void passKeysOf(const std::string &table, const int64_t *ids, size_t count,
                  ps::PassCache::StepKeys &keys) const;
  /// Records one step's ids for the next pass if they fit its memory
  /// (PassCache::addStepKeys); false adds nothing: the pass is full.
  bool addStepPassKeys(const std::vector<ps::PassCache::StepKeys> &step);
  /// Loads the recorded ids' rows; until endPass the steps' pulls and
  /// pushes of sparse rows go to the cache. Not in eval mode. With sparse
  /// staleness a pass holds the rows of the update held back (a pass not
  /// prepared adds their keys here; a prepared one was given the keys of
  /// the step before its first, which are those: StepReader).
  void beginPass();
  /// Writes the pass's rows back to the server. Checkpoints, evaluation and
  /// parameter dumps need the pass ended (they throw Error otherwise). An
  /// update sparse staleness holds back stays held, for the next step to
  /// apply as within a pass: where passes end changes no result.
  void endPass();
  /// Whether sparse updates are held back a step (the next pass must hold
  /// the rows of its first step's predecessor).
  bool holdsBackSparseUpdates() const { return sparseStaleness != 0; }
  bool inPass() const { return cache && cache->inPass(); }
  /// During a pass, on another thread than its steps: loads the rows of
  /// the ids added since it began that it does not hold, so that the
  /// beginPass after its endPass reads nothing (PassCache.h). The steps of
  /// the pass may run meanwhile; checkpoints, evaluation and endPass wait
  /// for it.
  void prepareNextPass();
  /// Forgets a prepared pass and the ids added for it.
  void discardPreparedPass();
  bool nextPassPrepared() const { return cache && cache->nextPassPrepared(); }
  /// Keys and distinct rows of the passes so far (PassCache::keyCounts);
  /// zero without a pass cache.
  ps::PassCache::KeyCounts passKeyCounts() const {
    return cache ? cache->keyCounts() : ps::PassCache::KeyCounts{};
  }

  /// Re-reads the dense parameters from the store (a process that joins a
  /// multi-process run after the parameters moved, a stage rank): every
  /// one, or with refreshOnlyLookedUp those a stage looked up.
  void refreshDense();

  /// Checkpoint of every parameter and optimizer state (ParameterServer
  /// save), with the sparse update sparse staleness holds back saved beside
  /// them, not applied; and its inverse. load refreshes the dense
  /// parameters. Neither may run while stages do.
  void save(const std::string &directory);
  void load(const std::string &directory);

  /// Writes every dense parameter as NAME.npy (its shape; training flags are
  /// served, not parameters, and are left out) and, per sparse
  /// table, TABLE.ids.npy (i64 [K], ascending) and TABLE.rows.npy (f32
  /// [K, dim]) for the K rows touched so far. Names are made file-safe
  /// (characters other than letters, digits, "_-." become "_").
  void dumpParameters(const std::string &directory);

  const TrainingSpec &spec() const { return spec_; }
  /// The in-process server; only when no TrainingServerOptions::store was
  /// given.
  ps::ParameterServer &parameterServer() { return *server; }
  /// Where the parameters live (either kind).
  ps::ParameterStore &parameterStore() { return *store; }

private:
  struct Contribution {
    int64_t microBatch;
    int stage;
    uint64_t arrival;
    std::vector<float> values;
    std::vector<uint64_t> ids; // sparse only
    /// pushRowsInCache or pushDenseInCache: the gradients are in the pass
    /// or dense cache, from here on (values stays empty).
    bool staged = false;
    size_t stagedOffset = 0;
  };
  struct Dense {
    const TrainableParameter *spec = nullptr;
    std::string serverName;
    std::vector<float> live; // what lookupParameter hands out; never resized
    mutable std::atomic<bool> lookedUp{false}; // a stage holds `live`
    /// Updated in the dense cache, whose copy is the parameter's value.
    std::atomic<bool> inCache{false};
    std::mutex mutex;
    std::vector<Contribution> pending;
    std::vector<Contribution> spare; // finished steps' buffers, for reuse
  };
  struct Table {
    const TrainableTable *spec = nullptr;
    std::string serverName;
    std::mutex mutex;
    std::vector<Contribution> pending;
    std::vector<Contribution> spare; // finished steps' buffers, for reuse
  };

  Dense &dense(const std::string &name) const;
  /// dense(name), checked to take a gradient of `count` floats.
  Dense &denseForGradient(const std::string &name, size_t count) const;
  /// The dense cache, made on first use; throws Error without one.
  ps::DenseCache &denseCache();
  /// `entry`'s current values into `out` (its size of floats).
  void readDenseValues(const Dense &entry, float *out);
  /// The pass cache; throws Error when the server has none.
  ps::PassCache &passCache();
  Table &table(const std::string &name) const;
  /// Ids as server keys; throws for ids outside [-rows, rows).
  void toKeys(const Table &table, const int64_t *ids, size_t count,
              std::vector<uint64_t> &keys) const;
  /// A step's sparse pushes held back by sparse staleness, in push order.
  struct DeferredPush {
    std::string table; // server name
    std::vector<uint64_t> keys;
    std::vector<float> gradients;
  };
  /// One step's merged gradients of a table (server name) into the pass
  /// cache during a pass, else the store.
  void pushSparse(const std::string &serverName, const uint64_t *keys,
                  size_t count, const float *gradients);
  /// Pushes `deferred` into the server (or the pass cache) with the
  /// learning-rate scale of their step, then forgets them.
  void pushDeferred();
  /// Waits for a deferred update running on its own thread; rethrows its
  /// error.
  void waitForDeferred();
  /// For an evaluation: applies the held-back update after keeping the rows
  /// it changes, so the evaluation sees every finished step.
  void showHeldBackUpdate();
  /// After it: puts those rows back and holds the update back again, so
  /// evaluations do not change training. Never throws; a failure poisons
  /// the server (restoreFailure).
  void hideHeldBackUpdate() noexcept;
  /// Restores the held-back update a checkpoint in `directory` saved, if
  /// any (applied at once without sparse staleness or with a pass cache).
  void loadHeldBackUpdate(const std::string &directory);
  /// deferredThread's loop: applies each requested deferred update.
  void applyDeferredUpdates();
  /// After a pull of a training step: counts it and, at the step's last
  /// expected pull, starts the deferred update on its own thread.
  void countPull();
  /// Before a pull: a pull beyond the expected count waits for the update
  /// (and finishStep reports the mismatch).
  void beforePull();
  /// A stage's callback into the server (`context`): runs `body` as
  /// guarded() does and adds its time to callNanoseconds.
  template <typename F>
  static int serveCall(void *context, char *error, size_t errorBytes, F &&body);
  /// A contribution for the current micro-batch, reusing a spare's buffers.
  template <typename Entry> Contribution takeContribution(Entry &entry);
  /// Moves `entry`'s pending contributions to its spares.
  template <typename Entry> static void recycle(Entry &entry);

  TrainingSpec spec_;
  std::unique_ptr<ps::ParameterServer> server;
  std::unique_ptr<ps::PassCache> cache;
  DenseCacheKind denseCacheKind = DenseCacheKind::None;
  // Making it, adopting into it, a host lookup of an adopted parameter.
  mutable std::mutex denseCacheMutex;
  std::unique_ptr<ps::DenseCache> denseCache_;
  ps::ParameterStore *store = nullptr; // server, or the options' store
  bool refreshOnlyLookedUp = false;
  std::map<std::string, std::unique_ptr<Dense>> denseByName;
  std::map<std::string, std::unique_ptr<Table>> tablesByName;
  /// Parameters with ParameterUpdate::TrainingFlag (never on the store).
  std::set<std::string> trainingFlags;
  static constexpr float kFlagOn = 1.0f, kFlagOff = 0.0f;
  // finishStep's concatenation of a table's pushes, kept across steps so a
  // step does not reallocate (and page-fault) them.
  std::vector<uint64_t> stepKeys;
  std::vector<float> stepGradients;
  std::vector<ps::PassCache::StagedSegment> stagedSegments;
  std::atomic<bool> evalMode_{false};
  std::atomic<uint64_t> arrivals{0};
  // Sparse staleness (TrainingServerOptions::sparseStaleness).
  int sparseStaleness = 0;
  std::vector<DeferredPush> deferred;
  float deferredScale = 1.0f;
  std::atomic<bool> deferredPending{false};
  // One long-lived thread applies deferred updates: the server's OpenMP
  // team then lives with it (a thread per update built a team each step,
  // 5x slower on 2 cores).
  std::thread deferredThread;
  std::mutex deferredMutex; // guards the three below and the pull count
  std::condition_variable deferredSignal;
  bool deferredRequested = false, deferredRunning = false,
       deferredStopping = false;
  std::exception_ptr deferredError;
  // An evaluation's view of a held-back update: the whole rows (weights and
  // optimizer state) it changed as they were, per table, and the update.
  struct RowsBefore {
    std::string table; // server name
    std::vector<uint64_t> keys;
    std::vector<float> rows;
  };
  std::vector<RowsBefore> rowsBeforeEvaluation;
  std::vector<DeferredPush> heldDuringEvaluation;
  float heldScaleDuringEvaluation = 1.0f;
  /// Rows an evaluation changed could not be put back: every later step,
  /// checkpoint and evaluation fails with it.
  std::exception_ptr restoreFailure;
  std::atomic<int64_t> pullsThisStep{0};
  std::atomic<int64_t> expectedPulls{-1};
  int64_t pullsPerMicroBatch = -1; // learned from the first training step
  std::atomic<uint64_t> parameterVersion_{0};
  std::atomic<uint64_t> callNanoseconds{0}; // serverCallSeconds
  StageServer callbacks;
};

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_TRAININGSERVER_H
