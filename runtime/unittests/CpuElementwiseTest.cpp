//===- CpuElementwiseTest.cpp - Unary, Binary, Where, Cast on the CPU -----===//
//
// Hand-computed cases for the semantics ONNX pins down (rounding, integer
// division, modulo signs, comparisons, casts) and naive references on random
// data for every kind, type class and broadcasting form, at sizes that take
// both the serial and the OpenMP / oneDNN paths.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::vector<float> randomFloats(int64_t n, float lo, float hi,
                                unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = dist(rng);
  return v;
}

template <typename T>
std::vector<T> randomInts(int64_t n, int64_t lo, int64_t hi,
                          unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T &x : v)
    x = T(dist(rng));
  return v;
}

template <typename To, typename From>
std::vector<To> convertAll(const std::vector<From> &v) {
  return std::vector<To>(v.begin(), v.end());
}

/// Flat index into a broadcast operand for flat output index i.
int64_t broadcastIndex(const Shape &in, const Shape &out, int64_t i) {
  int64_t index = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    size_t d = out.size() - 1 - k;
    int64_t coord = i % out[d];
    i /= out[d];
    if (k < in.size()) {
      size_t e = in.size() - 1 - k;
      if (in[e] != 1)
        index += coord * stride;
      stride *= in[e];
    }
  }
  return index;
}

/// F32 <-> F16/BF16 through the Cast kernel.
std::vector<uint16_t> toHalfs(Context &ctx, DType type,
                              const std::vector<float> &v) {
  std::vector<uint16_t> out(v.size());
  Cast(ctx, DType::F32, type, int64_t(v.size())).run(v.data(), out.data());
  return out;
}
std::vector<float> fromHalfs(Context &ctx, DType type,
                             const std::vector<uint16_t> &v) {
  std::vector<float> out(v.size());
  Cast(ctx, type, DType::F32, int64_t(v.size())).run(v.data(), out.data());
  return out;
}

void expectClose(double expected, double actual, double rel, double abs,
                 const std::string &what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what;
    return;
  }
  if (std::isinf(expected)) {
    EXPECT_EQ(expected, actual) << what;
    return;
  }
  EXPECT_NEAR(expected, actual, abs + rel * std::fabs(expected)) << what;
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

struct UnaryCase {
  UnaryKind kind;
  const char *name;
  UnaryParams params;
  float lo, hi; // input range
  std::function<double(double)> ref;
};

