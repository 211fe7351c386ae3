//===- RecurrentGrad.cpp - Backpropagation through an RNN, GRU or LSTM ----===//
//
// The adjoint of the Recurrent kernel. y holds every step's h, so the
// previous h of every step is known up front: the gates are recomputed with
// one Gemm over all steps (two for GRU without linear_before_reset) and one
// pass per row, which keeps them with their derivatives. The steps then run
// backwards; each is one pass over the rows and the product dG_t R (two for
// that GRU), the only sequential work. dR and dRb are one Gemm and one sum
// over all steps at the end.
//
//===----------------------------------------------------------------------===//

#include "RecurrentSupport.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace heterps::rt::cpu {

using namespace recurrent;

struct RecurrentGrad::Impl {
  RecurrentParams p;
  int64_t steps = 0, batch = 0, hidden = 0, gates = 0;
  int64_t rows = 0; // steps * batch
  bool lstm = false;
  /// GRU without linear_before_reset: h R^T covers z and r (`multiplied` =
  /// 2H of G); the candidate's product is (r * h) R_h^T.
  bool split = false;
  int64_t multiplied = 0;
  bool small = false;
  /// The small batches' R (gatesPanels) and R_h (candidatePanels), packed
  /// once per run.
  PanelProduct gatesPanels, candidatePanels;
  /// Threads for a step's pass over the rows, and for the passes over all
  /// steps.
  bool parallel = false, wide = false;

  // Over all steps, [T, B, width] in time order.
  std::vector<float> hPrev;  // h before the step: [H]
  std::vector<float> hs;     // hPrev R^T: [multiplied]
  std::vector<float> act;    // activated gates: [G]
  std::vector<float> deriv;  // their derivatives (clip included): [G]
  std::vector<float> rh, hc; // split GRU: r * hPrev, rh R_h^T
  std::vector<float> cPrev, cNew, hcAct, hcDeriv; // LSTM: c, h(c), h'(c)
  std::vector<float> dGates;     // GRU: the adjoint of hs (+ Rb)
  std::vector<float> dCandidate; // split GRU: of hc: [H]
  // One step, [B, width].
  std::vector<float> dh, dc, dhNext, dRh, scratch;
  std::vector<float> zeroState;
  std::optional<Gemm> recompute, recomputeCandidate, gradR, gradRCandidate,
      stepProduct, stepCandidate;

  Impl(Context &ctx, const RecurrentParams &params) : p(params) {
    checkRecurrentParams(p);
    steps = p.steps;
    batch = p.batch;
    hidden = p.hidden;
    gates = gatesPerUnit(p.cell) * hidden;
    rows = steps * batch;
    lstm = p.cell == RecurrentCell::LSTM;
    split = p.cell == RecurrentCell::GRU && !p.linearBeforeReset;
    multiplied = split ? 2 * hidden : gates;
    small = batch <= kSmallBatch;
    // A step backwards is cheap arithmetic per gate (the derivatives were
    // kept by the recompute, where the transcendentals are).
    parallel = worthThreads(double(batch) * double(gates) * kCheapElementWork);
    wide =
        worthThreads(double(rows) * double(gates) * kTranscendentalElementWork);
    Activation none;
    auto gemm = [&](std::optional<Gemm> &slot, int64_t m, int64_t n, int64_t k,
                    bool transA, bool transB) {
      slot.emplace(ctx, DType::F32, m, n, k, transA, transB, 1.0f, 0.0f,
                   nullptr, none, false);
    };
    gemm(recompute, rows, multiplied, hidden, false, true);
    gemm(gradR, multiplied, hidden, rows, true, false);
    if (!small)
      gemm(stepProduct, batch, hidden, multiplied, false, false);
    if (split) {
      gemm(recomputeCandidate, rows, hidden, hidden, false, true);
      gemm(gradRCandidate, hidden, hidden, rows, true, false);
      if (!small)
        gemm(stepCandidate, batch, hidden, hidden, false, false);
      rh.resize(rows * hidden);
      hc.resize(rows * hidden);
      dCandidate.resize(rows * hidden);
      dRh.resize(batch * hidden);
    }
    if (p.cell == RecurrentCell::GRU)
      dGates.resize(rows * multiplied);
    if (lstm) {
      for (auto *v : {&cPrev, &cNew, &hcAct, &hcDeriv})
        v->resize(rows * hidden);
      dc.resize(batch * hidden);
    }
    hPrev.resize(rows * hidden);
    hs.resize(rows * multiplied);
    act.resize(rows * gates);
    deriv.resize(rows * gates);
    dh.resize(batch * hidden);
    dhNext.resize(batch * hidden);
    scratch.resize(batch * hidden);
    zeroState.assign(batch * hidden, 0.0f);
  }

