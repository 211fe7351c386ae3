//===- Service.h - The autoscaler service (heterps elastic serve) -*- C++ -*-=//
//
// `heterps elastic serve` (docs/Autoscaler.md, "The service"): a long-running
// process that owns a state directory, admits the jobs submitted there, runs
// each as a supervised `heterps job run`, and re-plans the cluster's worker
// slots with `allocate` on every arrival, completion, failure and interval,
// resizing running jobs through their resize-request protocol. Its state is
// one JSON file rewritten atomically, so a killed service restarted on the
// same directory adopts its jobs instead of starting them again.
//
// Plain C++: planning (planAllocation) is a pure function for unit tests;
// ServiceLoop does the files and processes.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_AUTOSCALE_SERVICE_H
#define HETERPS_AUTOSCALE_SERVICE_H

#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace heterps::autoscale {

/// One measured speed of a job: steps per second in one shape.
struct RateSample {
  int workers = 0;
  int64_t batch = 0;
  double stepsPerSecond = 0;
};

/// A job the service knows, as its state file keeps it.
struct ServiceJob {
  std::string id, name;
  std::string jobFile; // the submitted file (absolute)
  int64_t microBatch = 0;
  /// Parameter-server shards: a fixed count that takes slots beside the
  /// workers (each rank is one slot on every backend).
  int shards = 0;
  /// The job's length in samples (0: unknown).
  int64_t samples = 0;
  /// Its gradient noise scale in samples (0: unknown; see goodput).
  double noiseScale = 0;
  int minWorkers = 1, maxWorkers = 1, initialWorkers = 1;
  int64_t minBatch = 0, maxBatch = 0, initialBatch = 0;
  /// queued, running, succeeded, failed, cancelled.
  std::string phase = "queued";
  std::string reason; // why queued, or how it ended
  int workers = 0;    // the allocation (0: none)
  int64_t batch = 0;
  int pid = 0;    // its `heterps job run` process
  int starts = 0; // how many times the service started it (should be 1)
  /// How often its supervisor ended without a report (killed) and the
  /// service started it again.
  int supervisorLosses = 0;
  int resizes = 0;
  std::string pendingResize; // id of a resize not yet applied
  bool cancelRequested = false;
  double submittedAt = 0, startedAt = 0, endedAt = 0;
  /// Measured speeds, newest per shape.
  std::vector<RateSample> rates;
  /// The first step seen in the current shape and when (for the rate).
  int64_t shapeStep = -1;
  double shapeTime = 0;
  /// Measured pauses: start to first step, each resize request to the
  /// first step after it, and the last step to the end of the job (what
  /// predictService charges).
  double startupSeconds = 0, finishSeconds = 0;
  std::vector<double> resizePauses;
  /// When the newest start or resize was asked for, until its first step
  /// is seen (0: none outstanding), and the step it left off at.
  double pauseSince = 0;
  int64_t pauseStep = 0;
  bool pauseIsStart = false;
  /// The newest step seen and when it was first seen.
  int64_t lastStep = 0;
  double lastStepAt = 0;
  /// The job as submitted: its description, none of what running it
  /// recorded (phase queued, no allocation, measurement or pause).
  ServiceJob description() const;
  /// Records the speed measured in the current shape (the newest wins).
  void recordRate(double stepsPerSecond);
  /// Slots a shape takes.
  int slots(int workerCount) const { return workerCount + shards; }
  bool active() const { return phase == "running"; }
  bool finished() const {
    return phase == "succeeded" || phase == "failed" || phase == "cancelled";
  }
};

/// One line of the decision log.
struct Decision {
  double time = 0;
  std::string job;
  std::string action; // start, resize, queue, end, plan
  int workers = 0;
  int64_t batch = 0;
  std::string reason;
  double predictedGain = 0;
  std::string describe() const;
};

struct ServiceState {
  std::vector<ServiceJob> jobs;
  std::vector<Decision> decisions;
  double lastPlan = 0;
  /// The service's settings at its last plan (what predictService replays).
  int capacity = 0;
  double intervalSeconds = 0, resizeCostSeconds = 0;
  ServiceJob *find(const std::string &id);
};

std::string serviceStateJson(const ServiceState &state);
llvm::Expected<ServiceState> parseServiceState(const std::string &json);

/// Whether steps seen over a window in one shape measure its speed: a
/// second and ten steps at least (start-up noise aside, short jobs still
/// get measured). The service and its replay share the rule.
inline bool measuresRate(double seconds, int64_t steps) {
  return seconds >= 1 && steps >= 10;
}

