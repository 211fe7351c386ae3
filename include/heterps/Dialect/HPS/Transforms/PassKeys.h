//===- PassKeys.h - The pass-key program of a training module ---*- C++ -*-===//
//
// What --hps-outline-pass-keys leaves in a training module and the bundle
// writer reads: a CPU function that computes, from the bundle's inputs, the
// ids every parameter-server pull of the stages reads (the runtime's pass
// cache learns a pass's keys from it before running the stages), or the
// reason there is none. Header-only, so lib/Target needs no pass library.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_TRANSFORMS_PASSKEYS_H
#define HETERPS_DIALECT_HPS_TRANSFORMS_PASSKEYS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace heterps::hps {

/// The program's symbol.
inline constexpr const char *kPassKeysFunctionName = "pass_keys";
/// On the program: the table of each output (one per hps.send, in order).
inline constexpr const char *kPassKeysAttrName = "hps.pass_keys";
/// On the program: the bundle input index of each hps.recv, in order.
inline constexpr const char *kPassKeyInputsAttrName = "hps.pass_key_inputs";
/// On the module instead of the program: why the ids cannot be computed
/// ahead of the stages (a StringAttr naming the table and the op).
inline constexpr const char *kPassKeysUnavailableAttrName =
    "hps.pass_keys_unavailable";

/// The pass-key program of `module`, or null when it has none.
inline mlir::func::FuncOp getPassKeyProgram(mlir::ModuleOp module) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(kPassKeysFunctionName);
  return func && func->hasAttr(kPassKeysAttrName) ? func : nullptr;
}

} // namespace heterps::hps

#endif // HETERPS_DIALECT_HPS_TRANSFORMS_PASSKEYS_H
