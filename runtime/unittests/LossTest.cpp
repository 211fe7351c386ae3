//===- LossTest.cpp - Training losses against double references ----------===//
//
// Every kind x fromLogits on random data against straightforward double
// loops; gradients against the analytic double gradient and against central
// finite differences of the double per-sample-mean loss; |z| = 100 logits
// and saturated probabilities; out-of-range class ids; constructor errors.
//
// Built into the CPU kernel tests and, with HPS_LOSS_TEST_GPU, into the GPU
// ones (skipped without a CUDA device): data goes through the Context's
// upload and download either way, so the checks are the same.
//
//===----------------------------------------------------------------------===//

#ifdef HPS_LOSS_TEST_GPU
#include "heterps/Runtime/GpuKernels.h"
namespace backend = heterps::rt::gpu;
#define HPS_LOSS_SUITE GpuLoss
#else
#include "heterps/Runtime/CpuKernels.h"
namespace backend = heterps::rt::cpu;
#define HPS_LOSS_SUITE CpuLoss
#endif

#include "DeviceFixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace heterps::rt;

namespace {

//===----------------------------------------------------------------------===//
// Double-precision reference
//===----------------------------------------------------------------------===//

/// The kernels' clamp bounds as the float values they are.
const double kClampLo = double(1e-7f);
const double kClampHi = double(1.0f - 1e-7f);

double clampRef(double p) { return std::min(std::max(p, kClampLo), kClampHi); }

double sigmoidRef(double z) { return 1.0 / (1.0 + std::exp(-z)); }

/// One sample's loss from its m predictions (double), its m labels (bce,
/// mse) or its class id (softmax_ce).
double sampleLossRef(LossKind kind, bool logits, const double *p,
                     const float *y, int64_t id, int64_t m) {
  if (kind == LossKind::SoftmaxCE) {
    if (!logits)
      return -std::log(clampRef(p[id]));
    double best = *std::max_element(p, p + m), sum = 0;
    for (int64_t j = 0; j < m; ++j)
      sum += std::exp(p[j] - best);
    return best + std::log(sum) - p[id];
  }
  double total = 0;
  for (int64_t j = 0; j < m; ++j) {
    double v = p[j], t = y[j];
    if (kind == LossKind::MSE)
      total += (v - t) * (v - t);
    else if (logits)
      total += std::max(v, 0.0) - v * t + std::log1p(std::exp(-std::fabs(v)));
    else
      total +=
          -(t * std::log(clampRef(v)) + (1 - t) * std::log1p(-clampRef(v)));
  }
  return total / double(m);
}

/// d((1/n) sum perSample) / d prediction of one sample, analytically.
void sampleGradientRef(LossKind kind, bool logits, const double *p,
                       const float *y, int64_t id, int64_t n, int64_t m,
                       double *g) {
  if (kind == LossKind::SoftmaxCE) {
    if (!logits) {
      for (int64_t j = 0; j < m; ++j)
        g[j] = j == id ? -1.0 / clampRef(p[id]) / double(n) : 0.0;
      return;
    }
    double best = *std::max_element(p, p + m), sum = 0;
    for (int64_t j = 0; j < m; ++j)
      sum += std::exp(p[j] - best);
    for (int64_t j = 0; j < m; ++j)
      g[j] = (std::exp(p[j] - best) / sum - (j == id ? 1.0 : 0.0)) / double(n);
    return;
  }
  double scale = 1.0 / (double(n) * double(m));
  for (int64_t j = 0; j < m; ++j) {
    double v = p[j], t = y[j];
    if (kind == LossKind::MSE) {
      g[j] = 2 * (v - t) * scale;
    } else if (logits) {
      g[j] = (sigmoidRef(v) - t) * scale;
    } else {
      double q = clampRef(v);
      g[j] = (q - t) / (q * (1 - q)) * scale;
    }
  }
}

/// A problem: predictions [n, m], labels [n, m] or ids [n].
struct Problem {
  LossKind kind;
  bool logits;
  int64_t n, m;
  std::vector<float> prediction, labels;
  std::vector<int64_t> ids;

