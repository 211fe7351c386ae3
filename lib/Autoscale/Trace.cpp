//===- Trace.cpp - Reading the measured traces and workloads --------------===//
//
// CSV and JSON readers for the Pollux (OSDI'21) traces, the workload format
// and the synthetic workload generator. Every parse error names the file and
// line (and the column where one is at fault).
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Trace.h"
#include "heterps/Cluster/InputFile.h"
#include "heterps/Cluster/JsonLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <random>

using namespace llvm;

namespace heterps::autoscale {

namespace {

Error fileError(StringRef file, size_t line, const Twine &message) {
  if (line == 0)
    return createStringError(inconvertibleErrorCode(),
                             file + ": error: " + message);
  return createStringError(inconvertibleErrorCode(),
                           file + ":" + Twine(line) + ": error: " + message);
}

/// The most bytes a trace or workload file may hold (a workload of the
/// generator's most jobs takes about 40 MB).
constexpr uint64_t kMostTableBytes = uint64_t(1) << 30;

/// `what`: "workload", "trace file", ... for "cannot read WHAT 'PATH'".
Expected<std::string> readText(StringRef path, StringRef what) {
  // A FIFO blocked, /dev/zero read until memory ran out.
  auto buffer = cluster::readInputFile(path, what, kMostTableBytes);
  if (!buffer)
    return buffer.takeError();
  return (*buffer)->getBuffer().str();
}

/// A CSV table with a header; cells are trimmed, quoting is not used by
/// these files and is rejected rather than misread.
struct Table {
  std::vector<std::string> header;
  struct Row {
    size_t line;
    std::vector<StringRef> cells;
  };
  std::vector<Row> rows;
};

Expected<Table> parseTable(StringRef text, StringRef file,
                           ArrayRef<StringRef> required,
                           bool onlyRequired = false) {
  Table table;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  bool haveHeader = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef line = lines[i].rtrim("\r").trim();
    if (line.empty())
      continue;
    if (line.contains('"'))
      return fileError(file, i + 1, "quoted CSV fields are not supported");
    SmallVector<StringRef> cells;
    line.split(cells, ',');
    for (StringRef &cell : cells)
      cell = cell.trim();
    if (!haveHeader) {
      haveHeader = true;
      for (StringRef cell : cells) {
        // A second column of one name would be read as the first.
        if (is_contained(table.header, cell))
          return fileError(file, i + 1,
                           "column '" + cell + "' appears twice in the header");
        // A column nothing reads (a misspelt one, or one the user meant
        // to matter) would be dropped without a word.
        if (onlyRequired && !is_contained(required, cell))
          return fileError(file, i + 1,
                           "column '" + cell + "' is not one this file has (" +
                               join(required.begin(), required.end(), ", ") +
                               ")");
        table.header.push_back(cell.str());
      }
      for (StringRef name : required)
        if (!is_contained(table.header, name))
          return fileError(file, i + 1,
                           "missing column '" + name + "' in the header '" +
                               line + "'");
      continue;
    }
    if (cells.size() != table.header.size())
      return fileError(file, i + 1,
                       formatv("expected {0} fields, found {1}",
                               table.header.size(), cells.size()));
    table.rows.push_back(
        {i + 1, std::vector<StringRef>(cells.begin(), cells.end())});
  }
  if (!haveHeader)
    return fileError(file, 0, "empty file (no header)");
  return table;
}

size_t column(const Table &table, StringRef name) {
  return std::find(table.header.begin(), table.header.end(), name) -
         table.header.begin();
}

Expected<double> number(const Table &table, const Table::Row &row,
                        StringRef name, StringRef file) {
  StringRef cell = row.cells[column(table, name)];
  double value;
  // StringRef::getAsDouble accepts "nan" and "inf"; neither is a time.
  if (cell.empty() || cell.getAsDouble(value) || !std::isfinite(value))
    return fileError(file, row.line,
                     "column '" + name + "': '" + cell + "' is not a number");
  return value;
}

/// The most nodes, replicas or local batch a trace row may give.
constexpr int64_t kMostTraceCount = 1000000;
/// The most samples of a batch, in a workload or a validation trace.
constexpr int64_t kMostBatch = 100'000'000;
/// The largest gradient statistic a validation row may give.
constexpr double kMostGradientStatistic = 1e100;

Expected<int64_t> integer(const Table &table, const Table::Row &row,
                          StringRef name, StringRef file) {
  StringRef cell = row.cells[column(table, name)];
  int64_t value;
  if (cell.getAsInteger(10, value)) {
    // Some files write integers as floats ("7387.0").
    double real;
    if (cell.getAsDouble(real) || real != std::floor(real) ||
        std::fabs(real) > 9e15)
      return fileError(file, row.line,
                       "column '" + name + "': '" + cell +
                           "' is not an integer");
    value = static_cast<int64_t>(real);
  }
  return value;
}

Error parseSteps(StringRef text, StringRef file, bool byPlacement,
                 ApplicationTrace &trace) {
  SmallVector<StringRef> required =
      byPlacement
          ? SmallVector<StringRef>{"placement", "local_bsz", "step_time",
                                   "sync_time"}
          : SmallVector<StringRef>{"num_nodes", "num_replicas", "local_bsz",
                                   "step_time", "sync_time"};
  auto table = parseTable(text, file, required);
  if (!table)
    return table.takeError();
  for (const Table::Row &row : table->rows) {
    StepSample sample;
    std::string placement;
    if (byPlacement) {
      placement = row.cells[column(*table, "placement")].str();
      if (placement.empty() ||
          !all_of(placement, [](char c) { return c >= '0' && c <= '9'; }))
        return fileError(file, row.line,
                         "column 'placement': '" + placement +
                             "' is not a string of per-node replica counts");
      for (char c : placement)
        if (c != '0') {
          ++sample.nodes;
          sample.replicas += c - '0';
        }
    } else {
      auto nodes = integer(*table, row, "num_nodes", file);
      if (!nodes)
        return nodes.takeError();
      auto replicas = integer(*table, row, "num_replicas", file);
      if (!replicas)
        return replicas.takeError();
      // Counts of one machine room, held as int (checked before the cast:
      // -4294967295 became 1).
      if (*nodes < 1 || *replicas < 1 || *nodes > kMostTraceCount ||
          *replicas > kMostTraceCount)
        return fileError(file, row.line,
                         "num_nodes and num_replicas must be from 1 to 1e6");
      sample.nodes = int(*nodes);
      sample.replicas = int(*replicas);
    }
    auto local = integer(*table, row, "local_bsz", file);
    if (!local)
      return local.takeError();
    if (*local > kMostTraceCount)
      return fileError(file, row.line, "local_bsz must be at most 1e6");
    auto step = number(*table, row, "step_time", file);
    if (!step)
      return step.takeError();
    auto sync = number(*table, row, "sync_time", file);
    if (!sync)
      return sync.takeError();
    sample.localBatch = *local;
    sample.stepTime = *step;
    sample.syncTime = *sync;
    if (sample.nodes <= 0 || sample.replicas < sample.nodes ||
        sample.localBatch <= 0 || sample.stepTime <= 0 || sample.syncTime < 0)
      return fileError(file, row.line,
                       "nodes, replicas, local batch and step time must be "
                       "positive (and replicas at least the nodes)");
    // The synchronisation is a part of the step: a step of accumulated
    // micro-batches repeats the rest, and would take no time without it.
    if (sample.syncTime >= sample.stepTime)
      return fileError(file, row.line,
                       "sync_time must be below step_time (it is a part of "
                       "the step)");
    if (byPlacement)
      trace.placements[placement].push_back(sample);
    else
      trace.scalability.push_back(sample);
  }
  return Error::success();
}

} // namespace

