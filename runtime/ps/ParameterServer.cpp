//===- ParameterServer.cpp - Sparse tables, dense params, optimizers ------===//

#include "heterps/Runtime/ParameterServer.h"

#include "CheckpointFiles.h"
#include "FlatKeyMap.h"
#include "Optimizers.h"
#include "ShardStore.h"
#include "heterps/Runtime/DirectoryLock.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <sstream>
#include <zlib.h>

namespace heterps::rt::ps {
namespace fs = std::filesystem;

namespace {
constexpr const char *kMetadataName = "metadata";
constexpr const char *kMetadataMagic = "heterps-parameter-server-checkpoint";
constexpr int kFormatVersion = 1;
constexpr char kRowsMagic[8] = {'H', 'P', 'S', 'R', 'O', 'W', 'S', '1'};
constexpr char kDenseMagic[8] = {'H', 'P', 'S', 'D', 'E', 'N', 'S', '1'};

void checkName(const std::string &name, const char *what) {
  const bool valid = !name.empty() && name != "." && name != ".." &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) ||
                              c == '_' || c == '-' || c == '.';
                     });
  if (!valid)
    throw Error("parameter server: " + std::string(what) + " name '" + name +
                "' must be letters, digits, '_', '-' or '.'");
}

std::string shardFileName(const std::string &table, size_t shard) {
  return "sparse." + table + ".shard-" + std::to_string(shard) + ".bin";
}

std::string hex32(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", value);
  return text;
}

/// Blocks pulls of workers that are too far ahead of the slowest one.
class StepClock {
public:
  StepClock(size_t workers, int64_t staleness)
      : steps(workers, 0), retired(workers, false), staleness(staleness) {}

  void waitUntilAllowed(int worker) {
    if (staleness < 0)
      return;
    std::unique_lock<std::mutex> lock(mutex);
    checkWorker(worker);
    changed.wait(lock, [&] {
      return steps[worker] - slowestStep(steps[worker]) <= staleness;
    });
  }

  void report(int worker, int64_t step) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      checkWorker(worker);
      steps[worker] = std::max(steps[worker], step);
    }
    changed.notify_all();
  }

  void retire(int worker) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      checkWorker(worker);
      retired[worker] = true;
    }
    changed.notify_all();
  }

private:
  void checkWorker(int worker) const {
    if (worker < 0 || static_cast<size_t>(worker) >= steps.size())
      throw Error("parameter server: worker " + std::to_string(worker) +
                  " out of range (" + std::to_string(steps.size()) +
                  " workers)");
  }
  /// The slowest active worker's step; `own` when everyone else retired.
  int64_t slowestStep(int64_t own) const {
    int64_t slowest = own;
    for (size_t i = 0; i < steps.size(); ++i)
      if (!retired[i])
        slowest = std::min(slowest, steps[i]);
    return slowest;
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> steps;
  std::vector<bool> retired;
  int64_t staleness;
};

struct Shard {
  std::mutex mutex;
  std::unique_ptr<ShardStore> store;
};

struct SparseTable {
  SparseTableConfig config;
  size_t stateFloats = 0;
  size_t rowFloats = 0;
  std::vector<std::unique_ptr<Shard>> shards;
};

struct DenseParam {
  std::string name;
  OptimizerConfig optimizer;
  std::mutex mutex;
  std::vector<float> values;
  std::vector<float> state;
};

/// What a checkpoint's metadata says about one sparse table.
struct SavedTable {
  std::string name;
  size_t dim = 0, stateFloats = 0, shards = 0;
  std::string optimizer;
};
struct SavedDense {
  std::string name;
  size_t size = 0, stateFloats = 0;
  std::string optimizer;
};
struct SavedCheckpoint {
  std::vector<SavedTable> tables;
  std::vector<SavedDense> dense;
  std::map<std::string, uint32_t> fileChecksums;
};

/// Per-thread scratch, so steady-state pulls and pushes do not allocate:
/// the batch grouped by shard (the calling thread's), and the merge of one
/// shard's duplicate ids (the thread that serves that shard's).
struct BatchScratch {
  std::vector<std::vector<uint32_t>> positionsByShard;
  std::vector<size_t> activeShards;
};
struct MergeScratch {
  FlatKeyMap mergedIndex;
  std::vector<uint64_t> mergedKeys;
  std::vector<float> mergedGradients;
};
thread_local BatchScratch batchScratch;
thread_local MergeScratch mergeScratch;

/// Below this many ids a call walks its shards on the calling thread: a
/// parallel region costs more than it saves.
constexpr size_t kParallelIds = 2048;

