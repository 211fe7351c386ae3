//===- bench_pass_cache.cpp - Pull/push with and without a pass cache -----===//
//
// One caller thread (as the trainer's) runs passes of `pass-batches`
// batches, pull then push (Adagrad) per batch, on two servers populated
// alike: directly on the host server, and through a HostPassCache
// (PassCache.h), whose time includes beginPass (dedup + loading the pass's
// rows) and endPass (write-back). In memory and with the RocksDB tier caching
// a quarter of the rows. Every repeat draws fresh uniform ids and runs both
// paths on the same batches (alternating which goes first); the figures are
// medians over the repeats. The two servers must end with bit-identical rows
// (checked on the last pass's ids). Prints a markdown table.
//
//   heterps_rt_pass_cache_bench [--keys N] [--dim D] [--batch B]
//       [--pass-batches P] [--passes N] [--repeats R] [--shards S]
//       [--storage DIR] [--tier memory|rocksdb] [--ids uniform|power]
//
//===----------------------------------------------------------------------===//

#include "BenchFlags.h"
#include "heterps/Runtime/PassCache.h"
#include "heterps/Runtime/PassiveOpenMPWaits.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace heterps::rt::ps;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  uint64_t keys = 1000000;
  size_t dim = 16;
  size_t batch = 4096;
  size_t passBatches = 32;
  size_t passes = 2;
  size_t repeats = 5;
  size_t shards = 2;
  std::vector<bool> tiers = {false, true}; // in memory, RocksDB
  std::vector<bool> skews = {false, true}; // uniform, power law
  std::string storage =
      (std::filesystem::temp_directory_path() / "heterps-pass-cache-bench")
          .string();
};

Options parseOptions(int argc, char **argv) {
  Options options;
  auto count = [](size_t &field) {
    return [&field](const std::string &value) {
      field = std::stoul(value);
      return true;
    };
  };
  heterps::bench::parseFlags("bench_pass_cache", argc, argv,
                             {{"--keys",
                               [&](const std::string &value) {
                                 options.keys = std::stoull(value);
                                 return true;
                               }},
                              {"--dim", count(options.dim)},
                              {"--batch", count(options.batch)},
                              {"--pass-batches", count(options.passBatches)},
                              {"--passes", count(options.passes)},
                              {"--repeats", count(options.repeats)},
                              {"--shards", count(options.shards)},
                              {"--storage",
                               [&](const std::string &value) {
                                 options.storage = value;
                                 return true;
                               }},
                              {"--tier",
                               [&](const std::string &value) {
                                 options.tiers = {value == "rocksdb"};
                                 return value == "memory" || value == "rocksdb";
                               }},
                              {"--ids", [&](const std::string &value) {
                                 options.skews = {value == "power"};
                                 return value == "uniform" || value == "power";
                               }}});
  return options;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle]
                           : (values[middle - 1] + values[middle]) / 2;
}

/// Seconds spent in each phase of one repeat.
struct Times {
  double begin = 0, pull = 0, push = 0, end = 0;
  double total() const { return begin + pull + push + end; }
};

struct Result {
  std::string tier;
  std::string ids;
  size_t cacheRowsPerShard = 0;
  double passKeys = 0; // distinct ids per pass (median)
  // Keys/s, medians over the repeats.
  double directPull = 0, directPush = 0, directTotal = 0;
  double cachedPull = 0, cachedPush = 0, cachedTotal = 0;
  double beginSeconds = 0, endSeconds = 0; // per pass
  bool identical = false;
};

/// Uniform ids, or a power law: floor(keys * u^4) for uniform u, so that
/// the hottest 0.01% of the keys take 10% of the lookups and 6% of the
/// keys half of them (CTR ids are heavily skewed).
uint64_t drawId(std::mt19937_64 &random, uint64_t keys, bool skewed) {
  const double unit = std::uniform_real_distribution<double>(0, 1)(random);
  const double scaled = skewed ? unit * unit * unit * unit : unit;
  return std::min(keys - 1, static_cast<uint64_t>(scaled * double(keys)));
}

