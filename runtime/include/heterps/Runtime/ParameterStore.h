//===- ParameterStore.h - What training needs of a parameter server -*- C++
//-*-===//
//
// The seam between the training side (TrainingServer) and a parameter
// server: the in-process ps::ParameterServer implements it, and so does the
// client of a parameter server sharded over MPI ranks (MpiParameterClient,
// runtime/mpi). TrainingServer only talks to this interface, so the same
// training loop runs in one process or as one data-parallel worker of many.
//
// Step semantics. A training step pushes each parameter's gradient once per
// worker, then calls endStep(). The in-process server applies every push at
// once (one worker, one push per step), so endStep() does nothing there. A
// remote store instead sums the pushes of all workers of the step and
// applies the optimizer once, on the sum, when every worker has called
// endStep(): Adagrad and Adam are nonlinear in the gradient, so applying
// the workers' pushes one after the other would not be the same step as the
// single-process run's. endStep() returns once the step is applied, so
// pulls after it see the new parameters.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PARAMETERSTORE_H
#define HETERPS_RUNTIME_PARAMETERSTORE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heterps::rt::ps {

struct OptimizerConfig;
struct SparseTableConfig;

class ParameterStore {
public:
  virtual ~ParameterStore();

  /// Creation happens before training. A remote store accepts the same
  /// creation from every worker (each worker builds the same tables from
  /// the same bundle); a differing one is an error.
  virtual void createSparseTable(const SparseTableConfig &config) = 0;
  virtual void createDenseParam(const std::string &name,
                                std::vector<float> initial,
                                const OptimizerConfig &optimizer) = 0;

  /// `count * dim` floats into `out`, row i for ids[i]; rows are created
  /// on first touch.
  virtual void pull(const std::string &table, const uint64_t *ids, size_t count,
                    float *out) = 0;
  /// pull() that creates no row: an id never touched reads as the initial
  /// value its row would get. Evaluation reads this way, so evaluation data
  /// neither grows the tables nor evicts training rows from a row cache.
  virtual void peek(const std::string &table, const uint64_t *ids, size_t count,
                    float *out) = 0;
  /// `gradients` holds count * dim floats, row i for ids[i]; duplicate ids
  /// are summed in order before the optimizer runs once per distinct id.
  virtual void push(const std::string &table, const uint64_t *ids, size_t count,
                    const float *gradients) = 0;
  virtual std::vector<float> pullDense(const std::string &name) = 0;
  virtual void pushDense(const std::string &name,
                         const std::vector<float> &gradient) = 0;
  /// pullDense / pushDense of several parameters at once, in the order
  /// given (a remote store sends one request per shard instead of one per
  /// parameter).
  virtual std::vector<std::vector<float>>
  pullDenseMany(const std::vector<std::string> &names);
  virtual void pushDenseMany(const std::vector<std::string> &names,
                             const std::vector<std::vector<float>> &gradients);
  /// The pushes of this step are complete (see the file comment).
  virtual void endStep() {}
  /// Multiplies the learning rate of every optimizer update from now on
  /// (Sgd, Adam, Adagrad; not MovingAverage) by `scale` (initially 1):
  /// how a run with another global batch keeps its step size. Set between
  /// steps; a remote store sends it to every shard, so call it only when
  /// the scale changes. Not part of a checkpoint. Throws Error unless
  /// `scale` is finite and >= 0.
  virtual void setLearningRateScale(float scale) = 0;
  /// The parameters are those after step `step` (a resumed run's
  /// checkpoint). A remote store tells its shards, which count the steps
  /// they apply from there (heartbeats, fault injection); the in-process
  /// server keeps no step.
  virtual void resumedAtStep(int64_t step) { (void)step; }

  /// The row's weights followed by its optimizer state, or nothing if the
  /// row was never touched. Creates nothing.
  virtual std::optional<std::vector<float>> readRow(const std::string &table,
                                                    uint64_t key) = 0;
  /// readRow of many keys at once (a remote store answers them in one
  /// request per shard instead of one per key).
  virtual std::vector<std::optional<std::vector<float>>>
  readRows(const std::string &table, const std::vector<uint64_t> &keys);
  /// Values followed by optimizer state.
  virtual std::vector<float> readDense(const std::string &name) = 0;
  virtual size_t rowCount(const std::string &table) = 0;
  virtual const SparseTableConfig &
  tableConfig(const std::string &table) const = 0;

  /// Writes a checkpoint of every parameter and optimizer state under
  /// `directory` (a remote store: one part per shard, written by the
  /// shards); called by one worker between steps.
  virtual void save(const std::string &directory) = 0;
  /// Replaces every parameter with the checkpoint's. For a remote store
  /// every worker calls it and it returns, on all, once the shards have
  /// loaded; throws Error naming the missing or corrupt file.
  virtual void load(const std::string &directory) = 0;
};

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PARAMETERSTORE_H
