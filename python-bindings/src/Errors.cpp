//===- Errors.cpp - heterps.Error -----------------------------------------===//

#include "Errors.h"

#include "heterps/Runtime/Types.h"

namespace py = pybind11;

namespace heterps::python {
namespace {
PyObject *errorType = nullptr;

/// Sets heterps.Error with `message`. Decoded with backslashreplace: a
/// message quoting a model's node name or a damaged file's bytes is not
/// UTF-8, and PyErr_SetString's strict decoding raised UnicodeDecodeError
/// instead (the compile cache, which rebuilds on heterps.Error, then
/// failed on a damaged entry for good).
void setError(const std::string &message) {
  py::object text = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
      message.data(), py::ssize_t(message.size()), "backslashreplace"));
  if (!text)
    return; // the decoder's own error (out of memory) stands
  PyErr_SetObject(errorType, text.ptr());
}
} // namespace

void registerErrors(py::module_ &module) {
  // The runtime's errors (heterps::rt::Error) arrive as heterps.Error too.
  py::exception<rt::Error> &type =
      py::register_exception<rt::Error>(module, "Error", PyExc_RuntimeError);
  type.doc() = "A failure of the compiler or the runtime (a RuntimeError); "
               "the message is their diagnostic text.";
  errorType = type.ptr();
  // Registered after register_exception's own translator, so tried first.
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown)
        std::rethrow_exception(thrown);
    } catch (const rt::Error &error) {
      setError(error.what());
    }
  });
}

void raiseError(const std::string &message) {
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  // Diagnostics end in a newline, which an exception's message does not.
  size_t end = message.find_last_not_of(" \n");
  setError(message.substr(0, end == std::string::npos ? 0 : end + 1));
  throw py::error_already_set();
}

} // namespace heterps::python
