//===- CudaShardMemory.cu - GPUs as a sharded pass cache's places ---------===//
//
// Rows move between GPUs with peer copies (cudaMemcpyPeerAsync: over NVLink
// or PCIe where the devices reach each other, through the host where they
// do not) and are scattered and gathered by kernels over the same
// per-thread code the host's ShardMemory runs (PassCacheKernels.h).
//
//===----------------------------------------------------------------------===//

#include "CudaMemory.cuh"
#include "PassCacheKernels.h"
#include "ShardMemory.h"

#include <map>

namespace heterps::rt::ps {
namespace {

struct ShardMemoryErrors {
  static constexpr const char *name = "pass cache on the GPUs";
  static constexpr const char *memoryHint =
      " (--pass-memory bounds what a pass holds)";
};
void check(cudaError_t status, const std::string &what) {
  cuda::check<ShardMemoryErrors>(status, what);
}
template <typename T>
using DeviceArray = cuda::DeviceArray<T, ShardMemoryErrors>;
using DeviceScope = cuda::DeviceScope<ShardMemoryErrors>;
using cuda::blocksFor;

__global__ void ungroupRows(const float *grouped, const uint32_t *positions,
                            size_t count, size_t dim, float *out) {
  const size_t total = count * dim;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x)
    kernels::ungroupElement(grouped, positions, dim, i, out);
}

__global__ void groupRows(const float *in, const uint32_t *positions,
                          size_t count, size_t dim, float *grouped) {
  const size_t total = count * dim;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x)
    kernels::groupElement(in, positions, dim, i, grouped);
}

/// What the memory keeps per device: the stream its copies and kernels
/// queue on, and the positions of the last scatter or gather.
struct Device {
  cudaStream_t stream = nullptr;
  DeviceArray<uint32_t> positions;
};

class CudaBuffer final : public PlaceBuffer {
public:
  CudaBuffer(int device, cudaStream_t stream)
      : device(device), stream(stream) {}
  float *data() const override { return values.data(); }
  void reserve(size_t floats, size_t kept) override {
    DeviceScope scope(device);
    if (kept)
      values.grow(floats, stream);
    else
      values.reserve(floats);
  }

private:
  int device;
  cudaStream_t stream;
  DeviceArray<float> values;
};

class CudaShardMemory final : public ShardMemory {
public:
  explicit CudaShardMemory(const std::vector<int> &devices) {
    for (int device : devices)
      if (!streams.count(device))
        streams[device].stream = cuda::openStream<ShardMemoryErrors>(device);
  }
  ~CudaShardMemory() override {
    for (auto &[device, state] : streams)
      cudaStreamDestroy(state.stream);
  }

  int callerPlace() const override {
    int device = 0;
    check(cudaGetDevice(&device), "reading the calling thread's device");
    return device;
  }

  std::unique_ptr<PlaceBuffer> makeBuffer(int place) override {
    return std::make_unique<CudaBuffer>(place, deviceState(place).stream);
  }

  void copy(float *to, int toPlace, const float *from, int fromPlace,
            size_t floats) override {
    if (floats == 0)
      return;
    Device &target = deviceState(toPlace);
    DeviceScope scope(toPlace);
    const size_t bytes = floats * sizeof(float);
    if (toPlace == fromPlace)
      check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice,
                            target.stream),
            "copying rows on a GPU");
    else
      check(cudaMemcpyPeerAsync(to, toPlace, from, fromPlace, bytes,
                                target.stream),
            "copying rows from GPU " + std::to_string(fromPlace) + " to GPU " +
                std::to_string(toPlace));
    check(cudaStreamSynchronize(target.stream), "copying rows between GPUs");
  }

  void scatterRows(int place, const float *grouped, const uint32_t *positions,
                   size_t count, size_t dim, float *out) override {
    launch(place, positions, count, dim,
           [&](cudaStream_t stream, const uint32_t *onDevice) {
             ungroupRows<<<blocksFor(count * dim, 256), 256, 0, stream>>>(
                 grouped, onDevice, count, dim, out);
           });
  }

  void gatherRows(int place, const float *in, const uint32_t *positions,
                  size_t count, size_t dim, float *grouped) override {
    launch(place, positions, count, dim,
           [&](cudaStream_t stream, const uint32_t *onDevice) {
             groupRows<<<blocksFor(count * dim, 256), 256, 0, stream>>>(
                 in, onDevice, count, dim, grouped);
           });
  }

  void readIds(int place, const int64_t *ids, size_t count,
               int64_t *host) override {
    if (count == 0)
      return;
    Device &state = deviceState(place);
    DeviceScope scope(place);
    check(cudaMemcpyAsync(host, ids, count * sizeof(int64_t),
                          cudaMemcpyDeviceToHost, state.stream),
          "reading pulled ids");
    check(cudaStreamSynchronize(state.stream), "reading pulled ids");
  }

private:
  /// A device the cache was not made for (a stage on another GPU) gets its
  /// stream on first use.
  Device &deviceState(int device) {
    auto found = streams.find(device);
    if (found != streams.end())
      return found->second;
    Device &state = streams[device];
    state.stream = cuda::openStream<ShardMemoryErrors>(device);
    return state;
  }

  /// Uploads `positions` to `place` and runs `kernel(stream, positions
  /// there)` over `count` rows of `dim`, waiting for it.
  template <typename Kernel>
  void launch(int place, const uint32_t *positions, size_t count, size_t dim,
              Kernel kernel) {
    if (count == 0 || dim == 0)
      return;
    Device &state = deviceState(place);
    DeviceScope scope(place);
    state.positions.upload(positions, count, state.stream);
    kernel(state.stream, state.positions.data());
    check(cudaGetLastError(), "moving rows between batch and shard order");
    check(cudaStreamSynchronize(state.stream),
          "moving rows between batch and shard order");
  }

  std::map<int, Device> streams;
};

} // namespace

std::unique_ptr<ShardMemory>
makeCudaShardMemory(const std::vector<int> &devices) {
  return std::make_unique<CudaShardMemory>(devices);
}

} // namespace heterps::rt::ps
