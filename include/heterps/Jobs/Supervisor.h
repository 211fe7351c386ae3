//===- Supervisor.h - Keeps a training job alive and resizes it -*- C++ -*-===//
//
// `heterps job run` (docs/Jobs.md). The supervisor owns one job: it starts
// the job's ranks through a Backend, watches them (the launcher's exit and
// every rank's heartbeat file), and when a rank exits non-zero, is killed
// or hangs, it ends the others and starts again from the newest checkpoint
// that verifies, after an exponential back-off, up to max_restarts times.
// A host that keeps failing is left out and the job goes on with fewer
// workers, down to the job's minimum. A resize request (a file in the job
// directory, written by `heterps job resize`) makes the ranks checkpoint
// and stop at the next step boundary, and the job starts again in the new
// shape. At the end it writes what happened to JOBDIR/report.json.
//
// Plain C++: what needs the runtime (heartbeat files, checkpoint
// verification) comes in through JobProbe.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_JOBS_SUPERVISOR_H
#define HETERPS_JOBS_SUPERVISOR_H

#include "heterps/Jobs/Backend.h"
#include "heterps/Jobs/JobSpec.h"

#include "llvm/Support/JSON.h"

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace heterps::jobs {

/// What a rank last said in its heartbeat file.
struct RankHeartbeat {
  std::string role; // worker, shard, stage
  int index = 0;
  int pid = 0;
  std::string host;
  int64_t step = 0;
  double time = 0; // Unix seconds
};

struct CheckpointInfo {
  std::string path;
  int64_t step = 0, samples = 0;
  std::string position;
  double writtenAt = 0; // Unix seconds
};

/// The runtime's side of the job directory.
class JobProbe {
public:
  virtual ~JobProbe();
  virtual std::vector<RankHeartbeat>
  heartbeats(const std::string &directory) = 0;
  /// The newest checkpoint that verifies; a corrupt newer one is named in
  /// `warnings`, and so is any other trouble (nullopt then). Never throws
  /// (this library is built without exceptions): an error escaping ended
  /// the supervisor with the job mid-phase.
  virtual std::optional<CheckpointInfo>
  newestCheckpoint(const std::string &directory, std::string &warnings) = 0;
  /// Fault injection: damages the newest checkpoint's files; returns the
  /// damaged file.
  virtual llvm::Expected<std::string>
  corruptNewestCheckpoint(const std::string &directory) = 0;
};

/// Fault injection the supervisor carries out itself or hands the ranks.
/// One HETERPS_FAULT spec for the ranks, and the rank it names.
struct RankFault {
  enum class Rank { Worker, Shard, EveryRankOnHost };
  std::string spec; ///< As HETERPS_FAULT takes it: "kill:worker:1@30".
  Rank rank = Rank::Worker;
  int index = 0; ///< The worker's or shard's number.
};

struct InjectedFaults {
  /// Each fires once: a spec whose line "heterps: fault injection: SPEC:"
  /// is in an attempt's output is not given to later attempts, which redo
  /// its step. An attempt gets the specs whose rank it runs; the others
  /// wait for a shape that has it.
  std::vector<RankFault> rankFaults;
  /// Damage the newest checkpoint before the first restart.
  bool corruptCheckpointOnRestart = false;
};

/// The steady-state learning-rate schedule of one stretch of a job: the
/// scale, and a linear ramp to it from `warmupFrom` over steps
/// (warmupStart, warmupEnd].
struct LearningRateSchedule {
  double scale = 1;
  double warmupFrom = 1;
  int64_t warmupStart = 0, warmupEnd = 0;
  /// The scale at step `step`.
  double at(int64_t step) const;
  /// The `heterps run` flags that set it.
  std::vector<std::string> flags() const;
};

/// Where a supervisor before this one left the job (its state.json).
struct EarlierRun {
  JobShape shape;
  /// With the warm-up of its last batch change: kept only the scale, a
  /// job stopped mid-ramp came back at the full scale at once.
  LearningRateSchedule learningRate;
  int attempts = 0;
  /// The resize it was stopping the ranks for (its id and shape): the
  /// shape of the next attempt. Not recorded before 2026-12-02, so a
  /// supervisor killed mid-resize lost the resize.
  std::optional<std::pair<std::string, JobShape>> resizingTo;
};

/// Where a job's state.json leaves it; nullopt when it holds no shape.
/// The shape is checked against the job by the supervisor.
std::optional<EarlierRun> parseEarlierRun(const llvm::json::Object &state);

struct SupervisorOptions {
  std::string jobDirectory;
  /// The job's earlier supervisor, if any: this one goes on in its shape
  /// and numbers its attempts after the earlier ones.
  std::optional<EarlierRun> earlier;
  /// Start in the job file's initial shape even where an earlier supervisor
  /// left the job in another (--shape-from-job-file): the elastic service
  /// allocated that one, and a supervisor it restarted went back to the
  /// earlier shape, over the service's capacity.
  bool shapeFromJobFile = false;
  /// The heterps executable (for `heterps launch`).
  std::string heterps;
  int64_t microBatch = 0;
  InjectedFaults faults;
  /// Seconds between looks at the ranks.
  double pollSeconds = 0.2;
};

/// One end of a rank the supervisor saw.
struct FailureRecord {
  int attempt = 0;
  /// exit, signal, hang, host (a whole host was lost), lost (the attempt
  /// ended without a rank to blame), engine (the cluster engine ended it).
  std::string kind;
  std::string role;
  int index = -1, mpiRank = -1;
  std::string host;
  int signal = 0, exitCode = 0;
  int64_t step = -1; // the rank's last step
  std::string detail;
  int64_t resumedFromStep = 0, stepsRedone = 0;
  double secondsLost = 0;
  double detectedAt = 0;
};

struct AttemptRecord {
  int index = 0;
  JobShape shape;
  std::string engineId;
  double startedAt = 0, endedAt = 0;
  int64_t startStep = 0, endStep = 0;
  /// done, failure, resize, stop, preempted.
  std::string end;
  int exitCode = -1;
  std::vector<std::string> excludedHosts;
};

struct ResizeRecord {
  std::string id;
  JobShape from, to;
  int64_t atStep = 0;
  /// Request to the ranks' exit (checkpoint and stop), exit to the next
  /// attempt's first heartbeat (start), to its first finished step.
  double stopSeconds = 0, startSeconds = 0, firstStepSeconds = 0;
  double totalSeconds = 0;
  double learningRateScale = 1;
};

struct JobReport {
  std::string job, outcome; // succeeded, failed, stopped
  std::string message;
  std::vector<AttemptRecord> attempts;
  /// Attempts of the job's earlier supervisors (their logs are
  /// attempt-1.log on); `attempts` are this supervisor's, numbered after.
  int earlierAttempts = 0;
  std::vector<FailureRecord> failures;
  std::vector<ResizeRecord> resizes;
  std::vector<std::string> excludedHosts;
  std::vector<std::string> warnings;
  int restarts = 0;
  /// Attempts the engine stopped early (time limit, preemption) after a
  /// checkpoint; not restarts.
  int preemptions = 0;
  int64_t stepsRedone = 0;
  double secondsLost = 0, seconds = 0;
  int64_t samples = 0, steps = 0;
  std::string dataPosition, lastCheckpoint;
};

/// Writes the report as JSON.
std::string reportJson(const JobReport &report);

/// The delay before restart number `restart` (1-based).
double backoffSeconds(const RestartPolicy &policy, int restart);

/// Fits the wanted shape into `capacity` ranks: shards first, then as many
/// workers as fit; nullopt when fewer than the job's minimum of workers (or
/// shards) fit.
std::optional<JobShape> fitShape(const JobSpec &job, JobShape wanted,
                                 std::optional<int> capacity);

/// Where the files of a job directory are.
struct JobFiles {
  explicit JobFiles(std::string directory);
  std::string directory, checkpoints, heartbeats, stopFile, resizeRequest,
      state, report, lock;
  std::string attemptLog(int attempt) const;
  /// The highest K of the attempt-K.log files there (0: none).
  int lastAttemptLogged() const;
};

/// A resize request as `heterps job resize` writes it; fields left 0 keep
/// the job's current value.
struct ResizeRequest {
  std::string id;
  int workers = 0, shards = 0;
  int64_t batch = 0;
};
llvm::Expected<ResizeRequest> parseResizeRequest(const std::string &json);
std::string resizeRequestJson(const ResizeRequest &request);

class Supervisor {
public:
  Supervisor(JobSpec job, SupervisorOptions options, Backend &backend,
             JobProbe &probe, std::ostream &log);
  /// Runs the job to its end; the report is also written to
  /// JOBDIR/report.json. outcome "succeeded" when every sample trained.
  JobReport run();
  /// Asks the job to checkpoint and stop (a signal to the supervisor).
  void requestStop() { stopRequested = true; }

private:
  struct Impl;
  JobSpec job;
  SupervisorOptions options;
  Backend &backend;
  JobProbe &probe;
  std::ostream &log;
  std::atomic<bool> stopRequested{false};
};

/// Wall-clock Unix seconds.
double unixSeconds();

/// Writes `text` to `path` through a temporary and a rename.
llvm::Error writeFileAtomically(const std::string &path,
                                const std::string &text);

} // namespace heterps::jobs

#endif // HETERPS_JOBS_SUPERVISOR_H
