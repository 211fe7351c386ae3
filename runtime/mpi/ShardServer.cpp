//===- ShardServer.cpp - A parameter-server shard rank --------------------===//
//
// One loop: probe for the next request from any worker, handle it against
// the local ps::ParameterServer, reply with a non-blocking send. Replies are
// never sent with a blocking call, so a shard never waits on a worker and
// no cycle of ranks waiting on each other can form: a worker that sends to
// several shards always finds them receiving.
//
// In an asynchronous job an endStep is held back, not a pull: every shard
// sees every worker's endStep, so all shards agree on each worker's step,
// and a worker blocked in endStep issues no pull until it is released.
//
//===----------------------------------------------------------------------===//

#include "Comms.h"
#include "Protocol.h"

#include "heterps/Runtime/FaultInjection.h"
#include "heterps/Runtime/Heartbeat.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <list>
#include <omp.h>

namespace heterps::rt::mpi {
namespace {

namespace fs = std::filesystem;

/// A worker's pushes of the current step.
struct StepShare {
  struct Rows {
    std::vector<uint64_t> keys;
    std::vector<float> gradients;
  };
  std::map<std::string, Rows> rows;
  std::map<std::string, std::vector<float>> dense;
};

class Shard {
public:
  Shard(MpiJob &job, const ShardOptions &options)
      : job(job), comm(job.comms().ps),
        asynchronous(job.consistency().asynchronous()),
        staleness(job.consistency().staleness), shares(job.clients()),
        ended(job.clients(), false), gone(job.clients(), false),
        stepsDone(job.clients(), 0), server(config(job, options)),
        heartbeat(
            train::RankRole::Shard, job.index(),
            train::HeartbeatOptions::fromEnvironment(train::RankRole::Shard)),
        faults(train::FaultInjector::fromEnvironment(train::RankRole::Shard,
                                                     job.index())) {}

  void serve() {
    while (active()) {
      MPI_Status status;
      probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status);
      std::vector<char> message = receive(status, comm);
      const int worker = job.clientOf(status.MPI_SOURCE);
      if (worker < 0)
        throw Error("shard " + std::to_string(job.index()) +
                    " got a request from rank " +
                    std::to_string(status.MPI_SOURCE) +
                    ", which is neither a worker nor a stage rank");
      handle(worker, status.MPI_TAG, message);
      reapSends();
    }
    for (PendingSend &send : sends)
      checkMpi(MPI_Wait(&send.request, MPI_STATUS_IGNORE), "wait");
    sends.clear();
  }

private:
  static ps::ParameterServerConfig config(MpiJob &job,
                                          const ShardOptions &options) {
    ps::ParameterServerConfig config;
    config.numShards = std::max<size_t>(options.localShards, 1);
    if (!options.storageDirectory.empty())
      config.storageDirectory = (fs::path(options.storageDirectory) /
                                 shardCheckpointName(job.index()))
                                    .string();
    return config;
  }

  /// The steps this shard has applied are now `steps` (synchronous: every
  /// client's share of them; asynchronous: every client still here has
  /// ended them): the heartbeat says so and faults set for them happen.
  void stepsApplied(int64_t steps) {
    while (appliedSteps < steps) {
      ++appliedSteps;
      heartbeat.setStep(firstStep + appliedSteps);
      faults.stepFinished(firstStep + appliedSteps, heartbeat);
    }
  }

  bool active() const {
    for (bool done : gone)
      if (!done)
        return true;
    return false;
  }

  std::string where() const {
    return "parameter-server shard " + std::to_string(job.index()) + " (rank " +
           std::to_string(job.worldRank()) + ")";
  }

