//===- Errors.h - heterps.Error ---------------------------------*- C++ -*-===//

#ifndef HETERPS_PYTHON_ERRORS_H
#define HETERPS_PYTHON_ERRORS_H

#include <pybind11/pybind11.h>

namespace heterps::python {

/// Registers heterps.Error (a RuntimeError) in `module`, and the
/// translation of the runtime's heterps::rt::Error into it.
void registerErrors(pybind11::module_ &module);

/// Raises heterps.Error with `message`, unless a Ctrl-C arrived meanwhile
/// (the compilers the build started stop on it too): then
/// KeyboardInterrupt.
[[noreturn]] void raiseError(const std::string &message);

} // namespace heterps::python

#endif // HETERPS_PYTHON_ERRORS_H
