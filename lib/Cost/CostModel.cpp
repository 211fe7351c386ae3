//===- CostModel.cpp - Layer, stage and pipeline estimates ----------------===//
//
// Equations: docs/Planning.md. Stage estimates are O(1) thanks to prefix sums
// over the topological order, which the schedulers rely on.
//
//===----------------------------------------------------------------------===//

#include "heterps/Cost/CostModel.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace llvm;
using namespace heterps::cost;
using heterps::cluster::DeviceClass;
using heterps::cluster::DeviceKind;
using heterps::cluster::LinkParams;

static constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

CostOptions::CostOptions() {
  // Fractions of peak reached in practice for fp32 without tensor cores.
  // CPUs handle the random row gathers of embeddings relatively better
  // (large caches, no PCIe hop); GPUs run dense math closer to peak.
  auto set = [&](DeviceKind device, LayerKind layer, double compute,
                 double memory) {
    get(device, layer) = Efficiency{compute, memory};
  };
  set(DeviceKind::CPU, LayerKind::DenseCompute, 0.65, 0.7);
  set(DeviceKind::CPU, LayerKind::Elementwise, 0.3, 0.7);
  set(DeviceKind::CPU, LayerKind::Normalization, 0.3, 0.6);
  set(DeviceKind::CPU, LayerKind::Pooling, 0.3, 0.6);
  set(DeviceKind::CPU, LayerKind::DataMovement, 0.3, 0.6);
  set(DeviceKind::CPU, LayerKind::EmbeddingLookup, 0.3, 0.5);
  set(DeviceKind::GPU, LayerKind::DenseCompute, 0.7, 0.8);
  set(DeviceKind::GPU, LayerKind::Elementwise, 0.4, 0.8);
  set(DeviceKind::GPU, LayerKind::Normalization, 0.4, 0.7);
  set(DeviceKind::GPU, LayerKind::Pooling, 0.4, 0.7);
  set(DeviceKind::GPU, LayerKind::DataMovement, 0.4, 0.7);
  set(DeviceKind::GPU, LayerKind::EmbeddingLookup, 0.3, 0.3);
  // CPU: fitted to bench_pass_cache.py on the 2-core build machine (passes
  // in memory at 0.75x the direct path, docs/benchmarks/training.md). GPU:
  // an estimate, not yet measured (docs/Planning.md).
  passCacheKeyUs[static_cast<unsigned>(DeviceKind::CPU)] = 0.15;
  passCacheKeyUs[static_cast<unsigned>(DeviceKind::GPU)] = 0.005;
}

double heterps::cost::costPerMillionSamples(double pricePerHour,
                                            double throughput) {
  if (!(throughput > 0))
    return std::numeric_limits<double>::infinity();
  return pricePerHour / (throughput * 3600.0) * 1e6;
}

CostModel::CostModel(const LayerGraph &graph,
                     const cluster::ClusterSpec &cluster, CostOptions options,
                     const ProfileDatabase *profiles)
    : layerGraph(graph), clusterSpec(cluster), costOptions(options) {
  unsigned n = numLayers(), numCls = numClasses();
  double batch = costOptions.batchSize;
  double passFactor = graph.training() ? costOptions.trainingWorkFactor : 1.0;

  workSeconds.assign(size_t(n) * numCls, 0.0);
  for (unsigned l = 0; l != n; ++l) {
    const Layer &layer = graph.layers[l];
    // Gathered embedding rows are read once and written into the batch.
    double bytesPerSample = layer.memoryBytesPerSample +
                            layer.lookupsPerSample * layer.embeddingRowBytes;
    for (unsigned c = 0; c != numCls; ++c) {
      const DeviceClass &cls = cluster.classes[c];
      double &seconds = workSeconds[l * numCls + c];
      if (profiles)
        if (std::optional<double> measured =
                profiles->lookup(layer, cls.name, batch)) {
          seconds = *measured;
          continue;
        }
      const Efficiency &eff = costOptions.get(cls.kind, layer.kind);
      double flops = layer.forwardFlopsPerSample * batch * passFactor;
      double bytes = bytesPerSample * batch * passFactor;
      seconds = std::max(flops / (cls.peakGflops * 1e9 * eff.compute),
                         bytes / (cls.memoryBandwidthGBps * 1e9 * eff.memory));
    }
  }

  auto prefix = [&](auto valueOf) {
    std::vector<double> sums(n + 1, 0.0);
    for (unsigned l = 0; l != n; ++l)
      sums[l + 1] = sums[l] + valueOf(l);
    return sums;
  };
  workPrefix.resize(numCls);
  for (unsigned c = 0; c != numCls; ++c)
    workPrefix[c] = prefix([&](unsigned l) { return layerWorkSeconds(l, c); });
  parameterPrefix =
      prefix([&](unsigned l) { return graph.layers[l].parameterBytes; });
  activationPrefix = prefix([&](unsigned l) {
    const Layer &layer = graph.layers[l];
    return layer.outputBytesPerSample +
           layer.lookupsPerSample * layer.embeddingRowBytes;
  });
  embeddingBytesPrefix = prefix([&](unsigned l) {
    const Layer &layer = graph.layers[l];
    return layer.lookupsPerSample * layer.embeddingRowBytes;
  });
  embeddingCountPrefix = prefix([&](unsigned l) {
    return graph.layers[l].kind == LayerKind::EmbeddingLookup ? 1.0 : 0.0;
  });
  embeddingKeysPrefix = prefix([&](unsigned l) {
    const Layer &layer = graph.layers[l];
    return layer.kind == LayerKind::EmbeddingLookup ? layer.lookupsPerSample
                                                    : 0.0;
  });
  cutBytes = graph.cutBytesPerSample();
}

