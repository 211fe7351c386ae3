//===- Session.cpp - A bundle opened for inference ------------------------===//
//
// Compiled with exceptions: the runtime reports errors by throwing.
//
//===----------------------------------------------------------------------===//

#include "heterps/Driver/Session.h"

namespace heterps::driver {

using namespace heterps::rt;

std::optional<std::string> bundleOpenError(const std::string &directory) {
  try {
    Bundle bundle(directory);
  } catch (const std::exception &error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

std::optional<std::string> stageLibrariesError(const Bundle &bundle) {
  std::vector<const StageSpec *> programs;
  for (const StageSpec &stage : bundle.stages())
    programs.push_back(&stage);
  if (const PassKeysSpec *keys = bundle.passKeys();
      keys && keys->unavailable.empty())
    programs.push_back(&keys->program);
  for (const StageSpec *program : programs) {
    auto cpu = program->libraries.find("cpu");
    if (cpu == program->libraries.end())
      continue;
    if (std::string error = stageLibraryError(bundle.path(cpu->second));
        !error.empty())
      return error;
  }
  return std::nullopt;
}

Session::Session(const std::string &directory, const ExecutorOptions &options)
    : opened(std::make_unique<Bundle>(directory)), options(options) {}

Session::~Session() = default;

std::vector<OutputSpec> Session::outputs() const {
  const std::vector<OutputSpec> &all = opened->outputs();
  return {all.begin(), all.begin() + opened->modelOutputCount()};
}

void Session::checkInput(size_t index, const TensorView &tensor) const {
  if (index >= inputs().size())
    throw Error("input " + std::to_string(index) + " of a model with " +
                std::to_string(inputs().size()) + " inputs");
  rt::checkInput(inputs()[index], tensor.dtype, tensor.shape);
}

void Session::checkRunnable() const {
  // Its stages read their parameters from the training server.
  if (opened->training())
    throw Error("'" + opened->directory() +
                "' is a training bundle: train it (heterps run --train, "
                "Bundle.train); for inference, compile the model without "
                "--train");
}

std::vector<HostTensor> Session::run(const std::vector<TensorView> &inputs) {
  checkRunnable();
  if (inputs.size() != this->inputs().size())
    throw Error("the model has " + std::to_string(this->inputs().size()) +
                " inputs; " + std::to_string(inputs.size()) + " were given");
  for (size_t i = 0; i < inputs.size(); ++i)
    checkInput(i, inputs[i]);
  // One made before this process was forked cannot run here, nor be torn
  // down (Executor::madeInThisProcess): left alone, and another made.
  if (executor && !executor->madeInThisProcess())
    (void)executor.release();
  if (!executor)
    executor = std::make_unique<Executor>(*opened, options);
  return executor->run(inputs);
}

int64_t Session::samplesIn(const std::vector<TensorView> &inputs) const {
  int64_t samples = 0;
  for (size_t i = 0; i < inputs.size() && i < this->inputs().size(); ++i)
    if (this->inputs()[i].batched && !inputs[i].shape.empty())
      samples = inputs[i].shape[0];
  return samples;
}

} // namespace heterps::driver
