//===- DenseCacheTest.cpp - Dense parameters in a cache's memory ----------===//
//
// HostDenseCache against the host server's dense update, bit for bit, and
// the CUDA dense cache's per-thread code (DenseCacheKernels.h) run over a
// simulated grid against HostDenseCache; GpuPassCacheTest.cpp runs the CUDA
// cache itself where a GPU is.
//
//===----------------------------------------------------------------------===//

#include "../ps/DenseCacheKernels.h"

#include "DenseCacheFixtures.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace heterps::rt;
using namespace heterps::rt::ps;
using namespace heterps::rt::testsupport;

namespace {

const DenseCacheFactory kHostCache = [](ParameterServer &server) {
  return std::make_unique<HostDenseCache>(server);
};

TEST(DenseCacheTest, HostCacheUpdatesAsTheServer) {
  for (const auto &[name, optimizer] : denseOptimizers())
    for (size_t size : {0, 1, 7, 1000}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(size) + " values");
      expectDenseCacheTrainsLikeTheServer(makeDenseSteps(6, size, 3),
                                          initialDenseValues(size), optimizer,
                                          kHostCache);
    }
}

/// The GPU's update, one simulated thread at a time: every thread's
/// elements (a grid-stride loop), then Adam's powers (advanceDenseState).
void updateOnSimulatedGrid(std::vector<float> &row, size_t size,
                           const std::vector<float> &staged,
                           const std::vector<size_t> &offsets, float divisor,
                           const OptimizerConfig &optimizer, size_t threads) {
  const rules::UpdateRule rule = rules::updateRule(optimizer);
  for (size_t thread = 0; thread < threads; ++thread)
    kernels::updateDenseElements(row.data(), size, staged.data(),
                                 offsets.data(), offsets.size(), divisor, rule,
                                 thread, threads);
  rules::advanceState(row.data() + size, size, rule);
}

TEST(DenseCacheTest, GpuKernelsComputeTheHostCachesUpdate) {
  const size_t size = 300;
  for (const auto &[name, optimizer] : denseOptimizers())
    for (size_t threads : {1, 64, 1024}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(threads) +
                   " threads");
      auto server = denseServer(initialDenseValues(size), optimizer);
      HostDenseCache cache(*server);
      const float *values = cache.adopt("w");
      std::vector<float> row = server->readDense("w");
      for (const DenseStep &step : makeDenseSteps(5, size, 11)) {
        server->setLearningRateScale(step.learningRateScale);
        std::vector<float> staged;
        std::vector<size_t> offsets(step.microBatches.size());
        for (size_t m : step.arrival) {
          offsets[m] =
              cache.stageGradient("w", step.microBatches[m].data(), size);
          staged.insert(staged.end(), step.microBatches[m].begin(),
                        step.microBatches[m].end());
        }
        const float divisor = float(step.microBatches.size());
        cache.update("w", offsets, divisor);
        updateOnSimulatedGrid(row, size, staged, offsets, divisor,
                              server->scaledDenseOptimizer("w"), threads);
        EXPECT_TRUE(
            bitIdentical(std::vector<float>(row.begin(), row.begin() + size),
                         std::vector<float>(values, values + size)));
      }
      cache.writeBack();
      EXPECT_TRUE(bitIdentical(row, server->readDense("w")))
          << "values and optimizer state";
    }
}

TEST(DenseCacheTest, MisuseThrowsAClearError) {
  auto server = denseServer(initialDenseValues(4), adam());
  HostDenseCache cache(*server);
  EXPECT_FALSE(cache.adopted("w"));
  std::vector<float> gradient(4, 1.0f);
  expectErrorContaining([&] { cache.stageGradient("w", gradient.data(), 4); },
                        "parameter 'w' was not adopted");
  expectErrorContaining([&] { cache.adopt("nope"); }, "nope");
  float *values = cache.adopt("w");
  EXPECT_EQ(cache.adopt("w"), values) << "adopted once, at one address";
  expectErrorContaining([&] { cache.stageGradient("w", gradient.data(), 3); },
                        "parameter 'w' has 4 values but its gradient has 3");
  expectErrorContaining([&] { cache.update("w", {}, 1.0f); },
                        "without a staged gradient");
  const size_t offset = cache.stageGradient("w", gradient.data(), 4);
  expectErrorContaining([&] { cache.update("w", {offset + 4}, 1.0f); },
                        "no staged gradient at offset 4");
  // A failed update forgets what was staged and changes nothing.
  std::vector<float> before(values, values + 4);
  expectErrorContaining([&] { cache.update("w", {0}, 1.0f); },
                        "no staged gradient at offset 0");
  EXPECT_EQ(std::vector<float>(values, values + 4), before);
  // A discarded step's gradients are not applied later.
  cache.stageGradient("w", gradient.data(), 4);
  cache.discardStaged();
  expectErrorContaining([&] { cache.update("w", {0}, 1.0f); },
                        "no staged gradient at offset 0");
}

} // namespace
