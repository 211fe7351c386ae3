//===- PassCacheTest.cpp - Tests of the per-pass embedding cache ----------===//
//
// Training through HostPassCache must give, bit for bit, what the same pulls
// and pushes give on the synchronous host server: every pulled value, every
// row and every optimizer state.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/PassCache.h"

// Internal to the server (not installed); tested directly below.
#include "../ps/Optimizers.h"
#include "../ps/PassCacheKernels.h"
#include "../ps/PassKeyIndex.h"

#include "PassCacheFixtures.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>

using namespace heterps::rt;
using namespace heterps::rt::ps;
using namespace heterps::rt::testsupport;

namespace {

const char *const kScratch = "heterps-pass-cache-test";

TEST(PassCacheTest, TrainsBitIdenticalToTheHostServer) {
  const uint64_t keySpace = 600;
  const auto batches = makeBatches(12, 256, keySpace, 8, 5);
  for (const NamedOptimizer &optimizer : optimizers()) {
    for (size_t passBatches : {1, 4, 5, 12})
      for (bool prepareAhead : {false, true}) {
        SCOPED_TRACE(std::string(optimizer.name) + ", passes of " +
                     std::to_string(passBatches) + " batches" +
                     (prepareAhead ? ", each prepared during the last" : ""));
        expectCacheTrainsLikeTheServer(batches, keySpace, 8, optimizer.config,
                                       passBatches, prepareAhead);
      }
  }
}

/// The GPU pass cache's training (CudaPassCache.cu) with its kernels'
/// threads run one after another on the CPU: one pass over every batch, a
/// gather per pull, and per push blocks of `threads` threads, each block's
/// phase 1 on every thread before its phase 2 (the kernel's barrier).
/// Returns every pulled value; the rows go back to `server`.
std::vector<float> trainThroughSimulatedGpu(ParameterServer &server,
                                            const std::vector<Batch> &batches,
                                            unsigned threads) {
  const SparseTableConfig &config = server.tableConfig("emb");
  const unsigned dim = static_cast<unsigned>(config.dim);
  const size_t rowFloats = server.rowFloats("emb");
  std::vector<uint64_t> keys;
  for (const Batch &batch : batches)
    keys.insert(keys.end(), batch.ids.begin(), batch.ids.end());
  PassKeyIndex index;
  index.build("emb", keys);
  std::vector<float> rows(index.size() * rowFloats);
  server.pullRows("emb", index.keys().data(), index.size(), rows.data());
  std::vector<float> pulled;
  std::vector<uint32_t> slots;
  MergePlan plan;
  for (size_t b = 0; b < batches.size(); ++b) {
    const Batch &batch = batches[b];
    // The GPU's lookup: a binary search over the sorted keys.
    slots.resize(batch.ids.size());
    for (size_t i = 0; i < batch.ids.size(); ++i)
      slots[i] =
          kernels::findSlot(index.keys().data(),
                            static_cast<uint32_t>(index.size()), batch.ids[i]);
    const size_t first = pulled.size();
    pulled.resize(first + batch.ids.size() * dim);
    for (size_t i = 0; i < batch.ids.size() * dim; ++i)
      kernels::gatherElement(rows.data(), rowFloats, slots.data(), dim, i,
                             pulled.data() + first);
    PassKeyIndex::planMerge(slots.data(), slots.size(), plan);
    const kernels::UpdateRule rule =
        kernels::updateRule(scaledOptimizer(config.optimizer, scaleOf(b)));
    for (size_t run = 0; run < plan.runs(); ++run) {
      for (unsigned thread = 0; thread < threads; ++thread)
        kernels::updateRowElements(
            rows.data(), rowFloats, dim, plan.slots[run], plan.runStarts[run],
            plan.runStarts[run + 1], plan.positions.data(),
            batch.gradients.data(), rule, thread, threads);
      kernels::advanceRowState(rows.data(), rowFloats, dim, plan.slots[run],
                               rule);
    }
  }
  server.writeRows("emb", index.keys().data(), index.size(), rows.data());
  return pulled;
}

TEST(PassCacheTest, GpuKernelsComputeTheHostServersRows) {
  // Rows narrower and wider than a block; blocks of one warp and of 256.
  for (const NamedOptimizer &optimizer : optimizers())
    for (size_t dim : {8, 300})
      for (unsigned threads : {32u, 256u}) {
        SCOPED_TRACE(std::string(optimizer.name) + ", dim " +
                     std::to_string(dim) + ", " + std::to_string(threads) +
                     " threads per block");
        const uint64_t keySpace = 400;
        const auto batches = makeBatches(8, 128, keySpace, dim, 11);
        ParameterServer direct(serverConfig(2));
        ParameterServer simulated(serverConfig(2));
        direct.createSparseTable(tableConfig("emb", dim, optimizer.config));
        simulated.createSparseTable(tableConfig("emb", dim, optimizer.config));
        EXPECT_TRUE(
            bitIdentical(trainDirect(direct, batches),
                         trainThroughSimulatedGpu(simulated, batches, threads)))
            << "pulled values differ";
        expectSameRows(snapshot(direct, "emb", keySpace),
                       snapshot(simulated, "emb", keySpace));
      }
}

TEST(PassCacheTest, GpuSlotLookupAgreesWithTheIndex) {
  std::mt19937_64 random(3);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 5000; ++i)
    keys.push_back(random() % 20000 * 7919); // duplicates, and gaps
  PassKeyIndex index;
  index.build("emb", keys);
  const uint32_t count = static_cast<uint32_t>(index.size());
  uint32_t slot = 0;
  for (uint64_t key : keys) {
    index.slotsOf(&key, 1, &slot);
    EXPECT_EQ(kernels::findSlot(index.keys().data(), count, key), slot);
  }
  // Ids the pass lacks: below, between and above its keys.
  for (uint64_t id : {uint64_t(1), index.keys()[0] + 1,
                      index.keys()[count / 2] + 3, index.keys().back() + 1})
    EXPECT_EQ(kernels::findSlot(index.keys().data(), count, id), count);
  EXPECT_EQ(kernels::findSlot(nullptr, 0, 42), 0u);
}

