//===- TrainerCheckpointTest.cpp - Training bundles, checkpoints, loop ----===//
//
// The "training" section of a manifest, trainer checkpoints (write, verify,
// corruption, resume selection, pruning) and the training loop on a bundle
// without stages whose outputs pass inputs through: everything of a training
// run except the stage programs, which the end-to-end lit tests add.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/DirectoryLock.h"
#include "heterps/Runtime/Trainer.h"
#include "heterps/Runtime/TrainingServer.h"

#include "../ps/CheckpointFiles.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <zlib.h>

using namespace heterps::rt;
using namespace heterps::rt::train;
using namespace heterps::rt::testsupport;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// Scratch directories of these tests: <temp>/heterps-trainer-test-<pid>-<tag>.
const char *const kScratch = "heterps-trainer-test";

/// Flips one byte of a file in place.
void corrupt(const std::string &path, size_t offset = 0) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(offset);
  char c;
  file.get(c);
  file.seekp(offset);
  file.put(static_cast<char>(c ^ 0x5a));
}

/// A manifest of a bundle without stages: inputs dense [4, 13], ids
/// [4, 26], label [4, 1]; outputs prob and loss both pass the label through.
/// Trains a dense parameter "w" [4] (initial 1..4 at offset 0) and a table
/// "emb" of 130 rows (5 hash buckets per sparse field) of dim 2.
json passThroughManifest() {
  auto input = [](const char *name, const char *dtype, json shape) {
    return json{{"name", name},
                {"dtype", dtype},
                {"shape", shape},
                {"batched", true},
                {"channels", json::array()}};
  };
  auto output = [](const char *name) {
    return json{{"name", name},
                {"dtype", "f32"},
                {"shape", {4, 1}},
                {"batched", true},
                {"input", 2}};
  };
  return json{
      {"format", "heterps-bundle"},
      {"version", 1},
      {"batch", 4},
      {"channels", json::array()},
      {"stages", json::array()},
      {"inputs",
       {input("dense", "f32", {4, 13}), input("ids", "i64", {4, 26}),
        input("label", "f32", {4, 1})}},
      {"outputs", {output("prob"), output("loss")}},
      {"tables", json::array()},
      {"weights", {{"file", "weights.bin"}, {"bytes", 64}}},
      {"training",
       {{"loss", "bce"},
        {"label", "label"},
        {"prediction", "prob"},
        {"loss_output", "loss"},
        {"optimizer",
         {{"kind", "adam"},
          {"learning_rate", 0.01},
          {"momentum", 0},
          {"beta1", 0.9},
          {"beta2", 0.999},
          {"epsilon", 1e-8},
          {"initial_accumulator", 0.1}}},
        {"parameters",
         {{{"name", "w"}, {"dtype", "f32"}, {"shape", {4}}, {"offset", 0}}}},
        {"tables", {{{"name", "emb"}, {"rows", 130}, {"dim", 2}}}}}}};
}

void writeBundle(const std::string &directory, const json &manifest) {
  fs::create_directories(directory);
  writeText(directory + "/manifest.json", manifest.dump(2));
  std::string weights(64, '\0');
  float initial[4] = {1, 2, 3, 4};
  std::memcpy(weights.data(), initial, sizeof initial);
  writeText(directory + "/weights.bin", weights);
}

/// The error text of opening a bundle with `manifest`, "" if it opens.
std::string openError(const std::string &directory, const json &manifest) {
  writeBundle(directory, manifest);
  try {
    Bundle bundle(directory);
    return "";
  } catch (const Error &error) {
    return error.what();
  }
}

/// `rows` Criteo lines, labels alternating.
void writeCriteo(const std::string &path, int rows) {
  std::ostringstream text;
  for (int r = 0; r < rows; ++r) {
    text << (r % 3 == 0 ? 1 : 0);
    for (int i = 0; i < 13; ++i)
      text << "\t" << (r * 13 + i) % 17;
    for (int i = 0; i < 26; ++i)
      text << "\t" << std::hex << (r * 26 + i) * 2654435761u << std::dec;
    text << "\n";
  }
  writeText(path, text.str());
}

//===----------------------------------------------------------------------===//
// The manifest's training section
//===----------------------------------------------------------------------===//

TEST(TrainingManifest, ParsesTheSection) {
  ScratchDirectory scratch(kScratch, "manifest");
  writeBundle(scratch / "b", passThroughManifest());
  Bundle bundle(scratch / "b");
  const TrainingSpec *spec = bundle.training();
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->loss, "bce");
  EXPECT_EQ(spec->labelInput, 2);
  EXPECT_EQ(spec->predictionOutput, 0);
  EXPECT_EQ(spec->lossOutputIndex, 1);
  EXPECT_EQ(spec->optimizer.kind, "adam");
  EXPECT_FLOAT_EQ(spec->optimizer.learningRate, 0.01f);
  ASSERT_EQ(spec->parameters.size(), 1u);
  EXPECT_EQ(spec->parameters[0].shape, (Shape{4}));
  // No "update": a bundle from before batch statistics trains it as before.
  EXPECT_EQ(spec->parameters[0].update, ParameterUpdate::Optimizer);
  ASSERT_EQ(spec->tables.size(), 1u);
  EXPECT_EQ(spec->tables[0].rows, 130);

  json inference = passThroughManifest();
  inference.erase("training");
  writeBundle(scratch / "i", inference);
  EXPECT_EQ(Bundle(scratch / "i").training(), nullptr);
}

