//===- GradCheck.cpp - heterps gradcheck ----------------------------------===//
//
// Checks a training bundle's backward pass against finite differences of its
// own forward pass: for every trained dense parameter and sparse table, the
// directional derivative g.v of the micro-batch's mean loss along random
// directions v is compared with (L(w + eps v) - L(w - eps v)) / (2 eps).
//
// Everything goes through the compiled stages and the training server: the
// server is rebuilt with plain SGD at learning rate 1, so that one step moves
// the parameters by exactly minus the pushed gradient. That both reads the
// analytic gradient (w0 - w1) and applies the perturbations, for dense
// parameters and sparse rows alike. Every loss is the training-mode loss
// (batch norm with batch statistics), and only parameters the optimizer
// trains are checked: running statistics and training flags have no
// gradient. Compiled with exceptions (Run.cpp's flags).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/TrainingServer.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>

namespace heterps::driver {
namespace {

using namespace heterps::rt;

/// The parameters one check perturbs: a dense parameter, or the rows of a
/// table that the micro-batch touches.
struct Target {
  std::string name;
  bool table = false;
  std::vector<int64_t> ids; // tables: the distinct touched ids
  int64_t dim = 0;
  size_t size = 0; // floats
};

class Checker {
public:
  Checker(const Bundle &bundle, const TrainingSpec &spec,
          const GradCheckOptions &options)
      : bundle(bundle), options(options),
        server(spec, bundle.weights(), bundle.weightsBytes(),
               serverOptions(options)) {
    ExecutorOptions executorOptions;
    executorOptions.threadsPerStage = options.threads;
    executorOptions.gpuStagesOnCpu = options.gpuStagesOnCpu;
    executorOptions.framesInFlight = 1;
    // The server's callbacks, with pulls recorded: the rows a micro-batch
    // touches are the ones its table gradients cover.
    inner = server.stageServer();
    recording = *inner;
    recording.context = this;
    recording.pullRows = [](void *context, const char *table,
                            const int64_t *ids, size_t count, float *rows,
                            char *error, size_t errorBytes) {
      auto *self = static_cast<Checker *>(context);
      {
        std::lock_guard<std::mutex> lock(self->pulledMutex);
        self->pulled[table].insert(ids, ids + count);
      }
      return self->inner->pullRows(self->inner->context, table, ids, count,
                                   rows, error, errorBytes);
    };
    recording.lookupParameter = [](void *context, const char *name) {
      auto *self = static_cast<Checker *>(context);
      return self->inner->lookupParameter(self->inner->context, name);
    };
    recording.pushRows =
        [](void *context, const char *table, const int64_t *ids, size_t count,
           const float *gradients, char *error, size_t errorBytes) {
          auto *self = static_cast<Checker *>(context);
          return self->inner->pushRows(self->inner->context, table, ids, count,
                                       gradients, error, errorBytes);
        };
    recording.pushDense = [](void *context, const char *name,
                             const float *gradient, size_t count, char *error,
                             size_t errorBytes) {
      auto *self = static_cast<Checker *>(context);
      return self->inner->pushDense(self->inner->context, name, gradient, count,
                                    error, errorBytes);
    };
    executorOptions.server = &recording;
    executor = std::make_unique<Executor>(bundle, executorOptions);
  }

  static train::TrainingServerOptions
  serverOptions(const GradCheckOptions &options) {
    train::TrainingServerOptions result;
    result.seed = options.seed;
    // Rows start large enough that their gradients are not lost in the
    // rounding of w0 - w1.
    result.initScale = 0.5f;
    return result;
  }

  /// The mean loss of the micro-batch; with `apply`, also one SGD step.
  /// Always the training-mode loss (batch norm with batch statistics); the
  /// pushes of a run that does not apply are dropped.
  double loss(const std::vector<HostTensor> &inputs, bool apply) {
    server.setEvalMode(false);
    std::vector<HostTensor> outputs = executor->run(inputs);
    if (apply)
      server.finishStep(1);
    else
      server.discardStep();
    const TrainingSpec &spec = *bundle.training();
    const HostTensor &perSample = outputs.at(spec.lossOutputIndex);
    const float *values =
        reinterpret_cast<const float *>(perSample.data.data());
    size_t n = numElements(perSample.shape);
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
      sum += values[i];
    return sum / static_cast<double>(n);
  }

  std::vector<float> read(const Target &target) {
    std::vector<float> values(target.size);
    if (target.table) {
      server.pullRows(target.name, target.ids.data(), target.ids.size(),
                      values.data());
    } else {
      const float *live = server.lookupParameter(target.name);
      std::copy(live, live + target.size, values.begin());
    }
    return values;
  }

