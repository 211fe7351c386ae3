//===- Elementwise.cu - Unary, Binary, Where and Cast ---------------------===//
//
// Grid-stride kernels; broadcasting through StridedMap (operands that match
// the output collapse to one contiguous dim). Half types compute in float.
//
//===----------------------------------------------------------------------===//

#include "UnaryOps.cuh"

namespace heterps::rt::gpu {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

namespace {

template <typename T>
__global__ void floatUnaryKernel(UnaryOp op, const T *x, T *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) { y[i] = fromAcc<T>(applyFloatUnary(op, toAcc(x[i]))); }
}

template <typename T>
__global__ void intUnaryKernel(UnaryKind kind, T lo, T hi, const T *x, T *y,
                               int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    T v = x[i];
    switch (kind) {
    case UnaryKind::Relu:
      if constexpr (std::is_signed_v<T>)
        v = v < T(0) ? T(0) : v;
      break;
    case UnaryKind::Abs:
      if constexpr (std::is_signed_v<T>)
        v = v < T(0) ? T(-v) : v;
      break;
    case UnaryKind::Neg:
      v = T(T(0) - v); // wraps for unsigned types, as in C
      break;
    case UnaryKind::Sign:
      if constexpr (std::is_signed_v<T>)
        v = v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0));
      else
        v = v > T(0) ? T(1) : T(0);
      break;
    case UnaryKind::Clip:
      v = v < lo ? lo : (v > hi ? hi : v);
      break;
    default: // Identity
      break;
    }
    y[i] = v;
  }
}

__global__ void notKernel(const bool *x, bool *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) { y[i] = !x[i]; }
}