Error parsePlacements(StringRef text, StringRef file, ApplicationTrace &trace) {
  return parseSteps(text, file, /*byPlacement=*/true, trace);
}

Error parseScalability(StringRef text, StringRef file,
                       ApplicationTrace &trace) {
  return parseSteps(text, file, /*byPlacement=*/false, trace);
}

Expected<std::vector<ValidationRow>> parseValidation(StringRef text,
                                                     StringRef file) {
  auto table = parseTable(
      text, file, {"progress", "iteration", "metric", "grad_sqr", "grad_var"});
  if (!table)
    return table.takeError();
  std::vector<ValidationRow> rows;
  for (const Table::Row &row : table->rows) {
    ValidationRow out;
    auto progress = number(*table, row, "progress", file);
    if (!progress)
      return progress.takeError();
    auto iteration = integer(*table, row, "iteration", file);
    if (!iteration)
      return iteration.takeError();
    auto metric = number(*table, row, "metric", file);
    if (!metric)
      return metric.takeError();
    auto sqr = number(*table, row, "grad_sqr", file);
    if (!sqr)
      return sqr.takeError();
    auto var = number(*table, row, "grad_var", file);
    if (!var)
      return var.takeError();
    out = {*progress, *iteration, *metric, *sqr, *var};
    if (out.progress <= 0 || out.gradSqr < 0 || out.gradVar < 0)
      return fileError(file, row.line,
                       "progress must be positive and the gradient "
                       "statistics non-negative");
    // The goodput model multiplies them with batch sizes: near the largest
    // double that made it NaN and the job never ran (the traces hold up
    // to about 1e16).
    if (out.gradSqr > kMostGradientStatistic ||
        out.gradVar > kMostGradientStatistic)
      return fileError(file, row.line,
                       "grad_sqr and grad_var must be at most 1e100");
    if (!rows.empty() && out.progress < rows.back().progress)
      return fileError(file, row.line, "progress decreases");
    rows.push_back(out);
  }
  if (rows.empty())
    return fileError(file, 0, "no rows");
  return rows;
}

