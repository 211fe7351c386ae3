//===- PassCacheFixtures.h - Training through a pass cache -----*- C++ -*-===//
//
// The same batches trained on the host server directly and through a pass
// cache (HostPassCache, or another implementation such as the GPU's), for
// the tests that compare the two bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_UNITTESTS_PASSCACHEFIXTURES_H
#define HETERPS_RUNTIME_UNITTESTS_PASSCACHEFIXTURES_H

#include "heterps/Runtime/PassCache.h"

#include "ParameterServerFixtures.h"

#include <functional>
#include <memory>
#include <thread>

namespace heterps::rt::testsupport {

using ps::HostPassCache;
using ps::PassCache;

/// Makes the pass cache under test over `server`.
using CacheFactory =
    std::function<std::unique_ptr<PassCache>(ParameterServer &server)>;

/// The learning-rate scale of batch b: it changes mid-pass, so the cache
/// must read it at push time as the server does.
inline float scaleOf(size_t batch) { return batch < 5 ? 1.0f : 0.5f; }

/// Pulls then pushes every batch on the server; returns all pulled values.
inline std::vector<float> trainDirect(ParameterServer &server,
                                      const std::vector<Batch> &batches) {
  std::vector<float> pulled;
  for (size_t b = 0; b < batches.size(); ++b) {
    server.setLearningRateScale(scaleOf(b));
    std::vector<float> rows = server.pull("emb", batches[b].ids);
    pulled.insert(pulled.end(), rows.begin(), rows.end());
    server.push("emb", batches[b].ids, batches[b].gradients);
  }
  return pulled;
}

/// The same through a pass cache, `passBatches` batches per pass. With
/// `prepareAhead` each pass after the first is prepared on a thread of its
/// own while the one before it pulls and pushes (as the trainer does).
inline std::vector<float>
trainThroughCache(ParameterServer &server, const std::vector<Batch> &batches,
                  size_t passBatches, bool prepareAhead = false,
                  const CacheFactory &makeCache = {}) {
  std::unique_ptr<PassCache> owned =
      makeCache ? makeCache(server) : std::make_unique<HostPassCache>(server);
  PassCache &cache = *owned;
  const size_t dim = server.tableConfig("emb").dim;
  auto addKeys = [&](size_t first) {
    const size_t last = std::min(batches.size(), first + passBatches);
    for (size_t b = first; b < last; ++b)
      cache.addPassKeys("emb", batches[b].ids.data(), batches[b].ids.size());
  };
  std::vector<float> pulled;
  for (size_t first = 0; first < batches.size(); first += passBatches) {
    const size_t last = std::min(batches.size(), first + passBatches);
    if (!cache.nextPassPrepared())
      addKeys(first);
    cache.beginPass();
    std::thread preparing;
    if (prepareAhead && last < batches.size())
      preparing = std::thread([&, last] {
        addKeys(last);
        cache.prepareNextPass();
      });
    for (size_t b = first; b < last; ++b) {
      server.setLearningRateScale(scaleOf(b));
      const Batch &batch = batches[b];
      std::vector<float> rows(batch.ids.size() * dim);
      cache.pull("emb", batch.ids.data(), batch.ids.size(), rows.data());
      pulled.insert(pulled.end(), rows.begin(), rows.end());
      cache.push("emb", batch.ids.data(), batch.ids.size(),
                 batch.gradients.data());
    }
    if (preparing.joinable())
      preparing.join();
    EXPECT_EQ(cache.nextPassPrepared(), prepareAhead && last < batches.size());
    cache.endPass();
  }
  return pulled;
}

/// One step of `batches` whose gradients were staged at `offsets`: its ids
/// in batch order, the gradients divided by `divisor` (what a host push of
/// the step takes) and the segments pushStaged takes.
struct StagedStep {
  std::vector<uint64_t> ids;
  std::vector<float> divided;
  std::vector<PassCache::StagedSegment> segments;
};
inline StagedStep stagedStep(const std::vector<Batch> &batches,
                             const std::vector<size_t> &offsets,
                             float divisor) {
  StagedStep step;
  for (size_t b = 0; b < batches.size(); ++b) {
    step.ids.insert(step.ids.end(), batches[b].ids.begin(),
                    batches[b].ids.end());
    for (float value : batches[b].gradients)
      step.divided.push_back(value / divisor);
    step.segments.push_back({offsets[b], batches[b].gradients.size()});
  }
  return step;
}

struct NamedOptimizer {
  const char *name;
  OptimizerConfig config;
};
inline std::vector<NamedOptimizer> optimizers() {
  return {{"adagrad", adagrad()},
          {"adam", adam()},
          {"sgd-momentum", sgd(0.05f, 0.9f)},
          {"sgd", sgd(0.05f, 0.0f)}};
}

/// Trains `batches` (keys below `keySpace`, rows of `dim`) on one server
/// directly and on another through the cache `makeCache` makes (null:
/// HostPassCache): the pulled values, rows and optimizer state must be the
/// same bits.
inline void expectCacheTrainsLikeTheServer(const std::vector<Batch> &batches,
                                           uint64_t keySpace, size_t dim,
                                           const OptimizerConfig &optimizer,
                                           size_t passBatches,
                                           bool prepareAhead,
                                           const CacheFactory &makeCache = {}) {
  ParameterServer direct(serverConfig(2));
  ParameterServer cached(serverConfig(2));
  direct.createSparseTable(tableConfig("emb", dim, optimizer));
  cached.createSparseTable(tableConfig("emb", dim, optimizer));
  EXPECT_TRUE(bitIdentical(
      trainDirect(direct, batches),
      trainThroughCache(cached, batches, passBatches, prepareAhead, makeCache)))
      << "pulled values differ";
  EXPECT_EQ(direct.rowCount("emb"), cached.rowCount("emb"));
  expectSameRows(snapshot(direct, "emb", keySpace),
                 snapshot(cached, "emb", keySpace));
}

} // namespace heterps::rt::testsupport

#endif // HETERPS_RUNTIME_UNITTESTS_PASSCACHEFIXTURES_H
