//===- Loss.cpp - Training losses and their gradients on the CPU ----------===//
//
// Own loops over samples, on the calling thread unless the work is worth a
// team (CpuContext.h). Elements are computed in float, as the GPU does; each
// sample's sum of m element losses (and the softmax denominator) accumulates
// in double, so a loss over many elements is as accurate as the elements.
//
//===----------------------------------------------------------------------===//

#include "CpuContext.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace heterps::rt::cpu {
namespace {

/// Probabilities are clamped away from 0 and 1 so that log and the
/// gradient's division stay finite (Keras' epsilon). NaN passes through, so
/// a diverged model shows up in the loss instead of being clamped away.
constexpr float kProbabilityLo = 1e-7f;
constexpr float kProbabilityHi = 1.0f - 1e-7f;

inline float clampProbability(float p) {
  return p < kProbabilityLo ? kProbabilityLo
                            : (p > kProbabilityHi ? kProbabilityHi : p);
}

/// exp only ever sees a non-positive argument: no overflow for any z, and
/// sigmoid(+-100) comes out as exactly 1 and a denormal, not NaN.
inline float sigmoid(float z) {
  if (z >= 0.0f)
    return 1.0f / (1.0f + std::exp(-z));
  float e = std::exp(z);
  return e / (1.0f + e);
}

/// Element losses and their derivatives (before the 1/(n*m) of the mean).
struct BceLogits {
  float loss(float z, float y) const {
    // log(1 + e^z) - z*y rearranged so that no exp can overflow.
    return std::max(z, 0.0f) - z * y + std::log1p(std::exp(-std::fabs(z)));
  }
  float gradient(float z, float y) const { return sigmoid(z) - y; }
};

/// The gradient is that of the formula at the clamped p rather than the
/// clamp's zero: a prediction saturated at 0 or 1 with the wrong label keeps
/// a large, finite push back (as PyTorch's BCELoss does) instead of going
/// dead.
struct BceProbabilities {
  float loss(float p, float y) const {
    float q = clampProbability(p);
    return -(y * std::log(q) + (1.0f - y) * std::log1p(-q));
  }
  float gradient(float p, float y) const {
    float q = clampProbability(p);
    return (q - y) / (q * (1.0f - q));
  }
};

struct SquaredError {
  float loss(float p, float y) const {
    float d = p - y;
    return d * d;
  }
  float gradient(float p, float y) const { return 2.0f * (p - y); }
};

template <typename E>
void elementLossRun(const float *prediction, const float *label,
                    float *perSample, int64_t n, int64_t m, bool parallel) {
  E element;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < n; ++i) {
    const float *p = prediction + i * m, *y = label + i * m;
    double sum = 0.0;
    for (int64_t j = 0; j < m; ++j)
      sum += element.loss(p[j], y[j]);
    perSample[i] = float(sum / double(m));
  }
}

template <typename E>
void elementLossGradient(const float *prediction, const float *label,
                         float *gradient, int64_t count, float scale,
                         bool parallel) {
  E element;
#pragma omp parallel for simd schedule(static) if (parallel)
  for (int64_t k = 0; k < count; ++k)
    gradient[k] = element.gradient(prediction[k], label[k]) * scale;
}

/// max_j z_j and sum_j exp(z_j - max) of one row: log-sum-exp without
/// overflow. A NaN anywhere makes the sum NaN.
inline void softmaxDenominator(const float *z, int64_t m, float &best,
                               double &sum) {
  best = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < m; ++j)
    best = z[j] > best ? z[j] : best;
  sum = 0.0;
  for (int64_t j = 0; j < m; ++j)
    sum += std::exp(z[j] - best);
}

} // namespace

struct Loss::Impl {
  LossKind kind;
  bool fromLogits;
  int64_t n, m;
  /// d mean / d perSample element: 1/(n*m) for bce and mse, 1/n for
  /// softmax_ce (one loss per sample).
  float scale;
  bool parallelRun = false, parallelGradient = false; // worthThreads

  Impl(DType type, LossKind kind, bool fromLogits, int64_t n, int64_t m)
      : kind(kind), fromLogits(fromLogits), n(n), m(m) {
    scale = checkLossParameters(type, kind, n, m);
    double elements = double(n) * double(m);
    if (kind == LossKind::MSE) {
      parallelRun = parallelGradient =
          worthThreads(kCheapElementWork * elements);
    } else if (kind == LossKind::SoftmaxCE && !fromLogits) {
      // The loss reads one element per sample; the gradient writes a row.
      parallelRun = worthThreads(kTranscendentalElementWork * double(n));
      parallelGradient = worthThreads(kCheapElementWork * elements);
    } else {
      parallelRun = parallelGradient =
          worthThreads(kTranscendentalElementWork * elements);
    }
  }