UnaryParams withAlpha(float alpha, float beta = 0) {
  UnaryParams p;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

UnaryParams clipParams(double lo, double hi) {
  UnaryParams p;
  p.lo = lo;
  p.hi = hi;
  return p;
}

std::vector<UnaryCase> floatUnaryCases() {
  const double pi = 3.14159265358979323846;
  return {
      {UnaryKind::Identity, "Identity", {}, -5, 5, [](double x) { return x; }},
      {UnaryKind::Relu,
       "Relu",
       {},
       -5,
       5,
       [](double x) { return x > 0 ? x : 0; }},
      {UnaryKind::Sigmoid,
       "Sigmoid",
       {},
       -20,
       20,
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {UnaryKind::Tanh,
       "Tanh",
       {},
       -6,
       6,
       [](double x) { return std::tanh(x); }},
      {UnaryKind::GeluErf,
       "GeluErf",
       {},
       -6,
       6,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {UnaryKind::GeluTanh,
       "GeluTanh",
       {},
       -6,
       6,
       [pi](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
       }},
      {UnaryKind::Erf, "Erf", {}, -3, 3, [](double x) { return std::erf(x); }},
      {UnaryKind::Exp,
       "Exp",
       {},
       -20,
       20,
       [](double x) { return std::exp(x); }},
      {UnaryKind::Log,
       "Log",
       {},
       0.001f,
       100,
       [](double x) { return std::log(x); }},
      {UnaryKind::Sqrt,
       "Sqrt",
       {},
       0,
       100,
       [](double x) { return std::sqrt(x); }},
      {UnaryKind::Abs, "Abs", {}, -5, 5, [](double x) { return std::fabs(x); }},
      {UnaryKind::Neg, "Neg", {}, -5, 5, [](double x) { return -x; }},
      {UnaryKind::Reciprocal,
       "Reciprocal",
       {},
       0.1f,
       10,
       [](double x) { return 1 / x; }},
      {UnaryKind::Floor,
       "Floor",
       {},
       -10,
       10,
       [](double x) { return std::floor(x); }},
      {UnaryKind::Ceil,
       "Ceil",
       {},
       -10,
       10,
       [](double x) { return std::ceil(x); }},
      {UnaryKind::Round,
       "Round",
       {},
       -10,
       10,
       [](double x) { return std::nearbyint(x); }},
      {UnaryKind::Sign,
       "Sign",
       {},
       -5,
       5,
       [](double x) { return x > 0   ? 1.0
                             : x < 0 ? -1.0
                                     : 0.0; }},
      {UnaryKind::Sin, "Sin", {}, -6, 6, [](double x) { return std::sin(x); }},
      {UnaryKind::Cos, "Cos", {}, -6, 6, [](double x) { return std::cos(x); }},
      {UnaryKind::Asin,
       "Asin",
       {},
       -1,
       1,
       [](double x) { return std::asin(x); }},
      {UnaryKind::Acos,
       "Acos",
       {},
       -1,
       1,
       [](double x) { return std::acos(x); }},
      {UnaryKind::Atan,
       "Atan",
       {},
       -9,
       9,
       [](double x) { return std::atan(x); }},
      {UnaryKind::Softplus,
       "Softplus",
       {},
       -30,
       30,
       [](double x) { return std::log1p(std::exp(x)); }},
      {UnaryKind::Softsign,
       "Softsign",
       {},
       -10,
       10,
       [](double x) { return x / (1 + std::fabs(x)); }},
      {UnaryKind::HardSwish,
       "HardSwish",
       {},
       -6,
       6,
       [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }},
      {UnaryKind::LeakyRelu, "LeakyRelu", withAlpha(0.1f), -5, 5,
       [](double x) { return x >= 0 ? x : double(0.1f) * x; }},
      {UnaryKind::Elu, "Elu", withAlpha(0.7f), -5, 5,
       [](double x) { return x > 0 ? x : double(0.7f) * (std::exp(x) - 1); }},
      {UnaryKind::Celu, "Celu", withAlpha(1.5f), -5, 5,
       [](double x) {
         double a = 1.5;
         return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1));
       }},
      {UnaryKind::Selu, "Selu", withAlpha(1.6732632f, 1.0507010f), -5, 5,
       [](double x) {
         double a = double(1.6732632f), g = double(1.0507010f);
         return g * (x > 0 ? x : a * (std::exp(x) - 1));
       }},
      {UnaryKind::HardSigmoid, "HardSigmoid", withAlpha(0.2f, 0.5f), -5, 5,
       [](double x) {
         return std::max(0.0, std::min(1.0, double(0.2f) * x + 0.5));
       }},
      {UnaryKind::ThresholdedRelu, "ThresholdedRelu", withAlpha(1.0f), -5, 5,
       [](double x) { return x > 1.0 ? x : 0.0; }},
      {UnaryKind::Clip, "Clip", clipParams(-1.5, 2.25), -5, 5,
       [](double x) { return std::min(2.25, std::max(-1.5, x)); }},
  };
}

template <typename T>
void checkFloatUnary(Context &ctx, DType type, const UnaryCase &c, int64_t n,
                     double rel, double abs) {
  std::vector<float> xf = randomFloats(n, c.lo, c.hi, unsigned(n));
  std::vector<T> x = convertAll<T>(xf);
  std::vector<T> y(static_cast<size_t>(n));
  Unary op(ctx, type, c.kind, c.params, n);
  op.run(x.data(), y.data());
  for (int64_t i = 0; i < n; ++i)
    expectClose(c.ref(double(x[i])), double(y[i]), rel, abs,
                std::string(c.name) + " " + dtypeName(type) + " n=" +
                    std::to_string(n) + " x=" + std::to_string(double(x[i])));
}

TEST(CpuElementwiseUnary, F32AllKindsSmallAndLarge) {
  Context ctx(2);
  ctx.enterThread();
  // 100 runs the project's loops; 70000 takes oneDNN (where it has the kind)
  // and the OpenMP split.
  for (const UnaryCase &c : floatUnaryCases())
    for (int64_t n : {int64_t(100), int64_t(70000)})
      checkFloatUnary<float>(ctx, DType::F32, c, n, 2e-5, 2e-6);
}

TEST(CpuElementwiseUnary, F64AllKinds) {
  Context ctx(1);
  for (const UnaryCase &c : floatUnaryCases())
    checkFloatUnary<double>(ctx, DType::F64, c, 257, 1e-12, 1e-14);
}

TEST(CpuElementwiseUnary, F16AndBF16AllKinds) {
  Context ctx(1);
  for (DType type : {DType::F16, DType::BF16}) {
    double tol = type == DType::F16 ? 2e-3 : 1.6e-2;
    for (const UnaryCase &c : floatUnaryCases()) {
      int64_t n = 200;
      // Inputs exactly representable in the half type, and results too
      // (exp(20) overflows f16).
      std::vector<uint16_t> x = toHalfs(
          ctx, type,
          randomFloats(n, std::max(c.lo, -10.0f), std::min(c.hi, 10.0f), 7));
      std::vector<float> xf = fromHalfs(ctx, type, x);
      std::vector<uint16_t> y(static_cast<size_t>(n));
      Unary(ctx, type, c.kind, c.params, n).run(x.data(), y.data());
      std::vector<float> yf = fromHalfs(ctx, type, y);
      for (int64_t i = 0; i < n; ++i) {
        double expected = c.ref(xf[i]);
        // Floor/Ceil/Round/Sign are exact; the rest lose one rounding.
        expectClose(expected, yf[i], tol, tol,
                    std::string(c.name) + " " + dtypeName(type) +
                        " x=" + std::to_string(xf[i]));
      }
    }
  }
}

TEST(CpuElementwiseUnary, RoundHalfToEven) {
  Context ctx(1);
  std::vector<float> pattern = {0.5f,  1.5f, 2.5f,        -0.5f, -1.5f,
                                -2.5f, 3.5f, 0.49999997f, 2.4f,  -2.6f};
  std::vector<float> expected = {0, 2, 2, -0.0f, -2, -2, 4, 0, 2, -3};
  for (int64_t n : {int64_t(10), int64_t(5000)}) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      x[i] = pattern[i % 10];
    Unary(ctx, DType::F32, UnaryKind::Round, {}, n).run(x.data(), y.data());
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(expected[i % 10], y[i]) << "n=" << n << " x=" << x[i];
  }
  std::vector<double> xd = {0.5, 1.5, 2.5, -2.5}, yd(4);
  Unary(ctx, DType::F64, UnaryKind::Round, {}, 4).run(xd.data(), yd.data());
  EXPECT_EQ((std::vector<double>{0, 2, 2, -2}), yd);
}

