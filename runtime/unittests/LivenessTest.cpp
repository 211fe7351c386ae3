//===- LivenessTest.cpp - Heartbeats, the stop file, fault injection ------===//
//
// What a supervisor relies on of every rank: the heartbeat file's line and
// its updates, the stop file, one warning for a heartbeat that cannot be
// written, and the faults of HETERPS_FAULT (parsed, matched to a rank, and
// carried out in a child process: killed, stopped, exited 3).
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/FaultInjection.h"
#include "heterps/Runtime/Heartbeat.h"
#include "heterps/Runtime/Types.h"

#include "TestSupport.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace heterps::rt;
using namespace heterps::rt::train;
using namespace heterps::rt::testsupport;

namespace {

/// Polls `done` for up to 10 s.
template <typename Done> bool eventually(Done done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

/// The key=value words of a heartbeat line.
std::map<std::string, std::string> words(const std::string &line) {
  std::map<std::string, std::string> result;
  std::istringstream stream(line);
  std::string word;
  while (stream >> word) {
    const size_t equals = word.find('=');
    result[word.substr(0, equals)] =
        equals == std::string::npos ? "" : word.substr(equals + 1);
  }
  return result;
}

std::string errorText(const std::string &specs) {
  try {
    parseFaultSpecs(specs);
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

TEST(Heartbeat, WritesPidHostStepAndTime) {
  ScratchDirectory scratch("heterps-liveness-test", currentTestName());
  HeartbeatOptions options;
  options.directory = scratch / "beats";
  options.intervalMs = 5;
  {
    Heartbeat heartbeat(RankRole::Shard, 3, options);
    EXPECT_EQ(heartbeat.path(), scratch / "beats/shard-3");
    heartbeat.setStep(7);
    ASSERT_TRUE(eventually([&] {
      return readText(heartbeat.path()).find("step=7") != std::string::npos;
    }));
    const std::string text = readText(heartbeat.path());
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;
    std::map<std::string, std::string> fields = words(text);
    EXPECT_EQ(fields.size(), 4u) << text;
    EXPECT_EQ(fields["pid"], processId());
    EXPECT_EQ(fields["host"], rankHost());
    EXPECT_EQ(fields["step"], "7");
    const double time = std::stod(fields["time"]);
    const double now = std::chrono::duration<double>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    EXPECT_NEAR(time, now, 5.0);
    EXPECT_EQ(fields["time"].size() - fields["time"].find('.'), 4u)
        << "seconds with milliseconds: " << fields["time"];
    heartbeat.setStep(8);
  }
  // The last beat, written as the thread stops, has the final step.
  EXPECT_EQ(words(readText(scratch / "beats/shard-3"))["step"], "8");
}

TEST(Heartbeat, ReadsBackWhatItWrites) {
  ScratchDirectory scratch("heterps-liveness-test", currentTestName());
  HeartbeatOptions options;
  options.directory = scratch / "beats";
  options.intervalMs = 5;
  {
    Heartbeat worker(RankRole::Worker, 1, options);
    Heartbeat shard(RankRole::Shard, 0, options);
    worker.setStep(12);
    shard.setStep(11);
  }
  // Not heartbeats: a temporary being replaced, and another file's format.
  writeText(scratch / "beats/.worker-2.tmp", "pid=1 host=h step=1 time=1\n");
  writeText(scratch / "beats/worker-3", "garbage\n");
  // A stray file whose index no int holds (std::stoi threw, and ended the
  // supervisor that read it).
  writeText(scratch / "beats/worker-99999999999",
            "pid=1 host=h step=1 time=1\n");
  std::vector<HeartbeatRecord> records = readHeartbeats(scratch / "beats");
  std::sort(records.begin(), records.end(),
            [](const auto &a, const auto &b) { return a.role < b.role; });
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].role, RankRole::Worker);
  EXPECT_EQ(records[0].index, 1);
  EXPECT_EQ(records[0].step, 12);
  EXPECT_EQ(records[0].host, rankHost());
  EXPECT_EQ(std::to_string(records[0].pid), processId());
  EXPECT_GT(records[0].time, 0);
  EXPECT_EQ(records[1].role, RankRole::Shard);
  EXPECT_EQ(records[1].step, 11);
  EXPECT_TRUE(readHeartbeats(scratch / "missing").empty());
}

TEST(Heartbeat, DoesNothingWithoutItsVariables) {
  ScopedEnvironment directory("HETERPS_HEARTBEAT_DIR", std::nullopt);
  ScopedEnvironment stop("HETERPS_STOP_FILE", std::nullopt);
  HeartbeatOptions options =
      HeartbeatOptions::fromEnvironment(RankRole::Worker);
  EXPECT_FALSE(options.active());
  Heartbeat heartbeat(RankRole::Worker, 0, options);
  heartbeat.setStep(3);
  EXPECT_EQ(heartbeat.path(), "");
  EXPECT_FALSE(heartbeat.stopRequested());
}

TEST(Heartbeat, ReadsItsEnvironment) {
  ScopedEnvironment directory("HETERPS_HEARTBEAT_DIR", "/tmp/beats");
  ScopedEnvironment stop("HETERPS_STOP_FILE", "/tmp/stop");
  {
    ScopedEnvironment interval("HETERPS_HEARTBEAT_INTERVAL_MS", "250");
    HeartbeatOptions worker =
        HeartbeatOptions::fromEnvironment(RankRole::Worker);
    EXPECT_EQ(worker.directory, "/tmp/beats");
    EXPECT_EQ(worker.intervalMs, 250);
    EXPECT_EQ(worker.stopFile, "/tmp/stop");
    // Workers stop on request; shards and stage ranks follow them.
    EXPECT_EQ(HeartbeatOptions::fromEnvironment(RankRole::Shard).stopFile, "");
    EXPECT_EQ(HeartbeatOptions::fromEnvironment(RankRole::Stage).stopFile, "");
  }
  for (const char *bad : {"0", "-5", "1.5", "fast"}) {
    ScopedEnvironment interval("HETERPS_HEARTBEAT_INTERVAL_MS", bad);
    try {
      HeartbeatOptions::fromEnvironment(RankRole::Worker);
      ADD_FAILURE() << "accepted interval " << bad;
    } catch (const Error &error) {
      EXPECT_NE(
          std::string(error.what())
              .find("HETERPS_HEARTBEAT_INTERVAL_MS='" + std::string(bad) + "'"),
          std::string::npos)
          << error.what();
    }
  }
}

TEST(Heartbeat, SeesTheStopFileAppear) {
  ScratchDirectory scratch("heterps-liveness-test", currentTestName());
  HeartbeatOptions options;
  options.stopFile = scratch / "stop";
  options.intervalMs = 5;
  Heartbeat heartbeat(RankRole::Worker, 0, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(heartbeat.stopRequested());
  writeText(scratch / "stop", "");
  EXPECT_TRUE(eventually([&] { return heartbeat.stopRequested(); }));
  // Once seen it stays seen, even if the file goes.
  std::filesystem::remove(scratch / "stop");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(heartbeat.stopRequested());
}

TEST(Heartbeat, WarnsOnceWhenItCannotWrite) {
  ScratchDirectory scratch("heterps-liveness-test", currentTestName());
  writeText(scratch / "file", "");
  HeartbeatOptions options;
  options.directory = scratch / "file/beats"; // under a plain file
  options.intervalMs = 2;
  ::testing::internal::CaptureStderr();
  {
    Heartbeat heartbeat(RankRole::Worker, 1, options);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  const std::string expected = "heterps: warning: heartbeat: cannot write '" +
                               (scratch / "file/beats/worker-1") + "'";
  const size_t first = warnings.find(expected);
  ASSERT_NE(first, std::string::npos) << warnings;
  EXPECT_EQ(warnings.find(expected, first + 1), std::string::npos)
      << "warned more than once: " << warnings;
}

TEST(Heartbeat, HostIsSlurmsNodeNameAsOneWord) {
  {
    ScopedEnvironment node("SLURMD_NODENAME", "gpu-node07.cluster");
    EXPECT_EQ(rankHost(), "gpu-node07.cluster");
  }
  {
    ScopedEnvironment node("SLURMD_NODENAME", "odd name:1");
    EXPECT_EQ(rankHost(), "odd_name_1");
  }
  ScopedEnvironment node("SLURMD_NODENAME", std::nullopt);
  EXPECT_FALSE(rankHost().empty());
}

TEST(FaultSpecs, ParseEveryForm) {
  std::vector<FaultSpec> specs = parseFaultSpecs(
      " kill:worker:1@7; hang:shard:0@3 ;exit:worker:2@12;kill-host:node-3@5;"
      "kill:stage:4@1;");
  ASSERT_EQ(specs.size(), 5u);
  EXPECT_EQ(specs[0].action, FaultAction::Kill);
  EXPECT_EQ(specs[0].role, RankRole::Worker);
  EXPECT_EQ(specs[0].index, 1);
  EXPECT_EQ(specs[0].step, 7);
  EXPECT_EQ(specs[0].host, "");
  EXPECT_EQ(specs[0].text, "kill:worker:1@7");
  EXPECT_EQ(specs[1].action, FaultAction::Hang);
  EXPECT_EQ(specs[1].role, RankRole::Shard);
  EXPECT_EQ(specs[1].step, 3);
  EXPECT_EQ(specs[2].action, FaultAction::Exit);
  EXPECT_EQ(specs[2].index, 2);
  EXPECT_EQ(specs[3].action, FaultAction::Kill);
  EXPECT_EQ(specs[3].host, "node-3");
  EXPECT_EQ(specs[3].step, 5);
  EXPECT_EQ(specs[4].role, RankRole::Stage);
  EXPECT_TRUE(parseFaultSpecs("").empty());
  EXPECT_TRUE(parseFaultSpecs(" ; ").empty());
}

TEST(FaultSpecs, NameTheMalformedSpec) {
  struct Case {
    const char *specs, *message;
  };
  const Case cases[] = {
      {"kill:worker@3",
       "fault spec 'kill:worker@3': expected ACTION:ROLE:RANK"},
      {"kill:worker:1", "fault spec 'kill:worker:1': no '@STEP'"},
      {"kill:worker:1@0", "the step '0' is not a whole number of at least 1"},
      {"kill:worker:1@x", "the step 'x' is not a whole number"},
      {"crash:worker:1@3", "unknown action 'crash'"},
      {"kill:server:1@3", "unknown role 'server'"},
      {"kill:worker:-1@3", "the rank '-1' is not a whole number"},
      {"kill-host:@3", "the host '' is not a host name"},
      {"kill:worker:0@2;hang:worker:1", "fault spec 'hang:worker:1'"},
  };
  for (const Case &c : cases) {
    const std::string text = errorText(c.specs);
    EXPECT_NE(text.find(c.message), std::string::npos)
        << c.specs << " -> " << text;
    EXPECT_NE(text.find("kill-host:HOST@STEP"), std::string::npos) << text;
  }
}

TEST(FaultSpecs, TheEnvironmentVariableIsNamedInErrors) {
  ScopedEnvironment fault("HETERPS_FAULT", "kill:worker@3");
  try {
    FaultInjector::fromEnvironment(RankRole::Worker, 0);
    ADD_FAILURE() << "a malformed HETERPS_FAULT was accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("environment variable HETERPS_FAULT: fault spec "
                        "'kill:worker@3'"),
              std::string::npos)
        << error.what();
  }
}

TEST(FaultInjector, KeepsTheSpecsOfItsRank) {
  std::vector<FaultSpec> specs = parseFaultSpecs(
      "kill:worker:1@7;hang:shard:1@3;exit:worker:0@2;kill-host:hostB@5");
  FaultInjector worker1(RankRole::Worker, 1, "hostA", specs);
  EXPECT_FALSE(worker1.empty());
  EXPECT_EQ(worker1.describe(specs[0]),
            "kill:worker:1@7: worker 1 on hostA kills itself after step 7");
  // Another rank, role or host has none; a host's spec names every rank on
  // it.
  EXPECT_TRUE(FaultInjector(RankRole::Worker, 2, "hostA", specs).empty());
  EXPECT_TRUE(FaultInjector(RankRole::Stage, 1, "hostA", specs).empty());
  FaultInjector onB(RankRole::Stage, 4, "hostB", specs);
  EXPECT_FALSE(onB.empty());
  EXPECT_EQ(onB.describe(specs[3]),
            "kill-host:hostB@5: stage 4 on hostB kills itself after step 5");
  FaultInjector shard(RankRole::Shard, 1, "hostA", specs);
  EXPECT_EQ(shard.describe(specs[1]),
            "hang:shard:1@3: shard 1 on hostA stops itself after step 3");
  // Steps without a fault do nothing.
  Heartbeat none(RankRole::Worker, 1, HeartbeatOptions());
  worker1.stepFinished(6, none);
  worker1.stepFinished(8, none);
}

/// Runs `injector.stepFinished(step)` in a child process whose stderr goes
/// to a pipe and whose heartbeat goes to `beats` (a beat a minute, so only
/// the step wakes it); returns the wait status (WUNTRACED) and what it
/// printed.
std::pair<int, std::string> inChild(const FaultInjector &injector, int64_t step,
                                    const std::string &beats) {
  int pipeEnds[2];
  EXPECT_EQ(::pipe(pipeEnds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(pipeEnds[1], STDERR_FILENO);
    ::close(pipeEnds[0]);
    HeartbeatOptions options;
    options.directory = beats;
    options.intervalMs = 60000;
    Heartbeat heartbeat(RankRole::Worker, 0, options);
    heartbeat.setStep(step);
    injector.stepFinished(step, heartbeat);
    std::_Exit(0); // the fault did not happen
  }
  ::close(pipeEnds[1]);
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, WUNTRACED), child);
  if (WIFSTOPPED(status)) { // a hang: end it
    ::kill(child, SIGKILL);
    int ignored;
    ::waitpid(child, &ignored, 0);
  }
  std::string printed;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipeEnds[0], buffer, sizeof buffer)) > 0;)
    printed.append(buffer, size_t(n));
  ::close(pipeEnds[0]);
  return {status, printed};
}