  /// The step s-th in the forward's order, and the number of steps row b
  /// runs.
  int64_t stepAt(int64_t s) const { return p.reverse ? steps - 1 - s : s; }
  int64_t lengthOf(const int64_t *lengths, int64_t b) const {
    return lengths ? lengths[b] : steps;
  }
  /// Where row b's step t starts in a [T, B, width] buffer.
  int64_t at(int64_t t, int64_t b, int64_t width) const {
    return (t * batch + b) * width;
  }

  /// out[B, H] = x[B, depth] R[first, + depth) (no transpose: R's rows are
  /// the reduction).
  void product(const float *x, const float *r, int64_t first,
               const PanelProduct &panels, std::optional<Gemm> &gemm,
               float *out) {
    if (small)
      panels.run(x, batch, out);
    else
      gemm->run(x, r + first * hidden, nullptr, out);
  }

  void run(const float *projected, const float *r, const float *rb,
           const int64_t *lengths, const float *h0, const float *c0,
           const float *peep, const float *y, const float *dy,
           const float *dhLast, const float *dcLast, float *dProjected,
           float *dR, float *dRb, float *dh0, float *dc0, float *dPeep) {
    if (!h0 || (lstm && !c0) || !y)
      throw Error("RecurrentGrad: the initial state or y was not passed");
    if ((p.hasRecurrentBias && (!rb || !dRb)) || (p.hasLengths && !lengths) ||
        (p.hasPeepholes && (!peep || !dPeep)) || (lstm && !dc0))
      throw Error("RecurrentGrad: a declared operand was not passed");
    checkLengths("RecurrentGrad", p, lengths);
    if (small) {
      gatesPanels.packTransposed(r, hidden, multiplied);
      if (split)
        candidatePanels.packTransposed(r + multiplied * hidden, hidden, hidden);
    }
    recomputeGates(projected, r, rb, lengths, h0, c0, peep, y);
    backward(r, rb, lengths, peep, dy, dhLast, dcLast, dProjected, dh0, dc0);
    parameterGradients(dProjected, dR, dRb, dPeep);
  }

  //===--------------------------------------------------------------------===//
  // Recomputing the gates.
  //===--------------------------------------------------------------------===//

