//===- CostModelTest.cpp - Cost model against hand-computed cases ---------===//

#include "heterps/Cost/CostModel.h"
#include "heterps/Cost/Calibration.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <fstream>
#include <random>

using namespace heterps;
using namespace heterps::cost;
using cluster::ClusterSpec;
using cluster::DeviceKind;

namespace {

// cpu: 1 TFLOP/s, 100 GB/s, $1/h, 4 devices one per machine, no overhead.
// gpu: 10 TFLOP/s, 1000 GB/s, 16 GiB, $3/h, 4 devices in one machine, 5 us.
ClusterSpec twoClassCluster() {
  ClusterSpec spec;
  spec.classes.push_back({"cpu", DeviceKind::CPU, 1000, 100, 64, 1.0, 4, 1, 0});
  spec.classes.push_back(
      {"gpu", DeviceKind::GPU, 10000, 1000, 16, 3.0, 4, 4, 5});
  spec.network = {10, 10};
  spec.parameterServer = {5, 20};
  cluster::Link cpuGpu;
  cpuGpu.from = 0;
  cpuGpu.to = 1;
  cpuGpu.scope = cluster::LinkScope::Intra;
  cpuGpu.params = {20, 5};
  cluster::Link gpuGpu = cpuGpu;
  gpuGpu.from = 1;
  gpuGpu.params = {100, 2};
  spec.links = {cpuGpu, gpuGpu};
  return spec;
}

// Every efficiency 0.5, batch 100, no serial fraction: round numbers.
CostOptions simpleOptions() {
  CostOptions options;
  for (auto &perDevice : options.efficiency)
    for (Efficiency &eff : perDevice)
      eff = {0.5, 0.5};
  options.batchSize = 100;
  options.serialFraction = 0;
  return options;
}

Layer dense(std::string name, double flops, double params,
            std::vector<unsigned> inputs) {
  Layer layer;
  layer.name = std::move(name);
  layer.opName = "hps.gemm";
  layer.kind = LayerKind::DenseCompute;
  layer.forwardFlopsPerSample = flops;
  layer.memoryBytesPerSample = 1e4;
  layer.parameterBytes = params;
  layer.outputBytesPerSample = 4096;
  layer.inputs = std::move(inputs);
  return layer;
}

Layer elementwise(std::string name, std::vector<unsigned> inputs) {
  Layer layer;
  layer.name = std::move(name);
  layer.opName = "hps.relu";
  layer.kind = LayerKind::Elementwise;
  layer.forwardFlopsPerSample = 1e5;
  layer.memoryBytesPerSample = 1e6;
  layer.outputBytesPerSample = 1000;
  layer.inputs = std::move(inputs);
  return layer;
}

Layer embedding(std::string name) {
  Layer layer;
  layer.name = std::move(name);
  layer.opName = "hps.embedding";
  layer.kind = LayerKind::EmbeddingLookup;
  layer.embeddingRows = 1'000'000;
  layer.embeddingRowBytes = 64;
  layer.lookupsPerSample = 26;
  layer.outputBytesPerSample = 26 * 64;
  return layer;
}

TEST(CostModel, RooflinePerLayer) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.mode = Mode::Inference;
  graph.layers = {dense("fc", 2e6, 0, {}), elementwise("relu", {0})};
  CostModel model(graph, spec, simpleOptions());
  // fc: 2e6 * 100 FLOP; compute bound on both.
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(0, 0), 2e8 / (1000e9 * 0.5));
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(0, 1), 2e8 / (10000e9 * 0.5));
  // relu: 1e6 * 100 bytes; memory bound.
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(1, 0), 1e8 / (100e9 * 0.5));
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(1, 1), 1e8 / (1000e9 * 0.5));
  EXPECT_DOUBLE_EQ(model.layerOverheadSeconds(1), 5e-6);

  // Training: three times the work, overhead for two passes.
  graph.mode = Mode::Training;
  CostModel training(graph, spec, simpleOptions());
  EXPECT_DOUBLE_EQ(training.layerWorkSeconds(0, 1), 3 * 2e8 / 5e12);
  EXPECT_DOUBLE_EQ(training.layerOverheadSeconds(1), 10e-6);
}

TEST(CostModel, EfficiencyFactorsApply) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.mode = Mode::Inference;
  graph.layers = {dense("fc", 2e6, 0, {})};
  CostOptions options = simpleOptions();
  options.get(DeviceKind::GPU, LayerKind::DenseCompute).compute = 0.8;
  CostModel model(graph, spec, options);
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(0, 1), 2e8 / (10000e9 * 0.8));
}

