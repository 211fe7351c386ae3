//===- FaultInjection.h - Faults a test asks a rank to have ----*- C++ -*-===//
//
// HETERPS_FAULT=<spec>[;<spec>...] makes ranks of a training job fail on
// purpose, for tests and demonstrations of a supervisor
// (docs/Distributed.md, "Liveness and fault injection"):
//
//   kill:ROLE:R@S    rank R of ROLE (worker, shard, stage) SIGKILLs itself
//   hang:ROLE:R@S    ... SIGSTOPs itself (it stays, its heartbeat stops)
//   exit:ROLE:R@S    ... exits with code 3
//   kill-host:H@S    every rank whose host (rankHost()) is H kills itself
//
// once it has finished step S: a worker when the step is trained (and
// checkpointed, where that step writes a checkpoint), a shard when it has
// applied it, a stage rank when it has pushed it. Before acting the rank
// prints one line on stderr. The parser is public so a launcher can refuse
// a malformed variable before it starts anything.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_FAULTINJECTION_H
#define HETERPS_RUNTIME_FAULTINJECTION_H

#include "heterps/Runtime/Heartbeat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace heterps::rt::train {

enum class FaultAction { Kill, Hang, Exit };

/// The exit code of an `exit` fault.
constexpr int kFaultExitCode = 3;

/// One spec of HETERPS_FAULT.
struct FaultSpec {
  FaultAction action = FaultAction::Kill;
  /// The rank it names (unused when `host` is set).
  RankRole role = RankRole::Worker;
  int index = 0;
  /// kill-host: every rank on this host; else empty.
  std::string host;
  /// The step after which the rank acts (at least 1).
  int64_t step = 1;
  /// As written, for messages.
  std::string text;

  /// Whether it names the rank `index` of `role` running on `rankHost`.
  bool names(RankRole role, int index, const std::string &rankHost) const;
};

/// The specs of `text` (separated by ';'; blanks around them and empty ones
/// are ignored). Throws Error naming the first malformed spec and what a
/// spec looks like.
std::vector<FaultSpec> parseFaultSpecs(const std::string &text);

/// The ranks of a job, by role.
struct RankCounts {
  int workers = 1, shards = 0, stages = 0;
  /// The counts are the most a job may run (a supervisor's range).
  bool atMost = false;
};

/// Throws Error naming the first spec that names a rank past `ranks` (it
/// would never fire, and a test that meant it would pass without it) or
/// that is given twice (each fires once). `source` starts the message
/// ("environment variable HETERPS_FAULT: ", "--inject ").
void checkFaultsFitRanks(const std::vector<FaultSpec> &specs,
                         const RankCounts &ranks, const std::string &source);

/// Throws Error, as every rank would at start-up, for a malformed
/// HETERPS_FAULT or HETERPS_HEARTBEAT_INTERVAL_MS: a launcher checks once.
void checkLivenessEnvironment();

/// The faults of one rank.
class FaultInjector {
public:
  /// The specs of HETERPS_FAULT that name this rank; throws Error (naming
  /// the variable) when one is malformed.
  static FaultInjector fromEnvironment(RankRole role, int index);
  FaultInjector(RankRole role, int index, const std::string &host,
                const std::vector<FaultSpec> &specs);

  /// This rank has finished step `step`: does what a spec for that step
  /// says (the process dies, stops or exits) after its line on stderr and
  /// after `heartbeat` has written that step.
  void stepFinished(int64_t step, Heartbeat &heartbeat) const {
    if (!mine.empty())
      act(step, heartbeat);
  }
  bool empty() const { return mine.empty(); }
  /// This rank's specs for steps after `lastStep`: a run that ends there
  /// never fires them.
  std::vector<FaultSpec> after(int64_t lastStep) const;

  /// "<spec>: <role> <index> on <host> kills itself after step <S>".
  std::string describe(const FaultSpec &spec) const;

private:
  void act(int64_t step, Heartbeat &heartbeat) const;

  RankRole role;
  int index;
  std::string host;
  std::vector<FaultSpec> mine;
};

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_FAULTINJECTION_H
