//===- Dense.cu - Gemm, MatMul and Conv on cuBLAS and cuDNN ---------------===//
//
// Row-major products go to column-major cuBLAS as the transposed problem
// (Y^T = B^T A^T), which needs no data movement. Convolutions go to cuDNN in
// exact fp32 (no TF32) so GPU results match the CPU backend closely.
// Integer MatMul and Conv, which neither library covers, run on plain kernels
// of our own.
//
//===----------------------------------------------------------------------===//

#include "UnaryOps.cuh"

#include <climits>

namespace heterps::rt::gpu {
namespace {

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

/// y = act(y) in place.
template <typename T>
__global__ void activationKernel(UnaryOp op, T *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) { y[i] = applyFloatUnary(op, y[i]); }
}

/// y[n, c, s] = act(y[n, c, s] + bias[c] + residual[n, c, s]); bias and
/// residual may be null.
template <typename T>
__global__ void biasActivationKernel(UnaryOp op, T *y, const T *bias,
                                     const T *residual, int64_t channels,
                                     int64_t spatial, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    T v = y[i];
    if (bias)
      v += bias[(i / spatial) % channels];
    if (residual)
      v += residual[i];
    y[i] = applyFloatUnary(op, v);
  }
}

/// y[i, j] = c[i * rowStride + j * colStride]: C broadcast to [M, N].
template <typename T>
__global__ void broadcastCKernel(const T *c, T *y, int64_t cols,
                                 int64_t rowStride, int64_t colStride,
                                 int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    y[i] = c[(i / cols) * rowStride + (i % cols) * colStride];
  }
}

template <typename T>
void launchActivation(const char *kernel, cudaStream_t stream,
                      const UnaryOp &op, T *y, int64_t n) {
  if (op.kind == UnaryKind::Identity || n == 0)
    return;
  activationKernel<T><<<gridFor(n), kThreads, 0, stream>>>(op, y, n);
  checkLaunch(kernel);
}

/// Dense kernels run on F32 and F64 (cuBLAS S/D routines, cuDNN float and
/// double convolutions).
template <typename F>
void dispatchDense(DType type, const char *kernel, F &&f) {
  if (type == DType::F32)
    return f(Tag<float>{});
  if (type == DType::F64)
    return f(Tag<double>{});
  throwUnsupportedType(kernel, type);
}

/// MatMul and Conv also run every integer type (not Bool) on kernels of our
/// own. Returns whether `type` takes that path; throws for types neither path
/// runs and for fused work, which the compiler emits on floats only.
bool checkIntegerDense(const char *kernel, DType type, const Activation &act,
                       bool residual) {
  if (isFloat(type)) {
    dispatchDense(type, kernel, [](auto) {});
    return false;
  }
  dispatchInt(type, kernel, [](auto) {});
  if (act.kind != UnaryKind::Identity)
    throw Error(std::string(kernel) + ": element type " + dtypeName(type) +
                " takes no fused activation");
  if (residual)
    throw Error(std::string(kernel) + ": element type " + dtypeName(type) +
                " takes no fused residual");
  return true;
}

/// Integer products wrap modulo 2^bits as in numpy and onnxruntime, so they
/// are computed unsigned (signed overflow is UB) and at least as wide as
/// unsigned int (narrower types promote to int, which could overflow); the
/// low bits kept on the store are the same.
template <typename T>
using WrapAcc = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                   std::make_unsigned_t<T>>;

int toInt(const char *kernel, const char *what, int64_t value) {
  if (value < 0 || value > INT_MAX)
    throw Error(std::string(kernel) + ": " + what + " " +
                std::to_string(value) + " is out of cuBLAS/cuDNN's int range");
  return int(value);
}

/// Column-major gemm (strided batched when batch > 1) in T's precision.
struct GemmCall {
  cublasOperation_t opA = CUBLAS_OP_N, opB = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  long long strideA = 0, strideB = 0, strideC = 0;
  int batch = 1;
};