  void handle(int worker, int op, const std::vector<char> &message) {
    const std::string what = std::string(opName(op)) + " request of client " +
                             std::to_string(worker) + " to " + where();
    MessageReader in(message, what);
    MessageWriter out;
    out.put<uint8_t>(0);
    try {
      switch (op) {
      case kGoodbye:
        gone[worker] = true;
        // A worker that leaves no longer holds a step back.
        if (asynchronous) {
          releaseWorkers();
          stepsApplied(slowestClientSteps());
        } else {
          maybeFinishStep();
        }
        return; // no reply
      case kEndStep:
        if (ended[worker])
          throw Error("client " + std::to_string(worker) +
                      " ended a step twice");
        ended[worker] = true;
        if (asynchronous) {
          ++stepsDone[worker];
          releaseWorkers();
          stepsApplied(slowestClientSteps());
        } else {
          maybeFinishStep();
        }
        return; // answered when the step is applied or the worker may go on
      default:
        answer(worker, op, in, out);
      }
    } catch (const std::exception &error) {
      MessageWriter failure;
      failure.put<uint8_t>(1);
      failure.putString(where() + ": " + error.what());
      reply(worker, std::move(failure.bytes()));
      return;
    }
    reply(worker, std::move(out.bytes()));
  }

  void answer(int worker, int op, MessageReader &in, MessageWriter &out) {
    switch (op) {
    case kCreateTable: {
      ps::SparseTableConfig config = in.getTableConfig();
      auto found = tables.find(config.name);
      if (found == tables.end()) {
        server.createSparseTable(config);
        tables.emplace(config.name, config);
      } else if (found->second.dim != config.dim ||
                 found->second.seed != config.seed ||
                 found->second.initScale != config.initScale ||
                 found->second.optimizer.kind != config.optimizer.kind) {
        throw Error("sparse table '" + config.name +
                    "' is created by the workers with different dims, seeds "
                    "or optimizers (do all workers run the same bundle and "
                    "--seed?)");
      }
      return;
    }
    case kCreateDense: {
      std::string name = in.getString();
      ps::OptimizerConfig optimizer = in.getOptimizer();
      std::vector<float> initial = in.getArray<float>();
      auto found = denseSizes.find(name);
      if (found == denseSizes.end()) {
        denseSizes.emplace(name, initial.size());
        server.createDenseParam(name, std::move(initial), optimizer);
      } else if (found->second != initial.size()) {
        throw Error("dense parameter '" + name +
                    "' is created by the workers with different sizes");
      }
      return;
    }
    case kPull:
    case kPeek: {
      std::string table = in.getString();
      std::vector<uint64_t> keys = in.getArray<uint64_t>();
      std::vector<float> rows(keys.size() * server.tableConfig(table).dim);
      if (op == kPull)
        server.pull(table, keys.data(), keys.size(), rows.data());
      else
        server.peek(table, keys.data(), keys.size(), rows.data());
      out.putArray(rows);
      return;
    }
    case kPush: {
      std::string table = in.getString();
      std::vector<uint64_t> keys = in.getArray<uint64_t>();
      std::vector<float> gradients = in.getArray<float>();
      const size_t dim = server.tableConfig(table).dim;
      if (gradients.size() != keys.size() * dim)
        throw Error("push to '" + table + "' has " +
                    std::to_string(gradients.size()) + " values for " +
                    std::to_string(keys.size()) + " keys of dim " +
                    std::to_string(dim));
      if (asynchronous) {
        server.push(table, keys.data(), keys.size(), gradients.data());
        return;
      }
      StepShare::Rows &rows = shares[worker].rows[table];
      rows.keys.insert(rows.keys.end(), keys.begin(), keys.end());
      rows.gradients.insert(rows.gradients.end(), gradients.begin(),
                            gradients.end());
      return;
    }
    case kPullDense:
      out.putArray(server.pullDense(in.getString()));
      return;
    case kPullDenseMany:
      for (uint32_t n = in.get<uint32_t>(); n > 0; --n)
        out.putArray(server.pullDense(in.getString()));
      return;
    case kPushDenseMany:
      for (uint32_t n = in.get<uint32_t>(); n > 0; --n) {
        std::string name = in.getString();
        pushDense(worker, name, in.getArray<float>());
      }
      return;
    case kPushDense: {
      std::string name = in.getString();
      pushDense(worker, name, in.getArray<float>());
      return;
    }
    case kReadRows: {
      std::string table = in.getString();
      std::vector<uint64_t> keys = in.getArray<uint64_t>();
      for (uint64_t key : keys) {
        std::optional<std::vector<float>> row = server.readRow(table, key);
        out.put<uint8_t>(row ? 1 : 0);
        if (row)
          out.putArray(*row);
      }
      return;
    }
    case kReadDense:
      out.putArray(server.readDense(in.getString()));
      return;
    case kRowCount:
      out.put<uint64_t>(server.rowCount(in.getString()));
      return;
    case kSave:
      server.save((fs::path(in.getString()) / shardCheckpointName(job.index()))
                      .string());
      return;
    case kLearningRateScale:
      server.setLearningRateScale(in.get<float>());
      return;
    case kResumedAtStep:
      firstStep = in.get<int64_t>();
      heartbeat.setStep(firstStep + appliedSteps);
      return;
    case kLoad: {
      // The parts of a checkpoint of any shard count (one part: a
      // single-process run's); this shard takes what is routed to it now.
      std::vector<std::string> parts(in.get<uint32_t>());
      for (std::string &part : parts)
        part = in.getString();
      const size_t shards = job.shards(), self = job.index();
      ps::CheckpointSelection selection;
      selection.ownsKey = [shards, self](uint64_t key) {
        return shardOfKey(key, shards) == self;
      };
      selection.ownsDense = [shards, self](const std::string &name) {
        return shardOfDense(name, shards) == self;
      };
      server.loadParts(parts, selection);
      return;
    }
    default:
      throw Error("unknown request tag " + std::to_string(op));
    }
  }

