//===- Backend.h - What runs a job's ranks: mpirun or Slurm -----*- C++ -*-===//
//
// The supervisor (Supervisor.h) decides when a job starts, stops and in
// which shape; a backend carries it out on a cluster engine. One attempt
// at a time: start() launches `heterps launch` (which runs the MPMD mpirun
// job) either as a local process group (mpirun) or as a batch job
// (Slurm), poll() reports how it is doing, terminate() ends every rank.
// Plain C++, no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_JOBS_BACKEND_H
#define HETERPS_JOBS_BACKEND_H

#include "heterps/Jobs/JobSpec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heterps::jobs {

struct LaunchRequest {
  int attempt = 0;
  JobShape shape;
  /// The program and its arguments: `heterps launch BUNDLE ...`.
  std::vector<std::string> command;
  /// Added to the environment of the launch and of every rank.
  std::vector<std::pair<std::string, std::string>> environment;
  /// The job's heartbeat directory, which that environment names to every
  /// process of the attempt (endAttemptProcesses finds them by it).
  std::string heartbeatDirectory;
  std::vector<std::string> excludedHosts;
  /// Where the attempt's output goes (the launcher's and every rank's).
  std::string logPath;
};

/// One rank's end as the launcher reported it, or a host lost whole (its
/// launcher daemon gone: mpiRank -1).
struct RankExit {
  int mpiRank = -1;
  std::string host;
  int signal = 0;   // 0: it exited
  int exitCode = 0; // when it exited
};

enum class AttemptState { Running, Succeeded, Failed };

struct AttemptStatus {
  AttemptState state = AttemptState::Running;
  /// The launcher's exit code (mpirun's, or the batch job's); -1 if
  /// unknown.
  int exitCode = -1;
  /// The cluster engine's word for how it ended, e.g. "NODE_FAIL".
  std::string engineState;
};

class Backend {
public:
  virtual ~Backend();
  virtual BackendKind kind() const = 0;
  /// Starts an attempt; an error names the command that failed.
  virtual llvm::Error start(const LaunchRequest &request) = 0;
  virtual AttemptStatus poll() = 0;
  /// Ends every rank of the running attempt (a no-op when none runs) and
  /// waits until they are gone.
  virtual void terminate() = 0;
  /// How many ranks the cluster can place now without `excluded` hosts;
  /// nullopt: no limit known (one machine).
  virtual std::optional<int>
  capacity(const std::vector<std::string> &excluded) = 0;
  /// The engine's identity of the running attempt (a process group, a
  /// Slurm job id), for the report.
  virtual std::string attemptId() const = 0;
};

/// How `heterps launch` begins its error when the MPI job it ran failed
/// (a rank said why before it); the supervisor looks past it for the
/// rank's own error. Its other errors come before any rank starts.
inline constexpr llvm::StringLiteral kLaunchedJobFailed = "the MPI job failed";

/// One line of an mpirun hostfile: "host slots=N" (1 when left out).
struct HostSlots {
  std::string host;
  int slots = 1;
  std::string line;
};

/// The hosts of an mpirun hostfile ('#' starts a comment); an error names
/// the file and the line of a slot count that is not 1 to kMostRanks, or a
/// file that names no host.
llvm::Expected<std::vector<HostSlots>> readHostfile(const std::string &path);

/// Runs attempts as a local process group; with a hostfile, mpirun places
/// the ranks on its hosts (excluded ones are left out of the hostfile it
/// gets).
/// Fails naming the hostfile and line where one is malformed.
llvm::Expected<std::unique_ptr<Backend>>
makeMpirunBackend(const BackendSpec &spec, const std::string &jobDirectory);

/// Runs attempts as Slurm batch jobs whose script runs the launch inside
/// the allocation; fails at once, naming the command, when the controller
/// cannot be reached.
llvm::Expected<std::unique_ptr<Backend>>
makeSlurmBackend(const BackendSpec &spec, const std::string &jobName,
                 const std::string &jobDirectory);

/// Ends what the attempt `engineId` (Backend::attemptId, as a job's
/// state.json records it) still runs after its supervisor was killed: for
/// a Slurm job, the batch job; on one machine, every process whose
/// environment names the job's `heartbeatDirectory` (the launch, mpirun
/// and the ranks here; ranks on other hosts end when their daemon loses
/// mpirun). With no id (a damaged state.json), the Slurm batch jobs of
/// `jobDirectory` too. A message saying what was ended, empty when nothing
/// was left.
std::string endLeftoverAttempt(const std::string &engineId,
                               const std::string &jobDirectory,
                               const std::string &heartbeatDirectory);

/// The ids of the Slurm jobs still queued or running whose batch script is
/// `jobDirectory`'s: none where Slurm's client is missing or cannot answer.
std::vector<std::string> slurmJobsOfDirectory(const std::string &jobDirectory);

/// SIGKILLs every process of this machine whose environment names
/// `heartbeatDirectory` as HETERPS_HEARTBEAT_DIR: the launch, mpirun and the
/// ranks of an attempt, whatever their process group; returns how many.
int endAttemptProcesses(const std::string &heartbeatDirectory);

/// SIGKILLs Slurm job `jobId` and every step of it, and waits (at most
/// `waitSeconds`) until Slurm says it ended; returns whether it did. Until
/// then its batch shell and ranks may still write into the job directory
/// (a stop file after the next attempt removed it stopped that attempt).
bool cancelSlurmJob(const std::string &jobId, double waitSeconds = 30);

/// The rank ends a launcher's output reports: mpirun's "process rank R ...
/// exited on signal N", "Process name: [[J,1],R] Exit code: C",
/// "MPI_ABORT was invoked on rank R", "Remote daemon: ... on node H" (a
/// lost host) and srun's "task R: Killed".
std::vector<RankExit> parseLauncherOutput(const std::string &text);

} // namespace heterps::jobs

#endif // HETERPS_JOBS_BACKEND_H
