//===- PricedTest.cpp - HeterPS jobs on a priced cluster ------------------===//

#include "heterps/Autoscale/PricedWorkload.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

using namespace heterps;
using namespace heterps::autoscale;

namespace {

/// A small paper-style cluster: CPUs, a fast and a slow GPU type, priced.
cluster::ClusterSpec smallCluster() {
  const char *yaml = R"(
name: small
device_classes:
  - {name: cpu.x, kind: cpu, peak_gflops: 1536, memory_bandwidth_gbps: 40,
     memory_gib: 32, price_per_hour: 0.68, count: 8, per_machine: 1,
     launch_overhead_us: 1}
  - {name: gpu.fast, kind: gpu, peak_gflops: 15700, memory_bandwidth_gbps: 900,
     memory_gib: 16, price_per_hour: 3.06, count: 4, per_machine: 4,
     launch_overhead_us: 5}
  - {name: gpu.slow, kind: gpu, peak_gflops: 11760, memory_bandwidth_gbps: 346,
     memory_gib: 24, price_per_hour: 2.07, count: 4, per_machine: 4,
     launch_overhead_us: 5}
links:
  - {from: cpu.x, to: ps, scope: intra, bandwidth_gbps: 20, latency_us: 2}
network: {bandwidth_gbps: 3.125, latency_us: 30}
parameter_server: {bandwidth_gbps: 12.5, latency_us: 10}
)";
  llvm::Expected<cluster::ClusterSpec> spec =
      cluster::parseClusterSpec(yaml, "small.yaml");
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return {};
  }
  return *spec;
}

std::vector<RateTable> tablesFor(const cluster::ClusterSpec &spec) {
  std::vector<RateTable> tables;
  for (const CtrModelSize &size : ctrModelSizes()) {
    llvm::Expected<RateTable> table = buildRateTable(size, spec);
    if (!table) {
      ADD_FAILURE() << llvm::toString(table.takeError());
      return {};
    }
    tables.push_back(std::move(*table));
  }
  return tables;
}

TEST(Priced, CtrGraphsVerifyAndGrow) {
  double previous = 0;
  for (const CtrModelSize &size : ctrModelSizes()) {
    cost::LayerGraph graph = ctrLayerGraph(size);
    EXPECT_FALSE(bool(graph.verify())) << size.name;
    EXPECT_EQ(graph.size(), 2 * size.tables + 1 + 2 * size.hidden.size() + 2);
    double flops = 0;
    for (const cost::Layer &layer : graph.layers)
      flops += layer.forwardFlopsPerSample;
    EXPECT_GT(flops, previous) << size.name;
    previous = flops;
  }
}

TEST(Priced, RateTableIsAParetoFrontWithinTheCluster) {
  cluster::ClusterSpec spec = smallCluster();
  std::vector<RateTable> tables = tablesFor(spec);
  ASSERT_EQ(tables.size(), ctrModelSizes().size());
  for (const RateTable &table : tables) {
    ASSERT_FALSE(table.choices.empty()) << table.model;
    for (size_t i = 0; i < table.choices.size(); ++i) {
      const RatedChoice &a = table.choices[i];
      double price = 0;
      for (size_t c = 0; c < spec.classes.size(); ++c) {
        EXPECT_GE(a.devices[c], 0);
        EXPECT_LE(a.devices[c], int(spec.classes[c].count));
        price += a.devices[c] * spec.classes[c].pricePerHour;
      }
      EXPECT_NEAR(a.pricePerHour, price, 1e-9);
      EXPECT_GT(a.throughput, 0);
      if (i > 0) {
        EXPECT_GE(a.throughput, table.choices[i - 1].throughput);
      }
      // No other choice uses at most its devices and is at least as fast.
      for (size_t j = 0; j < table.choices.size(); ++j) {
        if (i == j)
          continue;
        const RatedChoice &b = table.choices[j];
        bool fewer = true;
        for (size_t c = 0; c < spec.classes.size(); ++c)
          fewer &= b.devices[c] <= a.devices[c];
        EXPECT_FALSE(fewer && b.throughput >= a.throughput)
            << table.model << " choice " << i << " dominated by " << j;
      }
    }
    // Whole GPUs: more of them never slower; CPUs have no whole-GPU rate.
    for (size_t c = 0; c < spec.classes.size(); ++c)
      for (size_t g = 1; g < table.whole[c].size(); ++g) {
        EXPECT_GE(table.whole[c][g], table.whole[c][g - 1]);
        if (spec.classes[c].kind == cluster::DeviceKind::CPU)
          EXPECT_EQ(table.whole[c][g], 0);
        else
          EXPECT_GT(table.whole[c][g], 0);
      }
  }
}