  const float *labelRow(int64_t i) const {
    return kind == LossKind::SoftmaxCE ? nullptr : labels.data() + i * m;
  }
  int64_t id(int64_t i) const {
    return kind == LossKind::SoftmaxCE ? ids[i] : 0;
  }
  std::vector<double> row(int64_t i) const {
    return std::vector<double>(prediction.begin() + i * m,
                               prediction.begin() + (i + 1) * m);
  }
};

Problem randomProblem(LossKind kind, bool logits, int64_t n, int64_t m,
                      unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Problem p{kind, logits, n, m, {}, {}, {}};
  p.prediction.resize(size_t(n * m));
  for (float &v : p.prediction) {
    if (kind == LossKind::MSE)
      v = unit(random) * 6.0f - 3.0f;
    else if (logits)
      v = unit(random) * 16.0f - 8.0f;
    else // away from the clamp, which finite differences would straddle
      v = 0.02f + 0.96f * unit(random);
  }
  if (kind == LossKind::SoftmaxCE) {
    std::uniform_int_distribution<int64_t> classes(0, m - 1);
    for (int64_t i = 0; i < n; ++i)
      p.ids.push_back(classes(random));
    return p;
  }
  p.labels.resize(size_t(n * m));
  for (float &t : p.labels) {
    if (kind == LossKind::MSE) {
      t = unit(random) * 6.0f - 3.0f;
    } else {
      // Hard 0/1 labels and soft ones.
      t = unit(random);
      if (unit(random) < 0.5f)
        t = std::round(t);
    }
  }
  return p;
}

std::string describe(const Problem &p) {
  return std::string(lossKindName(p.kind)) +
         (p.logits ? " logits " : " probabilities ") + std::to_string(p.n) +
         "x" + std::to_string(p.m);
}

//===----------------------------------------------------------------------===//
// Fixture: one context for the suite; skips without a usable backend
//===----------------------------------------------------------------------===//

class HPS_LOSS_SUITE : public test::DeviceFixture<backend::Context> {
protected:
  /// n floats of NaN, so that an element a kernel leaves unwritten fails.
  void *deviceNaNs(size_t n) {
    return device(std::vector<float>(n, std::nanf("")));
  }

  std::vector<float> host(const void *pointer, size_t n) {
    return download<float>(pointer, n);
  }

  struct Output {
    std::vector<float> perSample, gradient;
  };

  Output run(const Problem &p) {
    backend::Loss loss(*context, DType::F32, p.kind, p.logits, p.n, p.m);
    void *x = device(p.prediction);
    void *y = p.kind == LossKind::SoftmaxCE ? device(p.ids) : device(p.labels);
    void *perSample = deviceNaNs(size_t(p.n));
    void *gradient = deviceNaNs(size_t(p.n * p.m));
    loss.run(x, y, perSample);
    loss.runGradient(x, y, gradient);
    return {host(perSample, size_t(p.n)), host(gradient, size_t(p.n * p.m))};
  }

