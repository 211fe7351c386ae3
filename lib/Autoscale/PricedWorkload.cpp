//===- PricedWorkload.cpp - HeterPS jobs on a priced cluster --------------===//
//
// Rates come from the placement planner: for a budget of devices per class,
// the cluster's counts are set to the budget (classes with none removed) and
// the exact strategy (dp) is asked for an unreachable throughput, so that it
// answers with the fastest plan that runs within the budget. The devices
// that plan really uses, the throughput of its training steps and its price
// are one choice; the Pareto front over all budgets is what the allocator
// sees.
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/PricedWorkload.h"

#include "ReportJSON.h"
#include "heterps/Autoscale/Allocator.h"
#include "heterps/Autoscale/Trace.h"
#include "heterps/Schedule/Scheduler.h"

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
#include <random>

using namespace llvm;

namespace heterps::autoscale {

ArrayRef<CtrModelSize> ctrModelSizes() {
  // Sizes of the generator's range: a few small tables and a narrow tower,
  // up to 26 Criteo-like fields with a wide tower. Batches as CTR jobs use.
  static const CtrModelSize sizes[] = {
      {"ctr-small", 4, 8, 1'000'000, 2, {256, 128}, 2048},
      {"ctr-medium", 12, 16, 10'000'000, 4, {1024, 512, 256}, 4096},
      {"ctr-large", 26, 32, 50'000'000, 8, {2048, 2048, 1024, 512}, 8192},
  };
  return sizes;
}

cost::LayerGraph ctrLayerGraph(const CtrModelSize &size) {
  // The layers LayerGraphBuilder extracts from generate_ctr_model.py's
  // "tables" layout: per table a lookup and a sum pooling, then concat, the
  // tower (gemm + relu), the output gemm and a sigmoid.
  cost::LayerGraph graph;
  graph.mode = cost::Mode::Training;
  const double f = 4; // bytes per float
  const double dim = size.embeddingDim, hot = size.lookupsPerTable;
  std::vector<unsigned> pooled;
  for (unsigned t = 0; t < size.tables; ++t) {
    cost::Layer lookup;
    lookup.name = "embedding" + std::to_string(t);
    lookup.opName = "hps.embedding_lookup";
    lookup.kind = cost::LayerKind::EmbeddingLookup;
    lookup.embeddingRows = size.rowsPerTable;
    lookup.embeddingRowBytes = f * dim;
    lookup.lookupsPerSample = hot;
    lookup.forwardFlopsPerSample = hot * dim;
    lookup.outputBytesPerSample = f * hot * dim;
    lookup.memoryBytesPerSample = 8 * hot + lookup.outputBytesPerSample;
    graph.layers.push_back(lookup);
    cost::Layer pool;
    pool.name = "pool" + std::to_string(t);
    pool.opName = "hps.reduce";
    pool.kind = cost::LayerKind::Pooling;
    pool.forwardFlopsPerSample = hot * dim;
    pool.outputBytesPerSample = f * dim;
    pool.memoryBytesPerSample = f * hot * dim + f * dim;
    pool.inputs = {unsigned(graph.layers.size() - 1)};
    pooled.push_back(graph.layers.size());
    graph.layers.push_back(pool);
  }
  const double dense = 13;
  double width = size.tables * dim + dense;
  cost::Layer concat;
  concat.name = "concat";
  concat.opName = "hps.concat";
  concat.kind = cost::LayerKind::DataMovement;
  concat.inputs = pooled;
  concat.outputBytesPerSample = f * width;
  concat.memoryBytesPerSample = 2 * f * width;
  graph.layers.push_back(concat);
  auto gemm = [&](const std::string &name, double out) {
    cost::Layer layer;
    layer.name = name;
    layer.opName = "hps.gemm";
    layer.kind = cost::LayerKind::DenseCompute;
    layer.forwardFlopsPerSample = 2 * width * out;
    layer.parameterBytes = f * (width * out + out);
    layer.memoryBytesPerSample =
        f * (width + out) + layer.parameterBytes / size.batch;
    layer.outputBytesPerSample = f * out;
    layer.inputs = {unsigned(graph.layers.size() - 1)};
    graph.layers.push_back(layer);
    width = out;
  };
  auto elementwise = [&](const std::string &name, StringRef op) {
    cost::Layer layer;
    layer.name = name;
    layer.opName = op.str();
    layer.kind = cost::LayerKind::Elementwise;
    layer.forwardFlopsPerSample = width;
    layer.memoryBytesPerSample = 2 * f * width;
    layer.outputBytesPerSample = f * width;
    layer.inputs = {unsigned(graph.layers.size() - 1)};
    graph.layers.push_back(layer);
  };
  for (size_t h = 0; h < size.hidden.size(); ++h) {
    gemm("fc" + std::to_string(h), size.hidden[h]);
    elementwise("relu" + std::to_string(h), "hps.relu");
  }
  gemm("out", 1);
  elementwise("prob", "hps.sigmoid");
  return graph;
}

namespace {

/// The cluster restricted to `budget` devices per class; classes with none
/// are removed (`kept` maps the new indices to the old).
cluster::ClusterSpec restrictCluster(const cluster::ClusterSpec &cluster,
                                     ArrayRef<int> budget,
                                     std::vector<unsigned> &kept) {
  cluster::ClusterSpec spec;
  spec.name = cluster.name;
  spec.network = cluster.network;
  spec.parameterServer = cluster.parameterServer;
  std::vector<int> index(cluster.classes.size(), -1);
  kept.clear();
  for (size_t c = 0; c < cluster.classes.size(); ++c) {
    if (budget[c] <= 0)
      continue;
    index[c] = spec.classes.size();
    kept.push_back(c);
    spec.classes.push_back(cluster.classes[c]);
    spec.classes.back().count = budget[c];
  }
  for (const cluster::Link &link : cluster.links) {
    if (index[link.from] < 0 || (!link.toPS && index[link.to] < 0))
      continue;
    cluster::Link copy = link;
    copy.from = index[link.from];
    if (!link.toPS)
      copy.to = index[link.to];
    spec.links.push_back(copy);
  }
  return spec;
}

/// The fastest runnable plan within `budget`; nullopt if none runs.
Expected<std::optional<RatedChoice>>
fastestWithin(const cost::LayerGraph &graph,
              const cluster::ClusterSpec &cluster, ArrayRef<int> budget,
              const schedule::StrategyOptions &strategy) {
  std::vector<unsigned> kept;
  cluster::ClusterSpec spec = restrictCluster(cluster, budget, kept);
  if (spec.classes.empty())
    return std::nullopt;
  // An unreachable target (the most solve takes): dp answers with the
  // fastest runnable placement.
  Expected<schedule::Plan> plan = schedule::solve(
      "dp", graph, spec, schedule::Objective{schedule::kMostTargetThroughput},
      strategy);
  if (!plan)
    return plan.takeError();
  if (!plan->runnable || !(plan->stepThroughput > 0))
    return std::nullopt;
  RatedChoice choice;
  choice.devices.assign(cluster.classes.size(), 0);
  for (const cost::StagePlan &stage : plan->stages)
    choice.devices[kept[stage.deviceClass]] += stage.replicas;
  // A job trains in steps (the plan's micro-batches, filled and drained
  // each step), slower than the pipeline full. The plan is the fastest
  // pipeline's: a shallower plan within the budget could step faster, a
  // choice the table misses (the dynamic program ranks pipelines).
  choice.throughput = plan->stepThroughput;
  for (size_t c = 0; c < cluster.classes.size(); ++c)
    choice.pricePerHour += choice.devices[c] * cluster.classes[c].pricePerHour;
  return choice;
}

std::vector<int> budgetGrid(int count) {
  std::vector<int> grid = {0};
  for (int g = 1; g < count; g *= 2)
    grid.push_back(g);
  if (count > 0)
    grid.push_back(count);
  return grid;
}

} // namespace

Expected<RateTable> buildRateTable(const CtrModelSize &size,
                                   const cluster::ClusterSpec &cluster,
                                   const RateOptions &options) {
  cost::LayerGraph graph = ctrLayerGraph(size);
  if (Error error = graph.verify())
    return std::move(error);
  schedule::StrategyOptions strategy;
  if (options.costOptions)
    strategy.costOptions = *options.costOptions;
  strategy.costOptions.batchSize = size.batch;
  strategy.profiles = options.profiles;
  const size_t numClasses = cluster.classes.size();
  std::vector<std::vector<int>> grids(numClasses);
  size_t product = 1;
  for (size_t c = 0; c < numClasses; ++c) {
    grids[c] = budgetGrid(cluster.classes[c].count);
    product *= grids[c].size();
  }
  // Too many budget vectors: drop every other inner point of the largest
  // grid until the product fits (0, 1 and the count always stay).
  while (product > size_t(std::max(1, options.maxBudgets))) {
    size_t widest = 0;
    for (size_t c = 1; c < numClasses; ++c)
      if (grids[c].size() > grids[widest].size())
        widest = c;
    std::vector<int> &grid = grids[widest];
    if (grid.size() <= 3)
      break;
    std::vector<int> thinned = {grid[0], grid[1]};
    for (size_t i = 3; i + 1 < grid.size(); i += 2)
      thinned.push_back(grid[i]);
    thinned.push_back(grid.back());
    product = product / grid.size() * thinned.size();
    grid = std::move(thinned);
  }

  RateTable table;
  table.model = size.name;
  std::vector<RatedChoice> all;
  std::vector<size_t> digit(numClasses, 0);
  for (size_t n = 0; n < product; ++n) {
    std::vector<int> budget(numClasses);
    for (size_t c = 0; c < numClasses; ++c)
      budget[c] = grids[c][digit[c]];
    for (size_t c = 0; c < numClasses; ++c) // next mixed-radix vector
      if (++digit[c] < grids[c].size())
        break;
      else
        digit[c] = 0;
    auto choice = fastestWithin(graph, cluster, budget, strategy);
    if (!choice)
      return choice.takeError();
    ++table.plansSolved;
    if (*choice)
      all.push_back(std::move(**choice));
  }
  // Pareto front: fastest first, then cheapest; a choice stays only if no
  // kept one uses at most its devices everywhere (and is at least as fast).
  llvm::stable_sort(all, [](const RatedChoice &a, const RatedChoice &b) {
    if (a.throughput != b.throughput)
      return a.throughput > b.throughput;
    return a.pricePerHour < b.pricePerHour;
  });
  for (RatedChoice &candidate : all) {
    bool dominated = llvm::any_of(table.choices, [&](const RatedChoice &kept) {
      for (size_t c = 0; c < numClasses; ++c)
        if (kept.devices[c] > candidate.devices[c])
          return false;
      return true;
    });
    if (!dominated)
      table.choices.push_back(std::move(candidate));
  }
  std::reverse(table.choices.begin(), table.choices.end());

  // Whole GPUs of one class, every count: the baseline's rates.
  table.whole.assign(numClasses, {});
  for (size_t c = 0; c < numClasses; ++c) {
    table.whole[c].assign(cluster.classes[c].count + 1, 0.0);
    if (cluster.classes[c].kind != cluster::DeviceKind::GPU)
      continue;
    // Counts on the budget grid (1, 2, 4, ..., the class's count: what
    // jobs ask for); a count between two takes the lower one's plan, still
    // available on more GPUs (held, idle).
    const std::vector<int> grid = budgetGrid(cluster.classes[c].count);
    for (unsigned g = 1; g <= cluster.classes[c].count; ++g) {
      table.whole[c][g] = table.whole[c][g - 1];
      if (!llvm::is_contained(grid, int(g)))
        continue;
      std::vector<int> budget(numClasses, 0);
      budget[c] = g;
      auto choice = fastestWithin(graph, cluster, budget, strategy);
      if (!choice)
        return choice.takeError();
      ++table.plansSolved;
      if (*choice)
        table.whole[c][g] = std::max(table.whole[c][g], (*choice)->throughput);
    }
  }
  return table;
}

namespace {

double uniform(std::mt19937_64 &rng) { return double(rng() >> 11) * 0x1.0p-53; }

} // namespace

Expected<std::vector<PricedJob>>
generatePricedMix(const PricedMixOptions &options,
                  const cluster::ClusterSpec &cluster,
                  ArrayRef<RateTable> rates) {
  std::vector<int> gpuClasses;
  for (size_t c = 0; c < cluster.classes.size(); ++c)
    if (cluster.classes[c].kind == cluster::DeviceKind::GPU &&
        cluster.classes[c].count > 0)
      gpuClasses.push_back(c);
  if (gpuClasses.empty())
    return createStringError(inconvertibleErrorCode(),
                             "cluster '%s' has no GPU class: the whole-GPU "
                             "baseline needs one",
                             cluster.name.c_str());
  if (rates.size() != ctrModelSizes().size())
    return createStringError(inconvertibleErrorCode(),
                             "one rate table per CTR model size expected");
  if (options.jobs < 0 || !(options.ratePerHour > 0) ||
      !(options.minHours > 0) || options.maxHours < options.minHours ||
      !(options.minSlack >= 1) || options.maxSlack < options.minSlack)
    return createStringError(inconvertibleErrorCode(),
                             "priced mix options out of range");
  std::mt19937_64 rng(options.seed);
  std::vector<PricedJob> jobs;
  double now = 0;
  static const int kGpusBySize[] = {1, 2, 4};
  for (int i = 0; i < options.jobs; ++i) {
    now += -std::log(1 - uniform(rng)) * 3600 / options.ratePerHour;
    // A workload's bound on arrivals (Trace.h).
    if (now > kMostSubmitSeconds)
      return createStringError(
          inconvertibleErrorCode(),
          "%d jobs at %g per hour arrive past %g s (job %d at %.0f s): "
          "raise the rate or lower the job count",
          options.jobs, options.ratePerHour, kMostSubmitSeconds, i, now);
    PricedJob job;
    job.name = "job-" + std::to_string(i);
    job.submitTime = std::round(now);
    job.model = int(uniform(rng) * rates.size()) % rates.size();
    job.gpuClass =
        gpuClasses[int(uniform(rng) * gpuClasses.size()) % gpuClasses.size()];
    job.gpus = std::min<int>(kGpusBySize[job.model % 3],
                             cluster.classes[job.gpuClass].count);
    double hours =
        options.minHours *
        std::exp(uniform(rng) * std::log(options.maxHours / options.minHours));
    double rate = rates[job.model].whole[job.gpuClass][job.gpus];
    if (!(rate > 0))
      return createStringError(inconvertibleErrorCode(),
                               "%s does not run on %d x %s",
                               rates[job.model].model.c_str(), job.gpus,
                               cluster.classes[job.gpuClass].name.c_str());
    double seconds = hours * 3600;
    job.work = std::round(rate * seconds);
    // A calibration or profile can make a class this slow.
    if (!(job.work >= 1))
      return createStringError(
          inconvertibleErrorCode(),
          "%s on %d x %s trains %g samples/s: not one sample in %.1f hours "
          "(check --calibration and --profiles)",
          rates[job.model].model.c_str(), job.gpus,
          cluster.classes[job.gpuClass].name.c_str(), rate, hours);
    double slack =
        options.minSlack + uniform(rng) * (options.maxSlack - options.minSlack);
    job.deadline = job.submitTime + std::round(slack * seconds);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

StringRef pricedPolicyName(PricedPolicy policy) {
  switch (policy) {
  case PricedPolicy::WholeGpu:
    return "whole-gpu";
  case PricedPolicy::MaxValue:
    return "priced-value";
  case PricedPolicy::MinCost:
    return "priced-cost";
  }
  return "?";
}

std::optional<PricedPolicy> parsePricedPolicy(StringRef name) {
  return StringSwitch<std::optional<PricedPolicy>>(name)
      .Cases("whole-gpu", "baseline", PricedPolicy::WholeGpu)
      .Cases("priced-value", "value", PricedPolicy::MaxValue)
      .Cases("priced-cost", "cost", PricedPolicy::MinCost)
      .Default(std::nullopt);
}

namespace {

struct SimJob {
  const PricedJob *spec = nullptr;
  const RateTable *rates = nullptr;
  double reference = 0; // samples/s at the whole-GPU request
  double progress = 0;
  int choice = -1;          // priced policies: index into rates->choices
  std::vector<int> devices; // held now (per class)
  double rate = 0, pricePerHour = 0;
  double restartLeft = 0;
  bool started = false, done = false;
  double start = -1, finish = -1;
  int rescales = 0;
};

} // namespace

Expected<PricedResult> simulatePriced(const std::vector<PricedJob> &specs,
                                      const cluster::ClusterSpec &cluster,
                                      ArrayRef<RateTable> rates,
                                      const PricedSimOptions &options) {
  if (!(options.interval > 0) || options.resizeCost < 0 ||
      options.hysteresis < 0)
    return createStringError(inconvertibleErrorCode(),
                             "simulator options out of range");
  const size_t numClasses = cluster.classes.size();
  std::vector<int> capacity(numClasses);
  std::vector<std::string> classNames;
  for (size_t c = 0; c < numClasses; ++c) {
    capacity[c] = cluster.classes[c].count;
    classNames.push_back(cluster.classes[c].name);
  }
  std::vector<SimJob> jobs(specs.size());
  double window = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const PricedJob &spec = specs[i];
    if (spec.model < 0 || size_t(spec.model) >= rates.size() ||
        spec.gpuClass < 0 || size_t(spec.gpuClass) >= numClasses ||
        spec.gpus <= 0 || spec.gpus > capacity[spec.gpuClass] ||
        !(spec.work > 0))
      return createStringError(inconvertibleErrorCode(),
                               "job '%s': model, GPU request or work out of "
                               "range for cluster '%s'",
                               spec.name.c_str(), cluster.name.c_str());
    jobs[i].spec = &spec;
    jobs[i].rates = &rates[spec.model];
    jobs[i].reference = rates[spec.model].whole[spec.gpuClass][spec.gpus];
    jobs[i].devices.assign(numClasses, 0);
    window = std::max(window, spec.submitTime);
  }
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t a, size_t b) {
    return specs[a].submitTime < specs[b].submitTime;
  });

