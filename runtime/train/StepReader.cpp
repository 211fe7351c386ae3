//===- StepReader.cpp - A training run's steps, read in passes ------------===//

#include "StepReader.h"

#include <algorithm>
#include <utility>

namespace heterps::rt::train {

StepReader::StepReader(const Bundle &bundle, data::BatchSource &source,
                       TrainingServer &server, int64_t passSteps,
                       std::function<int64_t(int64_t)> samplesOf,
                       int64_t lastStep)
    : source(source), server(server), passSteps(passSteps),
      samplesOf(std::move(samplesOf)), lastStep(lastStep) {
  // One kernel thread: it runs beside the training's.
  if (passSteps > 0)
    keys = std::make_unique<PassKeyProgram>(bundle, 1);
}

StepReader::~StepReader() {
  // Their errors, if any, no longer matter.
  if (preparing.valid())
    preparing.wait();
  if (readingAhead.valid())
    readingAhead.wait();
}

void StepReader::startReadingAhead(int64_t step) {
  if (step > lastStep)
    return;
  // Only this thread uses the source until the step is taken.
  readingAhead =
      std::async(std::launch::async, [this, step] { read(step, nextData); });
}

void StepReader::read(int64_t step, StepData &data) {
  if (data.inputs.empty()) {
    std::lock_guard<std::mutex> lock(spareMutex);
    if (!spareInputs.empty()) {
      data.inputs = std::move(spareInputs.back());
      spareInputs.pop_back();
    }
  }
  const int64_t samples = samplesOf(step);
  if (source.next(samples, data.inputs) < samples) {
    std::string warning = source.warning();
    throw Error("the training data " + source.describe() +
                " holds no valid rows" +
                (warning.empty() ? std::string() : " (" + warning + ")"));
  }
  data.position = source.position();
}

void StepReader::readPass(int64_t first, std::deque<StepData> &steps) {
  for (int64_t step = first;
       static_cast<int64_t>(steps.size()) < passSteps && step <= lastStep;
       ++step) {
    StepData data;
    if (!readAhead.empty()) {
      data = std::move(readAhead.front());
      readAhead.pop_front();
    } else {
      read(step, data);
    }
    size_t pulls = 0;
    try {
      keys->run(
          data.inputs, samplesOf(step),
          [&](const std::string &table, const int64_t *ids, size_t count) {
            if (pulls == stepKeys.size())
              stepKeys.emplace_back();
            server.passKeysOf(table, ids, count, stepKeys[pulls++]);
          });
    } catch (const Error &error) {
      throw Error("step " + std::to_string(step) +
                  ": the ids the pass reads ahead: " + error.what());
    }
    stepKeys.resize(pulls);
    // With sparse staleness the step before a pass's first applies its
    // update during that step: the pass holds its rows too. A pass not
    // prepared gets them from the server's held-back update instead.
    const bool carries = step == first && carriedStep == first - 1 &&
                         server.holdsBackSparseUpdates();
    if (carries)
      stepKeys.insert(stepKeys.end(), carriedKeys.begin(), carriedKeys.end());
    bool fits;
    try {
      fits = server.addStepPassKeys(stepKeys);
    } catch (const Error &error) {
      throw Error("step " + std::to_string(step) + ": " + error.what() +
                  "; raise --pass-memory or lower --batch");
    }
    if (carries)
      stepKeys.resize(pulls);
    if (!fits) {
      readAhead.push_front(std::move(data)); // the next pass's first step
      break;
    }
    if (server.holdsBackSparseUpdates()) {
      // Kept by a swap, not a copy: the next step's ids overwrite the
      // scratch whole (TrainingServer::passKeysOf).
      carriedStep = step;
      std::swap(carriedKeys, stepKeys);
    }
    steps.push_back(std::move(data));
  }
}

void StepReader::startPreparing() {
  const int64_t first = nextStep + static_cast<int64_t>(passData.size());
  if (first > lastStep)
    return;
  // Only this thread uses the source, the key program and the server's
  // sparse tables until finishPreparing.
  preparing = std::async(std::launch::async, [this, first] {
    readPass(first, preparedData);
    server.prepareNextPass();
  });
}

void StepReader::finishPreparing() {
  if (!preparing.valid())
    return;
  try {
    preparing.get();
  } catch (...) {
    // Reported when those steps are taken: a run stopping now never needs
    // them.
    preparationError = std::current_exception();
    preparedData.clear();
    server.discardPreparedPass();
  }
}

void StepReader::openPass(int64_t step) {
  if (preparationError)
    std::rethrow_exception(preparationError);
  // The prepared pass's steps start here; without one (the first pass, or
  // after one ended early) the pass is read now.
  if (!server.nextPassPrepared())
    readPass(step, passData);
  server.beginPass();
  const int64_t stepsInPass = static_cast<int64_t>(passData.size());
  counts.fewestSteps = counts.passes == 0
                           ? stepsInPass
                           : std::min(counts.fewestSteps, stepsInPass);
  counts.mostSteps = std::max(counts.mostSteps, stepsInPass);
  ++counts.passes;
  startPreparing();
}

void StepReader::recycleCurrent() {
  if (current.inputs.empty())
    return;
  std::lock_guard<std::mutex> lock(spareMutex);
  spareInputs.push_back(std::move(current.inputs));
  current.inputs.clear();
}

namespace {
void checkInOrder(int64_t step, int64_t expected) {
  if (step != expected)
    throw Error("internal: step " + std::to_string(step) +
                " taken out of order (expected " + std::to_string(expected) +
                ")");
}
} // namespace

const StepData &StepReader::take(int64_t step) {
  if (passSteps == 0) {
    recycleCurrent();
    if (readingAhead.valid()) {
      checkInOrder(step, nextStep);
      readingAhead.get(); // a read's error is this step's
      std::swap(current, nextData);
    } else {
      read(step, current);
    }
    nextStep = step + 1;
    startReadingAhead(nextStep);
    return current;
  }
  if (passData.empty()) {
    // The open pass is done; the prepared one follows it.
    endPass();
    passData.swap(preparedData);
    nextStep = step;
    openPass(step);
  }
  checkInOrder(step, nextStep);
  recycleCurrent();
  current = std::move(passData.front());
  passData.pop_front();
  ++nextStep;
  return current;
}

void StepReader::endPass() {
  if (readingAhead.valid())
    readingAhead.wait(); // an error of a step never taken does not matter
  finishPreparing();
  if (!server.inPass())
    return;
  if (!passData.empty()) {
    // Early: the prepared pass loaded rows this one has yet to change. The
    // steps of both, then those read ahead, start the next pass.
    server.discardPreparedPass();
    for (auto data = preparedData.rbegin(); data != preparedData.rend(); ++data)
      readAhead.push_front(std::move(*data));
    for (auto data = passData.rbegin(); data != passData.rend(); ++data)
      readAhead.push_front(std::move(*data));
    preparedData.clear();
    passData.clear();
  }
  server.endPass();
}

} // namespace heterps::rt::train
