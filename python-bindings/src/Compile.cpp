//===- Compile.cpp - heterps._heterps.compile and place -------------------===//
//
// The driver library's compile and place on a thread of their own, the GIL
// released, so that Ctrl-C stops them; their diagnostics become the message
// of heterps.Error.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "Errors.h"

#include "heterps/Driver/Compile.h"
#include "heterps/Import/ONNXModelLoader.h"

#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace py = pybind11;
using heterps::driver::CompileOptions;

namespace heterps::python {
namespace {

/// Runs `work(options)` on a thread of its own while this one, without the
/// GIL, waits and checks every 100 ms for a signal Python must handle. On
/// Ctrl-C the options' stopRequested starts to answer true, the work is
/// waited for (it stops at its next check) and KeyboardInterrupt is raised.
/// Waiting in the calling thread, Python saw Ctrl-C only once a compile
/// ended: 10 s into an rl search of 20,000 episodes.
template <class Work> auto runInterruptibly(CompileOptions options, Work work) {
  using Result = decltype(work(options));
  std::atomic<bool> stop = false;
  options.stopRequested = [&stop] { return stop.load(); };
  std::packaged_task<Result()> task([&] { return work(options); });
  std::future<Result> result = task.get_future();
  std::thread worker(std::move(task));
  bool interrupted = false;
  while (true) {
    bool finished;
    {
      py::gil_scoped_release release;
      finished =
          interrupted || result.wait_for(std::chrono::milliseconds(100)) ==
                             std::future_status::ready;
      if (finished)
        worker.join();
    }
    if (finished)
      break;
    if (PyErr_CheckSignals() != 0) {
      interrupted = true;
      stop = true;
    }
  }
  if (interrupted)
    throw py::error_already_set();
  return result.get();
}

} // namespace

void bindCompile(py::module_ &module) {
  py::class_<CompileOptions>(module, "CompileOptions",
                             "The options of `heterps compile` (docs/CLI.md).")
      .def(py::init<>())
      .def_readwrite("model", &CompileOptions::model,
                     "The model's file, or its name in diagnostics when "
                     "model_bytes is set.")
      .def_property(
          "model_bytes",
          [](const CompileOptions &o) -> py::object {
            if (!o.modelBytes)
              return py::none();
            return py::bytes(*o.modelBytes);
          },
          [](CompileOptions &o, std::optional<std::string> bytes) {
            o.modelBytes = std::move(bytes);
          },
          "The model's ONNX bytes (None: read the file `model`).")
      .def_readwrite("cluster", &CompileOptions::cluster)
      .def_readwrite("strategy", &CompileOptions::strategy)
      .def_readwrite("profile", &CompileOptions::profile)
      .def_readwrite("output", &CompileOptions::output)
      .def_readwrite("throughput", &CompileOptions::throughput)
      .def_readwrite("seed", &CompileOptions::seed)
      .def_readwrite("batch", &CompileOptions::batch)
      .def_readwrite("static_batch", &CompileOptions::staticBatch)
      .def_readwrite("recurrence_unroll_limit",
                     &CompileOptions::recurrenceUnrollLimit)
      .def_readwrite("input_shapes", &CompileOptions::inputShapes)
      .def_readwrite("dims", &CompileOptions::dims)
      .def_readwrite("episodes", &CompileOptions::episodes)
      .def_readwrite("pass_steps", &CompileOptions::passSteps)
      .def_readwrite("pass_distinct_fraction",
                     &CompileOptions::passDistinctFraction)
      .def_readwrite("sparse_staleness", &CompileOptions::sparseStaleness)
      .def_readwrite("micro_batches", &CompileOptions::microBatches)
      .def_readwrite("native_layouts", &CompileOptions::nativeLayouts)
      .def_readwrite("fuse_elementwise", &CompileOptions::fuseElementwise)
      .def_readwrite("train", &CompileOptions::train)
      .def_readwrite("loss", &CompileOptions::loss)
      .def_readwrite("label", &CompileOptions::label)
      .def_readwrite("train_output", &CompileOptions::trainOutput)
      .def_readwrite("optimizer", &CompileOptions::optimizer)
      .def_readwrite("learning_rate", &CompileOptions::learningRate)
      .def_readwrite("momentum", &CompileOptions::momentum)
      .def_readwrite("batch_norm", &CompileOptions::batchNorm)
      .def_readwrite("frozen", &CompileOptions::frozen,
                     "Weights (initializers, by name) kept constant in "
                     "training (--freeze).");

  module.def(
      "compile",
      [](const CompileOptions &options) {
        std::string diagnostics;
        bool ok = runInterruptibly(options, [&](const CompileOptions &o) {
          llvm::raw_string_ostream os(diagnostics);
          return driver::compileBundle(o, os);
        });
        if (!ok)
          raiseError(diagnostics);
      },
      py::arg("options"),
      "Compiles options.model into the bundle directory options.output; "
      "raises heterps.Error with the compiler's diagnostics.");

  module.def(
      "external_data_files",
      [](const std::string &path, const py::bytes &contents) {
        return import::externalDataFiles(path,
                                         static_cast<std::string>(contents));
      },
      py::arg("path"), py::arg("contents"),
      "The files holding the model's external data, as the importer "
      "resolves them (for the compile cache's key).");

  module.def(
      "place",
      [](const CompileOptions &options) {
        std::string diagnostics;
        std::optional<std::string> plan =
            runInterruptibly(options, [&](const CompileOptions &o) {
              llvm::raw_string_ostream os(diagnostics);
              return driver::placeModel(o, os);
            });
        if (!plan)
          raiseError(diagnostics);
        return *plan;
      },
      py::arg("options"),
      "The placement plan of options.model as JSON text, without building.");
}

} // namespace heterps::python