/// The throughput model: samples/s of a job in (workers, batch), up to a
/// per-job constant. One step takes overhead + batch / workers (in units of
/// one sample's compute); the overhead is fitted by least squares from the
/// measured speeds when they cover two different samples-per-worker, else
/// it is the prior: a tenth of a step at the initial shape (nearly linear
/// scaling, slightly concave so that sharing slots is worth something).
double modelRate(const ServiceJob &job, int workers, int64_t batch);

/// Progress per sample at `batch` relative to the job's initial batch
/// (statistical efficiency, as Pollux models it): (noise + initial) /
/// (noise + batch), with the job's gradient noise scale, or the initial
/// batch when it is unknown (a larger batch must then be 1.5x as fast at
/// twice the batch to pay).
double statisticalEfficiency(const ServiceJob &job, int64_t batch);

/// What the plan maximises: modelRate x statisticalEfficiency.
double modelGoodput(const ServiceJob &job, int workers, int64_t batch);

/// The median of measured seconds; -1 when there are none.
double medianSeconds(std::vector<double> seconds);

/// What a resize costs the plan: the median resize pause measured so far
/// across the state's jobs, or `configured` (--resize-cost) before any.
double chargedResizeCost(const ServiceState &state, double configured);

struct PlanOptions {
  int capacity = 0; // slots: one per worker or shard
  double reallocationPenalty = 0;
  double hysteresis = 0.05;
  /// How many batches each job may choose from (evenly in its range, whole
  /// micro-batches).
  int batchChoices = 3;
};

/// What one re-plan decides for each job it may move: its new allocation
/// (workers 0: stays queued, with the reason).
struct PlannedJob {
  std::string id;
  int workers = 0;
  int64_t batch = 0;
  double valueBefore = 0, valueAfter = 0;
  std::string reason;
};

struct Plan {
  std::vector<PlannedJob> jobs; // queued and running jobs, in state order
  double valueBefore = 0, valueAfter = 0;
  int capacity = 0, used = 0;
};

/// Builds the allocation request from the queued and running jobs and calls
/// `allocate`. A running job that cannot be moved now (a resize under way)
/// keeps its shape and its slots.
Plan planAllocation(const ServiceState &state, const PlanOptions &options);

struct ServiceOptions {
  std::string stateDirectory;
  std::string heterps;           // the executable to run `job run` with
  std::string backend = "local"; // local or slurm
  int capacity = 0;              // local: worker slots; slurm: 0 = ask sinfo
  double intervalSeconds = 60, resizeCostSeconds = 1;
  double pollSeconds = 0.5;
};

/// Files of a state directory.
struct ServiceFiles {
  explicit ServiceFiles(const std::string &directory);
  std::string directory, state, inbox, jobs, jobFiles, lock, log;
  /// Submitters take ids under submitLock; issuedIds lists every id ever
  /// handed out, one a line.
  std::string submitLock, issuedIds;
  std::string jobDirectory(const std::string &id) const;
};

/// A submission as `heterps elastic submit` writes it into the inbox.
std::string submissionJson(const ServiceJob &job);
llvm::Expected<ServiceJob> parseSubmission(const std::string &json);

/// Writes a submission (or a cancel request) into the inbox; returns the id.
llvm::Expected<std::string> submitJob(const std::string &stateDirectory,
                                      ServiceJob job);
llvm::Error requestCancel(const std::string &stateDirectory,
                          const std::string &id);

/// The service's loop; runs until `stop` is set. Returns an error when the
/// state directory cannot be used (another service holds it, an unreadable
/// state file).
llvm::Error runService(const ServiceOptions &options, std::ostream &log,
                       const std::atomic<bool> &stop);

/// The Slurm cluster's CPUs in nodes that are up (`sinfo -h -N -o '%N %T
/// %c'`), or an error.
llvm::Expected<int> slurmCapacity();

/// The most slots a service shares (--capacity, a hostfile): its dynamic
/// program's tables grow with them, and a billion ran out of memory.
inline constexpr int64_t kMostServiceSlots = 65536;

/// What a state file's times (seconds since the epoch), durations and
/// measured rates may hold; past them a state is refused when read.
inline constexpr double kMostStateTime = 1e11;
inline constexpr double kMostStateDuration = 1e9;
inline constexpr double kLeastStepsPerSecond = 1e-9;

/// The sum of "host slots=N" lines of a hostfile.
llvm::Expected<int> hostfileCapacity(const std::string &path);

} // namespace heterps::autoscale

#endif // HETERPS_AUTOSCALE_SERVICE_H
