//===- PassCache.cpp - Per-pass embedding cache in host memory ------------===//

#include "heterps/Runtime/PassCache.h"

#include "Optimizers.h"
#include "PassCacheKernels.h"
#include "PassKeyIndex.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace heterps::rt::ps {

struct PassCache::DistinctKeys {
  std::unordered_map<std::string, FlatKeyMap> tables;
};

PassCache::PassCache() = default;
PassCache::~PassCache() = default;

void PassCache::addPassKeys(const std::string &table, const uint64_t *ids,
                            size_t count) {
  if (prepared)
    throw Error("pass cache: keys of table '" + table +
                "' added after the next pass was prepared");
  std::vector<uint64_t> &keys = pendingKeys[table];
  keys.insert(keys.end(), ids, ids + count);
  if (!pendingDistinct)
    return;
  FlatKeyMap &seen = pendingDistinct->tables[table];
  const size_t rowBytes = bytesPerRow(table);
  for (size_t i = 0; i < count; ++i)
    if (seen.emplace(ids[i], 0).second)
      pendingBytes += rowBytes;
}

void PassCache::pullToDevice(const std::string &table, const uint64_t *, size_t,
                             float *) {
  throw Error("pass cache: the rows of table '" + table +
              "' are in host memory, not on a GPU");
}

void keysOfIds(const std::string &table, int64_t rows, const int64_t *ids,
               size_t count, uint64_t *keys) {
  for (size_t i = 0; i < count; ++i)
    if (!kernels::keyOfId(ids[i], rows, keys[i]))
      throw Error("sparse table '" + table + "' has " + std::to_string(rows) +
                  " rows; id " + std::to_string(ids[i]) + " is outside [" +
                  std::to_string(-rows) + ", " + std::to_string(rows) + ")");
}

void PassCache::pullIds(const std::string &table, const int64_t *ids,
                        size_t count, int64_t rows,
                        const std::string &displayName, float *out) {
  std::vector<uint64_t> keys(count);
  keysOfIds(displayName, rows, ids, count, keys.data());
  pull(table, keys.data(), count, out);
}

void PassCache::setMemoryLimit(size_t bytes) {
  if (passOpen || !pendingKeys.empty())
    throw Error("pass cache: the memory limit is set before any keys");
  limitBytes = bytes;
  if (bytes == 0)
    pendingDistinct.reset();
  else
    pendingDistinct = std::make_unique<DistinctKeys>();
}

namespace {
/// "812 bytes", "30.5 KiB", "1.2 GiB".
std::string describeBytes(size_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value,
                units[unit]);
  return text;
}
} // namespace

bool PassCache::addStepKeys(const std::vector<StepKeys> &step) {
  if (prepared)
    throw Error("pass cache: a step's keys added after the next pass was "
                "prepared");
  if (!pendingDistinct) {
    for (const StepKeys &keys : step)
      addPassKeys(keys.table, keys.ids.data(), keys.ids.size());
    return true;
  }
  // Count the step's new distinct rows, remembering them to undo.
  std::vector<std::pair<FlatKeyMap *, uint64_t>> added;
  size_t stepBytes = 0;
  for (const StepKeys &keys : step) {
    FlatKeyMap &seen = pendingDistinct->tables[keys.table];
    const size_t rowBytes = bytesPerRow(keys.table);
    for (uint64_t id : keys.ids)
      if (seen.emplace(id, 0).second) {
        added.emplace_back(&seen, id);
        stepBytes += rowBytes;
      }
  }
  const size_t passes = passesInMemory();
  const size_t passBytes = limitBytes / passes;
  if (pendingBytes + stepBytes > passBytes) {
    for (auto [seen, id] : added)
      seen->erase(id);
    if (pendingKeys.empty()) {
      const std::string share = passes == 1 ? "all of"
                                : passes == 2
                                    ? "half"
                                    : "1/" + std::to_string(passes) + " of";
      throw Error("pass cache: one step touches " +
                  std::to_string(added.size()) + " distinct rows (" +
                  describeBytes(stepBytes) + "), more than a pass may hold (" +
                  describeBytes(passBytes) + ", " + share +
                  " the memory limit of " + describeBytes(limitBytes) + ")");
    }
    return false;
  }
  pendingBytes += stepBytes;
  for (const StepKeys &keys : step) {
    std::vector<uint64_t> &pending = pendingKeys[keys.table];
    pending.insert(pending.end(), keys.ids.begin(), keys.ids.end());
  }
  return true;
}

