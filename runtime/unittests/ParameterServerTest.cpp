//===- ParameterServerTest.cpp - Tests of the parameter server ------------===//

#include "heterps/Runtime/ParameterServer.h"

// Internal to the server (not installed); tested directly below.
#include "../ps/FlatKeyMap.h"

#include "ParameterServerFixtures.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <thread>
#include <unordered_map>

using namespace heterps::rt;
using namespace heterps::rt::ps;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;

namespace {

/// Scratch directories of these tests: <temp>/heterps-ps-test-<pid>-<tag>.
const char *const kScratch = "heterps-ps-test";

/// Pulls every batch, then pushes it; returns everything pulled.
std::vector<float> train(ParameterServer &server, const std::string &table,
                         const std::vector<Batch> &batches) {
  std::vector<float> pulled;
  for (const Batch &batch : batches) {
    std::vector<float> rows = server.pull(table, batch.ids);
    pulled.insert(pulled.end(), rows.begin(), rows.end());
    server.push(table, batch.ids, batch.gradients);
  }
  return pulled;
}

TEST(ParameterServerTest, FirstTouchInitDependsOnlyOnSeedAndKey) {
  ParameterServer first(serverConfig(1));
  ParameterServer second(serverConfig(4));
  first.createSparseTable(tableConfig("emb", 8, adam()));
  second.createSparseTable(tableConfig("emb", 8, adam()));
  std::vector<uint64_t> ids = {7, 123456789012345ull, 0, 42, ~0ull};
  std::vector<uint64_t> reversed(ids.rbegin(), ids.rend());

  std::vector<float> rows = first.pull("emb", ids);
  std::vector<float> rowsReversed = second.pull("emb", reversed);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = 0; j < 8; ++j) {
      const float value = rows[i * 8 + j];
      EXPECT_EQ(value, rowsReversed[(ids.size() - 1 - i) * 8 + j]);
      EXPECT_GT(value, -0.05f);
      EXPECT_LT(value, 0.05f);
    }
  // Pulling again returns the same row, not a fresh draw.
  EXPECT_TRUE(bitIdentical(rows, first.pull("emb", ids)));
  // Different keys get different rows.
  EXPECT_NE(rows[0], rows[8]);
  EXPECT_EQ(first.rowCount("emb"), ids.size());
  EXPECT_FALSE(first.readRow("emb", 99).has_value());

  SparseTableConfig otherSeed = tableConfig("emb2", 8, adam());
  otherSeed.seed = 99;
  first.createSparseTable(otherSeed);
  EXPECT_FALSE(bitIdentical(rows, first.pull("emb2", ids)));

  // The optimizer state starts at its initial value (Adam: zero moments,
  // beta powers 1).
  std::vector<float> row = *first.readRow("emb", 42);
  ASSERT_EQ(row.size(), 8u + 2 * 8 + 2);
  for (size_t j = 8; j < 24; ++j)
    EXPECT_EQ(row[j], 0.0f);
  EXPECT_EQ(row[24], 1.0f);
  EXPECT_EQ(row[25], 1.0f);
}

TEST(ParameterServerTest, OneAndFourShardsTrainIdentically) {
  ParameterServer oneShard(serverConfig(1));
  ParameterServer fourShards(serverConfig(4));
  oneShard.createSparseTable(tableConfig("emb", 4, adam()));
  fourShards.createSparseTable(tableConfig("emb", 4, adam()));
  auto batches = makeBatches(20, 64, 200, 4, 7);
  EXPECT_TRUE(bitIdentical(train(oneShard, "emb", batches),
                           train(fourShards, "emb", batches)));
  expectSameRows(snapshot(oneShard, "emb", 200),
                 snapshot(fourShards, "emb", 200));
}

TEST(ParameterServerTest, DuplicateIdsAreSummedBeforeOneUpdate) {
  // Adagrad is not linear in the gradient, so one update with g1 + g2
  // differs from two updates.
  ParameterServer merged(serverConfig(2));
  ParameterServer summed(serverConfig(2));
  ParameterServer twice(serverConfig(2));
  for (ParameterServer *server : {&merged, &summed, &twice})
    server->createSparseTable(tableConfig("emb", 2, adagrad()));
  merged.push("emb", {5, 9, 5}, {1.0f, 2.0f, 0.5f, 0.5f, 3.0f, -1.0f});
  summed.push("emb", {9, 5}, {0.5f, 0.5f, 4.0f, 1.0f});
  twice.push("emb", {5, 9}, {1.0f, 2.0f, 0.5f, 0.5f});
  twice.push("emb", {5}, {3.0f, -1.0f});
  EXPECT_TRUE(
      bitIdentical(*merged.readRow("emb", 5), *summed.readRow("emb", 5)));
  EXPECT_TRUE(
      bitIdentical(*merged.readRow("emb", 9), *summed.readRow("emb", 9)));
  EXPECT_FALSE(
      bitIdentical(*merged.readRow("emb", 5), *twice.readRow("emb", 5)));
  // Accumulator = initial + (sum of gradients)^2.
  EXPECT_FLOAT_EQ((*merged.readRow("emb", 5))[2], 0.1f + 16.0f);
}

// Gradients of three steps; expected weights worked out by hand (in double)
// from the update rules in ParameterServer.h, starting at zero.
const std::vector<std::vector<float>> kSteps = {
    {0.5f, -1.0f}, {0.25f, 2.0f}, {-1.0f, 0.5f}};

