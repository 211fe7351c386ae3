//===- ClusterSpec.cpp - Parse and query cluster descriptions -------------===//
//
// Parsed with llvm::yaml::Stream nodes rather than yaml::Input so that every
// semantic error can point at the line and column of the offending node. The
// stream's nodes can only be visited once, in document order, so they are
// first copied into a small tree that validation can query freely.
//
//===----------------------------------------------------------------------===//

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cluster/YamlLimits.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;
using namespace heterps::cluster;

StringRef heterps::cluster::toString(DeviceKind kind) {
  return kind == DeviceKind::CPU ? "cpu" : "gpu";
}

StringRef heterps::cluster::toString(LinkScope scope) {
  return scope == LinkScope::Intra ? "intra" : "inter";
}

std::optional<unsigned> ClusterSpec::findClass(StringRef className) const {
  for (unsigned i = 0, e = classes.size(); i != e; ++i)
    if (classes[i].name == className)
      return i;
  return std::nullopt;
}

const Link *ClusterSpec::findLink(unsigned a, unsigned b, bool toPS,
                                  LinkScope scope) const {
  for (const Link &link : links) {
    if (link.toPS != toPS || link.scope != scope)
      continue;
    if (toPS ? link.from == a
             : ((link.from == a && link.to == b) ||
                (link.from == b && link.to == a)))
      return &link;
  }
  return nullptr;
}

LinkParams ClusterSpec::stageLink(unsigned from, unsigned to) const {
  if (const Link *link = findLink(from, to, false, LinkScope::Intra))
    return link->params;
  if (const Link *link = findLink(from, to, false, LinkScope::Inter))
    return link->params;
  return network;
}

LinkParams ClusterSpec::collectiveLink(unsigned cls, unsigned replicas) const {
  if (replicas <= classes[cls].perMachine)
    if (const Link *link = findLink(cls, cls, false, LinkScope::Intra))
      return link->params;
  if (const Link *link = findLink(cls, cls, false, LinkScope::Inter))
    return link->params;
  return network;
}

LinkParams ClusterSpec::parameterServerLink(unsigned cls) const {
  if (const Link *link = findLink(cls, 0, true, LinkScope::Intra))
    return link->params;
  if (const Link *link = findLink(cls, 0, true, LinkScope::Inter))
    return link->params;
  return parameterServer;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// A YAML node copied out of the stream, with its position.
struct YNode {
  enum Kind { Scalar, Mapping, Sequence, Null } kind = Null;
  SMLoc loc;
  std::string value;                            // Scalar
  std::vector<std::pair<YNode, YNode>> entries; // Mapping, in order
  std::vector<YNode> items;                     // Sequence
};

/// Walks the YAML node tree. The first diagnostic (from the YAML scanner or
/// from validation) is kept; later ones are consequences and are dropped.
class ClusterParser {
public:
  ClusterParser(StringRef text, StringRef bufferName)
      : buffer(MemoryBuffer::getMemBuffer(text, bufferName,
                                          /*RequiresNullTerminator=*/false)) {
    sourceMgr.setDiagHandler(
        [](const SMDiagnostic &diag, void *context) {
          auto *self = static_cast<ClusterParser *>(context);
          if (!self->firstError.empty())
            return;
          raw_string_ostream os(self->firstError);
          diag.print(/*ProgName=*/nullptr, os, /*ShowColors=*/false);
        },
        this);
  }

  Expected<ClusterSpec> parse();

private:
  /// Reports `message` at `node` (or at the start of the buffer) and returns
  /// false so callers can `return error(...)`.
  bool error(const YNode *node, const Twine &message) {
    SMLoc loc =
        node ? node->loc : SMLoc::getFromPointer(buffer->getBufferStart());
    sourceMgr.PrintMessage(loc, SourceMgr::DK_Error, message);
    return false;
  }

  /// Copies the stream node; false on an unsupported node (reported).
  bool copy(yaml::Node *node, YNode &out);

  bool scalar(const YNode *node, StringRef field, std::string &out);
  bool number(const YNode *node, StringRef field, double &out);
  bool unsignedNumber(const YNode *node, StringRef field, unsigned &out);

  /// Collects the key/value pairs of a mapping, rejecting unknown and repeated
  /// keys; `what` names the mapping in errors.
  bool fields(const YNode *node, StringRef what, ArrayRef<StringRef> allowed,
              StringMap<const YNode *> &out);
  bool require(const StringMap<const YNode *> &map, const YNode *owner,
               StringRef what, StringRef field);

  bool parseClass(const YNode *node, ClusterSpec &spec);
  bool parseLink(const YNode *node, ClusterSpec &spec);
  bool parseLinkParams(const YNode *node, StringRef what, LinkParams &out,
                       bool toServer = false);
  bool parseKeyUs(StringMap<const YNode *> &map, StringRef what,
                  LinkParams &out);

  std::unique_ptr<MemoryBuffer> buffer;
  SourceMgr sourceMgr;
  std::string firstError;
  StringMap<const YNode *> classNameNodes;
};

} // namespace

