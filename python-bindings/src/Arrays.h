//===- Arrays.h - NumPy arrays to and from runtime tensors ------*- C++ -*-===//

#ifndef HETERPS_PYTHON_ARRAYS_H
#define HETERPS_PYTHON_ARRAYS_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/Tensor.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace heterps::python {

/// The NumPy dtype of a runtime element type; throws heterps.Error for one
/// NumPy has not (bf16).
pybind11::dtype numpyType(rt::DType type);

/// `array` as input `spec` takes it: the dtype must match exactly and the
/// shape must be one the bundle takes (a batched input any number of
/// samples); otherwise ValueError naming the input. Elements are copied once
/// (from any strides) into the runtime's buffer.
/// An input array as the executor reads it: in place when it is
/// C-ordered and aligned as the runtime's own buffers are (`keep` holds the
/// array for the run), else copied once into `copy`.
struct InputArray {
  rt::TensorView view;
  pybind11::object keep;
  rt::HostTensor copy;
};

/// Checks `array` against input `spec` (ValueError naming it otherwise).
InputArray toInput(const rt::InputSpec &spec, const pybind11::handle &array);

/// An array over `tensor`'s buffer, which it takes over: no copy.
pybind11::array toArray(rt::HostTensor &&tensor);

} // namespace heterps::python

#endif // HETERPS_PYTHON_ARRAYS_H