Expected<ApplicationTrace> readApplicationTrace(StringRef tracesDir,
                                                StringRef app) {
  ApplicationTrace trace;
  trace.name = app.str();
  SmallString<256> dir(tracesDir);
  sys::path::append(dir, app);
  trace.directory = dir.str().str();
  if (!sys::fs::is_directory(dir))
    return fileError(dir, 0,
                     "no trace directory for application '" + app + "'");
  for (auto [name, byPlacement] :
       {std::pair<StringRef, bool>{"placements.csv", true},
        {"scalability.csv", false}}) {
    SmallString<256> path(dir);
    sys::path::append(path, name);
    auto text = readText(path, "trace file");
    if (!text)
      return text.takeError();
    if (Error error = parseSteps(*text, path, byPlacement, trace))
      return std::move(error);
  }
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef file = sys::path::filename(it->path());
    if (!file.consume_front("validation-") || !file.consume_back(".csv"))
      continue;
    int64_t batch;
    if (file.getAsInteger(10, batch) || batch <= 0)
      return fileError(it->path(), 0,
                       "expected validation-B.csv with a positive batch B");
    // A workload's batch_size's bound: past it the batch grid's step
    // counts overflowed (a SIGFPE at 1e11, wrong times at 3e10).
    if (batch > kMostBatch)
      return fileError(it->path(), 0,
                       "batch " + std::to_string(batch) +
                           " is more than 100000000 samples");
    auto text = readText(it->path(), "trace file");
    if (!text)
      return text.takeError();
    auto rows = parseValidation(*text, it->path());
    if (!rows)
      return rows.takeError();
    // validation-012.csv beside validation-12.csv: two traces of one batch.
    if (!trace.validation.emplace(batch, std::move(*rows)).second)
      return fileError(it->path(), 0,
                       "another validation file of this directory gives "
                       "batch " +
                           std::to_string(batch));
  }
  if (ec)
    return fileError(dir, 0, "cannot list: " + ec.message());
  if (trace.validation.empty())
    return fileError(dir, 0, "no validation-B.csv files");
  if (trace.placements.empty())
    return fileError(dir, 0, "placements.csv has no rows");
  return trace;
}

