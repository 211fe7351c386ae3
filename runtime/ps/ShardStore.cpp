//===- ShardStore.cpp - The rows of one shard of a sparse table -----------===//

#include "ShardStore.h"

#include "heterps/Runtime/Types.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

namespace heterps::rt::ps {
namespace {
// Rows are bytes in host order: the tier lives and dies with the process
// (checkpoints are the durable copy), so no portable encoding is needed.
rocksdb::Slice keySlice(const uint64_t &key) {
  return rocksdb::Slice(reinterpret_cast<const char *>(&key), sizeof(key));
}

rocksdb::WriteOptions tierWriteOptions() {
  rocksdb::WriteOptions options;
  // Durability comes from checkpoints; the WAL would only double the I/O.
  options.disableWAL = true;
  return options;
}
} // namespace

ShardStore::ShardStore(size_t rowFloats, size_t cacheRows,
                       std::string databasePath, RowInitializer initializer)
    : floatsPerRow(rowFloats), cacheLimit(cacheRows),
      databasePath(std::move(databasePath)),
      initializer(std::move(initializer)) {
  if (tiered()) {
    if (cacheLimit >= kNoSlot)
      throw Error("parameter server: cache of " + std::to_string(cacheLimit) +
                  " rows per shard is too large");
    slotOfKey.reserve(cacheLimit);
    openDatabase();
  }
}

ShardStore::~ShardStore() {
  if (!database)
    return;
  database.reset(); // closes it
  // Rows outlive the run only in checkpoints: the database is scratch,
  // which would hold its disk until the next run replaced it.
  std::error_code ignored;
  std::filesystem::remove_all(databasePath, ignored);
}

void ShardStore::openDatabase() {
  std::error_code ignored;
  // Leftovers of an earlier run must not leak in as rows.
  std::filesystem::remove_all(databasePath, ignored);
  std::filesystem::create_directories(databasePath, ignored);
  rocksdb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = false;
  // Floats barely compress; point lookups dominate (hash index + bloom).
  options.compression = rocksdb::kNoCompression;
  options.OptimizeForPointLookup(32);
  rocksdb::DB *opened = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, databasePath, &opened);
  if (!status.ok())
    throw Error("parameter server: cannot open RocksDB at '" + databasePath +
                "': " + status.ToString());
  database.reset(opened);
}

bool ShardStore::loadFromDatabase(uint64_t key, float *out) {
  if (inBatch) {
    const size_t rowBytes = floatsPerRow * sizeof(float);
    if (const uint32_t *pending = pendingIndex.find(key)) {
      std::memcpy(out, pendingRows.data() + *pending * floatsPerRow, rowBytes);
      return true;
    }
    if (const uint32_t *prefetched = prefetchedIndex.find(key)) {
      if (*prefetched == kNoSlot)
        return false;
      std::memcpy(out, prefetchedRows.data() + *prefetched * floatsPerRow,
                  rowBytes);
      return true;
    }
  }
  std::string value;
  rocksdb::Status status =
      database->Get(rocksdb::ReadOptions(), keySlice(key), &value);
  if (status.IsNotFound())
    return false;
  if (!status.ok())
    throw Error("parameter server: RocksDB read in '" + databasePath +
                "' failed: " + status.ToString());
  if (value.size() != floatsPerRow * sizeof(float))
    throw Error("parameter server: RocksDB row in '" + databasePath + "' has " +
                std::to_string(value.size()) + " bytes, expected " +
                std::to_string(floatsPerRow * sizeof(float)));
  std::memcpy(out, value.data(), value.size());
  return true;
}