bool ClusterParser::copy(yaml::Node *node, YNode &out) {
  if (!node)
    return false;
  out.loc = node->getSourceRange().Start;
  if (auto *scalarNode = dyn_cast<yaml::ScalarNode>(node)) {
    SmallString<32> storage;
    out.kind = YNode::Scalar;
    out.value = scalarNode->getValue(storage).str();
  } else if (auto *mapping = dyn_cast<yaml::MappingNode>(node)) {
    out.kind = YNode::Mapping;
    for (yaml::KeyValueNode &entry : *mapping) {
      out.entries.emplace_back();
      if (!copy(entry.getKey(), out.entries.back().first) ||
          !copy(entry.getValue(), out.entries.back().second))
        return false;
    }
  } else if (auto *sequence = dyn_cast<yaml::SequenceNode>(node)) {
    out.kind = YNode::Sequence;
    for (yaml::Node &item : *sequence) {
      out.items.emplace_back();
      if (!copy(&item, out.items.back()))
        return false;
    }
  } else if (auto *block = dyn_cast<yaml::BlockScalarNode>(node)) {
    out.kind = YNode::Scalar;
    out.value = block->getValue().str();
  } else if (isa<yaml::NullNode>(node)) {
    out.kind = YNode::Null;
  } else {
    // LLVM places an alias at the token after it; its name lies in the
    // text, just after the '*'.
    auto *alias = dyn_cast<yaml::AliasNode>(node);
    StringRef name = alias ? alias->getName() : StringRef();
    sourceMgr.PrintMessage(alias ? SMLoc::getFromPointer(name.data() - 1)
                                 : out.loc,
                           SourceMgr::DK_Error,
                           "YAML aliases are not supported here ('*" + name +
                               "'): write the value out");
    return false;
  }
  // A syntax error inside ends the iteration early; it has been reported.
  return firstError.empty();
}

bool ClusterParser::scalar(const YNode *node, StringRef field,
                           std::string &out) {
  if (!node || node->kind != YNode::Scalar)
    return error(node, "'" + field + "' must be a scalar");
  out = node->value;
  return true;
}

bool ClusterParser::number(const YNode *node, StringRef field, double &out) {
  std::string text;
  if (!scalar(node, field, text))
    return false;
  if (StringRef(text).trim().getAsDouble(out) || !std::isfinite(out))
    return error(node, "'" + field + "' must be a number, got '" + text + "'");
  // Speeds, sizes and times of 1e-9 or less make the plans' times overflow.
  if (out != 0 && std::abs(out) < 1e-9)
    return error(node, "'" + field + "' of " + text +
                           " is too small: give a number of at least 1e-9 "
                           "(or 0 where the field allows it)");
  // Above 1e12 they overflow as well: 1e300 GFLOP/s became an infinite
  // FLOP rate, a stage time of 0 and a plan of infinite throughput at
  // no cost.
  if (std::abs(out) > 1e12)
    return error(node, "'" + field + "' of " + text +
                           " is too large: give a number of at most 1e12");
  return true;
}

bool ClusterParser::unsignedNumber(const YNode *node, StringRef field,
                                   unsigned &out) {
  std::string text;
  if (!scalar(node, field, text))
    return false;
  if (StringRef(text).trim().getAsInteger(10, out))
    return error(node, "'" + field + "' must be a non-negative integer, got '" +
                           text + "'");
  return true;
}

bool ClusterParser::fields(const YNode *node, StringRef what,
                           ArrayRef<StringRef> allowed,
                           StringMap<const YNode *> &out) {
  if (!node || node->kind != YNode::Mapping)
    return error(node, what + " must be a mapping");
  for (const auto &[keyNode, value] : node->entries) {
    std::string key;
    if (!scalar(&keyNode, "key", key))
      return false;
    if (!is_contained(allowed, StringRef(key))) {
      std::string list;
      for (StringRef name : allowed)
        list += (list.empty() ? "" : ", ") + name.str();
      return error(&keyNode, "unknown field '" + key + "' in " + what +
                                 " (expected one of: " + list + ")");
    }
    if (out.count(key))
      return error(&keyNode, "field '" + key + "' given twice in " + what);
    if (value.kind == YNode::Null)
      return error(&keyNode, "field '" + key + "' has no value");
    out[key] = &value;
  }
  return true;
}

