//===- RecurrentSupport.h - What the recurrent kernels share ----*- C++ -*-===//
//
// Vectorisable activations and the small-batch products of the Recurrent
// kernel and its adjoint. Files including this are built with
// -fno-trapping-math, without which the activations do not vectorise.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_RECURRENTSUPPORT_H
#define HETERPS_RUNTIME_KERNELS_CPU_RECURRENTSUPPORT_H

#include "CpuContext.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace heterps::rt::cpu::recurrent {

/// v within [lo, hi], NaN kept; by value and as selects, so that loops over
/// it vectorise (std::clamp returns a reference, which gcc's vectoriser does
/// not see through).
inline float clampTo(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/// e^x to about 2 ulp (Cephes' expf: x = n ln2 + r, a degree-6 polynomial
/// in r, 2^n from the exponent bits), branch-free so that loops over it
/// vectorise; std::exp does not, and the gates' activations were most of a
/// step's time. x is clamped to [-87, 88], where e^x stays a normal float.
inline float expFast(float x) {
  x = clampTo(x, -87.0f, 88.0f);
  float n = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

/// Throws Error("KERNEL: sequence_lens[b] = n is outside [0, steps]") for
/// the first length out of range; null lengths pass.
inline void checkLengths(const char *kernel, const RecurrentParams &p,
                         const int64_t *lengths) {
  if (!lengths)
    return;
  for (int64_t b = 0; b < p.batch; ++b)
    if (lengths[b] < 0 || lengths[b] > p.steps)
      throw Error(std::string(kernel) + ": sequence_lens[" + std::to_string(b) +
                  "] = " + std::to_string(lengths[b]) + " is outside [0, " +
                  std::to_string(p.steps) + "]");
}

/// Batches up to this size multiply h R^T in loops of their own over R^T
/// (transposed once per run): a oneDNN call per step costs more than such
/// a small product.
constexpr int64_t kSmallBatch = 4;

/// [rows, cols] row-major w as [cols, rows].
inline void transpose(const float *w, int64_t rows, int64_t cols, float *out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[j * rows + i] = w[i * cols + j];
}

/// y[b, :] = sum_k x[b, k] wT[k, :] for x [rows, depth], wT [depth, cols]:
/// four rows of wT per pass over y, each pass a vectorised loop.
inline void smallProduct(const float *x, const float *wT, int64_t rows,
                         int64_t cols, int64_t depth, float *y) {
  for (int64_t b = 0; b < rows; ++b) {
    const float *xb = x + b * depth;
    float *yb = y + b * cols;
    std::fill_n(yb, cols, 0.0f);
    int64_t k = 0;
    for (; k + 4 <= depth; k += 4) {
      const float x0 = xb[k], x1 = xb[k + 1], x2 = xb[k + 2], x3 = xb[k + 3];
      const float *w0 = wT + k * cols, *w1 = w0 + cols, *w2 = w1 + cols,
                  *w3 = w2 + cols;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j)
        yb[j] += x0 * w0[j] + x1 * w1[j] + x2 * w2[j] + x3 * w3[j];
    }
    for (; k < depth; ++k) {
      const float xk = xb[k];
      const float *wk = wT + k * cols;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j)
        yb[j] += xk * wk[j];
    }
  }
}

/// ONNX's activation f, g or h over v[0, n) in place, its input clipped to
/// +-clip first where the op asks and `clip` says this activation takes it.
inline void activate(UnaryKind kind, float *v, int64_t n,
                     const RecurrentParams &p, bool clip) {
  if (clip && p.hasClip) {
    const float bound = p.clip;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      v[i] = clampTo(v[i], -bound, bound);
  }
  switch (kind) {
  case UnaryKind::Sigmoid:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      v[i] = 1.0f / (1.0f + expFast(-v[i]));
    break;
  case UnaryKind::Tanh:
    // 1 - 2 / (e^2x + 1): exact at the ends, within 1e-7 absolute near 0.
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      v[i] = 1.0f - 2.0f / (expFast(2.0f * v[i]) + 1.0f);
    break;
  case UnaryKind::Relu:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      v[i] = v[i] < 0.0f ? 0.0f : v[i];
    break;
  default:
    break; // rejected by the constructor
  }
}

/// activate(), and d[i] = the activation's derivative with respect to the
/// input v[i] had (zero where the clip bounded it).
inline void activateWithDerivative(UnaryKind kind, float *v, float *d,
                                   int64_t n, const RecurrentParams &p,
                                   bool clip) {
  if (clip && p.hasClip) {
    const float bound = p.clip;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      d[i] = v[i] >= -bound && v[i] <= bound ? 1.0f : 0.0f;
  } else {
    std::fill_n(d, n, 1.0f);
  }
  activate(kind, v, n, p, clip);
  switch (kind) {
  case UnaryKind::Sigmoid:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      d[i] *= v[i] * (1.0f - v[i]);
    break;
  case UnaryKind::Tanh:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      d[i] *= 1.0f - v[i] * v[i];
    break;
  default: // Relu
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      d[i] = v[i] > 0.0f ? d[i] : 0.0f;
    break;
  }
}

} // namespace heterps::rt::cpu::recurrent

#endif // HETERPS_RUNTIME_KERNELS_CPU_RECURRENTSUPPORT_H