void expectOptimizerSteps(const OptimizerConfig &optimizer,
                          const std::vector<std::vector<double>> &expected) {
  ParameterServer server(serverConfig(2));
  SparseTableConfig table = tableConfig("emb", 2, optimizer);
  table.initScale = 0.0f; // rows start at zero, like the hand computation
  server.createSparseTable(table);
  server.createDenseParam("dense", {0.0f, 0.0f}, optimizer);
  for (size_t step = 0; step < kSteps.size(); ++step) {
    server.push("emb", {11}, kSteps[step]);
    server.pushDense("dense", kSteps[step]);
    std::vector<float> row = server.pull("emb", {11});
    std::vector<float> dense = server.pullDense("dense");
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_NEAR(row[i], expected[step][i], 1e-6) << "step " << step;
      EXPECT_NEAR(dense[i], expected[step][i], 1e-6) << "step " << step;
    }
  }
}

TEST(ParameterServerTest, SgdWithMomentumMatchesHandComputedSteps) {
  // v = 0.9 v + g; w -= 0.1 v:
  // v1 = (0.5, -1),     w1 = (-0.05, 0.1)
  // v2 = (0.7, 1.1),    w2 = (-0.12, -0.01)
  // v3 = (-0.37, 1.49), w3 = (-0.083, -0.159)
  expectOptimizerSteps(sgd(0.1f, 0.9f),
                       {{-0.05, 0.1}, {-0.12, -0.01}, {-0.083, -0.159}});
  // Without momentum: w -= 0.1 g.
  expectOptimizerSteps(sgd(0.1f, 0.0f),
                       {{-0.05, 0.1}, {-0.075, -0.1}, {0.025, -0.15}});
}

TEST(ParameterServerTest, AdamMatchesHandComputedSteps) {
  // lr 0.01, betas 0.9/0.999: the first step moves each weight by -lr *
  // sign(g); later steps by lr * mhat / (sqrt(uhat) + eps).
  expectOptimizerSteps(adam(), {{-0.0099999998, 0.0099999999},
                                {-0.019321796, 0.00633896465},
                                {-0.0172582257, 0.00218245269}});
}

TEST(ParameterServerTest, AdagradMatchesHandComputedSteps) {
  // a starts at 0.1: a1 = (0.35, 1.1), a2 = (0.4125, 5.1),
  // a3 = (1.4125, 5.35); w -= 0.1 g / sqrt(a).
  expectOptimizerSteps(adagrad(), {{-0.084515424, 0.095346258},
                                   {-0.123440371, 0.00678476985},
                                   {-0.039299739, -0.0148321151}});
}

TEST(ParameterServerTest, MovingAverageMatchesHandComputedSteps) {
  // w = 0.75 w + 0.25 g, from zero, with no optimizer state:
  // w1 = (0.125, -0.25), w2 = (0.15625, 0.3125),
  // w3 = (-0.1328125, 0.359375).
  OptimizerConfig average;
  average.kind = OptimizerKind::MovingAverage;
  average.momentum = 0.75f;
  EXPECT_EQ(optimizerStateSize(average, 2), 0u);
  EXPECT_STREQ(optimizerName(average.kind), "moving-average");
  expectOptimizerSteps(
      average, {{0.125, -0.25}, {0.15625, 0.3125}, {-0.1328125, 0.359375}});
  // Momentum 1 keeps the value; 0 takes the pushed one.
  ParameterServer server(serverConfig(1));
  average.momentum = 1.0f;
  server.createDenseParam("kept", {2.0f}, average);
  average.momentum = 0.0f;
  server.createDenseParam("taken", {2.0f}, average);
  server.pushDense("kept", {5.0f});
  server.pushDense("taken", {5.0f});
  EXPECT_EQ(server.pullDense("kept"), std::vector<float>{2.0f});
  EXPECT_EQ(server.pullDense("taken"), std::vector<float>{5.0f});
  average.momentum = 1.5f;
  EXPECT_THROW(server.createDenseParam("bad", {0.0f}, average), Error);
}

