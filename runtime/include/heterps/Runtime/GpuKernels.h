//===- GpuKernels.h - Kernels of GPU stages (CUDA) --------------*- C++ -*-===//
//
// The kernel API of KernelAPI.inc for device memory: cuBLAS for gemm and
// matmul, cuDNN for convolution, pooling and softmax, the project's own CUDA
// kernels elsewhere. Pointers passed to run() are device pointers.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_GPUKERNELS_H
#define HETERPS_RUNTIME_GPUKERNELS_H

#include "heterps/Runtime/Types.h"

#include <cstdint>
#include <memory>

namespace heterps::rt::gpu {
#include "heterps/Runtime/KernelAPI.inc"

/// Whether run() pointers are host memory (stages then skip copies).
constexpr bool kHostMemory = false;

/// The cudaStream_t a context queues its stage's work on.
void *rawStream(Context &ctx);
/// Throws Error naming `what` when the last kernel launch failed.
void checkElementLaunch(const char *what);
/// Blocks of 256 threads for a grid-stride loop over n elements.
unsigned elementGrid(int64_t n);

#if defined(__CUDACC__)
template <typename F> __global__ void fusedElementKernel(F f) {
  constexpr int64_t n = F::kRows * F::kInner;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x)
    f(i / F::kInner, i % F::kInner);
}

/// Runs a fused elementwise loop that code generation wrote into a stage
/// program: f(row, j) for every row < F::kRows and j < F::kInner, one thread
/// per element, queued on the context's stream.
template <typename F> void forEachElement(Context &ctx, const F &f) {
  constexpr int64_t n = F::kRows * F::kInner;
  if constexpr (n != 0) {
    fusedElementKernel<F>
        <<<elementGrid(n), 256, 0, static_cast<cudaStream_t>(rawStream(ctx))>>>(
            f);
    checkElementLaunch("fused elementwise loop");
  }
}
#endif
} // namespace heterps::rt::gpu

#endif // HETERPS_RUNTIME_GPUKERNELS_H