TEST(PassCacheTest, DuplicateIdsMergeInBatchOrder) {
  // Adagrad is not linear in the gradient: one update with the sum differs
  // from two updates, so this sees whether duplicates were merged.
  ParameterServer merged(serverConfig(2));
  ParameterServer cached(serverConfig(2));
  for (ParameterServer *server : {&merged, &cached})
    server->createSparseTable(tableConfig("emb", 2, adagrad()));
  const std::vector<uint64_t> ids = {5, 9, 5};
  const std::vector<float> gradients = {1.0f, 2.0f, 0.5f, 0.5f, 3.0f, -1.0f};
  merged.push("emb", ids, gradients);
  HostPassCache cache(cached);
  cache.addPassKeys("emb", ids.data(), ids.size());
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), 2u);
  cache.push("emb", ids.data(), ids.size(), gradients.data());
  cache.endPass();
  for (uint64_t key : {5, 9})
    EXPECT_TRUE(
        bitIdentical(*merged.readRow("emb", key), *cached.readRow("emb", key)))
        << "key " << key;
  // Accumulator = initial + (sum of gradients)^2.
  EXPECT_FLOAT_EQ((*cached.readRow("emb", 5))[2], 0.1f + 16.0f);

  // Float addition is not associative: (1 + 1e8) - 1e8 is 0 in batch
  // order, (-1e8 + 1e8) + 1 in reverse order is 1. Plain SGD at rate 1
  // moves the weight by exactly the merged sum.
  ParameterServer plain(serverConfig(1));
  plain.createSparseTable(tableConfig("emb", 1, sgd(1.0f, 0.0f)));
  HostPassCache plainCache(plain);
  const std::vector<uint64_t> same = {7, 3, 7, 7};
  const std::vector<float> large = {1.0f, 0.0f, 1e8f, -1e8f};
  plainCache.addPassKeys("emb", same.data(), same.size());
  plainCache.beginPass();
  float before = 0, after = 0;
  plainCache.pull("emb", same.data(), 1, &before);
  plainCache.push("emb", same.data(), same.size(), large.data());
  plainCache.pull("emb", same.data(), 1, &after);
  plainCache.endPass();
  EXPECT_EQ(before, after) << "the gradients of id 7 were not summed in "
                              "batch order";
}

