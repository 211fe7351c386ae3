//===- TrainerNpyTest.cpp - The training loop on .npy arrays --------------===//
//
// Trainer with --data-input / --eval-input on bundles without stages whose
// outputs pass inputs through: the prediction is an input array and so is
// the per-sample loss, so the reported loss and accuracy (or AUC) are known
// exactly, and a step's loss says which samples it ran.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/Trainer.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

using namespace heterps::rt;
using namespace heterps::rt::train;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// A scratch directory of the running test.
struct Scratch : ScratchDirectory {
  Scratch() : ScratchDirectory("heterps-trainer-npy-test", currentTestName()) {}
};

/// A bundle of batch 4 without stages: inputs "x" (the prediction, f32
/// [4, 3]), "l" (the per-sample loss, f32 [4]) and the label; outputs
/// "pred" = x and "loss" = l. `loss` picks the label: i64 [4] class ids
/// (softmax_ce), f32 [4, 3] (mse) or, with x f32 [4], f32 [4] (bce).
void writeBundle(const std::string &directory, const std::string &loss) {
  auto tensor = [](const char *name, const char *dtype, json shape) {
    return json{{"name", name},
                {"dtype", dtype},
                {"shape", shape},
                {"batched", true},
                {"channels", json::array()}};
  };
  json x = loss == "bce" ? json{4} : json{4, 3};
  json label = loss == "softmax_ce" ? tensor("label", "i64", {4})
                                    : tensor("label", "f32", x);
  json pred = tensor("pred", "f32", x);
  pred.erase("channels");
  pred["input"] = 0;
  json lossOut = tensor("loss", "f32", {4});
  lossOut.erase("channels");
  lossOut["input"] = 1;
  json manifest{
      {"format", "heterps-bundle"},
      {"version", 1},
      {"batch", 4},
      {"channels", json::array()},
      {"stages", json::array()},
      {"inputs", {tensor("x", "f32", x), tensor("l", "f32", {4}), label}},
      {"outputs", {pred, lossOut}},
      {"tables", json::array()},
      {"weights", {{"file", "weights.bin"}, {"bytes", 16}}},
      {"training",
       {{"loss", loss},
        {"label", "label"},
        {"prediction", "pred"},
        {"loss_output", "loss"},
        {"optimizer",
         {{"kind", "sgd"},
          {"learning_rate", 0.1},
          {"momentum", 0},
          {"beta1", 0.9},
          {"beta2", 0.999},
          {"epsilon", 1e-8},
          {"initial_accumulator", 0.1}}},
        {"parameters",
         {{{"name", "w"}, {"dtype", "f32"}, {"shape", {4}}, {"offset", 0}}}},
        {"tables", json::array()}}}};
  fs::create_directories(directory);
  std::ofstream(directory + "/manifest.json") << manifest.dump(2);
  std::ofstream(directory + "/weights.bin", std::ios::binary)
      << std::string(16, '\0');
}

template <typename T>
void writeArray(const std::string &path, DType dtype, Shape shape,
                const std::vector<T> &values) {
  HostTensor tensor(dtype, std::move(shape));
  ASSERT_EQ(tensor.bytes(), values.size() * sizeof(T));
  std::memcpy(tensor.data.data(), values.data(), tensor.bytes());
  writeNpy(path, tensor);
}

/// Softmax_ce data of `rows` samples: sample i predicts class i % 3 and has
/// loss i; its label is that class for `correct(i)`, else the next class.
void writeClassification(const Scratch &scratch, const std::string &prefix,
                         int64_t rows, bool (*correct)(int64_t)) {
  const size_t n = static_cast<size_t>(rows);
  std::vector<float> x(n * 3, 0.0f), l(n);
  std::vector<int64_t> label(n);
  for (int64_t i = 0; i < rows; ++i) {
    x[size_t(i * 3 + i % 3)] = 1.0f;
    l[size_t(i)] = float(i);
    label[size_t(i)] = correct(i) ? i % 3 : (i + 1) % 3;
  }
  writeArray(scratch / (prefix + "x.npy"), DType::F32, {rows, 3}, x);
  writeArray(scratch / (prefix + "l.npy"), DType::F32, {rows}, l);
  writeArray(scratch / (prefix + "label.npy"), DType::I64, {rows}, label);
}

