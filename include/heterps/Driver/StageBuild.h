//===- StageBuild.h - Compiling stage sources into shared objects -*- C++ -*-=//

#ifndef HETERPS_DRIVER_STAGEBUILD_H
#define HETERPS_DRIVER_STAGEBUILD_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace heterps::driver {

/// Compiles every stage source of `bundle` into its shared objects (g++ for
/// CPU stages; nvcc and g++ for GPU stages). Returns false and sets `error`.
bool buildStages(llvm::StringRef bundle, std::string &error);

} // namespace heterps::driver

#endif // HETERPS_DRIVER_STAGEBUILD_H