template <typename T>
void gemm(cublasHandle_t handle, const GemmCall &g, T alpha, const T *a,
          const T *b, T beta, T *c) {
  if constexpr (std::is_same_v<T, float>) {
    if (g.batch == 1)
      HPS_CUBLAS_CHECK(cublasSgemm(handle, g.opA, g.opB, g.m, g.n, g.k, &alpha,
                                   a, g.lda, b, g.ldb, &beta, c, g.ldc));
    else
      HPS_CUBLAS_CHECK(cublasSgemmStridedBatched(
          handle, g.opA, g.opB, g.m, g.n, g.k, &alpha, a, g.lda, g.strideA, b,
          g.ldb, g.strideB, &beta, c, g.ldc, g.strideC, g.batch));
  } else {
    if (g.batch == 1)
      HPS_CUBLAS_CHECK(cublasDgemm(handle, g.opA, g.opB, g.m, g.n, g.k, &alpha,
                                   a, g.lda, b, g.ldb, &beta, c, g.ldc));
    else
      HPS_CUBLAS_CHECK(cublasDgemmStridedBatched(
          handle, g.opA, g.opB, g.m, g.n, g.k, &alpha, a, g.lda, g.strideA, b,
          g.ldb, g.strideB, &beta, c, g.ldc, g.strideC, g.batch));
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

struct Gemm::Impl {
  Context &ctx;
  DType type;
  int64_t m, n;
  float alpha, beta;
  bool hasC = false;
  int64_t cRowStride = 0, cColStride = 0;
  GemmCall call;
  UnaryOp act;
};

Gemm::Gemm(Context &ctx, DType type, int64_t m, int64_t n, int64_t k,
           bool transA, bool transB, float alpha, float beta,
           const Shape *cShape, Activation act, bool /*constantB*/)
    : impl(new Impl{ctx, type, m, n, alpha, beta, false, 0, 0, {}, {}}) {
  const char *kernel = "Gemm";
  dispatchDense(type, kernel, [](auto) {});
  checkFloatUnary(kernel, act.kind);
  impl->act = makeUnaryOp(act.kind, act.params);
  // Y^T[N, M] = op(B)^T op(A)^T in column-major terms: B comes first, and a
  // row-major [R, C] matrix is a column-major [C, R] one with ld C.
  GemmCall &g = impl->call;
  g.opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.m = toInt(kernel, "N", n);
  g.n = toInt(kernel, "M", m);
  g.k = toInt(kernel, "K", k);
  g.lda = std::max(1, toInt(kernel, "ldb", transB ? k : n));
  g.ldb = std::max(1, toInt(kernel, "lda", transA ? m : k));
  g.ldc = std::max(1, g.m);
  if (cShape && beta != 0.0f) {
    const Shape &c = *cShape;
    bool ok = true;
    if (c.size() == 1) {
      ok = c[0] == n || c[0] == 1;
      impl->cColStride = c[0] == 1 ? 0 : 1;
    } else if (c.size() == 2) {
      ok = (c[0] == m || c[0] == 1) && (c[1] == n || c[1] == 1);
      impl->cRowStride = c[0] == 1 ? 0 : c[1];
      impl->cColStride = c[1] == 1 ? 0 : 1;
    } else if (!c.empty()) {
      ok = false;
    }
    if (!ok)
      throw Error("Gemm: C of shape " + shapeString(c) +
                  " does not broadcast to " + shapeString({m, n}));
    impl->hasC = true;
  }
}

Gemm::~Gemm() = default;

void Gemm::run(const void *a, const void *b, const void *c, void *y) {
  Impl &s = *impl;
  if (s.m == 0 || s.n == 0)
    return;
  cudaStream_t stream = streamOf(s.ctx);
  dispatchDense(s.type, "Gemm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    int64_t total = s.m * s.n;
    T beta = 0;
    if (s.hasC && c) {
      // cuBLAS scales Y by beta, so Y starts as C broadcast to [M, N].
      broadcastCKernel<T><<<gridFor(total), kThreads, 0, stream>>>(
          static_cast<const T *>(c), static_cast<T *>(y), s.n, s.cRowStride,
          s.cColStride, total);
      checkLaunch("Gemm");
      beta = T(s.beta);
    }
    gemm<T>(s.ctx.impl().cublas, s.call, T(s.alpha), static_cast<const T *>(b),
            static_cast<const T *>(a), beta, static_cast<T *>(y));
    launchActivation("Gemm", stream, s.act, static_cast<T *>(y), total);
  });
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

struct MatMul::Impl {
  Context &ctx;
  DType type;
  int64_t total = 0;
  GemmCall call;
  /// Element offsets of a, b, y for each strided-batched call: the batch
  /// dims outside the innermost (after merging) are enumerated here.
  std::vector<std::array<int64_t, 3>> offsets;
  UnaryOp act;
  /// Integer types: intMatMulKernel over [batch, M, N] instead of cuBLAS.
  bool integer = false;
  int64_t m = 0, n = 0, k = 0;
  StridedMap<3> batchMap;
};

namespace {

/// y[batch, i, j] = sum_k a[batch, i, k] * b[batch, k, j], wrapping; the
/// map gives the (broadcast) offsets of a and b per batch, y is dense.
template <typename T>
__global__ void intMatMulKernel(StridedMap<3> map, const T *a, const T *b, T *y,
                                int64_t m, int64_t n, int64_t k,
                                int64_t total) {
  using A = WrapAcc<T>;
  HPS_GRID_STRIDE(i, total) {
    int64_t col = i % n, rest = i / n, row = rest % m;
    int64_t offset[3];
    map.offsets(rest / m, offset);
    const T *aRow = a + offset[0] + row * k, *bCol = b + offset[1] + col;
    A acc = 0;
    for (int64_t j = 0; j < k; ++j)
      acc += A(aRow[j]) * A(bCol[j * n]);
    y[i] = T(acc);
  }
}

} // namespace

MatMul::MatMul(Context &ctx, DType type, const Shape &aShape,
               const Shape &bShape, const Shape &yShape, Activation act,
               bool /*constantB*/)
    : impl(new Impl{ctx, type, 0, {}, {}, {}}) {
  const char *kernel = "MatMul";
  impl->integer = checkIntegerDense(kernel, type, act, false);
  checkFloatUnary(kernel, act.kind);
  impl->act = makeUnaryOp(act.kind, act.params);
  if (aShape.empty() || bShape.empty())
    throw Error("MatMul: operands must have rank >= 1");
  // numpy promotion of 1-D operands.
  Shape a = aShape, b = bShape;
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k)
    throw Error("MatMul: inner dims of " + shapeString(aShape) + " and " +
                shapeString(bShape) + " differ");
  Shape aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
  size_t rank = std::max(aBatch.size(), bBatch.size());
  aBatch.insert(aBatch.begin(), rank - aBatch.size(), 1);
  bBatch.insert(bBatch.begin(), rank - bBatch.size(), 1);
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (aBatch[d] != bBatch[d] && aBatch[d] != 1 && bBatch[d] != 1)
      throw Error("MatMul: batch dims of " + shapeString(aShape) + " and " +
                  shapeString(bShape) + " do not broadcast");
    batch[d] = aBatch[d] == 1 ? bBatch[d] : aBatch[d];
  }
  int64_t batchCount = numElements(batch);
  impl->total = batchCount * m * n;
  if (numElements(yShape) != impl->total)
    throw Error("MatMul: result shape " + shapeString(yShape) +
                " does not match " + shapeString(aShape) + " x " +
                shapeString(bShape));
  if (impl->total == 0)
    return;

  // Batch strides in elements (0 where broadcast), dims merged where all
  // three operands step uniformly.
  Shape aStrides = broadcastStrides(kernel, aBatch, batch);
  Shape bStrides = broadcastStrides(kernel, bBatch, batch);
  Shape yStrides = denseStrides(batch);
  for (size_t d = 0; d < rank; ++d) {
    aStrides[d] *= m * k;
    bStrides[d] *= k * n;
    yStrides[d] *= m * n;
  }
  StridedMap<3> map = makeMap<3>(kernel, batch, {aStrides, bStrides, yStrides});
  if (impl->integer) {
    // The cuBLAS set-up below does not apply (nor do its int limits).
    impl->m = m;
    impl->n = n;
    impl->k = k;
    impl->batchMap = map;
    return;
  }

  // A batch of a against one shared b with a dense a is one tall product:
  // [batch * M, K] x [K, N] (the common "linear layer" case).
  if (map.rank == 1 && map.strides[1][0] == 0 && map.strides[0][0] == m * k) {
    m *= map.dims[0];
    map.rank = 0;
  }
  GemmCall &g = impl->call;
  g.m = toInt(kernel, "N", n);
  g.n = toInt(kernel, "M", m);
  g.k = toInt(kernel, "K", k);
  g.lda = std::max(1, g.m);
  g.ldb = std::max(1, g.k);
  g.ldc = std::max(1, g.m);
  int64_t outer = 1;
  if (map.rank > 0) {
    int inner = map.rank - 1;
    g.batch = toInt(kernel, "batch", map.dims[inner]);
    g.strideA = map.strides[1][inner];
    g.strideB = map.strides[0][inner];
    g.strideC = map.strides[2][inner];
    for (int d = 0; d < inner; ++d)
      outer *= map.dims[d];
  }
  for (int64_t i = 0; i < outer; ++i) {
    std::array<int64_t, 3> offset{0, 0, 0};
    int64_t rest = i;
    for (int d = map.rank - 2; d >= 0; --d) {
      int64_t coord = rest % map.dims[d];
      rest /= map.dims[d];
      for (int op = 0; op < 3; ++op)
        offset[op] += coord * map.strides[op][d];
    }
    impl->offsets.push_back(offset);
  }
}

