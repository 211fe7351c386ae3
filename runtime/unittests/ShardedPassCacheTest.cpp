//===- ShardedPassCacheTest.cpp - A pass cache split by key ---------------===//
//
// The sharded pass cache over host shards and host memory: the routing the
// GPU build runs over CUDA devices (ps/ShardedPassCache.h), checked bit for
// bit against the host server and the unsharded cache, errors included.
//
//===----------------------------------------------------------------------===//

#include "../ps/ShardedPassCache.h"

#include "PassCacheFixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace heterps::rt;
using namespace heterps::rt::ps;
using namespace heterps::rt::testsupport;

namespace {

std::unique_ptr<PassCache>
makeHostShards(ParameterServer &server, size_t count,
               std::unique_ptr<PassCache> last = nullptr) {
  std::vector<std::unique_ptr<PassCache>> shards;
  for (size_t i = 0; i + (last ? 1 : 0) < count; ++i)
    shards.push_back(std::make_unique<HostPassCache>(server));
  if (last)
    shards.push_back(std::move(last));
  return makeShardedPassCache(server, std::move(shards),
                              std::vector<int>(count, kHostPlace),
                              makeHostShardMemory());
}

CacheFactory shardedFactory(size_t count) {
  return [count](ParameterServer &server) {
    return makeHostShards(server, count);
  };
}

TEST(ShardedPassCacheTest, TrainsBitIdenticalToTheHostServer) {
  const uint64_t keySpace = 600;
  const auto batches = makeBatches(12, 256, keySpace, 8, 5);
  for (size_t shards : {2, 3})
    for (const NamedOptimizer &optimizer : optimizers())
      for (size_t passBatches : {1, 5, 12})
        for (bool prepareAhead : {false, true}) {
          SCOPED_TRACE(std::to_string(shards) + " shards, " + optimizer.name +
                       ", passes of " + std::to_string(passBatches) +
                       " batches" +
                       (prepareAhead ? ", each prepared during the last" : ""));
          expectCacheTrainsLikeTheServer(batches, keySpace, 8, optimizer.config,
                                         passBatches, prepareAhead,
                                         shardedFactory(shards));
        }
}

TEST(ShardedPassCacheTest, KeysSpreadEvenlyAndEachLivesInOneShard) {
  const size_t shards = 4;
  std::vector<size_t> perShard(shards);
  for (uint64_t key = 0; key < 40000; ++key)
    ++perShard[shardOfKey(key, shards)];
  for (size_t count : perShard)
    EXPECT_NEAR(double(count), 10000.0, 300.0);

  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  auto cache = makeHostShards(server, 3);
  std::vector<uint64_t> keys(1000);
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = i % 700; // 700 distinct, some twice
  cache->addPassKeys("emb", keys.data(), keys.size());
  cache->beginPass();
  EXPECT_EQ(cache->passKeyCount("emb"), 700u);
  EXPECT_EQ(cache->keyCounts().keys, 1000u);
  EXPECT_EQ(cache->keyCounts().distinctRows, 700u);
  EXPECT_EQ(cache->firstMissingId("emb", keys.data(), keys.size()),
            keys.size());
  cache->endPass();
}

/// The GPU stages' way: rows pulled into the caller's memory by key and by
/// user id (negative ids counting from the end), gradients staged in
/// pieces in any order and pushed as one step divided by its micro-batches.
/// The unsharded cache given the same calls ends with the same rows.
TEST(ShardedPassCacheTest, StagePullsAndStagedPushesMatchTheUnshardedCache) {
  const int64_t rows = 3000;
  const auto batches = makeBatches(3, 700, uint64_t(rows), 16, 12);
  ParameterServer shardedServer(serverConfig(2)), plainServer(serverConfig(2));
  for (ParameterServer *server : {&shardedServer, &plainServer})
    server->createSparseTable(tableConfig("emb", 16, adam()));
  auto sharded = makeHostShards(shardedServer, 3);
  HostPassCache plain(plainServer);
  for (PassCache *cache : {sharded.get(), static_cast<PassCache *>(&plain)}) {
    for (const Batch &batch : batches)
      cache->addPassKeys("emb", batch.ids.data(), batch.ids.size());
    cache->beginPass();
  }
  for (int round = 0; round < 2; ++round) {
    for (const Batch &batch : batches) {
      const size_t floats = batch.ids.size() * 16;
      std::vector<float> expected(floats), byKey(floats), byId(floats);
      plain.pull("emb", batch.ids.data(), batch.ids.size(), expected.data());
      sharded->pullToDevice("emb", batch.ids.data(), batch.ids.size(),
                            byKey.data());
      std::vector<int64_t> ids(batch.ids.size());
      for (size_t i = 0; i < ids.size(); ++i)
        ids[i] = i % 2 ? int64_t(batch.ids[i]) - rows : int64_t(batch.ids[i]);
      sharded->pullIds("emb", ids.data(), ids.size(), rows, "user_emb",
                       byId.data());
      EXPECT_TRUE(bitIdentical(expected, byKey));
      EXPECT_TRUE(bitIdentical(expected, byId));
    }
    // Staged in reverse order, pushed in batch order.
    std::vector<size_t> offsets(batches.size());
    for (size_t b = batches.size(); b-- > 0;)
      offsets[b] = sharded->stageGradients("emb", batches[b].gradients.data(),
                                           batches[b].gradients.size());
    const StagedStep step = stagedStep(batches, offsets, 3.0f);
    sharded->pushStaged("emb", step.ids.data(), step.ids.size(), step.segments,
                        3.0f);
    plain.push("emb", step.ids.data(), step.ids.size(), step.divided.data());
  }
  // A discarded step leaves nothing staged.
  sharded->stageGradients("emb", batches[0].gradients.data(), 16);
  sharded->discardStaged();
  EXPECT_THROW(
      sharded->pushStaged("emb", batches[0].ids.data(), 1, {{0, 16}}, 1.0f),
      Error);
  sharded->endPass();
  plain.endPass();
  expectSameRows(snapshot(plainServer, "emb", uint64_t(rows)),
                 snapshot(shardedServer, "emb", uint64_t(rows)));
}

/// The message of what `call` throws ("" if nothing).
template <typename Call> std::string errorOf(Call &&call) {
  try {
    call();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

/// Every misuse gets the unsharded cache's error, word for word, and a
/// failed push changes no row.
TEST(ShardedPassCacheTest, ErrorsAreTheUnshardedCaches) {
  ParameterServer shardedServer(serverConfig(2)), plainServer(serverConfig(2));
  for (ParameterServer *server : {&shardedServer, &plainServer}) {
    server->createSparseTable(tableConfig("emb", 2, adagrad()));
    server->createSparseTable(tableConfig("other", 2, adagrad()));
  }
  auto sharded = makeHostShards(shardedServer, 3);
  HostPassCache plain(plainServer);
  std::vector<uint64_t> inPass(40);
  for (size_t i = 0; i < inPass.size(); ++i)
    inPass[i] = 10 + i;
  // Missing ids late in the batch, the first of them in whichever shard.
  std::vector<uint64_t> outside = inPass;
  outside[25] = 500;
  outside[31] = 501;
  outside[33] = 502;
  std::vector<float> out(2 * 40), gradients(2 * 40, 1.0f);
  auto expectSame = [&](auto &&call) {
    const std::string expected = errorOf([&] { call(plain); });
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(errorOf([&] { call(*sharded); }), expected);
  };
  expectSame(
      [&](PassCache &c) { c.pull("emb", inPass.data(), 2, out.data()); });
  expectSame([&](PassCache &c) { c.endPass(); });
  for (PassCache *cache : {sharded.get(), static_cast<PassCache *>(&plain)}) {
    cache->addPassKeys("emb", inPass.data(), inPass.size());
    cache->beginPass();
  }
  for (size_t missing : {25, 31, 33}) {
    SCOPED_TRACE("first missing at " + std::to_string(missing));
    std::vector<uint64_t> ids = inPass;
    ids[missing] = outside[missing];
    for (size_t later = missing + 1; later < ids.size(); ++later)
      ids[later] = outside[later];
    expectSame([&](PassCache &c) {
      c.pull("emb", ids.data(), ids.size(), out.data());
    });
    EXPECT_EQ(errorOf([&] {
                sharded->pullToDevice("emb", ids.data(), ids.size(),
                                      out.data());
              }),
              errorOf([&] {
                plain.pull("emb", ids.data(), ids.size(), out.data());
              }));
    std::vector<float> before(out.size()), after(out.size());
    sharded->pull("emb", inPass.data(), inPass.size(), before.data());
    expectSame([&](PassCache &c) {
      c.push("emb", ids.data(), ids.size(), gradients.data());
    });
    sharded->pull("emb", inPass.data(), inPass.size(), after.data());
    EXPECT_TRUE(bitIdentical(before, after)) << "a failed push changed a row";
  }
  std::vector<int64_t> badIds = {10, 11, 40000};
  expectSame([&](PassCache &c) {
    c.pullIds("emb", badIds.data(), badIds.size(), 1000, "user_emb",
              out.data());
  });
  expectSame(
      [&](PassCache &c) { c.pull("other", inPass.data(), 2, out.data()); });
  expectSame([&](PassCache &c) {
    c.push("other", inPass.data(), 2, gradients.data());
  });
  expectSame([&](PassCache &c) {
    c.pushStaged("emb", inPass.data(), 2, {{0, 4}}, 1.0f);
  });
  expectSame([&](PassCache &c) { c.beginPass(); });
  // A table the server lacks fails the next pass on every shard.
  for (PassCache *cache : {sharded.get(), static_cast<PassCache *>(&plain)})
    cache->endPass();
  expectSame([&](PassCache &c) {
    c.addPassKeys("missing", inPass.data(), 2);
    c.beginPass();
  });
  EXPECT_FALSE(sharded->inPass());
}

/// A shard that cannot load its rows: no pass opens on any shard, and the
/// next pass trains as if the failure had not been.
class FailingHostPassCache : public HostPassCache {
public:
  using HostPassCache::HostPassCache;
  bool failLoads = true;

protected:
  void loadPass(std::map<std::string, std::vector<uint64_t>> keys) override {
    if (failLoads)
      throw Error("the rows are out of reach");
    HostPassCache::loadPass(std::move(keys));
  }
};

TEST(ShardedPassCacheTest, AShardsFailedLoadOpensNoPass) {
  const auto batches = makeBatches(2, 300, 500, 4, 3);
  ParameterServer shardedServer(serverConfig(2)), plainServer(serverConfig(2));
  for (ParameterServer *server : {&shardedServer, &plainServer})
    server->createSparseTable(tableConfig("emb", 4, adam()));
  auto failing = std::make_unique<FailingHostPassCache>(shardedServer);
  FailingHostPassCache *lastShard = failing.get();
  auto sharded = makeHostShards(shardedServer, 3, std::move(failing));
  sharded->addPassKeys("emb", batches[0].ids.data(), batches[0].ids.size());
  EXPECT_EQ(errorOf([&] { sharded->beginPass(); }),
            "the rows are out of reach");
  EXPECT_FALSE(sharded->inPass());
  lastShard->failLoads = false;
  HostPassCache plain(plainServer);
  for (PassCache *cache : {sharded.get(), static_cast<PassCache *>(&plain)}) {
    for (const Batch &batch : batches)
      cache->addPassKeys("emb", batch.ids.data(), batch.ids.size());
    cache->beginPass();
    for (const Batch &batch : batches)
      cache->push("emb", batch.ids.data(), batch.ids.size(),
                  batch.gradients.data());
    cache->endPass();
  }
  expectSameRows(snapshot(plainServer, "emb", 500),
                 snapshot(shardedServer, "emb", 500));
}

/// A memory limit bounds the pass over all shards, at the shards' bytes per
/// row.
TEST(ShardedPassCacheTest, MemoryLimitBoundsThePassOverAllShards) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  auto sharded = makeHostShards(server, 2);
  HostPassCache plain(server);
  EXPECT_EQ(sharded->bytesPerRow("emb"), plain.bytesPerRow("emb"));
  EXPECT_EQ(sharded->passesInMemory(), plain.passesInMemory());
  const size_t rowBytes = plain.bytesPerRow("emb");
  sharded->setMemoryLimit(2 * 10 * rowBytes); // 10 rows a pass
  std::vector<PassCache::StepKeys> step = {{"emb", {1, 2, 3, 4, 5, 6}}};
  EXPECT_TRUE(sharded->addStepKeys(step));
  step = {{"emb", {7, 8, 9, 10, 11}}};
  EXPECT_FALSE(sharded->addStepKeys(step));
  sharded->beginPass();
  EXPECT_EQ(sharded->passKeyCount("emb"), 6u);
  sharded->endPass();
}

} // namespace
