//===- Recurrent.cpp - One direction of an RNN, GRU or LSTM ---------------===//
//
// The recurrence of ONNX's recurrent ops for sequences too long to unroll:
// each step is one or two Gemm kernels (h R^T, and for GRU without
// linear_before_reset (r * h) R_h^T) and one pass over the gates. The input
// projection of every step is a Gemm before this kernel.
//
//===----------------------------------------------------------------------===//

#include "CpuContext.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

namespace heterps::rt::cpu {
namespace {

/// ONNX's activation f, g or h (clip bounds the input where given).
inline float activate(UnaryKind kind, float v, const RecurrentParams &p,
                      bool clip) {
  if (clip && p.hasClip)
    v = std::clamp(v, -p.clip, p.clip);
  switch (kind) {
  case UnaryKind::Sigmoid:
    return 1.0f / (1.0f + std::exp(-v));
  case UnaryKind::Tanh:
    return std::tanh(v);
  case UnaryKind::Relu:
    return std::max(v, 0.0f);
  default:
    return v; // rejected by the constructor
  }
}

int64_t gatesOf(RecurrentCell cell) {
  return cell == RecurrentCell::RNN ? 1 : cell == RecurrentCell::GRU ? 3 : 4;
}

} // namespace

struct Recurrent::Impl {
  RecurrentParams p;
  int64_t gates = 0; // G = gatesOf(cell) * hidden
  bool parallel = false;
  /// h R^T over the rows of R the step multiplies before the gates: all G,
  /// or for GRU without linear_before_reset z and r only.
  std::optional<Gemm> fromH;
  /// GRU without linear_before_reset: (r * h) R_h^T.
  std::optional<Gemm> candidate;
  std::vector<float> h, c, hs, rh, hc;

  Impl(Context &ctx, const RecurrentParams &params) : p(params) {
    if (p.steps < 1 || p.batch < 1 || p.hidden < 1)
      throw Error("Recurrent: steps " + std::to_string(p.steps) + ", batch " +
                  std::to_string(p.batch) + " and hidden size " +
                  std::to_string(p.hidden) + " must be positive");
    bool lstm = p.cell == RecurrentCell::LSTM;
    if (p.hasPeepholes && !lstm)
      throw Error("Recurrent: peepholes belong to LSTM cells only");
    int used = p.cell == RecurrentCell::RNN   ? 1
               : p.cell == RecurrentCell::GRU ? 2
                                              : 3;
    for (int i = 0; i < used; ++i)
      if (p.activations[i] != UnaryKind::Sigmoid &&
          p.activations[i] != UnaryKind::Tanh &&
          p.activations[i] != UnaryKind::Relu)
        throw Error("Recurrent: activation " + std::to_string(i) +
                    " is not Sigmoid, Tanh or Relu");
    if (p.hasClip && !(p.clip >= 0.0f))
      throw Error("Recurrent: clip " + std::to_string(p.clip) +
                  " must be non-negative");
    const int64_t hidden = p.hidden, batch = p.batch;
    gates = gatesOf(p.cell) * hidden;
    bool split = p.cell == RecurrentCell::GRU && !p.linearBeforeReset;
    int64_t multiplied = split ? 2 * hidden : gates;
    // Transcendentals per gate element, plus the step's gemm(s).
    parallel =
        worthThreads(double(batch) * double(gates) *
                     (kTranscendentalElementWork + 2.0 * double(hidden)));
    Activation none;
    fromH.emplace(ctx, DType::F32, batch, multiplied, hidden, false, true, 1.0f,
                  0.0f, nullptr, none, false);
    if (split) {
      candidate.emplace(ctx, DType::F32, batch, hidden, hidden, false, true,
                        1.0f, 0.0f, nullptr, none, false);
      rh.resize(batch * hidden);
      hc.resize(batch * hidden);
    }
    h.resize(batch * hidden);
    if (lstm)
      c.resize(batch * hidden);
    hs.resize(batch * multiplied);
  }

  /// Whether row b takes step t (sequence_lens).
  bool live(const int64_t *lengths, int64_t b, int64_t t) const {
    return !lengths || t < lengths[b];
  }

  void run(const float *projected, const float *r, const float *rb,
           const int64_t *lengths, const float *h0, const float *c0,
           const float *peep, float *y, float *hLast, float *cLast) {
    const int64_t hidden = p.hidden, batch = p.batch,
                  stateSize = batch * hidden;
    const bool lstm = p.cell == RecurrentCell::LSTM;
    if (!h0 || (lstm && !c0))
      throw Error("Recurrent: the initial state was not passed");
    if ((p.hasRecurrentBias && !rb) || (p.hasLengths && !lengths) ||
        (p.hasPeepholes && !peep))
      throw Error("Recurrent: a declared operand was not passed");
    if (lengths)
      for (int64_t b = 0; b < batch; ++b)
        if (lengths[b] < 0 || lengths[b] > p.steps)
          throw Error("Recurrent: sequence_lens[" + std::to_string(b) +
                      "] = " + std::to_string(lengths[b]) + " is outside [0, " +
                      std::to_string(p.steps) + "]");
    std::memcpy(h.data(), h0, stateSize * sizeof(float));
    if (lstm)
      std::memcpy(c.data(), c0, stateSize * sizeof(float));
    const int64_t multiplied = hs.size() / batch;
    for (int64_t s = 0; s < p.steps; ++s) {
      const int64_t t = p.reverse ? p.steps - 1 - s : s;
      const float *xt = projected + t * batch * gates;
      float *yt = y + t * stateSize;
      fromH->run(h.data(), r, nullptr, hs.data());
      if (rb) {
        SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t j = 0; j < multiplied; ++j)
            hs[b * multiplied + j] += rb[j];
      }
      switch (p.cell) {
      case RecurrentCell::RNN:
        stepRnn(xt, lengths, t, yt);
        break;
      case RecurrentCell::LSTM:
        stepLstm(xt, peep, lengths, t, yt);
        break;
      case RecurrentCell::GRU:
        stepGru(xt, r, rb, lengths, t, yt);
        break;
      }
    }
    std::memcpy(hLast, h.data(), stateSize * sizeof(float));
    if (lstm && cLast)
      std::memcpy(cLast, c.data(), stateSize * sizeof(float));
    // Rows of length 0 end with a zero state, as onnxruntime gives them.
    if (lengths)
      for (int64_t b = 0; b < batch; ++b)
        if (lengths[b] == 0) {
          std::fill_n(hLast + b * hidden, hidden, 0.0f);
          if (lstm && cLast)
            std::fill_n(cLast + b * hidden, hidden, 0.0f);
        }
  }

