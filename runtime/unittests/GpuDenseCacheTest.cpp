//===- GpuDenseCacheTest.cpp - Dense parameters in GPU memory -------------===//
//
// The CUDA dense cache must update dense parameters, bit for bit, as the
// host server does (and so as HostDenseCache does), from gradients in GPU
// memory and in host memory. Without a usable GPU the tests check the
// cache's error and skip; scripts/gpu/check.sh counts a skip as a failure.
//
//===----------------------------------------------------------------------===//

#include "DenseCacheFixtures.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

using namespace heterps::rt;
using namespace heterps::rt::ps;
using namespace heterps::rt::testsupport;

namespace {

const DenseCacheFactory kGpuCache = [](ParameterServer &server) {
  return makeCudaDenseCache(server);
};

#define REQUIRE_GPU_DENSE_CACHE()                                              \
  do {                                                                         \
    auto probe = denseServer({1.0f}, adam());                                  \
    try {                                                                      \
      makeCudaDenseCache(*probe);                                              \
    } catch (const Error &error) {                                             \
      EXPECT_NE(                                                               \
          std::string(error.what()).find("dense parameters on the GPU: "),     \
          std::string::npos)                                                   \
          << error.what();                                                     \
      GTEST_SKIP() << error.what();                                            \
    }                                                                          \
  } while (false)

TEST(GpuDenseCacheTest, BuiltWithCuda) { EXPECT_TRUE(cudaDenseCacheBuilt()); }

/// A stage's gradient buffer in GPU memory, overwritten right after each
/// stageGradient returns (a stage may reuse it then).
class DeviceGradient {
public:
  size_t stage(DenseCache &cache, const std::string &name,
               const std::vector<float> &gradient) {
    const size_t bytes = gradient.size() * sizeof(float);
    if (bytes > capacity) {
      cudaFree(buffer);
      buffer = nullptr;
      EXPECT_EQ(cudaMalloc(&buffer, bytes), cudaSuccess);
      capacity = bytes;
    }
    EXPECT_EQ(
        cudaMemcpy(buffer, gradient.data(), bytes, cudaMemcpyHostToDevice),
        cudaSuccess);
    // A copy from pageable memory may return before it lands; the cache
    // copies on a stream of its own (a stage synchronises its stream too).
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const size_t offset = cache.stageGradient(
        name, static_cast<float *>(buffer), gradient.size());
    EXPECT_EQ(cudaMemset(buffer, 0xff, bytes), cudaSuccess);
    return offset;
  }
  ~DeviceGradient() { cudaFree(buffer); }

private:
  void *buffer = nullptr;
  size_t capacity = 0;
};

TEST(GpuDenseCacheTest, DeviceGradientsUpdateLikeTheHostServer) {
  REQUIRE_GPU_DENSE_CACHE();
  DeviceGradient device;
  const GradientStager fromDevice = [&](DenseCache &cache,
                                        const std::string &name,
                                        const std::vector<float> &gradient) {
    return device.stage(cache, name, gradient);
  };
  // No values (Adam's powers still move on), sizes around a block (256)
  // and, with Adam, past a full grid's threads (65,535 blocks of 256), so
  // the grid-stride loop runs more than once.
  for (const auto &[name, optimizer] : denseOptimizers())
    for (size_t size :
         {size_t(0), size_t(1), size_t(257), size_t(17'000'000)}) {
      if (size > 1'000'000 && optimizer.kind != OptimizerKind::Adam)
        continue;
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(size) + " values");
      expectDenseCacheTrainsLikeTheServer(makeDenseSteps(3, size, 5),
                                          initialDenseValues(size), optimizer,
                                          kGpuCache, fromDevice);
    }
}

TEST(GpuDenseCacheTest, HostGradientsUpdateLikeTheHostServer) {
  REQUIRE_GPU_DENSE_CACHE();
  for (const auto &[name, optimizer] : denseOptimizers()) {
    SCOPED_TRACE(name);
    expectDenseCacheTrainsLikeTheServer(makeDenseSteps(6, 1000, 9),
                                        initialDenseValues(1000), optimizer,
                                        kGpuCache);
  }
}

TEST(GpuDenseCacheTest, ValuesStayAtTheirAddressInDeviceMemory) {
  REQUIRE_GPU_DENSE_CACHE();
  auto server = denseServer(initialDenseValues(8), sgd(0.5f, 0.0f));
  auto cache = makeCudaDenseCache(*server);
  EXPECT_TRUE(cache->onDevice());
  float *values = cache->adopt("w");
  EXPECT_EQ(cache->adopt("w"), values);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, values), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  std::vector<float> gradient(8, 2.0f), read(8);
  const size_t offset = cache->stageGradient("w", gradient.data(), 8);
  cache->update("w", {offset}, 1.0f);
  ASSERT_EQ(cudaMemcpy(read.data(), values, sizeof(float) * 8,
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  std::vector<float> expected = initialDenseValues(8);
  for (float &value : expected)
    value -= 1.0f;
  EXPECT_EQ(read, expected);
}

} // namespace
