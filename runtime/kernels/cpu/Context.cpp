//===- Context.cpp - CPU stage context ------------------------------------===//

#include "CpuContext.h"

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

void Context::enterThread() {
  if (implPtr->threads > 0)
    omp_set_num_threads(implPtr->threads);
}

} // namespace heterps::rt::cpu
