//===- WeightsFile.cpp - A bundle's weights.bin ---------------------------===//

#include "WeightsFile.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <algorithm>
#include <vector>

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

uint64_t WeightsFile::add(llvm::StringRef bytes) {
  const uint64_t offset = alignUp(written);
  fill(offset);
  os << bytes;
  written += bytes.size();
  return offset;
}

FailureOr<uint64_t> WeightsFile::add(ElementsAttr value) {
  const uint64_t offset = alignUp(written);
  fill(offset);
  if (failed(write(value)))
    return failure();
  return offset;
}

LogicalResult WeightsFile::put(uint64_t offset, llvm::StringRef bytes) {
  if (offset < written)
    return failure();
  fill(offset);
  os << bytes;
  written += bytes.size();
  return success();
}

LogicalResult WeightsFile::put(uint64_t offset, ElementsAttr value,
                               bool &overlaps) {
  overlaps = false;
  if (offset < written) {
    auto found = placed.find(offset);
    overlaps = found == placed.end() || found->second != value;
    return failure(overlaps);
  }
  fill(offset);
  placed[offset] = value;
  return write(value);
}

void WeightsFile::fill(uint64_t size) {
  static const char zeros[64] = {};
  while (written < size) {
    const uint64_t n = std::min<uint64_t>(sizeof zeros, size - written);
    os.write(zeros, n);
    written += n;
  }
}

LogicalResult WeightsFile::write(ElementsAttr value) {
  return forEachBytesChunk(value, [&](llvm::StringRef bytes) {
    os << bytes;
    written += bytes.size();
  });
}

namespace {

/// The extents an hps.shape of a static tensor reads, as i64 bytes.
std::string staticExtents(ShapeOp shape) {
  auto input = cast<RankedTensorType>(shape.getInput().getType());
  int64_t rank = input.getRank();
  auto clampAxis = [&](int64_t axis) {
    return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank);
  };
  int64_t start = clampAxis(shape.getStart());
  int64_t end = shape.getEnd() ? clampAxis(*shape.getEnd()) : rank;
  std::vector<int64_t> extents;
  for (int64_t i = start; i < end; ++i)
    extents.push_back(input.getDimSize(i));
  return std::string(reinterpret_cast<const char *>(extents.data()),
                     extents.size() * sizeof(int64_t));
}

} // namespace

LogicalResult heterps::target::writeStageWeights(func::FuncOp stage,
                                                 WeightsFile &weights) {
  auto range = stage->getAttrOfType<DenseI64ArrayAttr>(kWeightsRangeAttrName);
  if (!range || range.size() != 2)
    return stage.emitError()
           << "the stage has no share of weights.bin (" << kWeightsRangeAttrName
           << "): run --hps-prepare-stages first";
  uint64_t begin = range[0], end = range[1];
  for (Operation &op : stage.getBody().front()) {
    if (!isa<WeightOp, ConstantOp, ShapeOp>(op) ||
        isTrainable(dyn_cast<WeightOp>(op)))
      continue;
    auto offset = op.getAttrOfType<IntegerAttr>(kWeightsOffsetAttrName);
    auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!offset || !type || !type.hasStaticShape() ||
        uint64_t(offset.getInt()) < begin ||
        uint64_t(offset.getInt()) + uint64_t(type.getNumElements()) *
                                        elementBytes(type.getElementType()) >
            end)
      return op.emitError() << "no place in the stage's share of weights.bin ("
                            << kWeightsOffsetAttrName << ")";
    bool overlaps = true;
    if (auto shape = dyn_cast<ShapeOp>(op)) {
      if (succeeded(weights.put(offset.getInt(), staticExtents(shape))))
        continue;
    } else {
      auto weight = dyn_cast<WeightOp>(op);
      if (succeeded(weights.put(offset.getInt(),
                                weight ? weight.getValue()
                                       : cast<ConstantOp>(op).getValue(),
                                overlaps)))
        continue;
      if (!overlaps)
        return op.emitError() << (weight ? "weight data is not dense"
                                         : "constant data is not dense");
    }
    return op.emitError() << "its place in weights.bin overlaps another's";
  }
  weights.fill(end);
  return success();
}

LogicalResult heterps::target::forEachBytesChunk(
    ElementsAttr value, llvm::function_ref<void(llvm::StringRef)> chunk) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  const int64_t count = type.getNumElements();
  const unsigned width = elementBytes(element);
  // Expanded data (splats, i1) goes out in pieces of this many elements.
  constexpr int64_t kChunkElements = int64_t(1) << 20;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    std::string piece;
    if (element.isInteger(1)) {
      for (bool bit : dense.getValues<bool>()) {
        piece.push_back(bit ? 1 : 0);
        if (static_cast<int64_t>(piece.size()) == kChunkElements) {
          chunk(piece);
          piece.clear();
        }
      }
      if (!piece.empty())
        chunk(piece);
      return success();
    }
    ArrayRef<char> raw = dense.getRawData();
    if (!dense.isSplat()) {
      chunk(llvm::StringRef(raw.data(), raw.size()));
      return success();
    }
    for (int64_t i = 0; i < std::min(count, kChunkElements); ++i)
      piece.append(raw.data(), width);
    for (int64_t done = 0; done < count; done += kChunkElements)
      chunk(llvm::StringRef(piece).take_front(
          std::min(count - done, kChunkElements) * width));
    return success();
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != count * width)
      return failure();
    chunk(llvm::StringRef(data.data(), data.size()));
    return success();
  }
  return failure();
}

FailureOr<std::string> heterps::target::bytesOf(ElementsAttr value) {
  std::string bytes;
  if (failed(forEachBytesChunk(
          value, [&](llvm::StringRef piece) { bytes.append(piece); })))
    return failure();
  return bytes;
}
