//===- ClusterSpecTest.cpp - Cluster description parsing ------------------===//

#include "heterps/Cluster/ClusterSpec.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>

using namespace heterps::cluster;

namespace {

// Line numbers in the error tests below refer to this text.
const char *const kValid = R"(name: test
device_classes:
  - name: cpu.a
    kind: cpu
    peak_gflops: 1000
    memory_bandwidth_gbps: 100
    memory_gib: 64
    price_per_hour: 1.5
    count: 4
  - name: gpu.b
    kind: gpu
    peak_gflops: 10000
    memory_bandwidth_gbps: 900
    memory_gib: 16
    price_per_hour: 3
    count: 8
    per_machine: 4
links:
  - {from: cpu.a, to: gpu.b, scope: intra, bandwidth_gbps: 12, latency_us: 10}
  - {from: gpu.b, to: gpu.b, scope: intra, bandwidth_gbps: 100, latency_us: 5}
  - {from: ps, to: cpu.a, scope: intra, bandwidth_gbps: 20, latency_us: 1}
network:
  bandwidth_gbps: 3
  latency_us: 30
)";

/// Replaces the first occurrence of `from` in kValid with `to`.
std::string edited(const std::string &from, const std::string &to) {
  std::string text = kValid;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

/// Parses `text` expecting failure; returns the message.
std::string errorOf(const std::string &text) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(text, "bad.yaml");
  if (spec) {
    ADD_FAILURE() << "parsed a malformed description";
    return "";
  }
  return llvm::toString(spec.takeError());
}

TEST(ClusterSpec, ParsesFieldsAndDefaults) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(kValid, "ok.yaml");
  ASSERT_TRUE(!!spec) << llvm::toString(spec.takeError());
  EXPECT_EQ(spec->name, "test");
  ASSERT_EQ(spec->classes.size(), 2u);
  const DeviceClass &gpu = spec->classes[1];
  EXPECT_EQ(gpu.name, "gpu.b");
  EXPECT_EQ(gpu.kind, DeviceKind::GPU);
  EXPECT_DOUBLE_EQ(gpu.peakGflops, 10000);
  EXPECT_DOUBLE_EQ(gpu.memoryBandwidthGBps, 900);
  EXPECT_DOUBLE_EQ(gpu.memoryGiB, 16);
  EXPECT_DOUBLE_EQ(gpu.pricePerHour, 3);
  EXPECT_EQ(gpu.count, 8u);
  EXPECT_EQ(gpu.perMachine, 4u);
  // Defaults by kind.
  EXPECT_DOUBLE_EQ(gpu.launchOverheadUs, 5);
  EXPECT_DOUBLE_EQ(spec->classes[0].launchOverheadUs, 1);
  EXPECT_EQ(spec->classes[0].perMachine, 1u);
  EXPECT_EQ(spec->links.size(), 3u);
  // Without a parameter_server section, the network is used.
  EXPECT_DOUBLE_EQ(spec->parameterServer.bandwidthGBps, 3);
}

TEST(ClusterSpec, LinkLookup) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(kValid, "ok.yaml");
  ASSERT_TRUE(!!spec) << llvm::toString(spec.takeError());
  // Declared either way round.
  EXPECT_DOUBLE_EQ(spec->stageLink(1, 0).bandwidthGBps, 12);
  EXPECT_DOUBLE_EQ(spec->stageLink(0, 1).bandwidthGBps, 12);
  // Replicas within one machine use the intra link, beyond it the network.
  EXPECT_DOUBLE_EQ(spec->collectiveLink(1, 4).bandwidthGBps, 100);
  EXPECT_DOUBLE_EQ(spec->collectiveLink(1, 5).bandwidthGBps, 3);
  EXPECT_DOUBLE_EQ(spec->collectiveLink(0, 2).bandwidthGBps, 3);
  EXPECT_DOUBLE_EQ(spec->parameterServerLink(0).bandwidthGBps, 20);
  EXPECT_DOUBLE_EQ(spec->parameterServerLink(1).bandwidthGBps, 3);
  EXPECT_DOUBLE_EQ(spec->parameterServerLink(1).transferSeconds(3e9),
                   30e-6 + 1.0);
}