TEST(TrainingManifest, NamesWhatIsWrong) {
  ScratchDirectory scratch(kScratch, "manifest-errors");
  struct Case {
    const char *pointer;
    json value;
    const char *message;
  };
  std::vector<Case> cases = {
      {"/training/loss", "hinge", "manifest.json: training has 'loss'"},
      {"/training/label", "labels", "'label' names \"labels\""},
      {"/training/prediction", "dense", "'prediction' names \"dense\""},
      {"/training/loss_output", "nope", "'loss_output' names \"nope\""},
      {"/training/optimizer/kind", "lion",
       "manifest.json: training.optimizer has 'kind' \"lion\""},
      {"/training/optimizer/beta1", 1.5, "'beta1' or 'beta2' outside [0, 1)"},
      {"/training/optimizer/learning_rate", "fast",
       "'learning_rate' is not a finite number"},
      {"/training/parameters/0/dtype", "f16",
       "training.parameters[0] has dtype f16"},
      {"/training/parameters/0/offset", 56,
       "training.parameters[0] ('w', 16 bytes at offset 56) lies outside "
       "weights.bin"},
      {"/training/tables/0/dim", 0,
       "training.tables[0] needs 'rows' >= 1 and 'dim' >= 1"},
      {"/training/parameters/0/update", "ema",
       "training.parameters[0] has 'update' \"ema\"; the runtime knows "
       "optimizer, moving-average and training-flag"},
      {"/training/parameters/0/update", "training-flag",
       "training.parameters[0] is a training flag but has 4 elements"},
  };
  for (const Case &c : cases) {
    json manifest = passThroughManifest();
    manifest[json::json_pointer(c.pointer)] = c.value;
    std::string error = openError(scratch / "b", manifest);
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.pointer << ": " << error;
  }
  json average = passThroughManifest();
  average["training"]["parameters"][0]["update"] = "moving-average";
  EXPECT_NE(openError(scratch / "b", average)
                .find("training.parameters[0] has no 'momentum'"),
            std::string::npos);
  average["training"]["parameters"][0]["momentum"] = 1.5;
  EXPECT_NE(openError(scratch / "b", average)
                .find("training.parameters[0] has 'momentum' 1.5"),
            std::string::npos);
  average["training"]["parameters"][0]["momentum"] = 0.75;
  writeBundle(scratch / "a", average);
  Bundle averaged(scratch / "a");
  const TrainableParameter &running = averaged.training()->parameters[0];
  EXPECT_EQ(running.update, ParameterUpdate::MovingAverage);
  EXPECT_FLOAT_EQ(running.momentum, 0.75f);

  json missing = passThroughManifest();
  missing["training"].erase("optimizer");
  EXPECT_NE(openError(scratch / "b", missing)
                .find("manifest.json: training has no 'optimizer'"),
            std::string::npos);
}

TEST(TrainingManifest, MapsCriteoInputs) {
  ScratchDirectory scratch(kScratch, "inputs");
  writeBundle(scratch / "b", passThroughManifest());
  Bundle bundle(scratch / "b");
  CtrInputs layout = mapCtrInputs(bundle);
  EXPECT_EQ(layout.dense, 0);
  EXPECT_EQ(layout.sparse, 1);
  EXPECT_EQ(layout.label, 2);

  json manifest = passThroughManifest();
  manifest["inputs"][0]["shape"] = {4, 12};
  writeBundle(scratch / "c", manifest);
  Bundle other(scratch / "c");
  try {
    mapCtrInputs(other);
    ADD_FAILURE() << "an f32 N x 12 input was accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("input 'dense' (f32 N x 12)"),
              std::string::npos)
        << error.what();
  }
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

TrainerState sampleState(int64_t step) {
  TrainerState state;
  state.step = step;
  state.samples = step * 8;
  data::DataPosition position;
  position.byteOffset = 100 * step;
  position.lineNumber = step;
  position.epoch = 1;
  state.position = position.toString();
  state.seed = 42;
  state.bundle = "0123456789abcdef";
  state.batch = 8;
  return state;
}

/// Stands in for ParameterServer::save: a metadata file and a data file.
void fakeServer(const std::string &path, int64_t step) {
  fs::create_directories(path);
  writeText(path + "/metadata", "server at step " + std::to_string(step));
  writeText(path + "/dense.bin", std::string(1000, char(step)));
}

std::string writeFake(const std::string &directory, int64_t step,
                      int keep = 10) {
  return writeCheckpoint(
      directory, sampleState(step),
      [&](const std::string &path) { fakeServer(path, step); }, keep);
}

TEST(TrainerCheckpoint, WritesAndVerifies) {
  ScratchDirectory scratch(kScratch, "ckpt");
  std::string path = writeFake(scratch / "ckpt", 10);
  EXPECT_EQ(path, scratch / "ckpt/step-10");
  EXPECT_FALSE(fs::exists(scratch / "ckpt/step-10.tmp"));
  TrainerState state = verifyCheckpoint(path);
  TrainerState expected = sampleState(10);
  EXPECT_EQ(state.step, 10);
  EXPECT_EQ(state.samples, 80);
  EXPECT_EQ(state.position, expected.position);
  EXPECT_EQ(state.seed, 42u);
  EXPECT_EQ(state.bundle, expected.bundle);
  EXPECT_EQ(state.batch, 8);
  // Without a recipe: trainer-state version 1, as before it had one.
  EXPECT_FALSE(state.recipe);
  EXPECT_EQ(
      readText(path + "/trainer-state").rfind("heterps-trainer-state 1\n", 0),
      0u);
  // Rewriting a step replaces it.
  writeFake(scratch / "ckpt", 10);
  EXPECT_EQ(listCheckpoints(scratch / "ckpt").size(), 1u);
}

