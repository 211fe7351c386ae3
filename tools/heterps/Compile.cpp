//===- Compile.cpp - heterps compile --------------------------------------===//
//
// The command over the driver library (heterps/Driver/Compile.h), which the
// Python bindings share: diagnostics go to stderr.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

namespace heterps::driver {

int compile(const CompileOptions &options) {
  if (!compileBundle(options, llvm::errs()))
    return 1;
  llvm::errs() << "heterps compile: wrote " << options.output << "\n";
  return 0;
}

} // namespace heterps::driver
