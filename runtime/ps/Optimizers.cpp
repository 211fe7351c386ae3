//===- Optimizers.cpp - Row updates and the first-touch initialiser -------===//

#include "Optimizers.h"
#include "OptimizerRules.h"

#include <cmath>

namespace heterps::rt::ps {

const char *optimizerName(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::Sgd:
    return "sgd";
  case OptimizerKind::Adam:
    return "adam";
  case OptimizerKind::Adagrad:
    return "adagrad";
  case OptimizerKind::MovingAverage:
    return "moving-average";
  }
  return "unknown";
}

size_t optimizerStateSize(const OptimizerConfig &config, size_t dim) {
  switch (config.kind) {
  case OptimizerKind::Sgd:
    // Plain SGD keeps no velocity, so momentum-free tables stay small.
    return config.momentum != 0.0f ? dim : 0;
  case OptimizerKind::Adam:
    // First and second moments, then beta1^t and beta2^t of this row.
    return 2 * dim + 2;
  case OptimizerKind::Adagrad:
    return dim;
  case OptimizerKind::MovingAverage:
    return 0;
  }
  return 0;
}

void validateOptimizer(const OptimizerConfig &config,
                       const std::string &owner) {
  auto fail = [&](const std::string &what) {
    throw Error("parameter server: " + owner + ": " + what);
  };
  if (!(config.learningRate >= 0.0f) || !std::isfinite(config.learningRate))
    fail("learning rate must be finite and >= 0");
  switch (config.kind) {
  case OptimizerKind::Sgd:
    if (!(config.momentum >= 0.0f && config.momentum < 1.0f))
      fail("SGD momentum must be in [0, 1)");
    break;
  case OptimizerKind::Adam:
    if (!(config.beta1 >= 0.0f && config.beta1 < 1.0f) ||
        !(config.beta2 >= 0.0f && config.beta2 < 1.0f))
      fail("Adam betas must be in [0, 1)");
    if (!(config.epsilon > 0.0f))
      fail("Adam epsilon must be > 0");
    break;
  case OptimizerKind::Adagrad:
    if (!(config.initialAccumulator >= 0.0f))
      fail("Adagrad initial accumulator must be >= 0");
    if (!(config.epsilon >= 0.0f) ||
        (config.epsilon == 0.0f && config.initialAccumulator == 0.0f))
      fail("Adagrad needs epsilon > 0 or an initial accumulator > 0");
    break;
  case OptimizerKind::MovingAverage:
    if (!(config.momentum >= 0.0f && config.momentum <= 1.0f))
      fail("moving-average momentum must be in [0, 1]");
    break;
  }
}

void initOptimizerState(const OptimizerConfig &config, size_t dim,
                        float *state) {
  switch (config.kind) {
  case OptimizerKind::Sgd:
    for (size_t i = 0; i < optimizerStateSize(config, dim); ++i)
      state[i] = 0.0f;
    break;
  case OptimizerKind::Adam:
    for (size_t i = 0; i < 2 * dim; ++i)
      state[i] = 0.0f;
    state[2 * dim] = 1.0f;
    state[2 * dim + 1] = 1.0f;
    break;
  case OptimizerKind::Adagrad:
    for (size_t i = 0; i < dim; ++i)
      state[i] = config.initialAccumulator;
    break;
  case OptimizerKind::MovingAverage:
    break;
  }
}

OptimizerConfig scaledOptimizer(const OptimizerConfig &config, float scale) {
  OptimizerConfig scaled = config;
  if (scaled.kind != OptimizerKind::MovingAverage)
    scaled.learningRate *= scale;
  return scaled;
}

void applyOptimizer(const OptimizerConfig &config, size_t dim, float *weights,
                    float *state, const float *gradient) {
  const float lr = config.learningRate;
  switch (config.kind) {
  case OptimizerKind::Sgd:
    if (config.momentum == 0.0f) {
      for (size_t i = 0; i < dim; ++i)
        rules::sgd(weights[i], gradient[i], lr);
    } else {
      for (size_t i = 0; i < dim; ++i)
        rules::sgdMomentum(weights[i], state[i], gradient[i], lr,
                           config.momentum);
    }
    break;
  case OptimizerKind::Adam: {
    float &beta1Power = state[2 * dim];
    float &beta2Power = state[2 * dim + 1];
    beta1Power *= config.beta1;
    beta2Power *= config.beta2;
    const float firstCorrection = 1.0f - beta1Power;
    const float secondCorrection = 1.0f - beta2Power;
    for (size_t i = 0; i < dim; ++i)
      rules::adam(weights[i], state[i], state[dim + i], gradient[i], lr,
                  config.beta1, config.beta2, config.epsilon, firstCorrection,
                  secondCorrection);
    break;
  }
  case OptimizerKind::Adagrad:
    for (size_t i = 0; i < dim; ++i)
      rules::adagrad(weights[i], state[i], gradient[i], lr, config.epsilon);
    break;
  case OptimizerKind::MovingAverage:
    for (size_t i = 0; i < dim; ++i)
      rules::movingAverage(weights[i], gradient[i], config.momentum);
    break;
  }
}

void initRowWeights(uint64_t seed, float scale, uint64_t key, size_t dim,
                    float *weights) {
  const uint64_t rowBase = mixKey(key ^ mixKey(seed));
  for (size_t i = 0; i < dim; ++i) {
    const uint64_t bits = mixKey(rowBase + i);
    // 24 random bits centred in their cell: exactly representable, and
    // strictly inside (0, 1), so the weight is strictly inside the range.
    const float unit = (static_cast<float>(bits >> 40) + 0.5f) * 0x1p-24f;
    weights[i] = (2.0f * unit - 1.0f) * scale;
  }
}

} // namespace heterps::rt::ps