TEST(TrainerCheckpoint, RecordsTheFlagsThatChangeTraining) {
  ScratchDirectory scratch(kScratch, "recipe");
  TrainerState state = sampleState(3);
  TrainingRecipe recipe;
  recipe.shuffle = true;
  recipe.hashBuckets = 1000;
  recipe.learningRate.scale = 0.1; // not exact in binary: must round-trip
  recipe.learningRate.from = 1.0 / 3;
  recipe.learningRate.start = 5;
  recipe.learningRate.end = 50;
  recipe.sparseStaleness = 1;
  state.recipe = recipe;
  const std::string path = writeCheckpoint(
      scratch / "ckpt", state,
      [&](const std::string &server) { fakeServer(server, 3); }, 2);
  TrainerState read = verifyCheckpoint(path);
  ASSERT_TRUE(read.recipe);
  EXPECT_TRUE(read.recipe->shuffle);
  EXPECT_EQ(read.recipe->hashBuckets, 1000);
  EXPECT_EQ(read.recipe->learningRate.scale, 0.1);
  EXPECT_EQ(read.recipe->learningRate.from, 1.0 / 3);
  EXPECT_EQ(read.recipe->learningRate.start, 5);
  EXPECT_EQ(read.recipe->learningRate.end, 50);
  EXPECT_EQ(read.recipe->sparseStaleness, 1);

  // A version-2 state without one of the recipe's lines is corrupt.
  std::string text = readText(path + "/trainer-state");
  const size_t line = text.find("sparse-staleness 1\n");
  ASSERT_NE(line, std::string::npos);
  text.erase(line, std::string("sparse-staleness 1\n").size());
  text.erase(text.rfind("crc32 "));
  char crc[16];
  std::snprintf(
      crc, sizeof crc, "%08x",
      unsigned(::crc32(0, reinterpret_cast<const Bytef *>(text.data()),
                       unsigned(text.size()))));
  writeText(path + "/trainer-state", text + "crc32 " + crc + "\n");
  try {
    verifyCheckpoint(path);
    ADD_FAILURE() << "a state without its sparse-staleness line verified";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("no 'sparse-staleness' line"),
              std::string::npos)
        << error.what();
  }
}

TEST(TrainerCheckpoint, DetectsCorruption) {
  ScratchDirectory scratch(kScratch, "corrupt");
  auto expectError = [](const std::string &path, const std::string &file) {
    try {
      verifyCheckpoint(path);
      ADD_FAILURE() << "a damaged checkpoint verified";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find(file), std::string::npos)
          << error.what();
    }
  };
  std::string a = writeFake(scratch / "ckpt", 1);
  corrupt(a + "/ps/dense.bin", 500);
  expectError(a, "ps/dense.bin' is corrupt");

  std::string b = writeFake(scratch / "ckpt", 2);
  fs::remove(b + "/ps/metadata");
  expectError(b, "ps/metadata' is missing");

  std::string c = writeFake(scratch / "ckpt", 3);
  corrupt(c + "/trainer-state", 30);
  expectError(c, "trainer-state' is corrupt: CRC32 mismatch");

  std::string d = writeFake(scratch / "ckpt", 4);
  std::string text = readText(d + "/trainer-state");
  writeText(d + "/trainer-state", text.substr(0, text.size() / 2));
  expectError(d, "trainer-state' is corrupt");

  std::string e = writeFake(scratch / "ckpt", 5);
  fs::resize_file(e + "/ps/dense.bin", 999);
  expectError(e, "999 bytes");
}

TEST(TrainerCheckpoint, CatchesAFileSwappedInFromAnotherCheckpoint) {
  // The server's files end with their own CRC32, as ParameterServer::save
  // writes them: the CRC32 of each whole file is then one constant, so the
  // trainer state must checksum something else to tell them apart.
  ScratchDirectory scratch(kScratch, "swapped");
  auto server = [](int64_t step) {
    return [step](const std::string &path) {
      fs::create_directories(path);
      for (const char *name : {"metadata", "dense.bin"}) {
        ps::ChecksummedWriter writer(path + "/" + name);
        const std::string bytes(100, char(step));
        writer.write(bytes.data(), bytes.size());
        writer.finish();
      }
    };
  };
  TrainerState state = sampleState(1);
  state.recipe = TrainingRecipe();
  const std::string first =
      writeCheckpoint(scratch / "ckpt", state, server(1), 5);
  state = sampleState(2);
  state.recipe = TrainingRecipe();
  const std::string second =
      writeCheckpoint(scratch / "ckpt", state, server(2), 5);
  EXPECT_EQ(verifyCheckpoint(second).step, 2);
  fs::copy_file(first + "/ps/dense.bin", second + "/ps/dense.bin",
                fs::copy_options::overwrite_existing);
  try {
    verifyCheckpoint(second);
    ADD_FAILURE() << "a file of step 1 verified in step 2's checkpoint";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("ps/dense.bin' is corrupt: its checksum differs"),
              std::string::npos)
        << error.what();
  }
}

