//===- Simulator.cpp - Trace-driven simulation of a shared cluster --------===//
//
// Time advances in policy intervals. At each decision the policy sees the
// jobs that have arrived and not finished, picks a GPU count and a global
// batch for each (or none: queued), and the simulator places the GPUs on
// nodes; a job whose GPU count changed makes no progress for the resize cost.
// Within an interval a job advances at its goodput, epoch by epoch, and
// finishes at the exact moment its progress reaches its work.
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Simulator.h"

#include "ReportJSON.h"
#include "heterps/Autoscale/Allocator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

using namespace llvm;

namespace heterps::autoscale {

StringRef policyName(Policy policy) {
  switch (policy) {
  case Policy::Static:
    return "static";
  case Policy::FixedBatch:
    return "fixed-batch";
  case Policy::Elastic:
    return "elastic";
  case Policy::ElasticSRTF:
    return "elastic-srtf";
  }
  return "?";
}

std::optional<Policy> parsePolicy(StringRef name) {
  return StringSwitch<std::optional<Policy>>(name)
      .Case("static", Policy::Static)
      .Case("fixed-batch", Policy::FixedBatch)
      .Case("elastic", Policy::Elastic)
      .Case("elastic-srtf", Policy::ElasticSRTF)
      .Default(std::nullopt);
}

std::vector<Policy> allPolicies() {
  return {Policy::Static, Policy::FixedBatch, Policy::Elastic,
          Policy::ElasticSRTF};
}

namespace {

struct Job {
  const WorkloadJob *spec = nullptr;
  const ApplicationModel *model = nullptr;
  double submit = 0;
  double progress = 0;
  int epoch = 0;
  int gpus = 0; // 0: not running
  int64_t batch = 0;
  std::vector<int> placement; // replicas per node, one entry per node
  double restartLeft = 0;
  bool started = false, done = false;
  double start = -1, finish = -1;
  double gpuSeconds = 0;
  int rescales = 0;
  std::string reason;
  /// The GPU counts the DP may give it.
  std::vector<int> candidates;
};

/// Goodputs by (epoch, GPUs[, batch]) per application: they do not depend on
/// the job, and the policy asks for them every interval.
class GoodputTable {
public:
  GoodputTable(const ApplicationModel &model, int gpusPerNode)
      : model(model), gpusPerNode(gpusPerNode) {
    // Batches the elastic policy tries: the validated ones and a sqrt(2)
    // geometric grid between the smallest and largest.
    for (auto &[batch, rows] : model.traces().validation)
      batches.push_back(batch);
    double grid = model.initBatch();
    while (grid < model.maxBatch()) {
      batches.push_back(int64_t(std::llround(grid)));
      grid *= M_SQRT2;
    }
    llvm::sort(batches);
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  }

  double fixed(int epoch, int gpus, int64_t batch) {
    auto key = std::make_tuple(epoch, gpus, batch);
    auto it = fixedCache.find(key);
    if (it != fixedCache.end())
      return it->second;
    double g = model.goodput(packedPlacement(gpus, gpusPerNode), batch, epoch);
    fixedCache.emplace(key, g);
    return g;
  }

  /// The batch with the highest goodput on `gpus` (each GPU at least the
  /// smallest measured local batch), and that goodput; batch 0 if none.
  std::pair<int64_t, double> best(int epoch, int gpus) {
    auto key = std::make_pair(epoch, gpus);
    auto it = bestCache.find(key);
    if (it != bestCache.end())
      return it->second;
    std::pair<int64_t, double> result{0, 0.0};
    for (int64_t batch : batches) {
      if (batch < int64_t(gpus) * model.minLocalBatch())
        continue;
      double g = fixed(epoch, gpus, batch);
      if (g > result.second)
        result = {batch, g};
    }
    bestCache.emplace(key, result);
    return result;
  }

private:
  const ApplicationModel &model;
  int gpusPerNode;
  std::vector<int64_t> batches;
  std::map<std::tuple<int, int, int64_t>, double> fixedCache;
  std::map<std::pair<int, int>, std::pair<int64_t, double>> bestCache;
};

class Cluster {
public:
  Cluster(int nodes, int gpusPerNode)
      : gpusPerNode(gpusPerNode), freeGpus(nodes, gpusPerNode) {}

  int totalFree() const {
    int total = 0;
    for (int f : freeGpus)
      total += f;
    return total;
  }

  void release(Job &job) {
    for (size_t n = 0; n < job.placement.size(); ++n)
      freeGpus[n] += job.placement[n];
    job.placement.clear();
  }