TEST(CpuElementwiseUnary, HandComputedActivations) {
  Context ctx(1);
  std::vector<float> x = {-4, -3, -1, 0, 1, 3, 4, 100, -100};
  std::vector<float> y(x.size());
  auto run = [&](UnaryKind kind, UnaryParams params = {}) {
    Unary(ctx, DType::F32, kind, params, int64_t(x.size()))
        .run(x.data(), y.data());
    return y;
  };
  std::vector<float> hs = run(UnaryKind::HardSwish);
  EXPECT_FLOAT_EQ(0, hs[0]);
  EXPECT_FLOAT_EQ(0, hs[1]);
  EXPECT_FLOAT_EQ(-1.0f / 3, hs[2]);
  EXPECT_FLOAT_EQ(2.0f / 3, hs[4]);
  EXPECT_FLOAT_EQ(3, hs[5]);
  std::vector<float> sp = run(UnaryKind::Softplus);
  EXPECT_FLOAT_EQ(100, sp[7]); // no overflow
  EXPECT_NEAR(0, sp[8], 1e-30);
  EXPECT_FLOAT_EQ(std::log(2.0f), sp[3]);
  std::vector<float> tr = run(UnaryKind::ThresholdedRelu, withAlpha(1));
  EXPECT_EQ(0, tr[4]); // x == alpha is not > alpha
  EXPECT_EQ(3, tr[5]);
  std::vector<float> sg = run(UnaryKind::Sign);
  EXPECT_EQ((std::vector<float>{-1, -1, -1, 0, 1, 1, 1, 1, -1}), sg);
  std::vector<float> selu = run(UnaryKind::Selu, withAlpha(2, 3));
  EXPECT_FLOAT_EQ(3 * 2 * (std::exp(-1.0f) - 1), selu[2]);
  EXPECT_FLOAT_EQ(9, selu[5]);
  std::vector<float> celu = run(UnaryKind::Celu, withAlpha(2));
  EXPECT_FLOAT_EQ(2 * (std::exp(-0.5f) - 1), celu[2]);
  EXPECT_FLOAT_EQ(3, celu[5]);
  // Open bounds: only the upper one clips.
  UnaryParams upper;
  upper.hi = 2;
  std::vector<float> clip = run(UnaryKind::Clip, upper);
  EXPECT_EQ((std::vector<float>{-4, -3, -1, 0, 1, 2, 2, 2, -100}), clip);
}

TEST(CpuElementwiseUnary, ClampedKindsCarryNaN) {
  // Celu was the sum of two clamps and HardSigmoid clamped with t < 1 ? t
  // : 1: NaN came out 0 and 1, where onnxruntime keeps it.
  Context ctx(0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto [kind, params] :
       {std::pair{UnaryKind::Celu, UnaryParams{}},
        std::pair{UnaryKind::HardSigmoid, UnaryParams{}}}) {
    params.alpha = kind == UnaryKind::Celu ? 1.0f : 0.2f;
    params.beta = 0.5f;
    std::vector<float> x{nan, -1, 0, 1}, y(4);
    Unary(ctx, DType::F32, kind, params, 4).run(x.data(), y.data());
    EXPECT_TRUE(std::isnan(y[0])) << int(kind);
    for (int i = 1; i < 4; ++i)
      EXPECT_FALSE(std::isnan(y[i])) << int(kind) << " " << i;
  }
}

TEST(CpuElementwiseUnary, InPlace) {
  Context ctx(2);
  ctx.enterThread();
  for (int64_t n : {int64_t(33), int64_t(100000)}) {
    std::vector<float> x = randomFloats(n, -3, 3), ref = x;
    Unary(ctx, DType::F32, UnaryKind::Tanh, {}, n).run(x.data(), x.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(std::tanh(ref[i]), x[i], 2e-6);
  }
}

template <typename T> void checkIntegerUnary(Context &ctx, DType type) {
  int64_t lo = std::is_signed_v<T> ? -100 : 0;
  std::vector<T> x = randomInts<T>(300, lo, 100, 3);
  x[0] = std::numeric_limits<T>::min(); // Abs/Neg wrap instead of UB
  std::vector<T> y(x.size());
  auto run = [&](UnaryKind kind, UnaryParams params = {}) {
    Unary(ctx, type, kind, params, int64_t(x.size())).run(x.data(), y.data());
  };
  run(UnaryKind::Identity);
  EXPECT_EQ(x, y);
  run(UnaryKind::Relu);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(x[i] > 0 ? x[i] : 0, y[i]);
  run(UnaryKind::Abs);
  for (size_t i = 1; i < x.size(); ++i)
    EXPECT_EQ(T(x[i] < 0 ? -x[i] : x[i]), y[i]);
  run(UnaryKind::Neg);
  for (size_t i = 1; i < x.size(); ++i)
    EXPECT_EQ(T(-x[i]), y[i]);
  run(UnaryKind::Sign);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(T(x[i] > 0 ? 1 : x[i] < 0 ? -1 : 0), y[i]);
  // Bounds are converted to the type (2.7 -> 2) and saturate (1e30).
  run(UnaryKind::Clip, clipParams(-20.5, 1e30));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(std::is_signed_v<T> ? std::max<T>(T(-20), x[i]) : x[i], y[i]);
  run(UnaryKind::Clip,
      clipParams(-std::numeric_limits<double>::infinity(), 7.9));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(std::min<T>(T(7), x[i]), y[i]);
}

TEST(CpuElementwiseUnary, IntegerKinds) {
  Context ctx(1);
  checkIntegerUnary<int8_t>(ctx, DType::I8);
  checkIntegerUnary<uint8_t>(ctx, DType::U8);
  checkIntegerUnary<int16_t>(ctx, DType::I16);
  checkIntegerUnary<uint16_t>(ctx, DType::U16);
  checkIntegerUnary<int32_t>(ctx, DType::I32);
  checkIntegerUnary<uint32_t>(ctx, DType::U32);
  checkIntegerUnary<int64_t>(ctx, DType::I64);
  checkIntegerUnary<uint64_t>(ctx, DType::U64);
}

TEST(CpuElementwiseUnary, BoolNotAndUnsupported) {
  Context ctx(1);
  std::vector<uint8_t> x = {0, 1, 1, 0}, y(4);
  Unary(ctx, DType::Bool, UnaryKind::Not, {}, 4).run(x.data(), y.data());
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 0, 1}), y);
  Unary(ctx, DType::Bool, UnaryKind::Identity, {}, 4).run(x.data(), y.data());
  EXPECT_EQ(x, y);
  EXPECT_THROW(Unary(ctx, DType::F32, UnaryKind::Not, {}, 4), Error);
  EXPECT_THROW(Unary(ctx, DType::I32, UnaryKind::Exp, {}, 4), Error);
  EXPECT_THROW(Unary(ctx, DType::Bool, UnaryKind::Relu, {}, 4), Error);
  try {
    Unary(ctx, DType::I64, UnaryKind::Tanh, {}, 4);
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("Unary"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Tanh"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("i64"), std::string::npos);
  }
  // Zero elements: nothing to do.
  Unary(ctx, DType::F32, UnaryKind::Exp, {}, 0).run(nullptr, nullptr);
}

