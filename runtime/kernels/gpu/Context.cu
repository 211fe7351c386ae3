//===- Context.cu - GPU stage context -------------------------------------===//

#include "GpuCommon.cuh"

namespace heterps::rt::gpu {

Context::Impl::~Impl() {
  // Best effort: nothing can be done about a failure while tearing down.
  if (cudnn)
    cudnnDestroy(cudnn);
  if (cublas)
    cublasDestroy(cublas);
  if (stream)
    cudaStreamDestroy(stream);
}

Context::Context(int /*threads: host threads do not apply to the GPU*/)
    : implPtr(std::make_unique<Impl>()) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    // Clear the error so later CUDA calls of this thread do not report it.
    cudaGetLastError();
    const char *reason = error != cudaSuccess
                             ? cudaGetErrorString(error)
                             : "no CUDA-capable device is detected";
    throw Error(std::string("no usable CUDA device: ") + reason +
                "; run GPU-class stages on the CPU with --gpu-stages-on-cpu");
  }
  Impl &impl = *implPtr;
  HPS_CUDA_CHECK(cudaGetDevice(&impl.device));
  // Non-blocking: the stage's work must not serialise with the legacy
  // default stream other libraries may use.
  HPS_CUDA_CHECK(
      cudaStreamCreateWithFlags(&impl.stream, cudaStreamNonBlocking));
  HPS_CUBLAS_CHECK(cublasCreate(&impl.cublas));
  HPS_CUBLAS_CHECK(cublasSetStream(impl.cublas, impl.stream));
  HPS_CUDNN_CHECK(cudnnCreate(&impl.cudnn));
  HPS_CUDNN_CHECK(cudnnSetStream(impl.cudnn, impl.stream));
}

Context::~Context() = default;

void *Context::allocate(size_t bytes) {
  // cudaMalloc aligns to 256 bytes, beyond the 64 the API promises; a
  // zero-byte request still gets a distinct, valid pointer.
  void *pointer = nullptr;
  cudaError_t error = cudaMalloc(&pointer, bytes ? bytes : 256);
  if (error != cudaSuccess) {
    cudaGetLastError();
    throw Error("out of GPU memory allocating " + std::to_string(bytes) +
                " bytes: " + cudaGetErrorString(error));
  }
  return pointer;
}

void Context::deallocate(void *pointer) {
  // Called from destructors: report nothing, cudaFree of nullptr is a no-op.
  if (pointer)
    cudaFree(pointer);
}

void Context::upload(void *dst, const void *hostSrc, size_t bytes) {
  if (bytes)
    HPS_CUDA_CHECK(cudaMemcpyAsync(dst, hostSrc, bytes, cudaMemcpyHostToDevice,
                                   implPtr->stream));
}

void Context::download(void *hostDst, const void *src, size_t bytes) {
  if (bytes)
    HPS_CUDA_CHECK(cudaMemcpyAsync(hostDst, src, bytes, cudaMemcpyDeviceToHost,
                                   implPtr->stream));
  // The caller reads hostDst right after the call.
  synchronize();
}

void Context::copy(void *dst, const void *src, size_t bytes) {
  if (bytes && dst != src)
    HPS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                   implPtr->stream));
}

void Context::synchronize() {
  HPS_CUDA_CHECK(cudaStreamSynchronize(implPtr->stream));
}

void Context::enterThread() { HPS_CUDA_CHECK(cudaSetDevice(implPtr->device)); }

void *rawStream(Context &ctx) { return ctx.impl().stream; }

void checkElementLaunch(const char *what) { checkLaunch(what); }

unsigned elementGrid(int64_t n) { return gridFor(n); }

} // namespace heterps::rt::gpu
