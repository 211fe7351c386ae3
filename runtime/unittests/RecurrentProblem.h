//===- RecurrentProblem.h - Random problems for the recurrence kernels ----===//
//
// The cases and random inputs the CPU adjoint test (against central
// differences) and the GPU test (against the CPU kernels) share.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_UNITTESTS_RECURRENTPROBLEM_H
#define HETERPS_RUNTIME_UNITTESTS_RECURRENTPROBLEM_H

#include "heterps/Runtime/CpuKernels.h"

#include <random>
#include <string>
#include <vector>

namespace heterps::rt::test {

struct Case {
  std::string name;
  RecurrentCell cell;
  int64_t batch;
  bool reverse = false, lengths = false, peepholes = false, clip = false,
       linearBeforeReset = false;
  UnaryKind f = UnaryKind::Sigmoid, g = UnaryKind::Tanh, h = UnaryKind::Tanh;
};

/// Every input of a Recurrent run, by name, and the loss's adjoints.
struct Problem {
  RecurrentParams p;
  int64_t gates = 0;
  std::vector<float> x, r, rb, h0, c0, peep, dy, dhLast, dcLast;
  std::vector<int64_t> lengths;

  explicit Problem(const Case &c) {
    p.cell = c.cell;
    p.steps = 5;
    p.batch = c.batch;
    p.hidden = 3;
    p.reverse = c.reverse;
    p.activations[0] = c.f;
    p.activations[1] = c.g;
    p.activations[2] = c.h;
    p.hasClip = c.clip;
    p.clip = 0.9f;
    p.linearBeforeReset = c.linearBeforeReset;
    p.hasRecurrentBias = true;
    p.hasLengths = c.lengths;
    p.hasPeepholes = c.peepholes;
    gates = gatesPerUnit(c.cell) * p.hidden;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto fill = [&](std::vector<float> &v, int64_t n) {
      v.resize(n);
      for (float &e : v)
        e = uniform(rng);
    };
    const int64_t state = p.batch * p.hidden;
    fill(x, p.steps * p.batch * gates);
    fill(r, gates * p.hidden);
    fill(rb, gates);
    fill(h0, state);
    fill(c0, state);
    fill(peep, 3 * p.hidden);
    fill(dy, p.steps * state);
    fill(dhLast, state);
    fill(dcLast, state);
    for (int64_t b = 0; b < p.batch; ++b)
      lengths.push_back(b % 3 == 2 ? 0 : p.steps - b % 4);
  }

  bool lstm() const { return p.cell == RecurrentCell::LSTM; }

  /// The forward's y, hLast and cLast.
  void forward(cpu::Context &ctx, std::vector<float> &y,
               std::vector<float> &hLast, std::vector<float> &cLast) {
    const int64_t state = p.batch * p.hidden;
    y.assign(p.steps * state, 0.0f);
    hLast.assign(state, 0.0f);
    cLast.assign(state, 0.0f);
    cpu::Recurrent(ctx, p).run(x.data(), r.data(), rb.data(),
                               p.hasLengths ? lengths.data() : nullptr,
                               h0.data(), lstm() ? c0.data() : nullptr,
                               p.hasPeepholes ? peep.data() : nullptr, y.data(),
                               hLast.data(), lstm() ? cLast.data() : nullptr);
  }

  double loss(cpu::Context &ctx) {
    std::vector<float> y, hLast, cLast;
    forward(ctx, y, hLast, cLast);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i)
      sum += double(dy[i]) * y[i];
    for (size_t i = 0; i < hLast.size(); ++i)
      sum += double(dhLast[i]) * hLast[i] +
             (lstm() ? double(dcLast[i]) * cLast[i] : 0.0);
    return sum;
  }

  /// The CPU kernels' forward and adjoint outputs (vectors of absent
  /// outputs stay empty).
  struct Results {
    std::vector<float> y, hLast, cLast, dx, dr, drb, dh0, dc0, dpeep;
  };
  Results runCpu(cpu::Context &ctx) {
    Results out;
    forward(ctx, out.y, out.hLast, out.cLast);
    if (!lstm())
      out.cLast.clear();
    const int64_t state = p.batch * p.hidden;
    out.dx.resize(x.size());
    out.dr.resize(r.size());
    out.drb.resize(rb.size());
    out.dh0.resize(state);
    out.dc0.resize(lstm() ? state : 0);
    out.dpeep.resize(p.hasPeepholes ? peep.size() : 0);
    cpu::RecurrentGrad(ctx, p).run(
        x.data(), r.data(), rb.data(), p.hasLengths ? lengths.data() : nullptr,
        h0.data(), lstm() ? c0.data() : nullptr,
        p.hasPeepholes ? peep.data() : nullptr, out.y.data(), dy.data(),
        dhLast.data(), lstm() ? dcLast.data() : nullptr, out.dx.data(),
        out.dr.data(), out.drb.data(), out.dh0.data(),
        lstm() ? out.dc0.data() : nullptr,
        p.hasPeepholes ? out.dpeep.data() : nullptr);
    return out;
  }
};

/// Every cell and option, at batches 3 and 7 (both product paths).
inline std::vector<Case> recurrentCases() {
  using C = RecurrentCell;
  std::vector<Case> out;
  for (int64_t batch : {3, 7}) {
    std::string b = "_b" + std::to_string(batch);
    out.push_back({"rnn" + b, C::RNN, batch});
    Case relu{"rnn_relu_reverse_lengths" + b, C::RNN, batch, true, true};
    relu.f = UnaryKind::Relu;
    out.push_back(relu);
    out.push_back({"gru" + b, C::GRU, batch});
    out.push_back({"gru_reverse_lengths_clip" + b, C::GRU, batch, true, true,
                   false, true});
    out.push_back({"gru_linear_before_reset_lengths" + b, C::GRU, batch, false,
                   true, false, false, true});
    out.push_back({"lstm" + b, C::LSTM, batch});
    out.push_back({"lstm_peepholes_lengths_clip" + b, C::LSTM, batch, false,
                   true, true, true});
    Case mixed{
        "lstm_reverse_peepholes_relu_h" + b, C::LSTM, batch, true, false, true};
    mixed.g = UnaryKind::Sigmoid;
    mixed.h = UnaryKind::Relu;
    out.push_back(mixed);
  }
  return out;
}

} // namespace heterps::rt::test

#endif // HETERPS_RUNTIME_UNITTESTS_RECURRENTPROBLEM_H
