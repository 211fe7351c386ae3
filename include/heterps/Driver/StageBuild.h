//===- StageBuild.h - Compiling stage sources into shared objects -*- C++ -*-=//

#ifndef HETERPS_DRIVER_STAGEBUILD_H
#define HETERPS_DRIVER_STAGEBUILD_H

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace heterps::driver {

/// Compiles every stage source of `bundle` into its shared objects (g++ for
/// CPU stages; nvcc and g++ for GPU stages). Returns false and sets `error`.
/// While compilers run, `stopRequested` (when given) is asked about every
/// 50 ms; on true the compilers are killed and the build fails.
bool buildStages(llvm::StringRef bundle, std::string &error,
                 const std::function<bool()> &stopRequested = {});

} // namespace heterps::driver

#endif // HETERPS_DRIVER_STAGEBUILD_H