  void stepRnn(const float *xt, const int64_t *lengths, int64_t t, float *yt) {
    const int64_t hidden = p.hidden;
    SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t b = 0; b < p.batch; ++b) {
      bool on = live(lengths, b, t);
      for (int64_t j = 0; j < hidden; ++j) {
        int64_t i = b * hidden + j;
        if (on)
          h[i] = activate(p.activations[0], xt[i] + hs[i], p, true);
        yt[i] = on ? h[i] : 0.0f;
      }
    }
  }

  void stepLstm(const float *xt, const float *peep, const int64_t *lengths,
                int64_t t, float *yt) {
    const int64_t hidden = p.hidden, gates4 = gates;
    SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t b = 0; b < p.batch; ++b) {
      bool on = live(lengths, b, t);
      const float *x = xt + b * gates4, *g = hs.data() + b * gates4;
      for (int64_t j = 0; j < hidden; ++j) {
        int64_t i = b * hidden + j;
        if (!on) {
          yt[i] = 0.0f;
          continue;
        }
        float in = x[j] + g[j], out = x[hidden + j] + g[hidden + j],
              forget = x[2 * hidden + j] + g[2 * hidden + j],
              cand = x[3 * hidden + j] + g[3 * hidden + j], old = c[i];
        if (peep) {
          in += peep[j] * old;
          forget += peep[2 * hidden + j] * old;
        }
        in = activate(p.activations[0], in, p, true);
        forget = activate(p.activations[0], forget, p, true);
        cand = activate(p.activations[1], cand, p, true);
        float newC = forget * old + in * cand;
        if (peep)
          out += peep[hidden + j] * newC;
        out = activate(p.activations[0], out, p, true);
        c[i] = newC;
        h[i] = out * activate(p.activations[2], newC, p, false);
        yt[i] = h[i];
      }
    }
  }

  void stepGru(const float *xt, const float *r, const float *rb,
               const int64_t *lengths, int64_t t, float *yt) {
    const int64_t hidden = p.hidden, multiplied = hs.size() / p.batch;
    // Without linear_before_reset the candidate needs (r * h) R_h^T, so r
    // comes first, in a pass of its own.
    const bool split = candidate.has_value();
    if (split) {
      SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t j = 0; j < hidden; ++j) {
          float reset = activate(p.activations[0],
                                 xt[b * gates + hidden + j] +
                                     hs[b * multiplied + hidden + j],
                                 p, true);
          rh[b * hidden + j] = reset * h[b * hidden + j];
        }
      candidate->run(rh.data(), r + 2 * hidden * hidden, nullptr, hc.data());
    }
    SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t b = 0; b < p.batch; ++b) {
      bool on = live(lengths, b, t);
      const float *x = xt + b * gates, *g = hs.data() + b * multiplied;
      for (int64_t j = 0; j < hidden; ++j) {
        int64_t i = b * hidden + j;
        if (!on) {
          yt[i] = 0.0f;
          continue;
        }
        float update = activate(p.activations[0], x[j] + g[j], p, true);
        float gated;
        if (split) {
          gated = hc[i] + (rb ? rb[2 * hidden + j] : 0.0f);
        } else {
          float reset = activate(p.activations[0],
                                 x[hidden + j] + g[hidden + j], p, true);
          gated = reset * g[2 * hidden + j];
        }
        float cand =
            activate(p.activations[1], x[2 * hidden + j] + gated, p, true);
        h[i] = cand + update * (h[i] - cand);
        yt[i] = h[i];
      }
    }
  }
};

Recurrent::Recurrent(Context &ctx, const RecurrentParams &params)
    : impl(std::make_unique<Impl>(ctx, params)) {}

Recurrent::~Recurrent() = default;

void Recurrent::run(const void *projected, const void *r,
                    const void *recurrentBias, const void *lengths,
                    const void *h0, const void *c0, const void *peepholes,
                    void *y, void *hLast, void *cLast) {
  impl->run(static_cast<const float *>(projected),
            static_cast<const float *>(r),
            static_cast<const float *>(recurrentBias),
            static_cast<const int64_t *>(lengths),
            static_cast<const float *>(h0), static_cast<const float *>(c0),
            static_cast<const float *>(peepholes), static_cast<float *>(y),
            static_cast<float *>(hLast), static_cast<float *>(cLast));
}

} // namespace heterps::rt::cpu