TEST(CostModel, StageWithReplicasAmdahlAndAllReduce) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.layers = {dense("fc", 2e6, 4e6, {}), elementwise("relu", {0})};
  CostOptions options = simpleOptions();
  options.serialFraction = 0.1;
  CostModel model(graph, spec, options);

  double work = 3 * 2e8 / 5e12 + 3 * 1e8 / 5e11;
  double overhead = 2 * 2 * 5e-6;
  StageEstimate one = model.stage(1, 0, 2, 1);
  EXPECT_DOUBLE_EQ(one.computeSeconds, overhead + work);
  EXPECT_DOUBLE_EQ(one.allReduceSeconds, 0);

  StageEstimate two = model.stage(1, 0, 2, 2);
  EXPECT_NEAR(two.computeSeconds, overhead + 0.1 * work + 0.9 * work / 2,
              1e-15);
  // Ring all-reduce of 4 MB inside the machine (100 GB/s, 2 us).
  double ring = 2.0 * 1 / 2 * 4e6 / 100e9 + 2 * 1 * 2e-6;
  EXPECT_NEAR(two.allReduceSeconds, ring, 1e-15);
  EXPECT_NEAR(two.seconds, two.computeSeconds + ring, 1e-15);

  // Four CPU replicas, one per machine: the network (10 GB/s, 10 us).
  StageEstimate cpus = model.stage(0, 0, 1, 4);
  EXPECT_NEAR(cpus.allReduceSeconds, 2.0 * 3 / 4 * 4e6 / 10e9 + 2 * 3 * 10e-6,
              1e-15);

  // Inference has no gradients to reduce.
  graph.mode = Mode::Inference;
  CostModel inference(graph, spec, options);
  EXPECT_DOUBLE_EQ(inference.stage(1, 0, 2, 2).allReduceSeconds, 0);
}

TEST(CostModel, ParameterServerTraffic) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.layers = {embedding("emb")};
  CostModel model(graph, spec, simpleOptions());
  // Pull rows and push gradients: two messages over the PS link (5 GB/s,
  // 20 us); each of two replicas moves half the batch's rows.
  double rows = 26 * 64 * 100 / 2.0;
  StageEstimate stage = model.stage(0, 0, 1, 2);
  EXPECT_NEAR(stage.parameterServerSeconds, 2 * (20e-6 + rows / 5e9), 1e-15);
  EXPECT_NEAR(model.layerParameterServerSeconds(0, 0, 2),
              stage.parameterServerSeconds, 1e-15);
  // The gathered rows are the layer's memory traffic.
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(0, 0), 3 * 26 * 64 * 100 / 50e9);
  // A per-class link to the parameter server overrides the default.
  cluster::Link psLink;
  psLink.from = 0;
  psLink.toPS = true;
  psLink.scope = cluster::LinkScope::Intra;
  psLink.params = {50, 1};
  spec.links.push_back(psLink);
  CostModel local(graph, spec, simpleOptions());
  EXPECT_NEAR(local.stage(0, 0, 1, 2).parameterServerSeconds,
              2 * (1e-6 + rows / 50e9), 1e-15);

  // The server's time per key: 26 keys per sample, half the batch of 100
  // per replica, pulled and pushed.
  spec.links.back().params.keyUs = 0.1;
  CostModel perKey(graph, spec, simpleOptions());
  double keys = 26 * 100 / 2.0;
  StageEstimate keyed = perKey.stage(0, 0, 1, 2);
  EXPECT_NEAR(keyed.parameterServerSeconds,
              2 * (1e-6 + rows / 50e9 + keys * 0.1e-6), 1e-15);
  EXPECT_NEAR(perKey.layerParameterServerSeconds(0, 0, 2),
              keyed.parameterServerSeconds, 1e-15);
}