/// Calls serve(shard) for every shard that has ids in `groups`, in parallel
/// (OpenMP) for a large batch. Shards share nothing (each has its lock and
/// rows, and a key's result does not depend on which shard or thread served
/// it), so the outcome is the serial one. An exception of any shard is
/// rethrown once all have finished.
template <typename Serve>
void forEachShard(const std::vector<std::vector<uint32_t>> &groups,
                  size_t count, Serve serve) {
  std::vector<size_t> &active = batchScratch.activeShards;
  active.clear();
  for (size_t shard = 0; shard < groups.size(); ++shard)
    if (!groups[shard].empty())
      active.push_back(shard);
  if (active.size() < 2 || count < kParallelIds) {
    for (size_t shard : active)
      serve(shard);
    return;
  }
  std::exception_ptr failure;
  std::mutex failureMutex;
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t i = 0; i < active.size(); ++i) {
    try {
      serve(active[i]);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failureMutex);
      if (!failure)
        failure = std::current_exception();
    }
  }
  if (failure)
    std::rethrow_exception(failure);
}
} // namespace

struct ParameterServer::Impl {
  ParameterServerConfig config;
  /// One server at a time opens databases under the storage directory:
  /// each replaces what it finds there. Held until the tables are closed.
  std::optional<DirectoryLock> storageLock;
  StepClock clock;
  // Guards the two maps (not the rows): lookups share it.
  mutable std::shared_mutex registryMutex;
  std::map<std::string, std::unique_ptr<SparseTable>> tables;
  std::map<std::string, std::unique_ptr<DenseParam>> denseParams;

  /// ParameterStore::setLearningRateScale; read once per push.
  std::atomic<float> learningRateScale{1.0f};

  /// `optimizer` with the current learning-rate scale (moving averages
  /// have no learning rate). A scale of 1 changes no bit.
  OptimizerConfig scaled(const OptimizerConfig &optimizer) const {
    return scaledOptimizer(optimizer,
                           learningRateScale.load(std::memory_order_relaxed));
  }

  explicit Impl(ParameterServerConfig options)
      : config(std::move(options)),
        clock(config.numWorkers, config.mode == ConsistencyMode::Synchronous
                                     ? 0
                                     : config.staleness) {}

  size_t shardOf(uint64_t key) const {
    return config.numShards == 1 ? 0 : mixKey(key) % config.numShards;
  }

  SparseTable &table(const std::string &name) const {
    std::shared_lock<std::shared_mutex> lock(registryMutex);
    auto found = tables.find(name);
    if (found == tables.end())
      throw Error("parameter server: no sparse table '" + name + "'");
    return *found->second;
  }

  DenseParam &dense(const std::string &name) const {
    std::shared_lock<std::shared_mutex> lock(registryMutex);
    auto found = denseParams.find(name);
    if (found == denseParams.end())
      throw Error("parameter server: no dense parameter '" + name + "'");
    return *found->second;
  }

  /// Positions of the batch's ids, grouped by shard.
  std::vector<std::vector<uint32_t>> &groupByShard(const uint64_t *ids,
                                                   size_t count) {
    auto &groups = batchScratch.positionsByShard;
    groups.resize(config.numShards);
    for (auto &group : groups)
      group.clear();
    for (size_t i = 0; i < count; ++i)
      groups[shardOf(ids[i])].push_back(static_cast<uint32_t>(i));
    return groups;
  }

  /// The first `floats` of each id's row (created on first touch) into
  /// out[i * floats ...]: pull (the weights) and pullRows (with the state).
  void gatherRows(SparseTable &table, const uint64_t *ids, size_t count,
                  float *out, size_t floats) {
    const auto &groups = groupByShard(ids, count);
    forEachShard(groups, count, [&](size_t shardIndex) {
      Shard &shard = *table.shards[shardIndex];
      std::lock_guard<std::mutex> lock(shard.mutex);
      const std::vector<uint32_t> &positions = groups[shardIndex];
      shard.store->acquireBatch(
          positions.size(), [&](size_t i) { return ids[positions[i]]; },
          /*willModify=*/false,
          [&](size_t i, const float *row) {
            std::memcpy(out + positions[i] * floats, row,
                        floats * sizeof(float));
          },
          /*usedFloats=*/floats);
    });
  }

  /// Every shard lock of every table and every dense lock, in one fixed
  /// order; workers take one at a time, so this cannot deadlock.
  std::vector<std::unique_lock<std::mutex>> lockEverything() {
    std::vector<std::unique_lock<std::mutex>> locks;
    for (auto &entry : tables)
      for (auto &shard : entry.second->shards)
        locks.emplace_back(shard->mutex);
    for (auto &entry : denseParams)
      locks.emplace_back(entry.second->mutex);
    return locks;
  }

  void writeCheckpoint(const fs::path &directory);
  SavedCheckpoint readMetadata(const fs::path &directory);
  void checkCompatible(const std::vector<std::string> &parts,
                       const std::vector<SavedCheckpoint> &saved,
                       const CheckpointSelection &selection) const;
  void restoreRows(const fs::path &directory, const SavedCheckpoint &saved,
                   const CheckpointSelection &selection);
  void restoreDense(const fs::path &directory,
                    const CheckpointSelection &selection);
};

