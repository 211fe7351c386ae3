//===- JobSpecTest.cpp - Job files: reading and checking ------------------===//

#include "heterps/Jobs/Backend.h"
#include "heterps/Jobs/JobSpec.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <filesystem>
#include <fstream>
#include <string>

using namespace heterps::jobs;

namespace {

/// A directory with a bundle and data for job files to name.
class JobFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("jobspec", directory));
    llvm::sys::fs::create_directories(path("b"));
    std::ofstream(path("d.tsv")) << "1\n";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }
  std::string path(const std::string &name) {
    llvm::SmallString<128> full(directory);
    llvm::sys::path::append(full, name);
    return std::string(full);
  }
  /// Writes `text` as job.yaml and reads it; the error text or "".
  std::string parse(const std::string &text, JobSpec *out = nullptr) {
    std::ofstream(path("job.yaml")) << text;
    llvm::Expected<JobSpec> job = parseJobFile(path("job.yaml"));
    if (!job)
      return llvm::toString(job.takeError());
    if (out)
      *out = *job;
    return "";
  }
  std::string parseDirectoryAsJobFile() {
    llvm::Expected<JobSpec> job = parseJobFile(path("b"));
    return job ? "" : llvm::toString(job.takeError());
  }
  llvm::SmallString<128> directory;
};

const char *const kJob = R"(name: ctr
bundle: b
data: d.tsv
samples: 8192
train_args: [--hash-buckets, "100"]
workers: {initial: 2, min: 1, max: 3}
ps_shards: {initial: 2, max: 3}
batch: {initial: 512, min: 256, max: 1024}
learning_rate: {rule: sqrt, warmup_steps: 4}
checkpoint: {every: 30s, keep: 3}
restart: {max_restarts: 5, backoff: 500ms, heartbeat_timeout: 1m}
)";

TEST_F(JobFileTest, ReadsEveryField) {
  JobSpec job;
  ASSERT_EQ(parse(kJob, &job), "");
  EXPECT_EQ(job.name, "ctr");
  EXPECT_EQ(job.bundle, path("b"));
  EXPECT_EQ(job.data, path("d.tsv"));
  EXPECT_EQ(job.samples, 8192);
  EXPECT_EQ(job.initial, (JobShape{2, 2, 512}));
  EXPECT_EQ(job.workers.min, 1);
  EXPECT_EQ(job.shards.min, 2); // min defaults to initial
  EXPECT_EQ(job.shards.max, 3);
  EXPECT_EQ(job.learningRateRule, LearningRateRule::Sqrt);
  EXPECT_EQ(job.warmupSteps, 4);
  EXPECT_EQ(job.checkpoint.every, "30s");
  EXPECT_DOUBLE_EQ(job.restart.backoffSeconds, 0.5);
  EXPECT_DOUBLE_EQ(job.restart.heartbeatTimeoutSeconds, 60);
  EXPECT_EQ(job.backend.kind, BackendKind::Mpirun);
  EXPECT_EQ(job.trainArgs.size(), 2u);
}

TEST_F(JobFileTest, GradientNoiseScaleIsOptional) {
  JobSpec job;
  ASSERT_EQ(parse(kJob, &job), "");
  EXPECT_EQ(job.gradientNoiseScale, 0);
  ASSERT_EQ(parse(std::string(kJob) + "gradient_noise_scale: 4000\n", &job),
            "");
  EXPECT_DOUBLE_EQ(job.gradientNoiseScale, 4000);
}

TEST_F(JobFileTest, StepsAreCountedAtTheInitialBatch) {
  std::string text = kJob;
  text.replace(text.find("samples: 8192"), 13, "steps: 10");
  JobSpec job;
  ASSERT_EQ(parse(text, &job), "");
  EXPECT_EQ(job.samples, 5120);
}

