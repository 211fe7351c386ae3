//===- ScalarOps.h - Elementwise functions of one element -------*- C++ -*-===//
//
// The UnaryKind and BinaryKind functions and numeric conversions on one
// value of a compute type (float, double or an integer type), as the CPU
// kernels compute them. Shared by the CPU kernels and by the fused
// elementwise loops code generation writes into stage programs, which nvcc
// compiles for the GPU too: a fused loop computes exactly what the chain of
// kernels it replaces would.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_SCALAROPS_H
#define HETERPS_RUNTIME_SCALAROPS_H

#include "heterps/Runtime/Types.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define HPS_HD __host__ __device__
#else
#define HPS_HD
#endif

namespace heterps::rt::scalar {

template <typename T> constexpr bool kIsFloat = std::is_floating_point_v<T>;

/// UnaryParams in the compute type C (bounds already saturated to C).
template <typename C> struct UnaryArgs { C alpha, beta, lo, hi; };

/// Clip's two sides; NaN passes through both.
template <typename C> HPS_HD inline C clipLow(C x, C lo) {
  return x < lo ? lo : x;
}
template <typename C> HPS_HD inline C clipHigh(C x, C hi) {
  return x > hi ? hi : x;
}

template <UnaryKind K, typename C>
HPS_HD inline C unaryOp(C x, const UnaryArgs<C> &p) {
  using U = UnaryKind;
  if constexpr (K == U::Identity) {
    return x;
  } else if constexpr (K == U::Relu) {
    return x < C(0) ? C(0) : x; // keeps NaN, as onnxruntime and the GPU do
  } else if constexpr (K == U::Abs) {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (kIsFloat<C>)
      return std::fabs(x);
    else
      return x < 0 ? C(0 - std::make_unsigned_t<C>(x)) : x;
  } else if constexpr (K == U::Neg) {
    if constexpr (kIsFloat<C>)
      return -x;
    else // wraps instead of overflowing
      return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
  } else if constexpr (K == U::Sign) {
    // Keeps the sign of zero and NaN for floats.
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : x;
  } else if constexpr (K == U::Clip) {
    return clipHigh(clipLow(x, p.lo), p.hi);
  } else if constexpr (K == U::Not) {
    return x ? C(0) : C(1);
  } else if constexpr (!kIsFloat<C>) {
    static_assert(K == U::Identity, "float-only unary kind");
    return x;
  } else if constexpr (K == U::Sigmoid) {
    return C(1) / (C(1) + std::exp(-x));
  } else if constexpr (K == U::Tanh) {
    return std::tanh(x);
  } else if constexpr (K == U::GeluErf) {
    return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
  } else if constexpr (K == U::GeluTanh) {
    const C k = C(0.79788456080286535588); // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
  } else if constexpr (K == U::Erf) {
    return std::erf(x);
  } else if constexpr (K == U::Exp) {
    return std::exp(x);
  } else if constexpr (K == U::Log) {
    return std::log(x);
  } else if constexpr (K == U::Sqrt) {
    return std::sqrt(x);
  } else if constexpr (K == U::Reciprocal) {
    return C(1) / x;
  } else if constexpr (K == U::Floor) {
    return std::floor(x);
  } else if constexpr (K == U::Ceil) {
    return std::ceil(x);
  } else if constexpr (K == U::Round) {
    return std::nearbyint(x); // default rounding mode: half to even
  } else if constexpr (K == U::Sin) {
    return std::sin(x);
  } else if constexpr (K == U::Cos) {
    return std::cos(x);
  } else if constexpr (K == U::Asin) {
    return std::asin(x);
  } else if constexpr (K == U::Acos) {
    return std::acos(x);
  } else if constexpr (K == U::Atan) {
    return std::atan(x);
  } else if constexpr (K == U::Softplus) {
    // log(1 + e^x) without overflow for large x.
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  } else if constexpr (K == U::Softsign) {
    return x / (C(1) + std::fabs(x));
  } else if constexpr (K == U::HardSwish) {
    C t = x * C(1.0 / 6.0) + C(0.5);
    t = t < C(1) ? t : C(1);
    t = t > C(0) ? t : C(0);
    return x * t;
  } else if constexpr (K == U::LeakyRelu) {
    return x >= C(0) ? x : p.alpha * x;
  } else if constexpr (K == U::Elu) {
    return x > C(0) ? x : p.alpha * std::expm1(x);
  } else if constexpr (K == U::Celu) {
    // max(0, x) + min(0, alpha (e^(x/alpha) - 1)), carrying NaN (the sum
    // of two clamps turned it into 0), as the GPU kernel writes it.
    return x >= C(0) ? x : p.alpha * std::expm1(x / p.alpha);
  } else if constexpr (K == U::Selu) {
    return p.beta * (x > C(0) ? x : p.alpha * std::expm1(x));
  } else if constexpr (K == U::HardSigmoid) {
    // Clamped so that NaN stays NaN (t < 1 ? t : 1 made it 1).
    const C t = p.alpha * x + p.beta;
    return t < C(0) ? C(0) : (t > C(1) ? C(1) : t);
  } else if constexpr (K == U::ThresholdedRelu) {
    return x > p.alpha ? x : C(0);
  }
}

/// Integer arithmetic wraps (through the unsigned type) instead of
/// overflowing, as every other framework's does in practice.
template <typename C> using Wide = std::make_unsigned_t<C>;

template <BinaryKind K, typename C> HPS_HD inline auto binaryOp(C a, C b) {
  using B = BinaryKind;
  if constexpr (K == B::Add) {
    if constexpr (kIsFloat<C>)
      return a + b;
    else
      return C(Wide<C>(a) + Wide<C>(b));
  } else if constexpr (K == B::Sub) {
    if constexpr (kIsFloat<C>)
      return a - b;
    else
      return C(Wide<C>(a) - Wide<C>(b));
  } else if constexpr (K == B::Mul) {
    if constexpr (kIsFloat<C>)
      return a * b;
    else
      return C(Wide<C>(a) * Wide<C>(b));
  } else if constexpr (K == B::Div) {
    if constexpr (kIsFloat<C>) {
      return a / b;
    } else {
      // C truncation; x / 0 is 0 and MIN / -1 wraps instead of trapping.
      if (b == 0)
        return C(0);
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1))
          return C(Wide<C>(0) - Wide<C>(a));
      return C(a / b);
    }
  } else if constexpr (K == B::Mod || K == B::FMod) {
    if constexpr (kIsFloat<C>) {
      C r = std::fmod(a, b);
      if constexpr (K == B::Mod)
        if (r != C(0) && ((r < C(0)) != (b < C(0))))
          r += b;
      return r;
    } else {
      if (b == 0)
        return C(0);
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1))
          return C(0);
        C r = C(a % b);
        if constexpr (K == B::Mod)
          if (r != 0 && ((r < 0) != (b < 0)))
            r = C(r + b);
        return r;
      } else {
        return C(a % b);
      }
    }
  } else if constexpr (K == B::Pow) {
    if constexpr (kIsFloat<C>) {
      return C(std::pow(a, b));
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (b < 0) // 1 / a^|b| truncated
          return a == 1 ? C(1) : a == -1 ? C((b & 1) ? -1 : 1) : C(0);
      }
      Wide<C> result = 1, base = Wide<C>(a);
      for (Wide<C> e = Wide<C>(b); e; e >>= 1) {
        if (e & 1)
          result = Wide<C>(result * base);
        base = Wide<C>(base * base);
      }
      return C(result);
    }
  } else if constexpr (K == B::Max) {
    if constexpr (kIsFloat<C>)
      return (a > b || a != a) ? a : b; // NaN propagates
    else
      return a > b ? a : b;
  } else if constexpr (K == B::Min) {
    if constexpr (kIsFloat<C>)
      return (a < b || a != a) ? a : b;
    else
      return a < b ? a : b;
  } else if constexpr (K == B::PRelu) {
    if constexpr (std::is_unsigned_v<C>)
      return a;
    else if constexpr (kIsFloat<C>)
      return a >= C(0) ? a : b * a;
    else
      return a >= 0 ? a : C(Wide<C>(b) * Wide<C>(a));
  } else if constexpr (K == B::And) {
    return C((a != 0) & (b != 0));
  } else if constexpr (K == B::Or) {
    return C((a != 0) | (b != 0));
  } else if constexpr (K == B::Xor) {
    return C((a != 0) ^ (b != 0));
  } else if constexpr (K == B::BitAnd || K == B::BitOr || K == B::BitXor) {
    static_assert(std::is_integral_v<C>, "bitwise kinds take integers");
    if constexpr (K == B::BitAnd)
      return C(a & b);
    else if constexpr (K == B::BitOr)
      return C(a | b);
    else
      return C(a ^ b);
  } else if constexpr (K == B::Equal) {
    return uint8_t(a == b);
  } else if constexpr (K == B::Less) {
    return uint8_t(a < b);
  } else if constexpr (K == B::LessEqual) {
    return uint8_t(a <= b);
  } else if constexpr (K == B::Greater) {
    return uint8_t(a > b);
  } else {
    static_assert(K == B::GreaterEqual);
    return uint8_t(a >= b);
  }
}

/// A float or integer value converted to storage type S (not bool: see
/// toBool). Floats truncate toward zero into integers; narrow targets go
/// through int64 so that the result wraps like the common x86 behaviour
/// instead of being undefined.
template <typename S, typename C> HPS_HD inline S convertValue(C v) {
  if constexpr (kIsFloat<C> && std::is_integral_v<S> &&
                (sizeof(S) < 4 || std::is_same_v<S, uint32_t>))
    return S(int64_t(v));
  else
    return S(v);
}

/// convertValue of a float a clip has already brought within int32's range
/// (or NaN): through int32, the same result, but x86 converts packed floats
/// to int32 and not to int64 (before AVX-512), so the loop vectorises.
template <typename S, typename C> HPS_HD inline S convertClipped(C v) {
  if constexpr (kIsFloat<C> && std::is_integral_v<S> && sizeof(S) < 4)
    return S(int32_t(v));
  else
    return convertValue<S>(v);
}

/// Any value as a bool element (one byte, 0 or 1).
template <typename C> HPS_HD inline uint8_t toBool(C v) {
  return uint8_t(v != C(0));
}

} // namespace heterps::rt::scalar

#endif // HETERPS_RUNTIME_SCALAROPS_H
