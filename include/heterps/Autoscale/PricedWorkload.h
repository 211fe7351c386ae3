//===- PricedWorkload.h - HeterPS jobs on a priced cluster ------*- C++ -*-===//
//
// The heterogeneous, priced case of the simulator: jobs are HeterPS CTR
// models, the cluster is a cluster file's device classes with prices, and a
// job's rate for an allocation (devices per class) is the throughput of its
// own best placement plan within those devices (lib/Cost + lib/Schedule, no
// MLIR). Policies: the allocator's MaxValue and MinCost objectives against
// whole GPUs per job (FIFO). docs/Autoscaler.md, "Heterogeneous, priced".
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_AUTOSCALE_PRICEDWORKLOAD_H
#define HETERPS_AUTOSCALE_PRICEDWORKLOAD_H

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cost/CostModel.h"
#include "heterps/Cost/LayerGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heterps::autoscale {

/// A CTR model size of the mix: embedding tables (lookup + sum pooling, as
/// bench/generate_ctr_model.py builds them), a concat, and an MLP tower.
struct CtrModelSize {
  std::string name;
  unsigned tables = 0;
  unsigned embeddingDim = 16;
  uint64_t rowsPerTable = 0;
  unsigned lookupsPerTable = 1; // multi-hot ids per sample
  std::vector<unsigned> hidden; // widths of the tower
  double batch = 4096;          // global batch the job trains with
};

/// The three sizes of the generated mix: ctr-small, ctr-medium, ctr-large.
llvm::ArrayRef<CtrModelSize> ctrModelSizes();

/// The layer graph of a CTR model (training mode).
cost::LayerGraph ctrLayerGraph(const CtrModelSize &size);

/// One way to run a job: devices per class of the cluster, the throughput of
/// the best plan within them and the price of the devices the plan uses.
struct RatedChoice {
  std::vector<int> devices;
  double throughput = 0; // samples per second
  double pricePerHour = 0;
};

/// A model's rate for every allocation the allocator may give.
struct RateTable {
  std::string model;
  /// Pareto-optimal choices: no other choice uses at most as many devices of
  /// every class and runs at least as fast. Sorted by throughput.
  std::vector<RatedChoice> choices;
  /// whole[c][g]: the best plan on g devices of GPU class c alone (g = 0..
  /// count; all zero for CPU classes): what a whole-GPU job runs at.
  std::vector<std::vector<double>> whole;
  int plansSolved = 0;
};

struct RateOptions {
  /// Measured layer times (heterps-profile), where a layer's name or
  /// signature is in it; null: the cost model for every layer.
  const cost::ProfileDatabase *profiles = nullptr;
  /// The cost model's options, calibrated by a profile run
  /// (cost::calibrate, heterps-profile --calibration); unset: defaults.
  std::optional<cost::CostOptions> costOptions;
  /// Budgets per class: 0, 1, 2, 4, ... up to the class count, and the count.
  /// At most this many budget vectors are solved (the grid is thinned
  /// per class from the coarsest end when it would be larger).
  int maxBudgets = 2000;
};

/// Enumerates budget vectors (devices per class on a power-of-two grid),
/// solves the exact placement (strategy dp, cluster counts set to the
/// budget, throughput target unreachable so the plan is the fastest one that
/// runs) for each, and keeps the Pareto front of what the plans really use.
llvm::Expected<RateTable> buildRateTable(const CtrModelSize &size,
                                         const cluster::ClusterSpec &cluster,
                                         const RateOptions &options = {});

/// A job of the priced mix.
struct PricedJob {
  std::string name;
  double submitTime = 0;
  int model = 0;    // index into ctrModelSizes()
  int gpuClass = 0; // the whole-GPU request: class and count
  int gpus = 1;
  double work = 0;     // samples
  double deadline = 0; // absolute seconds; 0: none (floor = work / (deadline
                       // - submit) is the throughput floor)
};

struct PricedMixOptions {
  int jobs = 40;
  double ratePerHour = 12;
  uint64_t seed = 1;
  /// Run time at the user's whole-GPU request, log-uniform in this range.
  double minHours = 0.25, maxHours = 3;
  /// Deadline = submit + slack x (run time at the request), slack uniform.
  double minSlack = 1.5, maxSlack = 3;
};

/// Poisson arrivals; sizes uniform; the request: a GPU class uniform over the
/// cluster's GPU classes and 1, 2 or 4 GPUs by size (capped by the class's
/// count); work = the request's rate x the drawn run time.
llvm::Expected<std::vector<PricedJob>>
generatePricedMix(const PricedMixOptions &options,
                  const cluster::ClusterSpec &cluster,
                  llvm::ArrayRef<RateTable> rates);

enum class PricedPolicy {
  WholeGpu, // FIFO, each job on its requested GPUs, held to the end
  MaxValue, // the allocator: most total normalised goodput
  MinCost,  // the allocator: least cost with every job's floor met
};

llvm::StringRef pricedPolicyName(PricedPolicy policy);
std::optional<PricedPolicy> parsePricedPolicy(llvm::StringRef name);

struct PricedSimOptions {
  PricedPolicy policy = PricedPolicy::MaxValue;
  double interval = 60;   // seconds between decisions
  double resizeCost = 30; // seconds without progress per (re)allocation
  double hysteresis = 0.02;
  double horizon = 0; // 0: 30 simulated days after the last arrival
};

struct PricedResult {
  std::string policy;
  int jobs = 0, completed = 0, queued = 0;
  double meanJct = 0, p99Jct = 0, makespan = 0;
  double cost = 0; // USD: devices held x price, restarts included
  int withDeadline = 0, metDeadline = 0;
  int rescales = 0, decisions = 0;
  double allocatorSeconds = 0;
  /// Device-seconds per class (utilisation = this / (count x makespan)).
  std::vector<double> deviceSeconds;
};

llvm::Expected<PricedResult> simulatePriced(const std::vector<PricedJob> &jobs,
                                            const cluster::ClusterSpec &cluster,
                                            llvm::ArrayRef<RateTable> rates,
                                            const PricedSimOptions &options);

std::string formatPricedJSON(const PricedResult &result,
                             const cluster::ClusterSpec &cluster,
                             int indent = 2);

} // namespace heterps::autoscale

#endif // HETERPS_AUTOSCALE_PRICEDWORKLOAD_H
