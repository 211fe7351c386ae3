//===- Session.h - A bundle opened for inference ----------------*- C++ -*-===//
//
// What `heterps run` and the Python bindings share to run a bundle: the
// bundle, read and checked, and the executor over its stages. Errors are
// thrown as heterps::rt::Error naming what is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DRIVER_SESSION_H
#define HETERPS_DRIVER_SESSION_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/Executor.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace heterps::driver {

/// Why the runtime would refuse to open the bundle `directory` (its own
/// reading and checks of it, the message it would throw), or nullopt: a
/// compile checks what it wrote before putting it in place, so that the
/// compiler and the runtime agree on every bundle that exists.
std::optional<std::string> bundleOpenError(const std::string &directory);

/// Why one of the opened bundle's CPU stage libraries (the pass-key
/// program's too) would not load as a run loads it, or nullopt: opening a
/// bundle reads its manifest and weights only, the stages load on its first
/// run. GPU builds are not loaded (that would load CUDA).
std::optional<std::string> stageLibrariesError(const rt::Bundle &bundle);

class Session {
public:
  /// Reads and checks the bundle `directory`; the stages load on the first
  /// run, so a caller can check its inputs against the bundle first.
  Session(const std::string &directory, const rt::ExecutorOptions &options);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const rt::Bundle &bundle() const { return *opened; }
  const std::vector<rt::InputSpec> &inputs() const { return opened->inputs(); }
  /// The model's outputs, without the hidden extent counts.
  std::vector<rt::OutputSpec> outputs() const;

  /// Throws Error naming the input unless `tensor` may feed input `index`.
  void checkInput(size_t index, const rt::TensorView &tensor) const;

  /// Throws Error unless the bundle runs for inference (a training bundle's
  /// stages read their parameters from the training server).
  void checkRunnable() const;

  /// Runs the model on `inputs` (in the bundle's input order, each checked;
  /// read in place where they fill a micro-batch) and returns its outputs
  /// in order. One call at a time.
  std::vector<rt::HostTensor> run(const std::vector<rt::TensorView> &inputs);
  std::vector<rt::HostTensor> run(const std::vector<rt::HostTensor> &inputs) {
    return run(rt::viewsOf(inputs));
  }

  /// Samples in one call on `inputs`: the leading extent of a batched input,
  /// 0 when the model has none (its batch was fixed at export).
  int64_t samplesIn(const std::vector<rt::TensorView> &inputs) const;

private:
  std::unique_ptr<rt::Bundle> opened;
  rt::ExecutorOptions options;
  std::unique_ptr<rt::Executor> executor;
};

} // namespace heterps::driver

#endif // HETERPS_DRIVER_SESSION_H