TEST_F(JobFileTest, NamesTheFieldAndLineOfEachMistake) {
  auto errorFor = [&](const std::string &from, const std::string &to) {
    std::string text = kJob;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return parse(text);
  };
  std::string error = errorFor("samples: 8192", "samples: 8192\nworker: 3");
  EXPECT_NE(error.find("job.yaml:5:1"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown key 'worker'"), std::string::npos) << error;

  error = errorFor("min: 1, max: 3", "min: 3, max: 2");
  EXPECT_NE(error.find("workers: min 3 is greater than max 2"),
            std::string::npos)
      << error;
  error = errorFor("rule: sqrt", "rule: cubic");
  EXPECT_NE(error.find("rule 'cubic' is not one of linear, sqrt, none"),
            std::string::npos)
      << error;
  error = errorFor("backoff: 500ms", "backoff: soon");
  EXPECT_NE(error.find("restart: backoff 'soon' is not a duration"),
            std::string::npos)
      << error;
  error = errorFor("bundle: b", "bundle: missing");
  EXPECT_NE(error.find("bundle '" + path("missing") + "' does not exist"),
            std::string::npos)
      << error;
  error = errorFor("[--hash-buckets", "[--steps, \"3\", --hash-buckets");
  EXPECT_NE(error.find("train_args: '--steps' is set by the job itself"),
            std::string::npos)
      << error;
  // Placed at the field (it said job.yaml:1:1 before 2026-12-02).
  error = errorFor("samples: 8192", "samples: 8192\nsteps: 3");
  EXPECT_NE(error.find("job.yaml:4:10: error: samples and steps are both "
                       "given; give the job's length as exactly one of them"),
            std::string::npos)
      << error;
  // A second document was dropped unread, its job never run.
  error = errorFor("restart: {max_restarts: 5, backoff: 500ms, "
                   "heartbeat_timeout: 1m}\n",
                   "restart: {max_restarts: 5}\n---\nname: other\n");
  EXPECT_NE(error.find("job.yaml:13:1: error: a second YAML document; a job "
                       "file holds one job"),
            std::string::npos)
      << error;
  for (const char *scale : {"-1", "nan", "1e999", "-inf"}) {
    error = errorFor("samples: 8192", std::string("samples: 8192\n"
                                                  "gradient_noise_scale: ") +
                                          scale);
    EXPECT_NE(error.find("gradient_noise_scale must be a finite number"),
              std::string::npos)
        << scale << ": " << error;
  }
  error = errorFor("name: ctr", "name: a b");
  EXPECT_NE(error.find("name 'a b' must be"), std::string::npos) << error;
  error = errorFor("name: ctr", "name: " + std::string(240, 'a'));
  EXPECT_NE(error.find("characters long; at most 128"), std::string::npos)
      << error;
  // A bound on staleness of a synchronous job was accepted and ignored.
  error = errorFor("name: ctr", "name: ctr\nstaleness: 2");
  EXPECT_NE(error.find("staleness bounds asynchronous training; add "
                       "consistency: async"),
            std::string::npos)
      << error;
  // "." and "..", which name directories, and any hidden name.
  for (const char *name : {".", "..", ".hidden"}) {
    error = errorFor("name: ctr", std::string("name: ") + name);
    EXPECT_NE(error.find("' must be letters, digits, '-', '_' or '.', "
                         "starting with a letter or digit"),
              std::string::npos)
        << error;
  }
  EXPECT_NE(parse("- a list\n"), "");
  // Nested 100,000 deep: LLVM's YAML reader would overflow the stack.
  error = errorFor("name: ctr", "name: " + std::string(100000, '[') +
                                    std::string(100000, ']'));
  EXPECT_NE(error.find("job.yaml:1:71: error: nested too deeply"),
            std::string::npos)
      << error;
  // The job's own checks point at the field, not at the file's start.
  error = errorFor("samples: 8192", "samples: -5");
  EXPECT_NE(error.find("job.yaml:4:10: error: samples must be 1 to 2^53"),
            std::string::npos)
      << error;
  error = errorFor("samples: 8192", "samples: !!str 8192");
  EXPECT_NE(error.find("job.yaml:4:16: error: YAML tags are not supported "
                       "here ('!!str')"),
            std::string::npos)
      << error;
  error = errorFor("samples: 8192", "samples: 18014398509481985");
  EXPECT_NE(error.find("samples must be 1 to 2^53"), std::string::npos)
      << error;
  // A value of the wrong type is named by the keys that lead to it and
  // said with the value (LLVM says "invalid number", "unexpected scalar").
  struct WrongType {
    const char *from, *to, *expected;
  };
  const WrongType wrongTypes[] = {
      {"samples: 8192", "steps: true",
       "job.yaml:4:8: error: steps: 'true' is not a number"},
      {"initial: 2, min: 1", "initial: x, min: 1",
       "job.yaml:6:20: error: workers: initial: 'x' is not a number"},
      {"name: ctr", "name: [a]",
       "job.yaml:1:8: error: name: expected a single value, got a list"},
      {"train_args: [--hash-buckets, \"100\"]", "train_args: [[1]]",
       "job.yaml:5:15: error: train_args[0]: expected a single value, got a "
       "list"},
      {"batch: {initial", "batch: 5\nx: {initial",
       "job.yaml:8:8: error: batch: expected a mapping ({key: value, ...}), "
       "got '5'"},
      {"backoff: 500ms", "backof: 500ms",
       "job.yaml:11:28: error: restart: unknown key 'backof'"},
      // A mapping's own check, at the key it names (it came at the
      // mapping's first key, max_restarts, a line above in block style).
      {"restart: {max_restarts: 5, backoff: 500ms, heartbeat_timeout: 1m}",
       "restart:\n  max_restarts: 5\n  backoff: 1x",
       "job.yaml:13:12: error: restart: backoff '1x' is not a duration"}};
  for (const WrongType &wrong : wrongTypes) {
    error = errorFor(wrong.from, wrong.to);
    EXPECT_NE(error.find(wrong.expected), std::string::npos) << error;
  }
  error = parseDirectoryAsJobFile();
  EXPECT_NE(error.find("cannot read job file '" + path("b") +
                       "': not a regular file"),
            std::string::npos)
      << error;
}

TEST_F(JobFileTest, ShapesMustFitTheBundlesBatch) {
  JobSpec job;
  ASSERT_EQ(parse(kJob, &job), "");
  EXPECT_FALSE(bool(checkJobAgainstBundle(job, 64)));
  llvm::Error error = checkJobAgainstBundle(job, 384);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error))
                .find("batch 512 is not a multiple of the bundle's batch 384"),
            std::string::npos);
  EXPECT_EQ(job.checkShape({3, 2, 256}, 128),
            "batch 256 holds 2 micro-batches of 128, fewer than the 3 "
            "workers (each needs at least one)");
  EXPECT_EQ(job.checkShape({4, 2, 512}, 64),
            "workers 4 is outside the job's range [1, 3]");
  EXPECT_EQ(job.checkShape({3, 3, 1024}, 64), "");
}

