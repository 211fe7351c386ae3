//===- Train.cpp - heterps run --train ------------------------------------===//
//
// Compiled with exceptions, like Run.cpp: the runtime reports errors as
// heterps::rt::Error, and every one ends here as a single message and exit
// code 1. SIGINT and SIGTERM stop training between steps, so the last step
// is checkpointed instead of lost; so does the stop file of
// HETERPS_STOP_FILE, which then exits 0.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Distributed.h"

#include "heterps/Runtime/Trainer.h"
#include "heterps/Runtime/WorkerGroup.h"

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <new>

namespace heterps::driver {
namespace {

std::atomic<bool> stopRequested{false};
volatile std::sig_atomic_t stopSignal = 0;

extern "C" void requestStop(int signal) {
  stopSignal = signal;
  stopRequested.store(true);
  // A second signal ends the process the usual way.
  std::signal(signal, SIG_DFL);
}

/// Installs the stop handlers for its lifetime.
class StopOnSignals {
public:
  StopOnSignals() {
    previousInt = std::signal(SIGINT, requestStop);
    previousTerm = std::signal(SIGTERM, requestStop);
  }
  ~StopOnSignals() {
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
  }

private:
  void (*previousInt)(int);
  void (*previousTerm)(int);
};

} // namespace

std::string trainStepError(const std::string &bundle, int64_t batch,
                           int workers) {
  std::unique_ptr<rt::Bundle> opened;
  try {
    opened = std::make_unique<rt::Bundle>(bundle);
  } catch (const std::exception &) {
    return ""; // the ranks open it and say what is wrong
  }
  try {
    (void)rt::train::stepSamples(*opened, batch, workers);
  } catch (const std::exception &error) {
    return error.what();
  }
  return "";
}

int train(const TrainOptions &options) {
  using namespace heterps::rt;
  static_assert(std::atomic<bool>::is_always_lock_free,
                "the signal handler stores into an atomic<bool>");
  // Outside the try: an error must abort the MPI job after its message,
  // not finalise MPI while other ranks wait on this one.
  std::unique_ptr<DistributedWorker> distributed;
  // The steps a pass reads ahead (the flag's, else the plan's), for the
  // out-of-memory message.
  int64_t passSteps = 0;
  try {
    Bundle bundle(options.bundle);
    train::TrainerOptions trainer;
    trainer.data = options.data;
    trainer.eval = options.eval;
    for (const std::string &text : options.dataInputs)
      trainer.dataInputs.push_back(data::parseNpyInput(text, "--data-input"));
    for (const std::string &text : options.evalInputs)
      trainer.evalInputs.push_back(data::parseNpyInput(text, "--eval-input"));
    trainer.shuffle = options.shuffle;
    trainer.batch = options.batch;
    trainer.steps = options.steps;
    trainer.samples = options.samples;
    trainer.logEvery = options.logEvery;
    trainer.evalEvery = options.evalEvery;
    trainer.checkpointDir = options.checkpointDir;
    if (!options.checkpointEvery.empty()) {
      train::CheckpointInterval interval =
          train::parseCheckpointInterval(options.checkpointEvery);
      trainer.checkpointEvery = interval.steps;
      trainer.checkpointEverySeconds = interval.seconds;
    }
    trainer.learningRate.scale = options.learningRateScale;
    if (!options.learningRateWarmup.empty())
      train::parseLearningRateWarmup(options.learningRateWarmup,
                                     trainer.learningRate);
    trainer.keepCheckpoints = options.keepCheckpoints;
    trainer.resume = options.resume;
    trainer.seed = options.seed;
    trainer.hashBuckets = options.hashBuckets;
    trainer.psShards = options.psShards;
    trainer.psMemoryRows = options.psMemoryRows;
    trainer.psStorageDir = options.psStorageDir;
    trainer.passSteps = options.passSteps;
    if (!options.passMemory.empty())
      train::parsePassMemory(options.passMemory, trainer);
    trainer.passCacheOnGpu = options.passCacheOnGpu;
    if (options.passCacheGpus)
      train::parsePassCacheGpus(*options.passCacheGpus, trainer);
    trainer.sparseStaleness = options.sparseStaleness;
    trainer.denseParametersOnGpu = options.denseParametersOnGpu;
    trainer.threads = options.threads;
    trainer.gpuStagesOnCpu = options.gpuStagesOnCpu;
    trainer.framesInFlight = options.framesInFlight;
    trainer.dumpParameters = options.dumpParameters;
    trainer.lossLog = options.lossLog;
    trainer.stopRequested = &stopRequested;
    if (options.mpiWorker) {
      distributed = DistributedWorker::join(options.consistency);
      trainer.group = &distributed->group();
    }
    passSteps = train::passStepsOf(bundle, trainer);
    // Worker 0 reports for the whole job; the others only report errors.
    std::ostream &log =
        distributed && !distributed->group().leader() ? nullLog() : std::cerr;
    if (distributed && options.threads <= 0)
      log << "heterps run: worker 0's machine: " << distributed->machineShare()
          << "\n";

    StopOnSignals handlers;
    train::TrainSummary summary = train::Trainer(bundle, trainer, log).run();
    if (distributed)
      distributed->finish();
    if (summary.stopReason == train::StopReason::Request) {
      // How a supervisor stops a job to resize or preempt it: not a failure.
      // No checkpoint with a directory given: stopped before its first
      // step (it said "no --checkpoint-dir", false, to a supervisor).
      log << "heterps run: stopped on request at step " << summary.steps
          << "; checkpoint "
          << (!summary.lastCheckpoint.empty() ? summary.lastCheckpoint
              : trainer.checkpointDir.empty()
                  ? std::string("none (no --checkpoint-dir)")
                  : std::string("none (nothing trained to keep)"))
          << "\n";
      return 0;
    }
    if (summary.interrupted) {
      // Workers stop together: one that got no signal itself stops as if
      // it had been sent SIGTERM.
      if (!stopSignal)
        stopSignal = SIGTERM;
      log << "heterps run: stopped by signal " << int(stopSignal) << " at step "
          << summary.steps;
      if (!summary.lastCheckpoint.empty())
        log << "; continue with --resume from " << summary.lastCheckpoint;
      log << "\n";
      return 128 + int(stopSignal);
    }
    return 0;
  } catch (const std::bad_alloc &) {
    reportError(
        "run",
        (distributed
             ? "worker " + std::to_string(distributed->group().rank()) + ": "
             : std::string()) +
            "out of memory: this machine cannot hold a step of "
            "--batch " +
            std::to_string(options.batch) + " (0: the plan's)" +
            (passSteps > 0 ? ", read ahead in passes of " +
                                 std::to_string(passSteps) + " steps,"
                           : std::string()) +
            " with this bundle; lower --batch" +
            (passSteps > 0 ? " or --pass-steps" : ""));
    abortDistributedJob(1);
    return 1;
  } catch (const std::exception &error) {
    reportError(
        "run",
        (distributed
             ? "worker " + std::to_string(distributed->group().rank()) + ": "
             : std::string()) +
            error.what());
    abortDistributedJob(1);
    return 1;
  }
}

} // namespace heterps::driver
