//===- Protocol.cpp - Message fields and key routing ----------------------===//

#include "Protocol.h"

#include "heterps/Runtime/MpiTraining.h"

namespace heterps::rt::mpi {

const char *opName(int op) {
  switch (op) {
  case kCreateTable:
    return "create-table";
  case kCreateDense:
    return "create-dense";
  case kPull:
    return "pull";
  case kPush:
    return "push";
  case kPullDense:
    return "pull-dense";
  case kPushDense:
    return "push-dense";
  case kEndStep:
    return "end-step";
  case kReadRows:
    return "read-rows";
  case kReadDense:
    return "read-dense";
  case kRowCount:
    return "row-count";
  case kSave:
    return "save";
  case kLoad:
    return "load";
  case kGoodbye:
    return "goodbye";
  case kPullDenseMany:
    return "pull-dense-many";
  case kPushDenseMany:
    return "push-dense-many";
  case kPeek:
    return "peek";
  case kLearningRateScale:
    return "lr-scale";
  case kResumedAtStep:
    return "resumed-at-step";
  case kReply:
    return "reply";
  default:
    return "unknown";
  }
}

void MessageWriter::putOptimizer(const ps::OptimizerConfig &config) {
  put<int32_t>(static_cast<int32_t>(config.kind));
  put(config.learningRate);
  put(config.momentum);
  put(config.beta1);
  put(config.beta2);
  put(config.epsilon);
  put(config.initialAccumulator);
}

ps::OptimizerConfig MessageReader::getOptimizer() {
  ps::OptimizerConfig config;
  const int32_t kind = get<int32_t>();
  if (kind < 0 || kind > static_cast<int32_t>(ps::OptimizerKind::MovingAverage))
    throw Error(what + " names optimizer kind " + std::to_string(kind));
  config.kind = static_cast<ps::OptimizerKind>(kind);
  config.learningRate = get<float>();
  config.momentum = get<float>();
  config.beta1 = get<float>();
  config.beta2 = get<float>();
  config.epsilon = get<float>();
  config.initialAccumulator = get<float>();
  return config;
}

void MessageWriter::putTableConfig(const ps::SparseTableConfig &config) {
  putString(config.name);
  put<uint64_t>(config.dim);
  put<uint64_t>(config.seed);
  put(config.initScale);
  putOptimizer(config.optimizer);
  put<uint64_t>(config.cacheRowsPerShard);
}

ps::SparseTableConfig MessageReader::getTableConfig() {
  ps::SparseTableConfig config;
  config.name = getString();
  config.dim = get<uint64_t>();
  config.seed = get<uint64_t>();
  config.initScale = get<float>();
  config.optimizer = getOptimizer();
  config.cacheRowsPerShard = get<uint64_t>();
  return config;
}

//===----------------------------------------------------------------------===//
// Routing
//===----------------------------------------------------------------------===//

size_t shardOfKey(uint64_t key, size_t shards) {
  if (shards == 0)
    throw Error("routing needs at least one parameter-server shard");
  return static_cast<size_t>(key % shards);
}

size_t shardOfDense(const std::string &name, size_t shards) {
  if (shards == 0)
    throw Error("routing needs at least one parameter-server shard");
  return static_cast<size_t>(stableHash(name) % shards);
}

std::vector<std::vector<uint32_t>>
groupKeysByShard(const uint64_t *keys, size_t count, size_t shards) {
  std::vector<std::vector<uint32_t>> groups(shards);
  for (size_t i = 0; i < count; ++i)
    groups[shardOfKey(keys[i], shards)].push_back(static_cast<uint32_t>(i));
  return groups;
}

std::string shardCheckpointName(size_t shard) {
  return ps::checkpointPartName(shard);
}

} // namespace heterps::rt::mpi