  /// Per-sample losses and the analytic gradient against the double
  /// reference on every element; the gradient against central differences
  /// of the double mean loss on every element of small problems and an even
  /// spread of 600 elements of large ones.
  void checkAgainstReference(LossKind kind, bool logits) {
    const std::vector<std::pair<int64_t, int64_t>> shapes = {
        {1, 1}, {5, 7}, {3, 100}, {300, 300}};
    unsigned seed = 1;
    for (auto [n, m] : shapes) {
      Problem p = randomProblem(kind, logits, n, m, seed++);
      SCOPED_TRACE(describe(p));
      Output out = run(p);
      const double scale =
          kind == LossKind::SoftmaxCE ? 1.0 / double(n) : 1.0 / double(n * m);
      int failures = 0;
      std::vector<double> g(static_cast<size_t>(m));
      for (int64_t i = 0; i < n && failures < 10; ++i) {
        std::vector<double> row = p.row(i);
        double want =
            sampleLossRef(kind, logits, row.data(), p.labelRow(i), p.id(i), m);
        if (!(std::fabs(out.perSample[i] - want) <=
              1e-5 * std::fabs(want) + 2e-6)) {
          ADD_FAILURE() << "loss of sample " << i << ": " << out.perSample[i]
                        << ", expected " << want;
          ++failures;
        }
        sampleGradientRef(kind, logits, row.data(), p.labelRow(i), p.id(i), n,
                          m, g.data());
        for (int64_t j = 0; j < m; ++j) {
          float got = out.gradient[i * m + j];
          if (!(std::fabs(got - g[j]) <=
                2e-5 * std::fabs(g[j]) + 2e-6 * scale)) {
            ADD_FAILURE() << "gradient at " << i << "," << j << ": " << got
                          << ", expected " << g[j];
            if (++failures >= 10)
              break;
          }
        }
      }
      const int64_t total = n * m, stride = std::max<int64_t>(1, total / 600);
      const double h = 1e-5;
      for (int64_t k = 0; k < total && failures < 10; k += stride) {
        int64_t i = k / m, j = k % m;
        std::vector<double> row = p.row(i);
        row[j] += h;
        double up =
            sampleLossRef(kind, logits, row.data(), p.labelRow(i), p.id(i), m);
        row[j] -= 2 * h;
        double down =
            sampleLossRef(kind, logits, row.data(), p.labelRow(i), p.id(i), m);
        double want = (up - down) / (2 * h) / double(n);
        float got = out.gradient[k];
        if (!(std::fabs(got - want) <= 1e-4 * std::fabs(want) + 1e-5 * scale)) {
          ADD_FAILURE() << "gradient at " << i << "," << j << ": " << got
                        << ", central difference " << want;
          ++failures;
        }
      }
    }
  }
};

TEST_F(HPS_LOSS_SUITE, BceOnLogitsMatchesReference) {
  checkAgainstReference(LossKind::BCE, true);
}

TEST_F(HPS_LOSS_SUITE, BceOnProbabilitiesMatchesReference) {
  checkAgainstReference(LossKind::BCE, false);
}

TEST_F(HPS_LOSS_SUITE, SoftmaxCeOnLogitsMatchesReference) {
  checkAgainstReference(LossKind::SoftmaxCE, true);
}

TEST_F(HPS_LOSS_SUITE, SoftmaxCeOnProbabilitiesMatchesReference) {
  checkAgainstReference(LossKind::SoftmaxCE, false);
}

TEST_F(HPS_LOSS_SUITE, MseMatchesReference) {
  checkAgainstReference(LossKind::MSE, true);
  checkAgainstReference(LossKind::MSE, false); // fromLogits changes nothing
}

/// Expects a finite value within float rounding of `want`; values below
/// float's normal range (e^-100 terms) only need to be that small.
void expectExact(float got, double want, const std::string &what) {
  EXPECT_TRUE(std::isfinite(got)) << what << ": " << got;
  EXPECT_LE(std::fabs(got - want), 1e-6 * std::fabs(want) + 1e-37)
      << what << ": " << got << ", expected " << want;
}

TEST_F(HPS_LOSS_SUITE, BceLogitsOfMagnitude100) {
  // Every (z, y) pair with z = +-100 in one sample per pair; m = 1 (a
  // thread per sample on the GPU) and m = 70 (a block per sample).
  for (int64_t m : {int64_t(1), int64_t(70)}) {
    Problem p{LossKind::BCE, true, 6, m, {}, {}, {}};
    const float zs[] = {100.0f, -100.0f}, ys[] = {0.0f, 1.0f, 0.25f};
    for (float z : zs)
      for (float y : ys)
        for (int64_t j = 0; j < m; ++j) {
          p.prediction.push_back(z);
          p.labels.push_back(y);
        }
    Output out = run(p);
    std::vector<double> g(static_cast<size_t>(m));
    for (int64_t i = 0; i < p.n; ++i) {
      std::vector<double> row = p.row(i);
      std::string what = "z " + std::to_string(row[0]) + " y " +
                         std::to_string(p.labels[i * m]) + " m " +
                         std::to_string(m);
      expectExact(out.perSample[i],
                  sampleLossRef(p.kind, true, row.data(), p.labelRow(i), 0, m),
                  "loss of " + what);
      sampleGradientRef(p.kind, true, row.data(), p.labelRow(i), 0, p.n, m,
                        g.data());
      for (int64_t j = 0; j < m; ++j)
        expectExact(out.gradient[i * m + j], g[j], "gradient of " + what);
    }
  }
}

TEST_F(HPS_LOSS_SUITE, SoftmaxCeLogitsOfMagnitude100) {
  // Rows of logits 100 (class i % 2), 0 (class 2) and -100 (the rest):
  // row 0 has its label at the winner (loss 0, gradient 0 there), row 1 at a
  // class 200 below the winner, row 2 at one 100 below it. m = 4 takes the
  // GPU's thread-per-sample kernel, m = 80 its block-per-sample one.
  for (int64_t m : {int64_t(4), int64_t(80)}) {
    Problem p{LossKind::SoftmaxCE, true, 3, m, {}, {}, {0, 0, 2}};
    for (int64_t i = 0; i < p.n; ++i)
      for (int64_t j = 0; j < m; ++j)
        p.prediction.push_back(j == 2 ? 0.0f : (j == i % 2 ? 100.0f : -100.0f));
    Output out = run(p);
    std::vector<double> g(static_cast<size_t>(m));
    for (int64_t i = 0; i < p.n; ++i) {
      std::vector<double> row = p.row(i);
      std::string what = "row " + std::to_string(i) + " m " + std::to_string(m);
      expectExact(out.perSample[i],
                  sampleLossRef(p.kind, true, row.data(), nullptr, p.ids[i], m),
                  "loss of " + what);
      sampleGradientRef(p.kind, true, row.data(), nullptr, p.ids[i], p.n, m,
                        g.data());
      for (int64_t j = 0; j < m; ++j)
        expectExact(out.gradient[i * m + j], g[j],
                    "gradient of " + what + " class " + std::to_string(j));
    }
    EXPECT_EQ(out.perSample[0], 0.0f);
    EXPECT_EQ(out.perSample[1], 200.0f);
    EXPECT_EQ(out.perSample[2], 100.0f);
    EXPECT_EQ(out.gradient[0], 0.0f);
    EXPECT_EQ(out.gradient[m + 1], 1.0f / 3.0f);
    EXPECT_EQ(out.gradient[m], -1.0f / 3.0f);
  }
}

TEST_F(HPS_LOSS_SUITE, SaturatedProbabilitiesAreClamped) {
  // p of exactly 0 and 1 with both labels: the loss is finite (-log(1e-7) at
  // worst) and the gradient is the formula's at the clamped p, finite and
  // pointing away from the wrong label.
  Problem bce{LossKind::BCE, false, 2, 2, {}, {}, {}};
  bce.prediction = {0.0f, 1.0f, 0.0f, 1.0f};
  bce.labels = {0.0f, 0.0f, 1.0f, 1.0f};
  Output out = run(bce);
  std::vector<double> g(2);
  for (int64_t i = 0; i < 2; ++i) {
    std::vector<double> row = bce.row(i);
    double want =
        sampleLossRef(bce.kind, false, row.data(), bce.labelRow(i), 0, 2);
    EXPECT_NEAR(out.perSample[i], want, 1e-5 * want) << "sample " << i;
    sampleGradientRef(bce.kind, false, row.data(), bce.labelRow(i), 0, 2, 2,
                      g.data());
    for (int64_t j = 0; j < 2; ++j)
      EXPECT_NEAR(out.gradient[i * 2 + j], g[j], 1e-5 * std::fabs(g[j]))
          << "sample " << i << " element " << j;
  }
  EXPECT_GT(out.gradient[1], 0.0f); // p = 1, y = 0: push down
  EXPECT_LT(out.gradient[2], 0.0f); // p = 0, y = 1: push up

  // The label's probability at 0 (clamped up) and at 1 (clamped down).
  Problem ce{LossKind::SoftmaxCE, false, 2, 3, {}, {}, {0, 2}};
  ce.prediction = {0.0f, 0.5f, 0.5f, 0.0f, 0.0f, 1.0f};
  Output ceOut = run(ce);
  EXPECT_NEAR(ceOut.perSample[0], -std::log(kClampLo), 1e-5);
  EXPECT_NEAR(ceOut.perSample[1], -std::log(kClampHi), 1e-6);
  EXPECT_NEAR(ceOut.gradient[0], -1.0 / kClampLo / 2, 1e-5 / kClampLo);
  EXPECT_NEAR(ceOut.gradient[5], -1.0 / kClampHi / 2, 1e-6);
  for (int k : {1, 2, 3, 4})
    EXPECT_EQ(ceOut.gradient[k], 0.0f) << "element " << k;
}

TEST_F(HPS_LOSS_SUITE, OutOfRangeClassIdThrows) {
  struct Case {
    std::vector<int64_t> ids;
    std::string sample, id;
  };
  for (int64_t m : {int64_t(5), int64_t(100)}) {
    // The lowest bad sample is named, whichever comes first on the device.
    const std::vector<Case> cases = {
        {{0, m - 1, m, 1}, "sample 2", "class id " + std::to_string(m)},
        {{0, -1, 2, m + 4}, "sample 1", "class id -1"}};
    for (bool logits : {true, false}) {
      for (const Case &c : cases) {
        Problem p = randomProblem(LossKind::SoftmaxCE, logits, 4, m, 7);
        p.ids = c.ids;
        backend::Loss loss(*context, DType::F32, LossKind::SoftmaxCE, logits, 4,
                           m);
        void *x = device(p.prediction), *y = device(p.ids);
        void *perSample = deviceNaNs(4), *gradient = deviceNaNs(size_t(4 * m));
        for (bool gradientRun : {false, true}) {
          SCOPED_TRACE(describe(p) + (gradientRun ? " gradient" : " loss"));
          try {
            if (gradientRun)
              loss.runGradient(x, y, gradient);
            else
              loss.run(x, y, perSample);
            ADD_FAILURE() << "an out-of-range class id did not throw";
          } catch (const Error &error) {
            std::string message = error.what();
            EXPECT_NE(message.find("Loss"), std::string::npos) << message;
            EXPECT_NE(message.find(c.sample), std::string::npos) << message;
            EXPECT_NE(message.find(c.id), std::string::npos) << message;
          }
        }
        // The kernel stays usable: good ids run after a bad one.
        std::vector<int64_t> good = {0, 1, 2, 3};
        EXPECT_NO_THROW(loss.run(x, device(good), perSample));
      }
    }
  }
}

TEST_F(HPS_LOSS_SUITE, ConstructorRejectsBadParameters) {
  auto expectError = [&](DType type, LossKind kind, int64_t n, int64_t m,
                         const std::string &mention) {
    try {
      backend::Loss loss(*context, type, kind, true, n, m);
      ADD_FAILURE() << "no error for " << dtypeName(type) << " "
                    << lossKindName(kind) << " n " << n << " m " << m;
    } catch (const Error &error) {
      std::string message = error.what();
      EXPECT_NE(message.find("Loss"), std::string::npos) << message;
      EXPECT_NE(message.find(mention), std::string::npos) << message;
    }
  };
  expectError(DType::F16, LossKind::BCE, 4, 1, "f16");
  expectError(DType::F64, LossKind::MSE, 4, 1, "f64");
  expectError(DType::I64, LossKind::SoftmaxCE, 4, 3, "i64");
  expectError(DType::F32, LossKind::BCE, 0, 1, "n = 0");
  expectError(DType::F32, LossKind::MSE, -3, 1, "n = -3");
  expectError(DType::F32, LossKind::SoftmaxCE, 4, 0, "m = 0");
  expectError(DType::F32, LossKind::BCE, 4, -1, "m = -1");
}

TEST(LossKindName, Names) {
  EXPECT_STREQ(lossKindName(LossKind::BCE), "bce");
  EXPECT_STREQ(lossKindName(LossKind::SoftmaxCE), "softmax_ce");
  EXPECT_STREQ(lossKindName(LossKind::MSE), "mse");
}

} // namespace