ParameterServer::ParameterServer(ParameterServerConfig config)
    : impl(std::make_unique<Impl>(std::move(config))) {
  if (impl->config.numShards == 0)
    throw Error("parameter server: numShards must be at least 1");
  if (impl->config.numWorkers == 0)
    throw Error("parameter server: numWorkers must be at least 1");
  if (!impl->config.storageDirectory.empty())
    impl->storageLock.emplace(impl->config.storageDirectory,
                              "parameter-server storage directory");
}

ParameterServer::~ParameterServer() {
  if (!impl || !impl->storageLock)
    return;
  // The tables' databases go with them (ShardStore); then their folders,
  // and the lock removes a storage directory the server made.
  std::vector<std::string> names;
  for (const auto &entry : impl->tables)
    names.push_back(entry.first);
  impl->tables.clear();
  std::error_code ignored;
  for (const std::string &name : names)
    fs::remove(fs::path(impl->config.storageDirectory) / name, ignored);
}

const ParameterServerConfig &ParameterServer::config() const {
  return impl->config;
}

void ParameterServer::createSparseTable(const SparseTableConfig &config) {
  checkName(config.name, "sparse table");
  if (config.dim == 0)
    throw Error("parameter server: sparse table '" + config.name +
                "' needs dim > 0");
  validateOptimizer(config.optimizer, "sparse table '" + config.name + "'");
  if (config.cacheRowsPerShard != 0 && impl->config.storageDirectory.empty())
    throw Error("parameter server: sparse table '" + config.name +
                "' has a row cache but the server has no storageDirectory");

  auto table = std::make_unique<SparseTable>();
  table->config = config;
  table->stateFloats = optimizerStateSize(config.optimizer, config.dim);
  table->rowFloats = config.dim + table->stateFloats;
  const SparseTableConfig *tableConfig = &table->config;
  auto initializer = [tableConfig](uint64_t key, float *row) {
    initRowWeights(tableConfig->seed, tableConfig->initScale, key,
                   tableConfig->dim, row);
    initOptimizerState(tableConfig->optimizer, tableConfig->dim,
                       row + tableConfig->dim);
  };
  for (size_t shard = 0; shard < impl->config.numShards; ++shard) {
    auto entry = std::make_unique<Shard>();
    std::string databasePath;
    if (config.cacheRowsPerShard != 0)
      databasePath = (fs::path(impl->config.storageDirectory) / config.name /
                      ("shard-" + std::to_string(shard)))
                         .string();
    entry->store = std::make_unique<ShardStore>(
        table->rowFloats, config.cacheRowsPerShard, databasePath, initializer);
    table->shards.push_back(std::move(entry));
  }

  std::unique_lock<std::shared_mutex> lock(impl->registryMutex);
  if (impl->tables.count(config.name))
    throw Error("parameter server: sparse table '" + config.name +
                "' already exists");
  impl->tables.emplace(config.name, std::move(table));
}

void ParameterServer::createDenseParam(const std::string &name,
                                       std::vector<float> initial,
                                       const OptimizerConfig &optimizer) {
  checkName(name, "dense parameter");
  validateOptimizer(optimizer, "dense parameter '" + name + "'");
  auto param = std::make_unique<DenseParam>();
  param->name = name;
  param->optimizer = optimizer;
  param->values = std::move(initial);
  param->state.resize(optimizerStateSize(optimizer, param->values.size()));
  initOptimizerState(optimizer, param->values.size(), param->state.data());

  std::unique_lock<std::shared_mutex> lock(impl->registryMutex);
  if (impl->denseParams.count(name))
    throw Error("parameter server: dense parameter '" + name +
                "' already exists");
  impl->denseParams.emplace(name, std::move(param));
}

void ParameterServer::pull(const std::string &tableName, const uint64_t *ids,
                           size_t count, float *out, int worker) {
  if (worker != kNoWorker)
    impl->clock.waitUntilAllowed(worker);
  SparseTable &table = impl->table(tableName);
  impl->gatherRows(table, ids, count, out, table.config.dim);
}

void ParameterServer::peek(const std::string &tableName, const uint64_t *ids,
                           size_t count, float *out) {
  SparseTable &table = impl->table(tableName);
  const SparseTableConfig &config = table.config;
  const auto &groups = impl->groupByShard(ids, count);
  forEachShard(groups, count, [&](size_t shardIndex) {
    Shard &shard = *table.shards[shardIndex];
    std::vector<float> row(table.rowFloats);
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (uint32_t position : groups[shardIndex]) {
      float *target = out + size_t(position) * config.dim;
      if (shard.store->read(ids[position], row.data()))
        std::memcpy(target, row.data(), config.dim * sizeof(float));
      else
        initRowWeights(config.seed, config.initScale, ids[position], config.dim,
                       target);
    }
  });
}

