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

#include "heterps/Runtime/StageABI.h"
#include "heterps/Runtime/Types.h"

#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <vector>

#if defined(__CUDACC__)
#include "heterps/Runtime/GpuKernels.h"
namespace backend = heterps::rt::gpu;
#else
#include "heterps/Runtime/CpuKernels.h"
namespace backend = heterps::rt::cpu;
#endif

namespace heterps::rt::stage {

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

/// The C entry points of StageABI.h for the generated class `StageClass`.
#define HPS_DEFINE_STAGE_ENTRY_POINTS(StageClass, description)                 \
  extern "C" {                                                                 \
  int hps_stage_abi_version(void) { return HPS_STAGE_ABI_VERSION; }            \
  const char *hps_stage_describe(void) { return description; }                 \
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