TEST(CostModel, StepShapesPriceTheServer) {
  ClusterSpec spec = twoClassCluster();
  spec.parameterServer.keyUs = 0.1;
  LayerGraph graph;
  graph.layers = {embedding("emb")};
  // One way of a replica's half batch: a message, the rows, the keys.
  const double keys = 26 * 100 / 2.0, rows = 26 * 64 * 100 / 2.0;
  const double oneWay = 20e-6 + rows / 5e9 + keys * 0.1e-6;
  auto priced = [&](StepShape shape, double distinct = 1.0) {
    CostOptions options = simpleOptions();
    options.step = shape;
    options.passDistinctFraction = distinct;
    return CostModel(graph, spec, options);
  };
  const unsigned cpu = 0, gpu = 1;

  StageEstimate direct = priced({}).stage(gpu, 0, 1, 2);
  EXPECT_NEAR(direct.parameterServerSeconds, 2 * oneWay, 1e-15);
  EXPECT_EQ(direct.parameterServerBackgroundSeconds, 0);

  // A stale push overlaps the next step on a GPU, not on a CPU (the
  // server's threads share its cores).
  StageEstimate stale = priced({0, 1}).stage(gpu, 0, 1, 2);
  EXPECT_NEAR(stale.parameterServerSeconds, oneWay, 1e-15);
  EXPECT_NEAR(stale.parameterServerBackgroundSeconds, oneWay, 1e-15);
  EXPECT_NEAR(stale.seconds, std::max(stale.computeSeconds + oneWay, oneWay),
              1e-15);
  EXPECT_LT(stale.seconds, direct.seconds);
  StageEstimate staleCpu = priced({0, 1}).stage(cpu, 0, 1, 2);
  EXPECT_NEAR(staleCpu.seconds, priced({}).stage(cpu, 0, 1, 2).seconds, 1e-15);

  // Passes of 10 steps, a tenth of whose keys are distinct: each step looks
  // its keys up in the cache (pull and push), writes back a tenth of the
  // traffic and a tenth of a pass's messages, and loads as much for the
  // next pass in the background.
  const double moved = 20e-6 / 10 + 0.1 * (oneWay - 20e-6);
  const CostOptions defaults;
  const double inCacheGpu =
      keys * defaults.passCacheKeyUs[unsigned(DeviceKind::GPU)] * 1e-6;
  StageEstimate passes = priced({10, 0}, 0.1).stage(gpu, 0, 1, 2);
  EXPECT_NEAR(passes.parameterServerSeconds, 2 * inCacheGpu + moved, 1e-15);
  EXPECT_NEAR(passes.parameterServerBackgroundSeconds, moved, 1e-15);
  EXPECT_LT(passes.seconds, stale.seconds);
  StageEstimate stalePasses = priced({10, 1}, 0.1).stage(gpu, 0, 1, 2);
  EXPECT_NEAR(stalePasses.parameterServerSeconds, inCacheGpu + moved, 1e-15);
  EXPECT_NEAR(stalePasses.parameterServerBackgroundSeconds, moved + inCacheGpu,
              1e-15);
  EXPECT_NEAR(priced({10, 0}, 0.1).layerParameterServerSeconds(0, gpu, 2),
              passes.parameterServerSeconds, 1e-15);

  // On a CPU the cache's index costs about what the server's does, so
  // passes over rows in memory cost more than the direct step.
  const double inCacheCpu =
      keys * defaults.passCacheKeyUs[unsigned(DeviceKind::CPU)] * 1e-6;
  StageEstimate cpuPasses = priced({10, 0}, 0.1).stage(cpu, 0, 1, 2);
  EXPECT_NEAR(cpuPasses.parameterServerSeconds, 2 * inCacheCpu + 2 * moved,
              1e-15);
  EXPECT_GT(cpuPasses.seconds, priced({}).stage(cpu, 0, 1, 2).seconds);

  // Inference pulls once, whatever the step shape.
  graph.mode = Mode::Inference;
  EXPECT_NEAR(priced({10, 1}, 0.1).stage(gpu, 0, 1, 2).parameterServerSeconds,
              oneWay, 1e-15);
}

TEST(CostModel, CutTrafficAndBoundary) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  // a -> b -> c and a skip connection a -> c.
  graph.layers = {dense("a", 1e6, 0, {}), dense("b", 1e6, 0, {0}),
                  dense("c", 1e6, 0, {0, 1})};
  graph.layers[0].outputBytesPerSample = 100;
  graph.layers[1].outputBytesPerSample = 30;
  std::vector<double> cut = graph.cutBytesPerSample();
  EXPECT_DOUBLE_EQ(cut[1], 100);
  EXPECT_DOUBLE_EQ(cut[2], 130);
  CostModel model(graph, spec, simpleOptions());
  // cpu -> gpu is an intra link (20 GB/s, 5 us); batch 100.
  EXPECT_DOUBLE_EQ(model.boundarySeconds(2, 0, 1), 5e-6 + 130 * 100 / 20e9);
  EXPECT_DOUBLE_EQ(model.boundarySeconds(1, 1, 0), 5e-6 + 100 * 100 / 20e9);
}

TEST(CostModel, ProvisionPicksFewestReplicas) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.mode = Mode::Inference;
  graph.layers = {dense("fc", 2e6, 0, {})};
  CostModel model(graph, spec, simpleOptions());
  // One CPU: 4e-4 s per batch of 100 = 250000 samples/s.
  StagePlan one = model.provision(0, 0, 1, 200000);
  EXPECT_TRUE(one.meetsTarget);
  EXPECT_EQ(one.replicas, 1u);
  EXPECT_DOUBLE_EQ(one.throughput, 100 / 4e-4);
  StagePlan three = model.provision(0, 0, 1, 700000);
  EXPECT_TRUE(three.meetsTarget);
  EXPECT_EQ(three.replicas, 3u);
  // Four CPUs give at most 1e6 samples/s.
  StagePlan missed = model.provision(0, 0, 1, 2e6);
  EXPECT_FALSE(missed.meetsTarget);
  EXPECT_EQ(missed.replicas, 4u);
  EXPECT_DOUBLE_EQ(missed.throughput, 100 / 1e-4);
}

