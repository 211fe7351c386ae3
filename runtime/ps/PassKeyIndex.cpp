//===- PassKeyIndex.cpp - Which keys a pass caches, and where -------------===//

#include "PassKeyIndex.h"

#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

namespace heterps::rt::ps {

void sortByHighBits(std::vector<uint64_t> &values, unsigned firstBit,
                    std::vector<uint64_t> &scratch) {
  // LSD radix sort, 8 bits a round: stable (what planMerge needs) and
  // linear in the count. A round whose digit is the same for every value
  // would move nothing and is skipped (small ids, few slots).
  constexpr unsigned kDigitBits = 8;
  constexpr size_t kBuckets = size_t(1) << kDigitBits;
  const unsigned firstDigit = firstBit / kDigitBits;
  constexpr unsigned kDigits = 64 / kDigitBits;
  std::array<std::array<size_t, kBuckets>, kDigits> counts{};
  for (uint64_t value : values)
    for (unsigned digit = firstDigit; digit < kDigits; ++digit)
      ++counts[digit][(value >> (digit * kDigitBits)) & (kBuckets - 1)];
  scratch.resize(values.size());
  for (unsigned digit = firstDigit; digit < kDigits; ++digit) {
    std::array<size_t, kBuckets> &count = counts[digit];
    if (std::find(count.begin(), count.end(), values.size()) != count.end())
      continue;
    size_t offset = 0;
    for (size_t &bucket : count)
      offset += std::exchange(bucket, offset);
    const unsigned shift = digit * kDigitBits;
    for (uint64_t value : values)
      scratch[count[(value >> shift) & (kBuckets - 1)]++] = value;
    values.swap(scratch);
  }
}

void PassKeyIndex::build(std::string table, std::vector<uint64_t> keys) {
  sortByHighBits(keys, 0, sortScratch);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  // Slots and batch positions share one 64-bit sort key in planMerge.
  if (keys.size() > std::numeric_limits<uint32_t>::max())
    throw Error("pass cache: table '" + table + "' has " +
                std::to_string(keys.size()) +
                " keys in one pass; at most 2^32 - 1 fit");
  tableName = std::move(table);
  sortedKeys = std::move(keys);
  slotOfKey.clear();
  slotOfKey.reserve(sortedKeys.size());
  for (size_t slot = 0; slot < sortedKeys.size(); ++slot)
    slotOfKey.emplace(sortedKeys[slot], static_cast<uint32_t>(slot));
}

void PassKeyIndex::clear() {
  tableName.clear();
  sortedKeys.clear();
  slotOfKey.clear();
}

void PassKeyIndex::slotsOf(const uint64_t *ids, size_t count,
                           uint32_t *slots) const {
  // The first missing index of [begin, end), or `count`. Random ids miss
  // the cache on their index slot: fetch a few ahead.
  auto lookUp = [&](size_t begin, size_t end) {
    constexpr size_t kLookAhead = 8;
    for (size_t i = begin; i < end; ++i) {
      if (i + kLookAhead < end)
        slotOfKey.prefetch(ids[i + kLookAhead]);
      const uint32_t *slot = slotOfKey.find(ids[i]);
      if (!slot)
        return i;
      slots[i] = *slot;
    }
    return count;
  };
  size_t firstMissing = count;
  if (count < kParallelPassIds) {
    firstMissing = lookUp(0, count);
  } else {
    // The map is only read; the least missing index is the serial error.
    const size_t chunks = (count + kParallelPassIds - 1) / kParallelPassIds;
#pragma omp parallel for schedule(static) reduction(min : firstMissing)
    for (size_t chunk = 0; chunk < chunks; ++chunk)
      firstMissing =
          std::min(firstMissing,
                   lookUp(chunk * kParallelPassIds,
                          std::min(count, (chunk + 1) * kParallelPassIds)));
  }
  if (firstMissing < count)
    throw missingKeyError(ids[firstMissing]);
}

Error missingPassKeyError(const std::string &table, uint64_t id,
                          size_t passKeys) {
  return Error("pass cache: id " + std::to_string(id) + " of table '" + table +
               "' is not in this pass (" + std::to_string(passKeys) +
               " keys); add every id the pass's batches touch with "
               "addPassKeys before beginPass");
}

Error PassKeyIndex::missingKeyError(uint64_t id) const {
  return missingPassKeyError(tableName, id, sortedKeys.size());
}

size_t PassKeyIndex::firstMissing(const uint64_t *ids, size_t count) const {
  for (size_t i = 0; i < count; ++i)
    if (!slotOfKey.find(ids[i]))
      return i;
  return count;
}

void PassKeyIndex::splitByRunningPass(
    const PassKeyIndex *running,
    std::vector<std::pair<uint32_t, uint32_t>> &shared,
    std::vector<uint64_t> &missing, std::vector<uint32_t> &missingSlots) const {
  missing.clear();
  missingSlots.clear();
  for (uint32_t slot = 0; slot < sortedKeys.size(); ++slot) {
    const uint32_t *from = running ? running->find(sortedKeys[slot]) : nullptr;
    if (from) {
      shared.push_back({slot, *from});
    } else {
      missing.push_back(sortedKeys[slot]);
      missingSlots.push_back(slot);
    }
  }
}

void PassKeyIndex::planMerge(const uint32_t *slots, size_t count,
                             MergePlan &plan) {
  if (count > std::numeric_limits<uint32_t>::max())
    throw Error("pass cache: a push of " + std::to_string(count) +
                " ids is too large (at most 2^32 - 1)");
  // Sorted by slot only: the sort is stable, so each slot's positions stay
  // in batch order.
  plan.sortKeys.resize(count);
  for (size_t i = 0; i < count; ++i)
    plan.sortKeys[i] = uint64_t(slots[i]) << 32 | i;
  sortByHighBits(plan.sortKeys, 32, plan.sortScratch);
  plan.slots.clear();
  plan.runStarts.clear();
  plan.positions.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t slot = static_cast<uint32_t>(plan.sortKeys[i] >> 32);
    if (i == 0 || slot != plan.slots.back()) {
      plan.slots.push_back(slot);
      plan.runStarts.push_back(static_cast<uint32_t>(i));
    }
    plan.positions[i] = static_cast<uint32_t>(plan.sortKeys[i]);
  }
  plan.runStarts.push_back(static_cast<uint32_t>(count));
}

} // namespace heterps::rt::ps
