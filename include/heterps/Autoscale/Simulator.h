//===- Simulator.h - Trace-driven simulation of a shared cluster -*- C++
//-*-===//
//
// A discrete-event simulator of a GPU cluster running a workload under an
// allocation policy, with the rules of the Pollux (OSDI'21) study's simulator
// (16 nodes x 4 GPUs, a policy decision every 60 s, 30 s without progress for
// every (re)allocation of a job, jobs arriving at their submission time) and
// the job model of Trace.h. Plain C++: no MLIR types. docs/Autoscaler.md,
// section "The simulator".
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_AUTOSCALE_SIMULATOR_H
#define HETERPS_AUTOSCALE_SIMULATOR_H

#include "heterps/Autoscale/Trace.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace heterps::autoscale {

enum class Policy {
  /// FIFO; each job runs on exactly the GPUs and batch it asked for, from
  /// start to end.
  Static,
  /// The allocator's program over GPU counts, each job's batch fixed at what
  /// it asked for (the baseline of Saxena et al.).
  FixedBatch,
  /// The allocator's program over GPU counts and batches, by goodput
  /// normalised per job, with the resize cost and hysteresis.
  Elastic,
  /// Elastic, with each job's value weighted by the inverse of its remaining
  /// time (shortest remaining time first, the mean-JCT optimal order).
  ElasticSRTF,
};

llvm::StringRef policyName(Policy policy);
std::optional<Policy> parsePolicy(llvm::StringRef name);
/// All policies, in the order the tables list them.
std::vector<Policy> allPolicies();

struct SimulatorOptions {
  Policy policy = Policy::Elastic;
  int nodes = 16;
  int gpusPerNode = 4;
  double interval = 60;   // seconds between policy decisions
  double resizeCost = 30; // seconds without progress per (re)allocation
  /// Arrival-rate multiplier: job j arrives at time_j / load.
  double load = 1.0;
  /// Allocator hysteresis (fraction of the total value a move must gain).
  double hysteresis = 0.02;
  /// The DP policies' re-allocation penalty: Pollux's age-based factor
  /// (true), or resizeCost / interval for every job (false, as first
  /// built).
  bool ageBasedPenalty = true;
  /// Stop after this many simulated seconds (0: when every job is done, or
  /// after 30 simulated days).
  double horizon = 0;
  /// Largest GPU count a job may get (0: the cluster).
  int maxGpusPerJob = 0;
};

struct JobOutcome {
  std::string name;
  std::string application;
  double submitTime = 0;
  double startTime = -1;  // first allocation; -1: never ran
  double finishTime = -1; // -1: not finished
  double gpuSeconds = 0;
  int rescales = 0;   // re-allocations after the first start
  std::string reason; // why a job never finished ("" when it did)
};

struct SimulationResult {
  std::string policy;
  int jobs = 0;
  int completed = 0;
  /// Jobs that completed by the last arrival (the trace window).
  int completedInWindow = 0;
  double window = 0;
  int queuedOrDropped = 0;
  double meanJct = 0, p99Jct = 0, makespan = 0;
  /// Allocated GPU-seconds over cluster GPU-seconds until the makespan.
  double utilization = 0;
  int rescales = 0;
  int decisions = 0;           // policy intervals simulated
  double allocatorSeconds = 0; // wall time spent in allocate()
  std::vector<JobOutcome> outcomes;
};

/// Simulates `workload` on the cluster under `options.policy`. Errors: a job
/// of an application without a model, or options out of range.
llvm::Expected<SimulationResult>
simulate(const std::vector<WorkloadJob> &workload,
         const ApplicationModels &models, const SimulatorOptions &options);

/// The result as a JSON object (perJob: with every job's outcome).
std::string formatResultJSON(const SimulationResult &result, bool perJob,
                             int indent = 2);

} // namespace heterps::autoscale

#endif // HETERPS_AUTOSCALE_SIMULATOR_H
