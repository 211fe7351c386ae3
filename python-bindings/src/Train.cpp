//===- Train.cpp - heterps._heterps.Training ------------------------------===//
//
// A training run of a training bundle (heterps::rt::train::Trainer) on a
// thread of its own, so that Python can take its progress lines as they
// come (Bundle.train yields them as metrics) with the GIL released between
// them, and stop it between steps (Ctrl-C, or leaving the loop early) after
// the checkpoint the options ask for.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "Errors.h"

#include "heterps/Driver/Session.h"
#include "heterps/Runtime/NpyBatchSource.h"
#include "heterps/Runtime/Trainer.h"

#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <thread>

namespace py = pybind11;
using namespace heterps::rt;

namespace heterps::python {
namespace {

/// The trainer's log, cut into lines that a reader takes one at a time.
class LineQueue : public std::streambuf {
public:
  /// Waits up to `timeout` for a line; false when none came. `finished`
  /// tells whether no line will come any more.
  bool pop(std::string &line, std::chrono::milliseconds timeout,
           bool &finished) {
    std::unique_lock<std::mutex> lock(mutex);
    ready.wait_for(lock, timeout, [&] { return !lines.empty() || done; });
    finished = done && lines.empty();
    if (lines.empty())
      return false;
    line = std::move(lines.front());
    lines.pop_front();
    return true;
  }

  void finish() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!partial.empty())
      lines.push_back(std::move(partial));
    done = true;
    ready.notify_all();
  }

protected:
  int overflow(int c) override {
    if (c == traits_type::eof())
      return traits_type::not_eof(c);
    std::lock_guard<std::mutex> lock(mutex);
    if (c == '\n') {
      lines.push_back(std::move(partial));
      partial.clear();
      ready.notify_all();
    } else {
      partial += static_cast<char>(c);
    }
    return c;
  }

private:
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::string> lines;
  std::string partial;
  bool done = false;
};

class Training {
public:
  Training(std::shared_ptr<const Bundle> bundle,
           train::TrainerOptions trainerOptions)
      : bundle(std::move(bundle)), options(std::move(trainerOptions)),
        log(&queue) {
    options.stopRequested = &stopRequested;
    worker = std::thread([this] { work(); });
  }

  /// Dropped mid-run (a loop left early): stop after the current step
  /// rather than train to the end unseen.
  ~Training() {
    stopRequested.store(true);
    join();
  }

  /// The next line of the log; None once training ended. Raises the
  /// training's error as heterps.Error once every line before it was taken,
  /// and KeyboardInterrupt on Ctrl-C (after stopping the run).
  py::object next() {
    while (true) {
      std::string line;
      bool finished = false, got = false;
      {
        py::gil_scoped_release release;
        got = queue.pop(line, std::chrono::milliseconds(100), finished);
      }
      if (got)
        return py::str(line);
      if (finished) {
        join();
        if (!error.empty())
          raiseError(error);
        return py::none();
      }
      if (PyErr_CheckSignals() != 0) {
        stop();
        throw py::error_already_set();
      }
    }
  }

  /// Asks the trainer to stop after the current step and waits for it.
  void stop() {
    stopRequested.store(true);
    py::gil_scoped_release release;
    join();
  }

  py::dict summary() const {
    py::dict result;
    std::lock_guard<std::mutex> lock(resultMutex);
    if (!ended)
      return result;
    result["first_step"] = done.firstStep;
    result["steps"] = done.steps;
    result["samples"] = done.samples;
    result["seconds"] = done.seconds;
    result["train_loss"] = done.trainLoss;
    result["train_auc"] = done.trainAuc;
    result["train_accuracy"] = done.trainAccuracy;
    result["evaluated"] = done.evaluated;
    if (done.evaluated) {
      result["eval_loss"] = done.evalLoss;
      result["eval_auc"] = done.evalAuc;
      result["eval_log_loss"] = done.evalLogLoss;
      result["eval_accuracy"] = done.evalAccuracy;
      result["eval_samples"] = done.evalSamples;
    }
    result["interrupted"] = done.interrupted;
    result["last_checkpoint"] = done.lastCheckpoint;
    py::dict stepSeconds;
    stepSeconds["data"] = done.stepTimes.data;
    stepSeconds["stages"] = done.stepTimes.stages;
    stepSeconds["update"] = done.stepTimes.update;
    stepSeconds["server_calls"] = done.stepTimes.serverCalls;
    result["step_seconds"] = stepSeconds;
    return result;
  }

private:
  void work() {
    try {
      train::TrainSummary summary = train::Trainer(*bundle, options, log).run();
      std::lock_guard<std::mutex> lock(resultMutex);
      done = summary;
      ended = true;
    } catch (const std::exception &failure) {
      log.flush();
      error = failure.what();
    }
    queue.finish();
  }

  void join() {
    std::lock_guard<std::mutex> lock(joinMutex);
    if (worker.joinable())
      worker.join();
  }

