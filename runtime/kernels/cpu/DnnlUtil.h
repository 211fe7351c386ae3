//===- DnnlUtil.h - Helpers shared by the oneDNN-based kernels --*- C++ -*-===//
//
// Private to the CPU kernels: plain memory descriptors, kernel-owned
// scratchpads, the fused activation (a oneDNN post-op where one exists, a
// loop otherwise) and weights repacked once for constant operands.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_DNNLUTIL_H
#define HETERPS_RUNTIME_KERNELS_CPU_DNNLUTIL_H

#include "CpuContext.h"

#include <cmath>
#include <string>
#include <unordered_map>

namespace heterps::rt::cpu::dnnl_util {

using Dims = dnnl::memory::dims;
using Args = std::unordered_map<int, dnnl::memory>;

/// Dense row-major descriptor of any rank >= 1 (oneDNN has no rank 0).
inline dnnl::memory::desc
plainDesc(const Dims &dims,
          dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  Dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(dims[i], 1);
  }
  return dnnl::memory::desc(dims, type, strides);
}

/// A descriptor whose layout the primitive picks.
inline dnnl::memory::desc
anyDesc(const Dims &dims,
        dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  return dnnl::memory::desc(dims, type, dnnl::memory::format_tag::any);
}

/// A memory object without data: run() points it at the caller's buffer.
inline dnnl::memory placeholder(const dnnl::memory::desc &desc,
                                const dnnl::engine &engine) {
  return dnnl::memory(desc, engine, DNNL_MEMORY_NONE);
}

inline void bind(const dnnl::memory &memory, const void *pointer) {
  // oneDNN takes a non-const handle even for inputs it only reads.
  memory.set_data_handle(const_cast<void *>(pointer));
}

/// `attr` with a user-managed scratchpad. oneDNN's library-managed one is
/// per thread: a primitive built on one thread and executed on another would
/// find none there. Kernels therefore own their scratchpad (those of a stage
/// run one after another, so one per kernel is enough).
inline dnnl::primitive_attr userScratchpad(dnnl::primitive_attr attr = {}) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// The scratchpad `pd` asks for (none when it needs no memory), also added
/// to `args` as DNNL_ARG_SCRATCHPAD.
inline dnnl::memory scratchpadFor(const dnnl::primitive_desc_base &pd,
                                  const dnnl::engine &engine, Args &args) {
  dnnl::memory::desc desc = pd.scratchpad_desc();
  if (desc.get_size() == 0)
    return {};
  dnnl::memory memory(desc, engine);
  args[DNNL_ARG_SCRATCHPAD] = memory;
  return memory;
}

/// Only f32 is implemented on the CPU; other float types are rejected when
/// the kernel is built rather than computed wrongly.
inline void requireF32(const char *kernel, DType type) {
  if (type != DType::F32)
    throw Error(std::string(kernel) + ": element type " + dtypeName(type) +
                " is not supported");
}

inline std::string dimsString(const Dims &dims) {
  return shapeString(Shape(dims.begin(), dims.end()));
}

/// The channel block of Layout::Native: the vector width in floats of the
/// jit convolutions oneDNN runs on this CPU.
inline int64_t nativeChannelBlock() {
  static const int64_t block = [] {
    switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return 16;
    default:
      return 8;
    }
  }();
  return block;
}

/// An NC[D]HW tensor in `layout` (Native ones are f32); `kernel` names the
/// caller in errors.
inline dnnl::memory::desc
layoutDesc(const char *kernel, const Dims &dims, Layout layout,
           dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  if (layout == Layout::Plain)
    return plainDesc(dims, type);
  using tag = dnnl::memory::format_tag;
  bool activation = dims.size() >= 3 && dims.size() <= 5;
  if (layout == Layout::ChannelsLast) {
    if (!activation)
      throw Error(std::string(kernel) +
                  ": the channels-last layout needs an NC[D]HW tensor, not " +
                  dimsString(dims));
    static const tag tags[3] = {tag::nwc, tag::nhwc, tag::ndhwc};
    return dnnl::memory::desc(dims, type, tags[dims.size() - 3]);
  }
  if (!activation || dims[1] % kNativeChannelMultiple != 0)
    throw Error(std::string(kernel) + ": the native layout needs an NC[D]HW " +
                "tensor with a multiple of " +
                std::to_string(kNativeChannelMultiple) + " channels, not " +
                dimsString(dims));
  if (type != dnnl::memory::data_type::f32)
    throw Error(std::string(kernel) + ": the native layout holds f32 only");
  bool wide = nativeChannelBlock() == 16;
  static const tag tags[3][2] = {{tag::nCw8c, tag::nCw16c},
                                 {tag::nChw8c, tag::nChw16c},
                                 {tag::nCdhw8c, tag::nCdhw16c}};
  return dnnl::memory::desc(dims, type, tags[dims.size() - 3][wide]);
}

