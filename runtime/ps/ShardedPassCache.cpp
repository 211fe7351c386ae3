//===- ShardedPassCache.cpp - A pass cache split by key -------------------===//

#include "ShardedPassCache.h"

#include "PassCacheKernels.h"
#include "PassKeyIndex.h"

#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace heterps::rt::ps {

size_t shardOfKey(uint64_t key, size_t shards) {
  // splitmix64's finalizer: ids are often dense ranges, which a plain
  // modulus would spread well but a table's hot ids cluster in.
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ull;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebull;
  key ^= key >> 31;
  return static_cast<size_t>(key % shards);
}

namespace {

/// A call's ids in shard order: shard s has keys[starts[s] .. starts[s+1]),
/// in batch order, and keys[j] is ids[positions[j]].
struct Grouping {
  std::vector<uint64_t> keys;
  std::vector<uint32_t> positions;
  std::vector<size_t> starts;

  size_t count(size_t shard) const { return starts[shard + 1] - starts[shard]; }
  const uint64_t *keysOf(size_t shard) const {
    return keys.data() + starts[shard];
  }
};

/// Per-thread scratch for host pulls, which may run concurrently.
struct HostScratch {
  Grouping grouping;
  std::vector<size_t> shardOf;
  std::vector<float> rows;
};
thread_local HostScratch hostScratch;

void groupByShard(const uint64_t *ids, size_t count, size_t shards,
                  std::vector<size_t> &shardOf, Grouping &grouping) {
  if (count > std::numeric_limits<uint32_t>::max())
    throw Error(
        "pass cache: " + std::to_string(count) +
        " ids in one call; a sharded pass cache takes at most 2^32 - 1");
  shardOf.resize(count);
  grouping.starts.assign(shards + 1, 0);
  for (size_t i = 0; i < count; ++i) {
    shardOf[i] = shardOfKey(ids[i], shards);
    ++grouping.starts[shardOf[i] + 1];
  }
  for (size_t s = 0; s < shards; ++s)
    grouping.starts[s + 1] += grouping.starts[s];
  grouping.keys.resize(count);
  grouping.positions.resize(count);
  std::vector<size_t> next(grouping.starts.begin(), grouping.starts.end() - 1);
  for (size_t i = 0; i < count; ++i) {
    const size_t j = next[shardOf[i]]++;
    grouping.keys[j] = ids[i];
    grouping.positions[j] = static_cast<uint32_t>(i);
  }
}

/// Runs work(s) for every shard, shard 0 on the calling thread and the
/// others on threads of their own; returns each shard's failure (null where
/// it succeeded).
template <typename Work>
std::vector<std::exception_ptr> onEveryShard(size_t shards, Work work) {
  std::vector<std::exception_ptr> failures(shards);
  auto run = [&](size_t shard) {
    try {
      work(shard);
    } catch (...) {
      failures[shard] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(shards - 1);
  for (size_t shard = 1; shard < shards; ++shard)
    threads.emplace_back(run, shard);
  run(0);
  for (std::thread &thread : threads)
    thread.join();
  return failures;
}

void rethrowFirst(const std::vector<std::exception_ptr> &failures) {
  for (const std::exception_ptr &failure : failures)
    if (failure)
      std::rethrow_exception(failure);
}

class ShardedPassCache final : public PassCache {
public:
  ShardedPassCache(ParameterServer &server,
                   std::vector<std::unique_ptr<PassCache>> shards,
                   std::vector<int> places, std::unique_ptr<ShardMemory> memory)
      : server(server), shards(std::move(shards)), places(std::move(places)),
        memory(std::move(memory)) {
    if (this->shards.size() < 2 || this->shards.size() != this->places.size())
      throw Error("pass cache: a sharded cache needs two shards or more, "
                  "each with its place");
  }

  size_t passKeyCount(const std::string &table) const override {
    size_t keys = 0;
    for (const auto &shard : shards)
      keys += shard->passKeyCount(table);
    return keys;
  }

  size_t firstMissingId(const std::string &table, const uint64_t *ids,
                        size_t count) const override {
    if (tablesInPass.count(table) == 0)
      return 0;
    for (size_t i = 0; i < count; ++i) {
      const size_t shard = shardOfKey(ids[i], shards.size());
      if (shards[shard]->firstMissingId(table, ids + i, 1) == 0)
        return i;
    }
    return count;
  }

  size_t bytesPerRow(const std::string &table) const override {
    return shards.front()->bytesPerRow(table);
  }
  size_t passesInMemory() const override {
    return shards.front()->passesInMemory();
  }
  bool rowsOnDevice() const override { return shards.front()->rowsOnDevice(); }

  void pull(const std::string &table, const uint64_t *ids, size_t count,
            float *out) override {
    passTable(tablesInPass, table);
    const size_t dim = server.tableConfig(table).dim;
    HostScratch &scratch = hostScratch;
    Grouping &grouping = scratch.grouping;
    groupByShard(ids, count, shards.size(), scratch.shardOf, grouping);
    scratch.rows.resize(count * dim);
    float *grouped = scratch.rows.data();
    pullEachShard(table, ids, count, grouping, [&](size_t s) {
      shards[s]->pull(table, grouping.keysOf(s), grouping.count(s),
                      grouped + grouping.starts[s] * dim);
    });
    for (size_t j = 0; j < count; ++j)
      std::memcpy(out + size_t(grouping.positions[j]) * dim, grouped + j * dim,
                  dim * sizeof(float));
  }

  /// Rows into the caller's memory: where the shards' rows are on GPUs, the
  /// calling thread's current device; with host shards (the tests), host
  /// memory.
  void pullToDevice(const std::string &table, const uint64_t *ids, size_t count,
                    float *deviceOut) override {
    std::lock_guard<std::mutex> lock(memoryMutex);
    passTable(tablesInPass, table);
    pullIntoPlace(table, ids, count, memory->callerPlace(), deviceOut);
  }

  void pullIds(const std::string &table, const int64_t *ids, size_t count,
               int64_t rows, const std::string &displayName,
               float *out) override {
    std::lock_guard<std::mutex> lock(memoryMutex);
    passTable(tablesInPass, table);
    const int caller = memory->callerPlace();
    std::vector<int64_t> &hostIds = idScratch;
    hostIds.resize(count);
    memory->readIds(caller, ids, count, hostIds.data());
    std::vector<uint64_t> &keys = keyScratch;
    keys.resize(count);
    keysOfIds(displayName, rows, hostIds.data(), count, keys.data());
    pullIntoPlace(table, keys.data(), count, caller, out);
  }

  void push(const std::string &table, const uint64_t *ids, size_t count,
            const float *gradients) override {
    passTable(tablesInPass, table);
    const size_t dim = server.tableConfig(table).dim;
    groupChecked(table, ids, count);
    std::vector<float> &grouped = pushRows;
    grouped.resize(count * dim);
    for (size_t j = 0; j < count; ++j)
      std::memcpy(grouped.data() + j * dim,
                  gradients + size_t(pushGrouping.positions[j]) * dim,
                  dim * sizeof(float));
    for (size_t s = 0; s < shards.size(); ++s)
      if (pushGrouping.count(s))
        shards[s]->push(table, pushGrouping.keysOf(s), pushGrouping.count(s),
                        grouped.data() + pushGrouping.starts[s] * dim);
  }

  /// Gradients from the caller's memory into a buffer at shard 0's place;
  /// pushStaged moves each shard's rows to it.
  size_t stageGradients(const std::string &table, const float *gradients,
                        size_t floats) override {
    std::lock_guard<std::mutex> lock(memoryMutex);
    StagedTable &staged = stagedTables[table];
    if (!staged.values)
      staged.values = memory->makeBuffer(homePlace());
    const size_t offset = staged.floats;
    staged.values->reserve(offset + floats, offset);
    memory->copy(staged.values->data() + offset, homePlace(), gradients,
                 memory->callerPlace(), floats);
    staged.floats = offset + floats;
    return offset;
  }

  void pushStaged(const std::string &table, const uint64_t *ids, size_t count,
                  const std::vector<StagedSegment> &segments,
                  float divisor) override {
    std::lock_guard<std::mutex> lock(memoryMutex);
    StagedTable &staged = stagedTables[table];
    struct Forget {
      StagedTable &staged;
      ~Forget() { staged.floats = 0; }
    } forget{staged};
    passTable(tablesInPass, table);
    const size_t dim = server.tableConfig(table).dim;
    const size_t floats =
        checkStagedSegments(table, segments, staged.floats, count * dim);
    groupChecked(table, ids, count);
    if (count == 0)
      return;
    // The segments in order, then each shard's rows together.
    const int home = homePlace();
    PlaceBuffer &assembled = placeBuffer(assembledBuffers, home);
    assembled.reserve(floats);
    size_t at = 0;
    for (const StagedSegment &segment : segments) {
      memory->copy(assembled.data() + at, home,
                   staged.values->data() + segment.offset, home,
                   segment.floats);
      at += segment.floats;
    }
    PlaceBuffer &grouped = placeBuffer(groupedBuffers, home);
    grouped.reserve(floats);
    memory->gatherRows(home, assembled.data(), pushGrouping.positions.data(),
                       count, dim, grouped.data());
    for (size_t s = 0; s < shards.size(); ++s) {
      const size_t rows = pushGrouping.count(s);
      if (rows == 0)
        continue;
      const float *gradients = grouped.data() + pushGrouping.starts[s] * dim;
      if (places[s] != home) {
        PlaceBuffer &moved = placeBuffer(shardBuffers, places[s]);
        moved.reserve(rows * dim);
        memory->copy(moved.data(), places[s], gradients, home, rows * dim);
        gradients = moved.data();
      }
      const size_t offset =
          shards[s]->stageGradients(table, gradients, rows * dim);
      shards[s]->pushStaged(table, pushGrouping.keysOf(s), rows,
                            {{offset, rows * dim}}, divisor);
    }
  }

  void discardStaged() override {
    std::lock_guard<std::mutex> lock(memoryMutex);
    for (auto &[name, staged] : stagedTables)
      staged.floats = 0;
    for (const auto &shard : shards)
      shard->discardStaged();
  }

protected:
  void loadPass(std::map<std::string, std::vector<uint64_t>> keys) override {
    std::map<std::string, char> tables = tableSet(keys);
    closeOpenedOnFailure(withShardKeys(
        std::move(keys), [](PassCache &shard) { shard.beginPass(); }));
    tablesInPass = std::move(tables);
  }

  void writeBackPass() override {
    // A shard whose write-back failed keeps its pass open; the next
    // endPass retries it alone.
    rethrowFirst(onEveryShard(shards.size(), [&](size_t s) {
      if (shards[s]->inPass())
        shards[s]->endPass();
    }));
    tablesInPass.clear();
  }

  void prepareLoad(std::map<std::string, std::vector<uint64_t>> keys) override {
    std::map<std::string, char> tables = tableSet(keys);
    for (const std::exception_ptr &failure :
         withShardKeys(std::move(keys),
                       [](PassCache &shard) { shard.prepareNextPass(); }))
      if (failure) {
        dropPrepared();
        std::rethrow_exception(failure);
      }
    preparedTables = std::move(tables);
  }

  void openPrepared() override {
    std::vector<std::exception_ptr> failures =
        onEveryShard(shards.size(), [&](size_t s) { shards[s]->beginPass(); });
    closeOpenedOnFailure(failures);
    tablesInPass = std::move(preparedTables);
    preparedTables.clear();
  }

  void dropPrepared() override {
    for (const auto &shard : shards)
      shard->discardPreparedPass();
    preparedTables.clear();
  }

private:
  struct StagedTable {
    std::unique_ptr<PlaceBuffer> values;
    size_t floats = 0;
  };

  int homePlace() const { return places.front(); }

  /// Gives every shard its share of `keys` (every table, if only without
  /// keys, so each knows the table is in the pass), then runs then(shard),
  /// a thread per shard; returns each shard's failure.
  template <typename Then>
  std::vector<std::exception_ptr>
  withShardKeys(std::map<std::string, std::vector<uint64_t>> keys, Then then) {
    std::vector<std::map<std::string, std::vector<uint64_t>>> split(
        shards.size());
    for (auto &[table, ids] : keys) {
      for (auto &shardKeys : split)
        shardKeys[table];
      for (uint64_t id : ids)
        split[shardOfKey(id, shards.size())][table].push_back(id);
      std::vector<uint64_t>().swap(ids);
    }
    return onEveryShard(shards.size(), [&](size_t s) {
      for (auto &[table, ids] : split[s])
        shards[s]->addPassKeys(table, ids.data(), ids.size());
      then(*shards[s]);
    });
  }

  static std::map<std::string, char>
  tableSet(const std::map<std::string, std::vector<uint64_t>> &keys) {
    std::map<std::string, char> tables;
    for (const auto &entry : keys)
      tables.emplace(entry.first, 0);
    return tables;
  }

  /// After a failed beginPass on some shards: the others' passes end (their
  /// rows are the server's, written back unchanged) and the first failure
  /// is thrown; no pass is open then.
  void closeOpenedOnFailure(const std::vector<std::exception_ptr> &failures) {
    bool failed = false;
    for (const std::exception_ptr &failure : failures)
      failed = failed || failure;
    if (!failed)
      return;
    for (const auto &shard : shards) {
      try {
        if (shard->inPass())
          shard->endPass();
        shard->discardPreparedPass();
      } catch (...) {
        // The first failure is the one to report.
      }
    }
    rethrowFirst(failures);
  }

  PlaceBuffer &placeBuffer(std::map<int, std::unique_ptr<PlaceBuffer>> &buffers,
                           int place) {
    std::unique_ptr<PlaceBuffer> &buffer = buffers[place];
    if (!buffer)
      buffer = memory->makeBuffer(place);
    return *buffer;
  }

  /// Runs pullShard(s) for every shard with ids; where one fails because
  /// the pass lacks an id, throws the error for the first such id in batch
  /// order (the unsharded cache's).
  template <typename PullShard>
  void pullEachShard(const std::string &table, const uint64_t *ids,
                     size_t count, const Grouping &grouping,
                     PullShard pullShard) {
    for (size_t s = 0; s < shards.size(); ++s) {
      if (grouping.count(s) == 0)
        continue;
      try {
        pullShard(s);
      } catch (const Error &) {
        throwFirstMissing(table, ids, count);
        throw;
      }
    }
  }

  /// The unsharded cache's error for the first id the pass lacks, if any.
  void throwFirstMissing(const std::string &table, const uint64_t *ids,
                         size_t count) const {
    const size_t missing = firstMissingId(table, ids, count);
    if (missing < count)
      throw missingPassKeyError(table, ids[missing], passKeyCount(table));
  }

  /// pushGrouping for a push, every id checked first.
  void groupChecked(const std::string &table, const uint64_t *ids,
                    size_t count) {
    throwFirstMissing(table, ids, count);
    groupByShard(ids, count, shards.size(), pushShardOf, pushGrouping);
  }

  /// pull into `out` at `place`: each shard's rows in its memory, copied to
  /// `place` in shard order and scattered to their batch positions there.
  void pullIntoPlace(const std::string &table, const uint64_t *ids,
                     size_t count, int place, float *out) {
    if (count == 0)
      return;
    const size_t dim = server.tableConfig(table).dim;
    groupByShard(ids, count, shards.size(), deviceShardOf, deviceGrouping);
    PlaceBuffer &grouped = placeBuffer(groupedBuffers, place);
    grouped.reserve(count * dim);
    pullEachShard(table, ids, count, deviceGrouping, [&](size_t s) {
      const size_t rows = deviceGrouping.count(s);
      float *target = grouped.data() + deviceGrouping.starts[s] * dim;
      float *pulled = target;
      if (places[s] != place) {
        PlaceBuffer &own = placeBuffer(shardBuffers, places[s]);
        own.reserve(rows * dim);
        pulled = own.data();
      }
      if (shards[s]->rowsOnDevice())
        shards[s]->pullToDevice(table, deviceGrouping.keysOf(s), rows, pulled);
      else
        shards[s]->pull(table, deviceGrouping.keysOf(s), rows, pulled);
      if (pulled != target)
        memory->copy(target, place, pulled, places[s], rows * dim);
    });
    memory->scatterRows(place, grouped.data(), deviceGrouping.positions.data(),
                        count, dim, out);
  }

  ParameterServer &server;
  std::vector<std::unique_ptr<PassCache>> shards;
  std::vector<int> places;
  std::unique_ptr<ShardMemory> memory;
  std::map<std::string, char> tablesInPass, preparedTables;

  /// Pushes have the cache to themselves.
  Grouping pushGrouping;
  std::vector<size_t> pushShardOf;
  std::vector<float> pushRows;

  /// Calls through `memory` (device pulls, staging) take turns.
  std::mutex memoryMutex;
  Grouping deviceGrouping;
  std::vector<size_t> deviceShardOf;
  std::vector<int64_t> idScratch;
  std::vector<uint64_t> keyScratch;
  std::map<int, std::unique_ptr<PlaceBuffer>> groupedBuffers, shardBuffers,
      assembledBuffers;
  std::map<std::string, StagedTable> stagedTables;
};

/// Host memory as every place.
class HostBuffer final : public PlaceBuffer {
public:
  float *data() const override { return values.get(); }
  void reserve(size_t floats, size_t kept) override {
    if (floats <= capacity)
      return;
    std::unique_ptr<float[]> larger(new float[floats]);
    if (kept)
      std::memcpy(larger.get(), values.get(), kept * sizeof(float));
    values = std::move(larger);
    capacity = floats;
  }

private:
  std::unique_ptr<float[]> values;
  size_t capacity = 0;
};

class HostShardMemory final : public ShardMemory {
public:
  int callerPlace() const override { return kHostPlace; }
  std::unique_ptr<PlaceBuffer> makeBuffer(int) override {
    return std::make_unique<HostBuffer>();
  }
  void copy(float *to, int, const float *from, int, size_t floats) override {
    if (floats)
      std::memmove(to, from, floats * sizeof(float));
  }
  // Element by element, as each thread of the CUDA kernels does.
  void scatterRows(int, const float *grouped, const uint32_t *positions,
                   size_t count, size_t dim, float *out) override {
    for (size_t i = 0; i < count * dim; ++i)
      kernels::ungroupElement(grouped, positions, dim, i, out);
  }
  void gatherRows(int, const float *in, const uint32_t *positions, size_t count,
                  size_t dim, float *grouped) override {
    for (size_t i = 0; i < count * dim; ++i)
      kernels::groupElement(in, positions, dim, i, grouped);
  }
  void readIds(int, const int64_t *ids, size_t count, int64_t *host) override {
    if (count)
      std::memcpy(host, ids, count * sizeof(int64_t));
  }
};

} // namespace

std::unique_ptr<ShardMemory> makeHostShardMemory() {
  return std::make_unique<HostShardMemory>();
}

std::unique_ptr<PassCache> makeShardedPassCache(
    ParameterServer &server, std::vector<std::unique_ptr<PassCache>> shards,
    std::vector<int> places, std::unique_ptr<ShardMemory> memory) {
  return std::make_unique<ShardedPassCache>(
      server, std::move(shards), std::move(places), std::move(memory));
}

} // namespace heterps::rt::ps
