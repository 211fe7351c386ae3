//===- Tensor.h - Host tensors and their files ------------------*- C++ -*-===//
//
// What the executor exchanges with its caller: dense row-major host
// tensors, read from .npy or ONNX TensorProto (.pb) files and written as
// .npy.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TENSOR_H
#define HETERPS_RUNTIME_TENSOR_H

#include "heterps/Runtime/Types.h"

#include <string>
#include <vector>

namespace heterps::rt {

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<char> data;

  HostTensor() = default;
  HostTensor(DType dtype, Shape shape)
      : dtype(dtype), shape(std::move(shape)),
        data(numElements(this->shape) * dtypeSize(dtype)) {}
  size_t bytes() const { return data.size(); }
};

/// Reads a .npy (format 1-3, little-endian, C order) or an ONNX TensorProto
/// (.pb) file, chosen by content. Throws Error naming the file and what is
/// wrong with it.
HostTensor readTensorFile(const std::string &path);

/// Writes `tensor` as .npy, atomically (a temporary file renamed into place).
void writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_TENSOR_H
