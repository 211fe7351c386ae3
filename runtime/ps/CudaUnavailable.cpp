//===- CudaUnavailable.cpp - Builds without CUDA --------------------------===//
//
// Linked instead of the parameter server's GPU tiers (CudaPassCache.cu,
// CudaDenseCache.cu) where no CUDA toolkit was found, so that asking for
// one is one clear error.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CudaPassCache.h"
#include "heterps/Runtime/DenseCache.h"

namespace heterps::rt::ps {

bool cudaPassCacheBuilt() { return false; }

std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &, int) {
  throw Error("pass cache on the GPU: this build has none (no CUDA toolkit "
              "was found when it was configured)");
}

std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &server,
                                             const std::vector<int> &) {
  return makeCudaPassCache(server, 0);
}

bool cudaDenseCacheBuilt() { return false; }

std::unique_ptr<DenseCache> makeCudaDenseCache(ParameterServer &, int) {
  throw Error("dense parameters on the GPU: this build has none (no CUDA "
              "toolkit was found when it was configured)");
}

} // namespace heterps::rt::ps
