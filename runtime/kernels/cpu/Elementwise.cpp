//===- Elementwise.cpp - Unary, Binary, Where and Cast on the CPU ---------===//
//
// Every kernel picks one template instance (element type x function) in its
// constructor and keeps a function pointer, so run() is a plain loop. Loops
// operate on the storage type directly for F32/F64/integers (vectorisable);
// F16/BF16 are computed in float per element. F32 Unary kinds that oneDNN
// computes exactly as ONNX defines them run as oneDNN eltwise primitives
// (JIT-vectorised transcendentals for the best ISA of the machine).
//
//===----------------------------------------------------------------------===//

#include "Broadcast.h"
#include "CpuContext.h"
#include "DTypeDispatch.h"
#include "DnnlUtil.h"
#include "heterps/Runtime/ScalarOps.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace heterps::rt::cpu {
namespace {

using scalar::binaryOp;
using scalar::kIsFloat;
using scalar::UnaryArgs;
using scalar::unaryOp;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// A bound in double -> C, saturating for integers (open bounds are
/// +-infinity).
template <typename C> C boundTo(double value) {
  if constexpr (kIsFloat<C>) {
    return C(value);
  } else {
    if (std::isnan(value))
      return C(0);
    if (value <= double(std::numeric_limits<C>::lowest()))
      return std::numeric_limits<C>::lowest();
    if (value >= double(std::numeric_limits<C>::max()))
      return std::numeric_limits<C>::max();
    return C(value);
  }
}

using UnaryFn = void (*)(const void *x, void *y, int64_t begin, int64_t end,
                         const void *args);

template <DType D, UnaryKind K>
void unarySpan(const void *xv, void *yv, int64_t begin, int64_t end,
               const void *argsv) {
  using S = typename DTypeTraits<D>::Storage;
  using C = typename DTypeTraits<D>::Compute;
  const S *x = static_cast<const S *>(xv);
  S *y = static_cast<S *>(yv);
  const UnaryArgs<C> args = *static_cast<const UnaryArgs<C> *>(argsv);
  for (int64_t i = begin; i < end; ++i)
    y[i] = store<S>(unaryOp<K, C>(load(x[i]), args));
}

/// Kinds per type class, as KernelAPI.inc lists them.
bool unarySupported(DType type, UnaryKind kind) {
  using U = UnaryKind;
  if (type == DType::Bool)
    return kind == U::Not || kind == U::Identity;
  if (isFloat(type))
    return kind != U::Not;
  return kind == U::Identity || kind == U::Relu || kind == U::Abs ||
         kind == U::Neg || kind == U::Sign || kind == U::Clip;
}

template <DType D> UnaryFn unaryFnFor(UnaryKind kind) {
  using U = UnaryKind;
  switch (kind) {
#define HPS_UNARY(K)                                                           \
  case U::K:                                                                   \
    return &unarySpan<D, U::K>;
    HPS_UNARY(Identity)
    HPS_UNARY(Relu)
    HPS_UNARY(Abs)
    HPS_UNARY(Neg)
    HPS_UNARY(Sign)
    HPS_UNARY(Clip)
  default:
    break;
  }
  if constexpr (D == DType::Bool) {
    if (kind == U::Not)
      return &unarySpan<D, U::Not>;
  } else if constexpr (kIsFloat<typename DTypeTraits<D>::Compute>) {
    switch (kind) {
      HPS_UNARY(Sigmoid)
      HPS_UNARY(Tanh)
      HPS_UNARY(GeluErf)
      HPS_UNARY(GeluTanh)
      HPS_UNARY(Erf)
      HPS_UNARY(Exp)
      HPS_UNARY(Log)
      HPS_UNARY(Sqrt)
      HPS_UNARY(Reciprocal)
      HPS_UNARY(Floor)
      HPS_UNARY(Ceil)
      HPS_UNARY(Round)
      HPS_UNARY(Sin)
      HPS_UNARY(Cos)
      HPS_UNARY(Asin)
      HPS_UNARY(Acos)
      HPS_UNARY(Atan)
      HPS_UNARY(Softplus)
      HPS_UNARY(Softsign)
      HPS_UNARY(HardSwish)
      HPS_UNARY(LeakyRelu)
      HPS_UNARY(Elu)
      HPS_UNARY(Celu)
      HPS_UNARY(Selu)
      HPS_UNARY(HardSigmoid)
      HPS_UNARY(ThresholdedRelu)
    default:
      break;
    }
  }
#undef HPS_UNARY
  return nullptr;
}

/// The oneDNN algorithm computing `kind` on F32 exactly as ONNX defines it,
/// with its alpha/beta; false when there is none.
bool dnnlUnary(UnaryKind kind, const UnaryParams &params,
               dnnl::algorithm &algorithm, float &alpha, float &beta) {
  using A = dnnl::algorithm;
  alpha = beta = 0;
  switch (kind) {
  case UnaryKind::Relu:
    algorithm = A::eltwise_relu;
    return true;
  case UnaryKind::LeakyRelu:
    algorithm = A::eltwise_relu;
    alpha = params.alpha;
    return true;
  case UnaryKind::Sigmoid:
    algorithm = A::eltwise_logistic;
    return true;
  case UnaryKind::Tanh:
    algorithm = A::eltwise_tanh;
    return true;
  case UnaryKind::GeluErf:
    algorithm = A::eltwise_gelu_erf;
    return true;
  case UnaryKind::GeluTanh:
    algorithm = A::eltwise_gelu_tanh;
    return true;
  case UnaryKind::Exp:
    algorithm = A::eltwise_exp;
    return true;
  case UnaryKind::Sqrt:
    algorithm = A::eltwise_sqrt;
    return true;
  case UnaryKind::Abs:
    algorithm = A::eltwise_abs;
    return true;
  case UnaryKind::Elu:
    algorithm = A::eltwise_elu;
    alpha = params.alpha;
    return true;
  case UnaryKind::Softplus: // 2.6: log(1 + e^x), alpha ignored
    algorithm = A::eltwise_soft_relu;
    return true;
  case UnaryKind::HardSwish: // x * relu6(x + 3) / 6
    algorithm = A::eltwise_hardswish;
    return true;
  case UnaryKind::Round: // vroundps / nearbyint: half to even
    algorithm = A::eltwise_round;
    return true;
  case UnaryKind::Neg:
    algorithm = A::eltwise_linear;
    alpha = -1;
    return true;
  default:
    // Not Log: oneDNN 2.6's JIT log is off by ~3.4e-6 absolute near 1.
    return false;
  }
}

/// oneDNN's fixed overhead outweighs its vector code below this size.
constexpr int64_t kDnnlMinElements = 1024;

/// FLOP-equivalents per element of `kind` (see worthThreads).
double unaryElementWork(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Sigmoid:
  case UnaryKind::Tanh:
  case UnaryKind::GeluErf:
  case UnaryKind::GeluTanh:
  case UnaryKind::Erf:
  case UnaryKind::Exp:
  case UnaryKind::Log:
  case UnaryKind::Sin:
  case UnaryKind::Cos:
  case UnaryKind::Asin:
  case UnaryKind::Acos:
  case UnaryKind::Atan:
  case UnaryKind::Softplus:
  case UnaryKind::Elu:
  case UnaryKind::Celu:
  case UnaryKind::Selu:
    return kTranscendentalElementWork;
  default:
    return kCheapElementWork;
  }
}

} // namespace