TEST(CpuElementwiseUnary, ReluKeepsNaN) {
  // As onnxruntime and the GPU kernels do.
  Context ctx(1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{nan, -1, 2}, y(3);
  Unary(ctx, DType::F32, UnaryKind::Relu, {}, 3).run(x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[2], 2.f);
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

const BinaryKind kArithmetic[] = {
    BinaryKind::Add,  BinaryKind::Sub,  BinaryKind::Mul, BinaryKind::Div,
    BinaryKind::Pow,  BinaryKind::Max,  BinaryKind::Min, BinaryKind::Mod,
    BinaryKind::FMod, BinaryKind::PRelu};
const BinaryKind kComparisons[] = {BinaryKind::Equal, BinaryKind::Less,
                                   BinaryKind::LessEqual, BinaryKind::Greater,
                                   BinaryKind::GreaterEqual};

double floatRef(BinaryKind kind, double a, double b) {
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Pow:
    return std::pow(a, b);
  case BinaryKind::Max:
    return std::max(a, b);
  case BinaryKind::Min:
    return std::min(a, b);
  case BinaryKind::Mod: {
    double r = std::fmod(a, b);
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
  }
  case BinaryKind::FMod:
    return std::fmod(a, b);
  case BinaryKind::PRelu:
    return a >= 0 ? a : a * b;
  case BinaryKind::Equal:
    return a == b;
  case BinaryKind::Less:
    return a < b;
  case BinaryKind::LessEqual:
    return a <= b;
  case BinaryKind::Greater:
    return a > b;
  case BinaryKind::GreaterEqual:
    return a >= b;
  default:
    return 0;
  }
}

/// Integer reference in int64 (operands small enough not to overflow).
int64_t intRef(BinaryKind kind, int64_t a, int64_t b) {
  switch (kind) {
  case BinaryKind::Div:
    return b == 0 ? 0 : a / b;
  case BinaryKind::Mod: {
    if (b == 0)
      return 0;
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
  }
  case BinaryKind::FMod:
    return b == 0 ? 0 : a % b;
  case BinaryKind::Pow: {
    int64_t r = 1;
    for (int64_t i = 0; i < b; ++i)
      r *= a;
    return b < 0 ? (a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0) : r;
  }
  default:
    return int64_t(floatRef(kind, double(a), double(b)));
  }
}

struct ShapeCase {
  Shape a, b, y;
};

const std::vector<ShapeCase> &shapeCases() {
  static const std::vector<ShapeCase> cases = {
      {{3, 4}, {3, 4}, {3, 4}},       // same shape
      {{}, {3, 4}, {3, 4}},           // scalar lhs
      {{3, 4}, {1}, {3, 4}},          // scalar rhs
      {{3, 4}, {4}, {3, 4}},          // row (bias)
      {{3, 1}, {3, 4}, {3, 4}},       // column
      {{3, 1}, {1, 4}, {3, 4}},       // both sides
      {{2, 3, 4}, {3, 1}, {2, 3, 4}}, // rank mismatch
      {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}},
      {{}, {}, {}},                     // scalars
      {{0, 4}, {4}, {0, 4}},            // empty
      {{300, 257}, {257}, {300, 257}},  // parallel rows
      {{70000}, {70000}, {70000}},      // parallel pieces of one row
      {{2, 40000}, {2, 1}, {2, 40000}}, // few long rows, scalar per row
  };
  return cases;
}