void PassCache::clearPendingKeys() {
  pendingKeys.clear();
  pendingBytes = 0;
  if (pendingDistinct)
    for (auto &[name, seen] : pendingDistinct->tables)
      seen.clear();
}

void PassCache::beginPass() {
  if (passOpen)
    throw Error("pass cache: beginPass during a pass; call endPass first");
  if (prepared) {
    // A failed open (GPU memory) drops the prepared pass, half moved.
    prepared = false;
    try {
      openPrepared();
    } catch (...) {
      dropPrepared();
      throw;
    }
    passOpen = true;
    countOpenedPass(preparedKeys);
    return;
  }
  // A failed load drops the keys: they were for the pass that did not open.
  std::map<std::string, std::vector<uint64_t>> keys = std::move(pendingKeys);
  clearPendingKeys();
  const std::map<std::string, size_t> counts = countKeys(keys);
  loadPass(std::move(keys));
  passOpen = true;
  countOpenedPass(counts);
}

size_t
PassCache::checkStagedSegments(const std::string &table,
                               const std::vector<StagedSegment> &segments,
                               size_t stagedFloats, size_t expectedFloats) {
  size_t floats = 0;
  for (const StagedSegment &segment : segments) {
    if (segment.offset + segment.floats > stagedFloats)
      throw Error("pass cache: staged gradients of table '" + table +
                  "' end at " + std::to_string(stagedFloats) +
                  " floats, a segment at " +
                  std::to_string(segment.offset + segment.floats));
    floats += segment.floats;
  }
  if (floats != expectedFloats)
    throw Error("pass cache: " + std::to_string(floats) +
                " staged gradients of table '" + table + "' for " +
                std::to_string(expectedFloats) + " floats of rows");
  return floats;
}

std::map<std::string, size_t>
PassCache::countKeys(const std::map<std::string, std::vector<uint64_t>> &keys) {
  std::map<std::string, size_t> counts;
  for (const auto &[table, ids] : keys)
    counts[table] = ids.size();
  return counts;
}

void PassCache::countOpenedPass(const std::map<std::string, size_t> &keys) {
  for (const auto &[table, count] : keys) {
    opened.keys += count;
    opened.distinctRows += passKeyCount(table);
  }
}

void PassCache::endPass() {
  if (!passOpen)
    throw Error("pass cache: endPass without a pass");
  writeBackPass();
  passOpen = false;
}

void PassCache::prepareNextPass() {
  if (!passOpen)
    throw Error("pass cache: prepareNextPass outside a pass; call beginPass "
                "with the keys instead");
  if (prepared)
    throw Error("pass cache: the next pass is already prepared");
  std::map<std::string, std::vector<uint64_t>> keys = std::move(pendingKeys);
  clearPendingKeys();
  std::map<std::string, size_t> counts = countKeys(keys);
  prepareLoad(std::move(keys));
  preparedKeys = std::move(counts);
  prepared = true;
}

void PassCache::discardPreparedPass() {
  clearPendingKeys();
  if (prepared)
    dropPrepared();
  prepared = false;
}

namespace {

// Pulls and pushes run on the calling thread: a batch's copies and updates
// take about 0.1-0.3 ms, and an OpenMP team over them gained at most 20% on
// an idle machine but lost up to 50x while another process or RocksDB's
// background threads held a core (the team waits for its slowest thread).

/// Rows are prefetched this many ids ahead of their copy.
constexpr size_t kLookAhead = 8;

struct CachedTable {
  PassKeyIndex index;
  size_t dim = 0;
  size_t rowFloats = 0;
  OptimizerConfig optimizer;
  /// Row i (weights, then optimizer state) holds index.keys()[i]. Kept
  /// from pass to pass and not zeroed: every row is loaded before use.
  std::unique_ptr<float[]> rows;
  size_t rowsCapacity = 0;

  float *row(uint32_t slot) { return rows.get() + size_t(slot) * rowFloats; }
  void reserveRows(size_t floats) {
    if (floats > rowsCapacity) {
      rows.reset(new float[floats]);
      rowsCapacity = floats;
    }
  }
};

/// Per-thread scratch, so steady-state pulls and pushes do not allocate.
struct CallScratch {
  std::vector<uint32_t> slots;
  MergePlan plan;
  std::vector<float> merged;
};
thread_local CallScratch callScratch;

} // namespace