struct Unary::Impl {
  Context::Impl &ctx;
  int64_t n;
  bool identity = false;
  size_t elementSize;
  UnaryFn fn = nullptr;
  // Parameters in the compute type (float, double or the integer type).
  alignas(8) unsigned char args[4 * sizeof(double)] = {};
  // F32 kinds oneDNN computes.
  bool useDnnl = false;
  /// Elements from which the loop or the primitive uses threads.
  int64_t parallelElements = kParallelElements;
  dnnl::eltwise_forward primitive;
  dnnl::memory src, dst, scratchpad;
  dnnl_util::Args dnnlArgs;

  Impl(Context &context, DType type, UnaryKind kind, const UnaryParams &params,
       int64_t count)
      : ctx(context.impl()), n(count), elementSize(dtypeSize(type)) {
    if (n < 0)
      throw Error("Unary: negative element count " + std::to_string(n));
    if (!unarySupported(type, kind))
      throw Error(std::string("Unary: kind ") + unaryKindName(kind) +
                  " is not supported for element type " + dtypeName(type));
    identity = kind == UnaryKind::Identity;
    dispatchDType(type, [&](auto d) {
      constexpr DType D = decltype(d)::value;
      using C = typename DTypeTraits<D>::Compute;
      UnaryArgs<C> a{C(params.alpha), C(params.beta), boundTo<C>(params.lo),
                     boundTo<C>(params.hi)};
      static_assert(sizeof(a) <= sizeof(args));
      std::memcpy(args, &a, sizeof(a));
      fn = unaryFnFor<D>(kind);
    });
    if (!fn)
      throw Error(std::string("Unary: kind ") + unaryKindName(kind) +
                  " is not supported for element type " + dtypeName(type));
    parallelElements = int64_t(kMinParallelWork / unaryElementWork(kind));
    dnnl::algorithm algorithm;
    float alpha, beta;
    if (type == DType::F32 && n >= kDnnlMinElements &&
        dnnlUnary(kind, params, algorithm, alpha, beta)) {
      SerialScope serial(n < parallelElements);
      withDnnl("Unary", [&]() {
        dnnl::memory::desc md({n}, dnnl::memory::data_type::f32,
                              dnnl::memory::format_tag::a);
        dnnl::eltwise_forward::primitive_desc pd(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                        algorithm, md, alpha, beta),
            dnnl_util::userScratchpad(), ctx.engine);
        primitive = dnnl::eltwise_forward(pd);
        src = dnnl::memory(md, ctx.engine, DNNL_MEMORY_NONE);
        dst = dnnl::memory(md, ctx.engine, DNNL_MEMORY_NONE);
        dnnlArgs = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
        scratchpad = dnnl_util::scratchpadFor(pd, ctx.engine, dnnlArgs);
      });
      useDnnl = true;
    }
  }

  void run(const void *x, void *y) {
    if (n == 0)
      return;
    if (identity) {
      if (x != y)
        parallelBlocks(
            n * int64_t(elementSize),
            [&](int64_t b, int64_t e) {
              std::memcpy(static_cast<char *>(y) + b,
                          static_cast<const char *>(x) + b, size_t(e - b));
            },
            1 << 20);
      return;
    }
    if (useDnnl) {
      SerialScope serial(n < parallelElements);
      withDnnl("Unary", [&]() {
        src.set_data_handle(const_cast<void *>(x));
        dst.set_data_handle(y);
        primitive.execute(ctx.stream, dnnlArgs);
        ctx.stream.wait();
      });
      return;
    }
    UnaryFn f = fn;
    const void *a = args;
    parallelBlocks(
        n, [&](int64_t b, int64_t e) { f(x, y, b, e, a); }, parallelElements);
  }
};

