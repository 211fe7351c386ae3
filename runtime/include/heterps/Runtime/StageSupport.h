//===- StageSupport.h - What generated stage programs include ---*- C++ -*-===//
//
// The backend choice and the glue every stage program shares: weights and
// parameter-server tables in backend memory, and the C entry points of
// StageABI.h around a generated `Stage` class. A stage source compiled by
// nvcc runs on the GPU; the same source compiled as C++ runs on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_STAGESUPPORT_H
#define HETERPS_RUNTIME_STAGESUPPORT_H

#include "heterps/Runtime/ScalarOps.h"
#include "heterps/Runtime/StageABI.h"
#include "heterps/Runtime/Types.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include "heterps/Runtime/GpuKernels.h"
namespace backend = heterps::rt::gpu;
#else
#include "heterps/Runtime/CpuKernels.h"
namespace backend = heterps::rt::cpu;
#endif

/// A generated helper that runs once per stage (building its kernels). It
/// is mostly temporaries for the kernels' constructors, which are compiled
/// code of the runtime's; optimising it gains nothing at run time and took
/// two thirds of g++'s time on a stage of 10,000 kernels (an unrolled LSTM).
/// Kept out of its caller, so the stage's constructor stays small too.
#if defined(__clang__)
#define HPS_RUN_ONCE __attribute__((noinline, cold, optnone))
#elif defined(__GNUC__)
#define HPS_RUN_ONCE __attribute__((noinline, cold, optimize("O0")))
#else
#define HPS_RUN_ONCE
#endif

/// A generated function kept out of its caller for the same reason.
#define HPS_NOINLINE __attribute__((noinline))

