//===- Loss.cu - Training losses and their gradients ----------------------===//
//
// Samples of at least kBlockRow elements get a thread block each (block
// reductions for the mean and the softmax denominator); shorter ones (a CTR
// model's [batch, 1] bce) a thread each. Element gradients of bce and mse and
// the one-hot gradient of softmax_ce on probabilities are one grid-stride
// pass. Elements are computed in float and each sample's sums accumulate in
// double, as on the CPU, so both backends agree to float rounding.
//
// softmax_ce class ids are checked on the device: the lowest bad sample is
// recorded in a flag word that run() reads back after the kernel (8 bytes
// per run), and the error names the same sample and id as the CPU's.
//
//===----------------------------------------------------------------------===//

#include "GpuCommon.cuh"

namespace heterps::rt::gpu {
namespace {

/// Probabilities are clamped away from 0 and 1 so that log and the
/// gradient's division stay finite (Keras' epsilon). NaN passes through, so
/// a diverged model shows up in the loss instead of being clamped away.
constexpr float kProbabilityLo = 1e-7f;
constexpr float kProbabilityHi = 1.0f - 1e-7f;

/// Samples of at least this many elements get a block each.
constexpr int64_t kBlockRow = 64;

/// The flag's value while no bad class id has been seen.
constexpr unsigned long long kNoBadSample = ~0ull;

unsigned blocksFor(int64_t rows) {
  return unsigned(std::clamp<int64_t>(rows, 1, 65535));
}

__device__ inline float quietNaN() { return __int_as_float(0x7fc00000); }

__device__ inline float clampProbability(float p) {
  return p < kProbabilityLo ? kProbabilityLo
                            : (p > kProbabilityHi ? kProbabilityHi : p);
}

/// exp only ever sees a non-positive argument: no overflow for any z, and
/// sigmoid(+-100) comes out as exactly 1 and a denormal, not NaN.
__device__ inline float stableSigmoid(float z) {
  if (z >= 0.0f)
    return 1.0f / (1.0f + expf(-z));
  float e = expf(z);
  return e / (1.0f + e);
}

/// Element loss and derivative (before the 1/(n*m) of the mean) of bce and
/// mse. The kind is the same for every thread of a launch, so the branches
/// never diverge.
struct ElementLoss {
  LossKind kind;
  bool fromLogits;

  __device__ float loss(float p, float y) const {
    if (kind == LossKind::MSE) {
      float d = p - y;
      return d * d;
    }
    if (fromLogits) // log(1 + e^z) - z*y with no exp that can overflow
      return fmaxf(p, 0.0f) - p * y + log1pf(expf(-fabsf(p)));
    float q = clampProbability(p);
    return -(y * logf(q) + (1.0f - y) * log1pf(-q));
  }

