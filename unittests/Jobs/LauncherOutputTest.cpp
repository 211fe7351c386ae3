//===- LauncherOutputTest.cpp - Which rank ended, from mpirun's words -----===//

#include "heterps/Jobs/Backend.h"

#include "gtest/gtest.h"

using namespace heterps::jobs;

namespace {

TEST(LauncherOutput, MpirunSignal) {
  std::vector<RankExit> exits = parseLauncherOutput(
      "step 10/20 ...\n"
      "--------------------------------------------------------------------\n"
      "mpirun noticed that process rank 3 with PID 4242 on node worker-7 "
      "exited on signal 9 (Killed).\n");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].mpiRank, 3);
  EXPECT_EQ(exits[0].host, "worker-7");
  EXPECT_EQ(exits[0].signal, 9);
}

TEST(LauncherOutput, MpirunExitCodeAndAbortInOrder) {
  std::vector<RankExit> exits = parseLauncherOutput(
      "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\n"
      "with errorcode 1.\n"
      "mpirun detected that one or more processes exited with non-zero "
      "status, thus causing\nthe job to be terminated. The first process to "
      "do so was:\n\n  Process name: [[5012,1],2]\n  Exit code:    3\n");
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[0].mpiRank, 1);
  EXPECT_EQ(exits[0].exitCode, 1);
  EXPECT_EQ(exits[1].mpiRank, 2);
  EXPECT_EQ(exits[1].exitCode, 3);
  EXPECT_EQ(exits[1].signal, 0);
}

TEST(LauncherOutput, Srun) {
  std::vector<RankExit> exits = parseLauncherOutput(
      "srun: error: n2: task 4: Killed\n"
      "srun: error: n3: tasks 5-6: Exited with exit code 3\n");
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[0].host, "n2");
  EXPECT_EQ(exits[0].mpiRank, 4);
  EXPECT_EQ(exits[0].signal, 9);
  EXPECT_EQ(exits[1].mpiRank, 5);
  EXPECT_EQ(exits[1].exitCode, 3);
}

TEST(LauncherOutput, LostHost) {
  std::vector<RankExit> exits = parseLauncherOutput(
      "ORTE has lost communication with a remote daemon.\n\n"
      "  HNP daemon   : [[27539,0],0] on node vm\n"
      "  Remote daemon: [[27539,0],2] on node n2\n");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].mpiRank, -1);
  EXPECT_EQ(exits[0].host, "n2");
}

TEST(LauncherOutput, UnreachableHost) {
  // mpirun starting its daemon over ssh on a host that is down or unknown.
  for (const char *text :
       {"ssh: Could not resolve hostname n3.invalid: Name or service not "
        "known\n",
        "ssh: connect to host n3.invalid port 22: No route to host\n"}) {
    std::vector<RankExit> exits = parseLauncherOutput(text);
    ASSERT_EQ(exits.size(), 1u) << text;
    EXPECT_EQ(exits[0].mpiRank, -1);
    EXPECT_EQ(exits[0].host, "n3.invalid");
  }
}

TEST(LauncherOutput, NothingToBlame) {
  EXPECT_TRUE(parseLauncherOutput("step 5/20 loss 0.6\ndone\n").empty());
}

} // namespace
