//===- TrainingEndToEndTest.cpp - Trainer, executor and a real stage ------===//
//
// A training bundle whose one stage (three replicas) is the hand-written
// logistic regression of TrainingStageFixture.cpp, trained by the Trainer on
// synthetic data with a known ground truth: it learns, it is reproducible to
// the bit whatever the replicas' interleaving and the shard count, and a run
// stopped and resumed from a checkpoint ends with the parameters of an
// uninterrupted one.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CtrDataGen.h"
#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/Tensor.h"
#include "heterps/Runtime/Trainer.h"
#include "heterps/Runtime/TrainingServer.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>

using namespace heterps::rt;
using namespace heterps::rt::train;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int64_t kBuckets = 256; // as in TrainingStageFixture.cpp

json channel(const char *name, const char *dtype, json shape, int from,
             int to) {
  return json{{"name", name},
              {"dtype", dtype},
              {"shape", shape},
              {"from", from},
              {"to", to}};
}

/// `asGpuStage`: the executor takes the fixture (host code) for a GPU
/// stage's build, so it offers the GPU callbacks.
json stageManifest(int replicas, double learningRate = 0.1,
                   bool asGpuStage = false) {
  auto input = [](const char *name, const char *dtype, json shape) {
    return json{{"name", name},
                {"dtype", dtype},
                {"shape", shape},
                {"batched", true},
                {"channels", {name}}};
  };
  auto output = [](const char *name, json shape) {
    return json{{"name", name},
                {"dtype", "f32"},
                {"shape", shape},
                {"batched", true},
                {"channel", name}};
  };
  return json{
      {"format", "heterps-bundle"},
      {"version", 1},
      {"batch", 8},
      {"channels",
       {channel("dense", "f32", {8, 13}, -1, 0),
        channel("ids", "i64", {8, 26}, -1, 0),
        channel("label", "f32", {8, 1}, -1, 0),
        channel("prob", "f32", {8, 1}, 0, -1),
        channel("loss", "f32", {8}, 0, -1)}},
      {"stages",
       {{{"name", "stage_0"},
         {"device", asGpuStage ? "gpu.test" : "cpu.test"},
         {"kind", asGpuStage ? "gpu" : "cpu"},
         {"replicas", replicas},
         {"inputs", {"dense", "ids", "label"}},
         {"outputs", {"prob", "loss"}},
         {"tables", json::array()},
         {"libraries", asGpuStage
                           ? json{{"cpu", "stage_0.so"}, {"gpu", "stage_0.so"}}
                           : json{{"cpu", "stage_0.so"}}}}}},
      {"inputs",
       {input("dense", "f32", {8, 13}), input("ids", "i64", {8, 26}),
        input("label", "f32", {8, 1})}},
      {"outputs", {output("prob", {8, 1}), output("loss", {8})}},
      {"tables", json::array()},
      {"weights", {{"file", "weights.bin"}, {"bytes", 128}}},
      {"training",
       {{"loss", "bce"},
        {"label", "label"},
        {"prediction", "prob"},
        {"loss_output", "loss"},
        {"optimizer",
         {{"kind", "adagrad"},
          {"learning_rate", learningRate},
          {"epsilon", 1e-8},
          {"initial_accumulator", 0.1}}},
        {"parameters",
         {{{"name", "dense/w"},
           {"dtype", "f32"},
           {"shape", {13}},
           {"offset", 0}},
          {{"name", "bias"},
           {"dtype", "f32"},
           {"shape", {1}},
           {"offset", 64}}}},
        {"tables", {{{"name", "emb"}, {"rows", 26 * kBuckets}, {"dim", 1}}}}}}};
}

