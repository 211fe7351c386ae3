//===- Service.cpp - The autoscaler service (heterps elastic serve) -------===//
//
// See Service.h and docs/Autoscaler.md, "The service".
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Service.h"
#include "heterps/Autoscale/Allocator.h"
#include "heterps/Cluster/JsonLimits.h"
#include "heterps/Jobs/Backend.h"
#include "heterps/Jobs/JobSpec.h"
#include "heterps/Jobs/Process.h"
#include "heterps/Jobs/Supervisor.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <signal.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace llvm;
namespace fs = std::filesystem;

namespace heterps::autoscale {

using jobs::unixSeconds;
using jobs::writeFileAtomically;

static Error failure(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// State and its JSON
//===----------------------------------------------------------------------===//

ServiceJob ServiceJob::description() const {
  ServiceJob fresh;
  fresh.id = id;
  fresh.name = name;
  fresh.jobFile = jobFile;
  fresh.microBatch = microBatch;
  fresh.shards = shards;
  fresh.samples = samples;
  fresh.noiseScale = noiseScale;
  fresh.minWorkers = minWorkers;
  fresh.initialWorkers = initialWorkers;
  fresh.maxWorkers = maxWorkers;
  fresh.minBatch = minBatch;
  fresh.initialBatch = initialBatch;
  fresh.maxBatch = maxBatch;
  fresh.submittedAt = submittedAt;
  return fresh;
}

void ServiceJob::recordRate(double stepsPerSecond) {
  auto it = std::find_if(rates.begin(), rates.end(), [&](const RateSample &r) {
    return r.workers == workers && r.batch == batch;
  });
  if (it == rates.end())
    rates.push_back({workers, batch, stepsPerSecond});
  else
    it->stepsPerSecond = stepsPerSecond;
}

ServiceJob *ServiceState::find(const std::string &id) {
  for (ServiceJob &job : jobs)
    if (job.id == id)
      return &job;
  return nullptr;
}

std::string Decision::describe() const {
  std::string text = job.empty() ? action : action + " " + job;
  if (action == "start" || action == "resize")
    text += formatv(": {0} worker{1}, batch {2}", workers,
                    workers == 1 ? "" : "s", batch)
                .str();
  if (!reason.empty())
    text += ": " + reason;
  if (action == "start" || action == "resize" || action == "plan")
    text += formatv(" (predicted gain {0}{1:F3})", predictedGain < 0 ? "" : "+",
                    predictedGain)
                .str();
  return text;
}

static json::Object jobJson(const ServiceJob &job) {
  json::Array rates;
  for (const RateSample &r : job.rates)
    rates.push_back(json::Object{{"workers", r.workers},
                                 {"batch", r.batch},
                                 {"steps_per_second", r.stepsPerSecond}});
  return json::Object{
      {"id", job.id},
      {"name", job.name},
      {"job_file", job.jobFile},
      {"micro_batch", job.microBatch},
      {"shards", job.shards},
      {"samples", job.samples},
      {"gradient_noise_scale", job.noiseScale},
      {"workers_range",
       json::Array{job.minWorkers, job.initialWorkers, job.maxWorkers}},
      {"batch_range",
       json::Array{job.minBatch, job.initialBatch, job.maxBatch}},
      {"phase", job.phase},
      {"reason", job.reason},
      {"workers", job.workers},
      {"batch", job.batch},
      {"pid", job.pid},
      {"starts", job.starts},
      {"supervisor_losses", job.supervisorLosses},
      {"resizes", job.resizes},
      {"pending_resize", job.pendingResize},
      {"cancel_requested", job.cancelRequested},
      {"submitted_at", job.submittedAt},
      {"started_at", job.startedAt},
      {"ended_at", job.endedAt},
      {"startup_s", job.startupSeconds},
      {"finish_s", job.finishSeconds},
      {"last_step", job.lastStep},
      {"last_step_at", job.lastStepAt},
      {"resize_pauses_s", json::Array(job.resizePauses)},
      {"pause_since", job.pauseSince},
      {"pause_step", job.pauseStep},
      {"pause_is_start", job.pauseIsStart},
      {"rates", std::move(rates)}};
}

static Expected<ServiceJob> jobFromJson(const json::Object &o) {
  ServiceJob job;
  auto str = [&](StringRef key) { return o.getString(key).value_or("").str(); };
  // A field that is there must be what it says (a file edited by hand).
  std::string wrong;
  auto integer = [&](StringRef key) -> int64_t {
    const json::Value *v = o.get(key);
    if (!v)
      return 0;
    std::optional<int64_t> n = v->getAsInteger();
    if ((!n || *n < -1) && wrong.empty())
      wrong = "'" + key.str() + "' is not a whole number of at least -1";
    return n.value_or(0);
  };
  auto number = [&](StringRef key) { return o.getNumber(key).value_or(0); };
  // Times (seconds since the epoch) and durations: a state edited or
  // damaged by hand made `elastic predict` run for ever or print 1e30 s.
  auto bounded = [&](StringRef key, double most) {
    const double value = number(key);
    if (!(value >= 0 && value <= most) && wrong.empty())
      wrong = formatv("'{0}' is not a number of seconds from 0 to {1:e0}", key,
                      most)
                  .str();
    return value;
  };
  auto time = [&](StringRef key) { return bounded(key, kMostStateTime); };
  auto duration = [&](StringRef key) {
    return bounded(key, kMostStateDuration);
  };
  job.id = str("id");
  job.name = str("name");
  job.jobFile = str("job_file");
  job.microBatch = integer("micro_batch");
  job.shards = int(integer("shards"));
  job.samples = integer("samples");
  job.noiseScale = number("gradient_noise_scale");
  const json::Array *w = o.getArray("workers_range");
  const json::Array *b = o.getArray("batch_range");
  if (job.id.empty() || !w || !b || w->size() != 3 || b->size() != 3)
    return failure("a job entry lacks its id or its ranges");
  for (const json::Value &count : *w)
    if (count.getAsInteger().value_or(1) > jobs::kMostRanks)
      return failure("job '" + job.id + "' has more than " +
                     std::to_string(jobs::kMostRanks) +
                     " workers in its range");
  job.minWorkers = int((*w)[0].getAsInteger().value_or(1));
  job.initialWorkers = int((*w)[1].getAsInteger().value_or(1));
  job.maxWorkers = int((*w)[2].getAsInteger().value_or(1));
  job.minBatch = (*b)[0].getAsInteger().value_or(0);
  job.initialBatch = (*b)[1].getAsInteger().value_or(0);
  job.maxBatch = (*b)[2].getAsInteger().value_or(0);
  if (job.minWorkers < 1 || job.minWorkers > job.maxWorkers ||
      job.minBatch < 1 || job.minBatch > job.maxBatch)
    return failure("job '" + job.id + "' has an empty range");
  if (o.getString("phase"))
    job.phase = str("phase");
  static const StringRef phases[] = {"queued", "running", "succeeded", "failed",
                                     "cancelled"};
  if (!llvm::is_contained(phases, job.phase))
    return failure("job '" + job.id + "' has phase '" + job.phase +
                   "', none of queued, running, succeeded, failed, "
                   "cancelled");
  job.reason = str("reason");
  job.workers = int(integer("workers"));
  job.batch = integer("batch");
  job.pid = int(integer("pid"));
  job.starts = int(integer("starts"));
  job.supervisorLosses = int(integer("supervisor_losses"));
  job.resizes = int(integer("resizes"));
  job.pendingResize = str("pending_resize");
  job.cancelRequested = o.getBoolean("cancel_requested").value_or(false);
  job.submittedAt = time("submitted_at");
  job.startedAt = time("started_at");
  job.endedAt = time("ended_at");
  job.startupSeconds = duration("startup_s");
  job.finishSeconds = duration("finish_s");
  job.lastStep = integer("last_step");
  job.lastStepAt = time("last_step_at");
  if (const json::Array *pauses = o.getArray("resize_pauses_s"))
    for (const json::Value &v : *pauses) {
      const double pause = v.getAsNumber().value_or(0);
      if (!(pause >= 0 && pause <= kMostStateDuration) && wrong.empty())
        wrong = "'resize_pauses_s' holds a pause out of range";
      job.resizePauses.push_back(pause);
    }
  job.pauseSince = time("pause_since");
  job.pauseStep = integer("pause_step");
  job.pauseIsStart = o.getBoolean("pause_is_start").value_or(false);
  if (const json::Array *rates = o.getArray("rates"))
    for (const json::Value &v : *rates)
      if (const json::Object *r = v.getAsObject())
        job.rates.push_back({int(r->getInteger("workers").value_or(0)),
                             r->getInteger("batch").value_or(0),
                             r->getNumber("steps_per_second").value_or(0)});
  for (const auto &rate : job.rates)
    if (!(rate.stepsPerSecond >= kLeastStepsPerSecond &&
          rate.stepsPerSecond <= 1e9) &&
        wrong.empty())
      wrong = formatv("a rate's 'steps_per_second' is not from {0:e0} to 1e9",
                      kLeastStepsPerSecond)
                  .str();
  if (!wrong.empty())
    return failure("job '" + job.id + "': " + wrong);
  return job;
}

std::string serviceStateJson(const ServiceState &state) {
  json::Array jobs, decisions;
  for (const ServiceJob &job : state.jobs)
    jobs.push_back(jobJson(job));
  for (const Decision &d : state.decisions)
    decisions.push_back(json::Object{{"time", d.time},
                                     {"job", d.job},
                                     {"action", d.action},
                                     {"workers", d.workers},
                                     {"batch", d.batch},
                                     {"reason", d.reason},
                                     {"predicted_gain", d.predictedGain},
                                     {"line", d.describe()}});
  std::string text;
  raw_string_ostream(text) << formatv(
      "{0:2}",
      json::Value(json::Object{{"jobs", std::move(jobs)},
                               {"decisions", std::move(decisions)},
                               {"last_plan", state.lastPlan},
                               {"capacity", state.capacity},
                               {"interval_s", state.intervalSeconds},
                               {"resize_cost_s", state.resizeCostSeconds}}));
  return text + "\n";
}

Expected<ServiceState> parseServiceState(const std::string &text) {
  Expected<json::Value> value = heterps::cluster::parseJson(text);
  if (!value)
    return value.takeError();
  const json::Object *o = value->getAsObject();
  if (!o)
    return failure("the service state is not a JSON object");
  ServiceState state;
  state.lastPlan = o->getNumber("last_plan").value_or(0);
  const int64_t capacity = o->getInteger("capacity").value_or(0);
  if (capacity < 0 || capacity > kMostServiceSlots)
    return failure("the service state's 'capacity' is not from 0 to " +
                   std::to_string(kMostServiceSlots) + " slots");
  state.capacity = int(capacity);
  state.intervalSeconds = o->getNumber("interval_s").value_or(0);
  state.resizeCostSeconds = o->getNumber("resize_cost_s").value_or(0);
  if (!(state.intervalSeconds >= 0 &&
        state.intervalSeconds <= kMostStateDuration) ||
      !(state.resizeCostSeconds >= 0 &&
        state.resizeCostSeconds <= kMostStateDuration))
    return failure("the service state's 'interval_s' or 'resize_cost_s' is "
                   "not a number of seconds from 0 to 1e9");
  // Without it, the file was read as no jobs and overwritten so: every
  // job, and the slots of the running ones, forgotten.
  const json::Array *jobs = o->getArray("jobs");
  if (!jobs)
    return failure("the service state has no 'jobs' array");
  for (const json::Value &v : *jobs) {
    if (!v.getAsObject())
      return failure("a job entry is not an object");
    Expected<ServiceJob> job = jobFromJson(*v.getAsObject());
    if (!job)
      return job.takeError();
    if (state.find(job->id))
      return failure("job '" + job->id + "' is listed twice");
    state.jobs.push_back(std::move(*job));
  }
  if (const json::Array *decisions = o->getArray("decisions"))
    for (const json::Value &v : *decisions)
      if (const json::Object *d = v.getAsObject())
        state.decisions.push_back({d->getNumber("time").value_or(0),
                                   d->getString("job").value_or("").str(),
                                   d->getString("action").value_or("").str(),
                                   int(d->getInteger("workers").value_or(0)),
                                   d->getInteger("batch").value_or(0),
                                   d->getString("reason").value_or("").str(),
                                   d->getNumber("predicted_gain").value_or(0)});
  return state;
}

std::string submissionJson(const ServiceJob &job) {
  std::string text;
  raw_string_ostream(text) << json::Value(jobJson(job));
  return text + "\n";
}

Expected<ServiceJob> parseSubmission(const std::string &text) {
  Expected<json::Value> value = heterps::cluster::parseJson(text);
  if (!value)
    return value.takeError();
  if (!value->getAsObject())
    return failure("a submission is a JSON object");
  Expected<ServiceJob> job = jobFromJson(*value->getAsObject());
  if (!job)
    return job.takeError();
  // Only the job's description comes from the submitter.
  return job->description();
}

//===----------------------------------------------------------------------===//
// The throughput model and the plan
//===----------------------------------------------------------------------===//

/// Step time = overhead + batch / workers. Returns the overhead.
static double stepOverhead(const ServiceJob &job) {
  double x0 = double(std::max<int64_t>(job.initialBatch, 1)) /
              std::max(job.initialWorkers, 1);
  double prior = x0 / 9; // a tenth of the initial step
  // Least squares of seconds per step against samples per worker: the
  // intercept over the slope is the overhead in the model's units.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::set<double> distinct;
  for (const RateSample &r : job.rates) {
    if (r.workers < 1 || r.batch < 1 || r.stepsPerSecond <= 0)
      continue;
    double x = double(r.batch) / r.workers, y = 1 / r.stepsPerSecond;
    distinct.insert(x);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  if (distinct.size() < 2)
    return prior;
  double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  double intercept = (sy - slope * sx) / n;
  if (!(slope > 0) || !std::isfinite(intercept))
    return prior;
  return std::max(0.0, intercept / slope);
}

double modelRate(const ServiceJob &job, int workers, int64_t batch) {
  if (workers < 1 || batch < 1)
    return 0;
  return double(batch) / (stepOverhead(job) + double(batch) / workers);
}

double statisticalEfficiency(const ServiceJob &job, int64_t batch) {
  double initial = double(std::max<int64_t>(job.initialBatch, 1));
  double noise = job.noiseScale > 0 ? job.noiseScale : initial;
  return batch < 1 ? 0 : (noise + initial) / (noise + double(batch));
}

double modelGoodput(const ServiceJob &job, int workers, int64_t batch) {
  return modelRate(job, workers, batch) * statisticalEfficiency(job, batch);
}

double medianSeconds(std::vector<double> seconds) {
  if (seconds.empty())
    return -1;
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  return n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
}

double chargedResizeCost(const ServiceState &state, double configured) {
  std::vector<double> pauses;
  for (const ServiceJob &job : state.jobs)
    pauses.insert(pauses.end(), job.resizePauses.begin(),
                  job.resizePauses.end());
  double measured = medianSeconds(std::move(pauses));
  return measured > 0 ? measured : configured;
}

/// Whether a worker count and batch are a shape the job may take: in range,
/// whole micro-batches, at least one per worker.
static bool validShape(const ServiceJob &job, int workers, int64_t batch) {
  if (workers < job.minWorkers || workers > job.maxWorkers ||
      batch < job.minBatch || batch > job.maxBatch)
    return false;
  if (job.microBatch > 0)
    return batch % job.microBatch == 0 && batch / job.microBatch >= workers;
  return batch >= workers;
}

static std::vector<int64_t> batchChoices(const ServiceJob &job, int count) {
  int64_t step = std::max<int64_t>(job.microBatch, 1);
  // A step larger than the whole job trains nothing more (a noise scale
  // of 1e308 asked for the batch of 10^8 that one machine cannot hold).
  const int64_t largest = std::max(
      {job.minBatch, job.initialBatch,
       job.samples > 0 ? std::min(job.maxBatch, job.samples / step * step)
                       : job.maxBatch});
  std::set<int64_t> batches{job.initialBatch, job.minBatch, largest};
  for (int k = 1; k + 1 < count; ++k) {
    int64_t b = job.minBatch + (largest - job.minBatch) * k / (count - 1);
    batches.insert(std::max(job.minBatch, b / step * step));
  }
  return {batches.begin(), batches.end()};
}

Plan planAllocation(const ServiceState &state, const PlanOptions &options) {
  Plan plan;
  plan.capacity = options.capacity;
  struct Candidate {
    const ServiceJob *job;
    std::vector<std::pair<int, int64_t>> shapes;
    std::vector<double> values;
    int current = -1;
    bool fixed = false;
  };
  std::vector<Candidate> candidates;
  for (const ServiceJob &job : state.jobs) {
    if (job.phase != "queued" && job.phase != "running")
      continue;
    if (job.phase == "queued" && job.cancelRequested)
      continue;
    Candidate c{&job, {}, {}, -1, false};
    double best = 0;
    for (int w = job.minWorkers; w <= job.maxWorkers; ++w)
      for (int64_t b : batchChoices(job, options.batchChoices))
        if (validShape(job, w, b)) {
          c.shapes.push_back({w, b});
          best = std::max(best, modelGoodput(job, w, b));
        }
    if (job.active()) {
      auto here = std::find(c.shapes.begin(), c.shapes.end(),
                            std::make_pair(job.workers, job.batch));
      if (here == c.shapes.end()) {
        c.shapes.push_back({job.workers, job.batch});
        best = std::max(best, modelGoodput(job, job.workers, job.batch));
        here = c.shapes.end() - 1;
      }
      c.current = int(here - c.shapes.begin());
      // A resize under way or a cancelled job is not moved.
      c.fixed = !job.pendingResize.empty() || job.cancelRequested;
    }
    for (auto [w, b] : c.shapes)
      c.values.push_back(best > 0 ? modelGoodput(job, w, b) / best : 0);
    candidates.push_back(std::move(c));
  }

  // Running jobs are never preempted: one the allocator leaves out is fixed
  // where it is, and the rest are planned again.
  std::vector<int> choice(candidates.size(), -1);
  std::vector<std::string> reasons(candidates.size());
  for (int round = 0; round <= int(candidates.size()); ++round) {
    AllocationRequest request;
    std::vector<size_t> index;
    int free = options.capacity;
    for (size_t i = 0; i < candidates.size(); ++i) {
      Candidate &c = candidates[i];
      if (c.fixed) {
        choice[i] = c.current;
        free -= c.job->slots(c.shapes[c.current].first);
        continue;
      }
      AllocationJob job;
      job.id = c.job->id;
      job.current = c.current;
      for (size_t k = 0; k < c.shapes.size(); ++k)
        job.choices.push_back({{c.job->slots(c.shapes[k].first)},
                               c.shapes[k].second,
                               c.values[k],
                               0});
      request.jobs.push_back(std::move(job));
      index.push_back(i);
    }
    request.capacity = {std::max(free, 0)};
    request.reallocationPenalty = options.reallocationPenalty;
    request.hysteresis = options.hysteresis;
    request.classNames = {"slot"};
    AllocationResult result = allocate(request);
    bool again = false;
    for (size_t k = 0; k < index.size(); ++k) {
      Candidate &c = candidates[index[k]];
      choice[index[k]] = result.choice[k];
      reasons[index[k]] = result.reasons[k];
      if (result.choice[k] < 0 && c.current >= 0) {
        c.fixed = true;
        again = true;
      }
    }
    if (!again)
      break;
  }

  int used = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate &c = candidates[i];
    PlannedJob p;
    p.id = c.job->id;
    if (c.current >= 0)
      p.valueBefore = c.values[c.current];
    if (choice[i] >= 0) {
      p.workers = c.shapes[choice[i]].first;
      p.batch = c.shapes[choice[i]].second;
      p.valueAfter = c.values[choice[i]];
      used += c.job->slots(p.workers);
    } else {
      p.reason = reasons[i];
    }
    plan.valueBefore += p.valueBefore;
    plan.valueAfter += p.valueAfter;
    plan.jobs.push_back(std::move(p));
  }
  // Queued reasons say what the job needs against what is there.
  for (PlannedJob &p : plan.jobs)
    if (p.workers == 0) {
      const ServiceJob *job = nullptr;
      for (const Candidate &c : candidates)
        if (c.job->id == p.id)
          job = c.job;
      std::string needs =
          formatv("needs at least {0} slots ({1} workers + {2} shards)",
                  job->slots(job->minWorkers), job->minWorkers, job->shards)
              .str();
      std::string why =
          job->slots(job->minWorkers) > options.capacity
              ? formatv("{0}, above the capacity of {1}", needs,
                        options.capacity)
                    .str()
              : formatv("{0}; {1} of {2} slots are free after the plan", needs,
                        options.capacity - used, options.capacity)
                    .str();
      p.reason = p.reason.empty() ? why : why + " (" + p.reason + ")";
    }
  plan.used = used;
  return plan;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

ServiceFiles::ServiceFiles(const std::string &dir)
    : directory(dir), state(dir + "/state.json"), inbox(dir + "/inbox"),
      jobs(dir + "/jobs"), jobFiles(dir + "/jobfiles"),
      lock(dir + "/service.lock"), log(dir + "/decisions.log"),
      submitLock(dir + "/submit.lock"), issuedIds(dir + "/issued-ids") {}

std::string ServiceFiles::jobDirectory(const std::string &id) const {
  return jobs + "/" + id;
}

static std::optional<std::string> readFile(const std::string &path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

namespace {
Expected<std::string> adjustedJobFile(const ServiceJob &job);
} // namespace

Expected<std::string> submitJob(const std::string &stateDirectory,
                                ServiceJob job) {
  ServiceFiles files(stateDirectory);
  std::error_code ec;
  fs::create_directories(files.inbox, ec);
  if (ec)
    return failure("cannot create '" + files.inbox + "': " + ec.message());
  std::set<std::string> taken;
  if (std::optional<std::string> text = readFile(files.state)) {
    if (Expected<ServiceState> state = parseServiceState(*text))
      for (const ServiceJob &j : state->jobs)
        taken.insert(j.id);
    else
      consumeError(state.takeError());
  }
  job.submittedAt = unixSeconds();
  // The job as submitted, not as its file reads when it starts: a copy,
  // its paths absolute, under a name of this submitter's own.
  fs::create_directories(files.jobFiles, ec);
  {
    ServiceJob initial = job;
    initial.workers = job.initialWorkers;
    initial.batch = job.initialBatch;
    Expected<std::string> snapshot = adjustedJobFile(initial);
    if (!snapshot)
      return snapshot.takeError();
    const std::string copy =
        formatv("{0}/{1}-submitted-{2}-{3}.yaml", files.jobFiles, job.name,
                ::getpid(), int64_t(job.submittedAt * 1e6))
            .str();
    if (Error error = writeFileAtomically(copy, *snapshot))
      return std::move(error);
    // Read back as the service will read it: a job file this rewrite
    // breaks is the submitter's error now, not a job that fails to start.
    if (Expected<jobs::JobSpec> again = jobs::parseJobFile(copy); !again) {
      fs::remove(copy, ec);
      return failure("'" + job.jobFile +
                     "' could not be adjusted for the service (write its "
                     "top-level keys plainly, one a line): " +
                     toString(again.takeError()));
    }
    job.jobFile = copy;
  }
  // Ids are handed out one submitter at a time, and every id handed out is
  // kept: chosen from state.json and the inbox alone, an id the service
  // recorded and took out of the inbox between a submitter's reading and
  // its link was handed out again, and the service dropped the second
  // submission without a word (7 of 120 racing submissions).
  const int lockFd =
      ::open(files.submitLock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lockFd < 0 || ::flock(lockFd, LOCK_EX) != 0) {
    if (lockFd >= 0)
      ::close(lockFd);
    return failure("cannot lock '" + files.submitLock +
                   "': " + std::strerror(errno));
  }
  auto unlock = llvm::make_scope_exit([&] { ::close(lockFd); });
  if (std::optional<std::string> issued = readFile(files.issuedIds))
    for (StringRef line : llvm::split(*issued, '\n'))
      taken.insert(line.trim().str());
  std::string tmp = files.inbox + "/.submit-" + std::to_string(::getpid());
  for (int n = 1; n < 100000; ++n) {
    std::string id = job.name + "-" + std::to_string(n);
    if (taken.count(id) || fs::exists(files.jobDirectory(id)))
      continue;
    job.id = id;
    // Kept as issued before it is published: a submission the service may
    // start is never one whose id could be handed out again.
    std::ofstream issued(files.issuedIds, std::ios::app);
    issued << id << "\n";
    if (!issued.flush())
      return failure("cannot write '" + files.issuedIds + "'");
    std::ofstream(tmp) << submissionJson(job);
    // link() publishes the file only under a name nobody else has.
    int rc = ::link(tmp.c_str(), (files.inbox + "/" + id + ".json").c_str());
    int err = errno;
    ::unlink(tmp.c_str());
    if (rc == 0)
      return id;
    if (err != EEXIST)
      return failure("cannot write a submission in '" + files.inbox +
                     "': " + std::strerror(err));
  }
  return failure("no free job id for '" + job.name + "'");
}

Error requestCancel(const std::string &stateDirectory, const std::string &id) {
  ServiceFiles files(stateDirectory);
  std::error_code ec;
  bool known = fs::exists(files.inbox + "/" + id + ".json", ec);
  if (ec)
    return failure("cannot read '" + files.inbox + "': " + ec.message());
  const bool hasState = fs::exists(files.state, ec);
  if (ec)
    return failure("cannot read '" + files.state + "': " + ec.message());
  if (hasState) {
    std::optional<std::string> text = readFile(files.state);
    if (!text)
      return failure("cannot read '" + files.state + "'");
    Expected<ServiceState> state = parseServiceState(*text);
    if (!state)
      return failure("'" + files.state + "' is not a service state (" +
                     toString(state.takeError()) + ")");
    if (ServiceJob *job = state->find(id)) {
      if (job->finished())
        return failure("job '" + id + "' has already ended (" + job->phase +
                       ")");
      known = true;
    }
  }
  if (!known)
    return failure("no job '" + id + "' in '" + stateDirectory + "'");
  return writeFileAtomically(files.inbox + "/cancel-" + id, id + "\n");
}

Expected<int> hostfileCapacity(const std::string &path) {
  Expected<std::vector<jobs::HostSlots>> hosts = jobs::readHostfile(path);
  if (!hosts)
    return hosts.takeError();
  int64_t slots = 0;
  for (const jobs::HostSlots &host : *hosts)
    slots += host.slots;
  if (slots > kMostServiceSlots)
    return failure(formatv("the hostfile '{0}' holds {1} slots, more than "
                           "the {2} a service shares",
                           path, slots, kMostServiceSlots)
                       .str());
  return int(slots);
}

Expected<int> slurmCapacity() {
  FILE *pipe = ::popen("sinfo -h -N -o '%N %T %c' 2>&1", "r");
  if (!pipe)
    return failure("cannot run sinfo");
  std::string text;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    text.append(buffer, n);
  if (::pclose(pipe) != 0)
    return failure("sinfo failed: " + text);
  std::map<std::string, int> nodes; // a node is listed once per partition
  std::istringstream lines(text);
  std::string node, state;
  int cpus;
  while (lines >> node >> state >> cpus) {
    StringRef s(state);
    if (s.starts_with("down") || s.starts_with("drain") ||
        s.starts_with("fail") || s.starts_with("unk") || s.contains('*'))
      continue;
    nodes[node] = cpus;
  }
  int total = 0;
  for (auto &[name, n] : nodes)
    total += n;
  if (total <= 0)
    return failure("sinfo lists no node that is up");
  return total;
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

namespace {

/// Whether a process lives; reaps it when it is the service's own child.
bool processAlive(int pid) {
  if (pid <= 0)
    return false;
  int status = 0;
  pid_t done = ::waitpid(pid, &status, WNOHANG);
  if (done == pid)
    return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

/// Whether `pid` is a supervisor of `jobDirectory` (`heterps job run ...
/// --job-dir DIR`): a pid recorded before the service went down may since
/// name any other process.
bool isSupervisorOf(int pid, const std::string &jobDirectory) {
  if (pid <= 0 || !processAlive(pid))
    return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline",
                   std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');)
    args.push_back(arg);
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--job-dir" && args[i + 1] == jobDirectory)
      return llvm::is_contained(args, "job") && llvm::is_contained(args, "run");
  return false;
}

/// The pid in a job directory's supervisor.lock when a supervisor holds it,
/// else 0.
int supervisorPid(const std::string &jobDirectory) {
  jobs::JobFiles files(jobDirectory);
  int fd = ::open(files.lock.c_str(), O_RDONLY);
  if (fd < 0)
    return 0;
  bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  int pid = 0;
  if (held)
    std::ifstream(files.lock) >> pid;
  return held ? std::max(pid, 1) : 0;
}

std::string quoted(const std::string &text) {
  std::string out;
  raw_string_ostream(out) << json::Value(text);
  return out;
}

std::string quotedList(const std::vector<std::string> &words) {
  std::string out = "[";
  for (size_t i = 0; i < words.size(); ++i)
    out += (i ? ", " : "") + quoted(words[i]);
  return out + "]";
}

/// The submitted job file with the allocated shape and absolute paths: its
/// top-level keys the service sets are dropped (with their indented lines)
/// and written again at the end.
Expected<std::string> adjustedJobFile(const ServiceJob &job) {
  Expected<jobs::JobSpec> spec = jobs::parseJobFile(job.jobFile);
  if (!spec)
    return spec.takeError();
  std::optional<std::string> text = readFile(job.jobFile);
  if (!text)
    return failure("cannot read the job file '" + job.jobFile + "'");
  static const std::set<std::string> replaced{"bundle",  "data",   "eval",
                                              "samples", "steps",  "workers",
                                              "batch",   "backend"};
  std::string out, line;
  std::istringstream in(*text);
  bool dropping = false;
  while (std::getline(in, line)) {
    // The keys below go after the document, not after its end marker.
    if (StringRef(line).rtrim() == "...")
      continue;
    bool topLevel =
        !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#';
    if (topLevel) {
      // As YAML reads the key: `workers :` and `"batch":` were kept, and
      // the keys added below then duplicated them.
      StringRef key =
          StringRef(line).take_until([](char c) { return c == ':'; }).rtrim();
      if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') &&
          key.back() == key.front())
        key = key.drop_front().drop_back();
      dropping = replaced.count(key.str()) > 0;
    }
    if (!dropping)
      out += line + "\n";
  }
  const jobs::JobSpec &s = *spec;
  out += "# Set by heterps elastic serve:\n";
  out += "bundle: " + quoted(s.bundle) + "\n";
  out += "data: " + quoted(s.data) + "\n";
  if (!s.eval.empty())
    out += "eval: " + quoted(s.eval) + "\n";
  out += formatv("samples: {0}\n", s.samples).str();
  out += formatv("workers: {{initial: {0}, min: {1}, max: {2}}\n", job.workers,
                 s.workers.min, s.workers.max)
             .str();
  out += formatv("batch: {{initial: {0}, min: {1}, max: {2}}\n", job.batch,
                 s.batch.min, s.batch.max)
             .str();
  const jobs::BackendSpec &b = s.backend;
  out += std::string("backend: {kind: ") + jobs::backendName(b.kind);
  if (!b.hostfile.empty())
    out += ", hostfile: " + quoted(b.hostfile);
  if (!b.mpirunArgs.empty())
    out += ", mpirun_args: " + quotedList(b.mpirunArgs);
  if (!b.partition.empty())
    out += ", partition: " + quoted(b.partition);
  if (b.nodes > 0)
    out += formatv(", nodes: {0}", b.nodes).str();
  if (!b.sbatchArgs.empty())
    out += ", sbatch_args: " + quotedList(b.sbatchArgs);
  out += formatv(", signal_lead: {0}s}\n", b.signalLeadSeconds).str();
  return out;
}

/// The job's state.json as its supervisor last wrote it; nullopt where
/// there is none or it does not parse (a write under way).
static std::optional<json::Object> readJobState(const jobs::JobFiles &files) {
  std::optional<std::string> text = readFile(files.state);
  if (!text)
    return std::nullopt;
  Expected<json::Value> value = heterps::cluster::parseJson(*text);
  if (!value) {
    consumeError(value.takeError());
    return std::nullopt;
  }
  if (json::Object *object = value->getAsObject())
    return std::move(*object);
  return std::nullopt;
}

/// Supervisors lost (killed without a report) before a job is given up.
constexpr int kMostSupervisorLosses = 3;

class Loop {
public:
  Loop(const ServiceOptions &options, std::ostream &log)
      : options(options), files(options.stateDirectory), log(log) {}

  Error run(const std::atomic<bool> &stop);

private:
  const ServiceOptions &options;
  ServiceFiles files;
  std::ostream &log;
  ServiceState state;
  bool dirty = false;
  std::vector<std::string> triggers; // why the next plan runs

  void decide(Decision d) {
    d.time = unixSeconds();
    log << "heterps elastic: " << d.describe() << "\n";
    log.flush();
    std::ofstream(files.log, std::ios::app)
        << formatv("{0:F1} ", d.time).str() << d.describe() << "\n";
    state.decisions.push_back(std::move(d));
    // The newest decisions are enough to explain the present.
    if (state.decisions.size() > 2000)
      state.decisions.erase(state.decisions.begin(),
                            state.decisions.begin() + 1000);
    dirty = true;
  }

  Error save() {
    if (!dirty)
      return Error::success();
    dirty = false;
    return writeFileAtomically(files.state, serviceStateJson(state));
  }

  void recover();
  /// Takes the shape the job's supervisor runs (its state.json) as the
  /// job's: a job adopted, or restarted, runs what its supervisor says,
  /// and a plan that counted another shape gave its slots away twice.
  void takeRunningShape(ServiceJob &job, const std::string &why);
  /// The same, from the job's state.json already read.
  void takeRunningShape(ServiceJob &job, const json::Object &jobState,
                        const std::string &why);
  void readInbox();
  void observe(ServiceJob &job);
  void end(ServiceJob &job, const std::string &why);
  /// A job whose supervisor ended without writing its report: ends what
  /// that supervisor left running, and starts a new one unless the job was
  /// cancelled or lost too many. True if it started one.
  bool supervisorLost(ServiceJob &job, const jobs::JobFiles &jobFiles);
  void replan();
  void start(ServiceJob &job, const std::string &reason, double gain);
  void resize(ServiceJob &job, int workers, int64_t batch,
              const std::string &reason, double gain);
  Expected<int> capacity();
};

Expected<int> Loop::capacity() {
  if (options.capacity > 0)
    return options.capacity;
  return slurmCapacity();
}

void Loop::takeRunningShape(ServiceJob &job, const std::string &why) {
  if (std::optional<json::Object> jobState =
          readJobState(jobs::JobFiles(files.jobDirectory(job.id))))
    takeRunningShape(job, *jobState, why);
}

void Loop::takeRunningShape(ServiceJob &job, const json::Object &jobState,
                            const std::string &why) {
  const json::Object *shape = jobState.getObject("shape");
  if (!shape)
    return;
  const int workers = int(std::clamp<int64_t>(
      shape->getInteger("workers").value_or(job.workers), 1, jobs::kMostRanks));
  const int64_t batch = shape->getInteger("batch").value_or(job.batch);
  if (workers == job.workers && batch == job.batch)
    return;
  job.workers = workers;
  job.batch = batch;
  job.shapeStep = -1;
  decide({0, job.id, "shape", workers, batch, why});
}

/// After a restart: each running job is adopted when its supervisor still
/// runs, else recorded as ended from its report.
void Loop::recover() {
  for (ServiceJob &job : state.jobs) {
    std::string dir = files.jobDirectory(job.id);
    // Started just before the service went down, before it was recorded
    // as running: it trained on while the service showed it queued (and
    // a cancel then sent nothing).
    if (job.phase == "queued") {
      if (int pid = supervisorPid(dir); pid > 0) {
        job.phase = "running";
        job.pid = pid;
        job.shapeStep = -1;
        decide({0, job.id, "adopt", job.workers, job.batch,
                "its supervisor started before the service went down"});
        takeRunningShape(job, "as its supervisor runs it");
      }
      continue;
    }
    if (!job.active())
      continue;
    int pid = supervisorPid(dir);
    if (pid > 0 || isSupervisorOf(job.pid, dir)) {
      if (pid > 1)
        job.pid = pid;
      job.shapeStep = -1;
      decide({0, job.id, "adopt", job.workers, job.batch,
              formatv("its supervisor (pid {0}) still runs", job.pid).str()});
      if (job.pendingResize.empty())
        takeRunningShape(job, "as its supervisor runs it");
    } else {
      end(job, "while the service was down");
    }
  }
  triggers.push_back("restart of the service");
}

void Loop::readInbox() {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(files.inbox, ec))
    names.push_back(entry.path().filename().string());
  // A cancel is "cancel-ID", without the ".json" of a submission (whose
  // job's name may start with "cancel-" too).
  auto isCancel = [](StringRef name) {
    return name.starts_with("cancel-") && !name.ends_with(".json");
  };
  // Submissions before cancels: a job submitted and cancelled between two
  // passes is dropped before it starts.
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string &a, const std::string &b) {
                     bool cancelA = isCancel(a), cancelB = isCancel(b);
                     return cancelA != cancelB ? cancelB : a < b;
                   });
  for (const std::string &name : names) {
    if (name.empty() || name[0] == '.')
      continue;
    std::string path = files.inbox + "/" + name;
    StringRef n(name);
    if (isCancel(n)) {
      n.consume_front("cancel-");
      if (ServiceJob *job = state.find(n.str())) {
        if (job->phase == "queued") {
          job->phase = "cancelled";
          job->reason = "cancelled before it started";
          job->endedAt = unixSeconds();
          decide({0, job->id, "end", 0, 0, "cancelled while queued"});
          triggers.push_back("cancel of " + job->id);
        } else if (job->active() && !job->cancelRequested) {
          job->cancelRequested = true;
          // It checkpoints and stops; never a process that is not its.
          if (isSupervisorOf(job->pid, files.jobDirectory(job->id)))
            ::kill(job->pid, SIGTERM);
          decide({0, job->id, "cancel", job->workers, job->batch,
                  "asked its supervisor to checkpoint and stop"});
        }
      } else if (fs::exists(files.inbox + "/" + n.str() + ".json")) {
        continue; // its submission is read first, on the next pass
      }
      ::unlink(path.c_str());
      continue;
    }
    if (!n.ends_with(".json"))
      continue;
    std::optional<std::string> text = readFile(path);
    Expected<ServiceJob> job =
        text ? parseSubmission(*text) : Expected<ServiceJob>(failure("unread"));
    if (!job) {
      log << "heterps elastic: warning: ignoring the submission '" << path
          << "': " << toString(job.takeError()) << "\n";
      fs::rename(path, path + ".rejected", ec);
      continue;
    }
    if (!state.find(job->id)) {
      job->phase = "queued";
      job->reason = "waiting for the next plan";
      state.jobs.push_back(*job);
      decide({0, job->id, "submit", 0, 0, job->jobFile});
      triggers.push_back("arrival of " + job->id);
    }
    // The job is in the state file before its submission goes away.
    if (Error error = save())
      log << "heterps elastic: error: " << toString(std::move(error)) << "\n";
    ::unlink(path.c_str());
  }
}

void Loop::end(ServiceJob &job, const std::string &why) {
  jobs::JobFiles jobFiles(files.jobDirectory(job.id));
  std::optional<std::string> reportText = readFile(jobFiles.report);
  if (!reportText && supervisorLost(job, jobFiles))
    return;
  std::string outcome = "failed", message = "no report.json";
  if (const std::optional<std::string> &text = reportText) {
    if (Expected<json::Value> v = heterps::cluster::parseJson(*text)) {
      if (const json::Object *o = v->getAsObject()) {
        outcome = o->getString("outcome").value_or("failed").str();
        message = o->getString("message").value_or("").str();
      }
    } else {
      consumeError(v.takeError());
    }
  }
  // A cancelled job whose supervisor was killed before its report is
  // cancelled all the same: what it left running was ended above.
  if (job.cancelRequested && (outcome == "stopped" || !reportText))
    outcome = "cancelled";
  else if (outcome != "succeeded")
    outcome = "failed";
  job.phase = outcome;
  job.reason = message;
  job.endedAt = unixSeconds();
  if (job.lastStepAt > 0 && job.endedAt > job.lastStepAt)
    job.finishSeconds = job.endedAt - job.lastStepAt;
  job.pid = 0;
  job.pendingResize.clear();
  decide({0, job.id, "end", job.workers, job.batch,
          outcome + (why.empty() ? "" : " " + why) +
              (message.empty() ? "" : ": " + message)});
  triggers.push_back((outcome == "succeeded" ? "completion of " : "end of ") +
                     job.id);
}

bool Loop::supervisorLost(ServiceJob &job, const jobs::JobFiles &jobFiles) {
  // A supervisor killed (SIGKILL, the out-of-memory killer) leaves its
  // attempt training in the job's slots: end it first, whatever comes next.
  std::string engineId;
  if (std::optional<json::Object> jobState = readJobState(jobFiles))
    engineId = jobState->getString("engine_id").value_or("").str();
  const std::string ended = jobs::endLeftoverAttempt(
      engineId, jobFiles.directory, jobFiles.heartbeats);
  if (!ended.empty())
    log << "heterps elastic: " << job.id << ": " << ended << "\n";
  if (job.cancelRequested || job.supervisorLosses >= kMostSupervisorLosses)
    return false;
  // The job is not lost with it: a new supervisor on the same directory
  // resumes from the newest checkpoint, in the allocation the job holds.
  job.supervisorLosses++;
  decide({0, job.id, "supervisor-lost", job.workers, job.batch,
          formatv("its supervisor ended without a report ({0} of at most {1} "
                  "times); starting it again",
                  job.supervisorLosses, kMostSupervisorLosses)
              .str()});
  job.pid = 0;
  job.pendingResize.clear();
  start(job, "a new supervisor after the loss of the last", 0);
  return true;
}

void Loop::observe(ServiceJob &job) {
  std::string dir = files.jobDirectory(job.id);
  if (!isSupervisorOf(job.pid, dir)) {
    // A supervisor started by the service's previous life may still hold the
    // lock under another pid.
    int pid = supervisorPid(dir);
    if (pid > 1) {
      job.pid = pid;
      return;
    }
    end(job, "");
    return;
  }
  std::optional<json::Object> jobState = readJobState(jobs::JobFiles(dir));
  if (!jobState)
    return;
  const json::Object *o = &*jobState;
  std::string phase = o->getString("phase").value_or("").str();
  int64_t step = o->getInteger("step").value_or(0);
  if (step > job.lastStep) {
    job.lastStep = step;
    job.lastStepAt = unixSeconds();
  }
  if (!job.pendingResize.empty()) {
    StringRef error = o->getString("resize_error").value_or("");
    if (error.contains(job.pendingResize)) {
      decide(
          {0, job.id, "resize-refused", job.workers, job.batch, error.str()});
      if (const json::Object *shape = o->getObject("shape")) {
        job.workers = int(shape->getInteger("workers").value_or(job.workers));
        job.batch = shape->getInteger("batch").value_or(job.batch);
      }
      job.pendingResize.clear();
      job.pauseSince = 0; // it never stopped
      dirty = true;
    } else if (o->getString("last_resize_id").value_or("") ==
                   job.pendingResize &&
               phase == "running") {
      job.pendingResize.clear();
      job.resizes++;
      job.shapeStep = -1;
      // The new attempt resumes at its checkpoint: its pause ends with the
      // first step past it.
      job.pauseStep = step;
      dirty = true;
    }
    return;
  }
  if (phase != "running")
    return;
  takeRunningShape(job, *o, "as its supervisor runs it (not as recorded)");
  double now = unixSeconds();
  // The first step after a start or a resize ends its pause.
  if (job.pauseSince > 0 && step > job.pauseStep) {
    double pause = now - job.pauseSince;
    if (job.pauseIsStart)
      job.startupSeconds = pause;
    else
      job.resizePauses.push_back(pause);
    job.pauseSince = 0;
    dirty = true;
  }
  // The rate in this shape, over the window since its first step seen.
  if (job.shapeStep < 0 || step < job.shapeStep) {
    job.shapeStep = step;
    job.shapeTime = now;
  } else if (measuresRate(now - job.shapeTime, step - job.shapeStep)) {
    job.recordRate(double(step - job.shapeStep) / (now - job.shapeTime));
    dirty = true;
  }
}

void Loop::start(ServiceJob &job, const std::string &reason, double gain) {
  std::string dir = files.jobDirectory(job.id);
  // Started before the service was killed, but not yet recorded: adopt it.
  if (int pid = supervisorPid(dir); pid > 0) {
    job.phase = "running";
    job.pid = pid;
    decide({0, job.id, "adopt", job.workers, job.batch,
            "its supervisor already runs"});
    takeRunningShape(job, "as its supervisor runs it");
    return;
  }
  std::error_code ec;
  fs::create_directories(files.jobFiles, ec);
  fs::create_directories(files.jobs, ec);
  std::string jobFile = files.jobFiles + "/" + job.id + ".yaml";
  Expected<std::string> text = adjustedJobFile(job);
  Error error = text ? writeFileAtomically(jobFile, *text) : text.takeError();
  std::vector<std::string> argv{
      options.heterps, "job", "run", jobFile, "--job-dir", dir, "--backend",
      options.backend == "slurm" ? "slurm" : "mpirun",
      // The shape allocated here, not the one a lost supervisor left.
      "--shape-from-job-file"};
  pid_t child = 0;
  if (!error) {
    // Its own process group: a signal to the service's group (Ctrl-C) does
    // not end the jobs; the service can go and come back.
    jobs::SpawnOptions spawn;
    spawn.logPath = files.jobs + "/" + job.id + ".log";
    spawn.appendLog = true;
    Expected<pid_t> spawned = jobs::spawnProcessGroup(argv, spawn);
    if (spawned)
      child = *spawned;
    else
      error = spawned.takeError();
  }
  if (error) {
    job.phase = "failed";
    job.reason = toString(std::move(error));
    job.endedAt = unixSeconds();
    decide({0, job.id, "end", 0, 0, "failed to start: " + job.reason});
    return;
  }
  job.phase = "running";
  job.pid = child;
  job.starts++;
  job.startedAt = unixSeconds();
  job.pauseSince = job.startedAt;
  job.pauseStep = 0;
  job.pauseIsStart = true;
  job.shapeStep = -1;
  job.reason.clear();
  decide({0, job.id, "start", job.workers, job.batch, reason, gain});
  // Recorded at once: a restarted service must not start it again.
  if (Error e = save())
    log << "heterps elastic: error: " << toString(std::move(e)) << "\n";
}

void Loop::resize(ServiceJob &job, int workers, int64_t batch,
                  const std::string &reason, double gain) {
  jobs::ResizeRequest request;
  request.id =
      formatv("elastic-{0}-{1}", job.id, int64_t(unixSeconds() * 1000)).str();
  request.workers = workers;
  request.batch = batch;
  jobs::JobFiles jobFiles(files.jobDirectory(job.id));
  if (Error error = writeFileAtomically(jobFiles.resizeRequest,
                                        jobs::resizeRequestJson(request))) {
    log << "heterps elastic: error: " << toString(std::move(error)) << "\n";
    return;
  }
  std::string from = formatv("{0} -> {1} workers, batch {2} -> {3}; ",
                             job.workers, workers, job.batch, batch)
                         .str();
  job.workers = workers;
  job.batch = batch;
  job.pendingResize = request.id;
  // Ends only once the new attempt runs (observe sets pauseStep then).
  job.pauseSince = unixSeconds();
  job.pauseStep = std::numeric_limits<int64_t>::max();
  job.pauseIsStart = false;
  decide({0, job.id, "resize", workers, batch, from + reason, gain});
}

void Loop::replan() {
  Expected<int> slots = capacity();
  if (!slots) {
    log << "heterps elastic: warning: no plan: " << toString(slots.takeError())
        << "\n";
    return;
  }
  std::string why;
  for (const std::string &t : triggers)
    if (why.find(t) == std::string::npos)
      why += (why.empty() ? "" : ", ") + t;
  if (why.empty())
    why = "interval";
  triggers.clear();
  state.lastPlan = unixSeconds();
  state.capacity = *slots;
  state.intervalSeconds = options.intervalSeconds;
  state.resizeCostSeconds = options.resizeCostSeconds;
  dirty = true;
  PlanOptions planOptions;
  planOptions.capacity = *slots;
  planOptions.reallocationPenalty =
      std::min(1.0, chargedResizeCost(state, options.resizeCostSeconds) /
                        options.intervalSeconds);
  Plan plan = planAllocation(state, planOptions);
  bool changed = false;
  for (const PlannedJob &p : plan.jobs) {
    ServiceJob *job = state.find(p.id);
    if (!job)
      continue;
    std::string detail =
        formatv("{0}; value {1:F3} -> {2:F3}, plan {3:F3} -> {4:F3}", why,
                p.valueBefore, p.valueAfter, plan.valueBefore, plan.valueAfter)
            .str();
    double gain = p.valueAfter - p.valueBefore;
    if (job->phase == "queued") {
      if (p.workers > 0) {
        job->workers = p.workers;
        job->batch = p.batch;
        start(*job, detail, gain);
        changed = true;
      } else if (job->reason != p.reason) {
        job->reason = p.reason;
        decide({0, job->id, "queue", 0, 0, p.reason});
      }
    } else if (job->active() && job->pendingResize.empty() &&
               !job->cancelRequested &&
               (p.workers != job->workers || p.batch != job->batch)) {
      resize(*job, p.workers, p.batch, detail, gain);
      changed = true;
    }
  }
  if (changed)
    decide({0, "", "plan", plan.used, 0,
            formatv("{0} of {1} slots used; {2}", plan.used, plan.capacity, why)
                .str(),
            plan.valueAfter - plan.valueBefore});
}

Error Loop::run(const std::atomic<bool> &stop) {
  std::error_code ec;
  fs::create_directories(files.inbox, ec);
  if (ec)
    return failure("cannot create the state directory '" + files.directory +
                   "': " + ec.message());
  // Close-on-exec: the jobs it starts must not hold the service's lock.
  int lockFd = ::open(files.lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lockFd < 0)
    return failure("cannot open '" + files.lock + "': " + std::strerror(errno));
  if (::flock(lockFd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lockFd);
    return failure("another `heterps elastic serve` holds '" + files.directory +
                   "' (" + files.lock + " is locked)");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lockFd, 0) != 0 ||
      ::write(lockFd, pid.data(), pid.size()) != ssize_t(pid.size()))
    return failure("cannot write '" + files.lock + "'");
  if (std::optional<std::string> text = readFile(files.state)) {
    Expected<ServiceState> loaded = parseServiceState(*text);
    if (!loaded)
      return failure("the service state '" + files.state +
                     "' is unreadable: " + toString(loaded.takeError()));
    state = std::move(*loaded);
    log << "heterps elastic: resuming from " << files.state << " ("
        << state.jobs.size() << " jobs)\n";
    recover();
  } else {
    triggers.push_back("start of the service");
  }
  if (Expected<int> slots = capacity())
    log << "heterps elastic: serving '" << files.directory << "' on "
        << options.backend << ", " << *slots << " slots\n";
  else
    return slots.takeError();
  dirty = true;
  struct stat held {};
  ::fstat(lockFd, &held);
  while (!stop) {
    // A lock file removed or replaced lets a second service in, and each
    // would write the state from its own jobs: stop before writing.
    struct stat now {};
    if (::stat(files.lock.c_str(), &now) != 0 || now.st_ino != held.st_ino ||
        now.st_dev != held.st_dev)
      return failure("'" + files.lock +
                     "' was removed or replaced, so another service may "
                     "share '" +
                     files.directory +
                     "'; stopping without writing the state (the jobs go "
                     "on; start one service on the directory again)");
    readInbox();
    for (ServiceJob &job : state.jobs)
      if (job.active())
        observe(job);
    if (!triggers.empty() ||
        unixSeconds() - state.lastPlan >= options.intervalSeconds)
      replan();
    if (Error error = save())
      return error;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(int64_t(options.pollSeconds * 1000)));
  }
  dirty = true;
  Error error = save();
  log << "heterps elastic: stopped; jobs that run go on, and a service "
         "started on the same directory adopts them\n";
  return error;
}

} // namespace

Error runService(const ServiceOptions &options, std::ostream &log,
                 const std::atomic<bool> &stop) {
  Loop loop(options, log);
  return loop.run(stop);
}

} // namespace heterps::autoscale
