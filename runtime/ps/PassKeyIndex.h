//===- PassKeyIndex.h - Which keys a pass caches, and where ----*- C++ -*-===//
//
// Internal to the parameter server: the device-independent part of a pass
// cache (PassCache.h) for one table. A pass's keys are sorted and
// deduplicated once; slot i of the cache holds keys()[i]. Ids of the pass's
// batches are translated to slots, and a push is merged by sorting
// (slot, batch position) pairs, so every slot's gradients are summed in
// batch order: the order in which the host server's push sums them, which
// is what makes training through the cache bit-identical to it. The row
// storage and the arithmetic (gather, sum, optimizer) belong to an
// implementation: host memory in HostPassCache; CudaPassCache keeps the rows
// and a copy of the sorted keys in GPU memory, where it looks ids up and
// groups pushes itself, to the same slots and merge plan.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_PASSKEYINDEX_H
#define HETERPS_RUNTIME_PS_PASSKEYINDEX_H

#include "FlatKeyMap.h"

#include "heterps/Runtime/Types.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace heterps::rt::ps {

/// A push grouped by slot: runs of equal slots in ascending slot order,
/// each run's batch positions in batch order. Run r covers
/// positions[runStarts[r] .. runStarts[r + 1]) and updates slots[r].
struct MergePlan {
  std::vector<uint32_t> slots;
  std::vector<uint32_t> runStarts;
  std::vector<uint32_t> positions;
  /// Scratch of the sort: (slot << 32 | position).
  std::vector<uint64_t> sortKeys, sortScratch;

  size_t runs() const { return slots.size(); }
};

/// Sorts `values` by their bits [firstBit, 64), stably (a radix sort;
/// `scratch` is its second buffer).
void sortByHighBits(std::vector<uint64_t> &values, unsigned firstBit,
                    std::vector<uint64_t> &scratch);

/// Below this many ids a pass cache's call stays on the calling thread: an
/// OpenMP parallel region costs more than it saves (as the server's).
constexpr size_t kParallelPassIds = 2048;

/// The error for a pulled or pushed `id` that a pass of `passKeys` keys of
/// `table` does not hold.
Error missingPassKeyError(const std::string &table, uint64_t id,
                          size_t passKeys);

class PassKeyIndex {
public:
  /// Most memory the index takes per key: the sorted key, the sort's
  /// scratch and the map's 16-byte slots (at least 35% full).
  static constexpr size_t kBytesPerKey = 8 + 8 + 46;

  /// Sorts and deduplicates `keys` and indexes them; replaces what was
  /// there. `table` names the table in errors.
  void build(std::string table, std::vector<uint64_t> keys);
  /// Forgets the keys, keeping the allocations for the next pass.
  void clear();

  const std::string &table() const { return tableName; }
  /// Sorted and distinct; slot i holds keys()[i].
  const std::vector<uint64_t> &keys() const { return sortedKeys; }
  size_t size() const { return sortedKeys.size(); }

  /// The slot of every id into `slots`, a large call on OpenMP threads.
  /// Throws Error naming the table and the first id the pass does not hold
  /// (nothing of the cache changes).
  void slotsOf(const uint64_t *ids, size_t count, uint32_t *slots) const;
  /// The slot of `key`, or null when the pass does not hold it.
  const uint32_t *find(uint64_t key) const { return slotOfKey.find(key); }
  /// The least i whose ids[i] the pass does not hold; count if none.
  size_t firstMissing(const uint64_t *ids, size_t count) const;
  /// The error for a pulled or pushed `id` the pass does not hold.
  Error missingKeyError(uint64_t id) const;

  /// For a pass prepared while `running` (null: none) is open: the keys
  /// both hold, as (slot here, slot in running), into `shared`, and the
  /// others with their slots here into `missing` / `missingSlots` (those
  /// two are emptied first).
  void splitByRunningPass(const PassKeyIndex *running,
                          std::vector<std::pair<uint32_t, uint32_t>> &shared,
                          std::vector<uint64_t> &missing,
                          std::vector<uint32_t> &missingSlots) const;

  /// Groups `count` ids, given by their slots, into `plan` (sort by key,
  /// then runs of equal keys).
  static void planMerge(const uint32_t *slots, size_t count, MergePlan &plan);

private:
  std::string tableName;
  std::vector<uint64_t> sortedKeys, sortScratch;
  FlatKeyMap slotOfKey;
};

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_PASSKEYINDEX_H
