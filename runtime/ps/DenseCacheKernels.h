//===- DenseCacheKernels.h - The GPU dense cache threads' work --*- C++ -*-===//
//
// Internal to the parameter server: the work of one thread of the CUDA dense
// cache's update (CudaDenseCache.cu), as host-and-device functions, so that
// the CPU tests run the same code over a simulated grid and compare it with
// HostDenseCache, which runs the host server's optimizer, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_DENSECACHEKERNELS_H
#define HETERPS_RUNTIME_PS_DENSECACHEKERNELS_H

#include "OptimizerRules.h"

#include <cstddef>

namespace heterps::rt::ps::kernels {

/// Element `i` of a step's gradient of a dense parameter: the gradients
/// staged at offsets[0..count) summed in that order, then divided by
/// `divisor`, as TrainingServer::finishStep sums a step on the host.
HETERPS_PS_HOST_DEVICE inline float stepGradientElement(const float *staged,
                                                        const size_t *offsets,
                                                        size_t count, size_t i,
                                                        float divisor) {
  float sum = staged[offsets[0] + i];
  for (size_t k = 1; k < count; ++k)
    sum += staged[offsets[k] + i];
  return sum / divisor;
}

/// Thread `thread` of `threads` updates elements thread, thread + threads,
/// ... of a dense parameter of `size` values, laid out as one row: values,
/// then optimizer state. Adam's beta powers move on after every thread is
/// done (rules::advanceState).
HETERPS_PS_HOST_DEVICE inline void
updateDenseElements(float *row, size_t size, const float *staged,
                    const size_t *offsets, size_t count, float divisor,
                    const rules::UpdateRule &rule, size_t thread,
                    size_t threads) {
  float *state = row + size;
  const rules::Corrections corrections =
      rules::adamCorrections(state, size, rule);
  for (size_t i = thread; i < size; i += threads)
    rules::updateElement(
        row, state, size, i,
        stepGradientElement(staged, offsets, count, i, divisor), rule,
        corrections);
}

} // namespace heterps::rt::ps::kernels

#endif // HETERPS_RUNTIME_PS_DENSECACHEKERNELS_H
