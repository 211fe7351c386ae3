//===- MpiRoutingTest.cpp - Routing and messages of the MPI PS ------------===//
//
// The parts of runtime/mpi that every rank must compute identically, tested
// without starting MPI: key and dense-parameter routing, the step slices of
// data-parallel workers, the message encoding, and how ranks share a machine.
//
//===----------------------------------------------------------------------===//

#include "Protocol.h"

#include "heterps/Runtime/MpiTraining.h"
#include "heterps/Runtime/WorkerGroup.h"

#include <gtest/gtest.h>

#include <set>

using namespace heterps::rt;
using namespace heterps::rt::mpi;

namespace {

TEST(MpiRouting, KeysGoToKeyModuloShards) {
  for (size_t shards : {1u, 2u, 3u, 7u})
    for (uint64_t key : {0ull, 1ull, 2ull, 25999ull, ~0ull})
      EXPECT_EQ(shardOfKey(key, shards), key % shards);
  EXPECT_THROW(shardOfKey(1, 0), Error);
}

TEST(MpiRouting, DenseNamesHashStablyAndSpread) {
  // FNV-1a's published test vectors: the hash must not depend on the
  // compiler or the run (std::hash may).
  EXPECT_EQ(stableHash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(stableHash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(stableHash("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(shardOfDense("fc0.w", 4), stableHash("fc0.w") % 4);
  std::set<size_t> used;
  for (int i = 0; i < 64; ++i)
    used.insert(shardOfDense("layer" + std::to_string(i) + ".w", 4));
  EXPECT_EQ(used.size(), 4u) << "64 names should reach every one of 4 shards";
  EXPECT_THROW(shardOfDense("w", 0), Error);
}

TEST(MpiRouting, GroupsKeepInputOrderPerShard) {
  const uint64_t keys[] = {5, 2, 7, 4, 5, 9, 0};
  auto groups = groupKeysByShard(keys, 7, 3);
  ASSERT_EQ(groups.size(), 3u);
  // key % 3: 2 2 1 1 2 0 0
  EXPECT_EQ(groups[0], (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(groups[1], (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(groups[2], (std::vector<uint32_t>{0, 1, 4}));
  EXPECT_EQ(shardCheckpointName(3), "shard-3");
}

TEST(MpiRouting, StepSlicesCoverTheStepInWorkerOrder) {
  for (int64_t microBatches : {2, 3, 7, 16})
    for (int workers = 1; workers <= microBatches && workers <= 5; ++workers) {
      int64_t next = 0;
      for (int w = 0; w < workers; ++w) {
        train::StepSlice slice = train::stepSlice(microBatches, workers, w);
        EXPECT_EQ(slice.first, next);
        EXPECT_GE(slice.count, microBatches / workers);
        EXPECT_LE(slice.count, microBatches / workers + 1);
        next += slice.count;
      }
      EXPECT_EQ(next, microBatches);
    }
  EXPECT_THROW(train::stepSlice(1, 2, 0), Error);
  EXPECT_THROW(train::stepSlice(4, 2, 2), Error);
}

TEST(MpiRouting, ShortLastStepsLeaveTheLastWorkersIdle) {
  // 2 micro-batches over 3 workers: one each for workers 0 and 1.
  std::vector<train::StepSlice> slices;
  for (int w = 0; w < 3; ++w)
    slices.push_back(train::lastStepSlice(2, 3, w));
  EXPECT_EQ(slices[0].first, 0);
  EXPECT_EQ(slices[0].count, 1);
  EXPECT_EQ(slices[1].first, 1);
  EXPECT_EQ(slices[1].count, 1);
  EXPECT_EQ(slices[2].count, 0);
  // Enough micro-batches: the same as stepSlice.
  EXPECT_EQ(train::lastStepSlice(7, 3, 2).first,
            train::stepSlice(7, 3, 2).first);
  EXPECT_THROW(train::lastStepSlice(2, 3, 3), Error);
}

TEST(MpiProtocol, FieldsRoundTrip) {
  ps::SparseTableConfig table;
  table.name = "emb.0";
  table.dim = 8;
  table.seed = 0x123456789abcdefull;
  table.initScale = 0.05f;
  table.optimizer.kind = ps::OptimizerKind::Adam;
  table.optimizer.learningRate = 0.003f;
  table.cacheRowsPerShard = 17;
  MessageWriter out;
  out.putTableConfig(table);
  out.putArray(std::vector<uint64_t>{1, 2, 3});
  out.putArray(std::vector<float>{0.5f, -1.25f});
  out.putString("");

  MessageReader in(out.bytes(), "test message");
  ps::SparseTableConfig back = in.getTableConfig();
  EXPECT_EQ(back.name, table.name);
  EXPECT_EQ(back.dim, table.dim);
  EXPECT_EQ(back.seed, table.seed);
  EXPECT_EQ(back.initScale, table.initScale);
  EXPECT_EQ(back.optimizer.kind, ps::OptimizerKind::Adam);
  EXPECT_EQ(back.optimizer.learningRate, 0.003f);
  EXPECT_EQ(back.cacheRowsPerShard, 17u);
  EXPECT_EQ(in.getArray<uint64_t>(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(in.getArray<float>(), (std::vector<float>{0.5f, -1.25f}));
  EXPECT_EQ(in.getString(), "");
  EXPECT_TRUE(in.atEnd());
}

TEST(MpiProtocol, TruncatedMessagesAreErrorsNamingThem) {
  MessageWriter out;
  out.putArray(std::vector<float>{1, 2, 3, 4});
  std::vector<char> bytes = out.bytes();
  bytes.resize(bytes.size() - 1);
  MessageReader in(bytes, "pull reply of shard 1");
  try {
    in.getArray<float>();
    FAIL() << "a truncated array was read";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("pull reply of shard 1"),
              std::string::npos)
        << error.what();
  }
  // A length prefix larger than the message must not allocate it.
  MessageWriter huge;
  huge.put<uint64_t>(uint64_t(1) << 60);
  MessageReader hugeIn(huge.bytes(), "forged message");
  EXPECT_THROW(hugeIn.getArray<float>(), Error);
}

TEST(MpiHostShare, SplitsTheCoresAndSpinsOnlyWithACorePerThread) {
  struct Case {
    int cores, computeRanks, shardRanks;
    HostShare expected;
    const char *why;
  };
  const Case cases[] = {
      {64, 1, 1, {63, 1, true}, "the worker gets all but the shard's core"},
      {2, 1, 1, {1, 1, true}, "a core each: nobody shares, so spin"},
      {8, 2, 2, {3, 1, true}, "the compute ranks split what shards leave"},
      {2, 2, 2, {1, 1, false}, "oversubscribed: teams of one, back off"},
      {4, 4, 2, {1, 1, false}, "shards keep no core when workers lack one"},
      {16, 0, 4, {1, 4, true}, "shards alone split the machine"},
      {0, 1, 0, {1, 1, true}, "no affinity information: one thread"},
  };
  for (const Case &c : cases) {
    HostShare share = shareHost(c.cores, c.computeRanks, c.shardRanks);
    EXPECT_EQ(share.computeThreads, c.expected.computeThreads) << c.why;
    EXPECT_EQ(share.shardThreads, c.expected.shardThreads) << c.why;
    EXPECT_EQ(share.spin, c.expected.spin) << c.why;
  }
}

} // namespace