TEST_F(JobFileTest, ReadsTheHostfileWithTheJobFile) {
  // Open MPI's lines, tabs and comments included, are hosts.
  std::ofstream(path("hosts")) << "n1 slots=2 max_slots=4\n"
                                  "n2\tslots=1  # spare\n\n";
  const std::string withHosts =
      std::string(kJob) + "backend: {kind: mpirun, hostfile: hosts}\n";
  EXPECT_EQ(parse(withHosts), "");
  // Open MPI's other spellings: spaces around '=', cpu= and count= for
  // slots= (refused as malformed before 2026-12-03).
  std::ofstream(path("hosts")) << "n1 slots = 3\nn2 cpu=2 max-slots =4\n"
                                  "n3\tcount=1\n";
  llvm::Expected<std::vector<HostSlots>> hosts = readHostfile(path("hosts"));
  ASSERT_TRUE(bool(hosts)) << llvm::toString(hosts.takeError());
  ASSERT_EQ(hosts->size(), 3u);
  EXPECT_EQ((*hosts)[0].slots, 3);
  EXPECT_EQ((*hosts)[1].slots, 2);
  EXPECT_EQ((*hosts)[2].slots, 1);
  const std::pair<const char *, std::string> refused[] = {
      // A TSV given by mistake failed only when mpirun started.
      {"n1 slots=2\n1\t0.5\t7\n",
       "hostfile '" + path("hosts") +
           "', line 2: '0.5' is not slots=N or max_slots=N"},
      {"n1,n2 slots=2\n", "line 1: 'n1,n2' is not a host name"},
      // What Open MPI refuses at every start, which spent the whole
      // restart budget before 2026-12-02.
      {"n1 slots=2\n# more\nn1 slots=2\n",
       "line 3: host 'n1' is named on line 1 too; give each host once, with "
       "all its slots"},
      {"n1 slots=4 max_slots=1\n", "line 1: max_slots=1 is below slots=4"},
      {"n1 slots = two\n", "line 1: slots='two' must be a whole number"},
      {"n1 cores=4\n", "line 1: 'cores=4' is not slots=N or max_slots=N"}};
  for (const auto &[contents, message] : refused) {
    std::ofstream(path("hosts")) << contents;
    EXPECT_NE(parse(withHosts).find(message), std::string::npos)
        << parse(withHosts);
  }
  // A directory read as no line ("names no host").
  std::filesystem::create_directories(path("hostdir"));
  const std::string withDirectory =
      std::string(kJob) + "backend: {kind: mpirun, hostfile: hostdir}\n";
  EXPECT_NE(parse(withDirectory)
                .find("cannot read hostfile '" + path("hostdir") +
                      "': not a regular file"),
            std::string::npos)
      << parse(withDirectory);
}

TEST_F(JobFileTest, RefusesEmptyPaths) {
  std::string text = kJob;
  text.replace(text.find("data: d.tsv"), 11, "data: \"\"");
  EXPECT_NE(parse(text).find("data is empty"), std::string::npos)
      << parse(text);
  text = kJob;
  text.replace(text.find("bundle: b"), 9, "bundle: ''");
  EXPECT_NE(parse(text).find("bundle is empty"), std::string::npos)
      << parse(text);
}

TEST(Durations, ReadUnits) {
  EXPECT_EQ(parseDuration("30"), 30.0);
  EXPECT_EQ(parseDuration("30s"), 30.0);
  EXPECT_EQ(parseDuration("2m"), 120.0);
  EXPECT_EQ(parseDuration("250ms"), 0.25);
  EXPECT_EQ(parseDuration("1h"), 3600.0);
  EXPECT_FALSE(parseDuration("-1s"));
  EXPECT_FALSE(parseDuration("s"));
  EXPECT_FALSE(parseDuration("3x"));
}

TEST(LearningRate, FollowsTheBatch) {
  EXPECT_DOUBLE_EQ(learningRateScale(LearningRateRule::Linear, 1024, 512), 2);
  EXPECT_DOUBLE_EQ(learningRateScale(LearningRateRule::Sqrt, 2048, 512), 2);
  EXPECT_DOUBLE_EQ(learningRateScale(LearningRateRule::None, 2048, 512), 1);
}

} // namespace
