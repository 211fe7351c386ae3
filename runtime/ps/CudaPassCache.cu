//===- CudaPassCache.cu - The pass cache in GPU memory --------------------===//
//
// Built with --fmad=false (runtime/CMakeLists.txt): the optimizer arithmetic
// (OptimizerRules.h) must round as the host's does.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CudaPassCache.h"

#include "CudaMemory.cuh"
#include "Optimizers.h"
#include "PassCacheKernels.h"
#include "PassKeyIndex.h"
#include "ShardedPassCache.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace heterps::rt::ps {
namespace {

struct PassCacheErrors {
  static constexpr const char *name = "pass cache on the GPU";
  static constexpr const char *memoryHint =
      " (--pass-memory bounds what a pass holds)";
};
void check(cudaError_t status, const std::string &what) {
  cuda::check<PassCacheErrors>(status, what);
}
template <typename T> using DeviceArray = cuda::DeviceArray<T, PassCacheErrors>;
using DeviceScope = cuda::DeviceScope<PassCacheErrors>;
using cuda::blocksFor;

/// slots[i] = the slot of ids[i] among the pass's sorted keys; where the
/// pass lacks an id, its slot is keyCount and firstMissing falls to the
/// least such i.
__global__ void findSlots(const uint64_t *sortedKeys, uint32_t keyCount,
                          const uint64_t *ids, size_t count, uint32_t *slots,
                          unsigned long long *firstMissing) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t slot = kernels::findSlot(sortedKeys, keyCount, ids[i]);
    slots[i] = slot;
    if (slot == keyCount)
      atomicMin(firstMissing, static_cast<unsigned long long>(i));
  }
}

/// findSlots over a stage's ids (i64, the user's, in device memory) of a
/// table of `rows` rows: an id outside [-rows, rows) or whose key the pass
/// lacks gets slot keyCount, and firstBad falls to the least such i.
__global__ void findSlotsOfIds(const uint64_t *sortedKeys, uint32_t keyCount,
                               const int64_t *ids, size_t count, int64_t rows,
                               uint32_t *slots, unsigned long long *firstBad) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    uint64_t key = 0;
    const uint32_t slot = kernels::keyOfId(ids[i], rows, key)
                              ? kernels::findSlot(sortedKeys, keyCount, key)
                              : keyCount;
    slots[i] = slot;
    if (slot == keyCount)
      atomicMin(firstBad, static_cast<unsigned long long>(i));
  }
}

/// out[i] = in[i] / divisor: staged gradients as the training server
/// scales a step's pushes.
__global__ void divideInto(const float *in, size_t count, float divisor,
                           float *out) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] / divisor;
}

/// values[i] = i: a push's batch positions before the sort.
__global__ void batchPositions(uint32_t *values, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    values[i] = static_cast<uint32_t>(i);
}

/// out[i * dim + d] = row(slots[i])[d].
__global__ void gatherRows(const float *rows, size_t rowFloats,
                           const uint32_t *slots, size_t count, unsigned dim,
                           float *out) {
  const size_t total = count * dim;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x)
    kernels::gatherElement(rows, rowFloats, slots, dim, i, out);
}

/// One block per run of the merge plan (PassCacheKernels.h).
__global__ void mergeAndUpdate(float *rows, size_t rowFloats, unsigned dim,
                               const uint32_t *runSlots,
                               const uint32_t *runStarts,
                               const uint32_t *positions,
                               const float *gradients,
                               kernels::UpdateRule rule) {
  const uint32_t slot = runSlots[blockIdx.x];
  kernels::updateRowElements(rows, rowFloats, dim, slot, runStarts[blockIdx.x],
                             runStarts[blockIdx.x + 1], positions, gradients,
                             rule, threadIdx.x, blockDim.x);
  __syncthreads(); // every thread has read the row's old state
  if (threadIdx.x == 0)
    kernels::advanceRowState(rows, rowFloats, dim, slot, rule);
}

/// A table of the open pass: the index on the host, its sorted keys (for
/// the GPU's lookups) and the rows on the GPU.
struct DeviceTable {
  PassKeyIndex index;
  size_t dim = 0;
  size_t rowFloats = 0;
  OptimizerConfig optimizer;
  DeviceArray<uint64_t> keys;
  DeviceArray<float> rows;
};

/// A table's gradients staged during a step (stageGradients).
struct StagedGradients {
  DeviceArray<float> values;
  size_t floats = 0; ///< Staged so far.
};

/// Bits a radix sort of slots below `count` needs.
int slotBits(size_t count) {
  int bits = 1;
  while (bits < 32 && (size_t(1) << bits) < count)
    ++bits;
  return bits;
}