TEST(CostModel, MemoryLimitsPlacement) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  // 5 GB of weights: x4 for training does not fit a 16 GiB GPU.
  graph.layers = {dense("huge", 1e6, 5e9, {})};
  CostModel model(graph, spec, simpleOptions());
  EXPECT_FALSE(model.stage(1, 0, 1, 1).fitsMemory);
  EXPECT_TRUE(model.stage(0, 0, 1, 1).fitsMemory);
  Evaluation onGpu = model.evaluate({1}, 1);
  EXPECT_FALSE(onGpu.feasible);
  EXPECT_NE(onGpu.infeasibleReason.find("stage 'huge'..'huge' needs 18.63 "
                                        "GiB on each replica, more than the 16 "
                                        "GiB of gpu"),
            std::string::npos)
      << onGpu.infeasibleReason;

  // Outputs of 2e8 bytes a sample: a micro-batch of 100 needs 20 GB on
  // each replica, which runs whole micro-batches, so more GPUs do not help.
  LayerGraph wide;
  wide.layers = {elementwise("wide", {})};
  wide.layers[0].outputBytesPerSample = 2e8;
  CostModel wideModel(wide, spec, simpleOptions());
  EXPECT_FALSE(wideModel.stage(1, 0, 1, 1).fitsMemory);
  EXPECT_FALSE(wideModel.stage(1, 0, 1, 4).fitsMemory);
  EXPECT_DOUBLE_EQ(wideModel.stage(1, 0, 1, 4).memoryBytes,
                   wideModel.stage(1, 0, 1, 1).memoryBytes);
}

TEST(CostModel, PassCacheMemoryIsWhatLookupStagesLeaveFree) {
  const double gib = 1024.0 * 1024 * 1024;
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.layers = {embedding("emb"), dense("fc", 1e6, 1e9, {0})};
  CostModel model(graph, spec, simpleOptions());
  // The lookup on a CPU (64 GiB), the gemm on a GPU: the CPU's stage sets it.
  Evaluation split = model.evaluate({0, 1}, 1);
  ASSERT_EQ(split.stages.size(), 2u);
  const StagePlan &lookup = split.stages[0];
  EXPECT_DOUBLE_EQ(lookup.memoryBytes,
                   model.stage(0, 0, 1, lookup.replicas).memoryBytes);
  ASSERT_TRUE(model.passCacheMemoryBytes(split));
  EXPECT_DOUBLE_EQ(*model.passCacheMemoryBytes(split),
                   0.8 * (64 * gib - lookup.memoryBytes));
  // Both on the GPU (16 GiB): what the 4 GB of trained weights leave.
  Evaluation gpu = model.evaluate({1, 1}, 1);
  ASSERT_EQ(gpu.stages.size(), 1u);
  EXPECT_GT(gpu.stages[0].memoryBytes, 4e9);
  EXPECT_DOUBLE_EQ(*model.passCacheMemoryBytes(gpu),
                   0.8 * (16 * gib - gpu.stages[0].memoryBytes));

  // A stage that does not fit leaves nothing.
  LayerGraph huge;
  huge.layers = {embedding("emb"), dense("huge", 1e6, 5e9, {0})};
  CostModel hugeModel(huge, spec, simpleOptions());
  EXPECT_EQ(*hugeModel.passCacheMemoryBytes(hugeModel.evaluate({1, 1}, 1)), 0);

  // No lookup, or no training: no pass cache.
  LayerGraph dense1;
  dense1.layers = {dense("fc", 1e6, 1e6, {})};
  CostModel denseModel(dense1, spec, simpleOptions());
  EXPECT_FALSE(denseModel.passCacheMemoryBytes(denseModel.evaluate({1}, 1)));
  graph.mode = Mode::Inference;
  CostModel inference(graph, spec, simpleOptions());
  EXPECT_FALSE(inference.passCacheMemoryBytes(inference.evaluate({0, 1}, 1)));
}

