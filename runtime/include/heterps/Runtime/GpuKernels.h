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

#include <memory>

namespace heterps::rt::gpu {
#include "heterps/Runtime/KernelAPI.inc"

/// Whether run() pointers are host memory (stages then skip copies).
constexpr bool kHostMemory = false;
} // namespace heterps::rt::gpu

#endif // HETERPS_RUNTIME_GPUKERNELS_H
