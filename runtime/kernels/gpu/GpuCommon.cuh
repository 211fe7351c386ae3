//===- GpuCommon.cuh - Helpers shared by the CUDA kernels ---------*- C++
//-*-===//
//
// Private to the GPU kernels: launch geometry, element-type dispatch, the
// float accumulator of half types, device math overloads, strided index maps
// for broadcasting and permutations, and an owning device buffer.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_GPU_GPUCOMMON_CUH
#define HETERPS_RUNTIME_KERNELS_GPU_GPUCOMMON_CUH

#include "GpuContext.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace heterps::rt::gpu {

//===----------------------------------------------------------------------===//
// Launch geometry and checks
//===----------------------------------------------------------------------===//

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over n items: enough to fill the GPU, capped
/// because the loop covers the rest.
inline unsigned gridFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(std::clamp<int64_t>(blocks, 1, 65535));
}

/// value as the int cuBLAS takes, or Error("KERNEL: WHAT VALUE must be in
/// [1, INT_MAX]").
inline int positiveInt(const char *kernel, const char *what, int64_t value) {
  if (value <= 0 || value > std::numeric_limits<int>::max())
    throw Error(std::string(kernel) + ": " + what + " " +
                std::to_string(value) + " must be in [1, " +
                std::to_string(std::numeric_limits<int>::max()) + "]");
  return int(value);
}

#define HPS_GRID_STRIDE(i, n)                                                  \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);    \
       i += int64_t(blockDim.x) * gridDim.x)

/// Launch failures (bad configuration, missing sm_ image) surface here;
/// execution failures surface at the next synchronisation.
inline void checkLaunch(const char *kernel) {
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    throw Error(std::string(kernel) +
                ": CUDA kernel launch failed: " + cudaGetErrorString(error));
}

inline cudaStream_t streamOf(Context &ctx) { return ctx.impl().stream; }

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

template <typename T> struct Tag { using type = T; };

[[noreturn]] inline void throwUnsupportedType(const char *kernel, DType type) {
  throw Error(std::string(kernel) + ": element type " + dtypeName(type) +
              " is not supported by the GPU kernels");
}

template <typename F>
void dispatchFloat(DType type, const char *kernel, F &&f) {
  switch (type) {
  case DType::F32:
    return f(Tag<float>{});
  case DType::F64:
    return f(Tag<double>{});
  case DType::F16:
    return f(Tag<__half>{});
  case DType::BF16:
    return f(Tag<__nv_bfloat16>{});
  default:
    throwUnsupportedType(kernel, type);
  }
}

template <typename F> void dispatchInt(DType type, const char *kernel, F &&f) {
  switch (type) {
  case DType::I8:
    return f(Tag<int8_t>{});
  case DType::U8:
    return f(Tag<uint8_t>{});
  case DType::I16:
    return f(Tag<int16_t>{});
  case DType::U16:
    return f(Tag<uint16_t>{});
  case DType::I32:
    return f(Tag<int32_t>{});
  case DType::U32:
    return f(Tag<uint32_t>{});
  case DType::I64:
    return f(Tag<int64_t>{});
  case DType::U64:
    return f(Tag<uint64_t>{});
  default:
    throwUnsupportedType(kernel, type);
  }
}

/// Every type; Bool is `bool` (one byte holding 0 or 1 on every CUDA host).
template <typename F> void dispatchAll(DType type, const char *kernel, F &&f) {
  static_assert(sizeof(bool) == 1, "Bool tensors hold one byte per element");
  if (type == DType::Bool)
    return f(Tag<bool>{});
  if (isFloat(type))
    return dispatchFloat(type, kernel, f);
  return dispatchInt(type, kernel, f);
}

/// Data movement only needs the element size.
template <typename F> void dispatchBySize(DType type, F &&f) {
  switch (dtypeSize(type)) {
  case 1:
    return f(Tag<uint8_t>{});
  case 2:
    return f(Tag<uint16_t>{});
  case 4:
    return f(Tag<uint32_t>{});
  default:
    return f(Tag<uint64_t>{});
  }
}