namespace heterps::rt::stage {

/// The address of a kernel argument the kernel reads only while it is built.
inline const Shape *addressOf(const Shape &shape) { return &shape; }

/// This stage's share [begin, end) of the weights file in backend memory: the
/// mapped file itself on the CPU, a device copy (kept in `copy`) on the GPU.
inline const char *stageWeights(backend::Context &ctx,
                                const HpsStageConfig &config, size_t begin,
                                size_t end, char *&copy) {
  if (end > config.weightsBytes)
    throw Error(
        "the weights file holds " + std::to_string(config.weightsBytes) +
        " bytes but this stage reads up to byte " + std::to_string(end));
  const char *host = static_cast<const char *>(config.weights) + begin;
  if (backend::kHostMemory || end == begin)
    return host;
  copy = static_cast<char *>(ctx.allocate(end - begin));
  ctx.upload(copy, host, end - begin);
  return copy;
}

/// A parameter-server table in backend memory.
inline const char *stageTable(backend::Context &ctx,
                              const HpsStageConfig &config, const char *name,
                              size_t bytes, std::vector<char *> &copies) {
  const void *host =
      config.lookupTable ? config.lookupTable(config.server, name) : nullptr;
  if (!host)
    throw Error(std::string("the parameter server has no table '") + name +
                "'");
  if (backend::kHostMemory)
    return static_cast<const char *>(host);
  char *copy = static_cast<char *>(ctx.allocate(bytes));
  ctx.upload(copy, host, bytes);
  copies.push_back(copy);
  return copy;
}

/// Calls a training callback, turning its error into an exception.
template <typename F> void serverCall(const std::string &what, F &&call) {
  char message[512] = "";
  if (call(message, sizeof(message)) != 0)
    throw Error(what + ": " + message);
}

/// Training: trainable dense parameter `name` in backend memory for this
/// run. Where the server keeps it in GPU memory (ABI 5's
/// parameterOnDevice), a GPU reads it there in place. Otherwise the host
/// value is live (the server updates it between steps), so host backends
/// read it in place and a GPU uploads it into `slot`: on every run, or with
/// ABI 3's parameterVersion only when the server's values changed since the
/// upload `uploaded` records (0: none yet).
inline const char *stageParameter(backend::Context &ctx,
                                  const HpsStageConfig &config,
                                  const char *name, char *slot, size_t bytes,
                                  uint64_t &uploaded) {
  if (!backend::kHostMemory && config.parameterOnDevice) {
    const float *device = nullptr;
    serverCall("reading dense parameter '" + std::string(name) + "'",
               [&](char *error, size_t errorBytes) {
                 return config.parameterOnDevice(config.server, name, &device,
                                                 error, errorBytes);
               });
    if (device)
      return reinterpret_cast<const char *>(device);
  }
  const float *host = config.lookupParameter
                          ? config.lookupParameter(config.server, name)
                          : nullptr;
  if (!host)
    throw Error(std::string("the parameter server has no dense parameter '") +
                name + "' (is this a training run?)");
  if (backend::kHostMemory)
    return reinterpret_cast<const char *>(host);
  // Versions count from 0; `uploaded` holds version + 1.
  const uint64_t current =
      config.parameterVersion ? config.parameterVersion(config.server) + 1 : 0;
  if (current != 0 && uploaded == current)
    return slot;
  ctx.upload(slot, host, bytes);
  uploaded = current;
  return slot;
}

/// Training: whether this run evaluates (forward only: the backward ops, whose
/// pushes the server would discard, are skipped). False without a server.
inline bool stageEvaluating(const HpsStageConfig &config) {
  const float *mode =
      config.lookupParameter
          ? config.lookupParameter(config.server, HPS_TRAINING_MODE_PARAMETER)
          : nullptr;
  return mode && *mode == 0.0f;
}

/// Host staging for parameter-server traffic of GPU stages.
struct ServerStaging {
  std::vector<int64_t> ids;
  std::vector<float> values;
};

/// Training: pulls the rows of `count` ids (i64, backend memory) of sparse
/// table `table` into `rows` (count x dim floats, backend memory).
inline void stagePullRows(backend::Context &ctx, const HpsStageConfig &config,
                          const char *table, const void *ids, size_t count,
                          size_t dim, void *rows, ServerStaging &staging) {
  if (!config.pullRows)
    throw Error(std::string("the parameter server cannot serve rows of '") +
                table + "' (is this a training run?)");
  const int64_t *hostIds = static_cast<const int64_t *>(ids);
  float *hostRows = static_cast<float *>(rows);
  if (!backend::kHostMemory && config.pullRowsByDeviceIds &&
      config.rowsOnDevice && config.rowsOnDevice(config.server, table)) {
    // The server reads the ids and writes `rows` on a stream of its own:
    // the stage's kernels are done with both first.
    ctx.synchronize();
    serverCall("pulling rows of table '" + std::string(table) + "'",
               [&](char *error, size_t bytes) {
                 return config.pullRowsByDeviceIds(
                     config.server, table, static_cast<const int64_t *>(ids),
                     count, static_cast<float *>(rows), error, bytes);
               });
    return;
  }
  if (!backend::kHostMemory) {
    // The download also waits for the stage's earlier kernels, so `rows`
    // is free to be written.
    staging.ids.resize(count);
    ctx.download(staging.ids.data(), ids, count * sizeof(int64_t));
    hostIds = staging.ids.data();
    if (config.rowsOnDevice && config.pullRowsToDevice &&
        config.rowsOnDevice(config.server, table)) {
      serverCall("pulling rows of table '" + std::string(table) + "'",
                 [&](char *error, size_t bytes) {
                   return config.pullRowsToDevice(
                       config.server, table, hostIds, count,
                       static_cast<float *>(rows), error, bytes);
                 });
      return;
    }
    staging.values.resize(count * dim);
    hostRows = staging.values.data();
  }
  serverCall("pulling rows of table '" + std::string(table) + "'",
             [&](char *error, size_t bytes) {
               return config.pullRows(config.server, table, hostIds, count,
                                      hostRows, error, bytes);
             });
  if (!backend::kHostMemory)
    ctx.upload(rows, hostRows, count * dim * sizeof(float));
}

/// Training: pushes the gradients of `count` rows of `table`.
inline void stagePushRows(backend::Context &ctx, const HpsStageConfig &config,
                          const char *table, const void *ids, size_t count,
                          size_t dim, const void *gradients,
                          ServerStaging &staging) {
  if (!config.pushRows)
    throw Error(std::string("the parameter server cannot take gradients of '") +
                table + "' (is this a training run?)");
  const int64_t *hostIds = static_cast<const int64_t *>(ids);
  const float *hostGrads = static_cast<const float *>(gradients);
  if (!backend::kHostMemory) {
    // The download also waits for the stage's earlier kernels, so the
    // gradients are written.
    staging.ids.resize(count);
    ctx.download(staging.ids.data(), ids, count * sizeof(int64_t));
    hostIds = staging.ids.data();
    if (config.rowsOnDevice && config.pushRowsFromDevice &&
        config.rowsOnDevice(config.server, table)) {
      serverCall("pushing gradients of table '" + std::string(table) + "'",
                 [&](char *error, size_t bytes) {
                   return config.pushRowsFromDevice(
                       config.server, table, hostIds, count,
                       static_cast<const float *>(gradients), error, bytes);
                 });
      return;
    }
    staging.values.resize(count * dim);
    ctx.download(staging.values.data(), gradients, count * dim * sizeof(float));
    hostGrads = staging.values.data();
  }
  serverCall("pushing gradients of table '" + std::string(table) + "'",
             [&](char *error, size_t bytes) {
               return config.pushRows(config.server, table, hostIds, count,
                                      hostGrads, error, bytes);
             });
}

/// Training: pushes the gradient (`count` floats) of dense parameter `name`.
inline void stagePushDense(backend::Context &ctx, const HpsStageConfig &config,
                           const char *name, const void *gradient, size_t count,
                           ServerStaging &staging) {
  if (!config.pushDense)
    throw Error(std::string("the parameter server cannot take gradients of '") +
                name + "' (is this a training run?)");
  const float *host = static_cast<const float *>(gradient);
  if (!backend::kHostMemory && config.pushDenseFromDevice) {
    // The server copies it on its own stream: the kernels writing it first.
    ctx.synchronize();
    serverCall("pushing the gradient of '" + std::string(name) + "'",
               [&](char *error, size_t bytes) {
                 return config.pushDenseFromDevice(
                     config.server, name, static_cast<const float *>(gradient),
                     count, error, bytes);
               });
    return;
  }
  if (!backend::kHostMemory) {
    staging.values.resize(count);
    ctx.download(staging.values.data(), gradient, count * sizeof(float));
    host = staging.values.data();
  }
  serverCall("pushing the gradient of '" + std::string(name) + "'",
             [&](char *error, size_t bytes) {
               return config.pushDense(config.server, name, host, count, error,
                                       bytes);
             });
}

/// A stage input: the caller's buffer itself on host backends (kernels only
/// read their operands), uploaded into its arena `slot` on a GPU.
inline const char *stageInput(backend::Context &ctx, const void *input,
                              char *slot, size_t bytes) {
  if (backend::kHostMemory)
    return static_cast<const char *>(input);
  ctx.upload(slot, input, bytes);
  return slot;
}

/// Where a kernel writes a tensor the stage sends: the caller's output
/// buffer on host backends, its arena `slot` on a GPU...
inline char *stageOutput(void *output, char *slot) {
  return backend::kHostMemory ? static_cast<char *>(output) : slot;
}

/// ...from which a GPU copies it out once computed.
inline void finishOutput(backend::Context &ctx, void *output, const char *value,
                         size_t bytes) {
  if (!backend::kHostMemory)
    ctx.download(output, value, bytes);
}

/// Rethrows the exception being handled, naming the ONNX node whose op
/// raised it (the generated code keeps the node of the op it is at, or
/// null), so a failed run points at the user's model, not at a kernel.
[[noreturn]] inline void rethrowAtNode(const char *node,
                                       const std::exception &error) {
  if (!node)
    throw;
  throw Error(std::string("node '") + node + "': " + error.what());
}

/// Runs `body`, turning any exception into a message in `error`.
template <typename F> bool guarded(char *error, size_t errorBytes, F &&body) {
  auto report = [&](const char *what) {
    if (error && errorBytes) {
      std::strncpy(error, what, errorBytes - 1);
      error[errorBytes - 1] = '\0';
    }
  };
  try {
    body();
    return true;
  } catch (const std::exception &e) {
    report(e.what());
  } catch (...) {
    report("unknown error");
  }
  return false;
}

} // namespace heterps::rt::stage