/// A table of the prepared next pass, in host memory until it opens.
struct PreparedTable {
  PassKeyIndex index;
  std::vector<float> rows;
  /// (slot here, slot in the running pass) of the shared keys.
  std::vector<std::pair<uint32_t, uint32_t>> shared;
};

class CudaPassCache : public PassCache {
public:
  CudaPassCache(ParameterServer &server, int device)
      : server(server), device(device) {
    stream = cuda::openStream<PassCacheErrors>(device);
  }
  ~CudaPassCache() override {
    if (stream)
      cudaStreamDestroy(stream);
  }

  size_t passKeyCount(const std::string &table) const override {
    auto found = tables.find(table);
    return found == tables.end() ? 0 : found->second.index.size();
  }
  size_t firstMissingId(const std::string &table, const uint64_t *ids,
                        size_t count) const override {
    auto found = tables.find(table);
    return found == tables.end() ? 0
                                 : found->second.index.firstMissing(ids, count);
  }
  /// What a row takes in GPU memory: its floats and its key (the pass's
  /// sorted keys, which findSlots searches there; the key index stays on
  /// the host).
  size_t bytesPerRow(const std::string &table) const override {
    return server.rowFloats(table) * sizeof(float) + sizeof(uint64_t);
  }
  /// The prepared next pass waits in host memory.
  size_t passesInMemory() const override { return 1; }

  void pull(const std::string &tableName, const uint64_t *ids, size_t count,
            float *out) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    DeviceTable &table = tableWithSlots(tableName, ids, count);
    if (count == 0)
      return;
    deviceValues.reserve(count * table.dim);
    gather(table, count, deviceValues.data());
    deviceValues.download(out, count * table.dim, stream);
    check(cudaStreamSynchronize(stream),
          "pulling from table '" + tableName + "'");
  }

  bool rowsOnDevice() const override { return true; }
  void pullToDevice(const std::string &tableName, const uint64_t *ids,
                    size_t count, float *deviceOut) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    DeviceTable &table = tableWithSlots(tableName, ids, count);
    if (count == 0)
      return;
    gather(table, count, deviceOut);
    check(cudaStreamSynchronize(stream),
          "pulling from table '" + tableName + "' into GPU memory");
  }

  void pullIds(const std::string &tableName, const int64_t *ids, size_t count,
               int64_t rows, const std::string &displayName,
               float *deviceOut) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    DeviceTable &table = passTable(tables, tableName);
    if (count == 0)
      return;
    const unsigned long long bad =
        lookUpSlots(tableName, count, [&](unsigned long long *firstBad) {
          findSlotsOfIds<<<blocksFor(count, 256), 256, 0, stream>>>(
              table.keys.data(), static_cast<uint32_t>(table.index.size()), ids,
              count, rows, deviceSlots.data(), firstBad);
        });
    if (bad != kNoneBad) {
      // The first bad id, for the error the host's lookup would give.
      int64_t id = 0;
      check(cudaMemcpy(&id, ids + bad, sizeof id, cudaMemcpyDeviceToHost),
            "reading a pulled id");
      uint64_t key = 0;
      keysOfIds(displayName, rows, &id, 1, &key); // throws if outside
      throw table.index.missingKeyError(key);
    }
    gather(table, count, deviceOut);
    check(cudaStreamSynchronize(stream),
          "pulling from table '" + tableName + "' into GPU memory");
  }

  void push(const std::string &tableName, const uint64_t *ids, size_t count,
            const float *gradients) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    // Every id is checked before any row changes.
    DeviceTable &table = tableWithSlots(tableName, ids, count);
    if (count == 0)
      return;
    deviceValues.upload(gradients, count * table.dim, stream);
    update(table, count);
    check(cudaStreamSynchronize(stream),
          "pushing to table '" + tableName + "'");
  }

  size_t stageGradients(const std::string &tableName, const float *gradients,
                        size_t floats) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    StagedGradients &buffer = staged[tableName];
    const size_t offset = buffer.floats;
    buffer.values.grow(offset + floats, stream);
    if (floats)
      check(cudaMemcpyAsync(buffer.values.data() + offset, gradients,
                            floats * sizeof(float), cudaMemcpyDefault, stream),
            "staging gradients of table '" + tableName + "'");
    // The stage may reuse its buffer once this returns.
    check(cudaStreamSynchronize(stream),
          "staging gradients of table '" + tableName + "'");
    buffer.floats = offset + floats;
    return offset;
  }

  void pushStaged(const std::string &tableName, const uint64_t *ids,
                  size_t count, const std::vector<StagedSegment> &segments,
                  float divisor) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    StagedGradients &buffer = staged[tableName];
    struct Forget {
      StagedGradients &buffer;
      ~Forget() { buffer.floats = 0; }
    } forget{buffer};
    DeviceTable &table = tableWithSlots(tableName, ids, count);
    const size_t floats = checkStagedSegments(tableName, segments,
                                              buffer.floats, count * table.dim);
    if (count == 0)
      return;
    // In segment order, divided as the training server divides: the
    // floats the host path would push.
    deviceValues.reserve(floats);
    size_t at = 0;
    for (const StagedSegment &segment : segments) {
      divideInto<<<blocksFor(segment.floats, 256), 256, 0, stream>>>(
          buffer.values.data() + segment.offset, segment.floats, divisor,
          deviceValues.data() + at);
      check(cudaGetLastError(), "gathering staged gradients");
      at += segment.floats;
    }
    update(table, count);
    check(cudaStreamSynchronize(stream),
          "pushing staged gradients to table '" + tableName + "'");
  }

  void discardStaged() override {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[name, buffer] : staged)
      buffer.floats = 0;
  }