TEST(Priced, MixIsDeterministicAndWellFormed) {
  cluster::ClusterSpec spec = smallCluster();
  std::vector<RateTable> tables = tablesFor(spec);
  PricedMixOptions options;
  options.jobs = 20;
  options.seed = 7;
  auto a = generatePricedMix(options, spec, tables);
  auto b = generatePricedMix(options, spec, tables);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  ASSERT_EQ(a->size(), 20u);
  double last = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    const PricedJob &job = (*a)[i];
    EXPECT_EQ(job.submitTime, (*b)[i].submitTime);
    EXPECT_EQ(job.work, (*b)[i].work);
    EXPECT_GE(job.submitTime, last);
    last = job.submitTime;
    EXPECT_EQ(spec.classes[job.gpuClass].kind, cluster::DeviceKind::GPU);
    EXPECT_GT(job.work, 0);
    EXPECT_GT(job.deadline, job.submitTime);
  }
  // A cluster without GPUs has no whole-GPU baseline: an error.
  cluster::ClusterSpec cpus = spec;
  cpus.classes.resize(1);
  cpus.links.clear();
  auto none = generatePricedMix(options, cpus, tables);
  EXPECT_FALSE(bool(none));
  llvm::consumeError(none.takeError());
}

TEST(Priced, PoliciesFinishEveryJobAndTradeCostForTime) {
  cluster::ClusterSpec spec = smallCluster();
  std::vector<RateTable> tables = tablesFor(spec);
  PricedMixOptions mix;
  mix.jobs = 12;
  mix.ratePerHour = 6;
  mix.seed = 3;
  auto jobs = generatePricedMix(mix, spec, tables);
  ASSERT_TRUE(bool(jobs)) << llvm::toString(jobs.takeError());
  std::map<PricedPolicy, PricedResult> results;
  for (PricedPolicy policy : {PricedPolicy::WholeGpu, PricedPolicy::MaxValue,
                              PricedPolicy::MinCost}) {
    PricedSimOptions options;
    options.policy = policy;
    auto result = simulatePriced(*jobs, spec, tables, options);
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    EXPECT_EQ(result->completed, 12) << result->policy;
    EXPECT_EQ(result->withDeadline, 12);
    EXPECT_GT(result->cost, 0);
    EXPECT_GT(result->meanJct, 0);
    EXPECT_GE(result->makespan, (*jobs).back().submitTime);
    results[policy] = *result;
  }
  const PricedResult &whole = results[PricedPolicy::WholeGpu];
  const PricedResult &value = results[PricedPolicy::MaxValue];
  const PricedResult &cheap = results[PricedPolicy::MinCost];
  EXPECT_EQ(whole.rescales, 0);
  // Goodput first: faster than whole GPUs. Cost first: cheaper than both,
  // and no fewer deadlines met than whole GPUs.
  EXPECT_LT(value.meanJct, whole.meanJct);
  EXPECT_LT(cheap.cost, whole.cost);
  EXPECT_LT(cheap.cost, value.cost);
  EXPECT_GE(cheap.metDeadline, whole.metDeadline);
}

TEST(Priced, BadJobsAreErrorsNotCrashes) {
  cluster::ClusterSpec spec = smallCluster();
  std::vector<RateTable> tables = tablesFor(spec);
  PricedJob job;
  job.name = "too-big";
  job.model = 0;
  job.gpuClass = 1;
  job.gpus = 99; // above the class's count
  job.work = 1e6;
  auto result = simulatePriced({job}, spec, tables, {});
  ASSERT_FALSE(bool(result));
  EXPECT_NE(llvm::toString(result.takeError()).find("too-big"),
            std::string::npos);
  PricedMixOptions bad;
  bad.ratePerHour = 0;
  auto mix = generatePricedMix(bad, spec, tables);
  EXPECT_FALSE(bool(mix));
  llvm::consumeError(mix.takeError());
}

} // namespace
