//===- PassCacheKernels.h - What the GPU pass cache's threads do -*- C++
//-*-===//
//
// Internal to the parameter server: the work of one thread of the CUDA pass
// cache's kernels (CudaPassCache.cu), as host-and-device functions, so that
// the CPU tests run the same code over a simulated grid and compare it
// with HostPassCache bit for bit (PassCacheTest's kernel tests). The
// kernels add only the CUDA indexing and the barrier between the two
// phases of an update.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_PASSCACHEKERNELS_H
#define HETERPS_RUNTIME_PS_PASSCACHEKERNELS_H

#include "OptimizerRules.h"

#include "heterps/Runtime/ParameterServer.h"

#include <cstddef>
#include <cstdint>

namespace heterps::rt::ps::kernels {

using rules::UpdateRule;
using rules::updateRule;

/// The server key of `id` of a table of `rows` rows (negative ids count
/// from the end, as in ONNX Gather): false for an id outside [-rows, rows).
/// The training server's rule, also run by the GPU on ids in its memory.
HETERPS_PS_HOST_DEVICE inline bool keyOfId(int64_t id, int64_t rows,
                                           uint64_t &key) {
  if (id < -rows || id >= rows)
    return false;
  key = static_cast<uint64_t>(id < 0 ? id + rows : id);
  return true;
}

/// The slot of `id` among a pass's `count` sorted, distinct keys
/// (PassKeyIndex::keys), or `count` where the pass does not hold it: the
/// GPU's lookup (a binary search; the host uses the index's hash map), so
/// the same slot as PassKeyIndex::slotsOf.
HETERPS_PS_HOST_DEVICE inline uint32_t findSlot(const uint64_t *sortedKeys,
                                                uint32_t count, uint64_t id) {
  uint32_t low = 0, high = count;
  while (low < high) {
    const uint32_t middle = low + (high - low) / 2;
    if (sortedKeys[middle] < id)
      low = middle + 1;
    else
      high = middle;
  }
  return low < count && sortedKeys[low] == id ? low : count;
}

/// Element i of a gather: out[i] = row(slots[i / dim])[i % dim].
HETERPS_PS_HOST_DEVICE inline void
gatherElement(const float *rows, size_t rowFloats, const uint32_t *slots,
              unsigned dim, size_t i, float *out) {
  out[i] = rows[size_t(slots[i / dim]) * rowFloats + i % dim];
}

/// Element i of moving `dim`-float rows between batch order and shard
/// order (ShardMemory.h): grouped row i / dim is row positions[i / dim] of
/// the batch.
HETERPS_PS_HOST_DEVICE inline void ungroupElement(const float *grouped,
                                                  const uint32_t *positions,
                                                  size_t dim, size_t i,
                                                  float *out) {
  out[size_t(positions[i / dim]) * dim + i % dim] = grouped[i];
}
HETERPS_PS_HOST_DEVICE inline void groupElement(const float *in,
                                                const uint32_t *positions,
                                                size_t dim, size_t i,
                                                float *grouped) {
  grouped[i] = in[size_t(positions[i / dim]) * dim + i % dim];
}

/// Phase 1 of updating the row in `slot` (one block per run of the merge
/// plan): thread `thread` of `threads` sums, for each of its elements, the
/// run's gradients in batch order (positions[first..last)) and updates the
/// element. Adam's bias corrections come from the row's beta powers one
/// step on, read here and written in phase 2, after every thread's phase 1.
HETERPS_PS_HOST_DEVICE inline void
updateRowElements(float *rows, size_t rowFloats, unsigned dim, uint32_t slot,
                  uint32_t first, uint32_t last, const uint32_t *positions,
                  const float *gradients, const UpdateRule &rule,
                  unsigned thread, unsigned threads) {
  float *weights = rows + size_t(slot) * rowFloats;
  float *state = weights + dim;
  const rules::Corrections corrections =
      rules::adamCorrections(state, dim, rule);
  for (unsigned d = thread; d < dim; d += threads) {
    float gradient = gradients[size_t(positions[first]) * dim + d];
    for (uint32_t k = first + 1; k < last; ++k)
      gradient += gradients[size_t(positions[k]) * dim + d];
    rules::updateElement(weights, state, dim, d, gradient, rule, corrections);
  }
}

/// Phase 2, by one thread of the block: Adam's beta powers one step on.
HETERPS_PS_HOST_DEVICE inline void advanceRowState(float *rows,
                                                   size_t rowFloats,
                                                   unsigned dim, uint32_t slot,
                                                   const UpdateRule &rule) {
  rules::advanceState(rows + size_t(slot) * rowFloats + dim, dim, rule);
}

} // namespace heterps::rt::ps::kernels

#endif // HETERPS_RUNTIME_PS_PASSCACHEKERNELS_H