bool ClusterParser::require(const StringMap<const YNode *> &map,
                            const YNode *owner, StringRef what,
                            StringRef field) {
  if (map.count(field))
    return true;
  return error(owner, what + " is missing required field '" + field + "'");
}

bool ClusterParser::parseClass(const YNode *node, ClusterSpec &spec) {
  static const StringRef allowed[] = {"name",
                                      "kind",
                                      "peak_gflops",
                                      "memory_bandwidth_gbps",
                                      "memory_gib",
                                      "price_per_hour",
                                      "count",
                                      "per_machine",
                                      "launch_overhead_us"};
  StringMap<const YNode *> map;
  if (!fields(node, "device class", allowed, map))
    return false;
  if (!require(map, node, "device class", "name"))
    return false;
  DeviceClass cls;
  if (!scalar(map["name"], "name", cls.name))
    return false;
  std::string what = "device class '" + cls.name + "'";
  if (cls.name.empty())
    return error(map["name"], "device class name is empty");
  // Class names reach generated code, file names and messages.
  if (auto bad = llvm::find_if(cls.name,
                               [](char c) {
                                 return !isAlnum(c) && c != '.' && c != '_' &&
                                        c != '-';
                               });
      bad != cls.name.end())
    return error(map["name"], "device class name '" + cls.name +
                                  "' holds a character other than letters, "
                                  "digits, '.', '_' and '-'");
  if (cls.name == kParameterServerEndpoint)
    return error(map["name"],
                 "'" + cls.name + "' is reserved for the parameter server");
  auto [it, inserted] = classNameNodes.try_emplace(cls.name, map["name"]);
  if (!inserted) {
    unsigned firstLine = sourceMgr.getLineAndColumn(it->second->loc).first;
    return error(map["name"], "duplicate device class '" + cls.name +
                                  "' (first defined on line " +
                                  Twine(firstLine) + ")");
  }
  for (StringRef field : {"kind", "peak_gflops", "memory_bandwidth_gbps",
                          "memory_gib", "price_per_hour", "count"})
    if (!require(map, node, what, field))
      return false;

  std::string kind;
  if (!scalar(map["kind"], "kind", kind))
    return false;
  if (kind == "cpu")
    cls.kind = DeviceKind::CPU;
  else if (kind == "gpu")
    cls.kind = DeviceKind::GPU;
  else
    return error(map["kind"], "unknown device kind '" + kind + "' in " + what +
                                  " (expected cpu or gpu)");
  // The compiler knows a class by its name alone (hps.device "gpu.a100"),
  // and the prefix decides how its stages are built: the two must agree.
  if (!StringRef(cls.name).starts_with(kind))
    return error(map["name"], what + " is of kind '" + kind +
                                  "' but its name does not start with '" +
                                  kind +
                                  "': the compiler builds a class's "
                                  "stages by its name's prefix (cpu: oneDNN, "
                                  "gpu: CUDA); name it '" +
                                  kind + "." + cls.name + "'");

  auto positive = [&](StringRef field, double &out) {
    if (!number(map[field], field, out))
      return false;
    if (out <= 0)
      return error(map[field],
                   "'" + field + "' of " + what + " must be positive");
    return true;
  };
  if (!positive("peak_gflops", cls.peakGflops) ||
      !positive("memory_bandwidth_gbps", cls.memoryBandwidthGBps) ||
      !positive("memory_gib", cls.memoryGiB))
    return false;
  if (!number(map["price_per_hour"], "price_per_hour", cls.pricePerHour))
    return false;
  if (cls.pricePerHour < 0)
    return error(map["price_per_hour"],
                 "'price_per_hour' of " + what + " must not be negative");
  // Costs sum prices over hours and devices: far past any machine's
  // price they overflow to infinity.
  if (cls.pricePerHour > kMostPricePerHour)
    return error(map["price_per_hour"],
                 "'price_per_hour' of " + what + " must be at most " +
                     std::to_string(int64_t(kMostPricePerHour)) +
                     " (USD per device-hour)");
  if (!unsignedNumber(map["count"], "count", cls.count))
    return false;
  if (cls.count == 0)
    return error(map["count"], "'count' of " + what + " must be at least 1");
  // Planners and schedulers keep per-device state; a class far beyond any
  // cluster is a typo.
  if (cls.count > kMostDevicesPerClass)
    return error(map["count"], "'count' of " + what + " must be at most " +
                                   Twine(kMostDevicesPerClass));
  if (map.count("per_machine")) {
    if (!unsignedNumber(map["per_machine"], "per_machine", cls.perMachine))
      return false;
    if (cls.perMachine == 0)
      return error(map["per_machine"],
                   "'per_machine' of " + what + " must be at least 1");
  }
  // Kernel launch and framework dispatch: a few microseconds on GPUs.
  cls.launchOverheadUs = cls.kind == DeviceKind::GPU ? 5.0 : 1.0;
  if (map.count("launch_overhead_us")) {
    if (!number(map["launch_overhead_us"], "launch_overhead_us",
                cls.launchOverheadUs))
      return false;
    if (cls.launchOverheadUs < 0)
      return error(map["launch_overhead_us"],
                   "'launch_overhead_us' of " + what + " must not be negative");
  }
  spec.classes.push_back(std::move(cls));
  return true;
}