TEST(CostModel, EvaluatePipeline) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.mode = Mode::Inference;
  graph.layers = {embedding("emb"), dense("fc1", 2e6, 0, {0}),
                  dense("fc2", 2e6, 0, {1})};
  CostModel model(graph, spec, simpleOptions());
  double target = 1e5;
  Evaluation plan = model.evaluate({0, 1, 1}, target);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].begin, 0u);
  EXPECT_EQ(plan.stages[0].end, 1u);
  EXPECT_EQ(plan.stages[1].begin, 1u);
  EXPECT_EQ(plan.stages[1].end, 3u);

  // Stage 0 on one CPU: gather + one pull from the PS.
  double embSeconds = 26 * 64 * 100 / 50e9 + (20e-6 + 26 * 64 * 100 / 5e9);
  EXPECT_DOUBLE_EQ(plan.stages[0].seconds, embSeconds);
  EXPECT_EQ(plan.stages[0].replicas, 1u);
  // Stage 1 on one GPU: two layers of 4e-5 s plus 5 us overhead each.
  double gpuSeconds = 2 * (4e-5 + 5e-6);
  EXPECT_DOUBLE_EQ(plan.stages[1].seconds, gpuSeconds);
  // Boundary: the embedding output, cpu -> gpu intra.
  ASSERT_EQ(plan.boundarySeconds.size(), 1u);
  double boundary = 5e-6 + 26 * 64 * 100 / 20e9;
  EXPECT_DOUBLE_EQ(plan.boundarySeconds[0], boundary);

  double throughput = 100 / std::max({embSeconds, gpuSeconds, boundary});
  EXPECT_DOUBLE_EQ(plan.throughput, throughput);
  EXPECT_DOUBLE_EQ(plan.pricePerHour, 1.0 + 3.0);
  EXPECT_DOUBLE_EQ(plan.costPerMillionSamples, 4.0 / (throughput * 3600) * 1e6);
  EXPECT_TRUE(plan.feasible) << plan.infeasibleReason;
  // The GPU stage is slowest; fc1 and fc2 tie, the first is named.
  EXPECT_GT(gpuSeconds, embSeconds);
  EXPECT_EQ(plan.bottleneckLayer, 1u);

  // Above what the pipeline can reach: infeasible, the stage is named.
  Evaluation missed = model.evaluate({0, 1, 1}, 1e7);
  EXPECT_FALSE(missed.feasible);
  EXPECT_NE(missed.infeasibleReason.find(
                "the slowest stage, layers 'fc1'..'fc2' on 4 x gpu"),
            std::string::npos)
      << missed.infeasibleReason;
  EXPECT_NE(missed.infeasibleReason.find("heaviest layer is 'fc1'"),
            std::string::npos)
      << missed.infeasibleReason;
}

// A step of M micro-batches as the runtime runs it: the first micro-batch
// through every stage (one replica each) and boundary (and back, in
// training), then the rest queued at the unit that passes them slowest.
TEST(CostModel, StepOfMicroBatchesFillsAndDrainsThePipeline) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.layers = {embedding("emb"), dense("fc1", 2e8, 0, {0}),
                  dense("fc2", 2e8, 0, {1})};
  CostModel model(graph, spec, simpleOptions());
  Evaluation plan = model.evaluate({0, 1, 1}, 1e4);
  ASSERT_EQ(plan.stages.size(), 2u);
  ASSERT_TRUE(plan.feasible) << plan.infeasibleReason;
  const StagePlan &cpu = plan.stages[0], &gpu = plan.stages[1];
  ASSERT_EQ(cpu.replicas, 1u);
  ASSERT_GT(gpu.replicas, 1u) << "the case needs a stage of replicas";
  const double gpuAlone = model.stage(1, 1, 3, 1).seconds;
  const double boundary = plan.boundarySeconds[0];
  const double through = cpu.seconds + 2 * boundary + gpuAlone;

  // One micro-batch: the stages one after another, one GPU working.
  EXPECT_DOUBLE_EQ(model.stepSeconds(plan, 1), through);
  // Up to the GPU replicas, each takes one micro-batch whole, at most one
  // every gpu.seconds; the CPU stage queues them.
  const unsigned k = gpu.replicas;
  EXPECT_DOUBLE_EQ(model.stepSeconds(plan, k),
                   through +
                       std::max({(k - 1) * cpu.seconds,
                                 std::max(gpuAlone, k * gpu.seconds) - gpuAlone,
                                 (k - 1) * boundary}));
  // Beyond, whichever unit keeps them longest.
  const unsigned m = 4 * k;
  EXPECT_DOUBLE_EQ(
      model.stepSeconds(plan, m),
      through + std::max({(m - 1) * cpu.seconds,
                          std::max(4 * gpuAlone, m * gpu.seconds) - gpuAlone,
                          (m - 1) * boundary}));
  // No step beats the pipeline.
  for (unsigned count = 1; count != 3 * k; ++count)
    EXPECT_LE(count * 100 / model.stepSeconds(plan, count), plan.throughput);
  // Many micro-batches reach the pipeline's throughput.
  const double many = 1e4 * 100 / model.stepSeconds(plan, 1e4);
  EXPECT_LT(many, plan.throughput);
  EXPECT_GT(many, 0.99 * plan.throughput);

  // The fewest reaching a goal: that count reaches it, one fewer does not.
  const double goal = 0.9 * plan.throughput;
  const unsigned fewest = model.fewestMicroBatchesReaching(plan, goal, 64);
  ASSERT_GT(fewest, 1u);
  ASSERT_LT(fewest, 64u);
  EXPECT_GE(fewest * 100 / model.stepSeconds(plan, fewest), goal);
  EXPECT_LT((fewest - 1) * 100 / model.stepSeconds(plan, fewest - 1), goal);
  EXPECT_EQ(model.fewestMicroBatchesReaching(plan, 2 * plan.throughput, 8), 8u);

  // Inference crosses each boundary once.
  graph.mode = Mode::Inference;
  CostModel inference(graph, spec, simpleOptions());
  Evaluation forward = inference.evaluate({0, 1, 1}, 1e4);
  EXPECT_DOUBLE_EQ(inference.stepSeconds(forward, 1),
                   forward.stages[0].seconds + forward.boundarySeconds[0] +
                       inference.stage(1, 1, 3, 1).seconds);
}

