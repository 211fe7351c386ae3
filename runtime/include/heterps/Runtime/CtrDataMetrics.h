//===- CtrDataMetrics.h - AUC and log-loss for CTR models -------*- C++ -*-===//
//
// The two numbers a CTR training run reports: the exact ROC AUC (sort-based,
// tied scores count one half) and the mean log-loss, accumulated batch by
// batch.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_CTRDATAMETRICS_H
#define HETERPS_RUNTIME_CTRDATAMETRICS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace heterps::rt::data {

/// Exact ROC AUC: the probability that a random positive scores above a
/// random negative, ties counting 1/2 (the Mann-Whitney U statistic with
/// averaged ranks). A label > 0.5 is positive. Scores may be probabilities or
/// logits (only their order matters). Returns NaN when there is no positive
/// or no negative; throws Error on a NaN score. O(n log n) time, O(n) memory.
double computeAuc(const double *scores, const float *labels, size_t n);
double computeAuc(const float *scores, const float *labels, size_t n);
double computeAuc(const std::vector<double> &scores,
                  const std::vector<float> &labels);
double computeAuc(const std::vector<float> &scores,
                  const std::vector<float> &labels);

/// Mean binary cross-entropy, fed batch by batch; labels may be soft (in
/// [0, 1]). Probabilities are clamped to [kEpsilon, 1 - kEpsilon] so one
/// confident mistake costs a finite amount.
class LogLossMeter {
public:
  static constexpr double kEpsilon = 1e-7;

  void add(double probability, float label);
  /// From a logit, without forming the probability (stable for large |x|).
  void addLogit(double logit, float label);
  void add(const float *probabilities, const float *labels, size_t n);
  void addLogits(const float *logits, const float *labels, size_t n);
  /// Combines meters from several workers.
  void merge(const LogLossMeter &other);
  void reset();

  /// The mean so far; NaN before the first example.
  double value() const;
  uint64_t count() const { return count_; }

private:
  void accumulate(double loss);
  // Neumaier-compensated sum: billions of small terms stay exact enough.
  double sum_ = 0, compensation_ = 0;
  uint64_t count_ = 0;
};

} // namespace heterps::rt::data

#endif // HETERPS_RUNTIME_CTRDATAMETRICS_H
