//===- Trainer.cpp - The training loop of `heterps run --train` -----------===//

#include "heterps/Runtime/Trainer.h"

#include "StepReader.h"
#include "TrainMetrics.h"
#include "WorkerAgreement.h"

#include "heterps/Runtime/DirectoryLock.h"
#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/FaultInjection.h"
#include "heterps/Runtime/Heartbeat.h"
#include "heterps/Runtime/MachineMemory.h"
#include "heterps/Runtime/PassKeyProgram.h"
#include "heterps/Runtime/StableHash.h"
#include "heterps/Runtime/TrainingServer.h"
#include "heterps/Runtime/WorkerGroup.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <utility>

namespace heterps::rt::train {
namespace {

using Clock = std::chrono::steady_clock;

/// How often an evaluation looks for a stop request: often enough to stop
/// within a fraction of a second, rarely enough that a group's collective
/// costs nothing beside the batches.
constexpr int64_t kEvalBatchesPerStopCheck = 16;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// "2", "0.5", "1e-06": a number as a user would write it, to `digits`
/// significant digits.
std::string shortNumber(double value, int digits = 6) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

/// The learning-rate flags that give `rate`, as a user would write them
/// (`digits` significant digits).
std::string learningRateFlags(const LearningRateSchedule &rate,
                              int digits = 6) {
  std::string flags = "--lr-scale " + shortNumber(rate.scale, digits);
  if (rate.warmup())
    flags += " --lr-warmup " + shortNumber(rate.from, digits) + ":" +
             std::to_string(rate.start) + ":" + std::to_string(rate.end);
  return flags;
}

bool sameSchedule(const LearningRateSchedule &a,
                  const LearningRateSchedule &b) {
  if (a.scale != b.scale || a.warmup() != b.warmup())
    return false;
  return !a.warmup() ||
         (a.from == b.from && a.start == b.start && a.end == b.end);
}

/// A resume under flags that change what the steps compute: hash buckets
/// that give every raw value another row are refused, the rest warned
/// about (a user may mean to change them).
void checkResumedRecipe(const std::string &checkpoint,
                        const TrainingRecipe &saved, const TrainingRecipe &now,
                        std::ostream &log) {
  if (saved.hashBuckets > 0 && now.hashBuckets > 0 &&
      saved.hashBuckets != now.hashBuckets)
    throw Error("cannot resume from " + checkpoint +
                ": it was trained with --hash-buckets " +
                std::to_string(saved.hashBuckets) + ", this run hashes into " +
                std::to_string(now.hashBuckets) +
                " ids per sparse field, so its trained rows would stand for "
                "other values; give --hash-buckets " +
                std::to_string(saved.hashBuckets));
  const std::string differs =
      ": the result will differ from an uninterrupted run\n";
  if (saved.shuffle != now.shuffle)
    log << "warning: " << checkpoint << " was trained "
        << (saved.shuffle ? "with" : "without") << " --shuffle, this run "
        << (now.shuffle ? "shuffles" : "does not") << differs;
  if (!sameSchedule(saved.learningRate, now.learningRate)) {
    // Schedules that differ past the short form's digits show all of them.
    const int digits = learningRateFlags(saved.learningRate) ==
                               learningRateFlags(now.learningRate)
                           ? 17
                           : 6;
    log << "warning: " << checkpoint << " was trained with "
        << learningRateFlags(saved.learningRate, digits) << ", this run uses "
        << learningRateFlags(now.learningRate, digits) << differs;
  }
  if (saved.sparseStaleness != now.sparseStaleness)
    log << "warning: " << checkpoint << " was trained with sparse staleness "
        << saved.sparseStaleness << ", this run uses " << now.sparseStaleness
        << differs;
}

/// The classes of a softmax_ce prediction ([N, C] f32), 0 if it is not one.
int64_t predictionClasses(const Bundle &bundle, const TrainingSpec &spec) {
  const OutputSpec &prediction = bundle.outputs()[spec.predictionOutput];
  if (!prediction.batched || prediction.shape.size() != 2)
    return 0;
  return prediction.shape[1];
}

/// Every worker's `results`, concatenated in worker order, on the leader;
/// empty on the others.
SampleResults gatherResults(WorkerGroup &group, const SampleResults &results) {
  SampleResults all;
  all.losses = group.gather(results.losses);
  all.scores = group.gather(results.scores);
  all.labels = group.gather(results.labels);
  return all;
}

} // namespace

namespace {
/// A plain decimal number: digits with at most `points` decimal points, no
/// sign, exponent or spaces.
bool isPlainDecimal(const std::string &number, int points) {
  return !number.empty() && number != "." &&
         number.find_first_not_of("0123456789.") == std::string::npos &&
         std::count(number.begin(), number.end(), '.') <= points;
}
} // namespace

CheckpointInterval parseCheckpointInterval(const std::string &text) {
  auto fail = [&]() {
    return Error("--checkpoint-every '" + text +
                 "': give a positive number of steps (10) or a time (30s, "
                 "2m)");
  };
  if (text.empty())
    throw fail();
  CheckpointInterval interval;
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    if (text.size() > 18)
      throw fail();
    interval.steps = std::stoll(text);
    if (interval.steps == 0)
      throw fail();
    return interval;
  }
  double unit = 0;
  switch (text.back()) {
  case 's':
    unit = 1;
    break;
  case 'm':
    unit = 60;
    break;
  case 'h':
    unit = 3600;
    break;
  default:
    throw fail();
  }
  const std::string number = text.substr(0, text.size() - 1);
  if (!isPlainDecimal(number, 1))
    throw fail();
  interval.seconds = std::stod(number) * unit;
  if (!(interval.seconds > 0) || !std::isfinite(interval.seconds))
    throw fail();
  return interval;
}

int64_t passStepsOf(const Bundle &bundle, const TrainerOptions &options) {
  return options.passSteps.value_or(
      options.group ? 0 : bundle.plannedStep().passSteps);
}

void parsePassMemory(const std::string &text, TrainerOptions &options) {
  auto fail = [&]() {
    return Error("--pass-memory '" + text +
                 "': give bytes (1073741824), a size (512M, 1.5G; K, M, G "
                 "and T are powers of 1024) or auto (the plan's)");
  };
  if (text == "auto") {
    options.passMemoryFromPlan = true;
    options.passMemoryBytes = 0;
    return;
  }
  std::string number = text;
  double unit = 1;
  if (!number.empty()) {
    const char suffixes[] = "KMGT";
    if (const char *suffix = std::strchr(suffixes, number.back());
        suffix && *suffix) {
      unit = std::ldexp(1.0, 10 * int(suffix - suffixes + 1));
      number.pop_back();
    }
  }
  // Bytes are whole; a size may have a fraction.
  if (!isPlainDecimal(number, unit > 1 ? 1 : 0) || number.size() > 18)
    throw fail();
  const double bytes = std::stod(number) * unit;
  if (!(bytes >= 1) || bytes > 9e18)
    throw fail();
  options.passMemoryFromPlan = false;
  options.passMemoryBytes = static_cast<int64_t>(bytes);
}

void parsePassCacheGpus(const std::string &text, TrainerOptions &options) {
  auto fail = [&]() {
    return Error("--pass-cache-gpus '" + text +
                 "': give CUDA device numbers separated by commas (0,1,2,3)");
  };
  std::vector<int> devices;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string number = text.substr(start, comma - start);
    if (!isPlainDecimal(number, 0) || number.size() > 4)
      throw fail();
    devices.push_back(std::stoi(number));
    start = comma + 1;
  }
  if (devices.size() > 1024)
    throw Error("--pass-cache-gpus '" + text.substr(0, 32) +
                "...': at most 1024 shards");
  options.passCacheGpus = std::move(devices);
}

double LearningRateSchedule::at(int64_t step) const {
  if (!warmup() || step >= end)
    return scale;
  if (step <= start)
    return from;
  return from + (scale - from) * double(step - start) / double(end - start);
}

void LearningRateSchedule::check() const {
  if (!(scale > 0) || !std::isfinite(scale))
    throw Error("--lr-scale " + shortNumber(scale) +
                " must be a finite number above 0");
  if (!(from >= 0) || !std::isfinite(from))
    throw Error("--lr-warmup starts at scale " + shortNumber(from) +
                "; give a finite number of at least 0");
  if (warmup() && start < 0)
    throw Error("--lr-warmup's steps must be at least 0");
}