TEST(PassCacheTest, EndPassWritesRowsAndStateBack) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 4, adam()));
  // A row that exists before the pass, and one the pass creates.
  server.pull("emb", {1});
  const std::vector<float> before = *server.readRow("emb", 1);
  HostPassCache cache(server);
  const std::vector<uint64_t> ids = {1, 2};
  cache.addPassKeys("emb", ids.data(), ids.size());
  cache.beginPass();
  EXPECT_TRUE(cache.inPass());
  // Loading creates the pass's rows on the server, as a pull would.
  EXPECT_EQ(server.rowCount("emb"), 2u);
  const std::vector<float> gradients(8, 0.25f);
  cache.push("emb", ids.data(), ids.size(), gradients.data());
  std::vector<float> inCache(8);
  cache.pull("emb", ids.data(), ids.size(), inCache.data());
  // The server's copy is stale until the pass ends.
  EXPECT_TRUE(bitIdentical(*server.readRow("emb", 1), before));
  cache.endPass();
  EXPECT_FALSE(cache.inPass());
  EXPECT_EQ(cache.passKeyCount("emb"), 0u);

  ParameterServer direct(serverConfig(2));
  direct.createSparseTable(tableConfig("emb", 4, adam()));
  direct.push("emb", ids, gradients);
  for (uint64_t key : ids) {
    const std::vector<float> row = *server.readRow("emb", key);
    EXPECT_TRUE(bitIdentical(row, *direct.readRow("emb", key)))
        << "key " << key;
    // Adam's state: the row's beta1^t and beta2^t after one update.
    EXPECT_EQ(row[4 + 8], 0.9f) << "key " << key;
    EXPECT_TRUE(std::memcmp(row.data(), inCache.data() + (key - 1) * 4,
                            4 * sizeof(float)) == 0)
        << "key " << key;
  }
}

TEST(PassCacheTest, TableLargerThanMemoryTrainsThroughPasses) {
  // The server keeps at most 2 x 100 rows in memory (the rest in RocksDB);
  // each pass holds several hundred keys of the 3000 the run touches.
  ScratchDirectory storage(kScratch, "tier");
  const uint64_t keySpace = 3000;
  const auto batches = makeBatches(16, 128, keySpace, 4, 9);
  for (const NamedOptimizer &optimizer : optimizers())
    for (bool prepareAhead : {false, true}) {
      SCOPED_TRACE(
          std::string(optimizer.name) +
          (prepareAhead ? ", each pass prepared during the last" : ""));
      ParameterServer direct(serverConfig(2));
      ParameterServer tiered(serverConfig(2, storage.path.string()));
      direct.createSparseTable(tableConfig("emb", 4, optimizer.config));
      tiered.createSparseTable(tableConfig("emb", 4, optimizer.config, 100));
      EXPECT_TRUE(
          bitIdentical(trainDirect(direct, batches),
                       trainThroughCache(tiered, batches, 4, prepareAhead)));
      EXPECT_EQ(direct.rowCount("emb"), tiered.rowCount("emb"));
      EXPECT_GT(tiered.rowCount("emb"), 1000u);
      expectSameRows(snapshot(direct, "emb", keySpace),
                     snapshot(tiered, "emb", keySpace));
    }
}

TEST(PassCacheTest, CacheHoldsOnlyThePassKeys) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  const auto warmup = makeBatches(8, 256, 5000, 4, 1);
  trainDirect(server, warmup);
  const size_t rowsBefore = server.rowCount("emb");
  ASSERT_GT(rowsBefore, 1000u);

  HostPassCache cache(server);
  const auto pass = makeBatches(2, 64, 5000, 4, 2);
  std::set<uint64_t> distinct;
  size_t newIds = 0;
  for (const Batch &batch : pass) {
    cache.addPassKeys("emb", batch.ids.data(), batch.ids.size());
    for (uint64_t id : batch.ids)
      if (distinct.insert(id).second && !server.readRow("emb", id))
        ++newIds;
  }
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), distinct.size());
  EXPECT_LT(cache.passKeyCount("emb"), rowsBefore / 10);
  for (const Batch &batch : pass)
    cache.push("emb", batch.ids.data(), batch.ids.size(),
               batch.gradients.data());
  cache.endPass();
  // The pass's new ids are the only rows it adds.
  EXPECT_EQ(server.rowCount("emb"), rowsBefore + newIds);
}

TEST(PassCacheTest, KeyCountsAddUpTheOpenedPasses) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  server.createSparseTable(tableConfig("wide", 1, adagrad()));
  HostPassCache cache(server);
  EXPECT_EQ(cache.keyCounts().keys, 0u);
  const uint64_t first[] = {1, 2, 2, 3}, wide[] = {7, 7};
  cache.addPassKeys("emb", first, 4);
  cache.addPassKeys("wide", wide, 2);
  cache.beginPass();
  EXPECT_EQ(cache.keyCounts().keys, 6u);
  EXPECT_EQ(cache.keyCounts().distinctRows, 4u);
  // A prepared pass counts when it opens, not before.
  const uint64_t second[] = {3, 4, 4};
  cache.addPassKeys("emb", second, 3);
  cache.prepareNextPass();
  EXPECT_EQ(cache.keyCounts().keys, 6u);
  cache.endPass();
  cache.beginPass();
  EXPECT_EQ(cache.keyCounts().keys, 9u);
  EXPECT_EQ(cache.keyCounts().distinctRows, 6u);
  cache.endPass();
}