  /// Whole free nodes first, the remainder on the fullest node it fits on,
  /// and only if neither works, spread over the nodes with most room.
  std::vector<int> place(int gpus) {
    std::vector<int> placement(freeGpus.size(), 0);
    int need = gpus;
    for (size_t n = 0; n < freeGpus.size() && need >= gpusPerNode; ++n)
      if (freeGpus[n] == gpusPerNode) {
        placement[n] = gpusPerNode;
        freeGpus[n] = 0;
        need -= gpusPerNode;
      }
    while (need > 0) {
      int fit = -1, roomiest = -1;
      for (size_t n = 0; n < freeGpus.size(); ++n) {
        if (freeGpus[n] >= need && (fit < 0 || freeGpus[n] < freeGpus[fit]))
          fit = n;
        if (freeGpus[n] > 0 &&
            (roomiest < 0 || freeGpus[n] > freeGpus[roomiest]))
          roomiest = n;
      }
      int n = fit >= 0 ? fit : roomiest;
      if (n < 0)
        break; // callers never ask for more than is free
      int take = std::min(need, freeGpus[n]);
      placement[n] += take;
      freeGpus[n] -= take;
      need -= take;
    }
    return placement;
  }

private:
  int gpusPerNode;
  std::vector<int> freeGpus;
};

/// Advances a running job by `seconds` from `now`.
void advance(Job &job, double now, double seconds) {
  if (job.gpus == 0 || job.done)
    return;
  double pause = std::min(job.restartLeft, seconds);
  job.restartLeft -= pause;
  double elapsed = pause;
  const ApplicationModel &model = *job.model;
  BatchConfig config = model.configure(job.placement, job.batch);
  while (elapsed < seconds && !job.done) {
    double goodput =
        model.gain(double(config.batch), job.epoch) / config.stepTime;
    double next = model.progressAt(job.epoch + 1);
    double left = seconds - elapsed;
    if (!(goodput > 0))
      break;
    if (job.progress + goodput * left < next) {
      job.progress += goodput * left;
      elapsed = seconds;
      break;
    }
    elapsed += (next - job.progress) / goodput;
    job.progress = next;
    ++job.epoch;
    if (job.epoch >= model.maxEpochs()) {
      job.done = true;
      job.finish = now + elapsed;
    }
  }
  job.gpuSeconds += elapsed * job.gpus;
}

} // namespace

Expected<SimulationResult> simulate(const std::vector<WorkloadJob> &workload,
                                    const ApplicationModels &models,
                                    const SimulatorOptions &options) {
  if (options.nodes <= 0 || options.gpusPerNode <= 0 ||
      !(options.interval > 0) || options.resizeCost < 0 ||
      !(options.load > 0) || options.hysteresis < 0)
    return createStringError(inconvertibleErrorCode(),
                             "simulator options out of range (nodes, GPUs "
                             "per node, interval and load must be positive)");
  const int capacity = options.nodes * options.gpusPerNode;
  const int maxPerJob = options.maxGpusPerJob > 0
                            ? std::min(options.maxGpusPerJob, capacity)
                            : capacity;
  std::map<std::string, GoodputTable> tables;
  std::vector<Job> jobs(workload.size());
  double window = 0;
  for (size_t i = 0; i < workload.size(); ++i) {
    Job &job = jobs[i];
    job.spec = &workload[i];
    auto model = models.find(workload[i].application);
    if (model == models.end())
      return createStringError(
          inconvertibleErrorCode(), "job '%s': no traces for application '%s'",
          workload[i].name.c_str(), workload[i].application.c_str());
    job.model = model->second.get();
    tables.try_emplace(workload[i].application, *job.model,
                       options.gpusPerNode);
    job.submit = workload[i].submitTime / options.load;
    window = std::max(window, job.submit);
    // GPU counts: 1-3, whole nodes, and what the job asked for; at most as
    // many replicas as the largest batch has smallest local batches.
    int most = std::min<int64_t>(
        maxPerJob, std::max<int64_t>(1, job.model->maxBatch() /
                                            job.model->minLocalBatch()));
    std::vector<int> counts;
    for (int g = 1; g <= std::min(most, options.gpusPerNode - 1); ++g)
      counts.push_back(g);
    for (int g = options.gpusPerNode; g <= most; g += options.gpusPerNode)
      counts.push_back(g);
    if (workload[i].gpus <= maxPerJob)
      counts.push_back(workload[i].gpus);
    llvm::sort(counts);
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    job.candidates = std::move(counts);
  }

  Cluster cluster(options.nodes, options.gpusPerNode);
  SimulationResult result;
  result.policy = policyName(options.policy).str();
  result.jobs = jobs.size();
  result.window = window;
  const double horizon =
      options.horizon > 0 ? options.horizon : window + 30 * 86400.0;
  // Submission order, for FIFO and every tie after it (the allocator's
  // job order, placement): by time, then name (unique), so that the order
  // of the workload's rows changes nothing.
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](size_t a, size_t b) {
    return std::make_pair(jobs[a].submit, StringRef(jobs[a].spec->name)) <
           std::make_pair(jobs[b].submit, StringRef(jobs[b].spec->name));
  });

  double now = 0;
  size_t finished = 0;
  while (finished < jobs.size() && now < horizon) {
    // Jobs the policy sees: arrived, not finished, not dropped.
    std::vector<size_t> active;
    std::optional<double> nextArrival;
    for (size_t i : order)
      if (!jobs[i].done && jobs[i].reason.empty()) {
        if (jobs[i].submit <= now)
          active.push_back(i);
        else if (!nextArrival)
          nextArrival = jobs[i].submit;
      }
    // An idle cluster waits for the next arrival at the first decision
    // after it, not one interval at a time (a trace may idle for years).
    if (active.empty() && nextArrival) {
      now = std::ceil(*nextArrival / options.interval) * options.interval;
      continue;
    }
    // What each active job should run with: (GPUs, batch); 0 GPUs: queued.
    std::map<size_t, std::pair<int, int64_t>> decision;
    if (options.policy == Policy::Static) {
      int free = cluster.totalFree();
      bool blocked = false;
      for (size_t i : active) {
        Job &job = jobs[i];
        if (job.gpus > 0)
          continue;
        if (job.spec->gpus > capacity) {
          job.reason = "asks for more GPUs than the cluster has";
          ++finished;
          continue;
        }
        // Strict FIFO: nobody overtakes the first waiting job.
        if (blocked || job.spec->gpus > free) {
          blocked = true;
          continue;
        }
        free -= job.spec->gpus;
        decision[i] = {job.spec->gpus, job.spec->batch};
      }
    } else if (!active.empty()) {
      AllocationRequest request;
      request.capacity = {capacity};
      request.objective = Objective::MaxValue;
      request.reallocationPenalty =
          std::min(1.0, options.resizeCost / options.interval);
      request.hysteresis = options.hysteresis;
      std::vector<std::vector<std::pair<int, int64_t>>> shapes;
      for (size_t i : active) {
        Job &job = jobs[i];
        GoodputTable &table = tables.at(job.spec->application);
        AllocationJob entry;
        entry.id = job.spec->name;
        std::vector<std::pair<int, int64_t>> shape;
        double reference = table.fixed(
            job.epoch, std::min(job.spec->gpus, maxPerJob), job.spec->batch);
        double remaining =
            std::max(job.model->totalWork() - job.progress, 1e-9);
        for (int g : job.candidates) {
          int64_t batch = job.spec->batch;
          double goodput;
          if (options.policy == Policy::FixedBatch) {
            // More replicas than the batch has smallest local batches only
            // up to what the job asked for.
            if (g > job.spec->gpus &&
                batch < int64_t(g) * job.model->minLocalBatch())
              continue;
            goodput = table.fixed(job.epoch, g, batch);
          } else {
            std::tie(batch, goodput) = table.best(job.epoch, g);
          }
          if (batch == 0 || !(goodput > 0))
            continue;
          JobChoice choice;
          choice.devices = {g};
          choice.batch = batch;
          // Elastic and fixed-batch: the speed-up over the job's own
          // request. SRTF: the share of the remaining work done per hour,
          // which favours the jobs closest to the end.
          choice.value = options.policy == Policy::ElasticSRTF
                             ? goodput * 3600.0 / remaining
                             : goodput / std::max(reference, 1e-12);
          if (job.gpus == g)
            entry.current = entry.choices.size();
          entry.choices.push_back(std::move(choice));
          shape.push_back({g, batch});
        }
        // With d / interval for every resize, half of 8 GPUs sat idle
        // for 40 hours (docs/benchmarks/elastic-simulator.md).
        if (options.ageBasedPenalty && job.started && job.gpus > 0)
          entry.reallocationPenalty = reallocationPenaltyAfter(
              now - job.start, job.rescales, options.resizeCost);
        request.jobs.push_back(std::move(entry));
        shapes.push_back(std::move(shape));
      }
      auto begin = std::chrono::steady_clock::now();
      AllocationResult allocation = allocate(request);
      result.allocatorSeconds += std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - begin)
                                     .count();
      for (size_t k = 0; k < active.size(); ++k) {
        int c = k < allocation.choice.size() ? allocation.choice[k] : -1;
        if (c >= 0 && size_t(c) < shapes[k].size())
          decision[active[k]] = shapes[k][c];
        else
          decision[active[k]] = {0, 0};
      }
    }
    ++result.decisions;

    // Apply: release what changed first, then place, largest first.
    std::vector<size_t> moved;
    for (size_t i : active) {
      auto decided = decision.find(i);
      if (decided == decision.end())
        continue;
      const std::pair<int, int64_t> &shape = decided->second;
      Job &job = jobs[i];
      if (shape.first == job.gpus) {
        job.batch = shape.second ? shape.second : job.batch; // batch: free
        continue;
      }
      cluster.release(job);
      job.gpus = 0;
      if (shape.first > 0)
        moved.push_back(i);
    }
    llvm::stable_sort(moved, [&](size_t a, size_t b) {
      return decision[a].first > decision[b].first;
    });
    for (size_t i : moved) {
      Job &job = jobs[i];
      auto [gpus, batch] = decision[i];
      job.placement = cluster.place(gpus);
      job.gpus = gpus;
      job.batch = batch;
      job.restartLeft = options.resizeCost;
      if (job.started) {
        ++job.rescales;
      } else {
        job.started = true;
        job.start = now;
      }
    }

    // The last interval ends at the horizon: run past it, jobs finished
    // after it and the GPU-seconds gave a utilization of 1.97.
    const double span = std::min(options.interval, horizon - now);
    for (size_t i : active) {
      Job &job = jobs[i];
      advance(job, now, span);
      if (job.done) {
        cluster.release(job);
        job.gpus = 0;
        ++finished;
      }
    }
    now += span;
  }

  std::vector<double> jcts;
  double allocated = 0;
  for (Job &job : jobs) {
    JobOutcome outcome;
    outcome.name = job.spec->name;
    outcome.application = job.spec->application;
    outcome.submitTime = job.submit;
    outcome.startTime = job.start;
    outcome.finishTime = job.finish;
    outcome.gpuSeconds = job.gpuSeconds;
    outcome.rescales = job.rescales;
    outcome.reason = job.reason;
    if (job.done) {
      jcts.push_back(job.finish - job.submit);
      result.makespan = std::max(result.makespan, job.finish);
      if (job.finish <= window)
        ++result.completedInWindow;
    } else if (outcome.reason.empty()) {
      outcome.reason = job.started ? "not finished by the end of the simulation"
                                   : "queued at the end of the simulation";
    }
    allocated += job.gpuSeconds;
    result.rescales += job.rescales;
    result.outcomes.push_back(std::move(outcome));
  }
  result.completed = jcts.size();
  result.queuedOrDropped = result.jobs - result.completed;
  // Jobs still queued or running at the end make it at least the end;
  // dropped ones (larger than the cluster) never ran and do not count.
  if (llvm::any_of(
          jobs, [](const Job &job) { return !job.done && job.reason.empty(); }))
    result.makespan = std::max(result.makespan, std::min(now, horizon));
  if (!jcts.empty()) {
    llvm::sort(jcts);
    double sum = 0;
    for (double jct : jcts)
      sum += jct;
    result.meanJct = sum / jcts.size();
    size_t rank = size_t(std::ceil(0.99 * jcts.size()));
    result.p99Jct = jcts[std::max<size_t>(rank, 1) - 1];
  }
  if (result.makespan > 0)
    result.utilization = allocated / (capacity * result.makespan);
  return result;
}