void ShardStore::beginBatch(const std::vector<uint64_t> &misses) {
  inBatch = true;
  prefetchedIndex.clear();
  prefetchedRows.clear();
  pendingIndex.clear();
  pendingRows.clear();
  if (misses.empty())
    return;
  std::vector<rocksdb::Slice> keys;
  keys.reserve(misses.size());
  for (const uint64_t &key : misses)
    keys.push_back(keySlice(key));
  std::vector<rocksdb::PinnableSlice> values(misses.size());
  std::vector<rocksdb::Status> statuses(misses.size());
  database->MultiGet(rocksdb::ReadOptions(), database->DefaultColumnFamily(),
                     misses.size(), keys.data(), values.data(),
                     statuses.data());
  const size_t rowBytes = floatsPerRow * sizeof(float);
  for (size_t i = 0; i < misses.size(); ++i) {
    if (statuses[i].IsNotFound()) {
      prefetchedIndex.emplace(misses[i], kNoSlot);
      continue;
    }
    if (!statuses[i].ok())
      throw Error("parameter server: RocksDB read in '" + databasePath +
                  "' failed: " + statuses[i].ToString());
    if (values[i].size() != rowBytes)
      throw Error("parameter server: RocksDB row in '" + databasePath +
                  "' has " + std::to_string(values[i].size()) +
                  " bytes, expected " + std::to_string(rowBytes));
    auto [entry, inserted] = prefetchedIndex.emplace(
        misses[i], static_cast<uint32_t>(prefetchedRows.size() / floatsPerRow));
    if (!inserted)
      continue;
    const float *row = reinterpret_cast<const float *>(values[i].data());
    prefetchedRows.insert(prefetchedRows.end(), row, row + floatsPerRow);
  }
}

void ShardStore::endBatch() {
  inBatch = false;
  prefetchedIndex.clear();
  if (pendingIndex.empty())
    return;
  rocksdb::WriteBatch batch;
  const size_t rowBytes = floatsPerRow * sizeof(float);
  // Keys are distinct, so the batch's order does not change the database.
  pendingIndex.forEach([&](const uint64_t &key, uint32_t index) {
    batch.Put(keySlice(key),
              rocksdb::Slice(reinterpret_cast<const char *>(
                                 pendingRows.data() + index * floatsPerRow),
                             rowBytes));
  });
  pendingIndex.clear();
  rocksdb::Status status = database->Write(tierWriteOptions(), &batch);
  if (!status.ok())
    throw Error("parameter server: RocksDB write in '" + databasePath +
                "' failed: " + status.ToString());
}

void ShardStore::writeToDatabase(uint64_t key, const float *row) {
  if (inBatch) {
    // Deferred to endBatch(); a later miss of this key reads it from here.
    auto [entry, inserted] = pendingIndex.emplace(
        key, static_cast<uint32_t>(pendingRows.size() / floatsPerRow));
    if (inserted)
      pendingRows.insert(pendingRows.end(), row, row + floatsPerRow);
    else
      std::memcpy(pendingRows.data() + *entry * floatsPerRow, row,
                  floatsPerRow * sizeof(float));
    return;
  }
  rocksdb::Status status =
      database->Put(tierWriteOptions(), keySlice(key),
                    rocksdb::Slice(reinterpret_cast<const char *>(row),
                                   floatsPerRow * sizeof(float)));
  if (!status.ok())
    throw Error("parameter server: RocksDB write in '" + databasePath +
                "' failed: " + status.ToString());
}

void ShardStore::writeThrough() {
  rocksdb::WriteBatch batch;
  const size_t rowBytes = floatsPerRow * sizeof(float);
  for (size_t i = 0; i < writeThroughKeys.size(); ++i)
    batch.Put(
        keySlice(writeThroughKeys[i]),
        rocksdb::Slice(reinterpret_cast<const char *>(writeThroughRows[i]),
                       rowBytes));
  rocksdb::Status status = database->Write(tierWriteOptions(), &batch);
  if (!status.ok())
    throw Error("parameter server: RocksDB write in '" + databasePath +
                "' failed: " + status.ToString());
}

void ShardStore::linkFront(uint32_t slot) {
  previous[slot] = kNoSlot;
  next[slot] = head;
  if (head != kNoSlot)
    previous[head] = slot;
  head = slot;
  if (tail == kNoSlot)
    tail = slot;
}

void ShardStore::unlink(uint32_t slot) {
  if (previous[slot] != kNoSlot)
    next[previous[slot]] = next[slot];
  else
    head = next[slot];
  if (next[slot] != kNoSlot)
    previous[next[slot]] = previous[slot];
  else
    tail = previous[slot];
}

