//===- SupervisorTest.cpp - Restart, blame, exclusion, resize, hang -------===//
//
// The supervisor against a scripted backend and job directory: each attempt
// runs for some polls, moving the workers' step (and checkpointing every
// other step), then ends as its scenario says; the stop file ends it as the
// ranks would, after a checkpoint.
//
//===----------------------------------------------------------------------===//

#include "heterps/Jobs/Supervisor.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

using namespace heterps::jobs;

namespace {

struct Scenario {
  int polls = 5;    // polls before the attempt ends by itself
  int exitCode = 0; // how it ends
  std::string log;  // what the launcher printed
  std::string host = "h1";
  bool hangs = false;       // the step stops moving and shard 1 goes silent
  bool failsOnStop = false; // asked to stop, it fails with exitCode
};

class ScriptedJob : public Backend, public JobProbe {
public:
  std::vector<Scenario> scenarios;
  std::vector<LaunchRequest> starts;
  std::function<std::optional<int>(const std::vector<std::string> &)> room =
      [](const std::vector<std::string> &) { return std::nullopt; };
  std::function<void(int attempt, int poll)> onPoll = [](int, int) {};
  int64_t samplesPerStep = 512, totalSamples = 0;
  int64_t step = 0;
  std::vector<CheckpointInfo> checkpoints;
  std::string stopFile;

  BackendKind kind() const override { return BackendKind::Mpirun; }
  llvm::Error start(const LaunchRequest &request) override {
    starts.push_back(request);
    std::ofstream(request.logPath) << current().log;
    for (const auto &[name, value] : request.environment)
      if (name == "HETERPS_STOP_FILE")
        stopFile = value;
    step = checkpoints.empty() ? 0 : checkpoints.back().step;
    samplesPerStep = request.shape.batch;
    polls = 0;
    running = true;
    return llvm::Error::success();
  }
  AttemptStatus poll() override {
    AttemptStatus status;
    if (!running)
      return ended;
    onPoll(int(starts.size()), ++polls);
    if (llvm::sys::fs::exists(stopFile)) {
      if (current().failsOnStop)
        return end(AttemptState::Failed, current().exitCode);
      checkpoint();
      return end(AttemptState::Succeeded, 0);
    }
    if (polls >= current().polls && !current().hangs) {
      if (current().exitCode == 0) {
        // The last step may be short: the job ends on its sample count.
        const int64_t left = totalSamples - samplesDone();
        step = (checkpoints.empty() ? 0 : checkpoints.back().step) +
               (left + samplesPerStep - 1) / samplesPerStep;
        checkpoints.push_back(
            {"final", step, totalSamples, "end", unixSeconds()});
        return end(AttemptState::Succeeded, 0);
      }
      return end(AttemptState::Failed, current().exitCode);
    }
    if (!current().hangs || polls < 3) {
      ++step;
      if (step % 2 == 0)
        checkpoint();
    }
    return status;
  }
  void terminate() override {
    if (running)
      end(AttemptState::Failed, 137);
  }
  std::optional<int>
  capacity(const std::vector<std::string> &excluded) override {
    return room(excluded);
  }
  std::string attemptId() const override { return "scripted"; }

