//===- CpuContext.h - What a CPU context holds ------------------*- C++ -*-===//
//
// Private to the CPU kernels: the oneDNN engine and stream every primitive
// of a stage shares, and the stage's thread count.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_CPUCONTEXT_H
#define HETERPS_RUNTIME_KERNELS_CPU_CPUCONTEXT_H

#include "heterps/Runtime/CpuKernels.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

namespace heterps::rt::cpu {

struct Context::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  int threads = 0;
};

//===----------------------------------------------------------------------===//
// When a kernel is worth more than one thread
//===----------------------------------------------------------------------===//
//
// Every parallel region ends in a barrier. With as many threads as cores and
// anything else runnable, one team thread is often descheduled, and the
// barrier then waits for a scheduler time slice (4-30 ms) for a kernel that
// needs a few microseconds. Each kernel therefore estimates its work when it
// is built and runs below kMinParallelWork on the calling thread alone:
// oneDNN primitives are built and executed inside a SerialScope, own loops
// carry `if (parallel)` or a threshold derived from the same constants.
//
// Work is counted in FLOP-equivalents: 2 per multiply-add of a gemm or
// convolution, and per element of a memory-bound op the time one element
// takes in FLOPs of a one-core gemm (about 60 GFLOP/s with AVX2).
// Measured on 2 cores: two threads start to pay off at about 0.5 MFLOP
// (gemm 4x256x256: 8.7 us on one thread, 7.7 us on two) and give 1.6x at
// 1 MFLOP (gemm 8x256x256: 17 us -> 10.5 us); Relu over 64K floats (16 per
// element) and Softmax over 16K (64 per element) break even the same way.

/// Estimated work below which a kernel uses one thread (~15 us on a core).
constexpr double kMinParallelWork = 1 << 20;
/// Per element: a memory-bound op (copy, Relu, Add, BatchNorm, pooling).
constexpr double kCheapElementWork = 16;
/// Per element: a few passes or a division (LayerNorm, the Reduce loop).
constexpr double kNormElementWork = 32;
/// Per element: exp, tanh, erf, log and friends (Softmax, GeLU).
constexpr double kTranscendentalElementWork = 64;

inline bool worthThreads(double work) { return work >= kMinParallelWork; }

/// While alive, OpenMP regions opened on this thread without num_threads
/// (oneDNN's, `#pragma omp parallel` loops) get one thread, unless
/// constructed with `serial` false; the caller's count comes back after.
/// Costs two ICV writes (a few ns). Primitives are also built inside one:
/// oneDNN sizes some kernels and its primitive cache key by the thread count
/// at creation.
class SerialScope {
public:
  explicit SerialScope(bool serial = true) {
    if (serial && omp_get_max_threads() > 1) {
      saved = omp_get_max_threads();
      omp_set_num_threads(1);
    }
  }
  ~SerialScope() {
    if (saved > 0)
      omp_set_num_threads(saved);
  }
  SerialScope(const SerialScope &) = delete;
  SerialScope &operator=(const SerialScope &) = delete;

private:
  int saved = 0;
};

/// oneDNN reports errors by throwing dnnl::error; kernels turn them into
/// Error naming the kernel.
template <typename F> auto withDnnl(const char *kernel, F &&body) {
  try {
    return body();
  } catch (const dnnl::error &error) {
    throw Error(std::string(kernel) + ": oneDNN: " + error.what());
  }
}

} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_KERNELS_CPU_CPUCONTEXT_H
