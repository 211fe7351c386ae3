//===- CpuRecurrentGradTest.cpp - RecurrentGrad against finite differences ===//
//
// The adjoint kernel's every output against central differences of the
// forward Recurrent kernel, for every cell and option, in double-checked
// f32: the scalar loss is <dy, y> + <dhLast, hLast> + <dcLast, cLast> with
// random adjoints, so its derivative by any input is what RecurrentGrad
// returns for it. Batches of 3 and 7 cover both product paths.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

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
  void forward(Context &ctx, std::vector<float> &y, std::vector<float> &hLast,
               std::vector<float> &cLast) {
    const int64_t state = p.batch * p.hidden;
    y.assign(p.steps * state, 0.0f);
    hLast.assign(state, 0.0f);
    cLast.assign(state, 0.0f);
    Recurrent(ctx, p).run(x.data(), r.data(), rb.data(),
                          p.hasLengths ? lengths.data() : nullptr, h0.data(),
                          lstm() ? c0.data() : nullptr,
                          p.hasPeepholes ? peep.data() : nullptr, y.data(),
                          hLast.data(), lstm() ? cLast.data() : nullptr);
  }

  double loss(Context &ctx) {
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
};

class CpuRecurrentGrad : public testing::TestWithParam<Case> {};

TEST_P(CpuRecurrentGrad, MatchesCentralDifferences) {
  Context ctx(1);
  Problem prob(GetParam());
  const RecurrentParams &p = prob.p;
  const int64_t state = p.batch * p.hidden;
  std::vector<float> dx(prob.x.size()), dr(prob.r.size()), drb(prob.rb.size()),
      dh0(state), dc0(state), dpeep(3 * p.hidden);
  std::vector<float> y, hLast, cLast;
  prob.forward(ctx, y, hLast, cLast);
  RecurrentGrad(ctx, p).run(
      prob.x.data(), prob.r.data(), prob.rb.data(),
      p.hasLengths ? prob.lengths.data() : nullptr, prob.h0.data(),
      prob.lstm() ? prob.c0.data() : nullptr,
      p.hasPeepholes ? prob.peep.data() : nullptr, y.data(), prob.dy.data(),
      prob.dhLast.data(), prob.lstm() ? prob.dcLast.data() : nullptr, dx.data(),
      dr.data(), drb.data(), dh0.data(), prob.lstm() ? dc0.data() : nullptr,
      p.hasPeepholes ? dpeep.data() : nullptr);

  // Clip and Relu have kinks: a step carrying a pre-activation across one
  // spoils that difference, so a smaller step gets a second chance.
  auto difference = [&](std::vector<float> &input, size_t i, float step) {
    const float saved = input[i];
    input[i] = saved + step;
    double up = prob.loss(ctx);
    input[i] = saved - step;
    double down = prob.loss(ctx);
    input[i] = saved;
    return (up - down) / (2.0 * double(step));
  };
  auto check = [&](std::vector<float> &input, const std::vector<float> &grad,
                   const char *what) {
    for (size_t i = 0; i < input.size(); ++i) {
      auto near = [&](double expected) {
        return std::fabs(grad[i] - expected) <=
               3e-3 + 2e-2 * std::fabs(expected);
      };
      double coarse = difference(input, i, 5e-3f);
      if (near(coarse))
        continue;
      double fine = difference(input, i, 5e-4f);
      EXPECT_TRUE(near(fine))
          << what << "[" << i << "] = " << grad[i] << ", central differences "
          << coarse << " (step 5e-3) and " << fine << " (step 5e-4)";
    }
  };
  check(prob.x, dx, "dProjected");
  check(prob.r, dr, "dR");
  check(prob.rb, drb, "dRb");
  check(prob.h0, dh0, "dh0");
  if (prob.lstm())
    check(prob.c0, dc0, "dc0");
  if (p.hasPeepholes)
    check(prob.peep, dpeep, "dPeepholes");
}

std::vector<Case> cases() {
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

INSTANTIATE_TEST_SUITE_P(Cells, CpuRecurrentGrad, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

TEST(CpuRecurrentGradErrors, MissingOperandsAndBadLengths) {
  Context ctx(1);
  Case c{"lstm", RecurrentCell::LSTM, 2, false, true, true};
  Problem prob(c);
  RecurrentGrad grad(ctx, prob.p);
  std::vector<float> y(prob.dy.size()), dx(prob.x.size()), dr(prob.r.size()),
      drb(prob.rb.size()), dh0(6), dc0(6), dpeep(9);
  EXPECT_THROW(grad.run(prob.x.data(), prob.r.data(), prob.rb.data(),
                        prob.lengths.data(), prob.h0.data(), prob.c0.data(),
                        nullptr, y.data(), nullptr, nullptr, nullptr, dx.data(),
                        dr.data(), drb.data(), dh0.data(), dc0.data(),
                        dpeep.data()),
               Error);
  std::vector<int64_t> tooLong = {6, 1};
  try {
    grad.run(prob.x.data(), prob.r.data(), prob.rb.data(), tooLong.data(),
             prob.h0.data(), prob.c0.data(), prob.peep.data(), y.data(),
             nullptr, nullptr, nullptr, dx.data(), dr.data(), drb.data(),
             dh0.data(), dc0.data(), dpeep.data());
    FAIL() << "a sequence_lens past the steps ran";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("sequence_lens[0] = 6"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