MatMul::~MatMul() = default;

void MatMul::run(const void *a, const void *b, void *y) {
  Impl &s = *impl;
  if (s.total == 0)
    return;
  if (s.integer) {
    dispatchInt(s.type, "MatMul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      intMatMulKernel<T><<<gridFor(s.total), kThreads, 0, streamOf(s.ctx)>>>(
          s.batchMap, static_cast<const T *>(a), static_cast<const T *>(b),
          static_cast<T *>(y), s.m, s.n, s.k, s.total);
      checkLaunch("MatMul");
    });
    return;
  }
  dispatchDense(s.type, "MatMul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *aT = static_cast<const T *>(a), *bT = static_cast<const T *>(b);
    T *yT = static_cast<T *>(y);
    for (const std::array<int64_t, 3> &offset : s.offsets)
      gemm<T>(s.ctx.impl().cublas, s.call, T(1), bT + offset[1], aT + offset[0],
              T(0), yT + offset[2]);
    launchActivation("MatMul", streamOf(s.ctx), s.act, yT, s.total);
  });
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

namespace {

/// Copies x [N, C, spatial...] into a zero-padded buffer: cuDNN only pads
/// symmetrically, so asymmetric pads are applied here. Spatial rank is
/// padded to 3 with unit dims.
struct PadGeometry {
  int64_t channels = 0; // N * C
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t begin[3] = {0, 0, 0};
};

template <typename T>
__global__ void zeroPadKernel(PadGeometry g, const T *x, T *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t rest = i, offset = 0, stride = 1;
    bool inside = true;
    for (int d = 2; d >= 0; --d) {
      int64_t coord = rest % g.out[d] - g.begin[d];
      rest /= g.out[d];
      inside = inside && coord >= 0 && coord < g.in[d];
      offset += coord * stride;
      stride *= g.in[d];
    }
    y[i] = inside ? x[rest * stride + offset] : T(0);
  }
}

class CudnnDescriptors {
public:
  CudnnDescriptors() {
    HPS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    HPS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    HPS_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    HPS_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  }
  ~CudnnDescriptors() {
    if (conv)
      cudnnDestroyConvolutionDescriptor(conv);
    if (w)
      cudnnDestroyFilterDescriptor(w);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (x)
      cudnnDestroyTensorDescriptor(x);
  }
  CudnnDescriptors(const CudnnDescriptors &) = delete;
  CudnnDescriptors &operator=(const CudnnDescriptors &) = delete;

  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
};

