//===- JobSpec.cpp - Read and check job files -----------------------------===//
//
// Read with llvm::yaml::Input: it rejects unknown and repeated keys and
// points every error at its line and column. Semantic checks run in the
// traits' validate() hooks so that they point at the mapping they concern.
//
//===----------------------------------------------------------------------===//

#include "heterps/Jobs/JobSpec.h"
#include "heterps/Cluster/YamlLimits.h"
#include "heterps/Jobs/Backend.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace llvm;

namespace heterps::jobs {

std::string JobShape::describe() const {
  return std::to_string(workers) + (workers == 1 ? " worker, " : " workers, ") +
         std::to_string(shards) + (shards == 1 ? " shard, " : " shards, ") +
         "batch " + std::to_string(batch);
}

const char *learningRateRuleName(LearningRateRule rule) {
  switch (rule) {
  case LearningRateRule::Linear:
    return "linear";
  case LearningRateRule::Sqrt:
    return "sqrt";
  case LearningRateRule::None:
    return "none";
  }
  return "?";
}

double learningRateScale(LearningRateRule rule, int64_t batch,
                         int64_t referenceBatch) {
  const double ratio = double(batch) / double(referenceBatch);
  switch (rule) {
  case LearningRateRule::Linear:
    return ratio;
  case LearningRateRule::Sqrt:
    return std::sqrt(ratio);
  case LearningRateRule::None:
    return 1;
  }
  return 1;
}

const char *backendName(BackendKind kind) {
  return kind == BackendKind::Slurm ? "slurm" : "mpirun";
}

std::optional<double> parseDuration(const std::string &text) {
  StringRef rest = StringRef(text).trim();
  double scale = 1;
  if (rest.consume_back("ms"))
    scale = 1e-3;
  else if (rest.consume_back("s"))
    scale = 1;
  else if (rest.consume_back("m"))
    scale = 60;
  else if (rest.consume_back("h"))
    scale = 3600;
  double value = 0;
  if (rest.empty() || rest.getAsDouble(value) || !std::isfinite(value) ||
      value < 0)
    return std::nullopt;
  return value * scale;
}

std::string checkpointIntervalError(const std::string &text) {
  // The trainer's grammar, which gets the text as it is
  // (parseCheckpointInterval, runtime/train/Trainer.cpp): whole steps, or a
  // plain decimal and s, m or h. Looser here, "1.5", " 5" and "1e308h"
  // passed and every attempt then failed at its start.
  StringRef value(text);
  if (!value.empty() && llvm::all_of(value, llvm::isDigit)) {
    int64_t steps = 0;
    if (value.getAsInteger(10, steps) || steps < 1 ||
        steps > (int64_t(1) << 53))
      return "'" + text + "' steps must be 1 to 2^53";
    return "";
  }
  const StringRef number = value.drop_back();
  const double unit = value.ends_with("s")   ? 1
                      : value.ends_with("m") ? 60
                      : value.ends_with("h") ? 3600
                                             : 0;
  double seconds = 0;
  if (unit == 0 || number.empty() || number == "." ||
      number.find_first_not_of("0123456789.") != StringRef::npos ||
      number.count('.') > 1 || number.getAsDouble(seconds))
    return "'" + text +
           "' is neither whole steps (10) nor a time (30s, 2m, 1.5h)";
  seconds *= unit;
  if (!(seconds > 0) || !std::isfinite(seconds))
    return "'" + text + "' must be a time above 0";
  return "";
}

std::string JobSpec::checkShape(const JobShape &shape,
                                int64_t microBatch) const {
  auto outside = [](const char *what, int64_t value, const IntRange &range) {
    return std::string(what) + " " + std::to_string(value) +
           " is outside the job's range [" + std::to_string(range.min) + ", " +
           std::to_string(range.max) + "]";
  };
  if (!workers.contains(shape.workers))
    return outside("workers", shape.workers, workers);
  if (!shards.contains(shape.shards))
    return outside("ps_shards", shape.shards, shards);
  if (!batch.contains(shape.batch))
    return outside("batch", shape.batch, batch);
  if (microBatch > 0) {
    if (shape.batch % microBatch != 0)
      return "batch " + std::to_string(shape.batch) +
             " is not a multiple of the bundle's batch " +
             std::to_string(microBatch) +
             " (a step is a whole number of micro-batches)";
    if (shape.batch / microBatch < shape.workers)
      return "batch " + std::to_string(shape.batch) + " holds " +
             std::to_string(shape.batch / microBatch) + " micro-batches of " +
             std::to_string(microBatch) + ", fewer than the " +
             std::to_string(shape.workers) +
             " workers (each needs at least one)";
  }
  return "";
}

Error checkJobAgainstBundle(const JobSpec &job, int64_t microBatch) {
  if (std::string why = job.checkShape(job.initial, microBatch); !why.empty())
    return createStringError(inconvertibleErrorCode(),
                             "job '%s': the initial shape: %s",
                             job.name.c_str(), why.c_str());
  for (int64_t bound : {job.batch.min, job.batch.max})
    if (bound % microBatch != 0)
      return createStringError(
          inconvertibleErrorCode(),
          "job '%s': batch bound %lld is not a multiple of the bundle's "
          "batch %lld",
          job.name.c_str(), (long long)bound, (long long)microBatch);
  if (job.samples % microBatch != 0)
    return createStringError(
        inconvertibleErrorCode(),
        "job '%s': samples %lld is not a multiple of the bundle's batch %lld",
        job.name.c_str(), (long long)job.samples, (long long)microBatch);
  return Error::success();
}

namespace {

/// The file's text, before paths are resolved and durations parsed.
struct RawRange {
  std::optional<int64_t> initial, min, max;
};
struct RawLearningRate {
  std::string rule = "linear";
  int64_t warmupSteps = 0;
};
struct RawCheckpoint {
  std::string every = "100";
  int64_t keep = 3;
};
struct RawRestart {
  int64_t maxRestarts = 3;
  std::string backoff = "1s", maxBackoff = "60s", heartbeatTimeout = "60s",
              capacityWait = "120s";
  int64_t excludeHostAfter = 2;
};
struct RawBackend {
  std::string kind = "mpirun", hostfile, partition, signalLead = "60s";
  std::vector<std::string> mpirunArgs, sbatchArgs;
  int64_t nodes = 0;
};
struct RawJob {
  std::string name, bundle, data, eval, consistency = "sync";
  std::optional<int64_t> samples, steps;
  std::optional<int64_t> staleness; // default 2 (async only)
  std::vector<std::string> trainArgs;
  RawRange workers, shards, batch;
  double gradientNoiseScale = 0;
  RawLearningRate learningRate;
  RawCheckpoint checkpoint;
  RawRestart restart;
  RawBackend backend;
};

std::string checkRange(const char *field, RawRange &range, int64_t lowest,
                       int64_t highest) {
  if (!range.initial)
    return std::string(field) + ": 'initial' is required";
  range.min = range.min.value_or(*range.initial);
  range.max = range.max.value_or(*range.initial);
  if (*range.min < lowest)
    return std::string(field) + ": min " + std::to_string(*range.min) +
           " is below " + std::to_string(lowest);
  if (*range.max > highest)
    return std::string(field) + ": max " + std::to_string(*range.max) +
           " is above " + std::to_string(highest);
  if (*range.min > *range.max)
    return std::string(field) + ": min " + std::to_string(*range.min) +
           " is greater than max " + std::to_string(*range.max);
  if (*range.initial < *range.min || *range.initial > *range.max)
    return std::string(field) + ": initial " + std::to_string(*range.initial) +
           " is outside [" + std::to_string(*range.min) + ", " +
           std::to_string(*range.max) + "]";
  return "";
}

std::string checkDuration(const char *field, const std::string &text) {
  if (!parseDuration(text))
    return std::string(field) + " '" + text +
           "' is not a duration (e.g. 30s, 2m, 500ms)";
  return "";
}

} // namespace
} // namespace heterps::jobs