  /// A dense gradient from `worker`: applied now (asynchronous) or added
  /// to the worker's share of the step.
  void pushDense(int worker, const std::string &name,
                 std::vector<float> gradient) {
    auto size = denseSizes.find(name);
    if (size == denseSizes.end())
      throw Error("no dense parameter '" + name + "'");
    if (gradient.size() != size->second)
      throw Error("dense parameter '" + name + "' has " +
                  std::to_string(size->second) + " values, gradient " +
                  std::to_string(gradient.size()));
    if (asynchronous) {
      server.pushDense(name, gradient);
      return;
    }
    auto [entry, inserted] =
        shares[worker].dense.try_emplace(name, std::move(gradient));
    if (!inserted) // a second push in one step adds to the first
      for (size_t i = 0; i < entry->second.size(); ++i)
        entry->second[i] += gradient[i];
  }

  /// Applies the step once every worker still here has ended it: the
  /// workers' shares are summed in worker order (dense) or concatenated in
  /// worker order (sparse; the server sums duplicate keys in that order and
  /// updates each row once), so the result does not depend on which worker
  /// was first.
  void maybeFinishStep() {
    bool any = false;
    for (size_t w = 0; w < ended.size(); ++w) {
      if (!ended[w] && !gone[w])
        return;
      any = any || ended[w];
    }
    if (!any)
      return;
    std::string failure;
    try {
      std::map<std::string, std::vector<float>> dense;
      std::map<std::string, StepShare::Rows> rows;
      for (StepShare &share : shares) {
        for (auto &[name, gradient] : share.dense) {
          auto [entry, inserted] = dense.emplace(name, gradient);
          if (!inserted)
            for (size_t i = 0; i < gradient.size(); ++i)
              entry->second[i] += gradient[i];
        }
        for (auto &[name, part] : share.rows) {
          StepShare::Rows &all = rows[name];
          all.keys.insert(all.keys.end(), part.keys.begin(), part.keys.end());
          all.gradients.insert(all.gradients.end(), part.gradients.begin(),
                               part.gradients.end());
        }
        share = StepShare();
      }
      for (auto &[name, gradient] : dense)
        server.pushDense(name, gradient);
      for (auto &[name, all] : rows)
        server.push(name, all.keys.data(), all.keys.size(),
                    all.gradients.data());
    } catch (const std::exception &error) {
      failure = where() + ": applying the step failed: " + error.what();
    }
    for (size_t w = 0; w < ended.size(); ++w) {
      if (!ended[w])
        continue;
      ended[w] = false;
      MessageWriter out;
      out.put<uint8_t>(failure.empty() ? 0 : 1);
      if (!failure.empty())
        out.putString(failure);
      reply(static_cast<int>(w), std::move(out.bytes()));
    }
    if (failure.empty())
      stepsApplied(appliedSteps + 1);
  }

