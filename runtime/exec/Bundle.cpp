//===- Bundle.cpp - Reading and checking a bundle -------------------------===//

#include "heterps/Runtime/Bundle.h"

#include "SharedObject.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heterps::rt {
namespace {

using json = nlohmann::json;

/// Reads fields of one manifest object, naming the JSON path on error.
class Reader {
public:
  Reader(const json &value, std::string where)
      : value(value), where(std::move(where)) {
    if (!value.is_object())
      fail("is not an object");
  }
  [[noreturn]] void fail(const std::string &what) const {
    throw Error("manifest.json: " + where + " " + what);
  }
  const json &field(const char *name) const {
    auto it = value.find(name);
    if (it == value.end())
      fail(std::string("has no '") + name + "'");
    return *it;
  }
  bool has(const char *name) const { return value.contains(name); }
  std::string string(const char *name) const {
    const json &v = field(name);
    if (!v.is_string())
      fail(std::string("'") + name + "' is not a string");
    return v.get<std::string>();
  }
  int64_t integer(const char *name) const {
    const json &v = field(name);
    if (!v.is_number_integer())
      fail(std::string("'") + name + "' is not an integer");
    return v.get<int64_t>();
  }
  /// A finite number (integer or not), or `fallback` when absent.
  double number(const char *name, std::optional<double> fallback) const {
    if (!has(name)) {
      if (!fallback)
        field(name); // reports the missing field
      return *fallback;
    }
    const json &v = field(name);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(std::string("'") + name + "' is not a finite number");
    return v.get<double>();
  }
  bool boolean(const char *name, bool fallback) const {
    if (!has(name))
      return fallback;
    const json &v = field(name);
    if (!v.is_boolean())
      fail(std::string("'") + name + "' is not a boolean");
    return v.get<bool>();
  }
  const json &array(const char *name) const {
    const json &v = field(name);
    if (!v.is_array())
      fail(std::string("'") + name + "' is not an array");
    return v;
  }
  std::string at(const char *name, size_t i) const {
    return (where == kTopLevel ? "" : where + ".") + name + "[" +
           std::to_string(i) + "]";
  }
  static constexpr const char *kTopLevel = "the top level";
  void tensor(TensorSpec &spec) const {
    spec.name = string("name");
    typeAndShape(spec);
    spec.batched = boolean("batched", false);
    if (spec.batched && spec.shape.empty())
      fail("is batched but has no dims (the batch is dim 0)");
  }
  void typeAndShape(TensorSpec &spec) const {
    try {
      spec.dtype = parseDType(string("dtype"));
    } catch (const Error &error) {
      fail(error.what());
    }
    // Extents whose product (in bytes) fits 63 bits: every size computed
    // from them is exact.
    uint64_t bytes = dtypeSize(spec.dtype);
    for (const json &extent : array("shape")) {
      if (!extent.is_number_integer() || extent.get<int64_t>() < 0)
        fail("has a bad extent in 'shape'");
      const int64_t value = extent.get<int64_t>();
      if (__builtin_mul_overflow(bytes, uint64_t(value), &bytes) ||
          bytes > uint64_t(INT64_MAX))
        fail((spec.name.empty() ? "" : "('" + spec.name + "') ") +
             "has a shape too large to hold (over 2^63 bytes)");
      spec.shape.push_back(value);
    }
  }
  /// A non-negative integer field that fits an int (counts, indices).
  int count(const char *name) const {
    const int64_t value = integer(name);
    if (value < 0 || value > INT32_MAX)
      fail(std::string("'") + name + "' is out of range");
    return static_cast<int>(value);
  }
  /// A non-negative byte offset.
  size_t offset(const char *name) const {
    const int64_t value = integer(name);
    if (value < 0)
      fail(std::string("'") + name + "' is negative");
    return static_cast<size_t>(value);
  }

private:
  const json &value;
  std::string where;
};

/// Index of the entry called `name` in `specs`, or -1.
template <typename Spec>
int indexOf(const std::vector<Spec> &specs, const std::string &name) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name)
      return static_cast<int>(i);
  return -1;
}

