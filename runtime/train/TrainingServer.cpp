//===- TrainingServer.cpp - The parameter server of a training run --------===//

#include "heterps/Runtime/TrainingServer.h"
#include "heterps/Runtime/CudaPassCache.h"

#include "heterps/Runtime/StableHash.h"
#include "heterps/Runtime/StageABI.h"
#include "heterps/Runtime/Tensor.h"

#include "../ps/CheckpointFiles.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <new>
#include <set>
#include <utility>

namespace heterps::rt::train {
namespace {

namespace fs = std::filesystem;

/// splitmix64's finaliser: neighbouring seeds give unrelated table seeds.
uint64_t mix(uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

/// A safe name whose forms name + suffix are none of them in `taken` (a
/// suffix ".<index>", then ".<index>.<n>", resolves collisions of names
/// that differed only in replaced characters); records those forms.
std::string uniqueSafeName(const std::string &name, size_t index,
                           std::set<std::string> &taken,
                           std::initializer_list<const char *> suffixes = {
                               ""}) {
  const std::string safe = safeFileName(name);
  for (int attempt = 0;; ++attempt) {
    std::string candidate =
        attempt == 0 ? safe : safe + "." + std::to_string(index);
    if (attempt > 1)
      candidate += "." + std::to_string(attempt - 1);
    const bool free =
        std::none_of(suffixes.begin(), suffixes.end(), [&](const char *suffix) {
          return taken.count(candidate + suffix);
        });
    if (free) {
      for (const char *suffix : suffixes)
        taken.insert(candidate + suffix);
      return candidate;
    }
  }
}

/// Copies `message` into a C caller's error buffer.
void report(const char *message, char *error, size_t errorBytes) {
  if (!error || errorBytes == 0)
    return;
  std::strncpy(error, message, errorBytes - 1);
  error[errorBytes - 1] = '\0';
}

/// Runs `body`, turning an exception into a non-zero return and its text.
template <typename F> int guarded(char *error, size_t errorBytes, F &&body) {
  try {
    body();
    return 0;
  } catch (const std::bad_alloc &) {
    report("out of memory (a smaller --batch needs less)", error, errorBytes);
  } catch (const std::exception &e) {
    report(e.what(), error, errorBytes);
  } catch (...) {
    report("unknown error in the training server", error, errorBytes);
  }
  return 1;
}

thread_local std::vector<uint64_t> keyScratch;

} // namespace

ps::OptimizerConfig optimizerConfig(const OptimizerSpec &spec) {
  ps::OptimizerConfig config;
  if (spec.kind == "sgd")
    config.kind = ps::OptimizerKind::Sgd;
  else if (spec.kind == "adam")
    config.kind = ps::OptimizerKind::Adam;
  else if (spec.kind == "adagrad")
    config.kind = ps::OptimizerKind::Adagrad;
  else
    throw Error("unknown optimizer '" + spec.kind + "'");
  config.learningRate = spec.learningRate;
  config.momentum = spec.momentum;
  config.beta1 = spec.beta1;
  config.beta2 = spec.beta2;
  config.epsilon = spec.epsilon;
  config.initialAccumulator = spec.initialAccumulator;
  return config;
}

TrainingServer::TrainingServer(const Bundle &bundle,
                               TrainingServerOptions options)
    : TrainingServer(
          [&]() -> const TrainingSpec & {
            if (!bundle.training())
              throw Error("bundle '" + bundle.directory() +
                          "' is not a training bundle (its manifest.json has "
                          "no \"training\" section); compile the model with "
                          "--train");
            return *bundle.training();
          }(),
          bundle.weights(), bundle.weightsBytes(), options) {}

template <typename F>
int TrainingServer::serveCall(void *context, char *error, size_t errorBytes,
                              F &&body) {
  const auto start = std::chrono::steady_clock::now();
  const int status = guarded(error, errorBytes, std::forward<F>(body));
  static_cast<TrainingServer *>(context)->callNanoseconds.fetch_add(
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()),
      std::memory_order_relaxed);
  return status;
}

TrainingServer::TrainingServer(const TrainingSpec &spec, const char *weights,
                               size_t weightsBytes,
                               TrainingServerOptions options)
    : spec_(spec), refreshOnlyLookedUp(options.refreshOnlyLookedUp) {
  if (options.store) {
    if (options.passCache || options.memoryRowsPerShard != 0)
      throw Error("a pass cache and a memory limit on the tables need the "
                  "in-process parameter server (a single process)");
    store = options.store;
  } else {
    if (options.shards == 0)
      throw Error("the parameter server needs at least one shard");
    if (options.memoryRowsPerShard != 0 && options.storageDirectory.empty())
      throw Error("a memory limit on the sparse tables needs a storage "
                  "directory for the rows beyond it (--ps-storage-dir)");
    ps::ParameterServerConfig config;
    config.numShards = options.shards;
    config.storageDirectory = options.storageDirectory;
    server = std::make_unique<ps::ParameterServer>(config);
    store = server.get();
    if (options.passCache) {
      if (options.passCacheOnGpu)
        cache = ps::makeCudaPassCache(*server, options.passCacheGpus);
      else
        cache = std::make_unique<ps::HostPassCache>(*server);
      cache->setMemoryLimit(options.passMemoryBytes);
    }
  }
  if (options.passMemoryBytes != 0 && !cache)
    throw Error("a memory limit on passes needs the pass cache");
  if (options.passCacheOnGpu && !cache)
    throw Error("a pass cache on the GPU needs the pass cache");
  if (options.sparseStaleness < 0 || options.sparseStaleness > 1)
    throw Error("sparse staleness must be 0 or 1, got " +
                std::to_string(options.sparseStaleness));
  if (options.sparseStaleness != 0 && !server)
    throw Error("sparse staleness needs the in-process parameter server (a "
                "single process)");
  sparseStaleness = options.sparseStaleness;
  if (options.denseCache != DenseCacheKind::None && !server)
    throw Error("a dense cache needs the in-process parameter server (a "
                "single process)");
  denseCacheKind = options.denseCache;
  ps::OptimizerConfig optimizer = optimizerConfig(spec_.optimizer);

  std::set<std::string> taken;
  for (size_t i = 0; i < spec_.parameters.size(); ++i) {
    const TrainableParameter &parameter = spec_.parameters[i];
    if (parameter.dtype != DType::F32)
      throw Error("trainable parameter '" + parameter.name + "' is " +
                  dtypeName(parameter.dtype) + "; the server trains f32");
    if (parameter.offset > weightsBytes ||
        parameter.bytes() > weightsBytes - parameter.offset)
      throw Error("trainable parameter '" + parameter.name +
                  "' lies outside weights.bin");
    if (parameter.update == ParameterUpdate::TrainingFlag) {
      // Not a value to train or checkpoint: lookupParameter answers it from
      // the eval mode.
      if (numElements(parameter.shape) != 1)
        throw Error("training flag '" + parameter.name +
                    "' must have one element");
      if (denseByName.count(parameter.name) ||
          !trainingFlags.insert(parameter.name).second)
        throw Error("trainable parameter '" + parameter.name +
                    "' is listed twice");
      continue;
    }
    ps::OptimizerConfig update = optimizer;
    if (parameter.update == ParameterUpdate::MovingAverage) {
      // Pushed the step's batch statistic, which finishStep averages over
      // the micro-batches like a gradient.
      update = ps::OptimizerConfig{};
      update.kind = ps::OptimizerKind::MovingAverage;
      update.learningRate = 0.0f;
      update.momentum = parameter.momentum;
    }
    auto entry = std::make_unique<Dense>();
    entry->spec = &parameter;
    entry->serverName = uniqueSafeName(parameter.name, i, taken);
    std::vector<float> initial(numElements(parameter.shape));
    if (!initial.empty())
      std::memcpy(initial.data(), weights + parameter.offset,
                  parameter.bytes());
    entry->live = initial;
    store->createDenseParam(entry->serverName, std::move(initial), update);
    if (trainingFlags.count(parameter.name) ||
        !denseByName.emplace(parameter.name, std::move(entry)).second)
      throw Error("trainable parameter '" + parameter.name +
                  "' is listed twice");
  }

  taken.clear();
  for (size_t i = 0; i < spec_.tables.size(); ++i) {
    const TrainableTable &spec = spec_.tables[i];
    auto entry = std::make_unique<Table>();
    entry->spec = &spec;
    entry->serverName = uniqueSafeName(spec.name, i, taken);
    ps::SparseTableConfig table;
    table.name = entry->serverName;
    table.dim = static_cast<size_t>(spec.dim);
    table.seed = mix(options.seed ^ stableHash(spec.name));
    table.initScale = options.initScale;
    table.optimizer = optimizer;
    table.cacheRowsPerShard = options.memoryRowsPerShard;
    store->createSparseTable(table);
    if (!tablesByName.emplace(spec.name, std::move(entry)).second)
      throw Error("sparse table '" + spec.name + "' is listed twice");
  }

  callbacks.context = this;
  callbacks.lookupParameter = [](void *context,
                                 const char *name) -> const float * {
    try {
      return static_cast<TrainingServer *>(context)->lookupParameter(name);
    } catch (...) {
      return nullptr;
    }
  };
  callbacks.pullRows = [](void *context, const char *table, const int64_t *ids,
                          size_t count, float *rows, char *error,
                          size_t errorBytes) {
    return serveCall(context, error, errorBytes, [&] {
      static_cast<TrainingServer *>(context)->pullRows(table, ids, count, rows);
    });
  };
  callbacks.pushRows = [](void *context, const char *table, const int64_t *ids,
                          size_t count, const float *gradients, char *error,
                          size_t errorBytes) {
    return serveCall(context, error, errorBytes, [&] {
      static_cast<TrainingServer *>(context)->pushRows(table, ids, count,
                                                       gradients);
    });
  };
  callbacks.parameterVersion = [](void *context) -> uint64_t {
    return static_cast<TrainingServer *>(context)->parameterVersion();
  };
  if (cache && cache->rowsOnDevice()) {
    callbacks.rowsOnDevice = [](void *context, const char *table) -> int {
      try {
        return static_cast<TrainingServer *>(context)->rowsOnDevice(table);
      } catch (...) {
        return 0;
      }
    };
    callbacks.pullRowsByDeviceIds = [](void *context, const char *table,
                                       const int64_t *ids, size_t count,
                                       float *rows, char *error,
                                       size_t errorBytes) {
      return serveCall(context, error, errorBytes, [&] {
        static_cast<TrainingServer *>(context)->pullRowsInCache(table, ids,
                                                                count, rows);
      });
    };
    callbacks.pullRowsToDevice = [](void *context, const char *table,
                                    const int64_t *ids, size_t count,
                                    float *rows, char *error,
                                    size_t errorBytes) {
      return serveCall(context, error, errorBytes, [&] {
        static_cast<TrainingServer *>(context)->pullRowsToDevice(table, ids,
                                                                 count, rows);
      });
    };
    if (sparseStaleness == 0)
      callbacks.pushRowsFromDevice =
          [](void *context, const char *table, const int64_t *ids, size_t count,
             const float *gradients, char *error, size_t errorBytes) {
            return serveCall(context, error, errorBytes, [&] {
              static_cast<TrainingServer *>(context)->pushRowsInCache(
                  table, ids, count, gradients);
            });
          };
  }
  callbacks.pushDense = [](void *context, const char *name,
                           const float *gradient, size_t count, char *error,
                           size_t errorBytes) {
    return serveCall(context, error, errorBytes, [&] {
      static_cast<TrainingServer *>(context)->pushDense(name, gradient, count);
    });
  };
  if (denseCacheKind == DenseCacheKind::Gpu) {
    callbacks.parameterOnDevice = [](void *context, const char *name,
                                     const float **values, char *error,
                                     size_t errorBytes) {
      return serveCall(context, error, errorBytes, [&] {
        *values =
            static_cast<TrainingServer *>(context)->parameterInCache(name);
      });
    };
    callbacks.pushDenseFromDevice = [](void *context, const char *name,
                                       const float *gradient, size_t count,
                                       char *error, size_t errorBytes) {
      return serveCall(context, error, errorBytes, [&] {
        static_cast<TrainingServer *>(context)->pushDenseInCache(name, gradient,
                                                                 count);
      });
    };
  }
}

TrainingServer::~TrainingServer() {
  if (!deferredThread.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(deferredMutex);
    deferredStopping = true;
  }
  deferredSignal.notify_all();
  deferredThread.join(); // finishes an update it started; errors no longer
                         // matter
}

TrainingServer::Dense &TrainingServer::dense(const std::string &name) const {
  auto found = denseByName.find(name);
  if (found == denseByName.end() && trainingFlags.count(name))
    throw Error("'" + name +
                "' is a training flag, which is served, not pushed or stored");
  if (found == denseByName.end())
    throw Error("the parameter server has no dense parameter '" + name + "'");
  return *found->second;
}

TrainingServer::Table &TrainingServer::table(const std::string &name) const {
  auto found = tablesByName.find(name);
  if (found == tablesByName.end())
    throw Error("the parameter server has no sparse table '" + name + "'");
  return *found->second;
}

void TrainingServer::toKeys(const Table &table, const int64_t *ids,
                            size_t count, std::vector<uint64_t> &keys) const {
  keys.resize(count);
  ps::keysOfIds(table.spec->name, table.spec->rows, ids, count, keys.data());
}

const float *TrainingServer::lookupParameter(const std::string &name) const {
  auto found = denseByName.find(name);
  if (found != denseByName.end()) {
    Dense &entry = *found->second;
    if (!entry.lookedUp && entry.inCache) {
      // The cache's copy is the value; `live` follows it from now on
      // (refreshDense). Marked after the read: a second caller waits here.
      std::lock_guard<std::mutex> lock(denseCacheMutex);
      if (!entry.lookedUp)
        denseCache_->readValues(entry.serverName, entry.live.data());
      entry.lookedUp = true;
    } else {
      entry.lookedUp = true;
    }
    return entry.live.data();
  }
  if (trainingFlags.count(name) || name == HPS_TRAINING_MODE_PARAMETER)
    return evalMode() ? &kFlagOff : &kFlagOn;
  return nullptr;
}

void TrainingServer::pullRows(const std::string &name, const int64_t *ids,
                              size_t count, float *rows) {
  Table &entry = table(name);
  toKeys(entry, ids, count, keyScratch);
  beforePull();
  // Evaluation creates no row (nor evicts one from a row cache).
  if (count != 0) {
    if (inPass())
      cache->pull(entry.serverName, keyScratch.data(), count, rows);
    else if (evalMode())
      store->peek(entry.serverName, keyScratch.data(), count, rows);
    else
      store->pull(entry.serverName, keyScratch.data(), count, rows);
  }
  countPull();
}

void TrainingServer::beforePull() {
  if (sparseStaleness == 0 || evalMode())
    return;
  // Under the lock that starts the update, so that no pull slips in
  // between the count and the start.
  std::unique_lock<std::mutex> lock(deferredMutex);
  const int64_t expected = expectedPulls.load();
  if (expected >= 0 && pullsThisStep.load() >= expected) // finishStep reports
    deferredSignal.wait(lock, [&] { return !deferredRunning; });
}

void TrainingServer::countPull() {
  if (sparseStaleness == 0 || evalMode())
    return;
  std::lock_guard<std::mutex> lock(deferredMutex);
  const int64_t pulls = ++pullsThisStep;
  // The step's last pull: its rows were read before the update, as the
  // staleness promises; the update runs while the step's later stages do.
  if (pulls == expectedPulls.load() && deferredPending) {
    if (!deferredThread.joinable())
      deferredThread = std::thread([this] { applyDeferredUpdates(); });
    deferredRequested = deferredRunning = true;
    deferredSignal.notify_all();
  }
}

void TrainingServer::beginStep(int64_t microBatches) {
  pullsThisStep = 0;
  expectedPulls = pullsPerMicroBatch >= 0 && microBatches > 0
                      ? pullsPerMicroBatch * microBatches
                      : -1;
}

void TrainingServer::pushDeferred() {
  // Step t's update with step t's learning-rate scale; nothing else uses
  // the server's sparse rows or its scale until the step ends.
  const float stepScale = server->learningRateScale();
  server->setLearningRateScale(deferredScale);
  struct Restore {
    ps::ParameterServer &server;
    float scale;
    ~Restore() { server.setLearningRateScale(scale); }
  } restore{*server, stepScale};
  // A push that fails (a RocksDB or CUDA error) leaves only the pushes not
  // yet applied held back, so that neither a retry nor a checkpoint's copy
  // applies a whole push twice (a push that fails part-way, over shards,
  // is the store's to undo).
  size_t applied = 0;
  try {
    for (; applied < deferred.size(); ++applied)
      pushSparse(deferred[applied].table, deferred[applied].keys.data(),
                 deferred[applied].keys.size(),
                 deferred[applied].gradients.data());
  } catch (...) {
    deferred.erase(deferred.begin(), deferred.begin() + applied);
    throw;
  }
  deferred.clear();
  deferredPending = false;
}

void TrainingServer::pushSparse(const std::string &serverName,
                                const uint64_t *keys, size_t count,
                                const float *gradients) {
  // The server (or the pass cache, alike) sums duplicate ids in this
  // order, then updates each row once.
  if (inPass())
    cache->push(serverName, keys, count, gradients);
  else
    store->push(serverName, keys, count, gradients);
}

void TrainingServer::waitForDeferred() {
  if (restoreFailure)
    std::rethrow_exception(restoreFailure);
  std::unique_lock<std::mutex> lock(deferredMutex);
  deferredSignal.wait(lock, [&] { return !deferredRunning; });
  if (deferredError)
    std::rethrow_exception(std::exchange(deferredError, nullptr));
}

void TrainingServer::applyDeferredUpdates() {
  std::unique_lock<std::mutex> lock(deferredMutex);
  while (true) {
    deferredSignal.wait(lock,
                        [&] { return deferredRequested || deferredStopping; });
    if (!deferredRequested)
      return;
    deferredRequested = false;
    lock.unlock();
    std::exception_ptr error;
    try {
      pushDeferred();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    deferredError = error;
    deferredRunning = false;
    deferredSignal.notify_all();
  }
}

void TrainingServer::applyDeferredUpdate() {
  waitForDeferred();
  if (deferredPending)
    pushDeferred();
}

bool TrainingServer::rowsOnDevice(const std::string &name) const {
  if (!inPass() || !cache->rowsOnDevice())
    return false;
  auto found = tablesByName.find(name);
  return found != tablesByName.end() &&
         cache->passKeyCount(found->second->serverName) > 0;
}

void TrainingServer::pullRowsToDevice(const std::string &name,
                                      const int64_t *ids, size_t count,
                                      float *deviceRows) {
  if (!rowsOnDevice(name))
    throw Error("the rows of sparse table '" + name +
                "' are not in GPU memory (no pass of the GPU pass cache "
                "holds them)");
  Table &entry = table(name);
  toKeys(entry, ids, count, keyScratch);
  beforePull();
  if (count != 0)
    cache->pullToDevice(entry.serverName, keyScratch.data(), count, deviceRows);
  countPull();
}

void TrainingServer::pullRowsInCache(const std::string &name,
                                     const int64_t *ids, size_t count,
                                     float *rows) {
  Table &entry = table(name);
  if (!inPass())
    throw Error("rows of sparse table '" + name +
                "' pulled in the pass cache's memory outside a pass");
  beforePull();
  if (count != 0)
    cache->pullIds(entry.serverName, ids, count, entry.spec->rows,
                   entry.spec->name, rows);
  countPull();
}

template <typename Entry>
TrainingServer::Contribution TrainingServer::takeContribution(Entry &entry) {
  MicroBatchContext context = currentMicroBatch();
  Contribution contribution{
      context.microBatch, context.stage, arrivals.fetch_add(1), {}, {}};
  std::lock_guard<std::mutex> lock(entry.mutex);
  if (!entry.spare.empty()) {
    // Filled with assign/resize: the old contents never show through.
    contribution.values = std::move(entry.spare.back().values);
    contribution.ids = std::move(entry.spare.back().ids);
    entry.spare.pop_back();
  }
  return contribution;
}

template <typename Entry> void TrainingServer::recycle(Entry &entry) {
  for (Contribution &contribution : entry.pending)
    entry.spare.push_back(std::move(contribution));
  entry.pending.clear();
}

void TrainingServer::pushRows(const std::string &name, const int64_t *ids,
                              size_t count, const float *gradients) {
  Table &entry = table(name);
  if (evalMode() || count == 0)
    return;
  Contribution contribution = takeContribution(entry);
  toKeys(entry, ids, count, contribution.ids);
  contribution.values.assign(gradients,
                             gradients + count * size_t(entry.spec->dim));
  std::lock_guard<std::mutex> lock(entry.mutex);
  entry.pending.push_back(std::move(contribution));
}

void TrainingServer::pushRowsInCache(const std::string &name,
                                     const int64_t *ids, size_t count,
                                     const float *gradients) {
  Table &entry = table(name);
  if (!inPass())
    throw Error("gradients of sparse table '" + name +
                "' pushed in the pass cache's memory outside a pass");
  if (sparseStaleness != 0)
    throw Error("gradients of sparse table '" + name +
                "' pushed in the pass cache's memory with sparse staleness, "
                "whose held-back update keeps them on the host");
  if (evalMode() || count == 0)
    return;
  Contribution contribution = takeContribution(entry);
  toKeys(entry, ids, count, contribution.ids);
  contribution.values.clear();
  contribution.staged = true;
  contribution.stagedOffset = cache->stageGradients(
      entry.serverName, gradients, count * size_t(entry.spec->dim));
  std::lock_guard<std::mutex> lock(entry.mutex);
  entry.pending.push_back(std::move(contribution));
}

TrainingServer::Dense &TrainingServer::denseForGradient(const std::string &name,
                                                        size_t count) const {
  Dense &entry = dense(name);
  if (count != entry.live.size())
    throw Error("dense parameter '" + name + "' has " +
                std::to_string(entry.live.size()) +
                " values but its gradient has " + std::to_string(count));
  return entry;
}

void TrainingServer::pushDense(const std::string &name, const float *gradient,
                               size_t count) {
  Dense &entry = denseForGradient(name, count);
  if (evalMode())
    return;
  Contribution contribution = takeContribution(entry);
  contribution.values.assign(gradient, gradient + count);
  std::lock_guard<std::mutex> lock(entry.mutex);
  entry.pending.push_back(std::move(contribution));
}

ps::DenseCache &TrainingServer::denseCache() {
  if (denseCacheKind == DenseCacheKind::None)
    throw Error("the training server has no dense cache");
  if (!denseCache_)
    denseCache_ = denseCacheKind == DenseCacheKind::Gpu
                      ? ps::makeCudaDenseCache(*server)
                      : std::make_unique<ps::HostDenseCache>(*server);
  return *denseCache_;
}

const float *TrainingServer::parameterInCache(const std::string &name) {
  if (trainingFlags.count(name) || name == HPS_TRAINING_MODE_PARAMETER)
    return nullptr;
  Dense &entry = dense(name);
  std::lock_guard<std::mutex> lock(denseCacheMutex);
  const float *values = denseCache().adopt(entry.serverName);
  entry.inCache = true;
  return values;
}

bool TrainingServer::denseInCache(const std::string &name) const {
  return dense(name).inCache;
}

void TrainingServer::pushDenseInCache(const std::string &name,
                                      const float *gradient, size_t count) {
  Dense &entry = denseForGradient(name, count);
  if (evalMode())
    return;
  parameterInCache(name);
  Contribution contribution = takeContribution(entry);
  contribution.values.clear();
  contribution.staged = true;
  contribution.stagedOffset =
      denseCache_->stageGradient(entry.serverName, gradient, count);
  std::lock_guard<std::mutex> lock(entry.mutex);
  entry.pending.push_back(std::move(contribution));
}

void TrainingServer::readDenseValues(const Dense &entry, float *out) {
  if (entry.inCache)
    denseCache_->readValues(entry.serverName, out);
  else
    std::copy(entry.live.begin(), entry.live.end(), out);
}

namespace {
/// Micro-batch, then stage, then arrival: arrival only orders the pushes of
/// one stage run, which come from one thread in program order.
template <typename C> void sortContributions(std::vector<C> &list) {
  std::sort(list.begin(), list.end(), [](const C &a, const C &b) {
    if (a.microBatch != b.microBatch)
      return a.microBatch < b.microBatch;
    if (a.stage != b.stage)
      return a.stage < b.stage;
    return a.arrival < b.arrival;
  });
}
} // namespace

void TrainingServer::finishStep(int64_t microBatches) {
  if (microBatches < 1)
    throw Error("finishStep needs at least one micro-batch, got " +
                std::to_string(microBatches));
  if (evalMode()) {
    discardStep();
    return;
  }
  if (sparseStaleness != 0) {
    // The last step's sparse update goes in before this step's: if the
    // step's pulls did not start it, now.
    applyDeferredUpdate();
    const int64_t pulls = pullsThisStep.exchange(0);
    const int64_t expected = expectedPulls.exchange(-1);
    if (expected >= 0 && pulls != expected)
      throw Error("sparse staleness needs the same pulls in every "
                  "micro-batch: this step made " +
                  std::to_string(pulls) + ", " + std::to_string(expected) +
                  " were expected");
    if (pullsPerMicroBatch < 0 && pulls % microBatches == 0)
      pullsPerMicroBatch = pulls / microBatches;
  }
  const float scale = static_cast<float>(microBatches);
  // Maps iterate by name: the order of pushes into the server is fixed too.
  // All dense gradients go in one call (one request per remote shard).
  std::vector<std::string> denseNames;
  std::vector<std::vector<float>> denseSums;
  for (auto &[name, entry] : denseByName) {
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (entry->pending.empty())
      continue; // no gradient this step: the optimizer leaves it alone
    sortContributions(entry->pending);
    if (entry->inCache) {
      // Updated in the cache, in the same order; a host push joins the
      // staged ones there.
      std::vector<size_t> offsets;
      for (const Contribution &contribution : entry->pending)
        offsets.push_back(
            contribution.staged
                ? contribution.stagedOffset
                : denseCache_->stageGradient(entry->serverName,
                                             contribution.values.data(),
                                             contribution.values.size()));
      recycle(*entry);
      denseCache_->update(entry->serverName, offsets, scale);
      continue;
    }
    // Summed in the first contribution's buffer, which then leaves it.
    std::vector<float> sum = std::move(entry->pending.front().values);
    for (size_t c = 1; c < entry->pending.size(); ++c) {
      const std::vector<float> &values = entry->pending[c].values;
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += values[i];
    }
    for (float &value : sum)
      value /= scale;
    recycle(*entry);
    denseNames.push_back(entry->serverName);
    denseSums.push_back(std::move(sum));
  }
  if (!denseNames.empty())
    store->pushDenseMany(denseNames, denseSums);
  for (auto &[name, entry] : tablesByName) {
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (entry->pending.empty())
      continue;
    sortContributions(entry->pending);
    const bool staged = entry->pending.front().staged;
    size_t keyCount = 0, valueCount = 0;
    for (const Contribution &contribution : entry->pending) {
      if (contribution.staged != staged)
        throw Error("a step pushed gradients of sparse table '" + name +
                    "' both through the host and in the pass cache's memory");
      keyCount += contribution.ids.size();
      valueCount += contribution.values.size();
    }
    // Reused buffers, sized once and filled in place; staged gradients are
    // concatenated and scaled in the cache instead, in this order.
    stepKeys.resize(keyCount);
    stepGradients.resize(valueCount);
    stagedSegments.clear();
    uint64_t *key = stepKeys.data();
    float *gradient = stepGradients.data();
    for (const Contribution &contribution : entry->pending) {
      key = std::copy(contribution.ids.begin(), contribution.ids.end(), key);
      if (staged)
        stagedSegments.push_back(
            {contribution.stagedOffset,
             contribution.ids.size() * size_t(entry->spec->dim)});
      for (float value : contribution.values)
        *gradient++ = value / scale;
    }
    recycle(*entry);
    if (staged) {
      cache->pushStaged(entry->serverName, stepKeys.data(), keyCount,
                        stagedSegments, scale);
      continue;
    }
    if (sparseStaleness != 0) {
      deferred.push_back(
          {entry->serverName,
           {stepKeys.begin(), stepKeys.begin() + keyCount},
           {stepGradients.begin(), stepGradients.begin() + valueCount}});
      continue;
    }
    pushSparse(entry->serverName, stepKeys.data(), keyCount,
               stepGradients.data());
  }
  if (!deferred.empty()) {
    deferredScale = server->learningRateScale();
    deferredPending = true;
  }
  // A remote store applies the step once every worker's pushes are in.
  store->endStep();
  refreshDense();
}

void TrainingServer::discardStep() {
  pullsThisStep = 0;
  expectedPulls = -1;
  if (cache)
    cache->discardStaged();
  if (denseCache_)
    denseCache_->discardStaged();
  for (auto &[name, entry] : denseByName) {
    std::lock_guard<std::mutex> lock(entry->mutex);
    recycle(*entry);
  }
  for (auto &[name, entry] : tablesByName) {
    std::lock_guard<std::mutex> lock(entry->mutex);
    recycle(*entry);
  }
}

namespace {
void checkNoPass(bool inPass, const char *what) {
  if (inPass)
    throw Error(std::string(what) +
                " during a pass: end the pass first (the server's rows of "
                "its ids are stale until then)");
}
} // namespace

void TrainingServer::setEvalMode(bool eval) {
  if (eval && !evalMode_.load()) {
    checkNoPass(inPass(), "evaluation");
    // The evaluation sees every finished step, the held-back update too,
    // and training goes on as without it.
    waitForDeferred();
    if (deferredPending && server)
      showHeldBackUpdate();
    else
      applyDeferredUpdate(); // a store of the options' own: applied for good
  }
  if (!eval && evalMode_.load())
    hideHeldBackUpdate();
  if (evalMode_.exchange(eval) != eval)
    ++parameterVersion_; // the training flags (and shown rows) read otherwise
}

void TrainingServer::showHeldBackUpdate() {
  std::map<std::string, std::vector<uint64_t>> keysOf;
  for (const DeferredPush &push : deferred)
    keysOf[push.table].insert(keysOf[push.table].end(), push.keys.begin(),
                              push.keys.end());
  std::vector<RowsBefore> before;
  for (auto &[table, keys] : keysOf) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    RowsBefore rows{table, std::move(keys), {}};
    rows.rows.resize(rows.keys.size() * server->rowFloats(table));
    // The rows exist: the step that pushed to them pulled them.
    server->pullRows(table, rows.keys.data(), rows.keys.size(),
                     rows.rows.data());
    before.push_back(std::move(rows));
  }
  heldDuringEvaluation = deferred;
  heldScaleDuringEvaluation = deferredScale;
  rowsBeforeEvaluation = std::move(before);
  try {
    pushDeferred();
  } catch (...) {
    hideHeldBackUpdate();
    throw;
  }
}

void TrainingServer::hideHeldBackUpdate() noexcept {
  if (rowsBeforeEvaluation.empty() && heldDuringEvaluation.empty())
    return;
  try {
    for (const RowsBefore &rows : rowsBeforeEvaluation)
      server->writeRows(rows.table, rows.keys.data(), rows.keys.size(),
                        rows.rows.data());
  } catch (const std::exception &error) {
    restoreFailure = std::make_exception_ptr(
        Error(std::string("the rows an evaluation saw with the held-back "
                          "sparse update could not be put back: ") +
              error.what()));
  } catch (...) {
    restoreFailure = std::current_exception();
  }
  rowsBeforeEvaluation.clear();
  deferred = std::move(heldDuringEvaluation);
  heldDuringEvaluation.clear();
  deferredScale = heldScaleDuringEvaluation;
  deferredPending = !deferred.empty();
}

ps::PassCache &TrainingServer::passCache() {
  if (!cache)
    throw Error("the training server has no pass cache");
  return *cache;
}

void TrainingServer::addPassKeys(const std::string &name, const int64_t *ids,
                                 size_t count) {
  ps::PassCache &passes = passCache();
  const Table &entry = table(name);
  toKeys(entry, ids, count, keyScratch);
  passes.addPassKeys(entry.serverName, keyScratch.data(), count);
}

void TrainingServer::passKeysOf(const std::string &name, const int64_t *ids,
                                size_t count,
                                ps::PassCache::StepKeys &keys) const {
  const Table &entry = table(name);
  toKeys(entry, ids, count, keys.ids);
  keys.table = entry.serverName;
}

bool TrainingServer::addStepPassKeys(
    const std::vector<ps::PassCache::StepKeys> &step) {
  return passCache().addStepKeys(step);
}

void TrainingServer::beginPass() {
  ps::PassCache &passes = passCache();
  if (evalMode())
    throw Error("a pass cannot begin in eval mode");
  waitForDeferred();
  if (deferredPending && !passes.nextPassPrepared())
    for (const DeferredPush &push : deferred)
      passes.addPassKeys(push.table, push.keys.data(), push.keys.size());
  passes.beginPass();
}

void TrainingServer::endPass() {
  ps::PassCache &passes = passCache();
  // A held-back update stays held: the rows go back without it, and the
  // next pass holds its rows (beginPass).
  waitForDeferred();
  passes.endPass();
}

void TrainingServer::prepareNextPass() { passCache().prepareNextPass(); }

void TrainingServer::discardPreparedPass() {
  if (cache)
    cache->discardPreparedPass();
}

void TrainingServer::refreshDense() {
  bool anyLookedUp = false;
  for (auto &[name, entry] : denseByName)
    anyLookedUp = anyLookedUp || entry->lookedUp;
  const bool onlyLookedUp = refreshOnlyLookedUp && anyLookedUp;
  std::vector<Dense *> refreshed;
  std::vector<std::string> names;
  for (auto &[name, entry] : denseByName) {
    if (entry->inCache) {
      // The server's copy is stale; a stage that holds `live` gets the
      // cache's.
      if (entry->lookedUp)
        denseCache_->readValues(entry->serverName, entry->live.data());
      continue;
    }
    if (!onlyLookedUp || entry->lookedUp) {
      refreshed.push_back(entry.get());
      names.push_back(entry->serverName);
    }
  }
  ++parameterVersion_;
  if (names.empty())
    return;
  std::vector<std::vector<float>> values = store->pullDenseMany(names);
  for (size_t i = 0; i < refreshed.size(); ++i)
    // In place: stages hold on to the pointer lookupParameter gave them.
    std::copy(values[i].begin(), values[i].end(), refreshed[i]->live.begin());
}

namespace {
/// The checkpoint file of a sparse update sparse staleness holds back.
constexpr const char *kHeldBackUpdateFile = "held-back-sparse-update";
constexpr uint64_t kHeldBackUpdateMagic = 0x3150555348535048; // "HPSHSUP1"
} // namespace

void TrainingServer::save(const std::string &directory) {
  checkNoPass(inPass(), "a checkpoint");
  // A held-back update is saved as it is, not applied: applying it would
  // make the checkpoint's step pull fresher rows than an uninterrupted run
  // does, so a run resumed from a checkpoint it did not plan (a stop, a
  // time-based one) would train differently.
  waitForDeferred();
  if (denseCache_) // its parameters' values are the checkpoint's
    denseCache_->writeBack();
  store->save(directory);
  if (sparseStaleness == 0)
    return;
  ps::ChecksummedWriter out(
      (fs::path(directory) / kHeldBackUpdateFile).string());
  out.writeValue(kHeldBackUpdateMagic);
  out.writeValue(deferredScale);
  out.writeValue(uint64_t(deferredPending ? deferred.size() : 0));
  if (deferredPending)
    for (const DeferredPush &push : deferred) {
      out.writeValue(uint64_t(push.table.size()));
      out.write(push.table.data(), push.table.size());
      out.writeValue(uint64_t(push.keys.size()));
      out.write(push.keys.data(), push.keys.size() * sizeof(uint64_t));
      out.writeValue(uint64_t(push.gradients.size()));
      out.write(push.gradients.data(), push.gradients.size() * sizeof(float));
    }
  out.finish();
}

void TrainingServer::loadHeldBackUpdate(const std::string &directory) {
  const fs::path path = fs::path(directory) / kHeldBackUpdateFile;
  if (!fs::exists(path))
    return;
  ps::CheckpointReader in(path.string());
  in.verifyChecksum();
  auto corrupt = [&](const std::string &what) {
    return Error("checkpoint: '" + path.string() + "' is corrupt: " + what);
  };
  if (in.readValue<uint64_t>() != kHeldBackUpdateMagic)
    throw corrupt("not a held-back sparse update");
  const float scale = in.readValue<float>();
  const uint64_t pushes = in.readValue<uint64_t>();
  std::vector<DeferredPush> loaded;
  for (uint64_t p = 0; p < pushes; ++p) {
    DeferredPush push;
    auto count = [&](uint64_t elementBytes) {
      const uint64_t n = in.readValue<uint64_t>();
      if (n > (in.payloadSize() - in.position()) / elementBytes)
        throw corrupt("a length runs past its end");
      return n;
    };
    push.table.resize(count(1));
    in.read(push.table.data(), push.table.size());
    bool known = false;
    for (const auto &[name, table] : tablesByName)
      known = known || table->serverName == push.table;
    if (!known)
      throw corrupt("it updates table '" + push.table +
                    "', which this bundle does not train");
    push.keys.resize(count(sizeof(uint64_t)));
    in.read(push.keys.data(), push.keys.size() * sizeof(uint64_t));
    push.gradients.resize(count(sizeof(float)));
    in.read(push.gradients.data(), push.gradients.size() * sizeof(float));
    loaded.push_back(std::move(push));
  }
  deferred = std::move(loaded);
  deferredScale = scale;
  deferredPending = !deferred.empty();
  // A run without sparse staleness takes it now.
  if (deferredPending && sparseStaleness == 0)
    pushDeferred();
}

void TrainingServer::load(const std::string &directory) {
  checkNoPass(inPass(), "loading a checkpoint");
  discardPreparedPass(); // its rows are the old ones
  discardStep();
  waitForDeferred(); // an update of the rows being replaced
  deferred.clear();
  deferredPending = false;
  store->load(directory);
  loadHeldBackUpdate(directory);
  if (denseCache_)
    denseCache_->reload();
  refreshDense();
}

void TrainingServer::dumpParameters(const std::string &directory) {
  checkNoPass(inPass(), "a parameter dump");
  applyDeferredUpdate();
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw Error("cannot create '" + directory + "': " + error.message());
  // Every file or, when one cannot be written, none: a failed dump leaves
  // an earlier one in DIR as it was.
  NpyFileSet files;
  // File names without ".npy": a table's two claimed together, so that no
  // parameter's name (a parameter 'emb.ids') takes one of them.
  std::set<std::string> taken;
  auto fileFor = [&](const std::string &name, size_t index,
                     std::initializer_list<const char *> suffixes) {
    return (fs::path(directory) / uniqueSafeName(name, index, taken, suffixes))
        .string();
  };
  for (size_t i = 0; i < spec_.parameters.size(); ++i) {
    const TrainableParameter &parameter = spec_.parameters[i];
    if (parameter.update == ParameterUpdate::TrainingFlag)
      continue; // not part of the model's state
    const Dense &entry = dense(parameter.name);
    HostTensor tensor(DType::F32, parameter.shape);
    if (tensor.bytes())
      readDenseValues(entry, reinterpret_cast<float *>(tensor.data.data()));
    files.write(fileFor(parameter.name, i, {""}) + ".npy", tensor);
  }
  for (size_t i = 0; i < spec_.tables.size(); ++i) {
    const TrainableTable &spec = spec_.tables[i];
    const Table &entry = table(spec.name);
    std::vector<int64_t> ids;
    std::vector<float> rows;
    // The server has no key listing; rows it never created read as absent.
    // Read in chunks: a remote store answers a chunk with one request per
    // shard instead of one per id.
    constexpr int64_t kChunk = 1 << 16;
    std::vector<uint64_t> keys;
    for (int64_t first = 0; first < spec.rows; first += kChunk) {
      keys.clear();
      for (int64_t id = first; id < std::min(spec.rows, first + kChunk); ++id)
        keys.push_back(uint64_t(id));
      auto found = store->readRows(entry.serverName, keys);
      for (size_t k = 0; k < keys.size(); ++k)
        if (found[k]) {
          ids.push_back(int64_t(keys[k]));
          rows.insert(rows.end(), found[k]->begin(),
                      found[k]->begin() + spec.dim);
        }
    }
    HostTensor idTensor(DType::I64, {int64_t(ids.size())});
    HostTensor rowTensor(DType::F32, {int64_t(ids.size()), spec.dim});
    if (!ids.empty()) {
      std::memcpy(idTensor.data.data(), ids.data(), idTensor.bytes());
      std::memcpy(rowTensor.data.data(), rows.data(), rowTensor.bytes());
    }
    // Both files from one safe name, so they pair up.
    std::string base =
        fileFor(spec.name, spec_.parameters.size() + i, {".ids", ".rows"});
    files.write(base + ".ids.npy", idTensor);
    files.write(base + ".rows.npy", rowTensor);
  }
  files.commit();
}

} // namespace heterps::rt::train