TEST(ParameterServerTest, LearningRateScaleIsTheRateMultiplied) {
  // One step at scale 2 is one step at twice the rate, to the bit (doubling
  // a float is exact), for every optimizer with a rate; moving averages
  // have none and stay as they are. Scale 1 again is the original rate.
  OptimizerConfig average;
  average.kind = OptimizerKind::MovingAverage;
  average.momentum = 0.75f;
  for (OptimizerConfig optimizer :
       {sgd(0.1f, 0.0f), sgd(0.1f, 0.9f), adam(), adagrad(), average}) {
    OptimizerConfig doubled = optimizer;
    doubled.learningRate *= 2;
    ParameterServer scaled(serverConfig(2)), reference(serverConfig(2));
    scaled.createSparseTable(tableConfig("emb", 2, optimizer));
    scaled.createDenseParam("dense", {1.0f, -1.0f}, optimizer);
    reference.createSparseTable(tableConfig("emb", 2, doubled));
    reference.createDenseParam("dense", {1.0f, -1.0f}, doubled);
    EXPECT_EQ(scaled.learningRateScale(), 1.0f);
    scaled.setLearningRateScale(2.0f);
    for (ParameterServer *server : {&scaled, &reference}) {
      server->push("emb", {11, 12, 11}, {0.5f, -1.0f, 0.25f, 2.0f, 1.0f, 1.0f});
      server->pushDense("dense", {0.5f, -0.25f});
    }
    const std::string kind = optimizerName(optimizer.kind);
    EXPECT_TRUE(
        bitIdentical(*scaled.readRow("emb", 11), *reference.readRow("emb", 11)))
        << kind;
    EXPECT_TRUE(
        bitIdentical(*scaled.readRow("emb", 12), *reference.readRow("emb", 12)))
        << kind;
    EXPECT_TRUE(
        bitIdentical(scaled.readDense("dense"), reference.readDense("dense")))
        << kind;
  }
  ParameterServer server(serverConfig(1));
  server.createDenseParam("w", {1.0f}, sgd(0.5f, 0.0f));
  server.setLearningRateScale(2.0f);
  server.setLearningRateScale(1.0f);
  server.pushDense("w", {1.0f});
  EXPECT_EQ(server.pullDense("w"), std::vector<float>{0.5f});
  server.setLearningRateScale(0.0f); // a warm-up may start from nothing
  server.pushDense("w", {1.0f});
  EXPECT_EQ(server.pullDense("w"), std::vector<float>{0.5f});
  EXPECT_THROW(server.setLearningRateScale(-1.0f), Error);
  EXPECT_THROW(server.setLearningRateScale(std::nanf("")), Error);
  EXPECT_THROW(server.setLearningRateScale(INFINITY), Error);
}

/// True if `future` is still waiting after a while.
template <typename T> bool stillBlocked(std::future<T> &future) {
  return future.wait_for(std::chrono::milliseconds(200)) ==
         std::future_status::timeout;
}

TEST(ParameterServerTest, SynchronousPullWaitsForEveryWorker) {
  ParameterServerConfig config = serverConfig(2);
  config.numWorkers = 2;
  config.mode = ConsistencyMode::Synchronous;
  ParameterServer server(config);
  server.createSparseTable(tableConfig("emb", 2, sgd(1.0f, 0.0f)));
  const float initial = server.pull("emb", {3})[0];

  // Step 0: both may pull. Worker 0 pushes and finishes step 0.
  server.pull("emb", {3}, 0);
  server.push("emb", {3}, {1.0f, 1.0f});
  server.reportStep(0, 1);
  auto ahead = std::async(std::launch::async,
                          [&] { return server.pull("emb", {3}, 0)[0]; });
  EXPECT_TRUE(stillBlocked(ahead));
  // Worker 1 pushes its step 0 and reports: worker 0's pull sees both.
  server.push("emb", {3}, {2.0f, 2.0f});
  server.reportStep(1, 1);
  EXPECT_EQ(ahead.get(), initial - 1.0f - 2.0f);
}

TEST(ParameterServerTest, AsynchronousPullBlocksBeyondTheStalenessBound) {
  ParameterServerConfig config = serverConfig(1);
  config.numWorkers = 3;
  config.mode = ConsistencyMode::Asynchronous;
  config.staleness = 2;
  ParameterServer server(config);
  server.createSparseTable(tableConfig("emb", 2, adam()));
  server.createDenseParam("w", {1.0f}, adam());

  // Two steps ahead of the slowest worker is allowed.
  server.reportStep(0, 2);
  server.pull("emb", {1}, 0);
  server.pullDense("w", 0);
  // Three steps ahead blocks, sparse and dense alike, until the slowest
  // workers catch up to step 1.
  server.reportStep(0, 3);
  auto sparse = std::async(std::launch::async,
                           [&] { return server.pull("emb", {1}, 0).size(); });
  auto dense = std::async(std::launch::async,
                          [&] { return server.pullDense("w", 0).size(); });
  EXPECT_TRUE(stillBlocked(sparse));
  server.reportStep(1, 1);
  EXPECT_TRUE(stillBlocked(sparse)) << "worker 2 is still at step 0";
  // A worker that leaves no longer holds the others back.
  server.retireWorker(2);
  EXPECT_EQ(sparse.get(), 2u);
  EXPECT_EQ(dense.get(), 1u);
  // Pulls outside any worker (evaluation) never block.
  server.reportStep(0, 10);
  EXPECT_EQ(server.pull("emb", {1}).size(), 2u);
  EXPECT_THROW(server.reportStep(3, 1), Error);

  // Unbounded staleness never blocks.
  config.staleness = -1;
  ParameterServer unbounded(config);
  unbounded.createSparseTable(tableConfig("emb", 2, adam()));
  unbounded.reportStep(0, 1000);
  EXPECT_EQ(unbounded.pull("emb", {1}, 0).size(), 2u);
}

TEST(ParameterServerTest, RocksDbTierTrainsLikeInMemory) {
  ScratchDirectory storage(kScratch, "tier");
  // 4000 keys, 2 shards of at most 500 cached rows: the cache holds a
  // quarter of the table.
  const uint64_t keySpace = 4000;
  for (OptimizerConfig optimizer : {adam(), sgd(0.05f, 0.9f), adagrad()}) {
    ParameterServer inMemory(serverConfig(2));
    ParameterServer tiered(serverConfig(2, storage.path.string()));
    inMemory.createSparseTable(tableConfig("emb", 8, optimizer));
    tiered.createSparseTable(tableConfig("emb", 8, optimizer, 500));
    auto batches = makeBatches(40, 512, keySpace, 8, 11);
    EXPECT_TRUE(bitIdentical(train(inMemory, "emb", batches),
                             train(tiered, "emb", batches)));
    EXPECT_GT(tiered.rowCount("emb"), 3000u);
    EXPECT_EQ(tiered.rowCount("emb"), inMemory.rowCount("emb"));
    expectSameRows(snapshot(inMemory, "emb", keySpace),
                   snapshot(tiered, "emb", keySpace));
  }
}

