//===- PassCache.h - Per-pass embedding cache over the server --*- C++ -*-===//
//
// A pass cache holds, for a pass (a number of batches chosen by the user),
// the rows of every sparse id those batches touch, with their optimizer
// state, in one compact table per sparse table: the HBM tier of Paddle's
// PSGPUWrapper (BeginPass / EndPass), here as an interface with a host-memory
// implementation (HostPassCache) so that its semantics are tested without
// a GPU, and a CUDA one (CudaPassCache.h) that keeps the rows in device
// memory and reuses the key index and merge plan (ps/PassKeyIndex.h).
//
//   addPassKeys(table, ids)  the ids the pass's batches will touch (any
//                            order, duplicates allowed), batch by batch
//   beginPass()              deduplicates them (sort + unique) and loads
//                            their rows once from the host server (memory
//                            and SSD tiers), creating rows on first touch
//   pull / push              served by the cache; a push sums each id's
//                            gradients in batch order (a sort by key, then a
//                            reduce per key) and applies the table's
//                            optimizer (the server's code) to the cached row
//   endPass()                writes every cached row and its state back
//
// The next pass can be prepared while one runs, as Paddle's pass pipeline
// does: addPassKeys during a pass records keys for the next one, and
// prepareNextPass() (on another thread than the pass's pulls and pushes)
// loads the rows of those the running pass does not hold; endPass() then
// copies the rows both passes hold into it, and beginPass() opens it
// without reading the server. The server's rows of keys outside the
// running pass do not change during it, so a prepared pass starts from the
// rows beginPass would have loaded.
//
// Memory: setMemoryLimit bounds what the cache holds, the running pass and
// (host cache) the one prepared beside it together; addStepKeys then admits
// a step's keys to the next pass only while that pass's distinct rows
// (bytesPerRow each: the row, its optimizer state and, on the host, its
// share of the key index) fit in its share of the limit, so the caller ends
// a pass where the next step would not fit (the HBM tier's capacity in GPU
// memory).
//
// Semantics: the same pulls and pushes give bit for bit the rows and
// optimizer state of the synchronous host server (ParameterServer::push sums
// duplicates in the same order and runs the same optimizer code), including
// rows created on first touch and the learning-rate scale at push time. The
// cache holds only the pass's keys, so tables larger than memory (the
// RocksDB tier) train through passes. During a pass the host rows of the
// pass's keys are stale: checkpoint and evaluate between passes.
//
// Threads: pulls may run concurrently with each other; push, beginPass and
// endPass need the cache to themselves.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PASSCACHE_H
#define HETERPS_RUNTIME_PASSCACHE_H

#include "heterps/Runtime/ParameterServer.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace heterps::rt::ps {

/// The server keys of `count` ids of a sparse table of `rows` rows, which
/// the user calls `table` (negative ids count from the end, as in ONNX
/// Gather): keys[i] for ids[i]. Throws Error naming the table and the first
/// id outside [-rows, rows). The training server's rule, which the pass
/// caches apply to ids in their own memory too.
void keysOfIds(const std::string &table, int64_t rows, const int64_t *ids,
               size_t count, uint64_t *keys);

class PassCache {
public:
  // Out of line: DistinctKeys is complete only in PassCache.cpp.
  PassCache();
  virtual ~PassCache();

  /// Records ids the next pass will touch in `table` (during a pass: the
  /// pass after it).
  void addPassKeys(const std::string &table, const uint64_t *ids, size_t count);

