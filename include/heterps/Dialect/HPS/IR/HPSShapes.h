//===- HPSShapes.h - Shape rules of hps ops ---------------------*- C++ -*-===//
//
// Result-shape arithmetic shared by the op verifiers, the folders and the
// ONNX legalization. Unknown extents are mlir::ShapedType::kDynamic.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSSHAPES_H
#define HETERPS_DIALECT_HPS_IR_HPSSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace heterps::hps::shapes {

constexpr int64_t kDynamic = mlir::ShapedType::kDynamic;

/// `axis` in [-rank, rank) mapped to [0, rank), or std::nullopt when out of
/// range. `rank` may be widened by the caller for ops that allow axis==rank.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Number of windows of a convolution or pooling along one axis. ceil mode
/// drops a last window that would start inside the end padding.
int64_t windowCount(int64_t input, int64_t kernel, int64_t stride,
                    int64_t padBegin, int64_t padEnd, int64_t dilation,
                    bool ceilMode);

/// Numpy broadcast of two shapes, or std::nullopt if incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcast(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True if `from` broadcasts to exactly `to` (ONNX unidirectional rule).
bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// ONNX Reshape: 0 copies the input dim (unless allowzero), -1 is inferred.
std::optional<llvm::SmallVector<int64_t>>
reshape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> shape,
        bool allowZero);

/// Number of elements ONNX Slice takes from an axis of extent `dim`, with
/// its start, end and step already in ONNX form (negative, clamped later).
/// Also returns the clamped start. Requires a static `dim`.
int64_t sliceCount(int64_t dim, int64_t start, int64_t end, int64_t step,
                   int64_t *clampedStart = nullptr);

/// Element count of a static shape, or std::nullopt if any dim is dynamic.
std::optional<int64_t> elementCount(llvm::ArrayRef<int64_t> shape);

} // namespace heterps::hps::shapes

#endif // HETERPS_DIALECT_HPS_IR_HPSSHAPES_H