std::vector<float> ParameterServer::pull(const std::string &table,
                                         const std::vector<uint64_t> &ids,
                                         int worker) {
  std::vector<float> rows(ids.size() * impl->table(table).config.dim);
  pull(table, ids.data(), ids.size(), rows.data(), worker);
  return rows;
}

void ParameterServer::push(const std::string &tableName, const uint64_t *ids,
                           size_t count, const float *gradients) {
  SparseTable &table = impl->table(tableName);
  const size_t dim = table.config.dim;
  const OptimizerConfig optimizer = impl->scaled(table.config.optimizer);
  const auto &groups = impl->groupByShard(ids, count);
  forEachShard(groups, count, [&](size_t shardIndex) {
    MergeScratch &scratch = mergeScratch;
    // Sum duplicates in batch order before locking: the sum (and so the
    // result) is the same whatever the shard count.
    const std::vector<uint32_t> &positions = groups[shardIndex];
    scratch.mergedIndex.clear();
    scratch.mergedIndex.reserve(positions.size());
    scratch.mergedKeys.clear();
    // Sized once (never shrunk) and written in place: no per-key growth.
    if (scratch.mergedGradients.size() < positions.size() * dim)
      scratch.mergedGradients.resize(positions.size() * dim);
    float *merged = scratch.mergedGradients.data();
    for (size_t p = 0; p < positions.size(); ++p) {
      // A large group's index outgrows the cache: fetch a few keys ahead.
      if (p + 8 < positions.size())
        scratch.mergedIndex.prefetch(ids[positions[p + 8]]);
      const uint32_t position = positions[p];
      const float *gradient = gradients + size_t(position) * dim;
      auto [entry, inserted] = scratch.mergedIndex.emplace(
          ids[position], static_cast<uint32_t>(scratch.mergedKeys.size()));
      if (inserted) {
        scratch.mergedKeys.push_back(ids[position]);
        std::memcpy(merged + size_t(*entry) * dim, gradient,
                    dim * sizeof(float));
      } else {
        float *sum = merged + size_t(*entry) * dim;
        for (size_t i = 0; i < dim; ++i)
          sum[i] += gradient[i];
      }
    }
    Shard &shard = *table.shards[shardIndex];
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.store->acquireBatch(
        scratch.mergedKeys.size(),
        [&](size_t i) { return scratch.mergedKeys[i]; },
        /*willModify=*/true,
        [&](size_t i, float *row) {
          applyOptimizer(optimizer, dim, row, row + dim, merged + i * dim);
        });
  });
}

void ParameterServer::push(const std::string &table,
                           const std::vector<uint64_t> &ids,
                           const std::vector<float> &gradients) {
  const size_t dim = impl->table(table).config.dim;
  if (gradients.size() != ids.size() * dim)
    throw Error("parameter server: push to '" + table + "' has " +
                std::to_string(gradients.size()) + " gradient values for " +
                std::to_string(ids.size()) + " ids of dim " +
                std::to_string(dim));
  push(table, ids.data(), ids.size(), gradients.data());
}

size_t ParameterServer::rowFloats(const std::string &table) const {
  return impl->table(table).rowFloats;
}

void ParameterServer::pullRows(const std::string &tableName,
                               const uint64_t *ids, size_t count, float *out) {
  SparseTable &table = impl->table(tableName);
  impl->gatherRows(table, ids, count, out, table.rowFloats);
}

void ParameterServer::writeRows(const std::string &tableName,
                                const uint64_t *ids, size_t count,
                                const float *rows) {
  SparseTable &table = impl->table(tableName);
  const size_t rowFloats = table.rowFloats;
  const auto &groups = impl->groupByShard(ids, count);
  forEachShard(groups, count, [&](size_t shardIndex) {
    Shard &shard = *table.shards[shardIndex];
    std::lock_guard<std::mutex> lock(shard.mutex);
    const std::vector<uint32_t> &positions = groups[shardIndex];
    shard.store->overwriteExisting(
        positions.size(), [&](size_t i) { return ids[positions[i]]; },
        [&](size_t i) { return rows + positions[i] * rowFloats; });
  });
}

std::vector<float> ParameterServer::pullDense(const std::string &name,
                                              int worker) {
  if (worker != kNoWorker)
    impl->clock.waitUntilAllowed(worker);
  DenseParam &param = impl->dense(name);
  std::lock_guard<std::mutex> lock(param.mutex);
  return param.values;
}

void ParameterServer::pushDense(const std::string &name,
                                const std::vector<float> &gradient) {
  DenseParam &param = impl->dense(name);
  std::lock_guard<std::mutex> lock(param.mutex);
  if (gradient.size() != param.values.size())
    throw Error("parameter server: dense parameter '" + name + "' has " +
                std::to_string(param.values.size()) + " values, gradient " +
                std::to_string(gradient.size()));
  applyOptimizer(impl->scaled(param.optimizer), param.values.size(),
                 param.values.data(), param.state.data(), gradient.data());
}

OptimizerConfig
ParameterServer::scaledDenseOptimizer(const std::string &name) const {
  return impl->scaled(impl->dense(name).optimizer);
}