TEST(ParameterServerTest, StorageDirectoryHoldsOneServer) {
  ScratchDirectory scratch(kScratch, "storage-lock");
  const std::string storage = scratch / "rocks";
  auto batches = makeBatches(10, 256, 4000, 8, 11);
  ParameterServer reference(serverConfig(2));
  reference.createSparseTable(tableConfig("emb", 8, adam()));
  {
    ParameterServer first(serverConfig(2, storage));
    first.createSparseTable(tableConfig("emb", 8, adam(), 100));
    (void)train(first, "emb", batches);
    (void)train(reference, "emb", batches);
    // A second server on the directory would replace the first's
    // databases, and with them the rows evicted to them.
    try {
      ParameterServer refused(serverConfig(2, storage));
      ADD_FAILURE() << "a second server on a held storage directory";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what())
                    .find("parameter-server storage directory '" + storage +
                          "' is in use by this process already (pid " +
                          processId()),
                std::string::npos)
          << error.what();
    }
    expectSameRows(snapshot(reference, "emb", 4000),
                   snapshot(first, "emb", 4000));
  }
  // The databases are scratch: they go with their tables, and the
  // directory with them where the server made it.
  EXPECT_FALSE(fs::exists(storage));
  EXPECT_NO_THROW(ParameterServer again(serverConfig(2, storage)));
}

/// A server with an in-memory table, a RocksDB-tier table and two dense
/// parameters, trained a little.
std::unique_ptr<ParameterServer>
trainedServer(size_t shards, const std::string &storage, bool train) {
  auto server =
      std::make_unique<ParameterServer>(serverConfig(shards, storage));
  server->createSparseTable(tableConfig("user", 4, adam()));
  server->createSparseTable(tableConfig("item", 8, adagrad(), 64));
  server->createDenseParam("tower.weight", std::vector<float>(12, 0.5f),
                           adam());
  server->createDenseParam("tower.bias", {0.0f, 1.0f}, sgd(0.1f, 0.9f));
  if (train) {
    ::train(*server, "user", makeBatches(10, 64, 300, 4, 3));
    ::train(*server, "item", makeBatches(10, 128, 1000, 8, 4));
    for (int step = 0; step < 3; ++step) {
      server->pushDense("tower.weight", std::vector<float>(12, 0.1f * step));
      server->pushDense("tower.bias", {1.0f, -0.5f});
    }
  }
  return server;
}

void expectSameServers(ParameterServer &a, ParameterServer &b) {
  expectSameRows(snapshot(a, "user", 300), snapshot(b, "user", 300));
  expectSameRows(snapshot(a, "item", 1000), snapshot(b, "item", 1000));
  EXPECT_EQ(a.rowCount("item"), b.rowCount("item"));
  EXPECT_TRUE(
      bitIdentical(a.readDense("tower.weight"), b.readDense("tower.weight")));
  EXPECT_TRUE(
      bitIdentical(a.readDense("tower.bias"), b.readDense("tower.bias")));
}

TEST(ParameterServerTest, CheckpointRoundTripIsBitIdentical) {
  ScratchDirectory scratch(kScratch, "checkpoint");
  auto original = trainedServer(4, scratch / "storage-a", true);
  const std::string checkpoint = scratch / "ckpt";
  original->save(checkpoint);
  // Saving again replaces the checkpoint atomically, leaving no temporaries.
  original->save(checkpoint);
  EXPECT_TRUE(fs::exists(checkpoint + "/metadata"));
  EXPECT_FALSE(fs::exists(checkpoint + ".tmp"));
  EXPECT_FALSE(fs::exists(checkpoint + ".old"));

  // Same shard count, and a different one (rows are re-sharded on load).
  for (size_t shards : {4u, 3u}) {
    auto restored = trainedServer(
        shards, scratch / ("storage-" + std::to_string(shards)), false);
    restored->load(checkpoint);
    expectSameServers(*original, *restored);
    // The optimizer state came back too: training on gives the same values.
    auto more = makeBatches(5, 128, 1000, 8, 5);
    auto copyOfOriginal = trainedServer(4, scratch / "storage-c", false);
    copyOfOriginal->load(checkpoint);
    EXPECT_TRUE(bitIdentical(train(*copyOfOriginal, "item", more),
                             train(*restored, "item", more)));
    expectSameServers(*copyOfOriginal, *restored);
  }
}

void flipByte(const std::string &path, long offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(offset);
  char byte = 0;
  file.read(&byte, 1);
  byte ^= 0x20;
  file.seekp(offset);
  file.write(&byte, 1);
}

