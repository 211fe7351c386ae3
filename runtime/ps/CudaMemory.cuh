//===- CudaMemory.cuh - GPU memory of the server's tiers -------*- CUDA -*-===//
//
// Internal to the parameter server: what its GPU tiers (CudaPassCache.cu,
// CudaDenseCache.cu) share: CUDA error checks, grown device arrays, the
// current-device scope and the stream a tier queues its work on. `Owner`
// names the tier in errors: a struct with `static constexpr const char *`
// members `name` ("pass cache on the GPU") and `memoryHint` (what bounds its
// memory, appended to a failed allocation's message).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_CUDAMEMORY_CUH
#define HETERPS_RUNTIME_PS_CUDAMEMORY_CUH

#include "heterps/Runtime/Types.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

namespace heterps::rt::ps::cuda {

template <typename Owner>
void check(cudaError_t status, const std::string &what) {
  if (status == cudaSuccess)
    return;
  // Clears the thread's last error, so that a later launch check does not
  // report this one against a launch that succeeded.
  cudaGetLastError();
  throw Error(std::string(Owner::name) + ": " + what + ": " +
              cudaGetErrorString(status));
}

/// Device memory for `count` T, grown on demand (reserve drops the
/// contents, grow keeps them).
template <typename T, typename Owner> class DeviceArray {
public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  DeviceArray(DeviceArray &&other) noexcept { swap(other); }
  DeviceArray &operator=(DeviceArray &&other) noexcept {
    swap(other);
    return *this;
  }
  ~DeviceArray() {
    if (pointer)
      cudaFree(pointer);
  }

  T *data() const { return pointer; }
  void reserve(size_t count) {
    if (count <= capacity)
      return;
    // Freed first: the contents go anyway, and old and new never sit in
    // GPU memory together.
    if (pointer)
      cudaFree(pointer);
    pointer = nullptr;
    capacity = 0;
    check<Owner>(
        cudaMalloc(reinterpret_cast<void **>(&pointer), count * sizeof(T)),
        "allocating " + std::to_string(count * sizeof(T)) + " bytes" +
            Owner::memoryHint);
    capacity = count;
  }
  /// reserve that keeps the contents (copied on `stream`, which it
  /// synchronizes).
  void grow(size_t count, cudaStream_t stream) {
    if (count <= capacity)
      return;
    DeviceArray larger;
    larger.reserve(std::max(count, 2 * capacity));
    if (capacity)
      check<Owner>(cudaMemcpyAsync(larger.pointer, pointer,
                                   capacity * sizeof(T),
                                   cudaMemcpyDeviceToDevice, stream),
                   "growing a buffer");
    check<Owner>(cudaStreamSynchronize(stream), "growing a buffer");
    swap(larger);
  }
  void upload(const T *host, size_t count, cudaStream_t stream) {
    reserve(count);
    if (count)
      check<Owner>(cudaMemcpyAsync(pointer, host, count * sizeof(T),
                                   cudaMemcpyHostToDevice, stream),
                   "copying to the GPU");
  }
  void download(T *host, size_t count, cudaStream_t stream) const {
    if (count)
      check<Owner>(cudaMemcpyAsync(host, pointer, count * sizeof(T),
                                   cudaMemcpyDeviceToHost, stream),
                   "copying from the GPU");
  }

private:
  void swap(DeviceArray &other) {
    std::swap(pointer, other.pointer);
    std::swap(capacity, other.capacity);
  }
  T *pointer = nullptr;
  size_t capacity = 0;
};

/// Makes `device` current for a call and restores the caller's: stage
/// threads call in with their own device current.
template <typename Owner> class DeviceScope {
public:
  explicit DeviceScope(int device) {
    check<Owner>(cudaGetDevice(&previous), "reading the current device");
    if (previous != device)
      check<Owner>(cudaSetDevice(device), "selecting the device");
  }
  ~DeviceScope() { cudaSetDevice(previous); }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  int previous = 0;
};

/// A non-blocking stream on CUDA device `device`, leaving the caller's
/// current device as it was; throws Error when no such device is usable.
template <typename Owner> cudaStream_t openStream(int device) {
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess)
    throw Error(std::string(Owner::name) + ": no usable CUDA device (" +
                cudaGetErrorString(status) + ")");
  if (device < 0 || device >= devices)
    throw Error(std::string(Owner::name) + ": no CUDA device " +
                std::to_string(device) + " (" + std::to_string(devices) +
                " found)");
  // On `device`, whichever device the calling stage thread has current.
  DeviceScope<Owner> scope(device);
  cudaStream_t stream = nullptr;
  check<Owner>(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "creating a stream");
  return stream;
}

/// Blocks of `blockSize` for a grid-stride loop over `threads` items.
inline unsigned blocksFor(size_t threads, unsigned blockSize) {
  const size_t blocks = (threads + blockSize - 1) / blockSize;
  return static_cast<unsigned>(
      std::min<size_t>(std::max<size_t>(blocks, 1), 65535));
}

} // namespace heterps::rt::ps::cuda

#endif // HETERPS_RUNTIME_PS_CUDAMEMORY_CUH
