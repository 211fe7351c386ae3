//===- StageABI.h - The C interface of a compiled stage ---------*- C++ -*-===//
//
// A stage program (stage_K.cpp / stage_K.cu in a bundle) is built into a
// shared object exporting these C functions; the executor dlopens it. C
// linkage keeps the boundary stable across compilers (g++ and nvcc) and
// lets later language bindings load stages too.
//
// Tensors at the boundary are dense row-major host buffers whose shapes and
// types the manifest lists, in the order of the stage's `inputs` and
// `outputs` channels.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_STAGEABI_H
#define HETERPS_RUNTIME_STAGEABI_H

#include <cstddef>
#include <cstdint>

#define HPS_STAGE_ABI_VERSION 6
/// The oldest stage ABI this runtime loads: each version only appends to
/// HpsStageConfig (and ABI 6 adds hps_stage_buffers).
#define HPS_STAGE_ABI_OLDEST 2

extern "C" {

/// What the executor hands a stage when creating it.
struct HpsStageConfig {
  /// The bundle's weights file, mapped into memory (64-byte aligned
  /// offsets); the stage reads its weights and constants from it.
  const void *weights;
  size_t weightsBytes;
  /// Sparse tables served by the parameter server, looked up by name:
  /// returns the [rows, dim] host table or null for an unknown name.
  const void *(*lookupTable)(void *server, const char *name);
  void *server;
  /// Threads of this stage's kernels (<= 0: the backend default).
  int threads;

  // Training bundles (ABI 2). All callbacks may be called from several stage
  // threads at once; they return 0 on success, otherwise non-zero with a
  // message in `error` (at most `errorBytes` including the NUL).

  /// The current value of trainable dense parameter `name` (host floats). It
  /// stays valid for the stage's lifetime and unchanged while a step runs;
  /// the server updates it in place between steps. Null for unknown names.
  /// The reserved name HPS_TRAINING_MODE_PARAMETER is one float: 1 while
  /// training, 0 while evaluating (the stage then skips its backward ops).
  const float *(*lookupParameter)(void *server, const char *name);
  /// Writes the `dim` floats of each id's row of sparse table `table` to
  /// rows[i * dim ...], creating rows on first touch.
  int (*pullRows)(void *server, const char *table, const int64_t *ids,
                  size_t count, float *rows, char *error, size_t errorBytes);
  /// Gradients (count x dim floats) of the rows `ids` of `table`, from one
  /// micro-batch's mean loss.
  int (*pushRows)(void *server, const char *table, const int64_t *ids,
                  size_t count, const float *gradients, char *error,
                  size_t errorBytes);
  /// Gradient (`count` floats) of dense parameter `name` from one
  /// micro-batch's mean loss.
  int (*pushDense)(void *server, const char *name, const float *gradient,
                   size_t count, char *error, size_t errorBytes);

  // GPU stages (ABI 3). Null where the server keeps no rows in GPU memory,
  // and for stages that do not run on a GPU (so for ABI 4 and 5).

  /// Non-zero while the rows of `table` are in this process's GPU memory (a
  /// pass of the pass cache on the GPU): pullRowsToDevice then serves them
  /// without a copy through the host. It does not change during a run.
  int (*rowsOnDevice)(void *server, const char *table);
  /// pullRows with `rows` in the memory of the current CUDA device (ids on
  /// the host); the rows are written when it returns.
  int (*pullRowsToDevice)(void *server, const char *table, const int64_t *ids,
                          size_t count, float *rows, char *error,
                          size_t errorBytes);
  /// Changes whenever a value lookupParameter handed out may have changed
  /// (a step's update, a checkpoint load, a switch between training and
  /// evaluation), so a GPU stage uploads its parameters once per change
  /// instead of on every run. Null: upload on every run.
  uint64_t (*parameterVersion)(void *server);

  // GPU stages (ABI 4). Null where the server cannot take gradients in GPU
  // memory.

  /// pushRows with `gradients` in the memory of the current CUDA device
  /// (ids on the host), while rowsOnDevice(table): they stay in GPU memory
  /// for the step's update. The stage may reuse the buffer once it returns.
  int (*pushRowsFromDevice)(void *server, const char *table, const int64_t *ids,
                            size_t count, const float *gradients, char *error,
                            size_t errorBytes);

  // GPU stages (ABI 5). Null where the server keeps no dense parameters in
  // GPU memory.

  /// Sets *values to dense parameter `name` in the memory of the current
  /// CUDA device, where the server keeps it and runs its optimizer from now
  /// on: it stays at that address and changes only between steps, so the
  /// stage reads it in place. Null where the server serves `name` on the
  /// host only (a training flag): lookupParameter then.
  int (*parameterOnDevice)(void *server, const char *name, const float **values,
                           char *error, size_t errorBytes);
  /// pushDense with `gradient` in the memory of the current CUDA device,
  /// which stays there for the step's update. The stage may reuse the
  /// buffer once it returns.
  int (*pushDenseFromDevice)(void *server, const char *name,
                             const float *gradient, size_t count, char *error,
                             size_t errorBytes);
  /// pullRowsToDevice with `ids` in the memory of the current CUDA device
  /// too (written when called: the stage synchronises first), checked and
  /// looked up there. Set with pullRowsToDevice.
  int (*pullRowsByDeviceIds)(void *server, const char *table,
                             const int64_t *ids, size_t count, float *rows,
                             char *error, size_t errorBytes);
};

/// Served by the training server itself; a model parameter of the same name
/// would shadow it (and its stages would then never skip their backward).
#define HPS_TRAINING_MODE_PARAMETER "hps:training-mode"

/// Error text of a failed call is written to `error` (at most `errorBytes`
/// including the terminating NUL).
int hps_stage_abi_version(void);
/// The stage's name and device class as the compiler saw them.
const char *hps_stage_describe(void);
/// The bytes of each buffer hps_stage_run reads (`inputs`) and writes
/// (`outputs`), in the order of its arrays (ABI 6). The compiler writes the
/// same sizes into the manifest's channels; the runtime checks one against
/// the other before it creates the stage, so a library that does not
/// belong to its manifest is refused instead of reading past a buffer.
void hps_stage_buffers(size_t *inputCount, const uint64_t **inputBytes,
                       size_t *outputCount, const uint64_t **outputBytes);
/// Builds kernels, uploads weights; null on failure.
void *hps_stage_create(const HpsStageConfig *config, char *error,
                       size_t errorBytes);
/// Runs one micro-batch: 0 on success, non-zero on failure.
int hps_stage_run(void *stage, const void *const *inputs, void *const *outputs,
                  char *error, size_t errorBytes);
void hps_stage_destroy(void *stage);
}

#endif // HETERPS_RUNTIME_STAGEABI_H
