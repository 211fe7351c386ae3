//===- Recurrent.cu - One direction of an RNN, GRU or LSTM over a sequence ===//
//
// The input projection X W^T + Wb comes in precomputed, so a step is the
// recurrent product h R^T (one cuBLAS sgemm, as the transposed column-major
// problem) and one elementwise kernel with a thread per (batch row, hidden
// unit) that applies the gates and writes the new state and y[t]. A GRU
// without linear_before_reset needs r before its candidate's product, so its
// step is two products with a small kernel computing r * h in between. The
// state lives in scratch buffers allocated once by the constructor; every
// step is queued on the context's stream, with no host synchronisation.
//
//===----------------------------------------------------------------------===//

#include "UnaryOps.cuh"

namespace heterps::rt::gpu {
namespace {

const char *const kKernel = "Recurrent";

/// What one step's kernels read and write. Pointers into projected and y are
/// already at step t; y and rb may be null.
struct StepArgs {
  const float *x = nullptr;         // projected[t]: [B, G]
  const float *rb = nullptr;        // Rb: [G]
  const int64_t *lengths = nullptr; // [B]
  const float *peepholes = nullptr; // [3H]: i, o, f
  float *h = nullptr;               // state [B, H], updated in place
  float *c = nullptr;               // LSTM cell state [B, H], in place
  float *hs = nullptr;              // h R^T: [B, G]
  float *rh = nullptr;              // GRU: r * h, [B, H]
  float *y = nullptr;               // y[t]: [B, H]
  int64_t t = 0, hidden = 0, gates = 0, total = 0; // total = B * H
  UnaryOp f, g, hAct;
  bool hasClip = false;
  float clip = 0.0f;
};

/// Activation `op` of v, clipped first when the op has a clip (NaN passes).
__device__ inline float activate(const StepArgs &a, const UnaryOp &op,
                                 float v) {
  if (a.hasClip)
    v = v < -a.clip ? -a.clip : (v > a.clip ? a.clip : v);
  return applyFloatUnary(op, v);
}

/// hs[b, k] + Rb[k] for gate column k = gate * H + j.
__device__ inline float recurrent(const StepArgs &a, int64_t b, int64_t k) {
  float v = a.hs[b * a.gates + k];
  return a.rb ? v + a.rb[k] : v;
}

/// Rows of length 0 end with a zero state, as onnxruntime gives them.
__global__ void clearEmptyRowsKernel(const int64_t *lengths, float *hLast,
                                     float *cLast, int64_t hidden,
                                     int64_t total) {
  HPS_GRID_STRIDE(i, total) {
    if (lengths[i / hidden] == 0) {
      if (hLast)
        hLast[i] = 0.0f;
      if (cLast)
        cLast[i] = 0.0f;
    }
  }
}

__device__ inline bool masked(const StepArgs &a, int64_t b) {
  return a.lengths && a.t >= a.lengths[b];
}

/// Stores newH (or keeps h for a finished row, whose y is 0).
__device__ inline void finish(const StepArgs &a, int64_t i, bool done,
                              float newH) {
  if (!done)
    a.h[i] = newH;
  if (a.y)
    a.y[i] = done ? 0.0f : newH;
}

__global__ void rnnStepKernel(StepArgs a) {
  HPS_GRID_STRIDE(i, a.total) {
    int64_t b = i / a.hidden, j = i % a.hidden;
    bool done = masked(a, b);
    float newH = 0.0f;
    if (!done)
      newH = activate(a, a.f, a.x[b * a.gates + j] + recurrent(a, b, j));
    finish(a, i, done, newH);
  }
}

__global__ void lstmStepKernel(StepArgs a) {
  HPS_GRID_STRIDE(i, a.total) {
    int64_t b = i / a.hidden, j = i % a.hidden, H = a.hidden;
    bool done = masked(a, b);
    float newH = 0.0f;
    if (!done) {
      const float *x = a.x + b * a.gates;
      float in = x[j] + recurrent(a, b, j);
      float out = x[H + j] + recurrent(a, b, H + j);
      float forget = x[2 * H + j] + recurrent(a, b, 2 * H + j);
      float cand = x[3 * H + j] + recurrent(a, b, 3 * H + j);
      float c = a.c[i];
      if (a.peepholes) {
        in += a.peepholes[j] * c;
        forget += a.peepholes[2 * H + j] * c;
      }
      in = activate(a, a.f, in);
      forget = activate(a, a.f, forget);
      cand = activate(a, a.g, cand);
      float newC = forget * c + in * cand;
      if (a.peepholes)
        out += a.peepholes[H + j] * newC;
      out = activate(a, a.f, out);
      // The cell's h activation takes newC unclipped.
      newH = out * applyFloatUnary(a.hAct, newC);
      a.c[i] = newC;
    }
    finish(a, i, done, newH);
  }
}

/// GRU with linear_before_reset: hs holds h R^T for all three gates.
__global__ void gruLinearStepKernel(StepArgs a) {
  HPS_GRID_STRIDE(i, a.total) {
    int64_t b = i / a.hidden, j = i % a.hidden, H = a.hidden;
    bool done = masked(a, b);
    float newH = 0.0f;
    if (!done) {
      const float *x = a.x + b * a.gates;
      float z = activate(a, a.f, x[j] + recurrent(a, b, j));
      float r = activate(a, a.f, x[H + j] + recurrent(a, b, H + j));
      float gated = r * recurrent(a, b, 2 * H + j);
      float cand = activate(a, a.g, x[2 * H + j] + gated);
      float h = a.h[i];
      newH = cand + z * (h - cand);
    }
    finish(a, i, done, newH);
  }
}

/// GRU without linear_before_reset, first half: hs holds h R[0:2H]^T. Puts
/// z in hs's z column (read back by gruStepKernel) and r * h in rh.
__global__ void gruResetKernel(StepArgs a) {
  HPS_GRID_STRIDE(i, a.total) {
    int64_t b = i / a.hidden, j = i % a.hidden, H = a.hidden;
    const float *x = a.x + b * a.gates;
    float z = activate(a, a.f, x[j] + recurrent(a, b, j));
    float r = activate(a, a.f, x[H + j] + recurrent(a, b, H + j));
    a.hs[b * a.gates + j] = z;
    a.rh[i] = r * a.h[i];
  }
}

/// Second half: hs's candidate column now holds (r * h) R[2H:3H]^T.
__global__ void gruStepKernel(StepArgs a) {
  HPS_GRID_STRIDE(i, a.total) {
    int64_t b = i / a.hidden, j = i % a.hidden, H = a.hidden;
    bool done = masked(a, b);
    float newH = 0.0f;
    if (!done) {
      float z = a.hs[b * a.gates + j];
      float gated = recurrent(a, b, 2 * H + j);
      float cand = activate(a, a.g, a.x[b * a.gates + 2 * H + j] + gated);
      float h = a.h[i];
      newH = cand + z * (h - cand);
    }
    finish(a, i, done, newH);
  }
}

} // namespace

struct Recurrent::Impl {
  Context &ctx;
  RecurrentParams params;
  int batch = 0, hidden = 0, gateCols = 0; // gateCols: G = gates x H
  UnaryOp f, g, hAct;
  DeviceBuffer h, c, hs, rh;
};

Recurrent::Recurrent(Context &ctx, const RecurrentParams &params)
    : impl(new Impl{ctx, params}) {
  Impl &s = *impl;
  const RecurrentParams &p = params;
  checkRecurrentParams(p);
  if (p.input > 0)
    throw Error(std::string(kKernel) +
                ": the GPU kernel reads a projection made before it (input 0)");
  // cuBLAS takes int sizes.
  s.batch = positiveInt(kKernel, "batch", p.batch);
  s.hidden = positiveInt(kKernel, "hidden size", p.hidden);
  s.gateCols =
      positiveInt(kKernel, "gate width", gatesPerUnit(p.cell) * p.hidden);
  s.f = makeUnaryOp(p.activations[0], {});
  s.g = makeUnaryOp(p.activations[1], {});
  s.hAct = makeUnaryOp(p.activations[2], {});

  size_t state = size_t(p.batch) * size_t(p.hidden) * sizeof(float);
  s.h = DeviceBuffer(kKernel, state);
  if (p.cell == RecurrentCell::LSTM)
    s.c = DeviceBuffer(kKernel, state);
  s.hs = DeviceBuffer(kKernel,
                      size_t(p.batch) * size_t(s.gateCols) * sizeof(float));
  if (p.cell == RecurrentCell::GRU && !p.linearBeforeReset)
    s.rh = DeviceBuffer(kKernel, state);
}

Recurrent::~Recurrent() = default;

void Recurrent::run(const void *projected, const void *r,
                    const void *recurrentBias, const void *lengths,
                    const void *h0, const void *c0, const void *peepholes,
                    void *y, void *hLast, void *cLast,
                    const void * /*inputWeights*/, const void * /*inputBias*/) {
  Impl &s = *impl;
  const RecurrentParams &p = s.params;
  cudaStream_t stream = streamOf(s.ctx);
  cublasHandle_t handle = s.ctx.impl().cublas;
  bool lstm = p.cell == RecurrentCell::LSTM;
  size_t stateBytes = s.h.bytes();

  // The state starts at h0 (c0); an absent one is zeros.
  if (h0)
    HPS_CUDA_CHECK(cudaMemcpyAsync(s.h.get(), h0, stateBytes,
                                   cudaMemcpyDeviceToDevice, stream));
  else
    HPS_CUDA_CHECK(cudaMemsetAsync(s.h.get(), 0, stateBytes, stream));
  if (lstm) {
    if (c0)
      HPS_CUDA_CHECK(cudaMemcpyAsync(s.c.get(), c0, stateBytes,
                                     cudaMemcpyDeviceToDevice, stream));
    else
      HPS_CUDA_CHECK(cudaMemsetAsync(s.c.get(), 0, stateBytes, stream));
  }

  StepArgs a;
  a.rb =
      p.hasRecurrentBias ? static_cast<const float *>(recurrentBias) : nullptr;
  a.lengths = p.hasLengths ? static_cast<const int64_t *>(lengths) : nullptr;
  a.peepholes =
      p.hasPeepholes ? static_cast<const float *>(peepholes) : nullptr;
  a.h = static_cast<float *>(s.h.get());
  a.c = lstm ? static_cast<float *>(s.c.get()) : nullptr;
  a.hs = static_cast<float *>(s.hs.get());
  a.rh = static_cast<float *>(s.rh.get());
  a.hidden = p.hidden;
  a.gates = s.gateCols;
  a.total = p.batch * p.hidden;
  a.f = s.f;
  a.g = s.g;
  a.hAct = s.hAct;
  a.hasClip = p.hasClip;
  a.clip = p.clip;

  const float *x = static_cast<const float *>(projected);
  const float *rW = static_cast<const float *>(r);
  float *yT = static_cast<float *>(y);
  const float one = 1.0f, zero = 0.0f;
  const int H = s.hidden;
  bool split = p.cell == RecurrentCell::GRU && !p.linearBeforeReset;
  // Row-major hs[B, cols] = h[B, H] R[rows]^T is column-major
  // hs^T[cols, B] = R[rows] (stored [H, cols], so transposed) x h^T (stored
  // [H, B]); hs's rows are G apart.
  auto product = [&](const float *weights, const float *state, int cols,
                     float *out) {
    HPS_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, cols,
                                 s.batch, H, &one, weights, H, state, H, &zero,
                                 out, s.gateCols));
  };
  unsigned grid = gridFor(a.total);
  for (int64_t step = 0; step < p.steps; ++step) {
    int64_t t = p.reverse ? p.steps - 1 - step : step;
    a.t = t;
    a.x = x + t * p.batch * s.gateCols;
    a.y = yT ? yT + t * p.batch * p.hidden : nullptr;
    if (!split) {
      product(rW, a.h, s.gateCols, a.hs);
      switch (p.cell) {
      case RecurrentCell::RNN:
        rnnStepKernel<<<grid, kThreads, 0, stream>>>(a);
        break;
      case RecurrentCell::GRU:
        gruLinearStepKernel<<<grid, kThreads, 0, stream>>>(a);
        break;
      case RecurrentCell::LSTM:
        lstmStepKernel<<<grid, kThreads, 0, stream>>>(a);
        break;
      }
      checkLaunch(kKernel);
      continue;
    }
    product(rW, a.h, 2 * H, a.hs);
    gruResetKernel<<<grid, kThreads, 0, stream>>>(a);
    checkLaunch(kKernel);
    product(rW + int64_t(2) * H * H, a.rh, H, a.hs + 2 * H);
    gruStepKernel<<<grid, kThreads, 0, stream>>>(a);
    checkLaunch(kKernel);
  }

  if (hLast)
    HPS_CUDA_CHECK(cudaMemcpyAsync(hLast, s.h.get(), stateBytes,
                                   cudaMemcpyDeviceToDevice, stream));
  if (lstm && cLast)
    HPS_CUDA_CHECK(cudaMemcpyAsync(cLast, s.c.get(), stateBytes,
                                   cudaMemcpyDeviceToDevice, stream));
  if (a.lengths && (hLast || (lstm && cLast))) {
    clearEmptyRowsKernel<<<grid, kThreads, 0, stream>>>(
        a.lengths, static_cast<float *>(hLast),
        lstm ? static_cast<float *>(cLast) : nullptr, p.hidden, a.total);
    checkLaunch(kKernel);
  }
}

} // namespace heterps::rt::gpu