// evaluateRuns is evaluate() without the per-layer work: on random
// placements of a mixed graph, split into random runs (adjacent runs of one
// class included, and empty ones), at targets every plan meets, some meet
// and none meets, it decides stages, boundaries, throughput, price, cost
// and feasibility exactly as evaluate() does.
TEST(CostModel, EvaluateRunsAgreesWithEvaluate) {
  ClusterSpec spec = twoClassCluster();
  spec.classes[0].count = 3;
  LayerGraph graph;
  graph.mode = Mode::Training;
  graph.layers.push_back(embedding("emb"));
  for (unsigned l = 1; l != 24; ++l)
    graph.layers.push_back(
        l % 3 ? dense("fc" + std::to_string(l), 1e6 * (1 + l % 5), 1e5 * l,
                      {l - 1})
              : elementwise("act" + std::to_string(l), {l - 1}));
  CostModel model(graph, spec, simpleOptions());
  std::mt19937 rng(7);
  unsigned n = graph.layers.size(), checked = 0, feasible = 0;
  for (unsigned trial = 0; trial != 300; ++trial) {
    std::vector<unsigned> placement(n);
    // Mostly the previous layer's class: stages of a few layers.
    for (unsigned l = 0; l != n; ++l)
      placement[l] = l && rng() % 7 < 5 ? placement[l - 1] : rng() % 2;
    std::vector<LayerRun> runs;
    for (unsigned begin = 0; begin != n;) {
      // Up to 3 layers of the first one's class.
      unsigned end = begin + 1, length = 1 + rng() % 3;
      while (end != n && end - begin < length &&
             placement[end] == placement[begin])
        ++end;
      if (rng() % 4 == 0)
        runs.push_back({placement[begin], begin, begin}); // empty
      runs.push_back({placement[begin], begin, end});
      begin = end;
    }
    for (double target : {1.0, 2e4, 1e5, 1e9}) {
      Evaluation full = model.evaluate(placement, target);
      Evaluation fast = model.evaluateRuns(runs, target);
      ASSERT_EQ(fast.stages.size(), full.stages.size());
      for (size_t s = 0; s != full.stages.size(); ++s) {
        EXPECT_EQ(fast.stages[s].deviceClass, full.stages[s].deviceClass);
        EXPECT_EQ(fast.stages[s].begin, full.stages[s].begin);
        EXPECT_EQ(fast.stages[s].end, full.stages[s].end);
        EXPECT_EQ(fast.stages[s].replicas, full.stages[s].replicas);
        EXPECT_EQ(fast.stages[s].seconds, full.stages[s].seconds);
      }
      EXPECT_EQ(fast.boundarySeconds, full.boundarySeconds);
      EXPECT_EQ(fast.throughput, full.throughput);
      EXPECT_EQ(fast.pricePerHour, full.pricePerHour);
      EXPECT_EQ(fast.costPerMillionSamples, full.costPerMillionSamples);
      EXPECT_EQ(fast.feasible, full.feasible) << full.infeasibleReason;
      EXPECT_TRUE(fast.classOfLayer.empty());
      EXPECT_TRUE(fast.infeasibleReason.empty());
      ++checked;
      feasible += full.feasible;
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(feasible, 0u);
  EXPECT_LT(feasible, checked);
}

TEST(CostModel, ClassCountsAreShared) {
  ClusterSpec spec = twoClassCluster();
  spec.classes[0].count = 3;
  LayerGraph graph;
  graph.mode = Mode::Inference;
  graph.layers = {dense("a", 2e6, 0, {}), dense("b", 2e6, 0, {0}),
                  dense("c", 2e6, 0, {1})};
  CostModel model(graph, spec, simpleOptions());
  // Each CPU stage needs 2 replicas for 300000 samples/s: 4 > 3 CPUs.
  Evaluation plan = model.evaluate({0, 1, 0}, 300000);
  EXPECT_EQ(plan.stages[0].replicas, 2u);
  EXPECT_EQ(plan.stages[2].replicas, 2u);
  EXPECT_FALSE(plan.feasible);
  EXPECT_NE(plan.infeasibleReason.find("need 4 x cpu"), std::string::npos)
      << plan.infeasibleReason;
}

TEST(CostModel, ProfileDatabaseOverridesRoofline) {
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  graph.mode = Mode::Inference;
  graph.layers = {dense("fc", 2e6, 0, {}), dense("fc2", 2e6, 0, {0})};
  graph.layers[1].signature = "hps.gemm:1024x2048";
  ProfileDatabase db;
  db.record("fc", "gpu", 50, 1e-3);                  // by name, at batch 50
  db.record("hps.gemm:1024x2048", "cpu", 100, 7e-3); // by signature
  CostModel model(graph, spec, simpleOptions(), &db);
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(0, 1), 2e-3); // scaled to 100
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(1, 0), 7e-3);
  EXPECT_DOUBLE_EQ(model.layerWorkSeconds(0, 0), 2e8 / 5e11); // roofline

  // JSON round trip through a file.
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("profiles", "json", path));
  ASSERT_FALSE(!!db.save(path));
  llvm::Expected<ProfileDatabase> loaded = ProfileDatabase::load(path);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(!!loaded) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->size(), 2u);
  EXPECT_DOUBLE_EQ(*loaded->lookup(graph.layers[0], "gpu", 100), 2e-3);
  EXPECT_FALSE(loaded->lookup(graph.layers[0], "cpu", 100).has_value());

  llvm::Expected<ProfileDatabase> bad = ProfileDatabase::parse(
      R"({"version": 1, "entries": [{"key": "x"}]})", "bad.json");
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("bad.json: entry 0"),
            std::string::npos);

  // Times and batches that scaled to a plan's batch would not stay finite.
  for (const char *entry :
       {R"({"key": "l0", "device_class": "cpu", "batch_size": 256,
            "seconds_per_batch": 1e308})",
        R"({"key": "l0", "device_class": "cpu", "batch_size": 1e-300,
            "seconds_per_batch": 0.001})",
        R"({"key": "l0", "device_class": "cpu", "batch_size": 2.5,
            "seconds_per_batch": 0.001})"}) {
    llvm::Expected<ProfileDatabase> extreme = ProfileDatabase::parse(
        std::string(R"({"version": 1, "entries": [)") + entry + "]}",
        "extreme.json");
    ASSERT_FALSE(!!extreme) << entry;
    EXPECT_NE(llvm::toString(extreme.takeError())
                  .find("extreme.json: entry 0 ('l0' on cpu) needs a "
                        "batch_size that is a whole number from 1 to 1e9"),
              std::string::npos)
        << entry;
  }

  // The field at fault is named; misspelt fields and two times for one
  // layer and class are refused (the roofline priced the plan unseen).
  const std::pair<const char *, const char *> mistakes[] = {
      {R"({"version": 1, "entries": [{"key": "l0", "device_class": "cpu",
           "batch_size": "64", "seconds_per_batch": 0.1}]})",
       "m.json: entry 0: 'batch_size' must be a number"},
      {R"({"version": 1, "entries": [{"key": "l0", "device_class": "cpu",
           "batch_size": 64}]})",
       "m.json: entry 0: 'seconds_per_batch' is missing; give a number"},
      {R"({"version": 1, "entires": []})",
       "m.json: unknown field 'entires' (a database holds version and "
       "entries)"},
      {R"({"version": 1, "entries": [{"key": "l0", "device_class": "cpu",
           "batch_size": 64, "seconds_per_batch": 0.1, "second": 1}]})",
       "m.json: entry 0: unknown field 'second'"},
      {R"({"version": 1, "entries": [
           {"key": "l0", "device_class": "cpu", "batch_size": 64,
            "seconds_per_batch": 0.1},
           {"key": "l0", "device_class": "cpu", "batch_size": 64,
            "seconds_per_batch": 0.2}]})",
       "m.json: entry 1 ('l0' on cpu) repeats an earlier entry's layer and "
       "class with another time"}};
  for (auto [text, message] : mistakes) {
    llvm::Expected<ProfileDatabase> wrong =
        ProfileDatabase::parse(text, "m.json");
    ASSERT_FALSE(!!wrong) << text;
    EXPECT_NE(llvm::toString(wrong.takeError()).find(message),
              std::string::npos)
        << message;
  }
  llvm::Expected<ProfileDatabase> twice = ProfileDatabase::parse(
      R"({"version": 1, "entries": [
           {"key": "l0", "device_class": "cpu", "batch_size": 64,
            "seconds_per_batch": 0.1},
           {"key": "l0", "device_class": "cpu", "batch_size": 64,
            "seconds_per_batch": 0.1}]})",
      "merged.json");
  ASSERT_TRUE(!!twice) << llvm::toString(twice.takeError());
  EXPECT_EQ(twice->size(), 1u);
}