double CostModel::layerOverheadSeconds(unsigned cls) const {
  double passes = layerGraph.training() ? 2.0 : 1.0;
  return clusterSpec.classes[cls].launchOverheadUs * 1e-6 * passes;
}

CostModel::ServerSeconds CostModel::serverSeconds(unsigned cls, double lookups,
                                                  double rowBytes, double keys,
                                                  unsigned replicas) const {
  ServerSeconds time;
  if (lookups == 0)
    return time;
  const LinkParams link = clusterSpec.parameterServerLink(cls);
  const double samples = batchSize() / replicas;
  // One message per embedding layer carrying its rows or their gradients;
  // the server spends its per-key time on each key.
  const double oneWay = lookups * link.latencyUs * 1e-6 +
                        rowBytes * samples / (link.bandwidthGBps * 1e9) +
                        keys * samples * link.keyUs * 1e-6;
  if (!layerGraph.training())
    return {oneWay, 0};
  const StepShape &shape = costOptions.step;
  const bool stale = shape.sparseStaleness > 0;
  const DeviceKind kind = clusterSpec.classes[cls].kind;
  if (shape.passSteps == 0) {
    // Pull before forward; push after backward, or during the next step.
    time = {stale ? oneWay : 2 * oneWay, stale ? oneWay : 0};
  } else {
    // A pass loads its distinct rows while the one before trains and writes
    // them back at its end: per step, the distinct share of the traffic
    // each way and a pass's messages spread over its steps.
    const double u = costOptions.passDistinctFraction;
    const double moved = lookups * link.latencyUs * 1e-6 / shape.passSteps +
                         u * (oneWay - lookups * link.latencyUs * 1e-6);
    const double inCache =
        keys * samples * costOptions.passCacheKeyUs[unsigned(kind)] * 1e-6;
    time = {inCache + (stale ? 0 : inCache) + moved,
            moved + (stale ? inCache : 0)};
  }
  if (kind == DeviceKind::CPU) // the server's threads share the cores
    time = {time.waited + time.background, 0};
  return time;
}

double CostModel::layerParameterServerSeconds(unsigned layer, unsigned cls,
                                              unsigned replicas) const {
  const Layer &l = layerGraph.layers[layer];
  if (l.kind != LayerKind::EmbeddingLookup)
    return 0;
  return serverSeconds(cls, 1, l.lookupsPerSample * l.embeddingRowBytes,
                       l.lookupsPerSample, replicas)
      .waited;
}