void ParameterServer::writeDense(const std::string &name,
                                 const std::vector<float> &valuesAndState) {
  DenseParam &param = impl->dense(name);
  std::lock_guard<std::mutex> lock(param.mutex);
  if (valuesAndState.size() != param.values.size() + param.state.size())
    throw Error("parameter server: dense parameter '" + name + "' has " +
                std::to_string(param.values.size() + param.state.size()) +
                " values and state floats, " +
                std::to_string(valuesAndState.size()) + " were written");
  std::copy(valuesAndState.begin(),
            valuesAndState.begin() + param.values.size(), param.values.begin());
  std::copy(valuesAndState.begin() + param.values.size(), valuesAndState.end(),
            param.state.begin());
}

void ParameterServer::setLearningRateScale(float scale) {
  if (!std::isfinite(scale) || !(scale >= 0.0f))
    throw Error("parameter server: learning-rate scale " +
                std::to_string(scale) + " must be finite and >= 0");
  impl->learningRateScale.store(scale, std::memory_order_relaxed);
}

float ParameterServer::learningRateScale() const {
  return impl->learningRateScale.load(std::memory_order_relaxed);
}

void ParameterServer::reportStep(int worker, int64_t step) {
  impl->clock.report(worker, step);
}

void ParameterServer::retireWorker(int worker) { impl->clock.retire(worker); }

std::optional<std::vector<float>>
ParameterServer::readRow(const std::string &tableName, uint64_t key) {
  SparseTable &table = impl->table(tableName);
  Shard &shard = *table.shards[impl->shardOf(key)];
  std::vector<float> row(table.rowFloats);
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (!shard.store->read(key, row.data()))
    return std::nullopt;
  return row;
}

std::vector<float> ParameterServer::readDense(const std::string &name) {
  DenseParam &param = impl->dense(name);
  std::lock_guard<std::mutex> lock(param.mutex);
  std::vector<float> all = param.values;
  all.insert(all.end(), param.state.begin(), param.state.end());
  return all;
}

size_t ParameterServer::rowCount(const std::string &tableName) {
  size_t total = 0;
  for (auto &shard : impl->table(tableName).shards) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    total += shard->store->rowCount();
  }
  return total;
}

const SparseTableConfig &
ParameterServer::tableConfig(const std::string &table) const {
  return impl->table(table).config;
}

//===----------------------------------------------------------------------===//
// Checkpoints
//
// DIR/metadata: text, one line per table, dense parameter and file (with its
// CRC32), ending in "crc32 <hex>" over the lines before it.
// DIR/sparse.<table>.shard-<k>.bin: "HPSROWS1", u32 version, u32 floats per
// row, then (u64 key, floats) per row, then u64 row count and the CRC32.
// DIR/dense.bin: "HPSDENS1", u32 version, u32 count, then per parameter
// (u32 name length, name, u64 size, u64 state floats, values, state), then
// the CRC32. Numbers are in host byte order.
//===----------------------------------------------------------------------===//

void ParameterServer::Impl::writeCheckpoint(const fs::path &directory) {
  std::ostringstream metadata;
  metadata << kMetadataMagic << " " << kFormatVersion << "\n";
  metadata << "shards " << config.numShards << "\n";
  std::vector<std::pair<std::string, uint32_t>> files;

  for (auto &[name, table] : tables) {
    metadata << "sparse " << name << " " << table->config.dim << " "
             << table->stateFloats << " "
             << optimizerName(table->config.optimizer.kind) << " "
             << table->shards.size() << "\n";
    for (size_t shardIndex = 0; shardIndex < table->shards.size();
         ++shardIndex) {
      const std::string fileName = shardFileName(name, shardIndex);
      ChecksummedWriter writer((directory / fileName).string());
      writer.write(kRowsMagic, sizeof(kRowsMagic));
      writer.writeValue<uint32_t>(kFormatVersion);
      writer.writeValue<uint32_t>(static_cast<uint32_t>(table->rowFloats));
      uint64_t rowsWritten = 0;
      const size_t rowBytes = table->rowFloats * sizeof(float);
      table->shards[shardIndex]->store->forEachRow(
          [&](uint64_t key, const float *row) {
            writer.writeValue(key);
            writer.write(row, rowBytes);
            ++rowsWritten;
          });
      writer.writeValue(rowsWritten);
      files.emplace_back(fileName, writer.finish());
    }
  }

  ChecksummedWriter denseWriter((directory / "dense.bin").string());
  denseWriter.write(kDenseMagic, sizeof(kDenseMagic));
  denseWriter.writeValue<uint32_t>(kFormatVersion);
  denseWriter.writeValue<uint32_t>(static_cast<uint32_t>(denseParams.size()));
  for (auto &[name, param] : denseParams) {
    metadata << "dense " << name << " " << param->values.size() << " "
             << param->state.size() << " "
             << optimizerName(param->optimizer.kind) << "\n";
    denseWriter.writeValue<uint32_t>(static_cast<uint32_t>(name.size()));
    denseWriter.write(name.data(), name.size());
    denseWriter.writeValue<uint64_t>(param->values.size());
    denseWriter.writeValue<uint64_t>(param->state.size());
    denseWriter.write(param->values.data(),
                      param->values.size() * sizeof(float));
    denseWriter.write(param->state.data(), param->state.size() * sizeof(float));
  }
  files.emplace_back("dense.bin", denseWriter.finish());

  for (auto &[fileName, crc] : files)
    metadata << "file " << fileName << " " << hex32(crc) << "\n";
  std::string text = metadata.str();
  const uint32_t crc = static_cast<uint32_t>(::crc32(
      ::crc32(0, nullptr, 0), reinterpret_cast<const Bytef *>(text.data()),
      static_cast<uInt>(text.size())));
  text += "crc32 " + hex32(crc) + "\n";
  // Through the writer for its fsync; the binary CRC it appends is ignored.
  ChecksummedWriter metadataWriter((directory / kMetadataName).string());
  metadataWriter.write(text.data(), text.size());
  metadataWriter.finish();
}

