//===- GpuPassCacheTest.cpp - The pass cache in GPU memory ----------------===//
//
// Training through the CUDA pass cache must give, bit for bit, what the
// host server gives (and so what HostPassCache gives): every pulled value,
// every row and every optimizer state. Without a usable GPU the tests check
// the cache's error and skip; scripts/gpu/check.sh counts a skip as a
// failure.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CudaPassCache.h"

#include "PassCacheFixtures.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

using namespace heterps::rt;
using namespace heterps::rt::ps;
using namespace heterps::rt::testsupport;

namespace {

const CacheFactory kGpuCache = [](ParameterServer &server) {
  return makeCudaPassCache(server);
};

/// Three shards over the GPUs: devices 0, the last and 0 again (all three
/// on device 0 where there is one GPU), so rows cross between devices
/// wherever there are two.
std::vector<int> shardDevices() {
  int devices = 1;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1)
    devices = 1;
  return {0, devices - 1, 0};
}
const CacheFactory kShardedGpuCache = [](ParameterServer &server) {
  return makeCudaPassCache(server, shardDevices());
};

/// Skips the test where the cache cannot be made, after checking that the
/// reason is one clear error.
#define REQUIRE_GPU_PASS_CACHE()                                               \
  do {                                                                         \
    ParameterServer probe(serverConfig(1));                                    \
    try {                                                                      \
      makeCudaPassCache(probe);                                                \
    } catch (const Error &error) {                                             \
      EXPECT_NE(std::string(error.what()).find("pass cache on the GPU: "),     \
                std::string::npos)                                             \
          << error.what();                                                     \
      GTEST_SKIP() << error.what();                                            \
    }                                                                          \
  } while (false)

TEST(GpuPassCacheTest, BuiltWithCuda) {
  // CI builds the CUDA runtime wherever a toolkit is found; the stub would
  // make every GPU pass cache request fail.
  EXPECT_TRUE(cudaPassCacheBuilt());
}

TEST(GpuPassCacheTest, TrainsBitIdenticalToTheHostServer) {
  REQUIRE_GPU_PASS_CACHE();
  const uint64_t keySpace = 600;
  const auto batches = makeBatches(12, 256, keySpace, 8, 5);
  for (const NamedOptimizer &optimizer : optimizers())
    for (size_t passBatches : {1, 5, 12})
      for (bool prepareAhead : {false, true}) {
        SCOPED_TRACE(std::string(optimizer.name) + ", passes of " +
                     std::to_string(passBatches) + " batches" +
                     (prepareAhead ? ", each prepared during the last" : ""));
        expectCacheTrainsLikeTheServer(batches, keySpace, 8, optimizer.config,
                                       passBatches, prepareAhead, kGpuCache);
      }
}

/// The pass split by key over shards on the GPUs trains as the host
/// server does, bit for bit.
TEST(GpuPassCacheTest, ShardedTrainsBitIdenticalToTheHostServer) {
  REQUIRE_GPU_PASS_CACHE();
  const uint64_t keySpace = 600;
  const auto batches = makeBatches(12, 256, keySpace, 8, 5);
  for (const NamedOptimizer &optimizer : optimizers())
    for (size_t passBatches : {1, 5})
      for (bool prepareAhead : {false, true}) {
        SCOPED_TRACE(std::string(optimizer.name) + ", passes of " +
                     std::to_string(passBatches) + " batches" +
                     (prepareAhead ? ", each prepared during the last" : ""));
        expectCacheTrainsLikeTheServer(batches, keySpace, 8, optimizer.config,
                                       passBatches, prepareAhead,
                                       kShardedGpuCache);
      }
}