/// Geometry of intConvKernel, spatial rank padded to 3 with unit dims.
struct IntConvGeometry {
  int64_t inChannels = 0, outChannels = 0, inPerGroup = 0, outPerGroup = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, taps[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int64_t padBegin[3] = {0, 0, 0};
};

/// One output element per thread, wrapping; taps outside x read as the zero
/// padding, so y's shape decides the end pads.
template <typename T, typename X = T, typename W = T>
__global__ void intConvKernel(IntConvGeometry g, const X *x, const W *w,
                              const T *bias, T *y, int64_t n) {
  using A = WrapAcc<T>;
  int64_t inImage = g.in[0] * g.in[1] * g.in[2];
  int64_t filterTaps = g.taps[0] * g.taps[1] * g.taps[2];
  HPS_GRID_STRIDE(i, n) {
    int64_t o[3], rest = i;
    for (int d = 2; d >= 0; --d) {
      o[d] = rest % g.out[d];
      rest /= g.out[d];
    }
    int64_t co = rest % g.outChannels, image = rest / g.outChannels;
    const X *xg =
        x +
        (image * g.inChannels + co / g.outPerGroup * g.inPerGroup) * inImage;
    const W *wc = w + co * g.inPerGroup * filterTaps;
    A acc = bias ? A(bias[co]) : A(0);
    for (int64_t k0 = 0; k0 < g.taps[0]; ++k0) {
      int64_t p0 = o[0] * g.stride[0] - g.padBegin[0] + k0 * g.dilation[0];
      if (p0 < 0 || p0 >= g.in[0])
        continue;
      for (int64_t k1 = 0; k1 < g.taps[1]; ++k1) {
        int64_t p1 = o[1] * g.stride[1] - g.padBegin[1] + k1 * g.dilation[1];
        if (p1 < 0 || p1 >= g.in[1])
          continue;
        for (int64_t k2 = 0; k2 < g.taps[2]; ++k2) {
          int64_t p2 = o[2] * g.stride[2] - g.padBegin[2] + k2 * g.dilation[2];
          if (p2 < 0 || p2 >= g.in[2])
            continue;
          int64_t xAt = (p0 * g.in[1] + p1) * g.in[2] + p2;
          int64_t wAt = (k0 * g.taps[1] + k1) * g.taps[2] + k2;
          for (int64_t c = 0; c < g.inPerGroup; ++c)
            acc += A(xg[c * inImage + xAt]) * A(wc[c * filterTaps + wAt]);
        }
      }
    }
    y[i] = T(acc);
  }
}

/// Checks the ranks and the group of a convolution; its spatial rank.
size_t checkConvRanks(const char *kernel, const Shape &x, const Shape &w,
                      const Shape &y, const Shape &strides,
                      const Shape &dilations, const Shape &padBegin,
                      const Shape &padEnd, int64_t group) {
  size_t spatialRank = x.size() < 3 ? 0 : x.size() - 2;
  if (spatialRank < 1 || spatialRank > 3)
    throw Error(std::string(kernel) + ": input " + shapeString(x) +
                " must have 1 to 3 spatial dims");
  if (w.size() != x.size() || y.size() != x.size() ||
      strides.size() != spatialRank || dilations.size() != spatialRank ||
      padBegin.size() != spatialRank || padEnd.size() != spatialRank)
    throw Error(std::string(kernel) + ": operand ranks disagree with input " +
                shapeString(x));
  if (group < 1 || x[1] % group || w[0] % group || w[1] * group != x[1])
    throw Error(std::string(kernel) + ": group " + std::to_string(group) +
                " does not fit input " + shapeString(x) + " and filter " +
                shapeString(w));
  return spatialRank;
}

/// intConvKernel's geometry, checked; y's shape decides the end pads.
IntConvGeometry intConvGeometry(const char *kernel, const Shape &x,
                                const Shape &w, const Shape &y,
                                const Shape &strides, const Shape &dilations,
                                const Shape &padBegin, const Shape &padEnd,
                                int64_t group) {
  size_t spatialRank = x.size() - 2;
  if (y[0] != x[0] || y[1] != w[0])
    throw Error(std::string(kernel) + ": output shape " + shapeString(y) +
                " does not match input " + shapeString(x) + " and filter " +
                shapeString(w));
  IntConvGeometry g;
  g.inChannels = x[1];
  g.outChannels = y[1];
  g.inPerGroup = w[1];
  g.outPerGroup = std::max<int64_t>(1, w[0] / group);
  for (size_t d = 0; d < spatialRank; ++d) {
    if (strides[d] < 1 || dilations[d] < 1)
      throw Error(std::string(kernel) + ": strides " + shapeString(strides) +
                  " and dilations " + shapeString(dilations) +
                  " must be positive");
    if (padBegin[d] < 0 || padEnd[d] < 0)
      throw Error(std::string(kernel) + ": negative pads are not supported");
    size_t slot = 3 - spatialRank + d;
    g.in[slot] = x[2 + d];
    g.out[slot] = y[2 + d];
    g.taps[slot] = w[2 + d];
    g.stride[slot] = strides[d];
    g.dilation[slot] = dilations[d];
    g.padBegin[slot] = padBegin[d];
  }
  return g;
}

std::vector<int> toInts(const char *what, const Shape &shape) {
  std::vector<int> ints;
  for (int64_t v : shape)
    ints.push_back(toInt("Conv", what, v));
  return ints;
}

} // namespace

struct Conv::Impl {
  Context &ctx;
  DType type;
  UnaryOp act;
  bool hasBias = false;
  bool residual = false;
  int64_t channels = 0, spatial = 0, total = 0;
  bool padInput = false;
  PadGeometry pad;
  int64_t paddedElements = 0;
  CudnnDescriptors desc;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  DeviceBuffer workspace, padded;
  /// Integer types: intConvKernel instead of cuDNN.
  bool integer = false;
  IntConvGeometry geometry;
};