  std::vector<RankHeartbeat> heartbeats(const std::string &) override {
    double now = unixSeconds();
    RankHeartbeat worker{"worker", 0, 1, current().host, step, now};
    RankHeartbeat shard{"shard", 1,    2,
                        "h9",    step, current().hangs ? now - 30 : now};
    return {worker, shard};
  }
  std::optional<CheckpointInfo> newestCheckpoint(const std::string &,
                                                 std::string &) override {
    if (checkpoints.empty())
      return std::nullopt;
    return checkpoints.back();
  }
  llvm::Expected<std::string>
  corruptNewestCheckpoint(const std::string &) override {
    checkpoints.pop_back();
    return std::string("newest");
  }

private:
  int64_t samplesDone() const {
    return checkpoints.empty() ? 0 : checkpoints.back().samples;
  }
  const Scenario &current() const {
    return scenarios[std::min(starts.size(), scenarios.size()) - 1];
  }
  void checkpoint() {
    int64_t samples = checkpoints.empty() ? 0 : checkpoints.back().samples;
    int64_t fromStep = checkpoints.empty() ? 0 : checkpoints.back().step;
    samples += (step - fromStep) * samplesPerStep;
    checkpoints.push_back({"step-" + std::to_string(step), step, samples,
                           "line=" + std::to_string(samples), unixSeconds()});
  }
  AttemptStatus end(AttemptState state, int code) {
    running = false;
    ended.state = state;
    ended.exitCode = code;
    return ended;
  }
  int polls = 0;
  bool running = false;
  AttemptStatus ended;
};

class SupervisorTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("supervisor", directory));
    job.name = "t";
    job.bundle = "/b";
    job.data = "/d.tsv";
    job.initial = {2, 2, 512};
    job.workers = {1, 3};
    job.shards = {1, 2};
    job.batch = {256, 1024};
    job.samples = 512 * 40;
    job.restart.maxRestarts = 3;
    job.restart.backoffSeconds = 0.01;
    job.restart.heartbeatTimeoutSeconds = 0.3;
    job.checkpoint.every = "2";
    options.jobDirectory = std::string(directory);
    options.heterps = "/bin/heterps";
    options.microBatch = 64;
    options.pollSeconds = 0.005;
    engine.totalSamples = job.samples;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }
  JobReport run() {
    Supervisor supervisor(job, options, engine, engine, log);
    return supervisor.run();
  }
  /// The job succeeded in one attempt of 3 workers at a batch of 1024, the
  /// shape of resize `id`.
  void expectOneAttemptResizedToThreeWorkers(const JobReport &report,
                                             const std::string &id) {
    EXPECT_EQ(report.outcome, "succeeded") << log.str();
    ASSERT_EQ(engine.starts.size(), 1u);
    EXPECT_EQ(engine.starts[0].shape, (JobShape{3, 2, 1024}));
    ASSERT_EQ(report.resizes.size(), 1u);
    EXPECT_EQ(report.resizes[0].id, id);
  }
  /// `job resize` to 3 workers and a batch of 1024 during the first attempt.
  void resizeToThreeWorkersAtPoll5() {
    engine.onPoll = [this](int attempt, int poll) {
      if (attempt == 1 && poll == 5)
        std::ofstream(std::string(directory) + "/resize-request.json")
            << resizeRequestJson({"r1", 3, 0, 1024});
    };
  }
  llvm::SmallString<128> directory;
  JobSpec job;
  SupervisorOptions options;
  ScriptedJob engine;
  std::ostringstream log;
};

const char *const kWorkerKilled =
    "mpirun noticed that process rank 2 with PID 7 on node h1 exited on "
    "signal 9 (Killed).\n";

TEST_F(SupervisorTest, RestartsFromTheCheckpointAndBlamesTheRank) {
  options.faults.rankFaults = {{"kill:worker:0@6", RankFault::Rank::Worker, 0},
                               {"kill:shard:1@30", RankFault::Rank::Shard, 1}};
  engine.scenarios = {{7, 1,
                       "heterps: fault injection: kill:worker:0@6: worker 0 "
                       "on h1 kills itself after step 6\n" +
                           std::string(kWorkerKilled)},
                      {5, 0}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  EXPECT_EQ(report.restarts, 1);
  ASSERT_EQ(report.failures.size(), 1u);
  const FailureRecord &failure = report.failures[0];
  EXPECT_EQ(failure.kind, "signal");
  EXPECT_EQ(failure.role, "worker"); // rank 2 after 2 shards
  EXPECT_EQ(failure.index, 0);
  EXPECT_EQ(failure.signal, 9);
  EXPECT_EQ(failure.host, "h1");
  // Six steps ran, the checkpoint is at 6: nothing to redo. With the fault
  // one step past a checkpoint, one step.
  EXPECT_EQ(failure.step, 6);
  EXPECT_EQ(failure.resumedFromStep, 6);
  EXPECT_EQ(failure.stepsRedone, 0);
  ASSERT_EQ(engine.starts.size(), 2u);
  EXPECT_EQ(report.samples, job.samples);
  // A fault fires once: the next attempt gets the ones still to come.
  auto fault = [](const LaunchRequest &request) {
    for (const auto &[name, value] : request.environment)
      if (name == "HETERPS_FAULT")
        return value;
    return std::string();
  };
  EXPECT_EQ(fault(engine.starts[0]), "kill:worker:0@6;kill:shard:1@30");
  EXPECT_EQ(fault(engine.starts[1]), "kill:shard:1@30");
  std::ifstream reportFile(std::string(directory) + "/report.json");
  EXPECT_TRUE(reportFile.good());
}

TEST_F(SupervisorTest, CountsStepsRedoneSinceTheCheckpoint) {
  engine.scenarios = {{8, 1, kWorkerKilled}, {5, 0}};
  JobReport report = run();
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].step, 7);
  EXPECT_EQ(report.failures[0].resumedFromStep, 6);
  EXPECT_EQ(report.failures[0].stepsRedone, 1);
  EXPECT_EQ(report.stepsRedone, 1);
  EXPECT_GT(report.secondsLost, 0);
}

