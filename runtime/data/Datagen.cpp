//===- Datagen.cpp - Synthetic Criteo-format data from a hidden model ----===//
//
// The model is drawn first (from the model seed), then rows are sampled from
// it (from the sampling seed). Everything random goes through xoshiro256**
// and samplers written here, so the output does not depend on the standard
// library's distribution implementations.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CtrDataGen.h"
#include "heterps/Runtime/CtrDataMetrics.h"
#include "heterps/Runtime/MachineMemory.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ostream>
#include <sys/stat.h>
#include <unistd.h>

namespace heterps::rt::data {

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// xoshiro256** (Blackman and Vigna), seeded through splitmix64.
class Rng {
public:
  explicit Rng(uint64_t seed) {
    for (uint64_t &word : state_)
      word = splitmix64(seed);
  }
  uint64_t next() {
    uint64_t result = rotl(state_[1] * 5, 7) * 9;
    uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal (Box-Muller; the second value is dropped for
  /// simplicity, generation is not the bottleneck).
  double normal() {
    double u1 = 1.0 - uniform(); // (0, 1]
    double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

/// MurmurHash3's finaliser: a bijection on 32 bits, so distinct values of a
/// field get distinct printed hashes.
uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

struct SparseField {
  std::vector<double> cdf; // Zipf over ranks 0..V-1
  // guide[i] = first rank whose cdf exceeds i / V: sampling starts there and
  // scans a step or two, instead of a cache-missing binary search.
  std::vector<uint32_t> guide;
  std::vector<float> weights;   // per value
  std::vector<uint32_t> hashes; // per value, as printed
  double missingRate = 0;
  float missingWeight = 0;
};

struct DenseField {
  double logMean = 0, logStd = 1; // raw value ~ floor(exp(N(mean, std)))
  int64_t shift = 0;              // subtracted, so a few fields go negative
  double missingRate = 0;
  double weight = 0, center = 0;
};

/// t(x) of one present value: the reader's transform of the raw integer.
double transformed(const DenseField &field, Rng &rng, int64_t *raw = nullptr) {
  double value = std::exp(field.logMean + field.logStd * rng.normal());
  int64_t x = int64_t(std::floor(std::min(value, 1e12))) - field.shift;
  if (raw)
    *raw = x;
  return criteoDenseFeature(x);
}

struct Interaction {
  int a = 0, b = 0;
  std::vector<float> factorsA, factorsB;
};

struct Model {
  SparseField sparse[kNumSparse];
  DenseField dense[kNumDense];
  std::vector<Interaction> interactions;
  double bias = 0;
};

Model buildModel(uint64_t modelSeed, const CtrGenOptions &options,
                 const std::vector<int64_t> &vocabSizes) {
  Rng rng(modelSeed);
  Model model;
  model.bias = options.bias;
  for (int j = 0; j != kNumDense; ++j) {
    DenseField &field = model.dense[j];
    field.logMean = rng.uniform(0.0, 4.0);
    field.logStd = rng.uniform(0.5, 1.5);
    // Like Criteo's I2, one field has small negative values.
    field.shift = j == 1 ? 3 : 0;
    field.missingRate = rng.uniform(0.0, options.maxDenseMissingRate);
    field.weight = options.denseWeightStd * rng.normal();
    // Centre the term on E[t(x)] (missing counting as 0), so the click rate
    // is set by the bias and not by whichever weights were drawn.
    constexpr int kSamples = 4096;
    double sum = 0;
    for (int i = 0; i != kSamples; ++i)
      sum += transformed(field, rng);
    field.center = (1.0 - field.missingRate) * sum / kSamples;
  }
  for (int f = 0; f != kNumSparse; ++f) {
    SparseField &field = model.sparse[f];
    int64_t vocab = vocabSizes[f];
    // Big vocabularies spread their signal over many rare values; giving
    // them a smaller share keeps the data learnable from a few 100k rows.
    double std = options.sparseWeightStd /
                 std::sqrt(1.0 + 0.5 * std::log10(double(vocab)));
    field.cdf.resize(size_t(vocab));
    field.weights.resize(size_t(vocab));
    field.hashes.resize(size_t(vocab));
    uint32_t salt = uint32_t(rng.next());
    double total = 0;
    for (int64_t k = 0; k != vocab; ++k) {
      total += std::pow(double(k + 1), -options.zipfExponent);
      field.cdf[size_t(k)] = total;
      // Rare values carry less signal each, as in real logs; this also
      // keeps the unlearnable part of the score small.
      double shrink = options.tailRank > 0
                          ? 1.0 / std::sqrt(1.0 + double(k) / options.tailRank)
                          : 1.0;
      field.weights[size_t(k)] = float(std * shrink * rng.normal());
      field.hashes[size_t(k)] = fmix32(uint32_t(k) ^ salt);
    }
    for (double &c : field.cdf)
      c /= total;
    field.cdf.back() = 1.0;
    field.guide.resize(size_t(vocab));
    for (int64_t i = 0, k = 0; i != vocab; ++i) {
      while (field.cdf[size_t(k)] <= double(i) / double(vocab))
        ++k;
      field.guide[size_t(i)] = uint32_t(k);
    }
    field.missingRate = rng.uniform(0.0, options.maxSparseMissingRate);
    field.missingWeight = float(std * rng.normal());
    // Centre the weights on their expectation under the Zipf distribution
    // (the head value alone would otherwise move the click rate).
    double mean = 0, previous = 0;
    for (int64_t k = 0; k != vocab; ++k) {
      mean += (field.cdf[size_t(k)] - previous) * field.weights[size_t(k)];
      previous = field.cdf[size_t(k)];
    }
    mean = (1.0 - field.missingRate) * mean +
           field.missingRate * field.missingWeight;
    for (float &w : field.weights)
      w = float(w - mean);
    field.missingWeight = float(field.missingWeight - mean);
  }
  for (int i = 0; i != options.numInteractions; ++i) {
    Interaction interaction;
    interaction.a = int(rng.next() % kNumSparse);
    do
      interaction.b = int(rng.next() % kNumSparse);
    while (interaction.b == interaction.a);
    for (auto [index, factors] :
         {std::pair(interaction.a, &interaction.factorsA),
          std::pair(interaction.b, &interaction.factorsB)}) {
      factors->resize(size_t(vocabSizes[index]));
      for (float &factor : *factors)
        factor = float(rng.normal());
    }
    model.interactions.push_back(std::move(interaction));
  }
  return model;
}

int64_t sampleZipf(const SparseField &field, Rng &rng) {
  double u = rng.uniform();
  size_t vocab = field.cdf.size();
  // The answer (first rank with cdf > u) lies in [guide[i], guide[i + 1]];
  // in the tail a bucket holds many ranks, so search it rather than scan.
  size_t i = std::min(size_t(u * double(vocab)), vocab - 1);
  auto first = field.cdf.begin() + field.guide[i];
  auto last = i + 1 < vocab ? field.cdf.begin() + field.guide[i + 1] + 1
                            : field.cdf.end();
  return int64_t(std::upper_bound(first, last, u) - field.cdf.begin());
}

/// Buffered writer into the temporary file `path`: an unnamed file
/// (O_TMPFILE) given that name only once complete, where the file system
/// has them, so that a killed datagen leaves nothing behind (a named
/// temporary stayed, 109 MB for 2M rows); elsewhere the named file.
class Output {
public:
  explicit Output(const std::string &path) : path_(path) {
    size_t slash = path.rfind('/');
    const std::string directory =
        slash == std::string::npos ? "." : path.substr(0, slash + 1);
    // Named through /proc (linkat of an unnamed file needs it).
    int fd =
        ::access("/proc/self/fd", X_OK) == 0
            ? ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644)
            : -1;
    if (fd >= 0 && (file_ = ::fdopen(fd, "wb")))
      unnamed_ = true;
    else if (fd >= 0)
      ::close(fd);
    if (!file_)
      file_ = std::fopen(path.c_str(), "wb");
    if (!file_)
      throw Error("datagen: cannot create '" + path +
                  "': " + std::strerror(errno));
    buffer_.reserve(kChunk + 1024);
  }
  ~Output() {
    if (file_)
      std::fclose(file_);
  }
  std::string &buffer() { return buffer_; }
  void maybeFlush() {
    if (buffer_.size() >= kChunk)
      flush();
  }
  void flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
      throw Error("datagen: write to '" + path_ +
                  "' failed: " + std::strerror(errno));
    bytes_ += buffer_.size();
    buffer_.clear();
  }
  /// Flushes, syncs, names an unnamed file `path` and closes, so the
  /// rename publishes complete data.
  void close() {
    flush();
    bool ok = std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
    if (ok && unnamed_) {
      const std::string self = "/proc/self/fd/" + std::to_string(fileno(file_));
      ok = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(),
                    AT_SYMLINK_FOLLOW) == 0;
    }
    ok = std::fclose(file_) == 0 && ok;
    file_ = nullptr;
    if (!ok)
      throw Error("datagen: cannot finish '" + path_ +
                  "': " + std::strerror(errno));
  }
  uint64_t bytes() const { return bytes_; }

private:
  static constexpr size_t kChunk = size_t(1) << 20;
  std::string path_;
  std::FILE *file_ = nullptr;
  bool unnamed_ = false;
  std::string buffer_;
  uint64_t bytes_ = 0;
};

void appendHex8(std::string &out, uint32_t value) {
  static const char kDigits[] = "0123456789abcdef";
  char digits[8];
  for (int i = 7; i >= 0; --i, value >>= 4)
    digits[i] = kDigits[value & 15];
  out.append(digits, 8);
}

} // namespace

std::vector<int64_t> defaultVocabSizes() {
  // Criteo's C1..C26 range from a handful of values to millions; these keep
  // that spread at a size a test can learn from.
  return {1000,  500,   100000, 30000, 200,   20,    8000, 300,  3,
          50000, 4000,  3000,   15,    2000,  60000, 10,   5000, 1500,
          4,     20000, 80000,  25,    10000, 50,    100,  600};
}

CtrGenResult generateCtrData(int64_t rows, uint64_t seed,
                             const std::string &path,
                             const CtrGenOptions &options) {
  if (rows <= 0)
    throw Error("datagen: rows must be positive, got " + std::to_string(rows));
  // Every row's score and label stay in memory for the ground-truth AUC.
  const double needed =
      double(rows) * (sizeof(double) + sizeof(float) +
                      (options.keepProbabilities ? sizeof(float) : 0));
  if (needed > 0.5 * machineMemoryBytes())
    throw Error("datagen: --rows " + std::to_string(rows) + " needs " +
                std::to_string(int64_t(needed / double(1 << 30))) +
                " GiB of memory for its ground-truth AUC, more than half of "
                "this machine's " +
                std::to_string(int64_t(machineMemoryBytes() / (1 << 30))) +
                " GiB; write fewer rows");
  std::vector<int64_t> vocabSizes =
      options.vocabSizes.empty() ? defaultVocabSizes() : options.vocabSizes;
  if (vocabSizes.size() != size_t(kNumSparse))
    throw Error("datagen: vocabSizes needs " + std::to_string(kNumSparse) +
                " entries, got " + std::to_string(vocabSizes.size()));
  for (int64_t size : vocabSizes)
    if (size < 1 || size > (int64_t(1) << 32))
      throw Error("datagen: a vocabulary size must be in [1, 2^32], got " +
                  std::to_string(size));
  if (!(options.zipfExponent > 0) || options.numInteractions < 0 ||
      !(options.maxDenseMissingRate >= 0 && options.maxDenseMissingRate <= 1) ||
      !(options.maxSparseMissingRate >= 0 && options.maxSparseMissingRate <= 1))
    throw Error("datagen: invalid options (zipfExponent > 0, "
                "numInteractions >= 0, missing rates in [0, 1])");

  uint64_t modelSeedState = seed ^ 0x6d6f64656c736565ULL; // "modelsee"
  uint64_t modelSeed =
      options.modelSeed ? *options.modelSeed : splitmix64(modelSeedState);
  Model model = buildModel(modelSeed, options, vocabSizes);
  Rng rng(seed);

  CtrGenResult result;
  result.rows = rows;
  std::vector<double> scores(static_cast<size_t>(rows));
  std::vector<float> labels(static_cast<size_t>(rows));
  if (options.keepProbabilities)
    result.probabilities.resize(size_t(rows));
  LogLossMeter logLoss;
  double probabilitySum = 0;

  // The rename below replaces what is at the path: a FIFO, a device or a
  // link would be replaced, not written through.
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode))
    throw Error("datagen: '" + path +
                "' exists and is not a regular file; not replacing it");
  // A unique temporary in the target's directory, so rename is atomic.
  std::string tempPath = path + ".tmp." + std::to_string(getpid());
  try {
    Output out(tempPath);
    int64_t values[kNumSparse];
    char dense[kNumDense][24];
    size_t denseLength[kNumDense];
    for (int64_t row = 0; row != rows; ++row) {
      double score = model.bias;
      for (int j = 0; j != kNumDense; ++j) {
        const DenseField &field = model.dense[j];
        denseLength[j] = 0;
        double t = 0;
        if (rng.uniform() >= field.missingRate) {
          int64_t x;
          t = transformed(field, rng, &x);
          denseLength[j] =
              size_t(std::to_chars(dense[j], dense[j] + 24, x).ptr - dense[j]);
        }
        score += field.weight * (t - field.center);
      }
      for (int f = 0; f != kNumSparse; ++f) {
        const SparseField &field = model.sparse[f];
        if (rng.uniform() < field.missingRate) {
          values[f] = -1;
          score += field.missingWeight;
        } else {
          values[f] = sampleZipf(field, rng);
          score += field.weights[size_t(values[f])];
        }
      }
      for (const Interaction &interaction : model.interactions) {
        int64_t a = values[interaction.a], b = values[interaction.b];
        if (a >= 0 && b >= 0)
          score += options.interactionStd * interaction.factorsA[size_t(a)] *
                   interaction.factorsB[size_t(b)];
      }
      double probability = 1.0 / (1.0 + std::exp(-score));
      bool label = rng.uniform() < probability;

      std::string &line = out.buffer();
      line.push_back(label ? '1' : '0');
      for (int j = 0; j != kNumDense; ++j) {
        line.push_back('\t');
        line.append(dense[j], denseLength[j]);
      }
      for (int f = 0; f != kNumSparse; ++f) {
        line.push_back('\t');
        if (values[f] >= 0)
          appendHex8(line, model.sparse[f].hashes[size_t(values[f])]);
      }
      line.push_back('\n');
      out.maybeFlush();

      scores[size_t(row)] = score;
      labels[size_t(row)] = label;
      if (options.keepProbabilities)
        result.probabilities[size_t(row)] = probability;
      logLoss.addLogit(score, label);
      probabilitySum += probability;
      result.positives += label;
    }
    out.close();
    result.bytes = out.bytes();
    if (std::rename(tempPath.c_str(), path.c_str()) != 0)
      throw Error("datagen: cannot rename '" + tempPath + "' to '" + path +
                  "': " + std::strerror(errno));
  } catch (...) {
    std::remove(tempPath.c_str());
    throw;
  }
  // The score is monotone in the probability, and exact where the
  // probability would round to 1.
  result.groundTruthAuc = computeAuc(scores, labels);
  result.groundTruthLogLoss = logLoss.value();
  result.meanProbability = probabilitySum / double(rows);
  return result;
}

int runDatagenCommand(int64_t rows, uint64_t seed,
                      const std::string &outputPath, std::ostream &report,
                      const CtrGenOptions &options) {
  try {
    auto start = std::chrono::steady_clock::now();
    CtrGenResult result = generateCtrData(rows, seed, outputPath, options);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    char line[512];
    std::snprintf(line, sizeof line,
                  "wrote %lld rows (%.1f MB) to %s in %.2f s\n"
                  "seed %llu, positives %lld (%.2f%%, mean true probability "
                  "%.4f)\n"
                  "ground-truth AUC %.6f, log-loss %.6f (the best a model "
                  "can reach on this data)\n",
                  (long long)result.rows, double(result.bytes) / 1e6,
                  outputPath.c_str(), seconds, (unsigned long long)seed,
                  (long long)result.positives,
                  100.0 * double(result.positives) / double(result.rows),
                  result.meanProbability, result.groundTruthAuc,
                  result.groundTruthLogLoss);
    report << line;
    return 0;
  } catch (const std::exception &error) {
    // Error for bad arguments and I/O; bad_alloc for a huge --rows.
    report << "error: " << error.what() << "\n";
    return 1;
  }
}

} // namespace heterps::rt::data