/// One step's ids of table "emb" (and, when given, of table "wide").
std::vector<PassCache::StepKeys> stepOf(std::vector<uint64_t> emb,
                                        std::vector<uint64_t> wide = {}) {
  std::vector<PassCache::StepKeys> step{{"emb", std::move(emb)}};
  if (!wide.empty())
    step.push_back({"wide", std::move(wide)});
  return step;
}

TEST(PassCacheTest, MemoryLimitEndsThePassBeforeTheStepThatWouldNotFit) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  server.createSparseTable(tableConfig("wide", 1, sgd(0.1f, 0.0f)));
  HostPassCache cache(server);
  const size_t embRow = cache.bytesPerRow("emb");
  const size_t wideRow = cache.bytesPerRow("wide");
  // Rows, optimizer state and the key index; wider rows cost more.
  EXPECT_EQ(embRow, server.rowFloats("emb") * sizeof(float) +
                        PassKeyIndex::kBytesPerKey);
  EXPECT_GT(embRow, wideRow);
  EXPECT_EQ(cache.passesInMemory(), 2u);

  // A pass may hold half the limit: 6 rows of "emb" and 2 of "wide".
  const size_t passBytes = 6 * embRow + 2 * wideRow;
  cache.setMemoryLimit(2 * passBytes + 1);
  EXPECT_TRUE(cache.addStepKeys(stepOf({1, 2, 3, 2}, {7})));
  EXPECT_EQ(cache.pendingPassBytes(), 3 * embRow + wideRow);
  // Duplicates within and across steps count once.
  EXPECT_TRUE(cache.addStepKeys(stepOf({3, 4, 5, 1}, {7, 8})));
  EXPECT_EQ(cache.pendingPassBytes(), 5 * embRow + 2 * wideRow);
  // Two new rows would pass the bound: nothing of the step is added.
  EXPECT_FALSE(cache.addStepKeys(stepOf({6, 9, 1})));
  EXPECT_EQ(cache.pendingPassBytes(), 5 * embRow + 2 * wideRow);
  // The refused step's ids were not kept: id 6 alone still fits.
  EXPECT_TRUE(cache.addStepKeys(stepOf({6, 6, 2})));
  EXPECT_EQ(cache.pendingPassBytes(), passBytes);
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), 6u);
  EXPECT_EQ(cache.passKeyCount("wide"), 2u);
  EXPECT_EQ(cache.pendingPassBytes(), 0u);

  // During the pass, the next one is counted afresh.
  EXPECT_TRUE(cache.addStepKeys(stepOf({1, 2, 3, 4, 5, 6}, {7, 8})));
  EXPECT_FALSE(cache.addStepKeys(stepOf({10})));
  cache.prepareNextPass();
  EXPECT_EQ(cache.pendingPassBytes(), 0u);
  cache.endPass();
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), 6u);
  cache.endPass();
}

TEST(PassCacheTest, StepLargerThanAPassThrowsAndAddsNothing) {
  ParameterServer server(serverConfig(1));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  HostPassCache cache(server);
  cache.setMemoryLimit(2 * 3 * cache.bytesPerRow("emb"));
  try {
    cache.addStepKeys(stepOf({1, 2, 3, 4}));
    FAIL() << "a step of 4 rows fitted a pass of 3";
  } catch (const Error &error) {
    EXPECT_NE(
        std::string(error.what()).find("one step touches 4 distinct rows"),
        std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("more than a pass may hold"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(cache.pendingPassBytes(), 0u);
  EXPECT_TRUE(cache.addStepKeys(stepOf({1, 2, 3})));
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), 3u);
  cache.endPass();
  // Keys recorded first fix the limit.
  cache.addPassKeys("emb", std::vector<uint64_t>{1}.data(), 1);
  EXPECT_THROW(cache.setMemoryLimit(1 << 20), Error);
}

TEST(PassCacheTest, WithoutALimitEveryStepFits) {
  ParameterServer server(serverConfig(1));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  HostPassCache cache(server);
  std::vector<uint64_t> ids(10000);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = i;
  EXPECT_TRUE(cache.addStepKeys(stepOf(ids)));
  EXPECT_EQ(cache.pendingPassBytes(), 0u);
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), ids.size());
  cache.endPass();
}

