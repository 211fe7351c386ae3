//===- Trainer.cpp - The training loop of `heterps run --train` -----------===//

#include "heterps/Runtime/Trainer.h"

#include "heterps/Runtime/CtrDataMetrics.h"
#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/TrainingServer.h"
#include "heterps/Runtime/WorkerGroup.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

namespace heterps::rt::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string describe(const TensorSpec &spec) {
  Shape rest(spec.shape.begin() + (spec.batched ? 1 : 0), spec.shape.end());
  return std::string(dtypeName(spec.dtype)) + " " +
         (spec.batched ? "N x " : "") + shapeString(rest);
}

/// Rows [first, first + count) of `all` into `part` (a worker's slice of
/// the step).
void sliceBatch(const data::CtrBatch &all, int64_t first, int64_t count,
                data::CtrBatch &part) {
  part.rows = count;
  part.labels.assign(all.labels.begin() + first,
                     all.labels.begin() + first + count);
  part.dense.assign(all.dense.begin() + first * data::kNumDense,
                    all.dense.begin() + (first + count) * data::kNumDense);
  part.sparse.assign(all.sparse.begin() + first * data::kNumSparse,
                     all.sparse.begin() + (first + count) * data::kNumSparse);
}

/// Whether `spec` is a batched tensor of `dtype` with the extents `rest`
/// after the batch.
bool isBatched(const TensorSpec &spec, DType dtype, const Shape &rest) {
  return spec.batched && spec.dtype == dtype &&
         Shape(spec.shape.begin() + 1, spec.shape.end()) == rest;
}

/// How a model's prediction turns into a score for AUC and log-loss.
enum class ScoreKind {
  Unknown,     // not decided yet
  Probability, // one value per sample in [0, 1], or two that sum to 1
  Logit,       // one logit per sample, or two class logits
  None         // no binary score (more classes, not f32)
};

/// The prediction as a binary score, decided once from the first batch: for
/// bce the kind whose cross-entropy reproduces the model's own per-sample
/// loss, otherwise probabilities if every value is one.
class Scorer {
public:
  void decide(const HostTensor &prediction, const float *labels,
              const float *loss, int64_t rows, const std::string &lossKind) {
    if (kind != ScoreKind::Unknown || rows == 0)
      return;
    width = numElements(prediction.shape) / rows;
    if (prediction.dtype != DType::F32 || (width != 1 && width != 2)) {
      kind = ScoreKind::None;
      return;
    }
    const float *values =
        reinterpret_cast<const float *>(prediction.data.data());
    bool probabilities = true;
    for (int64_t i = 0; i < rows && probabilities; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < width; ++j) {
        float v = values[i * width + j];
        probabilities = probabilities && v >= 0 && v <= 1;
        sum += v;
      }
      if (width == 2)
        probabilities = probabilities && std::fabs(sum - 1) < 1e-3;
    }
    kind = probabilities ? ScoreKind::Probability : ScoreKind::Logit;
    if (probabilities && width == 1 && lossKind == "bce") {
      double asProbability = 0, asLogit = 0;
      for (int64_t i = 0; i < rows; ++i) {
        double p = std::clamp<double>(values[i], 1e-7, 1 - 1e-7);
        double y = labels[i], x = values[i];
        asProbability +=
            std::fabs(-(y * std::log(p) + (1 - y) * std::log(1 - p)) - loss[i]);
        double softplus =
            std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
        asLogit += std::fabs(softplus - y * x - loss[i]);
      }
      if (asLogit < asProbability)
        kind = ScoreKind::Logit;
    }
  }
  bool usable() const {
    return kind == ScoreKind::Probability || kind == ScoreKind::Logit;
  }
  /// Appends the rows' scores (probabilities or logits, one per sample).
  void scores(const HostTensor &prediction, int64_t rows,
              std::vector<float> &out) const {
    const float *values =
        reinterpret_cast<const float *>(prediction.data.data());
    for (int64_t i = 0; i < rows; ++i)
      out.push_back(width == 1 ? values[i]
                    : kind == ScoreKind::Probability
                        ? values[2 * i + 1]
                        : values[2 * i + 1] - values[2 * i]);
  }
  void addLogLoss(data::LogLossMeter &meter, const float *scores,
                  const float *labels, size_t n) const {
    if (kind == ScoreKind::Probability)
      meter.add(scores, labels, n);
    else
      meter.addLogits(scores, labels, n);
  }

