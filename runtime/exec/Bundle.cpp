//===- Bundle.cpp - Reading and checking a bundle -------------------------===//

#include "heterps/Runtime/Bundle.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
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
    return where + "." + name + "[" + std::to_string(i) + "]";
  }
  void tensor(TensorSpec &spec) const {
    spec.name = string("name");
    try {
      spec.dtype = parseDType(string("dtype"));
    } catch (const Error &error) {
      fail(error.what());
    }
    for (const json &extent : array("shape")) {
      if (!extent.is_number_integer() || extent.get<int64_t>() < 0)
        fail("has a bad extent in 'shape'");
      spec.shape.push_back(extent.get<int64_t>());
    }
    spec.batched = boolean("batched", false);
  }

private:
  const json &value;
  std::string where;
};

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
  Reader root(manifest, "the top level");
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
    spec.from = static_cast<int>(r.integer("from"));
    spec.to = static_cast<int>(r.integer("to"));
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
    spec.name = r.string("name");
    spec.device = r.string("device");
    spec.gpu = r.string("kind") == "gpu";
    spec.replicas = static_cast<int>(r.integer("replicas"));
    if (spec.replicas < 1)
      r.fail("has replicas < 1");
    for (const json &name : r.array("inputs"))
      spec.inputs.push_back(channel(r, name));
    for (const json &name : r.array("outputs"))
      spec.outputs.push_back(channel(r, name));
    for (const json &name : r.array("tables"))
      spec.tables.push_back(name.get<std::string>());
    const json &libraries = r.field("libraries");
    if (!libraries.is_object() || !libraries.contains("cpu"))
      r.fail("has no CPU library in 'libraries'");
    for (auto &[kind, file] : libraries.items())
      spec.libraries[kind] = file.get<std::string>();
    spec.peakMemoryBytes =
        r.has("peak_memory_bytes") ? r.integer("peak_memory_bytes") : 0;
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
      spec.index = static_cast<int>(r.integer("input"));
      if (spec.index < 0 || spec.index >= static_cast<int>(inputSpecs.size()))
        r.fail("names an unknown input");
    } else {
      spec.source = OutputSpec::Constant;
      spec.offset = r.integer("constant_offset");
    }
    outputSpecs.push_back(std::move(spec));
  }
  for (const json &table : root.array("tables")) {
    Reader r(table, "tables[" + std::to_string(tableSpecs.size()) + "]");
    TableSpec spec;
    spec.name = r.string("name");
    spec.dtype = parseDType(r.string("dtype"));
    for (const json &extent : r.array("shape"))
      spec.shape.push_back(extent.get<int64_t>());
    spec.offset = r.integer("offset");
    tableSpecs.push_back(std::move(spec));
  }

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
  for (const TableSpec &table : tableSpecs)
    if (table.offset + numElements(table.shape) * dtypeSize(table.dtype) >
        weightsSize)
      throw Error("manifest.json: table '" + table.name +
                  "' lies outside weights.bin");
  for (const OutputSpec &output : outputSpecs)
    if (output.source == OutputSpec::Constant &&
        output.offset + output.bytes() > weightsSize)
      throw Error("manifest.json: constant output '" + output.name +
                  "' lies outside weights.bin");
}

Bundle::~Bundle() {
  if (mapping)
    ::munmap(mapping, mappingSize);
}

std::string Bundle::path(const std::string &file) const {
  return dir + "/" + file;
}

} // namespace heterps::rt
