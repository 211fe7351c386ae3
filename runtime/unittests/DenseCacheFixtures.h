//===- DenseCacheFixtures.h - Dense updates through a cache -----*- C++ -*-===//
//
// The same steps of dense gradients applied on the host server directly (as
// TrainingServer::finishStep does without a dense cache) and through a
// dense cache (HostDenseCache, or another implementation such as the
// GPU's), for the tests that compare the two bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_UNITTESTS_DENSECACHEFIXTURES_H
#define HETERPS_RUNTIME_UNITTESTS_DENSECACHEFIXTURES_H

#include "heterps/Runtime/DenseCache.h"

#include "ParameterServerFixtures.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>

namespace heterps::rt::testsupport {

using ps::DenseCache;

/// Makes the dense cache under test over `server`.
using DenseCacheFactory =
    std::function<std::unique_ptr<DenseCache>(ParameterServer &server)>;
/// Stages one micro-batch's gradient into the cache (as a stage would: from
/// its own memory).
using GradientStager = std::function<size_t(DenseCache &, const std::string &,
                                            const std::vector<float> &)>;

inline size_t stageFromHost(DenseCache &cache, const std::string &name,
                            const std::vector<float> &gradient) {
  return cache.stageGradient(name, gradient.data(), gradient.size());
}

/// The dense optimizers: the sparse ones and the moving average of
/// batch-norm statistics.
inline std::vector<std::pair<const char *, OptimizerConfig>> denseOptimizers() {
  OptimizerConfig average;
  average.kind = OptimizerKind::MovingAverage;
  average.learningRate = 0.0f;
  average.momentum = 0.9f;
  return {{"adagrad", adagrad()},
          {"adam", adam()},
          {"sgd-momentum", sgd(0.05f, 0.9f)},
          {"sgd", sgd(0.05f, 0.0f)},
          {"moving-average", average}};
}

/// One step: its micro-batches' gradients, in micro-batch order, and the
/// order they arrive in.
struct DenseStep {
  std::vector<std::vector<float>> microBatches;
  std::vector<size_t> arrival;
  float learningRateScale = 1.0f;
};

inline std::vector<DenseStep> makeDenseSteps(size_t steps, size_t size,
                                             uint32_t seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> value(0.0f, 1.0f);
  std::vector<DenseStep> out(steps);
  for (size_t s = 0; s < steps; ++s) {
    DenseStep &step = out[s];
    step.microBatches.resize(1 + s % 3);
    for (std::vector<float> &gradient : step.microBatches) {
      gradient.resize(size);
      for (float &g : gradient)
        g = value(random);
    }
    step.arrival.resize(step.microBatches.size());
    for (size_t i = 0; i < step.arrival.size(); ++i)
      step.arrival[i] = step.arrival.size() - 1 - i; // last first
    // Read at update time, as the server reads it at push time.
    step.learningRateScale = s < 2 ? 1.0f : 0.5f;
  }
  return out;
}

/// Distinct, reproducible initial values of a dense parameter.
inline std::vector<float> initialDenseValues(size_t size) {
  std::vector<float> values(size);
  for (size_t i = 0; i < size; ++i)
    values[i] = 0.01f * float(i % 97) - 0.3f;
  return values;
}

/// A server with dense parameter "w" of `initial`.
inline std::unique_ptr<ParameterServer>
denseServer(const std::vector<float> &initial,
            const OptimizerConfig &optimizer) {
  auto server = std::make_unique<ParameterServer>(serverConfig(1));
  server->createDenseParam("w", initial, optimizer);
  return server;
}

/// `steps` on one server directly and on another through the cache
/// `makeCache` makes: the values after each step, and the values and state
/// written back at the end, must be the same bits.
inline void expectDenseCacheTrainsLikeTheServer(
    const std::vector<DenseStep> &steps, const std::vector<float> &initial,
    const OptimizerConfig &optimizer, const DenseCacheFactory &makeCache,
    const GradientStager &stage = stageFromHost) {
  auto direct = denseServer(initial, optimizer);
  auto cached = denseServer(initial, optimizer);
  std::unique_ptr<DenseCache> cache = makeCache(*cached);
  cache->adopt("w");
  ASSERT_TRUE(cache->adopted("w"));
  std::vector<float> values(initial.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    const DenseStep &step = steps[s];
    direct->setLearningRateScale(step.learningRateScale);
    cached->setLearningRateScale(step.learningRateScale);
    // The host path: summed in micro-batch order, then divided.
    std::vector<float> sum = step.microBatches[0];
    for (size_t m = 1; m < step.microBatches.size(); ++m)
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += step.microBatches[m][i];
    const float divisor = float(step.microBatches.size());
    for (float &value : sum)
      value /= divisor;
    direct->pushDense("w", sum);
    // The cache: staged as they arrive, applied in micro-batch order.
    std::vector<size_t> offsets(step.microBatches.size());
    for (size_t m : step.arrival)
      offsets[m] = stage(*cache, "w", step.microBatches[m]);
    cache->update("w", offsets, divisor);
    cache->readValues("w", values.data());
    EXPECT_TRUE(bitIdentical(values, direct->pullDense("w")))
        << "values after step " << s;
  }
  // The server's copy is stale until written back (where it has floats).
  if (!steps.empty() && !direct->readDense("w").empty()) {
    EXPECT_FALSE(bitIdentical(cached->readDense("w"), direct->readDense("w")));
  }
  cache->writeBack();
  EXPECT_TRUE(bitIdentical(cached->readDense("w"), direct->readDense("w")))
      << "values and optimizer state written back";
  // A checkpoint load replaces the server's values: reload takes them.
  std::vector<float> loaded = direct->readDense("w");
  for (float &value : loaded)
    value += 1.0f;
  cached->writeDense("w", loaded);
  cache->reload();
  cache->readValues("w", values.data());
  EXPECT_TRUE(bitIdentical(
      values,
      std::vector<float>(loaded.begin(), loaded.begin() + initial.size())));
}

} // namespace heterps::rt::testsupport

#endif // HETERPS_RUNTIME_UNITTESTS_DENSECACHEFIXTURES_H
