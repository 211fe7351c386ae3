//===- Executor.h - Runs a bundle's stages as a pipeline --------*- C++ -*-===//
//
// One process: every replica of every stage is a thread with its own stage
// instance; micro-batches ("frames") flow through bounded queues, so the
// stages work on different micro-batches at the same time. A frame carries
// the buffers of every channel, so stages on any device class and any
// replica order compose; the caller gets outputs back in input order.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_EXECUTOR_H
#define HETERPS_RUNTIME_EXECUTOR_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/Tensor.h"

#include <memory>

namespace heterps::rt {

struct ExecutorOptions {
  /// Kernel threads of each stage replica (<= 0: backend default).
  int threadsPerStage = 0;
  /// Run GPU-class stages with their CPU build instead of failing when no
  /// GPU is usable.
  bool gpuStagesOnCpu = false;
  /// Micro-batches in flight at once (bounded queues between stages).
  int framesInFlight = 4;
};

class Executor {
public:
  /// Loads every stage library and creates every stage replica; throws Error
  /// naming the stage at fault.
  Executor(const Bundle &bundle, ExecutorOptions options);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// Runs the model on `inputs` (in the bundle's input order). Batched inputs
  /// may hold any number of samples: they are cut into micro-batches of the
  /// compiled batch (the last one padded) and batched outputs are joined.
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs);

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_EXECUTOR_H
