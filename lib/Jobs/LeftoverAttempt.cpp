//===- LeftoverAttempt.cpp - What a killed supervisor left running --------===//
//
// A supervisor killed with SIGKILL cannot end its attempt: the launch,
// mpirun and the ranks (or the Slurm batch job) go on training and writing
// checkpoints into the job directory. The next supervisor of the directory,
// and `heterps job stop`, end them before anything else.
//
//===----------------------------------------------------------------------===//

#include "heterps/Jobs/Backend.h"
#include "heterps/Jobs/Process.h"

#include "llvm/ADT/StringRef.h"

namespace heterps::jobs {

int endAttemptProcesses(const std::string &heartbeatDirectory) {
  // Every process the supervisor started carries the heartbeat directory:
  // found by it, whatever process group or parent it now has.
  return killProcessesWithEnvironment("HETERPS_HEARTBEAT_DIR",
                                      heartbeatDirectory);
}

/// "cancelled slurm job N, which its supervisor left running".
std::string cancelLeftoverSlurmJob(const std::string &jobId) {
  const bool ended = cancelSlurmJob(jobId);
  return "cancelled slurm job " + jobId +
         ", which its supervisor left running" +
         (ended ? "" : " (Slurm had not ended it after 30 s)");
}

std::string endLeftoverAttempt(const std::string &engineId,
                               const std::string &jobDirectory,
                               const std::string &heartbeatDirectory) {
  llvm::StringRef id(engineId);
  if (id.consume_front("slurm job ") && !id.empty())
    return cancelLeftoverSlurmJob(id.str());
  if (engineId.empty()) {
    // No record of the engine (state.json damaged): Slurm knows the job by
    // the batch script in its directory.
    std::string cancelled;
    for (const std::string &jobId : slurmJobsOfDirectory(jobDirectory))
      cancelled +=
          (cancelled.empty() ? "" : "; ") + cancelLeftoverSlurmJob(jobId);
    if (!cancelled.empty())
      return cancelled;
  }
  const int ended = endAttemptProcesses(heartbeatDirectory);
  if (ended == 0)
    return "";
  return "ended " + std::to_string(ended) + " process" +
         (ended == 1 ? "" : "es") + " of " +
         (engineId.empty() ? std::string("an attempt") : engineId) +
         ", which its supervisor left running";
}

} // namespace heterps::jobs