bool ClusterParser::parseLinkParams(const YNode *node, StringRef what,
                                    LinkParams &out, bool toServer) {
  static const StringRef allowed[] = {"bandwidth_gbps", "latency_us"};
  static const StringRef allowedToServer[] = {"bandwidth_gbps", "latency_us",
                                              "key_us"};
  StringMap<const YNode *> map;
  if (!(toServer ? fields(node, what, allowedToServer, map)
                 : fields(node, what, allowed, map)))
    return false;
  if (toServer && !parseKeyUs(map, what, out))
    return false;
  if (!require(map, node, what, "bandwidth_gbps") ||
      !require(map, node, what, "latency_us"))
    return false;
  if (!number(map["bandwidth_gbps"], "bandwidth_gbps", out.bandwidthGBps) ||
      !number(map["latency_us"], "latency_us", out.latencyUs))
    return false;
  if (out.bandwidthGBps <= 0)
    return error(map["bandwidth_gbps"],
                 "'bandwidth_gbps' of " + what + " must be positive");
  if (out.latencyUs < 0)
    return error(map["latency_us"],
                 "'latency_us' of " + what + " must not be negative");
  return true;
}

bool ClusterParser::parseKeyUs(StringMap<const YNode *> &map, StringRef what,
                               LinkParams &out) {
  if (!map.count("key_us"))
    return true;
  if (!number(map["key_us"], "key_us", out.keyUs))
    return false;
  if (out.keyUs < 0)
    return error(map["key_us"],
                 "'key_us' of " + what + " must not be negative");
  return true;
}

bool ClusterParser::parseLink(const YNode *node, ClusterSpec &spec) {
  static const StringRef allowed[] = {"from",           "to",         "scope",
                                      "bandwidth_gbps", "latency_us", "key_us"};
  StringMap<const YNode *> map;
  if (!fields(node, "link", allowed, map))
    return false;
  for (StringRef field : {"from", "to", "scope"})
    if (!require(map, node, "link", field))
      return false;
  std::string fromName, toName, scope;
  if (!scalar(map["from"], "from", fromName) ||
      !scalar(map["to"], "to", toName) || !scalar(map["scope"], "scope", scope))
    return false;

  Link link;
  if (scope == "intra")
    link.scope = LinkScope::Intra;
  else if (scope == "inter")
    link.scope = LinkScope::Inter;
  else
    return error(map["scope"], "unknown link scope '" + scope +
                                   "' (expected intra or inter)");

  // The parameter server may be named on either side; store it as `to`.
  if (fromName == kParameterServerEndpoint) {
    std::swap(fromName, toName);
    std::swap(map["from"], map["to"]);
  }
  if (fromName == kParameterServerEndpoint)
    return error(map["from"], "a link cannot join the parameter server to "
                              "itself");
  std::optional<unsigned> from = spec.findClass(fromName);
  if (!from)
    return error(map["from"],
                 "link names unknown device class '" + fromName + "'");
  link.from = *from;
  if (toName == kParameterServerEndpoint) {
    link.toPS = true;
  } else {
    std::optional<unsigned> to = spec.findClass(toName);
    if (!to)
      return error(map["to"],
                   "link names unknown device class '" + toName + "'");
    link.to = *to;
  }

  for (StringRef field : {"bandwidth_gbps", "latency_us"})
    if (!require(map, node, "link", field))
      return false;
  std::string what = "link " + fromName + " - " + toName;
  if (!number(map["bandwidth_gbps"], "bandwidth_gbps",
              link.params.bandwidthGBps) ||
      !number(map["latency_us"], "latency_us", link.params.latencyUs))
    return false;
  if (link.params.bandwidthGBps <= 0)
    return error(map["bandwidth_gbps"],
                 "'bandwidth_gbps' of " + what + " must be positive");
  if (link.params.latencyUs < 0)
    return error(map["latency_us"],
                 "'latency_us' of " + what + " must not be negative");
  if (map.count("key_us") && !link.toPS)
    return error(map["key_us"], "'key_us' is the parameter server's time per "
                                "key; " +
                                    what + " does not reach it");
  if (!parseKeyUs(map, what, link.params))
    return false;

  for (const Link &other : spec.links) {
    bool same =
        other.toPS == link.toPS && other.scope == link.scope &&
        (link.toPS ? other.from == link.from
                   : ((other.from == link.from && other.to == link.to) ||
                      (other.from == link.to && other.to == link.from)));
    if (same)
      return error(node, "duplicate " + scope + " " + what);
  }
  spec.links.push_back(link);
  return true;
}

