//===- ShardedPassCache.h - A pass cache split by key -----------*- C++ -*-===//
//
// Internal to the parameter server: the HBM tier over several GPUs, as
// Paddle's HeterComm shards its hash tables: every key of a pass lives in
// exactly one shard (a pass cache of its own, CudaPassCache on its GPU),
// chosen by a hash of the key, so N GPUs hold N times the rows of one.
//
// Every call routes its ids: they are grouped by shard, stably, so each
// shard sees its ids in batch order and sums a key's gradients in the
// order the unsharded cache does. A key's row and state so end every pass
// bit for bit as with one shard (and as on the host server). Pulls gather
// each shard's rows in its own memory, copy them to the caller's and
// scatter them to their batch positions there; pushes gather each shard's
// gradient rows and hand them over. The memory those moves go through is a
// ShardMemory (ShardMemory.h): CUDA devices, or host memory in the tests.
//
// A pass begins, ends and is prepared on every shard at once, a thread per
// shard (each loads and writes back its own rows from the server, whose
// shards lock separately). A push checks every id before any shard
// changes, so an id outside the pass throws with every row as it was.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_SHARDEDPASSCACHE_H
#define HETERPS_RUNTIME_PS_SHARDEDPASSCACHE_H

#include "ShardMemory.h"

#include "heterps/Runtime/PassCache.h"

#include <memory>
#include <vector>

namespace heterps::rt::ps {

/// Which of `shards` holds `key` (a mix of its bits, so that runs of
/// consecutive keys spread evenly).
size_t shardOfKey(uint64_t key, size_t shards);

/// One pass cache over `shards` (at least two), shard i keeping its rows
/// at places[i] of `memory`; every shard is a cache over `server`.
std::unique_ptr<PassCache> makeShardedPassCache(
    ParameterServer &server, std::vector<std::unique_ptr<PassCache>> shards,
    std::vector<int> places, std::unique_ptr<ShardMemory> memory);

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_SHARDEDPASSCACHE_H
