//===- LSTMPolicy.cpp - LSTM policy with backpropagation through time -----===//

#include "LSTMPolicy.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace heterps::schedule::detail;

static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// y += a * x. Restrict tells the compiler the rows do not overlap, so it
/// vectorises without run-time overlap checks; each element's sum keeps
/// its order.
static inline void addScaled(double *__restrict y, const double *__restrict x,
                             double a, unsigned n) {
  for (unsigned k = 0; k != n; ++k)
    y[k] += a * x[k];
}

LSTMPolicy::LSTMPolicy(unsigned featureSize, unsigned hiddenSize,
                       unsigned numActions, std::mt19937_64 &rng)
    : featureSize(featureSize), hidden(hiddenSize), numActions(numActions) {
  params.resize(numParams());
  // Uniform in +-1/sqrt(fan-in), as PyTorch initialises LSTMs.
  double scale = 1.0 / std::sqrt(double(hidden));
  std::uniform_real_distribution<double> uniform(-scale, scale);
  for (double &p : params)
    p = uniform(rng);
  // Forget gates start open so early steps are remembered.
  for (unsigned h = 0; h != hidden; ++h)
    params[offB() + hidden + h] = 1.0;
  // A uniform initial policy: the head starts at zero.
  std::fill(params.begin() + offV(), params.end(), 0.0);
  grad.assign(numParams(), 0.0);
  adamM.assign(numParams(), 0.0);
  adamV.assign(numParams(), 0.0);
  transposeGateWeights();
}

void LSTMPolicy::transposeGateWeights() {
  unsigned in = inputSize(), H = hidden, gates = 4 * H;
  gateWeightsByInput.resize(size_t(in + H) * gates);
  for (unsigned r = 0; r != gates; ++r) {
    for (unsigned k = 0; k != in; ++k)
      gateWeightsByInput[size_t(k) * gates + r] =
          params[offWx() + size_t(r) * in + k];
    for (unsigned k = 0; k != H; ++k)
      gateWeightsByInput[size_t(in + k) * gates + r] =
          params[offWh() + size_t(r) * H + k];
  }
}

LSTMPolicy::Episode LSTMPolicy::sample(const std::vector<double> &features,
                                       unsigned steps,
                                       std::mt19937_64 &rng) const {
  unsigned in = inputSize(), H = hidden, A = numActions;
  Episode ep;
  ep.actions.resize(steps);
  ep.inputs.assign(size_t(steps) * in, 0.0);
  for (auto *v : {&ep.hPrev, &ep.cPrev, &ep.gateI, &ep.gateF, &ep.gateG,
                  &ep.gateO, &ep.cell, &ep.tanhCell})
    v->assign(size_t(steps) * H, 0.0);
  ep.probs.assign(size_t(steps) * A, 0.0);

  std::vector<double> h(H, 0.0), c(H, 0.0), z(4 * H), logits(A);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  unsigned previous = A; // "no previous decision" slot
  for (unsigned t = 0; t != steps; ++t) {
    double *x = &ep.inputs[size_t(t) * in];
    std::copy_n(&features[size_t(t) * featureSize], featureSize, x);
    x[featureSize + previous] = 1.0;
    std::copy(h.begin(), h.end(), ep.hPrev.begin() + size_t(t) * H);
    std::copy(c.begin(), c.end(), ep.cPrev.begin() + size_t(t) * H);

    // z = b + Wx x + Wh h, one input at a time across all gates.
    std::copy_n(&params[offB()], 4 * H, z.begin());
    for (unsigned k = 0; k != in + H; ++k)
      addScaled(z.data(), &gateWeightsByInput[size_t(k) * 4 * H],
                k < in ? x[k] : h[k - in], 4 * H);
    for (unsigned k = 0; k != H; ++k) {
      double gi = sigmoid(z[k]), gf = sigmoid(z[H + k]),
             gg = std::tanh(z[2 * H + k]), go = sigmoid(z[3 * H + k]);
      c[k] = gf * c[k] + gi * gg;
      double tc = std::tanh(c[k]);
      h[k] = go * tc;
      size_t at = size_t(t) * H + k;
      ep.gateI[at] = gi;
      ep.gateF[at] = gf;
      ep.gateG[at] = gg;
      ep.gateO[at] = go;
      ep.cell[at] = c[k];
      ep.tanhCell[at] = tc;
    }

    double maxLogit = -INFINITY;
    for (unsigned a = 0; a != A; ++a) {
      double sum = params[offD() + a];
      const double *v = &params[offV() + size_t(a) * H];
      for (unsigned k = 0; k != H; ++k)
        sum += v[k] * h[k];
      logits[a] = sum;
      maxLogit = std::max(maxLogit, sum);
    }
    double total = 0;
    double *p = &ep.probs[size_t(t) * A];
    for (unsigned a = 0; a != A; ++a)
      total += p[a] = std::exp(logits[a] - maxLogit);
    for (unsigned a = 0; a != A; ++a)
      p[a] /= total;
    // The first action whose cumulative probability exceeds u.
    unsigned action = A - 1;
    double u = unit(rng), cumulative = 0;
    for (unsigned a = 0; a != A; ++a) {
      cumulative += p[a];
      if (u < cumulative) {
        action = a;
        break;
      }
    }
    ep.actions[t] = action;
    previous = action;
  }
  return ep;
}

