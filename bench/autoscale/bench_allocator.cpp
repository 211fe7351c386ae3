//===- bench_allocator.cpp - Speed and quality of the allocator -----------===//
//
// The two sizes: 100 jobs x 256 GPUs of one class (about 10 choices
// per job; target under 10 ms) and 1,000 jobs x 4,096 devices of 3 classes
// (target under 1 s). Besides the time, each benchmark reports the value
// against a simple greedy on the same instance (counter greedy_ratio) and,
// for the heuristic, against its Lagrangian upper bound (bound_ratio).
//
//   build/bench/autoscale/bench_allocator --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Allocator.h"

#include "benchmark/benchmark.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace heterps::autoscale;

namespace {

/// Jobs in the terms: a goodput-like value over (devices, batch),
/// sublinear in devices (communication), with an efficiency that drops for
/// batches beyond the job's critical batch; normalised by the job's value on
/// the smallest choice so every job counts alike.
AllocationRequest makeRequest(int numJobs, std::vector<int> capacity,
                              unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  AllocationRequest request;
  request.capacity = capacity;
  int numClasses = static_cast<int>(capacity.size());
  std::vector<double> classSpeed = {1.0, 2.2, 0.35};
  std::vector<double> classPrice = {1.0, 2.5, 0.2};
  for (int j = 0; j < numJobs; ++j) {
    AllocationJob job;
    job.id = "job" + std::to_string(j);
    double scaling = 0.6 + 0.35 * uniform(rng); // exponent of devices
    double criticalBatch = 64 << static_cast<int>(uniform(rng) * 5);
    std::vector<int> counts = {1, 2, 4, 8, 16};
    std::vector<int64_t> batches = {64, 256};
    if (numClasses == 1) {
      // 6 counts at one batch per device, 4 more at a larger one: 10 choices.
      counts = {1, 2, 3, 4, 6, 8};
      batches = {128};
    }
    double base = 0;
    for (int k = 0; k < numClasses; ++k)
      for (int g : counts)
        for (int64_t batch : batches) {
          JobChoice choice;
          choice.devices.assign(numClasses, 0);
          choice.devices[k] = g;
          choice.batch = batch * g;
          double throughput =
              (k < 3 ? classSpeed[k] : 1.0) * std::pow(g, scaling);
          double efficiency =
              1.0 / (1.0 + static_cast<double>(choice.batch) / criticalBatch);
          choice.value = throughput * efficiency;
          choice.costPerHour = g * (k < 3 ? classPrice[k] : 1.0);
          job.choices.push_back(choice);
        }
    if (numClasses == 1)
      for (int g : {3, 4, 6, 8}) {
        JobChoice choice;
        choice.devices = {g};
        choice.batch = 512 * g;
        choice.value =
            std::pow(g, scaling) /
            (1.0 + static_cast<double>(choice.batch) / criticalBatch);
        choice.costPerHour = g;
        job.choices.push_back(choice);
      }
    for (const JobChoice &choice : job.choices)
      base = std::max(base, choice.value);
    for (JobChoice &choice : job.choices)
      choice.value /= base;
    request.jobs.push_back(job);
  }
  return request;
}

/// The simple peer: jobs by their best value per device, each the largest
/// value that still fits.
double greedyValue(const AllocationRequest &request) {
  std::vector<size_t> order(request.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  auto density = [&](size_t j) {
    double best = 0;
    for (const JobChoice &c : request.jobs[j].choices) {
      int total = std::accumulate(c.devices.begin(), c.devices.end(), 0);
      best = std::max(best, c.value / std::max(total, 1));
    }
    return best;
  };
  std::vector<double> key(order.size());
  for (size_t j : order)
    key[j] = density(j);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return key[a] > key[b]; });
  std::vector<int> free = request.capacity;
  double total = 0;
  for (size_t j : order) {
    const JobChoice *best = nullptr;
    for (const JobChoice &c : request.jobs[j].choices) {
      bool fits = true;
      for (size_t k = 0; k < free.size(); ++k)
        fits &= c.devices[k] <= free[k];
      if (fits && (!best || c.value > best->value))
        best = &c;
    }
    if (!best)
      continue;
    for (size_t k = 0; k < free.size(); ++k)
      free[k] -= best->devices[k];
    total += best->value;
  }
  return total;
}

void runAllocator(benchmark::State &state, const AllocationRequest &request) {
  AllocationResult result;
  for (auto _ : state) {
    result = allocate(request);
    benchmark::DoNotOptimize(result.value);
  }
  state.counters["value"] = result.value;
  state.counters["greedy_ratio"] = result.value / greedyValue(request);
  state.counters["bound_ratio"] = result.value / result.bound;
  state.counters["queued"] = static_cast<double>(
      std::count(result.choice.begin(), result.choice.end(), -1));
  state.counters["kept_current"] = result.keptCurrent;
}

void BM_OneClass_100Jobs_256Gpus(benchmark::State &state) {
  static AllocationRequest request = makeRequest(100, {256}, 1);
  runAllocator(state, request);
}
BENCHMARK(BM_OneClass_100Jobs_256Gpus)->Unit(benchmark::kMillisecond);

/// The same instance with running jobs, penalty and hysteresis: the keep
/// plan is a second program.
void BM_OneClass_100Jobs_256Gpus_Running(benchmark::State &state) {
  static AllocationRequest request = [] {
    AllocationRequest r = makeRequest(100, {256}, 1);
    AllocationResult first = allocate(r);
    for (size_t j = 0; j < r.jobs.size(); ++j)
      r.jobs[j].current = first.choice[j];
    r.jobs.resize(90); // some finished, new ones arrive
    AllocationRequest arrivals = makeRequest(20, {256}, 2);
    for (AllocationJob &job : arrivals.jobs) {
      job.id += "new";
      r.jobs.push_back(job);
    }
    r.reallocationPenalty = 0.5;
    r.hysteresis = 0.05;
    return r;
  }();
  runAllocator(state, request);
}
BENCHMARK(BM_OneClass_100Jobs_256Gpus_Running)->Unit(benchmark::kMillisecond);

void BM_ThreeClasses_1000Jobs_4096Devices(benchmark::State &state) {
  static AllocationRequest request = makeRequest(1000, {2048, 1024, 1024}, 3);
  runAllocator(state, request);
}
BENCHMARK(BM_ThreeClasses_1000Jobs_4096Devices)->Unit(benchmark::kMillisecond);

void BM_ThreeClasses_1000Jobs_4096Devices_MinCost(benchmark::State &state) {
  static AllocationRequest request = [] {
    AllocationRequest r = makeRequest(1000, {2048, 1024, 1024}, 4);
    r.objective = Objective::MinCost;
    // Half the jobs need at least 40% of their best value (at 50% the
    // floors need more class-1 devices than there are: infeasible).
    for (size_t j = 0; j < r.jobs.size(); j += 2)
      r.jobs[j].floor = 0.4;
    return r;
  }();
  AllocationResult result;
  for (auto _ : state) {
    result = allocate(request);
    benchmark::DoNotOptimize(result.costPerHour);
  }
  state.counters["cost_per_hour"] = result.costPerHour;
  state.counters["feasible"] = result.feasible;
  state.counters["queued"] = static_cast<double>(
      std::count(result.choice.begin(), result.choice.end(), -1));
}
BENCHMARK(BM_ThreeClasses_1000Jobs_4096Devices_MinCost)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