template <typename T>
constexpr bool kIsHalf =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <typename T>
constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;

/// Arithmetic type of an element type: half types compute in float.
template <typename T> struct AccOf { using type = T; };
template <> struct AccOf<__half> { using type = float; };
template <> struct AccOf<__nv_bfloat16> { using type = float; };
template <typename T> using Acc = typename AccOf<T>::type;

template <typename T> __host__ __device__ inline Acc<T> toAcc(T value) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(value);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(value);
  else
    return value;
}

template <typename T> __host__ __device__ inline T fromAcc(Acc<T> value) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(value);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(value);
  else
    return static_cast<T>(value);
}

//===----------------------------------------------------------------------===//
// Device math: one overload per precision so templates pick the fast float
// functions for float and half types.
//===----------------------------------------------------------------------===//

#define HPS_MATH1(name, f32, f64)                                              \
  __device__ inline float name(float x) { return f32(x); }                     \
  __device__ inline double name(double x) { return f64(x); }
HPS_MATH1(dExp, expf, exp)
HPS_MATH1(dExpm1, expm1f, expm1)
HPS_MATH1(dLog, logf, log)
HPS_MATH1(dLog1p, log1pf, log1p)
HPS_MATH1(dSqrt, sqrtf, sqrt)
HPS_MATH1(dTanh, tanhf, tanh)
HPS_MATH1(dErf, erff, erf)
HPS_MATH1(dSin, sinf, sin)
HPS_MATH1(dCos, cosf, cos)
HPS_MATH1(dAsin, asinf, asin)
HPS_MATH1(dAcos, acosf, acos)
HPS_MATH1(dAtan, atanf, atan)
HPS_MATH1(dFloor, floorf, floor)
HPS_MATH1(dCeil, ceilf, ceil)
HPS_MATH1(dRint, rintf, rint)
HPS_MATH1(dAbs, fabsf, fabs)
#undef HPS_MATH1
__device__ inline float dPow(float x, float y) { return powf(x, y); }
__device__ inline double dPow(double x, double y) { return pow(x, y); }
__device__ inline float dFmod(float x, float y) { return fmodf(x, y); }
__device__ inline double dFmod(double x, double y) { return fmod(x, y); }

/// Identity of max / min reductions: -inf / +inf for floats (as the API
/// documents for empty sets), lowest / highest for integers.
template <typename A> inline A lowestValue() {
  if constexpr (std::numeric_limits<A>::has_infinity)
    return -std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::lowest();
}
template <typename A> inline A highestValue() {
  if constexpr (std::numeric_limits<A>::has_infinity)
    return std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::max();
}

//===----------------------------------------------------------------------===//
// Block reductions (blockDim.x == kThreads)
//===----------------------------------------------------------------------===//

template <typename A, typename Op>
__device__ inline A blockReduce(A value, Op op) {
  __shared__ A partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // The previous call's readers must be done before partial is reused.
  __syncthreads();
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  static_assert((kThreads / 32 & (kThreads / 32 - 1)) == 0,
                "the warp count must be a power of two");
  if (warp == 0) {
    // Lane 0 combines lanes [0, kThreads / 32) only; the other lanes hold
    // a valid filler that never reaches it.
    value = partial[lane < kThreads / 32 ? lane : 0];
    for (int offset = kThreads / 64; offset > 0; offset /= 2)
      value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
    if (lane == 0)
      partial[0] = value;
  }
  __syncthreads();
  return partial[0];
}

struct SumOp {
  template <typename A> __device__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct MaxOp {
  template <typename A> __device__ A operator()(A a, A b) const {
    return b > a ? b : a;
  }
};

//===----------------------------------------------------------------------===//
// Strided index maps
//===----------------------------------------------------------------------===//

constexpr int kMaxDims = 8;

/// Maps the row-major linear index of an output of extents `dims` to element
/// offsets of N operands with per-dim `strides` (0 where an operand
/// broadcasts, negative for reversed slices).
template <int N> struct StridedMap {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  __device__ void offsets(int64_t index, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k)
      out[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t coord = index % dims[d];
      index /= dims[d];
      for (int k = 0; k < N; ++k)
        out[k] += coord * strides[k][d];
    }
  }
};