TEST(TrainerCheckpoint, ResumeSkipsCorruptCheckpoints) {
  ScratchDirectory scratch(kScratch, "resume");
  std::string directory = scratch / "ckpt";
  std::ostringstream warnings;
  EXPECT_FALSE(findResumeCheckpoint(directory, {"0123456789abcdef"}, warnings));

  writeFake(directory, 10);
  writeFake(directory, 20);
  std::string newest = writeFake(directory, 30);
  corrupt(newest + "/ps/dense.bin");
  auto found = findResumeCheckpoint(directory, {"0123456789abcdef"}, warnings);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, scratch / "ckpt/step-20");
  EXPECT_EQ(found->state.step, 20);
  EXPECT_NE(warnings.str().find("skipping checkpoint '" + newest + "'"),
            std::string::npos)
      << warnings.str();

  // Another bundle's checkpoint is an error, not something to skip.
  EXPECT_THROW(findResumeCheckpoint(directory, {"fedcba9876543210"}, warnings),
               Error);

  corrupt(scratch / "ckpt/step-20/trainer-state");
  corrupt(scratch / "ckpt/step-10/ps/metadata");
  try {
    findResumeCheckpoint(directory, {"0123456789abcdef"}, warnings);
    ADD_FAILURE() << "no checkpoint verifies, yet one was chosen";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("no checkpoint in"),
              std::string::npos);
  }
}

TEST(TrainerCheckpoint, AFailedWriteLeavesNothing) {
  // The server's part fails half-written (a full disk): no step-K.tmp is
  // left to take the space the next checkpoint needs, and the checkpoint
  // before stays.
  ScratchDirectory scratch(kScratch, "failed");
  std::string directory = scratch / "ckpt";
  writeFake(directory, 10);
  EXPECT_THROW(writeCheckpoint(
                   directory, sampleState(20),
                   [&](const std::string &path) {
                     fakeServer(path, 20);
                     throw Error("No space left on device");
                   },
                   10),
               Error);
  EXPECT_FALSE(fs::exists(directory + "/step-20.tmp"));
  std::vector<CheckpointEntry> entries = listCheckpoints(directory);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].step, 10);
}

TEST(TrainerCheckpoint, KeepsTheNewest) {
  ScratchDirectory scratch(kScratch, "keep");
  std::string directory = scratch / "ckpt";
  for (int64_t step : {10, 20, 30, 40})
    writeFake(directory, step, 2);
  std::vector<CheckpointEntry> entries = listCheckpoints(directory);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].step, 30);
  EXPECT_EQ(entries[1].step, 40);
  // A newer (skipped) checkpoint is left alone by an older run's pruning.
  writeFake(directory, 15, 1);
  entries = listCheckpoints(directory);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].step, 15);
}

TEST(TrainerCheckpoint, TidiesWhatAKilledRunLeft) {
  ScratchDirectory scratch(kScratch, "tidy");
  std::string directory = scratch / "ckpt";
  writeFake(directory, 10);
  std::string moved = writeFake(directory, 20);
  fs::rename(moved, directory + "/step-20.old");
  fs::create_directories(directory + "/step-30.tmp/ps");
  std::string kept = writeFake(directory, 40);
  fs::create_directories(directory + "/step-40.old");
  fs::create_directories(directory + "/unrelated.tmp");
  tidyCheckpointDirectory(directory);
  EXPECT_FALSE(fs::exists(directory + "/step-30.tmp"));
  EXPECT_FALSE(fs::exists(directory + "/step-40.old"));
  EXPECT_TRUE(fs::exists(directory + "/unrelated.tmp"));
  std::vector<CheckpointEntry> entries = listCheckpoints(directory);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[1].step, 20);
  EXPECT_NO_THROW(verifyCheckpoint(entries[1].path));
}

