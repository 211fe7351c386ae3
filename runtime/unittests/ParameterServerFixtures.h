//===- ParameterServerFixtures.h - What the PS tests build ------*- C++ -*-===//
//
// Table and optimizer configurations and reproducible batches shared by the
// parameter server's and the pass cache's tests.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_UNITTESTS_PARAMETERSERVERFIXTURES_H
#define HETERPS_RUNTIME_UNITTESTS_PARAMETERSERVERFIXTURES_H

#include "heterps/Runtime/ParameterServer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace heterps::rt::testsupport {

using ps::OptimizerConfig;
using ps::OptimizerKind;
using ps::ParameterServer;
using ps::ParameterServerConfig;
using ps::SparseTableConfig;

inline ParameterServerConfig serverConfig(size_t shards,
                                          const std::string &storage = "") {
  ParameterServerConfig config;
  config.numShards = shards;
  config.storageDirectory = storage;
  return config;
}

inline SparseTableConfig tableConfig(const std::string &name, size_t dim,
                                     OptimizerConfig optimizer,
                                     size_t cacheRows = 0) {
  SparseTableConfig config;
  config.name = name;
  config.dim = dim;
  config.seed = 1234;
  config.initScale = 0.05f;
  config.optimizer = optimizer;
  config.cacheRowsPerShard = cacheRows;
  return config;
}

inline OptimizerConfig adam() {
  OptimizerConfig config;
  config.kind = OptimizerKind::Adam;
  config.learningRate = 0.01f;
  return config;
}

inline OptimizerConfig adagrad() {
  OptimizerConfig config;
  config.kind = OptimizerKind::Adagrad;
  config.learningRate = 0.1f;
  config.initialAccumulator = 0.1f;
  return config;
}

inline OptimizerConfig sgd(float learningRate, float momentum) {
  OptimizerConfig config;
  config.kind = OptimizerKind::Sgd;
  config.learningRate = learningRate;
  config.momentum = momentum;
  return config;
}

inline bool bitIdentical(const std::vector<float> &a,
                         const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// One batch of a reproducible training run: ids (with duplicates) and
/// gradients.
struct Batch {
  std::vector<uint64_t> ids;
  std::vector<float> gradients;
};

inline std::vector<Batch> makeBatches(size_t count, size_t batchSize,
                                      uint64_t keySpace, size_t dim,
                                      uint32_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<uint64_t> key(0, keySpace - 1);
  std::normal_distribution<float> gradient(0.0f, 1.0f);
  std::vector<Batch> batches(count);
  for (Batch &batch : batches) {
    for (size_t i = 0; i < batchSize; ++i)
      batch.ids.push_back(key(random));
    // A few repeats in every batch exercise the merge.
    for (size_t i = 0; i < batchSize / 8; ++i)
      batch.ids[i * 2 + 1] = batch.ids[i * 2];
    for (size_t i = 0; i < batchSize * dim; ++i)
      batch.gradients.push_back(gradient(random));
  }
  return batches;
}

/// Every row with optimizer state, by key, for keys below keySpace.
inline std::map<uint64_t, std::vector<float>>
snapshot(ParameterServer &server, const std::string &table, uint64_t keySpace) {
  std::map<uint64_t, std::vector<float>> rows;
  for (uint64_t key = 0; key < keySpace; ++key)
    if (auto row = server.readRow(table, key))
      rows[key] = *row;
  return rows;
}

inline void
expectSameRows(const std::map<uint64_t, std::vector<float>> &expected,
               const std::map<uint64_t, std::vector<float>> &actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (const auto &[key, row] : expected) {
    auto found = actual.find(key);
    ASSERT_NE(found, actual.end()) << "key " << key;
    EXPECT_TRUE(bitIdentical(row, found->second)) << "key " << key;
  }
}

} // namespace heterps::rt::testsupport

#endif // HETERPS_RUNTIME_UNITTESTS_PARAMETERSERVERFIXTURES_H
