//===- CpuKernels.h - Kernels of CPU stages (oneDNN 2.6) --------*- C++ -*-===//
//
// The kernel API of KernelAPI.inc for host memory: oneDNN primitives for
// dense, convolution, pooling, normalisation, softmax, reduction and the
// common elementwise functions; the project's own loops elsewhere.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_CPUKERNELS_H
#define HETERPS_RUNTIME_CPUKERNELS_H

#include "heterps/Runtime/Types.h"

#include <memory>

namespace heterps::rt::cpu {
#include "heterps/Runtime/KernelAPI.inc"

/// Whether run() pointers are host memory (stages then skip copies).
constexpr bool kHostMemory = true;
} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_CPUKERNELS_H