protected:
  void loadPass(std::map<std::string, std::vector<uint64_t>> keys) override {
    DeviceScope scope(device);
    try {
      for (auto &[name, ids] : keys) {
        DeviceTable &table = takeTable(name);
        table.index.build(name, std::move(ids));
        staging.resize(table.index.size() * table.rowFloats);
        server.pullRows(name, table.index.keys().data(), table.index.size(),
                        staging.data());
        table.rows.upload(staging.data(), staging.size(), stream);
        table.keys.upload(table.index.keys().data(), table.index.size(),
                          stream);
        check(cudaStreamSynchronize(stream), "loading table '" + name + "'");
      }
    } catch (...) {
      retireTables(); // no pass opens
      throw;
    }
    spare.clear(); // tables this pass lacks give their memory back
  }

  void writeBackPass() override {
    DeviceScope scope(device);
    // Everything is read back before anything is written: a failed copy
    // leaves the pass open and the server unchanged.
    std::map<std::string, std::vector<float>> rows;
    for (auto &[name, table] : tables) {
      std::vector<float> &host = rows[name];
      host.resize(table.index.size() * table.rowFloats);
      table.rows.download(host.data(), host.size(), stream);
    }
    check(cudaStreamSynchronize(stream), "reading the pass's rows back");
    for (auto &[name, table] : tables)
      server.writeRows(name, table.index.keys().data(), table.index.size(),
                       rows[name].data());
    // The rows the prepared pass shares with this one, as they end it.
    for (auto &[name, prepared] : next) {
      auto running = tables.find(name);
      if (running == tables.end())
        continue; // nothing shared
      const std::vector<float> &from = rows[name];
      const size_t rowFloats = running->second.rowFloats;
      for (auto [slot, source] : prepared.shared)
        std::memcpy(prepared.rows.data() + size_t(slot) * rowFloats,
                    from.data() + size_t(source) * rowFloats,
                    rowFloats * sizeof(float));
      prepared.shared.clear();
    }
    retireTables();
  }

  void prepareLoad(std::map<std::string, std::vector<uint64_t>> keys) override {
    std::vector<uint64_t> missing;
    std::vector<uint32_t> missingSlots;
    std::vector<float> loaded;
    try {
      for (auto &[name, ids] : keys) {
        PreparedTable &prepared = next[name];
        const size_t rowFloats = server.rowFloats(name);
        prepared.index.build(name, std::move(ids));
        prepared.rows.resize(prepared.index.size() * rowFloats);
        auto running = tables.find(name);
        prepared.index.splitByRunningPass(
            running == tables.end() ? nullptr : &running->second.index,
            prepared.shared, missing, missingSlots);
        loaded.resize(missing.size() * rowFloats);
        server.pullRows(name, missing.data(), missing.size(), loaded.data());
        for (size_t i = 0; i < missing.size(); ++i)
          std::memcpy(prepared.rows.data() +
                          size_t(missingSlots[i]) * rowFloats,
                      loaded.data() + i * rowFloats, rowFloats * sizeof(float));
      }
    } catch (...) {
      dropPrepared();
      throw;
    }
  }

  void openPrepared() override {
    DeviceScope scope(device);
    try {
      for (auto &[name, prepared] : next) {
        DeviceTable &table = takeTable(name);
        table.index = std::move(prepared.index);
        table.rows.upload(prepared.rows.data(), prepared.rows.size(), stream);
        table.keys.upload(table.index.keys().data(), table.index.size(),
                          stream);
      }
      // The host copies are read until the stream is done with them.
      check(cudaStreamSynchronize(stream), "opening the prepared pass");
    } catch (...) {
      retireTables(); // no pass opens
      throw;
    }
    next.clear();
    spare.clear(); // tables this pass lacks give their memory back
  }

  void dropPrepared() override { next.clear(); }