/// The message of the Error that load() throws.
std::string loadError(ParameterServer &server, const std::string &directory) {
  try {
    server.load(directory);
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

TEST(ParameterServerTest, CorruptCheckpointIsDetectedAndNamed) {
  ScratchDirectory scratch(kScratch, "corrupt");
  auto original = trainedServer(2, scratch / "storage-a", true);
  const std::string checkpoint = scratch / "ckpt";
  original->save(checkpoint);
  auto untouched = trainedServer(2, scratch / "storage-b", true);
  auto target = trainedServer(2, scratch / "storage-c", true);

  const std::string shardFile = checkpoint + "/sparse.item.shard-1.bin";
  flipByte(shardFile, 100);
  std::string message = loadError(*target, checkpoint);
  EXPECT_NE(message.find("sparse.item.shard-1.bin"), std::string::npos)
      << message;
  EXPECT_NE(message.find("corrupt"), std::string::npos) << message;
  // Nothing was loaded.
  expectSameServers(*untouched, *target);
  flipByte(shardFile, 100);
  target->load(checkpoint);
  expectSameServers(*original, *target);

  flipByte(checkpoint + "/dense.bin", 20);
  message = loadError(*target, checkpoint);
  EXPECT_NE(message.find("dense.bin"), std::string::npos) << message;
  flipByte(checkpoint + "/dense.bin", 20);

  flipByte(checkpoint + "/metadata", 10);
  message = loadError(*target, checkpoint);
  EXPECT_NE(message.find("metadata"), std::string::npos) << message;
  flipByte(checkpoint + "/metadata", 10);

  fs::remove(checkpoint + "/sparse.user.shard-0.bin");
  message = loadError(*target, checkpoint);
  EXPECT_NE(message.find("sparse.user.shard-0.bin"), std::string::npos)
      << message;
  EXPECT_NE(message.find("missing"), std::string::npos) << message;

  // A checkpoint of other tables is refused.
  ParameterServer other(serverConfig(1));
  other.createSparseTable(tableConfig("user", 4, adam()));
  original->save(checkpoint);
  EXPECT_NE(loadError(other, checkpoint).find("does not match"),
            std::string::npos);
}

/// What shard `self` of `shards` owns: keys by key % shards, and the dense
/// parameters listed for it.
CheckpointSelection shardSelection(size_t shards, size_t self,
                                   const std::vector<std::string> &dense) {
  CheckpointSelection selection;
  selection.ownsKey = [shards, self](uint64_t key) {
    return key % shards == self;
  };
  selection.ownsDense = [dense](const std::string &name) {
    return std::find(dense.begin(), dense.end(), name) != dense.end();
  };
  return selection;
}

/// trainedServer()'s tables, untrained, and only the given dense parameters
/// (a shard of a multi-process job creates those routed to it).
std::unique_ptr<ParameterServer>
shardServer(const std::string &storage, const std::vector<std::string> &dense) {
  auto full = trainedServer(1, storage + "-tables", false);
  auto server = std::make_unique<ParameterServer>(serverConfig(2, storage));
  server->createSparseTable(full->tableConfig("user"));
  server->createSparseTable(full->tableConfig("item"));
  for (const std::string &name : dense)
    server->createDenseParam(name,
                             std::vector<float>(name == "tower.bias" ? 2 : 12),
                             name == "tower.bias" ? sgd(0.1f, 0.9f) : adam());
  return server;
}

TEST(ParameterServerTest, CheckpointPartsReshardToAnyCount) {
  ScratchDirectory scratch(kScratch, "parts");
  auto original = trainedServer(4, scratch / "storage-a", true);
  const std::string whole = scratch / "whole";
  original->save(whole);

  // Three shards take their share of a one-server checkpoint and write a
  // three-part one, as a job of three shards does.
  const std::vector<std::vector<std::string>> denseOfThree = {
      {"tower.weight"}, {}, {"tower.bias"}};
  const std::string threeParts = scratch / "three";
  for (size_t self = 0; self < 3; ++self) {
    auto shard = shardServer(scratch / ("s3-" + std::to_string(self)),
                             denseOfThree[self]);
    shard->loadParts({whole}, shardSelection(3, self, denseOfThree[self]));
    shard->save(threeParts + "/" + checkpointPartName(self));
    for (uint64_t key = 0; key < 1000; ++key)
      EXPECT_EQ(shard->readRow("item", key).has_value(),
                key % 3 == self && original->readRow("item", key));
  }
  ASSERT_EQ(checkpointParts(threeParts).size(), 3u);

  // One server loads all three parts whole.
  auto single = trainedServer(3, scratch / "storage-b", false);
  single->load(threeParts);
  expectSameServers(*original, *single);

  // Two shards take theirs: every row and dense parameter is on its owner,
  // bit for bit, and nowhere else.
  const std::vector<std::vector<std::string>> denseOfTwo = {
      {"tower.bias", "tower.weight"}, {}};
  size_t rows = 0;
  for (size_t self = 0; self < 2; ++self) {
    auto shard =
        shardServer(scratch / ("s2-" + std::to_string(self)), denseOfTwo[self]);
    shard->loadParts(checkpointParts(threeParts),
                     shardSelection(2, self, denseOfTwo[self]));
    for (const char *table : {"user", "item"}) {
      for (uint64_t key = 0; key < 1000; ++key) {
        auto expected = original->readRow(table, key);
        auto actual = shard->readRow(table, key);
        if (key % 2 != self || !expected) {
          EXPECT_FALSE(actual.has_value()) << table << " " << key;
          continue;
        }
        ASSERT_TRUE(actual.has_value()) << table << " " << key;
        EXPECT_TRUE(bitIdentical(*expected, *actual)) << table << " " << key;
        ++rows;
      }
    }
    for (const std::string &name : denseOfTwo[self])
      EXPECT_TRUE(
          bitIdentical(original->readDense(name), shard->readDense(name)));
  }
  EXPECT_EQ(rows, original->rowCount("user") + original->rowCount("item"));

  // A shard whose dense parameter no part holds, or that some other shard
  // would also take, is refused before anything changes.
  auto orphan = shardServer(scratch / "s-orphan", {"tower.weight"});
  EXPECT_NE(loadError(*orphan, scratch / "three/shard-1")
                .find("has no dense parameter 'tower.weight'"),
            std::string::npos);
  fs::create_directories(scratch / "twice");
  fs::copy(threeParts + "/shard-0", scratch / "twice/shard-0",
           fs::copy_options::recursive);
  fs::copy(threeParts + "/shard-0", scratch / "twice/shard-1",
           fs::copy_options::recursive);
  EXPECT_NE(
      loadError(*single, scratch / "twice").find("'tower.weight' is in both"),
      std::string::npos);
  // A missing part is named, never skipped.
  fs::remove_all(threeParts + "/shard-1");
  EXPECT_NE(loadError(*single, threeParts)
                .find("holds 'shard-2' but not every part before it"),
            std::string::npos);
  expectSameServers(*original, *single);
}

TEST(ParameterServerTest, PeekCreatesNoRowAndReadsWhatPullWould) {
  ScratchDirectory scratch(kScratch, "peek");
  // In memory and with a row cache smaller than the peeked ids.
  for (size_t cacheRows : {0u, 16u}) {
    ParameterServer server(serverConfig(2, scratch.path.string()));
    server.createSparseTable(tableConfig("emb", 4, adagrad(), cacheRows));
    ::train(server, "emb", makeBatches(3, 64, 100, 4, 9));
    const size_t rows = server.rowCount("emb");
    std::vector<uint64_t> ids;
    for (uint64_t key = 0; key < 200; ++key)
      ids.push_back(key);
    std::vector<float> peeked(ids.size() * 4);
    server.peek("emb", ids.data(), ids.size(), peeked.data());
    EXPECT_EQ(server.rowCount("emb"), rows);
    for (uint64_t key = 100; key < 200; ++key)
      EXPECT_FALSE(server.readRow("emb", key).has_value()) << key;
    // A pull (which creates the untouched rows) reads the same values.
    EXPECT_TRUE(bitIdentical(peeked, server.pull("emb", ids)));
    EXPECT_GT(server.rowCount("emb"), rows);
  }
}

TEST(ParameterServerTest, ConcurrentPushesAndPullsLoseNoUpdate) {
  // SGD with lr 1 and gradient 1 subtracts exactly 1 per update, whatever
  // the interleaving, so the result is known exactly.
  ScratchDirectory storage(kScratch, "concurrent");
  for (size_t cacheRows : {0u, 8u}) {
    ParameterServer server(serverConfig(4, storage.path.string()));
    server.createSparseTable(tableConfig("emb", 4, sgd(1.0f, 0.0f), cacheRows));
    server.createDenseParam("w", {0.0f, 0.0f}, sgd(1.0f, 0.0f));
    const uint64_t keySpace = 64;
    const int threads = 4, steps = 300;
    std::vector<std::vector<int>> updatesPerThread(threads,
                                                   std::vector<int>(keySpace));
    std::vector<std::thread> workers;
    std::atomic<bool> sawBadValue{false};
    for (int worker = 0; worker < threads; ++worker)
      workers.emplace_back([&, worker] {
        std::mt19937 random(worker);
        for (int step = 0; step < steps; ++step) {
          std::vector<uint64_t> ids;
          for (uint64_t key = 0; key < keySpace; ++key)
            if (random() % 3 == 0)
              ids.push_back(key);
          std::vector<float> rows = server.pull("emb", ids);
          for (float value : rows)
            if (!std::isfinite(value) || value > 1.0f)
              sawBadValue = true;
          server.push("emb", ids, std::vector<float>(ids.size() * 4, 1.0f));
          server.pushDense("w", {1.0f, 1.0f});
          for (uint64_t key : ids)
            ++updatesPerThread[worker][key];
        }
      });
    for (auto &thread : workers)
      thread.join();
    EXPECT_FALSE(sawBadValue);

    ParameterServer reference(serverConfig(1));
    reference.createSparseTable(tableConfig("emb", 4, sgd(1.0f, 0.0f)));
    for (uint64_t key = 0; key < keySpace; ++key) {
      std::vector<float> expected = reference.pull("emb", {key});
      int updates = 0;
      for (int worker = 0; worker < threads; ++worker)
        updates += updatesPerThread[worker][key];
      for (int i = 0; i < updates; ++i)
        for (float &value : expected)
          value -= 1.0f;
      EXPECT_TRUE(bitIdentical(expected, server.pull("emb", {key})))
          << "key " << key << " cache " << cacheRows;
    }
    EXPECT_EQ(server.pullDense("w")[0], -static_cast<float>(threads * steps));
  }
}

TEST(ParameterServerTest, BadArgumentsThrow) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 2, adam()));
  EXPECT_THROW(server.createSparseTable(tableConfig("emb", 2, adam())), Error);
  EXPECT_THROW(server.createSparseTable(tableConfig("a b", 2, adam())), Error);
  EXPECT_THROW(server.createSparseTable(tableConfig("tier", 2, adam(), 10)),
               Error)
      << "a cache needs a storage directory";
  EXPECT_THROW(server.pull("missing", {1}), Error);
  EXPECT_THROW(server.push("emb", {1}, {1.0f}), Error);
  OptimizerConfig badMomentum = sgd(0.1f, 1.5f);
  EXPECT_THROW(server.createDenseParam("w", {1.0f}, badMomentum), Error);
  EXPECT_THROW(ParameterServer(serverConfig(0)), Error);
}