  /// Moves `target` by `delta` (an SGD step at rate 1 of -delta).
  void move(const Target &target, const std::vector<float> &delta) {
    std::vector<float> gradient(delta.size());
    for (size_t i = 0; i < delta.size(); ++i)
      gradient[i] = -delta[i];
    server.setEvalMode(false);
    {
      MicroBatchScope scope(0, 0);
      if (target.table)
        server.pushRows(target.name, target.ids.data(), target.ids.size(),
                        gradient.data());
      else
        server.pushDense(target.name, gradient.data(), gradient.size());
    }
    server.finishStep(1);
  }

  const Bundle &bundle;
  const GradCheckOptions &options;
  train::TrainingServer server;
  const StageServer *inner = nullptr;
  StageServer recording;
  std::mutex pulledMutex;
  std::map<std::string, std::set<int64_t>> pulled;
  std::unique_ptr<Executor> executor;
};

/// A random input for `spec` when the user gave none: labels as the loss
/// wants them, floats N(0, 1); other types must come from files.
HostTensor randomInput(const InputSpec &spec, const TrainingSpec &training,
                       bool isLabel, const Shape &prediction,
                       std::mt19937_64 &rng) {
  HostTensor tensor(spec.dtype, spec.shape);
  size_t n = numElements(spec.shape);
  // Ids (a CTR model's sparse input): below the smallest table's rows
  // over the ids a sample holds, as the trainer's default hash buckets
  // (rows / 26 fields, which a model may offset into one shared table).
  // The CTR bundle of the README needed --input sparse=FILE.
  int64_t rows = 0;
  for (const TrainableTable &table : training.tables)
    rows = rows ? std::min(rows, table.rows) : table.rows;
  const int64_t perSample =
      spec.batched && !spec.shape.empty() && spec.shape[0] > 0
          ? int64_t(n) / spec.shape[0]
          : int64_t(n);
  const int64_t bound = perSample > 0 ? rows / perSample : 0;
  if (spec.dtype == DType::I64 && !isLabel && bound > 0) {
    std::uniform_int_distribution<int64_t> pick(0, bound - 1);
    auto *out = reinterpret_cast<int64_t *>(tensor.data.data());
    for (size_t i = 0; i < n; ++i)
      out[i] = pick(rng);
    return tensor;
  }
  if (spec.dtype == DType::I64 && isLabel && training.loss == "softmax_ce") {
    int64_t classes = prediction.back();
    std::uniform_int_distribution<int64_t> pick(0, classes - 1);
    auto *out = reinterpret_cast<int64_t *>(tensor.data.data());
    for (size_t i = 0; i < n; ++i)
      out[i] = pick(rng);
    return tensor;
  }
  if (spec.dtype != DType::F32)
    throw Error("input '" + spec.name + "' is not f32; give it with --input " +
                spec.name + "=FILE");
  auto *out = reinterpret_cast<float *>(tensor.data.data());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::bernoulli_distribution coin(0.5);
  for (size_t i = 0; i < n; ++i)
    out[i] = isLabel && training.loss == "bce" ? (coin(rng) ? 1.0f : 0.0f)
                                               : normal(rng);
  return tensor;
}

} // namespace

int gradcheck(const GradCheckOptions &options) {
  try {
    // Zero directions checked nothing and passed; a step or tolerance that
    // is not a small positive number blamed (or passed) every gradient.
    if (options.directions < 1 || options.directions > 1000)
      throw Error("--directions " + std::to_string(options.directions) +
                  " must be 1 to 1000");
    if (!(options.epsilon > 0 && options.epsilon <= 1))
      throw Error("--epsilon " + std::to_string(options.epsilon) +
                  " must be above 0 and at most 1");
    if (!(options.tolerance > 0 && options.tolerance < 1))
      throw Error("--tolerance " + std::to_string(options.tolerance) +
                  " must be above 0 and below 1");
    Bundle bundle(options.bundle);
    if (!bundle.training())
      throw Error("'" + options.bundle +
                  "' is an inference bundle; compile with --train");
    TrainingSpec spec = *bundle.training();
    spec.optimizer = OptimizerSpec{};
    spec.optimizer.kind = "sgd";
    spec.optimizer.learningRate = 1.0f;

    std::map<std::string, std::string> files;
    for (const std::string &text : options.inputs) {
      size_t split = text.rfind('=');
      if (split == std::string::npos || split == 0)
        throw Error("--input '" + text + "' is not NAME=FILE");
      if (files.count(text.substr(0, split)))
        throw Error("--input " + text.substr(0, split) + " is given twice");
      files[text.substr(0, split)] = text.substr(split + 1);
    }
    std::mt19937_64 rng(options.seed);
    const Shape &prediction = bundle.outputs().at(spec.predictionOutput).shape;
    std::vector<HostTensor> inputs;
    for (auto [i, input] : llvm::enumerate(bundle.inputs())) {
      auto file = files.find(input.name);
      if (file != files.end()) {
        inputs.push_back(readInput(input, file->second));
        files.erase(file);
      } else {
        inputs.push_back(randomInput(input, spec,
                                     static_cast<int>(i) == spec.labelInput,
                                     prediction, rng));
      }
    }
    if (!files.empty())
      throw Error("--input names '" + files.begin()->first +
                  "', which is not an input of the model");

    Checker checker(bundle, spec, options);
    (void)checker.loss(inputs, /*apply=*/false); // records the touched rows
    std::vector<Target> targets;
    // Running statistics and training flags have no gradient to check.
    for (const TrainableParameter &parameter : spec.parameters)
      if (parameter.update == ParameterUpdate::Optimizer)
        targets.push_back({parameter.name,
                           false,
                           {},
                           0,
                           static_cast<size_t>(numElements(parameter.shape))});
    for (const TrainableTable &table : spec.tables) {
      const std::set<int64_t> &ids = checker.pulled[table.name];
      Target target{table.name, true, {ids.begin(), ids.end()}, table.dim, 0};
      target.size = target.ids.size() * table.dim;
      if (!target.ids.empty())
        targets.push_back(std::move(target));
    }

    // Analytic gradients: one SGD step at rate 1 from w0, then back to w0.
    std::vector<std::vector<float>> before, gradients;
    for (const Target &target : targets)
      before.push_back(checker.read(target));
    double loss0 = checker.loss(inputs, /*apply=*/true);
    for (auto [t, target] : llvm::enumerate(targets)) {
      std::vector<float> after = checker.read(target);
      std::vector<float> gradient(after.size()), back(after.size());
      for (size_t i = 0; i < after.size(); ++i) {
        gradient[i] = before[t][i] - after[i];
        back[i] = before[t][i] - after[i];
      }
      checker.move(target, back);
      gradients.push_back(std::move(gradient));
    }
    std::printf("loss %.6g on %lld samples\n", loss0,
                static_cast<long long>(bundle.batch()));
    // A NaN compares false with every bound: without this a NaN loss (and
    // so NaN differences) would pass.
    if (!std::isfinite(loss0)) {
      reportError("gradcheck", "the loss is not finite");
      return 1;
    }

    int failures = 0;
    std::normal_distribution<double> normal(0.0, 1.0);
    for (auto [t, target] : llvm::enumerate(targets)) {
      double worst = 0;
      double worstAnalytic = 0, worstNumeric = 0;
      for (int d = 0; d < options.directions; ++d) {
        std::vector<float> v(target.size);
        double norm = 0;
        for (float &x : v) {
          x = static_cast<float>(normal(rng));
          norm += double(x) * x;
        }
        double scale = 1.0 / std::sqrt(std::max(norm, 1e-30));
        double analytic = 0;
        std::vector<float> step(v.size()), twice(v.size()), back(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
          v[i] = static_cast<float>(v[i] * scale);
          analytic += double(gradients[t][i]) * v[i];
          step[i] = static_cast<float>(options.epsilon * v[i]);
          twice[i] = -2.0f * step[i];
          back[i] = step[i];
        }
        // The moves are exact up to rounding; the differences below use
        // the values really reached.
        std::vector<float> w0 = checker.read(target);
        checker.move(target, step);
        std::vector<float> wPlus = checker.read(target);
        double plus = checker.loss(inputs, false);
        checker.move(target, twice);
        std::vector<float> wMinus = checker.read(target);
        double minus = checker.loss(inputs, false);
        checker.move(target, back);
        double span = 0;
        for (size_t i = 0; i < v.size(); ++i)
          span += (double(wPlus[i]) - wMinus[i]) * v[i];
        double numeric = span > 0 ? (plus - minus) / span : 0;
        double error =
            std::fabs(numeric - analytic) /
            std::max({std::fabs(numeric), std::fabs(analytic), options.floor});
        if (!std::isfinite(error))
          error = std::numeric_limits<double>::infinity();
        if (error >= worst) {
          worst = error;
          worstAnalytic = analytic;
          worstNumeric = numeric;
        }
        (void)w0;
      }
      bool ok = worst <= options.tolerance;
      failures += !ok;
      std::printf(
          "%s %s%s: analytic %.6e numeric %.6e rel-error %.2e %s\n",
          target.table ? "table" : "parameter", target.name.c_str(),
          target.table
              ? (" (" + std::to_string(target.ids.size()) + " rows)").c_str()
              : "",
          worstAnalytic, worstNumeric, worst, ok ? "ok" : "FAIL");
    }
    if (failures) {
      reportError("gradcheck", llvm::Twine(failures) +
                                   " parameter(s) disagree with finite "
                                   "differences");
      return 1;
    }
    return 0;
  } catch (const std::exception &e) {
    reportError("gradcheck", e.what());
    return 1;
  }
}

} // namespace heterps::driver