Expected<ClusterSpec> ClusterParser::parse() {
  ClusterSpec spec;
  bool ok = [&]() -> bool {
    YNode tree;
    {
      yaml::Stream stream(buffer->getMemBufferRef(), sourceMgr,
                          /*ShowColors=*/false);
      yaml::document_iterator doc = stream.begin();
      if (doc == stream.end() || !doc->getRoot())
        return error(nullptr, "empty cluster description");
      if (!copy(doc->getRoot(), tree) || !firstError.empty())
        return false;
      // A second document is most likely a mistake.
      if (++doc != stream.end() && doc->getRoot() &&
          !isa<yaml::NullNode>(doc->getRoot()))
        return error(nullptr,
                     "a cluster description holds exactly one YAML document");
      if (!firstError.empty())
        return false;
    }
    const YNode *root = &tree;
    static const StringRef allowed[] = {"name", "device_classes", "links",
                                        "network", "parameter_server"};
    StringMap<const YNode *> map;
    if (!fields(root, "cluster description", allowed, map))
      return false;
    if (!require(map, root, "cluster description", "device_classes") ||
        !require(map, root, "cluster description", "network"))
      return false;
    if (map.count("name") && !scalar(map["name"], "name", spec.name))
      return false;
    if (llvm::any_of(spec.name, [](char c) {
          return (unsigned char)c < 0x20 || c == 0x7f; // UTF-8 is fine
        }))
      return error(map["name"], "the cluster's name holds a control "
                                "character");

    const YNode *classes = map["device_classes"];
    if (classes->kind != YNode::Sequence)
      return error(classes, "'device_classes' must be a list");
    for (const YNode &cls : classes->items)
      if (!parseClass(&cls, spec))
        return false;
    if (spec.classes.empty())
      return error(map["device_classes"], "'device_classes' is empty");

    if (!parseLinkParams(map["network"], "network", spec.network))
      return false;
    spec.parameterServer = spec.network;
    if (map.count("parameter_server") &&
        !parseLinkParams(map["parameter_server"], "parameter_server",
                         spec.parameterServer, /*toServer=*/true))
      return false;

    if (map.count("links")) {
      const YNode *links = map["links"];
      if (links->kind != YNode::Sequence)
        return error(links, "'links' must be a list");
      for (const YNode &link : links->items)
        if (!parseLink(&link, spec))
          return false;
    }
    return true;
  }();
  if (!ok || !firstError.empty()) {
    if (firstError.empty())
      error(nullptr, "malformed cluster description");
    return createStringError(inconvertibleErrorCode(),
                             StringRef(firstError).rtrim());
  }
  return spec;
}

Expected<ClusterSpec> heterps::cluster::parseClusterSpec(StringRef yamlText,
                                                         StringRef bufferName) {
  if (Error error = checkYamlEncoding(yamlText, bufferName))
    return std::move(error);
  if (Error error = checkYamlNesting(yamlText, bufferName))
    return std::move(error);
  if (Error error = checkNoYamlTags(yamlText, bufferName))
    return std::move(error);
  return ClusterParser(yamlText, bufferName).parse();
}

Expected<ClusterSpec> heterps::cluster::loadClusterSpec(StringRef path) {
  Expected<std::string> text = readYamlFile(path, "cluster file");
  if (!text)
    return text.takeError();
  return parseClusterSpec(*text, path);
}
