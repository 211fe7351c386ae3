//===- RuntimeKernels.h - The runtime kernel of an hpsrt op -----*- C++ -*-===//
//
// Private to lib/Profile. Constructs the CPU runtime's kernel of an hpsrt
// kernel op in process, with the arguments a stage program passes it
// (heterps-tblgen -gen-kernel-factory generates the construction from the
// op definitions the runtime's declarations come from).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_PROFILE_RUNTIMEKERNELS_H
#define HETERPS_LIB_PROFILE_RUNTIMEKERNELS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <memory>

namespace heterps::rt::cpu {
class Context;
} // namespace heterps::rt::cpu

namespace heterps::profile::detail {

using Buffers = llvm::ArrayRef<const void *>;
using MutableBuffers = llvm::ArrayRef<void *>;

class RuntimeKernel {
public:
  virtual ~RuntimeKernel();
  /// Runs the kernel on the op's operands and results, in the op's order
  /// (null for an absent optional operand).
  virtual void run(Buffers operands, MutableBuffers results) = 0;
};

/// The kernel `op` constructs, or null when `op` is no hpsrt kernel op.
/// Throws heterps::rt::Error for parameters the kernel cannot run.
std::unique_ptr<RuntimeKernel> buildRuntimeKernel(mlir::Operation *op,
                                                  rt::cpu::Context &ctx);

} // namespace heterps::profile::detail

#endif // HETERPS_LIB_PROFILE_RUNTIMEKERNELS_H
