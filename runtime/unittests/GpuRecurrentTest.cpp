//===- GpuRecurrentTest.cpp - CUDA recurrence kernels against the CPU ones ===//
//
// The CUDA Recurrent and RecurrentGrad kernels against the CPU kernels
// (themselves checked against onnxruntime and central differences) on the
// same random problem, for every cell and option, at batches 3 and 7.
// Without a CUDA device every case is skipped.
//
//===----------------------------------------------------------------------===//

#include "DeviceFixture.h"
#include "RecurrentProblem.h"

#include "heterps/Runtime/GpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace heterps::rt;
using namespace heterps::rt::test;

namespace {

class GpuRecurrent
    : public test::DeviceFixture<gpu::Context, testing::TestWithParam<Case>> {
protected:
  using Fixture =
      test::DeviceFixture<gpu::Context, testing::TestWithParam<Case>>;
  /// A device copy of `host` (null for an empty vector: an absent operand).
  template <typename T> void *device(const std::vector<T> &host) {
    return host.empty() ? nullptr : Fixture::device(host);
  }
  std::vector<float> download(const void *pointer, size_t n) {
    return pointer ? Fixture::download<float>(pointer, n)
                   : std::vector<float>(n);
  }
};

TEST_P(GpuRecurrent, MatchesTheCpuKernels) {
  Problem prob(GetParam());
  const RecurrentParams &p = prob.p;
  Problem::Results want;
  {
    cpu::Context ctx(1);
    want = prob.runCpu(ctx);
  }
  const bool lstm = prob.lstm();
  const int64_t state = p.batch * p.hidden;
  std::vector<float> noFloats;
  std::vector<int64_t> noLengths;
  void *dX = device(prob.x), *dR = device(prob.r), *dRb = device(prob.rb),
       *dLengths = device(p.hasLengths ? prob.lengths : noLengths),
       *dH0 = device(prob.h0), *dC0 = device(lstm ? prob.c0 : noFloats),
       *dPeep = device(p.hasPeepholes ? prob.peep : noFloats);
  auto zeros = [&](size_t n) { return device(std::vector<float>(n, 0.0f)); };
  void *y = zeros(want.y.size()), *hLast = zeros(state),
       *cLast = zeros(want.cLast.size());
  gpu::Recurrent(*context, p)
      .run(dX, dR, dRb, dLengths, dH0, dC0, dPeep, y, hLast, cLast);
  void *gx = zeros(want.dx.size()), *gr = zeros(want.dr.size()),
       *grb = zeros(want.drb.size()), *gh0 = zeros(state),
       *gc0 = zeros(want.dc0.size()), *gpeep = zeros(want.dpeep.size());
  gpu::RecurrentGrad(*context, p)
      .run(dX, dR, dRb, dLengths, dH0, dC0, dPeep, y, device(prob.dy),
           device(prob.dhLast), device(lstm ? prob.dcLast : noFloats), gx, gr,
           grb, gh0, gc0, gpeep);

  auto expectClose = [&](const std::vector<float> &wanted, const void *got,
                         const char *what) {
    std::vector<float> values = download(got, wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i)
      EXPECT_NEAR(values[i], wanted[i], 1e-4f + 1e-4f * std::fabs(wanted[i]))
          << what << "[" << i << "]";
  };
  expectClose(want.y, y, "y");
  expectClose(want.hLast, hLast, "hLast");
  expectClose(want.cLast, cLast, "cLast");
  expectClose(want.dx, gx, "dProjected");
  expectClose(want.dr, gr, "dR");
  expectClose(want.drb, grb, "dRb");
  expectClose(want.dh0, gh0, "dh0");
  expectClose(want.dc0, gc0, "dc0");
  expectClose(want.dpeep, gpeep, "dPeepholes");
}

INSTANTIATE_TEST_SUITE_P(Cells, GpuRecurrent,
                         testing::ValuesIn(recurrentCases()),
                         [](const testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

} // namespace