/// What a stage and the pass-key program share: name, device class and
/// libraries.
void parseProgram(const Reader &r, StageSpec &spec) {
  spec.name = r.string("name");
  spec.device = r.string("device");
  spec.gpu = r.string("kind") == "gpu";
  const json &libraries = r.field("libraries");
  if (!libraries.is_object() || !libraries.contains("cpu"))
    r.fail("has no CPU library in 'libraries'");
  for (auto &[kind, file] : libraries.items()) {
    if (!file.is_string())
      r.fail("has a library that is not a file name");
    spec.libraries[kind] = file.get<std::string>();
  }
  spec.peakMemoryBytes =
      r.has("peak_memory_bytes") ? r.integer("peak_memory_bytes") : 0;
}

/// The manifest's "pass_keys" section: the program, or why there is none.
PassKeysSpec parsePassKeys(const json &value,
                           const std::vector<InputSpec> &inputs,
                           const TrainingSpec &training) {
  Reader r(value, "pass_keys");
  PassKeysSpec spec;
  if (r.has("unavailable")) {
    spec.unavailable = r.string("unavailable");
    return spec;
  }
  spec.program.index = -1;
  parseProgram(r, spec.program);
  if (spec.program.gpu)
    r.fail("runs on a GPU; the pass-key program runs on the host");
  const json &names = r.array("inputs");
  for (size_t i = 0; i < names.size(); ++i) {
    int index = names[i].is_string()
                    ? indexOf(inputs, names[i].get<std::string>())
                    : -1;
    if (index < 0)
      r.fail("names an unknown input " + names[i].dump());
    spec.inputs.push_back(index);
  }
  const json &outputs = r.array("outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    Reader output(outputs[i], r.at("outputs", i));
    TensorSpec ids;
    ids.name = output.string("table");
    output.typeAndShape(ids);
    if (ids.dtype != DType::I64 && ids.dtype != DType::I32)
      output.fail(std::string("holds ") + dtypeName(ids.dtype) +
                  "; ids are i64 or i32");
    if (indexOf(training.tables, ids.name) < 0)
      output.fail("names table '" + ids.name +
                  "', which the training section does not list");
    spec.tables.push_back(ids.name);
    spec.outputs.push_back(std::move(ids));
  }
  return spec;
}

OptimizerSpec parseOptimizer(const Reader &r) {
  OptimizerSpec spec;
  spec.kind = r.string("kind");
  if (spec.kind != "sgd" && spec.kind != "adam" && spec.kind != "adagrad")
    r.fail("has 'kind' \"" + spec.kind +
           "\"; the parameter server has sgd, adam and adagrad");
  auto value = [&](const char *name, float fallback) {
    return static_cast<float>(r.number(name, fallback));
  };
  spec.learningRate = static_cast<float>(r.number("learning_rate", {}));
  spec.momentum = value("momentum", spec.momentum);
  spec.beta1 = value("beta1", spec.beta1);
  spec.beta2 = value("beta2", spec.beta2);
  spec.epsilon = value("epsilon", spec.epsilon);
  spec.initialAccumulator =
      value("initial_accumulator", spec.initialAccumulator);
  // The ranges the parameter server accepts, checked here so that a bad
  // bundle is reported against its manifest when it is opened.
  if (spec.learningRate < 0)
    r.fail("has a negative 'learning_rate'");
  if (spec.kind == "sgd" && !(spec.momentum >= 0 && spec.momentum < 1))
    r.fail("has 'momentum' outside [0, 1)");
  if (spec.kind == "adam") {
    if (!(spec.beta1 >= 0 && spec.beta1 < 1) ||
        !(spec.beta2 >= 0 && spec.beta2 < 1))
      r.fail("has 'beta1' or 'beta2' outside [0, 1)");
    if (!(spec.epsilon > 0))
      r.fail("has 'epsilon' <= 0 (Adam divides by it)");
  }
  if (spec.kind == "adagrad") {
    if (spec.initialAccumulator < 0 || spec.epsilon < 0)
      r.fail("has a negative 'initial_accumulator' or 'epsilon'");
    if (spec.initialAccumulator == 0 && spec.epsilon == 0)
      r.fail("has 'epsilon' and 'initial_accumulator' both 0 (Adagrad "
             "divides by their sum on the first update)");
  }
  return spec;
}