class TrainingEndToEnd : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // One directory for the suite, whose data every test trains on.
    scratch.emplace("heterps-train-e2e-" + processId());
    data::CtrGenOptions options;
    options.vocabSizes.assign(data::kNumSparse, 60);
    options.modelSeed = 11;
    trainTruth = data::generateCtrData(80000, 1, path("train.tsv"), options);
    evalTruth = data::generateCtrData(5000, 2, path("eval.tsv"), options);
  }
  static void TearDownTestSuite() { scratch.reset(); }
  static std::string path(const std::string &name) { return *scratch / name; }

  /// A bundle directory with `replicas` replicas of the fixture stage.
  std::unique_ptr<Bundle> makeBundle(const std::string &name, int replicas,
                                     double learningRate = 0.1,
                                     bool asGpuStage = false) {
    std::string directory = path(name);
    fs::create_directories(directory);
    std::ofstream(directory + "/manifest.json")
        << stageManifest(replicas, learningRate, asGpuStage);
    std::string weights(128, '\0');
    std::ofstream(directory + "/weights.bin", std::ios::binary) << weights;
    fs::copy_file(HETERPS_TEST_TRAINING_STAGE, directory + "/stage_0.so",
                  fs::copy_options::overwrite_existing);
    return std::make_unique<Bundle>(directory);
  }

  TrainerOptions options(int64_t steps) {
    TrainerOptions o;
    o.data = path("train.tsv");
    o.batch = 64;
    o.steps = steps;
    o.logEvery = 1000;
    return o;
  }

  TrainSummary train(const Bundle &bundle, const TrainerOptions &o,
                     std::string *log = nullptr) {
    std::ostringstream stream;
    TrainSummary summary = Trainer(bundle, o, stream).run();
    if (log)
      *log = stream.str();
    return summary;
  }

  static std::optional<ScratchDirectory> scratch;
  static data::CtrGenResult trainTruth, evalTruth;
};

std::optional<ScratchDirectory> TrainingEndToEnd::scratch;
data::CtrGenResult TrainingEndToEnd::trainTruth, TrainingEndToEnd::evalTruth;

/// The bytes of every file of a --dump-parameters directory.
std::map<std::string, std::string> dumpContents(const std::string &directory) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry &entry : fs::directory_iterator(directory))
    files[entry.path().filename().string()] = readText(entry.path().string());
  return files;
}

TEST_F(TrainingEndToEnd, LearnsCloseToTheGroundTruth) {
  auto bundle = makeBundle("learn", 3);
  TrainerOptions o = options(2500); // 2 epochs
  o.eval = path("eval.tsv");
  o.hashBuckets = kBuckets;
  std::string log;
  TrainSummary summary = train(*bundle, o, &log);
  ASSERT_TRUE(summary.evaluated) << log;
  EXPECT_EQ(summary.evalSamples, 5000);
  // A logistic regression misses the hidden model's small interactions, a
  // few hash collisions and what 2 epochs of 80k rows cannot pin down (about
  // 0.018 in AUC and 0.022 in log-loss measured).
  EXPECT_GT(summary.evalAuc, evalTruth.groundTruthAuc - 0.03)
      << log << "ground truth " << evalTruth.groundTruthAuc;
  EXPECT_LT(summary.evalLogLoss, evalTruth.groundTruthLogLoss + 0.035)
      << log << "ground truth " << evalTruth.groundTruthLogLoss;
  EXPECT_GT(summary.trainAuc, 0.6) << log;
}

TEST_F(TrainingEndToEnd, IsReproducibleAndResumable) {
  auto bundle = makeBundle("resume", 3);
  TrainerOptions whole = options(40);
  whole.dumpParameters = path("whole-dump");
  train(*bundle, whole);

  // Same flags, other shard count, one frame at a time: the same bits.
  TrainerOptions again = whole;
  again.dumpParameters = path("again-dump");
  again.psShards = 4;
  again.framesInFlight = 1;
  train(*bundle, again);
  EXPECT_EQ(dumpContents(whole.dumpParameters),
            dumpContents(again.dumpParameters));

  // Stopped after 17 steps (checkpoints at 10 and 17), resumed to 40.
  TrainerOptions first = options(17);
  first.checkpointDir = path("checkpoints");
  first.checkpointEvery = 10;
  train(*bundle, first);
  TrainerOptions second = options(40);
  second.checkpointDir = first.checkpointDir;
  second.checkpointEvery = 10;
  second.resume = true;
  second.dumpParameters = path("resumed-dump");
  std::string log;
  TrainSummary summary = train(*bundle, second, &log);
  EXPECT_EQ(summary.firstStep, 17) << log;
  std::map<std::string, std::string> expected =
      dumpContents(whole.dumpParameters);
  EXPECT_EQ(dumpContents(second.dumpParameters), expected);
  EXPECT_EQ(expected.size(), 4u); // dense_w, bias, emb.ids, emb.rows
  HostTensor ids = readTensorFile(path("whole-dump/emb.ids.npy"));
  EXPECT_GT(ids.shape[0], 26); // the rows training touched
}

