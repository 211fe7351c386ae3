//===- Module.cpp - heterps._heterps --------------------------------------===//
//
// The native half of `import heterps`: the driver library (compile, place)
// and the runtime (Session). The Python package (python-bindings/heterps)
// adds the cache, clusters, models from PyTorch and the onnxruntime-style
// surface.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "Errors.h"
#include "heterps/Version.h"

namespace py = pybind11;

PYBIND11_MODULE(_heterps, module) {
  module.doc() = "Native part of heterps: compiler driver and runtime.";
  module.attr("__version__") = HETERPS_VERSION;
  heterps::python::registerErrors(module);
  heterps::python::bindCompile(module);
  heterps::python::bindSession(module);
  heterps::python::bindTraining(module);
}