StageEstimate CostModel::stage(unsigned cls, unsigned begin, unsigned end,
                               unsigned replicas) const {
  assert(begin < end && end <= numLayers() && replicas >= 1);
  const DeviceClass &device = clusterSpec.classes[cls];
  double k = replicas;
  StageEstimate estimate;

  // Amdahl: launch overheads and a serial fraction of the work stay, the
  // rest is split over the replicas' shares of the batch.
  double work = workPrefix[cls][end] - workPrefix[cls][begin];
  double serial = costOptions.serialFraction;
  estimate.computeSeconds = (end - begin) * layerOverheadSeconds(cls) +
                            serial * work + (1 - serial) * work / k;

  const ServerSeconds server = serverSeconds(
      cls, embeddingCountPrefix[end] - embeddingCountPrefix[begin],
      embeddingBytesPrefix[end] - embeddingBytesPrefix[begin],
      embeddingKeysPrefix[end] - embeddingKeysPrefix[begin], replicas);
  estimate.parameterServerSeconds = server.waited;
  estimate.parameterServerBackgroundSeconds = server.background;

  double parameters = parameterPrefix[end] - parameterPrefix[begin];
  if (layerGraph.training() && replicas > 1 && parameters > 0) {
    // Ring all-reduce of the dense gradients.
    LinkParams link = clusterSpec.collectiveLink(cls, replicas);
    estimate.allReduceSeconds =
        2.0 * (k - 1) / k * parameters / (link.bandwidthGBps * 1e9) +
        2.0 * (k - 1) * link.latencyUs * 1e-6;
  }

  estimate.seconds =
      std::max(estimate.computeSeconds + estimate.parameterServerSeconds +
                   estimate.allReduceSeconds,
               estimate.parameterServerBackgroundSeconds);

  double parameterFactor =
      layerGraph.training() ? costOptions.trainingParameterMemoryFactor : 1.0;
  // A replica runs whole micro-batches (the executor hands each replica
  // its own, as the step is priced), so every one holds a micro-batch's
  // activations: replicas add throughput, not memory.
  double activations = activationPrefix[end] - activationPrefix[begin];
  estimate.memoryBytes =
      parameters * parameterFactor + batchSize() * activations;
  estimate.fitsMemory = estimate.memoryBytes <= device.memoryGiB * kGiB;
  return estimate;
}

StagePlan CostModel::provision(unsigned cls, unsigned begin, unsigned end,
                               double targetThroughput) const {
  StagePlan best;
  best.deviceClass = cls;
  best.begin = begin;
  best.end = end;
  best.throughput = -1;
  unsigned count = clusterSpec.classes[cls].count;
  for (unsigned k = 1; k <= count; ++k) {
    StageEstimate estimate = stage(cls, begin, end, k);
    double throughput = batchSize() / estimate.seconds;
    bool better = estimate.fitsMemory && throughput > best.throughput;
    // Until something fits, keep the replica count that needs least memory.
    if (better || (best.throughput < 0 && k == count)) {
      best.replicas = k;
      best.seconds = estimate.seconds;
      best.throughput = throughput;
      best.fitsMemory = estimate.fitsMemory;
      best.memoryBytes = estimate.memoryBytes;
    }
    if (estimate.fitsMemory && throughput >= targetThroughput) {
      best.meetsTarget = true;
      return best;
    }
  }
  return best;
}

std::optional<double>
CostModel::passCacheMemoryBytes(const Evaluation &plan) const {
  if (!layerGraph.training())
    return std::nullopt;
  std::optional<double> least;
  for (const StagePlan &stage : plan.stages) {
    if (embeddingCountPrefix[stage.end] == embeddingCountPrefix[stage.begin])
      continue;
    const double free =
        clusterSpec.classes[stage.deviceClass].memoryGiB * kGiB -
        stage.memoryBytes;
    const double share = costOptions.passCacheMemoryShare * std::max(free, 0.0);
    least = least ? std::min(*least, share) : share;
  }
  return least;
}

bool CostModel::passCacheOnGpu(const Evaluation &plan) const {
  bool any = false;
  for (const StagePlan &stage : plan.stages) {
    if (embeddingCountPrefix[stage.end] == embeddingCountPrefix[stage.begin])
      continue;
    if (clusterSpec.classes[stage.deviceClass].kind != DeviceKind::GPU)
      return false;
    any = true;
  }
  return any;
}

