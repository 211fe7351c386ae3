//===- Allocator.h - Devices and batch sizes across jobs --------*- C++ -*-===//
//
// The elastic autoscaler's optimizer: given jobs, each with a set of allowed
// (devices per class, global batch) choices and a value for each, pick at most
// one choice per job so that the devices fit the free capacity and the total
// value is largest (MaxValue) or the total price is lowest while every job's
// floor is met (MinCost). Plain C++: no MLIR types. See docs/Autoscaler.md,
// section "The allocator", for the formulation.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_AUTOSCALE_ALLOCATOR_H
#define HETERPS_AUTOSCALE_ALLOCATOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace heterps::autoscale {

/// One way to run a job for the next interval.
struct JobChoice {
  std::vector<int>
      devices;            // devices per device class (size = number of classes)
  int64_t batch = 0;      // global batch
  double value = 0;       // what the allocator maximises (the job's goodput,
                          // normalised per job by the caller)
  double costPerHour = 0; // price of the devices (cost objective)
};

struct AllocationJob {
  std::string id;
  std::vector<JobChoice>
      choices;      // the allowed (devices, batch) pairs; all devices>0
  int current = -1; // index of the choice it runs now; -1: not running
  double floor = 0; // MinCost: the least value it must get (its deadline or
                    // throughput floor); 0: none
  /// This job's AllocationRequest::reallocationPenalty where it is 0 or
  /// more (a penalty that depends on the job's age); below 0: the
  /// request's.
  double reallocationPenalty = -1;
};

enum class Objective { MaxValue, MinCost };

struct AllocationRequest {
  std::vector<AllocationJob> jobs;
  std::vector<int> capacity; // free devices per class
  Objective objective = Objective::MaxValue;
  /// Changing a running job's choice costs this fraction of its new choice's
  /// value over the planning interval (resize time / interval); a job that
  /// stays keeps its full value.
  double reallocationPenalty = 0;
  /// A running job moves only if that raises the total by more than this
  /// fraction (hysteresis).
  double hysteresis = 0;
  /// Optional names of the device classes, for reasons ("gpu.a"); empty:
  /// "class 0", "class 1", ...
  std::vector<std::string> classNames;
  /// Several classes: use the exact multi-dimensional program when the
  /// product of (capacity_c + 1) is at most this; above it, the Lagrangian
  /// heuristic. 0 forces the heuristic (tests, benchmarks).
  int64_t exactStateLimit = 200000;
  /// One class: the exact program keeps a choice table of jobs x
  /// (capacity + 1) cells; above this many, the Lagrangian heuristic (a
  /// simulation of 200,000 jobs on 262,144 GPUs asked for 52 GB and
  /// aborted).
  int64_t exactTableCells = int64_t(1) << 28;
};

/// Which algorithm produced a result (for tests, benchmarks and logs).
enum class AllocationMethod {
  Empty,         // no jobs or nothing fits
  SingleClassDP, // exact, one device class
  MultiClassDP,  // exact, several classes, small capacity product
  Lagrangian,    // several classes: prices + repair + improvement
  Exhaustive,    // allocateExhaustively
};

struct AllocationResult {
  std::vector<int>
      choice; // per job: index into its choices, -1: gets nothing (queued)
  double value = 0, costPerHour = 0;
  bool feasible = true; // MinCost: every floor met
  std::vector<std::string>
      reasons; // per job, why it got nothing ("" otherwise)
  /// Which algorithm ran.
  AllocationMethod method = AllocationMethod::Empty;
  /// Whether the hysteresis rule kept the running jobs where they are.
  bool keptCurrent = false;
  /// Devices used per class.
  std::vector<int> used;
  /// MaxValue: an upper bound on the best total value of any plan (the
  /// Lagrangian dual when the heuristic ran; with an exact method the best
  /// plan's value, which is `value` unless the running jobs were kept), so
  /// callers can see the optimality gap. MinCost: 0.
  double bound = 0;
};

/// The allocation for the next interval. `value` in the result is the
/// objective's total value including the reallocation penalty (a moved job
/// counts value * (1 - penalty)).
AllocationResult allocate(const AllocationRequest &request);

/// Exhaustive search, for tests (small instances only).
AllocationResult allocateExhaustively(const AllocationRequest &request);

/// The value a job earns from a choice under the request's penalty: its full
/// value if it stays on its current choice (or is new and the penalty applies
/// only to running jobs), value * (1 - penalty) if a running job changes.
double effectiveValue(const AllocationRequest &request, size_t job, int choice);

/// Pollux's re-allocation penalty for a job `age` seconds into its run that
/// was re-allocated `reallocations` times, each costing `delay` seconds:
/// 1 - (T - S d) / (T + d). A resize then pays for itself over the rest of
/// the run, not over one interval (a penalty of d / interval per resize
/// kept a job shrunk for an arrival at its smaller share after the other
/// ended). The simulator's DP policies price moves with it; the service
/// does not (docs/Autoscaler.md, "The service").
double reallocationPenaltyAfter(double age, int reallocations, double delay);

/// Checks a result against the request: one choice per job in range, devices
/// within capacity. Returns an empty string if valid, else what is wrong.
std::string validateAllocation(const AllocationRequest &request,
                               const AllocationResult &result);

} // namespace heterps::autoscale

#endif // HETERPS_AUTOSCALE_ALLOCATOR_H