/// The "training" section; names are checked against the bundle's inputs
/// and outputs (weights.bin offsets once the file is mapped).
TrainingSpec parseTraining(const json &value,
                           const std::vector<InputSpec> &inputs,
                           const std::vector<OutputSpec> &outputs) {
  Reader r(value, "training");
  TrainingSpec spec;
  spec.loss = r.string("loss");
  if (spec.loss != "bce" && spec.loss != "softmax_ce" && spec.loss != "mse")
    r.fail("has 'loss' \"" + spec.loss +
           "\"; the runtime knows bce, softmax_ce and mse");

  spec.label = r.string("label");
  spec.labelInput = indexOf(inputs, spec.label);
  if (spec.labelInput < 0)
    r.fail("'label' names \"" + spec.label + "\", which is not an input");
  if (!inputs[spec.labelInput].batched)
    r.fail("'label' names \"" + spec.label +
           "\", which is not a batched input (one label per sample)");

  spec.prediction = r.string("prediction");
  spec.predictionOutput = indexOf(outputs, spec.prediction);
  if (spec.predictionOutput < 0)
    r.fail("'prediction' names \"" + spec.prediction +
           "\", which is not an output");
  if (!outputs[spec.predictionOutput].batched)
    r.fail("'prediction' names \"" + spec.prediction +
           "\", which is not a batched output");

  spec.lossOutput = r.string("loss_output");
  spec.lossOutputIndex = indexOf(outputs, spec.lossOutput);
  if (spec.lossOutputIndex < 0)
    r.fail("'loss_output' names \"" + spec.lossOutput +
           "\", which is not an output");
  const OutputSpec &loss = outputs[spec.lossOutputIndex];
  if (!loss.batched || loss.dtype != DType::F32 || loss.shape.empty() ||
      numElements(loss.shape) != loss.shape[0])
    r.fail("'loss_output' names \"" + spec.lossOutput +
           "\", which is not a batched f32 output of one value per sample");

  spec.optimizer =
      parseOptimizer(Reader(r.field("optimizer"), "training.optimizer"));

  std::set<std::string> names;
  const json &parameters = r.array("parameters");
  for (size_t i = 0; i < parameters.size(); ++i) {
    Reader p(parameters[i], r.at("parameters", i));
    TrainableParameter parameter;
    parameter.name = p.string("name");
    if (parameter.name.empty() || !names.insert(parameter.name).second)
      p.fail("has an empty or repeated 'name' \"" + parameter.name + "\"");
    try {
      parameter.dtype = parseDType(p.string("dtype"));
    } catch (const Error &error) {
      p.fail(error.what());
    }
    if (parameter.dtype != DType::F32)
      p.fail("has dtype " + std::string(dtypeName(parameter.dtype)) +
             "; trainable parameters are f32");
    for (const json &extent : p.array("shape")) {
      if (!extent.is_number_integer() || extent.get<int64_t>() < 0)
        p.fail("has a bad extent in 'shape'");
      parameter.shape.push_back(extent.get<int64_t>());
    }
    int64_t offset = p.integer("offset");
    if (offset < 0)
      p.fail("has a negative 'offset'");
    parameter.offset = static_cast<size_t>(offset);
    // Optional: bundles from before batch statistics have no "update".
    std::string update = p.has("update") ? p.string("update") : "optimizer";
    if (update == "moving-average") {
      parameter.update = ParameterUpdate::MovingAverage;
      double momentum = p.number("momentum", std::nullopt);
      if (!(momentum >= 0.0 && momentum <= 1.0))
        p.fail("has 'momentum' " + std::to_string(momentum) +
               " outside [0, 1]");
      parameter.momentum = static_cast<float>(momentum);
    } else if (update == "training-flag") {
      parameter.update = ParameterUpdate::TrainingFlag;
      if (numElements(parameter.shape) != 1)
        p.fail("is a training flag but has " +
               std::to_string(numElements(parameter.shape)) +
               " elements; it must have one");
    } else if (update != "optimizer") {
      p.fail("has 'update' \"" + update +
             "\"; the runtime knows optimizer, moving-average and "
             "training-flag");
    }
    spec.parameters.push_back(std::move(parameter));
  }

  names.clear();
  const json &tables = r.array("tables");
  for (size_t i = 0; i < tables.size(); ++i) {
    Reader t(tables[i], r.at("tables", i));
    TrainableTable table;
    table.name = t.string("name");
    if (table.name.empty() || !names.insert(table.name).second)
      t.fail("has an empty or repeated 'name' \"" + table.name + "\"");
    table.rows = t.integer("rows");
    table.dim = t.integer("dim");
    if (table.rows < 1 || table.dim < 1)
      t.fail("needs 'rows' >= 1 and 'dim' >= 1");
    spec.tables.push_back(std::move(table));
  }
  return spec;
}

} // namespace