/// Appends `act` as oneDNN eltwise post-ops; false when oneDNN has no exact
/// equivalent and the caller must run applyActivation after the primitive.
inline bool appendActivation(dnnl::post_ops &ops, const Activation &act) {
  using dnnl::algorithm;
  const UnaryParams &p = act.params;
  switch (act.kind) {
  case UnaryKind::Identity:
    return true;
  case UnaryKind::Relu:
    ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
    return true;
  case UnaryKind::LeakyRelu:
    ops.append_eltwise(1.f, algorithm::eltwise_relu, p.alpha, 0.f);
    return true;
  case UnaryKind::Sigmoid:
    ops.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
    return true;
  case UnaryKind::Tanh:
    ops.append_eltwise(1.f, algorithm::eltwise_tanh, 0.f, 0.f);
    return true;
  case UnaryKind::GeluErf:
    ops.append_eltwise(1.f, algorithm::eltwise_gelu_erf, 0.f, 0.f);
    return true;
  case UnaryKind::GeluTanh:
    ops.append_eltwise(1.f, algorithm::eltwise_gelu_tanh, 0.f, 0.f);
    return true;
  case UnaryKind::Elu:
    ops.append_eltwise(1.f, algorithm::eltwise_elu, p.alpha, 0.f);
    return true;
  case UnaryKind::Selu:
    // gamma * elu_alpha(x): the post-op's scale is gamma.
    ops.append_eltwise(p.beta, algorithm::eltwise_elu, p.alpha, 0.f);
    return true;
  case UnaryKind::Exp:
    ops.append_eltwise(1.f, algorithm::eltwise_exp, 0.f, 0.f);
    return true;
  case UnaryKind::Log:
    ops.append_eltwise(1.f, algorithm::eltwise_log, 0.f, 0.f);
    return true;
  case UnaryKind::Sqrt:
    ops.append_eltwise(1.f, algorithm::eltwise_sqrt, 0.f, 0.f);
    return true;
  case UnaryKind::Abs:
    ops.append_eltwise(1.f, algorithm::eltwise_abs, 0.f, 0.f);
    return true;
  case UnaryKind::Neg:
    ops.append_eltwise(1.f, algorithm::eltwise_linear, -1.f, 0.f);
    return true;
  case UnaryKind::Softplus:
    // oneDNN 2.6's soft_relu is exactly log(1 + exp(x)).
    ops.append_eltwise(1.f, algorithm::eltwise_soft_relu, 0.f, 0.f);
    return true;
  case UnaryKind::HardSwish:
    // x * relu6(x + 3) / 6, ONNX's alpha = 1/6, beta = 1/2.
    ops.append_eltwise(1.f, algorithm::eltwise_hardswish, 0.f, 0.f);
    return true;
  case UnaryKind::HardSigmoid:
    ops.append_eltwise(1.f, algorithm::eltwise_linear, p.alpha, p.beta);
    ops.append_eltwise(1.f, algorithm::eltwise_clip, 0.f, 1.f);
    return true;
  case UnaryKind::Clip:
    ops.append_eltwise(1.f, algorithm::eltwise_clip, static_cast<float>(p.lo),
                       static_cast<float>(p.hi));
    return true;
  default:
    return false;
  }
}