void ParameterServer::save(const std::string &directoryName) {
  const fs::path directory =
      fs::absolute(fs::path(directoryName)).lexically_normal();
  const fs::path finalPath =
      directory.has_filename() ? directory : directory.parent_path();
  const fs::path temporary = finalPath.string() + ".tmp";
  const fs::path previous = finalPath.string() + ".old";
  std::error_code error;
  fs::remove_all(temporary, error);
  fs::create_directories(temporary, error);
  if (error)
    throw Error("checkpoint: cannot create '" + temporary.string() +
                "': " + error.message());
  {
    std::shared_lock<std::shared_mutex> registry(impl->registryMutex);
    auto locks = impl->lockEverything();
    impl->writeCheckpoint(temporary);
  }
  syncDirectory(temporary.string());
  // A directory cannot be renamed over a non-empty one: move the old
  // checkpoint aside, move the new one in, then drop the old one.
  fs::remove_all(previous, error);
  if (fs::exists(finalPath)) {
    fs::rename(finalPath, previous, error);
    if (error)
      throw Error("checkpoint: cannot move '" + finalPath.string() +
                  "' aside: " + error.message());
  }
  fs::rename(temporary, finalPath, error);
  if (error)
    throw Error("checkpoint: cannot rename '" + temporary.string() + "' to '" +
                finalPath.string() + "': " + error.message());
  syncDirectory(finalPath.parent_path().string());
  fs::remove_all(previous, error);
}

SavedCheckpoint ParameterServer::Impl::readMetadata(const fs::path &directory) {
  const std::string path = (directory / kMetadataName).string();
  if (!fs::exists(path))
    throw Error("checkpoint file '" + path + "' is missing");
  // The writer's binary CRC covers the whole file, the text line the text.
  CheckpointReader(path).verifyChecksum();
  std::ifstream stream(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(stream)),
                    std::istreambuf_iterator<char>());
  auto corrupt = [&](const std::string &why) {
    return Error("checkpoint file '" + path + "' is corrupt: " + why);
  };
  // Text, "crc32 <8 hex>\n", then the writer's 4-byte binary CRC.
  const std::string marker = "crc32 ";
  const size_t trailer = marker.size() + 8 + 1 + sizeof(uint32_t);
  if (bytes.size() < trailer)
    throw corrupt("too short");
  const size_t textSize = bytes.size() - trailer;
  const std::string text = bytes.substr(0, textSize);
  const std::string crcLine = bytes.substr(textSize, trailer - 4);
  const uint32_t actual = static_cast<uint32_t>(::crc32(
      ::crc32(0, nullptr, 0), reinterpret_cast<const Bytef *>(text.data()),
      static_cast<uInt>(text.size())));
  if (crcLine != marker + hex32(actual) + "\n")
    throw corrupt("CRC32 mismatch");

  SavedCheckpoint saved;
  std::istringstream lines(text);
  std::string line;
  bool sawHeader = false;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == kMetadataMagic) {
      int version = 0;
      fields >> version;
      if (version != kFormatVersion)
        throw corrupt("unsupported format version " + std::to_string(version));
      sawHeader = true;
    } else if (kind == "shards") {
      // Informational: rows are re-sharded on load.
    } else if (kind == "sparse") {
      SavedTable table;
      fields >> table.name >> table.dim >> table.stateFloats >>
          table.optimizer >> table.shards;
      if (!fields)
        throw corrupt("bad line '" + line + "'");
      saved.tables.push_back(table);
    } else if (kind == "dense") {
      SavedDense dense;
      fields >> dense.name >> dense.size >> dense.stateFloats >>
          dense.optimizer;
      if (!fields)
        throw corrupt("bad line '" + line + "'");
      saved.dense.push_back(dense);
    } else if (kind == "file") {
      std::string name, crc;
      fields >> name >> crc;
      if (!fields || name.find('/') != std::string::npos)
        throw corrupt("bad line '" + line + "'");
      saved.fileChecksums[name] =
          static_cast<uint32_t>(std::stoul(crc, nullptr, 16));
    } else {
      throw corrupt("bad line '" + line + "'");
    }
  }
  if (!sawHeader)
    throw corrupt("not a parameter server checkpoint");
  return saved;
}

