//===- WeightsFile.h - A bundle's weights.bin -------------------*- C++ -*-===//
//
// Private to the bundle writer: weights.bin, every stage's weights,
// constants and static shapes where --hps-pack-weights placed them, then
// what the training section and the inference tables append.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_TARGET_WEIGHTSFILE_H
#define HETERPS_LIB_TARGET_WEIGHTSFILE_H

#include "RuntimeKinds.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <string>

namespace heterps::target {

/// weights.bin: each entry 64-byte aligned; a stage's share is one
/// contiguous range so a GPU stage uploads it once.
struct WeightsFile {
  std::string data;
  /// Appends `bytes` (aligned) and returns their offset.
  uint64_t add(llvm::StringRef bytes) {
    data.resize(alignUp(data.size()), '\0');
    uint64_t offset = data.size();
    data.append(bytes.data(), bytes.size());
    return offset;
  }
  /// `bytes` at `offset`: after what is there, or exactly what is there
  /// already (a weight stored once for two reads).
  mlir::LogicalResult put(uint64_t offset, llvm::StringRef bytes);
  /// Pads the file to `size` bytes.
  void fill(uint64_t size) {
    if (data.size() < size)
      data.resize(size, '\0');
  }
};

/// Writes the weights, constants and static shapes of `stage` (prepared by
/// --hps-prepare-stages) at their hpsrt.weights_offset, and pads its share
/// to its end. An entry outside the stage's share, or over another's, is an
/// error naming its op.
mlir::LogicalResult writeStageWeights(mlir::func::FuncOp stage,
                                      WeightsFile &weights);

/// The little-endian bytes of a constant or weight, dense (splats
/// expanded, i1 as one byte per element).
mlir::FailureOr<std::string> bytesOf(mlir::ElementsAttr value);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_WEIGHTSFILE_H