  /// bce on probabilities differentiates the formula at the clamped p rather
  /// than the clamp's zero: a prediction saturated at 0 or 1 with the wrong
  /// label keeps a large, finite push back instead of going dead.
  __device__ float gradient(float p, float y) const {
    if (kind == LossKind::MSE)
      return 2.0f * (p - y);
    if (fromLogits)
      return stableSigmoid(p) - y;
    float q = clampProbability(p);
    return (q - y) / (q * (1.0f - q));
  }
};

__global__ void elementLossThreadKernel(ElementLoss f, const float *x,
                                        const float *y, float *perSample,
                                        int64_t n, int64_t m) {
  HPS_GRID_STRIDE(i, n) {
    double sum = 0.0;
    for (int64_t j = 0; j < m; ++j)
      sum += f.loss(x[i * m + j], y[i * m + j]);
    perSample[i] = float(sum / double(m));
  }
}

__global__ void elementLossBlockKernel(ElementLoss f, const float *x,
                                       const float *y, float *perSample,
                                       int64_t n, int64_t m) {
  for (int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const float *p = x + row * m, *t = y + row * m;
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x)
      sum += f.loss(p[j], t[j]);
    sum = blockReduce(sum, SumOp{});
    if (threadIdx.x == 0)
      perSample[row] = float(sum / double(m));
  }
}

__global__ void elementGradientKernel(ElementLoss f, const float *x,
                                      const float *y, float *gradient,
                                      int64_t count, float scale) {
  HPS_GRID_STRIDE(k, count) { gradient[k] = f.gradient(x[k], y[k]) * scale; }
}

/// Whether `id` names one of m classes; otherwise records `sample` in the
/// flag. atomicMin keeps the lowest bad sample whatever the thread order.
__device__ inline bool classIdOk(int64_t id, int64_t m, int64_t sample,
                                 bool report, unsigned long long *badSample) {
  if (id >= 0 && id < m)
    return true;
  if (report)
    atomicMin(badSample, static_cast<unsigned long long>(sample));
  return false;
}

/// -log(clamp(p[id])) per sample; NaN for a bad id (run() throws anyway).
__global__ void probabilityCeLossKernel(const float *x, const int64_t *ids,
                                        float *perSample, int64_t n, int64_t m,
                                        unsigned long long *badSample) {
  HPS_GRID_STRIDE(i, n) {
    int64_t id = ids[i];
    perSample[i] = classIdOk(id, m, i, true, badSample)
                       ? -logf(clampProbability(x[i * m + id]))
                       : quietNaN();
  }
}

/// -scale / clamp(p) at the label, 0 elsewhere.
__global__ void probabilityCeGradientKernel(const float *x, const int64_t *ids,
                                            float *gradient, int64_t n,
                                            int64_t m, float scale,
                                            unsigned long long *badSample) {
  HPS_GRID_STRIDE(k, n * m) {
    int64_t i = k / m, j = k % m, id = ids[i];
    bool ok = classIdOk(id, m, i, j == 0, badSample);
    gradient[k] = ok && j == id ? -scale / clampProbability(x[k]) : 0.0f;
  }
}

/// Softmax cross-entropy on logits, a thread per sample: perSample (when
/// not null) gets logsumexp(z) - z[id], otherwise gradient gets
/// (softmax(z) - onehot(id)) * scale. The one-hot is subtracted before
/// scaling so that a softmax of exactly 1 at the label gives exactly 0.
__global__ void logitCeThreadKernel(const float *x, const int64_t *ids,
                                    float *perSample, float *gradient,
                                    int64_t n, int64_t m, float scale,
                                    unsigned long long *badSample) {
  HPS_GRID_STRIDE(i, n) {
    const float *z = x + i * m;
    int64_t id = ids[i];
    bool ok = classIdOk(id, m, i, true, badSample);
    float best = -INFINITY;
    for (int64_t j = 0; j < m; ++j)
      best = z[j] > best ? z[j] : best;
    double sum = 0.0;
    for (int64_t j = 0; j < m; ++j)
      sum += expf(z[j] - best);
    if (perSample) {
      perSample[i] =
          ok ? float(double(best) + log(sum) - double(z[id])) : quietNaN();
      continue;
    }
    float inverse = float(1.0 / sum);
    for (int64_t j = 0; j < m; ++j)
      gradient[i * m + j] =
          (expf(z[j] - best) * inverse - (j == id ? 1.0f : 0.0f)) * scale;
  }
}

/// logitCeThreadKernel with a block per sample. The id is the same for the
/// whole block, so every thread takes the same path around the reductions.
__global__ void logitCeBlockKernel(const float *x, const int64_t *ids,
                                   float *perSample, float *gradient, int64_t n,
                                   int64_t m, float scale,
                                   unsigned long long *badSample) {
  for (int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const float *z = x + row * m;
    int64_t id = ids[row];
    bool ok = classIdOk(id, m, row, threadIdx.x == 0, badSample);
    float best = -INFINITY;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x)
      best = z[j] > best ? z[j] : best;
    best = blockReduce(best, MaxOp{});
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x)
      sum += expf(z[j] - best);
    sum = blockReduce(sum, SumOp{});
    if (perSample) {
      if (threadIdx.x == 0)
        perSample[row] =
            ok ? float(double(best) + log(sum) - double(z[id])) : quietNaN();
      continue;
    }
    float inverse = float(1.0 / sum);
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x)
      gradient[row * m + j] =
          (expf(z[j] - best) * inverse - (j == id ? 1.0f : 0.0f)) * scale;
  }
}

} // namespace

struct Loss::Impl {
  Context &ctx;
  LossKind kind;
  bool fromLogits;
  int64_t n, m;
  /// d mean / d perSample element: 1/(n*m) for bce and mse, 1/n for
  /// softmax_ce (one loss per sample).
  float scale;
  /// softmax_ce only: the lowest sample with a bad class id.
  DeviceBuffer badSample;