Bundle::Bundle(const std::string &directory) : dir(directory) {
  std::ifstream file(path("manifest.json"));
  if (!file)
    throw Error("'" + directory + "' is not a bundle: cannot read " +
                path("manifest.json") + ": " + std::strerror(errno));
  json manifest;
  try {
    manifest = json::parse(file);
  } catch (const json::exception &error) {
    throw Error(path("manifest.json") + " is not valid JSON: " + error.what());
  }
  Reader root(manifest, Reader::kTopLevel);
  if (!root.has("format") || root.string("format") != "heterps-bundle")
    root.fail("is not a heterps bundle manifest (format)");
  if (root.integer("version") != 1)
    root.fail("has version " + std::to_string(root.integer("version")) +
              "; this runtime reads version 1");
  batchSize = root.has("batch") ? root.integer("batch") : 0;

  std::map<std::string, int> channelIndex;
  const json &channels = root.array("channels");
  for (size_t i = 0; i < channels.size(); ++i) {
    Reader r(channels[i], root.at("channels", i));
    ChannelSpec spec;
    r.tensor(spec);
    // A stage index, or -1: the caller.
    const int64_t from = r.integer("from"), to = r.integer("to");
    if (from < -1 || from > INT32_MAX || to < -1 || to > INT32_MAX)
      r.fail("names a stage out of range in 'from' or 'to'");
    spec.from = static_cast<int>(from);
    spec.to = static_cast<int>(to);
    channelIndex[spec.name] = static_cast<int>(i);
    channelSpecs.push_back(std::move(spec));
  }
  auto channel = [&](const Reader &r, const json &name) {
    if (!name.is_string() || !channelIndex.count(name.get<std::string>()))
      r.fail("names an unknown channel " + name.dump());
    return channelIndex[name.get<std::string>()];
  };

  const json &stages = root.array("stages");
  for (size_t i = 0; i < stages.size(); ++i) {
    Reader r(stages[i], root.at("stages", i));
    StageSpec spec;
    spec.index = static_cast<int>(i);
    parseProgram(r, spec);
    // A thread per replica.
    const int64_t replicas = r.integer("replicas");
    if (replicas < 1 || replicas > kMostReplicas)
      r.fail("has " + std::to_string(replicas) + " replicas (1 to " +
             std::to_string(kMostReplicas) + ")");
    spec.replicas = static_cast<int>(replicas);
    for (const json &name : r.array("inputs"))
      spec.inputs.push_back(channel(r, name));
    for (const json &name : r.array("outputs"))
      spec.outputs.push_back(channel(r, name));
    for (const json &name : r.array("tables")) {
      if (!name.is_string())
        r.fail("has a table name that is not a string");
      spec.tables.push_back(name.get<std::string>());
    }
    stageSpecs.push_back(std::move(spec));
  }
  // Channels go forward only: a frame visits the stages in order.
  for (const ChannelSpec &spec : channelSpecs) {
    int stageCount = static_cast<int>(stageSpecs.size());
    if (spec.from >= stageCount || spec.to >= stageCount ||
        (spec.from >= 0 && spec.to >= 0 && spec.from >= spec.to))
      throw Error("manifest.json: channel '" + spec.name +
                  "' does not run forward through the pipeline");
  }

  const json &inputs = root.array("inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    Reader r(inputs[i], root.at("inputs", i));
    InputSpec spec;
    r.tensor(spec);
    for (const json &name : r.array("channels"))
      spec.channels.push_back(channel(r, name));
    inputSpecs.push_back(std::move(spec));
  }
  const json &outputs = root.array("outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    Reader r(outputs[i], root.at("outputs", i));
    OutputSpec spec;
    r.tensor(spec);
    if (r.has("channel")) {
      spec.source = OutputSpec::Channel;
      spec.index = channel(r, r.field("channel"));
    } else if (r.has("input")) {
      spec.source = OutputSpec::Input;
      const int64_t input = r.integer("input");
      if (input < 0 || input >= static_cast<int64_t>(inputSpecs.size()))
        r.fail("names an unknown input");
      spec.index = static_cast<int>(input);
    } else {
      spec.source = OutputSpec::Constant;
      spec.offset = r.offset("constant_offset");
    }
    spec.hidden = r.boolean("hidden", false);
    if (r.has("mixes_samples"))
      spec.mixesSamples = r.string("mixes_samples");
    if (r.has("extent")) {
      Reader extent(r.field("extent"), root.at("outputs", i) + ".extent");
      spec.extentOutput = extent.count("output");
      spec.extentAxis = extent.count("axis");
      if (spec.extentAxis < 0 ||
          spec.extentAxis >= static_cast<int>(spec.shape.size()))
        extent.fail("names an axis the output does not have");
    }
    outputSpecs.push_back(std::move(spec));
  }
  // Hidden outputs come after the model's, and extents name hidden I64
  // scalars.
  modelOutputs = outputSpecs.size();
  for (size_t i = 0; i < outputSpecs.size(); ++i) {
    const OutputSpec &spec = outputSpecs[i];
    if (spec.hidden && modelOutputs == outputSpecs.size())
      modelOutputs = i;
    if (!spec.hidden && modelOutputs != outputSpecs.size())
      throw Error("manifest.json: output '" + spec.name +
                  "' comes after a hidden output");
    if (spec.extentOutput < 0)
      continue;
    size_t count = static_cast<size_t>(spec.extentOutput);
    if (count >= outputSpecs.size() || !outputSpecs[count].hidden ||
        outputSpecs[count].dtype != DType::I64 ||
        numElements(outputSpecs[count].shape) != 1 || spec.batched)
      throw Error("manifest.json: output '" + spec.name +
                  "' names an extent that is not a hidden i64 scalar output "
                  "(or is batched)");
  }
  for (const json &table : root.array("tables")) {
    Reader r(table, "tables[" + std::to_string(tableSpecs.size()) + "]");
    TableSpec spec;
    spec.name = r.string("name");
    r.typeAndShape(spec);
    spec.offset = r.offset("offset");
    tableSpecs.push_back(std::move(spec));
  }
  checkDataFlow();

  if (root.has("training"))
    trainingSpec =
        parseTraining(root.field("training"), inputSpecs, outputSpecs);
  if (root.has("pass_keys")) {
    if (!trainingSpec)
      root.fail("has a 'pass_keys' section but no 'training' section");
    passKeysSpec =
        parsePassKeys(root.field("pass_keys"), inputSpecs, *trainingSpec);
  }

  // Of the plan, only what the runtime acts on; the rest is for tools.
  if (root.has("plan")) {
    Reader plan(root.field("plan"), "plan");
    if (plan.has("pass_memory_bytes")) {
      plannedPassMemory = plan.integer("pass_memory_bytes");
      if (*plannedPassMemory < 0)
        plan.fail("'pass_memory_bytes' is negative");
    }
    if (plan.has("pass_steps")) {
      planStep.passSteps = plan.integer("pass_steps");
      if (planStep.passSteps < 1)
        plan.fail("'pass_steps' must be at least 1");
    }
    if (plan.has("sparse_staleness")) {
      const int64_t staleness = plan.integer("sparse_staleness");
      if (staleness < 0 || staleness > 1)
        plan.fail("'sparse_staleness' must be 0 or 1");
      planStep.sparseStaleness = static_cast<int>(staleness);
    }
    if (plan.has("micro_batches")) {
      // The compiler's count is 32 bits wide; a step of more would overflow
      // its samples.
      planStep.microBatches = plan.integer("micro_batches");
      if (planStep.microBatches < 1 || planStep.microBatches > UINT32_MAX)
        plan.fail("'micro_batches' must be in [1, 4294967295]");
    }
    if (plan.has("pass_cache_device")) {
      const std::string device = plan.string("pass_cache_device");
      if (device != "host" && device != "gpu")
        plan.fail("'pass_cache_device' must be \"host\" or \"gpu\"");
      planStep.passCacheOnGpu = device == "gpu";
    }
  }

  // Libraries cut short would kill the process when loaded; a missing one
  // is reported by the stage that needs it (a GPU build may be absent).
  auto checkLibraries = [&](const StageSpec &program) {
    for (const auto &[kind, file] : program.libraries) {
      struct stat status {};
      if (::stat(path(file).c_str(), &status) == 0 && S_ISREG(status.st_mode))
        checkSharedObjectWhole(path(file));
    }
  };
  for (const StageSpec &stage : stageSpecs)
    checkLibraries(stage);
  if (passKeysSpec && passKeysSpec->unavailable.empty())
    checkLibraries(passKeysSpec->program);

  // weights.bin, mapped read-only: stages on the CPU read it in place.
  Reader weights(root.field("weights"), "weights");
  std::string weightsPath = path(weights.string("file"));
  weightsSize = weights.integer("bytes");
  int fd = ::open(weightsPath.c_str(), O_RDONLY);
  if (fd < 0)
    throw Error("cannot open " + weightsPath + ": " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0 ||
      static_cast<size_t>(info.st_size) != weightsSize) {
    ::close(fd);
    throw Error(weightsPath + " holds " + std::to_string(info.st_size) +
                " bytes but the manifest says " + std::to_string(weightsSize) +
                ": the bundle is damaged");
  }
  if (weightsSize > 0) {
    mapping = ::mmap(nullptr, weightsSize, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      mapping = nullptr;
      ::close(fd);
      throw Error("cannot map " + weightsPath + ": " + std::strerror(errno));
    }
    mappingSize = weightsSize;
    weightsData = static_cast<const char *>(mapping);
  }
  ::close(fd);
  auto outside = [&](size_t offset, size_t bytes) {
    return offset > weightsSize || bytes > weightsSize - offset;
  };
  for (const TableSpec &table : tableSpecs)
    if (outside(table.offset, table.bytes()))
      throw Error("manifest.json: table '" + table.name +
                  "' lies outside weights.bin");
  for (const OutputSpec &output : outputSpecs)
    if (output.source == OutputSpec::Constant &&
        outside(output.offset, output.bytes()))
      throw Error("manifest.json: constant output '" + output.name +
                  "' lies outside weights.bin");
  if (trainingSpec)
    for (size_t i = 0; i < trainingSpec->parameters.size(); ++i) {
      const TrainableParameter &parameter = trainingSpec->parameters[i];
      if (parameter.offset > weightsSize ||
          parameter.bytes() > weightsSize - parameter.offset)
        throw Error("manifest.json: training.parameters[" + std::to_string(i) +
                    "] ('" + parameter.name + "', " +
                    std::to_string(parameter.bytes()) + " bytes at offset " +
                    std::to_string(parameter.offset) +
                    ") lies outside weights.bin (" +
                    std::to_string(weightsSize) + " bytes)");
    }
}

