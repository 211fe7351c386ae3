//===- Arrays.cpp - NumPy arrays to and from runtime tensors --------------===//

#include "Arrays.h"
#include "Errors.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace py = pybind11;
using namespace heterps::rt;

namespace heterps::python {

py::dtype numpyType(DType type) {
  switch (type) {
  case DType::F32:
    return py::dtype::of<float>();
  case DType::F64:
    return py::dtype::of<double>();
  case DType::F16:
    return py::dtype("float16");
  case DType::I8:
    return py::dtype::of<int8_t>();
  case DType::U8:
    return py::dtype::of<uint8_t>();
  case DType::I16:
    return py::dtype::of<int16_t>();
  case DType::U16:
    return py::dtype::of<uint16_t>();
  case DType::I32:
    return py::dtype::of<int32_t>();
  case DType::U32:
    return py::dtype::of<uint32_t>();
  case DType::I64:
    return py::dtype::of<int64_t>();
  case DType::U64:
    return py::dtype::of<uint64_t>();
  case DType::Bool:
    return py::dtype::of<bool>();
  case DType::BF16:
    // NumPy has no bfloat16; ml_dtypes (which onnx requires) adds it.
    try {
      return py::dtype::from_args(
          py::module_::import("ml_dtypes").attr("bfloat16"));
    } catch (const py::error_already_set &) {
      throw Error("bf16 tensors need the ml_dtypes package for their NumPy "
                  "type (pip install ml_dtypes)");
    }
  }
  throw Error(std::string("tensors of ") + dtypeName(type) +
              " have no NumPy type");
}

InputArray toInput(const InputSpec &spec, const py::handle &object) {
  if (!py::isinstance<py::array>(object))
    throw py::value_error(
        "input '" + spec.name + "' must be a numpy.ndarray, not " +
        std::string(py::str(py::type::of(object).attr("__name__"))));
  py::array array = py::reinterpret_borrow<py::array>(object);
  py::dtype expected;
  try {
    expected = numpyType(spec.dtype);
  } catch (const Error &error) {
    throw py::value_error("input '" + spec.name + "': " + error.what());
  }
  // Same kind and size: byte order aside (the runtime is little-endian
  // only), numpy's own equivalence.
  if (!array.dtype().is(expected) && !array.dtype().equal(expected))
    throw py::value_error("input '" + spec.name + "' must have dtype " +
                          std::string(py::str(expected)) + " (" +
                          dtypeName(spec.dtype) + "), not " +
                          std::string(py::str(array.dtype())));
  Shape shape(array.shape(), array.shape() + array.ndim());
  try {
    checkInput(spec, spec.dtype, shape);
  } catch (const Error &error) {
    throw py::value_error(error.what());
  }
  InputArray input;
  // The runtime's own buffers come from the heap, so stage code may count
  // on that alignment; a view at an odd offset is copied.
  auto address = reinterpret_cast<uintptr_t>(array.data());
  if ((array.flags() & py::array::c_style) &&
      address % alignof(std::max_align_t) == 0) {
    input.view = TensorView(spec.dtype, std::move(shape),
                            static_cast<const char *>(array.data()));
    input.keep = array;
    return input;
  }
  // One copy: NumPy's strided copy into a view of the runtime's buffer (its
  // base keeps it from copying again).
  input.copy = HostTensor(spec.dtype, shape);
  std::vector<py::ssize_t> extents(array.shape(), array.shape() + array.ndim());
  py::array target(array.dtype(), extents, input.copy.data.data(), py::none());
  py::module_::import("numpy").attr("copyto")(target, array);
  input.view = TensorView(input.copy);
  return input;
}

py::array toArray(HostTensor &&tensor) {
  py::dtype type = numpyType(tensor.dtype);
  auto *owned = new HostTensor(std::move(tensor));
  py::capsule base(
      owned, [](void *pointer) { delete static_cast<HostTensor *>(pointer); });
  // Row-major strides, spelled out: the runtime's buffers are dense.
  std::vector<py::ssize_t> extents(owned->shape.begin(), owned->shape.end());
  std::vector<py::ssize_t> strides(extents.size());
  py::ssize_t stride = static_cast<py::ssize_t>(dtypeSize(owned->dtype));
  for (size_t i = extents.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= extents[i];
  }
  return py::array(type, extents, strides, owned->data.data(), base);
}

} // namespace heterps::python