/// A prepared pass's table: rows of keys the running pass does not hold
/// are loaded; those it holds come from it at its end.
struct PreparedTable {
  CachedTable table;
  /// (slot here, slot in the running pass) of the shared keys.
  std::vector<std::pair<uint32_t, uint32_t>> shared;
};

struct HostPassCache::Impl {
  ParameterServer &server;
  /// The tables of the current pass.
  std::map<std::string, CachedTable> tables;
  /// The prepared next pass.
  std::map<std::string, PreparedTable> next;
  /// Tables of earlier passes, kept for their allocations.
  std::map<std::string, CachedTable> spare;
  /// The step's staged gradients per table (stageGradients).
  std::mutex stagedMutex;
  std::map<std::string, std::vector<float>> staged;
  std::vector<float> assembled;

  /// A table for a pass: a spare one's memory, `keys` indexed, rows
  /// reserved (not loaded).
  CachedTable takeTable(const std::string &name, std::vector<uint64_t> keys) {
    CachedTable table;
    if (auto kept = spare.find(name); kept != spare.end()) {
      table = std::move(kept->second);
      spare.erase(kept);
    }
    const SparseTableConfig &config = server.tableConfig(name);
    table.dim = config.dim;
    table.rowFloats = server.rowFloats(name);
    table.optimizer = config.optimizer;
    table.index.build(name, std::move(keys));
    table.reserveRows(table.index.size() * table.rowFloats);
    return table;
  }
  void retire(const std::string &name, CachedTable &table) {
    table.index.clear();
    spare[name] = std::move(table);
  }

  explicit Impl(ParameterServer &server) : server(server) {}
};

HostPassCache::HostPassCache(ParameterServer &server)
    : impl(std::make_unique<Impl>(server)) {}

HostPassCache::~HostPassCache() = default;

size_t HostPassCache::passKeyCount(const std::string &table) const {
  auto found = impl->tables.find(table);
  return found == impl->tables.end() ? 0 : found->second.index.size();
}

size_t HostPassCache::firstMissingId(const std::string &table,
                                     const uint64_t *ids, size_t count) const {
  auto found = impl->tables.find(table);
  return found == impl->tables.end()
             ? 0
             : found->second.index.firstMissing(ids, count);
}

size_t HostPassCache::bytesPerRow(const std::string &table) const {
  return impl->server.rowFloats(table) * sizeof(float) +
         PassKeyIndex::kBytesPerKey;
}

void HostPassCache::loadPass(
    std::map<std::string, std::vector<uint64_t>> keys) {
  try {
    for (auto &[name, ids] : keys) {
      CachedTable &table = impl->tables[name] =
          impl->takeTable(name, std::move(ids));
      impl->server.pullRows(name, table.index.keys().data(), table.index.size(),
                            table.rows.get());
    }
  } catch (...) {
    // No pass opens; nothing was changed but rows created on first touch.
    retireTables();
    throw;
  }
}

void HostPassCache::writeBackPass() {
  for (auto &[name, table] : impl->tables)
    impl->server.writeRows(name, table.index.keys().data(), table.index.size(),
                           table.rows.get());
  // The rows the prepared pass shares with this one, as they end it.
  for (auto &[name, prepared] : impl->next) {
    auto running = impl->tables.find(name);
    for (auto [slot, from] : prepared.shared)
      std::memcpy(prepared.table.row(slot), running->second.row(from),
                  prepared.table.rowFloats * sizeof(float));
    prepared.shared.clear();
  }
  retireTables();
}

void HostPassCache::prepareLoad(
    std::map<std::string, std::vector<uint64_t>> keys) {
  std::vector<uint64_t> missing;
  std::vector<uint32_t> missingSlots;
  std::vector<float> loaded;
  try {
    for (auto &[name, ids] : keys) {
      PreparedTable &prepared = impl->next[name];
      prepared.table = impl->takeTable(name, std::move(ids));
      CachedTable &table = prepared.table;
      auto running = impl->tables.find(name);
      table.index.splitByRunningPass(
          running == impl->tables.end() ? nullptr : &running->second.index,
          prepared.shared, missing, missingSlots);
      loaded.resize(missing.size() * table.rowFloats);
      impl->server.pullRows(name, missing.data(), missing.size(),
                            loaded.data());
      for (size_t i = 0; i < missing.size(); ++i)
        std::memcpy(table.row(missingSlots[i]),
                    loaded.data() + i * table.rowFloats,
                    table.rowFloats * sizeof(float));
    }
  } catch (...) {
    dropPrepared();
    throw;
  }
}