private:
  ScoreKind kind = ScoreKind::Unknown;
  int64_t width = 1;
};

/// AUC that reports NaN instead of failing on NaN scores (a diverged model
/// is reported, not crashed on).
double safeAuc(const std::vector<float> &scores,
               const std::vector<float> &labels) {
  for (float score : scores)
    if (std::isnan(score))
      return std::nan("");
  return data::computeAuc(scores, labels);
}

std::string fixed(double value, int digits = 4) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

/// Fills the bundle's inputs with `rows` examples of `batch`.
class InputFiller {
public:
  InputFiller(const Bundle &bundle, CtrInputs layout)
      : bundle(bundle), layout(layout) {}

  std::vector<HostTensor> &fill(const data::CtrBatch &batch, int64_t rows) {
    if (tensors.empty() || tensors[0].shape.empty() || currentRows != rows) {
      tensors.clear();
      for (const InputSpec &spec : bundle.inputs()) {
        Shape shape = spec.shape;
        shape[0] = rows;
        tensors.emplace_back(spec.dtype, shape);
      }
      currentRows = rows;
    }
    if (layout.dense >= 0)
      std::memcpy(tensors[layout.dense].data.data(), batch.dense.data(),
                  rows * data::kNumDense * sizeof(float));
    if (layout.sparse >= 0)
      std::memcpy(tensors[layout.sparse].data.data(), batch.sparse.data(),
                  rows * data::kNumSparse * sizeof(int64_t));
    if (layout.label >= 0) {
      HostTensor &label = tensors[layout.label];
      if (label.dtype == DType::F32) {
        std::memcpy(label.data.data(), batch.labels.data(),
                    rows * sizeof(float));
      } else {
        auto *ids = reinterpret_cast<int64_t *>(label.data.data());
        for (int64_t i = 0; i < rows; ++i)
          ids[i] = batch.labels[i] > 0.5f ? 1 : 0;
      }
    }
    return tensors;
  }

private:
  const Bundle &bundle;
  CtrInputs layout;
  std::vector<HostTensor> tensors;
  int64_t currentRows = -1;
};

} // namespace

std::string formatRate(double value) {
  if (!(value > 0) || !std::isfinite(value))
    return fixed(value, 2);
  int exponent = static_cast<int>(std::floor(std::log10(value)));
  double mantissa = value / std::pow(10.0, exponent);
  // 9.996 rounds to 10.00: carry into the exponent.
  if (std::stod(fixed(mantissa, 2)) >= 10) {
    mantissa /= 10;
    ++exponent;
  }
  return fixed(mantissa, 2) + "e" + std::to_string(exponent);
}