void ParameterServer::Impl::checkCompatible(
    const std::vector<std::string> &parts,
    const std::vector<SavedCheckpoint> &saved,
    const CheckpointSelection &selection) const {
  auto mismatch = [](const std::string &what) {
    return Error("checkpoint does not match the parameter server: " + what);
  };
  for (size_t part = 0; part < saved.size(); ++part) {
    const SavedCheckpoint &checkpoint = saved[part];
    // Each part holds its own rows of every table.
    if (checkpoint.tables.size() != tables.size())
      throw mismatch("'" + parts[part] + "' has " +
                     std::to_string(checkpoint.tables.size()) +
                     " sparse tables, the server " +
                     std::to_string(tables.size()));
    for (const SavedTable &savedTable : checkpoint.tables) {
      auto found = tables.find(savedTable.name);
      if (found == tables.end())
        throw mismatch("no sparse table '" + savedTable.name + "'");
      const SparseTable &table = *found->second;
      if (table.config.dim != savedTable.dim ||
          table.stateFloats != savedTable.stateFloats ||
          optimizerName(table.config.optimizer.kind) != savedTable.optimizer)
        throw mismatch("sparse table '" + savedTable.name +
                       "' differs in dim or optimizer");
      for (size_t shard = 0; shard < savedTable.shards; ++shard)
        if (!checkpoint.fileChecksums.count(
                shardFileName(savedTable.name, shard)))
          throw mismatch("metadata lists no file for shard " +
                         std::to_string(shard) + " of '" + savedTable.name +
                         "'");
    }
  }
  // Dense parameters are spread over the parts: each in exactly one.
  std::map<std::string, size_t> partOfDense;
  for (size_t part = 0; part < saved.size(); ++part) {
    for (const SavedDense &savedDense : saved[part].dense) {
      auto [entry, inserted] = partOfDense.emplace(savedDense.name, part);
      if (!inserted)
        throw mismatch("dense parameter '" + savedDense.name +
                       "' is in both '" + parts[entry->second] + "' and '" +
                       parts[part] + "'");
      if (selection.ownsDense && !selection.ownsDense(savedDense.name))
        continue;
      auto found = denseParams.find(savedDense.name);
      if (found == denseParams.end())
        throw mismatch("no dense parameter '" + savedDense.name + "'");
      const DenseParam &param = *found->second;
      if (param.values.size() != savedDense.size ||
          param.state.size() != savedDense.stateFloats ||
          optimizerName(param.optimizer.kind) != savedDense.optimizer)
        throw mismatch("dense parameter '" + savedDense.name +
                       "' differs in size or optimizer");
    }
  }
  for (const auto &entry : denseParams)
    if (!partOfDense.count(entry.first))
      throw mismatch("it has no dense parameter '" + entry.first + "'");
}

void ParameterServer::Impl::restoreRows(const fs::path &directory,
                                        const SavedCheckpoint &saved,
                                        const CheckpointSelection &selection) {
  for (const SavedTable &savedTable : saved.tables) {
    SparseTable &table = *tables.at(savedTable.name);
    std::vector<float> row(table.rowFloats);
    for (size_t shardIndex = 0; shardIndex < savedTable.shards; ++shardIndex) {
      CheckpointReader reader(
          (directory / shardFileName(savedTable.name, shardIndex)).string());
      auto corrupt = [&](const std::string &why) {
        return Error("checkpoint file '" + reader.name() +
                     "' is corrupt: " + why);
      };
      char magic[sizeof(kRowsMagic)];
      reader.read(magic, sizeof(magic));
      if (std::memcmp(magic, kRowsMagic, sizeof(magic)) != 0 ||
          reader.readValue<uint32_t>() != kFormatVersion ||
          reader.readValue<uint32_t>() != table.rowFloats)
        throw corrupt("bad header");
      const uint64_t recordBytes =
          sizeof(uint64_t) + row.size() * sizeof(float);
      if (reader.payloadSize() < reader.position() + sizeof(uint64_t))
        throw corrupt("bad size");
      const uint64_t body =
          reader.payloadSize() - reader.position() - sizeof(uint64_t);
      if (body % recordBytes != 0)
        throw corrupt("bad size");
      for (uint64_t record = 0; record < body / recordBytes; ++record) {
        const uint64_t key = reader.readValue<uint64_t>();
        reader.read(row.data(), row.size() * sizeof(float));
        if (!selection.ownsKey || selection.ownsKey(key))
          table.shards[shardOf(key)]->store->insert(key, row.data());
      }
      if (reader.readValue<uint64_t>() != body / recordBytes)
        throw corrupt("row count mismatch");
    }
  }
}