TEST(FaultInjector, KillsStopsOrExitsAfterItsStep) {
  ScratchDirectory scratch("heterps-liveness-test", currentTestName());
  const std::string beats = scratch / "beats";
  std::vector<FaultSpec> specs =
      parseFaultSpecs("kill:worker:0@2;hang:shard:0@3;exit:stage:0@4");
  auto [killed, killedText] =
      inChild(FaultInjector(RankRole::Worker, 0, "h", specs), 2, beats);
  EXPECT_TRUE(WIFSIGNALED(killed) && WTERMSIG(killed) == SIGKILL);
  // Its last beat says the step it died after: a supervisor counts the
  // steps it lost from there (the beat thread may not have written it).
  EXPECT_NE(readText(beats + "/worker-0").find("step=2 "), std::string::npos)
      << readText(beats + "/worker-0");
  EXPECT_EQ(killedText, "heterps: fault injection: kill:worker:0@2: worker 0 "
                        "on h kills itself after step 2\n");

  auto [stopped, stoppedText] =
      inChild(FaultInjector(RankRole::Shard, 0, "h", specs), 3, beats);
  EXPECT_TRUE(WIFSTOPPED(stopped) && WSTOPSIG(stopped) == SIGSTOP);
  EXPECT_EQ(stoppedText, "heterps: fault injection: hang:shard:0@3: shard 0 "
                         "on h stops itself after step 3\n");

  auto [exited, exitedText] =
      inChild(FaultInjector(RankRole::Stage, 0, "h", specs), 4, beats);
  EXPECT_TRUE(WIFEXITED(exited) && WEXITSTATUS(exited) == kFaultExitCode);
  EXPECT_EQ(exitedText, "heterps: fault injection: exit:stage:0@4: stage 0 "
                        "on h exits 3 after step 4\n");

  // Another step: the child goes on (and exits 0).
  auto [untouched, untouchedText] =
      inChild(FaultInjector(RankRole::Worker, 0, "h", specs), 3, beats);
  EXPECT_TRUE(WIFEXITED(untouched) && WEXITSTATUS(untouched) == 0);
  EXPECT_EQ(untouchedText, "");
}

} // namespace