/// Runs every kind in `kinds` on random operands of type T for every shape
/// case and compares with `ref` element by element.
template <typename T, typename Y, typename Gen, typename Ref, typename Cmp>
void checkBinary(Context &ctx, DType type, BinaryKind kind, Gen gen, Ref ref,
                 Cmp cmp) {
  for (const ShapeCase &s : shapeCases()) {
    std::vector<T> a = gen(numElements(s.a), 11), b = gen(numElements(s.b), 12);
    std::vector<Y> y(static_cast<size_t>(numElements(s.y)));
    Binary(ctx, kind, type, s.a, s.b, s.y).run(a.data(), b.data(), y.data());
    for (int64_t i = 0; i < numElements(s.y); ++i) {
      T av = a[broadcastIndex(s.a, s.y, i)],
        bv = b[broadcastIndex(s.b, s.y, i)];
      // The message is built only for a failure: this loop is hot.
      if (!cmp(ref(kind, av, bv), y[i])) {
        ADD_FAILURE() << dtypeName(type) << " kind " << int(kind) << " "
                      << shapeString(s.a) << " x " << shapeString(s.b) << " at "
                      << i << ": expected " << double(ref(kind, av, bv))
                      << " got " << double(y[i]);
        return;
      }
    }
  }
}

template <typename T> void checkFloatBinary(Context &ctx, DType type) {
  auto gen = [](int64_t n, unsigned seed) {
    std::vector<float> v = randomFloats(n, -4, 4, seed);
    for (float &x : v)
      if (std::fabs(x) < 0.1f)
        x = 0.5f; // no division by ~0
    return convertAll<T>(v);
  };
  auto positive = [&](int64_t n, unsigned seed) {
    std::vector<T> v = gen(n, seed);
    for (T &x : v)
      x = std::fabs(x);
    return v;
  };
  double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  auto cmp = [tol](double expected, T actual) {
    double a = double(actual);
    if (std::isnan(expected))
      return std::isnan(a);
    if (std::isinf(expected))
      return expected == a;
    return std::fabs(expected - a) <= tol + tol * std::fabs(expected);
  };
  auto ref = [](BinaryKind k, T a, T b) {
    return double(T(floatRef(k, double(a), double(b))));
  };
  for (BinaryKind kind : kArithmetic) {
    if (kind == BinaryKind::Pow)
      checkBinary<T, T>(ctx, type, kind, positive, ref, cmp);
    else
      checkBinary<T, T>(ctx, type, kind, gen, ref, cmp);
  }
  auto exact = [](double expected, uint8_t actual) {
    return uint8_t(expected) == actual;
  };
  // Few distinct values so that Equal is sometimes true.
  auto coarse = [](int64_t n, unsigned seed) {
    return convertAll<T>(randomInts<int>(n, -2, 2, seed));
  };
  for (BinaryKind kind : kComparisons)
    checkBinary<T, uint8_t>(ctx, type, kind, coarse, ref, exact);
}

TEST(CpuElementwiseBinary, FloatAllKindsAllShapes) {
  Context ctx(2);
  ctx.enterThread();
  checkFloatBinary<float>(ctx, DType::F32);
  checkFloatBinary<double>(ctx, DType::F64);
}

template <typename T> void checkIntBinary(Context &ctx, DType type) {
  bool isSigned = std::is_signed_v<T>;
  auto gen = [&](int64_t n, unsigned seed) {
    return randomInts<T>(n, isSigned ? -9 : 0, 9, seed);
  };
  auto smallExp = [&](int64_t n, unsigned seed) {
    return randomInts<T>(n, isSigned ? -3 : 0, 3, seed);
  };
  auto ref = [](BinaryKind k, T a, T b) {
    return T(intRef(k, int64_t(a), int64_t(b)));
  };
  auto cmp = [](T expected, T actual) { return expected == actual; };
  for (BinaryKind kind : kArithmetic) {
    if (kind == BinaryKind::Pow)
      checkBinary<T, T>(ctx, type, kind, smallExp, ref, cmp);
    else
      checkBinary<T, T>(ctx, type, kind, gen, ref, cmp);
  }
  auto boolRef = [](BinaryKind k, T a, T b) {
    return uint8_t(intRef(k, int64_t(a), int64_t(b)));
  };
  auto boolCmp = [](uint8_t expected, uint8_t actual) {
    return expected == actual;
  };
  for (BinaryKind kind : kComparisons)
    checkBinary<T, uint8_t>(ctx, type, kind, gen, boolRef, boolCmp);
}

TEST(CpuElementwiseBinary, IntegerAllKindsAllShapes) {
  Context ctx(2);
  ctx.enterThread();
  checkIntBinary<int8_t>(ctx, DType::I8);
  checkIntBinary<uint8_t>(ctx, DType::U8);
  checkIntBinary<int16_t>(ctx, DType::I16);
  checkIntBinary<uint16_t>(ctx, DType::U16);
  checkIntBinary<int32_t>(ctx, DType::I32);
  checkIntBinary<uint32_t>(ctx, DType::U32);
  checkIntBinary<int64_t>(ctx, DType::I64);
  checkIntBinary<uint64_t>(ctx, DType::U64);
}

/// BitAnd / BitOr / BitXor over every bit pattern of the type's extremes
/// and random values, broadcast; they refuse floats and bool.
template <typename T> void checkBitwiseBinary(Context &ctx, DType type) {
  auto gen = [](int64_t n, unsigned seed) {
    // Every bit pattern of T: int64 draws, truncated.
    std::vector<T> values =
        randomInts<T>(n, std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::max(), seed);
    if (!values.empty()) {
      values.front() = std::numeric_limits<T>::min();
      values.back() = std::numeric_limits<T>::max();
    }
    return values;
  };
  auto ref = [](BinaryKind k, T a, T b) {
    return k == BinaryKind::BitAnd  ? T(a & b)
           : k == BinaryKind::BitOr ? T(a | b)
                                    : T(a ^ b);
  };
  auto cmp = [](T expected, T actual) { return expected == actual; };
  for (BinaryKind kind :
       {BinaryKind::BitAnd, BinaryKind::BitOr, BinaryKind::BitXor})
    checkBinary<T, T>(ctx, type, kind, gen, ref, cmp);
}