/// The C entry points of StageABI.h for the generated class `StageClass`,
/// whose std::array members kInputBytes and kOutputBytes list the bytes of
/// its buffers.
#define HPS_DEFINE_STAGE_ENTRY_POINTS(StageClass, description)                 \
  extern "C" {                                                                 \
  int hps_stage_abi_version(void) { return HPS_STAGE_ABI_VERSION; }            \
  const char *hps_stage_describe(void) { return description; }                 \
  void hps_stage_buffers(size_t *inputCount, const uint64_t **inputBytes,      \
                         size_t *outputCount, const uint64_t **outputBytes) {  \
    *inputCount = StageClass::kInputBytes.size();                              \
    *inputBytes = StageClass::kInputBytes.data();                              \
    *outputCount = StageClass::kOutputBytes.size();                            \
    *outputBytes = StageClass::kOutputBytes.data();                            \
  }                                                                            \
  void *hps_stage_create(const HpsStageConfig *config, char *error,            \
                         size_t errorBytes) {                                  \
    StageClass *stage = nullptr;                                               \
    heterps::rt::stage::guarded(error, errorBytes,                             \
                                [&] { stage = new StageClass(*config); });     \
    return stage;                                                              \
  }                                                                            \
  int hps_stage_run(void *stage, const void *const *inputs,                    \
                    void *const *outputs, char *error, size_t errorBytes) {    \
    return heterps::rt::stage::guarded(                                        \
               error, errorBytes,                                              \
               [&] {                                                           \
                 static_cast<StageClass *>(stage)->run(inputs, outputs);       \
               })                                                              \
               ? 0                                                             \
               : 1;                                                            \
  }                                                                            \
  void hps_stage_destroy(void *stage) {                                        \
    delete static_cast<StageClass *>(stage);                                   \
  }                                                                            \
  }

#endif // HETERPS_RUNTIME_STAGESUPPORT_H
