//===- Process.h - Child processes in process groups of their own -*- C++
//-*-===//
//
// The supervisor starts each attempt, and the autoscaler each supervisor, as
// a process group of its own: ending the group reaches every process in it
// (also stopped ones), and a signal to the parent's group (Ctrl-C) does not
// reach the children. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_JOBS_PROCESS_H
#define HETERPS_JOBS_PROCESS_H

#include "llvm/Support/Error.h"

#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace heterps::jobs {

struct SpawnOptions {
  /// stdout and stderr go here; stdin is /dev/null.
  std::string logPath;
  /// Append to the log rather than start it anew.
  bool appendLog = false;
  /// Set (or replaced) in the child's environment, which is otherwise the
  /// parent's.
  std::vector<std::pair<std::string, std::string>> environment;
  /// Left out of the child's environment.
  std::vector<std::string> unset;
};

/// Starts argv[0] (a path) with `argv` as the leader of a new process group;
/// returns its pid, or an error naming the program.
llvm::Expected<pid_t> spawnProcessGroup(const std::vector<std::string> &argv,
                                        const SpawnOptions &options);

/// Waits, up to `waitSeconds`, until no process of this machine (but the
/// caller) has `name`=`value` in its environment; returns whether none is
/// left.
bool waitForProcessesWithEnvironment(const std::string &name,
                                     const std::string &value,
                                     double waitSeconds);

/// Starts argv[0] (a path) with `argv` as the leader of a new process group
/// tied to the caller: ended by SIGTERM should the caller die (even by
/// SIGKILL; PR_SET_PDEATHSIG), its stdin /dev/null and its output the
/// caller's (options.logPath is not used). Returns its pid, or an error
/// naming the program; a program that cannot be executed exits 127.
llvm::Expected<pid_t>
spawnTiedProcessGroup(const std::vector<std::string> &argv,
                      const SpawnOptions &options);

/// SIGKILLs every process of this machine whose environment holds
/// `name`=`value` exactly (stopped ones too; never the caller) and waits,
/// up to `waitSeconds`, until none is left; returns how many it signalled.
/// What a supervisor that was killed left running carries the job's own
/// directories in its environment, whatever its process group.
int killProcessesWithEnvironment(const std::string &name,
                                 const std::string &value,
                                 double waitSeconds = 10);

} // namespace heterps::jobs

#endif // HETERPS_JOBS_PROCESS_H
