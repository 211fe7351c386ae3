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

LogicalResult WeightsFile::put(uint64_t offset, llvm::StringRef bytes) {
  if (offset >= data.size()) {
    data.resize(offset, '\0');
    data.append(bytes.data(), bytes.size());
    return success();
  }
  return success(offset + bytes.size() <= data.size() &&
                 llvm::StringRef(data).substr(offset, bytes.size()) == bytes);
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
    FailureOr<std::string> data = failure();
    if (auto shape = dyn_cast<ShapeOp>(op)) {
      data = staticExtents(shape);
    } else {
      auto weight = dyn_cast<WeightOp>(op);
      data =
          bytesOf(weight ? weight.getValue() : cast<ConstantOp>(op).getValue());
      if (failed(data))
        return op.emitError() << (weight ? "weight data is not dense"
                                         : "constant data is not dense");
    }
    auto offset = op.getAttrOfType<IntegerAttr>(kWeightsOffsetAttrName);
    if (!offset || uint64_t(offset.getInt()) < begin ||
        offset.getInt() + data->size() > end)
      return op.emitError() << "no place in the stage's share of weights.bin ("
                            << kWeightsOffsetAttrName << ")";
    if (failed(weights.put(offset.getInt(), *data)))
      return op.emitError() << "its place in weights.bin overlaps another's";
  }
  weights.fill(end);
  return success();
}

FailureOr<std::string> heterps::target::bytesOf(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  int64_t count = type.getNumElements();
  unsigned width = elementBytes(element);
  std::string bytes;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    if (element.isInteger(1)) {
      for (bool bit : dense.getValues<bool>())
        bytes.push_back(bit ? 1 : 0);
      return bytes;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      bytes.reserve(count * width);
      for (int64_t i = 0; i < count; ++i)
        bytes.append(raw.data(), width);
      return bytes;
    }
    return std::string(raw.data(), raw.size());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != count * width)
      return failure();
    return std::string(data.data(), data.size());
  }
  return failure();
}