/// Both servers trained the same way write byte-identical checkpoints (the
/// row order of a shard file follows the server's history, not addresses).
TEST(ParameterServerTest, CheckpointBytesAreReproducible) {
  ScratchDirectory scratch(kScratch, "reproducible");
  auto first = trainedServer(4, scratch / "storage-a", true);
  auto second = trainedServer(4, scratch / "storage-b", true);
  first->save(scratch / "ckpt-a");
  second->save(scratch / "ckpt-b");
  auto bytes = [](const fs::path &path) {
    std::ifstream stream(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(stream)),
                       std::istreambuf_iterator<char>());
  };
  size_t files = 0;
  for (const auto &entry : fs::directory_iterator(scratch / "ckpt-a")) {
    const fs::path other =
        fs::path(scratch / "ckpt-b") / entry.path().filename();
    ASSERT_TRUE(fs::exists(other)) << other;
    EXPECT_EQ(bytes(entry.path()), bytes(other)) << entry.path().filename();
    ++files;
  }
  EXPECT_EQ(files, 2u * 4u + 2u); // 2 tables x 4 shards, dense.bin, metadata
}

//===----------------------------------------------------------------------===//
// FlatKeyMap, the shards' row index and the scratch maps of pull/push.
//===----------------------------------------------------------------------===//