Bundle::~Bundle() {
  if (mapping)
    ::munmap(mapping, mappingSize);
}

void Bundle::checkDataFlow() const {
  auto fail = [](const std::string &what) {
    throw Error("manifest.json: " + what);
  };
  auto checkBatch = [&](const TensorSpec &spec, const char *kind) {
    if (spec.batched && batchSize > 0 && spec.shape[0] != batchSize)
      fail(std::string(kind) + " '" + spec.name + "' is batched but dim 0 is " +
           std::to_string(spec.shape[0]) + ", not the batch " +
           std::to_string(batchSize));
  };
  // What a channel carries must fill it exactly: the executor copies one
  // into the other.
  auto checkCarries = [&](const TensorSpec &spec, const char *kind,
                          const ChannelSpec &channel) {
    if (spec.dtype != channel.dtype || spec.bytes() != channel.bytes())
      fail(std::string(kind) + " '" + spec.name + "' (" +
           dtypeName(spec.dtype) + " " + shapeString(spec.shape) +
           ") does not match its channel '" + channel.name + "' (" +
           dtypeName(channel.dtype) + " " + shapeString(channel.shape) + ")");
  };
  std::vector<int> producers(channelSpecs.size(), 0);
  for (const InputSpec &input : inputSpecs) {
    checkBatch(input, "input");
    for (int c : input.channels) {
      const ChannelSpec &channel = channelSpecs[c];
      checkCarries(input, "input", channel);
      if (channel.from != -1)
        fail("channel '" + channel.name + "' is fed by input '" + input.name +
             "' but says it comes from stage " + std::to_string(channel.from));
      ++producers[c];
    }
  }
  for (const OutputSpec &output : outputSpecs) {
    checkBatch(output, "output");
    if (output.source == OutputSpec::Channel)
      checkCarries(output, "output", channelSpecs[output.index]);
  }
  for (const StageSpec &stage : stageSpecs)
    for (int c : stage.outputs) {
      const ChannelSpec &channel = channelSpecs[c];
      if (channel.from != stage.index)
        fail("stage '" + stage.name + "' writes channel '" + channel.name +
             "', which says it comes from " +
             (channel.from < 0 ? std::string("the caller")
                               : "stage " + std::to_string(channel.from)));
      ++producers[c];
    }
  for (size_t c = 0; c < channelSpecs.size(); ++c)
    if (producers[c] != 1)
      fail("channel '" + channelSpecs[c].name + "' has " +
           std::to_string(producers[c]) +
           " producers (inputs and stage outputs); it needs one");
}