private:
  /// Rows of the slots in `deviceSlots` (count of them) into `out`, on
  /// `stream`.
  void gather(const DeviceTable &table, size_t count, float *out) {
    const size_t floats = count * table.dim;
    gatherRows<<<blocksFor(floats, 256), 256, 0, stream>>>(
        table.rows.data(), table.rowFloats, deviceSlots.data(), count,
        static_cast<unsigned>(table.dim), out);
    check(cudaGetLastError(), "gathering rows");
  }

  /// The open pass's table `name`, with the slots of `ids` (host memory)
  /// in `deviceSlots`, looked up on the GPU; throws Error naming the table
  /// or the first id the pass lacks.
  DeviceTable &tableWithSlots(const std::string &name, const uint64_t *ids,
                              size_t count) {
    DeviceTable &table = passTable(tables, name);
    if (count == 0)
      return table;
    deviceIds.upload(ids, count, stream);
    const unsigned long long missing =
        lookUpSlots(name, count, [&](unsigned long long *firstBad) {
          findSlots<<<blocksFor(count, 256), 256, 0, stream>>>(
              table.keys.data(), static_cast<uint32_t>(table.index.size()),
              deviceIds.data(), count, deviceSlots.data(), firstBad);
        });
    if (missing != kNoneBad)
      throw table.index.missingKeyError(ids[missing]);
    return table;
  }

  /// No bad id (lookUpSlots).
  static constexpr unsigned long long kNoneBad = ~0ull;
  /// Runs `launch(firstBad)`, a kernel that fills `deviceSlots` with the
  /// slots of `count` ids and lowers *firstBad to the least index whose id
  /// it cannot place; returns that index, or kNoneBad.
  template <typename Launch>
  unsigned long long lookUpSlots(const std::string &table, size_t count,
                                 Launch &&launch) {
    deviceSlots.reserve(count);
    firstMissing.upload(&kNoneBad, 1, stream);
    launch(firstMissing.data());
    check(cudaGetLastError(), "looking up ids");
    unsigned long long bad = kNoneBad;
    firstMissing.download(&bad, 1, stream);
    check(cudaStreamSynchronize(stream),
          "looking up ids of table '" + table + "'");
    return bad;
  }

  /// Updates the rows of the `count` slots in `deviceSlots` with the
  /// gradients in `deviceValues` (count x dim floats), merged by slot in
  /// batch order, on `stream`.
  void update(const DeviceTable &table, size_t count) {
    // CUB takes int item counts, planMerge count + 1 of them.
    if (count > size_t(std::numeric_limits<int>::max() - 1))
      throw Error("pass cache: a push of " + std::to_string(count) +
                  " ids is too large (at most 2^31 - 2 on the GPU)");
    const OptimizerConfig optimizer =
        scaledOptimizer(table.optimizer, server.learningRateScale());
    const kernels::UpdateRule rule = kernels::updateRule(optimizer);
    const size_t runs = planMerge(table, count);
    for (size_t first = 0; first < runs; first += 65535) {
      const size_t blocks = std::min<size_t>(runs - first, 65535);
      const unsigned threads = static_cast<unsigned>(
          std::min<size_t>(256, (table.dim + 31) / 32 * 32));
      mergeAndUpdate<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
          table.rows.data(), table.rowFloats, static_cast<unsigned>(table.dim),
          runSlots.data() + first, runStarts.data() + first,
          sortedPositions.data(), deviceValues.data(), rule);
      check(cudaGetLastError(), "updating rows");
    }
  }

  /// Groups the push's `count` slots in `deviceSlots` by slot, as
  /// PassKeyIndex::planMerge does on the host: a stable radix sort of
  /// (slot, batch position), then runs of equal slots (runSlots, runStarts
  /// with runStarts[runs] = count, sortedPositions). Returns the runs.
  size_t planMerge(const DeviceTable &table, size_t count) {
    const int endBit = slotBits(table.index.size());
    positions.reserve(count);
    sortedSlots.reserve(count);
    sortedPositions.reserve(count);
    runSlots.reserve(count);
    runLengths.reserve(count + 1);
    runStarts.reserve(count + 1);
    runCount.reserve(1);
    batchPositions<<<blocksFor(count, 256), 256, 0, stream>>>(positions.data(),
                                                              count);
    check(cudaGetLastError(), "numbering a push");
    // Lengths past the last run stay 0, so that the scan's entry `runs`
    // is `count`.
    check(cudaMemsetAsync(runLengths.data(), 0, (count + 1) * sizeof(uint32_t),
                          stream),
          "clearing run lengths");
    const int items = static_cast<int>(count);
    size_t sortBytes = 0, encodeBytes = 0, scanBytes = 0;
    check(cub::DeviceRadixSort::SortPairs(
              nullptr, sortBytes, deviceSlots.data(), sortedSlots.data(),
              positions.data(), sortedPositions.data(), items, 0, endBit,
              stream),
          "sizing the push's sort");
    check(cub::DeviceRunLengthEncode::Encode(
              nullptr, encodeBytes, sortedSlots.data(), runSlots.data(),
              runLengths.data(), runCount.data(), items, stream),
          "sizing the push's runs");
    check(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, runLengths.data(),
                                        runStarts.data(), items + 1, stream),
          "sizing the push's run starts");
    cubScratch.reserve(std::max({sortBytes, encodeBytes, scanBytes}));
    check(cub::DeviceRadixSort::SortPairs(
              cubScratch.data(), sortBytes, deviceSlots.data(),
              sortedSlots.data(), positions.data(), sortedPositions.data(),
              items, 0, endBit, stream),
          "sorting a push by slot");
    check(cub::DeviceRunLengthEncode::Encode(cubScratch.data(), encodeBytes,
                                             sortedSlots.data(),
                                             runSlots.data(), runLengths.data(),
                                             runCount.data(), items, stream),
          "grouping a push by slot");
    check(cub::DeviceScan::ExclusiveSum(cubScratch.data(), scanBytes,
                                        runLengths.data(), runStarts.data(),
                                        items + 1, stream),
          "starting a push's runs");
    int runs = 0;
    runCount.download(&runs, 1, stream);
    check(cudaStreamSynchronize(stream), "planning a push");
    return static_cast<size_t>(runs);
  }
  /// A table for the pass being opened, with the device memory an earlier
  /// pass's table of that name had.
  DeviceTable &takeTable(const std::string &name) {
    DeviceTable &table = tables[name];
    if (auto kept = spare.find(name); kept != spare.end()) {
      table.rows = std::move(kept->second);
      spare.erase(kept);
    }
    const SparseTableConfig &config = server.tableConfig(name);
    table.dim = config.dim;
    table.rowFloats = server.rowFloats(name);
    table.optimizer = config.optimizer;
    return table;
  }
  /// Ends the pass's tables, keeping their device memory for the next pass.
  void retireTables() {
    for (auto &[name, table] : tables)
      spare[name] = std::move(table.rows);
    tables.clear();
  }

  ParameterServer &server;
  const int device;
  cudaStream_t stream = nullptr;
  std::map<std::string, DeviceTable> tables;
  std::map<std::string, PreparedTable> next;
  /// Device memory of tables of earlier passes.
  std::map<std::string, DeviceArray<float>> spare;
  /// Per table, under `mutex`.
  std::map<std::string, StagedGradients> staged;
  // Per call, under `mutex` (pulls may come from several stage threads).
  std::mutex mutex;
  std::vector<float> staging;
  DeviceArray<uint64_t> deviceIds;
  DeviceArray<unsigned long long> firstMissing;
  DeviceArray<uint32_t> deviceSlots;
  // A push's merge plan (planMerge).
  DeviceArray<uint32_t> positions, sortedSlots, sortedPositions, runSlots,
      runLengths, runStarts;
  DeviceArray<int> runCount;
  DeviceArray<char> cubScratch;
  DeviceArray<float> deviceValues;
};

} // namespace

bool cudaPassCacheBuilt() { return true; }

std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &server,
                                             int device) {
  return std::make_unique<CudaPassCache>(server, device);
}

std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &server,
                                             const std::vector<int> &devices) {
  if (devices.empty())
    throw Error("pass cache on the GPU: no devices given");
  if (devices.size() == 1)
    return makeCudaPassCache(server, devices.front());
  std::vector<std::unique_ptr<PassCache>> shards;
  for (int device : devices)
    shards.push_back(std::make_unique<CudaPassCache>(server, device));
  return makeShardedPassCache(server, std::move(shards), devices,
                              makeCudaShardMemory(devices));
}

} // namespace heterps::rt::ps
