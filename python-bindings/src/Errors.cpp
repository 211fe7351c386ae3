//===- Errors.cpp - heterps.Error -----------------------------------------===//

#include "Errors.h"

#include "heterps/Runtime/Types.h"

namespace py = pybind11;

namespace heterps::python {
namespace {
PyObject *errorType = nullptr;
} // namespace

void registerErrors(py::module_ &module) {
  // The runtime's errors (heterps::rt::Error) arrive as heterps.Error too.
  py::exception<rt::Error> &type =
      py::register_exception<rt::Error>(module, "Error", PyExc_RuntimeError);
  type.doc() = "A failure of the compiler or the runtime (a RuntimeError); "
               "the message is their diagnostic text.";
  errorType = type.ptr();
}

void raiseError(const std::string &message) {
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  // Diagnostics end in a newline, which an exception's message does not.
  size_t end = message.find_last_not_of(" \n");
  PyErr_SetString(
      errorType,
      message.substr(0, end == std::string::npos ? 0 : end + 1).c_str());
  throw py::error_already_set();
}

} // namespace heterps::python
