//===- ShardStore.h - The rows of one shard of a sparse table ---*- C++ -*-===//
//
// Internal to the parameter server. Rows (weights + optimizer state, a fixed
// number of floats) live in a chunked arena indexed by a FlatKeyMap. Without a
// cache limit every row stays in memory. With one, the arena holds at most
// that many rows in LRU order and the rest live in a RocksDB database:
// misses load from RocksDB (or initialise), evictions write dirty rows back.
// Not thread-safe: the owning shard's mutex guards every call.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_SHARDSTORE_H
#define HETERPS_RUNTIME_PS_SHARDSTORE_H

#include "FlatKeyMap.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rocksdb {
class DB;
}

namespace heterps::rt::ps {

class ShardStore {
public:
  /// Fills a new row (all rowFloats floats) for a key never seen before.
  using RowInitializer = std::function<void(uint64_t key, float *row)>;

  /// cacheRows == 0: unbounded, in memory, databasePath unused.
  ShardStore(size_t rowFloats, size_t cacheRows, std::string databasePath,
             RowInitializer initializer);
  ~ShardStore();
  ShardStore(const ShardStore &) = delete;
  ShardStore &operator=(const ShardStore &) = delete;

  /// The row of `key`, created on first touch. Valid until the next call
  /// on this store. `willModify` marks it for write-back on eviction.
  float *acquire(uint64_t key, bool willModify);

  /// acquire() for keyAt(0 .. count-1) in order, calling visit(i, row) for
  /// each. With the RocksDB tier the misses are read with one MultiGet and
  /// the evictions written with one WriteBatch, instead of a call per row.
  /// visit reads the first `usedFloats` of a row (0: all of it); only those
  /// are prefetched.
  template <typename KeyAt, typename Visit>
  void acquireBatch(size_t count, KeyAt keyAt, bool willModify, Visit visit,
                    size_t usedFloats = 0) {
    const size_t usedBytes =
        (usedFloats ? usedFloats : floatsPerRow) * sizeof(float);
    if (tiered()) {
      std::vector<uint64_t> &misses = batchMisses;
      misses.clear();
      for (size_t i = 0; i < count; ++i) {
        if (i + kLookAhead < count)
          slotOfKey.prefetch(keyAt(i + kLookAhead));
        if (!slotOfKey.contains(keyAt(i)))
          misses.push_back(keyAt(i));
      }
      beginBatch(misses);
    }
    try {
      // Random keys miss the cache twice, on the index slot and on the row:
      // fetch the slot 2 * kLookAhead keys ahead and the row kLookAhead ahead
      // (lookups only, so acquire's order and results are unchanged).
      for (size_t i = 0; i < count; ++i) {
        if (i + 2 * kLookAhead < count)
          slotOfKey.prefetch(keyAt(i + 2 * kLookAhead));
        if (i + kLookAhead < count)
          prefetchRow(keyAt(i + kLookAhead), usedBytes);
        visit(i, acquire(keyAt(i), willModify));
      }
    } catch (...) {
      // Evicted rows exist only in the pending batch: never drop them.
      if (inBatch)
        endBatch();
      throw;
    }
    if (inBatch)
      endBatch();
  }
  /// Replaces the rows of keyAt(0 .. count-1), which must exist (a pass
  /// cache's write-back of rows it loaded): rows in memory in place, and
  /// with the RocksDB tier the others straight into RocksDB (one
  /// WriteBatch), neither read first nor brought into the cache.
  template <typename KeyAt, typename RowAt>
  void overwriteExisting(size_t count, KeyAt keyAt, RowAt rowAt) {
    const size_t rowBytes = floatsPerRow * sizeof(float);
    writeThroughKeys.clear();
    writeThroughRows.clear();
    for (size_t i = 0; i < count; ++i) {
      if (i + kLookAhead < count)
        slotOfKey.prefetch(keyAt(i + kLookAhead));
      const uint64_t key = keyAt(i);
      if (const uint32_t *slot = slotOfKey.find(key)) {
        std::memcpy(slotData(*slot), rowAt(i), rowBytes);
        if (tiered())
          dirty[*slot] = 1;
      } else if (tiered()) {
        writeThroughKeys.push_back(key);
        writeThroughRows.push_back(rowAt(i));
      } else {
        // Untiered, every row is in memory: a missing one is created.
        std::memcpy(acquire(key, /*willModify=*/true), rowAt(i), rowBytes);
      }
    }
    if (!writeThroughKeys.empty())
      writeThrough();
  }
  /// Copies the row into `out` if it exists; changes nothing.
  bool read(uint64_t key, float *out);
  /// Sets a row (loading a checkpoint).
  void insert(uint64_t key, const float *row);
  /// Drops every row, in memory and in RocksDB.
  void clear();
  /// Calls visit once per row, RocksDB-only rows included.
  void
  forEachRow(const std::function<void(uint64_t key, const float *row)> &visit);

