//===- CpuContext.h - What a CPU context holds ------------------*- C++ -*-===//
//
// Private to the CPU kernels: the oneDNN engine and stream every primitive
// of a stage shares, and the stage's thread count.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_CPUCONTEXT_H
#define HETERPS_RUNTIME_KERNELS_CPU_CPUCONTEXT_H

#include "heterps/Runtime/CpuKernels.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace heterps::rt::cpu {

struct Context::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  int threads = 0;
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
