//===- GpuContext.h - What a GPU context holds, CUDA error checks -*- C++
//-*-===//
//
// Private to the GPU kernels: the stream every kernel of a stage is queued on,
// the cuBLAS and cuDNN handles bound to it, and the macros that turn CUDA,
// cuBLAS and cuDNN failures into Error naming the failed call.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_GPU_GPUCONTEXT_H
#define HETERPS_RUNTIME_KERNELS_GPU_GPUCONTEXT_H

#include "heterps/Runtime/GpuKernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

namespace heterps::rt::gpu {

struct Context::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  Impl() = default;
  Impl(const Impl &) = delete;
  Impl &operator=(const Impl &) = delete;
  /// Releases whatever the constructor got before a failure, too.
  ~Impl();
};

/// "cudaMemcpyAsync(dst, ...)" -> "cudaMemcpyAsync": the call's name is
/// enough to locate a failure and keeps messages short.
inline std::string callName(const char *call) {
  std::string text(call);
  size_t paren = text.find('(');
  return paren == std::string::npos ? text : text.substr(0, paren);
}

[[noreturn]] inline void throwCudaError(const char *call, cudaError_t error) {
  throw Error("CUDA call " + callName(call) +
              " failed: " + cudaGetErrorString(error));
}

[[noreturn]] inline void throwCublasError(const char *call,
                                          cublasStatus_t status) {
  throw Error("cuBLAS call " + callName(call) +
              " failed: " + cublasGetStatusString(status));
}

[[noreturn]] inline void throwCudnnError(const char *call,
                                         cudnnStatus_t status) {
  throw Error("cuDNN call " + callName(call) +
              " failed: " + cudnnGetErrorString(status));
}

} // namespace heterps::rt::gpu

#define HPS_CUDA_CHECK(call)                                                   \
  do {                                                                         \
    cudaError_t hpsError_ = (call);                                            \
    if (hpsError_ != cudaSuccess)                                              \
      ::heterps::rt::gpu::throwCudaError(#call, hpsError_);                    \
  } while (0)

#define HPS_CUBLAS_CHECK(call)                                                 \
  do {                                                                         \
    cublasStatus_t hpsStatus_ = (call);                                        \
    if (hpsStatus_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::heterps::rt::gpu::throwCublasError(#call, hpsStatus_);                 \
  } while (0)

#define HPS_CUDNN_CHECK(call)                                                  \
  do {                                                                         \
    cudnnStatus_t hpsStatus_ = (call);                                         \
    if (hpsStatus_ != CUDNN_STATUS_SUCCESS)                                    \
      ::heterps::rt::gpu::throwCudnnError(#call, hpsStatus_);                  \
  } while (0)

#endif // HETERPS_RUNTIME_KERNELS_GPU_GPUCONTEXT_H
