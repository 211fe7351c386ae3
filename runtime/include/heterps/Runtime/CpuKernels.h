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

#include <algorithm>
#include <cstdint>
#include <memory>

namespace heterps::rt::cpu {
#include "heterps/Runtime/KernelAPI.inc"

/// Whether run() pointers are host memory (stages then skip copies).
constexpr bool kHostMemory = true;

/// The channel block of the Native layout on this machine: 16 where oneDNN
/// uses AVX-512, else 8.
int64_t nativeLayoutBlock();

/// Calls body(closure, begin, end) on blocks covering [0, n): on the calling
/// thread's OpenMP threads (Context::enterThread sets their count) when n
/// elements of `elementWork` FLOP-equivalents each pay for them, else on the
/// calling thread alone.
void parallelElements(int64_t n, double elementWork,
                      void (*body)(const void *closure, int64_t begin,
                                   int64_t end),
                      const void *closure);

/// Runs a fused elementwise loop that code generation wrote into a stage
/// program: f(row, j) for every row < F::kRows and j < F::kInner, each
/// element once, in any order and on any thread. Full rows run as a loop of
/// constant trip count F::kInner, which the compiler vectorises.
template <typename F> void forEachElement(Context &, const F &f) {
  if constexpr (F::kRows * F::kInner != 0)
    parallelElements(
        F::kRows * F::kInner, F::kElementWork,
        [](const void *closure, int64_t begin, int64_t end) {
          constexpr int64_t inner = F::kInner;
          // A local copy: an u8 or bool store may alias anything in memory,
          // the functor's pointers too, which would otherwise be reloaded
          // after every store and keep the loop scalar.
          const F body = *static_cast<const F *>(closure);
          int64_t row = begin / inner, j = begin % inner;
          while (begin < end) {
            // Outputs never alias inputs: no run-time overlap checks.
            if (j == 0 && end - begin >= inner) {
#pragma GCC ivdep
              for (int64_t k = 0; k < inner; ++k)
                body(row, k);
              begin += inner;
            } else {
              int64_t stop = std::min<int64_t>(inner, j + (end - begin));
#pragma GCC ivdep
              for (int64_t k = j; k < stop; ++k)
                body(row, k);
              begin += stop - j;
            }
            ++row;
            j = 0;
          }
        },
        &f);
}
} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_CPUKERNELS_H
