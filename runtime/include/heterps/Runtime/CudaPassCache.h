//===- CudaPassCache.h - The pass cache in GPU memory -----------*- C++ -*-===//
//
// The HBM tier of the parameter server (Paddle's PSGPUWrapper BeginPass /
// EndPass): a pass's rows and their optimizer state live in GPU memory, one
// row-major array per table, slot i holding the pass's i-th sorted key. The
// host keeps the key index and plans each push's merge (PassKeyIndex.h,
// shared with HostPassCache); the GPU gathers pulled rows, sums each id's
// gradients in batch order and runs the optimizer on its rows with the
// host's arithmetic (ps/OptimizerRules.h, no fused multiply-add), so the
// same pulls and pushes give bit for bit HostPassCache's and the host
// server's rows and state. A prepared next pass is loaded into host memory
// while a pass runs and uploaded when it opens.
//
// pullToDevice gathers rows straight into device memory: GPU stages pull
// through it (stage ABI 3's pullRowsToDevice). push takes host gradients:
// the training server sums a step's micro-batches on the host first.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_CUDAPASSCACHE_H
#define HETERPS_RUNTIME_CUDAPASSCACHE_H

#include "heterps/Runtime/PassCache.h"

#include <memory>
#include <vector>

namespace heterps::rt::ps {

/// Whether this build has the CUDA pass cache (a CUDA toolkit was found).
bool cudaPassCacheBuilt();

/// A pass cache in the memory of CUDA device `device`, over an in-process
/// server. Throws Error when the build has none or no such device is usable.
std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &server,
                                             int device = 0);

/// A pass cache over the CUDA devices `devices`, a shard on each entry (an
/// entry may repeat: those shards share the device), every key of a pass
/// in one shard (ps/ShardedPassCache.h): the HBM tier over several GPUs.
/// One entry is makeCudaPassCache(server, devices[0]). Throws Error as the
/// other does, or for an empty list.
std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &server,
                                             const std::vector<int> &devices);

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_CUDAPASSCACHE_H