TEST_F(SupervisorTest, GivesUpAfterMaxRestarts) {
  engine.scenarios = {{3, 1, ""}};
  job.restart.maxRestarts = 2;
  JobReport report = run();
  EXPECT_EQ(report.outcome, "failed");
  EXPECT_EQ(engine.starts.size(), 3u);
  EXPECT_EQ(report.restarts, 2);
  EXPECT_EQ(report.failures[0].kind, "lost");
  EXPECT_NE(report.message.find("max_restarts 2"), std::string::npos);
}

TEST_F(SupervisorTest, AnErrorOfItsOwnBeforeTheFirstStepIsNotRestarted) {
  // The trainer refused a flag: every restart would fail alike.
  engine.scenarios = {{1, 1,
                       "heterps run: error: --no-such-flag is unknown\n"
                       "Process name: [[5012,1],2]\n  Exit code:    1\n"}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "failed");
  EXPECT_EQ(engine.starts.size(), 1u);
  EXPECT_EQ(report.restarts, 0);
  EXPECT_NE(report.message.find("attempt 1 failed before its first step: "
                                "heterps run: --no-such-flag is unknown"),
            std::string::npos)
      << report.message;
}

TEST_F(SupervisorTest, AFailureAfterStepsIsRestartedEvenWithAnError) {
  // Training had begun: the error may pass (a full disk freed, a file
  // back), so the job restarts as after any failure.
  engine.scenarios = {{4, 1,
                       "heterps run: error: cannot write a checkpoint\n"
                       "Process name: [[5012,1],2]\n  Exit code:    1\n"},
                      {5, 0, ""}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded");
  EXPECT_EQ(report.restarts, 1);
}

/// An earlier run in `shape` at learning-rate scale `scale`, after
/// `attempts` attempts.
EarlierRun earlierRun(JobShape shape, double scale, int attempts) {
  EarlierRun earlier;
  earlier.shape = shape;
  earlier.learningRate.scale = earlier.learningRate.warmupFrom = scale;
  earlier.attempts = attempts;
  return earlier;
}

TEST_F(SupervisorTest, GoesOnWhereAnEarlierSupervisorLeftTheJob) {
  engine.scenarios = {{5, 0, ""}};
  options.earlier = earlierRun({3, 2, 1024}, 2.0, 4);
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded");
  ASSERT_EQ(engine.starts.size(), 1u);
  EXPECT_EQ(engine.starts[0].attempt, 5);
  EXPECT_EQ(engine.starts[0].shape, (JobShape{3, 2, 1024}));
  EXPECT_EQ(report.earlierAttempts, 4);
  EXPECT_NE(engine.starts[0].logPath.find("attempt-5.log"), std::string::npos);
  // A shape the job file no longer allows: the initial one, said so.
  options.earlier = earlierRun({9, 2, 1024}, 2.0, 4);
  engine.starts.clear();
  engine.checkpoints.clear();
  run();
  ASSERT_EQ(engine.starts.size(), 1u);
  EXPECT_EQ(engine.starts[0].shape, job.initial);
  EXPECT_NE(log.str().find("which the job file no longer allows"),
            std::string::npos);
  // --shape-from-job-file (the elastic service): the job file's shape,
  // the earlier learning rate ramped to it.
  options.earlier = earlierRun({3, 2, 1024}, 2.0, 4);
  options.shapeFromJobFile = true;
  job.warmupSteps = 4;
  engine.starts.clear();
  engine.checkpoints.clear();
  run();
  ASSERT_EQ(engine.starts.size(), 1u);
  EXPECT_EQ(engine.starts[0].shape, job.initial);
  const std::vector<std::string> &command = engine.starts[0].command;
  EXPECT_NE(std::find(command.begin(), command.end(), "--lr-warmup=2:0:4"),
            command.end());
}

// Attempt logs are never overwritten, even where state.json says fewer
// attempts than the directory holds logs of (damaged, or lost).
TEST_F(SupervisorTest, NumbersAttemptsAfterTheLogsThere) {
  std::ofstream(std::string(directory) + "/attempt-7.log") << "earlier\n";
  engine.scenarios = {{5, 0, ""}};
  options.earlier = earlierRun(job.initial, 1.0, 2);
  JobReport report = run();
  ASSERT_EQ(engine.starts.size(), 1u);
  EXPECT_EQ(engine.starts[0].attempt, 8);
  EXPECT_EQ(report.earlierAttempts, 7);
}

// A supervisor stopped mid-ramp leaves the ramp in state.json, and the
// next one goes on with it: it kept the scale only, and the job jumped to
// it at once.
TEST_F(SupervisorTest, AnEarlierSupervisorsWarmUpGoesOn) {
  llvm::json::Object state{
      {"shape",
       llvm::json::Object{{"workers", 3}, {"ps_shards", 2}, {"batch", 1024}}},
      {"attempt", 2},
      {"learning_rate_scale", 2.0},
      {"learning_rate_warmup",
       llvm::json::Object{{"from", 1.0}, {"start", 3}, {"end", 203}}}};
  std::optional<EarlierRun> earlier = parseEarlierRun(state);
  ASSERT_TRUE(earlier);
  EXPECT_DOUBLE_EQ(earlier->learningRate.at(103), 1.5);
  options.earlier = earlier;
  engine.scenarios = {{5, 0, ""}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  const std::vector<std::string> &command = engine.starts[0].command;
  EXPECT_NE(std::find(command.begin(), command.end(), "--lr-warmup=1:3:203"),
            command.end());
  // A damaged ramp is none: the scale alone.
  (*state.getObject("learning_rate_warmup"))["end"] = 1;
  EXPECT_EQ(parseEarlierRun(state)->learningRate.flags(),
            std::vector<std::string>{"--lr-scale=2"});
}

// The supervisor is killed while the ranks stop for a resize: state.json
// names the resize, and the next supervisor applies it (it came back in the
// old shape before 2026-12-02).
TEST_F(SupervisorTest, AResizeBeingAppliedOutlivesItsSupervisor) {
  llvm::json::Object state{
      {"shape",
       llvm::json::Object{{"workers", 2}, {"ps_shards", 2}, {"batch", 512}}},
      {"attempt", 1},
      {"resizing_id", "r9"},
      {"resizing_to",
       llvm::json::Object{{"workers", 3}, {"ps_shards", 2}, {"batch", 1024}}}};
  options.earlier = parseEarlierRun(state);
  ASSERT_TRUE(options.earlier && options.earlier->resizingTo);
  engine.scenarios = {{5, 0}};
  expectOneAttemptResizedToThreeWorkers(run(), "r9");
}

// After the job trained, two restarts in a row fail before their first
// step with the same error of heterps's own (its data moved away): the job
// fails naming it. It spent every restart and said only "gave up".
TEST_F(SupervisorTest, TheSameErrorTwiceBeforeAStepEndsTheRestarts) {
  const std::string moved =
      "heterps run: error: cannot read 'd2.tsv': No such file or directory\n";
  engine.scenarios = {
      {4, 137, kWorkerKilled}, {1, 1, moved}, {1, 1, moved}, {5, 0, ""}};
  job.restart.maxRestarts = 5;
  JobReport report = run();
  EXPECT_EQ(report.outcome, "failed") << log.str();
  EXPECT_EQ(engine.starts.size(), 3u);
  EXPECT_NE(report.message.find("attempts 2 and 3 failed before their first "
                                "step with the same error: heterps run: "
                                "cannot read 'd2.tsv'"),
            std::string::npos)
      << report.message;
  EXPECT_NE(report.failures.back().detail.find("cannot read 'd2.tsv'"),
            std::string::npos)
      << report.failures.back().detail;
}

// A full disk fails the restarts alike too, but may be freed during the
// back-off, and its ranks could not write the heartbeats that show their
// steps: the restarts are spent on it (the job failed at once, with
// restarts left, before 2026-12-02).
TEST_F(SupervisorTest, AFullDiskIsRestartedUntilItPasses) {
  const std::string full = "heterps run: error: checkpoint: cannot write "
                           "'ck/step-1120.tmp/dense.bin': No space left on "
                           "device\n";
  engine.scenarios = {
      {4, 137, kWorkerKilled}, {1, 1, full}, {1, 1, full}, {5, 0, ""}};
  job.restart.maxRestarts = 5;
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << report.message;
  EXPECT_EQ(engine.starts.size(), 4u);
  EXPECT_NE(report.failures.back().detail.find("No space left on device"),
            std::string::npos)
      << report.failures.back().detail;
}

// The attempt fails while it stops for a resize: the resize applies at the
// restart. It was dropped, and the job came back in its old shape.
TEST_F(SupervisorTest, AResizeOutlivesAFailureWhileStopping) {
  Scenario failing{1000, 137, kWorkerKilled};
  failing.failsOnStop = true;
  engine.scenarios = {failing, {5, 0}};
  resizeToThreeWorkersAtPoll5();
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  EXPECT_EQ(report.restarts, 1);
  ASSERT_EQ(report.resizes.size(), 1u);
  EXPECT_EQ(report.resizes[0].to, (JobShape{3, 2, 1024}));
  ASSERT_EQ(engine.starts.size(), 2u);
  EXPECT_EQ(engine.starts[1].shape, (JobShape{3, 2, 1024}));
  EXPECT_NE(log.str().find("resize r1 applies at the restart"),
            std::string::npos);
}

// A resize waiting when the supervisor starts (asked for with --wait 0,
// then the job was stopped and run again) applies to its first attempt:
// it was deleted unseen.
TEST_F(SupervisorTest, AResizeWaitingAtTheStartApplies) {
  std::ofstream(std::string(directory) + "/resize-request.json")
      << resizeRequestJson({"r0", 3, 0, 1024});
  engine.scenarios = {{5, 0}};
  expectOneAttemptResizedToThreeWorkers(run(), "r0");
}

// A job that trained, then resized, meets a passing failure before the
// resized attempt's first step: it restarts. Its attempts had all ended
// in resizes, so it counted as never having trained, and the job failed.
TEST_F(SupervisorTest, APassingFailureAfterAResizeIsRestarted) {
  engine.scenarios = {
      {1000, 0},
      {1, 1, "heterps run: error: cannot read 'data.tsv': No such file\n"},
      {5, 0}};
  resizeToThreeWorkersAtPoll5();
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  EXPECT_EQ(report.restarts, 1);
  EXPECT_EQ(engine.starts.size(), 3u);
}

// A resize followed at once by another: state.json keeps the first among
// the applied ones, where last_resize_id names only the second (the first
// one's `job resize` waited for the job's end, then called it lost).
TEST_F(SupervisorTest, StateListsEveryAppliedResize) {
  engine.scenarios = {{1000, 0}, {1000, 0}, {1000, 0}};
  engine.onPoll = [this](int attempt, int poll) {
    if (poll != 5 || attempt > 2)
      return;
    std::ofstream(std::string(directory) + "/resize-request.json")
        << resizeRequestJson(attempt == 1 ? ResizeRequest{"r1", 3, 0, 1024}
                                          : ResizeRequest{"r2", 2, 0, 512});
  };
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  ASSERT_EQ(report.resizes.size(), 2u) << log.str();
  std::ifstream stateFile(std::string(directory) + "/state.json");
  std::stringstream text;
  text << stateFile.rdbuf();
  llvm::Expected<llvm::json::Value> state = llvm::json::parse(text.str());
  ASSERT_TRUE(bool(state)) << llvm::toString(state.takeError());
  const llvm::json::Array *applied =
      state->getAsObject()->getArray("applied_resize_ids");
  ASSERT_TRUE(applied);
  ASSERT_EQ(applied->size(), 2u);
  EXPECT_EQ((*applied)[0].getAsString(), llvm::StringRef("r1"));
  EXPECT_EQ((*applied)[1].getAsString(), llvm::StringRef("r2"));
}

TEST_F(SupervisorTest, AStopDuringTheBackOffStartsNoAttempt) {
  engine.scenarios = {{3, 137, kWorkerKilled}, {5, 0, ""}};
  job.restart.backoffSeconds = 5;
  Supervisor supervisor(job, options, engine, engine, log);
  // Asked once the supervisor says it is restarting.
  std::thread asker([&] {
    const std::string state = std::string(directory) + "/state.json";
    for (int i = 0; i < 2000; ++i) {
      std::ifstream in(state);
      std::string text((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      if (text.find("\"restarting\"") != std::string::npos)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    supervisor.requestStop();
  });
  JobReport report = supervisor.run();
  asker.join();
  EXPECT_EQ(report.outcome, "stopped");
  EXPECT_EQ(engine.starts.size(), 1u);
  EXPECT_EQ(report.message, "stopped on request while restarting");
}

TEST_F(SupervisorTest, LeavesOutAFailingHostAndShrinks) {
  // Three slots on each of h1 and h2; 2 shards + 3 workers fit on both.
  job.initial.workers = 3;
  engine.room = [](const std::vector<std::string> &excluded) {
    return 6 - 3 * int(excluded.size());
  };
  engine.scenarios = {{3, 1, kWorkerKilled, "h2"},
                      {3, 1, kWorkerKilled, "h2"},
                      {5, 0, "", "h1"}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  ASSERT_EQ(engine.starts.size(), 3u);
  EXPECT_EQ(engine.starts[1].shape.workers, 3);
  EXPECT_EQ(engine.starts[2].shape.workers, 1); // 3 slots - 2 shards
  EXPECT_EQ(engine.starts[2].excludedHosts, std::vector<std::string>{"h2"});
  EXPECT_EQ(report.excludedHosts, std::vector<std::string>{"h2"});
}

TEST_F(SupervisorTest, WaitsBoundedlyForCapacityThenFails) {
  engine.room = [](const std::vector<std::string> &excluded) {
    return excluded.empty() ? 4 : 1;
  };
  job.restart.excludeHostAfter = 1;
  job.restart.capacityWaitSeconds = 0.5;
  engine.scenarios = {{3, 1, kWorkerKilled, "h2"}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "failed");
  EXPECT_EQ(engine.starts.size(), 1u);
  EXPECT_NE(report.message.find("fewer than the job's minimum of 1 workers"),
            std::string::npos)
      << report.message;
  // The wait started no attempt: the next supervisor numbers on from 1.
  std::ifstream in(std::string(directory) + "/state.json");
  std::string state((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  EXPECT_NE(state.find("\"attempt\":1,"), std::string::npos) << state;
}

TEST_F(SupervisorTest, ResizesAtAStepBoundaryAndRampsTheLearningRate) {
  job.warmupSteps = 4;
  engine.scenarios = {{1000, 0}, {5, 0}};
  resizeToThreeWorkersAtPoll5();
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  EXPECT_EQ(report.restarts, 0);
  ASSERT_EQ(report.resizes.size(), 1u);
  EXPECT_EQ(report.resizes[0].to, (JobShape{3, 2, 1024}));
  ASSERT_EQ(engine.starts.size(), 2u);
  EXPECT_EQ(engine.starts[1].shape, (JobShape{3, 2, 1024}));
  const int64_t at = report.resizes[0].atStep;
  const std::vector<std::string> &command = engine.starts[1].command;
  auto has = [&](const std::string &word) {
    return std::find(command.begin(), command.end(), word) != command.end();
  };
  EXPECT_TRUE(has("--lr-scale=2"));
  EXPECT_TRUE(has("--lr-warmup=1:" + std::to_string(at) + ":" +
                  std::to_string(at + 4)));
  EXPECT_TRUE(has("--samples"));
  EXPECT_EQ(report.samples, job.samples);
}

TEST_F(SupervisorTest, AFaultWaitsForAShapeThatRunsItsRank) {
  // Worker 2 exists only after the resize to 3 workers: the first attempt
  // (2 workers, whose launch would refuse the spec) does not get it.
  options.faults.rankFaults = {
      {"kill:worker:2@30", RankFault::Rank::Worker, 2},
      {"kill:shard:1@40", RankFault::Rank::Shard, 1},
      {"kill-host:h1@50", RankFault::Rank::EveryRankOnHost, 0}};
  engine.scenarios = {{1000, 0}, {5, 0}};
  resizeToThreeWorkersAtPoll5();
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  ASSERT_EQ(engine.starts.size(), 2u);
  auto faultsOf = [](const LaunchRequest &request) {
    for (const auto &[name, value] : request.environment)
      if (name == "HETERPS_FAULT")
        return value;
    return std::string("(none)");
  };
  EXPECT_EQ(faultsOf(engine.starts[0]), "kill:shard:1@40;kill-host:h1@50");
  EXPECT_EQ(faultsOf(engine.starts[1]),
            "kill:worker:2@30;kill:shard:1@40;kill-host:h1@50");
}

TEST_F(SupervisorTest, RefusesAResizeOutsideTheRanges) {
  engine.scenarios = {{30, 0}};
  engine.onPoll = [&](int attempt, int poll) {
    if (poll == 3)
      std::ofstream(std::string(directory) + "/resize-request.json")
          << resizeRequestJson({"r2", 9, 0, 0});
  };
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded");
  EXPECT_TRUE(report.resizes.empty());
  EXPECT_NE(log.str().find("resize r2 refused: workers 9 is outside the "
                           "job's range [1, 3]"),
            std::string::npos)
      << log.str();
}

TEST_F(SupervisorTest, NamesTheSilentRankOfAHungJob) {
  engine.scenarios = {{5, 0, "", "h1", /*hangs=*/true}, {5, 0}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded") << log.str();
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].kind, "hang");
  EXPECT_EQ(report.failures[0].role, "shard");
  EXPECT_EQ(report.failures[0].index, 1);
  EXPECT_EQ(report.failures[0].host, "h9");
}

TEST_F(SupervisorTest, FallsBackOnTheCheckpointBeforeACorruptOne) {
  options.faults.corruptCheckpointOnRestart = true;
  engine.scenarios = {{8, 1, kWorkerKilled}, {5, 0}};
  JobReport report = run();
  EXPECT_EQ(report.outcome, "succeeded");
  // Checkpoints at 2, 4, 6; 6 is damaged, so 4 is resumed.
  EXPECT_EQ(report.failures[0].resumedFromStep, 4);
  EXPECT_EQ(report.failures[0].stepsRedone, 3);
}

TEST(Policies, BackoffDoublesUpToTheCap) {
  RestartPolicy policy;
  policy.backoffSeconds = 1;
  policy.maxBackoffSeconds = 5;
  EXPECT_EQ(backoffSeconds(policy, 1), 1);
  EXPECT_EQ(backoffSeconds(policy, 2), 2);
  EXPECT_EQ(backoffSeconds(policy, 3), 4);
  EXPECT_EQ(backoffSeconds(policy, 4), 5);
}

TEST(Policies, WarmupRampsLinearly) {
  LearningRateSchedule schedule{2, 1, 10, 14};
  EXPECT_DOUBLE_EQ(schedule.at(10), 1);
  EXPECT_DOUBLE_EQ(schedule.at(11), 1.25);
  EXPECT_DOUBLE_EQ(schedule.at(14), 2);
  EXPECT_DOUBLE_EQ(schedule.at(20), 2);
  EXPECT_EQ(schedule.flags(),
            (std::vector<std::string>{"--lr-scale=2", "--lr-warmup=1:10:14"}));
  EXPECT_TRUE(LearningRateSchedule{}.flags().empty());
}

TEST(Policies, FitShapeDropsWorkersFirst) {
  JobSpec job;
  job.workers = {2, 4};
  job.shards = {1, 2};
  EXPECT_EQ(fitShape(job, {4, 2, 512}, std::nullopt), (JobShape{4, 2, 512}));
  EXPECT_EQ(fitShape(job, {4, 2, 512}, 5), (JobShape{3, 2, 512}));
  EXPECT_EQ(fitShape(job, {4, 2, 512}, 3), (JobShape{2, 1, 512}));
  EXPECT_FALSE(fitShape(job, {4, 2, 512}, 2));
}

} // namespace
