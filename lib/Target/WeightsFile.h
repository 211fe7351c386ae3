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
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace heterps::target {

/// weights.bin: each entry 64-byte aligned; a stage's share is one
/// contiguous range so a GPU stage uploads it once. Written as it goes to
/// `os` (the bundle's file), so a model's weights are not held a second
/// time in memory: entries come in increasing offsets.
class WeightsFile {
public:
  explicit WeightsFile(llvm::raw_ostream &os) : os(os) {}

  /// The bytes written so far.
  uint64_t size() const { return written; }
  /// Appends `bytes` (aligned) and returns their offset.
  uint64_t add(llvm::StringRef bytes);
  /// Appends the little-endian bytes of `value` (aligned) and returns their
  /// offset; failure where its data is not dense.
  mlir::FailureOr<uint64_t> add(mlir::ElementsAttr value);
  /// `bytes` at `offset`, past what is there; failure where they would
  /// overlap it.
  mlir::LogicalResult put(uint64_t offset, llvm::StringRef bytes);
  /// `value` at `offset`: past what is there, or where the same value was
  /// put already (a weight stored once for two reads). failure() with
  /// `overlaps` set where it would overlap another entry, unset where its
  /// data is not dense.
  mlir::LogicalResult put(uint64_t offset, mlir::ElementsAttr value,
                          bool &overlaps);
  /// Pads the file with zeros to `size` bytes.
  void fill(uint64_t size);

private:
  mlir::LogicalResult write(mlir::ElementsAttr value);

  llvm::raw_ostream &os;
  uint64_t written = 0;
  /// Where each value went, for a second put of the same one.
  llvm::DenseMap<uint64_t, mlir::Attribute> placed;
};

/// Calls `chunk` with the little-endian bytes of a constant or weight, in
/// order, in pieces of at most a few MiB beyond its own storage (splats
/// expanded, i1 as one byte per element); failure where its data is not
/// dense.
mlir::LogicalResult
forEachBytesChunk(mlir::ElementsAttr value,
                  llvm::function_ref<void(llvm::StringRef)> chunk);

/// Writes the weights, constants and static shapes of `stage` (prepared by
/// --hps-prepare-stages) at their hpsrt.weights_offset, and pads its share
/// to its end. An entry outside the stage's share, or over another's, is an
/// error naming its op.
mlir::LogicalResult writeStageWeights(mlir::func::FuncOp stage,
                                      WeightsFile &weights);

/// The little-endian bytes of a small constant or weight, in memory
/// (forEachBytesChunk's, joined).
mlir::FailureOr<std::string> bytesOf(mlir::ElementsAttr value);

} // namespace heterps::target

#endif // HETERPS_LIB_TARGET_WEIGHTSFILE_H
