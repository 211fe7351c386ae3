//===- CpuRecurrentGradTest.cpp - RecurrentGrad against finite differences ===//
//
// The adjoint kernel's every output against central differences of the
// forward Recurrent kernel, for every cell and option, in double-checked
// f32: the scalar loss is <dy, y> + <dhLast, hLast> + <dcLast, cLast> with
// random adjoints, so its derivative by any input is what RecurrentGrad
// returns for it. Batches of 3 and 7 cover both product paths.
//
//===----------------------------------------------------------------------===//

#include "RecurrentProblem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace heterps::rt;
using namespace heterps::rt::cpu;
using namespace heterps::rt::test;

namespace {

class CpuRecurrentGrad : public testing::TestWithParam<Case> {};

TEST_P(CpuRecurrentGrad, MatchesCentralDifferences) {
  Context ctx(1);
  Problem prob(GetParam());
  const RecurrentParams &p = prob.p;
  const Problem::Results got = prob.runCpu(ctx);

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
  check(prob.x, got.dx, "dProjected");
  check(prob.r, got.dr, "dR");
  check(prob.rb, got.drb, "dRb");
  check(prob.h0, got.dh0, "dh0");
  if (prob.lstm())
    check(prob.c0, got.dc0, "dc0");
  if (p.hasPeepholes)
    check(prob.peep, got.dpeep, "dPeepholes");
}

INSTANTIATE_TEST_SUITE_P(Cells, CpuRecurrentGrad,
                         testing::ValuesIn(recurrentCases()),
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