using Oracle = std::unordered_map<uint64_t, uint32_t>;

/// The map holds exactly the oracle's entries, each visited once.
void expectSameEntries(const FlatKeyMap &map, const Oracle &oracle) {
  ASSERT_EQ(map.size(), oracle.size());
  EXPECT_EQ(map.empty(), oracle.empty());
  for (const auto &[key, value] : oracle) {
    const uint32_t *found = map.find(key);
    ASSERT_NE(found, nullptr) << "key " << key;
    EXPECT_EQ(*found, value) << "key " << key;
  }
  Oracle visited;
  map.forEach([&](uint64_t key, uint32_t value) {
    EXPECT_TRUE(visited.emplace(key, value).second) << "key " << key;
  });
  EXPECT_EQ(visited, oracle);
}

TEST(FlatKeyMapTest, RandomOperationsMatchUnorderedMap) {
  std::mt19937_64 random(2024);
  // Mostly a small key range (many hits, long runs), plus the extremes and
  // arbitrary 64-bit keys.
  auto nextKey = [&]() -> uint64_t {
    switch (random() % 10) {
    case 0:
      return 0;
    case 1:
      return UINT64_MAX;
    case 2:
      return UINT64_MAX - random() % 4;
    case 3:
      return random();
    default:
      return random() % 3000;
    }
  };
  FlatKeyMap map;
  Oracle oracle;
  for (int op = 0; op < 200000; ++op) {
    const uint64_t key = nextKey();
    const uint32_t value = static_cast<uint32_t>(random());
    switch (random() % 8) {
    case 0:
    case 1:
    case 2: {
      auto [stored, inserted] = map.emplace(key, value);
      auto [expected, expectedInserted] = oracle.emplace(key, value);
      ASSERT_EQ(inserted, expectedInserted) << "key " << key;
      ASSERT_EQ(*stored, expected->second) << "key " << key;
      break;
    }
    case 3:
    case 4:
      ASSERT_EQ(map.erase(key), oracle.erase(key) == 1) << "key " << key;
      break;
    case 5: {
      const uint32_t *found = map.find(key);
      auto expected = oracle.find(key);
      ASSERT_EQ(found != nullptr, expected != oracle.end()) << "key " << key;
      if (found) {
        ASSERT_EQ(*found, expected->second);
      }
      ASSERT_EQ(map.count(key), oracle.count(key));
      break;
    }
    case 6:
      if (uint32_t *found = map.find(key)) {
        *found = value; // writes through find() stick
        oracle[key] = value;
      }
      break;
    default:
      if (random() % 5000 == 0) {
        map.clear();
        oracle.clear();
      }
      break;
    }
    if (op % 10000 == 0)
      expectSameEntries(map, oracle);
  }
  expectSameEntries(map, oracle);
}

TEST(FlatKeyMapTest, ExtremeKeysAreOrdinaryKeys) {
  FlatKeyMap map;
  EXPECT_EQ(map.find(0), nullptr);
  EXPECT_EQ(map.find(UINT64_MAX), nullptr);
  EXPECT_FALSE(map.erase(UINT64_MAX));
  EXPECT_TRUE(map.emplace(UINT64_MAX, 7).second);
  EXPECT_TRUE(map.emplace(0, 8).second);
  EXPECT_FALSE(map.emplace(UINT64_MAX, 9).second);
  EXPECT_EQ(*map.emplace(UINT64_MAX, 9).first, 7u);
  EXPECT_EQ(*map.find(0), 8u);
  EXPECT_EQ(map.size(), 2u);
  EXPECT_TRUE(map.erase(UINT64_MAX));
  EXPECT_EQ(map.find(UINT64_MAX), nullptr);
  EXPECT_EQ(*map.find(0), 8u);
  EXPECT_TRUE(map.erase(0));
  EXPECT_TRUE(map.empty());
}