double CostModel::stepSeconds(const Evaluation &plan,
                              unsigned microBatches) const {
  assert(microBatches >= 1 && !plan.stages.empty());
  const double crossings = layerGraph.training() ? 2 : 1;
  // The first micro-batch's way through the pipeline, then the longest
  // that a unit (stage or link) keeps the rest beyond it: the makespan of
  // identical jobs in a flow line.
  double firstThrough = 0, longestExtra = 0;
  for (unsigned s = 0, e = plan.stages.size(); s != e; ++s) {
    const StagePlan &stagePlan = plan.stages[s];
    // A replica runs a micro-batch whole, in its time alone; the replicas
    // together pass one at most every stagePlan.seconds (the pipeline's
    // period, with their all-reduce).
    const double alone =
        stage(stagePlan.deviceClass, stagePlan.begin, stagePlan.end, 1).seconds;
    const unsigned rounds =
        (microBatches + stagePlan.replicas - 1) / stagePlan.replicas;
    firstThrough += alone;
    longestExtra = std::max(
        longestExtra,
        std::max(rounds * alone, microBatches * stagePlan.seconds) - alone);
    if (s + 1 == e)
      break;
    firstThrough += crossings * plan.boundarySeconds[s];
    longestExtra =
        std::max(longestExtra, (microBatches - 1) * plan.boundarySeconds[s]);
  }
  return firstThrough + longestExtra;
}

unsigned CostModel::fewestMicroBatchesReaching(const Evaluation &plan,
                                               double goal,
                                               unsigned most) const {
  for (unsigned count = 1; count < most; ++count)
    if (count * batchSize() / stepSeconds(plan, count) >= goal)
      return count;
  return std::max(most, 1u);
}

double CostModel::boundarySeconds(unsigned cut, unsigned fromCls,
                                  unsigned toCls) const {
  assert(cut > 0 && cut < numLayers());
  LinkParams link = clusterSpec.stageLink(fromCls, toCls);
  return link.transferSeconds(cutBytes[cut] * batchSize());
}

Evaluation
CostModel::evaluateRuns(ArrayRef<LayerRun> runs, double targetThroughput,
                        std::optional<double> provisionThroughput) const {
  Evaluation result;
  // Merge adjacent runs of one class into stages.
  std::vector<LayerRun> stages;
  for (const LayerRun &run : runs) {
    assert(run.begin == (stages.empty() ? 0 : stages.back().end) &&
           "runs must cover the layers in order");
    if (run.begin == run.end)
      continue;
    if (!stages.empty() && stages.back().deviceClass == run.deviceClass)
      stages.back().end = run.end;
    else
      stages.push_back(run);
  }
  assert(!stages.empty() && stages.back().end == numLayers());
  result.provisionedFor = provisionThroughput.value_or(targetThroughput);
  for (const LayerRun &stage : stages)
    result.stages.push_back(provision(stage.deviceClass, stage.begin, stage.end,
                                      result.provisionedFor));

  std::vector<unsigned> used(numClasses(), 0);
  bool fits = true;
  result.throughput = std::numeric_limits<double>::infinity();
  for (unsigned s = 0, e = result.stages.size(); s != e; ++s) {
    const StagePlan &stagePlan = result.stages[s];
    used[stagePlan.deviceClass] += stagePlan.replicas;
    fits &= stagePlan.fitsMemory;
    result.pricePerHour +=
        stagePlan.replicas *
        clusterSpec.classes[stagePlan.deviceClass].pricePerHour;
    result.throughput = std::min(result.throughput, stagePlan.throughput);
    if (s + 1 == e)
      break;
    double seconds = boundarySeconds(stagePlan.end, stagePlan.deviceClass,
                                     result.stages[s + 1].deviceClass);
    result.boundarySeconds.push_back(seconds);
    result.throughput = std::min(result.throughput, batchSize() / seconds);
  }
  result.costPerMillionSamples =
      costPerMillionSamples(result.pricePerHour, result.throughput);
  result.withinCounts = true;
  for (unsigned c = 0; c != numClasses(); ++c)
    result.withinCounts &= used[c] <= clusterSpec.classes[c].count;
  result.runnable = fits && result.withinCounts;
  result.feasible = result.runnable && result.throughput >= targetThroughput;
  return result;
}