Conv::Conv(Context &ctx, DType type, const Shape &x, const Shape &w,
           bool hasBias, const Shape &y, const Shape &strides,
           const Shape &dilations, const Shape &padBegin, const Shape &padEnd,
           int64_t group, Activation act, bool /*constantWeights*/,
           ConvOptions options)
    : impl(new Impl{ctx, type, {}, hasBias}) {
  const char *kernel = "Conv";
  impl->integer = checkIntegerDense(kernel, type, act, options.residual);
  checkFloatUnary(kernel, act.kind);
  Impl &s = *impl;
  // Layout::Native is Plain here: cuDNN runs NCHW as it is.
  s.residual = options.residual;
  s.act = makeUnaryOp(act.kind, act.params);
  size_t spatialRank = checkConvRanks(kernel, x, w, y, strides, dilations,
                                      padBegin, padEnd, group);

  if (s.integer) {
    s.geometry = intConvGeometry(kernel, x, w, y, strides, dilations, padBegin,
                                 padEnd, group);
    s.total = numElements(y);
    return;
  }

  // cuDNN pads symmetrically: asymmetric pads become an explicit zero pad
  // of the input, then cuDNN runs unpadded.
  Shape xIn = x;
  Shape cudnnPad = padBegin;
  s.padInput = padBegin != padEnd;
  if (s.padInput) {
    s.pad.channels = x[0] * x[1];
    for (size_t d = 0; d < spatialRank; ++d) {
      size_t slot = 3 - spatialRank + d;
      s.pad.in[slot] = x[2 + d];
      s.pad.out[slot] = x[2 + d] + padBegin[d] + padEnd[d];
      s.pad.begin[slot] = padBegin[d];
      if (padBegin[d] < 0 || padEnd[d] < 0)
        throw Error("Conv: negative pads are not supported");
      xIn[2 + d] = s.pad.out[slot];
      cudnnPad[d] = 0;
    }
    s.paddedElements = numElements(xIn);
  }

  // 1-D convolutions run as 2-D ones of unit height.
  Shape xDims = xIn, wDims = w, yDims = y, stride = strides,
        dilation = dilations;
  if (spatialRank == 1) {
    xDims.insert(xDims.begin() + 2, 1);
    wDims.insert(wDims.begin() + 2, 1);
    yDims.insert(yDims.begin() + 2, 1);
    stride.insert(stride.begin(), 1);
    dilation.insert(dilation.begin(), 1);
    cudnnPad.insert(cudnnPad.begin(), 0);
  }
  cudnnDataType_t dataType =
      type == DType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
  std::vector<int> xInts = toInts("input dim", xDims),
                   wInts = toInts("filter dim", wDims),
                   yInts = toInts("output dim", yDims),
                   padInts = toInts("pad", cudnnPad),
                   strideInts = toInts("stride", stride),
                   dilationInts = toInts("dilation", dilation);
  int nd = int(xDims.size());
  HPS_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(s.desc.x, CUDNN_TENSOR_NCHW,
                                               dataType, nd, xInts.data()));
  HPS_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(s.desc.y, CUDNN_TENSOR_NCHW,
                                               dataType, nd, yInts.data()));
  HPS_CUDNN_CHECK(cudnnSetFilterNdDescriptor(
      s.desc.w, dataType, CUDNN_TENSOR_NCHW, nd, wInts.data()));
  HPS_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(
      s.desc.conv, nd - 2, padInts.data(), strideInts.data(),
      dilationInts.data(), CUDNN_CROSS_CORRELATION, dataType));
  HPS_CUDNN_CHECK(cudnnSetConvolutionGroupCount(s.desc.conv, int(group)));
  // FMA math: no TF32 tensor cores for fp32, results match the CPU's.
  HPS_CUDNN_CHECK(cudnnSetConvolutionMathType(s.desc.conv, CUDNN_FMA_MATH));

  std::vector<int> expected(nd);
  HPS_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(
      s.desc.conv, s.desc.x, s.desc.w, nd, expected.data()));
  if (expected != yInts)
    throw Error("Conv: output shape " + shapeString(y) +
                " disagrees with the convolution geometry of input " +
                shapeString(x) + " and filter " + shapeString(w));

  // Fastest algorithm cuDNN's heuristics rate as supported under FMA math;
  // implicit GEMM (no workspace, every geometry) when none is. An exact
  // conv (integer sums, ConvOptions::exact) skips the FFT and Winograd
  // algorithms, which round in between.
  auto rounds = [](cudnnConvolutionFwdAlgo_t algo) {
    return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
  };
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  cudnnHandle_t handle = ctx.impl().cudnn;
  HPS_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
      handle, s.desc.x, s.desc.w, s.desc.conv, s.desc.y,
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
  // Workspace beyond this is not worth holding for the stage's lifetime.
  constexpr size_t kMaxWorkspace = size_t(256) << 20;
  size_t workspaceBytes = 0;
  bool chosen = false;
  for (int i = 0; i < found && !chosen; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        perf[i].mathType != CUDNN_FMA_MATH || perf[i].memory > kMaxWorkspace ||
        (options.exact && rounds(perf[i].algo)))
      continue;
    s.algo = perf[i].algo;
    chosen = cudnnGetConvolutionForwardWorkspaceSize(
                 handle, s.desc.x, s.desc.w, s.desc.conv, s.desc.y, s.algo,
                 &workspaceBytes) == CUDNN_STATUS_SUCCESS;
  }
  if (!chosen) {
    s.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    HPS_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
        handle, s.desc.x, s.desc.w, s.desc.conv, s.desc.y, s.algo,
        &workspaceBytes));
  }
  s.workspace = DeviceBuffer(kernel, workspaceBytes);
  if (s.padInput)
    s.padded = DeviceBuffer(kernel, size_t(s.paddedElements) * dtypeSize(type));
  s.channels = y[1];
  s.total = numElements(y);
  s.spatial = s.total / std::max<int64_t>(1, y[0] * y[1]);
}

