//===- MpiJobTest.cpp - A real MPI job: shards, workers, steps ------------===//
//
// Run as `mpirun -np 3 heterps_rt_mpi_job_test` (ctest does): ranks 0 and 1
// are workers and rank 2 a shard, so roles do not follow rank order. Each
// worker checks, against an in-process ParameterServer fed the same gradients,
// that a step is applied once on the sum of both workers' pushes (Adagrad is
// nonlinear: applying the pushes one after the other would differ), that pulls
// between steps see the applied step, that a learning-rate scale sent by the
// leader applies to the whole step, and that save/load round-trips. Exit 0
// when all agree; a failure aborts the job with a message naming the check.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/MpiTraining.h"

#include "TestSupport.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

using namespace heterps::rt;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "heterps_rt_mpi_job_test: FAIL: %s\n", what.c_str());
  mpi::MpiJob::abort(1);
}

void expectSame(const std::vector<float> &actual,
                const std::vector<float> &expected, const std::string &what) {
  if (actual.size() != expected.size() ||
      std::memcmp(actual.data(), expected.data(),
                  actual.size() * sizeof(float)) != 0)
    fail(what + " differs from the in-process reference");
}

ps::OptimizerConfig adagrad() {
  ps::OptimizerConfig config;
  config.kind = ps::OptimizerKind::Adagrad;
  config.learningRate = 0.1f;
  return config;
}

ps::SparseTableConfig table() {
  ps::SparseTableConfig config;
  config.name = "emb";
  config.dim = 2;
  config.seed = 7;
  config.optimizer = adagrad();
  return config;
}

/// Worker w's gradients of step s: rows for keys {1, 2, 3, 1} and a dense
/// gradient, different per worker and step.
std::vector<float> rowGradients(int w, int s) {
  std::vector<float> values;
  for (int i = 0; i < 8; ++i)
    values.push_back(0.25f * float(i + 1) * float(w + 1) - 0.5f * float(s));
  return values;
}
std::vector<float> denseGradient(int w, int s) {
  return {0.5f * float(w + 1), -1.0f * float(s + 1), 0.125f * float(w - s)};
}
const std::vector<uint64_t> kKeys = {1, 2, 3, 1};

void worker(mpi::MpiJob &job) {
  mpi::MpiWorkerGroup group(job);
  ps::ParameterStore &store = group.store();
  ps::ParameterServer reference(ps::ParameterServerConfig{});
  for (ps::ParameterStore *s :
       {&store, static_cast<ps::ParameterStore *>(&reference)}) {
    s->createSparseTable(table());
    s->createDenseParam("w", {1.0f, 2.0f, 3.0f}, adagrad());
  }
  // One checkpoint directory for all workers, named after the leader's
  // process; the leader makes it and removes it once every worker is done.
  const std::string name =
      "heterps-mpi-job-test-" + group.broadcast(processId());
  std::optional<ScratchDirectory> scratch;
  if (group.leader())
    scratch.emplace(name);
  const std::string directory = (fs::temp_directory_path() / name).string();

  std::vector<float> savedRows, savedDense;
  for (int step = 0; step < 3; ++step) {
    if (step == 2) {
      // The leader alone scales the learning rate (as the Trainer does):
      // the shard applies the whole step, every worker's pushes, at it.
      if (group.leader())
        store.setLearningRateScale(2.0f);
      reference.setLearningRateScale(2.0f);
    }
    store.push("emb", kKeys.data(), kKeys.size(),
               rowGradients(job.index(), step).data());
    store.pushDense("w", denseGradient(job.index(), step));
    store.endStep();
    // The reference gets the sum in worker order in one push.
    std::vector<uint64_t> keys;
    std::vector<float> rows;
    std::vector<float> dense = denseGradient(0, step);
    for (int w = 0; w < job.workers(); ++w) {
      keys.insert(keys.end(), kKeys.begin(), kKeys.end());
      std::vector<float> part = rowGradients(w, step);
      rows.insert(rows.end(), part.begin(), part.end());
      if (w > 0)
        for (size_t i = 0; i < dense.size(); ++i)
          dense[i] += denseGradient(w, step)[i];
    }
    reference.push("emb", keys.data(), keys.size(), rows.data());
    reference.pushDense("w", dense);

    std::vector<float> actual(6), expected(6);
    const uint64_t probe[] = {1, 2, 3};
    store.pull("emb", probe, 3, actual.data());
    reference.pull("emb", probe, 3, expected.data());
    expectSame(actual, expected, "rows after step " + std::to_string(step));
    expectSame(store.pullDense("w"), reference.pullDense("w"),
               "dense parameter after step " + std::to_string(step));
    expectSame(*store.readRow("emb", 1), *reference.readRow("emb", 1),
               "row 1 with its Adagrad state");
    if (store.readRow("emb", 99))
      fail("readRow created or found an untouched row");
    if (store.rowCount("emb") != 3)
      fail("rowCount is " + std::to_string(store.rowCount("emb")) + ", not 3");

    if (step == 1) {
      if (group.leader())
        store.save(directory);
      savedRows = *store.readRow("emb", 2);
      savedDense = store.readDense("w");
      // Nobody pushes the next step before the leader's save is done.
      group.anyStopRequested(false);
    }
  }
  // Nobody loads (rolling the shard back to step 1) while another worker
  // still checks the rows of step 2.
  group.anyStopRequested(false);
  store.load(directory);
  expectSame(*store.readRow("emb", 2), savedRows, "row 2 after load");
  expectSame(store.readDense("w"), savedDense, "dense parameter after load");

  std::vector<float> all = group.gather({float(job.index())});
  if (group.leader()) {
    if (all.size() != size_t(job.workers()) || all[1] != 1.0f)
      fail("gather did not collect every worker's value in order");
    scratch.reset();
  }
  group.parameterClient().goodbye();
}

} // namespace

int main(int argc, char **argv) {
  // Ranks 0 and 1 work, rank 2 serves: roles need not follow rank order.
  int rank = 0;
  {
    const char *text = std::getenv("OMPI_COMM_WORLD_RANK");
    rank = text ? std::atoi(text) : 0;
  }
  try {
    mpi::MpiJob job(&argc, &argv,
                    rank == 2 ? mpi::Role::Shard : mpi::Role::Worker);
    if (job.role() == mpi::Role::Shard)
      mpi::runParameterServerShard(job, {});
    else
      worker(job);
  } catch (const std::exception &error) {
    fail(error.what());
  }
  return 0;
}