  /// Checked up front on the calling thread: an exception cannot leave an
  /// OpenMP region, and n reads are nothing next to the n*m of the loss.
  void checkClassIds(const int64_t *ids) const {
    for (int64_t i = 0; i < n; ++i)
      if (ids[i] < 0 || ids[i] >= m)
        throw Error("Loss (softmax_ce): sample " + std::to_string(i) +
                    " has class id " + std::to_string(ids[i]) +
                    " outside [0, " + std::to_string(m) + ")");
  }

  void run(const float *prediction, const void *label, float *perSample) {
    if (kind != LossKind::SoftmaxCE) {
      const float *y = static_cast<const float *>(label);
      if (kind == LossKind::MSE)
        elementLossRun<SquaredError>(prediction, y, perSample, n, m,
                                     parallelRun);
      else if (fromLogits)
        elementLossRun<BceLogits>(prediction, y, perSample, n, m, parallelRun);
      else
        elementLossRun<BceProbabilities>(prediction, y, perSample, n, m,
                                         parallelRun);
      return;
    }
    const int64_t *ids = static_cast<const int64_t *>(label);
    checkClassIds(ids);
    const int64_t classes = m;
    if (!fromLogits) {
#pragma omp parallel for schedule(static) if (parallelRun)
      for (int64_t i = 0; i < n; ++i)
        perSample[i] =
            -std::log(clampProbability(prediction[i * classes + ids[i]]));
      return;
    }
#pragma omp parallel for schedule(static) if (parallelRun)
    for (int64_t i = 0; i < n; ++i) {
      const float *z = prediction + i * classes;
      float best;
      double sum;
      softmaxDenominator(z, classes, best, sum);
      // In double: the log-sum-exp and the label's logit may be close.
      perSample[i] = float(double(best) + std::log(sum) - double(z[ids[i]]));
    }
  }

  void runGradient(const float *prediction, const void *label,
                   float *gradient) {
    if (kind != LossKind::SoftmaxCE) {
      const float *y = static_cast<const float *>(label);
      int64_t count = n * m;
      if (kind == LossKind::MSE)
        elementLossGradient<SquaredError>(prediction, y, gradient, count, scale,
                                          parallelGradient);
      else if (fromLogits)
        elementLossGradient<BceLogits>(prediction, y, gradient, count, scale,
                                       parallelGradient);
      else
        elementLossGradient<BceProbabilities>(prediction, y, gradient, count,
                                              scale, parallelGradient);
      return;
    }
    const int64_t *ids = static_cast<const int64_t *>(label);
    checkClassIds(ids);
    const int64_t classes = m;
    const float s = scale;
    if (!fromLogits) {
#pragma omp parallel for schedule(static) if (parallelGradient)
      for (int64_t i = 0; i < n; ++i) {
        float *g = gradient + i * classes;
        for (int64_t j = 0; j < classes; ++j)
          g[j] = 0.0f;
        g[ids[i]] = -s / clampProbability(prediction[i * classes + ids[i]]);
      }
      return;
    }
#pragma omp parallel for schedule(static) if (parallelGradient)
    for (int64_t i = 0; i < n; ++i) {
      const float *z = prediction + i * classes;
      float *g = gradient + i * classes;
      float best;
      double sum;
      softmaxDenominator(z, classes, best, sum);
      float inverse = float(1.0 / sum);
      int64_t id = ids[i];
      // The one-hot is subtracted before scaling: a softmax of exactly 1 at
      // the label (a saturated, correct prediction) gives exactly 0.
      for (int64_t j = 0; j < classes; ++j)
        g[j] = (std::exp(z[j] - best) * inverse - (j == id ? 1.0f : 0.0f)) * s;
    }
  }
};

Loss::Loss(Context &, DType type, LossKind kind, bool fromLogits, int64_t n,
           int64_t m)
    : impl(std::make_unique<Impl>(type, kind, fromLogits, n, m)) {}
Loss::~Loss() = default;

void Loss::run(const void *prediction, const void *label, void *perSample) {
  impl->run(static_cast<const float *>(prediction), label,
            static_cast<float *>(perSample));
}

void Loss::runGradient(const void *prediction, const void *label,
                       void *gradient) {
  impl->runGradient(static_cast<const float *>(prediction), label,
                    static_cast<float *>(gradient));
}

} // namespace heterps::rt::cpu
