//===- FlatKeyMap.h - Open-addressing map of uint64 keys --------*- C++ -*-===//
//
// Internal to the parameter server: the row index of a shard and the scratch
// maps of pull/push. std::unordered_map costs a node allocation per key and
// a pointer chase per lookup; this is one flat array of 16-byte slots, power
// of two sized, linear probing, at most 70% full, so a lookup is usually one
// cache line. Erase shifts the following entries back (no tombstones), so the
// LRU cache's erase/insert churn never degrades it.
//
// A slot is in use when its generation equals the map's: every uint64 is a
// valid key (no sentinel key), and clear() is O(1) (the next generation), so
// scratch maps reused for every batch cost nothing to empty. Iteration order
// depends only on the sequence of operations, never on addresses, so it is
// reproducible. Not thread-safe; pointers returned by find/emplace are valid
// until the next emplace, erase, clear or reserve.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_FLATKEYMAP_H
#define HETERPS_RUNTIME_PS_FLATKEYMAP_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

// GCC deems a function that only prefetches side-effect free and deletes
// calls to it that it did not inline; forced inlining keeps the prefetch.
#if defined(__GNUC__)
#define HETERPS_PS_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define HETERPS_PS_ALWAYS_INLINE inline
#endif

namespace heterps::rt::ps {

class FlatKeyMap {
public:
  using Key = uint64_t;
  using Value = uint32_t;

  size_t size() const { return used; }
  bool empty() const { return used == 0; }
  /// Slots allocated (0 before the first insert or reserve).
  size_t capacity() const { return slots.size(); }

  Value *find(Key key) {
    if (used == 0)
      return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask) {
      Slot &slot = slots[i];
      if (slot.generation != generation)
        return nullptr;
      if (slot.key == key)
        return &slot.value;
    }
  }
  const Value *find(Key key) const {
    return const_cast<FlatKeyMap *>(this)->find(key);
  }
  bool contains(Key key) const { return find(key) != nullptr; }
  size_t count(Key key) const { return contains(key) ? 1 : 0; }

  /// Inserts (key, value) unless key is present; returns the stored value
  /// and whether it was inserted (as std::unordered_map::emplace).
  std::pair<Value *, bool> emplace(Key key, Value value) {
    if (overLoad(used + 1))
      rehash(slotsFor(used + 1));
    size_t i = home(key);
    for (; slots[i].generation == generation; i = (i + 1) & mask)
      if (slots[i].key == key)
        return {&slots[i].value, false};
    slots[i] = {key, value, generation};
    ++used;
    return {&slots[i].value, true};
  }
  std::pair<Value *, bool> insert(Key key, Value value) {
    return emplace(key, value);
  }

  /// Removes key; returns whether it was present.
  bool erase(Key key) {
    if (used == 0)
      return false;
    size_t hole = home(key);
    for (; slots[hole].key != key; hole = (hole + 1) & mask)
      if (slots[hole].generation != generation)
        return false;
    if (slots[hole].generation != generation)
      return false;
    // Backward-shift deletion: walk the run after the hole and move back
    // every entry whose home is not cyclically in (hole, j], i.e. whose
    // probe sequence passes the hole; it would be unreachable otherwise.
    for (size_t j = (hole + 1) & mask; slots[j].generation == generation;
         j = (j + 1) & mask) {
      const size_t distanceFromHome = (j - home(slots[j].key)) & mask;
      const size_t distanceFromHole = (j - hole) & mask;
      if (distanceFromHome >= distanceFromHole) {
        slots[hole] = slots[j];
        hole = j;
      }
    }
    slots[hole].generation = kFree;
    --used;
    return true;
  }

  /// Removes every entry and keeps the capacity, in O(1): slots of older
  /// generations are free. Only a wrapped counter needs a pass.
  void clear() {
    if (used == 0)
      return;
    used = 0;
    if (++generation == kFree) {
      for (Slot &slot : slots)
        slot.generation = kFree;
      generation = 1;
    }
  }

  /// Room for `entries` without rehashing.
  void reserve(size_t entries) {
    if (overLoad(entries))
      rehash(slotsFor(entries));
  }

  /// Hints that `key` will be looked up soon: fetches its home slot.
  HETERPS_PS_ALWAYS_INLINE void prefetch(Key key) const {
#if defined(__GNUC__)
    if (!slots.empty())
      __builtin_prefetch(&slots[home(key)]);
#else
    (void)key;
#endif
  }

  /// Calls visit(key, value) for every entry, in slot order. visit must not
  /// modify the map.
  template <typename Visit> void forEach(Visit &&visit) const {
    if (used == 0)
      return;
    for (const Slot &slot : slots)
      if (slot.generation == generation)
        visit(slot.key, slot.value);
  }

  /// The slot hash: a different mixer from mixKey (which shards keys),
  /// whose high bits pick the slot, since the keys of one shard share
  /// mixKey's low bits. MurmurHash3's fmix64; public for tests that build
  /// colliding keys.
  static uint64_t mix(Key key) {
    key ^= key >> 33;
    key *= 0xFF51AFD7ED558CCDull;
    key ^= key >> 33;
    key *= 0xC4CEB9FE1A85EC53ull;
    key ^= key >> 33;
    return key;
  }

private:
  struct Slot {
    Key key;
    Value value;
    uint32_t generation; // in use when equal to the map's generation
  };
  static constexpr uint32_t kFree = 0;
  static constexpr size_t kMinSlots = 16;

  size_t home(Key key) const { return static_cast<size_t>(mix(key) >> shift); }
  /// Whether `entries` exceed 70% of the slots.
  bool overLoad(size_t entries) const {
    return entries * 10 > slots.size() * 7;
  }
  static size_t slotsFor(size_t entries) {
    size_t count = kMinSlots;
    while (entries * 10 > count * 7)
      count *= 2;
    return count;
  }
  /// Moves every entry into `count` fresh slots, in old slot order, so the
  /// layout depends only on the map's history.
  void rehash(size_t count) {
    std::vector<Slot> old = std::move(slots);
    const uint32_t oldGeneration = generation;
    slots.assign(count, Slot{0, 0, kFree});
    mask = count - 1;
    shift = 64;
    for (size_t n = count; n > 1; n /= 2)
      --shift;
    generation = 1;
    for (const Slot &slot : old) {
      if (slot.generation != oldGeneration)
        continue;
      size_t i = home(slot.key);
      while (slots[i].generation == generation)
        i = (i + 1) & mask;
      slots[i] = {slot.key, slot.value, generation};
    }
  }

  std::vector<Slot> slots;
  size_t mask = 0;
  unsigned shift = 63;
  size_t used = 0;
  uint32_t generation = 1;
};

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_FLATKEYMAP_H