std::string Bundle::path(const std::string &file) const {
  return dir + "/" + file;
}

void trimToExtent(const OutputSpec &spec, int64_t count, HostTensor &tensor) {
  int64_t capacity = spec.shape[spec.extentAxis];
  if (count < 0 || count > capacity)
    throw Error("output '" + spec.name + "': its data-dependent extent " +
                std::to_string(count) + " is outside [0, " +
                std::to_string(capacity) + "]");
  // Rows of `outer` blocks: each keeps its first count * inner elements.
  size_t element = dtypeSize(spec.dtype);
  int64_t outer = numElements(
      Shape(spec.shape.begin(), spec.shape.begin() + spec.extentAxis));
  int64_t inner = numElements(
      Shape(spec.shape.begin() + spec.extentAxis + 1, spec.shape.end()));
  size_t keep = size_t(count * inner) * element;
  size_t stride = size_t(capacity * inner) * element;
  for (int64_t i = 0; i < outer; ++i)
    std::memmove(tensor.data.data() + i * keep, tensor.data.data() + i * stride,
                 keep);
  tensor.shape = spec.shape;
  tensor.shape[spec.extentAxis] = count;
  tensor.data.resize(size_t(outer) * keep);
}

void checkInput(const InputSpec &spec, DType dtype, const Shape &shape) {
  Shape expected = spec.shape;
  bool matches = dtype == spec.dtype && shape.size() == expected.size();
  if (matches && spec.batched)
    expected[0] = shape[0];
  if (matches && shape == expected)
    return;
  throw Error("input '" + spec.name + "' must be " + dtypeName(spec.dtype) +
              " " + (spec.batched ? "N x " : "") +
              shapeString(spec.batched
                              ? Shape(spec.shape.begin() + 1, spec.shape.end())
                              : spec.shape) +
              ", got " + dtypeName(dtype) + " " + shapeString(shape));
}

HostTensor readInput(const InputSpec &spec, const std::string &path) {
  requireRegularTensorFile(path);
  char magic[6] = {};
  {
    std::ifstream probe(path, std::ios::binary);
    probe.read(magic, sizeof magic);
  }
  if (std::memcmp(magic, "\x93NUMPY", sizeof magic) != 0) {
    HostTensor tensor = readTensorFile(path);
    checkInput(spec, tensor.dtype, tensor.shape);
    return tensor;
  }
  MappedNpy npy = MappedNpy::open(path);
  try {
    checkInput(spec, npy.dtype, npy.shape);
  } catch (const Error &e) {
    throw Error("'" + path + "': " + e.what());
  }
  HostTensor tensor;
  tensor.dtype = npy.dtype;
  tensor.shape = npy.shape;
  tensor.data.resize(npy.bytes());
  npy.guardedRead(
      [&] { std::memcpy(tensor.data.data(), npy.data(), npy.bytes()); });
  return tensor;
}

} // namespace heterps::rt