TEST(ClusterSpec, Presets) {
  for (const char *name : {"paper", "local-cpu", "h100-host"}) {
    std::string path =
        std::string(HETERPS_SOURCE_DIR) + "/clusters/" + name + ".yaml";
    llvm::Expected<ClusterSpec> spec = loadClusterSpec(path);
    ASSERT_TRUE(!!spec) << llvm::toString(spec.takeError());
    EXPECT_EQ(spec->name, name);
    for (const DeviceClass &cls : spec->classes) {
      EXPECT_GT(cls.peakGflops, 0);
      EXPECT_GT(cls.pricePerHour, 0);
    }
  }
  llvm::Expected<ClusterSpec> paper =
      loadClusterSpec(std::string(HETERPS_SOURCE_DIR) + "/clusters/paper.yaml");
  ASSERT_TRUE(!!paper);
  EXPECT_TRUE(paper->findClass("cpu.xeon"));
  EXPECT_TRUE(paper->findClass("gpu.v100"));
  EXPECT_TRUE(paper->findClass("gpu.p40"));
}

TEST(ClusterSpec, ParameterServerTimePerKey) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(
      edited("bandwidth_gbps: 20, latency_us: 1}",
             "bandwidth_gbps: 20, latency_us: 1, key_us: 0.1}") +
          "parameter_server:\n  bandwidth_gbps: 5\n  latency_us: 20\n"
          "  key_us: 0.25\n",
      "ok.yaml");
  ASSERT_TRUE(!!spec) << llvm::toString(spec.takeError());
  EXPECT_DOUBLE_EQ(spec->parameterServerLink(0).keyUs, 0.1);
  // Without a link of its own, gpu.b uses the parameter_server section.
  EXPECT_DOUBLE_EQ(spec->parameterServerLink(1).keyUs, 0.25);
  // Links between devices have no server time.
  EXPECT_NE(errorOf(edited("bandwidth_gbps: 12, latency_us: 10}",
                           "bandwidth_gbps: 12, latency_us: 10, key_us: 1}"))
                .find("'key_us' is the parameter server's time per key; "
                      "link cpu.a - gpu.b does not reach it"),
            std::string::npos);
  EXPECT_NE(errorOf(edited("bandwidth_gbps: 20, latency_us: 1}",
                           "bandwidth_gbps: 20, latency_us: 1, key_us: -1}"))
                .find("must not be negative"),
            std::string::npos);
  EXPECT_NE(errorOf(std::string(kValid) + "  key_us: 1\n")
                .find("unknown field 'key_us'"),
            std::string::npos);
}

TEST(ClusterSpec, MissingFile) {
  llvm::Expected<ClusterSpec> spec = loadClusterSpec("/nonexistent/x.yaml");
  ASSERT_FALSE(!!spec);
  EXPECT_NE(llvm::toString(spec.takeError()).find("/nonexistent/x.yaml"),
            std::string::npos);
}

struct BadCase {
  const char *what;
  std::string text;
  const char *location; // "file:line:column:"
  const char *message;
};