void parseLearningRateWarmup(const std::string &text,
                             LearningRateSchedule &schedule) {
  auto fail = [&](const std::string &why) {
    return Error("--lr-warmup '" + text + "': " + why +
                 "; give FROM:START:END (the scale FROM up to step START, "
                 "then a linear ramp to --lr-scale at step END)");
  };
  const size_t first = text.find(':');
  const size_t second =
      first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos ||
      text.find(':', second + 1) != std::string::npos)
    throw fail("not three fields");
  auto whole = [&](const std::string &field) {
    if (field.empty() || field.size() > 18 ||
        field.find_first_not_of("0123456789") != std::string::npos)
      throw fail("'" + field + "' is not a step");
    return static_cast<int64_t>(std::stoll(field));
  };
  const std::string from = text.substr(0, first);
  char *end = nullptr;
  const double value = std::strtod(from.c_str(), &end);
  if (from.empty() || *end != '\0' || !std::isfinite(value) || value < 0)
    throw fail("'" + from + "' is not a scale of at least 0");
  const int64_t start = whole(text.substr(first + 1, second - first - 1));
  const int64_t last = whole(text.substr(second + 1));
  if (last <= start)
    throw fail("END must come after START");
  schedule.from = value;
  schedule.start = start;
  schedule.end = last;
}

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

namespace {
std::string manifestText(const Bundle &bundle) {
  std::ifstream stream(bundle.path("manifest.json"), std::ios::binary);
  std::ostringstream text;
  if (!(text << stream.rdbuf()))
    throw Error("cannot read " + bundle.path("manifest.json"));
  return text.str();
}
} // namespace

std::string bundleIdentity(const Bundle &bundle) {
  // The manifest less how long the planner took, which differs between
  // two compiles of one model with one command.
  nlohmann::json manifest =
      nlohmann::json::parse(manifestText(bundle), nullptr, false);
  if (manifest.is_discarded())
    throw Error(bundle.path("manifest.json") + " is not JSON");
  if (manifest.contains("plan") && manifest["plan"].is_object())
    manifest["plan"].erase("solve_seconds");
  return stableHashText(manifest.dump());
}

std::vector<std::string> acceptedBundleIdentities(const Bundle &bundle) {
  // Checkpoints written before 2026-12-02 hashed the whole manifest.
  return {bundleIdentity(bundle), stableHashText(manifestText(bundle))};
}

Trainer::Trainer(const Bundle &bundle, TrainerOptions options,
                 std::ostream &log)
    : bundle(bundle), options(std::move(options)), log(log) {
  // A checkpoint directory without an interval: one checkpoint at the end
  // only would lose a whole run to a kill.
  TrainerOptions &o = this->options;
  if (!o.checkpointDir.empty() && o.checkpointEvery == 0 &&
      o.checkpointEverySeconds == 0)
    o.checkpointEverySeconds = kDefaultCheckpointSeconds;
}

