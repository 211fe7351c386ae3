//===- Context.cpp - CPU stage context ------------------------------------===//

#include "Broadcast.h"
#include "CpuContext.h"
#include "DnnlUtil.h"

#include <cstdlib>
#include <cstring>
#include <omp.h>

namespace heterps::rt::cpu {

Context::Context(int threads) : implPtr(std::make_unique<Impl>()) {
  implPtr->threads = threads;
}

Context::~Context() = default;

void *Context::allocate(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (bytes + 63) / 64 * 64;
  void *pointer = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!pointer)
    throw Error("out of host memory allocating " + std::to_string(bytes) +
                " bytes");
  return pointer;
}

void Context::deallocate(void *pointer) { std::free(pointer); }

void Context::upload(void *dst, const void *hostSrc, size_t bytes) {
  std::memcpy(dst, hostSrc, bytes);
}

void Context::download(void *hostDst, const void *src, size_t bytes) {
  std::memcpy(hostDst, src, bytes);
}

void Context::copy(void *dst, const void *src, size_t bytes) {
  if (dst != src)
    std::memmove(dst, src, bytes);
}

void Context::synchronize() {}

// The OpenMP wait policy is left to the environment: it is process-wide and
// the right value depends on the machine. Measured on 2 shared cores with 2
// threads: the default (spin, then sleep) is fastest when the cores are free;
// when other processes compete, a team thread waiting at a barrier holds its
// core while its partner is descheduled, and parallel kernels then often
// take a scheduler slice (~8-16 ms instead of 0.01-0.2). OMP_WAIT_POLICY=
// passive removed most of those stalls (tanh over 64K: mean 7.9 ms -> 0.33
// ms) at ~10-15 us more per parallel region when idle (gemm 8x256x256:
// 10 us -> 25 us); GOMP_SPINCOUNT=10000 gave steady but slow ~0.5-0.9 ms
// regions. Kernels below worthThreads open no region either way.
void Context::enterThread() {
  if (implPtr->threads > 0)
    omp_set_num_threads(implPtr->threads);
}

int64_t nativeLayoutBlock() { return dnnl_util::nativeChannelBlock(); }

void parallelElements(int64_t n, double elementWork,
                      void (*body)(const void *, int64_t, int64_t),
                      const void *closure) {
  parallelBlocks(
      n, [&](int64_t begin, int64_t end) { body(closure, begin, end); },
      int64_t(kMinParallelWork / std::max(elementWork, 1.0)));
}

} // namespace heterps::rt::cpu
