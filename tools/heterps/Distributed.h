//===- Distributed.h - heterps launch, ps-shard, run --mpi-worker -*- C++ -*-//
//
// The driver's side of multi-process training (docs/Distributed.md):
//
//   heterps launch BUNDLE [--workers W] [--ps-shards S] [--hostfile FILE]
//                  [--mpirun PATH] [--mpirun-arg ARG]... [--dry-run]
//                  [--slurm-multi-prog FILE]
//                  [--consistency sync|async [--staleness K]]
//                  [--stage-ranks] -- <flags of run --train>
//   heterps ps-shard BUNDLE [--storage-dir DIR] [--consistency ...]
//                                                   (a shard rank)
//   heterps run BUNDLE --train ... --mpi-worker [--consistency ...]
//                                                   (a worker rank)
//   heterps stage-rank BUNDLE [--consistency ...]   (a stage rank)
//
// `launch` builds one MPMD command, S shard ranks then W worker ranks (then,
// with --stage-ranks, one rank per stage replica), and
// runs it (its exit code is the job's), prints it (--dry-run) or writes it
// as an `srun --multi-prog` configuration.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_TOOLS_HETERPS_DISTRIBUTED_H
#define HETERPS_TOOLS_HETERPS_DISTRIBUTED_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace heterps::rt::train {
class WorkerGroup;
} // namespace heterps::rt::train

namespace heterps::driver {

/// --consistency and --staleness: how a job's workers see each other's
/// updates (MpiTraining.h). Every rank of a job gets the same.
struct ConsistencyOptions {
  bool asynchronous = false;
  /// Asynchronous only: steps a worker may run ahead of the slowest (< 0:
  /// no bound).
  int64_t staleness = 0;
  /// "synchronous" or "asynchronous, staleness K".
  std::string describe() const;
  /// The flags that give these options to a rank ({} for synchronous).
  std::vector<std::string> flags() const;
};

/// The default --staleness of an asynchronous job.
constexpr int64_t kDefaultStaleness = 2;

/// Checks --consistency (sync or async) and --staleness (async only, >= -1);
/// on a bad value returns nullopt and says why in `error`.
std::optional<ConsistencyOptions> parseConsistency(const std::string &mode,
                                                   int64_t staleness,
                                                   bool stalenessGiven,
                                                   std::string &error);

struct LaunchOptions {
  std::string bundle, hostfile, mpirun, slurmMultiProg;
  /// 0: from the bundle's plan.
  int workers = 0, shards = 0;
  bool dryRun = false;
  /// Passed to mpirun before the programs (e.g. --oversubscribe).
  std::vector<std::string> mpirunArgs;
  /// The flags of `heterps run BUNDLE --train` (after `--`).
  std::vector<std::string> runFlags;
  ConsistencyOptions consistency;
  /// One worker, and every stage replica of the bundle as a rank of its own.
  bool stageRanks = false;
  /// Checks the worker ranks' command line (program, then its arguments) as
  /// the `workers` workers will parse it, and the step it gives each;
  /// false when it would fail, having said why.
  std::function<bool(const std::vector<std::string> &, int workers)>
      checkWorkerCommand;
};

/// 0 when the job (or the dry run) succeeded, the job's exit code otherwise,
/// 1 for a launcher error.
int launch(const LaunchOptions &options);

struct PsShardOptions {
  std::string bundle, storageDirectory;
  ConsistencyOptions consistency;
};

/// Serves as one parameter-server shard of an MPI job until every worker is
/// done; 0 on success. An error ends the whole job (MPI_Abort) with exit 1.
int psShard(const PsShardOptions &options);

struct StageRankOptions {
  std::string bundle;
  ConsistencyOptions consistency;
};

/// Serves as one stage rank of an MPI job (launch --stage-ranks) until its
/// worker is done; 0 on success. An error ends the whole job with exit 1.
int stageRank(const StageRankOptions &options);

/// A worker rank of an MPI job, for `run --train --mpi-worker`.
class DistributedWorker {
public:
  /// Starts MPI and joins the job as a worker; throws rt::Error (also when
  /// this heterps was built without MPI).
  static std::unique_ptr<DistributedWorker>
  join(const ConsistencyOptions &consistency);
  virtual ~DistributedWorker();
  virtual rt::train::WorkerGroup &group() = 0;
  /// How this worker shares its machine with the job's other ranks there
  /// (threads, wait policy), for the log.
  virtual std::string machineShare() const = 0;
  /// After training succeeded: tells the shards this worker is done and
  /// finalises MPI.
  virtual void finish() = 0;
};

/// Ends the whole MPI job with `code` when MPI was started in this process
/// (so no rank waits forever on a failed one); otherwise returns.
void abortDistributedJob(int code);

/// A stream that drops everything: the log of workers other than the
/// leader, which print nothing of their own.
std::ostream &nullLog();

} // namespace heterps::driver

#endif // HETERPS_TOOLS_HETERPS_DISTRIBUTED_H