/// The activation of one value, for those appendActivation cannot fuse (and
/// as the reference everything else must agree with).
inline float activate(const Activation &act, float x) {
  const UnaryParams &p = act.params;
  switch (act.kind) {
  case UnaryKind::Identity:
    return x;
  case UnaryKind::Relu:
    return x > 0.f ? x : 0.f;
  case UnaryKind::Sigmoid:
    return 1.f / (1.f + std::exp(-x));
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::GeluErf:
    return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
  case UnaryKind::GeluTanh:
    return 0.5f * x *
           (1.f +
            std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  case UnaryKind::Erf:
    return std::erf(x);
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Log:
    return std::log(x);
  case UnaryKind::Sqrt:
    return std::sqrt(x);
  case UnaryKind::Abs:
    return std::fabs(x);
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Reciprocal:
    return 1.f / x;
  case UnaryKind::Floor:
    return std::floor(x);
  case UnaryKind::Ceil:
    return std::ceil(x);
  case UnaryKind::Round:
    return std::nearbyint(x); // default rounding mode: half to even
  case UnaryKind::Sign:
    return static_cast<float>((x > 0.f) - (x < 0.f));
  case UnaryKind::Sin:
    return std::sin(x);
  case UnaryKind::Cos:
    return std::cos(x);
  case UnaryKind::Asin:
    return std::asin(x);
  case UnaryKind::Acos:
    return std::acos(x);
  case UnaryKind::Atan:
    return std::atan(x);
  case UnaryKind::Softplus:
    return x > 20.f ? x : std::log1p(std::exp(x));
  case UnaryKind::Softsign:
    return x / (1.f + std::fabs(x));
  case UnaryKind::HardSwish:
    return x * std::fmax(0.f, std::fmin(1.f, x / 6.f + 0.5f));
  case UnaryKind::LeakyRelu:
    return x >= 0.f ? x : p.alpha * x;
  case UnaryKind::Elu:
    return x > 0.f ? x : p.alpha * std::expm1(x);
  case UnaryKind::Celu:
    return std::fmax(0.f, x) +
           std::fmin(0.f, p.alpha * std::expm1(x / p.alpha));
  case UnaryKind::Selu:
    return p.beta * (x > 0.f ? x : p.alpha * std::expm1(x));
  case UnaryKind::HardSigmoid:
    return std::fmax(0.f, std::fmin(1.f, p.alpha * x + p.beta));
  case UnaryKind::ThresholdedRelu:
    return x > p.alpha ? x : 0.f;
  case UnaryKind::Clip:
    return static_cast<float>(
        std::fmin(std::fmax(static_cast<double>(x), p.lo), p.hi));
  case UnaryKind::Not:
    break;
  }
  return x;
}

/// Rejects activations no float kernel can apply (Not is Bool-only).
inline void checkActivation(const char *kernel, const Activation &act) {
  if (act.kind == UnaryKind::Not)
    throw Error(std::string(kernel) +
                ": activation Not is not defined on float tensors");
}

/// The loops of LoopDense.h run in the element type alone: the compiler
/// fuses activations (and residuals) into f32 dense ops only.
inline void requireNoActivation(const char *kernel, DType type,
                                const Activation &act) {
  if (act.kind != UnaryKind::Identity)
    throw Error(std::string(kernel) + ": a fused activation on " +
                dtypeName(type) + " is not supported");
}

/// The activation over y in place, after a primitive that could not fuse it.
inline void applyActivation(const Activation &act, float *y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = activate(act, y[i]);
}

/// An activation operand the caller passes in its layout (`user`) to a
/// primitive that chose another (`chosen`): a placeholder over the caller's
/// buffer and, where the layouts differ, a kernel-owned buffer in the chosen
/// layout with the reorder between the two.
class LayoutBridge {
public:
  LayoutBridge() = default;
  LayoutBridge(const dnnl::engine &engine, const dnnl::memory::desc &user,
               const dnnl::memory::desc &chosen, bool input)
      : user(placeholder(user, engine)) {
    if (chosen == user)
      return;
    owned = dnnl::memory(chosen, engine);
    dnnl::reorder::primitive_desc pd =
        input
            ? dnnl::reorder::primitive_desc(this->user, owned, userScratchpad())
            : dnnl::reorder::primitive_desc(owned, this->user,
                                            userScratchpad());
    reorder = dnnl::reorder(pd);
    args = {{DNNL_ARG_FROM, input ? this->user : owned},
            {DNNL_ARG_TO, input ? owned : this->user}};
    scratchpad = scratchpadFor(pd, engine, args);
  }

  /// What the primitive's argument is bound to for good.
  const dnnl::memory &memory() const { return owned ? owned : user; }
  void bind(const void *pointer) { dnnl_util::bind(user, pointer); }
  /// Runs the reorder, if any (before the primitive for an input, after it
  /// for an output).
  void convert(dnnl::stream &stream) {
    if (owned)
      reorder.execute(stream, args);
  }

private:
  dnnl::memory user, owned, scratchpad;
  dnnl::reorder reorder;
  Args args;
};

/// A weights operand in the user's plain layout, or in the layout the
/// primitive chose: repacked by a reorder on the first run (and again should
/// the caller ever pass another buffer) when constant, on every run when not.
class Weights {
public:
  Weights() = default;
  Weights(const dnnl::engine &engine, const dnnl::memory::desc &user,
          const dnnl::memory::desc &chosen, bool constant = true)
      : user(placeholder(user, engine)), constant(constant) {
    if (chosen != user) {
      packed = dnnl::memory(chosen, engine);
      dnnl::reorder::primitive_desc pd(this->user, packed, userScratchpad());
      repack = dnnl::reorder(pd);
      repackArgs = {{DNNL_ARG_FROM, this->user}, {DNNL_ARG_TO, packed}};
      scratchpad = scratchpadFor(pd, engine, repackArgs);
    }
  }

  /// What the primitive's weights argument is bound to for good.
  const dnnl::memory &memory() const { return packed ? packed : user; }

  void bind(dnnl::stream &stream, const void *pointer) {
    if (!packed) {
      dnnl_util::bind(user, pointer);
      return;
    }
    if (constant && pointer == packedFrom)
      return;
    dnnl_util::bind(user, pointer);
    repack.execute(stream, repackArgs);
    stream.wait();
    packedFrom = pointer;
  }

private:
  dnnl::memory user, packed;
  dnnl::reorder repack;
  dnnl::memory scratchpad;
  Args repackArgs;
  bool constant = true;
  const void *packedFrom = nullptr;
};

} // namespace heterps::rt::cpu::dnnl_util

#endif // HETERPS_RUNTIME_KERNELS_CPU_DNNLUTIL_H