  PricedResult result;
  result.policy = pricedPolicyName(options.policy).str();
  result.jobs = jobs.size();
  result.deviceSeconds.assign(numClasses, 0.0);
  const double horizon =
      options.horizon > 0 ? options.horizon : window + 30 * 86400.0;
  std::vector<int> freeDevices = capacity;
  double now = 0;
  size_t finished = 0;

  auto hold = [&](SimJob &job, const std::vector<int> &devices, double rate,
                  double price) {
    for (size_t c = 0; c < numClasses; ++c)
      freeDevices[c] += job.devices[c] - devices[c];
    bool moved = job.devices != devices;
    job.devices = devices;
    job.rate = rate;
    job.pricePerHour = price;
    if (!moved)
      return;
    bool running = llvm::any_of(devices, [](int d) { return d > 0; });
    if (!running)
      return;
    job.restartLeft = options.resizeCost;
    if (job.started) {
      ++job.rescales;
    } else {
      job.started = true;
      job.start = now;
    }
  };

  while (finished < jobs.size() && now < horizon) {
    std::vector<size_t> active;
    std::optional<double> nextArrival;
    for (size_t i : order)
      if (specs[i].submitTime <= now && !jobs[i].done)
        active.push_back(i);
      else if (!jobs[i].done && !nextArrival)
        nextArrival = specs[i].submitTime;
    // An idle cluster waits for the next arrival at the first decision
    // after it, as the trace simulator does (a slow mix stepped through
    // years of empty intervals).
    if (active.empty() && nextArrival) {
      now = std::ceil(*nextArrival / options.interval) * options.interval;
      continue;
    }
    // The last interval ends at the horizon (jobs finished after it and
    // the makespan ran past it).
    const double step = std::min(options.interval, horizon - now);
    if (options.policy == PricedPolicy::WholeGpu) {
      // Strict FIFO on each job's own request; held until the job ends.
      for (size_t i : active) {
        SimJob &job = jobs[i];
        if (job.started)
          continue;
        int c = job.spec->gpuClass;
        if (job.spec->gpus > freeDevices[c])
          break;
        std::vector<int> devices(numClasses, 0);
        devices[c] = job.spec->gpus;
        hold(job, devices, job.reference,
             job.spec->gpus * cluster.classes[c].pricePerHour);
      }
    } else if (!active.empty()) {
      AllocationRequest request;
      request.capacity = capacity;
      request.classNames = classNames;
      request.objective = options.policy == PricedPolicy::MinCost
                              ? Objective::MinCost
                              : Objective::MaxValue;
      request.reallocationPenalty =
          std::min(1.0, options.resizeCost / options.interval);
      request.hysteresis = options.hysteresis;
      for (size_t i : active) {
        SimJob &job = jobs[i];
        AllocationJob entry;
        entry.id = job.spec->name;
        entry.current = job.choice;
        double best = 0;
        for (const RatedChoice &rated : job.rates->choices) {
          JobChoice choice;
          choice.devices = rated.devices;
          choice.batch = int64_t(ctrModelSizes()[job.spec->model].batch);
          // Normalised per job (the speed-up over its whole-GPU request),
          // so that a big model does not outweigh the others.
          choice.value = rated.throughput / job.reference;
          // MinCost: what finishing the job on this choice costs (price x
          // remaining time), not its price per hour, which would favour slow
          // cheap plans that cost more per sample in the end.
          choice.costPerHour = request.objective == Objective::MinCost
                                   ? rated.pricePerHour *
                                         (job.spec->work - job.progress) /
                                         rated.throughput / 3600
                                   : rated.pricePerHour;
          best = std::max(best, choice.value);
          entry.choices.push_back(std::move(choice));
        }
        if (request.objective == Objective::MinCost) {
          // The floor: the rate that still meets the deadline from here
          // (a job not yet running pays the restart first). Past the
          // deadline, or without one: at least the request's speed.
          double remaining = job.spec->work - job.progress;
          double left = job.spec->deadline - now -
                        (job.choice < 0 ? options.resizeCost : 0.0);
          double floor = job.spec->deadline > 0 && left > 0
                             ? remaining / left / job.reference
                             : 1.0;
          // Always positive: a job without a floor only gets free devices.
          entry.floor = std::max(std::min(floor, best), 1e-9);
        }
        request.jobs.push_back(std::move(entry));
      }
      auto begin = std::chrono::steady_clock::now();
      AllocationResult allocation = allocate(request);
      result.allocatorSeconds += std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - begin)
                                     .count();
      // Release first, then take: the allocation fits the whole capacity.
      std::vector<int> none(numClasses, 0);
      std::vector<int> picks(active.size(), -1);
      for (size_t k = 0; k < active.size(); ++k) {
        SimJob &job = jobs[active[k]];
        int c = k < allocation.choice.size() ? allocation.choice[k] : -1;
        if (c < 0 || size_t(c) >= job.rates->choices.size())
          c = -1;
        picks[k] = c;
        if (c != job.choice && job.choice >= 0)
          hold(job, none, 0, 0);
      }
      for (size_t k = 0; k < active.size(); ++k) {
        SimJob &job = jobs[active[k]];
        int c = picks[k];
        if (c < 0) {
          job.choice = -1;
          continue;
        }
        const RatedChoice &rated = job.rates->choices[c];
        hold(job, rated.devices, rated.throughput, rated.pricePerHour);
        job.choice = c;
      }
    }
    ++result.decisions;