  /// Asynchronous jobs: the steps every client still here has ended (all
  /// the steps applied so far when none is left).
  int64_t slowestClientSteps() const {
    int64_t slowest = std::numeric_limits<int64_t>::max();
    for (size_t w = 0; w < stepsDone.size(); ++w)
      if (!gone[w])
        slowest = std::min(slowest, stepsDone[w]);
    return slowest == std::numeric_limits<int64_t>::max() ? appliedSteps
                                                          : slowest;
  }

  /// Asynchronous jobs: answers the endStep of every waiting worker that is
  /// at most `staleness` steps ahead of the slowest worker still here.
  void releaseWorkers() {
    const int64_t slowest = slowestClientSteps();
    for (size_t w = 0; w < ended.size(); ++w) {
      if (!ended[w] ||
          (staleness >= 0 && !gone[w] && stepsDone[w] - slowest > staleness))
        continue;
      ended[w] = false;
      MessageWriter out;
      out.put<uint8_t>(0);
      reply(static_cast<int>(w), std::move(out.bytes()));
    }
  }

  struct PendingSend {
    MPI_Request request;
    std::vector<char> bytes;
  };

  void reply(int worker, std::vector<char> bytes) {
    sends.push_back({MPI_REQUEST_NULL, std::move(bytes)});
    PendingSend &send = sends.back();
    checkMpi(MPI_Isend(send.bytes.data(), static_cast<int>(send.bytes.size()),
                       MPI_BYTE, job.clientRank(worker), kReply, comm,
                       &send.request),
             "isend");
  }

  void reapSends() {
    for (auto send = sends.begin(); send != sends.end();) {
      int done = 0;
      checkMpi(MPI_Test(&send->request, &done, MPI_STATUS_IGNORE), "test");
      send = done ? sends.erase(send) : std::next(send);
    }
  }

  MpiJob &job;
  MPI_Comm comm;
  const bool asynchronous;
  const int64_t staleness;
  std::vector<StepShare> shares;
  /// Workers whose endStep awaits its answer, and workers that left.
  std::vector<bool> ended, gone;
  /// Asynchronous jobs: the steps each worker ended.
  std::vector<int64_t> stepsDone;
  ps::ParameterServer server;
  std::map<std::string, ps::SparseTableConfig> tables;
  std::map<std::string, size_t> denseSizes;
  // A list: the buffers must not move while their sends are in flight.
  std::list<PendingSend> sends;
  /// The step the job resumed from (resumed-at-step) and the steps applied
  /// since this shard started.
  int64_t firstStep = 0, appliedSteps = 0;
  train::Heartbeat heartbeat;
  train::FaultInjector faults;
};

} // namespace

void runParameterServerShard(MpiJob &job, const ShardOptions &options) {
  if (job.role() != Role::Shard)
    throw Error("runParameterServerShard needs a shard rank");
  // Large pulls and pushes serve the local shards on this thread's team.
  if (int threads = job.kernelThreads(); threads > 0)
    omp_set_num_threads(threads);
  Shard(job, options).serve();
}

} // namespace heterps::rt::mpi