  /// One table's ids in one step.
  struct StepKeys {
    std::string table;
    std::vector<uint64_t> ids;
  };
  /// Bounds the cache's memory (0: no bound): a pass holds at most the
  /// limit over passesInMemory() (half, where the next pass is prepared
  /// beside the running one).
  void setMemoryLimit(size_t bytes);
  size_t memoryLimit() const { return limitBytes; }
  /// Adds one step's ids, every table's, to the next pass if its distinct
  /// rows still fit its share of the memory limit (always, without one);
  /// returns false and adds nothing when they do not: the pass is full.
  /// Throws Error, adding nothing, when the step alone does not fit.
  bool addStepKeys(const std::vector<StepKeys> &step);
  /// Memory of the next pass's distinct rows recorded so far (0 without a
  /// memory limit, which leaves them uncounted).
  size_t pendingPassBytes() const { return pendingBytes; }
  /// Memory one cached row of `table` takes: its floats (weights and
  /// optimizer state) and its share of the key index.
  virtual size_t bytesPerRow(const std::string &table) const = 0;
  /// How many passes share the bounded memory: 2 where the prepared next
  /// pass sits beside the running one (a pass then gets half the limit).
  virtual size_t passesInMemory() const { return 2; }
  /// Starts the pass over the recorded ids (and forgets them), or opens the
  /// prepared pass. Ids of a table that was given none, and tables not
  /// given at all, are not in the pass: pulling or pushing them throws
  /// Error. If loading fails (Error, e.g. a table the server does not
  /// have), no pass opens.
  void beginPass();
  /// Writes the pass's rows back and empties the cache (a prepared next
  /// pass gets the rows it shares with this one). If the write-back fails
  /// (Error), the pass stays open and nothing is lost.
  void endPass();
  bool inPass() const { return passOpen; }

  /// During a pass: loads, for the keys recorded since it began, the rows
  /// this pass does not hold. May run on its own thread while the pass's
  /// pulls and pushes go on; nothing else may use the server's sparse
  /// tables meanwhile, and endPass must wait for it. If it fails (Error),
  /// nothing is prepared.
  void prepareNextPass();
  bool nextPassPrepared() const { return prepared; }
  /// Forgets the prepared pass (its rows were read before the server
  /// changed, or its keys are no longer wanted).
  void discardPreparedPass();

  /// Distinct ids of `table` the current pass holds (0: not in the pass).
  virtual size_t passKeyCount(const std::string &table) const = 0;
  /// The least i whose ids[i] the current pass does not hold in `table`
  /// (0 where the pass lacks the table); count where it holds them all.
  virtual size_t firstMissingId(const std::string &table, const uint64_t *ids,
                                size_t count) const = 0;

  /// Over every pass opened so far: the ids recorded for them, and the
  /// distinct rows they loaded. Their ratio is what the planner calls the
  /// distinct share of a pass's keys (heterps compile
  /// --pass-distinct-fraction).
  struct KeyCounts {
    size_t keys = 0;
    size_t distinctRows = 0;
  };
  KeyCounts keyCounts() const { return opened; }

  /// `count * dim` floats into `out`, row i for ids[i]. Throws Error naming
  /// the first id the pass does not hold, or if no pass is open.
  virtual void pull(const std::string &table, const uint64_t *ids, size_t count,
                    float *out) = 0;
  /// Whether the rows live in GPU memory (pullToDevice serves them there).
  virtual bool rowsOnDevice() const { return false; }
  /// pull into the memory of the current CUDA device; the rows are written
  /// when it returns. Throws Error where rows are not on a GPU.
  virtual void pullToDevice(const std::string &table, const uint64_t *ids,
                            size_t count, float *deviceOut);
  /// pull with the ids and the rows in the cache's memory (a GPU stage's
  /// own buffers, for the GPU cache): ids of a table of `rows` rows, the
  /// user's (negative ones count from the end), turned into keys where they
  /// are. Throws Error naming `displayName` and the first id outside
  /// [-rows, rows), or the first the pass does not hold. The host cache's
  /// way copies the ids into keys and pulls.
  virtual void pullIds(const std::string &table, const int64_t *ids,
                       size_t count, int64_t rows,
                       const std::string &displayName, float *out);

  /// `gradients` holds count * dim floats, row i for ids[i]; duplicate ids
  /// are summed in batch order, then the optimizer runs once per distinct
  /// id. An id not in the pass throws Error before any row changes.
  virtual void push(const std::string &table, const uint64_t *ids, size_t count,
                    const float *gradients) = 0;

  // A step's pushes whose gradients are in the memory the cache keeps its
  // rows in (GPU memory for the GPU cache), gathered there for the step's
  // merged push instead of going through the host. Any thread.

