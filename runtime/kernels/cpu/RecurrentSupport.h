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
#include <vector>

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

/// The kernels' own loops are built for AVX2 (HETERPS_RT_CPU_ARCH); this
/// adds an AVX-512 copy of a function, chosen when the library loads on a
/// CPU that has it. Each element's operations are the same in both copies,
/// so results do not change with the machine.
#if defined(__x86_64__) && defined(__GNUC__)
#define HPS_AVX512_CLONE                                                       \
  __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define HPS_AVX512_CLONE
#endif

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

/// Batches up to this size multiply h R^T (and the adjoint dG R) by
/// PanelProduct: a oneDNN call per step costs more than such a small
/// product.
constexpr int64_t kSmallBatch = 4;

/// y = x w^T for small batches, with w [cols, depth] packed
/// once per run into panels of kPanel columns, each [depth][kPanel]
/// contiguous: a panel's columns stay in registers over the whole depth and
/// w is read once per row, as one stream. (Passes over y per four rows of
/// w^T, the loop before this, ran the LSTM benchmark's 128 x 512 step at
/// 0.65x onnxruntime's speed: y went through L1 32 times per step.)
class PanelProduct {
public:
  /// Packs w [cols, depth] row-major.
  void pack(const float *w, int64_t cols, int64_t depth) {
    pack(w, cols, depth, depth, 1);
  }
  /// Packs w given as w^T [depth, cols] row-major.
  void packTransposed(const float *wT, int64_t cols, int64_t depth) {
    pack(wT, cols, depth, 1, cols);
  }

  /// y [rows, cols] = x [rows, depth] w^T.
  void run(const float *x, int64_t rows, float *y) const {
    for (int64_t p = 0; p < panels_; ++p) {
      const float *panel = packed_.data() + p * depth_ * kPanel;
      const int64_t first = p * kPanel, width = std::min(kPanel, cols_ - first);
      for (int64_t b = 0; b < rows; ++b) {
        const float *xb = x + b * depth_;
        Lanes sums[kVectors] = {};
        for (int64_t k = 0; k < depth_; ++k) {
          Lanes xk = Lanes{} + xb[k];
          const float *wk = panel + k * kPanel;
          // Four rows ahead: the stream comes from L2, where the hardware
          // prefetchers alone left the loop waiting on loads (5.6 against
          // 6.0-7.4 ms on the LSTM benchmark at batch 1).
          for (int64_t line = 0; line < kPanel; line += 16)
            __builtin_prefetch(wk + 4 * kPanel + line);
#pragma GCC unroll 8
          for (int64_t v = 0; v < kVectors; ++v) {
            Lanes wv;
            std::memcpy(&wv, wk + v * kLanes, sizeof wv);
            sums[v] += xk * wv;
          }
        }
        float out[kPanel];
        std::memcpy(out, sums, sizeof out);
        std::memcpy(y + b * cols_ + first, out, width * sizeof(float));
      }
    }
  }

private:
  /// w's element (j, k) at w[j * colStride + k * depthStride].
  void pack(const float *w, int64_t cols, int64_t depth, int64_t colStride,
            int64_t depthStride) {
    cols_ = cols;
    depth_ = depth;
    panels_ = (cols + kPanel - 1) / kPanel;
    packed_.assign(panels_ * depth * kPanel, 0.0f);
    for (int64_t j = 0; j < cols; ++j) {
      float *column =
          packed_.data() + (j / kPanel) * depth * kPanel + j % kPanel;
      for (int64_t k = 0; k < depth; ++k)
        column[k * kPanel] = w[j * colStride + k * depthStride];
    }
  }

  /// Eight AVX2 vectors of sums: with a broadcast and a load, 10 of the 16
  /// registers.
  using Lanes = float __attribute__((vector_size(32)));
  static constexpr int64_t kLanes = 8, kVectors = 8, kPanel = kLanes * kVectors;
  int64_t cols_ = 0, depth_ = 0, panels_ = 0;
  std::vector<float> packed_;
};

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