namespace {

/// The settings the workers of a group must share (WorkerAgreement.h):
/// those that decide when they meet (length, log, evaluation and
/// checkpoint steps) and what they compute.
std::vector<SharedSetting> settingsWorkersShare(const Bundle &bundle,
                                                const TrainerOptions &o,
                                                int64_t batch, bool hasEval) {
  auto count = [](const char *flag, int64_t value) {
    return value > 0 ? std::string(flag) + " " + std::to_string(value)
                     : "no " + std::string(flag);
  };
  std::vector<SharedSetting> settings = {
      // Paths may differ between machines; the manifest may not.
      {"bundle",
       "the bundle whose manifest hashes to " + bundleIdentity(bundle)},
      {"batch", "--batch " + std::to_string(batch)},
      {"length", o.samples > 0 ? "--samples " + std::to_string(o.samples)
                               : "--steps " + std::to_string(o.steps)},
      {"log", "--log-every " + std::to_string(o.logEvery)},
      {"eval", hasEval ? count("--eval-every", o.evalEvery) + " and "
                                                              "evaluation data"
                       : std::string("no evaluation data (--eval)")},
      {"checkpoint-dir",
       o.checkpointDir.empty() ? "no --checkpoint-dir" : "a --checkpoint-dir"},
      {"checkpoint-every",
       o.checkpointEverySeconds > 0
           ? "--checkpoint-every " + shortNumber(o.checkpointEverySeconds, 17) +
                 "s"
           : count("--checkpoint-every", o.checkpointEvery)},
      // Worker 0 writes the dump: one given to another only was ignored.
      {"dump-parameters", o.dumpParameters.empty() ? "no --dump-parameters"
                                                   : "a --dump-parameters"},
      {"seed", "--seed " + std::to_string(o.seed)},
      {"shuffle", o.shuffle ? "--shuffle" : "no --shuffle"},
      {"hash-buckets", count("--hash-buckets", o.hashBuckets)},
      {"learning rate", learningRateFlags(o.learningRate, 17)},
  };
  // The data itself: the paths may differ between machines, node-local
  // copies of one path may differ in content, and workers on other data
  // train silently wrong (or fail only at the end of an evaluation).
  auto data = [](const std::string &what, const std::string &tsv,
                 const std::vector<data::NpyInput> &arrays) {
    std::string shown = what + " of ";
    if (!tsv.empty())
      shown += fileFingerprint(tsv);
    for (const data::NpyInput &array : arrays)
      shown += (&array == &arrays.front() ? "" : "; ") + array.name + " " +
               fileFingerprint(array.path);
    return SharedSetting{what, shown};
  };
  settings.push_back(data("training data", o.data, o.dataInputs));
  if (hasEval)
    settings.push_back(data("evaluation data", o.eval, o.evalInputs));
  return settings;
}

/// Refuses a number of hash buckets whose largest sparse id the model maps
/// past a table's rows. The server found it only when such an id came: 101
/// buckets on tables of 2,600 rows (26 fields x 100) trained 4 steps and
/// wrote their checkpoints, then failed with "id 2600 is outside [-2600,
/// 2600)", not naming the flag. The pass-key program maps a micro-batch of
/// the largest id to the rows it pulls; without one, the server checks as
/// before.
void checkBucketsFitTables(const Bundle &bundle, const data::CtrInputs &layout,
                           int64_t buckets, int64_t given) {
  const PassKeysSpec *keys = bundle.passKeys();
  if (layout.sparse < 0 || !keys || !keys->unavailable.empty())
    return;
  std::map<std::string, int64_t> rows;
  for (const TrainableTable &table : bundle.training()->tables)
    rows[table.name] = table.rows;
  PassKeyProgram program(bundle, 1);
  // The first row past its table that ids up to `largest` reach, as
  // "row R of table 'T', which has N rows"; empty when they all fit.
  auto pastTable = [&](int64_t largest) {
    std::vector<HostTensor> inputs;
    for (const InputSpec &input : bundle.inputs()) {
      HostTensor tensor(input.dtype, input.shape);
      if (&input == &bundle.inputs()[layout.sparse])
        for (size_t i = 0, n = numElements(input.shape); i != n; ++i) {
          if (input.dtype == DType::I64)
            reinterpret_cast<int64_t *>(tensor.data.data())[i] = largest;
          else
            reinterpret_cast<int32_t *>(tensor.data.data())[i] =
                int32_t(largest);
        }
      inputs.push_back(std::move(tensor));
    }
    std::string found;
    program.run(
        inputs, bundle.batch(),
        [&](const std::string &table, const int64_t *ids, size_t count) {
          auto known = rows.find(table);
          for (size_t i = 0; known != rows.end() && i != count && found.empty();
               ++i)
            if (ids[i] >= known->second || ids[i] < -known->second)
              found = "row " + std::to_string(ids[i]) + " of table '" + table +
                      "', which has " + std::to_string(known->second) + " rows";
        });
    return found;
  };
  const std::string past = pastTable(buckets - 1);
  if (past.empty())
    return;
  // The most buckets whose ids fit, for the message (ids 1 .. H - 1).
  int64_t fits = 1, fails = buckets;
  while (fails - fits > 1) {
    const int64_t middle = fits + (fails - fits) / 2;
    (pastTable(middle - 1).empty() ? fits : fails) = middle;
  }
  throw Error((given ? "--hash-buckets " + std::to_string(buckets)
                     : "the default of " + std::to_string(buckets) +
                           " hash buckets (a table's rows / 26)") +
              ": the model maps sparse id " + std::to_string(buckets - 1) +
              " to " + past +
              (fits >= 2 ? "; at most " + std::to_string(fits) + " buckets fit"
                         : std::string("; no number of buckets fits")));
}

/// The data the options name for training (looped) or for evaluation (one
/// pass): .npy arrays or Criteo TSV; null when there is none. Opening reads
/// and checks everything, so bad data fails before a step runs.
std::unique_ptr<data::BatchSource>
openSource(const Bundle &bundle, const TrainerOptions &o, bool evaluation) {
  const TrainingSpec &spec = *bundle.training();
  const std::vector<data::NpyInput> &arrays =
      evaluation ? o.evalInputs : o.dataInputs;
  if (!arrays.empty()) {
    auto source = std::make_unique<data::NpyBatchSource>(
        bundle.inputs(), arrays, /*loop=*/!evaluation,
        evaluation ? "--eval-input" : "--data-input");
    // The loss kernel would stop the run at the first bad id; say so now,
    // naming the file and the sample.
    if (spec.loss == "softmax_ce" &&
        bundle.inputs()[spec.labelInput].dtype == DType::I64)
      if (int64_t classes = predictionClasses(bundle, spec))
        source->checkClassIds(spec.labelInput, classes);
    if (spec.loss == "bce")
      source->checkProbabilities(spec.labelInput);
    // Evaluation data is read at the end, after the checkpoints and the
    // parameter dump: a NaN there failed the run then (exit 1, outputs
    // left).
    if (evaluation)
      source->checkAllFinite();
    return source;
  }
  const std::string &path = evaluation ? o.eval : o.data;
  if (path.empty())
    return nullptr;
  data::CtrInputs layout = data::mapCtrInputs(bundle);
  data::ReaderOptions reader =
      data::ctrReaderOptions(bundle, layout, o.hashBuckets);
  if (!evaluation && !reader.tableSizes.empty())
    checkBucketsFitTables(bundle, layout, reader.tableSizes[0], o.hashBuckets);
  reader.loop = !evaluation;
  return std::make_unique<data::CriteoBatchSource>(
      bundle, layout, path, std::move(reader),
      evaluation ? "--eval" : "--data");
}

/// The step of a loss-log line ("STEP LOSS", as the trainer writes it and
/// nothing after), or std::nullopt for any other line.
std::optional<long long> lossLogStep(const std::string &line) {
  long long step = 0;
  double loss = 0;
  int used = 0;
  if (std::sscanf(line.c_str(), "%lld %lf%n", &step, &loss, &used) != 2 ||
      size_t(used) != line.size())
    return std::nullopt;
  return step;
}

/// The per-step loss log: new, or for a run resumed at `resumedStep` the
/// lines of the steps through it (a killed run may have written later
/// ones, which the resumed run writes again), rewritten in one rename. A
/// file that is not a loss log is refused rather than rewritten; a log
/// that lacks steps before the resumed one (another file, or one begun
/// later) is used with a warning naming the steps it lacks.
std::ofstream openLossLog(const std::string &path,
                          std::optional<int64_t> resumedStep,
                          std::ostream &warnings) {
  auto cannot = [&] {
    return Error("cannot write the loss log '" + path +
                 "': " + std::strerror(errno));
  };
  if (resumedStep) {
    std::ifstream in(path);
    std::string kept, line;
    int64_t lineNumber = 0, first = 0, last = 0;
    bool gap = false;
    while (std::getline(in, line)) {
      ++lineNumber;
      const std::optional<long long> parsedStep = lossLogStep(line);
      const bool parsed = parsedStep && *parsedStep >= 1;
      const long long step = parsedStep.value_or(0);
      // A kill or a full disk can cut the last line short, even to one
      // that parses ("265 0.4042"): it is a step's to write again.
      if (in.eof())
        break;
      if (!parsed)
        throw Error("--loss-log '" + path + "' line " +
                    std::to_string(lineNumber) + " is not 'STEP LOSS' ('" +
                    line.substr(0, 60) +
                    "'); it is not a loss log, and resuming would rewrite "
                    "it: give another file");
      if (step > *resumedStep)
        continue;
      gap = gap || (last > 0 && step != last + 1);
      first = first ? first : step;
      last = step;
      kept += line + "\n";
    }
    if (first == 0 && *resumedStep > 0)
      warnings << "warning: the loss log '" << path << "' holds no step up to "
               << *resumedStep
               << ", where this run resumes; it will lack steps 1-"
               << *resumedStep << "\n";
    else if (gap || first != 1 || last != *resumedStep)
      warnings << "warning: the loss log '" << path << "' holds steps " << first
               << "-" << last << (gap ? " with gaps" : "")
               << " and this run resumes after step " << *resumedStep
               << "; it will lack the steps missing from it\n";
    const std::string temporary = path + ".tmp";
    {
      std::ofstream out(temporary, std::ios::trunc);
      if (!(out << kept) || !out.flush()) {
        const Error error = cannot();
        std::remove(temporary.c_str());
        throw error;
      }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      std::remove(temporary.c_str());
      throw cannot();
    }
  }
  std::ofstream log(path, resumedStep ? std::ios::app : std::ios::trunc);
  if (!log)
    throw cannot();
  return log;
}

/// Refuses a --loss-log that would overwrite something else: the run's
/// data, a file of the bundle or the checkpoints, a FIFO or device (opening
/// one blocks), or, for a new run, a file that is not a loss log.
void checkLossLogTarget(const Bundle &bundle, const TrainerOptions &o,
                        bool resuming) {
  namespace fs = std::filesystem;
  const std::string &path = o.lossLog;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  auto refuse = [&](const std::string &why) {
    return Error("--loss-log '" + path + "' " + why +
                 "; give a file of its own");
  };
  // A new file too: it would be written into the bundle or among the
  // checkpoints (only an existing one was refused).
  const fs::path target = fs::weakly_canonical(path, error);
  for (const auto &[directory, what] :
       {std::pair<std::string, std::string>{bundle.directory(), "the bundle"},
        {o.checkpointDir, "--checkpoint-dir"}}) {
    if (directory.empty())
      continue;
    const fs::path inside = fs::weakly_canonical(directory, error);
    auto mismatch = std::mismatch(inside.begin(), inside.end(), target.begin(),
                                  target.end());
    if (mismatch.first == inside.end())
      throw refuse("is inside " + what + " '" + directory + "'");
  }
  if (!fs::exists(status)) {
    // Written from the first step on, so that a run refused before it
    // leaves no file: whether it can be is known now.
    fs::path parent = fs::absolute(path, error).parent_path();
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
      throw Error("cannot write the loss log '" + path +
                  "': " + std::strerror(errno));
    return;
  }
  // A device (/dev/stdout) or a pipe a process reads takes the lines; a
  // FIFO nobody reads would block the open, past SIGTERM.
  if (fs::is_fifo(status)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      throw refuse("is a FIFO that no process reads");
    ::close(fd);
  }
  if (fs::is_directory(status))
    throw refuse("is a directory");
  if (!fs::is_regular_file(status))
    return;
  std::vector<std::pair<std::string, std::string>> others;
  for (const std::string *file : {&o.data, &o.eval})
    if (!file->empty())
      others.push_back({*file, file == &o.data ? "--data" : "--eval"});
  for (const data::NpyInput &input : o.dataInputs)
    others.push_back({input.path, "--data-input " + input.name});
  for (const data::NpyInput &input : o.evalInputs)
    others.push_back({input.path, "--eval-input " + input.name});
  for (const auto &[file, flag] : others)
    if (fs::equivalent(path, file, error))
      throw refuse("is the " + flag + " file");
  if (resuming)
    return; // openLossLog reads it and refuses what is not a loss log.
  std::ifstream in(path);
  std::string line;
  if (std::getline(in, line) && !lossLogStep(line))
    throw refuse("holds something other than a loss log (line 1: '" +
                 line.substr(0, 60) + "'), which a new run would replace");
}

/// Refuses a directory the run would write into only after training (a
/// checkpoint, a parameter dump) that cannot be written: found then, the
/// training would be lost. `path` may not exist yet; its nearest existing
/// ancestor must then take a new entry.
void checkWritableDirectory(const std::string &path, const char *flag) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path existing = fs::absolute(path, error);
  while (!existing.empty() && !fs::exists(existing, error) &&
         existing != existing.parent_path())
    existing = existing.parent_path();
  auto refuse = [&](const std::string &why) {
    return Error(std::string(flag) + " '" + path + "': " + why);
  };
  if (!fs::is_directory(existing, error))
    throw refuse("'" + existing.string() + "' is not a directory");
  std::string probe = (existing / ".heterps-write-test-XXXXXX").string();
  const int descriptor = ::mkstemp(probe.data());
  if (descriptor < 0)
    throw refuse("cannot write in '" + existing.string() +
                 "': " + std::strerror(errno));
  ::close(descriptor);
  ::unlink(probe.c_str());
}

