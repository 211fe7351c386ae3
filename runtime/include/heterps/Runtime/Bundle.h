//===- Bundle.h - A compiled bundle as the runtime reads it -----*- C++ -*-===//
//
// manifest.json (stages, channels, inputs, outputs, tables and, for training
// bundles, what the parameter server trains), weights.bin mapped read-only,
// and the stage shared objects. Everything is validated when the bundle is
// opened, so a damaged bundle fails with a message naming the file and
// field, never later in the middle of a run.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_BUNDLE_H
#define HETERPS_RUNTIME_BUNDLE_H

#include "heterps/Runtime/Tensor.h"
#include "heterps/Runtime/Types.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace heterps::rt {

struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  bool batched = false; // dim 0 is the compiled batch
  size_t bytes() const { return numElements(shape) * dtypeSize(dtype); }
};

struct ChannelSpec : TensorSpec {
  int from = -1, to = -1; // stage indices; -1 is the caller
};

struct InputSpec : TensorSpec {
  std::vector<int> channels;
};

/// Throws Error naming the input unless a tensor of `dtype` and `shape` may
/// feed it (a batched input takes any number of samples).
void checkInput(const InputSpec &spec, DType dtype, const Shape &shape);

/// Reads input `spec` from a .npy or ONNX TensorProto .pb file. A .npy
/// file's header is checked before its elements are read, so a wrong file
/// is refused without taking its size in memory.
HostTensor readInput(const InputSpec &spec, const std::string &path);

struct OutputSpec : TensorSpec {
  enum Source { Channel, Input, Constant } source = Channel;
  int index = 0;     // channel or input index
  size_t offset = 0; // Constant: offset in weights.bin
  /// A data-dependent extent: `shape` is the capacity along extentAxis, and
  /// output extentOutput (a hidden I64 scalar) holds the valid extent.
  int extentOutput = -1;
  int extentAxis = 0;
  /// Holds another output's extent; not one of the model's outputs.
  bool hidden = false;
  /// Why the output mixes the samples of a batch (--hps-mark-sample-mixing),
  /// so that the model runs whole batches only; empty where it does not.
  std::string mixesSamples;
};

/// Cuts `tensor` (an output of `spec`'s capacity) down to `count` positions
/// along spec.extentAxis; throws Error naming the output when count is out
/// of [0, capacity].
void trimToExtent(const OutputSpec &spec, int64_t count, HostTensor &tensor);

struct StageSpec {
  int index = 0;
  std::string name, device;
  bool gpu = false;
  int replicas = 1;
  std::vector<int> inputs, outputs; // channel indices
  std::vector<std::string> tables;
  std::map<std::string, std::string> libraries; // "cpu" / "gpu" -> file
  size_t peakMemoryBytes = 0;
};

/// A constant table a stage reads from weights.bin (never batched).
struct TableSpec : TensorSpec {
  size_t offset = 0;
};

/// The optimizer the parameter server applies (manifest "training.optimizer").
/// Kept as plain data: the bundle reader does not depend on the server.
struct OptimizerSpec {
  std::string kind; // "sgd", "adam" or "adagrad"
  float learningRate = 0.01f;
  float momentum = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float initialAccumulator = 0.1f;
};

/// How the server changes a dense parameter (manifest "update").
enum class ParameterUpdate {
  /// By the bundle's optimizer, from its gradient (the default).
  Optimizer,
  /// w = momentum * w + (1 - momentum) * pushed value: batch norm's running
  /// statistics, pushed the batch statistics.
  MovingAverage,
  /// Not stored: served as 1 while training and 0 while evaluating (batch
  /// norm's switch between batch and running statistics).
  TrainingFlag,
};

/// A trainable dense parameter: its initial value lies in weights.bin.
struct TrainableParameter {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  size_t offset = 0; // byte offset of the initial value in weights.bin
  ParameterUpdate update = ParameterUpdate::Optimizer;
  float momentum = 0.9f; // MovingAverage only
  size_t bytes() const { return numElements(shape) * dtypeSize(dtype); }
};

/// A sparse table the parameter server trains ([rows, dim], rows created on
/// first touch).
struct TrainableTable {
  std::string name;
  int64_t rows = 0;
  int64_t dim = 0;
};

