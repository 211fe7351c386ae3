//===- Optimizers.h - Row updates and first-touch init ---------*- C++ -*-===//
//
// Internal to the parameter server. A row (sparse or dense) is `dim` weights
// followed by optimizerStateSize() floats of state; the functions here are
// the only code that knows the state layout.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_OPTIMIZERS_H
#define HETERPS_RUNTIME_PS_OPTIMIZERS_H

#include "heterps/Runtime/ParameterServer.h"

namespace heterps::rt::ps {

/// Throws Error if a hyper-parameter makes the update meaningless.
void validateOptimizer(const OptimizerConfig &config, const std::string &owner);

/// Writes the state of a row that has never been updated.
void initOptimizerState(const OptimizerConfig &config, size_t dim,
                        float *state);

/// `config` with its learning rate multiplied by `scale` (moving averages
/// have none): the rate of an update under setLearningRateScale. A scale
/// of 1 changes no bit.
OptimizerConfig scaledOptimizer(const OptimizerConfig &config, float scale);

/// One update of `dim` weights with the (already merged) gradient.
void applyOptimizer(const OptimizerConfig &config, size_t dim, float *weights,
                    float *state, const float *gradient);

/// A well-mixed 64-bit hash (splitmix64's finaliser): shards keys and drives
/// the initialiser.
inline uint64_t mixKey(uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

/// Uniform weights in (-scale, scale) that depend only on (seed, key): a
/// counter-based hash per element, so no generator state is shared between
/// rows, shards or threads.
void initRowWeights(uint64_t seed, float scale, uint64_t key, size_t dim,
                    float *weights);

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_OPTIMIZERS_H