  void recomputeGates(const float *projected, const float *r, const float *rb,
                      const int64_t *lengths, const float *h0, const float *c0,
                      const float *peep, const float *y) {
    // Every step's previous h: the initial state at the row's first step,
    // else y of the step before (rows past their length are never read).
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t length = lengthOf(lengths, b);
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t t = stepAt(s);
        float *to = hPrev.data() + at(t, b, hidden);
        if (t >= length) {
          // Never read, but multiplied along: zero keeps stale values out.
          std::fill_n(to, hidden, 0.0f);
          continue;
        }
        const bool first = p.reverse ? t == length - 1 : t == 0;
        const float *from = first
                                ? h0 + b * hidden
                                : y + at(p.reverse ? t + 1 : t - 1, b, hidden);
        std::copy_n(from, hidden, to);
      }
    }
    recompute->run(hPrev.data(), r, nullptr, hs.data());
    switch (p.cell) {
    case RecurrentCell::RNN:
#pragma omp parallel for schedule(static) if (wide)
      for (int64_t i = 0; i < rows; ++i) {
        float *g = act.data() + i * gates;
        const float *x = projected + i * gates, *h = hs.data() + i * gates;
        for (int64_t j = 0; j < gates; ++j)
          g[j] = x[j] + h[j] + (rb ? rb[j] : 0.0f);
        activateWithDerivative(p.activations[0], g, deriv.data() + i * gates,
                               hidden, p, true);
      }
      break;
    case RecurrentCell::GRU:
      recomputeGru(projected, r, rb);
      break;
    case RecurrentCell::LSTM:
      // c runs along each row's steps; rows are independent.
#pragma omp parallel for schedule(static) if (wide)
      for (int64_t b = 0; b < batch; ++b)
        recomputeLstmRow(projected, rb, lengths, c0, peep, b);
      break;
    }
  }

  void recomputeGru(const float *projected, const float *r, const float *rb) {
    // z and r (and the candidate with linear_before_reset) need only hs.
#pragma omp parallel for schedule(static) if (wide)
    for (int64_t i = 0; i < rows; ++i) {
      float *g = act.data() + i * gates, *d = deriv.data() + i * gates;
      const float *x = projected + i * gates, *h = hs.data() + i * multiplied;
      for (int64_t j = 0; j < 2 * hidden; ++j)
        g[j] = x[j] + h[j] + (rb ? rb[j] : 0.0f);
      activateWithDerivative(p.activations[0], g, d, 2 * hidden, p, true);
      if (split) {
        const float *hp = hPrev.data() + i * hidden;
        for (int64_t j = 0; j < hidden; ++j)
          rh[i * hidden + j] = g[hidden + j] * hp[j];
        continue;
      }
      float *cand = g + 2 * hidden;
      for (int64_t j = 0; j < hidden; ++j)
        cand[j] = x[2 * hidden + j] +
                  g[hidden + j] *
                      (h[2 * hidden + j] + (rb ? rb[2 * hidden + j] : 0.0f));
      activateWithDerivative(p.activations[1], cand, d + 2 * hidden, hidden, p,
                             true);
    }
    if (!split)
      return;
    recomputeCandidate->run(rh.data(), r + multiplied * hidden, nullptr,
                            hc.data());
#pragma omp parallel for schedule(static) if (wide)
    for (int64_t i = 0; i < rows; ++i) {
      float *cand = act.data() + i * gates + 2 * hidden;
      const float *x = projected + i * gates + 2 * hidden,
                  *fromH = hc.data() + i * hidden;
      for (int64_t j = 0; j < hidden; ++j)
        cand[j] = x[j] + fromH[j] + (rb ? rb[2 * hidden + j] : 0.0f);
      activateWithDerivative(p.activations[1], cand,
                             deriv.data() + i * gates + 2 * hidden, hidden, p,
                             true);
    }
  }

  /// Gates i, o, f, c of row b along its steps, with c before and after
  /// each step and h(c) with its derivative.
  void recomputeLstmRow(const float *projected, const float *rb,
                        const int64_t *lengths, const float *c0,
                        const float *peep, int64_t b) {
    const int64_t length = lengthOf(lengths, b);
    const float *c = c0 + b * hidden;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = stepAt(s);
      const int64_t i = t * batch + b;
      if (t >= length) {
        // Never read, but summed along for the peepholes.
        std::fill_n(cPrev.data() + i * hidden, hidden, 0.0f);
        std::fill_n(cNew.data() + i * hidden, hidden, 0.0f);
        continue;
      }
      float *g = act.data() + i * gates, *d = deriv.data() + i * gates;
      float *in = g, *out = g + hidden, *forget = g + 2 * hidden,
            *cand = g + 3 * hidden;
      const float *x = projected + i * gates, *h = hs.data() + i * gates;
      float *before = cPrev.data() + i * hidden,
            *after = cNew.data() + i * hidden;
      std::copy_n(c, hidden, before);
      for (int64_t j = 0; j < gates; ++j)
        g[j] = x[j] + h[j] + (rb ? rb[j] : 0.0f);
      if (peep)
        for (int64_t j = 0; j < hidden; ++j) {
          in[j] += peep[j] * before[j];
          forget[j] += peep[2 * hidden + j] * before[j];
        }
      activateWithDerivative(p.activations[0], in, d, hidden, p, true);
      activateWithDerivative(p.activations[0], forget, d + 2 * hidden, hidden,
                             p, true);
      activateWithDerivative(p.activations[1], cand, d + 3 * hidden, hidden, p,
                             true);
      for (int64_t j = 0; j < hidden; ++j)
        after[j] = forget[j] * before[j] + in[j] * cand[j];
      if (peep)
        for (int64_t j = 0; j < hidden; ++j)
          out[j] += peep[hidden + j] * after[j];
      activateWithDerivative(p.activations[0], out, d + hidden, hidden, p,
                             true);
      float *ha = hcAct.data() + i * hidden;
      std::copy_n(after, hidden, ha);
      activateWithDerivative(p.activations[2], ha, hcDeriv.data() + i * hidden,
                             hidden, p, false);
      c = after;
    }
  }

  //===--------------------------------------------------------------------===//
  // The steps backwards.
  //===--------------------------------------------------------------------===//

  void backward(const float *r, const float *rb, const int64_t *lengths,
                const float *peep, const float *dy, const float *dhLast,
                const float *dcLast, float *dProjected, float *dh0,
                float *dc0) {
    const int64_t state = batch * hidden;
    // A row of length 0 ends with a zero state whatever its inputs, so no
    // adjoint reaches them.
    std::copy_n(dhLast ? dhLast : zeroState.data(), state, dh.data());
    if (lstm)
      std::copy_n(dcLast ? dcLast : zeroState.data(), state, dc.data());
    if (lengths)
      for (int64_t b = 0; b < batch; ++b)
        if (lengths[b] == 0) {
          std::fill_n(dh.data() + b * hidden, hidden, 0.0f);
          if (lstm)
            std::fill_n(dc.data() + b * hidden, hidden, 0.0f);
        }
    // The adjoint of hs (+ Rb) per step: dProjected itself but for GRU.
    float *dG = p.cell == RecurrentCell::GRU ? dGates.data() : dProjected;
    for (int64_t s = steps - 1; s >= 0; --s) {
      const int64_t t = stepAt(s);
      const float *dyt = dy ? dy + t * state : nullptr;
      float *dxt = dProjected + t * batch * gates;
      float *dgt = dG + t * batch * multiplied;
      {
        SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
        for (int64_t b = 0; b < batch; ++b) {
          float *dhb = dh.data() + b * hidden,
                *next = dhNext.data() + b * hidden;
          if (t >= lengthOf(lengths, b)) {
            // The step kept the row's state and gave y = 0.
            std::fill_n(dxt + b * gates, gates, 0.0f);
            std::fill_n(dgt + b * multiplied, multiplied, 0.0f);
            std::copy_n(dhb, hidden, next);
            if (split)
              std::fill_n(dCandidate.data() + at(t, b, hidden), hidden, 0.0f);
            continue;
          }
          if (dyt)
            for (int64_t j = 0; j < hidden; ++j)
              dhb[j] += dyt[b * hidden + j];
          const int64_t i = t * batch + b;
          switch (p.cell) {
          case RecurrentCell::RNN:
            stepRnn(i, dhb, dxt + b * gates, next);
            break;
          case RecurrentCell::LSTM:
            stepLstm(i, peep, dhb, dc.data() + b * hidden, dxt + b * gates,
                     next);
            break;
          case RecurrentCell::GRU:
            stepGru(i, rb, dhb, dxt + b * gates, dgt + b * multiplied, next);
            break;
          }
        }
      }
      if (split) {
        // d(r * hPrev) = dCandidate R_h, then the r gate's adjoint.
        float *dCand = dCandidate.data() + t * state;
        product(dCand, r, multiplied, candidatePanels, stepCandidate,
                dRh.data());
        SerialScope serial(!parallel);
#pragma omp parallel for schedule(static) if (parallel)
        for (int64_t b = 0; b < batch; ++b) {
          if (t >= lengthOf(lengths, b))
            continue;
          resetOfSplitGru(t * batch + b, dRh.data() + b * hidden,
                          dxt + b * gates, dgt + b * multiplied,
                          dhNext.data() + b * hidden);
        }
      }
      // dh of the previous step: the direct part plus dG_t R.
      product(dgt, r, 0, gatesPanels, stepProduct, scratch.data());
      for (int64_t k = 0; k < state; ++k)
        dh[k] = dhNext[k] + scratch[k];
    }
    std::copy_n(dh.data(), state, dh0);
    if (lstm)
      std::copy_n(dc.data(), state, dc0);
  }

  void stepRnn(int64_t i, const float *dhb, float *dx, float *next) {
    const float *d = deriv.data() + i * gates;
    for (int64_t j = 0; j < hidden; ++j)
      dx[j] = dhb[j] * d[j];
    std::fill_n(next, hidden, 0.0f);
  }

  /// dx is also the step's dG (i, o, f, c); dcb carries dc to the step
  /// before.
  void stepLstm(int64_t i, const float *peep, const float *dhb, float *dcb,
                float *dx, float *next) {
    const float *g = act.data() + i * gates, *d = deriv.data() + i * gates;
    const float *in = g, *out = g + hidden, *forget = g + 2 * hidden,
                *cand = g + 3 * hidden;
    const float *before = cPrev.data() + i * hidden,
                *ha = hcAct.data() + i * hidden,
                *hd = hcDeriv.data() + i * hidden;
    float *dIn = dx, *dOut = dx + hidden, *dForget = dx + 2 * hidden,
          *dCand = dx + 3 * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      dOut[j] = dhb[j] * ha[j] * d[hidden + j];
      float dcj = dcb[j] + dhb[j] * out[j] * hd[j];
      if (peep)
        dcj += dOut[j] * peep[hidden + j];
      dIn[j] = dcj * cand[j] * d[j];
      dForget[j] = dcj * before[j] * d[2 * hidden + j];
      dCand[j] = dcj * in[j] * d[3 * hidden + j];
      float carried = dcj * forget[j];
      if (peep)
        carried += dIn[j] * peep[j] + dForget[j] * peep[2 * hidden + j];
      dcb[j] = carried;
    }
    std::fill_n(next, hidden, 0.0f);
  }

  /// h = n + z (hPrev - n). With linear_before_reset the whole dG is known
  /// here; the split GRU finishes r in resetOfSplitGru.
  void stepGru(int64_t i, const float *rb, const float *dhb, float *dx,
               float *dg, float *next) {
    const float *g = act.data() + i * gates, *d = deriv.data() + i * gates;
    const float *update = g, *reset = g + hidden, *cand = g + 2 * hidden;
    const float *hp = hPrev.data() + i * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const float dz = dhb[j] * (hp[j] - cand[j]) * d[j];
      const float dn = dhb[j] * (1.0f - update[j]) * d[2 * hidden + j];
      next[j] = dhb[j] * update[j];
      dx[j] = dz;
      dg[j] = dz;
      dx[2 * hidden + j] = dn;
    }
    if (split) {
      std::copy_n(dx + 2 * hidden, hidden, dCandidate.data() + i * hidden);
      return;
    }
    // n = g(x_h + r (hs_h + Rb_h)).
    const float *fromH = hs.data() + i * gates + 2 * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const float dn = dx[2 * hidden + j];
      const float q = fromH[j] + (rb ? rb[2 * hidden + j] : 0.0f);
      const float dr = dn * q * d[hidden + j];
      dx[hidden + j] = dr;
      dg[hidden + j] = dr;
      dg[2 * hidden + j] = dn * reset[j];
    }
  }

  /// The split GRU's r gate: rh = r * hPrev, whose adjoint dRhb is known.
  void resetOfSplitGru(int64_t i, const float *dRhb, float *dx, float *dg,
                       float *next) {
    const float *reset = act.data() + i * gates + hidden,
                *d = deriv.data() + i * gates + hidden,
                *hp = hPrev.data() + i * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const float dr = dRhb[j] * hp[j] * d[j];
      dx[hidden + j] = dr;
      dg[hidden + j] = dr;
      next[j] += dRhb[j] * reset[j];
    }
  }

  //===--------------------------------------------------------------------===//
  // dR, dRb and the peepholes' adjoint, over all steps at once.
  //===--------------------------------------------------------------------===//

  void parameterGradients(const float *dProjected, float *dR, float *dRb,
                          float *dPeep) {
    const float *dG = p.cell == RecurrentCell::GRU ? dGates.data() : dProjected;
    gradR->run(dG, hPrev.data(), nullptr, dR);
    if (split) {
      gradRCandidate->run(dCandidate.data(), rh.data(), nullptr,
                          dR + multiplied * hidden);
    }
    if (dRb) {
      columnSums(dG, multiplied, dRb);
      if (split)
        columnSums(dCandidate.data(), hidden, dRb + multiplied);
    }
    if (dPeep) {
      // i and f see c before the step, o the c after it.
      std::fill_n(dPeep, 3 * hidden, 0.0f);
      for (int64_t i = 0; i < rows; ++i) {
        const float *dg = dG + i * gates, *before = cPrev.data() + i * hidden,
                    *after = cNew.data() + i * hidden;
        for (int64_t j = 0; j < hidden; ++j) {
          dPeep[j] += dg[j] * before[j];
          dPeep[hidden + j] += dg[hidden + j] * after[j];
          dPeep[2 * hidden + j] += dg[2 * hidden + j] * before[j];
        }
      }
    }
  }

  /// sums[j] = sum over all rows of m[row, j] for m [rows, width].
  void columnSums(const float *m, int64_t width, float *sums) const {
    std::fill_n(sums, width, 0.0f);
    for (int64_t i = 0; i < rows; ++i) {
      const float *row = m + i * width;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j)
        sums[j] += row[j];
    }
  }
};

RecurrentGrad::RecurrentGrad(Context &ctx, const RecurrentParams &params)
    : impl(std::make_unique<Impl>(ctx, params)) {}

RecurrentGrad::~RecurrentGrad() = default;

void RecurrentGrad::run(const void *projected, const void *r,
                        const void *recurrentBias, const void *lengths,
                        const void *h0, const void *c0, const void *peepholes,
                        const void *y, const void *dy, const void *dhLast,
                        const void *dcLast, void *dProjected, void *dR,
                        void *dRecurrentBias, void *dh0, void *dc0,
                        void *dPeepholes) {
  auto in = [](const void *v) { return static_cast<const float *>(v); };
  auto out = [](void *v) { return static_cast<float *>(v); };
  impl->run(in(projected), in(r), in(recurrentBias),
            static_cast<const int64_t *>(lengths), in(h0), in(c0),
            in(peepholes), in(y), in(dy), in(dhLast), in(dcLast),
            out(dProjected), out(dR), out(dRecurrentBias), out(dh0), out(dc0),
            out(dPeepholes));
}

} // namespace heterps::rt::cpu
