//===- JsonLimitsTest.cpp - JSON nesting checked before parsing -----------===//

#include "heterps/Cluster/JsonLimits.h"

#include "gtest/gtest.h"

#include <string>

using namespace heterps::cluster;

namespace {

std::string nested(unsigned depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JsonLimits, DeepNestingIsAnErrorNotAStackOverflow) {
  // 100,000 levels overflowed llvm::json's recursive parser (SIGSEGV).
  llvm::Expected<llvm::json::Value> deep = parseJson(nested(100000));
  ASSERT_FALSE(bool(deep));
  EXPECT_EQ(llvm::toString(deep.takeError()),
            "[1:513]: arrays and objects nest more than 512 levels deep");
  llvm::Expected<llvm::json::Value> limit = parseJson(nested(kMostJsonNesting));
  EXPECT_TRUE(bool(limit)) << llvm::toString(limit.takeError());
}

TEST(JsonLimits, BracketsInStringsDoNotCount) {
  const std::string text = "{\"a\": \"" + std::string(1000, '[') +
                           "\\\"[\", \"b\": [1, {\"c\": 2}]}";
  llvm::Expected<llvm::json::Value> value = parseJson(text);
  ASSERT_TRUE(bool(value)) << llvm::toString(value.takeError());
  EXPECT_EQ(value->getAsObject()->getString("a")->size(), 1002u);
}

TEST(JsonLimits, NamesTheLineOfTheBracketPastTheLimit) {
  llvm::Expected<llvm::json::Value> deep =
      parseJson("{\n \"x\":\n  " + nested(600) + "}");
  ASSERT_FALSE(bool(deep));
  EXPECT_EQ(llvm::toString(deep.takeError()),
            "[3:514]: arrays and objects nest more than 512 levels deep");
}

} // namespace