Unary::Unary(Context &ctx, DType type, UnaryKind kind, UnaryParams params,
             int64_t n)
    : impl(std::make_unique<Impl>(ctx, type, kind, params, n)) {}
Unary::~Unary() = default;
void Unary::run(const void *x, void *y) { impl->run(x, y); }

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

namespace {

bool isLogical(BinaryKind kind) {
  return kind == BinaryKind::And || kind == BinaryKind::Or ||
         kind == BinaryKind::Xor;
}

bool isBitwise(BinaryKind kind) {
  return kind == BinaryKind::BitAnd || kind == BinaryKind::BitOr ||
         kind == BinaryKind::BitXor;
}

using BinaryFn = void (*)(const StridedPlan &plan, const void *a, const void *b,
                          void *y);

/// One span: the four stride combinations are separate loops so each
/// vectorises (same shape, scalar rhs, scalar lhs, both broadcast).
template <BinaryKind K, typename S, typename Y>
void binarySpan(const S *a, int64_t sa, const S *b, int64_t sb, Y *y,
                int64_t n) {
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i)
      y[i] = store<Y>(binaryOp<K>(load(a[i]), load(b[i])));
  } else if (sa) {
    auto bv = load(b[0]);
    using C = decltype(bv);
    if constexpr (K == BinaryKind::Pow && kIsFloat<C>) {
      // Small integral exponents (x ** 2 of a decomposed norm) need no pow.
      if (bv == C(2)) {
        for (int64_t i = 0; i < n; ++i) {
          C v = load(a[i]);
          y[i] = store<Y>(v * v);
        }
        return;
      }
      if (bv == C(1)) {
        for (int64_t i = 0; i < n; ++i)
          y[i] = store<Y>(load(a[i]));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      y[i] = store<Y>(binaryOp<K>(load(a[i]), bv));
  } else if (sb) {
    auto av = load(a[0]);
    for (int64_t i = 0; i < n; ++i)
      y[i] = store<Y>(binaryOp<K>(av, load(b[i])));
  } else {
    Y v = store<Y>(binaryOp<K>(load(a[0]), load(b[0])));
    std::fill(y, y + n, v);
  }
}

template <DType D, BinaryKind K>
void binaryRun(const StridedPlan &plan, const void *av, const void *bv,
               void *yv) {
  using S = typename DTypeTraits<D>::Storage;
  using Y = std::conditional_t<
      K >= BinaryKind::Equal && K <= BinaryKind::GreaterEqual, uint8_t, S>;
  const S *a = static_cast<const S *>(av);
  const S *b = static_cast<const S *>(bv);
  Y *y = static_cast<Y *>(yv);
  const int64_t sa = plan.innerStride[0], sb = plan.innerStride[1];
  forEachSpan(plan, [&](int64_t yOffset, const int64_t *offsets, int64_t n) {
    binarySpan<K>(a + offsets[0], sa, b + offsets[1], sb, y + yOffset, n);
  });
}

template <DType D> BinaryFn binaryFnFor(BinaryKind kind) {
  using B = BinaryKind;
  switch (kind) {
#define HPS_BINARY(K)                                                          \
  case B::K:                                                                   \
    return &binaryRun<D, B::K>;
    HPS_BINARY(Equal)
    HPS_BINARY(Less)
    HPS_BINARY(LessEqual)
    HPS_BINARY(Greater)
    HPS_BINARY(GreaterEqual)
  default:
    break;
  }
  if constexpr (D == DType::Bool) {
    switch (kind) {
      HPS_BINARY(And)
      HPS_BINARY(Or)
      HPS_BINARY(Xor)
    default:
      break;
    }
  } else {
    if constexpr (!kIsFloat<typename DTypeTraits<D>::Compute>) {
      switch (kind) {
        HPS_BINARY(BitAnd)
        HPS_BINARY(BitOr)
        HPS_BINARY(BitXor)
      default:
        break;
      }
    }
    switch (kind) {
      HPS_BINARY(Add)
      HPS_BINARY(Sub)
      HPS_BINARY(Mul)
      HPS_BINARY(Div)
      HPS_BINARY(Pow)
      HPS_BINARY(Max)
      HPS_BINARY(Min)
      HPS_BINARY(Mod)
      HPS_BINARY(FMod)
      HPS_BINARY(PRelu)
    default:
      break;
    }
  }
#undef HPS_BINARY
  return nullptr;
}

} // namespace

