//===- WorkerAgreementTest.cpp - Tests of the workers' shared settings ----===//

#include "../train/WorkerAgreement.h"

#include "heterps/Runtime/Types.h"

#include <gtest/gtest.h>

using namespace heterps::rt;
using namespace heterps::rt::train;

namespace {

std::vector<SharedSetting> settings(const std::string &steps) {
  return {{"bundle", "the bundle whose manifest hashes to 00ff"},
          {"length", "--steps " + steps},
          {"odd", std::string("a:b\0c", 5)}};
}

TEST(WorkerAgreement, SettingsSurviveTheirEncoding) {
  const std::vector<SharedSetting> sent = settings("12");
  const std::vector<SharedSetting> got = decodeSettings(encodeSettings(sent));
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i].name, sent[i].name);
    EXPECT_EQ(got[i].shown, sent[i].shown);
  }
  EXPECT_TRUE(decodeSettings("").empty());
}

TEST(WorkerAgreement, MalformedEncodingsAreRefused) {
  const std::string good = encodeSettings(settings("12"));
  for (const std::string &bad :
       {good.substr(0, good.size() - 1), std::string("x:abc"),
        std::string("3:ab"), std::string("5:steps"), std::string(":")})
    EXPECT_THROW(decodeSettings(bad), Error) << bad;
}

TEST(WorkerAgreement, TheFirstDifferenceIsNamed) {
  EXPECT_EQ(describeDisagreement(settings("12"), settings("12")), "");
  EXPECT_EQ(describeDisagreement(settings("12"), settings("20")),
            "this worker was started with --steps 20 and worker 0 with "
            "--steps 12; start every worker of an MPI job with the same "
            "bundle and training flags (heterps launch does)");
  std::vector<SharedSetting> shorter = settings("12");
  shorter.pop_back();
  EXPECT_NE(describeDisagreement(settings("12"), shorter)
                .find("different versions of heterps"),
            std::string::npos);
  EXPECT_NE(describeDisagreement(shorter, settings("12"))
                .find("different versions of heterps"),
            std::string::npos);
}

} // namespace