using namespace heterps::jobs;

namespace llvm::yaml {
template <> struct MappingTraits<RawRange> {
  static void mapping(IO &io, RawRange &range) {
    io.mapOptional("initial", range.initial);
    io.mapOptional("min", range.min);
    io.mapOptional("max", range.max);
  }
};
template <> struct MappingTraits<RawLearningRate> {
  static void mapping(IO &io, RawLearningRate &rate) {
    io.mapOptional("rule", rate.rule);
    io.mapOptional("warmup_steps", rate.warmupSteps);
  }
  static std::string validate(IO &, RawLearningRate &rate) {
    if (rate.rule != "linear" && rate.rule != "sqrt" && rate.rule != "none")
      return "learning_rate: rule '" + rate.rule +
             "' is not one of linear, sqrt, none";
    if (rate.warmupSteps < 0 || rate.warmupSteps > (int64_t(1) << 53))
      return "learning_rate: warmup_steps must be 0 to 2^53";
    return "";
  }
};
template <> struct MappingTraits<RawCheckpoint> {
  static void mapping(IO &io, RawCheckpoint &checkpoint) {
    io.mapOptional("every", checkpoint.every);
    io.mapOptional("keep", checkpoint.keep);
  }
  static std::string validate(IO &, RawCheckpoint &checkpoint) {
    if (std::string why = checkpointIntervalError(checkpoint.every);
        !why.empty())
      return "checkpoint: every " + why;
    if (checkpoint.keep < 2 || checkpoint.keep > kMostCount)
      return "checkpoint: keep must be 2 to " + std::to_string(kMostCount) +
             " (2: a corrupt newest checkpoint falls back on the one "
             "before)";
    return "";
  }
};
template <> struct MappingTraits<RawRestart> {
  static void mapping(IO &io, RawRestart &restart) {
    io.mapOptional("max_restarts", restart.maxRestarts);
    io.mapOptional("backoff", restart.backoff);
    io.mapOptional("max_backoff", restart.maxBackoff);
    io.mapOptional("heartbeat_timeout", restart.heartbeatTimeout);
    io.mapOptional("exclude_host_after", restart.excludeHostAfter);
    io.mapOptional("capacity_wait", restart.capacityWait);
  }
  static std::string validate(IO &, RawRestart &restart) {
    if (restart.maxRestarts < 0 || restart.maxRestarts > kMostCount)
      return "restart: max_restarts must be 0 to " + std::to_string(kMostCount);
    if (restart.excludeHostAfter < 1 || restart.excludeHostAfter > kMostCount)
      return "restart: exclude_host_after must be 1 to " +
             std::to_string(kMostCount);
    for (auto [field, text] :
         {std::pair<const char *, const std::string *>{"restart: backoff",
                                                       &restart.backoff},
          {"restart: max_backoff", &restart.maxBackoff},
          {"restart: heartbeat_timeout", &restart.heartbeatTimeout},
          {"restart: capacity_wait", &restart.capacityWait}})
      if (std::string why = checkDuration(field, *text); !why.empty())
        return why;
    if (*parseDuration(restart.heartbeatTimeout) < 1)
      return "restart: heartbeat_timeout must be at least 1s";
    return "";
  }
};
template <> struct MappingTraits<RawBackend> {
  static void mapping(IO &io, RawBackend &backend) {
    io.mapOptional("kind", backend.kind);
    io.mapOptional("hostfile", backend.hostfile);
    io.mapOptional("mpirun_args", backend.mpirunArgs);
    io.mapOptional("partition", backend.partition);
    io.mapOptional("nodes", backend.nodes);
    io.mapOptional("sbatch_args", backend.sbatchArgs);
    io.mapOptional("signal_lead", backend.signalLead);
  }
  static std::string validate(IO &, RawBackend &backend) {
    if (backend.kind != "mpirun" && backend.kind != "slurm")
      return "backend: kind '" + backend.kind + "' is not one of mpirun, slurm";
    if (backend.kind == "slurm" && !backend.hostfile.empty())
      return "backend: hostfile is for kind mpirun; Slurm chooses the nodes "
             "(use sbatch_args: [--nodelist=...] to pin them)";
    if (backend.kind == "mpirun" &&
        (!backend.partition.empty() || backend.nodes ||
         !backend.sbatchArgs.empty()))
      return "backend: partition, nodes and sbatch_args are for kind slurm";
    if (backend.nodes < 0 || backend.nodes > kMostRanks)
      return "backend: nodes must be 0 to " + std::to_string(kMostRanks);
    return checkDuration("backend: signal_lead", backend.signalLead);
  }
};
template <> struct MappingTraits<RawJob> {
  static void mapping(IO &io, RawJob &job) {
    io.mapRequired("name", job.name);
    io.mapRequired("bundle", job.bundle);
    io.mapRequired("data", job.data);
    io.mapOptional("eval", job.eval);
    io.mapOptional("samples", job.samples);
    io.mapOptional("steps", job.steps);
    io.mapOptional("train_args", job.trainArgs);
    io.mapOptional("consistency", job.consistency);
    io.mapOptional("staleness", job.staleness);
    io.mapRequired("workers", job.workers);
    io.mapRequired("ps_shards", job.shards);
    io.mapRequired("batch", job.batch);
    io.mapOptional("gradient_noise_scale", job.gradientNoiseScale);
    io.mapOptional("learning_rate", job.learningRate);
    io.mapOptional("checkpoint", job.checkpoint);
    io.mapOptional("restart", job.restart);
    io.mapOptional("backend", job.backend);
  }
  static std::string validate(IO &, RawJob &job) {
    // A leading dot would hide its files (the service skips dot files in
    // its inbox, where such a submission waited forever).
    if (job.name.empty() ||
        !std::isalnum(static_cast<unsigned char>(job.name[0])) ||
        !std::all_of(job.name.begin(), job.name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                 c == '_' || c == '.';
        }))
      return "name '" + job.name +
             "' must be letters, digits, '-', '_' or '.', starting with a "
             "letter or digit";
    // It names files (the service's "NAME-submitted-PID-TIME.yaml"), and a
    // file name has at most 255 bytes.
    if (job.name.size() > 128)
      return "name '" + job.name.substr(0, 20) + "...' is " +
             std::to_string(job.name.size()) + " characters long; at most 128";
    if (job.bundle.empty())
      return "bundle is empty; give the training bundle's directory";
    if (job.data.empty())
      return "data is empty; give the training data's file";
    for (auto [field, range, highest] :
         {std::tuple<const char *, RawRange *, int64_t>{"workers", &job.workers,
                                                        kMostRanks},
          {"ps_shards", &job.shards, kMostRanks},
          {"batch", &job.batch, kMostBatch}})
      if (std::string why = checkRange(field, *range, 1, highest); !why.empty())
        return why;
    // Not NaN or infinite either: the service's state is JSON, which has
    // neither, and a submission holding one was dropped unread.
    if (!std::isfinite(job.gradientNoiseScale) || job.gradientNoiseScale < 0)
      return "gradient_noise_scale must be a finite number of samples, at "
             "least 0";
    // Said at the field (both given) where there is one to point at.
    if (job.samples && job.steps)
      return "samples and steps are both given; give the job's length as "
             "exactly one of them (steps at the initial batch)";
    if (!job.samples && !job.steps)
      return "give the job's length as exactly one of samples or steps "
             "(steps at the initial batch)";
    // The trainer takes at most 2^53 samples or steps (its step
    // arithmetic); a job past it would fail on every launch.
    constexpr int64_t kMost = int64_t(1) << 53;
    if (job.samples && (*job.samples < 1 || *job.samples > kMost))
      return "samples must be 1 to 2^53";
    if (job.steps &&
        (*job.steps < 1 || *job.steps > kMost ||
         *job.steps >
             kMost / std::max<int64_t>(1, job.batch.initial.value_or(1))))
      return "steps must be at least 1, and steps x the initial batch at "
             "most 2^53 samples";
    if (job.consistency != "sync" && job.consistency != "async")
      return "consistency '" + job.consistency + "' is not sync or async";
    if (job.staleness && (*job.staleness < -1 || *job.staleness > kMostCount))
      return "staleness must be -1 (no bound) to " + std::to_string(kMostCount);
    // Synchronous workers wait for each other every step: a bound was
    // accepted and ignored (heterps launch refuses --staleness so too).
    if (job.staleness && job.consistency != "async")
      return "staleness bounds asynchronous training; add consistency: async "
             "or leave staleness out";
    // The supervisor owns these flags: it sets them on every launch.
    static const StringRef owned[] = {"--data",
                                      "--eval",
                                      "--steps",
                                      "--samples",
                                      "--batch",
                                      "--resume",
                                      "--checkpoint-dir",
                                      "--checkpoint-every",
                                      "--keep-checkpoints",
                                      "--lr-scale",
                                      "--lr-warmup",
                                      "--mpi-worker",
                                      "--ps-shards",
                                      "--consistency",
                                      "--staleness",
                                      "--train"};
    for (const std::string &arg : job.trainArgs) {
      // LLVM's parser takes -flag as --flag: "-lr-scale=5" trained at 5x
      // unseen, then clashed with the job's own --lr-scale at a resize.
      StringRef given = StringRef(arg).split('=').first;
      const std::string flag =
          given.starts_with("-") && !given.starts_with("--") ? "-" + given.str()
                                                             : given.str();
      if (llvm::is_contained(owned, flag))
        return "train_args: '" + arg +
               "' is set by the job itself (from the job file's fields); "
               "leave it out";
    }
    return "";
  }
};
} // namespace llvm::yaml