  std::shared_ptr<const Bundle> bundle;
  train::TrainerOptions options;
  std::atomic<bool> stopRequested{false};
  LineQueue queue;
  std::ostream log;
  std::thread worker;
  std::mutex joinMutex;
  mutable std::mutex resultMutex;
  train::TrainSummary done;
  bool ended = false;
  std::string error; // written by the worker before it finishes the queue
};

std::vector<data::NpyInput>
npyInputs(const std::map<std::string, std::string> &files) {
  std::vector<data::NpyInput> inputs;
  for (const auto &[name, path] : files)
    inputs.push_back({name, path});
  return inputs;
}

} // namespace

void bindTraining(py::module_ &module) {
  py::class_<Training>(module, "Training",
                       "A training run on a thread of its own.")
      .def(py::init([](const std::string &directory, const std::string &data,
                       const std::map<std::string, std::string> &dataInputs,
                       const std::string &eval,
                       const std::map<std::string, std::string> &evalInputs,
                       int64_t batch, int64_t steps, int64_t samples,
                       int64_t logEvery, int64_t evalEvery, uint64_t seed,
                       bool shuffle, int threads, bool gpuStagesOnCpu,
                       int64_t hashBuckets, const std::string &checkpointDir,
                       const std::string &checkpointEvery, bool resume,
                       const std::string &dumpParameters,
                       std::optional<int64_t> passSteps,
                       const std::string &passMemory,
                       std::optional<std::string> passCacheDevice,
                       std::optional<int> sparseStaleness, int64_t psMemoryRows,
                       const std::string &psStorageDir,
                       bool denseParametersOnGpu,
                       std::optional<std::vector<int>> passCacheGpus) {
             auto bundle = std::make_shared<const Bundle>(directory);
             if (!bundle->training())
               throw Error("'" + directory +
                           "' is not a training bundle (compile with "
                           "train=True)");
             train::TrainerOptions options;
             options.data = data;
             options.dataInputs = npyInputs(dataInputs);
             options.eval = eval;
             options.evalInputs = npyInputs(evalInputs);
             options.batch = batch;
             options.steps = steps;
             options.samples = samples;
             options.logEvery = logEvery;
             options.evalEvery = evalEvery;
             options.seed = seed;
             options.shuffle = shuffle;
             options.threads = threads;
             options.gpuStagesOnCpu = gpuStagesOnCpu;
             options.hashBuckets = hashBuckets;
             options.checkpointDir = checkpointDir;
             if (!checkpointEvery.empty()) {
               train::CheckpointInterval interval =
                   train::parseCheckpointInterval(checkpointEvery);
               options.checkpointEvery = interval.steps;
               options.checkpointEverySeconds = interval.seconds;
             }
             options.resume = resume;
             options.dumpParameters = dumpParameters;
             options.passSteps = passSteps;
             if (!passMemory.empty())
               train::parsePassMemory(passMemory, options);
             if (passCacheDevice) {
               if (*passCacheDevice != "host" && *passCacheDevice != "gpu")
                 throw Error("pass_cache_device '" + *passCacheDevice +
                             "': give 'host' or 'gpu'");
               options.passCacheOnGpu = *passCacheDevice == "gpu";
             }
             options.sparseStaleness = sparseStaleness;
             options.psMemoryRows = psMemoryRows;
             options.psStorageDir = psStorageDir;
             options.denseParametersOnGpu = denseParametersOnGpu;
             if (passCacheGpus) {
               if (passCacheGpus->empty())
                 throw Error("pass_cache_gpus: give at least one CUDA device");
               options.passCacheGpus = *passCacheGpus;
             }
             return std::make_unique<Training>(std::move(bundle),
                                               std::move(options));
           }),
           py::arg("directory"), py::arg("data"), py::arg("data_inputs"),
           py::arg("eval"), py::arg("eval_inputs"), py::arg("batch"),
           py::arg("steps"), py::arg("samples"), py::arg("log_every"),
           py::arg("eval_every"), py::arg("seed"), py::arg("shuffle"),
           py::arg("threads"), py::arg("gpu_stages_on_cpu"),
           py::arg("hash_buckets"), py::arg("checkpoint_dir"),
           py::arg("checkpoint_every"), py::arg("resume"),
           py::arg("dump_parameters"), py::arg("pass_steps") = py::none(),
           py::arg("pass_memory") = "",
           py::arg("pass_cache_device") = py::none(),
           py::arg("sparse_staleness") = py::none(),
           py::arg("ps_memory_rows") = 0, py::arg("ps_storage_dir") = "",
           py::arg("dense_parameters_on_gpu") = true,
           py::arg("pass_cache_gpus") = py::none(),
           "Starts training; the options are those of `heterps run --train` "
           "(docs/CLI.md).")
      .def("next", &Training::next,
           "The next line of the trainer's log, None once it ended; raises "
           "heterps.Error with the trainer's error.")
      .def("stop", &Training::stop,
           "Stops after the current step (and its checkpoint) and waits.")
      .def_property_readonly("summary", &Training::summary,
                             "The run's summary once it ended ({} before).");
}

} // namespace heterps::python