/// Whether two paths, which need not exist yet, name one directory.
bool sameDirectory(const std::string &a, const std::string &b) {
  auto resolved = [](const std::string &path) {
    std::error_code error;
    std::filesystem::path real = std::filesystem::weakly_canonical(path, error);
    return error ? std::filesystem::absolute(path, error).lexically_normal()
                 : real;
  };
  return resolved(a) == resolved(b);
}

/// Bytes of one sample of every batched input.
double sampleInputBytes(const Bundle &bundle) {
  double sampleBytes = 0;
  for (const InputSpec &input : bundle.inputs())
    if (input.batched && input.shape[0] > 0)
      sampleBytes += double(input.bytes()) / double(input.shape[0]);
  return sampleBytes;
}

/// Bytes of the server keys the pass-key program computes for one sample
/// (8 a key), 0 without the program.
double sampleKeyBytes(const Bundle &bundle) {
  const PassKeysSpec *keys = bundle.passKeys();
  double sampleBytes = 0;
  if (keys && keys->unavailable.empty())
    for (const TensorSpec &output : keys->outputs)
      if (!output.shape.empty() && output.shape[0] > 0)
        sampleBytes +=
            8.0 * double(numElements(output.shape)) / double(output.shape[0]);
  return sampleBytes;
}

/// Refuses passes whose steps, read ahead, the machine cannot hold: a pass
/// trains while the next one's steps are read (two passes of data at once).
/// A sample held costs twice its inputs and keys: the CTR model of
/// bench/generate_ctr_model.py (264 bytes of inputs, 416 of keys) held
/// 1.2 KB a sample in passes of 64 and 128 steps (docs/Training.md).
void checkPassFitsMemory(const Bundle &bundle, int64_t batch, int64_t passSteps,
                         int64_t runSteps, const std::string &passStepsFrom) {
  const int64_t steps = runSteps > 0 ? std::min(passSteps, runSteps)
                                     : passSteps; // none past the run's end
  const double passBytes = 2 * 2 *
                           (sampleInputBytes(bundle) + sampleKeyBytes(bundle)) *
                           double(batch) * double(steps);
  const double machineBytes = machineMemoryBytes();
  if (machineBytes > 0 && passBytes > machineBytes / 2)
    throw Error(passStepsFrom + ": two passes of " + std::to_string(steps) +
                " steps of " + std::to_string(batch) + " samples hold about " +
                fixed(passBytes / (1 << 30), 1) +
                " GiB (their inputs and sparse keys), more than half of this "
                "machine's " +
                fixed(machineBytes / (1 << 30), 1) +
                " GiB of memory; give fewer steps");
}

/// Refuses a step whose inputs the machine cannot hold: the step trained
/// and the next one read ahead take them twice. Allocating them would end
/// the process instead of naming the batch.
void checkStepFitsMemory(const Bundle &bundle, int64_t batch,
                         const std::string &batchFrom) {
  const double stepBytes = 2 * sampleInputBytes(bundle) * double(batch);
  const double machineBytes = machineMemoryBytes();
  if (machineBytes > 0 && stepBytes > machineBytes)
    throw Error(batchFrom + ": a step of " + std::to_string(batch) +
                " samples holds " + fixed(stepBytes / (1 << 30), 1) +
                " GiB of inputs (the step and the next one read ahead), "
                "more than this machine's " +
                fixed(machineBytes / (1 << 30), 1) + " GiB of memory");
}

} // namespace

int64_t stepSamples(const Bundle &bundle, int64_t batch, int workers) {
  const int64_t microBatch = bundle.batch();
  if (microBatch <= 0)
    throw Error("bundle '" + bundle.directory() +
                "' has no compiled batch; compile it with --batch");
  const int64_t samples =
      batch > 0
          ? batch
          : int64_t(workers) * bundle.plannedStep().microBatches * microBatch;
  if (batch < 0 || samples % microBatch != 0)
    throw Error("--batch " + std::to_string(batch) +
                " is not a multiple of the bundle's batch " +
                std::to_string(microBatch) +
                " (a step is a whole number of micro-batches)");
  // Every worker trains at least one micro-batch of a step.
  (void)stepSlice(samples / microBatch, workers, 0);
  return samples;
}