    // Advance every running job through the interval.
    for (size_t i : active) {
      SimJob &job = jobs[i];
      bool running = llvm::any_of(job.devices, [](int d) { return d > 0; });
      if (!running)
        continue;
      double pause = std::min(job.restartLeft, step);
      job.restartLeft -= pause;
      double held = step;
      double left = step - pause;
      if (job.rate > 0 && job.progress + job.rate * left >= job.spec->work) {
        held = pause + (job.spec->work - job.progress) / job.rate;
        job.progress = job.spec->work;
        job.done = true;
        job.finish = now + held;
      } else {
        job.progress += job.rate * left;
      }
      result.cost += job.pricePerHour * held / 3600;
      for (size_t c = 0; c < numClasses; ++c)
        result.deviceSeconds[c] += job.devices[c] * held;
      if (job.done) {
        hold(job, std::vector<int>(numClasses, 0), 0, 0);
        job.choice = -1;
        ++finished;
      }
    }
    now += step;
  }

  std::vector<double> jcts;
  for (SimJob &job : jobs) {
    if (job.spec->deadline > 0) {
      ++result.withDeadline;
      if (job.done && job.finish <= job.spec->deadline + 1e-6)
        ++result.metDeadline;
    }
    result.rescales += job.rescales;
    if (!job.done)
      continue;
    jcts.push_back(job.finish - job.spec->submitTime);
    result.makespan = std::max(result.makespan, job.finish);
  }
  result.completed = jcts.size();
  result.queued = result.jobs - result.completed;
  if (result.completed < result.jobs)
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
  return result;
}