uint32_t ShardStore::takeSlot(uint64_t key) {
  uint32_t slot;
  if (!tiered() || slotsInUse < cacheLimit) {
    slot = slotsInUse++;
    if (slot / kRowsPerChunk >= chunks.size()) {
      // Cache-line aligned, so a row of 64k bytes spans k lines, not k + 1.
      const size_t bytes =
          (kRowsPerChunk * floatsPerRow * sizeof(float) + 63) / 64 * 64;
      std::unique_ptr<float[], FreeChunk> chunk(
          static_cast<float *>(std::aligned_alloc(64, bytes)));
      if (!chunk)
        throw std::bad_alloc();
      chunks.push_back(std::move(chunk));
    }
    if (tiered()) {
      keyOfSlot.push_back(key);
      previous.push_back(kNoSlot);
      next.push_back(kNoSlot);
      dirty.push_back(0);
    }
  } else {
    slot = tail;
    unlink(slot);
    if (dirty[slot])
      writeToDatabase(keyOfSlot[slot], slotData(slot));
    slotOfKey.erase(keyOfSlot[slot]);
    keyOfSlot[slot] = key;
    dirty[slot] = 0;
  }
  if (tiered())
    linkFront(slot);
  slotOfKey.emplace(key, slot);
  return slot;
}

float *ShardStore::acquire(uint64_t key, bool willModify) {
  if (const uint32_t *found = slotOfKey.find(key)) {
    const uint32_t slot = *found;
    if (tiered()) {
      if (head != slot) {
        unlink(slot);
        linkFront(slot);
      }
      dirty[slot] |= willModify;
    }
    return slotData(slot);
  }
  const uint32_t slot = takeSlot(key);
  float *row = slotData(slot);
  if (tiered() && loadFromDatabase(key, row)) {
    dirty[slot] = willModify;
    return row;
  }
  initializer(key, row);
  ++rows;
  // A new row exists from now on, pushed or not, so it must reach RocksDB.
  if (tiered())
    dirty[slot] = 1;
  return row;
}

bool ShardStore::read(uint64_t key, float *out) {
  if (const uint32_t *found = slotOfKey.find(key)) {
    std::memcpy(out, slotData(*found), floatsPerRow * sizeof(float));
    return true;
  }
  return tiered() && loadFromDatabase(key, out);
}

void ShardStore::insert(uint64_t key, const float *row) {
  bool existed = slotOfKey.contains(key);
  if (!existed && tiered()) {
    std::vector<float> scratch(floatsPerRow);
    existed = loadFromDatabase(key, scratch.data());
  }
  // acquire() would run the initialiser for a new key; count it here instead.
  const size_t before = rows;
  float *target = acquire(key, /*willModify=*/true);
  rows = before + (existed ? 0 : 1);
  std::memcpy(target, row, floatsPerRow * sizeof(float));
}

void ShardStore::clear() {
  slotOfKey.clear();
  keyOfSlot.clear();
  previous.clear();
  next.clear();
  dirty.clear();
  head = tail = kNoSlot;
  slotsInUse = 0;
  rows = 0;
  if (tiered()) {
    database.reset();
    openDatabase();
  }
}

void ShardStore::forEachRow(
    const std::function<void(uint64_t key, const float *row)> &visit) {
  if (tiered()) {
    // Rows only in RocksDB first; cached copies are newer, so skip those.
    std::unique_ptr<rocksdb::Iterator> iterator(
        database->NewIterator(rocksdb::ReadOptions()));
    std::vector<float> row(floatsPerRow);
    for (iterator->SeekToFirst(); iterator->Valid(); iterator->Next()) {
      rocksdb::Slice key = iterator->key();
      rocksdb::Slice value = iterator->value();
      if (key.size() != sizeof(uint64_t) ||
          value.size() != floatsPerRow * sizeof(float))
        throw Error("parameter server: malformed RocksDB row in '" +
                    databasePath + "'");
      uint64_t id;
      std::memcpy(&id, key.data(), sizeof(id));
      if (slotOfKey.contains(id))
        continue;
      std::memcpy(row.data(), value.data(), value.size());
      visit(id, row.data());
    }
    if (!iterator->status().ok())
      throw Error("parameter server: RocksDB scan of '" + databasePath +
                  "' failed: " + iterator->status().ToString());
  }
  // Slot order of the index: the same rows inserted and evicted in the same
  // order give the same file.
  slotOfKey.forEach(
      [&](uint64_t key, uint32_t slot) { visit(key, slotData(slot)); });
}

} // namespace heterps::rt::ps