Conv::~Conv() = default;

void Conv::run(const void *x, const void *w, const void *bias, void *y,
               const void *residual) {
  Impl &s = *impl;
  if (s.residual && !residual)
    throw Error("Conv: a residual was declared but not passed");
  if (s.total == 0)
    return;
  cudaStream_t stream = streamOf(s.ctx);
  if (s.integer) {
    dispatchInt(s.type, "Conv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      intConvKernel<T><<<gridFor(s.total), kThreads, 0, stream>>>(
          s.geometry, static_cast<const T *>(x), static_cast<const T *>(w),
          s.hasBias ? static_cast<const T *>(bias) : nullptr,
          static_cast<T *>(y), s.total);
      checkLaunch("Conv");
    });
    return;
  }
  dispatchDense(s.type, "Conv", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const void *input = x;
    if (s.padInput) {
      zeroPadKernel<T><<<gridFor(s.paddedElements), kThreads, 0, stream>>>(
          s.pad, static_cast<const T *>(x), static_cast<T *>(s.padded.get()),
          s.paddedElements);
      checkLaunch("Conv");
      input = s.padded.get();
    }
    // cuDNN takes float scaling factors for float data, double for double.
    T one = 1, zero = 0;
    HPS_CUDNN_CHECK(cudnnConvolutionForward(
        s.ctx.impl().cudnn, &one, s.desc.x, input, s.desc.w, w, s.desc.conv,
        s.algo, s.workspace.get(), s.workspace.bytes(), &zero, s.desc.y, y));
    const T *biasT = s.hasBias ? static_cast<const T *>(bias) : nullptr;
    const T *residualT =
        s.residual ? static_cast<const T *>(residual) : nullptr;
    if (biasT || residualT || s.act.kind != UnaryKind::Identity) {
      biasActivationKernel<T><<<gridFor(s.total), kThreads, 0, stream>>>(
          s.act, static_cast<T *>(y), biasT, residualT, s.channels, s.spatial,
          s.total);
      checkLaunch("Conv");
    }
  });
}

//===----------------------------------------------------------------------===//
// IntegerConv
//===----------------------------------------------------------------------===//

struct IntegerConv::Impl {
  Context &ctx;
  DType xType;
  bool hasBias = false;
  int64_t total = 0;
  IntConvGeometry geometry;
};

IntegerConv::IntegerConv(Context &ctx, DType xType, const Shape &x,
                         const Shape &w, bool hasBias, const Shape &y,
                         const Shape &strides, const Shape &dilations,
                         const Shape &padBegin, const Shape &padEnd,
                         int64_t group, bool /*constantWeights*/,
                         ConvLayouts layouts)
    : impl(new Impl{ctx, xType, hasBias}) {
  const char *kernel = "IntegerConv";
  if (xType != DType::U8 && xType != DType::I8)
    throw Error(std::string(kernel) + ": x must be u8 or i8, not " +
                dtypeName(xType));
  if (layouts.x != Layout::Plain || layouts.y != Layout::Plain)
    throw Error(std::string(kernel) + ": the GPU takes plain x and y only");
  checkConvRanks(kernel, x, w, y, strides, dilations, padBegin, padEnd, group);
  impl->geometry = intConvGeometry(kernel, x, w, y, strides, dilations,
                                   padBegin, padEnd, group);
  impl->total = numElements(y);
}

IntegerConv::~IntegerConv() = default;

void IntegerConv::run(const void *x, const void *w, const void *bias, void *y) {
  Impl &s = *impl;
  if (s.hasBias && !bias)
    throw Error("IntegerConv: bias was declared but not passed");
  if (s.total == 0)
    return;
  auto launch = [&](auto *input) {
    intConvKernel<int32_t><<<gridFor(s.total), kThreads, 0, streamOf(s.ctx)>>>(
        s.geometry, input, static_cast<const int8_t *>(w),
        s.hasBias ? static_cast<const int32_t *>(bias) : nullptr,
        static_cast<int32_t *>(y), s.total);
    checkLaunch("IntegerConv");
  };
  if (s.xType == DType::U8)
    launch(static_cast<const uint8_t *>(x));
  else
    launch(static_cast<const int8_t *>(x));
}

//===----------------------------------------------------------------------===//
// Relayout
//===----------------------------------------------------------------------===//

// Native is Plain on this backend, so a relayout is a device copy.
struct Relayout::Impl {
  Context &ctx;
  size_t bytes = 0;
};

Relayout::Relayout(Context &ctx, DType type, const Shape &shape, Layout from,
                   Layout to)
    : impl(new Impl{ctx}) {
  // Native is Plain here; ChannelsLast is a CPU layout.
  if (from == Layout::ChannelsLast || to == Layout::ChannelsLast)
    throw Error("Relayout: the GPU has no channels-last layout");
  if (type != DType::F32)
    throw Error(std::string("Relayout: element type ") + dtypeName(type) +
                " is not supported");
  impl->bytes = numElements(shape) * sizeof(float);
}

Relayout::~Relayout() = default;

void Relayout::run(const void *x, void *y) {
  impl->ctx.copy(y, x, impl->bytes);
}

