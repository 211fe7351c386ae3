//===- StableHash.h - A hash that is the same everywhere --------*- C++ -*-===//
//
// FNV-1a: stable across runs, compilers and machines (unlike std::hash).
// MPI ranks route a parameter's name to its shard with it, the training
// server seeds a table's initial rows with it, checkpoints record a
// bundle's identity with it, and long file names end with it.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_STABLEHASH_H
#define HETERPS_RUNTIME_STABLEHASH_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace heterps::rt {

/// FNV-1a (64-bit) of `text`.
inline uint64_t stableHash(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// stableHash(text) as 16 lowercase hex digits.
inline std::string stableHashText(std::string_view text) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx",
                static_cast<unsigned long long>(stableHash(text)));
  return digits;
}

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_STABLEHASH_H
