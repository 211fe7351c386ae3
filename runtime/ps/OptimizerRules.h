//===- OptimizerRules.h - One element of each optimizer update --*- C++ -*-===//
//
// Internal to the parameter server: the arithmetic of one weight's update,
// written once for the host (Optimizers.cpp) and the GPU (CudaPassCache.cu),
// so that a pass cache in GPU memory updates rows bit for bit as the host
// server does. Both sides must evaluate these expressions as written: no
// fused multiply-add (the host library is built for baseline x86-64, which
// has none; the CUDA file is built with --fmad=false), IEEE division and
// square root (nvcc's defaults without --use_fast_math).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_OPTIMIZERRULES_H
#define HETERPS_RUNTIME_PS_OPTIMIZERRULES_H

#include "heterps/Runtime/ParameterServer.h"

#include <cmath>
#include <cstddef>

#if defined(__CUDACC__)
#define HETERPS_PS_HOST_DEVICE __host__ __device__
#else
#define HETERPS_PS_HOST_DEVICE
#endif

namespace heterps::rt::ps::rules {

HETERPS_PS_HOST_DEVICE inline void sgd(float &weight, float gradient,
                                       float rate) {
  weight -= rate * gradient;
}

HETERPS_PS_HOST_DEVICE inline void sgdMomentum(float &weight, float &velocity,
                                               float gradient, float rate,
                                               float momentum) {
  velocity = momentum * velocity + gradient;
  weight -= rate * velocity;
}

/// `firstCorrection` and `secondCorrection` are 1 - beta^t of the row.
HETERPS_PS_HOST_DEVICE inline void adam(float &weight, float &firstMoment,
                                        float &secondMoment, float gradient,
                                        float rate, float beta1, float beta2,
                                        float epsilon, float firstCorrection,
                                        float secondCorrection) {
  firstMoment = beta1 * firstMoment + (1.0f - beta1) * gradient;
  secondMoment = beta2 * secondMoment + (1.0f - beta2) * gradient * gradient;
  const float corrected = firstMoment / firstCorrection;
  weight -=
      rate * corrected / (sqrtf(secondMoment / secondCorrection) + epsilon);
}

HETERPS_PS_HOST_DEVICE inline void adagrad(float &weight, float &accumulator,
                                           float gradient, float rate,
                                           float epsilon) {
  accumulator += gradient * gradient;
  weight -= rate * gradient / (sqrtf(accumulator) + epsilon);
}

HETERPS_PS_HOST_DEVICE inline void movingAverage(float &weight, float value,
                                                 float momentum) {
  const float keep = momentum, take = 1.0f - momentum;
  weight = keep * weight + take * value;
}

/// The optimizer of one update, with the learning-rate scale of that moment,
/// as a device kernel takes it by value.
struct UpdateRule {
  OptimizerKind kind;
  float rate, momentum, beta1, beta2, epsilon;
};

inline UpdateRule updateRule(const OptimizerConfig &optimizer) {
  return {optimizer.kind,  optimizer.learningRate, optimizer.momentum,
          optimizer.beta1, optimizer.beta2,        optimizer.epsilon};
}

/// Adam's bias corrections 1 - beta^t of a row whose state is `state`
/// (after its `dim` moments' pairs: beta1^(t-1), beta2^(t-1)), one step on;
/// zero for the other optimizers.
struct Corrections {
  float first = 0, second = 0;
};
HETERPS_PS_HOST_DEVICE inline Corrections
adamCorrections(const float *state, size_t dim, const UpdateRule &rule) {
  Corrections corrections;
  if (rule.kind == OptimizerKind::Adam) {
    corrections.first = 1.0f - state[2 * dim] * rule.beta1;
    corrections.second = 1.0f - state[2 * dim + 1] * rule.beta2;
  }
  return corrections;
}

/// Element `d` of a row of `dim` weights and its state (laid out as
/// Optimizers.h says) updated with `gradient`.
HETERPS_PS_HOST_DEVICE inline void
updateElement(float *weights, float *state, size_t dim, size_t d,
              float gradient, const UpdateRule &rule,
              const Corrections &corrections) {
  switch (rule.kind) {
  case OptimizerKind::Sgd:
    if (rule.momentum == 0.0f)
      sgd(weights[d], gradient, rule.rate);
    else
      sgdMomentum(weights[d], state[d], gradient, rule.rate, rule.momentum);
    break;
  case OptimizerKind::Adam:
    adam(weights[d], state[d], state[dim + d], gradient, rule.rate, rule.beta1,
         rule.beta2, rule.epsilon, corrections.first, corrections.second);
    break;
  case OptimizerKind::Adagrad:
    adagrad(weights[d], state[d], gradient, rule.rate, rule.epsilon);
    break;
  case OptimizerKind::MovingAverage:
    movingAverage(weights[d], gradient, rule.momentum);
    break;
  }
}

/// After every element's update: Adam's beta powers one step on.
HETERPS_PS_HOST_DEVICE inline void advanceState(float *state, size_t dim,
                                                const UpdateRule &rule) {
  if (rule.kind != OptimizerKind::Adam)
    return;
  state[2 * dim] *= rule.beta1;
  state[2 * dim + 1] *= rule.beta2;
}

} // namespace heterps::rt::ps::rules

#endif // HETERPS_RUNTIME_PS_OPTIMIZERRULES_H
