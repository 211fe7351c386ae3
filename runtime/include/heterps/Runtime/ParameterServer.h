//===- ParameterServer.h - Sparse tables, dense params --------*- C++ -*-===//
//
// The parameter server of HeterPS training, as a plain in-process library:
//
// * Sparse embedding tables map a feature id (uint64) to a row of `dim`
//   floats plus the table optimizer's state. A row is created on first touch
//   with a counter-based initialiser, so its initial value depends only on
//   (table seed, key): the order in which keys are touched, the number of
//   shards and the number of workers never change it. Keys are sharded by
//   hash(key) % numShards; every shard has its own mutex.
// * Dense parameters are named flat float arrays with their own optimizer.
// * Workers pull(ids) before the forward pass and push(ids, gradients) after
//   the backward pass. A push first sums the gradients of duplicate ids, then
//   applies the optimizer once per distinct id; it is applied before push()
//   returns.
// * Consistency: workers report their step (the number of steps whose pushes
//   are done). A pull by worker w blocks while step(w) - min_v step(v) >
//   staleness. Synchronous mode is staleness 0 (bulk synchronous: a pull at
//   step t sees every worker's pushes of steps < t); asynchronous mode lets
//   a worker run up to `staleness` steps ahead of the slowest (stale
//   synchronous parallel), or without bound when staleness < 0.
// * A table may keep at most `cacheRowsPerShard` rows per shard in memory:
//   the rest live in a RocksDB database per shard (the SSD tier). Misses load
//   from RocksDB (or initialise), evictions write back dirty rows. Training
//   gives bit-identical results with and without the tier.
// * save()/load() write and read checkpoints: every row (including those only
//   in RocksDB) with its optimizer state, and every dense parameter, plus a
//   metadata file; each file carries a CRC32 and the directory is replaced
//   atomically (DIR.tmp, fsync, rename).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PARAMETERSERVER_H
#define HETERPS_RUNTIME_PARAMETERSERVER_H

#include "heterps/Runtime/ParameterStore.h"
#include "heterps/Runtime/Types.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace heterps::rt::ps {

/// MovingAverage stays last: the MPI protocol range-checks the kind.
enum class OptimizerKind { Sgd, Adam, Adagrad, MovingAverage };

/// "sgd", "adam", "adagrad", "moving-average".
const char *optimizerName(OptimizerKind kind);

/// Per-table (or per-dense-parameter) optimizer. Updates, with g the summed
/// gradient (for MovingAverage, the pushed value) of one row:
///   Sgd:     v = momentum * v + g;  w -= lr * v   (no state if momentum == 0)
///   Adam:    m = b1 m + (1-b1) g;  u = b2 u + (1-b2) g^2;  t += 1;
///            w -= lr * (m / (1 - b1^t)) / (sqrt(u / (1 - b2^t)) + eps)
///   Adagrad: a += g^2;  w -= lr * g / (sqrt(a) + eps), a starts at
///            initialAccumulator
///   MovingAverage: w = momentum * w + (1 - momentum) * g  (no state; for
///            batch norm's running statistics, pushed the batch's)
/// For sparse rows Adam's t counts the updates of that row (lazy Adam).
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Sgd;
  float learningRate = 0.01f;
  float momentum = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float initialAccumulator = 0.1f;
};

/// Floats of optimizer state per `dim` parameters.
size_t optimizerStateSize(const OptimizerConfig &config, size_t dim);

struct SparseTableConfig {
  /// Letters, digits, '_', '-', '.'; unique among tables.
  std::string name;
  size_t dim = 8;
  /// Rows start uniform in (-initScale, initScale), drawn from (seed, key).
  uint64_t seed = 0;
  float initScale = 0.01f;
  OptimizerConfig optimizer;
  /// 0: every row in memory. Otherwise at most this many rows per shard stay
  /// in memory and the rest go to RocksDB under the server's
  /// storageDirectory.
  size_t cacheRowsPerShard = 0;
};

enum class ConsistencyMode { Synchronous, Asynchronous };

struct ParameterServerConfig {
  size_t numShards = 1;
  /// Workers that report steps (ids 0 .. numWorkers-1).
  size_t numWorkers = 1;
  ConsistencyMode mode = ConsistencyMode::Synchronous;
  /// Asynchronous mode only: how many steps a worker may run ahead of the
  /// slowest one (< 0: no bound).
  int64_t staleness = 0;
  /// Where tables with a cache keep their RocksDB databases
  /// (DIR/<table>/shard-<k>); whatever is there is discarded on creation,
  /// and each is removed when its table is. One server at a time holds DIR
  /// (DIR/.lock, DirectoryLock.h).
  std::string storageDirectory;
};

/// Pass as `worker` to pull without the staleness check (evaluation, tools).
constexpr int kNoWorker = -1;

/// Which rows and dense parameters of a checkpoint a server takes: a shard
/// of a multi-process job takes those routed to it. Empty: everything.
struct CheckpointSelection {
  std::function<bool(uint64_t key)> ownsKey;
  std::function<bool(const std::string &dense)> ownsDense;
};

/// The name of part `index` of a checkpoint written by several servers (one
/// per shard of a multi-process job): "shard-<index>".
std::string checkpointPartName(size_t index);

