//===- Dense.cpp - Gemm, MatMul, Conv, its adjoints, IntegerConv on oneDNN ===//
//
// Each kernel builds its oneDNN primitive once; run() only points the
// placeholder memories at the caller's buffers and executes. Activations are
// fused as eltwise post-ops where oneDNN has the function, else applied by a
// loop afterwards.
//
//===----------------------------------------------------------------------===//

#include "ChannelsLast.h"
#include "DnnlUtil.h"
#include "LoopDense.h"
#include "WinogradConv.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace heterps::rt::cpu {

using namespace dnnl_util;

namespace {

/// A rows x cols f32 matrix stored row-major, or stored as its transpose
/// (cols x rows) when `transposed`: strides do the transpose.
dnnl::memory::desc matrixDesc(int64_t rows, int64_t cols, bool transposed) {
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32,
                            transposed ? Dims{1, rows} : Dims{cols, 1});
}

/// Post-ops for `act`; `fused` says whether they cover it.
dnnl::primitive_attr activationAttr(const Activation &act, bool &fused,
                                    dnnl::post_ops ops = {}) {
  fused = appendActivation(ops, act);
  dnnl::primitive_attr attr = userScratchpad();
  if (ops.len() > 0)
    attr.set_post_ops(ops);
  return attr;
}

/// A convolution's arguments: src, weights, dst and, with `hasBias`, a
/// placeholder of `biasDesc` (also stored in `bias`, for run() to bind).
Args convArgs(const LayoutBridge &src, const Weights &weights,
              const LayoutBridge &dst, bool hasBias,
              const dnnl::memory::desc &biasDesc, const dnnl::engine &engine,
              dnnl::memory &bias) {
  Args args{{DNNL_ARG_SRC, src.memory()},
            {DNNL_ARG_WEIGHTS, weights.memory()},
            {DNNL_ARG_DST, dst.memory()}};
  if (hasBias) {
    bias = placeholder(biasDesc, engine);
    args[DNNL_ARG_BIAS] = bias;
  }
  return args;
}

/// The batch-chunked run of a oneDNN convolution that Conv and IntegerConv
/// share: weights repacked if needed and the bias bound, then `chunk`
/// images at a time the chunk of x reordered in, the primitive, the chunk
/// of y reordered out (xImage and yImage elements per image).
/// `bindChunk(image)` points any other per-image argument at the chunk.
struct ChunkedConv {
  const char *kernel;
  int64_t batch, chunk, xImage, yImage;
  bool parallel;

