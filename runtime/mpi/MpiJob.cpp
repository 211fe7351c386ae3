//===- MpiJob.cpp - MPI start-up, roles, communicators --------------------===//

#include "Comms.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sched.h>
#include <thread>

namespace heterps::rt::mpi {

void checkMpi(int result, const char *what) {
  if (result == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  throw Error(std::string("MPI ") + what +
              " failed: " + std::string(text, length));
}

std::string describe(const Consistency &consistency) {
  if (!consistency.asynchronous())
    return "synchronous";
  if (consistency.staleness < 0)
    return "asynchronous (no staleness bound)";
  return "asynchronous (staleness " + std::to_string(consistency.staleness) +
         ")";
}

namespace {
/// Whether waits poll without pausing, as Open MPI's blocking calls do
/// (lowest latency where every thread has a core of its own). MpiJob sets
/// it from the machine's share; HETERPS_MPI_WAIT=spin or =backoff decides
/// instead.
std::atomic<bool> spinning{false};

/// HETERPS_MPI_WAIT as true (spin), false (backoff) or nullopt (unset);
/// throws Error for another value.
std::optional<bool> waitOverride() {
  const char *mode = std::getenv("HETERPS_MPI_WAIT");
  if (!mode || !*mode)
    return std::nullopt;
  if (std::string(mode) == "spin")
    return true;
  if (std::string(mode) == "backoff")
    return false;
  throw Error("environment variable HETERPS_MPI_WAIT='" + std::string(mode) +
              "' is neither 'spin' nor 'backoff'");
}

bool spinWhileWaiting() { return spinning.load(std::memory_order_relaxed); }

/// The CPUs this process may run on: its affinity mask (mpirun's binding,
/// a cpuset, taskset).
cpu_set_t usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    const unsigned count = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned cpu = 0; cpu < count && cpu < CPU_SETSIZE; ++cpu)
      CPU_SET(cpu, &set);
  }
  return set;
}

/// Polls `ready` until it returns true: without pausing where the ranks
/// have a core per thread, else briefly, then yielding, then sleeping with
/// doubling pauses.
template <typename Ready> void pollWithBackoff(Ready ready) {
  using namespace std::chrono;
  if (spinWhileWaiting()) {
    while (!ready()) {
    }
    return;
  }
  // A reply is often microseconds away; then the other ranks on these
  // cores may be the ones that owe it, so yield to them; a long wait
  // (another worker's step) sleeps. Measured on 2 cores with 2 workers and
  // 2 shards: 500 us of spinning then sleeps gave 1.9-2.9e4 samples/s,
  // this 3.0-3.7e4.
  const auto now = steady_clock::now();
  const auto spinUntil = now + microseconds(5);
  while (steady_clock::now() < spinUntil)
    if (ready())
      return;
  const auto yieldUntil = now + milliseconds(5);
  while (steady_clock::now() < yieldUntil) {
    if (ready())
      return;
    sched_yield();
  }
  microseconds pause(10);
  while (!ready()) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, microseconds(200));
  }
}
} // namespace

void checkWaitEnvironment() { (void)waitOverride(); }

void probe(int source, int tag, MPI_Comm comm, MPI_Status *status,
           std::mutex *lock) {
  pollWithBackoff([&] {
    std::unique_lock<std::mutex> held;
    if (lock)
      held = std::unique_lock<std::mutex>(*lock);
    int found = 0;
    checkMpi(MPI_Iprobe(source, tag, comm, &found, status), "iprobe");
    return found != 0;
  });
}

std::vector<char> receive(const MPI_Status &status, MPI_Comm comm) {
  int bytes = 0;
  checkMpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "get count");
  std::vector<char> message(bytes);
  checkMpi(MPI_Recv(message.data(), bytes, MPI_BYTE, status.MPI_SOURCE,
                    status.MPI_TAG, comm, MPI_STATUS_IGNORE),
           "recv");
  return message;
}

void wait(MPI_Request *request, const char *what, std::mutex *lock,
          MPI_Status *status) {
  pollWithBackoff([&] {
    std::unique_lock<std::mutex> held;
    if (lock)
      held = std::unique_lock<std::mutex>(*lock);
    int done = 0;
    checkMpi(MPI_Test(request, &done, status ? status : MPI_STATUS_IGNORE),
             what);
    return done != 0;
  });
}