  size_t rowCount() const { return rows; }
  size_t rowFloats() const { return floatsPerRow; }

private:
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static constexpr size_t kRowsPerChunk = 1024;
  static constexpr size_t kLookAhead = 8;

  float *slotData(uint32_t slot) {
    return chunks[slot / kRowsPerChunk].get() +
           (slot % kRowsPerChunk) * floatsPerRow;
  }
  bool tiered() const { return cacheLimit != 0; }
  /// Fetches the first `bytes` of the row of `key` into the cache if the
  /// row is in memory.
  HETERPS_PS_ALWAYS_INLINE void prefetchRow(uint64_t key, size_t bytes) {
#if defined(__GNUC__)
    if (const uint32_t *slot = slotOfKey.find(key)) {
      const char *row = reinterpret_cast<const char *>(slotData(*slot));
      for (size_t byte = 0; byte < bytes; byte += 64)
        __builtin_prefetch(row + byte);
      __builtin_prefetch(row + bytes - 1);
    }
#else
    (void)key;
    (void)bytes;
#endif
  }
  /// A free slot for `key`, evicting the least recently used row if full.
  uint32_t takeSlot(uint64_t key);
  void linkFront(uint32_t slot);
  void unlink(uint32_t slot);
  bool loadFromDatabase(uint64_t key, float *out);
  /// Reads `misses` from RocksDB and starts deferring evictions.
  void beginBatch(const std::vector<uint64_t> &misses);
  /// Writes the deferred evictions.
  void endBatch();
  void writeToDatabase(uint64_t key, const float *row);
  /// Puts writeThroughKeys/Rows into RocksDB in one WriteBatch.
  void writeThrough();
  void openDatabase();

  size_t floatsPerRow;
  size_t cacheLimit;
  std::string databasePath;
  RowInitializer initializer;
  size_t rows = 0;

  FlatKeyMap slotOfKey;
  struct FreeChunk {
    void operator()(float *chunk) const { std::free(chunk); }
  };
  std::vector<std::unique_ptr<float[], FreeChunk>> chunks;
  uint32_t slotsInUse = 0;
  // LRU bookkeeping (tiered only): most recent at the head.
  std::vector<uint64_t> keyOfSlot;
  std::vector<uint32_t> previous, next;
  std::vector<uint8_t> dirty;
  uint32_t head = kNoSlot, tail = kNoSlot;

  std::unique_ptr<rocksdb::DB> database;

  // Batch mode: rows read ahead (kNoSlot: not in RocksDB) and evicted rows
  // not yet written (newer than anything in RocksDB).
  bool inBatch = false;
  std::vector<uint64_t> batchMisses;
  FlatKeyMap prefetchedIndex;
  std::vector<float> prefetchedRows;
  FlatKeyMap pendingIndex;
  std::vector<float> pendingRows;

  // overwriteExisting(): rows that go straight to RocksDB.
  std::vector<uint64_t> writeThroughKeys;
  std::vector<const float *> writeThroughRows;
};

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_SHARDSTORE_H