/// The pass-key program of a training bundle (manifest "pass_keys"): from
/// the bundle inputs of one micro-batch it computes the ids every sparse
/// pull of the stages reads, so that a pass cache (PassCache.h) can load a
/// pass's rows before the stages run.
struct PassKeysSpec {
  /// Why the compiler could not build it (ids computed from pulled or
  /// trained values); empty when `program` is there.
  std::string unavailable;
  /// Its stage-ABI library: inputs and outputs are not channels but the
  /// tensors below, in this order.
  StageSpec program;
  std::vector<int> inputs;         // bundle input indices
  std::vector<TensorSpec> outputs; // ids of one micro-batch
  std::vector<std::string> tables; // the table each output's ids index
};

/// The manifest's "training" section (absent in inference bundles).
struct TrainingSpec {
  /// "bce", "softmax_ce" or "mse".
  std::string loss;
  /// Names and indices of the label input, the prediction output and the
  /// per-sample loss output (batched, one f32 per sample).
  std::string label, prediction, lossOutput;
  int labelInput = -1, predictionOutput = -1, lossOutputIndex = -1;
  OptimizerSpec optimizer;
  std::vector<TrainableParameter> parameters;
  std::vector<TrainableTable> tables;
};

class Bundle {
public:
  /// Reads and checks `directory`; throws Error naming what is wrong.
  explicit Bundle(const std::string &directory);
  ~Bundle();
  Bundle(const Bundle &) = delete;
  Bundle &operator=(const Bundle &) = delete;

  const std::string &directory() const { return dir; }
  /// The bound batch (0 when the model has no batched input).
  int64_t batch() const { return batchSize; }
  const std::vector<InputSpec> &inputs() const { return inputSpecs; }
  /// Every output: the model's, then the hidden extent counts.
  const std::vector<OutputSpec> &outputs() const { return outputSpecs; }
  /// How many of outputs() are the model's (the hidden ones come last).
  size_t modelOutputCount() const { return modelOutputs; }
  const std::vector<ChannelSpec> &channels() const { return channelSpecs; }
  const std::vector<StageSpec> &stages() const { return stageSpecs; }
  const std::vector<TableSpec> &tables() const { return tableSpecs; }
  /// What the parameter server trains; null for an inference bundle.
  const TrainingSpec *training() const {
    return trainingSpec ? &*trainingSpec : nullptr;
  }
  /// The pass-key program section; null when the manifest has none.
  const PassKeysSpec *passKeys() const {
    return passKeysSpec ? &*passKeysSpec : nullptr;
  }
  /// The memory the placement plan gives a pass cache (the manifest's
  /// plan.pass_memory_bytes: what the devices of the stages that pull rows
  /// leave free); empty when the plan names none.
  std::optional<int64_t> plannedPassMemoryBytes() const {
    return plannedPassMemory;
  }
  /// The training step the plan was priced with (docs/Planning.md, "Step
  /// shapes"); training follows it unless told otherwise.
  struct PlannedStep {
    int64_t passSteps = 0;       ///< plan.pass_steps (0: direct).
    int sparseStaleness = 0;     ///< plan.sparse_staleness.
    bool passCacheOnGpu = false; ///< plan.pass_cache_device is "gpu".
    int64_t microBatches = 1;    ///< plan.micro_batches: per step.
  };
  const PlannedStep &plannedStep() const { return planStep; }
  const char *weights() const { return weightsData; }
  size_t weightsBytes() const { return weightsSize; }
  /// Absolute path of a file of the bundle.
  std::string path(const std::string &file) const;

  /// The most replicas a stage may have (a thread each).
  static constexpr int64_t kMostReplicas = 4096;

private:
  /// Every channel comes from one producer (an input or a stage output)
  /// and holds what it carries: an input's or output's dtype and size, the
  /// compiled batch in dim 0 of batched tensors; throws Error naming the
  /// channel.
  void checkDataFlow() const;

  std::string dir;
  int64_t batchSize = 0;
  std::vector<InputSpec> inputSpecs;
  std::vector<OutputSpec> outputSpecs;
  size_t modelOutputs = 0;
  std::vector<ChannelSpec> channelSpecs;
  std::vector<StageSpec> stageSpecs;
  std::vector<TableSpec> tableSpecs;
  std::optional<TrainingSpec> trainingSpec;
  std::optional<PassKeysSpec> passKeysSpec;
  std::optional<int64_t> plannedPassMemory;
  PlannedStep planStep;
  const char *weightsData = nullptr;
  size_t weightsSize = 0;
  void *mapping = nullptr;
  size_t mappingSize = 0;
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_BUNDLE_H