struct Binary::Impl {
  StridedPlan plan;
  BinaryFn fn = nullptr;

  Impl(BinaryKind kind, DType in, const Shape &a, const Shape &b,
       const Shape &y) {
    plan = makeStridedPlan(y, {broadcastStrides("Binary", "lhs", a, y),
                               broadcastStrides("Binary", "rhs", b, y)});
    if (kind == BinaryKind::Pow)
      plan.parallelThreshold =
          int64_t(kMinParallelWork / kTranscendentalElementWork);
    fn = dispatchDType(
        in, [&](auto d) { return binaryFnFor<decltype(d)::value>(kind); });
    if (!fn)
      throw Error(std::string("Binary: kind ") + binaryKindName(kind) +
                  " is not supported for element type " + dtypeName(in) +
                  (isLogical(kind)   ? " (logical kinds take bool)"
                   : isBitwise(kind) ? " (bitwise kinds take integers)"
                                     : ""));
  }
};

Binary::Binary(Context &, BinaryKind kind, DType in, const Shape &a,
               const Shape &b, const Shape &y)
    : impl(std::make_unique<Impl>(kind, in, a, b, y)) {}
Binary::~Binary() = default;
void Binary::run(const void *a, const void *b, void *y) {
  impl->fn(impl->plan, a, b, y);
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

namespace {

using WhereFn = void (*)(const StridedPlan &plan, const void *cond,
                         const void *x, const void *y, void *out);

/// Selects bits: only the element size matters.
template <size_t Bytes>
void whereRun(const StridedPlan &plan, const void *condv, const void *xv,
              const void *yv, void *outv) {
  using T = typename BitsOf<Bytes>::type;
  const uint8_t *cond = static_cast<const uint8_t *>(condv);
  const T *x = static_cast<const T *>(xv);
  const T *y = static_cast<const T *>(yv);
  T *out = static_cast<T *>(outv);
  const int64_t sc = plan.innerStride[0], sx = plan.innerStride[1],
                sy = plan.innerStride[2];
  forEachSpan(plan, [&](int64_t o, const int64_t *offsets, int64_t n) {
    const uint8_t *c = cond + offsets[0];
    const T *xs = x + offsets[1];
    const T *ys = y + offsets[2];
    T *dst = out + o;
    if (sc && sx && sy) {
      for (int64_t i = 0; i < n; ++i)
        dst[i] = c[i] ? xs[i] : ys[i];
    } else if (!sc) {
      // One condition for the whole span: copy or fill from one side.
      const T *src = c[0] ? xs : ys;
      if (c[0] ? sx : sy)
        std::memcpy(dst, src, size_t(n) * Bytes);
      else
        std::fill(dst, dst + n, src[0]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        dst[i] = c[i] ? xs[i * sx] : ys[i * sy];
    }
  });
}

} // namespace

struct Where::Impl {
  StridedPlan plan;
  WhereFn fn;

  Impl(DType type, const Shape &cond, const Shape &x, const Shape &y,
       const Shape &out) {
    plan = makeStridedPlan(out, {broadcastStrides("Where", "cond", cond, out),
                                 broadcastStrides("Where", "x", x, out),
                                 broadcastStrides("Where", "y", y, out)});
    fn = dispatchSize(dtypeSize(type), [](auto bytes) {
      return WhereFn(&whereRun<decltype(bytes)::value>);
    });
  }
};

Where::Where(Context &, DType type, const Shape &cond, const Shape &x,
             const Shape &y, const Shape &out)
    : impl(std::make_unique<Impl>(type, cond, x, y, out)) {}
Where::~Where() = default;
void Where::run(const void *cond, const void *x, const void *y, void *out) {
  impl->fn(impl->plan, cond, x, y, out);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

namespace {

using CastFn = void (*)(const void *x, void *y, int64_t begin, int64_t end);

/// One element of From's compute type to To's storage.
template <DType To, typename C> inline auto convert(C v) {
  using S = typename DTypeTraits<To>::Storage;
  if constexpr (To == DType::Bool)
    return scalar::toBool(v);
  else if constexpr (kIsFloat<C> && std::is_integral_v<S>)
    return scalar::convertValue<S>(v);
  else
    return store<S>(v);
}

template <DType From, DType To>
void castSpan(const void *xv, void *yv, int64_t begin, int64_t end) {
  using SF = typename DTypeTraits<From>::Storage;
  using ST = typename DTypeTraits<To>::Storage;
  const SF *x = static_cast<const SF *>(xv);
  ST *y = static_cast<ST *>(yv);
  for (int64_t i = begin; i < end; ++i)
    y[i] = convert<To>(load(x[i]));
}

void copySpan(const void *, void *, int64_t, int64_t) {}

} // namespace

struct Cast::Impl {
  int64_t n;
  size_t fromSize;
  bool same;
  CastFn fn;

  Impl(DType from, DType to, int64_t count)
      : n(count), fromSize(dtypeSize(from)), same(from == to) {
    if (n < 0)
      throw Error("Cast: negative element count " + std::to_string(n));
    fn = dispatchDType(from, [&](auto f) {
      return dispatchDType(to, [&](auto t) {
        return CastFn(&castSpan<decltype(f)::value, decltype(t)::value>);
      });
    });
    if (same)
      fn = &copySpan;
  }
};

Cast::Cast(Context &, DType from, DType to, int64_t n)
    : impl(std::make_unique<Impl>(from, to, n)) {}
Cast::~Cast() = default;
void Cast::run(const void *x, void *y) {
  Impl &p = *impl;
  if (p.same) {
    if (x != y)
      parallelBlocks(
          p.n * int64_t(p.fromSize),
          [&](int64_t b, int64_t e) {
            std::memcpy(static_cast<char *>(y) + b,
                        static_cast<const char *>(x) + b, size_t(e - b));
          },
          1 << 20);
    return;
  }
  CastFn f = p.fn;
  parallelBlocks(p.n, [&](int64_t b, int64_t e) { f(x, y, b, e); });
}

} // namespace heterps::rt::cpu
