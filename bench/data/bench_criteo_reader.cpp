//===- bench_criteo_reader.cpp - CriteoReader throughput ------------------===//
//
// Generates a Criteo-format file with datagen (or takes one), then reads it
// end to end with CriteoReader several times and reports rows/s and MB/s.
// The file is read once before timing, so the figures are for a file in the
// page cache: the parser's speed, not the disk's.
//
//   heterps_rt_data_bench [--rows N] [--seed S] [--batch B] [--repeats R]
//                         [--file PATH] [--keep]
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CtrData.h"
#include "heterps/Runtime/CtrDataGen.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace heterps::rt;
using namespace heterps::rt::data;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Reads the whole file; returns rows and checks nothing was malformed.
int64_t readAll(const std::string &path, int64_t batchRows, double &checksum) {
  CriteoReader reader(path);
  CtrBatch batch;
  int64_t rows = 0;
  while (int64_t got = reader.nextBatch(batch, batchRows)) {
    rows += got;
    // Touch the output so nothing can be optimised away.
    checksum += batch.labels[0] + batch.dense[got * kNumDense - 1] +
                double(batch.sparse[got * kNumSparse - 1] & 0xff);
  }
  if (reader.stats().malformed)
    throw Error("unexpected malformed lines:\n" + reader.stats().summary());
  return rows;
}

} // namespace

int main(int argc, char **argv) {
  int64_t rows = 1000000, batchRows = 4096;
  uint64_t seed = 1;
  int repeats = 5;
  std::string file;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::cerr << argv[i] << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--rows"))
      rows = std::atoll(value());
    else if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(value(), nullptr, 10);
    else if (!std::strcmp(argv[i], "--batch"))
      batchRows = std::atoll(value());
    else if (!std::strcmp(argv[i], "--repeats"))
      repeats = std::atoi(value());
    else if (!std::strcmp(argv[i], "--file"))
      file = value();
    else if (!std::strcmp(argv[i], "--keep"))
      keep = true;
    else {
      std::cerr << "usage: " << argv[0]
                << " [--rows N] [--seed S] [--batch B] [--repeats R] "
                   "[--file PATH] [--keep]\n";
      return 2;
    }
  }
  try {
    bool generated = false;
    if (file.empty() || access(file.c_str(), R_OK) != 0) {
      if (file.empty())
        file = "/tmp/heterps_bench_criteo_" + std::to_string(getpid()) + ".tsv";
      auto start = std::chrono::steady_clock::now();
      CtrGenResult gen = generateCtrData(rows, seed, file);
      double seconds = secondsSince(start);
      std::printf("datagen: %lld rows, %.1f MB in %.2f s (%.0f rows/s); "
                  "ground-truth AUC %.4f\n",
                  (long long)gen.rows, double(gen.bytes) / 1e6, seconds,
                  double(gen.rows) / seconds, gen.groundTruthAuc);
      generated = true;
    }
    double checksum = 0;
    int64_t fileRows = readAll(file, batchRows, checksum); // warm the cache
    uint64_t bytes;
    {
      CriteoReader probe(file);
      bytes = probe.fileSize();
    }
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      int64_t got = readAll(file, batchRows, checksum);
      times.push_back(secondsSince(start));
      if (got != fileRows)
        throw Error("row count changed between passes");
    }
    std::sort(times.begin(), times.end());
    double best = times.front(), median = times[times.size() / 2];
    std::printf("read: %lld rows, %.1f MB, batch %lld, %d repeats\n",
                (long long)fileRows, double(bytes) / 1e6, (long long)batchRows,
                repeats);
    std::printf("  best   %.3f s  %.2f M rows/s  %.1f MB/s\n", best,
                double(fileRows) / best / 1e6, double(bytes) / best / 1e6);
    std::printf("  median %.3f s  %.2f M rows/s  %.1f MB/s\n", median,
                double(fileRows) / median / 1e6, double(bytes) / median / 1e6);
    std::printf("(checksum %.3f)\n", checksum);
    if (generated && !keep)
      std::remove(file.c_str());
  } catch (const std::exception &error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