void ParameterServer::Impl::restoreDense(const fs::path &directory,
                                         const CheckpointSelection &selection) {
  CheckpointReader reader((directory / "dense.bin").string());
  auto corrupt = [&](const std::string &why) {
    return Error("checkpoint file '" + reader.name() + "' is corrupt: " + why);
  };
  char magic[sizeof(kDenseMagic)];
  reader.read(magic, sizeof(magic));
  if (std::memcmp(magic, kDenseMagic, sizeof(magic)) != 0 ||
      reader.readValue<uint32_t>() != kFormatVersion)
    throw corrupt("bad header");
  const uint32_t count = reader.readValue<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    std::string name(reader.readValue<uint32_t>(), '\0');
    reader.read(name.data(), name.size());
    if (selection.ownsDense && !selection.ownsDense(name)) {
      // Another shard's: skip its values and state.
      const uint64_t values = reader.readValue<uint64_t>();
      const uint64_t state = reader.readValue<uint64_t>();
      if (values > reader.payloadSize() || state > reader.payloadSize())
        throw corrupt("dense parameter '" + name + "' has the wrong size");
      reader.skip((values + state) * sizeof(float));
      continue;
    }
    auto found = denseParams.find(name);
    if (found == denseParams.end())
      throw corrupt("unknown dense parameter '" + name + "'");
    DenseParam &param = *found->second;
    if (reader.readValue<uint64_t>() != param.values.size() ||
        reader.readValue<uint64_t>() != param.state.size())
      throw corrupt("dense parameter '" + name + "' has the wrong size");
    reader.read(param.values.data(), param.values.size() * sizeof(float));
    reader.read(param.state.data(), param.state.size() * sizeof(float));
  }
}

std::string checkpointPartName(size_t index) {
  return "shard-" + std::to_string(index);
}

std::vector<std::string> checkpointParts(const std::string &directoryName) {
  const fs::path directory(directoryName);
  if (!fs::is_directory(directory))
    throw Error("checkpoint directory '" + directoryName + "' does not exist");
  if (fs::exists(directory / kMetadataName))
    return {directoryName};
  std::vector<std::string> parts;
  while (fs::is_directory(directory / checkpointPartName(parts.size())))
    parts.push_back((directory / checkpointPartName(parts.size())).string());
  if (parts.empty())
    throw Error("checkpoint file '" + (directory / kMetadataName).string() +
                "' is missing");
  // A stray shard-<k> past a gap would be a part silently left out.
  std::string stray;
  for (const auto &entry : fs::directory_iterator(directory))
    if (entry.path().filename().string().rfind("shard-", 0) == 0 &&
        std::find(parts.begin(), parts.end(), entry.path().string()) ==
            parts.end())
      stray = entry.path().filename().string();
  if (!stray.empty())
    throw Error("checkpoint directory '" + directoryName + "' holds '" + stray +
                "' but not every part before it");
  return parts;
}

void ParameterServer::load(const std::string &directoryName) {
  loadParts(checkpointParts(directoryName), CheckpointSelection{});
}

void ParameterServer::loadParts(const std::vector<std::string> &parts,
                                const CheckpointSelection &selection) {
  if (parts.empty())
    throw Error("parameter server: a checkpoint needs at least one part");
  std::vector<SavedCheckpoint> saved;
  for (const std::string &part : parts) {
    const fs::path directory(part);
    if (!fs::is_directory(directory))
      throw Error("checkpoint directory '" + part + "' does not exist");
    saved.push_back(impl->readMetadata(directory));
    // Verify every file before touching any row, so a corrupt checkpoint
    // leaves the server as it was.
    for (const auto &[fileName, expected] : saved.back().fileChecksums) {
      const std::string path = (directory / fileName).string();
      if (!fs::exists(path))
        throw Error("checkpoint file '" + path + "' is missing");
      CheckpointReader reader(path);
      if (reader.verifyChecksum() != expected)
        throw Error("checkpoint file '" + path +
                    "' is corrupt: CRC32 differs from the metadata's");
    }
    if (!saved.back().fileChecksums.count("dense.bin"))
      throw Error("checkpoint file '" + (directory / kMetadataName).string() +
                  "' is corrupt: lists no dense.bin");
  }

  std::shared_lock<std::shared_mutex> registry(impl->registryMutex);
  impl->checkCompatible(parts, saved, selection);
  auto locks = impl->lockEverything();
  for (auto &[name, table] : impl->tables)
    for (auto &shard : table->shards)
      shard->store->clear();
  for (size_t part = 0; part < parts.size(); ++part) {
    impl->restoreRows(parts[part], saved[part], selection);
    impl->restoreDense(parts[part], selection);
  }
}

} // namespace heterps::rt::ps