TEST(LayerGraph, VerifyRejectsBadGraphs) {
  LayerGraph graph;
  EXPECT_TRUE(!!graph.verify()); // empty
  graph.layers = {dense("a", 1, 0, {}), dense("b", 1, 0, {1})};
  llvm::Error error = graph.verify();
  ASSERT_TRUE(!!error);
  EXPECT_NE(llvm::toString(std::move(error)).find("'b'"), std::string::npos);
  graph.layers[1].inputs = {0};
  graph.layers[1].forwardFlopsPerSample = -1;
  EXPECT_TRUE(!!graph.verify());
  graph.layers[1].forwardFlopsPerSample = 1;
  EXPECT_FALSE(!!graph.verify());
  EXPECT_EQ(parseLayerKind("embedding"), LayerKind::EmbeddingLookup);
  EXPECT_EQ(toString(LayerKind::DenseCompute), "dense");
}

// Calibration (heterps/Cost/Calibration.h): a dense and an elementwise layer
// on the cpu class, every efficiency 0.25, against measured times.
class Calibration : public ::testing::Test {
protected:
  ClusterSpec spec = twoClassCluster();
  LayerGraph graph;
  CostOptions options;
  ProfileDatabase db;
  void SetUp() override {
    graph.mode = Mode::Inference;
    graph.layers = {dense("fc", 2e6, 0, {}), elementwise("relu", {0})};
    options = simpleOptions();
    for (auto &perDevice : options.efficiency)
      for (Efficiency &eff : perDevice)
        eff = {0.25, 0.25};
  }
  /// The uncalibrated roofline of `layer` on the cpu class.
  double roofline(unsigned layer) const {
    return CostModel(graph, spec, options).layerWorkSeconds(layer, 0);
  }
};