namespace heterps::jobs {

namespace {
/// Where a node of the document lies, and the keys that lead to it
/// ("workers: initial", "train_args[2]"); a key lies in its mapping.
struct Span {
  const char *start, *end;
  std::string path;
  yaml::Node *node;
};

/// Appends the spans of `node` and all below it; returns where it ends
/// (LLVM gives a collection only its first position).
const char *collectSpans(yaml::Node *node, const std::string &path,
                         std::vector<Span> &spans) {
  const char *start = node->getSourceRange().Start.getPointer();
  const char *end = std::max(start, node->getSourceRange().End.getPointer());
  if (auto *mapping = dyn_cast<yaml::MappingNode>(node)) {
    for (yaml::KeyValueNode &entry : *mapping) {
      auto *key = dyn_cast_or_null<yaml::ScalarNode>(entry.getKey());
      if (!key)
        continue;
      SMRange keyRange = key->getSourceRange();
      spans.push_back(
          {keyRange.Start.getPointer(), keyRange.End.getPointer(), path, node});
      end = std::max(end, keyRange.End.getPointer());
      SmallString<32> storage;
      const StringRef name = key->getValue(storage);
      if (yaml::Node *value = entry.getValue())
        end =
            std::max(end, collectSpans(value,
                                       path.empty() ? name.str()
                                                    : path + ": " + name.str(),
                                       spans));
    }
  } else if (auto *sequence = dyn_cast<yaml::SequenceNode>(node)) {
    unsigned index = 0;
    for (yaml::Node &item : *sequence)
      end = std::max(
          end, collectSpans(&item, path + "[" + std::to_string(index++) + "]",
                            spans));
  }
  spans.push_back({start, end, path, node});
  return end;
}

/// LLVM's words for a value of the wrong type, said with the value.
std::string describedValueError(StringRef message, yaml::Node *node) {
  SmallString<32> storage;
  auto *scalar = dyn_cast_or_null<yaml::ScalarNode>(node);
  const std::string value =
      scalar ? "'" + scalar->getValue(storage).str() + "'" : "";
  const char *kind = isa_and_nonnull<yaml::SequenceNode>(node)  ? "a list"
                     : isa_and_nonnull<yaml::MappingNode>(node) ? "a mapping"
                                                                : "a value";
  if (message == "invalid number" && scalar)
    return value + " is not a number";
  if (message == "invalid boolean" && scalar)
    return value + " is not true or false";
  if (message == "unexpected scalar" && !scalar)
    return std::string("expected a single value, got ") + kind;
  if (message == "not a mapping")
    return "expected a mapping ({key: value, ...}), got " +
           (scalar ? value : std::string(kind));
  if (message == "not a sequence")
    return "expected a list ([a, b, ...]), got " +
           (scalar ? value : std::string(kind));
  return message.str();
}

/// `diagnostic` as text, with the field it concerns. One the job's own
/// checks raised at the file's start (yaml::Input's validate hooks have no
/// field to point at) is put at the top-level field its message begins
/// with ("samples must be ..."); one at a value gets the keys that lead to
/// it ("steps: 'true' is not a number", where LLVM said "invalid number").
std::string placedAtItsField(const SMDiagnostic &diagnostic, StringRef text,
                             StringRef path) {
  std::string out;
  raw_string_ostream os(out);
  StringRef message = diagnostic.getMessage();
  const StringRef field =
      message.take_while([](char c) { return c != ' ' && c != ':'; });
  SourceMgr sourceMgr;
  sourceMgr.setDiagHandler([](const SMDiagnostic &, void *) {});
  yaml::Stream stream(MemoryBufferRef(text, path), sourceMgr);
  yaml::document_iterator document = stream.begin();
  auto *root = document == stream.end()
                   ? nullptr
                   : dyn_cast_or_null<yaml::MappingNode>(document->getRoot());
  auto print = [&](SMLoc loc, const Twine &text) {
    sourceMgr.GetMessage(loc, SourceMgr::DK_Error, text)
        .print(nullptr, os, /*ShowColors=*/false);
    return StringRef(out).rtrim().str();
  };
  if (root && diagnostic.getLineNo() == 1 && diagnostic.getColumnNo() == 0 &&
      !field.empty()) {
    for (yaml::KeyValueNode &entry : *root) {
      auto *key = dyn_cast_or_null<yaml::ScalarNode>(entry.getKey());
      SmallString<32> storage;
      if (key && key->getValue(storage) == field && entry.getValue())
        return print(entry.getValue()->getSourceRange().Start, message);
    }
  } else if (root && diagnostic.getLoc().isValid()) {
    std::vector<Span> spans;
    collectSpans(root, "", spans);
    // A mapping's own checks ("restart: backoff '1x' is not a duration")
    // come at the mapping's first key: put them at the key they name.
    StringRef afterField = message.drop_front(field.size());
    const StringRef key = afterField.consume_front(": ")
                              ? afterField.take_while([](char c) {
                                  return c != ' ' && c != ':' && c != '\'';
                                })
                              : StringRef();
    if (!key.empty())
      for (const Span &span : spans)
        if (span.path == field.str() + ": " + key.str())
          return print(SMLoc::getFromPointer(span.start), message);
    // The innermost span at the place. LLVM's "unexpected scalar" is said
    // of a list or mapping where a value was wanted, at its first value.
    const char *loc = diagnostic.getLoc().getPointer();
    const bool collection = message == "unexpected scalar";
    const Span *at = nullptr;
    for (const Span &span : spans)
      if (span.start <= loc && loc <= span.end &&
          (!collection || !isa<yaml::ScalarNode>(span.node)) &&
          (!at || span.start > at->start ||
           (span.start == at->start && span.end < at->end)))
        at = &span;
    if (at) {
      std::string said = describedValueError(message, at->node);
      // The traits' own checks begin with their field already.
      if (!at->path.empty() && !StringRef(said).starts_with(at->path + ":") &&
          !StringRef(said).starts_with(at->path + " "))
        said = at->path + ": " + said;
      return print(diagnostic.getLoc(), said);
    }
  }
  diagnostic.print(nullptr, os, /*ShowColors=*/false);
  return StringRef(out).rtrim().str();
}
} // namespace

Expected<JobSpec> parseJobFile(const std::string &path) {
  Expected<std::string> text = cluster::readYamlFile(path, "job file");
  if (!text)
    return text.takeError();
  {
    // yaml::Input dereferences the root of an empty document.
    SourceMgr sourceMgr;
    sourceMgr.setDiagHandler([](const SMDiagnostic &, void *) {});
    yaml::Stream stream(MemoryBufferRef(*text, path), sourceMgr);
    yaml::document_iterator document = stream.begin();
    if (document == stream.end() || !document->getRoot() ||
        isa<yaml::NullNode>(document->getRoot()))
      return createStringError(inconvertibleErrorCode(),
                               "%s: not a job file (it is empty; a job file "
                               "is a YAML mapping, docs/Jobs.md)",
                               path.c_str());
    // yaml::Input reads the first document only: a second was dropped
    // unread, its job never run.
    if (++document != stream.end())
      if (yaml::Node *second = document->getRoot();
          second && !isa<yaml::NullNode>(second)) {
        std::string message;
        raw_string_ostream os(message);
        sourceMgr
            .GetMessage(second->getSourceRange().Start, SourceMgr::DK_Error,
                        "a second YAML document; a job file holds one job")
            .print(nullptr, os, /*ShowColors=*/false);
        return createStringError(inconvertibleErrorCode(), "%s",
                                 StringRef(message).rtrim().str().c_str());
      }
  }
  std::optional<SMDiagnostic> first;
  RawJob raw;
  {
    yaml::Input input(
        MemoryBufferRef(*text, path), nullptr,
        [](const SMDiagnostic &diag, void *context) {
          auto *out = static_cast<std::optional<SMDiagnostic> *>(context);
          if (!*out)
            *out = diag;
        },
        &first);
    input >> raw;
    if (input.error()) {
      if (!first)
        return createStringError(inconvertibleErrorCode(),
                                 "%s: not a job file (a YAML mapping)",
                                 path.c_str());
      return createStringError(inconvertibleErrorCode(), "%s",
                               placedAtItsField(*first, *text, path).c_str());
    }
  }

  SmallString<256> directory(path);
  sys::path::remove_filename(directory);
  sys::fs::make_absolute(directory);
  auto resolve = [&](const std::string &file) -> std::string {
    if (file.empty() || sys::path::is_absolute(file))
      return file;
    SmallString<256> full(directory);
    sys::path::append(full, file);
    sys::path::remove_dots(full, /*remove_dot_dot=*/true);
    return std::string(full);
  };

  JobSpec job;
  job.name = raw.name;
  job.bundle = resolve(raw.bundle);
  job.data = resolve(raw.data);
  job.eval = resolve(raw.eval);
  job.trainArgs = raw.trainArgs;
  job.asynchronous = raw.consistency == "async";
  job.staleness = raw.staleness.value_or(2);
  job.initial = {int(*raw.workers.initial), int(*raw.shards.initial),
                 *raw.batch.initial};
  job.workers = {*raw.workers.min, *raw.workers.max};
  job.shards = {*raw.shards.min, *raw.shards.max};
  job.batch = {*raw.batch.min, *raw.batch.max};
  job.gradientNoiseScale = raw.gradientNoiseScale;
  job.samples = raw.samples ? *raw.samples : *raw.steps * job.initial.batch;
  job.learningRateRule =
      raw.learningRate.rule == "sqrt"   ? LearningRateRule::Sqrt
      : raw.learningRate.rule == "none" ? LearningRateRule::None
                                        : LearningRateRule::Linear;
  job.warmupSteps = raw.learningRate.warmupSteps;
  job.checkpoint.every = raw.checkpoint.every;
  job.checkpoint.keep = int(raw.checkpoint.keep);
  job.restart.maxRestarts = int(raw.restart.maxRestarts);
  job.restart.backoffSeconds = *parseDuration(raw.restart.backoff);
  job.restart.maxBackoffSeconds = *parseDuration(raw.restart.maxBackoff);
  job.restart.heartbeatTimeoutSeconds =
      *parseDuration(raw.restart.heartbeatTimeout);
  job.restart.excludeHostAfter = int(raw.restart.excludeHostAfter);
  job.restart.capacityWaitSeconds = *parseDuration(raw.restart.capacityWait);
  job.backend.kind =
      raw.backend.kind == "slurm" ? BackendKind::Slurm : BackendKind::Mpirun;
  job.backend.hostfile = resolve(raw.backend.hostfile);
  job.backend.mpirunArgs = raw.backend.mpirunArgs;
  job.backend.partition = raw.backend.partition;
  job.backend.nodes = int(raw.backend.nodes);
  job.backend.sbatchArgs = raw.backend.sbatchArgs;
  job.backend.signalLeadSeconds = *parseDuration(raw.backend.signalLead);

  auto missing = [&](const char *field,
                     const std::string &file) -> std::optional<Error> {
    if (file.empty() || sys::fs::exists(file))
      return std::nullopt;
    return createStringError(inconvertibleErrorCode(),
                             "%s: %s '%s' does not exist", path.c_str(), field,
                             file.c_str());
  };
  for (auto [field, file] :
       {std::pair<const char *, const std::string *>{"bundle", &job.bundle},
        {"data", &job.data},
        {"eval", &job.eval},
        {"backend: hostfile", &job.backend.hostfile}})
    if (std::optional<Error> error = missing(field, *file))
      return std::move(*error);
  if (!job.backend.hostfile.empty()) {
    Expected<std::vector<HostSlots>> hosts = readHostfile(job.backend.hostfile);
    if (!hosts) // it names the hostfile and the line
      return hosts.takeError();
  }
  return job;
}

} // namespace heterps::jobs
