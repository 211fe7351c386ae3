//===- RecurrentGrad.cu - Backpropagation through an RNN, GRU or LSTM ----===//
//
// The CUDA twin of cpu/RecurrentGrad.cpp, step for step: y gives every
// step's previous h, so the gates are recomputed with one cuBLAS sgemm over
// all steps (two for GRU without linear_before_reset) and one kernel (LSTM:
// a thread per (row, unit) walking the steps, since c runs along them).
// The steps then run backwards, each one elementwise kernel plus
// dh += dG_t R as an sgemm accumulating into the direct part; dR, dRb and
// the peepholes' adjoint are reduced over all steps at the end. All work is
// queued on the context's stream.
//
//===----------------------------------------------------------------------===//

#include "UnaryOps.cuh"

namespace heterps::rt::gpu {
namespace {

const char *const kKernel = "RecurrentGrad";

/// What the kernels read and write; [T, B, width] buffers are in time order.
struct GradArgs {
  const float *x = nullptr;         // projected: [T, B, G]
  const float *rb = nullptr;        // Rb: [G]
  const int64_t *lengths = nullptr; // [B]
  const float *peepholes = nullptr; // [3H]: i, o, f
  const float *h0 = nullptr, *c0 = nullptr, *y = nullptr, *dy = nullptr;
  float *hPrev = nullptr;                     // [T, B, H]
  float *hs = nullptr;                        // hPrev R^T: [T, B, M]
  float *act = nullptr;                       // activated gates: [T, B, G]
  float *deriv = nullptr;                     // their derivatives: [T, B, G]
  float *rh = nullptr;                        // split GRU: r * hPrev, [T, B, H]
  float *hc = nullptr;                        // split GRU: rh R_h^T, [T, B, H]
  float *cPrev = nullptr, *cNew = nullptr;    // LSTM: [T, B, H]
  float *hcAct = nullptr, *hcDeriv = nullptr; // LSTM: h(c), h'(c)
  float *dx = nullptr;                        // dProjected: [T, B, G]
  float *dg = nullptr;    // the adjoint of hs (+ Rb): [T, B, M]
  float *dCand = nullptr; // split GRU: of hc, [T, B, H]
  float *dh = nullptr, *dc = nullptr, *next = nullptr, *dRh = nullptr;
  int64_t steps = 0, batch = 0, hidden = 0, gates = 0, multiplied = 0;
  int64_t t = 0;
  bool reverse = false, split = false;
  UnaryOp f, g, hAct;
  bool hasClip = false;
  float clip = 0.0f;
};

__device__ inline int64_t lengthOf(const GradArgs &a, int64_t b) {
  return a.lengths ? a.lengths[b] : a.steps;
}

/// Activation `op` of v, clipped first when `clip` and the op has one; *d
/// gets its derivative with respect to v (zero where clipped).
__device__ inline float activate(const GradArgs &a, const UnaryOp &op, float v,
                                 bool clip, float *d) {
  float inside = 1.0f;
  if (clip && a.hasClip) {
    inside = v >= -a.clip && v <= a.clip ? 1.0f : 0.0f;
    v = v < -a.clip ? -a.clip : (v > a.clip ? a.clip : v);
  }
  float out = applyFloatUnary(op, v);
  switch (op.kind) {
  case UnaryKind::Sigmoid:
    *d = inside * out * (1.0f - out);
    break;
  case UnaryKind::Tanh:
    *d = inside * (1.0f - out * out);
    break;
  default: // Relu
    *d = out > 0.0f ? inside : 0.0f;
    break;
  }
  return out;
}

/// hs (+ Rb) of gate column k at row i (= t * B + b).
__device__ inline float recurrent(const GradArgs &a, int64_t i, int64_t k) {
  float v = a.hs[i * a.multiplied + k];
  return a.rb ? v + a.rb[k] : v;
}

/// Every step's previous h (zero past the row's length, never read).
__global__ void previousStateKernel(GradArgs a, int64_t total) {
  HPS_GRID_STRIDE(e, total) {
    int64_t j = e % a.hidden, i = e / a.hidden, b = i % a.batch,
            t = i / a.batch, length = lengthOf(a, b);
    float v = 0.0f;
    if (t < length) {
      bool first = a.reverse ? t == length - 1 : t == 0;
      int64_t prev = a.reverse ? t + 1 : t - 1;
      v = first ? a.h0[b * a.hidden + j]
                : a.y[(prev * a.batch + b) * a.hidden + j];
    }
    a.hPrev[e] = v;
  }
}

/// RNN, and GRU's z and r (with linear_before_reset also its candidate;
/// without, r * hPrev for the candidate's product): a thread per (row, unit).
__global__ void recomputeKernel(GradArgs a, int64_t total, bool gru) {
  HPS_GRID_STRIDE(e, total) {
    int64_t j = e % a.hidden, i = e / a.hidden, H = a.hidden;
    const float *x = a.x + i * a.gates;
    float *g = a.act + i * a.gates, *d = a.deriv + i * a.gates;
    if (!gru) {
      g[j] = activate(a, a.f, x[j] + recurrent(a, i, j), true, &d[j]);
      continue;
    }
    float z = activate(a, a.f, x[j] + recurrent(a, i, j), true, &d[j]);
    float r =
        activate(a, a.f, x[H + j] + recurrent(a, i, H + j), true, &d[H + j]);
    g[j] = z;
    g[H + j] = r;
    if (a.split) {
      a.rh[e] = r * a.hPrev[e];
      continue;
    }
    g[2 * H + j] =
        activate(a, a.g, x[2 * H + j] + r * recurrent(a, i, 2 * H + j), true,
                 &d[2 * H + j]);
  }
}

/// The split GRU's candidate once hc = rh R_h^T is there.
__global__ void candidateKernel(GradArgs a, int64_t total) {
  HPS_GRID_STRIDE(e, total) {
    int64_t j = e % a.hidden, i = e / a.hidden, H = a.hidden;
    float v = a.x[i * a.gates + 2 * H + j] + a.hc[e] +
              (a.rb ? a.rb[2 * H + j] : 0.0f);
    a.act[i * a.gates + 2 * H + j] =
        activate(a, a.g, v, true, &a.deriv[i * a.gates + 2 * H + j]);
  }
}

/// LSTM: a thread per (batch row, unit) walks the row's steps, c along.
__global__ void recomputeLstmKernel(GradArgs a, int64_t total) {
  HPS_GRID_STRIDE(e, total) {
    int64_t j = e % a.hidden, b = e / a.hidden, H = a.hidden,
            length = lengthOf(a, b);
    float c = a.c0[e];
    for (int64_t s = 0; s < a.steps; ++s) {
      int64_t t = a.reverse ? a.steps - 1 - s : s, i = t * a.batch + b,
              u = i * H + j;
      if (t >= length) {
        a.cPrev[u] = a.cNew[u] = 0.0f;
        continue;
      }
      const float *x = a.x + i * a.gates;
      float *g = a.act + i * a.gates, *d = a.deriv + i * a.gates;
      float in = x[j] + recurrent(a, i, j);
      float out = x[H + j] + recurrent(a, i, H + j);
      float forget = x[2 * H + j] + recurrent(a, i, 2 * H + j);
      float cand = x[3 * H + j] + recurrent(a, i, 3 * H + j);
      if (a.peepholes) {
        in += a.peepholes[j] * c;
        forget += a.peepholes[2 * H + j] * c;
      }
      in = activate(a, a.f, in, true, &d[j]);
      forget = activate(a, a.f, forget, true, &d[2 * H + j]);
      cand = activate(a, a.g, cand, true, &d[3 * H + j]);
      float newC = forget * c + in * cand;
      if (a.peepholes)
        out += a.peepholes[H + j] * newC;
      out = activate(a, a.f, out, true, &d[H + j]);
      g[j] = in;
      g[H + j] = out;
      g[2 * H + j] = forget;
      g[3 * H + j] = cand;
      a.cPrev[u] = c;
      a.cNew[u] = newC;
      a.hcAct[u] = activate(a, a.hAct, newC, false, &a.hcDeriv[u]);
      c = newC;
    }
  }
}

/// Rows of length 0 end with a zero state, so no adjoint reaches their
/// inputs.
__global__ void clearEmptyRowsKernel(GradArgs a, int64_t total) {
  HPS_GRID_STRIDE(e, total) {
    if (a.lengths[e / a.hidden] == 0) {
      a.dh[e] = 0.0f;
      if (a.dc)
        a.dc[e] = 0.0f;
    }
  }
}

/// One step backwards for (row b, unit j): dG_t and dProjected_t, the
/// direct part of dh's step before in `next`, dc carried in place.
__global__ void stepKernel(GradArgs a, RecurrentCell cell) {
  HPS_GRID_STRIDE(e, a.batch * a.hidden) {
    int64_t j = e % a.hidden, b = e / a.hidden, H = a.hidden,
            i = a.t * a.batch + b, u = i * H + j;
    float *dx = a.dx + i * a.gates, *dg = a.dg + i * a.multiplied;
    if (a.t >= lengthOf(a, b)) {
      // The step kept the row's state and gave y = 0.
      for (int64_t k = j; k < a.gates; k += H)
        dx[k] = 0.0f;
      for (int64_t k = j; k < a.multiplied; k += H)
        dg[k] = 0.0f;
      if (a.split)
        a.dCand[u] = 0.0f;
      a.next[e] = a.dh[e];
      continue;
    }
    float dh = a.dh[e] + (a.dy ? a.dy[u] : 0.0f);
    const float *g = a.act + i * a.gates, *d = a.deriv + i * a.gates;
    switch (cell) {
    case RecurrentCell::RNN:
      dx[j] = dh * d[j];
      a.next[e] = 0.0f;
      break;
    case RecurrentCell::LSTM: {
      float dOut = dh * a.hcAct[u] * d[H + j];
      float dc = a.dc[e] + dh * g[H + j] * a.hcDeriv[u];
      if (a.peepholes)
        dc += dOut * a.peepholes[H + j];
      float dIn = dc * g[3 * H + j] * d[j];
      float dForget = dc * a.cPrev[u] * d[2 * H + j];
      float dCand = dc * g[j] * d[3 * H + j];
      float carried = dc * g[2 * H + j];
      if (a.peepholes)
        carried += dIn * a.peepholes[j] + dForget * a.peepholes[2 * H + j];
      a.dc[e] = carried;
      dx[j] = dIn;
      dx[H + j] = dOut;
      dx[2 * H + j] = dForget;
      dx[3 * H + j] = dCand;
      a.next[e] = 0.0f;
      break;
    }
    case RecurrentCell::GRU: {
      float z = g[j], cand = g[2 * H + j], hp = a.hPrev[u];
      float dz = dh * (hp - cand) * d[j];
      float dn = dh * (1.0f - z) * d[2 * H + j];
      a.next[e] = dh * z;
      dx[j] = dz;
      dg[j] = dz;
      dx[2 * H + j] = dn;
      if (a.split) {
        a.dCand[u] = dn;
        break;
      }
      float q = recurrent(a, i, 2 * H + j);
      float dr = dn * q * d[H + j];
      dx[H + j] = dr;
      dg[H + j] = dr;
      dg[2 * H + j] = dn * g[H + j];
      break;
    }
    }
  }
}

/// The split GRU's r gate once d(r * hPrev) = dCand_t R_h is in dRh.
__global__ void splitResetKernel(GradArgs a) {
  HPS_GRID_STRIDE(e, a.batch * a.hidden) {
    int64_t j = e % a.hidden, b = e / a.hidden, H = a.hidden,
            i = a.t * a.batch + b, u = i * H + j;
    if (a.t >= lengthOf(a, b))
      continue;
    float dr = a.dRh[e] * a.hPrev[u] * a.deriv[i * a.gates + H + j];
    a.dx[i * a.gates + H + j] = dr;
    a.dg[i * a.multiplied + H + j] = dr;
    a.next[e] += a.dRh[e] * a.act[i * a.gates + H + j];
  }
}

/// sums[k] = sum over rows of m[row, k] for m [rows, width].
__global__ void columnSumsKernel(const float *m, int64_t rows, int64_t width,
                                 float *sums) {
  HPS_GRID_STRIDE(k, width) {
    float s = 0.0f;
    for (int64_t i = 0; i < rows; ++i)
      s += m[i * width + k];
    sums[k] = s;
  }
}

/// The peepholes' adjoint: i and f see c before the step, o c after it.
__global__ void peepholesKernel(GradArgs a, int64_t rows, float *dPeep) {
  HPS_GRID_STRIDE(k, 3 * a.hidden) {
    int64_t gate = k / a.hidden, j = k % a.hidden;
    const float *c = gate == 1 ? a.cNew : a.cPrev;
    float s = 0.0f;
    for (int64_t i = 0; i < rows; ++i)
      s += a.dx[i * a.gates + gate * a.hidden + j] * c[i * a.hidden + j];
    dPeep[k] = s;
  }
}

} // namespace

struct RecurrentGrad::Impl {
  Context &ctx;
  RecurrentParams params;
  int batch = 0, hidden = 0, gates = 0, multiplied = 0, rows = 0;
  UnaryOp f, g, hAct;
  DeviceBuffer hPrev, hs, act, deriv, rh, hc, cPrev, cNew, hcAct, hcDeriv, dg,
      dCand, dh, dc, next, dRh;
};

RecurrentGrad::RecurrentGrad(Context &ctx, const RecurrentParams &params)
    : impl(new Impl{ctx, params}) {
  Impl &s = *impl;
  const RecurrentParams &p = params;
  checkRecurrentParams(p);
  // cuBLAS takes int sizes.
  s.batch = positiveInt(kKernel, "batch", p.batch);
  s.hidden = positiveInt(kKernel, "hidden size", p.hidden);
  s.gates = positiveInt(kKernel, "gate width", gatesPerUnit(p.cell) * p.hidden);
  s.rows = positiveInt(kKernel, "steps x batch", p.steps * p.batch);
  bool split = p.cell == RecurrentCell::GRU && !p.linearBeforeReset;
  s.multiplied = split ? 2 * s.hidden : s.gates;
  s.f = makeUnaryOp(p.activations[0], {});
  s.g = makeUnaryOp(p.activations[1], {});
  s.hAct = makeUnaryOp(p.activations[2], {});

  auto floats = [](int64_t n) { return size_t(n) * sizeof(float); };
  int64_t sequence = int64_t(s.rows) * s.hidden, state = p.batch * p.hidden;
  s.hPrev = DeviceBuffer(kKernel, floats(sequence));
  s.hs = DeviceBuffer(kKernel, floats(int64_t(s.rows) * s.multiplied));
  s.act = DeviceBuffer(kKernel, floats(int64_t(s.rows) * s.gates));
  s.deriv = DeviceBuffer(kKernel, floats(int64_t(s.rows) * s.gates));
  if (p.cell == RecurrentCell::GRU)
    s.dg = DeviceBuffer(kKernel, floats(int64_t(s.rows) * s.multiplied));
  if (split) {
    for (DeviceBuffer *b : {&s.rh, &s.hc, &s.dCand})
      *b = DeviceBuffer(kKernel, floats(sequence));
    s.dRh = DeviceBuffer(kKernel, floats(state));
  }
  if (p.cell == RecurrentCell::LSTM) {
    for (DeviceBuffer *b : {&s.cPrev, &s.cNew, &s.hcAct, &s.hcDeriv})
      *b = DeviceBuffer(kKernel, floats(sequence));
    s.dc = DeviceBuffer(kKernel, floats(state));
  }
  s.dh = DeviceBuffer(kKernel, floats(state));
  s.next = DeviceBuffer(kKernel, floats(state));
}

RecurrentGrad::~RecurrentGrad() = default;

void RecurrentGrad::run(const void *projected, const void *r,
                        const void *recurrentBias, const void *lengths,
                        const void *h0, const void *c0, const void *peepholes,
                        const void *y, const void *dy, const void *dhLast,
                        const void *dcLast, void *dProjected, void *dR,
                        void *dRecurrentBias, void *dh0, void *dc0,
                        void *dPeepholes) {
  Impl &s = *impl;
  const RecurrentParams &p = s.params;
  bool lstm = p.cell == RecurrentCell::LSTM;
  if (!h0 || (lstm && !c0) || !y)
    throw Error("RecurrentGrad: the initial state or y was not passed");
  if ((p.hasRecurrentBias && (!recurrentBias || !dRecurrentBias)) ||
      (p.hasLengths && !lengths) ||
      (p.hasPeepholes && (!peepholes || !dPeepholes)) || (lstm && !dc0))
    throw Error("RecurrentGrad: a declared operand was not passed");
  cudaStream_t stream = streamOf(s.ctx);
  cublasHandle_t handle = s.ctx.impl().cublas;
  auto f32 = [](DeviceBuffer &b) { return static_cast<float *>(b.get()); };

  GradArgs a;
  a.x = static_cast<const float *>(projected);
  a.rb =
      p.hasRecurrentBias ? static_cast<const float *>(recurrentBias) : nullptr;
  a.lengths = p.hasLengths ? static_cast<const int64_t *>(lengths) : nullptr;
  a.peepholes =
      p.hasPeepholes ? static_cast<const float *>(peepholes) : nullptr;
  a.h0 = static_cast<const float *>(h0);
  a.c0 = static_cast<const float *>(c0);
  a.y = static_cast<const float *>(y);
  a.dy = static_cast<const float *>(dy);
  a.hPrev = f32(s.hPrev);
  a.hs = f32(s.hs);
  a.act = f32(s.act);
  a.deriv = f32(s.deriv);
  a.rh = f32(s.rh);
  a.hc = f32(s.hc);
  a.cPrev = f32(s.cPrev);
  a.cNew = f32(s.cNew);
  a.hcAct = f32(s.hcAct);
  a.hcDeriv = f32(s.hcDeriv);
  a.dx = static_cast<float *>(dProjected);
  // The adjoint of hs (+ Rb) is dProjected itself but for GRU.
  a.dg = p.cell == RecurrentCell::GRU ? f32(s.dg) : a.dx;
  a.dCand = f32(s.dCand);
  a.dh = f32(s.dh);
  a.dc = lstm ? f32(s.dc) : nullptr;
  a.next = f32(s.next);
  a.dRh = f32(s.dRh);
  a.steps = p.steps;
  a.batch = p.batch;
  a.hidden = p.hidden;
  a.gates = s.gates;
  a.multiplied = s.multiplied;
  a.reverse = p.reverse;
  a.split = p.cell == RecurrentCell::GRU && !p.linearBeforeReset;
  a.f = s.f;
  a.g = s.g;
  a.hAct = s.hAct;
  a.hasClip = p.hasClip;
  a.clip = p.clip;

  const float *rW = static_cast<const float *>(r);
  const float one = 1.0f, zero = 0.0f;
  const int H = s.hidden, M = s.multiplied;
  int64_t sequence = int64_t(s.rows) * H, state = int64_t(s.batch) * H;
  // Row-major out[n, cols] = in[n, H] W^T for W [cols, H] (rows of R), as
  // the column-major out^T = W^T' x in^T; outputs are `ldc` apart.
  auto timesRT = [&](const float *w, const float *in, int n, int cols,
                     float *out, int ldc) {
    HPS_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, cols, n, H,
                                 &one, w, H, in, H, &zero, out, ldc));
  };
  // Row-major out[B, H] (+)= in[B, depth] W for W [depth, H] (rows of R).
  auto timesR = [&](const float *w, const float *in, int depth,
                    const float *beta, float *out) {
    HPS_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, H, s.batch,
                                 depth, &one, w, H, in, depth, beta, out, H));
  };
  // Row-major out[width, H] = m[rows, width]^T v[rows, H].
  auto gradient = [&](const float *m, int width, const float *v, float *out) {
    HPS_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, H, width,
                                 s.rows, &one, v, H, m, width, &zero, out, H));
  };

  previousStateKernel<<<gridFor(sequence), kThreads, 0, stream>>>(a, sequence);
  checkLaunch(kKernel);
  timesRT(rW, a.hPrev, s.rows, M, a.hs, M);
  if (lstm) {
    recomputeLstmKernel<<<gridFor(state), kThreads, 0, stream>>>(a, state);
  } else {
    recomputeKernel<<<gridFor(sequence), kThreads, 0, stream>>>(
        a, sequence, p.cell == RecurrentCell::GRU);
  }
  checkLaunch(kKernel);
  if (a.split) {
    timesRT(rW + int64_t(M) * H, a.rh, s.rows, H, a.hc, H);
    candidateKernel<<<gridFor(sequence), kThreads, 0, stream>>>(a, sequence);
    checkLaunch(kKernel);
  }

  size_t stateBytes = size_t(state) * sizeof(float);
  auto startFrom = [&](const void *from, float *to) {
    if (from)
      HPS_CUDA_CHECK(cudaMemcpyAsync(to, from, stateBytes,
                                     cudaMemcpyDeviceToDevice, stream));
    else
      HPS_CUDA_CHECK(cudaMemsetAsync(to, 0, stateBytes, stream));
  };
  startFrom(dhLast, a.dh);
  if (lstm)
    startFrom(dcLast, a.dc);
  if (a.lengths) {
    clearEmptyRowsKernel<<<gridFor(state), kThreads, 0, stream>>>(a, state);
    checkLaunch(kKernel);
  }
  unsigned grid = gridFor(state);
  for (int64_t step = p.steps - 1; step >= 0; --step) {
    a.t = p.reverse ? p.steps - 1 - step : step;
    stepKernel<<<grid, kThreads, 0, stream>>>(a, p.cell);
    checkLaunch(kKernel);
    const float *dgT = a.dg + a.t * s.batch * M;
    if (a.split) {
      timesR(rW + int64_t(M) * H, a.dCand + a.t * state, H, &zero, a.dRh);
      splitResetKernel<<<grid, kThreads, 0, stream>>>(a);
      checkLaunch(kKernel);
    }
    // dh of the step before: the direct part plus dG_t R.
    timesR(rW, dgT, M, &one, a.next);
    std::swap(a.dh, a.next);
  }
  HPS_CUDA_CHECK(
      cudaMemcpyAsync(dh0, a.dh, stateBytes, cudaMemcpyDeviceToDevice, stream));
  if (lstm)
    HPS_CUDA_CHECK(cudaMemcpyAsync(dc0, a.dc, stateBytes,
                                   cudaMemcpyDeviceToDevice, stream));

  float *dRW = static_cast<float *>(dR);
  gradient(a.dg, M, a.hPrev, dRW);
  if (a.split)
    gradient(a.dCand, H, a.rh, dRW + int64_t(M) * H);
  if (a.rb) {
    float *dRb = static_cast<float *>(dRecurrentBias);
    columnSumsKernel<<<gridFor(M), kThreads, 0, stream>>>(a.dg, s.rows, M, dRb);
    checkLaunch(kKernel);
    if (a.split) {
      columnSumsKernel<<<gridFor(H), kThreads, 0, stream>>>(a.dCand, s.rows, H,
                                                            dRb + M);
      checkLaunch(kKernel);
    }
  }
  if (a.peepholes) {
    peepholesKernel<<<gridFor(3 * H), kThreads, 0, stream>>>(
        a, s.rows, static_cast<float *>(dPeepholes));
    checkLaunch(kKernel);
  }
}

} // namespace heterps::rt::gpu
