//===- TrainingServerTest.cpp - Tests of the training parameter server ---===//

#include "heterps/Runtime/TrainingServer.h"
#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/StageABI.h"
#include "heterps/Runtime/Tensor.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <thread>

using namespace heterps::rt;
using namespace heterps::rt::train;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;

namespace {

/// Scratch directories of these tests: <temp>/heterps-train-test-<pid>-<tag>.
const char *const kScratch = "heterps-train-test";

/// A spec of one dense parameter "dense/w" [2, 2] (initial 1, 2, 3, 4 in the
/// weights, after 64 bytes of something else) and one table "emb" of 10 rows
/// of dim 2; plain SGD with learning rate 1, so an update is w -= g.
struct Fixture {
  TrainingSpec spec;
  std::vector<char> weights;
  Fixture(const std::string &optimizer = "sgd") {
    spec.loss = "bce";
    spec.optimizer.kind = optimizer;
    spec.optimizer.learningRate = 1.0f;
    TrainableParameter parameter;
    parameter.name = "dense/w";
    parameter.shape = {2, 2};
    parameter.offset = 64;
    spec.parameters.push_back(parameter);
    spec.tables.push_back({"emb", 10, 2});
    weights.resize(64 + 16);
    float initial[4] = {1, 2, 3, 4};
    std::memcpy(weights.data() + 64, initial, sizeof initial);
  }
  std::unique_ptr<TrainingServer> server(uint64_t seed = 7,
                                         size_t shards = 1) const {
    TrainingServerOptions options;
    options.seed = seed;
    options.shards = shards;
    return std::make_unique<TrainingServer>(spec, weights.data(),
                                            weights.size(), options);
  }
};

std::vector<float> values(const float *data, size_t n) {
  return std::vector<float>(data, data + n);
}

std::vector<float> pull(TrainingServer &server, std::vector<int64_t> ids) {
  std::vector<float> rows(ids.size() * 2);
  server.pullRows("emb", ids.data(), ids.size(), rows.data());
  return rows;
}

TEST(TrainingServer, DenseStartsFromTheWeightsAndLivesInPlace) {
  Fixture fixture;
  auto server = fixture.server();
  const float *live = server->lookupParameter("dense/w");
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(values(live, 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(server->lookupParameter("nope"), nullptr);
  // The version a GPU stage re-uploads on: unchanged by pulls and pushes,
  // changed by the step's refresh and by a switch to or from evaluation.
  const StageServer &callbacks = *server->stageServer();
  ASSERT_NE(callbacks.parameterVersion, nullptr);
  const uint64_t before = callbacks.parameterVersion(callbacks.context);
  float gradient[4] = {1, 1, 1, 1};
  server->pushDense("dense/w", gradient, 4);
  pull(*server, {1});
  EXPECT_EQ(server->parameterVersion(), before);
  server->finishStep(1);
  const uint64_t stepped = server->parameterVersion();
  EXPECT_NE(stepped, before);
  // Same pointer, new value: stages keep what lookupParameter gave them.
  EXPECT_EQ(server->lookupParameter("dense/w"), live);
  EXPECT_EQ(values(live, 4), (std::vector<float>{0, 1, 2, 3}));
  server->setEvalMode(true);
  const uint64_t evaluating = server->parameterVersion();
  EXPECT_NE(evaluating, stepped);
  server->setEvalMode(true);
  EXPECT_EQ(server->parameterVersion(), evaluating);
  server->setEvalMode(false);
  EXPECT_NE(server->parameterVersion(), evaluating);
}

/// A parameter server that records the dense parameters read from it.
class RecordingServer : public ps::ParameterServer {
public:
  RecordingServer() : ps::ParameterServer(ps::ParameterServerConfig{}) {}
  std::vector<std::vector<float>>
  pullDenseMany(const std::vector<std::string> &names) override {
    pulled.insert(pulled.end(), names.begin(), names.end());
    return ps::ParameterServer::pullDenseMany(names);
  }
  std::vector<std::string> pulled;
};

TEST(TrainingServer, StageRankRefreshesOnlyTheParametersItsStageLookedUp) {
  Fixture fixture;
  TrainableParameter bias;
  bias.name = "dense/b";
  bias.shape = {2};
  bias.offset = 80;
  fixture.spec.parameters.push_back(bias);
  fixture.weights.resize(88);
  RecordingServer store;
  TrainingServerOptions options;
  options.store = &store;
  options.refreshOnlyLookedUp = true;
  TrainingServer server(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
  // Before any stage looked a parameter up, every one is read.
  store.pulled.clear();
  server.refreshDense();
  // By name: dense/b, then dense/w (under their names on the store).
  const std::vector<std::string> all = store.pulled;
  ASSERT_EQ(all.size(), 2u);
  const float *live = server.lookupParameter("dense/w");
  ASSERT_NE(live, nullptr);
  store.pulled.clear();
  float gradient[4] = {1, 1, 1, 1};
  server.pushDense("dense/w", gradient, 4);
  server.finishStep(1); // pushes, then refreshes
  EXPECT_EQ(store.pulled, std::vector<std::string>{all[1]});
  EXPECT_EQ(values(live, 4), (std::vector<float>{0, 1, 2, 3}));

  // Without the option every parameter is read.
  RecordingServer wholeStore;
  options.store = &wholeStore;
  options.refreshOnlyLookedUp = false;
  TrainingServer whole(fixture.spec, fixture.weights.data(),
                       fixture.weights.size(), options);
  ASSERT_NE(whole.lookupParameter("dense/w"), nullptr);
  whole.refreshDense();
  EXPECT_EQ(wholeStore.pulled.size(), 2u);
}

TEST(TrainingServer, AveragesDenseGradientsOverMicroBatches) {
  Fixture fixture;
  auto server = fixture.server();
  float first[4] = {1, 2, 3, 4}, second[4] = {3, 2, 1, 0};
  {
    MicroBatchScope scope(0, 0);
    server->pushDense("dense/w", first, 4);
  }
  {
    MicroBatchScope scope(1, 0);
    server->pushDense("dense/w", second, 4);
  }
  // Nothing applies before the step ends.
  EXPECT_EQ(values(server->lookupParameter("dense/w"), 4),
            (std::vector<float>{1, 2, 3, 4}));
  server->finishStep(2);
  // w - (g1 + g2) / 2 = w - 2.
  EXPECT_EQ(values(server->lookupParameter("dense/w"), 4),
            (std::vector<float>{-1, 0, 1, 2}));
}

TEST(TrainingServer, AveragesAndMergesSparseGradients) {
  Fixture fixture;
  auto server = fixture.server();
  std::vector<float> before = pull(*server, {1, 3});
  // Micro-batch 0 touches id 1 twice and id 3 once, micro-batch 1 id 3.
  std::vector<int64_t> ids0 = {1, 1, 3}, ids1 = {3};
  std::vector<float> g0 = {1, 2, 3, 4, 5, 6}, g1 = {7, 8};
  {
    MicroBatchScope scope(0, 1);
    server->pushRows("emb", ids0.data(), 3, g0.data());
  }
  {
    MicroBatchScope scope(1, 1);
    server->pushRows("emb", ids1.data(), 1, g1.data());
  }
  EXPECT_EQ(pull(*server, {1, 3}), before);
  server->finishStep(2);
  std::vector<float> after = pull(*server, {1, 3});
  EXPECT_FLOAT_EQ(after[0], before[0] - (1 + 3) / 2.0f);
  EXPECT_FLOAT_EQ(after[1], before[1] - (2 + 4) / 2.0f);
  EXPECT_FLOAT_EQ(after[2], before[2] - (5 + 7) / 2.0f);
  EXPECT_FLOAT_EQ(after[3], before[3] - (6 + 8) / 2.0f);
  // Untouched rows keep their initial value.
  auto fresh = fixture.server();
  EXPECT_EQ(pull(*server, {2}), pull(*fresh, {2}));
}

/// Pushes of several micro-batches from racing threads give, to the bit, the
/// result of pushing them one after another in micro-batch order.
TEST(TrainingServer, ThreadOrderDoesNotChangeTheResult) {
  Fixture fixture;
  constexpr int kMicroBatches = 8;
  std::mt19937 random(3);
  // Wide dynamic range: float sums differ with the order of addition.
  std::uniform_real_distribution<float> exponent(-8, 8);
  std::vector<std::vector<float>> dense(kMicroBatches), rows(kMicroBatches);
  std::vector<std::vector<int64_t>> ids(kMicroBatches);
  for (int m = 0; m < kMicroBatches; ++m) {
    for (int i = 0; i < 4; ++i)
      dense[m].push_back(std::pow(10.0f, exponent(random)) *
                         (random() % 2 ? 1 : -1));
    for (int i = 0; i < 6; ++i) {
      ids[m].push_back(static_cast<int64_t>(random() % 4) - 2); // -2 .. 1
      rows[m].push_back(std::pow(10.0f, exponent(random)));
      rows[m].push_back(-std::pow(10.0f, exponent(random)));
    }
  }
  auto pushAll = [&](TrainingServer &server, int m) {
    MicroBatchScope scope(m, 0);
    server.pushRows("emb", ids[m].data(), ids[m].size(), rows[m].data());
    server.pushDense("dense/w", dense[m].data(), 4);
  };
  auto state = [&](TrainingServer &server) {
    std::vector<float> all = values(server.lookupParameter("dense/w"), 4);
    std::vector<float> table = pull(server, {-2, -1, 0, 1});
    all.insert(all.end(), table.begin(), table.end());
    return all;
  };

  auto reference = fixture.server();
  for (int m = 0; m < kMicroBatches; ++m)
    pushAll(*reference, m);
  reference->finishStep(kMicroBatches);
  std::vector<float> expected = state(*reference);

  for (int trial = 0; trial < 10; ++trial) {
    auto server = fixture.server();
    std::vector<int> order(kMicroBatches);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<std::thread> threads;
    for (int m : order)
      threads.emplace_back([&, m] { pushAll(*server, m); });
    for (std::thread &thread : threads)
      thread.join();
    server->finishStep(kMicroBatches);
    std::vector<float> actual = state(*server);
    ASSERT_EQ(actual.size(), expected.size());
    EXPECT_EQ(std::memcmp(actual.data(), expected.data(),
                          actual.size() * sizeof(float)),
              0)
        << "trial " << trial;
  }
}

TEST(TrainingServer, EvalModeDiscardsPushes) {
  Fixture fixture;
  auto server = fixture.server();
  std::vector<float> before = pull(*server, {4});
  server->setEvalMode(true);
  float gradient[4] = {1, 1, 1, 1};
  int64_t id = 4;
  server->pushDense("dense/w", gradient, 4);
  server->pushRows("emb", &id, 1, gradient);
  server->finishStep(1);
  server->setEvalMode(false);
  // Nothing was kept for a later training step either.
  server->finishStep(1);
  EXPECT_EQ(values(server->lookupParameter("dense/w"), 4),
            (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(pull(*server, {4}), before);
}

TEST(TrainingServer, DiscardStepDropsPendingPushes) {
  Fixture fixture;
  auto server = fixture.server();
  float gradient[4] = {1, 1, 1, 1};
  server->pushDense("dense/w", gradient, 4);
  server->discardStep();
  server->finishStep(1);
  EXPECT_EQ(values(server->lookupParameter("dense/w"), 4),
            (std::vector<float>{1, 2, 3, 4}));
}

TEST(TrainingServer, NegativeIdsCountFromTheEnd) {
  Fixture fixture;
  auto server = fixture.server();
  EXPECT_EQ(pull(*server, {-1, -10}), pull(*server, {9, 0}));
  int64_t id = -1;
  float gradient[2] = {1, 1};
  std::vector<float> before = pull(*server, {9});
  server->pushRows("emb", &id, 1, gradient);
  server->finishStep(1);
  std::vector<float> after = pull(*server, {9});
  EXPECT_FLOAT_EQ(after[0], before[0] - 1);
  EXPECT_FLOAT_EQ(after[1], before[1] - 1);
}

TEST(TrainingServer, RejectsIdsOutsideTheTable) {
  Fixture fixture;
  auto server = fixture.server();
  for (int64_t id : {int64_t(10), int64_t(-11)}) {
    float rows[2];
    try {
      server->pullRows("emb", &id, 1, rows);
      ADD_FAILURE() << "id " << id << " was accepted";
    } catch (const Error &error) {
      std::string text = error.what();
      EXPECT_NE(text.find("'emb'"), std::string::npos) << text;
      EXPECT_NE(text.find("id " + std::to_string(id)), std::string::npos)
          << text;
      EXPECT_NE(text.find("[-10, 10)"), std::string::npos) << text;
    }
    EXPECT_THROW(server->pushRows("emb", &id, 1, rows), Error);
  }
}

TEST(TrainingServer, CallbacksReportErrorsAsText) {
  Fixture fixture;
  auto server = fixture.server();
  const StageServer &callbacks = *server->stageServer();
  char error[256] = "";
  int64_t id = 12;
  float rows[2];
  EXPECT_NE(callbacks.pullRows(callbacks.context, "emb", &id, 1, rows, error,
                               sizeof error),
            0);
  EXPECT_NE(std::string(error).find("id 12"), std::string::npos) << error;
  EXPECT_NE(callbacks.pullRows(callbacks.context, "nope", &id, 1, rows, error,
                               sizeof error),
            0);
  EXPECT_NE(std::string(error).find("'nope'"), std::string::npos) << error;
  float gradient[3] = {};
  EXPECT_NE(callbacks.pushDense(callbacks.context, "dense/w", gradient, 3,
                                error, sizeof error),
            0);
  EXPECT_NE(std::string(error).find("dense/w"), std::string::npos) << error;
  // A tiny buffer gets a terminated prefix.
  char small[8];
  EXPECT_NE(callbacks.pushDense(callbacks.context, "dense/w", gradient, 3,
                                small, sizeof small),
            0);
  EXPECT_EQ(std::strlen(small), 7u);
  id = 3;
  EXPECT_EQ(callbacks.pullRows(callbacks.context, "emb", &id, 1, rows, error,
                               sizeof error),
            0);
  EXPECT_EQ(callbacks.lookupParameter(callbacks.context, "dense/w"),
            server->lookupParameter("dense/w"));
}

TEST(TrainingServer, RowsDependOnSeedAndIdOnly) {
  Fixture fixture;
  auto a = fixture.server(7, 1), b = fixture.server(7, 4),
       c = fixture.server(8, 1);
  // Touch order and shard count do not matter; the seed does.
  EXPECT_EQ(pull(*a, {5, 2}), pull(*b, {5, 2}));
  EXPECT_EQ(pull(*a, {2}), pull(*b, {2}));
  EXPECT_NE(pull(*a, {5}), pull(*c, {5}));
}

TEST(TrainingServer, SaveAndLoadRestoreEverything) {
  ScratchDirectory scratch(kScratch, "save");
  Fixture fixture("adam");
  auto server = fixture.server(7, 2);
  std::vector<int64_t> ids = {0, 5, -1};
  std::vector<float> gradients = {1, 2, 3, 4, 5, 6};
  float dense[4] = {0.5f, -0.5f, 1, -1};
  server->pushRows("emb", ids.data(), 3, gradients.data());
  server->pushDense("dense/w", dense, 4);
  server->finishStep(1);
  server->save(scratch / "checkpoint");

  auto restored = fixture.server(7, 3);
  const float *live = restored->lookupParameter("dense/w");
  restored->load(scratch / "checkpoint");
  EXPECT_EQ(restored->lookupParameter("dense/w"), live);
  EXPECT_EQ(values(live, 4), values(server->lookupParameter("dense/w"), 4));
  EXPECT_EQ(pull(*restored, {0, 5, 9}), pull(*server, {0, 5, 9}));
  // The optimizer state came along: one more identical step agrees.
  for (TrainingServer *s : {server.get(), restored.get()}) {
    s->pushRows("emb", ids.data(), 3, gradients.data());
    s->pushDense("dense/w", dense, 4);
    s->finishStep(1);
  }
  EXPECT_EQ(values(live, 4), values(server->lookupParameter("dense/w"), 4));
  EXPECT_EQ(pull(*restored, {0, 5, 9}), pull(*server, {0, 5, 9}));
}

/// The fixture plus batch norm's parameters: a running mean "bn.mean" [2]
/// (initial 1, 1; momentum 0.75) and the training flag "flag" [1].
struct BatchNormFixture : Fixture {
  BatchNormFixture() : Fixture("adam") {
    size_t meanOffset = weights.size();
    float mean[2] = {1, 1}, flag = 1;
    weights.resize(meanOffset + sizeof mean + sizeof flag);
    std::memcpy(weights.data() + meanOffset, mean, sizeof mean);
    std::memcpy(weights.data() + meanOffset + sizeof mean, &flag, sizeof flag);
    TrainableParameter running;
    running.name = "bn.mean";
    running.shape = {2};
    running.offset = meanOffset;
    running.update = ParameterUpdate::MovingAverage;
    running.momentum = 0.75f;
    spec.parameters.push_back(running);
    TrainableParameter training;
    training.name = "flag";
    training.shape = {1};
    training.offset = meanOffset + sizeof mean;
    training.update = ParameterUpdate::TrainingFlag;
    spec.parameters.push_back(training);
  }
};

TEST(TrainingServer, RunningStatisticsAreMovingAveragesOfTheStepsMean) {
  BatchNormFixture fixture;
  auto server = fixture.server();
  // Two micro-batches' batch means: their mean (3, 5) is the step's.
  float first[2] = {2, 4}, second[2] = {4, 6};
  {
    MicroBatchScope scope(0, 0);
    server->pushDense("bn.mean", first, 2);
  }
  {
    MicroBatchScope scope(1, 0);
    server->pushDense("bn.mean", second, 2);
  }
  server->finishStep(2);
  // 0.75 * 1 + 0.25 * (3, 5), not an Adam step.
  EXPECT_EQ(values(server->lookupParameter("bn.mean"), 2),
            (std::vector<float>{1.5f, 2.0f}));
  // Eval mode drops the pushes.
  server->setEvalMode(true);
  server->pushDense("bn.mean", first, 2);
  server->finishStep(1);
  server->setEvalMode(false);
  EXPECT_EQ(values(server->lookupParameter("bn.mean"), 2),
            (std::vector<float>{1.5f, 2.0f}));
}

TEST(TrainingServer, TrainingFlagIsOneWhileTrainingAndZeroInEval) {
  BatchNormFixture fixture;
  auto server = fixture.server();
  ASSERT_NE(server->lookupParameter("flag"), nullptr);
  EXPECT_EQ(*server->lookupParameter("flag"), 1.0f);
  server->setEvalMode(true);
  EXPECT_EQ(*server->lookupParameter("flag"), 0.0f);
  server->setEvalMode(false);
  EXPECT_EQ(*server->lookupParameter("flag"), 1.0f);
  // Served, never stored: not on the parameter store, not pushable.
  EXPECT_THROW(server->parameterServer().pullDense("flag"), Error);
  float one = 1;
  try {
    server->pushDense("flag", &one, 1);
    FAIL() << "pushing the training flag did not throw";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("'flag' is a training flag"),
              std::string::npos)
        << error.what();
  }
}

TEST(TrainingServer, RunningStatisticsSurviveACheckpoint) {
  ScratchDirectory scratch(kScratch, "bn-save");
  BatchNormFixture fixture;
  auto server = fixture.server();
  float mean[2] = {3, 5};
  server->pushDense("bn.mean", mean, 2);
  server->finishStep(1);
  server->save(scratch / "checkpoint");
  auto restored = fixture.server();
  restored->load(scratch / "checkpoint");
  EXPECT_EQ(values(restored->lookupParameter("bn.mean"), 2),
            (std::vector<float>{1.5f, 2.0f}));
  // The dump has the running mean but not the flag.
  restored->dumpParameters(scratch / "dump");
  EXPECT_TRUE(fs::exists(fs::path(scratch / "dump") / "bn.mean.npy"));
  EXPECT_FALSE(fs::exists(fs::path(scratch / "dump") / "flag.npy"));
}

TEST(TrainingServer, DumpsParametersAndTouchedRows) {
  ScratchDirectory scratch(kScratch, "dump");
  Fixture fixture;
  auto server = fixture.server();
  std::vector<float> rows = pull(*server, {7, 2, -1});
  server->dumpParameters(scratch / "dump");

  HostTensor dense = readTensorFile(scratch / "dump/dense_w.npy");
  EXPECT_EQ(dense.shape, (Shape{2, 2}));
  EXPECT_EQ(values(reinterpret_cast<const float *>(dense.data.data()), 4),
            (std::vector<float>{1, 2, 3, 4}));
  HostTensor ids = readTensorFile(scratch / "dump/emb.ids.npy");
  ASSERT_EQ(ids.shape, (Shape{3}));
  const auto *id = reinterpret_cast<const int64_t *>(ids.data.data());
  EXPECT_EQ(std::vector<int64_t>(id, id + 3), (std::vector<int64_t>{2, 7, 9}));
  HostTensor table = readTensorFile(scratch / "dump/emb.rows.npy");
  ASSERT_EQ(table.shape, (Shape{3, 2}));
  const auto *row = reinterpret_cast<const float *>(table.data.data());
  EXPECT_EQ(values(row, 2), std::vector<float>(rows.begin() + 2,
                                               rows.begin() + 4)); // id 2
  EXPECT_EQ(values(row + 2, 2),
            std::vector<float>(rows.begin(), rows.begin() + 2)); // id 7
}

/// A parameter whose name is one of a table's files ('emb.ids') takes it;
/// the table's two files move aside together, so every file of the dump is
/// written once.
TEST(TrainingServer, DumpNamesNeverCollide) {
  ScratchDirectory scratch(kScratch, "dump-names");
  Fixture fixture;
  fixture.spec.parameters[0].name = "emb.ids";
  auto server = fixture.server();
  pull(*server, {7});
  server->dumpParameters(scratch / "dump");
  HostTensor dense = readTensorFile(scratch / "dump/emb.ids.npy");
  EXPECT_EQ(dense.shape, (Shape{2, 2}));
  // The table's are named by its index (after the one parameter's).
  HostTensor ids = readTensorFile(scratch / "dump/emb.1.ids.npy");
  EXPECT_EQ(ids.shape, (Shape{1}));
  HostTensor rows = readTensorFile(scratch / "dump/emb.1.rows.npy");
  EXPECT_EQ(rows.shape, (Shape{1, 2}));
  EXPECT_FALSE(fs::exists(scratch / "dump/emb.rows.npy"));
}

/// Two steps through the pass cache, with duplicate and negative ids, give
/// the rows, optimizer state and dense values of the direct server, to the
/// bit, in memory and with the RocksDB tier holding 2 rows per shard; two
/// tables, whose pushes the cache serves at once.
TEST(TrainingServer, PassCacheStepsEqualTheDirectServer) {
  for (size_t memoryRows : {size_t(0), size_t(2)}) {
    ScratchDirectory scratch(kScratch, "pass-" + std::to_string(memoryRows));
    Fixture fixture("adagrad");
    fixture.spec.tables.push_back({"wide", 10, 2});
    auto direct = fixture.server(7, 2);
    TrainingServerOptions options;
    options.seed = 7;
    options.shards = 2;
    options.passCache = true;
    options.memoryRowsPerShard = memoryRows;
    options.storageDirectory = memoryRows ? scratch / "rocks" : "";
    TrainingServer cached(fixture.spec, fixture.weights.data(),
                          fixture.weights.size(), options);
    const std::vector<std::vector<int64_t>> steps = {{1, 1, 3, -1},
                                                     {3, 4, 9, 0, 4}};
    for (const std::vector<int64_t> &ids : steps)
      for (const char *table : {"emb", "wide"})
        cached.addPassKeys(table, ids.data(), ids.size());
    cached.beginPass();
    EXPECT_TRUE(cached.inPass());
    for (const std::vector<int64_t> &ids : steps) {
      std::vector<float> rows = pull(*direct, ids);
      EXPECT_EQ(pull(cached, ids), rows);
      std::vector<float> gradients(ids.size() * 2);
      std::iota(gradients.begin(), gradients.end(), 0.5f);
      std::vector<float> wide(gradients.rbegin(), gradients.rend());
      float dense[4] = {0.25f, -1, 2, 0.5f};
      for (TrainingServer *server : {direct.get(), &cached}) {
        MicroBatchScope scope(0, 0);
        server->pushRows("emb", ids.data(), ids.size(), gradients.data());
        server->pushRows("wide", ids.data(), ids.size(), wide.data());
        server->pushDense("dense/w", dense, 4);
        server->finishStep(1);
      }
    }
    cached.endPass();
    EXPECT_FALSE(cached.inPass());
    for (const char *table : {"emb", "wide"})
      for (int64_t id = 0; id < 10; ++id)
        EXPECT_EQ(cached.parameterStore().readRow(table, uint64_t(id)),
                  direct->parameterStore().readRow(table, uint64_t(id)))
            << table << " id " << id << ", memory rows " << memoryRows;
    EXPECT_EQ(values(cached.lookupParameter("dense/w"), 4),
              values(direct->lookupParameter("dense/w"), 4));
  }
}

/// Gradients staged in the pass cache's memory (what a GPU stage pushes
/// through pushRowsFromDevice; host memory for the host cache) give the
/// host path's rows and state to the bit: three micro-batches arriving out
/// of order, averaged, with duplicates across them.
TEST(TrainingServer, StagedPushesEqualHostPushes) {
  Fixture fixture("adagrad");
  TrainingServerOptions options;
  options.seed = 7;
  options.shards = 2;
  options.passCache = true;
  TrainingServer host(fixture.spec, fixture.weights.data(),
                      fixture.weights.size(), options);
  TrainingServer staged(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
  const std::vector<std::vector<int64_t>> microBatches = {
      {1, 1, 3}, {3, 9, -1}, {0, 1}};
  for (TrainingServer *server : {&host, &staged}) {
    for (const std::vector<int64_t> &ids : microBatches)
      server->addPassKeys("emb", ids.data(), ids.size());
    server->beginPass();
  }
  for (int step = 0; step < 2; ++step) {
    for (int b : {2, 0, 1}) {
      const std::vector<int64_t> &ids = microBatches[b];
      std::vector<float> gradients(ids.size() * 2);
      std::iota(gradients.begin(), gradients.end(), 0.25f * float(b + step));
      MicroBatchScope scope(b, 0);
      host.pushRows("emb", ids.data(), ids.size(), gradients.data());
      staged.pushRowsInCache("emb", ids.data(), ids.size(), gradients.data());
    }
    host.finishStep(3);
    staged.finishStep(3);
  }
  // A discarded step's staged gradients are gone, not pushed next step.
  std::vector<int64_t> ids = {1};
  float gradient[2] = {100, 100};
  {
    MicroBatchScope scope(0, 0);
    staged.pushRowsInCache("emb", ids.data(), 1, gradient);
  }
  staged.discardStep();
  for (TrainingServer *server : {&host, &staged})
    server->endPass();
  for (int64_t id = 0; id < 10; ++id)
    EXPECT_EQ(staged.parameterStore().readRow("emb", uint64_t(id)),
              host.parameterStore().readRow("emb", uint64_t(id)))
        << "id " << id;
  // Outside a pass, and mixed with host pushes in one step: errors.
  expectErrorContaining(
      [&] { staged.pushRowsInCache("emb", ids.data(), 1, gradient); },
      "outside a pass");
  staged.addPassKeys("emb", ids.data(), 1);
  staged.beginPass();
  {
    MicroBatchScope scope(0, 0);
    staged.pushRowsInCache("emb", ids.data(), 1, gradient);
  }
  {
    MicroBatchScope scope(1, 0);
    staged.pushRows("emb", ids.data(), 1, gradient);
  }
  expectErrorContaining([&] { staged.finishStep(2); },
                        "both through the host and in the pass cache's");
  staged.discardStep();
  staged.endPass();
  // The host cache's rows are not in GPU memory: no device push for stages.
  EXPECT_EQ(staged.stageServer()->pushRowsFromDevice, nullptr);
  // Sparse staleness holds its update's gradients on the host.
  options.sparseStaleness = 1;
  TrainingServer stale(fixture.spec, fixture.weights.data(),
                       fixture.weights.size(), options);
  stale.addPassKeys("emb", ids.data(), 1);
  stale.beginPass();
  expectErrorContaining(
      [&] {
        MicroBatchScope scope(0, 0);
        stale.pushRowsInCache("emb", ids.data(), 1, gradient);
      },
      "with sparse staleness");
  stale.endPass();
}

/// Dense parameters adopted into a dense cache (what GPU stages read and
/// push through parameterOnDevice and pushDenseFromDevice; host memory for
/// the host cache) train as on the host path, to the bit: micro-batches
/// arriving out of order, a host push mixed in, a learning-rate change, a
/// discarded step; checkpoints, dumps and host lookups see the cache's
/// values.
TEST(TrainingServer, DenseCacheTrainsAsTheHostPath) {
  ScratchDirectory scratch(kScratch, "dense-cache");
  for (const char *optimizer : {"sgd", "adam", "adagrad"}) {
    SCOPED_TRACE(optimizer);
    Fixture fixture(optimizer);
    TrainingServerOptions options;
    options.seed = 7;
    TrainingServer host(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
    options.denseCache = DenseCacheKind::Host;
    TrainingServer cached(fixture.spec, fixture.weights.data(),
                          fixture.weights.size(), options);
    EXPECT_FALSE(cached.denseInCache("dense/w"));
    const float *inCache = cached.parameterInCache("dense/w");
    ASSERT_NE(inCache, nullptr);
    EXPECT_TRUE(cached.denseInCache("dense/w"));
    EXPECT_EQ(values(inCache, 4), (std::vector<float>{1, 2, 3, 4}));
    // The host cache is no GPU's: stages are not offered it.
    EXPECT_EQ(cached.stageServer()->parameterOnDevice, nullptr);
    EXPECT_EQ(cached.stageServer()->pushDenseFromDevice, nullptr);
    const float *hostLive = nullptr;
    for (int step = 0; step < 4; ++step) {
      if (step == 2)
        for (TrainingServer *server : {&host, &cached})
          server->parameterStore().setLearningRateScale(0.5f);
      for (int b : {2, 0, 1}) {
        float gradient[4];
        for (int i = 0; i < 4; ++i)
          gradient[i] = 0.1f * float(i + 1) * float(b + 1) + 0.01f * step;
        MicroBatchScope scope(b, 0);
        host.pushDense("dense/w", gradient, 4);
        if (b == 1)
          cached.pushDense("dense/w", gradient, 4); // a host stage's push
        else
          cached.pushDenseInCache("dense/w", gradient, 4);
      }
      host.finishStep(3);
      cached.finishStep(3);
      EXPECT_EQ(values(inCache, 4), values(host.lookupParameter("dense/w"), 4))
          << "step " << step;
      if (step == 1) // a host stage looks it up after the adoption
        hostLive = cached.lookupParameter("dense/w");
      if (hostLive) {
        EXPECT_EQ(values(hostLive, 4), values(inCache, 4)) << "step " << step;
      }
    }
    // A discarded step's staged gradients are never applied.
    float large[4] = {100, 100, 100, 100};
    {
      MicroBatchScope scope(0, 0);
      cached.pushDenseInCache("dense/w", large, 4);
    }
    cached.discardStep();
    cached.finishStep(1);
    host.finishStep(1);
    EXPECT_EQ(values(inCache, 4), values(host.lookupParameter("dense/w"), 4));
    // Checkpoints and dumps hold the cache's values and state.
    const std::string checkpoint = scratch / (std::string(optimizer) + "-ckpt");
    cached.save(checkpoint);
    auto restored = fixture.server();
    restored->load(checkpoint);
    EXPECT_EQ(restored->parameterStore().readDense("dense_w"),
              host.parameterStore().readDense("dense_w"));
    const std::string dump = scratch / (std::string(optimizer) + "-dump");
    cached.dumpParameters(dump);
    HostTensor dumped = readTensorFile(dump + "/dense_w.npy");
    EXPECT_EQ(values(reinterpret_cast<const float *>(dumped.data.data()), 4),
              values(inCache, 4));
    // A checkpoint load replaces the cache's values too.
    float gradient[4] = {1, 1, 1, 1};
    cached.pushDenseInCache("dense/w", gradient, 4);
    cached.finishStep(1);
    EXPECT_NE(values(inCache, 4), values(host.lookupParameter("dense/w"), 4));
    cached.load(checkpoint);
    EXPECT_EQ(values(inCache, 4), values(host.lookupParameter("dense/w"), 4));
    EXPECT_EQ(values(hostLive, 4), values(inCache, 4));
    // Errors: a wrong size; a training flag is served on the host only.
    expectErrorContaining(
        [&] { cached.pushDenseInCache("dense/w", gradient, 3); },
        "has 4 values but its gradient has 3");
    EXPECT_EQ(cached.parameterInCache(HPS_TRAINING_MODE_PARAMETER), nullptr);
    expectErrorContaining([&] { host.parameterInCache("dense/w"); },
                          "no dense cache");
  }
}

/// The GPU dense cache is offered to stages, made when the first asks: on
/// a machine without a GPU that ask is one clear error.
TEST(TrainingServer, GpuDenseCacheIsMadeWhenAStageAsks) {
  Fixture fixture;
  TrainingServerOptions options;
  options.denseCache = DenseCacheKind::Gpu;
  TrainingServer server(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
  const StageServer &callbacks = *server.stageServer();
  ASSERT_NE(callbacks.parameterOnDevice, nullptr);
  ASSERT_NE(callbacks.pushDenseFromDevice, nullptr);
  const float *flag = &fixture.spec.optimizer.learningRate;
  char error[256] = "";
  EXPECT_EQ(callbacks.parameterOnDevice(callbacks.context,
                                        HPS_TRAINING_MODE_PARAMETER, &flag,
                                        error, sizeof error),
            0);
  EXPECT_EQ(flag, nullptr) << "a training flag is served on the host";
  const float *values = nullptr;
  if (callbacks.parameterOnDevice(callbacks.context, "dense/w", &values, error,
                                  sizeof error) == 0) {
    // A GPU is here (GpuDenseCacheTest checks its updates).
    EXPECT_NE(values, nullptr);
    EXPECT_TRUE(server.denseInCache("dense/w"));
  } else {
    EXPECT_NE(std::string(error).find("dense parameters on the GPU: "),
              std::string::npos)
        << error;
    // The parameter stays the server's.
    EXPECT_FALSE(server.denseInCache("dense/w"));
  }
  // An MPI worker's parameters live in the shared store: no dense cache.
  ps::ParameterServer shared{ps::ParameterServerConfig{}};
  options.store = &shared;
  expectErrorContaining(
      [&] {
        TrainingServer remote(fixture.spec, fixture.weights.data(),
                              fixture.weights.size(), options);
      },
      "a dense cache needs the in-process parameter server");
}

/// Pulls with ids and rows in the pass cache's memory (what a GPU stage
/// pulls through pullRowsByDeviceIds; host memory for the host cache) give
/// the rows of host pulls, negative ids included, and the same errors.
TEST(TrainingServer, PullsInTheCachesMemoryEqualHostPulls) {
  Fixture fixture("adagrad");
  TrainingServerOptions options;
  options.passCache = true;
  TrainingServer server(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
  const std::vector<int64_t> ids = {1, -1, 3, 9, 1, -7};
  std::vector<float> inCache(ids.size() * 2), onHost(ids.size() * 2);
  expectErrorContaining(
      [&] {
        server.pullRowsInCache("emb", ids.data(), ids.size(), inCache.data());
      },
      "outside a pass");
  server.addPassKeys("emb", ids.data(), ids.size());
  server.beginPass();
  server.pullRowsInCache("emb", ids.data(), ids.size(), inCache.data());
  server.pullRows("emb", ids.data(), ids.size(), onHost.data());
  EXPECT_EQ(inCache, onHost);
  EXPECT_EQ(std::vector<float>(inCache.begin() + 2, inCache.begin() + 4),
            std::vector<float>(inCache.begin() + 6, inCache.begin() + 8))
      << "id -1 is row 9";
  // The same errors as the host pull's: an id outside the table, one the
  // pass does not hold.
  for (int64_t bad : {int64_t(10), int64_t(-11), int64_t(5)}) {
    std::string hostError, cacheError;
    try {
      server.pullRows("emb", &bad, 1, onHost.data());
    } catch (const Error &error) {
      hostError = error.what();
    }
    try {
      server.pullRowsInCache("emb", &bad, 1, inCache.data());
    } catch (const Error &error) {
      cacheError = error.what();
    }
    EXPECT_FALSE(hostError.empty()) << bad;
    EXPECT_EQ(cacheError, hostError) << bad;
  }
  // The host cache's rows are not in GPU memory: stages are not offered it.
  EXPECT_EQ(server.stageServer()->pullRowsByDeviceIds, nullptr);
  server.endPass();
}

TEST(TrainingServer, PassCacheRefusesWhatNeedsTheServersRows) {
  ScratchDirectory scratch(kScratch, "pass-errors");
  Fixture fixture;
  TrainingServerOptions options;
  options.passCache = true;
  TrainingServer server(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
  std::vector<int64_t> ids = {2, 5};
  server.addPassKeys("emb", ids.data(), ids.size());
  server.beginPass();
  // The host cache's rows are not in GPU memory: stages get no device pull.
  EXPECT_FALSE(server.rowsOnDevice("emb"));
  EXPECT_EQ(server.stageServer()->rowsOnDevice, nullptr);
  EXPECT_EQ(server.stageServer()->pullRowsToDevice, nullptr);
  float row[4];
  expectErrorContaining(
      [&] { server.pullRowsToDevice("emb", ids.data(), 1, row); },
      "are not in GPU memory");
  expectErrorContaining([&] { server.setEvalMode(true); },
                        "evaluation during a pass");
  expectErrorContaining([&] { server.save(scratch / "ckpt"); },
                        "a checkpoint during a pass");
  expectErrorContaining([&] { server.dumpParameters(scratch / "dump"); },
                        "a parameter dump during a pass");
  // An id the pass does not hold is an error naming it.
  expectErrorContaining([&] { pull(server, {3}); }, "3");
  server.endPass();
  server.save(scratch / "ckpt");
  std::vector<int64_t> outside = {10};
  expectErrorContaining(
      [&] { server.addPassKeys("emb", outside.data(), outside.size()); },
      "id 10 is outside [-10, 10)");
  expectErrorContaining(
      [&] { fixture.server()->addPassKeys("emb", ids.data(), ids.size()); },
      "no pass cache");
  options.memoryRowsPerShard = 4;
  expectErrorContaining(
      [&] {
        TrainingServer(fixture.spec, fixture.weights.data(),
                       fixture.weights.size(), options);
      },
      "--ps-storage-dir");
}

TEST(TrainingServer, SparseStalenessAppliesSparseUpdatesOneStepLate) {
  ScratchDirectory scratch(kScratch, "staleness");
  Fixture fixture;
  TrainingServerOptions options;
  options.sparseStaleness = 1;
  TrainingServer server(fixture.spec, fixture.weights.data(),
                        fixture.weights.size(), options);
  const std::vector<float> start = pull(server, {3});
  std::vector<int64_t> three = {3};
  const float gradient[2] = {1, 2};
  // The row after n of the updates below (SGD, learning rate 1).
  auto updated = [&](int n) {
    std::vector<float> row = start;
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < 2; ++d)
        row[d] -= gradient[d];
    return row;
  };
  const float denseGradient[4] = {1, 1, 1, 1};
  const float *dense = server.lookupParameter("dense/w");

  // Step 1 (one micro-batch, one pull): the dense update is applied at
  // once, the sparse one waits.
  server.beginStep(1);
  EXPECT_EQ(pull(server, {3}), start);
  server.pushRows("emb", three.data(), 1, gradient);
  server.pushDense("dense/w", denseGradient, 4);
  server.finishStep(1);
  EXPECT_EQ(values(dense, 4), (std::vector<float>{0, 1, 2, 3}));
  // Step 2's only pull still reads the row before step 1's update, which
  // it then starts; finishStep waits for it.
  server.beginStep(1);
  EXPECT_EQ(pull(server, {3}), start);
  server.finishStep(1);
  EXPECT_EQ(pull(server, {3}), updated(1));

  // A checkpoint saves a held-back update as it is, still held, and a
  // server that loads it holds it again (one without staleness applies it).
  server.beginStep(1);
  pull(server, {3});
  server.pushRows("emb", three.data(), 1, gradient);
  server.finishStep(1);
  server.save(scratch / "ckpt");
  EXPECT_EQ(pull(server, {3}), updated(1));
  {
    TrainingServer resumed(fixture.spec, fixture.weights.data(),
                           fixture.weights.size(), options);
    resumed.load(scratch / "ckpt");
    EXPECT_EQ(pull(resumed, {3}), updated(1));
    resumed.setEvalMode(true);
    EXPECT_EQ(pull(resumed, {3}), updated(2));
    TrainingServerOptions exact;
    TrainingServer synchronous(fixture.spec, fixture.weights.data(),
                               fixture.weights.size(), exact);
    synchronous.load(scratch / "ckpt");
    EXPECT_EQ(pull(synchronous, {3}), updated(2));
  }
  // An evaluation sees the held-back update applied; after it the rows
  // are as before and the update is held back again, so evaluations do
  // not change training.
  server.beginStep(1);
  pull(server, {3});
  server.pushRows("emb", three.data(), 1, gradient);
  server.finishStep(1);
  server.setEvalMode(true);
  EXPECT_EQ(pull(server, {3}), updated(3));
  server.setEvalMode(false);
  EXPECT_EQ(pull(server, {3}), updated(2));
  server.setEvalMode(true);
  EXPECT_EQ(pull(server, {3}), updated(3));
  server.setEvalMode(false);
  // The next step's pull reads the rows before it, and starts it.
  server.beginStep(1);
  EXPECT_EQ(pull(server, {3}), updated(2));
  server.finishStep(1);
  EXPECT_EQ(pull(server, {3}), updated(3));

  // Every micro-batch must pull alike: a step with more pulls is refused.
  server.beginStep(1);
  pull(server, {3});
  pull(server, {3});
  expectErrorContaining([&] { server.finishStep(1); },
                        "this step made 2, 1 were expected");

  options.sparseStaleness = 2;
  expectErrorContaining(
      [&] {
        TrainingServer(fixture.spec, fixture.weights.data(),
                       fixture.weights.size(), options);
      },
      "sparse staleness must be 0 or 1");
}

TEST(TrainingServer, RejectsABadSpec) {
  Fixture fixture;
  fixture.spec.parameters[0].offset = 72; // 16 bytes from 72 > 80
  EXPECT_THROW(fixture.server(), Error);
  Fixture unknown;
  unknown.spec.optimizer.kind = "lion";
  EXPECT_THROW(unknown.server(), Error);
}

} // namespace
