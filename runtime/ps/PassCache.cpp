//===- PassCache.cpp - Per-pass embedding cache in host memory ------------===//

#include "heterps/Runtime/PassCache.h"

#include "Optimizers.h"
#include "PassKeyIndex.h"

#include <cstring>

namespace heterps::rt::ps {

PassCache::~PassCache() = default;

void PassCache::addPassKeys(const std::string &table, const uint64_t *ids,
                            size_t count) {
  if (passOpen)
    throw Error("pass cache: keys of table '" + table +
                "' added during a pass; add the next pass's keys after "
                "endPass");
  std::vector<uint64_t> &keys = pendingKeys[table];
  keys.insert(keys.end(), ids, ids + count);
}

void PassCache::beginPass() {
  if (passOpen)
    throw Error("pass cache: beginPass during a pass; call endPass first");
  // A failed load drops the keys: they were for the pass that did not open.
  std::map<std::string, std::vector<uint64_t>> keys = std::move(pendingKeys);
  pendingKeys.clear();
  loadPass(std::move(keys));
  passOpen = true;
}

void PassCache::endPass() {
  if (!passOpen)
    throw Error("pass cache: endPass without a pass");
  writeBackPass();
  passOpen = false;
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

struct HostPassCache::Impl {
  ParameterServer &server;
  /// The tables of the current pass.
  std::map<std::string, CachedTable> tables;
  /// Tables of earlier passes, kept for their allocations.
  std::map<std::string, CachedTable> spare;

  explicit Impl(ParameterServer &server) : server(server) {}

  CachedTable &table(const std::string &name, bool passOpen) {
    if (!passOpen)
      throw Error("pass cache: table '" + name +
                  "' used outside a pass; call beginPass first");
    auto found = tables.find(name);
    if (found == tables.end())
      throw Error("pass cache: table '" + name +
                  "' is not in this pass (no keys were added for it)");
    return found->second;
  }
};

HostPassCache::HostPassCache(ParameterServer &server)
    : impl(std::make_unique<Impl>(server)) {}

HostPassCache::~HostPassCache() = default;

size_t HostPassCache::passKeyCount(const std::string &table) const {
  auto found = impl->tables.find(table);
  return found == impl->tables.end() ? 0 : found->second.index.size();
}

void HostPassCache::loadPass(
    std::map<std::string, std::vector<uint64_t>> keys) {
  try {
    for (auto &[name, ids] : keys) {
      CachedTable &table = impl->tables[name];
      if (auto kept = impl->spare.find(name); kept != impl->spare.end()) {
        table = std::move(kept->second);
        impl->spare.erase(kept);
      }
      const SparseTableConfig &config = impl->server.tableConfig(name);
      table.dim = config.dim;
      table.rowFloats = impl->server.rowFloats(name);
      table.optimizer = config.optimizer;
      table.index.build(name, std::move(ids));
      table.reserveRows(table.index.size() * table.rowFloats);
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
  retireTables();
}

void HostPassCache::retireTables() {
  for (auto &[name, table] : impl->tables) {
    table.index.clear();
    impl->spare[name] = std::move(table);
  }
  impl->tables.clear();
}

void HostPassCache::pull(const std::string &tableName, const uint64_t *ids,
                         size_t count, float *out) {
  CachedTable &table = impl->table(tableName, inPass());
  std::vector<uint32_t> &slots = callScratch.slots;
  slots.resize(count);
  table.index.slotsOf(ids, count, slots.data());
  const size_t dim = table.dim;
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
  CachedTable &table = impl->table(tableName, inPass());
  std::vector<uint32_t> &slots = callScratch.slots;
  slots.resize(count);
  // Every id is checked before any row changes.
  table.index.slotsOf(ids, count, slots.data());
  MergePlan &plan = callScratch.plan;
  PassKeyIndex::planMerge(slots.data(), count, plan);
  const size_t dim = table.dim;
  const OptimizerConfig optimizer =
      scaledOptimizer(table.optimizer, impl->server.learningRateScale());
  std::vector<float> &merged = callScratch.merged;
  merged.resize(dim);
  for (size_t run = 0; run < plan.runs(); ++run) {
    const uint32_t *first = plan.positions.data() + plan.runStarts[run];
    const uint32_t *last = plan.positions.data() + plan.runStarts[run + 1];
    const float *gradient = gradients + size_t(*first) * dim;
    if (last - first > 1) {
      // In batch order, as the server sums a push's duplicates.
      std::memcpy(merged.data(), gradient, dim * sizeof(float));
      for (const uint32_t *position = first + 1; position != last; ++position) {
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

} // namespace heterps::rt::ps