TEST_F(TrainingEndToEnd, AShortLastStepIsAveragedOverItsOwnMicroBatches) {
  // --samples with a last step of 2 micro-batches (16 samples) trains as
  // 5 steps of 64 followed, after a resume, by one step of --batch 16.
  auto bundle = makeBundle("short", 3);
  TrainerOptions whole = options(0);
  whole.samples = 5 * 64 + 16;
  whole.dumpParameters = path("short-dump");
  TrainSummary summary = train(*bundle, whole);
  EXPECT_EQ(summary.steps, 6);
  EXPECT_EQ(summary.samples, 336);

  TrainerOptions first = options(5);
  first.checkpointDir = path("short-checkpoints");
  train(*bundle, first);
  TrainerOptions second = options(6);
  second.batch = 16;
  second.checkpointDir = first.checkpointDir;
  second.resume = true;
  second.dumpParameters = path("short-resumed-dump");
  TrainSummary resumed = train(*bundle, second);
  EXPECT_EQ(resumed.position, summary.position);
  EXPECT_EQ(dumpContents(second.dumpParameters),
            dumpContents(whole.dumpParameters));
}

TEST_F(TrainingEndToEnd, LearningRateScaleTrainsAsTheScaledRate) {
  // Adagrad at rate 0.1 scaled by 2 is Adagrad at rate 0.2, to the bit.
  auto scaled = makeBundle("scaled", 2, 0.1);
  auto doubled = makeBundle("doubled", 2, 0.2);
  TrainerOptions o = options(12);
  o.hashBuckets = kBuckets;
  o.learningRate.scale = 2;
  o.dumpParameters = path("scaled-dump");
  train(*scaled, o);
  TrainerOptions reference = options(12);
  reference.hashBuckets = kBuckets;
  reference.dumpParameters = path("doubled-dump");
  train(*doubled, reference);
  EXPECT_EQ(dumpContents(o.dumpParameters),
            dumpContents(reference.dumpParameters));

  // A warm-up that jumps from 1 to 2 after step 5 trains as 5 steps at
  // scale 1 and, resumed (checkpoints keep no scale), 7 at scale 2.
  TrainerOptions warm = o;
  warm.dumpParameters = path("warm-dump");
  parseLearningRateWarmup("1:5:6", warm.learningRate);
  train(*scaled, warm);
  TrainerOptions before = options(5);
  before.hashBuckets = kBuckets;
  before.checkpointDir = path("warm-checkpoints");
  train(*scaled, before);
  TrainerOptions after = o;
  after.checkpointDir = before.checkpointDir;
  after.resume = true;
  after.dumpParameters = path("warm-resumed-dump");
  train(*scaled, after);
  EXPECT_EQ(dumpContents(warm.dumpParameters),
            dumpContents(after.dumpParameters));
  EXPECT_NE(dumpContents(warm.dumpParameters), dumpContents(o.dumpParameters));
}

TEST_F(TrainingEndToEnd, ReportsAnIdOutsideItsTable) {
  auto bundle = makeBundle("ids", 2);
  TrainerOptions o = options(5);
  o.hashBuckets = 4 * kBuckets; // field 25's ids run past the table
  try {
    train(*bundle, o);
    ADD_FAILURE() << "an id outside the table was accepted";
  } catch (const Error &error) {
    std::string text = error.what();
    EXPECT_NE(text.find("stage_0 (cpu.test)"), std::string::npos) << text;
    EXPECT_NE(text.find("sparse table 'emb' has 6656 rows; id "),
              std::string::npos)
        << text;
  }
}