Evaluation
CostModel::evaluate(ArrayRef<unsigned> classOfLayer, double targetThroughput,
                    std::optional<double> provisionThroughput) const {
  assert(classOfLayer.size() == numLayers());
  unsigned n = numLayers();
  std::vector<LayerRun> runs;
  for (unsigned begin = 0; begin != n;) {
    unsigned end = begin + 1;
    while (end != n && classOfLayer[end] == classOfLayer[begin])
      ++end;
    runs.push_back({classOfLayer[begin], begin, end});
    begin = end;
  }
  Evaluation result = evaluateRuns(runs, targetThroughput, provisionThroughput);
  result.classOfLayer.assign(classOfLayer.begin(), classOfLayer.end());

  // Where the pipeline is slowest: the first stage or boundary, in pipeline
  // order, that runs at its throughput.
  bool bottleneckIsBoundary = false;
  unsigned bottleneckIndex = 0;
  double slowestRate = std::numeric_limits<double>::infinity();
  std::vector<unsigned> used(numClasses(), 0);
  for (unsigned s = 0, e = result.stages.size(); s != e; ++s) {
    const StagePlan &stagePlan = result.stages[s];
    used[stagePlan.deviceClass] += stagePlan.replicas;
    if (stagePlan.throughput < slowestRate) {
      slowestRate = stagePlan.throughput;
      bottleneckIsBoundary = false;
      bottleneckIndex = s;
    }
    if (s + 1 == e)
      break;
    if (batchSize() / result.boundarySeconds[s] < slowestRate) {
      slowestRate = batchSize() / result.boundarySeconds[s];
      bottleneckIsBoundary = true;
      bottleneckIndex = stagePlan.end;
    }
  }

  if (bottleneckIsBoundary) {
    result.bottleneckLayer = bottleneckIndex - 1;
  } else {
    // The layer that takes the largest share of the slowest stage.
    const StagePlan &slowestStage = result.stages[bottleneckIndex];
    double worst = -1;
    for (unsigned l = slowestStage.begin; l != slowestStage.end; ++l) {
      double seconds = layerWorkSeconds(l, slowestStage.deviceClass) +
                       layerParameterServerSeconds(l, slowestStage.deviceClass,
                                                   slowestStage.replicas);
      if (seconds > worst) {
        worst = seconds;
        result.bottleneckLayer = l;
      }
    }
  }

  // Explain why the placement misses, most fundamental reason first.
  auto layerName = [&](unsigned l) {
    return "'" + layerGraph.layers[l].name + "'";
  };
  auto rate = [](double throughput) {
    return formatv("{0:F1}", throughput).str();
  };
  std::string &reason = result.infeasibleReason;
  for (const StagePlan &stagePlan : result.stages)
    if (reason.empty() && !stagePlan.fitsMemory) {
      const DeviceClass &device = clusterSpec.classes[stagePlan.deviceClass];
      reason = formatv("stage {0}..{1} needs {2} GiB on each replica, more "
                       "than the {3} GiB of {4} (its memory_gib)",
                       layerName(stagePlan.begin), layerName(stagePlan.end - 1),
                       format("%.4g", stagePlan.memoryBytes / kGiB),
                       format("%g", device.memoryGiB), device.name)
                   .str();
    }
  // Counts rule a plan out at any throughput, so they come before it.
  for (unsigned c = 0; reason.empty() && c != numClasses(); ++c)
    if (used[c] > clusterSpec.classes[c].count)
      reason = (Twine("the stages need ") + Twine(used[c]) + " x " +
                clusterSpec.classes[c].name + " but the cluster has " +
                Twine(clusterSpec.classes[c].count))
                   .str();
  if (reason.empty() && result.throughput < targetThroughput) {
    if (bottleneckIsBoundary) {
      unsigned cut = bottleneckIndex;
      reason = "the transfer from layer " + layerName(cut - 1) + " to layer " +
               layerName(cut) + " reaches only " + rate(result.throughput) +
               " samples/s (target " + rate(targetThroughput) + ")";
    } else {
      const StagePlan &slowest = result.stages[bottleneckIndex];
      reason =
          (Twine("the slowest stage, layers ") + layerName(slowest.begin) +
           ".." + layerName(slowest.end - 1) + " on " +
           Twine(slowest.replicas) + " x " +
           clusterSpec.classes[slowest.deviceClass].name +
           ", reaches at most " + rate(slowest.throughput) +
           " samples/s (target " + rate(targetThroughput) +
           "); its heaviest layer is " + layerName(*result.bottleneckLayer))
              .str();
    }
  }
  assert(result.feasible == reason.empty() &&
         "evaluateRuns and the explanation disagree on feasibility");
  return result;
}