//===----------------------------------------------------------------------===//
// Workloads
//===----------------------------------------------------------------------===//

ArrayRef<StringRef> traceApplications() {
  static const StringRef apps[] = {"bert",     "cifar10", "deepspeech2",
                                   "imagenet", "ncf",     "yolov3"};
  return apps;
}

Expected<std::vector<WorkloadJob>> parseWorkload(StringRef text,
                                                 StringRef file) {
  // Spreadsheets write a byte-order mark, invisible in the header's error.
  text.consume_front("\xEF\xBB\xBF");
  auto table = parseTable(
      text, file, {"name", "time", "application", "num_replicas", "batch_size"},
      /*onlyRequired=*/true);
  if (!table)
    return table.takeError();
  std::vector<WorkloadJob> jobs;
  std::map<std::string, size_t> seen;
  for (const Table::Row &row : table->rows) {
    WorkloadJob job;
    job.name = row.cells[column(*table, "name")].str();
    if (job.name.empty())
      return fileError(file, row.line, "column 'name' is empty");
    auto [it, fresh] = seen.emplace(job.name, row.line);
    if (!fresh)
      return fileError(file, row.line,
                       formatv("job '{0}' repeats the name of line {1}",
                               job.name, it->second));
    auto time = number(*table, row, "time", file);
    if (!time)
      return time.takeError();
    if (*time < 0)
      return fileError(file, row.line, "column 'time' is negative");
    if (*time > kMostSubmitSeconds)
      return fileError(file, row.line, "column 'time' is past 1e8 s (3 years)");
    job.submitTime = *time;
    job.application = row.cells[column(*table, "application")].str();
    if (!is_contained(traceApplications(), StringRef(job.application)))
      return fileError(file, row.line,
                       "column 'application': unknown application '" +
                           job.application +
                           "' (bert, cifar10, deepspeech2, imagenet, ncf, "
                           "yolov3)");
    auto gpus = integer(*table, row, "num_replicas", file);
    if (!gpus)
      return gpus.takeError();
    auto batch = integer(*table, row, "batch_size", file);
    if (!batch)
      return batch.takeError();
    if (*gpus <= 0 || *gpus > 1 << 20)
      return fileError(file, row.line,
                       "column 'num_replicas': must be a positive count");
    if (*batch <= 0)
      return fileError(file, row.line, "column 'batch_size': must be positive");
    // Far past any trace's batch, where the model's rates round to nothing.
    if (*batch > kMostBatch)
      return fileError(file, row.line,
                       "column 'batch_size': more than 100000000 samples");
    job.gpus = *gpus;
    job.batch = *batch;
    jobs.push_back(std::move(job));
  }
  if (jobs.empty())
    return fileError(file, 0, "no jobs");
  return jobs;
}

Expected<std::vector<WorkloadJob>> readWorkload(StringRef path) {
  auto text = readText(path, "workload");
  if (!text)
    return text.takeError();
  return parseWorkload(*text, path);
}

std::string formatWorkload(const std::vector<WorkloadJob> &jobs) {
  std::string out = "name,time,application,num_replicas,batch_size\n";
  for (const WorkloadJob &job : jobs)
    out += formatv("{0},{1},{2},{3},{4}\n", job.name,
                   static_cast<int64_t>(std::llround(job.submitTime)),
                   job.application, job.gpus, job.batch)
               .str();
  return out;
}