void LSTMPolicy::accumulateGradient(const Episode &ep, double advantage,
                                    double entropyWeight) {
  unsigned in = inputSize(), H = hidden, A = numActions;
  unsigned steps = ep.actions.size();
  std::vector<double> dhNext(H, 0.0), dcNext(H, 0.0), dh(H), dlogits(A);
  // The gate gradients of every step, for the weight gradients below.
  std::vector<double> gateGradients(size_t(steps) * 4 * H);
  for (unsigned t = steps; t-- != 0;) {
    double *dz = &gateGradients[size_t(t) * 4 * H];
    const double *p = &ep.probs[size_t(t) * A];
    // Loss = -advantage * log p(a) - entropyWeight * H(p).
    double entropy = 0;
    for (unsigned a = 0; a != A; ++a)
      if (p[a] > 0)
        entropy -= p[a] * std::log(p[a]);
    for (unsigned a = 0; a != A; ++a) {
      double logP = p[a] > 0 ? std::log(p[a]) : 0.0;
      dlogits[a] = advantage * (p[a] - (a == ep.actions[t] ? 1.0 : 0.0)) +
                   entropyWeight * p[a] * (logP + entropy);
    }
    const double *cPrevStep = &ep.cPrev[size_t(t) * H];
    // h_t = o * tanh(c_t).
    std::copy(dhNext.begin(), dhNext.end(), dh.begin());
    const double *gateO = &ep.gateO[size_t(t) * H];
    const double *tanhCell = &ep.tanhCell[size_t(t) * H];
    for (unsigned a = 0; a != A; ++a) {
      grad[offD() + a] += dlogits[a];
      double *gv = &grad[offV() + size_t(a) * H];
      for (unsigned k = 0; k != H; ++k)
        gv[k] += dlogits[a] * gateO[k] * tanhCell[k];
      addScaled(dh.data(), &params[offV() + size_t(a) * H], dlogits[a], H);
    }
    for (unsigned k = 0; k != H; ++k) {
      size_t at = size_t(t) * H + k;
      double gi = ep.gateI[at], gf = ep.gateF[at], gg = ep.gateG[at],
             go = ep.gateO[at], tc = ep.tanhCell[at];
      double dOut = dh[k] * tc;
      double dc = dh[k] * go * (1 - tc * tc) + dcNext[k];
      dz[k] = dc * gg * gi * (1 - gi);
      dz[H + k] = dc * cPrevStep[k] * gf * (1 - gf);
      dz[2 * H + k] = dc * gi * (1 - gg * gg);
      dz[3 * H + k] = dOut * go * (1 - go);
      dcNext[k] = dc * gf;
    }
    std::fill(dhNext.begin(), dhNext.end(), 0.0);
    for (unsigned r = 0; r != 4 * H; ++r)
      if (dz[r] != 0)
        addScaled(dhNext.data(), &params[offWh() + size_t(r) * H], dz[r], H);
  }
  // d[Wx | Wh | b] += sum over steps (last first) of dz_t [x_t | h_t-1 | 1],
  // a few gate rows at a time so that they stay in L1 while the steps'
  // inputs stream past; each element's sum keeps the order of steps.
  constexpr unsigned kRowsAtOnce = 4;
  for (unsigned first = 0; first < 4 * H; first += kRowsAtOnce) {
    unsigned last = std::min(4 * H, first + kRowsAtOnce);
    for (unsigned t = steps; t-- != 0;) {
      const double *dz = &gateGradients[size_t(t) * 4 * H];
      const double *x = &ep.inputs[size_t(t) * in];
      const double *hPrevStep = &ep.hPrev[size_t(t) * H];
      for (unsigned r = first; r != last; ++r) {
        double d = dz[r];
        if (d == 0)
          continue;
        grad[offB() + r] += d;
        addScaled(&grad[offWx() + size_t(r) * in], x, d, in);
        addScaled(&grad[offWh() + size_t(r) * H], hPrevStep, d, H);
      }
    }
  }
}

void LSTMPolicy::applyGradient(double learningRate, unsigned episodes) {
  const double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  ++adamSteps;
  double correction1 = 1 - std::pow(beta1, adamSteps);
  double correction2 = 1 - std::pow(beta2, adamSteps);
  // Clip the gradient norm: REINFORCE gradients are noisy and occasionally
  // large when a rare placement scores far from the baseline.
  double norm = 0;
  for (double &g : grad) {
    g /= std::max(1u, episodes);
    norm += g * g;
  }
  norm = std::sqrt(norm);
  double clip = norm > 5.0 ? 5.0 / norm : 1.0;
  for (size_t i = 0, e = params.size(); i != e; ++i) {
    double g = grad[i] * clip;
    adamM[i] = beta1 * adamM[i] + (1 - beta1) * g;
    adamV[i] = beta2 * adamV[i] + (1 - beta2) * g * g;
    params[i] -= learningRate * (adamM[i] / correction1) /
                 (std::sqrt(adamV[i] / correction2) + epsilon);
    grad[i] = 0;
  }
  transposeGateWeights();
}
