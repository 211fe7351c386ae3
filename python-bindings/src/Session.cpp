//===- Session.cpp - heterps._heterps.Session -----------------------------===//
//
// A bundle opened for inference (heterps/Driver/Session.h). Inputs are
// checked with the GIL held (ValueError naming the input); the stages run
// with it released, one call at a time per session.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"
#include "Errors.h"

#include "heterps/Driver/Session.h"

#include <pybind11/stl.h>

#include <memory>
#include <mutex>

namespace py = pybind11;
using namespace heterps::rt;

namespace heterps::python {
namespace {

/// The session and the lock that keeps its executor to one call at a time.
struct PySession {
  std::unique_ptr<driver::Session> session;
  std::mutex running;
};

/// (name, shape, dtype name, NumPy dtype or None, batched).
py::tuple describe(const TensorSpec &spec) {
  py::object type = py::none();
  try {
    type = numpyType(spec.dtype);
  } catch (const Error &) {
    // bf16 without ml_dtypes: None, and a run says what to install.
  }
  return py::make_tuple(spec.name, py::tuple(py::cast(spec.shape)),
                        dtypeName(spec.dtype), type, spec.batched);
}

} // namespace

void bindSession(py::module_ &module) {
  py::class_<PySession>(module, "Session",
                        "A compiled bundle opened for inference.")
      .def(py::init([](const std::string &directory, int threads,
                       bool gpuStagesOnCpu, int framesInFlight) {
             ExecutorOptions options;
             options.threadsPerStage = threads;
             options.gpuStagesOnCpu = gpuStagesOnCpu;
             options.framesInFlight = framesInFlight;
             auto session = std::make_unique<PySession>();
             session->session =
                 std::make_unique<driver::Session>(directory, options);
             return session;
           }),
           py::arg("directory"), py::arg("threads") = 0,
           py::arg("gpu_stages_on_cpu") = false,
           py::arg("frames_in_flight") = 0,
           "Reads and checks the bundle; raises heterps.Error naming what "
           "is wrong.")
      .def_property_readonly(
          "inputs",
          [](const PySession &self) {
            py::list specs;
            for (const InputSpec &spec : self.session->inputs())
              specs.append(describe(spec));
            return specs;
          },
          "(name, shape, dtype name, numpy dtype, batched) per input.")
      .def_property_readonly(
          "outputs",
          [](const PySession &self) {
            py::list specs;
            for (const OutputSpec &spec : self.session->outputs())
              specs.append(describe(spec));
            return specs;
          },
          "(name, shape, dtype name, numpy dtype, batched) per output.")
      .def_property_readonly(
          "batch",
          [](const PySession &self) { return self.session->bundle().batch(); },
          "The compiled micro-batch (0 when no input is batched).")
      .def(
          "stages_error",
          [](const PySession &self) {
            py::gil_scoped_release release;
            return driver::stageLibrariesError(self.session->bundle());
          },
          "Why a CPU stage library would not load as a run loads it, or None "
          "(the compile cache's check of an entry).")
      .def_property_readonly(
          "mixes_samples",
          [](const PySession &self) -> std::optional<std::string> {
            for (const OutputSpec &spec : self.session->outputs())
              if (!spec.mixesSamples.empty())
                return "output '" + spec.name + "': " + spec.mixesSamples;
            return std::nullopt;
          },
          "Why a run takes exactly the compiled batch of samples (an output "
          "mixes them), or None.")
      .def_property_readonly(
          "training",
          [](const PySession &self) {
            return self.session->bundle().training() != nullptr;
          },
          "Whether this is a training bundle.")
      .def(
          "check_runnable",
          [](const PySession &self) { self.session->checkRunnable(); },
          "Raises heterps.Error unless the bundle runs for inference.")
      .def(
          "run",
          [](PySession &self, const py::sequence &arrays) {
            self.session->checkRunnable();
            const std::vector<InputSpec> &specs = self.session->inputs();
            if (arrays.size() != specs.size())
              throw py::value_error(
                  "the model has " + std::to_string(specs.size()) +
                  " inputs; " + std::to_string(arrays.size()) + " were given");
            // The arrays stay referenced (and so alive) until the run ends.
            std::vector<InputArray> held;
            held.reserve(specs.size());
            std::vector<TensorView> inputs;
            for (size_t i = 0; i < specs.size(); ++i)
              inputs.push_back(
                  held.emplace_back(toInput(specs[i], arrays[i])).view);
            // How many samples the arrays hold is part of their shape.
            try {
              samplesOfRun(self.session->bundle(), inputs);
            } catch (const Error &error) {
              throw py::value_error(error.what());
            }
            std::vector<HostTensor> outputs;
            std::string error;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.running);
              try {
                outputs = self.session->run(inputs);
              } catch (const std::exception &failure) {
                error = failure.what();
              }
            }
            if (!error.empty())
              raiseError(error);
            py::list arraysOut;
            for (HostTensor &tensor : outputs)
              arraysOut.append(toArray(std::move(tensor)));
            return arraysOut;
          },
          py::arg("inputs"),
          "Runs the model on one array per input (in order); returns one "
          "array per output. ValueError names an input of the wrong dtype "
          "or shape; heterps.Error carries the runtime's message.");
}

} // namespace heterps::python
