//===- CudaPassCache.cu - The pass cache in GPU memory --------------------===//
//
// Built with --fmad=false (runtime/CMakeLists.txt): the optimizer arithmetic
// (OptimizerRules.h) must round as the host's does.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CudaPassCache.h"

#include "Optimizers.h"
#include "PassCacheKernels.h"
#include "PassKeyIndex.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace heterps::rt::ps {
namespace {

void check(cudaError_t status, const std::string &what) {
  if (status != cudaSuccess)
    throw Error("pass cache on the GPU: " + what + ": " +
                cudaGetErrorString(status));
}

/// Device memory for `count` T, grown on demand (contents not kept) and
/// kept from pass to pass.
template <typename T> class DeviceArray {
public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  DeviceArray(DeviceArray &&other) noexcept { swap(other); }
  DeviceArray &operator=(DeviceArray &&other) noexcept {
    swap(other);
    return *this;
  }
  ~DeviceArray() {
    if (pointer)
      cudaFree(pointer);
  }

  T *data() const { return pointer; }
  void reserve(size_t count) {
    if (count <= capacity)
      return;
    // Freed first: the contents go anyway, and a pass's rows never sit in
    // GPU memory beside the last pass's.
    if (pointer)
      cudaFree(pointer);
    pointer = nullptr;
    capacity = 0;
    check(cudaMalloc(reinterpret_cast<void **>(&pointer), count * sizeof(T)),
          "allocating " + std::to_string(count * sizeof(T)) +
              " bytes (--pass-memory bounds what a pass holds)");
    capacity = count;
  }
  void upload(const T *host, size_t count, cudaStream_t stream) {
    reserve(count);
    if (count)
      check(cudaMemcpyAsync(pointer, host, count * sizeof(T),
                            cudaMemcpyHostToDevice, stream),
            "copying to the GPU");
  }
  void download(T *host, size_t count, cudaStream_t stream) const {
    if (count)
      check(cudaMemcpyAsync(host, pointer, count * sizeof(T),
                            cudaMemcpyDeviceToHost, stream),
            "copying from the GPU");
  }

private:
  void swap(DeviceArray &other) {
    std::swap(pointer, other.pointer);
    std::swap(capacity, other.capacity);
  }
  T *pointer = nullptr;
  size_t capacity = 0;
};

/// Makes `device` current for a call and restores the caller's: stage
/// threads call in with their own device current.
class DeviceScope {
public:
  explicit DeviceScope(int device) {
    check(cudaGetDevice(&previous), "reading the current device");
    if (previous != device)
      check(cudaSetDevice(device), "selecting the device");
  }
  ~DeviceScope() { cudaSetDevice(previous); }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  int previous = 0;
};

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

unsigned blocksFor(size_t threads, unsigned blockSize) {
  const size_t blocks = (threads + blockSize - 1) / blockSize;
  return static_cast<unsigned>(std::min<size_t>(blocks, 65535));
}

/// A table of the open pass: the index on the host, the rows on the GPU.
struct DeviceTable {
  PassKeyIndex index;
  size_t dim = 0;
  size_t rowFloats = 0;
  OptimizerConfig optimizer;
  DeviceArray<float> rows;
};

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
    int devices = 0;
    cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess)
      throw Error(std::string("pass cache on the GPU: no usable CUDA device "
                              "(") +
                  cudaGetErrorString(status) + ")");
    if (device < 0 || device >= devices)
      throw Error("pass cache on the GPU: no CUDA device " +
                  std::to_string(device) + " (" + std::to_string(devices) +
                  " found)");
    check(cudaSetDevice(device), "selecting the device");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "creating a stream");
  }
  ~CudaPassCache() override {
    if (stream)
      cudaStreamDestroy(stream);
  }

  size_t passKeyCount(const std::string &table) const override {
    auto found = tables.find(table);
    return found == tables.end() ? 0 : found->second.index.size();
  }
  /// What a row takes in GPU memory (the key index stays on the host).
  size_t bytesPerRow(const std::string &table) const override {
    return server.rowFloats(table) * sizeof(float);
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

  void push(const std::string &tableName, const uint64_t *ids, size_t count,
            const float *gradients) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    // Every id is checked before any row changes.
    DeviceTable &table = tableWithSlots(tableName, ids, count);
    if (count == 0)
      return;
    PassKeyIndex::planMerge(slots.data(), count, plan);
    const OptimizerConfig optimizer =
        scaledOptimizer(table.optimizer, server.learningRateScale());
    const kernels::UpdateRule rule = kernels::updateRule(optimizer);
    deviceValues.upload(gradients, count * table.dim, stream);
    deviceSlots.upload(plan.slots.data(), plan.runs(), stream);
    deviceRunStarts.upload(plan.runStarts.data(), plan.runs() + 1, stream);
    devicePositions.upload(plan.positions.data(), count, stream);
    for (size_t first = 0; first < plan.runs(); first += 65535) {
      const size_t runs = std::min<size_t>(plan.runs() - first, 65535);
      const unsigned threads = static_cast<unsigned>(
          std::min<size_t>(256, (table.dim + 31) / 32 * 32));
      mergeAndUpdate<<<static_cast<unsigned>(runs), threads, 0, stream>>>(
          table.rows.data(), table.rowFloats, static_cast<unsigned>(table.dim),
          deviceSlots.data() + first, deviceRunStarts.data() + first,
          devicePositions.data(), deviceValues.data(), rule);
      check(cudaGetLastError(), "updating rows");
    }
    check(cudaStreamSynchronize(stream),
          "pushing to table '" + tableName + "'");
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
        check(cudaStreamSynchronize(stream), "loading table '" + name + "'");
      }
    } catch (...) {
      retireTables(); // no pass opens
      throw;
    }
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
    for (auto &[name, prepared] : next) {
      DeviceTable &table = takeTable(name);
      table.index = std::move(prepared.index);
      table.rows.upload(prepared.rows.data(), prepared.rows.size(), stream);
    }
    next.clear();
    check(cudaStreamSynchronize(stream), "opening the prepared pass");
  }

  void dropPrepared() override { next.clear(); }

private:
  /// Rows of the slots in `slots` (count of them) into `out`, on `stream`.
  void gather(const DeviceTable &table, size_t count, float *out) {
    deviceSlots.upload(slots.data(), count, stream);
    const size_t floats = count * table.dim;
    gatherRows<<<blocksFor(floats, 256), 256, 0, stream>>>(
        table.rows.data(), table.rowFloats, deviceSlots.data(), count,
        static_cast<unsigned>(table.dim), out);
    check(cudaGetLastError(), "gathering rows");
  }

  /// The open pass's table `name`, with the slots of `ids` in `slots`;
  /// throws Error naming the table or the first id the pass lacks.
  DeviceTable &tableWithSlots(const std::string &name, const uint64_t *ids,
                              size_t count) {
    DeviceTable &table = passTable(tables, name);
    slots.resize(count);
    table.index.slotsOf(ids, count, slots.data());
    return table;
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
  // Per call, under `mutex` (pulls may come from several stage threads).
  std::mutex mutex;
  std::vector<uint32_t> slots;
  MergePlan plan;
  std::vector<float> staging;
  DeviceArray<uint32_t> deviceSlots, deviceRunStarts, devicePositions;
  DeviceArray<float> deviceValues;
};

} // namespace

bool cudaPassCacheBuilt() { return true; }

std::unique_ptr<PassCache> makeCudaPassCache(ParameterServer &server,
                                             int device) {
  return std::make_unique<CudaPassCache>(server, device);
}

} // namespace heterps::rt::ps
