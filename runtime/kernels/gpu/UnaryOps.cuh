//===- UnaryOps.cuh - Elementwise functions of one value ----------*- C++
//-*-===//
//
// Private to the GPU kernels: the UnaryKind functions, shared by Unary and by
// the activations fused after Gemm, MatMul and Conv.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_GPU_UNARYOPS_CUH
#define HETERPS_RUNTIME_KERNELS_GPU_UNARYOPS_CUH

#include "GpuCommon.cuh"

namespace heterps::rt::gpu {

/// UnaryParams in a form kernels take by value.
struct UnaryOp {
  UnaryKind kind = UnaryKind::Identity;
  float alpha = 0.0f;
  float beta = 0.0f;
  double lo = 0.0;
  double hi = 0.0;
};

inline UnaryOp makeUnaryOp(UnaryKind kind, const UnaryParams &params) {
  return {kind, params.alpha, params.beta, params.lo, params.hi};
}

/// f(x) for a float or double accumulator. Every kind but Not.
template <typename A>
__device__ inline A applyFloatUnary(const UnaryOp &op, A x) {
  const A zero = A(0), one = A(1);
  switch (op.kind) {
  case UnaryKind::Identity:
  case UnaryKind::Not: // rejected when the kernel is built
    return x;
  case UnaryKind::Relu:
    return x < zero ? zero : x; // keeps NaN
  case UnaryKind::Sigmoid:
    return one / (one + dExp(-x));
  case UnaryKind::Tanh:
    return dTanh(x);
  case UnaryKind::GeluErf:
    return A(0.5) * x * (one + dErf(x * A(0.70710678118654752440)));
  case UnaryKind::GeluTanh: {
    A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
    return A(0.5) * x * (one + dTanh(inner));
  }
  case UnaryKind::Erf:
    return dErf(x);
  case UnaryKind::Exp:
    return dExp(x);
  case UnaryKind::Log:
    return dLog(x);
  case UnaryKind::Sqrt:
    return dSqrt(x);
  case UnaryKind::Abs:
    return dAbs(x);
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Reciprocal:
    return one / x;
  case UnaryKind::Floor:
    return dFloor(x);
  case UnaryKind::Ceil:
    return dCeil(x);
  case UnaryKind::Round:
    return dRint(x); // the default rounding mode is half to even
  case UnaryKind::Sign:
    return x > zero ? one : (x < zero ? -one : x); // keeps 0 and NaN
  case UnaryKind::Sin:
    return dSin(x);
  case UnaryKind::Cos:
    return dCos(x);
  case UnaryKind::Asin:
    return dAsin(x);
  case UnaryKind::Acos:
    return dAcos(x);
  case UnaryKind::Atan:
    return dAtan(x);
  case UnaryKind::Softplus:
    // log(1 + e^x) without overflow for large x.
    return (x > zero ? x : zero) + dLog1p(dExp(-dAbs(x)));
  case UnaryKind::Softsign:
    return x / (one + dAbs(x));
  case UnaryKind::HardSwish: {
    A gate = x / A(6) + A(0.5);
    gate = gate < zero ? zero : (gate > one ? one : gate);
    return x * gate;
  }
  case UnaryKind::LeakyRelu:
    return x < zero ? A(op.alpha) * x : x;
  case UnaryKind::Elu:
    return x < zero ? A(op.alpha) * dExpm1(x) : x;
  case UnaryKind::Celu:
    return x >= zero ? x : A(op.alpha) * dExpm1(x / A(op.alpha));
  case UnaryKind::Selu:
    return A(op.beta) * (x > zero ? x : A(op.alpha) * dExpm1(x));
  case UnaryKind::HardSigmoid: {
    A v = A(op.alpha) * x + A(op.beta);
    return v < zero ? zero : (v > one ? one : v);
  }
  case UnaryKind::ThresholdedRelu:
    return x > A(op.alpha) ? x : zero;
  case UnaryKind::Clip: {
    A lo = A(op.lo), hi = A(op.hi);
    return x < lo ? lo : (x > hi ? hi : x);
  }
  }
  return x;
}

/// Throws naming the kernel when `kind` has no float implementation.
inline void checkFloatUnary(const char *kernel, UnaryKind kind) {
  if (kind == UnaryKind::Not)
    throw Error(std::string(kernel) +
                ": Not applies to bool tensors only, not to floats");
}

} // namespace heterps::rt::gpu

#endif // HETERPS_RUNTIME_KERNELS_GPU_UNARYOPS_CUH
