//===- KernelCalls.h - Kernel calls of hpsrt ops ----------------*- C++ -*-===//
//
// Private to the stage code generator. What an hpsrt op asks of the
// runtime, as heterps-tblgen generates it from the op's definition: the
// kernel class, its constructor arguments as C++ literals and run()'s
// arguments, in the order the runtime declares them (KernelClasses.inc is
// generated from the same definitions).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_KERNELCALLS_H
#define HETERPS_LIB_TARGET_KERNELCALLS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace heterps::target {

/// One parameter of run(): the values it reads (`write` false) or writes.
/// A non-variadic parameter has one value, or none (an absent optional:
/// nullptr).
struct RunArgument {
  std::string name;
  bool write = false;
  bool variadic = false;
  llvm::SmallVector<mlir::Value> values;
};

struct KernelCall {
  std::string kernelClass;
  std::string runMethod;
  llvm::SmallVector<std::string> constructorArguments;
  llvm::SmallVector<RunArgument> runArguments;
};

/// The call of an hpsrt kernel op, or nothing for other ops.
std::optional<KernelCall> describeKernelCall(mlir::Operation *op);

/// Whether `op` is an hpsrt kernel op (one kernel class's construction and
/// run), without describing its call.
bool isKernelOp(mlir::Operation *op);

/// The runtime's name of an element type ("f32", "bool", ...), or "".
std::string dtypeName(mlir::Type type);
/// The runtime's DType enumerator of an element type ("DType::F32").
std::string dtypeEnum(mlir::Type type);
/// A C++ double literal of `value` (infinities and NaN as
/// std::numeric_limits expressions).
std::string doubleLiteral(double value);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_KERNELCALLS_H
