//===- NodeNames.h - Ops named as a user can find them ----------*- C++ -*-===//
//
// Marks the runtime shows a user name the op and the ONNX node it came
// from (the importer's NameLoc), the same way in every pass.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_NODENAMES_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_NODENAMES_H

#include "mlir/IR/Location.h"

#include <string>

namespace heterps::hps {

/// "'what' (node 'Softmax_0')", or "'what'" where `loc` names no node.
inline std::string describeWithNode(llvm::StringRef what, mlir::Location loc) {
  std::string text = "'" + what.str() + "'";
  loc->walk([&](mlir::Location inner) {
    if (auto named = llvm::dyn_cast<mlir::NameLoc>(inner)) {
      text += " (node '" + named.getName().str() + "')";
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return text;
}

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_NODENAMES_H