TEST_F(Calibration, MeasuredTimesBecomeTheRoofline) {
  const double fc = roofline(0), relu = roofline(1);
  // fc ran twice as fast as the roofline, relu at half its speed.
  db.record("fc", "cpu", 100, fc / 2);
  db.record("relu", "cpu", 100, relu * 2);
  auto calibration = calibrate(graph, spec, "cpu", db, options);
  ASSERT_TRUE(bool(calibration)) << toString(calibration.takeError());
  ASSERT_EQ(calibration->kinds.size(), 2u);
  EXPECT_DOUBLE_EQ(
      options.get(DeviceKind::CPU, LayerKind::DenseCompute).compute, 0.5);
  EXPECT_DOUBLE_EQ(options.get(DeviceKind::CPU, LayerKind::Elementwise).memory,
                   0.125);
  // GPUs keep theirs.
  EXPECT_DOUBLE_EQ(
      options.get(DeviceKind::GPU, LayerKind::DenseCompute).compute, 0.25);
  // The calibrated roofline predicts what was measured, without the
  // database: on a graph never profiled, the same layers cost the same.
  EXPECT_DOUBLE_EQ(roofline(0), fc / 2);
  EXPECT_DOUBLE_EQ(roofline(1), relu * 2);
  EXPECT_NE(calibration->describe().find("dense x2.00"), std::string::npos)
      << calibration->describe();
}

TEST_F(Calibration, FileRoundTrips) {
  db.record("fc", "cpu", 100, roofline(0) / 2);
  CostOptions fitted = options;
  auto calibration = calibrate(graph, spec, "cpu", db, fitted);
  ASSERT_TRUE(bool(calibration));
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("calib", "json", path));
  std::ofstream(std::string(path)) << calibrationJson(*calibration, fitted);
  auto loaded = loadCalibration(path, options);
  ASSERT_TRUE(bool(loaded)) << toString(loaded.takeError());
  EXPECT_EQ(loaded->deviceClass, "cpu");
  EXPECT_DOUBLE_EQ(
      options.get(DeviceKind::CPU, LayerKind::DenseCompute).compute, 0.5);
  EXPECT_DOUBLE_EQ(
      options.get(DeviceKind::GPU, LayerKind::DenseCompute).compute, 0.25);
  std::ofstream(std::string(path)) << R"({"device_kind": "cpu", "efficiency":
      {"dense": {"compute": 2, "memory": 0.5}}})";
  auto bad = loadCalibration(path, options);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(toString(bad.takeError())
                .find("efficiency.dense: compute and memory must be numbers "
                      "in (0, 1]"),
            std::string::npos);
  llvm::sys::fs::remove(path);
}

TEST_F(Calibration, EfficienciesStopAtPeak) {
  db.record("fc", "cpu", 100, roofline(0) / 10);
  auto calibration = calibrate(graph, spec, "cpu", db, options);
  ASSERT_TRUE(bool(calibration));
  EXPECT_TRUE(calibration->kinds[0].clamped);
  EXPECT_DOUBLE_EQ(
      options.get(DeviceKind::CPU, LayerKind::DenseCompute).compute, 1.0);
}

TEST_F(Calibration, NamesWhatIsMissing) {
  auto missing = calibrate(graph, spec, "tpu", db, options);
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(toString(missing.takeError()).find("no device class 'tpu'"),
            std::string::npos);
  db.record("other", "cpu", 100, 1e-3);
  auto unmeasured = calibrate(graph, spec, "cpu", db, options);
  ASSERT_FALSE(bool(unmeasured));
  EXPECT_NE(toString(unmeasured.takeError()).find("no layer of the profiled"),
            std::string::npos);
}

} // namespace