//===----------------------------------------------------------------------===//
// ConvGradInput, ConvGradFilter
//===----------------------------------------------------------------------===//

namespace {

/// The inverse of zeroPadKernel: copies the interior of a padded buffer
/// back out (the adjoint of zero padding drops what fell on the pads).
template <typename T>
__global__ void cropKernel(PadGeometry g, const T *padded, T *y, int64_t n) {
  HPS_GRID_STRIDE(i, n) {
    int64_t rest = i, offset = 0, stride = 1;
    for (int d = 2; d >= 0; --d) {
      int64_t coord = rest % g.in[d] + g.begin[d];
      rest /= g.in[d];
      offset += coord * stride;
      stride *= g.out[d];
    }
    y[i] = padded[rest * stride + offset];
  }
}

/// What both adjoints share: the forward convolution's cuDNN descriptors
/// (x describes the explicitly padded input when the pads are asymmetric,
/// as in Conv), the padding geometry, and the element count of x.
struct ConvAdjoint {
  Context &ctx;
  DType type;
  CudnnDescriptors desc;
  bool padInput = false;
  PadGeometry pad;
  int64_t xElements = 0, paddedElements = 0;
  DeviceBuffer workspace, padded;

  ConvAdjoint(Context &ctx, DType type, const char *kernel, const Shape &x,
              const Shape &w, const Shape &y, const Shape &strides,
              const Shape &dilations, const Shape &padBegin,
              const Shape &padEnd, int64_t group)
      : ctx(ctx), type(type) {
    dispatchDense(type, kernel, [](auto) {});
    size_t spatialRank = checkConvRanks(kernel, x, w, y, strides, dilations,
                                        padBegin, padEnd, group);
    xElements = numElements(x);
    // As in Conv: cuDNN pads symmetrically, so asymmetric pads become an
    // explicit zero pad and cuDNN runs unpadded. The end pad is the one
    // that yields y (zeros past it add nothing).
    Shape xIn = x, cudnnPad = padBegin, end = padEnd;
    for (size_t d = 0; d < spatialRank; ++d) {
      if (padBegin[d] < 0 || padEnd[d] < 0)
        throw Error(std::string(kernel) + ": negative pads are not supported");
      int64_t extent = (w[2 + d] - 1) * dilations[d] + 1;
      int64_t needed =
          (y[2 + d] - 1) * strides[d] + extent - x[2 + d] - padBegin[d];
      if ((x[2 + d] + padBegin[d] + padEnd[d] - extent) / strides[d] + 1 !=
          y[2 + d])
        end[d] = needed;
    }
    padInput = padBegin != end;
    if (padInput) {
      pad.channels = x[0] * x[1];
      for (size_t d = 0; d < spatialRank; ++d) {
        size_t slot = 3 - spatialRank + d;
        pad.in[slot] = x[2 + d];
        pad.out[slot] = x[2 + d] + padBegin[d] + end[d];
        pad.begin[slot] = padBegin[d];
        xIn[2 + d] = pad.out[slot];
        cudnnPad[d] = 0;
      }
      paddedElements = numElements(xIn);
      padded = DeviceBuffer(kernel, size_t(paddedElements) * dtypeSize(type));
    }
    // 1-D convolutions run as 2-D ones of unit height.
    Shape xDims = xIn, wDims = w, yDims = y, stride = strides,
          dilation = dilations;
    if (spatialRank == 1) {
      xDims.insert(xDims.begin() + 2, 1);
      wDims.insert(wDims.begin() + 2, 1);
      yDims.insert(yDims.begin() + 2, 1);
      stride.insert(stride.begin(), 1);
      dilation.insert(dilation.begin(), 1);
      cudnnPad.insert(cudnnPad.begin(), 0);
    }
    cudnnDataType_t dataType =
        type == DType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    std::vector<int> xInts = toInts("input dim", xDims),
                     wInts = toInts("filter dim", wDims),
                     yInts = toInts("output dim", yDims),
                     padInts = toInts("pad", cudnnPad),
                     strideInts = toInts("stride", stride),
                     dilationInts = toInts("dilation", dilation);
    int nd = int(xDims.size());
    HPS_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(desc.x, CUDNN_TENSOR_NCHW,
                                                 dataType, nd, xInts.data()));
    HPS_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(desc.y, CUDNN_TENSOR_NCHW,
                                                 dataType, nd, yInts.data()));
    HPS_CUDNN_CHECK(cudnnSetFilterNdDescriptor(
        desc.w, dataType, CUDNN_TENSOR_NCHW, nd, wInts.data()));
    HPS_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(
        desc.conv, nd - 2, padInts.data(), strideInts.data(),
        dilationInts.data(), CUDNN_CROSS_CORRELATION, dataType));
    HPS_CUDNN_CHECK(cudnnSetConvolutionGroupCount(desc.conv, int(group)));
    HPS_CUDNN_CHECK(cudnnSetConvolutionMathType(desc.conv, CUDNN_FMA_MATH));
    std::vector<int> expected(nd);
    HPS_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(
        desc.conv, desc.x, desc.w, nd, expected.data()));
    if (expected != yInts)
      throw Error(std::string(kernel) + ": output shape " + shapeString(y) +
                  " disagrees with the convolution geometry of input " +
                  shapeString(x) + " and filter " + shapeString(w));
  }
};

/// Workspace beyond this is not worth holding for the stage's lifetime.
constexpr size_t kMaxConvWorkspace = size_t(256) << 20;

} // namespace

