//===- Trace.h - Measured job traces and the job model ----------*- C++ -*-===//
//
// Reads the measured traces of the Pollux (OSDI'21) artifact
// (../shared/traces/pollux-osdi21: per application placements.csv,
// scalability.csv, validation-B.csv; workloads; peers' published JCTs) and
// models a job the way that study's simulator does: step time per placement
// and local batch, statistical efficiency (gain) per global batch and epoch,
// goodput = gain / step time, and a job's work as the progress of its last
// epoch. Plain C++ over LLVM Support: no MLIR types. docs/Autoscaler.md,
// section "The simulator", lists where the model differs from the study's.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_AUTOSCALE_TRACE_H
#define HETERPS_AUTOSCALE_TRACE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace heterps::autoscale {

//===----------------------------------------------------------------------===//
// Raw trace files
//===----------------------------------------------------------------------===//

/// One row of placements.csv or scalability.csv.
struct StepSample {
  int nodes = 0;
  int replicas = 0;
  int localBatch = 0;
  double stepTime = 0; // seconds per iteration
  double syncTime = 0; // the gradient-synchronisation part of stepTime
};

/// One row of validation-B.csv.
struct ValidationRow {
  double progress = 0; // samples, scaled by statistical efficiency
  int64_t iteration = 0;
  double metric = 0;
  double gradSqr = 0;
  double gradVar = 0;
};

/// The files of one application (traces/APP/).
struct ApplicationTrace {
  std::string name;
  /// DIR/APP, where it was read from (empty for traces built in memory).
  std::string directory;
  /// placements.csv by placement string as written ("1", "22", "4444").
  std::map<std::string, std::vector<StepSample>> placements;
  std::vector<StepSample> scalability;
  /// validation-B.csv by global batch B.
  std::map<int64_t, std::vector<ValidationRow>> validation;
};

/// Reads DIR/APP/{placements,scalability,validation-*}.csv. Errors name the
/// file and line.
llvm::Expected<ApplicationTrace> readApplicationTrace(llvm::StringRef tracesDir,
                                                      llvm::StringRef app);

/// The parsers behind readApplicationTrace, on text (`file` names it in
/// errors).
llvm::Error parsePlacements(llvm::StringRef text, llvm::StringRef file,
                            ApplicationTrace &trace);
llvm::Error parseScalability(llvm::StringRef text, llvm::StringRef file,
                             ApplicationTrace &trace);
llvm::Expected<std::vector<ValidationRow>>
parseValidation(llvm::StringRef text, llvm::StringRef file);

//===----------------------------------------------------------------------===//
// Workloads
//===----------------------------------------------------------------------===//

/// One job of a workload (workloads/workload-N.csv).
/// The latest submit time a workload may hold, in seconds (3.2 years): the
/// simulators step through every interval up to it.
inline constexpr double kMostSubmitSeconds = 1e8;

struct WorkloadJob {
  std::string name;
  double submitTime = 0; // seconds from the start
  std::string application;
  int gpus = 0;      // what the user asked for
  int64_t batch = 0; // the user's global batch
};

/// Parses a workload (header name,time,application,num_replicas,batch_size,
/// columns in any order). Errors name the file, line and column.
llvm::Expected<std::vector<WorkloadJob>> parseWorkload(llvm::StringRef text,
                                                       llvm::StringRef file);
llvm::Expected<std::vector<WorkloadJob>> readWorkload(llvm::StringRef path);
/// The CSV parseWorkload reads.
std::string formatWorkload(const std::vector<WorkloadJob> &jobs);

/// The six applications of the traces, in a fixed order.
llvm::ArrayRef<llvm::StringRef> traceApplications();

/// A synthetic workload: Poisson arrivals at `ratePerHour`, applications
/// drawn by `mix` (weights; empty: the shares of the eight Philly workloads),
/// each with a (GPUs, batch) request the Philly workloads use for it.
struct GeneratorOptions {
  int jobs = 160;
  double ratePerHour = 20;
  uint64_t seed = 1;
  std::map<std::string, double> mix;
};
llvm::Expected<std::vector<WorkloadJob>>
generateWorkload(const GeneratorOptions &options);