TEST(CpuElementwiseBinary, BitwiseOnIntegers) {
  Context ctx(2);
  ctx.enterThread();
  checkBitwiseBinary<int8_t>(ctx, DType::I8);
  checkBitwiseBinary<uint8_t>(ctx, DType::U8);
  checkBitwiseBinary<int16_t>(ctx, DType::I16);
  checkBitwiseBinary<uint32_t>(ctx, DType::U32);
  checkBitwiseBinary<int64_t>(ctx, DType::I64);
  checkBitwiseBinary<uint64_t>(ctx, DType::U64);
  Shape s = {4};
  EXPECT_THROW(Binary(ctx, BinaryKind::BitAnd, DType::F32, s, s, s), Error);
  EXPECT_THROW(Binary(ctx, BinaryKind::BitOr, DType::Bool, s, s, s), Error);
}

TEST(CpuElementwiseBinary, HalfTypes) {
  Context ctx(1);
  for (DType type : {DType::F16, DType::BF16}) {
    Shape sa = {3, 1}, sb = {1, 4}, sy = {3, 4};
    std::vector<uint16_t> a = toHalfs(ctx, type, {1.5f, -2, 0.25f});
    std::vector<uint16_t> b = toHalfs(ctx, type, {1, 2, -4, 0.5f});
    std::vector<uint16_t> y(12);
    Binary(ctx, BinaryKind::Mul, type, sa, sb, sy)
        .run(a.data(), b.data(), y.data());
    std::vector<float> yf = fromHalfs(ctx, type, y);
    EXPECT_EQ((std::vector<float>{1.5f, 3, -6, 0.75f, -2, -4, 8, -1, 0.25f,
                                  0.5f, -1, 0.125f}),
              yf);
    std::vector<uint8_t> less(12);
    Binary(ctx, BinaryKind::Less, type, sa, sb, sy)
        .run(a.data(), b.data(), less.data());
    EXPECT_EQ((std::vector<uint8_t>{0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1}), less);
  }
}

TEST(CpuElementwiseBinary, IntegerDivisionAndModuloSigns) {
  Context ctx(1);
  Shape s = {6};
  std::vector<int32_t> a = {7, -7, 7, -7, 6, 0};
  std::vector<int32_t> b = {2, 2, -2, -2, 3, 5};
  std::vector<int32_t> y(6);
  Binary(ctx, BinaryKind::Div, DType::I32, s, s, s)
      .run(a.data(), b.data(), y.data());
  EXPECT_EQ((std::vector<int32_t>{3, -3, -3, 3, 2, 0}), y); // truncation
  Binary(ctx, BinaryKind::Mod, DType::I32, s, s, s)
      .run(a.data(), b.data(), y.data());
  EXPECT_EQ((std::vector<int32_t>{1, 1, -1, -1, 0, 0}), y); // divisor's sign
  Binary(ctx, BinaryKind::FMod, DType::I32, s, s, s)
      .run(a.data(), b.data(), y.data());
  EXPECT_EQ((std::vector<int32_t>{1, -1, 1, -1, 0, 0}), y); // dividend's sign

  std::vector<float> fa = {7.5f, -7.5f, 7.5f, -7.5f, 6, -0.0f};
  std::vector<float> fb = {2, 2, -2, -2, 3, 5};
  std::vector<float> fy(6);
  Binary(ctx, BinaryKind::Mod, DType::F32, s, s, s)
      .run(fa.data(), fb.data(), fy.data());
  EXPECT_EQ((std::vector<float>{1.5f, 0.5f, -0.5f, -1.5f, 0, 0}), fy);
  Binary(ctx, BinaryKind::FMod, DType::F32, s, s, s)
      .run(fa.data(), fb.data(), fy.data());
  EXPECT_EQ((std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f, 0, 0}), fy);

  // Division by zero and MIN / -1 do not trap.
  std::vector<int32_t> za = {5, INT32_MIN}, zb = {0, -1}, zy(2);
  Binary(ctx, BinaryKind::Div, DType::I32, {2}, {2}, {2})
      .run(za.data(), zb.data(), zy.data());
  EXPECT_EQ(0, zy[0]);
  EXPECT_EQ(INT32_MIN, zy[1]);
}

TEST(CpuElementwiseBinary, Pow) {
  Context ctx(1);
  std::vector<int64_t> a = {2, 3, -2, 5, 1, -1, 2},
                       b = {10, 3, 3, 0, -4, -3, -1};
  std::vector<int64_t> y(7);
  Binary(ctx, BinaryKind::Pow, DType::I64, {7}, {7}, {7})
      .run(a.data(), b.data(), y.data());
  EXPECT_EQ((std::vector<int64_t>{1024, 27, -8, 1, 1, -1, 0}), y);
  // Scalar exponents take shortcuts: 2 and 1; 0.5 and 3 go through pow.
  std::vector<float> x = {-3, 0.5f, 4, 9};
  std::vector<float> out(4);
  for (float e : {2.0f, 1.0f, 0.5f, 3.0f}) {
    Binary(ctx, BinaryKind::Pow, DType::F32, {4}, {}, {4})
        .run(x.data(), &e, out.data());
    for (int i = 0; i < 4; ++i)
      expectClose(std::pow(double(x[i]), double(e)), out[i], 1e-6, 0,
                  "pow " + std::to_string(e));
  }
}

