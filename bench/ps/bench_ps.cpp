//===- bench_ps.cpp - Pull/push throughput of the parameter server --------===//
//
// Measures keys/s of pull and push (Adagrad) for 1, 2, 4 and 8 shards with
// several worker threads on a table of `keys` rows, all in memory and with
// the RocksDB tier caching a quarter of the rows. The table is populated
// first (every key touched once), so the timed phases see steady state:
// uniform random ids, so with the tier about 3 in 4 lookups miss the cache.
// Prints a markdown table.
//
//   heterps_rt_ps_bench [--keys N] [--dim D] [--batch B] [--threads T]
//                       [--seconds S] [--shards 1,2,4,8] [--storage DIR]
//
//===----------------------------------------------------------------------===//

#include "BenchFlags.h"
#include "heterps/Runtime/ParameterServer.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace heterps::rt::ps;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  uint64_t keys = 1000000;
  size_t dim = 16;
  size_t batch = 4096;
  int threads = 2;
  double seconds = 2.0;
  std::vector<size_t> shards = {1, 2, 4, 8};
  std::string storage =
      (std::filesystem::temp_directory_path() / "heterps-ps-bench").string();
};

Options parseOptions(int argc, char **argv) {
  Options options;
  heterps::bench::parseFlags("bench_ps", argc, argv,
                             {{"--keys",
                               [&](const std::string &value) {
                                 options.keys = std::stoull(value);
                                 return true;
                               }},
                              {"--dim",
                               [&](const std::string &value) {
                                 options.dim = std::stoul(value);
                                 return true;
                               }},
                              {"--batch",
                               [&](const std::string &value) {
                                 options.batch = std::stoul(value);
                                 return true;
                               }},
                              {"--threads",
                               [&](const std::string &value) {
                                 options.threads = std::stoi(value);
                                 return options.threads > 0;
                               }},
                              {"--seconds",
                               [&](const std::string &value) {
                                 options.seconds = std::stod(value);
                                 return options.seconds > 0;
                               }},
                              {"--storage",
                               [&](const std::string &value) {
                                 options.storage = value;
                                 return true;
                               }},
                              {"--shards", [&](const std::string &value) {
                                 options.shards.clear();
                                 std::stringstream list(value);
                                 for (std::string item;
                                      std::getline(list, item, ',');)
                                   options.shards.push_back(std::stoul(item));
                                 return !options.shards.empty();
                               }}});
  return options;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Runs `work(thread, iteration)` on every thread until `seconds` have
/// passed (checked per batch); returns keys/s over all threads.
double measure(const Options &options,
               const std::function<void(int, size_t)> &work) {
  std::vector<size_t> batchesDone(options.threads, 0);
  std::vector<std::thread> workers;
  const Clock::time_point start = Clock::now();
  for (int thread = 0; thread < options.threads; ++thread)
    workers.emplace_back([&, thread] {
      size_t iteration = 0;
      do
        work(thread, iteration++);
      while (secondsSince(start) < options.seconds);
      batchesDone[thread] = iteration;
    });
  for (auto &worker : workers)
    worker.join();
  const double elapsed = secondsSince(start);
  size_t batches = 0;
  for (size_t count : batchesDone)
    batches += count;
  return static_cast<double>(batches * options.batch) / elapsed;
}

struct Result {
  std::string tier;
  size_t shards = 0;
  size_t cacheRowsPerShard = 0;
  double populate = 0, pull = 0, push = 0;
};

Result runOne(const Options &options, size_t shards, bool tiered) {
  ParameterServerConfig config;
  config.numShards = shards;
  config.numWorkers = options.threads;
  config.storageDirectory = options.storage;
  ParameterServer server(config);
  SparseTableConfig table;
  table.name = "emb";
  table.dim = options.dim;
  table.seed = 1;
  table.optimizer.kind = OptimizerKind::Adagrad;
  table.optimizer.learningRate = 0.05f;
  // A quarter of all rows in memory, split over the shards.
  table.cacheRowsPerShard =
      tiered ? std::max<uint64_t>(1, options.keys / 4 / shards) : 0;
  server.createSparseTable(table);

  const size_t batch = options.batch;
  std::vector<float> rows(options.threads * batch * options.dim);
  auto rowsOf = [&](int thread) {
    return rows.data() + thread * batch * options.dim;
  };

  // Populate: each thread touches its half of the key space in order.
  Result result;
  result.tier = tiered ? "RocksDB, cache 1/4" : "in memory";
  result.shards = shards;
  result.cacheRowsPerShard = table.cacheRowsPerShard;
  const uint64_t perThread =
      (options.keys + options.threads - 1) / options.threads;
  {
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> workers;
    for (int thread = 0; thread < options.threads; ++thread)
      workers.emplace_back([&, thread] {
        const uint64_t begin = thread * perThread;
        const uint64_t end = std::min(options.keys, begin + perThread);
        std::vector<uint64_t> ids;
        for (uint64_t first = begin; first < end; first += batch) {
          ids.clear();
          for (uint64_t key = first; key < std::min(end, first + batch); ++key)
            ids.push_back(key);
          server.pull("emb", ids.data(), ids.size(), rowsOf(thread));
        }
      });
    for (auto &worker : workers)
      worker.join();
    result.populate = options.keys / secondsSince(start);
  }

  // Fresh uniform ids for every batch (a cycled set of batches would fit
  // in the cache); splitmix64 costs a few ns per id, noise next to a pull.
  std::vector<std::vector<uint64_t>> ids(options.threads,
                                         std::vector<uint64_t>(batch));
  std::vector<uint64_t> generatorState(options.threads);
  for (int thread = 0; thread < options.threads; ++thread)
    generatorState[thread] = 0x5EED0000ull + thread;
  auto nextBatch = [&](int thread) -> const uint64_t * {
    uint64_t &state = generatorState[thread];
    for (uint64_t &id : ids[thread]) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      id = (z ^ (z >> 31)) % options.keys;
    }
    return ids[thread].data();
  };
  std::mt19937_64 random(42);
  std::vector<float> gradients(batch * options.dim);
  std::normal_distribution<float> gradient(0.0f, 0.01f);
  for (float &value : gradients)
    value = gradient(random);

  result.pull = measure(options, [&](int thread, size_t) {
    server.pull("emb", nextBatch(thread), batch, rowsOf(thread));
  });
  result.push = measure(options, [&](int thread, size_t) {
    server.push("emb", nextBatch(thread), batch, gradients.data());
  });
  return result;
}

