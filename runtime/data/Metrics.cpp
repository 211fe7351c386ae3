//===- Metrics.cpp - Exact AUC and streaming log-loss ---------------------===//

#include "heterps/Runtime/CtrDataMetrics.h"
#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace heterps::rt::data {

namespace {

template <typename Score>
double aucImpl(const Score *scores, const float *labels, size_t n) {
  std::vector<std::pair<double, bool>> items(n);
  for (size_t i = 0; i != n; ++i) {
    if (std::isnan(double(scores[i])))
      throw Error("computeAuc: score " + std::to_string(i) + " is NaN");
    items[i] = {double(scores[i]), labels[i] > 0.5f};
  }
  std::sort(items.begin(), items.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  // Walk groups of equal scores upwards: each positive beats every negative
  // below its group and half of those inside it.
  double pairs = 0;
  uint64_t negativesBelow = 0, positives = 0;
  for (size_t i = 0; i != n;) {
    size_t j = i;
    uint64_t groupPositives = 0, groupNegatives = 0;
    for (; j != n && items[j].first == items[i].first; ++j)
      (items[j].second ? groupPositives : groupNegatives) += 1;
    pairs += double(groupPositives) *
             (double(negativesBelow) + 0.5 * double(groupNegatives));
    negativesBelow += groupNegatives;
    positives += groupPositives;
    i = j;
  }
  uint64_t negatives = negativesBelow;
  if (positives == 0 || negatives == 0)
    return std::numeric_limits<double>::quiet_NaN();
  return pairs / (double(positives) * double(negatives));
}

void checkSizes(size_t scores, size_t labels) {
  if (scores != labels)
    throw Error("computeAuc: " + std::to_string(scores) + " scores but " +
                std::to_string(labels) + " labels");
}

} // namespace

double computeAuc(const double *scores, const float *labels, size_t n) {
  return aucImpl(scores, labels, n);
}
double computeAuc(const float *scores, const float *labels, size_t n) {
  return aucImpl(scores, labels, n);
}
double computeAuc(const std::vector<double> &scores,
                  const std::vector<float> &labels) {
  checkSizes(scores.size(), labels.size());
  return aucImpl(scores.data(), labels.data(), scores.size());
}
double computeAuc(const std::vector<float> &scores,
                  const std::vector<float> &labels) {
  checkSizes(scores.size(), labels.size());
  return aucImpl(scores.data(), labels.data(), scores.size());
}

void LogLossMeter::accumulate(double loss) {
  double sum = sum_ + loss;
  compensation_ += std::fabs(sum_) >= std::fabs(loss) ? (sum_ - sum) + loss
                                                      : (loss - sum) + sum_;
  sum_ = sum;
  ++count_;
}

void LogLossMeter::add(double probability, float label) {
  double p = std::clamp(probability, kEpsilon, 1.0 - kEpsilon);
  double y = label;
  accumulate(-(y * std::log(p) + (1.0 - y) * std::log1p(-p)));
}

void LogLossMeter::addLogit(double logit, float label) {
  // -log sigmoid(x) = softplus(-x); -log(1 - sigmoid(x)) = softplus(x), and
  // softplus(x) = max(x, 0) + log1p(exp(-|x|)) never overflows.
  double softplusX =
      std::max(logit, 0.0) + std::log1p(std::exp(-std::fabs(logit)));
  double y = label;
  // y * softplus(-x) + (1 - y) * softplus(x), with softplus(-x) =
  // softplus(x) - x.
  accumulate(softplusX - y * logit);
}

void LogLossMeter::add(const float *probabilities, const float *labels,
                       size_t n) {
  for (size_t i = 0; i != n; ++i)
    add(probabilities[i], labels[i]);
}

void LogLossMeter::addLogits(const float *logits, const float *labels,
                             size_t n) {
  for (size_t i = 0; i != n; ++i)
    addLogit(logits[i], labels[i]);
}

void LogLossMeter::merge(const LogLossMeter &other) {
  uint64_t count = count_;
  accumulate(other.sum_ + other.compensation_);
  count_ = count + other.count_;
}

void LogLossMeter::reset() { *this = LogLossMeter(); }

double LogLossMeter::value() const {
  if (!count_)
    return std::numeric_limits<double>::quiet_NaN();
  return (sum_ + compensation_) / double(count_);
}

} // namespace heterps::rt::data
