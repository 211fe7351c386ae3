//===- CtrDataGen.h - Synthetic Criteo-format CTR data ----------*- C++ -*-===//
//
// Writes Criteo-format TSV (see CtrData.h) drawn from a hidden ground-truth
// model, so that training can be checked against the best AUC reachable on
// that data rather than against a guess.
//
// The model is logistic: score = bias + sum over the 26 categorical fields of
// a per-value weight + sum over the 13 dense fields of weight * t(x) (t is
// the reader's transform: log(1 + x) for x > 0, x otherwise, 0 if missing) +
// a few pairwise interactions of categorical fields (product of per-value
// latent factors), and label ~ Bernoulli(sigmoid(score)). Categorical values
// are Zipf-distributed over a vocabulary per field (sizes from 3 to 10^5 by
// default; rarer values get smaller weights), each printed as a distinct
// 8-hex-digit hash. Some values of both kinds are missing, at a rate per
// field. A logistic regression over the reader's features can represent
// everything but the interactions, which are kept small, so it gets close to
// the ground truth's AUC given enough rows (within about 0.012 from 320k
// rows in CtrDataTest).
//
// Deterministic: the same rows, seed and options give the same bytes (own
// xoshiro256** generator and samplers, not <random>'s distributions).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_CTRDATAGEN_H
#define HETERPS_RUNTIME_CTRDATAGEN_H

#include "heterps/Runtime/CtrData.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace heterps::rt::data {

struct CtrGenOptions {
  /// Vocabulary size per categorical field (kNumSparse entries, each >= 1);
  /// empty = the default spread (3 .. 100000, Criteo-like shape).
  std::vector<int64_t> vocabSizes;
  /// Zipf exponent of the categorical value distribution.
  double zipfExponent = 1.2;
  /// Standard deviation of the per-value weights of one categorical field;
  /// the field's share shrinks slowly with its vocabulary size.
  double sparseWeightStd = 0.35;
  /// Values of rank k (0 = most frequent) have their weight's standard
  /// deviation scaled by 1 / sqrt(1 + k / tailRank): rare values carry less
  /// signal each (0 = no scaling).
  double tailRank = 200;
  /// Standard deviation of the dense weights (per unit of t(x)).
  double denseWeightStd = 0.25;
  /// Pairwise categorical interactions and their scale.
  int numInteractions = 4;
  double interactionStd = 0.12;
  /// Logit offset; sets the click rate (about 25% by default).
  double bias = -1.3;
  /// Missing rates are drawn per field, uniformly in [0, max].
  double maxDenseMissingRate = 0.4;
  double maxSparseMissingRate = 0.3;
  /// The hidden model's seed; unset = derived from the sampling seed. Two
  /// files with the same modelSeed and different seeds share the model (a
  /// train file and a held-out file).
  std::optional<uint64_t> modelSeed;
  /// Return every row's true click probability in CtrGenResult.
  bool keepProbabilities = false;
};

struct CtrGenResult {
  int64_t rows = 0;
  int64_t positives = 0;
  uint64_t bytes = 0;
  /// The ground-truth model's own metrics on the rows it generated: the best
  /// a learner can expect (up to sampling noise).
  double groundTruthAuc = 0;
  double groundTruthLogLoss = 0;
  /// Mean true click probability.
  double meanProbability = 0;
  /// Per row, when CtrGenOptions::keepProbabilities.
  std::vector<double> probabilities;
};

/// The default vocabulary sizes (CtrGenOptions::vocabSizes empty).
std::vector<int64_t> defaultVocabSizes();

/// Writes `rows` examples to `path` atomically (a temporary file next to it,
/// then rename), so a reader never sees half a file. Throws Error on invalid
/// options or I/O failure (the temporary is removed). Memory: 12 bytes per
/// row for the exact AUC (plus 8 with keepProbabilities).
CtrGenResult generateCtrData(int64_t rows, uint64_t seed,
                             const std::string &path,
                             const CtrGenOptions &options = {});

/// `heterps datagen ctr --rows N --seed S -o FILE`: generates with `options`
/// and prints a summary (or "error: ...") to `report`. Returns the
/// process exit code: 0, or 1 on failure.
int runDatagenCommand(int64_t rows, uint64_t seed,
                      const std::string &outputPath, std::ostream &report,
                      const CtrGenOptions &options = {});

} // namespace heterps::rt::data

#endif // HETERPS_RUNTIME_CTRDATAGEN_H