TEST(TrainerCheckpoint, OneRunAtATimeHoldsADirectory) {
  // A second run on a directory in use, even one about to be refused, once
  // tidied the first one's checkpoint in progress away as a leftover.
  ScratchDirectory scratch(kScratch, "lock");
  const std::string directory = scratch / "ckpt";
  auto lockError = [&](double waitSeconds) {
    try {
      DirectoryLock second(directory, "checkpoint directory", waitSeconds);
    } catch (const Error &error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  {
    DirectoryLock first(directory, "checkpoint directory");
    // Held by this process (as its storage directory, say): at once.
    EXPECT_NE(lockError(30).find("is in use by this process already (pid " +
                                 std::to_string(::getpid()) + ")"),
              std::string::npos)
        << lockError(30);
  }
  // A run that made the directory and wrote nothing into it leaves none.
  EXPECT_FALSE(fs::exists(directory));
  // Held by another process, which writes its pid as DirectoryLock does.
  fs::create_directories(directory);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    const int fd =
        ::open((directory + "/.lock").c_str(), O_RDWR | O_CREAT, 0644);
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0 ||
        ::pwrite(fd, pid.data(), pid.size(), 0) < 0)
      ::_exit(1);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  EXPECT_NE(lockError(0.2).find("is in use by another run (pid " +
                                std::to_string(holder) + ", still after 0 s)"),
            std::string::npos)
      << lockError(0.2);
  // A stop asked for ends the wait at once, not after its 30 s (a Ctrl-C
  // in Python went unheeded for them). The test fails by the message, not
  // by time: without the stop the wait runs out with another one.
  const std::atomic<bool> stop{true};
  expectErrorContaining(
      [&] {
        DirectoryLock second(directory, "checkpoint directory", 30, &stop);
      },
      "stopped while waiting for checkpoint directory");
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  // Released with its holder.
  EXPECT_NO_THROW(DirectoryLock again(directory, "checkpoint directory", 0));
}

TEST(TrainerCheckpoint, HoldsARealServer) {
  ScratchDirectory scratch(kScratch, "server");
  writeBundle(scratch / "b", passThroughManifest());
  Bundle bundle(scratch / "b");
  TrainingServer server(bundle, {});
  int64_t ids[2] = {3, -1};
  float rows[4];
  server.pullRows("emb", ids, 2, rows);
  std::string path = writeCheckpoint(
      scratch / "ckpt", sampleState(5),
      [&](const std::string &path) { server.save(path); }, 2);
  EXPECT_NO_THROW(verifyCheckpoint(path));
  TrainingServer restored(bundle, {});
  restored.load(path + "/ps");
  float again[4];
  restored.pullRows("emb", ids, 2, again);
  EXPECT_EQ(std::memcmp(rows, again, sizeof rows), 0);
}

//===----------------------------------------------------------------------===//
// The training loop on the pass-through bundle
//===----------------------------------------------------------------------===//

struct TrainRun {
  TrainSummary summary;
  std::string log;
};

TrainRun train(const Bundle &bundle, TrainerOptions options) {
  std::ostringstream log;
  TrainRun run;
  run.summary = Trainer(bundle, options, log).run();
  run.log = log.str();
  return run;
}

class TrainerLoop : public ::testing::Test {
protected:
  TrainerLoop() : scratch(kScratch, "loop") {
    writeBundle(scratch / "b", passThroughManifest());
    writeCriteo(scratch / "train.tsv", 50);
    writeCriteo(scratch / "eval.tsv", 13);
    bundle = std::make_unique<Bundle>(scratch / "b");
  }
  TrainerOptions options(int64_t steps) {
    TrainerOptions o;
    o.data = scratch / "train.tsv";
    o.batch = 8;
    o.steps = steps;
    o.logEvery = 2;
    return o;
  }
  ScratchDirectory scratch;
  std::unique_ptr<Bundle> bundle;
};

TEST_F(TrainerLoop, TrainsEvaluatesAndReports) {
  TrainerOptions o = options(7); // 56 rows: the data loops once
  o.eval = scratch / "eval.tsv";
  o.dumpParameters = scratch / "dump";
  TrainRun run = train(*bundle, o);
  EXPECT_EQ(run.summary.steps, 7);
  EXPECT_EQ(run.summary.samples, 56);
  EXPECT_NE(run.log.find("step 2/7  loss "), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("step 7/7  loss "), std::string::npos) << run.log;
  // The prediction is the label itself.
  EXPECT_NE(run.log.find("auc 1.0000"), std::string::npos) << run.log;
  ASSERT_TRUE(run.summary.evaluated);
  EXPECT_EQ(run.summary.evalSamples, 13);
  EXPECT_DOUBLE_EQ(run.summary.evalAuc, 1.0);
  EXPECT_LT(run.summary.evalLogLoss, 1e-5);
  EXPECT_TRUE(fs::exists(scratch / "dump/w.npy"));
  EXPECT_TRUE(fs::exists(scratch / "dump/emb.ids.npy"));
}

TEST_F(TrainerLoop, AFailedDumpLeavesTheEarlierOne) {
  TrainerOptions o = options(2);
  o.dumpParameters = scratch / "dump";
  train(*bundle, o);
  // Marks a file of the earlier dump (this model's w does not train).
  const std::string earlier = "the earlier dump";
  writeText(scratch / "dump/w.npy", earlier);
  // The dump's last file cannot be written (its temporary's name is taken
  // by a directory): the run fails naming it, and every file of the
  // earlier dump stays as it was, with no temporary left beside them.
  fs::create_directory(scratch / "dump/emb.rows.npy.partial");
  o.steps = 4;
  try {
    train(*bundle, o);
    ADD_FAILURE() << "a dump that could not be written succeeded";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("cannot write '" + o.dumpParameters + "/emb.rows.npy'"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(readText(scratch / "dump/w.npy"), earlier);
  EXPECT_FALSE(fs::exists(scratch / "dump/w.npy.partial"));
  EXPECT_FALSE(fs::exists(scratch / "dump/emb.ids.npy.partial"));
  // Once it can be written, the dump is the new run's.
  fs::remove(scratch / "dump/emb.rows.npy.partial");
  train(*bundle, o);
  EXPECT_NE(readText(scratch / "dump/w.npy"), earlier);
}

TEST_F(TrainerLoop, ResumesWhereAnUninterruptedRunIs) {
  TrainerOptions whole = options(9);
  whole.checkpointDir = scratch / "whole";
  whole.checkpointEvery = 3;
  train(*bundle, whole);
  std::vector<CheckpointEntry> kept = listCheckpoints(whole.checkpointDir);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].step, 9);

  TrainerOptions first = options(4); // checkpoints at 2 and at the end, 4
  first.checkpointDir = scratch / "parts";
  first.checkpointEvery = 2;
  train(*bundle, first);
  // A new run does not write into an old run's checkpoints.
  EXPECT_THROW(train(*bundle, first), Error);

  TrainerOptions second = options(9);
  second.checkpointDir = first.checkpointDir;
  second.checkpointEvery = 2;
  second.resume = true;
  TrainRun resumed = train(*bundle, second);
  EXPECT_EQ(resumed.summary.firstStep, 4);
  EXPECT_NE(resumed.log.find("resumed from " + first.checkpointDir +
                             "/step-4 (step 4"),
            std::string::npos)
      << resumed.log;

  TrainerState a = verifyCheckpoint(whole.checkpointDir + "/step-9");
  TrainerState b = verifyCheckpoint(second.checkpointDir + "/step-9");
  EXPECT_EQ(a.position, b.position);
  // Criteo runs record the reader's position as they always did, then the
  // head of the file (older checkpoints, without it, resume too).
  const size_t head = a.position.rfind(" head=");
  ASSERT_NE(head, std::string::npos) << a.position;
  EXPECT_EQ(data::DataPosition::parse(a.position.substr(0, head)).toString(),
            a.position.substr(0, head));
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(readText(whole.checkpointDir + "/step-9/ps/dense.bin"),
            readText(second.checkpointDir + "/step-9/ps/dense.bin"));
}

TEST_F(TrainerLoop, ResumeChecksTheFlagsThatChangeTraining) {
  TrainerOptions o = options(2);
  o.checkpointDir = scratch / "ckpt";
  o.hashBuckets = 50;
  train(*bundle, o);
  o.resume = true;
  o.steps = 4;
  // Other hash buckets give every raw value another row: refused, and the
  // checkpoint is left as it was.
  o.hashBuckets = 60;
  try {
    train(*bundle, o);
    ADD_FAILURE() << "resumed with other hash buckets";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("cannot resume from " + o.checkpointDir +
                        "/step-2: it was trained with --hash-buckets 50, "
                        "this run hashes into 60"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(listCheckpoints(o.checkpointDir).back().step, 2);
  // Another learning rate is the user's to choose: warned about.
  o.hashBuckets = 50;
  o.learningRate.scale = 0.5;
  TrainRun run = train(*bundle, o);
  EXPECT_EQ(run.summary.firstStep, 2);
  EXPECT_NE(run.log.find("warning: " + o.checkpointDir +
                         "/step-2 was trained with --lr-scale 1, this run "
                         "uses --lr-scale 0.5: the result will differ from "
                         "an uninterrupted run"),
            std::string::npos)
      << run.log;
  // The checkpoint records this run's flags; resumed alike, no warning.
  o.steps = 5;
  run = train(*bundle, o);
  EXPECT_EQ(run.summary.firstStep, 4);
  EXPECT_EQ(run.log.find("warning:"), std::string::npos) << run.log;
}

TEST_F(TrainerLoop, ResumeFallsBackPastACorruptCheckpoint) {
  TrainerOptions o = options(6);
  o.checkpointDir = scratch / "ckpt";
  o.checkpointEvery = 2;
  o.keepCheckpoints = 3;
  train(*bundle, o);
  corrupt(o.checkpointDir + "/step-6/ps/dense.bin", 20);
  o.resume = true;
  o.steps = 8;
  TrainRun run = train(*bundle, o);
  EXPECT_EQ(run.summary.firstStep, 4);
  EXPECT_NE(run.log.find("warning: skipping checkpoint '" + o.checkpointDir +
                         "/step-6'"),
            std::string::npos)
      << run.log;
  // Reaching step 6 again replaced the corrupt checkpoint.
  EXPECT_NO_THROW(verifyCheckpoint(o.checkpointDir + "/step-6"));
}

TEST_F(TrainerLoop, RefusesAnotherBundlesCheckpoint) {
  TrainerOptions o = options(2);
  o.checkpointDir = scratch / "ckpt";
  train(*bundle, o);
  json manifest = passThroughManifest();
  manifest["training"]["optimizer"]["learning_rate"] = 0.5;
  writeBundle(scratch / "other", manifest);
  Bundle other(scratch / "other");
  o.resume = true;
  o.steps = 4;
  try {
    train(other, o);
    ADD_FAILURE() << "resumed from another bundle's checkpoint";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("written by another bundle"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(TrainerLoop, ChecksItsFlags) {
  auto expectError = [&](TrainerOptions o, const std::string &message) {
    try {
      train(*bundle, o);
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << error.what();
    }
  };
  TrainerOptions o = options(2);
  o.batch = 6;
  expectError(o, "--batch 6 is not a multiple of the bundle's batch 4");
  o = options(2);
  o.checkpointEvery = 2;
  expectError(o, "--checkpoint-every needs --checkpoint-dir");
  o = options(2);
  o.data = scratch / "missing.tsv";
  expectError(o, "missing.tsv");

  json manifest = passThroughManifest();
  manifest["training"]["tables"].push_back(
      {{"name", "emb2"}, {"rows", 10}, {"dim", 2}});
  writeBundle(scratch / "two", manifest);
  Bundle two(scratch / "two");
  try {
    std::ostringstream log;
    Trainer(two, options(2), log).run();
    ADD_FAILURE() << "two tables without --hash-buckets";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("give --hash-buckets"),
              std::string::npos);
  }
  TrainerOptions withBuckets = options(2);
  withBuckets.hashBuckets = 5;
  std::ostringstream log;
  EXPECT_EQ(Trainer(two, withBuckets, log).run().steps, 2);
}

TEST_F(TrainerLoop, StopsAndCheckpointsWhenAsked) {
  std::atomic<bool> stop{false};
  TrainerOptions o = options(1000);
  o.checkpointDir = scratch / "ckpt";
  o.stopRequested = &stop;
  o.logEvery = 1;
  // Ask to stop from the log stream, after the third step's line.
  struct StopAfter : std::stringbuf {
    std::atomic<bool> &stop;
    explicit StopAfter(std::atomic<bool> &stop) : stop(stop) {}
    int sync() override {
      if (str().find("step 3/") != std::string::npos)
        stop = true;
      return 0;
    }
  } buffer(stop);
  std::ostream log(&buffer);
  TrainSummary summary = Trainer(*bundle, o, log).run();
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.steps, 3);
  EXPECT_EQ(verifyCheckpoint(o.checkpointDir + "/step-3").step, 3);
}

TEST(TrainerFlags, CheckpointEveryTakesStepsOrATime) {
  EXPECT_EQ(parseCheckpointInterval("10").steps, 10);
  EXPECT_EQ(parseCheckpointInterval("10").seconds, 0);
  EXPECT_EQ(parseCheckpointInterval("30s").seconds, 30);
  EXPECT_EQ(parseCheckpointInterval("30s").steps, 0);
  EXPECT_EQ(parseCheckpointInterval("2m").seconds, 120);
  EXPECT_EQ(parseCheckpointInterval("1h").seconds, 3600);
  EXPECT_EQ(parseCheckpointInterval("0.5s").seconds, 0.5);
  // "0" meant "at the end only" before 2026-12-02; a checkpoint directory
  // without an interval now checkpoints every kDefaultCheckpointSeconds.
  for (const char *bad : {"3x", "", "s", "0", "00", "0s", "-1s", "1e3s", " 10",
                          "10 ", "1..5s", ".s", "12345678901234567890"}) {
    try {
      parseCheckpointInterval(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error &error) {
      EXPECT_EQ(std::string(error.what()),
                "--checkpoint-every '" + std::string(bad) +
                    "': give a positive number of steps (10) or a time "
                    "(30s, 2m)");
    }
  }
}

TEST(TrainerFlags, LearningRateWarmupRampsToTheScale) {
  LearningRateSchedule schedule;
  EXPECT_EQ(schedule.at(1), 1.0);
  schedule.scale = 2;
  EXPECT_EQ(schedule.at(1), 2.0);
  parseLearningRateWarmup("0.5:10:20", schedule);
  EXPECT_EQ(schedule.from, 0.5);
  EXPECT_EQ(schedule.start, 10);
  EXPECT_EQ(schedule.end, 20);
  EXPECT_EQ(schedule.at(1), 0.5);
  EXPECT_EQ(schedule.at(10), 0.5);
  EXPECT_DOUBLE_EQ(schedule.at(11), 0.65);
  EXPECT_DOUBLE_EQ(schedule.at(15), 1.25);
  EXPECT_EQ(schedule.at(20), 2.0);
  EXPECT_EQ(schedule.at(1000), 2.0);
  EXPECT_NO_THROW(schedule.check());
  auto error = [](const std::string &text) -> std::string {
    LearningRateSchedule schedule;
    try {
      parseLearningRateWarmup(text, schedule);
    } catch (const Error &error) {
      return error.what();
    }
    return "";
  };
  EXPECT_NE(error("1:5").find("--lr-warmup '1:5': not three fields"),
            std::string::npos);
  EXPECT_NE(error("1:5:5").find("END must come after START"),
            std::string::npos);
  EXPECT_NE(error("-1:0:5").find("'-1' is not a scale of at least 0"),
            std::string::npos);
  EXPECT_NE(error("x:0:5").find("'x' is not a scale"), std::string::npos);
  EXPECT_NE(error("0:a:5").find("'a' is not a step"), std::string::npos);
  schedule = LearningRateSchedule();
  schedule.scale = 0;
  EXPECT_THROW(schedule.check(), Error);
}

TEST_F(TrainerLoop, ChecksItsLength) {
  auto expectError = [&](TrainerOptions o, const std::string &message) {
    try {
      train(*bundle, o);
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << error.what();
    }
  };
  TrainerOptions o = options(2);
  o.samples = 16;
  expectError(o, "give the run's length as --steps N or as --samples N, not "
                 "both");
  o = options(0);
  o.samples = 22; // batch 8, micro-batches of 4: a last step of 6
  expectError(o, "--samples 22 leaves a last step of 6 samples (the run is at "
                 "0 samples, steps of --batch 8), not a whole number of the "
                 "bundle's micro-batches of 4; give --samples 16 or 24");
  o = options(2);
  o.checkpointDir = scratch / "ckpt";
  o.checkpointEvery = 2;
  o.checkpointEverySeconds = 5;
  expectError(o, "--checkpoint-every needs --checkpoint-dir DIR and a "
                 "positive count");
  o = options(2);
  o.learningRate.scale = -2;
  expectError(o, "--lr-scale -2 must be a finite number above 0");
}

TEST_F(TrainerLoop, TrainsForSamplesWithAShortLastStep) {
  TrainerOptions o = options(0);
  o.samples = 20; // steps of 8, 8 and 4
  o.checkpointDir = scratch / "ckpt";
  TrainRun run = train(*bundle, o);
  EXPECT_EQ(run.summary.steps, 3);
  EXPECT_EQ(run.summary.samples, 20);
  EXPECT_NE(run.log.find("step 2/3  loss "), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("step 3/3  loss "), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("done: 3 steps (1-3), 20 samples, "),
            std::string::npos)
      << run.log;
  EXPECT_NE(run.log.find("; samples 20/20\n"), std::string::npos) << run.log;
  // The data stands where 20 samples in steps of 4 leave it.
  TrainerOptions fours = options(5);
  fours.batch = 4;
  TrainRun reference = train(*bundle, fours);
  EXPECT_EQ(run.summary.position, reference.summary.position);
  EXPECT_NE(run.log.find("data: samples 20, position " +
                         reference.summary.position + "\n"),
            std::string::npos)
      << run.log;
  EXPECT_NE(reference.log.find("data: samples 20, position "),
            std::string::npos)
      << reference.log;
  TrainerState state = verifyCheckpoint(o.checkpointDir + "/step-3");
  EXPECT_EQ(state.samples, 20);
  EXPECT_EQ(state.position, reference.summary.position);

  // Resumed with a larger target: the checkpoint's samples count.
  o.resume = true;
  o.samples = 36; // 16 more: two steps of 8
  TrainRun more = train(*bundle, o);
  EXPECT_EQ(more.summary.firstStep, 3);
  EXPECT_EQ(more.summary.steps, 5);
  EXPECT_EQ(more.summary.samples, 36);
  o.samples = 30; // already past it
  TrainRun nothing = train(*bundle, o);
  EXPECT_NE(nothing.log.find("nothing to train: the checkpoint is at step 5 "
                             "with 36 samples and --samples is 30"),
            std::string::npos)
      << nothing.log;
}

TEST_F(TrainerLoop, ChecksTheLastStepFromTheResumedState) {
  TrainerOptions o = options(1); // 8 samples
  o.checkpointDir = scratch / "ckpt";
  train(*bundle, o);
  o.resume = true;
  o.steps = 0;
  o.samples = 14; // 6 left
  try {
    train(*bundle, o);
    ADD_FAILURE() << "a last step of 6 samples was accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("--samples 14 leaves a last step of 6 samples (the run "
                        "is at 8 samples, steps of --batch 8), not a whole "
                        "number of the bundle's micro-batches of 4; give "
                        "--samples 16"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(TrainerLoop, CheckpointsOnTheClock) {
  TrainerOptions o = options(5);
  o.checkpointDir = scratch / "ckpt";
  o.checkpointEverySeconds = 1e-9; // due at every step boundary
  o.keepCheckpoints = 10;
  TrainRun run = train(*bundle, o);
  std::vector<CheckpointEntry> kept = listCheckpoints(o.checkpointDir);
  ASSERT_EQ(kept.size(), 5u) << run.log;
  for (int64_t step = 1; step <= 5; ++step)
    EXPECT_EQ(kept[step - 1].step, step);

  o.checkpointDir = scratch / "hourly";
  o.checkpointEverySeconds = 3600; // only the last step's
  train(*bundle, o);
  kept = listCheckpoints(o.checkpointDir);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].step, 5);
}

TEST_F(TrainerLoop, StopsWhenTheStopFileAppears) {
  ScopedEnvironment stopFile("HETERPS_STOP_FILE", scratch / "stop");
  ScopedEnvironment interval("HETERPS_HEARTBEAT_INTERVAL_MS", "1");
  TrainerOptions o = options(1000);
  o.checkpointDir = scratch / "ckpt";
  o.logEvery = 1;
  // The file appears after the third step's line; the heartbeat thread
  // sees it before the next step starts.
  struct StopAfter : std::stringbuf {
    std::string path;
    explicit StopAfter(std::string path) : path(std::move(path)) {}
    int sync() override {
      if (str().find("step 3/") != std::string::npos && !fs::exists(path)) {
        writeText(path, "");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      return 0;
    }
  } buffer(scratch / "stop");
  std::ostream log(&buffer);
  TrainSummary summary = Trainer(*bundle, o, log).run();
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.stopReason, StopReason::Request);
  EXPECT_EQ(summary.steps, 3);
  EXPECT_EQ(summary.lastCheckpoint, o.checkpointDir + "/step-3");
  EXPECT_EQ(verifyCheckpoint(o.checkpointDir + "/step-3").step, 3);
  EXPECT_NE(buffer.str().find("stopped at step 3/1000\ndata: samples 24, "),
            std::string::npos)
      << buffer.str();
}

TEST_F(TrainerLoop, WritesHeartbeatsAndRefusesABadFaultSpec) {
  ScopedEnvironment directory("HETERPS_HEARTBEAT_DIR", scratch / "beats");
  TrainerOptions o = options(4);
  train(*bundle, o);
  // The last beat has the last step.
  EXPECT_NE(readText(scratch / "beats/worker-0").find(" step=4 "),
            std::string::npos)
      << readText(scratch / "beats/worker-0");
  ScopedEnvironment fault("HETERPS_FAULT", "kill:worker:0");
  try {
    train(*bundle, o);
    ADD_FAILURE() << "a malformed HETERPS_FAULT was accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("HETERPS_FAULT: fault spec 'kill:worker:0': no "
                        "'@STEP'"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