  template <typename X, typename Y, typename BindChunk>
  void run(dnnl::stream &stream, const dnnl::convolution_forward &primitive,
           const Args &args, Weights &weights, const void *w,
           const dnnl::memory *bias, const void *b, LayoutBridge &src,
           LayoutBridge &dst, const X *x, Y *y, BindChunk &&bindChunk) const {
    SerialScope serial(!parallel);
    weights.bind(stream, w);
    if (bias)
      bind(*bias, b);
    withDnnl(kernel, [&] {
      for (int64_t image = 0; image < batch; image += chunk) {
        src.bind(x + image * xImage);
        dst.bind(y + image * yImage);
        bindChunk(image);
        src.convert(stream);
        primitive.execute(stream, args);
        dst.convert(stream);
      }
      stream.wait();
    });
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

struct Gemm::Impl {
  /// How beta * C enters: not at all, as matmul's bias (beta == 1, alpha == 1
  /// and C a row: the one bias form oneDNN runs in its jit gemm), or copied
  /// into y first and added by a sum post-op scaled by beta (oneDNN applies
  /// output scales after the bias, so alpha != 1 cannot use the bias).
  enum class CMode { None, Bias, Sum };

  dnnl::stream &stream;
  int64_t m, n, k;
  float beta;
  CMode cMode = CMode::None;
  int64_t cRows = 1, cCols = 1; // C broadcast to [cRows, cCols]
  Activation act;
  bool fusedAct = true;
  bool parallel; // worthThreads: else built and run in a SerialScope
  dnnl::matmul matmul;
  dnnl::memory src, bias, dst, scratchpad;
  Weights weights;
  Args args;

  Impl(Context &ctx, int64_t m, int64_t n, int64_t k, bool transA, bool transB,
       float alpha, float beta, const Shape *cShape, Activation act,
       bool constantB)
      : stream(ctx.impl().stream), m(m), n(n), k(k), beta(beta), act(act),
        parallel(worthThreads(2. * m * n * k + kCheapElementWork * m * n)) {
    if (m < 0 || n < 0 || k < 0)
      throw Error("Gemm: negative dimension m=" + std::to_string(m) +
                  " n=" + std::to_string(n) + " k=" + std::to_string(k));
    checkActivation("Gemm", act);
    if (cShape && beta != 0.f) {
      if (cShape->size() > 2)
        throw Error("Gemm: C of shape " + shapeString(*cShape) +
                    " has rank above 2");
      if (cShape->size() == 2)
        cRows = (*cShape)[0];
      if (!cShape->empty())
        cCols = cShape->back();
      if ((cRows != 1 && cRows != m) || (cCols != 1 && cCols != n))
        throw Error("Gemm: C of shape " + shapeString(*cShape) +
                    " does not broadcast to " + std::to_string(m) + "x" +
                    std::to_string(n));
      cMode = alpha == 1.f && beta == 1.f && cRows == 1 && cCols == n
                  ? CMode::Bias
                  : CMode::Sum;
    }
    // oneDNN cannot build a primitive over an empty dimension; run() handles
    // those shapes directly.
    if (m == 0 || n == 0 || k == 0)
      return;

    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("Gemm", [&] {
      dnnl::post_ops ops;
      if (cMode == CMode::Sum)
        ops.append_sum(beta);
      dnnl::primitive_attr attr = activationAttr(act, fusedAct, ops);
      if (alpha != 1.f)
        attr.set_output_scales(0, {alpha});
      auto srcDesc = matrixDesc(m, k, transA);
      auto userWeights = matrixDesc(k, n, transB);
      auto dstDesc = plainDesc({m, n});
      dnnl::memory::desc biasDesc;
      if (cMode == CMode::Bias)
        biasDesc = plainDesc({1, n});
      dnnl::matmul::desc desc(srcDesc,
                              constantB ? anyDesc({k, n}) : userWeights,
                              biasDesc, dstDesc);
      dnnl::matmul::primitive_desc pd(desc, attr, engine);
      matmul = dnnl::matmul(pd);
      src = placeholder(srcDesc, engine);
      dst = placeholder(dstDesc, engine);
      weights = Weights(engine, userWeights,
                        constantB ? pd.weights_desc() : userWeights);
      args = {{DNNL_ARG_SRC, src},
              {DNNL_ARG_WEIGHTS, weights.memory()},
              {DNNL_ARG_DST, dst}};
      if (cMode == CMode::Bias) {
        bias = placeholder(biasDesc, engine);
        args[DNNL_ARG_BIAS] = bias;
      }
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  /// y = C broadcast (times beta when `scaled`), for the sum post-op and the
  /// k == 0 case.
  void broadcastC(const float *c, float *y, bool scaled) const {
    float factor = scaled ? beta : 1.f;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; ++i) {
      const float *row = c + (cRows == 1 ? 0 : i * cCols);
      float *out = y + i * n;
      for (int64_t j = 0; j < n; ++j)
        out[j] = factor * row[cCols == 1 ? 0 : j];
    }
  }

  void run(const void *a, const void *b, const void *c, void *y) {
    float *out = static_cast<float *>(y);
    if (m == 0 || n == 0)
      return;
    SerialScope serial(!parallel);
    if (cMode != CMode::None && !c)
      throw Error("Gemm: C was declared but not passed");
    if (k == 0) {
      // The product is empty: y = act(beta * C).
      if (cMode == CMode::None)
        std::fill(out, out + m * n, 0.f);
      else
        broadcastC(static_cast<const float *>(c), out, true);
      applyActivation(act, out, m * n);
      return;
    }
    if (cMode == CMode::Sum)
      broadcastC(static_cast<const float *>(c), out, false);
    bind(src, a);
    weights.bind(stream, b);
    if (cMode == CMode::Bias)
      bind(bias, c);
    bind(dst, y);
    withDnnl("Gemm", [&] {
      matmul.execute(stream, args);
      stream.wait();
    });
    if (!fusedAct)
      applyActivation(act, out, m * n);
  }
};

Gemm::Gemm(Context &ctx, DType type, int64_t m, int64_t n, int64_t k,
           bool transA, bool transB, float alpha, float beta,
           const Shape *cShape, Activation act, bool constantB) {
  requireF32("Gemm", type);
  impl = std::make_unique<Impl>(ctx, m, n, k, transA, transB, alpha, beta,
                                cShape, act, constantB);
}

Gemm::~Gemm() = default;

void Gemm::run(const void *a, const void *b, const void *c, void *y) {
  impl->run(a, b, c, y);
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

struct MatMul::Impl {
  dnnl::stream &stream;
  int64_t elements = 0; // of y
  bool empty = false;   // a zero extent somewhere: nothing for oneDNN to do
  bool emptyK = false;  // K == 0: y is zeros (then the activation)
  Activation act;
  bool fusedAct = true;
  bool parallel = false; // worthThreads: else built and run in a SerialScope
  dnnl::matmul matmul;
  dnnl::memory src, dst, scratchpad;
  Weights weights;
  Args args;
  /// Every element type but f32 (no activation: only f32 ones are fused).
  std::optional<LoopMatMul> loops;

  Impl(Context &ctx, DType type, const Shape &aShape, const Shape &bShape,
       const Shape &yShape, Activation act, bool constantB)
      : stream(ctx.impl().stream), act(act) {
    checkActivation("MatMul", act);
    if (type != DType::F32)
      requireNoActivation("MatMul", type, act);
    if (aShape.empty() || bShape.empty())
      throw Error("MatMul: operands must have rank >= 1, got " +
                  shapeString(aShape) + " and " + shapeString(bShape));
    // numpy promotion: a 1-D A is a row, a 1-D B a column.
    Dims a(aShape.begin(), aShape.end()), b(bShape.begin(), bShape.end());
    if (a.size() == 1)
      a.insert(a.begin(), 1);
    if (b.size() == 1)
      b.push_back(1);
    size_t rank = std::max(a.size(), b.size());
    a.insert(a.begin(), rank - a.size(), 1);
    b.insert(b.begin(), rank - b.size(), 1);
    int64_t m = a[rank - 2], k = a[rank - 1], n = b[rank - 1];
    if (b[rank - 2] != k)
      throw Error("MatMul: inner dimensions of " + shapeString(aShape) +
                  " and " + shapeString(bShape) + " differ");
    Dims d(rank);
    bool bBatched = false;
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
        throw Error("MatMul: batch dimensions of " + shapeString(aShape) +
                    " and " + shapeString(bShape) + " do not broadcast");
      d[i] = std::max(a[i], b[i]);
      bBatched |= b[i] != 1;
    }
    d[rank - 2] = m;
    d[rank - 1] = n;
    elements = numElements(Shape(d.begin(), d.end()));
    if (numElements(yShape) != elements)
      throw Error("MatMul: y of shape " + shapeString(yShape) +
                  " does not hold the product's " + dimsString(d));
    if (elements == 0)
      empty = true;
    if (k == 0)
      emptyK = true;
    parallel = worthThreads(double(elements) * (2. * k + kCheapElementWork));
    if (type != DType::F32) {
      loops.emplace(type, Shape(a.begin(), a.end()), Shape(b.begin(), b.end()),
                    Shape(d.begin(), d.end()), parallel);
      return;
    }
    if (empty || emptyK)
      return;
    if (!bBatched && rank > 2) {
      // One B for every batch: fold A's batch dims into M for a single 2-D
      // gemm (the batches are contiguous in A and y).
      int64_t rows = elements / n;
      a = {rows, k};
      b = {k, n};
      d = {rows, n};
    }
    if (d.size() > DNNL_MAX_NDIMS)
      throw Error("MatMul: rank " + std::to_string(d.size()) +
                  " is above oneDNN's " + std::to_string(DNNL_MAX_NDIMS));

    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("MatMul", [&] {
      dnnl::primitive_attr attr = activationAttr(act, fusedAct);
      auto srcDesc = plainDesc(a), dstDesc = plainDesc(d);
      auto userWeights = plainDesc(b);
      dnnl::matmul::desc desc(srcDesc, constantB ? anyDesc(b) : userWeights,
                              dstDesc);
      dnnl::matmul::primitive_desc pd(desc, attr, engine);
      matmul = dnnl::matmul(pd);
      src = placeholder(srcDesc, engine);
      dst = placeholder(dstDesc, engine);
      weights = Weights(engine, userWeights,
                        constantB ? pd.weights_desc() : userWeights);
      args = {{DNNL_ARG_SRC, src},
              {DNNL_ARG_WEIGHTS, weights.memory()},
              {DNNL_ARG_DST, dst}};
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  void run(const void *a, const void *b, void *y) {
    float *out = static_cast<float *>(y);
    if (empty)
      return;
    if (loops)
      return loops->run(a, b, y); // a zero K sums nothing: zeros
    SerialScope serial(!parallel);
    if (emptyK) {
      std::fill(out, out + elements, 0.f);
      applyActivation(act, out, elements);
      return;
    }
    bind(src, a);
    weights.bind(stream, b);
    bind(dst, y);
    withDnnl("MatMul", [&] {
      matmul.execute(stream, args);
      stream.wait();
    });
    if (!fusedAct)
      applyActivation(act, out, elements);
  }
};

MatMul::MatMul(Context &ctx, DType type, const Shape &a, const Shape &b,
               const Shape &y, Activation act, bool constantB) {
  impl = std::make_unique<Impl>(ctx, type, a, b, y, act, constantB);
}

MatMul::~MatMul() = default;

void MatMul::run(const void *a, const void *b, void *y) { impl->run(a, b, y); }

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

struct Conv::Impl {
  dnnl::stream &stream;
  int64_t elements = 0; // of y
  bool hasBias;
  Activation act;
  bool fusedAct = true;
  /// options.residual: added by a binary post-op where the primitive
  /// writes the caller's layout itself, else by a loop after it.
  bool residual = false, fusedResidual = false;
  bool parallel = false; // worthThreads: else built and run in a SerialScope
  dnnl::convolution_forward conv;
  dnnl::memory bias, scratchpad, residualMemory;
  Weights weights;
  Args args;
  /// The batch runs `chunk` images at a time when x or y is reordered (all
  /// of it otherwise): the blocked copies of a chunk then stay in cache
  /// between the reorders and the convolution. xImage/yImage: elements of
  /// one image of x and y (the batch is outermost in every layout).
  int64_t batch = 1, chunk = 1, xImage = 0, yImage = 0;
  /// oneDNN's direct (jit) convolutions want channel-blocked activations:
  /// x and y as the caller lays them out (options.x/y), reordered per chunk
  /// where the primitive chose another layout.
  LayoutBridge src, dst;
  /// Every element type but f32: plain layouts, no fused activation or
  /// residual (the compiler fuses and reorders f32 convolutions only).
  std::optional<LoopConv> loops;
  /// 3x3 stride-1 convolutions between native tensors that
  /// WinogradConv::suits: fewer multiplies than oneDNN's.
  std::optional<WinogradConv> winograd;

  Impl(Context &ctx, DType type, const Shape &x, const Shape &w, bool hasBias,
       const Shape &y, const Shape &strides, const Shape &dilations,
       const Shape &padBegin, const Shape &padEnd, int64_t group,
       Activation act, bool constantWeights, ConvOptions options)
      : stream(ctx.impl().stream), hasBias(hasBias), act(act),
        residual(options.residual) {
    checkActivation("Conv", act);
    if (x.size() < 3 || x.size() > 5)
      throw Error("Conv: x of shape " + shapeString(x) +
                  " is not NC[D]HW with 1 to 3 spatial axes");
    size_t spatial = x.size() - 2;
    if (w.size() != x.size())
      throw Error("Conv: filter of shape " + shapeString(w) +
                  " does not have the rank of x " + shapeString(x));
    if (y.size() != x.size())
      throw Error("Conv: y of shape " + shapeString(y) +
                  " does not have the rank of x " + shapeString(x));
    auto checkSize = [&](const Shape &values, const char *name) {
      if (values.size() != spatial)
        throw Error(std::string("Conv: ") + name + " " + shapeString(values) +
                    " does not have one entry per spatial axis");
    };
    checkSize(strides, "strides");
    checkSize(dilations, "dilations");
    checkSize(padBegin, "padBegin");
    checkSize(padEnd, "padEnd");
    if (group < 1 || w[0] % group != 0 || x[1] != w[1] * group)
      throw Error("Conv: group " + std::to_string(group) + " does not fit x " +
                  shapeString(x) + " and filter " + shapeString(w));
    if (y[0] != x[0] || y[1] != w[0])
      throw Error("Conv: y of shape " + shapeString(y) + " does not match x " +
                  shapeString(x) + " and filter " + shapeString(w));

    Dims dnnlDilations(spatial), padLeft(padBegin.begin(), padBegin.end()),
        padRight(padEnd.begin(), padEnd.end());
    for (size_t i = 0; i != spatial; ++i) {
      if (strides[i] < 1 || dilations[i] < 1)
        throw Error("Conv: strides " + shapeString(strides) +
                    " and dilations " + shapeString(dilations) +
                    " must be positive");
      dnnlDilations[i] = dilations[i] - 1; // oneDNN counts the gaps
      // y is authoritative: pick the end pad that yields it (zero padding
      // past the input adds nothing to a convolution).
      int64_t extent = (w[i + 2] - 1) * dilations[i] + 1;
      int64_t floorOut =
          (x[i + 2] + padBegin[i] + padEnd[i] - extent) / strides[i] + 1;
      if (floorOut != y[i + 2])
        padRight[i] =
            (y[i + 2] - 1) * strides[i] + extent - x[i + 2] - padBegin[i];
    }
    elements = numElements(y);
    if (elements == 0 || numElements(x) == 0)
      throw Error("Conv: empty tensors are not supported, x " + shapeString(x) +
                  " y " + shapeString(y));
    batch = x[0];
    xImage = numElements(x) / batch;
    yImage = elements / batch;
    // 2 per multiply-add (w[1] input channels per group, times the taps),
    // plus moving x and y (the reorders of the blocked path).
    parallel = worthThreads(
        2. * double(elements) * double(numElements(w)) / double(w[0]) +
        kCheapElementWork * double(numElements(x) + elements));
    if (type != DType::F32) {
      requireNoActivation("Conv", type, act);
      if (residual || options.x != Layout::Plain || options.y != Layout::Plain)
        throw Error(std::string("Conv: a fused residual or a native layout "
                                "on ") +
                    dtypeName(type) + " is not supported");
      loops.emplace(type, x, w, hasBias, y, strides, dilations, padBegin, group,
                    parallel);
      return;
    }
    if (!options.exact && options.x == Layout::Native &&
        options.y == Layout::Native &&
        WinogradConv::suits(x, w, strides, dilations, group)) {
      winograd.emplace(
          WinogradConv::nativeGeometry(x, y, padBegin[0], padBegin[1]), hasBias,
          residual, act, constantWeights);
      return;
    }

    // Grouped filters are [G, Cout/G, Cin/G, k...], the same bytes as the
    // ONNX [Cout, Cin/G, k...].
    Dims filter(w.begin(), w.end());
    if (group > 1) {
      filter[0] /= group;
      filter.insert(filter.begin(), group);
    }
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("Conv", [&] {
      auto userWeights = plainDesc(filter);
      auto dims = [](const Shape &shape, int64_t images) {
        Dims out(shape.begin(), shape.end());
        out[0] = images;
        return out;
      };
      auto userX = [&](int64_t images) {
        return layoutDesc("Conv", dims(x, images), options.x);
      };
      auto userY = [&](int64_t images) {
        return layoutDesc("Conv", dims(y, images), options.y);
      };
      dnnl::memory::desc biasDesc;
      if (hasBias)
        biasDesc = plainDesc({w[0]});
      // Activations in the native layout where their channels allow it
      // (else plain), plain, or in the layout oneDNN picks; where that is not
      // the caller's, reordered per chunk. Post-ops: the residual (when
      // `withResidual`), then `activation` where oneDNN has it.
      enum class Activations { Native, Plain, Chosen };
      auto makePd = [&](int64_t images, Activations layout, bool withResidual,
                        const Activation &activation) {
        dnnl::post_ops ops;
        if (withResidual)
          ops.append_binary(dnnl::algorithm::binary_add, userY(images));
        dnnl::primitive_attr attr = activationAttr(activation, fusedAct, ops);
        auto activationDesc = [&](const Shape &shape) {
          Dims full = dims(shape, images);
          switch (layout) {
          case Activations::Native:
            return full[1] % kNativeChannelMultiple == 0
                       ? layoutDesc("Conv", full, Layout::Native)
                       : plainDesc(full);
          case Activations::Plain:
            return plainDesc(full);
          case Activations::Chosen:
            break;
          }
          return anyDesc(full);
        };
        // Weights in oneDNN's layout also when they change per run (then
        // repacked each run): the direct convolutions need blocked filters.
        bool blocked = layout != Activations::Plain;
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct, activationDesc(x),
            blocked || constantWeights ? anyDesc(filter) : userWeights,
            biasDesc, activationDesc(y), Dims(strides.begin(), strides.end()),
            dnnlDilations, padLeft, padRight);
        return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
      };
      // A direct kernel: "jit:avx2", "jit:avx512_core" or, on AVX-512
      // machines, "brgconv:avx512_core"; not "gemm:jit" (im2col) or "ref".
      auto isDirect = [](const dnnl::convolution_forward::primitive_desc &pd) {
        std::string impl = pd.impl_info_str();
        return impl.find("gemm") == std::string::npos &&
               impl.rfind("ref", 0) != 0;
      };
      // Blocked activations pay off once there are channels to block: a
      // direct kernel on the native layout if oneDNN has one (what native
      // callers hold: no reorders; on AVX-512 oneDNN's own pick for 16
      // channels is brgconv on channels last, and the reorders to it cost
      // more than the convolution), else on the layouts it picks. The same
      // kernel whatever the caller's layout, so that layouts change no bit
      // of a result. Plain when oneDNN would still pick gemm or its
      // reference.
      // `probe`: the one-image descriptor of the layouts taken.
      Activations layout = Activations::Plain;
      std::optional<dnnl::convolution_forward::primitive_desc> probe;
      if (x[1] >= 8 || y[1] >= 8)
        for (Activations candidate :
             {Activations::Native, Activations::Chosen}) {
          probe = makePd(1, candidate, false, act);
          if (isDirect(*probe)) {
            layout = candidate;
            break;
          }
          probe.reset();
        }
      if (!probe)
        probe = makePd(1, layout, false, act);
      // Chunks only where a reorder runs: the largest divisor of the batch
      // whose blocked chunk of x and y stays within about half the 1 MiB L2.
      chunk = batch;
      if (probe->src_desc() != userX(1) || probe->dst_desc() != userY(1)) {
        int64_t budget = (512 << 10) / int64_t(sizeof(float));
        chunk = 1;
        for (int64_t c = 1; c <= batch; ++c)
          if (batch % c == 0 && c * (xImage + yImage) <= budget)
            chunk = c;
      }
      // A binary post-op adds the residual where the primitive writes the
      // caller's layout and keeps its implementation; else run() adds it
      // with a loop after the reorder, and the activation after that.
      std::optional<dnnl::convolution_forward::primitive_desc> pd;
      if (residual) {
        auto fused = makePd(chunk, layout, true, act);
        if (fused.dst_desc() == userY(chunk) &&
            fused.impl_info_str() == probe->impl_info_str()) {
          pd = fused;
          fusedResidual = true;
        }
      }
      if (!pd)
        pd = makePd(chunk, layout, false, residual ? Activation{} : act);
      conv = dnnl::convolution_forward(*pd);
      src = LayoutBridge(engine, userX(chunk), pd->src_desc(), true);
      dst = LayoutBridge(engine, userY(chunk), pd->dst_desc(), false);
      weights =
          Weights(engine, userWeights, pd->weights_desc(), constantWeights);
      args = convArgs(src, weights, dst, hasBias, biasDesc, engine, bias);
      if (fusedResidual) {
        residualMemory = placeholder(userY(chunk), engine);
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
            residualMemory;
      }
      scratchpad = scratchpadFor(*pd, engine, args);
    });
  }

  void run(const void *x, const void *w, const void *b, void *y,
           const void *r) {
    if (hasBias && !b)
      throw Error("Conv: bias was declared but not passed");
    if (residual && !r)
      throw Error("Conv: a residual was declared but not passed");
    if (loops)
      return loops->run(x, w, b, y);
    if (winograd)
      return winograd->run(
          static_cast<const float *>(x), static_cast<const float *>(w),
          static_cast<const float *>(b), static_cast<const float *>(r),
          static_cast<float *>(y), parallel);
    const auto *res = static_cast<const float *>(r);
    auto *out = static_cast<float *>(y);
    ChunkedConv{"Conv", batch, chunk, xImage, yImage, parallel}.run(
        stream, conv, args, weights, w, hasBias ? &bias : nullptr, b, src, dst,
        static_cast<const float *>(x), out, [&](int64_t image) {
          if (fusedResidual)
            bind(residualMemory, res + image * yImage);
        });
    // y and the residual share a layout, so element i matches element i.
    if (residual && !fusedResidual) {
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t i = 0; i < elements; ++i)
        out[i] = activate(act, out[i] + res[i]);
    } else if (!fusedAct) {
      applyActivation(act, out, elements);
    }
  }
};

Conv::Conv(Context &ctx, DType type, const Shape &x, const Shape &w,
           bool hasBias, const Shape &y, const Shape &strides,
           const Shape &dilations, const Shape &padBegin, const Shape &padEnd,
           int64_t group, Activation act, bool constantWeights,
           ConvOptions options) {
  impl = std::make_unique<Impl>(ctx, type, x, w, hasBias, y, strides, dilations,
                                padBegin, padEnd, group, act, constantWeights,
                                options);
}

Conv::~Conv() = default;

void Conv::run(const void *x, const void *w, const void *bias, void *y,
               const void *residual) {
  impl->run(x, w, bias, y, residual);
}

//===----------------------------------------------------------------------===//
// Relayout
//===----------------------------------------------------------------------===//

struct Relayout::Impl {
  dnnl::stream &stream;
  bool copy = false; // the layouts coincide
  /// Between Plain and ChannelsLast, of any element type: our own copy.
  bool channelsLast = false;
  Shape shape;
  size_t elementBytes = 0, bytes = 0;
  Layout fromLayout = Layout::Plain, toLayout = Layout::Plain;
  bool parallel = false;
  dnnl::memory from, to, scratchpad;
  dnnl::reorder reorder;
  Args args;
};

Relayout::Relayout(Context &ctx, DType type, const Shape &shape, Layout from,
                   Layout to)
    : impl(new Impl{ctx.impl().stream}) {
  Impl &s = *impl;
  s.shape = shape;
  s.fromLayout = from;
  s.toLayout = to;
  s.elementBytes = dtypeSize(type);
  s.bytes = numElements(shape) * s.elementBytes;
  s.parallel = worthThreads(kCheapElementWork * double(numElements(shape)));
  if (from == to) {
    s.copy = true;
    return;
  }
  if (from == Layout::ChannelsLast || to == Layout::ChannelsLast) {
    if (from == Layout::Native || to == Layout::Native)
      throw Error("Relayout: no copy between the native and channels-last "
                  "layouts");
    if (shape.size() < 3 || shape.size() > 5)
      throw Error("Relayout: the channels-last layout needs an NC[D]HW "
                  "tensor, not " +
                  shapeString(shape));
    s.channelsLast = true;
    return;
  }
  requireF32("Relayout", type);
  Dims dims(shape.begin(), shape.end());
  const dnnl::engine &engine = ctx.impl().engine;
  auto fromDesc = layoutDesc("Relayout", dims, from);
  auto toDesc = layoutDesc("Relayout", dims, to);
  s.copy = fromDesc == toDesc;
  if (s.copy)
    return;
  SerialScope serial(!s.parallel);
  withDnnl("Relayout", [&] {
    s.from = placeholder(fromDesc, engine);
    s.to = placeholder(toDesc, engine);
    dnnl::reorder::primitive_desc pd(s.from, s.to, userScratchpad());
    s.reorder = dnnl::reorder(pd);
    s.args = {{DNNL_ARG_FROM, s.from}, {DNNL_ARG_TO, s.to}};
    s.scratchpad = scratchpadFor(pd, engine, s.args);
  });
}

Relayout::~Relayout() = default;

void Relayout::run(const void *x, void *y) {
  Impl &s = *impl;
  if (s.copy) {
    std::memcpy(y, x, s.bytes);
    return;
  }
  if (s.channelsLast) {
    copyChannelsLast(x, y, s.shape, s.elementBytes, s.fromLayout, s.toLayout,
                     s.parallel);
    return;
  }
  SerialScope serial(!s.parallel);
  bind(s.from, x);
  bind(s.to, y);
  withDnnl("Relayout", [&] {
    s.reorder.execute(s.stream, s.args);
    s.stream.wait();
  });
}

//===----------------------------------------------------------------------===//
// ConvGradInput, ConvGradFilter
//===----------------------------------------------------------------------===//

namespace {

/// The forward convolution both adjoints are derived from, checked like
/// Conv's and translated into oneDNN's terms, with the forward training
/// primitive descriptor oneDNN wants as the backward primitives' hint.
struct ConvGeometry {
  Dims src, weights, dst, strides, dilations, padLeft, padRight;
  double work = 0; // multiply-adds of the forward convolution, times 2

  ConvGeometry(const char *kernel, const Shape &x, const Shape &w,
               const Shape &y, const Shape &stride, const Shape &dilation,
               const Shape &padBegin, const Shape &padEnd, int64_t group) {
    auto fail = [&](const std::string &what) {
      throw Error(std::string(kernel) + ": " + what);
    };
    if (x.size() < 3 || x.size() > 5)
      fail("x of shape " + shapeString(x) +
           " is not NC[D]HW with 1 to 3 spatial axes");
    size_t spatial = x.size() - 2;
    if (w.size() != x.size() || y.size() != x.size())
      fail("filter " + shapeString(w) + " and y " + shapeString(y) +
           " do not have the rank of x " + shapeString(x));
    for (const Shape *values : {&stride, &dilation, &padBegin, &padEnd})
      if (values->size() != spatial)
        fail("strides, dilations and pads need one entry per spatial axis");
    if (group < 1 || w[0] % group != 0 || x[1] != w[1] * group)
      fail("group " + std::to_string(group) + " does not fit x " +
           shapeString(x) + " and filter " + shapeString(w));
    if (y[0] != x[0] || y[1] != w[0])
      fail("y of shape " + shapeString(y) + " does not match x " +
           shapeString(x) + " and filter " + shapeString(w));
    if (numElements(x) == 0 || numElements(y) == 0)
      fail("empty tensors are not supported, x " + shapeString(x) + " y " +
           shapeString(y));
    src.assign(x.begin(), x.end());
    dst.assign(y.begin(), y.end());
    strides.assign(stride.begin(), stride.end());
    padLeft.assign(padBegin.begin(), padBegin.end());
    padRight.assign(padEnd.begin(), padEnd.end());
    dilations.resize(spatial);
    for (size_t i = 0; i != spatial; ++i) {
      if (stride[i] < 1 || dilation[i] < 1)
        fail("strides " + shapeString(stride) + " and dilations " +
             shapeString(dilation) + " must be positive");
      dilations[i] = dilation[i] - 1; // oneDNN counts the gaps
      // As in Conv, y is authoritative.
      int64_t extent = (w[i + 2] - 1) * dilation[i] + 1;
      int64_t floorOut =
          (x[i + 2] + padBegin[i] + padEnd[i] - extent) / stride[i] + 1;
      if (floorOut != y[i + 2])
        padRight[i] =
            (y[i + 2] - 1) * stride[i] + extent - x[i + 2] - padBegin[i];
    }
    // Grouped filters are [G, Cout/G, Cin/G, k...], the bytes of ONNX's.
    weights.assign(w.begin(), w.end());
    if (group > 1) {
      weights[0] /= group;
      weights.insert(weights.begin(), group);
    }
    work = 2. * double(numElements(y)) * double(numElements(w)) / double(w[0]) +
           kCheapElementWork * double(numElements(x) + numElements(y));
  }

  /// The hint: the forward convolution in training mode, in the layouts
  /// oneDNN prefers.
  dnnl::convolution_forward::primitive_desc
  forwardHint(const dnnl::engine &engine) const {
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
        anyDesc(src), anyDesc(weights), anyDesc(dst), strides, dilations,
        padLeft, padRight);
    return dnnl::convolution_forward::primitive_desc(desc, engine);
  }
};

} // namespace

// Both adjoints let oneDNN choose the layouts of their operands and reorder
// the caller's plain tensors in and out: its blocked jit kernels beat the
// im2col + gemm ones the plain layouts get by far more than the reorders
// cost (ResNet-20's filter adjoints ran 5-8x slower on plain layouts).
struct ConvGradInput::Impl {
  dnnl::stream &stream;
  bool parallel = false;
  dnnl::convolution_backward_data primitive;
  LayoutBridge diffDst, weights, diffSrc;
  dnnl::memory scratchpad;
  Args args;
  /// dx = dy * flipped w^T by Winograd's transforms where it suits
  /// (WinogradConv::suitsInputAdjoint), between native tensors.
  std::optional<WinogradConv> winograd;

  Impl(Context &ctx, const ConvGeometry &geometry, ConvLayouts layouts,
       const std::optional<WinogradGeometry> &adjoint)
      : stream(ctx.impl().stream), parallel(worthThreads(geometry.work)) {
    if (adjoint) {
      winograd.emplace(*adjoint, false, false, Activation{}, false);
      return;
    }
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("ConvGradInput", [&] {
      dnnl::convolution_backward_data::desc desc(
          dnnl::algorithm::convolution_direct, anyDesc(geometry.src),
          anyDesc(geometry.weights), anyDesc(geometry.dst), geometry.strides,
          geometry.dilations, geometry.padLeft, geometry.padRight);
      dnnl::convolution_backward_data::primitive_desc pd(
          desc, userScratchpad(), engine, geometry.forwardHint(engine));
      primitive = dnnl::convolution_backward_data(pd);
      diffDst = LayoutBridge(
          engine, layoutDesc("ConvGradInput", geometry.dst, layouts.y),
          pd.diff_dst_desc(), true);
      weights = LayoutBridge(engine, plainDesc(geometry.weights),
                             pd.weights_desc(), true);
      diffSrc = LayoutBridge(
          engine, layoutDesc("ConvGradInput", geometry.src, layouts.x),
          pd.diff_src_desc(), false);
      args = {{DNNL_ARG_DIFF_DST, diffDst.memory()},
              {DNNL_ARG_WEIGHTS, weights.memory()},
              {DNNL_ARG_DIFF_SRC, diffSrc.memory()}};
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  void run(const void *dy, const void *w, void *dx) {
    if (winograd)
      return winograd->run(static_cast<const float *>(dy),
                           static_cast<const float *>(w), nullptr, nullptr,
                           static_cast<float *>(dx), parallel);
    SerialScope serial(!parallel);
    diffDst.bind(dy);
    weights.bind(w);
    diffSrc.bind(dx);
    withDnnl("ConvGradInput", [&] {
      diffDst.convert(stream);
      weights.convert(stream);
      primitive.execute(stream, args);
      diffSrc.convert(stream);
      stream.wait();
    });
  }
};

ConvGradInput::ConvGradInput(Context &ctx, DType type, const Shape &x,
                             const Shape &w, const Shape &y,
                             const Shape &strides, const Shape &dilations,
                             const Shape &padBegin, const Shape &padEnd,
                             int64_t group, ConvLayouts layouts) {
  requireF32("ConvGradInput", type);
  ConvGeometry geometry("ConvGradInput", x, w, y, strides, dilations, padBegin,
                        padEnd, group);
  std::optional<WinogradGeometry> adjoint;
  if (layouts.x == Layout::Native && layouts.y == Layout::Native &&
      WinogradConv::suitsInputAdjoint(x, w, y, strides, dilations, padBegin,
                                      group)) {
    // The adjoint slides over dy and writes dx.
    adjoint =
        WinogradConv::nativeGeometry(y, x, 2 - padBegin[0], 2 - padBegin[1]);
    adjoint->adjoint = true;
  }
  impl = std::make_unique<Impl>(ctx, geometry, layouts, adjoint);
}

ConvGradInput::~ConvGradInput() = default;

void ConvGradInput::run(const void *dy, const void *w, void *dx) {
  impl->run(dy, w, dx);
}

struct ConvGradFilter::Impl {
  dnnl::stream &stream;
  bool parallel = false;
  dnnl::convolution_backward_weights primitive;
  LayoutBridge src, diffDst, diffWeights;
  dnnl::memory scratchpad;
  Args args;

  Impl(Context &ctx, const ConvGeometry &geometry, ConvLayouts layouts)
      : stream(ctx.impl().stream), parallel(worthThreads(geometry.work)) {
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("ConvGradFilter", [&] {
      dnnl::convolution_backward_weights::desc desc(
          dnnl::algorithm::convolution_direct, anyDesc(geometry.src),
          anyDesc(geometry.weights), anyDesc(geometry.dst), geometry.strides,
          geometry.dilations, geometry.padLeft, geometry.padRight);
      dnnl::convolution_backward_weights::primitive_desc pd(
          desc, userScratchpad(), engine, geometry.forwardHint(engine));
      primitive = dnnl::convolution_backward_weights(pd);
      src = LayoutBridge(engine,
                         layoutDesc("ConvGradFilter", geometry.src, layouts.x),
                         pd.src_desc(), true);
      diffDst = LayoutBridge(
          engine, layoutDesc("ConvGradFilter", geometry.dst, layouts.y),
          pd.diff_dst_desc(), true);
      diffWeights = LayoutBridge(engine, plainDesc(geometry.weights),
                                 pd.diff_weights_desc(), false);
      args = {{DNNL_ARG_SRC, src.memory()},
              {DNNL_ARG_DIFF_DST, diffDst.memory()},
              {DNNL_ARG_DIFF_WEIGHTS, diffWeights.memory()}};
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  void run(const void *x, const void *dy, void *dw) {
    SerialScope serial(!parallel);
    src.bind(x);
    diffDst.bind(dy);
    diffWeights.bind(dw);
    withDnnl("ConvGradFilter", [&] {
      src.convert(stream);
      diffDst.convert(stream);
      primitive.execute(stream, args);
      diffWeights.convert(stream);
      stream.wait();
    });
  }
};

ConvGradFilter::ConvGradFilter(Context &ctx, DType type, const Shape &x,
                               const Shape &w, const Shape &y,
                               const Shape &strides, const Shape &dilations,
                               const Shape &padBegin, const Shape &padEnd,
                               int64_t group, ConvLayouts layouts) {
  requireF32("ConvGradFilter", type);
  impl =
      std::make_unique<Impl>(ctx,
                             ConvGeometry("ConvGradFilter", x, w, y, strides,
                                          dilations, padBegin, padEnd, group),
                             layouts);
}

ConvGradFilter::~ConvGradFilter() = default;

void ConvGradFilter::run(const void *x, const void *dy, void *dw) {
  impl->run(x, dy, dw);
}

//===----------------------------------------------------------------------===//
// IntegerConv
//===----------------------------------------------------------------------===//

namespace {

/// oneDNN's int8 convolutions without VNNI add pairs of u8 x s8 products in
/// 16 bits (vpmaddubsw), saturating; with |w| <= 64 a pair stays within
/// 255 * 128 = 32640. (For s8 x they halve the weights instead, so i8 x
/// never takes them.)
constexpr int64_t kMaxPairSafeWeight = 64;
/// They also convert the s32 sum to f32 to add the bias before storing s32:
/// exact while every partial value stays below 2^24.
constexpr double kExactFloatIntegers = double(1 << 24);

} // namespace

struct IntegerConv::Impl {
  dnnl::stream &stream;
  bool hasBias, constantWeights, parallel, u8Input;
  ConvLayouts layouts;
  Shape xShape, yShape;
  int64_t batch = 1, chunk = 1, xImage = 0, yImage = 0;
  int64_t xElements = 0, wElements = 0, outChannels = 0;
  dnnl::convolution_forward conv;
  dnnl::memory bias, scratchpad;
  Weights weights;
  Args args;
  LayoutBridge src, dst;
  /// The exact fallback for the operands oneDNN would not sum exactly: x and
  /// w widened to i32 and convolved by loops.
  LoopConv loops;
  std::vector<int32_t> wideX, wideW, plainX, plainY;
  /// The filter last measured (constant filters are measured once): per
  /// output channel the sum of |w|, and the largest |w| of all.
  const void *measured = nullptr;
  std::vector<double> absSums;
  int64_t maxAbs = 0;

  Impl(Context &ctx, DType xType, const ConvGeometry &geometry, const Shape &x,
       const Shape &w, bool hasBias, const Shape &y, const Shape &strides,
       const Shape &dilations, const Shape &padBegin, int64_t group,
       bool constantWeights, ConvLayouts layouts)
      : stream(ctx.impl().stream), hasBias(hasBias),
        constantWeights(constantWeights), parallel(worthThreads(geometry.work)),
        u8Input(xType == DType::U8), layouts(layouts), xShape(x), yShape(y),
        loops(DType::I32, x, w, hasBias, y, strides, dilations, padBegin, group,
              parallel) {
    if (xType != DType::U8 && xType != DType::I8)
      throw Error(std::string("IntegerConv: x must be u8 or i8, not ") +
                  dtypeName(xType));
    for (Layout layout : {layouts.x, layouts.y})
      if (layout == Layout::Native)
        throw Error("IntegerConv: x and y are plain or channels-last");
    batch = x[0];
    xElements = numElements(x);
    wElements = numElements(w);
    xImage = xElements / batch;
    yImage = numElements(y) / batch;
    outChannels = w[0];
    absSums.resize(outChannels);
    if (!u8Input)
      return;
    using dt = dnnl::memory::data_type;
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("IntegerConv", [&] {
      auto images = [](Dims dims, int64_t count) {
        dims[0] = count;
        return dims;
      };
      dnnl::memory::desc biasDesc;
      if (hasBias)
        biasDesc = plainDesc({outChannels}, dt::s32);
      auto makePd = [&](int64_t count) {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct,
            anyDesc(images(geometry.src, count), dt::u8),
            anyDesc(geometry.weights, dt::s8), biasDesc,
            anyDesc(images(geometry.dst, count), dt::s32), geometry.strides,
            geometry.dilations, geometry.padLeft, geometry.padRight);
        return dnnl::convolution_forward::primitive_desc(desc, userScratchpad(),
                                                         engine);
      };
      // The int8 kernels want channels last: x and y in another layout are
      // reordered a chunk of images at a time, sized so that both stay in
      // about half the L2. Callers holding channels-last ones reorder
      // nothing, and the whole batch runs in one call.
      constexpr int64_t kChunkBytes = 512 << 10;
      auto userDescs = [&](int64_t count) {
        return std::pair(layoutDesc("IntegerConv", images(geometry.src, count),
                                    layouts.x, dt::u8),
                         layoutDesc("IntegerConv", images(geometry.dst, count),
                                    layouts.y, dt::s32));
      };
      auto probe = makePd(1);
      auto [xProbe, yProbe] = userDescs(1);
      bool reorders = xProbe != probe.src_desc() || yProbe != probe.dst_desc();
      chunk = reorders ? 1 : batch;
      for (int64_t c = 1; reorders && c <= batch; ++c)
        if (batch % c == 0 &&
            c * (xImage + yImage * int64_t(sizeof(int32_t))) <= kChunkBytes)
          chunk = c;
      auto pd = chunk == 1 ? probe : makePd(chunk);
      conv = dnnl::convolution_forward(pd);
      auto [xUser, yUser] = userDescs(chunk);
      src = LayoutBridge(engine, xUser, pd.src_desc(), true);
      dst = LayoutBridge(engine, yUser, pd.dst_desc(), false);
      weights = Weights(engine, plainDesc(geometry.weights, dt::s8),
                        pd.weights_desc(), constantWeights);
      args = convArgs(src, weights, dst, hasBias, biasDesc, engine, bias);
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  void measure(const int8_t *w) {
    int64_t perChannel = wElements / outChannels;
    maxAbs = 0;
    for (int64_t k = 0; k < outChannels; ++k) {
      int64_t sum = 0;
      for (int64_t i = k * perChannel; i < (k + 1) * perChannel; ++i) {
        int64_t magnitude = std::abs(int64_t(w[i]));
        sum += magnitude;
        maxAbs = std::max(maxAbs, magnitude);
      }
      absSums[k] = double(sum);
    }
    measured = w;
  }

  /// Whether oneDNN's sums are exact for this filter and bias.
  bool int8Exact(const int32_t *b) const {
    if (!u8Input || maxAbs > kMaxPairSafeWeight)
      return false;
    for (int64_t k = 0; k < outChannels; ++k) {
      double bound = 255. * absSums[k] + (b ? std::abs(double(b[k])) : 0.);
      if (bound >= kExactFloatIntegers)
        return false;
    }
    return true;
  }

  void run(const void *x, const void *w, const void *b, void *y) {
    if (hasBias && !b)
      throw Error("IntegerConv: bias was declared but not passed");
    const auto *filter = static_cast<const int8_t *>(w);
    bool remeasure = !constantWeights || filter != measured;
    if (remeasure)
      measure(filter);
    if (!int8Exact(static_cast<const int32_t *>(b)))
      return runLoops(x, filter, b, y, remeasure);
    ChunkedConv{"IntegerConv", batch, chunk, xImage, yImage, parallel}.run(
        stream, conv, args, weights, w, hasBias ? &bias : nullptr, b, src, dst,
        static_cast<const uint8_t *>(x), static_cast<int32_t *>(y),
        [](int64_t) {});
  }

  /// The loops run on plain tensors: channels-last ones are copied to and
  /// from plain ones around them.
  void runLoops(const void *x, const int8_t *w, const void *b, void *y,
                bool widenFilter) {
    if (wideW.empty() || widenFilter)
      wideW.assign(w, w + wElements);
    wideX.resize(xElements);
    if (u8Input)
      std::copy_n(static_cast<const uint8_t *>(x), xElements, wideX.begin());
    else
      std::copy_n(static_cast<const int8_t *>(x), xElements, wideX.begin());
    const int32_t *loopX = wideX.data();
    if (layouts.x == Layout::ChannelsLast) {
      plainX.resize(xElements);
      copyChannelsLast(wideX.data(), plainX.data(), xShape, sizeof(int32_t),
                       Layout::ChannelsLast, Layout::Plain, parallel);
      loopX = plainX.data();
    }
    if (layouts.y != Layout::ChannelsLast)
      return loops.run(loopX, wideW.data(), b, y);
    plainY.resize(numElements(yShape));
    loops.run(loopX, wideW.data(), b, plainY.data());
    copyChannelsLast(plainY.data(), y, yShape, sizeof(int32_t), Layout::Plain,
                     Layout::ChannelsLast, parallel);
  }
};

IntegerConv::IntegerConv(Context &ctx, DType xType, const Shape &x,
                         const Shape &w, bool hasBias, const Shape &y,
                         const Shape &strides, const Shape &dilations,
                         const Shape &padBegin, const Shape &padEnd,
                         int64_t group, bool constantWeights,
                         ConvLayouts layouts) {
  ConvGeometry geometry("IntegerConv", x, w, y, strides, dilations, padBegin,
                        padEnd, group);
  impl = std::make_unique<Impl>(ctx, xType, geometry, x, w, hasBias, y, strides,
                                dilations, padBegin, group, constantWeights,
                                layouts);
}

IntegerConv::~IntegerConv() = default;

void IntegerConv::run(const void *x, const void *w, const void *bias, void *y) {
  impl->run(x, w, bias, y);
}

} // namespace heterps::rt::cpu