std::string keysPerSecond(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2fM", value / 1e6);
  return text;
}

} // namespace

int main(int argc, char **argv) {
  const Options options = parseOptions(argc, argv);
  std::vector<Result> results;
  try {
    for (bool tiered : {false, true})
      for (size_t shards : options.shards) {
        results.push_back(runOne(options, shards, tiered));
        const Result &last = results.back();
        std::fprintf(stderr, "%s, %zu shards: pull %s push %s keys/s\n",
                     last.tier.c_str(), last.shards,
                     keysPerSecond(last.pull).c_str(),
                     keysPerSecond(last.push).c_str());
      }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "bench_ps: %s\n", error.what());
    return 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(options.storage, ignored);

  std::printf("Parameter server throughput: %llu keys, dim %zu, batches of "
              "%zu uniform random ids, %d worker threads, Adagrad, %.1f s per "
              "measurement.\n\n",
              static_cast<unsigned long long>(options.keys), options.dim,
              options.batch, options.threads, options.seconds);
  std::printf("| tier | shards | cached rows/shard | populate keys/s | pull "
              "keys/s | push keys/s |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Result &result : results)
    std::printf("| %s | %zu | %s | %s | %s | %s |\n", result.tier.c_str(),
                result.shards,
                result.cacheRowsPerShard
                    ? std::to_string(result.cacheRowsPerShard).c_str()
                    : "all",
                keysPerSecond(result.populate).c_str(),
                keysPerSecond(result.pull).c_str(),
                keysPerSecond(result.push).c_str());
  return 0;
}