TEST_F(TrainingEndToEnd, AFailedStepKeepsTheLastFinishedOne) {
  // Three steps of ids inside the table, then one (in field 24) outside it.
  std::ofstream data(path("bad.tsv"));
  for (int row = 0; row < 4 * 64; ++row) {
    data << row % 2;
    for (int i = 0; i < data::kNumDense; ++i)
      data << "\t" << i;
    for (int i = 0; i < data::kNumSparse; ++i)
      data << "\t" << std::hex << (row >= 3 * 64 && i == 24 ? 600 : i)
           << std::dec;
    data << "\n";
  }
  data.close();
  auto bundle = makeBundle("failure", 2);
  TrainerOptions o = options(10);
  o.data = path("bad.tsv");
  o.hashBuckets = 1024;
  o.checkpointDir = path("failure-checkpoints");
  std::string log;
  EXPECT_THROW(train(*bundle, o, &log), Error);
  TrainerState state = verifyCheckpoint(o.checkpointDir + "/step-3");
  EXPECT_EQ(state.step, 3);
  EXPECT_EQ(data::DataPosition::parse(
                state.position.substr(0, state.position.rfind(" head=")))
                .lineNumber,
            3u * 64);
}

TEST_F(TrainingEndToEnd, InferenceRunsRefuseTrainingStages) {
  auto bundle = makeBundle("inference", 1);
  try {
    Executor executor(*bundle, {});
    ADD_FAILURE() << "a training stage started without a server";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("needs a training run"),
              std::string::npos)
        << error.what();
  }
}

/// A call whose first micro-batch fails feeds no more than were in flight
/// by then, and the executor takes the next call with all of its frames.
TEST_F(TrainingEndToEnd, AFailedMicroBatchStopsFeedingItsCall) {
  auto bundle = makeBundle("stops", 1);
  TrainingServer server(*bundle, {});
  // The server's own pull, counted, failing micro-batch 0 (callbacks take
  // no capture: the count and the pull live in statics).
  static std::atomic<int> pulls;
  static decltype(StageServer::pullRows) serverPull;
  StageServer wrapped = *server.stageServer();
  serverPull = wrapped.pullRows;
  wrapped.pullRows = [](void *context, const char *table, const int64_t *ids,
                        size_t count, float *rows, char *error,
                        size_t errorBytes) {
    ++pulls;
    if (currentMicroBatch().microBatch == 0) {
      std::snprintf(error, errorBytes, "the test fails micro-batch 0");
      return 1;
    }
    return serverPull(context, table, ids, count, rows, error, errorBytes);
  };
  ExecutorOptions options;
  options.server = &wrapped;
  Executor executor(*bundle, options);
  const int64_t microBatches = 64, samples = 8 * microBatches;
  std::vector<HostTensor> inputs = {HostTensor(DType::F32, {samples, 13}),
                                    HostTensor(DType::I64, {samples, 26}),
                                    HostTensor(DType::F32, {samples, 1})};
  for (int call = 0; call < 3; ++call) {
    pulls = 0;
    try {
      executor.run(inputs);
      ADD_FAILURE() << "a call with a failed micro-batch succeeded";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find("the test fails micro-batch 0"),
                std::string::npos)
          << error.what();
    }
    EXPECT_LE(pulls.load(), int(executor.framesInFlight()));
  }
}

/// By default every stage replica can hold a micro-batch, and one more is
/// being fed: a step of as many keeps them all working.
TEST_F(TrainingEndToEnd, FramesInFlightKeepEveryReplicaWorking) {
  for (int replicas : {1, 3, 6}) {
    auto bundle = makeBundle("frames-" + std::to_string(replicas), replicas);
    TrainingServer server(*bundle, {});
    ExecutorOptions options;
    options.server = server.stageServer();
    EXPECT_EQ(Executor(*bundle, options).framesInFlight(),
              size_t(std::max(4, replicas + 1)));
    options.framesInFlight = 2;
    EXPECT_EQ(Executor(*bundle, options).framesInFlight(), 2u);
  }
}