struct ConvGradInput::Impl {
  ConvAdjoint conv;
  cudnnConvolutionBwdDataAlgo_t algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
};

ConvGradInput::ConvGradInput(Context &ctx, DType type, const Shape &x,
                             const Shape &w, const Shape &y,
                             const Shape &strides, const Shape &dilations,
                             const Shape &padBegin, const Shape &padEnd,
                             int64_t group, ConvLayouts /*native is plain*/)
    : impl(new Impl{{ctx, type, "ConvGradInput", x, w, y, strides, dilations,
                     padBegin, padEnd, group}}) {
  ConvAdjoint &c = impl->conv;
  cudnnHandle_t handle = ctx.impl().cudnn;
  // The fastest supported algorithm under FMA math, as for Conv; algorithm
  // 1 (deterministic, every geometry) when none is.
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int found = 0;
  HPS_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      handle, c.desc.w, c.desc.y, c.desc.conv, c.desc.x,
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf));
  size_t workspaceBytes = 0;
  bool chosen = false;
  for (int i = 0; i < found && !chosen; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        perf[i].mathType != CUDNN_FMA_MATH ||
        perf[i].memory > kMaxConvWorkspace)
      continue;
    impl->algo = perf[i].algo;
    chosen = cudnnGetConvolutionBackwardDataWorkspaceSize(
                 handle, c.desc.w, c.desc.y, c.desc.conv, c.desc.x, impl->algo,
                 &workspaceBytes) == CUDNN_STATUS_SUCCESS;
  }
  if (!chosen) {
    impl->algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    HPS_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
        handle, c.desc.w, c.desc.y, c.desc.conv, c.desc.x, impl->algo,
        &workspaceBytes));
  }
  c.workspace = DeviceBuffer("ConvGradInput", workspaceBytes);
}

ConvGradInput::~ConvGradInput() = default;

void ConvGradInput::run(const void *dy, const void *w, void *dx) {
  ConvAdjoint &c = impl->conv;
  cudaStream_t stream = streamOf(c.ctx);
  dispatchDense(c.type, "ConvGradInput", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // With explicit pads cuDNN writes the adjoint of the padded input,
    // whose interior is dx.
    void *target = c.padInput ? c.padded.get() : dx;
    T one = 1, zero = 0;
    HPS_CUDNN_CHECK(cudnnConvolutionBackwardData(
        c.ctx.impl().cudnn, &one, c.desc.w, w, c.desc.y, dy, c.desc.conv,
        impl->algo, c.workspace.get(), c.workspace.bytes(), &zero, c.desc.x,
        target));
    if (c.padInput) {
      cropKernel<T><<<gridFor(c.xElements), kThreads, 0, stream>>>(
          c.pad, static_cast<const T *>(c.padded.get()), static_cast<T *>(dx),
          c.xElements);
      checkLaunch("ConvGradInput");
    }
  });
}

struct ConvGradFilter::Impl {
  ConvAdjoint conv;
  cudnnConvolutionBwdFilterAlgo_t algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
};

ConvGradFilter::ConvGradFilter(Context &ctx, DType type, const Shape &x,
                               const Shape &w, const Shape &y,
                               const Shape &strides, const Shape &dilations,
                               const Shape &padBegin, const Shape &padEnd,
                               int64_t group, ConvLayouts /*native is plain*/)
    : impl(new Impl{{ctx, type, "ConvGradFilter", x, w, y, strides, dilations,
                     padBegin, padEnd, group}}) {
  ConvAdjoint &c = impl->conv;
  cudnnHandle_t handle = ctx.impl().cudnn;
  cudnnConvolutionBwdFilterAlgoPerf_t
      perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int found = 0;
  HPS_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      handle, c.desc.x, c.desc.y, c.desc.conv, c.desc.w,
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf));
  size_t workspaceBytes = 0;
  bool chosen = false;
  for (int i = 0; i < found && !chosen; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        perf[i].mathType != CUDNN_FMA_MATH ||
        perf[i].memory > kMaxConvWorkspace)
      continue;
    impl->algo = perf[i].algo;
    chosen = cudnnGetConvolutionBackwardFilterWorkspaceSize(
                 handle, c.desc.x, c.desc.y, c.desc.conv, c.desc.w, impl->algo,
                 &workspaceBytes) == CUDNN_STATUS_SUCCESS;
  }
  if (!chosen) {
    impl->algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
    HPS_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
        handle, c.desc.x, c.desc.y, c.desc.conv, c.desc.w, impl->algo,
        &workspaceBytes));
  }
  c.workspace = DeviceBuffer("ConvGradFilter", workspaceBytes);
}

ConvGradFilter::~ConvGradFilter() = default;

void ConvGradFilter::run(const void *x, const void *dy, void *dw) {
  ConvAdjoint &c = impl->conv;
  cudaStream_t stream = streamOf(c.ctx);
  dispatchDense(c.type, "ConvGradFilter", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const void *input = x;
    if (c.padInput) {
      zeroPadKernel<T><<<gridFor(c.paddedElements), kThreads, 0, stream>>>(
          c.pad, static_cast<const T *>(x), static_cast<T *>(c.padded.get()),
          c.paddedElements);
      checkLaunch("ConvGradFilter");
      input = c.padded.get();
    }
    T one = 1, zero = 0;
    HPS_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        c.ctx.impl().cudnn, &one, c.desc.x, input, c.desc.y, dy, c.desc.conv,
        impl->algo, c.workspace.get(), c.workspace.bytes(), &zero, c.desc.w,
        dw));
  });
}

} // namespace heterps::rt::gpu