void HostPassCache::openPrepared() {
  for (auto &[name, prepared] : impl->next)
    impl->tables[name] = std::move(prepared.table);
  impl->next.clear();
}

void HostPassCache::dropPrepared() {
  for (auto &[name, prepared] : impl->next)
    impl->retire(name, prepared.table);
  impl->next.clear();
}

void HostPassCache::retireTables() {
  for (auto &[name, table] : impl->tables)
    impl->retire(name, table);
  impl->tables.clear();
}

void HostPassCache::pull(const std::string &tableName, const uint64_t *ids,
                         size_t count, float *out) {
  CachedTable &table = passTable(impl->tables, tableName);
  std::vector<uint32_t> &slots = callScratch.slots;
  slots.resize(count);
  table.index.slotsOf(ids, count, slots.data());
  const size_t dim = table.dim;
#pragma omp parallel for schedule(static) if (count >= kParallelPassIds)
  for (size_t i = 0; i < count; ++i) {
#if defined(__GNUC__)
    if (i + kLookAhead < count)
      __builtin_prefetch(table.row(slots[i + kLookAhead]));
#endif
    std::memcpy(out + i * dim, table.row(slots[i]), dim * sizeof(float));
  }
}

void HostPassCache::push(const std::string &tableName, const uint64_t *ids,
                         size_t count, const float *gradients) {
  CachedTable &table = passTable(impl->tables, tableName);
  std::vector<uint32_t> &slots = callScratch.slots;
  slots.resize(count);
  // Every id is checked before any row changes.
  table.index.slotsOf(ids, count, slots.data());
  MergePlan &plan = callScratch.plan;
  PassKeyIndex::planMerge(slots.data(), count, plan);
  const size_t dim = table.dim;
  const OptimizerConfig optimizer =
      scaledOptimizer(table.optimizer, impl->server.learningRateScale());
  // Runs update distinct rows: a large push updates them on OpenMP threads.
  const size_t runs = plan.runs();
#pragma omp parallel if (count >= kParallelPassIds)
  {
    std::vector<float> &merged = callScratch.merged;
    merged.resize(dim);
#pragma omp for schedule(static)
    for (size_t run = 0; run < runs; ++run) {
      const uint32_t *first = plan.positions.data() + plan.runStarts[run];
      const uint32_t *last = plan.positions.data() + plan.runStarts[run + 1];
      const float *gradient = gradients + size_t(*first) * dim;
      if (last - first > 1) {
        // In batch order, as the server sums a push's duplicates.
        std::memcpy(merged.data(), gradient, dim * sizeof(float));
        for (const uint32_t *position = first + 1; position != last;
             ++position) {
          const float *more = gradients + size_t(*position) * dim;
          for (size_t i = 0; i < dim; ++i)
            merged[i] += more[i];
        }
        gradient = merged.data();
      }
      float *row = table.row(plan.slots[run]);
      applyOptimizer(optimizer, dim, row, row + dim, gradient);
    }
  }
}

size_t HostPassCache::stageGradients(const std::string &table,
                                     const float *gradients, size_t floats) {
  std::lock_guard<std::mutex> lock(impl->stagedMutex);
  std::vector<float> &buffer = impl->staged[table];
  const size_t offset = buffer.size();
  buffer.insert(buffer.end(), gradients, gradients + floats);
  return offset;
}

void HostPassCache::pushStaged(const std::string &table, const uint64_t *ids,
                               size_t count,
                               const std::vector<StagedSegment> &segments,
                               float divisor) {
  const size_t dim = passTable(impl->tables, table).dim;
  std::vector<float> &assembled = impl->assembled;
  {
    std::lock_guard<std::mutex> lock(impl->stagedMutex);
    std::vector<float> &buffer = impl->staged[table];
    struct Forget {
      std::vector<float> &buffer;
      ~Forget() { buffer.clear(); }
    } forget{buffer};
    checkStagedSegments(table, segments, buffer.size(), count * dim);
    assembled.clear();
    for (const StagedSegment &segment : segments)
      for (size_t i = 0; i < segment.floats; ++i)
        assembled.push_back(buffer[segment.offset + i] / divisor);
  }
  push(table, ids, count, assembled.data());
}

void HostPassCache::discardStaged() {
  std::lock_guard<std::mutex> lock(impl->stagedMutex);
  for (auto &[table, buffer] : impl->staged)
    buffer.clear();
}

} // namespace heterps::rt::ps