TEST(CpuElementwiseBinary, ComparisonsAndLogic) {
  Context ctx(1);
  std::vector<int32_t> a = {1, 2, 3}, b = {2};
  std::vector<uint8_t> y(3);
  auto cmp = [&](BinaryKind kind) {
    Binary(ctx, kind, DType::I32, {3}, {1}, {3})
        .run(a.data(), b.data(), y.data());
    return y;
  };
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 0}), cmp(BinaryKind::Equal));
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 0}), cmp(BinaryKind::Less));
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 0}), cmp(BinaryKind::LessEqual));
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 1}), cmp(BinaryKind::Greater));
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1}), cmp(BinaryKind::GreaterEqual));

  std::vector<uint8_t> p = {0, 0, 1, 1}, q = {0, 1, 0, 1}, r(4);
  auto logic = [&](BinaryKind kind) {
    Binary(ctx, kind, DType::Bool, {4}, {4}, {4})
        .run(p.data(), q.data(), r.data());
    return r;
  };
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 0, 1}), logic(BinaryKind::And));
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 1}), logic(BinaryKind::Or));
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 0}), logic(BinaryKind::Xor));
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 0, 1}), logic(BinaryKind::Equal));
  // Column [2,1] And row [1,2].
  std::vector<uint8_t> col = {0, 1}, row = {1, 0}, out(4);
  Binary(ctx, BinaryKind::Or, DType::Bool, {2, 1}, {1, 2}, {2, 2})
      .run(col.data(), row.data(), out.data());
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 1, 1}), out);

  std::vector<float> nanA = {NAN, 1}, nanB = {1, NAN}, nanY(2);
  Binary(ctx, BinaryKind::Max, DType::F32, {2}, {2}, {2})
      .run(nanA.data(), nanB.data(), nanY.data());
  EXPECT_TRUE(std::isnan(nanY[0]) && std::isnan(nanY[1]));
}

TEST(CpuElementwiseBinary, InPlaceAndErrors) {
  Context ctx(1);
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, bias = {10, 20, 30};
  Binary(ctx, BinaryKind::Add, DType::F32, {2, 3}, {3}, {2, 3})
      .run(a.data(), bias.data(), a.data());
  EXPECT_EQ((std::vector<float>{11, 22, 33, 14, 25, 36}), a);

  EXPECT_THROW(Binary(ctx, BinaryKind::Add, DType::F32, {3}, {4}, {3}), Error);
  EXPECT_THROW(Binary(ctx, BinaryKind::Add, DType::F32, {2, 3}, {3}, {3}),
               Error);
  EXPECT_THROW(Binary(ctx, BinaryKind::And, DType::F32, {3}, {3}, {3}), Error);
  EXPECT_THROW(Binary(ctx, BinaryKind::Add, DType::Bool, {3}, {3}, {3}), Error);
  try {
    Binary(ctx, BinaryKind::Mul, DType::I32, {2, 5}, {3}, {2, 5});
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("Binary"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("rhs"), std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

TEST(CpuElementwiseWhere, Broadcasting) {
  Context ctx(1);
  std::vector<uint8_t> cond = {1, 0, 1};
  std::vector<float> x = {1, 2, 3, 4}, y = {-1};
  std::vector<float> out(12);
  Where(ctx, DType::F32, {3, 1}, {1, 4}, {}, {3, 4})
      .run(cond.data(), x.data(), y.data(), out.data());
  EXPECT_EQ((std::vector<float>{1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4}), out);

  std::vector<int64_t> xi = {1, 2, 3, 4, 5, 6}, yi = {10, 20, 30};
  std::vector<uint8_t> rowCond = {0, 1, 0};
  std::vector<int64_t> oi(6);
  Where(ctx, DType::I64, {3}, {2, 3}, {3}, {2, 3})
      .run(rowCond.data(), xi.data(), yi.data(), oi.data());
  EXPECT_EQ((std::vector<int64_t>{10, 2, 30, 10, 5, 30}), oi);
  EXPECT_THROW(Where(ctx, DType::F32, {2}, {3}, {3}, {3}), Error);
}

template <typename T> void checkWhereRandom(Context &ctx, DType type) {
  const std::vector<std::array<Shape, 4>> cases = {
      {Shape{5, 7}, Shape{5, 7}, Shape{5, 7}, Shape{5, 7}},
      {Shape{5, 1}, Shape{7}, Shape{5, 7}, Shape{5, 7}},
      {Shape{2, 1, 7}, Shape{3, 1}, Shape{}, Shape{2, 3, 7}},
      {Shape{300, 300}, Shape{300, 300}, Shape{300}, Shape{300, 300}},
      {Shape{300, 1}, Shape{300, 300}, Shape{1, 300}, Shape{300, 300}},
  };
  for (const auto &c : cases) {
    std::vector<uint8_t> cond = randomInts<uint8_t>(numElements(c[0]), 0, 1, 5);
    std::vector<T> x = randomInts<T>(numElements(c[1]), 0, 100, 6);
    std::vector<T> y = randomInts<T>(numElements(c[2]), 0, 100, 7);
    std::vector<T> out(static_cast<size_t>(numElements(c[3])));
    Where(ctx, type, c[0], c[1], c[2], c[3])
        .run(cond.data(), x.data(), y.data(), out.data());
    for (int64_t i = 0; i < numElements(c[3]); ++i) {
      T expected = cond[broadcastIndex(c[0], c[3], i)]
                       ? x[broadcastIndex(c[1], c[3], i)]
                       : y[broadcastIndex(c[2], c[3], i)];
      ASSERT_EQ(expected, out[i]) << shapeString(c[3]) << " at " << i;
    }
  }
}

TEST(CpuElementwiseWhere, RandomAllSizes) {
  Context ctx(2);
  ctx.enterThread();
  checkWhereRandom<uint8_t>(ctx, DType::U8);
  checkWhereRandom<int16_t>(ctx, DType::I16);
  checkWhereRandom<float>(ctx, DType::F32);
  checkWhereRandom<double>(ctx, DType::F64);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST(CpuElementwiseCast, FloatToIntTruncatesAndToBool) {
  Context ctx(1);
  std::vector<float> x = {-2.7f, 2.7f, -0.5f, 0.0f, 200.9f, 1e9f};
  std::vector<int32_t> i32(6);
  Cast(ctx, DType::F32, DType::I32, 6).run(x.data(), i32.data());
  EXPECT_EQ((std::vector<int32_t>{-2, 2, 0, 0, 200, 1000000000}), i32);
  std::vector<int64_t> i64(6);
  Cast(ctx, DType::F32, DType::I64, 6).run(x.data(), i64.data());
  EXPECT_EQ((std::vector<int64_t>{-2, 2, 0, 0, 200, 1000000000}), i64);
  std::vector<uint8_t> u8(5);
  Cast(ctx, DType::F32, DType::U8, 5).run(x.data(), u8.data());
  EXPECT_EQ(200, u8[4]);
  EXPECT_EQ(2, u8[1]);

  std::vector<float> b = {0.0f, -0.0f, 0.1f, NAN, -3};
  std::vector<uint8_t> bools(5);
  Cast(ctx, DType::F32, DType::Bool, 5).run(b.data(), bools.data());
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 1, 1, 1}), bools);
  std::vector<int32_t> ints = {0, 5, -1};
  std::vector<uint8_t> ib(3);
  Cast(ctx, DType::I32, DType::Bool, 3).run(ints.data(), ib.data());
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1}), ib);
  std::vector<float> back(3);
  Cast(ctx, DType::Bool, DType::F32, 3).run(ib.data(), back.data());
  EXPECT_EQ((std::vector<float>{0, 1, 1}), back);

  std::vector<double> d = {-1.99, 1.99};
  std::vector<int16_t> i16(2);
  Cast(ctx, DType::F64, DType::I16, 2).run(d.data(), i16.data());
  EXPECT_EQ((std::vector<int16_t>{-1, 1}), i16);
}