MpiJob::MpiJob(int *argc, char ***argv, Role role, Consistency consistency)
    : role_(role), consistency_(consistency),
      comms_(std::make_unique<Comms>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    throw Error("MPI is already initialised in this process");
  int provided = 0;
  checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided),
           "init");
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("the MPI library gives thread level " +
                std::to_string(provided) +
                ", below MPI_THREAD_SERIALIZED (stage threads of a worker "
                "pull and push one at a time from several threads)");
  int size = 0;
  checkMpi(MPI_Comm_rank(MPI_COMM_WORLD, &worldRank_), "comm rank");
  checkMpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "comm size");
  // Roles come from the commands the ranks run, in any rank order; so does
  // the consistency, which shards and workers must agree on.
  const int64_t mine[3] = {static_cast<int64_t>(role),
                           static_cast<int64_t>(consistency.mode),
                           consistency.staleness};
  std::vector<int64_t> all(3 * size_t(size));
  checkMpi(MPI_Allgather(mine, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T,
                         MPI_COMM_WORLD),
           "allgather of roles");
  // Each rank compares itself with rank 0, so a job with one odd rank
  // reports once (and its MPI_Abort ends rank 0 too).
  Consistency first{static_cast<ps::ConsistencyMode>(all[1]), all[2]};
  if (!(first == consistency))
    throw Error("rank 0 of the MPI job runs " + describe(first) +
                " training and rank " + std::to_string(worldRank_) + " " +
                describe(consistency) +
                "; start every rank with the same --consistency and "
                "--staleness (heterps launch does)");
  for (int rank = 0; rank < size; ++rank) {
    const auto theirs = static_cast<Role>(all[3 * rank]);
    std::vector<int> &ofRole = theirs == Role::Shard    ? shardRanks
                               : theirs == Role::Worker ? workerRanks
                                                        : stageRanks;
    if (rank == worldRank_)
      index_ = static_cast<int>(ofRole.size());
    ofRole.push_back(rank);
    if (theirs != Role::Shard)
      clientRanks.push_back(rank);
  }
  shareMachine(all);
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &comms_->ps), "comm dup");
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &comms_->pipeline), "comm dup");
  checkMpi(MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(role), worldRank_,
                          &comms_->role),
           "comm split");
  if (shardRanks.empty())
    throw Error("the MPI job has " + std::to_string(size) +
                " ranks and none is a parameter-server shard; start shards "
                "with `heterps ps-shard BUNDLE` (heterps launch does)");
  if (workerRanks.empty())
    throw Error("the MPI job has " + std::to_string(size) +
                " ranks and none is a worker; start workers with `heterps "
                "run BUNDLE --train ... --mpi-worker` (heterps launch does)");
  if (!stageRanks.empty() && workerRanks.size() != 1)
    throw Error("the MPI job has " + std::to_string(stageRanks.size()) +
                " stage ranks and " + std::to_string(workerRanks.size()) +
                " workers; stage ranks serve exactly one worker (heterps "
                "launch --stage-ranks starts one)");
}

void MpiJob::shareMachine(const std::vector<int64_t> &roles) {
  // The ranks on this machine (those that can share memory), by role.
  MPI_Comm host = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, worldRank_,
                               MPI_INFO_NULL, &host),
           "comm split by machine");
  int hostSize = 0;
  checkMpi(MPI_Comm_size(host, &hostSize), "comm size");
  std::vector<int> hostRanks(hostSize);
  checkMpi(MPI_Allgather(&worldRank_, 1, MPI_INT, hostRanks.data(), 1, MPI_INT,
                         host),
           "allgather of machine ranks");
  // The CPUs any rank here may use; each rank is also held to its own
  // mask (bound ranks).
  static_assert(sizeof(cpu_set_t) % sizeof(unsigned long) == 0);
  const cpu_set_t mine = usableCpus();
  cpu_set_t any;
  checkMpi(MPI_Allreduce(&mine, &any,
                         int(sizeof(cpu_set_t) / sizeof(unsigned long)),
                         MPI_UNSIGNED_LONG, MPI_BOR, host),
           "allreduce of machine CPUs");
  const int cores = std::max(1, CPU_COUNT(&any));
  const int own = std::max(1, CPU_COUNT(&mine));
  MPI_Comm_free(&host);
  int shards = 0;
  for (int rank : hostRanks)
    shards += roles[3 * size_t(rank)] == static_cast<int64_t>(Role::Shard);
  ranksOnHost_ = hostSize;
  coresOnHost_ = cores;
  hostShare_ = shareHost(cores, hostSize - shards, shards);
  hostShare_.computeThreads = std::min(hostShare_.computeThreads, own);
  hostShare_.shardThreads = std::min(hostShare_.shardThreads, own);
  spinning = waitOverride().value_or(hostShare_.spin);
}

int MpiJob::kernelThreads() const {
  // A user's OMP_NUM_THREADS is OpenMP's default: leave it to OpenMP.
  if (const char *threads = std::getenv("OMP_NUM_THREADS"); threads && *threads)
    return 0;
  return role_ == Role::Shard ? hostShare_.shardThreads
                              : hostShare_.computeThreads;
}

std::string MpiJob::describeHostShare() const {
  std::string text = std::to_string(ranksOnHost_) + " ranks on " +
                     std::to_string(coresOnHost_) + " cores here: ";
  const int threads = kernelThreads();
  text += threads > 0 ? std::to_string(threads) + " kernel threads per " +
                            (role_ == Role::Shard ? "shard" : "worker")
                      : "OMP_NUM_THREADS kernel threads";
  text += spinWhileWaiting() ? ", waits spin" : ", waits back off";
  return text;
}

MpiJob::~MpiJob() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  // Destroyed by an error on its way out (a worker group that could not be
  // built): MPI_Finalize would wait for ranks that wait for this one. The
  // job ends by the abort that follows, or by this process's exit without
  // it, which mpirun takes as the job's failure.
  if (std::uncaught_exceptions() > 0)
    return;
  if (comms_->role != MPI_COMM_NULL)
    MPI_Comm_free(&comms_->role);
  if (comms_->ps != MPI_COMM_NULL)
    MPI_Comm_free(&comms_->ps);
  if (comms_->pipeline != MPI_COMM_NULL)
    MPI_Comm_free(&comms_->pipeline);
  MPI_Finalize();
}

int MpiJob::clientOf(int rank) const {
  for (size_t c = 0; c < clientRanks.size(); ++c)
    if (clientRanks[c] == rank)
      return static_cast<int>(c);
  return -1;
}

bool MpiJob::running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void MpiJob::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (running())
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // namespace heterps::rt::mpi