TEST(PassCacheTest, MisuseThrowsAClearError) {
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 2, adagrad()));
  server.createSparseTable(tableConfig("other", 2, adagrad()));
  HostPassCache cache(server);
  const uint64_t inPass[] = {10, 11};
  const uint64_t outside[] = {10, 12};
  float out[4];
  const float gradients[4] = {1.0f, 1.0f, 1.0f, 1.0f};

  auto expectError = [](auto &&call, const std::string &needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one saying '" << needle << "'";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << error.what();
    }
  };
  expectError([&] { cache.pull("emb", inPass, 2, out); }, "outside a pass");
  expectError([&] { cache.endPass(); }, "without a pass");

  cache.addPassKeys("emb", inPass, 2);
  cache.beginPass();
  expectError([&] { cache.pull("emb", outside, 2, out); },
              "id 12 of table 'emb' is not in this pass");
  std::vector<float> before(4), after(4);
  cache.pull("emb", inPass, 2, before.data());
  expectError([&] { cache.push("emb", outside, 2, gradients); },
              "id 12 of table 'emb' is not in this pass");
  cache.pull("emb", inPass, 2, after.data());
  EXPECT_TRUE(bitIdentical(before, after)) << "a failed push changed a row";
  expectError([&] { cache.pull("other", inPass, 2, out); },
              "table 'other' is not in this pass");
  expectError([&] { cache.beginPass(); }, "during a pass");
  // Keys added during a pass are the next one's; once it is prepared, no
  // more can join it.
  cache.addPassKeys("emb", outside, 2);
  cache.prepareNextPass();
  expectError([&] { cache.addPassKeys("emb", inPass, 2); },
              "after the next pass was prepared");
  expectError([&] { cache.prepareNextPass(); }, "already prepared");
  // The cache still works after every refusal.
  cache.push("emb", inPass, 2, gradients);
  cache.endPass();
  EXPECT_FALSE(bitIdentical(before, server.pull("emb", {10, 11})));
  // The prepared pass starts from the rows the last one ended with.
  cache.beginPass();
  EXPECT_EQ(cache.passKeyCount("emb"), 2u);
  std::vector<float> prepared(4);
  cache.pull("emb", outside, 2, prepared.data());
  EXPECT_TRUE(bitIdentical(prepared, server.pull("emb", {10, 12})));
  cache.endPass();
  expectError([&] { cache.prepareNextPass(); }, "outside a pass");
  // A discarded preparation leaves nothing behind.
  cache.addPassKeys("emb", inPass, 2);
  cache.beginPass();
  cache.addPassKeys("emb", outside, 2);
  cache.prepareNextPass();
  cache.discardPreparedPass();
  cache.endPass();
  EXPECT_FALSE(cache.nextPassPrepared());
  cache.addPassKeys("emb", outside, 2);
  cache.beginPass();
  expectError([&] { cache.pull("emb", inPass, 2, out); },
              "id 11 of table 'emb' is not in this pass");
  cache.endPass();

  // A table the server does not have fails at beginPass, no pass opens.
  cache.addPassKeys("missing", inPass, 2);
  expectError([&] { cache.beginPass(); }, "no sparse table 'missing'");
  EXPECT_FALSE(cache.inPass());
}

TEST(PassKeyIndexTest, MergePlanGroupsBySlotInBatchOrder) {
  PassKeyIndex index;
  index.build("emb", {40, 10, 30, 10, 20, 40});
  EXPECT_EQ(index.keys(), (std::vector<uint64_t>{10, 20, 30, 40}));
  const std::vector<uint64_t> ids = {40, 10, 40, 30, 10, 40};
  std::vector<uint32_t> slots(ids.size());
  index.slotsOf(ids.data(), ids.size(), slots.data());
  EXPECT_EQ(slots, (std::vector<uint32_t>{3, 0, 3, 2, 0, 3}));
  MergePlan plan;
  PassKeyIndex::planMerge(slots.data(), slots.size(), plan);
  EXPECT_EQ(plan.slots, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(plan.runStarts, (std::vector<uint32_t>{0, 2, 3, 6}));
  EXPECT_EQ(plan.positions, (std::vector<uint32_t>{1, 4, 3, 0, 2, 5}));
  PassKeyIndex::planMerge(slots.data(), 0, plan);
  EXPECT_EQ(plan.runs(), 0u);
}

} // namespace
