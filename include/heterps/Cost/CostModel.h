//===- CostModel.h - Time and price of a placement --------------*- C++ -*-===//
//
// Estimates how long each layer takes on each device class (roofline, or a
// measured time from a profile database), the time of a data-parallel stage
// with k replicas, stage-boundary transfers and parameter-server traffic, and
// from those the throughput and price of a placement. The equations are in
// docs/Planning.md.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_COST_COSTMODEL_H
#define HETERPS_COST_COSTMODEL_H

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cost/LayerGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heterps {
namespace cost {

/// Fraction of peak a device reaches on one kind of layer.
struct Efficiency {
  double compute = 0.5; ///< Of peak FLOP/s.
  double memory = 0.7;  ///< Of memory bandwidth.
};

/// How a training step reaches the parameter server's sparse rows
/// (docs/Planning.md, "Step shapes").
struct StepShape {
  /// Steps per pass of a pass cache on the devices that look up rows
  /// (`heterps run --train --pass-steps`): a pass loads its distinct rows
  /// once, its steps pull and push them in the cache, and it writes them
  /// back at its end. 0: every step pulls from and pushes to the server.
  unsigned passSteps = 0;
  /// Steps a sparse push may lag behind (`--sparse-staleness`): 0 or 1.
  unsigned sparseStaleness = 0;

  bool operator==(const StepShape &other) const {
    return passSteps == other.passSteps &&
           sparseStaleness == other.sparseStaleness;
  }
};

struct CostOptions {
  CostOptions();

  double batchSize = 256; ///< Samples per pipeline step (global batch).
  /// Part of each layer's work that does not shrink with more replicas
  /// (Amdahl): input splitting, small-batch inefficiency.
  double serialFraction = 0.01;
  /// Training runs forward and backward: about 3x the forward FLOPs and
  /// memory traffic.
  double trainingWorkFactor = 3.0;
  /// Training keeps weights, gradients and two optimizer moments.
  double trainingParameterMemoryFactor = 4.0;
  /// Share of a device's memory left free by its stage that a pass cache
  /// (the parameter server's tier on that device) may take; the rest covers
  /// the runtime's context, allocator slack and the estimate's error.
  double passCacheMemoryShare = 0.8;
  /// The training step priced (training graphs only).
  StepShape step;
  /// Of the keys a pass pulls, the share that are distinct rows: what the
  /// pass loads and writes back. The run reports it (its `passes:` line).
  double passDistinctFraction = 1.0;
  /// Microseconds per key pulled or pushed through a pass cache's index on
  /// a device of each kind [DeviceKind]: on a CPU a hash lookup and the
  /// push's merge in host memory, on a GPU the same work in HBM, spread
  /// over the device's threads.
  double passCacheKeyUs[2];
  /// [DeviceKind][LayerKind].
  Efficiency efficiency[2][kNumLayerKinds];

  const Efficiency &get(cluster::DeviceKind device, LayerKind layer) const {
    return efficiency[static_cast<unsigned>(device)]
                     [static_cast<unsigned>(layer)];
  }
  Efficiency &get(cluster::DeviceKind device, LayerKind layer) {
    return efficiency[static_cast<unsigned>(device)]
                     [static_cast<unsigned>(layer)];
  }
};

/// Measured layer times: (layer name or signature, device class) -> seconds
/// for one batch of a given size, of the pass being planned (a training step,
/// or a forward pass for inference). Stored as JSON (docs/Planning.md).
class ProfileDatabase {
public:
  struct Entry {
    double batchSize = 0;
    double secondsPerBatch = 0;
  };

  static llvm::Expected<ProfileDatabase> parse(llvm::StringRef jsonText,
                                               llvm::StringRef bufferName);
  static llvm::Expected<ProfileDatabase> load(llvm::StringRef path);
  llvm::Error save(llvm::StringRef path) const;
  std::string toJSON() const;

  /// `key` is a layer name or an op signature.
  void record(llvm::StringRef key, llvm::StringRef deviceClass,
              double batchSize, double secondsPerBatch);

  /// Seconds for `batchSize` samples of `layer` on `deviceClass`, scaled
  /// linearly from the measured batch; the layer name is tried before its
  /// signature.
  std::optional<double> lookup(const Layer &layer, llvm::StringRef deviceClass,
                               double batchSize) const;

  size_t size() const { return entries.size(); }

private:
  std::map<std::pair<std::string, std::string>, Entry> entries;
};

/// Time of one stage: layers [begin, end) on `replicas` devices of a class.
struct StageEstimate {
  /// Per batch: compute + parameter server + all-reduce, or the server's
  /// background work where that is longer.
  double seconds = 0;
  double computeSeconds = 0;
  /// The server's work the step waits for.
  double parameterServerSeconds = 0;
  /// The server's work that overlaps the step (the next pass's load, a
  /// stale push): on the host while a GPU computes. On a CPU it shares the
  /// stage's cores and counts in parameterServerSeconds instead.
  double parameterServerBackgroundSeconds = 0;
  double allReduceSeconds = 0;
  double memoryBytes = 0; ///< Needed on each replica.
  bool fitsMemory = true;
};

/// A stage with its replica count chosen for a throughput target.
struct StagePlan {
  unsigned deviceClass = 0;
  unsigned begin = 0; ///< First layer.
  unsigned end = 0;   ///< One past the last layer.
  unsigned replicas = 1;
  double seconds = 0;    ///< Per batch.
  double throughput = 0; ///< Samples per second.
  bool meetsTarget = false;
  bool fitsMemory = true;
  double memoryBytes = 0; ///< Needed on each replica.
};

/// A placement evaluated against a target.
struct Evaluation {
  std::vector<unsigned> classOfLayer;
  std::vector<StagePlan> stages;
  /// Seconds per batch on the boundary after stages[i] (size stages - 1).
  std::vector<double> boundarySeconds;
  double throughput = 0; ///< Samples per second, slowest stage or boundary.
  double pricePerHour = 0;
  double costPerMillionSamples = 0;
  bool feasible = false;
  /// Fits memory and the class counts: the plan can run, if slower than the
  /// target.
  bool runnable = false;
  /// Uses no more devices of a class than the cluster has (memory aside).
  bool withinCounts = false;
  /// The throughput the stages' replicas were provisioned for: the target,
  /// or less for a plan that misses it within the counts (evaluate()).
  double provisionedFor = 0;
  std::string infeasibleReason; ///< Empty when feasible.
  /// The layer in the slowest stage that takes most of its time, or the
  /// producer side of the slowest boundary.
  std::optional<unsigned> bottleneckLayer;
};

/// Layers [begin, end) on one device class: a placement as runs.
struct LayerRun {
  unsigned deviceClass = 0;
  unsigned begin = 0; ///< First layer.
  unsigned end = 0;   ///< One past the last layer.
};

/// Cost per million samples of a pipeline costing `pricePerHour` and running
/// at `throughput` samples per second.
double costPerMillionSamples(double pricePerHour, double throughput);

class CostModel {
public:
  CostModel(const LayerGraph &graph, const cluster::ClusterSpec &cluster,
            CostOptions options = {},
            const ProfileDatabase *profiles = nullptr);

  const LayerGraph &graph() const { return layerGraph; }
  const cluster::ClusterSpec &cluster() const { return clusterSpec; }
  const CostOptions &options() const { return costOptions; }
  unsigned numLayers() const { return layerGraph.size(); }
  unsigned numClasses() const { return clusterSpec.classes.size(); }
  double batchSize() const { return costOptions.batchSize; }

  /// One device of `cls` running `layer` on the whole batch: the roofline or
  /// measured time, without the launch overhead.
  double layerWorkSeconds(unsigned layer, unsigned cls) const {
    return workSeconds[layer * numClasses() + cls];
  }
  /// Launch overhead of `layer` on `cls`, per batch (once per pass).
  double layerOverheadSeconds(unsigned cls) const;
  /// Parameter-server seconds of `layer` with `replicas` devices of `cls`
  /// that the step waits for.
  double layerParameterServerSeconds(unsigned layer, unsigned cls,
                                     unsigned replicas) const;

  /// Layers [begin, end) on `replicas` devices of `cls`; O(1).
  StageEstimate stage(unsigned cls, unsigned begin, unsigned end,
                      unsigned replicas) const;

  /// The smallest replica count (at most the class's count) whose stage fits
  /// in memory and reaches `targetThroughput`; when none does, the count with
  /// the highest throughput, with meetsTarget false.
  StagePlan provision(unsigned cls, unsigned begin, unsigned end,
                      double targetThroughput) const;

  /// Seconds per batch to move the activations crossing `cut` (and their
  /// gradients the other way, on a full-duplex link) from a stage on
  /// `fromCls` to one on `toCls`.
  double boundarySeconds(unsigned cut, unsigned fromCls, unsigned toCls) const;

  /// Splits a placement into stages, provisions each for the target and
  /// checks class counts. With `provisionThroughput`, stages get the fewest
  /// replicas reaching it instead (a plan that misses the target but runs
  /// within the counts), while feasibility is still judged by the target.
  Evaluation evaluate(llvm::ArrayRef<unsigned> classOfLayer,
                      double targetThroughput,
                      std::optional<double> provisionThroughput = {}) const;

  /// What evaluate() decides of the placement given as `runs`, in order and
  /// covering every layer (adjacent runs of one class are one stage), in
  /// O(runs) rather than O(layers): for search loops that compare many
  /// candidates on deep graphs. Stages, boundaries, throughput, price,
  /// cost and feasibility are evaluate()'s; classOfLayer, bottleneckLayer
  /// and infeasibleReason are left empty.
  Evaluation evaluateRuns(llvm::ArrayRef<LayerRun> runs,
                          double targetThroughput,
                          std::optional<double> provisionThroughput = {}) const;

  /// The memory a pass cache may hold (PassCache::setMemoryLimit) when the
  /// plan trains: on each device of a stage that looks up sparse rows, the
  /// share `passCacheMemoryShare` of what the stage leaves free of its
  /// class's memory; the least over those stages, 0 when one leaves none.
  /// Empty for inference and for plans without lookups.
  std::optional<double> passCacheMemoryBytes(const Evaluation &plan) const;

  /// Whether every stage of the plan that looks up sparse rows runs on
  /// GPUs, so that a pass cache belongs in GPU memory (the runtime keeps one
  /// cache for all of them); false without such stages.
  bool passCacheOnGpu(const Evaluation &plan) const;

  /// Seconds of one training step (or one inference call) of
  /// `microBatches` micro-batches through the plan, as the runtime runs
  /// it: a replica takes whole micro-batches, a micro-batch crosses every
  /// boundary (and back, in training), and the step ends when its last
  /// micro-batch does. Its throughput tends to the plan's as the count
  /// grows; at one micro-batch the stages run one after another.
  double stepSeconds(const Evaluation &plan, unsigned microBatches) const;

  /// The fewest micro-batches per step, at most `most`, whose step reaches
  /// `goal` samples per second; `most` when none does.
  unsigned fewestMicroBatchesReaching(const Evaluation &plan, double goal,
                                      unsigned most) const;

private:
  struct ServerSeconds {
    double waited = 0;     ///< The step waits for it.
    double background = 0; ///< Overlaps the step.
  };
  /// The server's time per step for `lookups` embedding layers pulling
  /// `rowBytes` and `keys` per sample on `replicas` devices of `cls`, in the
  /// step shape of the options.
  ServerSeconds serverSeconds(unsigned cls, double lookups, double rowBytes,
                              double keys, unsigned replicas) const;

  const LayerGraph &layerGraph;
  const cluster::ClusterSpec &clusterSpec;
  CostOptions costOptions;
  // [layer * numClasses + cls].
  std::vector<double> workSeconds;
  // Prefix sums over layers ([numClasses][numLayers + 1] for workPrefix).
  std::vector<std::vector<double>> workPrefix;
  std::vector<double> parameterPrefix;
  std::vector<double> activationPrefix;
  std::vector<double> embeddingBytesPrefix;
  std::vector<double> embeddingCountPrefix;
  /// Keys looked up per sample (the parameter server's per-key work).
  std::vector<double> embeddingKeysPrefix;
  std::vector<double> cutBytes;
};

} // namespace cost
} // namespace heterps

#endif // HETERPS_COST_COSTMODEL_H