/// The parts of the checkpoint in `directory`: the directory itself when it
/// was written by one server, else its shard-0, shard-1, ... parts. Throws
/// Error naming the directory when it holds neither.
std::vector<std::string> checkpointParts(const std::string &directory);

/// The in-process server; as a ParameterStore it is the store of a
/// single-process training run (one worker, so endStep() has nothing to do).
class ParameterServer : public ParameterStore {
public:
  explicit ParameterServer(ParameterServerConfig config);
  ~ParameterServer() override;
  ParameterServer(const ParameterServer &) = delete;
  ParameterServer &operator=(const ParameterServer &) = delete;

  const ParameterServerConfig &config() const;

  /// Tables and dense parameters are created before workers start; creation
  /// is not meant to race with pulls and pushes of the same name.
  void createSparseTable(const SparseTableConfig &config) override;
  void createDenseParam(const std::string &name, std::vector<float> initial,
                        const OptimizerConfig &optimizer) override;

  /// Writes the `dim` floats of each id's row to out[i * dim ...], creating
  /// rows on first touch. Blocks first if `worker` is too far ahead.
  void pull(const std::string &table, const uint64_t *ids, size_t count,
            float *out, int worker);
  /// pull() without the staleness check.
  void pull(const std::string &table, const uint64_t *ids, size_t count,
            float *out) override {
    pull(table, ids, count, out, kNoWorker);
  }
  std::vector<float> pull(const std::string &table,
                          const std::vector<uint64_t> &ids,
                          int worker = kNoWorker);
  void peek(const std::string &table, const uint64_t *ids, size_t count,
            float *out) override;
  /// `gradients` holds count * dim floats, row i for ids[i].
  void push(const std::string &table, const uint64_t *ids, size_t count,
            const float *gradients) override;
  void push(const std::string &table, const std::vector<uint64_t> &ids,
            const std::vector<float> &gradients);

  /// Floats per stored row of `table`: `dim` weights, then
  /// optimizerStateSize() floats of optimizer state.
  size_t rowFloats(const std::string &table) const;
  /// Whole rows (weights, then optimizer state; rowFloats() floats each) of
  /// `ids` into `out`, created on first touch as by pull(): how a pass cache
  /// (PassCache.h) loads a pass's rows. No staleness check.
  void pullRows(const std::string &table, const uint64_t *ids, size_t count,
                float *out);
  /// Replaces the whole rows of `ids` (distinct, and rows that exist, as
  /// after pullRows) with `rows`, laid out as pullRows() writes them: a pass
  /// cache's write-back. With the RocksDB tier, rows not in memory are
  /// written to RocksDB without being read back into memory.
  void writeRows(const std::string &table, const uint64_t *ids, size_t count,
                 const float *rows);

  std::vector<float> pullDense(const std::string &name, int worker);
  std::vector<float> pullDense(const std::string &name) override {
    return pullDense(name, kNoWorker);
  }
  void pushDense(const std::string &name,
                 const std::vector<float> &gradient) override;

  /// The optimizer pushDense applies to dense parameter `name` now: its
  /// own, with the learning-rate scale of this moment.
  OptimizerConfig scaledDenseOptimizer(const std::string &name) const;
  /// Replaces dense parameter `name`'s values and optimizer state with
  /// `valuesAndState`, laid out as readDense returns them: a dense cache
  /// (DenseCache.h) handing back what it updated.
  void writeDense(const std::string &name,
                  const std::vector<float> &valuesAndState);

  /// Scales the learning rate of every later update (ParameterStore).
  void setLearningRateScale(float scale) override;
  float learningRateScale() const;

  /// Worker `worker` has finished (pushed) its steps before `step`. Steps
  /// only move forward.
  void reportStep(int worker, int64_t step);
  /// A worker that stops training no longer holds the others back.
  void retireWorker(int worker);

  /// The row's weights followed by its optimizer state, or nothing if the
  /// row was never touched. Does not create the row or change the cache.
  std::optional<std::vector<float>> readRow(const std::string &table,
                                            uint64_t key) override;
  /// Values followed by optimizer state.
  std::vector<float> readDense(const std::string &name) override;
  /// Rows created so far (in memory and in RocksDB).
  size_t rowCount(const std::string &table) override;
  const SparseTableConfig &tableConfig(const std::string &table) const override;

  /// Writes a checkpoint to `directory` (replacing it atomically). Pulls and
  /// pushes wait while it runs, so it is a consistent snapshot.
  void save(const std::string &directory) override;
  /// Replaces every row and dense parameter with the checkpoint's. The
  /// checkpoint's tables and dense parameters must match the server's
  /// (names, dims, optimizer kinds); the shard count may differ, and a
  /// checkpoint of several servers (checkpointParts) loads whole. Verifies
  /// every checksum before changing anything; throws Error naming the
  /// corrupt or missing file.
  void load(const std::string &directory) override;
  /// load() from the given parts (each a one-server checkpoint), taking only
  /// the selected rows and dense parameters: how a shard of a resized job
  /// takes its share of a checkpoint written by any number of shards. Every
  /// dense parameter of the server must be in exactly one part, and every
  /// selected one must exist on the server.
  void loadParts(const std::vector<std::string> &parts,
                 const CheckpointSelection &selection);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PARAMETERSERVER_H