/// Stage ABI 5 through the executor: three replicas of a stage that reads
/// its dense parameters through parameterOnDevice and pushes them through
/// pushDenseFromDevice (into a host dense cache: what a GPU stage does with
/// the GPU's) train, micro-batches pushing concurrently, to the bits of the
/// same stage going through the host. A CPU stage is not offered them.
TEST_F(TrainingEndToEnd, DenseParametersInTheCacheTrainAsThroughTheHost) {
  auto bundle = makeBundle("dense-cache", 3, 0.1, /*asGpuStage=*/true);
  TrainingServerOptions options;
  options.shards = 2;
  TrainingServer host(*bundle, options);
  options.denseCache = DenseCacheKind::Host;
  TrainingServer cached(*bundle, options);
  // What the server offers a GPU stage, here over its host cache.
  StageServer offered = *cached.stageServer();
  offered.parameterOnDevice = [](void *context, const char *name,
                                 const float **values, char *, size_t) {
    *values = static_cast<TrainingServer *>(context)->parameterInCache(name);
    return 0;
  };
  offered.pushDenseFromDevice = [](void *context, const char *name,
                                   const float *gradient, size_t count, char *,
                                   size_t) {
    static_cast<TrainingServer *>(context)->pushDenseInCache(name, gradient,
                                                             count);
    return 0;
  };
  ExecutorOptions hostOptions, cachedOptions;
  hostOptions.server = host.stageServer();
  cachedOptions.server = &offered;
  Executor hostExecutor(*bundle, hostOptions);
  Executor cachedExecutor(*bundle, cachedOptions);
  EXPECT_TRUE(cached.denseInCache("dense/w") && cached.denseInCache("bias"));
  {
    auto cpuBundle = makeBundle("dense-cache-cpu", 1);
    TrainingServer other(*cpuBundle, options);
    StageServer offeredToCpu = *other.stageServer();
    offeredToCpu.parameterOnDevice = offered.parameterOnDevice;
    offeredToCpu.pushDenseFromDevice = offered.pushDenseFromDevice;
    ExecutorOptions cpuOptions;
    cpuOptions.server = &offeredToCpu;
    Executor cpuExecutor(*cpuBundle, cpuOptions);
    EXPECT_FALSE(other.denseInCache("dense/w"));
  }

  std::mt19937 random(5);
  std::uniform_int_distribution<int64_t> id(0, 255);
  std::normal_distribution<float> value;
  for (int step = 0; step < 12; ++step) {
    // Six micro-batches of 8 samples a step, over the three replicas.
    const int64_t samples = 48;
    std::vector<HostTensor> inputs = {HostTensor(DType::F32, {samples, 13}),
                                      HostTensor(DType::I64, {samples, 26}),
                                      HostTensor(DType::F32, {samples, 1})};
    auto *dense = reinterpret_cast<float *>(inputs[0].data.data());
    auto *ids = reinterpret_cast<int64_t *>(inputs[1].data.data());
    auto *labels = reinterpret_cast<float *>(inputs[2].data.data());
    for (int64_t i = 0; i < samples * 13; ++i)
      dense[i] = value(random);
    for (int64_t i = 0; i < samples * 26; ++i)
      ids[i] = id(random);
    for (int64_t i = 0; i < samples; ++i)
      labels[i] = float(i % 3 == 0);
    hostExecutor.run(inputs);
    host.finishStep(6);
    cachedExecutor.run(inputs);
    cached.finishStep(6);
  }
  for (const auto &[name, size] :
       {std::pair<std::string, size_t>{"dense/w", 13}, {"bias", 1}}) {
    const float *inCache = cached.parameterInCache(name);
    const float *live = host.lookupParameter(name);
    EXPECT_EQ(std::vector<float>(inCache, inCache + size),
              std::vector<float>(live, live + size))
        << name;
  }
  for (uint64_t key = 0; key < 26 * 256; key += 97)
    EXPECT_EQ(cached.parameterStore().readRow("emb", key),
              host.parameterStore().readRow("emb", key))
        << "row " << key;
}

} // namespace
