//===- Bindings.h - The parts of heterps._heterps ---------------*- C++ -*-===//

#ifndef HETERPS_PYTHON_BINDINGS_H
#define HETERPS_PYTHON_BINDINGS_H

#include <pybind11/pybind11.h>

namespace heterps::python {

/// CompileOptions, compile() and place() (Compile.cpp).
void bindCompile(pybind11::module_ &module);
/// Session: a bundle opened for inference (Session.cpp).
void bindSession(pybind11::module_ &module);
/// Training: a training run on a thread of its own (Train.cpp).
void bindTraining(pybind11::module_ &module);

} // namespace heterps::python

#endif // HETERPS_PYTHON_BINDINGS_H
