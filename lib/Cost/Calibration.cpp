//===- Calibration.cpp - Fit the cost model to a measured profile ---------===//

#include "heterps/Cost/Calibration.h"
#include "heterps/Cluster/InputFile.h"
#include "heterps/Cluster/JsonLimits.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace llvm;

namespace heterps::cost {

std::string Calibration::describe() const {
  std::string out =
      formatv("calibrated {0} efficiencies from {1}:",
              deviceKind == cluster::DeviceKind::CPU ? "CPU" : "GPU",
              deviceClass.empty() ? "a file that names no class" : deviceClass)
          .str();
  for (const KindCalibration &k : kinds)
    out +=
        formatv(" {0} x{1:F2} ({2} layers, roofline {3:F3} ms, measured "
                "{4:F3} ms{5})",
                toString(k.kind), k.factor, k.layers, k.predictedSeconds * 1e3,
                k.measuredSeconds * 1e3, k.clamped ? ", capped at peak" : "")
            .str();
  return out;
}

Expected<Calibration> calibrate(const LayerGraph &graph,
                                const cluster::ClusterSpec &cluster,
                                StringRef deviceClass,
                                const ProfileDatabase &profiles,
                                CostOptions &options) {
  auto found = std::find_if(
      cluster.classes.begin(), cluster.classes.end(),
      [&](const cluster::DeviceClass &c) { return c.name == deviceClass; });
  if (found == cluster.classes.end())
    return createStringError(inconvertibleErrorCode(),
                             "calibration: the cluster has no device class "
                             "'%s'",
                             deviceClass.str().c_str());
  const unsigned cls = unsigned(found - cluster.classes.begin());
  Calibration calibration;
  calibration.deviceClass = deviceClass.str();
  calibration.deviceKind = found->kind;

  // The roofline of the uncalibrated options, layer by layer.
  CostModel roofline(graph, cluster, options, nullptr);
  std::vector<KindCalibration> byKind(kNumLayerKinds);
  for (unsigned l = 0; l != graph.size(); ++l) {
    const Layer &layer = graph.layers[l];
    std::optional<double> measured =
        profiles.lookup(layer, deviceClass, options.batchSize);
    if (!measured || *measured <= 0)
      continue;
    KindCalibration &k = byKind[unsigned(layer.kind)];
    k.kind = layer.kind;
    k.layers++;
    k.predictedSeconds += roofline.layerWorkSeconds(l, cls);
    k.measuredSeconds += *measured;
  }
  for (KindCalibration &k : byKind) {
    if (k.layers == 0 || k.predictedSeconds <= 0)
      continue;
    k.factor = k.predictedSeconds / k.measuredSeconds;
    // Time is work / (peak x efficiency) on whichever bound binds: scaling
    // both efficiencies scales it by 1 / factor, up to the peak.
    Efficiency &eff = options.get(found->kind, k.kind);
    double compute = eff.compute * k.factor, memory = eff.memory * k.factor;
    k.clamped = compute > 1 || memory > 1;
    eff.compute = std::min(compute, 1.0);
    eff.memory = std::min(memory, 1.0);
    calibration.kinds.push_back(k);
  }
  if (calibration.kinds.empty())
    return createStringError(inconvertibleErrorCode(),
                             "calibration: no layer of the profiled model has "
                             "a measurement on '%s' in the profile database",
                             deviceClass.str().c_str());
  return calibration;
}

std::string calibrationJson(const Calibration &calibration,
                            const CostOptions &options) {
  json::Array kinds;
  json::Object efficiency;
  for (const KindCalibration &k : calibration.kinds)
    kinds.push_back(json::Object{{"kind", toString(k.kind)},
                                 {"layers", k.layers},
                                 {"roofline_seconds", k.predictedSeconds},
                                 {"measured_seconds", k.measuredSeconds},
                                 {"factor", k.factor},
                                 {"capped_at_peak", k.clamped}});
  for (unsigned kind = 0; kind != kNumLayerKinds; ++kind) {
    const Efficiency &eff =
        options.get(calibration.deviceKind, LayerKind(kind));
    efficiency[toString(LayerKind(kind))] =
        json::Object{{"compute", eff.compute}, {"memory", eff.memory}};
  }
  json::Object root{
      {"device_class", calibration.deviceClass},
      {"device_kind",
       calibration.deviceKind == cluster::DeviceKind::CPU ? "cpu" : "gpu"},
      {"kinds", std::move(kinds)},
      {"efficiency", std::move(efficiency)}};
  return formatv("{0:2}\n", json::Value(std::move(root))).str();
}

Expected<Calibration> loadCalibration(StringRef path, CostOptions &options) {
  auto fail = [&](const Twine &why) {
    return createStringError(inconvertibleErrorCode(),
                             "calibration file '" + path + "': " + why);
  };
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      heterps::cluster::readInputFile(path, "calibration file",
                                      heterps::cluster::kMostJsonFileBytes);
  if (!buffer)
    return buffer.takeError();
  Expected<json::Value> value =
      heterps::cluster::parseJson((*buffer)->getBuffer());
  if (!value)
    return fail(toString(value.takeError()));
  const json::Object *root = value->getAsObject();
  if (!root)
    return fail("not a JSON object");
  Calibration calibration;
  calibration.deviceClass = root->getString("device_class").value_or("").str();
  StringRef kindName = root->getString("device_kind").value_or("");
  if (kindName != "cpu" && kindName != "gpu")
    return fail("device_kind '" + kindName + "' is neither cpu nor gpu");
  calibration.deviceKind =
      kindName == "cpu" ? cluster::DeviceKind::CPU : cluster::DeviceKind::GPU;
  const json::Object *efficiency = root->getObject("efficiency");
  if (!efficiency)
    return fail("no 'efficiency' object");
  CostOptions loaded = options;
  for (const auto &[name, entry] : *efficiency) {
    std::optional<LayerKind> kind = parseLayerKind(name);
    const json::Object *pair = entry.getAsObject();
    if (!kind || !pair)
      return fail("efficiency: unknown layer kind '" + name + "'");
    std::optional<double> compute = pair->getNumber("compute"),
                          memory = pair->getNumber("memory");
    if (!compute || !memory || !(*compute > 0 && *compute <= 1) ||
        !(*memory > 0 && *memory <= 1))
      return fail("efficiency." + name +
                  ": compute and memory must be numbers in (0, 1]");
    loaded.get(calibration.deviceKind, *kind) = {*compute, *memory};
  }
  if (const json::Array *kinds = root->getArray("kinds"))
    for (const json::Value &v : *kinds)
      if (const json::Object *k = v.getAsObject()) {
        KindCalibration entry;
        if (std::optional<LayerKind> kind =
                parseLayerKind(k->getString("kind").value_or("")))
          entry.kind = *kind;
        entry.layers = unsigned(k->getInteger("layers").value_or(0));
        entry.predictedSeconds = k->getNumber("roofline_seconds").value_or(0);
        entry.measuredSeconds = k->getNumber("measured_seconds").value_or(0);
        entry.factor = k->getNumber("factor").value_or(1);
        entry.clamped = k->getBoolean("capped_at_peak").value_or(false);
        calibration.kinds.push_back(entry);
      }
  options = loaded;
  return calibration;
}

} // namespace heterps::cost