/// A GPU stage's calls to the sharded cache: rows pulled into its device
/// memory by key and by its own ids, gradients staged from its memory and
/// pushed as one step; the host cache given the same calls ends with the
/// same rows.
TEST(GpuPassCacheTest, ShardedStageCallsMatchTheHostCache) {
  REQUIRE_GPU_PASS_CACHE();
  const int64_t rows = 3000;
  const auto batches = makeBatches(3, 700, uint64_t(rows), 16, 12);
  ParameterServer gpu(serverConfig(2)), host(serverConfig(2));
  for (ParameterServer *server : {&gpu, &host})
    server->createSparseTable(tableConfig("emb", 16, adam()));
  std::unique_ptr<PassCache> sharded = kShardedGpuCache(gpu);
  EXPECT_TRUE(sharded->rowsOnDevice());
  HostPassCache onHost(host);
  for (PassCache *cache : {sharded.get(), static_cast<PassCache *>(&onHost)}) {
    for (const Batch &batch : batches)
      cache->addPassKeys("emb", batch.ids.data(), batch.ids.size());
    cache->beginPass();
  }
  const size_t most = 700 * 16;
  float *deviceRows = nullptr, *deviceGradients = nullptr;
  int64_t *deviceIds = nullptr;
  ASSERT_EQ(
      cudaMalloc(reinterpret_cast<void **>(&deviceRows), most * sizeof(float)),
      cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&deviceGradients),
                       most * sizeof(float)),
            cudaSuccess);
  ASSERT_EQ(
      cudaMalloc(reinterpret_cast<void **>(&deviceIds), 700 * sizeof(int64_t)),
      cudaSuccess);
  for (int round = 0; round < 2; ++round) {
    for (const Batch &batch : batches) {
      const size_t floats = batch.ids.size() * 16;
      std::vector<float> expected(floats), byKey(floats), byId(floats);
      onHost.pull("emb", batch.ids.data(), batch.ids.size(), expected.data());
      sharded->pullToDevice("emb", batch.ids.data(), batch.ids.size(),
                            deviceRows);
      ASSERT_EQ(cudaMemcpy(byKey.data(), deviceRows, floats * sizeof(float),
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
      std::vector<int64_t> ids(batch.ids.size());
      for (size_t i = 0; i < ids.size(); ++i)
        ids[i] = i % 2 ? int64_t(batch.ids[i]) - rows : int64_t(batch.ids[i]);
      ASSERT_EQ(cudaMemcpy(deviceIds, ids.data(), ids.size() * sizeof(int64_t),
                           cudaMemcpyHostToDevice),
                cudaSuccess);
      sharded->pullIds("emb", deviceIds, ids.size(), rows, "user_emb",
                       deviceRows);
      ASSERT_EQ(cudaMemcpy(byId.data(), deviceRows, floats * sizeof(float),
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
      EXPECT_TRUE(bitIdentical(expected, byKey));
      EXPECT_TRUE(bitIdentical(expected, byId));
    }
    // Staged from device memory in reverse order, pushed in batch order.
    std::vector<size_t> offsets(batches.size());
    for (size_t b = batches.size(); b-- > 0;) {
      const std::vector<float> &gradients = batches[b].gradients;
      ASSERT_EQ(cudaMemcpy(deviceGradients, gradients.data(),
                           gradients.size() * sizeof(float),
                           cudaMemcpyHostToDevice),
                cudaSuccess);
      offsets[b] =
          sharded->stageGradients("emb", deviceGradients, gradients.size());
    }
    const StagedStep step = stagedStep(batches, offsets, 3.0f);
    sharded->pushStaged("emb", step.ids.data(), step.ids.size(), step.segments,
                        3.0f);
    onHost.push("emb", step.ids.data(), step.ids.size(), step.divided.data());
  }
  cudaFree(deviceRows);
  cudaFree(deviceGradients);
  cudaFree(deviceIds);
  sharded->endPass();
  onHost.endPass();
  expectSameRows(snapshot(host, "emb", uint64_t(rows)),
                 snapshot(gpu, "emb", uint64_t(rows)));
}

TEST(GpuPassCacheTest, WideRowsAndLargePushesUpdateLikeTheHost) {
  REQUIRE_GPU_PASS_CACHE();
  // Rows wider than a block (300 > 256 threads) and a push of more distinct
  // ids than one kernel launch takes (70,000 runs > 65,535 blocks).
  const uint64_t keySpace = 400000;
  const auto wide = makeBatches(3, 64, 1000, 300, 7);
  const auto large = makeBatches(2, 90000, keySpace, 4, 8);
  ASSERT_GT(std::set<uint64_t>(large[0].ids.begin(), large[0].ids.end()).size(),
            65535u);
  for (const NamedOptimizer &optimizer : optimizers()) {
    SCOPED_TRACE(optimizer.name);
    for (const auto &[batches, dim, keys] :
         {std::tuple{wide, size_t(300), uint64_t(1000)},
          std::tuple{large, size_t(4), keySpace}}) {
      expectCacheTrainsLikeTheServer(batches, keys, dim, optimizer.config, 2,
                                     false, kGpuCache);
    }
  }
}

TEST(GpuPassCacheTest, PullToDeviceGathersThePulledRows) {
  REQUIRE_GPU_PASS_CACHE();
  const auto batches = makeBatches(2, 512, 2000, 16, 9);
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 16, adam()));
  std::unique_ptr<PassCache> cache = makeCudaPassCache(server);
  EXPECT_TRUE(cache->rowsOnDevice());
  for (const Batch &batch : batches)
    cache->addPassKeys("emb", batch.ids.data(), batch.ids.size());
  cache->beginPass();
  for (const Batch &batch : batches) {
    const size_t floats = batch.ids.size() * 16;
    std::vector<float> onHost(floats), fromDevice(floats);
    cache->pull("emb", batch.ids.data(), batch.ids.size(), onHost.data());
    float *device = nullptr;
    ASSERT_EQ(
        cudaMalloc(reinterpret_cast<void **>(&device), floats * sizeof(float)),
        cudaSuccess);
    cache->pullToDevice("emb", batch.ids.data(), batch.ids.size(), device);
    ASSERT_EQ(cudaMemcpy(fromDevice.data(), device, floats * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    cudaFree(device);
    EXPECT_TRUE(bitIdentical(onHost, fromDevice));
    cache->push("emb", batch.ids.data(), batch.ids.size(),
                batch.gradients.data());
  }
  cache->endPass();
}

/// Ids in GPU memory (a stage's own, negative ones counting from the end)
/// pull the rows their keys pull, and the first bad id gets the host's
/// error: outside the table, or not in the pass.
TEST(GpuPassCacheTest, DeviceIdsPullTheRowsOfTheirKeys) {
  REQUIRE_GPU_PASS_CACHE();
  const int64_t rows = 2000;
  const auto batches = makeBatches(1, 3000, uint64_t(rows), 16, 21);
  const Batch &batch = batches[0];
  ParameterServer server(serverConfig(2));
  server.createSparseTable(tableConfig("emb", 16, adam()));
  std::unique_ptr<PassCache> cache = makeCudaPassCache(server);
  cache->addPassKeys("emb", batch.ids.data(), batch.ids.size());
  cache->beginPass();
  // Every other id as its negative alias.
  std::vector<int64_t> ids(batch.ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = i % 2 ? int64_t(batch.ids[i]) - rows : int64_t(batch.ids[i]);
  const size_t floats = ids.size() * 16;
  std::vector<float> onHost(floats), fromDevice(floats);
  cache->pull("emb", batch.ids.data(), batch.ids.size(), onHost.data());
  int64_t *deviceIds = nullptr;
  float *deviceRows = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&deviceIds),
                       ids.size() * sizeof(int64_t)),
            cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&deviceRows),
                       floats * sizeof(float)),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(deviceIds, ids.data(), ids.size() * sizeof(int64_t),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  cache->pullIds("emb", deviceIds, ids.size(), rows, "user_emb", deviceRows);
  ASSERT_EQ(cudaMemcpy(fromDevice.data(), deviceRows, floats * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_TRUE(bitIdentical(onHost, fromDevice));
  // The first bad id of each kind, behind good ones: the host cache's
  // errors.
  ParameterServer hostServer(serverConfig(2));
  hostServer.createSparseTable(tableConfig("emb", 16, adam()));
  HostPassCache hostCache(hostServer);
  hostCache.addPassKeys("emb", batch.ids.data(), batch.ids.size());
  hostCache.beginPass();
  uint64_t absent = 0;
  while (std::find(batch.ids.begin(), batch.ids.end(), absent) !=
         batch.ids.end())
    ++absent;
  for (int64_t bad : {rows, -rows - 1, int64_t(absent)}) {
    std::vector<int64_t> withBad = {ids[0], ids[1], bad, rows};
    ASSERT_EQ(cudaMemcpy(deviceIds, withBad.data(),
                         withBad.size() * sizeof(int64_t),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    std::string expected;
    try {
      hostCache.pullIds("emb", &bad, 1, rows, "user_emb", onHost.data());
    } catch (const Error &error) {
      expected = error.what();
    }
    try {
      cache->pullIds("emb", deviceIds, withBad.size(), rows, "user_emb",
                     deviceRows);
      ADD_FAILURE() << "id " << bad << " pulled";
    } catch (const Error &error) {
      EXPECT_EQ(std::string(error.what()), expected) << "id " << bad;
    }
  }
  cudaFree(deviceIds);
  cudaFree(deviceRows);
  cache->endPass();
  hostCache.endPass();
}

/// Gradients staged from GPU memory in pieces, then pushed as one step
/// divided by its micro-batches, update the rows as the host cache does
/// with the same step pushed from host memory.
TEST(GpuPassCacheTest, StagedDeviceGradientsUpdateLikeHostPushes) {
  REQUIRE_GPU_PASS_CACHE();
  const auto batches = makeBatches(3, 700, 3000, 16, 12);
  ParameterServer gpu(serverConfig(2)), host(serverConfig(2));
  for (ParameterServer *server : {&gpu, &host})
    server->createSparseTable(tableConfig("emb", 16, adagrad()));
  std::unique_ptr<PassCache> device = makeCudaPassCache(gpu);
  HostPassCache onHost(host);
  for (PassCache *cache : {device.get(), static_cast<PassCache *>(&onHost)}) {
    for (const Batch &batch : batches)
      cache->addPassKeys("emb", batch.ids.data(), batch.ids.size());
    cache->beginPass();
  }
  // Staged in reverse order; pushed in batch order.
  std::vector<size_t> offsets(batches.size());
  for (size_t b = batches.size(); b-- > 0;) {
    const std::vector<float> &gradients = batches[b].gradients;
    float *staging = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&staging),
                         gradients.size() * sizeof(float)),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(staging, gradients.data(),
                         gradients.size() * sizeof(float),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    offsets[b] = device->stageGradients("emb", staging, gradients.size());
    cudaFree(staging); // staged: the buffer may go
  }
  const StagedStep step = stagedStep(batches, offsets, 3.0f);
  device->pushStaged("emb", step.ids.data(), step.ids.size(), step.segments,
                     3.0f);
  onHost.push("emb", step.ids.data(), step.ids.size(), step.divided.data());
  device->endPass();
  onHost.endPass();
  expectSameRows(snapshot(gpu, "emb", 3000), snapshot(host, "emb", 3000));
}

TEST(GpuPassCacheTest, IdsOutsideThePassThrowBeforeAnyRowChanges) {
  REQUIRE_GPU_PASS_CACHE();
  ParameterServer server(serverConfig(1));
  server.createSparseTable(tableConfig("emb", 4, adagrad()));
  std::unique_ptr<PassCache> cache = makeCudaPassCache(server);
  const std::vector<uint64_t> keys = {1, 2, 3};
  cache->addPassKeys("emb", keys.data(), keys.size());
  cache->beginPass();
  std::vector<float> before(3 * 4), after(3 * 4);
  cache->pull("emb", keys.data(), keys.size(), before.data());
  const std::vector<uint64_t> outside = {2, 9};
  const std::vector<float> gradients(2 * 4, 1.0f);
  try {
    cache->push("emb", outside.data(), outside.size(), gradients.data());
    FAIL() << "id 9 is not in the pass";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("9"), std::string::npos)
        << error.what();
  }
  cache->pull("emb", keys.data(), keys.size(), after.data());
  EXPECT_TRUE(bitIdentical(before, after));
  std::vector<float> row(4);
  EXPECT_THROW(cache->pull("other", keys.data(), 1, row.data()), Error);
  cache->endPass();
  // Its floats and its key in GPU memory.
  EXPECT_EQ(cache->bytesPerRow("emb"),
            server.rowFloats("emb") * sizeof(float) + sizeof(uint64_t));
  // Its prepared pass waits in host memory: a pass may take all the limit.
  EXPECT_EQ(cache->passesInMemory(), 1u);
}

} // namespace