/// An integer Clip bound: the closest value of T inside [lo, hi] terms
/// (infinite and out-of-range bounds clamp to T's range).
template <typename T> T intBound(double bound, bool lower) {
  if (std::isnan(bound))
    return lower ? std::numeric_limits<T>::lowest()
                 : std::numeric_limits<T>::max();
  if (bound <= double(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (bound >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return T(lower ? std::ceil(bound) : std::floor(bound));
}

} // namespace

struct Unary::Impl {
  Context &ctx;
  DType type;
  UnaryOp op;
  int64_t n;
};

Unary::Unary(Context &ctx, DType type, UnaryKind kind, UnaryParams params,
             int64_t n)
    : impl(new Impl{ctx, type, makeUnaryOp(kind, params), n}) {
  dispatchAll(type, "Unary", [](auto) {});
  bool ok;
  if (type == DType::Bool)
    ok = kind == UnaryKind::Not || kind == UnaryKind::Identity;
  else if (isFloat(type))
    ok = kind != UnaryKind::Not;
  else
    ok = kind == UnaryKind::Identity || kind == UnaryKind::Relu ||
         kind == UnaryKind::Abs || kind == UnaryKind::Neg ||
         kind == UnaryKind::Sign || kind == UnaryKind::Clip;
  if (!ok)
    throw Error(std::string("Unary: ") + unaryKindName(kind) +
                " is not defined for " + dtypeName(type));
}

Unary::~Unary() = default;

void Unary::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  cudaStream_t stream = streamOf(s.ctx);
  if (s.op.kind == UnaryKind::Identity) {
    if (x != y)
      HPS_CUDA_CHECK(cudaMemcpyAsync(y, x, size_t(s.n) * dtypeSize(s.type),
                                     cudaMemcpyDeviceToDevice, stream));
    return;
  }
  dispatchAll(s.type, "Unary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *in = static_cast<const T *>(x);
    T *out = static_cast<T *>(y);
    if constexpr (std::is_same_v<T, bool>)
      notKernel<<<gridFor(s.n), kThreads, 0, stream>>>(in, out, s.n);
    else if constexpr (kIsFloat<T>)
      floatUnaryKernel<T>
          <<<gridFor(s.n), kThreads, 0, stream>>>(s.op, in, out, s.n);
    else
      intUnaryKernel<T><<<gridFor(s.n), kThreads, 0, stream>>>(
          s.op.kind, intBound<T>(s.op.lo, true), intBound<T>(s.op.hi, false),
          in, out, s.n);
    checkLaunch("Unary");
  });
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

namespace {

/// Integer power by squaring: exact, and defined for negative exponents
/// (1 / base^-e truncated).
template <typename A> __device__ A intPow(A base, A exponent) {
  if constexpr (std::is_signed_v<A>) {
    if (exponent < A(0)) {
      if (base == A(1))
        return A(1);
      if (base == A(-1))
        return (exponent % A(2)) ? A(-1) : A(1);
      return A(0);
    }
  }
  A result = A(1);
  while (exponent) {
    if (exponent & A(1))
      result = A(result * base);
    base = A(base * base);
    exponent = A(exponent >> 1);
  }
  return result;
}

/// x % -1 is 0, but MIN % -1 is undefined in C++ (it traps on x86).
template <typename A> __device__ bool intRemainderIsZero(A b) {
  if constexpr (std::is_signed_v<A>)
    return b == A(-1);
  else
    return false;
}

template <typename A> __device__ A arithmetic(BinaryKind kind, A a, A b) {
  switch (kind) {
  case BinaryKind::Add:
    return A(a + b);
  case BinaryKind::Sub:
    return A(a - b);
  case BinaryKind::Mul:
    return A(a * b);
  case BinaryKind::Div:
    if constexpr (std::is_floating_point_v<A>) {
      return a / b;
    } else {
      // C truncation; as on the CPU, x / 0 is 0 and MIN / -1 wraps instead
      // of being undefined.
      if (b == A(0))
        return A(0);
      if constexpr (std::is_signed_v<A>)
        if (b == A(-1))
          return A(-std::make_unsigned_t<A>(a));
      return A(a / b);
    }
  case BinaryKind::Pow:
    if constexpr (std::is_floating_point_v<A>)
      return dPow(a, b);
    else
      return intPow(a, b);
  case BinaryKind::Max:
    return (b > a || b != b) ? b : a;
  case BinaryKind::Min:
    return (b < a || b != b) ? b : a;
  case BinaryKind::Mod: {
    // Python: the result takes the divisor's sign.
    A r;
    if constexpr (std::is_floating_point_v<A>) {
      r = dFmod(a, b);
    } else {
      if (b == A(0) || intRemainderIsZero(b))
        return A(0);
      r = A(a % b);
    }
    if constexpr (std::is_signed_v<A>)
      if (r != A(0) && ((r < A(0)) != (b < A(0))))
        r = A(r + b);
    return r;
  }
  case BinaryKind::FMod:
    if constexpr (std::is_floating_point_v<A>)
      return dFmod(a, b);
    else
      return b == A(0) || intRemainderIsZero(b) ? A(0) : A(a % b);
  case BinaryKind::PRelu:
    if constexpr (std::is_signed_v<A>)
      return a < A(0) ? A(b * a) : a;
    else
      return a;
  case BinaryKind::BitAnd:
  case BinaryKind::BitOr:
  case BinaryKind::BitXor:
    // Integers only (checked when the kernel is built).
    if constexpr (std::is_integral_v<A>)
      return kind == BinaryKind::BitAnd  ? A(a & b)
             : kind == BinaryKind::BitOr ? A(a | b)
                                         : A(a ^ b);
    else
      return a;
  default:
    return a;
  }
}

template <typename A> __device__ bool comparison(BinaryKind kind, A a, A b) {
  switch (kind) {
  case BinaryKind::Equal:
    return a == b;
  case BinaryKind::Less:
    return a < b;
  case BinaryKind::LessEqual:
    return a <= b;
  case BinaryKind::Greater:
    return a > b;
  default:
    return a >= b;
  }
}

bool isComparison(BinaryKind kind) {
  return kind == BinaryKind::Equal || kind == BinaryKind::Less ||
         kind == BinaryKind::LessEqual || kind == BinaryKind::Greater ||
         kind == BinaryKind::GreaterEqual;
}

bool isLogical(BinaryKind kind) {
  return kind == BinaryKind::And || kind == BinaryKind::Or ||
         kind == BinaryKind::Xor;
}

bool isBitwise(BinaryKind kind) {
  return kind == BinaryKind::BitAnd || kind == BinaryKind::BitOr ||
         kind == BinaryKind::BitXor;
}

template <typename T>
__global__ void arithmeticKernel(BinaryKind kind, StridedMap<2> map, const T *a,
                                 const T *b, T *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t offset[2];
    map.offsets(i, offset);
    y[i] =
        fromAcc<T>(arithmetic(kind, toAcc(a[offset[0]]), toAcc(b[offset[1]])));
  }
}

template <typename T>
__global__ void comparisonKernel(BinaryKind kind, StridedMap<2> map, const T *a,
                                 const T *b, bool *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t offset[2];
    map.offsets(i, offset);
    y[i] = comparison(kind, toAcc(a[offset[0]]), toAcc(b[offset[1]]));
  }
}

__global__ void logicalKernel(BinaryKind kind, StridedMap<2> map, const bool *a,
                              const bool *b, bool *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t offset[2];
    map.offsets(i, offset);
    bool l = a[offset[0]], r = b[offset[1]];
    y[i] = kind == BinaryKind::And
               ? (l && r)
               : (kind == BinaryKind::Or ? (l || r) : (l != r));
  }
}

} // namespace

struct Binary::Impl {
  Context &ctx;
  BinaryKind kind;
  DType in;
  StridedMap<2> map;
  int64_t n;
};