std::string bundleIdentity(const Bundle &bundle) {
  std::ifstream stream(bundle.path("manifest.json"), std::ios::binary);
  if (!stream)
    throw Error("cannot read " + bundle.path("manifest.json"));
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
  char buffer[1 << 16];
  while (stream.read(buffer, sizeof buffer) || stream.gcount() > 0) {
    for (std::streamsize i = 0; i < stream.gcount(); ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 0x100000001b3ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

CtrInputs mapCtrInputs(const Bundle &bundle) {
  const TrainingSpec *spec = bundle.training();
  if (!spec)
    throw Error("bundle '" + bundle.directory() +
                "' is not a training bundle (its manifest.json has no "
                "\"training\" section); compile the model with --train");
  CtrInputs layout;
  const auto &inputs = bundle.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec &input = inputs[i];
    int index = static_cast<int>(i);
    if (index == spec->labelInput) {
      if (!isBatched(input, DType::F32, {}) &&
          !isBatched(input, DType::F32, {1}) &&
          !isBatched(input, DType::I64, {}) &&
          !isBatched(input, DType::I64, {1}))
        throw Error("the label input '" + input.name + "' is " +
                    describe(input) +
                    "; CTR labels are f32 (or i64) of shape N or N x 1");
      layout.label = index;
    } else if (isBatched(input, DType::F32, {data::kNumDense})) {
      if (layout.dense >= 0)
        throw Error("inputs '" + inputs[layout.dense].name + "' and '" +
                    input.name +
                    "' both look like the dense features (f32 N "
                    "x 13)");
      layout.dense = index;
    } else if (isBatched(input, DType::I64, {data::kNumSparse})) {
      if (layout.sparse >= 0)
        throw Error("inputs '" + inputs[layout.sparse].name + "' and '" +
                    input.name +
                    "' both look like the sparse ids (i64 N x "
                    "26)");
      layout.sparse = index;
    } else {
      throw Error("input '" + input.name + "' (" + describe(input) +
                  ") is none of what Criteo data provides: the dense "
                  "features (f32 N x 13), the sparse ids (i64 N x 26) or the "
                  "label '" +
                  spec->label + "'");
    }
  }
  return layout;
}

Trainer::Trainer(const Bundle &bundle, TrainerOptions options,
                 std::ostream &log)
    : bundle(bundle), options(std::move(options)), log(log) {}

TrainSummary Trainer::run() {
  const TrainerOptions &o = options;
  CtrInputs layout = mapCtrInputs(bundle);
  const TrainingSpec &spec = *bundle.training();

  // Flags, checked before anything is read or written.
  const int64_t microBatch = bundle.batch();
  if (microBatch <= 0)
    throw Error("bundle '" + bundle.directory() +
                "' has no compiled batch; compile it with --batch");
  const int64_t batch = o.batch > 0 ? o.batch : microBatch;
  if (o.batch < 0 || batch % microBatch != 0)
    throw Error("--batch " + std::to_string(o.batch) +
                " is not a multiple of the bundle's batch " +
                std::to_string(microBatch) +
                " (a step is a whole number of micro-batches)");
  if (o.steps < 1)
    throw Error("--steps must be at least 1");
  if (o.logEvery < 1)
    throw Error("--log-every must be at least 1");
  if (o.evalEvery < 0 || (o.evalEvery > 0 && o.eval.empty()))
    throw Error("--eval-every needs --eval FILE and a positive count");
  if (o.checkpointEvery < 0 ||
      (o.checkpointEvery > 0 && o.checkpointDir.empty()))
    throw Error("--checkpoint-every needs --checkpoint-dir DIR and a "
                "positive count");
  if (o.resume && o.checkpointDir.empty())
    throw Error("--resume needs --checkpoint-dir DIR");
  if (o.keepCheckpoints < 1)
    throw Error("--keep-checkpoints must be at least 1");

  data::ReaderOptions readerOptions;
  if (layout.sparse >= 0) {
    int64_t buckets = o.hashBuckets;
    if (buckets == 0) {
      // One table shared by the 26 fields (or several tables of that same
      // size, e.g. Wide & Deep's wide and deep tables): rows / 26 per field.
      bool sameRows = !spec.tables.empty();
      for (const TrainableTable &table : spec.tables)
        sameRows = sameRows && table.rows == spec.tables[0].rows;
      if (!sameRows)
        throw Error("the bundle trains " + std::to_string(spec.tables.size()) +
                    " sparse tables of different sizes; give --hash-buckets "
                    "H (each of the 26 sparse fields is hashed into ids [0, "
                    "H))");
      buckets = spec.tables[0].rows / data::kNumSparse;
      if (buckets < 2)
        throw Error("sparse table '" + spec.tables[0].name + "' has " +
                    std::to_string(spec.tables[0].rows) +
                    " rows, fewer than 2 per sparse field; give "
                    "--hash-buckets H");
    } else if (buckets < 2) {
      throw Error("--hash-buckets must be at least 2");
    }
    readerOptions.tableSizes.assign(data::kNumSparse, buckets);
  }

  // Data-parallel workers: each trains on its slice of the step's
  // micro-batches; only the leader logs, evaluates, checkpoints and dumps.
  WorkerGroup *group = o.group;
  const bool leader = !group || group->leader();
  StepSlice slice{0, batch / microBatch};
  if (group)
    slice = stepSlice(batch / microBatch, group->size(), group->rank());

  // Resume, or refuse to mix a new run into an old run's checkpoints.
  const std::string identity = bundleIdentity(bundle);
  std::optional<FoundCheckpoint> resumed;
  if (!o.checkpointDir.empty() && leader) {
    tidyCheckpointDirectory(o.checkpointDir);
    if (o.resume) {
      resumed = findResumeCheckpoint(o.checkpointDir, identity, log);
      if (!resumed)
        log << "no checkpoint in '" << o.checkpointDir
            << "'; training from step 0\n";
    } else if (!listCheckpoints(o.checkpointDir).empty()) {
      throw Error("checkpoint directory '" + o.checkpointDir +
                  "' already holds checkpoints (newest " +
                  listCheckpoints(o.checkpointDir).back().path +
                  "); pass --resume to continue from them or choose another "
                  "directory");
    }
  }
  if (group && !o.checkpointDir.empty()) {
    // The leader chose; the others read the same checkpoint's state.
    std::string path = group->broadcast(resumed ? resumed->path : "");
    if (!leader && !path.empty())
      resumed = FoundCheckpoint{path, verifyCheckpoint(path)};
  }
  TrainerState state;
  state.seed = o.seed;
  state.bundle = identity;
  state.batch = batch;
  if (resumed) {
    if (resumed->state.seed != o.seed)
      log << "warning: " << resumed->path << " was trained with --seed "
          << resumed->state.seed << "; continuing with that seed\n";
    if (resumed->state.batch != batch)
      log << "warning: " << resumed->path << " was trained with --batch "
          << resumed->state.batch << ", this run uses " << batch
          << ": the result will differ from an uninterrupted run\n";
    state.step = resumed->state.step;
    state.samples = resumed->state.samples;
    state.position = resumed->state.position;
    state.seed = resumed->state.seed;
  }

  TrainingServerOptions serverOptions;
  serverOptions.seed = state.seed;
  // One shard per thread by default, so a step's pulls and pushes use every
  // core; the shard count changes no result.
  serverOptions.shards =
      o.psShards > 0
          ? o.psShards
          : static_cast<size_t>(std::max(
                1, o.threads > 0 ? o.threads
                                 : int(std::thread::hardware_concurrency())));
  if (group)
    serverOptions.store = &group->store();
  TrainingServer server(bundle, serverOptions);
  if (resumed) {
    server.load(resumed->path + "/ps");
    log << "resumed from " << resumed->path << " (step " << state.step
        << ", data " << state.position.toString() << ")\n";
  }

  ExecutorOptions executorOptions;
  executorOptions.threadsPerStage = o.threads;
  executorOptions.gpuStagesOnCpu = o.gpuStagesOnCpu;
  executorOptions.framesInFlight = o.framesInFlight;
  executorOptions.server = server.stageServer();
  Executor executor(bundle, executorOptions);

  data::ReaderOptions trainReaderOptions = readerOptions;
  trainReaderOptions.loop = true;
  data::CriteoReader reader(o.data, trainReaderOptions);
  if (resumed)
    reader.seek(state.position);

  TrainSummary summary;
  summary.firstStep = state.step;
  int64_t lastCheckpointStep = resumed ? state.step : -1;
  if (resumed)
    summary.lastCheckpoint = resumed->path;
  Scorer scorer;
  const int64_t predictionOut = spec.predictionOutput;
  const int64_t lossOut = spec.lossOutputIndex;

  auto checkpoint = [&]() {
    if (!leader)
      return;
    summary.lastCheckpoint = writeCheckpoint(
        o.checkpointDir, state,
        [&](const std::string &path) { server.save(path); }, o.keepCheckpoints);
    lastCheckpointStep = state.step;
    log << "checkpoint " << summary.lastCheckpoint << "\n";
  };

  auto evaluate = [&]() {
    if (!leader)
      return;
    data::CriteoReader evalReader(o.eval, readerOptions);
    InputFiller filler(bundle, layout);
    data::CtrBatch rows;
    std::vector<float> scores, labels;
    data::LogLossMeter meter;
    server.setEvalMode(true);
    struct Restore {
      TrainingServer &server;
      ~Restore() { server.setEvalMode(false); }
    } restore{server};
    while (int64_t count = evalReader.nextBatch(rows, batch)) {
      std::vector<HostTensor> outputs = executor.run(filler.fill(rows, count));
      server.finishStep(1); // nothing to apply: pushes were discarded
      const float *loss =
          reinterpret_cast<const float *>(outputs[lossOut].data.data());
      scorer.decide(outputs[predictionOut], rows.labels.data(), loss, count,
                    spec.loss);
      if (!scorer.usable())
        break;
      size_t first = scores.size();
      scorer.scores(outputs[predictionOut], count, scores);
      labels.insert(labels.end(), rows.labels.begin(),
                    rows.labels.begin() + count);
      scorer.addLogLoss(meter, scores.data() + first, rows.labels.data(),
                        count);
    }
    if (evalReader.stats().malformed)
      log << "warning: " << evalReader.stats().malformed
          << " malformed lines skipped in '" << o.eval << "'\n";
    if (!scorer.usable())
      throw Error("the prediction '" + spec.prediction +
                  "' is not a binary score (one value per sample, or two "
                  "class scores): cannot compute AUC and log-loss");
    if (scores.empty())
      throw Error("the evaluation data '" + o.eval + "' holds no valid rows");
    summary.evaluated = true;
    summary.evalAuc = safeAuc(scores, labels);
    summary.evalLogLoss = meter.value();
    summary.evalSamples = static_cast<int64_t>(scores.size());
    log << "eval step " << state.step << "/" << o.steps << "  auc "
        << fixed(summary.evalAuc) << "  logloss " << fixed(summary.evalLogLoss)
        << "  " << summary.evalSamples << " samples\n";
  };

  InputFiller filler(bundle, layout);
  data::CtrBatch rows;
  // The progress window.
  std::vector<float> windowScores, windowLabels;
  double windowLoss = 0;
  int64_t windowSamples = 0, windowFirstStep = state.step + 1;
  Clock::time_point windowStart = Clock::now(), runStart = Clock::now();
  int64_t lastEvalStep = -1;

  // False while finishStep applies a step: an error there may leave the
  // parameters half-updated, which no checkpoint may record as a step.
  bool consistent = true;
  try {
    while (state.step < o.steps) {
      bool stop = o.stopRequested && o.stopRequested->load();
      if (group) // every worker stops after the same step
        stop = group->anyStopRequested(stop);
      if (stop) {
        summary.interrupted = true;
        break;
      }
      int64_t count = reader.nextBatch(rows, batch);
      if (count < batch)
        throw Error("the training data '" + o.data + "' holds no valid rows" +
                    (reader.stats().malformed
                         ? " (" + std::to_string(reader.stats().malformed) +
                               " malformed lines)"
                         : std::string()));
      // A worker runs its slice; the single process all of the step.
      data::CtrBatch part;
      if (group) {
        sliceBatch(rows, slice.first * microBatch, slice.count * microBatch,
                   part);
        count = part.rows;
      }
      const data::CtrBatch &mine = group ? part : rows;
      std::vector<HostTensor> outputs;
      try {
        outputs = executor.run(filler.fill(mine, count));
      } catch (...) {
        // What the failed step pushed must not reach a later step.
        server.discardStep();
        throw;
      }
      consistent = false;
      server.finishStep(batch / microBatch);
      consistent = true;
      ++state.step;
      state.samples += batch;
      state.position = reader.position();

      const float *loss =
          reinterpret_cast<const float *>(outputs[lossOut].data.data());
      if (group) {
        // The leader reports the whole step: every worker's losses, scores
        // and labels, in worker (= sample) order.
        scorer.decide(outputs[predictionOut], mine.labels.data(), loss, count,
                      spec.loss);
        std::vector<float> scores, labels;
        if (scorer.usable()) {
          scorer.scores(outputs[predictionOut], count, scores);
          labels.assign(mine.labels.begin(), mine.labels.begin() + count);
        }
        std::vector<float> losses =
            group->gather(std::vector<float>(loss, loss + count));
        scores = group->gather(scores);
        labels = group->gather(labels);
        for (float value : losses)
          windowLoss += value;
        windowSamples += static_cast<int64_t>(losses.size());
        windowScores.insert(windowScores.end(), scores.begin(), scores.end());
        windowLabels.insert(windowLabels.end(), labels.begin(), labels.end());
      } else {
        for (int64_t i = 0; i < count; ++i)
          windowLoss += loss[i];
        windowSamples += count;
        scorer.decide(outputs[predictionOut], rows.labels.data(), loss, count,
                      spec.loss);
        if (scorer.usable()) {
          scorer.scores(outputs[predictionOut], count, windowScores);
          windowLabels.insert(windowLabels.end(), rows.labels.begin(),
                              rows.labels.end());
        }
      }

      if (leader && (state.step % o.logEvery == 0 || state.step == o.steps)) {
        double seconds = secondsSince(windowStart);
        summary.trainLoss = windowLoss / windowSamples;
        summary.trainAuc = scorer.usable() ? safeAuc(windowScores, windowLabels)
                                           : std::nan("");
        log << "step " << state.step << "/" << o.steps << "  loss "
            << fixed(summary.trainLoss) << "  auc " << fixed(summary.trainAuc)
            << "  " << formatRate(windowSamples / seconds) << " samples/s\n";
        if (state.step != o.steps) {
          windowScores.clear();
          windowLabels.clear();
          windowLoss = 0;
          windowSamples = 0;
          windowFirstStep = state.step + 1;
          windowStart = Clock::now();
        }
      }
      if (o.checkpointEvery > 0 && state.step % o.checkpointEvery == 0)
        checkpoint();
      if (o.evalEvery > 0 && state.step % o.evalEvery == 0) {
        evaluate();
        lastEvalStep = state.step;
      }
      if (group)
        group->stepFinished(state.step);
      log.flush();
    }
  } catch (...) {
    // The parameters are those of the last finished step, which `state`
    // (data position included) describes: keep them before reporting the
    // error.
    if (!o.checkpointDir.empty() && consistent &&
        state.step > lastCheckpointStep && state.step > summary.firstStep) {
      try {
        checkpoint();
      } catch (const std::exception &error) {
        log << "warning: could not checkpoint step " << state.step << ": "
            << error.what() << "\n";
      }
    }
    throw;
  }
  summary.seconds = secondsSince(runStart);
  summary.steps = state.step;
  summary.samples = state.samples;

  if (!o.checkpointDir.empty() && state.step > lastCheckpointStep &&
      state.step > summary.firstStep)
    checkpoint();
  if (summary.interrupted) {
    log << "stopped at step " << state.step << "/" << o.steps << "\n";
    return summary;
  }
  if (reader.stats().malformed)
    log << "warning: " << reader.stats().malformed
        << " malformed lines skipped in '" << o.data << "'\n";
  // Before the final evaluation, which may create rows of ids that training
  // never saw: the dump holds what training touched.
  if (!o.dumpParameters.empty() && leader)
    server.dumpParameters(o.dumpParameters);

  int64_t trained = state.step - summary.firstStep;
  int64_t trainedSamples = trained * batch;
  if (trained == 0)
    log << "nothing to train: the checkpoint is at step " << state.step
        << " and --steps is " << o.steps << "\n";
  else
    log << "done: " << trained << " steps (" << summary.firstStep + 1 << "-"
        << state.step << "), " << trainedSamples << " samples, "
        << fixed(summary.seconds, 2) << " s, "
        << formatRate(summary.seconds > 0 ? trainedSamples / summary.seconds
                                          : 0)
        << " samples/s\n";
  if (trained > 0)
    log << "train loss " << fixed(summary.trainLoss) << "  auc "
        << fixed(summary.trainAuc) << " (steps " << windowFirstStep << "-"
        << state.step << ")\n";
  if (!o.eval.empty() && lastEvalStep != state.step)
    evaluate();
  return summary;
}

} // namespace heterps::rt::train