Expected<std::vector<WorkloadJob>>
generateWorkload(const GeneratorOptions &options) {
  if (options.jobs <= 0)
    return createStringError(inconvertibleErrorCode(),
                             "--jobs must be positive");
  if (!(options.ratePerHour > 0))
    return createStringError(inconvertibleErrorCode(),
                             "--rate must be positive (jobs per hour)");
  // The (GPUs, batch) requests of the eight Philly workloads, with their
  // counts there, and each application's share of jobs.
  struct Request {
    int gpus;
    int64_t batch;
    double weight;
  };
  static const std::map<std::string, std::vector<Request>> requests = {
      {"bert", {{16, 384, 25}, {6, 384, 23}, {12, 384, 20}, {8, 384, 18}}},
      {"cifar10",
       {{6, 2048, 134}, {12, 4096, 133}, {8, 2048, 119}, {16, 4096, 109}}},
      {"deepspeech2", {{12, 640, 43}, {6, 320, 34}, {8, 320, 34}}},
      {"imagenet", {{24, 3200, 9}, {32, 6400, 9}, {48, 6400, 8}}},
      {"ncf", {{1, 32768, 503}}},
      {"yolov3", {{4, 64, 59}}}};
  std::map<std::string, double> mix = options.mix;
  if (mix.empty())
    mix = {{"bert", 86},     {"cifar10", 495}, {"deepspeech2", 111},
           {"imagenet", 26}, {"ncf", 503},     {"yolov3", 59}};
  std::vector<std::string> apps;
  std::vector<double> weights;
  for (auto &[app, weight] : mix) {
    if (!requests.count(app))
      return createStringError(inconvertibleErrorCode(),
                               "--mix: unknown application '" + app + "'");
    if (!(weight >= 0))
      return createStringError(inconvertibleErrorCode(),
                               "--mix: weight of '" + app +
                                   "' must be non-negative");
    apps.push_back(app);
    weights.push_back(weight);
  }
  if (!any_of(weights, [](double w) { return w > 0; }))
    return createStringError(inconvertibleErrorCode(),
                             "--mix: all weights are zero");
  std::mt19937_64 rng(options.seed);
  std::exponential_distribution<double> gap(options.ratePerHour / 3600.0);
  std::discrete_distribution<size_t> pickApp(weights.begin(), weights.end());
  std::vector<WorkloadJob> jobs;
  double time = 0;
  for (int i = 0; i < options.jobs; ++i) {
    time += gap(rng);
    WorkloadJob job;
    job.application = apps[pickApp(rng)];
    const auto &choices = requests.at(job.application);
    std::vector<double> w;
    for (const Request &r : choices)
      w.push_back(r.weight);
    std::discrete_distribution<size_t> pickRequest(w.begin(), w.end());
    const Request &request = choices[pickRequest(rng)];
    job.name = job.application + "-" + std::to_string(i);
    if (time > kMostSubmitSeconds)
      return createStringError(
          inconvertibleErrorCode(),
          "--rate %g spreads %d jobs past 1e8 s (3 years); give a higher "
          "rate or fewer jobs",
          options.ratePerHour, options.jobs);
    job.submitTime = std::round(time);
    job.gpus = request.gpus;
    job.batch = request.batch;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Expected<PeerResults> readPeerResults(StringRef path) {
  auto text = readText(path, "peer results");
  if (!text)
    return text.takeError();
  auto parsed = heterps::cluster::parseJson(*text);
  if (!parsed)
    return fileError(path, 0, toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  const json::Object *jcts = root ? root->getObject("jcts") : nullptr;
  if (!jcts)
    return fileError(path, 0, "expected an object with \"jcts\"");
  PeerResults results;
  for (const auto &[workload, jobs] : *jcts) {
    const json::Object *byJob = jobs.getAsObject();
    if (!byJob)
      return fileError(path, 0, "jcts." + workload.str() + " is not an object");
    for (const auto &[job, jct] : *byJob) {
      std::optional<double> seconds = jct.getAsNumber();
      if (!seconds)
        return fileError(path, 0,
                         "jcts." + workload.str() + "." + job.str() +
                             " is not a number");
      results.jcts[workload.str()][job.str()] = *seconds;
    }
  }
  if (std::optional<double> mean = root->getNumber("mean"))
    results.mean = *mean;
  return results;
}

} // namespace heterps::autoscale