/// Row-major strides of a dense tensor.
inline Shape denseStrides(const Shape &shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

/// Strides of `in` read as broadcast to `out` (numpy rules, `in` aligned to
/// the right); throws naming the kernel when the shapes do not broadcast.
inline Shape broadcastStrides(const char *kernel, const Shape &in,
                              const Shape &out) {
  if (in.size() > out.size())
    throw Error(std::string(kernel) + ": cannot broadcast " + shapeString(in) +
                " to " + shapeString(out));
  Shape dense = denseStrides(in);
  Shape strides(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == out[lead + d])
      strides[lead + d] = in[d] == 1 ? 0 : dense[d];
    else if (in[d] != 1)
      throw Error(std::string(kernel) + ": cannot broadcast " +
                  shapeString(in) + " to " + shapeString(out));
  }
  return strides;
}

/// Builds a map for output extents `dims`, dropping unit dims and merging
/// neighbours every operand walks contiguously, so most maps end up rank 1-2
/// and ranks above kMaxDims are rare; those throw naming the kernel.
template <int N>
StridedMap<N> makeMap(const char *kernel, const Shape &dims,
                      const std::array<Shape, N> &strides) {
  std::vector<int64_t> keptDims;
  std::array<std::vector<int64_t>, N> keptStrides;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1)
      continue;
    bool merge = !keptDims.empty();
    for (int k = 0; k < N && merge; ++k)
      merge = keptStrides[k].back() == strides[k][d] * dims[d];
    if (merge) {
      keptDims.back() *= dims[d];
      for (int k = 0; k < N; ++k)
        keptStrides[k].back() = strides[k][d];
      continue;
    }
    keptDims.push_back(dims[d]);
    for (int k = 0; k < N; ++k)
      keptStrides[k].push_back(strides[k][d]);
  }
  if (keptDims.size() > size_t(kMaxDims))
    throw Error(std::string(kernel) + ": shape " + shapeString(dims) +
                " needs more than " + std::to_string(kMaxDims) +
                " non-mergeable dims");
  StridedMap<N> map;
  map.rank = int(keptDims.size());
  for (int d = 0; d < map.rank; ++d) {
    map.dims[d] = keptDims[d];
    for (int k = 0; k < N; ++k)
      map.strides[k][d] = keptStrides[k][d];
  }
  return map;
}

//===----------------------------------------------------------------------===//
// Device memory owned by a kernel (scratch, error flags)
//===----------------------------------------------------------------------===//

class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const char *kernel, size_t bytes) : size(bytes) {
    if (bytes == 0)
      return;
    cudaError_t error = cudaMalloc(&pointer, bytes);
    if (error != cudaSuccess)
      throw Error(std::string(kernel) + ": cannot allocate " +
                  std::to_string(bytes) +
                  " bytes of GPU scratch: " + cudaGetErrorString(error));
  }
  ~DeviceBuffer() {
    // Destructors must not throw; a failure here leaves nothing to fix.
    if (pointer)
      cudaFree(pointer);
  }
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : pointer(std::exchange(other.pointer, nullptr)),
        size(std::exchange(other.size, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(pointer, other.pointer);
    std::swap(size, other.size);
    return *this;
  }
  void *get() const { return pointer; }
  size_t bytes() const { return size; }

private:
  void *pointer = nullptr;
  size_t size = 0;
};

inline std::string shapeMismatch(const char *kernel, const char *what,
                                 const Shape &got, const Shape &expected) {
  return std::string(kernel) + ": " + what + " has shape " + shapeString(got) +
         ", expected " + shapeString(expected);
}

} // namespace heterps::rt::gpu

#endif // HETERPS_RUNTIME_KERNELS_GPU_GPUCOMMON_CUH