std::string formatPricedJSON(const PricedResult &result,
                             const cluster::ClusterSpec &cluster, int indent) {
  std::string text;
  raw_string_ostream os(text);
  json::OStream out(os, indent);
  auto fixed = [&](StringRef key, double x, int decimals) {
    detail::writeFixed(out, key, x, decimals);
  };
  out.object([&] {
    out.attribute("policy", result.policy);
    out.attribute("cluster", cluster.name);
    out.attribute("jobs", result.jobs);
    out.attribute("completed", result.completed);
    out.attribute("queued_or_dropped", result.queued);
    detail::writeCompletionTimes(out, result.completed, result.meanJct,
                                 result.p99Jct);
    fixed("makespan_s", result.makespan, 1);
    fixed("cost_usd", result.cost, 2);
    out.attribute("jobs_with_floor", result.withDeadline);
    out.attribute("floors_met", result.metDeadline);
    out.attribute("rescales", result.rescales);
    out.attribute("decisions", result.decisions);
    fixed("allocator_ms_per_decision",
          result.decisions ? 1000 * result.allocatorSeconds / result.decisions
                           : 0,
          3);
    out.attributeObject("utilization", [&] {
      for (size_t c = 0; c < cluster.classes.size(); ++c)
        fixed(cluster.classes[c].name,
              result.makespan > 0 && cluster.classes[c].count > 0
                  ? result.deviceSeconds[c] /
                        (cluster.classes[c].count * result.makespan)
                  : 0,
              4);
    });
  });
  os.flush();
  return text;
}

} // namespace heterps::autoscale
