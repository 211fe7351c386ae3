//===- ShardMemory.h - Memory a sharded pass cache moves rows in -*- C++
//-*-===//
//
// Internal to the parameter server: what a sharded pass cache
// (ShardedPassCache.h) needs of the memory its shards keep their rows in,
// and of the caller's. A place is a CUDA device, or kHostPlace. The CUDA
// implementation (CudaShardMemory.cu) copies between devices and scatters
// and gathers rows with kernels; the host one does the same with memcpy,
// with every place in host memory, so that the sharded cache's routing of
// rows between places runs, whole, in the CPU tests.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_SHARDMEMORY_H
#define HETERPS_RUNTIME_PS_SHARDMEMORY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace heterps::rt::ps {

constexpr int kHostPlace = -1;

/// Floats at one place, grown on demand.
class PlaceBuffer {
public:
  virtual ~PlaceBuffer() = default;
  virtual float *data() const = 0;
  /// Room for `floats` floats, keeping the first `kept` of them.
  virtual void reserve(size_t floats, size_t kept = 0) = 0;
};

class ShardMemory {
public:
  virtual ~ShardMemory() = default;

  /// Where the calling thread's memory is: its current CUDA device for the
  /// GPU (a GPU stage's), the host's otherwise.
  virtual int callerPlace() const = 0;
  /// An empty buffer at `place`.
  virtual std::unique_ptr<PlaceBuffer> makeBuffer(int place) = 0;
  /// Copies `floats` floats from `from` at `fromPlace` to `to` at `toPlace`;
  /// done when it returns.
  virtual void copy(float *to, int toPlace, const float *from, int fromPlace,
                    size_t floats) = 0;
  /// At `place`: out row positions[j] = grouped row j, for `count` rows of
  /// `dim` floats (positions in host memory, distinct).
  virtual void scatterRows(int place, const float *grouped,
                           const uint32_t *positions, size_t count, size_t dim,
                           float *out) = 0;
  /// At `place`: grouped row j = in row positions[j].
  virtual void gatherRows(int place, const float *in, const uint32_t *positions,
                          size_t count, size_t dim, float *grouped) = 0;
  /// `count` ids from `place`'s memory into host memory.
  virtual void readIds(int place, const int64_t *ids, size_t count,
                       int64_t *host) = 0;
};

/// Every place in host memory.
std::unique_ptr<ShardMemory> makeHostShardMemory();
/// CUDA devices as places (CudaShardMemory.cu; only where CUDA is built).
std::unique_ptr<ShardMemory>
makeCudaShardMemory(const std::vector<int> &devices);

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_SHARDMEMORY_H