Binary::Binary(Context &ctx, BinaryKind kind, DType in, const Shape &a,
               const Shape &b, const Shape &y)
    : impl(new Impl{ctx, kind, in, {}, numElements(y)}) {
  const char *kernel = "Binary";
  dispatchAll(in, kernel, [](auto) {});
  if (isLogical(kind) != (in == DType::Bool) && !isComparison(kind))
    throw Error(std::string(kernel) + ": " +
                (isLogical(kind) ? "And/Or/Xor take bool operands, not "
                                 : "arithmetic is not defined for ") +
                dtypeName(in));
  if (isBitwise(kind) && (isFloat(in) || in == DType::Bool))
    throw Error(std::string(kernel) + ": " + binaryKindName(kind) +
                " takes integer operands, not " + dtypeName(in));
  impl->map = makeMap<2>(
      kernel, y,
      {broadcastStrides(kernel, a, y), broadcastStrides(kernel, b, y)});
}

Binary::~Binary() = default;

void Binary::run(const void *a, const void *b, void *y) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  cudaStream_t stream = streamOf(s.ctx);
  unsigned grid = gridFor(s.n);
  dispatchAll(s.in, "Binary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *l = static_cast<const T *>(a), *r = static_cast<const T *>(b);
    if (isComparison(s.kind)) {
      comparisonKernel<T><<<grid, kThreads, 0, stream>>>(
          s.kind, s.map, l, r, static_cast<bool *>(y), s.n);
    } else if constexpr (std::is_same_v<T, bool>) {
      logicalKernel<<<grid, kThreads, 0, stream>>>(s.kind, s.map, l, r,
                                                   static_cast<bool *>(y), s.n);
    } else {
      arithmeticKernel<T><<<grid, kThreads, 0, stream>>>(
          s.kind, s.map, l, r, static_cast<T *>(y), s.n);
    }
    checkLaunch("Binary");
  });
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

namespace {

template <typename E>
__global__ void whereKernel(StridedMap<3> map, const bool *cond, const E *x,
                            const E *y, E *out, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t offset[3];
    map.offsets(i, offset);
    out[i] = cond[offset[0]] ? x[offset[1]] : y[offset[2]];
  }
}

} // namespace

struct Where::Impl {
  Context &ctx;
  DType type;
  StridedMap<3> map;
  int64_t n;
};

Where::Where(Context &ctx, DType type, const Shape &cond, const Shape &x,
             const Shape &y, const Shape &out)
    : impl(new Impl{ctx, type, {}, numElements(out)}) {
  const char *kernel = "Where";
  impl->map = makeMap<3>(kernel, out,
                         {broadcastStrides(kernel, cond, out),
                          broadcastStrides(kernel, x, out),
                          broadcastStrides(kernel, y, out)});
}

Where::~Where() = default;

void Where::run(const void *cond, const void *x, const void *y, void *out) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  // Selection moves bits: the element size is all that matters.
  dispatchBySize(s.type, [&](auto tag) {
    using E = typename decltype(tag)::type;
    whereKernel<E><<<gridFor(s.n), kThreads, 0, streamOf(s.ctx)>>>(
        s.map, static_cast<const bool *>(cond), static_cast<const E *>(x),
        static_cast<const E *>(y), static_cast<E *>(out), s.n);
    checkLaunch("Where");
  });
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

namespace {

/// ONNX Cast: -> bool is != 0, float -> integer truncates toward zero (C
/// conversion), half types go through float.
template <typename From, typename To> __device__ To convert(From value) {
  if constexpr (std::is_same_v<To, bool>)
    return toAcc(value) != Acc<From>(0);
  else if constexpr (kIsHalf<To>)
    return fromAcc<To>(float(toAcc(value)));
  else if constexpr (kIsFloat<From> && std::is_integral_v<To> &&
                     (sizeof(To) < 4 || std::is_same_v<To, uint32_t>))
    // Narrow targets go through int64 and wrap, as the CPU kernels do.
    return static_cast<To>(static_cast<int64_t>(toAcc(value)));
  else
    return static_cast<To>(toAcc(value));
}

template <typename From, typename To>
__global__ void castKernel(const From *x, To *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) { y[i] = convert<From, To>(x[i]); }
}

} // namespace

struct Cast::Impl {
  Context &ctx;
  DType from, to;
  int64_t n;
};

Cast::Cast(Context &ctx, DType from, DType to, int64_t n)
    : impl(new Impl{ctx, from, to, n}) {
  dispatchAll(from, "Cast", [](auto) {});
  dispatchAll(to, "Cast", [](auto) {});
}

Cast::~Cast() = default;

void Cast::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.n == 0)
    return;
  cudaStream_t stream = streamOf(s.ctx);
  if (s.from == s.to) {
    if (x != y)
      HPS_CUDA_CHECK(cudaMemcpyAsync(y, x, size_t(s.n) * dtypeSize(s.from),
                                     cudaMemcpyDeviceToDevice, stream));
    return;
  }
  dispatchAll(s.from, "Cast", [&](auto fromTag) {
    using From = typename decltype(fromTag)::type;
    dispatchAll(s.to, "Cast", [&](auto toTag) {
      using To = typename decltype(toTag)::type;
      castKernel<From, To><<<gridFor(s.n), kThreads, 0, stream>>>(
          static_cast<const From *>(x), static_cast<To *>(y), s.n);
      checkLaunch("Cast");
    });
  });
}

} // namespace heterps::rt::gpu