Result runOne(const Options &options, bool tiered, bool skewed) {
  ParameterServerConfig config;
  config.numShards = options.shards;
  config.storageDirectory = options.storage;
  SparseTableConfig table;
  table.name = "emb";
  table.dim = options.dim;
  table.seed = 1;
  table.optimizer.kind = OptimizerKind::Adagrad;
  table.optimizer.learningRate = 0.05f;
  table.cacheRowsPerShard =
      tiered ? std::max<uint64_t>(1, options.keys / 4 / options.shards) : 0;
  // Two servers, each with its own RocksDB directory.
  config.storageDirectory = options.storage + "/direct";
  ParameterServer direct(config);
  config.storageDirectory = options.storage + "/cached";
  ParameterServer cached(config);
  const size_t batch = options.batch;
  std::vector<uint64_t> ids(batch);
  std::vector<float> rows(batch * options.dim);
  for (ParameterServer *server : {&direct, &cached}) {
    server->createSparseTable(table);
    // Populate: every key once, so the timed passes run on a full table.
    for (uint64_t first = 0; first < options.keys; first += batch) {
      ids.clear();
      for (uint64_t key = first; key < std::min(options.keys, first + batch);
           ++key)
        ids.push_back(key);
      server->pull("emb", ids.data(), ids.size(), rows.data());
    }
  }
  HostPassCache cache(cached);

  std::mt19937_64 random(42);
  std::vector<float> gradients(batch * options.dim);
  std::normal_distribution<float> gradient(0.0f, 0.01f);
  for (float &value : gradients)
    value = gradient(random);

  const double idsPerRepeat =
      double(options.passes * options.passBatches * batch);
  std::vector<double> directPull, directPush, directTotal, cachedPull,
      cachedPush, cachedTotal, begins, ends, passKeys;
  std::vector<std::vector<uint64_t>> pass(options.passBatches);
  for (size_t repeat = 0; repeat < options.repeats; ++repeat) {
    Times directTimes, cachedTimes;
    for (size_t passIndex = 0; passIndex < options.passes; ++passIndex) {
      for (auto &batchIds : pass) {
        batchIds.resize(batch);
        for (uint64_t &id : batchIds)
          id = drawId(random, options.keys, skewed);
      }
      auto runDirect = [&] {
        for (const auto &batchIds : pass) {
          Clock::time_point start = Clock::now();
          direct.pull("emb", batchIds.data(), batch, rows.data());
          directTimes.pull += secondsSince(start);
          start = Clock::now();
          direct.push("emb", batchIds.data(), batch, gradients.data());
          directTimes.push += secondsSince(start);
        }
      };
      auto runCached = [&] {
        Clock::time_point start = Clock::now();
        for (const auto &batchIds : pass)
          cache.addPassKeys("emb", batchIds.data(), batch);
        cache.beginPass();
        cachedTimes.begin += secondsSince(start);
        passKeys.push_back(double(cache.passKeyCount("emb")));
        for (const auto &batchIds : pass) {
          start = Clock::now();
          cache.pull("emb", batchIds.data(), batch, rows.data());
          cachedTimes.pull += secondsSince(start);
          start = Clock::now();
          cache.push("emb", batchIds.data(), batch, gradients.data());
          cachedTimes.push += secondsSince(start);
        }
        start = Clock::now();
        cache.endPass();
        cachedTimes.end += secondsSince(start);
      };
      // Alternate the order so that drift in the machine's load cancels.
      if ((repeat + passIndex) % 2 == 0) {
        runDirect();
        runCached();
      } else {
        runCached();
        runDirect();
      }
    }
    directPull.push_back(idsPerRepeat / directTimes.pull);
    directPush.push_back(idsPerRepeat / directTimes.push);
    directTotal.push_back(2 * idsPerRepeat / directTimes.total());
    cachedPull.push_back(idsPerRepeat / cachedTimes.pull);
    cachedPush.push_back(idsPerRepeat / cachedTimes.push);
    cachedTotal.push_back(2 * idsPerRepeat / cachedTimes.total());
    begins.push_back(cachedTimes.begin / options.passes);
    ends.push_back(cachedTimes.end / options.passes);
    std::fprintf(stderr,
                 "%s, %s ids, repeat %zu: pull+push %.2fM (direct) %.2fM "
                 "(pass cache) keys/s\n",
                 tiered ? "RocksDB" : "in memory",
                 skewed ? "power-law" : "uniform", repeat,
                 directTotal.back() / 1e6, cachedTotal.back() / 1e6);
  }

  Result result;
  result.tier = tiered ? "RocksDB, cache 1/4" : "in memory";
  result.ids = skewed ? "power law" : "uniform";
  result.cacheRowsPerShard = table.cacheRowsPerShard;
  result.passKeys = median(passKeys);
  result.directPull = median(directPull);
  result.directPush = median(directPush);
  result.directTotal = median(directTotal);
  result.cachedPull = median(cachedPull);
  result.cachedPush = median(cachedPush);
  result.cachedTotal = median(cachedTotal);
  result.beginSeconds = median(begins);
  result.endSeconds = median(ends);
  // Same batches in the same order: the same rows, bit for bit.
  result.identical = true;
  for (const auto &batchIds : pass)
    for (uint64_t id : batchIds)
      result.identical = result.identical &&
                         direct.readRow("emb", id) == cached.readRow("emb", id);
  return result;
}

std::string millions(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2fM", value / 1e6);
  return text;
}

} // namespace

int main(int argc, char **argv) {
  // As training runs have it (docs/Training.md): spinning OpenMP workers of
  // the server's parallel shards starve everything else on a busy machine.
  heterps::rt::runWithPassiveOpenMPWaits(argv);
  const Options options = parseOptions(argc, argv);
  std::vector<Result> results;
  try {
    for (bool tiered : options.tiers)
      for (bool skewed : options.skews)
        results.push_back(runOne(options, tiered, skewed));
  } catch (const std::exception &error) {
    std::fprintf(stderr, "bench_pass_cache: %s\n", error.what());
    return 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(options.storage, ignored);

  std::printf("Sparse pull + push with and without the pass cache: %llu "
              "keys, dim %zu, Adagrad, %zu shards, one caller thread; passes "
              "of %zu batches of %zu random ids, %zu passes per "
              "repeat, medians of %zu repeats (keys/s; pass cache times "
              "include beginPass and endPass).\n\n",
              static_cast<unsigned long long>(options.keys), options.dim,
              options.shards, options.passBatches, options.batch,
              options.passes, options.repeats);
  std::printf(
      "| tier | ids | keys per pass | direct pull | direct push | direct "
      "pull+push | cache pull | cache push | beginPass s | endPass s "
      "| cache pull+push (with begin/end) | ratio | rows identical "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Result &r : results)
    std::printf(
        "| %s | %s | %.0f | %s | %s | %s | %s | %s | %.3f | %.3f | %s | "
        "%.2fx | %s |\n",
        r.tier.c_str(), r.ids.c_str(), r.passKeys,
        millions(r.directPull).c_str(), millions(r.directPush).c_str(),
        millions(r.directTotal).c_str(), millions(r.cachedPull).c_str(),
        millions(r.cachedPush).c_str(), r.beginSeconds, r.endSeconds,
        millions(r.cachedTotal).c_str(), r.cachedTotal / r.directTotal,
        r.identical ? "yes" : "NO");
  for (const Result &r : results)
    if (!r.identical)
      return 1;
  return 0;
}
