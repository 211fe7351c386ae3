//===- StepReader.h - A training run's steps, read in passes ----*- C++ -*-===//
//
// Where the trainer takes each step's samples. Without a pass cache the
// next step is read on a thread of its own while a step trains, so that
// parsing the data overlaps the step (a GPU step is a few milliseconds; a
// batch of 4096 Criteo lines takes about as long to parse). With one
// (--pass-steps K), steps come in passes of
// K: the bundle's pass-key program computes the ids each of a pass's steps
// pulls, and the training server's pass cache loads those rows once
// (beginPass) before the pass's first step; they go back to the server
// (endPass) after its last step, or earlier, before a checkpoint, an
// evaluation or the end of the run.
//
// While a pass trains, a thread of its own prepares the next one, as
// Paddle's pass pipeline does: it reads the next K steps, computes their
// ids and loads the rows the running pass does not hold
// (TrainingServer::prepareNextPass), so that the data reading, the id
// computation and the server's reads overlap the training. A pass ended
// early drops the prepared one; the steps read for it then join the next
// pass. With a memory limit on the pass cache, a pass also ends before the
// step whose rows would not fit (PassCache::addStepKeys), which then starts
// the next one. Private to runtime/train.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TRAIN_STEPREADER_H
#define HETERPS_RUNTIME_TRAIN_STEPREADER_H

#include "heterps/Runtime/BatchSource.h"
#include "heterps/Runtime/PassKeyProgram.h"
#include "heterps/Runtime/TrainingServer.h"

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace heterps::rt::train {

struct StepData {
  std::vector<HostTensor> inputs;
  /// The source's position after this step's samples (for a checkpoint
  /// taken after the step).
  std::string position;
};

class StepReader {
public:
  /// `samplesOf(step)`: the samples of training step `step` (1-based);
  /// `lastStep`: the run's last step. `passSteps` 0 reads each step when it
  /// runs; otherwise `server` must have a pass cache and `bundle` a
  /// pass-key program.
  StepReader(const Bundle &bundle, data::BatchSource &source,
             TrainingServer &server, int64_t passSteps,
             std::function<int64_t(int64_t step)> samplesOf, int64_t lastStep);
  ~StepReader();

  /// The data of `step`, the step after the previous call's, valid until
  /// the next call; opens a pass first where one is due. Throws Error when
  /// the source runs dry (also when the next pass's preparation found it
  /// so).
  const StepData &take(int64_t step);
  /// Ends the open pass, if any (its rows go back to the server), after
  /// the next pass's preparation; without passes, waits for the step read
  /// ahead, so that the source is the caller's again.
  void endPass();

  /// Passes opened so far, and the fewest and most steps one was given.
  struct PassCounts {
    int64_t passes = 0;
    int64_t fewestSteps = 0;
    int64_t mostSteps = 0;
  };
  PassCounts passCounts() const { return counts; }

private:
  /// Reads `step` from the source into `data`, reusing spare tensors.
  void read(int64_t step, StepData &data);
  /// Fills `steps` (empty) from `first` on with the steps read ahead, then
  /// from the source, until it holds `passSteps`, the run ends or the next
  /// step's rows would not fit the pass cache's memory, giving their ids to
  /// the server's pass cache; a step that did not fit is kept read ahead.
  void readPass(int64_t first, std::deque<StepData> &steps);
  /// Without passes: starts reading `step` into `nextData` on its own
  /// thread, if the run has it.
  void startReadingAhead(int64_t step);
  /// Starts preparing the pass after the open one, if steps remain.
  void startPreparing();
  /// Waits for the preparation; keeps its error for when its steps are
  /// taken.
  void finishPreparing();
  /// Gives current's tensors to the next read.
  void recycleCurrent();
  /// Opens the pass whose first step is `step`: the prepared one, or one
  /// over passData read up to `passSteps` steps.
  void openPass(int64_t step);

  data::BatchSource &source;
  TrainingServer &server;
  const int64_t passSteps;
  std::unique_ptr<PassKeyProgram> keys;
  std::function<int64_t(int64_t)> samplesOf;
  const int64_t lastStep;
  /// The open pass's steps not yet taken, from `nextStep` on (without
  /// passes, nextStep is the step to take next).
  std::deque<StepData> passData;
  int64_t nextStep = 0;
  /// The steps of the pass being prepared (after passData's).
  std::deque<StepData> preparedData;
  /// Steps read but in no pass (after preparedData's): one that did not fit
  /// its pass, or a pass's steps when it ended early.
  std::deque<StepData> readAhead;
  /// One step's ids per pull (readPass's scratch).
  std::vector<ps::PassCache::StepKeys> stepKeys;
  /// With sparse staleness: the last step given to a pass, and its ids,
  /// which the pass after it holds too (TrainingServer::beginPass).
  int64_t carriedStep = -1;
  std::vector<ps::PassCache::StepKeys> carriedKeys;
  PassCounts counts;
  std::future<void> preparing;
  std::exception_ptr preparationError;
  /// Without passes: step nextStep, being read ahead.
  std::future<void> readingAhead;
  StepData nextData;
  /// What take() returned last; its tensors are reused.
  StepData current;
  /// Tensors of steps trained, for reads on either thread.
  std::mutex spareMutex;
  std::vector<std::vector<HostTensor>> spareInputs;
};

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_TRAIN_STEPREADER_H