  Impl(Context &ctx, DType type, LossKind kind, bool fromLogits, int64_t n,
       int64_t m)
      : ctx(ctx), kind(kind), fromLogits(fromLogits), n(n), m(m) {
    scale = checkLossParameters(type, kind, n, m);
    if (kind == LossKind::SoftmaxCE)
      badSample = DeviceBuffer("Loss", sizeof(unsigned long long));
  }

  unsigned long long *flag() const {
    return static_cast<unsigned long long *>(badSample.get());
  }

  void resetFlag() {
    // All bytes 0xff: kNoBadSample.
    HPS_CUDA_CHECK(cudaMemsetAsync(badSample.get(), 0xff, badSample.bytes(),
                                   streamOf(ctx)));
  }

  /// Waits for the kernel; throws naming the lowest bad sample and its id
  /// (read back from the label, only on this error path).
  void checkFlag(const int64_t *ids) {
    cudaStream_t stream = streamOf(ctx);
    unsigned long long sample = kNoBadSample;
    HPS_CUDA_CHECK(cudaMemcpyAsync(&sample, badSample.get(), sizeof(sample),
                                   cudaMemcpyDeviceToHost, stream));
    HPS_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (sample == kNoBadSample)
      return;
    int64_t id = 0;
    HPS_CUDA_CHECK(cudaMemcpyAsync(&id, ids + sample, sizeof(id),
                                   cudaMemcpyDeviceToHost, stream));
    HPS_CUDA_CHECK(cudaStreamSynchronize(stream));
    throw Error("Loss (softmax_ce): sample " + std::to_string(sample) +
                " has class id " + std::to_string(id) + " outside [0, " +
                std::to_string(m) + ")");
  }

  void run(const float *x, const void *label, float *perSample) {
    cudaStream_t stream = streamOf(ctx);
    if (kind != LossKind::SoftmaxCE) {
      ElementLoss f{kind, fromLogits};
      const float *y = static_cast<const float *>(label);
      if (m >= kBlockRow)
        elementLossBlockKernel<<<blocksFor(n), kThreads, 0, stream>>>(
            f, x, y, perSample, n, m);
      else
        elementLossThreadKernel<<<gridFor(n), kThreads, 0, stream>>>(
            f, x, y, perSample, n, m);
      checkLaunch("Loss");
      return;
    }
    const int64_t *ids = static_cast<const int64_t *>(label);
    resetFlag();
    if (!fromLogits)
      probabilityCeLossKernel<<<gridFor(n), kThreads, 0, stream>>>(
          x, ids, perSample, n, m, flag());
    else if (m >= kBlockRow)
      logitCeBlockKernel<<<blocksFor(n), kThreads, 0, stream>>>(
          x, ids, perSample, nullptr, n, m, scale, flag());
    else
      logitCeThreadKernel<<<gridFor(n), kThreads, 0, stream>>>(
          x, ids, perSample, nullptr, n, m, scale, flag());
    checkLaunch("Loss");
    checkFlag(ids);
  }

  void runGradient(const float *x, const void *label, float *gradient) {
    cudaStream_t stream = streamOf(ctx);
    if (kind != LossKind::SoftmaxCE) {
      elementGradientKernel<<<gridFor(n * m), kThreads, 0, stream>>>(
          ElementLoss{kind, fromLogits}, x, static_cast<const float *>(label),
          gradient, n * m, scale);
      checkLaunch("Loss");
      return;
    }
    const int64_t *ids = static_cast<const int64_t *>(label);
    resetFlag();
    if (!fromLogits)
      probabilityCeGradientKernel<<<gridFor(n * m), kThreads, 0, stream>>>(
          x, ids, gradient, n, m, scale, flag());
    else if (m >= kBlockRow)
      logitCeBlockKernel<<<blocksFor(n), kThreads, 0, stream>>>(
          x, ids, nullptr, gradient, n, m, scale, flag());
    else
      logitCeThreadKernel<<<gridFor(n), kThreads, 0, stream>>>(
          x, ids, nullptr, gradient, n, m, scale, flag());
    checkLaunch("Loss");
    checkFlag(ids);
  }
};

Loss::Loss(Context &ctx, DType type, LossKind kind, bool fromLogits, int64_t n,
           int64_t m)
    : impl(new Impl(ctx, type, kind, fromLogits, n, m)) {}
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

} // namespace heterps::rt::gpu