  /// Copies `floats` gradients of `table` (in the cache's memory) into the
  /// cache's step buffer; returns where they start there.
  virtual size_t stageGradients(const std::string &table,
                                const float *gradients, size_t floats) = 0;
  /// Staged gradients [offset, offset + floats) of one contribution.
  struct StagedSegment {
    size_t offset = 0;
    size_t floats = 0;
  };
  /// push(table, ids, count, g) where g is the segments concatenated in
  /// order, each value divided by `divisor` (the step's micro-batches, as
  /// the training server scales the gradients it pushes); then forgets
  /// what `table` had staged.
  virtual void pushStaged(const std::string &table, const uint64_t *ids,
                          size_t count,
                          const std::vector<StagedSegment> &segments,
                          float divisor) = 0;
  /// Forgets every staged gradient (a discarded step).
  virtual void discardStaged() = 0;

protected:
  /// For pushStaged: throws Error unless every segment lies within the
  /// `stagedFloats` `table` holds and they add up to `expectedFloats`;
  /// returns their sum.
  static size_t checkStagedSegments(const std::string &table,
                                    const std::vector<StagedSegment> &segments,
                                    size_t stagedFloats, size_t expectedFloats);
  /// Table `name` of the open pass among an implementation's `tables`;
  /// throws Error when no pass is open or the pass lacks the table.
  template <typename Table>
  Table &passTable(std::map<std::string, Table> &tables,
                   const std::string &name) const {
    if (!passOpen)
      throw Error("pass cache: table '" + name +
                  "' used outside a pass; call beginPass first");
    auto found = tables.find(name);
    if (found == tables.end())
      throw Error("pass cache: table '" + name +
                  "' is not in this pass (no keys were added for it)");
    return found->second;
  }

  /// Loads the rows of `keys` (per table; unsorted, with duplicates).
  virtual void loadPass(std::map<std::string, std::vector<uint64_t>> keys) = 0;
  /// Writes every row of the pass back to the host server, then drops them;
  /// first gives a prepared pass the rows it shares with this one.
  virtual void writeBackPass() = 0;
  /// Loads the rows of `keys` the open pass does not hold into a pass of
  /// its own, not yet open.
  virtual void
  prepareLoad(std::map<std::string, std::vector<uint64_t>> keys) = 0;
  /// Makes the prepared pass the current one (after writeBackPass).
  virtual void openPrepared() = 0;
  virtual void dropPrepared() = 0;

private:
  /// Forgets the recorded keys (and their count).
  void clearPendingKeys();
  /// Ids per table of `keys`, for keyCounts once their pass opens.
  static std::map<std::string, size_t>
  countKeys(const std::map<std::string, std::vector<uint64_t>> &keys);
  /// Adds the open pass's `keys` and distinct rows to `opened`.
  void countOpenedPass(const std::map<std::string, size_t> &keys);

  std::map<std::string, std::vector<uint64_t>> pendingKeys;
  /// With a memory limit: the distinct keys among pendingKeys, per table.
  struct DistinctKeys;
  std::unique_ptr<DistinctKeys> pendingDistinct;
  size_t limitBytes = 0;
  size_t pendingBytes = 0;
  /// Ids per table of the prepared pass.
  std::map<std::string, size_t> preparedKeys;
  KeyCounts opened;
  bool passOpen = false;
  bool prepared = false;
};

/// The pass cache in host memory, over an in-process server.
class HostPassCache : public PassCache {
public:
  explicit HostPassCache(ParameterServer &server);
  ~HostPassCache() override;

  size_t passKeyCount(const std::string &table) const override;
  size_t firstMissingId(const std::string &table, const uint64_t *ids,
                        size_t count) const override;
  size_t bytesPerRow(const std::string &table) const override;
  void pull(const std::string &table, const uint64_t *ids, size_t count,
            float *out) override;
  void push(const std::string &table, const uint64_t *ids, size_t count,
            const float *gradients) override;
  size_t stageGradients(const std::string &table, const float *gradients,
                        size_t floats) override;
  void pushStaged(const std::string &table, const uint64_t *ids, size_t count,
                  const std::vector<StagedSegment> &segments,
                  float divisor) override;
  void discardStaged() override;

protected:
  void loadPass(std::map<std::string, std::vector<uint64_t>> keys) override;
  void writeBackPass() override;
  void prepareLoad(std::map<std::string, std::vector<uint64_t>> keys) override;
  void openPrepared() override;
  void dropPrepared() override;

private:
  /// Ends the pass's tables, keeping their memory for the next pass.
  void retireTables();

  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PASSCACHE_H