/// peer-results/POLICY-load1.0.json: per-job completion times.
struct PeerResults {
  /// workload name ("workload-1") -> job name -> JCT in seconds.
  std::map<std::string, std::map<std::string, double>> jcts;
  double mean = 0; // the file's "mean": the mean over workloads of the means
};
llvm::Expected<PeerResults> readPeerResults(llvm::StringRef path);

//===----------------------------------------------------------------------===//
// The job model
//===----------------------------------------------------------------------===//

struct StepTime {
  double step = 0;
  double sync = 0;
};

/// How a global batch runs on a number of replicas: per-GPU (atomic) batch
/// and gradient-accumulation steps, as the study's simulator splits it.
struct BatchConfig {
  int atomicBatch = 0;
  int accumSteps = 0;  // extra micro-steps before each synchronisation
  int64_t batch = 0;   // the global batch actually run
  double stepTime = 0; // seconds per optimizer step (all micro-steps)
};

/// An application's measured behaviour, with the study's rules.
class ApplicationModel {
public:
  /// Applies the per-application rules (epochs: bert 2, cifar10 100, ncf 10,
  /// imagenet 90, deepspeech2 80, yolov3 50; yolov3's local batch <= 8).
  static llvm::Expected<ApplicationModel> create(ApplicationTrace trace);
  static llvm::Expected<ApplicationModel> load(llvm::StringRef tracesDir,
                                               llvm::StringRef app);

  const std::string &name() const { return trace.name; }
  /// The smallest and largest validated global batch.
  int64_t initBatch() const { return trace.validation.begin()->first; }
  int64_t maxBatch() const { return trace.validation.rbegin()->first; }
  int minLocalBatch() const { return minLocal; }
  int maxLocalBatch() const { return maxLocal; }
  int maxEpochs() const { return epochs; }
  const ApplicationTrace &traces() const { return trace; }

  /// Progress (samples) at the end of epoch e (0 for e = 0): the smallest
  /// `progress` of row e-1 over the validation files.
  double progressAt(int epoch) const;
  /// The job's work: the progress at the end of its last epoch.
  double totalWork() const { return progressAt(epochs); }

  /// Step time on a placement (replicas per node; zeros ignored) at a local
  /// batch: linear in the local batch over placements.csv when the placement
  /// (up to rotation) was measured, else interpolated over (nodes, replicas
  /// per node, local batch); see docs/Autoscaler.md.
  StepTime stepTime(llvm::ArrayRef<int> placement, int localBatch) const;
  /// (grad_sqr, grad_var) during `epoch` (row index) at a global batch,
  /// linear between the validated batches around it (clamped outside).
  std::pair<double, double> gradStats(double batch, int epoch) const;
  /// Statistical efficiency: (var + sqr) / (var / s + sqr), s = batch /
  /// initBatch().
  double gain(double batch, int epoch) const;
  /// The split of a global batch over the placement's replicas.
  BatchConfig configure(llvm::ArrayRef<int> placement, int64_t batch) const;
  /// Progress per second: gain(config.batch, epoch) / config.stepTime.
  double goodput(llvm::ArrayRef<int> placement, int64_t batch, int epoch) const;

private:
  ApplicationModel() = default;
  StepTime interpolateGrid(int nodes, int replicas, int localBatch) const;

  ApplicationTrace trace;
  int minLocal = 0, maxLocal = 0, epochs = 0;
  std::vector<double> epochProgress; // progressAt(e), e = 0..epochs
  /// Measured placements, normalised to their smallest rotation.
  std::map<std::string, std::vector<StepSample>> byPlacement;
  /// (nodes, replicas) -> samples by local batch: placements (averaged over
  /// placements with the same counts) and scalability together.
  std::map<int, std::map<int, std::vector<StepSample>>> grid;
  /// stepTime is called millions of times per simulation with few distinct
  /// arguments.
  mutable std::unordered_map<std::string, StepTime> cache;
};

/// Models of all applications under a traces directory
/// (pollux-osdi21/traces), by name.
using ApplicationModels =
    std::map<std::string, std::shared_ptr<ApplicationModel>>;
llvm::Expected<ApplicationModels>
loadApplicationModels(llvm::StringRef tracesDir);

/// Replicas per node when `gpus` GPUs fill whole nodes first: 10 on 4-GPU
/// nodes -> {4, 4, 2}.
std::vector<int> packedPlacement(int gpus, int gpusPerNode);

} // namespace heterps::autoscale

#endif // HETERPS_AUTOSCALE_TRACE_H