TEST(CpuElementwiseCast, HalfBitsAndRounding) {
  Context ctx(1);
  std::vector<float> x = {1.0f,         -2.0f, 65504.0f,           65520.0f,
                          1e-7f,        0.1f,  1.0f + 1.0f / 4096, INFINITY,
                          5.9604645e-8f};
  std::vector<uint16_t> h(x.size());
  Cast(ctx, DType::F32, DType::F16, int64_t(x.size())).run(x.data(), h.data());
  // 1 + 2^-12 is a tie between 1 and 1 + 2^-10: even -> 1.0.
  EXPECT_EQ((std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0002,
                                   0x2e66, 0x3c00, 0x7c00, 0x0001}),
            h);
  std::vector<uint16_t> bf(3);
  std::vector<float> bx = {1.0f, -2.5f, 1.00390625f}; // the last is a tie
  Cast(ctx, DType::F32, DType::BF16, 3).run(bx.data(), bf.data());
  EXPECT_EQ((std::vector<uint16_t>{0x3f80, 0xc020, 0x3f80}), bf);

  std::vector<float> nan = {NAN};
  Cast(ctx, DType::F32, DType::F16, 1).run(nan.data(), h.data());
  EXPECT_EQ(0x7c00, h[0] & 0x7c00);
  EXPECT_NE(0, h[0] & 0x3ff);
}

TEST(CpuElementwiseCast, RandomRoundTrips) {
  Context ctx(2);
  ctx.enterThread();
  int64_t n = 100000;
  std::vector<int32_t> ints = randomInts<int32_t>(n, -30000, 30000, 9);
  std::vector<double> d(static_cast<size_t>(n));
  Cast(ctx, DType::I32, DType::F64, n).run(ints.data(), d.data());
  std::vector<int16_t> s(static_cast<size_t>(n));
  Cast(ctx, DType::F64, DType::I16, n).run(d.data(), s.data());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(ints[i], s[i]);
  // Integers up to 2048 are exact in f16; up to 256 in bf16.
  for (DType half : {DType::F16, DType::BF16}) {
    std::vector<int64_t> v = randomInts<int64_t>(n, -256, 256, 10);
    std::vector<uint16_t> h(static_cast<size_t>(n));
    Cast(ctx, DType::I64, half, n).run(v.data(), h.data());
    std::vector<int64_t> w(static_cast<size_t>(n));
    Cast(ctx, half, DType::I64, n).run(h.data(), w.data());
    ASSERT_EQ(v, w);
    std::vector<uint16_t> other(static_cast<size_t>(n));
    Cast(ctx, half, half == DType::F16 ? DType::BF16 : DType::F16, n)
        .run(h.data(), other.data());
  }
  std::vector<int32_t> same(static_cast<size_t>(n));
  Cast(ctx, DType::I32, DType::I32, n).run(ints.data(), same.data());
  EXPECT_EQ(ints, same);
}

} // namespace