TEST(ClusterSpec, ErrorsNameFileLineAndProblem) {
  const BadCase cases[] = {
      {"missing field", edited("    peak_gflops: 10000\n", ""),
       "bad.yaml:10:5:",
       "device class 'gpu.b' is missing required field "
       "'peak_gflops'"},
      {"negative price", edited("price_per_hour: 3", "price_per_hour: -3"),
       "bad.yaml:15:21:", "must not be negative"},
      {"unknown kind", edited("kind: gpu", "kind: tpu"),
       "bad.yaml:11:11:", "unknown device kind 'tpu'"},
      {"duplicate class", edited("name: gpu.b", "name: cpu.a"),
       "bad.yaml:10:11:",
       "duplicate device class 'cpu.a' (first defined on "
       "line 3)"},
      {"unknown class in link",
       edited("to: gpu.b, scope: intra, bandwidth_gbps: 12",
              "to: gpu.x, scope: intra, bandwidth_gbps: 12"),
       "bad.yaml:19:23:", "link names unknown device class 'gpu.x'"},
      {"syntax error", edited("kind: cpu", "kind: cpu: 3"),
       "bad.yaml:4:14:", "error: Unexpected token"},
      {"not a number", edited("peak_gflops: 1000", "peak_gflops: fast"),
       "bad.yaml:5:18:", "'peak_gflops' must be a number, got 'fast'"},
      {"unknown field", edited("    count: 4\n", "    cuont: 4\n"),
       "bad.yaml:9:5:", "unknown field 'cuont' in device class"},
      {"zero count", edited("count: 4", "count: 0"),
       "bad.yaml:9:12:", "must be at least 1"},
      {"bad scope", edited("scope: intra", "scope: rack"),
       "bad.yaml:19:37:", "unknown link scope 'rack'"},
      {"missing network",
       std::string(kValid).substr(0, std::string(kValid).find("network:")),
       "bad.yaml:1:1:", "missing required field 'network'"},
      {"huge count", edited("count: 4", "count: 2147483647"), "bad.yaml:9:12:",
       "'count' of device class 'cpu.a' must be at most "
       "10000"},
      {"quote in a class name", edited("name: cpu.a", "name: 'cpu.a\"b'"),
       "bad.yaml:3:11:", "holds a character other than letters, digits"},
      {"subnormal speed", edited("peak_gflops: 1000", "peak_gflops: 1e-320"),
       "bad.yaml:5:18:", "is too small"},
      {"overflowing speed", edited("peak_gflops: 1000", "peak_gflops: 1e300"),
       "bad.yaml:5:18:", "'peak_gflops' of 1e300 is too large"},
      {"deep flow nesting",
       edited("name: test",
              "name: " + std::string(100000, '[') + std::string(100000, ']')),
       "bad.yaml:1:71:",
       "nested too deeply (more than 64 levels of [ ] and "
       "{ })"},
      {"deep nesting after an apostrophe in a plain scalar",
       edited("name: test", "name: it's\nx: " + std::string(100000, '[') +
                                std::string(100000, ']')),
       "bad.yaml:2:68:", "more than 64 levels of [ ] and { }"},
      {"deep block sequences on one line",
       edited(
           "name: test", "x:\n" +
                             [] {
                               std::string dashes;
                               for (int i = 0; i < 100000; ++i)
                                 dashes += "-\t";
                               return dashes + "x";
                             }()),
       "bad.yaml:2:2049:", "more than 1024 block indicators on a line"},
      {"price past any machine's",
       edited("price_per_hour: 3", "price_per_hour: 1e9"),
       "bad.yaml:", "must be at most 1000000 (USD per device-hour)"},
      {"a cpu class named as a gpu", edited("name: cpu.a", "name: gpu.z"),
       "bad.yaml:3:11:",
       "device class 'gpu.z' is of kind 'cpu' but its name does not start "
       "with 'cpu'"},
      {"a class named without its kind", edited("name: cpu.a", "name: xeon"),
       "bad.yaml:3:11:", "name it 'cpu.xeon'"},
      {"a Latin-1 byte", edited("name: cpu.a", "name: cpu.\xe9"),
       "bad.yaml:3:15:", "byte 0xe9 is not UTF-8 text"},
      {"a tag", edited("count: 4", "count: !!str 4"),
       "bad.yaml:9:18:", "YAML tags are not supported here ('!!str')"},
      {"a tag on a mapping", edited("name: test", "name: test\nx: !!map {}"),
       "bad.yaml:2:11:", "YAML tags are not supported here ('!!map')"},
      {"an alias, placed where it is, not at the token after it",
       [] {
         std::string text = edited("count: 4", "count: &n 4");
         text.replace(text.find("count: 8"), 8, "count: *n");
         return text;
       }(),
       "bad.yaml:16:12:", "YAML aliases are not supported here ('*n')"},
      {"deep block nesting",
       edited("name: test", "name:\n" + std::string(2000, ' ') + "x: 1"),
       "bad.yaml:2:2001:",
       "nested too deeply (a line starts more than 1024 "
       "columns in)"},
  };
  for (const BadCase &bad : cases) {
    std::string message = errorOf(bad.text);
    EXPECT_EQ(message.rfind(bad.location, 0), 0u)
        << bad.what << ": " << message;
    EXPECT_NE(message.find(bad.message), std::string::npos)
        << bad.what << ": " << message;
  }
}

TEST(ClusterSpec, BlockScalarsAreScalars) {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(
      edited("price_per_hour: 1.5", "price_per_hour: |\n      1.25"),
      "ok.yaml");
  ASSERT_TRUE(!!spec) << llvm::toString(spec.takeError());
  EXPECT_DOUBLE_EQ(spec->classes[0].pricePerHour, 1.25);
}

TEST(ClusterSpec, SyntaxErrorLine) {
  std::string message = errorOf(edited("    kind: gpu", "\tkind: gpu"));
  EXPECT_EQ(message.rfind("bad.yaml:11:1: error: Found invalid tab", 0), 0u)
      << message;
  // Exactly one error is reported.
  EXPECT_EQ(message.find("error:", message.find("error:") + 1),
            std::string::npos)
      << message;
}

} // namespace