std::vector<data::NpyInput> arrays(const Scratch &scratch,
                                   const std::string &prefix) {
  return {{"x", scratch / (prefix + "x.npy")},
          {"l", scratch / (prefix + "l.npy")},
          {"label", scratch / (prefix + "label.npy")}};
}

struct TrainRun {
  TrainSummary summary;
  std::string log;
};

TrainRun train(const Bundle &bundle, const TrainerOptions &options) {
  std::ostringstream log;
  TrainRun run;
  run.summary = Trainer(bundle, options, log).run();
  run.log = log.str();
  return run;
}

std::string errorOf(const Bundle &bundle, const TrainerOptions &options) {
  try {
    train(bundle, options);
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

/// The "step k/N  loss L" lines of a log, k -> L.
std::map<int, std::string> stepLosses(const std::string &log) {
  std::map<int, std::string> losses;
  std::regex line("step (\\d+)/\\d+  loss (\\S+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line);
       it != std::sregex_iterator(); ++it)
    losses[std::stoi((*it)[1])] = (*it)[2];
  return losses;
}

class TrainerNpy : public ::testing::Test {
protected:
  void SetUp() override {
    writeBundle(scratch / "b", "softmax_ce");
    bundle = std::make_unique<Bundle>(scratch / "b");
    // 10 samples, 6 labelled as predicted; 5 eval samples, 3 of them.
    writeClassification(scratch, "train-", 10,
                        [](int64_t i) { return i % 5 < 3; });
    writeClassification(scratch, "eval-", 5,
                        [](int64_t i) { return i != 1 && i != 3; });
  }
  TrainerOptions options(int64_t steps) {
    TrainerOptions o;
    o.dataInputs = arrays(scratch, "train-");
    o.batch = 4;
    o.steps = steps;
    o.logEvery = 1;
    return o;
  }
  Scratch scratch;
  std::unique_ptr<Bundle> bundle;
};

TEST_F(TrainerNpy, ReportsLossAndAccuracy) {
  TrainerOptions o = options(5); // 20 samples: two epochs exactly
  o.logEvery = 5;
  o.evalInputs = arrays(scratch, "eval-");
  TrainRun run = train(*bundle, o);
  EXPECT_EQ(run.summary.steps, 5);
  // Twice over losses 0..9 (mean 4.5), 6 of 10 correct.
  EXPECT_DOUBLE_EQ(run.summary.trainLoss, 4.5);
  EXPECT_DOUBLE_EQ(run.summary.trainAccuracy, 0.6);
  EXPECT_TRUE(std::isnan(run.summary.trainAuc));
  EXPECT_NE(run.log.find("step 5/5  loss 4.5000  accuracy 0.6000  "),
            std::string::npos)
      << run.log;
  EXPECT_NE(run.log.find("train loss 4.5000  accuracy 0.6000 (steps 1-5)"),
            std::string::npos)
      << run.log;
  // Evaluation: one pass, the last batch partial (4 + 1 samples).
  ASSERT_TRUE(run.summary.evaluated);
  EXPECT_EQ(run.summary.evalSamples, 5);
  EXPECT_DOUBLE_EQ(run.summary.evalLoss, 2.0);
  EXPECT_DOUBLE_EQ(run.summary.evalAccuracy, 0.6);
  EXPECT_NE(run.log.find("eval step 5/5  loss 2.0000  accuracy 0.6000  5 "
                         "samples"),
            std::string::npos)
      << run.log;
  EXPECT_EQ(run.log.find("auc"), std::string::npos) << run.log;
}

TEST_F(TrainerNpy, StepsGoThroughTheDataInOrder) {
  TrainRun run = train(*bundle, options(4));
  std::map<int, std::string> losses = stepLosses(run.log);
  // Samples 0-3, 4-7, 8 9 0 1, 2-5.
  EXPECT_EQ(losses[1], "1.5000");
  EXPECT_EQ(losses[2], "5.5000");
  EXPECT_EQ(losses[3], "4.5000");
  EXPECT_EQ(losses[4], "3.5000");
}

TEST_F(TrainerNpy, ResumesWhereAnUninterruptedRunIs) {
  TrainerOptions whole = options(9);
  whole.checkpointDir = scratch / "whole";
  whole.checkpointEvery = 3;
  TrainRun reference = train(*bundle, whole);

  TrainerOptions first = options(4);
  first.checkpointDir = scratch / "parts";
  first.checkpointEvery = 3;
  train(*bundle, first);
  TrainerOptions second = options(9);
  second.checkpointDir = first.checkpointDir;
  second.checkpointEvery = 3;
  second.resume = true;
  TrainRun resumed = train(*bundle, second);
  EXPECT_EQ(resumed.summary.firstStep, 4);
  EXPECT_NE(resumed.log.find("(step 4, data npy rows=10 row=6 epoch=1)"),
            std::string::npos)
      << resumed.log;

  // The resumed steps ran the samples the uninterrupted run ran.
  std::map<int, std::string> a = stepLosses(reference.log),
                             b = stepLosses(resumed.log);
  ASSERT_EQ(b.size(), 5u);
  for (auto [step, loss] : b)
    EXPECT_EQ(a[step], loss) << "step " << step;
  TrainerState x = verifyCheckpoint(whole.checkpointDir + "/step-9");
  TrainerState y = verifyCheckpoint(second.checkpointDir + "/step-9");
  EXPECT_EQ(x.position, "npy rows=10 row=6 epoch=3");
  EXPECT_EQ(x.position, y.position);
  EXPECT_EQ(x.samples, y.samples);
  EXPECT_EQ(readText(whole.checkpointDir + "/step-9/ps/dense.bin"),
            readText(second.checkpointDir + "/step-9/ps/dense.bin"));

  // Other data cannot continue these checkpoints.
  writeClassification(scratch, "more-", 12, [](int64_t) { return true; });
  TrainerOptions other = second;
  other.steps = 12;
  other.dataInputs = arrays(scratch, "more-");
  EXPECT_NE(errorOf(*bundle, other).find("is in arrays of 10 samples"),
            std::string::npos);
}

TEST_F(TrainerNpy, CriteoCheckpointsDoNotResumeOnArrays) {
  TrainerOptions o = options(2);
  o.checkpointDir = scratch / "ckpt";
  fs::create_directories(o.checkpointDir);
  // A checkpoint as a Criteo run writes it: same bundle, a line position.
  TrainerState state;
  state.step = 1;
  state.samples = 4;
  state.position = "offset=400 line=4 epoch=0";
  state.seed = 1;
  state.bundle = bundleIdentity(*bundle);
  state.batch = 4;
  writeCheckpoint(
      o.checkpointDir, state,
      [](const std::string &path) {
        fs::create_directories(path);
        std::ofstream(path + "/metadata") << "x";
      },
      2);
  EXPECT_EQ(verifyCheckpoint(o.checkpointDir + "/step-1").position,
            "offset=400 line=4 epoch=0");
  o.resume = true;
  std::string error = errorOf(*bundle, o);
  EXPECT_NE(error.find("cannot resume from " + o.checkpointDir + "/step-1"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("is not a position in .npy data"), std::string::npos)
      << error;
}

TEST_F(TrainerNpy, RefusesMixedOrMissingData) {
  TrainerOptions o = options(1);
  o.data = scratch / "train.tsv";
  EXPECT_NE(errorOf(*bundle, o)
                .find("--data (Criteo TSV) and --data-input "
                      "(.npy arrays) are mutually exclusive"),
            std::string::npos);
  o = options(1);
  o.dataInputs.clear();
  EXPECT_NE(errorOf(*bundle, o).find("no training data"), std::string::npos);
  o = options(1);
  o.eval = scratch / "eval.tsv";
  EXPECT_NE(errorOf(*bundle, o).find("--eval reads Criteo TSV"),
            std::string::npos);
  o = options(1);
  o.hashBuckets = 10;
  EXPECT_NE(errorOf(*bundle, o).find("--hash-buckets hashes"),
            std::string::npos);
  o = options(1);
  o.evalEvery = 1;
  EXPECT_NE(errorOf(*bundle, o).find("--eval-every needs"), std::string::npos);
  // Bad evaluation arrays fail before training, not after it.
  o = options(1);
  o.evalInputs = arrays(scratch, "eval-");
  o.evalInputs.pop_back();
  o.dumpParameters = scratch / "dump";
  EXPECT_NE(errorOf(*bundle, o)
                .find("--eval-input: no file for bundle input "
                      "'label' (i64 N)"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(scratch / "dump"));
}

TEST_F(TrainerNpy, RefusesClassIdsOutsideThePrediction) {
  writeArray(scratch / "bad-label.npy", DType::I64, {10},
             std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 0, 1, 2});
  TrainerOptions o = options(1);
  o.dataInputs[2].path = scratch / "bad-label.npy";
  o.checkpointDir = scratch / "ckpt";
  EXPECT_NE(errorOf(*bundle, o)
                .find("--data-input label=" + scratch / "bad-label.npy" +
                      ": sample 6 has class id 3, outside [0, 3)"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(scratch / "ckpt"));
}

TEST(TrainerNpyLosses, BceReportsAucAndMseOnlyTheLoss) {
  Scratch scratch;
  // bce: the prediction is the label itself, so the AUC is 1.
  writeBundle(scratch / "bce", "bce");
  Bundle bce(scratch / "bce");
  std::vector<float> labels{1, 0, 0, 1, 1, 0, 1, 0};
  std::vector<float> losses{0, 1, 2, 3, 4, 5, 6, 7};
  writeArray(scratch / "x.npy", DType::F32, {8}, labels);
  writeArray(scratch / "l.npy", DType::F32, {8}, losses);
  writeArray(scratch / "label.npy", DType::F32, {8}, labels);
  TrainerOptions o;
  o.dataInputs = arrays(scratch, "");
  o.evalInputs = o.dataInputs;
  o.batch = 4;
  o.steps = 2;
  o.logEvery = 2;
  TrainRun run = train(bce, o);
  EXPECT_NE(run.log.find("step 2/2  loss 3.5000  auc 1.0000  "),
            std::string::npos)
      << run.log;
  EXPECT_DOUBLE_EQ(run.summary.evalAuc, 1.0);
  EXPECT_NE(run.log.find("eval step 2/2  auc 1.0000  logloss "),
            std::string::npos)
      << run.log;

  writeBundle(scratch / "mse", "mse");
  Bundle mse(scratch / "mse");
  std::vector<float> x(24, 0.5f);
  writeArray(scratch / "x.npy", DType::F32, {8, 3}, x);
  writeArray(scratch / "label.npy", DType::F32, {8, 3}, x);
  run = train(mse, o);
  EXPECT_NE(run.log.find("step 2/2  loss 3.5000  "), std::string::npos)
      << run.log;
  EXPECT_NE(run.log.find("eval step 2/2  loss 3.5000  8 samples"),
            std::string::npos)
      << run.log;
  EXPECT_EQ(run.log.find("auc"), std::string::npos) << run.log;
  EXPECT_EQ(run.log.find("accuracy"), std::string::npos) << run.log;
}

} // namespace