TEST(FlatKeyMapTest, GrowsAndKeepsTheLoadBounded) {
  FlatKeyMap map;
  Oracle oracle;
  for (uint32_t i = 0; i < 100000; ++i) {
    // Sequential ids and ids sharing their low bits (one shard's keys).
    const uint64_t key = i % 2 ? i : uint64_t(i) << 20;
    map.emplace(key, i);
    oracle.emplace(key, i);
    const size_t capacity = map.capacity();
    ASSERT_EQ(capacity & (capacity - 1), 0u) << "a power of two";
    ASSERT_LE(map.size() * 10, capacity * 7) << "at most 70% full";
  }
  expectSameEntries(map, oracle);

  // reserve() makes room up front: no rehash (pointers stay valid).
  FlatKeyMap reserved;
  reserved.reserve(5001);
  const size_t capacity = reserved.capacity();
  uint32_t *first = reserved.emplace(42, 1).first;
  for (uint64_t key = 0; key < 5000; ++key)
    reserved.emplace(key * 977, 0);
  EXPECT_EQ(reserved.capacity(), capacity);
  EXPECT_EQ(first, reserved.find(42));
}

TEST(FlatKeyMapTest, ClearKeepsCapacityAndTheMapReusable) {
  FlatKeyMap map;
  std::mt19937_64 random(7);
  size_t capacity = 0;
  // A scratch map: filled and cleared many times, different keys each time.
  for (int round = 0; round < 300; ++round) {
    Oracle oracle;
    const int entries = 1 + static_cast<int>(random() % 2000);
    for (int i = 0; i < entries; ++i) {
      const uint64_t key = random() % 5000 + uint64_t(round % 3) * 100000;
      map.emplace(key, static_cast<uint32_t>(i));
      oracle.emplace(key, static_cast<uint32_t>(i));
    }
    if (round % 7 == 0)
      map.erase(oracle.begin()->first), oracle.erase(oracle.begin());
    expectSameEntries(map, oracle);
    capacity = std::max(capacity, map.capacity());
    map.clear();
    EXPECT_TRUE(map.empty());
    EXPECT_EQ(map.capacity(), capacity) << "clear keeps the slots";
    for (const auto &[key, value] : oracle)
      ASSERT_EQ(map.find(key), nullptr) << "key " << key;
    map.forEach([](uint64_t, uint32_t) { FAIL() << "visited after clear"; });
  }
}

TEST(FlatKeyMapTest, EraseShiftsBackLongProbeRuns) {
  // 11 keys fit 16 slots: five want the last slot (their run wraps around
  // to the front), four slot 1 and two slot 2, so one run covers slots 15
  // and 0..9.
  std::vector<uint64_t> keys;
  const std::pair<uint64_t, int> wanted[] = {{15, 5}, {1, 4}, {2, 2}};
  for (const auto &[slot, count] : wanted)
    for (uint64_t key = 0, found = 0; found < uint64_t(count); ++key)
      if (ps::FlatKeyMap::mix(key) >> 60 == slot)
        keys.push_back(key), ++found;
  // Every order of erasing three of them, from every insertion order tried.
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 40; ++trial) {
    std::shuffle(keys.begin(), keys.end(), random);
    FlatKeyMap map;
    Oracle oracle;
    for (size_t i = 0; i < keys.size(); ++i) {
      map.emplace(keys[i], static_cast<uint32_t>(i));
      oracle.emplace(keys[i], static_cast<uint32_t>(i));
    }
    ASSERT_EQ(map.capacity(), 16u);
    for (size_t a = 0; a < keys.size(); ++a)
      for (size_t b = 0; b < keys.size(); ++b) {
        if (a == b)
          continue;
        FlatKeyMap copy = map;
        Oracle expected = oracle;
        for (size_t victim : {a, b, (a + b) % keys.size()}) {
          EXPECT_EQ(copy.erase(keys[victim]),
                    expected.erase(keys[victim]) == 1);
          expectSameEntries(copy, expected);
        }
        // The freed slots take new keys again.
        copy.emplace(keys[a], 99);
        expected.emplace(keys[a], 99);
        expectSameEntries(copy, expected);
      }
  }
}

TEST(FlatKeyMapTest, IterationOrderDependsOnlyOnHistory) {
  auto build = [] {
    FlatKeyMap map;
    std::mt19937_64 random(3);
    for (int i = 0; i < 20000; ++i) {
      const uint64_t key = random() % 30000;
      if (i % 4 == 3)
        map.erase(key);
      else
        map.emplace(key, static_cast<uint32_t>(i));
    }
    std::vector<std::pair<uint64_t, uint32_t>> order;
    map.forEach(
        [&](uint64_t key, uint32_t value) { order.emplace_back(key, value); });
    return order;
  };
  EXPECT_EQ(build(), build());
}

} // namespace
