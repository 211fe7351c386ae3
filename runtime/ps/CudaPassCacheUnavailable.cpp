//===- CudaPassCacheUnavailable.cpp - Builds without CUDA -----------------===//
//
// Linked instead of CudaPassCache.cu where no CUDA toolkit was found, so
// that asking for the GPU pass cache is one clear error.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CudaPassCache.h"

namespace heterps::rt::ps {

bool cudaPassCacheBuilt() { return false; }

std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &, int) {
  throw Error("pass cache on the GPU: this build has none (no CUDA toolkit "
              "was found when it was configured)");
}

} // namespace heterps::rt::ps
