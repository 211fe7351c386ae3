//===- MpiAsyncJobTest.cpp - An asynchronous MPI job: staleness bound -----===//
//
// Run as `mpirun -np 3 heterps_rt_mpi_async_job_test` (ctest does): ranks 0
// and 1 are workers, rank 2 a shard, and the job is asynchronous with
// staleness 1. Checks that a push is applied on arrival (before the step
// ends) and that a worker runs at most one step ahead of a worker that does
// not end its steps: worker 0 counts its steps on the shard, and worker 1
// sees the count stop at 2 until it ends steps itself. Exit 0 when all
// agree; a failure aborts the job with a message naming the check.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/MpiTraining.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace heterps::rt;

namespace {

constexpr int64_t kStaleness = 1;
constexpr int kSteps = 5;

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "heterps_rt_mpi_async_job_test: FAIL: %s\n",
               what.c_str());
  mpi::MpiJob::abort(1);
}

/// SGD with learning rate 1: a push of -1 adds 1.
ps::OptimizerConfig counting() {
  ps::OptimizerConfig config;
  config.learningRate = 1.0f;
  return config;
}

float valueOf(ps::ParameterStore &store, const std::string &name) {
  return store.pullDense(name).at(0);
}

void worker(mpi::MpiJob &job) {
  mpi::MpiWorkerGroup group(job);
  if (!group.asynchronous())
    fail("the worker group does not report the job as asynchronous");
  ps::ParameterStore &store = group.store();
  store.createDenseParam("steps-of-worker-0", {0.0f}, counting());
  store.createDenseParam("own", {0.0f}, counting());
  group.barrier();

  // Applied on arrival: no endStep between the push and the pull.
  if (group.leader()) {
    store.pushDense("own", {-1.0f});
    if (valueOf(store, "own") != 1.0f)
      fail("a push was not applied before its step ended");
  }

  if (group.leader()) {
    // Blocks in the endStep of its second step until worker 1 ends one.
    for (int step = 0; step < kSteps; ++step) {
      store.pushDense("steps-of-worker-0", {-1.0f});
      store.endStep();
    }
  } else {
    // Wait (without a time limit that correct code could hit) until worker
    // 0 is as far ahead as it may be, then give it time to run further.
    const float ahead = float(kStaleness + 1);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (valueOf(store, "steps-of-worker-0") < ahead) {
      if (std::chrono::steady_clock::now() > deadline)
        fail("worker 0 never reached step " + std::to_string(kStaleness + 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const float seen = valueOf(store, "steps-of-worker-0");
    if (seen != ahead)
      fail("worker 0 pushed " + std::to_string(int(seen)) +
           " steps while worker 1 ended none (staleness " +
           std::to_string(kStaleness) + " allows " +
           std::to_string(kStaleness + 1) + ")");
    for (int step = 0; step < kSteps; ++step)
      store.endStep();
  }
  group.barrier();
  if (valueOf(store, "steps-of-worker-0") != float(kSteps))
    fail("worker 0's steps did not all arrive");
  group.parameterClient().goodbye();
}

} // namespace

int main(int argc, char **argv) {
  int rank = 0;
  if (const char *text = std::getenv("OMPI_COMM_WORLD_RANK"))
    rank = std::atoi(text);
  try {
    mpi::Consistency consistency;
    consistency.mode = ps::ConsistencyMode::Asynchronous;
    consistency.staleness = kStaleness;
    mpi::MpiJob job(&argc, &argv,
                    rank == 2 ? mpi::Role::Shard : mpi::Role::Worker,
                    consistency);
    if (job.role() == mpi::Role::Shard)
      mpi::runParameterServerShard(job, {});
    else
      worker(job);
  } catch (const std::exception &error) {
    fail(error.what());
  }
  return 0;
}