TrainSummary Trainer::run() {
  const TrainerOptions &o = options;
  if (!bundle.training())
    throw Error("bundle '" + bundle.directory() +
                "' is not a training bundle (its manifest.json has no "
                "\"training\" section); compile the model with --train");
  const TrainingSpec &spec = *bundle.training();

  // Flags, checked before anything is read or written.
  const bool npy = !o.dataInputs.empty();
  if (npy && !o.data.empty())
    throw Error("--data (Criteo TSV) and --data-input (.npy arrays) are "
                "mutually exclusive; give one of them");
  if (!npy && o.data.empty())
    throw Error("no training data: give --data FILE (Criteo TSV) or "
                "--data-input NAME=FILE.npy for every input of the bundle");
  if (!o.eval.empty() && !o.evalInputs.empty())
    throw Error("--eval (Criteo TSV) and --eval-input (.npy arrays) are "
                "mutually exclusive; give one of them");
  if (npy && !o.eval.empty())
    throw Error("--eval reads Criteo TSV; with --data-input evaluate on .npy "
                "arrays with --eval-input NAME=FILE.npy");
  if (!npy && !o.evalInputs.empty())
    throw Error("--eval-input evaluates on .npy arrays; with --data (Criteo "
                "TSV) evaluate with --eval FILE");
  if (npy && o.hashBuckets != 0)
    throw Error("--hash-buckets hashes the sparse fields of Criteo data; ids "
                "in .npy arrays are fed as they are");
  const bool hasEval = !o.eval.empty() || !o.evalInputs.empty();
  // Steps of the plan's micro-batches let its stages overlap as priced;
  // the workers of an MPI job each run their own pipeline, so by default
  // each takes the plan's micro-batches of every step.
  const int64_t plannedMicroBatches = bundle.plannedStep().microBatches;
  const int64_t workers = o.group ? o.group->size() : 1;
  const int64_t batch = stepSamples(bundle, o.batch, int(workers));
  const int64_t microBatch = bundle.batch(); // positive: stepSamples checked
  checkStepFitsMemory(
      bundle, batch,
      o.batch > 0
          ? "--batch " + std::to_string(o.batch)
          : "the plan's " + std::to_string(plannedMicroBatches) +
                " micro-batches a step" +
                (o.group ? " on each of " + std::to_string(workers) + " workers"
                         : std::string()));
  if (o.samples > 0 && o.steps != 0)
    throw Error("give the run's length as --steps N or as --samples N, not "
                "both");
  // Past 2^53 the step arithmetic overflows (and no run gets there).
  constexpr int64_t kMostSamplesOrSteps = int64_t(1) << 53;
  if (o.samples < 0 || o.samples > kMostSamplesOrSteps)
    throw Error("--samples " + std::to_string(o.samples) +
                " must be 1 to 2^53");
  if (o.samples == 0 && (o.steps < 1 || o.steps > kMostSamplesOrSteps))
    throw Error("--steps " + std::to_string(o.steps) + " must be 1 to 2^53");
  if (o.logEvery < 1)
    throw Error("--log-every must be at least 1");
  if (o.evalEvery < 0 || (o.evalEvery > 0 && !hasEval))
    throw Error("--eval-every needs --eval FILE (or --eval-input "
                "NAME=FILE.npy) and a positive count");
  const bool timedCheckpoints = o.checkpointEverySeconds > 0;
  if (o.checkpointEvery < 0 || o.checkpointEverySeconds < 0 ||
      (o.checkpointEvery > 0 && timedCheckpoints) ||
      ((o.checkpointEvery > 0 || timedCheckpoints) && o.checkpointDir.empty()))
    throw Error("--checkpoint-every needs --checkpoint-dir DIR and a "
                "positive count");
  if (o.resume && o.checkpointDir.empty())
    throw Error("--resume needs --checkpoint-dir DIR");
  if (o.keepCheckpoints < 1)
    throw Error("--keep-checkpoints must be at least 1");
  // Threads and shards are made up front; far past any machine they would
  // exhaust memory or the thread limit before naming the flag.
  if (o.threads < 0 || o.threads > kMostThreadsPerStage)
    throw Error("--threads " + std::to_string(o.threads) +
                " must be 0 (as many as cores) to " +
                std::to_string(kMostThreadsPerStage));
  if (o.psShards > 4096)
    throw Error("--ps-shards " + std::to_string(o.psShards) +
                " must be at most 4096");
  o.learningRate.check();

  // Data-parallel workers: each trains on its slice of the step's
  // micro-batches and evaluates its share of the evaluation batches; only
  // the leader logs, checkpoints and dumps.
  WorkerGroup *group = o.group;
  const bool leader = !group || group->leader();
  StepSlice slice{0, batch / microBatch};
  if (group) {
    // Before the first collective: workers that disagree would meet at
    // different steps and wait for each other for ever.
    checkWorkersAgree(*group, settingsWorkersShare(bundle, o, batch, hasEval));
    slice = stepSlice(batch / microBatch, group->size(), group->rank());
  }

  // Liveness for a supervisor, and the faults a test asked for: both read
  // the environment, and a malformed HETERPS_FAULT fails the run here.
  const int rank = group ? group->rank() : 0;
  Heartbeat heartbeat(RankRole::Worker, rank,
                      HeartbeatOptions::fromEnvironment(RankRole::Worker));
  const FaultInjector faults =
      FaultInjector::fromEnvironment(RankRole::Worker, rank);
  // An MPI job's launcher knows its ranks and checks them.
  if (const char *specs = std::getenv("HETERPS_FAULT");
      !group && specs && *specs)
    checkFaultsFitRanks(parseFaultSpecs(specs), RankCounts{},
                        "environment variable HETERPS_FAULT: ");

  std::unique_ptr<data::BatchSource> source = openSource(bundle, o, false);
  std::unique_ptr<data::BatchSource> evalSource;
  if (hasEval) {
    evalSource = openSource(bundle, o, true);
    // Read now, not at the first evaluation after hours of training.
    std::vector<HostTensor> probe;
    if (evalSource->next(microBatch, probe) == 0) {
      const std::string warning = evalSource->warning();
      throw Error("the evaluation data " + evalSource->describe() +
                  " holds no valid rows" +
                  (warning.empty() ? std::string() : " (" + warning + ")"));
    }
    evalSource->restart();
  }

  // Checked now, not after hours of training.
  if (leader && !o.checkpointDir.empty())
    checkWritableDirectory(o.checkpointDir, "--checkpoint-dir");
  if (leader && !o.dumpParameters.empty())
    checkWritableDirectory(o.dumpParameters, "--dump-parameters");

  // Resume, or refuse to mix a new run into an old run's checkpoints.
  const std::string identity = bundleIdentity(bundle);
  std::optional<FoundCheckpoint> resumed;
  std::optional<DirectoryLock> checkpointLock;
  if (!o.checkpointDir.empty() && leader) {
    checkpointLock.emplace(o.checkpointDir, "checkpoint directory",
                           /*waitSeconds=*/30, o.stopRequested);
    tidyCheckpointDirectory(o.checkpointDir);
    if (o.resume) {
      resumed = findResumeCheckpoint(o.checkpointDir,
                                     acceptedBundleIdentities(bundle), log);
      // Newer ones were skipped as corrupt (said above).
      if (resumed)
        if (std::string aside =
                setAsideCheckpoints(o.checkpointDir, resumed->state.step);
            !aside.empty())
          log << "warning: the damaged checkpoints past step "
              << resumed->state.step << " are kept as " << aside << "\n";
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
  // The step shape: what the flags say, else what the plan was priced
  // with, else the direct, exact step.
  // An MPI job's workers do not take the single-process shapes.
  const Bundle::PlannedStep &plannedStep = bundle.plannedStep();
  const int64_t passSteps = passStepsOf(bundle, o);
  const bool passCacheOnGpu = o.passCacheOnGpu.value_or(
      passSteps > 0 && !o.passSteps && plannedStep.passCacheOnGpu);
  const int sparseStaleness =
      o.sparseStaleness.value_or(group ? 0 : plannedStep.sparseStaleness);
  // Passes the plan chose keep within the memory it gave them.
  const bool passMemoryFromPlan =
      o.passMemoryFromPlan ||
      (passSteps > 0 && !o.passSteps && o.passMemoryBytes == 0 &&
       bundle.plannedPassMemoryBytes().value_or(0) > 0);
  if (passSteps < 0)
    throw Error("--pass-steps must be at least 0");
  if (passSteps > 0)
    checkPassFitsMemory(
        bundle, batch, passSteps,
        o.samples > 0 ? (o.samples + batch - 1) / batch : o.steps,
        o.passSteps ? "--pass-steps " + std::to_string(passSteps)
                    : "the plan's pass_steps " + std::to_string(passSteps));
  if (o.psMemoryRows < 0)
    throw Error("--ps-memory-rows must be at least 0");
  if (o.passMemoryBytes < 0)
    throw Error("--pass-memory must be at least 0");
  if (passCacheOnGpu && passSteps == 0)
    throw Error("--pass-cache-device gpu needs --pass-steps");
  if (!o.passCacheGpus.empty() && !passCacheOnGpu)
    throw Error("--pass-cache-gpus needs the pass cache in GPU memory "
                "(--pass-cache-device gpu, or a plan that keeps it there)");
  if ((o.passMemoryBytes > 0 || o.passMemoryFromPlan) && passSteps == 0)
    throw Error("--pass-memory needs --pass-steps (the most steps a pass "
                "reads ahead)");
  int64_t passMemoryBytes = o.passMemoryBytes;
  if (passMemoryFromPlan) {
    std::optional<int64_t> planned = bundle.plannedPassMemoryBytes();
    if (!planned)
      throw Error("--pass-memory auto: the plan of " + bundle.directory() +
                  " gives no memory for a pass cache (no stage of it looks "
                  "up sparse rows, or an older compiler made it); give a size");
    if (*planned == 0)
      throw Error("--pass-memory auto: the plan of " + bundle.directory() +
                  " leaves no memory for a pass cache on the devices that "
                  "look up sparse rows; give a size");
    passMemoryBytes = *planned;
  }
  if (sparseStaleness < 0 || sparseStaleness > 1)
    throw Error("--sparse-staleness must be 0 or 1");
  if (group && sparseStaleness != 0)
    throw Error("--sparse-staleness is for a single process; an MPI job "
                "takes --consistency=async --staleness K");
  if (group && (passSteps > 0 || o.psMemoryRows > 0))
    throw Error(
        std::string(passSteps > 0 ? "--pass-steps" : "--ps-memory-rows") +
        " is for a single process, not an MPI job");
  if (!o.psStorageDir.empty() && !o.checkpointDir.empty() &&
      sameDirectory(o.psStorageDir, o.checkpointDir))
    throw Error("--ps-storage-dir and --checkpoint-dir are both '" +
                o.psStorageDir +
                "': the storage tier's databases are the run's scratch, "
                "replaced at its start; give them different directories");
  if (o.psMemoryRows > 0 && o.psStorageDir.empty())
    throw Error("--ps-memory-rows needs --ps-storage-dir DIR: the rows "
                "beyond the memory limit live in RocksDB under DIR");
  if (o.psMemoryRows == 0 && !o.psStorageDir.empty())
    throw Error("--ps-storage-dir needs --ps-memory-rows R of at least 1: "
                "the rows per shard each sparse table keeps in memory, the "
                "rest living in RocksDB under the directory");
  // Per-step losses need every worker's results every step, which groups
  // gather only at log steps.
  if (!o.lossLog.empty() && group)
    throw Error("--loss-log is for a single process, not an MPI job");
  TrainerState state;
  state.seed = o.seed;
  state.bundle = identity;
  state.batch = batch;
  state.position = source->position();
  state.recipe = TrainingRecipe{o.shuffle, source->hashBuckets(),
                                o.learningRate, sparseStaleness};
  if (resumed && resumed->state.recipe)
    checkResumedRecipe(resumed->path, *resumed->state.recipe, *state.recipe,
                       log);
  if (resumed && resumed->state.seed != o.seed)
    state.seed = resumed->state.seed;
  // After the seed is known: a resumed run continues the same order.
  if (o.shuffle)
    source->shuffle(state.seed);
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
    try {
      source->seek(state.position);
    } catch (const Error &error) {
      throw Error("cannot resume from " + resumed->path + ": " + error.what());
    }
  }
  heartbeat.setStep(state.step);

  // The step the run ends at, and the samples of that step: --steps, or
  // with --samples as many steps as the samples left take, the last one
  // taking what remains.
  int64_t lastStep = o.steps, lastStepSamples = batch;
  if (o.samples > 0) {
    const int64_t remaining = o.samples - state.samples;
    lastStep =
        state.step + std::max<int64_t>(0, (remaining + batch - 1) / batch);
    if (remaining > 0)
      lastStepSamples = remaining - (lastStep - state.step - 1) * batch;
    // Checked now, from the resumed state: not after hours of training.
    const std::string where =
        "--samples " + std::to_string(o.samples) + " leaves a last step of " +
        std::to_string(lastStepSamples) + " samples (the run is at " +
        std::to_string(state.samples) + " samples, steps of --batch " +
        std::to_string(batch) + ")";
    // What to give instead: the samples without the last step, or with a
    // last step that works.
    // Workers may sit the last step out (lastStepSlice), but not when
    // stage ranks expect every worker's micro-batches.
    const int workers = group && group->stageControl() ? group->size() : 1;
    const int64_t lastMicroBatches =
        (lastStepSamples + microBatch - 1) / microBatch;
    const int64_t withoutIt = o.samples - lastStepSamples;
    const std::string instead =
        "; give --samples " +
        (withoutIt > state.samples ? std::to_string(withoutIt) + " or "
                                   : std::string()) +
        std::to_string(withoutIt +
                       std::max<int64_t>(lastMicroBatches, workers) *
                           microBatch);
    if (lastStepSamples % microBatch != 0)
      throw Error(where +
                  ", not a whole number of the bundle's micro-batches "
                  "of " +
                  std::to_string(microBatch) + instead);
    if (lastMicroBatches < workers)
      throw Error(where + ", " + std::to_string(lastMicroBatches) +
                  " micro-batches of " + std::to_string(microBatch) + " for " +
                  std::to_string(workers) +
                  " workers, who need one each when stages run in other "
                  "ranks" +
                  instead + ", or run at most " +
                  std::to_string(lastMicroBatches) +
                  (lastMicroBatches == 1 ? " worker" : " workers"));
  }

  // A test whose fault never fires would pass without what it checks.
  for (const FaultSpec &late : faults.after(lastStep))
    log << "warning: HETERPS_FAULT " << late.text << ": the run ends at step "
        << lastStep << ", before step " << late.step << "; it will not fire\n";

  TrainingServerOptions serverOptions;
  serverOptions.seed = state.seed;
  // One shard per thread by default, so a step's pulls and pushes use every
  // core; the shard count changes no result.
  // A worker of an MPI job without --threads takes its machine's share.
  const int threads =
      o.threads > 0 ? o.threads : (o.group ? o.group->defaultThreads() : 0);
  serverOptions.shards =
      o.psShards > 0
          ? o.psShards
          : static_cast<size_t>(std::max(
                1, threads > 0 ? threads
                               : int(std::thread::hardware_concurrency())));
  if (group)
    serverOptions.store = &group->store();
  serverOptions.memoryRowsPerShard = static_cast<size_t>(o.psMemoryRows);
  serverOptions.storageDirectory = o.psStorageDir;
  serverOptions.passCache = passSteps > 0;
  serverOptions.passMemoryBytes = static_cast<size_t>(passMemoryBytes);
  serverOptions.passCacheOnGpu = passCacheOnGpu;
  if (!o.passCacheGpus.empty())
    serverOptions.passCacheGpus = o.passCacheGpus;
  serverOptions.sparseStaleness = sparseStaleness;
  // Made when a GPU stage first asks for a parameter: a bundle without one
  // never touches CUDA.
  if (!group && o.denseParametersOnGpu && !o.gpuStagesOnCpu)
    serverOptions.denseCache = DenseCacheKind::Gpu;
  if (!o.passSteps && passSteps > 0)
    log << "passes of " << passSteps << " steps through a pass cache in "
        << (passCacheOnGpu ? "GPU" : "host") << " memory, as the plan says\n";
  if (!o.sparseStaleness && sparseStaleness > 0)
    log << "sparse staleness " << sparseStaleness << ", as the plan says\n";
  if (o.batch == 0 && plannedMicroBatches > 1) {
    log << "steps of " << plannedMicroBatches << " micro-batches of "
        << microBatch;
    if (group)
      log << " on each of " << workers << " workers";
    log << " (" << batch << " samples), as the plan says\n";
  }
  // Fewer micro-batches than the plan's fill and drain its stages more
  // often than it priced (docs/Planning.md, "The step").
  const int64_t workerMicroBatches = batch / microBatch / workers;
  if (workerMicroBatches < plannedMicroBatches && leader)
    log << "note: steps of " << workerMicroBatches
        << (workerMicroBatches == 1 ? " micro-batch" : " micro-batches")
        << (group ? " a worker" : "")
        << " keep the plan's stages from overlapping as it "
           "priced; its throughput assumes steps of "
        << plannedMicroBatches << " (--batch "
        << workers * plannedMicroBatches * microBatch << ")\n";
  if (passSteps > 0 && !passCacheOnGpu && o.psMemoryRows == 0 && o.passSteps)
    log << "note: passes through host memory over tables that are all in "
           "memory cost time (docs/benchmarks/training.md#pass-cache); they "
           "pay with --ps-memory-rows or --pass-cache-device gpu\n";
  if (passMemoryFromPlan)
    log << "pass cache: at most " << passMemoryBytes << " bytes ("
        << fixed(double(passMemoryBytes) / (1 << 20), 1)
        << " MiB), as the plan gives\n";
  std::unique_ptr<TrainingServer> madeServer = [&] {
    try {
      return std::make_unique<TrainingServer>(bundle, serverOptions);
    } catch (const Error &error) {
      if (!passCacheOnGpu || o.passCacheOnGpu)
        throw;
      throw Error(std::string(error.what()) + "; the plan of " +
                  bundle.directory() +
                  " keeps the pass cache in GPU memory: --pass-cache-device "
                  "host keeps it in host memory, --pass-steps 0 trains "
                  "without passes");
    }
  }();
  TrainingServer &server = *madeServer;
  if (resumed) {
    server.load(resumed->path + "/ps");
    if (leader) // shards count their applied steps from here
      server.parameterStore().resumedAtStep(state.step);
    log << "resumed from " << resumed->path << " (step " << state.step
        << ", data " << state.position << ")\n";
  }

  // Stages in other processes start after the load, so their servers read
  // the resumed parameters.
  StageControl *stages = group ? group->stageControl() : nullptr;
  if (stages) {
    StageControl::Settings settings;
    settings.seed = state.seed;
    settings.initScale = serverOptions.initScale;
    settings.threads = o.threads; // stage ranks take their own share
    settings.gpuStagesOnCpu = o.gpuStagesOnCpu;
    settings.step = state.step;
    stages->start(bundle, settings);
  }
  ExecutorOptions executorOptions;
  executorOptions.threadsPerStage = threads;
  executorOptions.gpuStagesOnCpu = o.gpuStagesOnCpu;
  executorOptions.framesInFlight = o.framesInFlight;
  executorOptions.server = server.stageServer();
  executorOptions.remote = stages;
  Executor executor(bundle, executorOptions);
  auto finishStep = [&](int64_t microBatches) {
    if (stages)
      stages->beginFinishStep(microBatches);
    server.finishStep(microBatches);
    if (stages)
      stages->endFinishStep();
  };

  // Checked now; a new run's log is opened (emptied) at its first line,
  // so that a run refused before its first step (its data holds no valid
  // row) leaves an old log as it was, and no empty one.
  std::ofstream lossLog;
  if (!o.lossLog.empty())
    checkLossLogTarget(bundle, o, resumed.has_value());
  if (!o.lossLog.empty() && resumed)
    lossLog = openLossLog(o.lossLog, state.step, log);

  TrainSummary summary;
  summary.firstStep = state.step;
  const int64_t firstSamples = state.samples;
  summary.trainAuc = summary.trainAccuracy = std::nan("");
  int64_t lastCheckpointStep = resumed ? state.step : -1;
  // The step whose checkpoint was last begun: one that failed is not tried
  // again on the way out (its error came out twice, as a warning and as
  // the run's error).
  int64_t checkpointTriedStep = -1;
  if (resumed)
    summary.lastCheckpoint = resumed->path;
  const int labelInput = spec.labelInput;
  // Time-based checkpoints count from the last one, or from here.
  Clock::time_point lastCheckpointTime = Clock::now();

  // Steps come from here; with a pass cache, in passes whose rows go back
  // to the server before anything reads the server's copy.
  StepReader steps(
      bundle, *source, server, passSteps,
      [&](int64_t step) { return step == lastStep ? lastStepSamples : batch; },
      lastStep);

  auto checkpoint = [&]() {
    if (!leader)
      return;
    checkpointTriedStep = state.step;
    steps.endPass();
    summary.lastCheckpoint = writeCheckpoint(
        o.checkpointDir, state,
        [&](const std::string &path) { server.save(path); }, o.keepCheckpoints);
    lastCheckpointStep = state.step;
    lastCheckpointTime = Clock::now();
    log << "checkpoint " << summary.lastCheckpoint << "\n";
  };

  // What this worker asks of a step boundary (WorkerGroup.h): a stop on a
  // signal or on the stop file, and, on the leader, whose clock decides, a
  // time-based checkpoint. Groups combine them in one collective.
  auto localRequests = [&] {
    uint32_t requests = 0;
    if (o.stopRequested && o.stopRequested->load())
      requests |= kStopOnSignal;
    if (heartbeat.stopRequested())
      requests |= kStopOnRequest;
    if (leader && timedCheckpoints &&
        secondsSince(lastCheckpointTime) >= o.checkpointEverySeconds)
      requests |= kCheckpointNow;
    return requests;
  };
  constexpr uint32_t kStop = kStopOnSignal | kStopOnRequest;
  auto stopFor = [&](uint32_t requests) {
    summary.interrupted = true;
    summary.stopReason =
        (requests & kStopOnSignal) ? StopReason::Signal : StopReason::Request;
  };
  // A stop asked for during an evaluation, which the evaluation agreed on
  // and gave up for: a long one kept a signalled run (and a supervisor's
  // resize) waiting for its end.
  uint32_t stopDuringEval = 0;

  // Every worker evaluates: batch b of the evaluation data runs on worker
  // b % W, and the leader puts the gathered per-sample results back in
  // batch order, so the figures are those of one process.
  bool evalWarned = false;
  auto evaluate = [&]() {
    const Clock::time_point evalStart = Clock::now();
    const int workers = group ? group->size() : 1;
    const int64_t rank = group ? group->rank() : 0;
    steps.endPass();
    evalSource->restart();
    TrainMetrics metrics(spec);
    SampleResults results;
    std::vector<float> sizes; // of this worker's batches (<= batch: exact)
    int64_t batches = 0;
    std::vector<HostTensor> inputs;
    server.setEvalMode(true);
    struct Restore {
      TrainingServer &server;
      ~Restore() { server.setEvalMode(false); }
    } restore{server};
    if (stages)
      stages->setEvalMode(true);
    while (int64_t count = evalSource->next(batch, inputs)) {
      // Every worker reads every batch, so all meet here alike.
      if (batches > 0 && batches % kEvalBatchesPerStopCheck == 0) {
        uint32_t stop = localRequests() & kStop;
        if (group)
          stop = group->combineStepRequests(stop) & kStop;
        if (stop) {
          stopDuringEval = stop;
          break;
        }
      }
      if (batches++ % workers != rank)
        continue;
      std::vector<HostTensor> outputs = executor.run(inputs);
      server.finishStep(1); // nothing to apply: pushes were discarded
      append(results, metrics.collect(outputs, inputs[labelInput], count));
      sizes.push_back(static_cast<float>(count));
    }
    // An error above ends the run, so only here do stages train again.
    if (stages)
      stages->setEvalMode(false);
    if (stopDuringEval) {
      if (leader)
        log << "eval step " << state.step << "/" << lastStep
            << " given up after " << batches
            << " batches: the run was asked to stop\n";
      return;
    }
    if (group) {
      std::vector<float> gatheredSizes = group->gather(sizes);
      results = gatherResults(*group, results);
      if (!leader)
        return;
      results = inBatchOrder(results, gatheredSizes, batches, workers);
    }
    metrics.add(results);
    // Every evaluation reads the same file: its malformed lines are said
    // once.
    if (std::string warning = evalSource->warning();
        !warning.empty() && !evalWarned) {
      log << "warning: " << warning << "\n";
      evalWarned = true;
    }
    if (metrics.samples() == 0)
      throw Error("the evaluation data " + evalSource->describe() +
                  " holds no valid rows");
    summary.evaluated = true;
    summary.evalSamples = metrics.samples();
    summary.evalLoss = metrics.loss();
    log << "eval step " << state.step << "/" << lastStep;
    bool noScore = false;
    switch (metrics.kind()) {
    case TrainMetrics::Kind::Auc:
      // For bce the log-loss of the scores is the loss.
      noScore = !metrics.hasMetric();
      if (noScore) {
        log << "  loss " << fixed(summary.evalLoss);
        break;
      }
      summary.evalAuc = metrics.metric();
      summary.evalLogLoss = metrics.logLoss();
      log << "  auc " << fixed(summary.evalAuc) << "  logloss "
          << fixed(summary.evalLogLoss);
      break;
    case TrainMetrics::Kind::Accuracy:
      summary.evalAccuracy = metrics.metric();
      log << "  loss " << fixed(summary.evalLoss) << "  accuracy "
          << fixed(summary.evalAccuracy);
      break;
    case TrainMetrics::Kind::None:
      log << "  loss " << fixed(summary.evalLoss);
      break;
    }
    const double evalSeconds = secondsSince(evalStart);
    log << "  " << summary.evalSamples << " samples  "
        << formatRate(evalSeconds > 0 ? summary.evalSamples / evalSeconds : 0)
        << " samples/s\n";
    if (noScore)
      log << "warning: the prediction '" << spec.prediction
          << "' is not a binary score (one value per sample, or two class "
             "scores): no AUC\n";
    else if (metrics.kind() == TrainMetrics::Kind::Auc &&
             std::isnan(summary.evalAuc))
      log << "warning: the evaluation labels are all of one class: AUC is "
             "not defined (nan)\n";
  };

  std::vector<HostTensor> sliceInputs;
  // The progress window.
  TrainMetrics window(spec);
  int64_t windowFirstStep = state.step + 1;
  Clock::time_point windowStart = Clock::now(), runStart = Clock::now();
  // The evaluation before training (and a resumed server) called it too.
  const double serverCallsBefore = server.serverCallSeconds();
  int64_t lastEvalStep = -1;

  // Synchronous workers meet every step; asynchronous ones only at sync
  // points (WorkerGroup.h), keeping their results for the leader until then.
  const bool meetEveryStep = group && !group->asynchronous();
  const bool meetAtSyncPoints = group && group->asynchronous();
  SampleResults unreported;
  uint32_t stopAgreed = 0; // asynchronous groups: at the last sync point
  // The learning-rate scale the store applies (initially 1).
  float storeScale = 1.0f;

  // False while finishStep applies a step: an error there may leave the
  // parameters half-updated, which no checkpoint may record as a step.
  bool consistent = true, diverged = false;
  try {
    while (state.step < lastStep) {
      uint32_t requests = 0;
      if (meetEveryStep) // every worker acts alike after the same step
        requests = group->combineStepRequests(localRequests());
      else if (meetAtSyncPoints)
        requests = stopAgreed;
      else
        requests = localRequests();
      requests |= stopDuringEval;
      // A time-based checkpoint of the step just finished (if this run
      // trained it).
      if ((requests & kCheckpointNow) && state.step > lastCheckpointStep &&
          state.step > summary.firstStep)
        checkpoint();
      if (requests & kStop) {
        stopFor(requests);
        break;
      }
      // Before the step's first push: a synchronous store applies the step
      // with it. Only the leader tells a shared store.
      const float scale = static_cast<float>(o.learningRate.at(state.step + 1));
      if (leader && scale != storeScale) {
        server.parameterStore().setLearningRateScale(scale);
        storeScale = scale;
      }
      // With --samples the last step may be shorter; it is split among the
      // workers and averaged over its own micro-batches.
      const int64_t stepSamples =
          state.step + 1 == lastStep ? lastStepSamples : batch;
      const int64_t stepMicroBatches = stepSamples / microBatch;
      Clock::time_point phaseStart = Clock::now();
      const StepData &step = steps.take(state.step + 1);
      summary.stepTimes.data += secondsSince(phaseStart);
      const std::vector<HostTensor> &stepInputs = step.inputs;
      int64_t count = stepSamples;
      // A worker runs its slice; the single process all of the step.
      if (group) {
        const StepSlice mySlice =
            stepSamples == batch
                ? slice
                : lastStepSlice(stepMicroBatches, group->size(), group->rank());
        count = mySlice.count * microBatch;
        data::sliceSamples(bundle.inputs(), stepInputs,
                           mySlice.first * microBatch, count, sliceInputs);
      }
      const std::vector<HostTensor> &mine = group ? sliceInputs : stepInputs;
      std::vector<HostTensor> outputs;
      try {
        // A worker sitting out a short last step only ends it.
        phaseStart = Clock::now();
        if (!group)
          server.beginStep(stepMicroBatches);
        if (count > 0)
          outputs = executor.run(mine);
        summary.stepTimes.stages += secondsSince(phaseStart);
      } catch (...) {
        // What the failed step pushed must not reach a later step.
        server.discardStep();
        if (stages)
          stages->discardStep();
        throw;
      }
      consistent = false;
      phaseStart = Clock::now();
      finishStep(stepMicroBatches);
      summary.stepTimes.update += secondsSince(phaseStart);
      consistent = true;
      ++state.step;
      state.samples += stepSamples;
      state.position = step.position;
      heartbeat.setStep(state.step);
      // What a step ends with: the debug kill of the MPI tests, then the
      // faults of HETERPS_FAULT (after the step's checkpoint, if any).
      auto stepDone = [&] {
        if (group)
          group->stepFinished(state.step);
        faults.stepFinished(state.step, heartbeat);
      };

      SampleResults results =
          count > 0 ? window.collect(outputs, mine[labelInput], count)
                    : SampleResults();
      // A diverged run stops at its first non-finite loss, writing no
      // checkpoint of what it diverged to: going on, its checkpoints would
      // push out the last good ones.
      if (auto bad =
              std::find_if(results.losses.begin(), results.losses.end(),
                           [](float loss) { return !std::isfinite(loss); });
          bad != results.losses.end()) {
        diverged = true;
        std::string message =
            "the training loss of step " + std::to_string(state.step) + " is " +
            (std::isnan(*bad) ? "NaN" : "infinite") +
            ": training diverged (a learning rate too high? --lr-scale, or "
            "compile with a lower --lr); its parameters were not "
            "checkpointed";
        if (lastCheckpointStep >= state.step - 1 && lastCheckpointStep > 0)
          message += ", but those of step " +
                     std::to_string(lastCheckpointStep) +
                     ", which gave it, were: resume from an earlier one";
        throw Error(message);
      }
      if (!o.lossLog.empty() && !results.losses.empty()) {
        if (!lossLog.is_open())
          lossLog = openLossLog(o.lossLog, std::nullopt, log);
        double sum = 0;
        for (float loss : results.losses)
          sum += loss;
        char line[64];
        std::snprintf(line, sizeof line, "%lld %.9g\n",
                      static_cast<long long>(state.step),
                      sum / double(results.losses.size()));
        if (!(lossLog << line << std::flush))
          throw Error("cannot write the loss log '" + o.lossLog +
                      "': " + std::strerror(errno));
      }
      const bool logStep =
          state.step % o.logEvery == 0 || state.step == lastStep;
      bool checkpointStep =
          o.checkpointEvery > 0 && state.step % o.checkpointEvery == 0;
      const bool evalStep = o.evalEvery > 0 && state.step % o.evalEvery == 0;
      if (group) {
        // Workers keep their results until the leader reports them: a
        // gather per step cost more than the step on a shared machine.
        append(unreported, results);
        if (!logStep && !checkpointStep && !evalStep) {
          stepDone();
          continue;
        }
        results = std::exchange(unreported, SampleResults());
      }
      if (meetAtSyncPoints) {
        // Also a barrier: every worker has finished this step's pushes
        // before the leader checkpoints or evaluates. A time-based
        // checkpoint falls due here, at a sync point.
        const uint32_t agreed = group->combineStepRequests(localRequests());
        stopAgreed = agreed & kStop;
        checkpointStep = checkpointStep || (agreed & kCheckpointNow);
      }
      if (group) {
        // The leader reports every worker's losses, scores and labels since
        // the last report, in worker order; the others get nothing.
        results = gatherResults(*group, results);
      }
      window.add(results);

      if (leader && logStep) {
        double seconds = secondsSince(windowStart);
        summary.trainLoss = window.loss();
        if (window.kind() == TrainMetrics::Kind::Auc)
          summary.trainAuc = window.metric();
        else if (window.kind() == TrainMetrics::Kind::Accuracy)
          summary.trainAccuracy = window.metric();
        log << "step " << state.step << "/" << lastStep << "  loss "
            << fixed(summary.trainLoss) << window.metricText() << "  "
            << formatRate(window.samples() / seconds) << " samples/s\n";
        if (state.step != lastStep) {
          window.reset();
          windowFirstStep = state.step + 1;
          windowStart = Clock::now();
        }
      }
      if (checkpointStep)
        checkpoint();
      if (evalStep) {
        evaluate();
        lastEvalStep = state.step;
      }
      // Nobody pushes the next step into the leader's checkpoint or
      // evaluation (synchronous workers wait in the next step's endStep).
      if (meetAtSyncPoints && (checkpointStep || evalStep))
        group->barrier();
      log.flush();
      stepDone();
    }
  } catch (...) {
    // The parameters are those of the last finished step, which `state`
    // (data position included) describes: keep them before reporting the
    // error. Not so in an asynchronous job, where other workers' later
    // steps are already applied in part: its last sync point's checkpoint
    // stands.
    if (!o.checkpointDir.empty() && consistent && !diverged &&
        !meetAtSyncPoints && state.step > lastCheckpointStep &&
        state.step != checkpointTriedStep && state.step > summary.firstStep) {
      try {
        checkpoint();
      } catch (const std::exception &error) {
        log << "warning: could not checkpoint step " << state.step << ": "
            << error.what() << "\n";
      }
    }
    throw;
  }
  // The pass's rows back on the server before the last checkpoint, the
  // dump and the final evaluation read them.
  steps.endPass();
  summary.seconds = secondsSince(runStart);
  summary.stepTimes.serverCalls =
      server.serverCallSeconds() - serverCallsBefore;
  summary.steps = state.step;
  summary.samples = state.samples;
  summary.position = state.position;
  // Where the data stands, so that restarts can be checked to skip and
  // repeat no sample.
  auto logData = [&] {
    log << "data: samples " << state.samples << ", position " << state.position
        << "\n";
  };

  if (!o.checkpointDir.empty() && state.step > lastCheckpointStep &&
      state.step > summary.firstStep)
    checkpoint();
  // A stopped run read lines too: their malformed ones are said as well.
  if (std::string warning = source->warning(); !warning.empty())
    log << "warning: " << warning << "\n";
  if (summary.interrupted) {
    log << "stopped at step " << state.step << "/" << lastStep << "\n";
    logData();
    return summary;
  }
  // Before the final evaluation, which may create rows of ids that training
  // never saw: the dump holds what training touched.
  if (!o.dumpParameters.empty() && leader)
    server.dumpParameters(o.dumpParameters);

  const int64_t trained = state.step - summary.firstStep;
  const int64_t trainedSamples = state.samples - firstSamples;
  if (trained == 0 && o.samples > 0)
    log << "nothing to train: the checkpoint is at step " << state.step
        << " with " << state.samples << " samples and --samples is "
        << o.samples << "\n";
  else if (trained == 0)
    log << "nothing to train: the checkpoint is at step " << state.step
        << " and --steps is " << o.steps << "\n";
  else
    log << "done: " << trained << " steps (" << summary.firstStep + 1 << "-"
        << state.step << "), " << trainedSamples << " samples, "
        << fixed(summary.seconds, 2) << " s, "
        << formatRate(summary.seconds > 0 ? trainedSamples / summary.seconds
                                          : 0)
        << " samples/s"
        << (o.samples > 0 ? "; samples " + std::to_string(state.samples) + "/" +
                                std::to_string(o.samples)
                          : std::string())
        << "\n";
  logData();
  if (trained > 0) {
    // Where a step's time goes: what to speed up (docs/Training.md).
    const TrainSummary::StepTimes &times = summary.stepTimes;
    auto ms = [&](double seconds) {
      return fixed(1e3 * seconds / double(trained), 2);
    };
    log << "time per step: " << ms(summary.seconds) << " ms = data "
        << ms(times.data) << " + stages " << ms(times.stages) << " + update "
        << ms(times.update) << " + other "
        << ms(std::max(0.0, summary.seconds - times.data - times.stages -
                                times.update))
        << "; parameter-server calls in the stages " << ms(times.serverCalls)
        << " (summed over stage threads)\n";
  }
  if (passSteps > 0 && trained > 0) {
    const StepReader::PassCounts passes = steps.passCounts();
    const ps::PassCache::KeyCounts keys = server.passKeyCounts();
    log << "passes: " << passes.passes << ", of " << passes.fewestSteps
        << " to " << passes.mostSteps << " steps; distinct rows "
        << fixed(keys.keys
                     ? 100.0 * double(keys.distinctRows) / double(keys.keys)
                     : 0.0,
                 1)
        << "% of the keys\n";
  }
  if (trained > 0)
    log << "train loss " << fixed(summary.trainLoss) << window.metricText()
        << " (steps " << windowFirstStep << "-" << state.step << ")\n";
  if (hasEval && lastEvalStep != state.step)
    evaluate();
  // Trained and checkpointed in full; only the figures are missing.
  if (stopDuringEval)
    stopFor(stopDuringEval);
  return summary;
}

} // namespace heterps::rt::train
