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

#include <cmath>

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

} // namespace heterps::rt::ps::rules

#endif // HETERPS_RUNTIME_PS_OPTIMIZERRULES_H
