//===- GpuRecurrentTest.cpp - CUDA recurrence kernels against the CPU ones ===//
//
// The CUDA Recurrent and RecurrentGrad kernels against the CPU kernels
// (themselves checked against onnxruntime and central differences) on the
// same random problem, for every cell and option, at batches 3 and 7.
// Without a CUDA device every case is skipped.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"
#include "heterps/Runtime/GpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace heterps::rt;

namespace {

struct Case {
  std::string name;
  RecurrentCell cell;
  int64_t batch;
  bool reverse = false, lengths = false, peepholes = false, clip = false,
       linearBeforeReset = false;
  UnaryKind f = UnaryKind::Sigmoid;
};

/// The CPU kernels' outputs: the reference.
struct CpuResults {
  std::vector<float> y, hLast, cLast, dx, dr, drb, dh0, dc0, dpeep;
};

class GpuRecurrent : public testing::TestWithParam<Case> {
protected:
  static void SetUpTestSuite() {
    try {
      context = std::make_unique<gpu::Context>(0);
    } catch (const Error &error) {
      reason = error.what();
    }
  }
  static void TearDownTestSuite() { context.reset(); }
  void SetUp() override {
    if (!context)
      GTEST_SKIP() << reason;
    context->enterThread();
  }
  void TearDown() override {
    for (void *pointer : buffers)
      context->deallocate(pointer);
  }

  /// A device copy of `host` (null for an empty vector).
  template <typename T> void *device(const std::vector<T> &host) {
    if (host.empty())
      return nullptr;
    void *pointer = context->allocate(host.size() * sizeof(T));
    buffers.push_back(pointer);
    context->upload(pointer, host.data(), host.size() * sizeof(T));
    return pointer;
  }
  std::vector<float> download(const void *pointer, size_t n) {
    std::vector<float> values(n);
    if (pointer)
      context->download(values.data(), pointer, n * sizeof(float));
    return values;
  }

  static inline std::unique_ptr<gpu::Context> context;
  static inline std::string reason;
  std::vector<void *> buffers;
};

TEST_P(GpuRecurrent, MatchesTheCpuKernels) {
  const Case &c = GetParam();
  RecurrentParams p;
  p.cell = c.cell;
  p.steps = 6;
  p.batch = c.batch;
  p.hidden = 5;
  p.reverse = c.reverse;
  p.activations[0] = c.f;
  p.hasClip = c.clip;
  p.clip = 0.9f;
  p.linearBeforeReset = c.linearBeforeReset;
  p.hasRecurrentBias = true;
  p.hasLengths = c.lengths;
  p.hasPeepholes = c.peepholes;
  const bool lstm = c.cell == RecurrentCell::LSTM;
  const int64_t gates = gatesPerUnit(c.cell) * p.hidden,
                state = p.batch * p.hidden, sequence = p.steps * state;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](int64_t n) {
    std::vector<float> v(n);
    for (float &e : v)
      e = uniform(rng);
    return v;
  };
  std::vector<float> x = random(p.steps * p.batch * gates),
                     r = random(gates * p.hidden), rb = random(gates),
                     h0 = random(state),
                     c0 = lstm ? random(state) : std::vector<float>{},
                     peep = c.peepholes ? random(3 * p.hidden)
                                        : std::vector<float>{},
                     dy = random(sequence), dhLast = random(state),
                     dcLast = lstm ? random(state) : std::vector<float>{};
  std::vector<int64_t> lengths;
  if (c.lengths)
    for (int64_t b = 0; b < p.batch; ++b)
      lengths.push_back(b % 3 == 2 ? 0 : p.steps - b % 4);
  auto orNull = [](auto &v) { return v.empty() ? nullptr : v.data(); };

  CpuResults want;
  {
    cpu::Context ctx(1);
    want.y.resize(sequence);
    want.hLast.resize(state);
    want.cLast.resize(lstm ? state : 0);
    cpu::Recurrent(ctx, p).run(
        x.data(), r.data(), rb.data(), orNull(lengths), h0.data(), orNull(c0),
        orNull(peep), want.y.data(), want.hLast.data(), orNull(want.cLast));
    want.dx.resize(x.size());
    want.dr.resize(r.size());
    want.drb.resize(rb.size());
    want.dh0.resize(state);
    want.dc0.resize(lstm ? state : 0);
    want.dpeep.resize(peep.size());
    cpu::RecurrentGrad(ctx, p).run(
        x.data(), r.data(), rb.data(), orNull(lengths), h0.data(), orNull(c0),
        orNull(peep), want.y.data(), dy.data(), dhLast.data(), orNull(dcLast),
        want.dx.data(), want.dr.data(), want.drb.data(), want.dh0.data(),
        orNull(want.dc0), orNull(want.dpeep));
  }

  void *dX = device(x), *dR = device(r), *dRb = device(rb),
       *dLengths = device(lengths), *dH0 = device(h0), *dC0 = device(c0),
       *dPeep = device(peep);
  auto zeros = [&](size_t n) { return device(std::vector<float>(n, 0.0f)); };
  void *y = zeros(sequence), *hLast = zeros(state),
       *cLast = lstm ? zeros(state) : nullptr;
  gpu::Recurrent(*context, p)
      .run(dX, dR, dRb, dLengths, dH0, dC0, dPeep, y, hLast, cLast);
  void *gx = zeros(x.size()), *gr = zeros(r.size()), *grb = zeros(rb.size()),
       *gh0 = zeros(state), *gc0 = lstm ? zeros(state) : nullptr,
       *gpeep = c.peepholes ? zeros(peep.size()) : nullptr;
  gpu::RecurrentGrad(*context, p)
      .run(dX, dR, dRb, dLengths, dH0, dC0, dPeep, y, device(dy),
           device(dhLast), device(dcLast), gx, gr, grb, gh0, gc0, gpeep);

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

std::vector<Case> cases() {
  using C = RecurrentCell;
  std::vector<Case> out;
  for (int64_t batch : {3, 7}) {
    std::string b = "_b" + std::to_string(batch);
    out.push_back({"rnn" + b, C::RNN, batch});
    Case relu{"rnn_relu_reverse_lengths" + b, C::RNN, batch, true, true};
    relu.f = UnaryKind::Relu;
    out.push_back(relu);
    out.push_back({"gru_reverse_lengths_clip" + b, C::GRU, batch, true, true,
                   false, true});
    out.push_back({"gru_linear_before_reset_lengths" + b, C::GRU, batch, false,
                   true, false, false, true});
    out.push_back({"lstm_peepholes_lengths_clip" + b, C::LSTM, batch, false,
                   true, true, true});
    out.push_back(
        {"lstm_reverse_peepholes" + b, C::LSTM, batch, true, false, true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cells, GpuRecurrent, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

} // namespace