std::string formatResultJSON(const SimulationResult &result, bool perJob,
                             int indent) {
  std::string text;
  raw_string_ostream os(text);
  json::OStream out(os, indent);
  auto fixed = [&](StringRef key, double x, int decimals) {
    detail::writeFixed(out, key, x, decimals);
  };
  out.object([&] {
    out.attribute("policy", result.policy);
    out.attribute("jobs", result.jobs);
    out.attribute("completed", result.completed);
    out.attribute("completed_in_window", result.completedInWindow);
    fixed("window_s", result.window, 1);
    out.attribute("queued_or_dropped", result.queuedOrDropped);
    detail::writeCompletionTimes(out, result.completed, result.meanJct,
                                 result.p99Jct);
    fixed("makespan_s", result.makespan, 1);
    fixed("utilization", result.utilization, 4);
    out.attribute("rescales", result.rescales);
    out.attribute("decisions", result.decisions);
    fixed("allocator_ms_per_decision",
          result.decisions ? 1000 * result.allocatorSeconds / result.decisions
                           : 0,
          3);
    if (perJob)
      out.attributeArray("per_job", [&] {
        for (const JobOutcome &job : result.outcomes)
          out.object([&] {
            out.attribute("name", job.name);
            out.attribute("application", job.application);
            fixed("submit_s", job.submitTime, 1);
            // null for a job that never started (or finished), not -1.
            for (auto [key, time] : {std::pair{"start_s", job.startTime},
                                     std::pair{"finish_s", job.finishTime}})
              if (time >= 0)
                fixed(key, time, 1);
              else
                out.attribute(key, nullptr);
            if (job.finishTime >= 0)
              fixed("jct_s", job.finishTime - job.submitTime, 1);
            fixed("gpu_s", job.gpuSeconds, 0);
            out.attribute("rescales", job.rescales);
            if (!job.reason.empty())
              out.attribute("reason", job.reason);
          });
      });
  });
  os.flush();
  return text;
}

} // namespace heterps::autoscale
