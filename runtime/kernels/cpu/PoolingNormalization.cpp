//===- PoolingNormalization.cpp - Pools, norms, softmax, reductions -------===//
//
// oneDNN primitives built once per kernel, with loops where oneDNN has no
// exact (or no fast) equivalent: global pooling, the include-pad average of
// ceil-mode windows, and reductions oneDNN would only run in its reference
// implementation or not at all (f64, which the loop reduces as it does f32,
// and i32 / i64, whose sums wrap).
//
//===----------------------------------------------------------------------===//

#include "DnnlUtil.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace heterps::rt::cpu {

using namespace dnnl_util;
using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

Dims toDims(const Shape &shape) { return Dims(shape.begin(), shape.end()); }

/// oneDNN has no rank 0: a scalar is a one-element vector.
Dims atLeast1D(const Shape &shape) {
  return shape.empty() ? Dims{1} : toDims(shape);
}

/// Runs `primitive` with its bound arguments and waits for it, on one
/// thread unless the kernel is `parallel`.
void execute(const char *kernel, const dnnl::primitive &primitive,
             dnnl::stream &stream, const Args &args, bool parallel) {
  SerialScope serial(!parallel);
  withDnnl(kernel, [&] {
    primitive.execute(stream, args);
    stream.wait();
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Pool
//===----------------------------------------------------------------------===//

namespace {
/// The max of a window as the GPU kernels take it (numpy's): a NaN tap
/// makes it NaN, and a window of -inf is -inf. Before 2026-12-02 the loops
/// started from the lowest finite float and skipped NaN taps, so a window
/// of NaN or -inf gave -3.4e38.
inline float maxPropagatingNaN(float best, float tap) {
  return (tap > best || tap != tap) ? tap : best;
}

/// The same of four taps, as a max and a NaN test apart: GCC vectorizes
/// that better than three maxPropagatingNaN.
inline float maxOfFourPropagatingNaN(float a, float b, float c, float d) {
  const float m = std::max(std::max(a, b), std::max(c, d));
  const bool nan = (a != a) | (b != b) | (c != c) | (d != d);
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

/// One output row of a 2x2 stride-2 max pool from its two input rows;
/// returns how many outputs it wrote (a multiple of 4; the caller does the
/// rest). Without it the NaN-propagating max made MNIST's MLP at batch 256
/// 12% slower (bench_inference: 0.126 -> 0.142 ms).
inline int64_t maxPool2x2Row(const float *top, const float *bottom, float *row,
                             int64_t width) {
  int64_t ow = 0;
#ifdef __SSE2__
  const __m128 qnan = _mm_set1_ps(std::numeric_limits<float>::quiet_NaN());
  for (; ow + 4 <= width; ow += 4) {
    const __m128 t0 = _mm_loadu_ps(top + 2 * ow);
    const __m128 t1 = _mm_loadu_ps(top + 2 * ow + 4);
    const __m128 b0 = _mm_loadu_ps(bottom + 2 * ow);
    const __m128 b1 = _mm_loadu_ps(bottom + 2 * ow + 4);
    // Even and odd columns of each row: the two taps of each window.
    const __m128 te = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 to = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 be = _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 bo = _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 m = _mm_max_ps(_mm_max_ps(te, to), _mm_max_ps(be, bo));
    // maxps drops a NaN operand; the unordered compares find it.
    const __m128 nan =
        _mm_or_ps(_mm_cmpunord_ps(te, to), _mm_cmpunord_ps(be, bo));
    _mm_storeu_ps(row + ow,
                  _mm_or_ps(_mm_and_ps(nan, qnan), _mm_andnot_ps(nan, m)));
  }
#endif
  return ow;
}
} // namespace

struct Pool::Impl {
  dnnl::stream &stream;
  bool empty = false;
  dnnl::pooling_v2_forward pool;
  dnnl::memory src, dst, scratchpad;
  Args args;
  /// AvgIncludePad whose last windows reach past the explicit end pads
  /// (ceil mode): oneDNN would count those extra taps, so it runs the
  /// exclude-pad average and each output position is rescaled by
  /// (taps in input) / (taps in input + explicit pads); 0 marks a window
  /// with no input tap, whose average is 0.
  std::vector<float> rescale;
  int64_t planes = 0;    // N * C
  bool parallel = false; // worthThreads

  /// The own loop, used whenever every window holds an input tap: oneDNN
  /// runs pooling of plain NC[D]HW in its slow reference implementation, and
  /// a blocked layout would cost two reorders around a memory-bound
  /// primitive. Spatial axes are padded to three (D, H, W) with size 1.
  bool loop = false, max = false;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, window[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  /// Per axis and output index, the taps [tapBegin, tapEnd) inside the input.
  std::vector<int64_t> tapBegin[3], tapEnd[3];
  /// Per kw, the output columns [colBegin, colEnd) whose tap is inside.
  std::vector<int64_t> colBegin, colEnd;
  /// Average divisor per output position of a plane.
  std::vector<float> divisor;

  Impl(Context &ctx, PoolKind kind, const Shape &x, const Shape &y,
       const Shape &kernel, const Shape &strides, const Shape &dilations,
       const Shape &padBegin, const Shape &padEnd)
      : stream(ctx.impl().stream) {
    if (x.size() < 3 || x.size() > 5)
      throw Error("Pool: x of shape " + shapeString(x) +
                  " is not NC[D]HW with 1 to 3 spatial axes");
    size_t spatial = x.size() - 2;
    if (y.size() != x.size() || y[0] != x[0] || y[1] != x[1])
      throw Error("Pool: y of shape " + shapeString(y) + " does not match x " +
                  shapeString(x));
    auto checkSize = [&](const Shape &values, const char *name) {
      if (values.size() != spatial)
        throw Error(std::string("Pool: ") + name + " " + shapeString(values) +
                    " does not have one entry per spatial axis");
    };
    checkSize(kernel, "kernel");
    checkSize(strides, "strides");
    checkSize(dilations, "dilations");
    checkSize(padBegin, "padBegin");
    checkSize(padEnd, "padEnd");

    Dims dnnlDilations(spatial), padRight(padEnd.begin(), padEnd.end());
    bool clippedPastPads = false;
    for (size_t i = 0; i != spatial; ++i) {
      if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1)
        throw Error("Pool: kernel " + shapeString(kernel) + ", strides " +
                    shapeString(strides) + " and dilations " +
                    shapeString(dilations) + " must be positive");
      dnnlDilations[i] = dilations[i] - 1; // oneDNN counts the gaps
      // oneDNN derives the output size with floor division: take the end
      // pad that makes it produce exactly y (ceil mode needs a larger one).
      int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
      int64_t needed =
          (y[i + 2] - 1) * strides[i] + extent - x[i + 2] - padBegin[i];
      int64_t floorOut =
          (x[i + 2] + padBegin[i] + padEnd[i] - extent) / strides[i] + 1;
      if (floorOut != y[i + 2]) {
        padRight[i] = needed;
        clippedPastPads |= needed > padEnd[i];
      }
    }
    planes = x[0] * x[1];
    if (numElements(y) == 0) {
      empty = true;
      return;
    }
    // x read once, and a compare or add per tap of every window.
    parallel =
        worthThreads(kCheapElementWork * double(numElements(x)) +
                     2. * double(numElements(y)) * double(numElements(kernel)));
    if (numElements(x) == 0)
      throw Error("Pool: empty x of shape " + shapeString(x) +
                  " has no window to pool");

    if (buildLoop(kind, x, y, kernel, strides, dilations, padBegin, padEnd))
      return;

    algorithm alg = algorithm::pooling_max;
    if (kind == PoolKind::AvgExcludePad)
      alg = algorithm::pooling_avg_exclude_padding;
    if (kind == PoolKind::AvgIncludePad)
      alg = clippedPastPads ? algorithm::pooling_avg_exclude_padding
                            : algorithm::pooling_avg_include_padding;
    if (kind == PoolKind::AvgIncludePad && clippedPastPads)
      buildRescale(x, y, kernel, strides, dilations, padBegin, padEnd);

    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("Pool", [&] {
      auto srcDesc = plainDesc(toDims(x)), dstDesc = plainDesc(toDims(y));
      dnnl::pooling_v2_forward::desc desc(
          prop_kind::forward_inference, alg, srcDesc, dstDesc, toDims(strides),
          toDims(kernel), dnnlDilations, toDims(padBegin), padRight);
      dnnl::pooling_v2_forward::primitive_desc pd(desc, userScratchpad(),
                                                  engine);
      pool = dnnl::pooling_v2_forward(pd);
      src = placeholder(srcDesc, engine);
      dst = placeholder(dstDesc, engine);
      args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  /// Sets up the own loop; false when some window has no input tap (left
  /// to oneDNN, whose conventions then decide the value).
  bool buildLoop(PoolKind kind, const Shape &x, const Shape &y,
                 const Shape &kernel, const Shape &strides,
                 const Shape &dilations, const Shape &padBegin,
                 const Shape &padEnd) {
    size_t spatial = x.size() - 2, offset = 3 - spatial;
    // Per axis: taps inside the input, and inside input plus explicit pads.
    std::vector<int64_t> inPadded[3];
    for (size_t a = 0; a != 3; ++a) {
      if (a >= offset) {
        size_t i = a - offset;
        in[a] = x[i + 2];
        out[a] = y[i + 2];
        window[a] = kernel[i];
        stride[a] = strides[i];
        dilation[a] = dilations[i];
        pad[a] = padBegin[i];
      }
      int64_t padAfter = a >= offset ? padEnd[a - offset] : 0;
      for (int64_t o = 0; o != out[a]; ++o) {
        int64_t begin = window[a], end = 0, padded = 0;
        for (int64_t t = 0; t != window[a]; ++t) {
          int64_t pos = o * stride[a] - pad[a] + t * dilation[a];
          if (pos >= 0 && pos < in[a]) {
            begin = std::min(begin, t);
            end = t + 1;
          }
          padded += pos >= -pad[a] && pos < in[a] + padAfter;
        }
        if (end == 0)
          return false;
        tapBegin[a].push_back(begin);
        tapEnd[a].push_back(end);
        inPadded[a].push_back(padded);
      }
    }
    colBegin.assign(window[2], 0);
    colEnd.assign(window[2], 0);
    for (int64_t kw = 0; kw != window[2]; ++kw) {
      int64_t begin = out[2], end = 0;
      for (int64_t o = 0; o != out[2]; ++o) {
        int64_t pos = o * stride[2] - pad[2] + kw * dilation[2];
        if (pos >= 0 && pos < in[2]) {
          begin = std::min(begin, o);
          end = o + 1;
        }
      }
      colBegin[kw] = begin;
      colEnd[kw] = std::max(begin, end);
    }
    max = kind == PoolKind::Max;
    if (!max) {
      // Exclude-pad: taps inside the input; include-pad: taps inside the
      // explicit pads too (never those of a ceil-mode overhang).
      bool include = kind == PoolKind::AvgIncludePad;
      divisor.reserve(out[0] * out[1] * out[2]);
      for (int64_t d = 0; d != out[0]; ++d)
        for (int64_t h = 0; h != out[1]; ++h)
          for (int64_t w = 0; w != out[2]; ++w) {
            auto count = [&](size_t a, int64_t o) {
              return include ? inPadded[a][o] : tapEnd[a][o] - tapBegin[a][o];
            };
            divisor.push_back(float(count(0, d) * count(1, h) * count(2, w)));
          }
    }
    loop = true;
    return true;
  }

  /// One output row (fixed n, c, od, oh) from a plane of the input.
  template <int64_t Stride>
  void poolRow(const float *__restrict plane, float *__restrict row, int64_t od,
               int64_t oh, int64_t sw) const {
    int64_t width = out[2];
    std::fill(row, row + width,
              max ? -std::numeric_limits<float>::infinity() : 0.f);
    int64_t s = Stride ? Stride : sw;
    for (int64_t kd = tapBegin[0][od]; kd < tapEnd[0][od]; ++kd) {
      int64_t id = od * stride[0] - pad[0] + kd * dilation[0];
      for (int64_t kh = tapBegin[1][oh]; kh < tapEnd[1][oh]; ++kh) {
        int64_t ih = oh * stride[1] - pad[1] + kh * dilation[1];
        const float *inRow = plane + (id * in[1] + ih) * in[2];
        for (int64_t kw = 0; kw < window[2]; ++kw) {
          // Input column of output column ow: base + ow * s.
          const float *base = inRow - pad[2] + kw * dilation[2];
          int64_t begin = colBegin[kw], end = colEnd[kw];
          if (max) {
            for (int64_t ow = begin; ow < end; ++ow)
              row[ow] = maxPropagatingNaN(row[ow], base[ow * s]);
          } else {
            for (int64_t ow = begin; ow < end; ++ow)
              row[ow] += base[ow * s];
          }
        }
      }
    }
    if (!max) {
      const float *div = divisor.data() + (od * out[1] + oh) * width;
      for (int64_t ow = 0; ow < width; ++ow)
        row[ow] /= div[ow];
    }
  }

  /// Whether the windows are the 2x2 stride-2 tiling of a 2-D plane (the
  /// common downsampling pool), which runs as one pass per output row.
  bool isTiled2x2() const {
    return in[0] == 1 && window[1] == 2 && window[2] == 2 && stride[1] == 2 &&
           stride[2] == 2 && dilation[1] == 1 && dilation[2] == 1 &&
           pad[1] == 0 && pad[2] == 0 && 2 * out[1] <= in[1] &&
           2 * out[2] <= in[2];
  }

  template <bool Max>
  void runTiled2x2(const float *__restrict x, float *__restrict y) const {
    int64_t inPlane = in[1] * in[2], outPlane = out[1] * out[2];
    int64_t height = out[1], width = out[2], inWidth = in[2];
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t plane = 0; plane < planes; ++plane) {
      for (int64_t oh = 0; oh < height; ++oh) {
        const float *top = x + plane * inPlane + 2 * oh * inWidth;
        const float *bottom = top + inWidth;
        float *row = y + plane * outPlane + oh * width;
        const int64_t done = Max ? maxPool2x2Row(top, bottom, row, width) : 0;
        for (int64_t ow = done; ow < width; ++ow) {
          float a = top[2 * ow], b = top[2 * ow + 1], c = bottom[2 * ow],
                d = bottom[2 * ow + 1];
          if (Max) {
            row[ow] = maxOfFourPropagatingNaN(a, b, c, d);
          } else {
            row[ow] = (((a + b) + c) + d) / 4.f;
          }
        }
      }
    }
  }

  void runLoop(const float *x, float *y) const {
    if (isTiled2x2()) {
      if (max)
        runTiled2x2<true>(x, y);
      else
        runTiled2x2<false>(x, y);
      return;
    }
    int64_t inPlane = in[0] * in[1] * in[2],
            outPlane = out[0] * out[1] * out[2];
    int64_t rows = out[0] * out[1], sw = stride[2];
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float *src = x + plane * inPlane;
      float *dst = y + plane * outPlane;
      for (int64_t r = 0; r < rows; ++r) {
        // Constant strides 1 and 2 let the compiler vectorise the gathers.
        float *row = dst + r * out[2];
        if (sw == 1)
          poolRow<1>(src, row, r / out[1], r % out[1], sw);
        else if (sw == 2)
          poolRow<2>(src, row, r / out[1], r % out[1], sw);
        else
          poolRow<0>(src, row, r / out[1], r % out[1], sw);
      }
    }
  }

  void buildRescale(const Shape &x, const Shape &y, const Shape &kernel,
                    const Shape &strides, const Shape &dilations,
                    const Shape &padBegin, const Shape &padEnd) {
    size_t spatial = x.size() - 2;
    // Per axis and output index: taps inside the input, and inside the
    // input plus explicit pads.
    std::vector<std::vector<int64_t>> inInput(spatial), inPadded(spatial);
    for (size_t i = 0; i != spatial; ++i) {
      for (int64_t o = 0; o != y[i + 2]; ++o) {
        int64_t input = 0, padded = 0;
        for (int64_t t = 0; t != kernel[i]; ++t) {
          int64_t pos = o * strides[i] - padBegin[i] + t * dilations[i];
          input += pos >= 0 && pos < x[i + 2];
          padded += pos >= -padBegin[i] && pos < x[i + 2] + padEnd[i];
        }
        inInput[i].push_back(input);
        inPadded[i].push_back(padded);
      }
    }
    int64_t positions = numElements(Shape(y.begin() + 2, y.end()));
    rescale.resize(positions);
    for (int64_t p = 0; p != positions; ++p) {
      int64_t rest = p, input = 1, padded = 1;
      for (size_t i = spatial; i-- > 0;) {
        int64_t o = rest % y[i + 2];
        rest /= y[i + 2];
        input *= inInput[i][o];
        padded *= inPadded[i][o];
      }
      rescale[p] = input == 0 ? 0.f : float(input) / float(padded);
    }
  }

  void run(const void *x, void *y) {
    if (empty)
      return;
    if (loop) {
      runLoop(static_cast<const float *>(x), static_cast<float *>(y));
      return;
    }
    bind(src, x);
    bind(dst, y);
    execute("Pool", pool, stream, args, parallel);
    if (rescale.empty())
      return;
    float *out = static_cast<float *>(y);
    int64_t positions = rescale.size();
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t plane = 0; plane < planes; ++plane) {
      float *row = out + plane * positions;
      for (int64_t p = 0; p < positions; ++p)
        row[p] = rescale[p] == 0.f ? 0.f : row[p] * rescale[p];
    }
  }
};

Pool::Pool(Context &ctx, DType type, PoolKind kind, const Shape &x,
           const Shape &y, const Shape &kernel, const Shape &strides,
           const Shape &dilations, const Shape &padBegin, const Shape &padEnd) {
  requireF32("Pool", type);
  impl = std::make_unique<Impl>(ctx, kind, x, y, kernel, strides, dilations,
                                padBegin, padEnd);
}

Pool::~Pool() = default;

void Pool::run(const void *x, void *y) { impl->run(x, y); }

//===----------------------------------------------------------------------===//
// GlobalPool
//===----------------------------------------------------------------------===//

/// A loop rather than oneDNN: each (n, c) plane is one contiguous run, which
/// a vectorised reduction reads at memory speed, while oneDNN's pooling of a
/// plain layout would go through its reference or a layout transposition.
struct GlobalPool::Impl {
  bool max;
  int64_t planes = 0, planeSize = 1;
  bool parallel = false; // worthThreads

  Impl(bool max, const Shape &x) : max(max) {
    if (x.size() < 2)
      throw Error("GlobalPool: x of shape " + shapeString(x) +
                  " has no channel axis");
    planes = x[0] * x[1];
    for (size_t i = 2; i < x.size(); ++i)
      planeSize *= x[i];
    parallel = worthThreads(kCheapElementWork * double(planes * planeSize));
  }

  void run(const void *x, void *y) {
    const float *in = static_cast<const float *>(x);
    float *out = static_cast<float *>(y);
    int64_t size = planeSize;
    if (max) {
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t plane = 0; plane < planes; ++plane) {
        const float *row = in + plane * size;
        float best = -std::numeric_limits<float>::infinity();
        bool nan = false;
#pragma omp simd reduction(max : best) reduction(|| : nan)
        for (int64_t i = 0; i < size; ++i) {
          best = std::max(best, row[i]);
          nan = nan || row[i] != row[i];
        }
        out[plane] = nan ? std::numeric_limits<float>::quiet_NaN() : best;
      }
      return;
    }
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float *row = in + plane * size;
      float sum = 0.f;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < size; ++i)
        sum += row[i];
      out[plane] = sum / float(size);
    }
  }
};

GlobalPool::GlobalPool(Context &, DType type, bool max, const Shape &x) {
  requireF32("GlobalPool", type);
  impl = std::make_unique<Impl>(max, x);
}

GlobalPool::~GlobalPool() = default;

void GlobalPool::run(const void *x, void *y) { impl->run(x, y); }

//===----------------------------------------------------------------------===//
// BatchNorm
//===----------------------------------------------------------------------===//

struct BatchNorm::Impl {
  dnnl::stream &stream;
  bool empty = false;
  bool parallel = false; // worthThreads
  dnnl::batch_normalization_forward norm;
  dnnl::memory src, dst, mean, variance, scale, shift, scratchpad;
  Args args;

  Impl(Context &ctx, const Shape &x, float epsilon)
      : stream(ctx.impl().stream) {
    if (x.size() < 2)
      throw Error("BatchNorm: x of shape " + shapeString(x) +
                  " has no channel axis");
    if (numElements(x) == 0) {
      empty = true;
      return;
    }
    // The spatial axes fold into one: the statistics are per channel only.
    // As NCHW with W = 1: oneDNN 2.6 has a fast plain-layout kernel for 2-D
    // and 4-D/5-D data but only its reference for 3-D.
    Dims dims = {x[0], x[1]};
    if (x.size() > 2)
      dims.insert(dims.end(),
                  {numElements(Shape(x.begin() + 2, x.end())), int64_t(1)});
    parallel = worthThreads(kCheapElementWork * double(numElements(x)));
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("BatchNorm", [&] {
      auto flags = dnnl::normalization_flags::use_global_stats |
                   dnnl::normalization_flags::use_scale |
                   dnnl::normalization_flags::use_shift;
      auto data = plainDesc(dims), channels = plainDesc({x[1]});
      dnnl::batch_normalization_forward::primitive_desc pd(
          dnnl::batch_normalization_forward::desc(prop_kind::forward_inference,
                                                  data, epsilon, flags),
          userScratchpad(), engine);
      norm = dnnl::batch_normalization_forward(pd);
      src = placeholder(data, engine);
      dst = placeholder(data, engine);
      mean = placeholder(channels, engine);
      variance = placeholder(channels, engine);
      scale = placeholder(channels, engine);
      shift = placeholder(channels, engine);
      args = {{DNNL_ARG_SRC, src},     {DNNL_ARG_DST, dst},
              {DNNL_ARG_MEAN, mean},   {DNNL_ARG_VARIANCE, variance},
              {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}};
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  void run(const void *x, const void *scaleData, const void *biasData,
           const void *meanData, const void *varianceData, void *y) {
    if (empty)
      return;
    bind(src, x);
    bind(dst, y);
    bind(mean, meanData);
    bind(variance, varianceData);
    bind(scale, scaleData);
    bind(shift, biasData);
    execute("BatchNorm", norm, stream, args, parallel);
  }
};

BatchNorm::BatchNorm(Context &ctx, DType type, const Shape &x, float epsilon) {
  requireF32("BatchNorm", type);
  impl = std::make_unique<Impl>(ctx, x, epsilon);
}

BatchNorm::~BatchNorm() = default;

void BatchNorm::run(const void *x, const void *scale, const void *bias,
                    const void *mean, const void *variance, void *y) {
  impl->run(x, scale, bias, mean, variance, y);
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

struct LayerNorm::Impl {
  dnnl::stream &stream;
  bool empty = false, hasBias;
  bool parallel = false; // worthThreads
  dnnl::layer_normalization_forward norm;
  dnnl::memory src, dst, scale, shift, scratchpad;
  Args args;
  /// Scale and bias stored smaller than x[axis:]: scaleSource[i] is the
  /// stored element of normalised position i, expanded into the scratch
  /// vectors on each run (the values may change between runs).
  std::vector<int64_t> scaleSource;
  std::vector<float> scaleScratch, shiftScratch;

  Impl(Context &ctx, const Shape &x, int64_t axis, float epsilon,
       const Shape &scaleShape, bool hasBias)
      : stream(ctx.impl().stream), hasBias(hasBias) {
    if (axis < 0 || axis >= int64_t(x.size()))
      throw Error("LayerNorm: axis " + std::to_string(axis) +
                  " is out of range for x of shape " + shapeString(x));
    // oneDNN normalises the last axis: fold [axis, rank) into one.
    Shape normalised(x.begin() + axis, x.end());
    int64_t outer = numElements(Shape(x.begin(), x.begin() + axis));
    int64_t inner = numElements(normalised);
    if (scaleShape.size() > normalised.size())
      throw Error("LayerNorm: scale of shape " + shapeString(scaleShape) +
                  " has a higher rank than x[axis:] " +
                  shapeString(normalised));
    size_t offset = normalised.size() - scaleShape.size();
    for (size_t i = 0; i != scaleShape.size(); ++i)
      if (scaleShape[i] != 1 && scaleShape[i] != normalised[offset + i])
        throw Error("LayerNorm: scale of shape " + shapeString(scaleShape) +
                    " does not broadcast to " + shapeString(normalised));
    if (numElements(scaleShape) != inner)
      buildScaleSource(normalised, scaleShape);
    if (outer * inner == 0) {
      empty = true;
      return;
    }

    parallel = worthThreads(kNormElementWork * double(outer * inner));
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("LayerNorm", [&] {
      auto flags = dnnl::normalization_flags::use_scale;
      if (hasBias)
        flags = flags | dnnl::normalization_flags::use_shift;
      auto data = plainDesc({outer, inner}), row = plainDesc({inner});
      dnnl::layer_normalization_forward::primitive_desc pd(
          dnnl::layer_normalization_forward::desc(prop_kind::forward_inference,
                                                  data, epsilon, flags),
          userScratchpad(), engine);
      norm = dnnl::layer_normalization_forward(pd);
      src = placeholder(data, engine);
      dst = placeholder(data, engine);
      scale = placeholder(row, engine);
      args = {
          {DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE, scale}};
      if (hasBias) {
        shift = placeholder(row, engine);
        args[DNNL_ARG_SHIFT] = shift;
      }
      // Inference computes the statistics internally; a scratch is only
      // given should this oneDNN build still ask for them.
      if (pd.mean_desc().get_size() != 0) {
        args[DNNL_ARG_MEAN] = dnnl::memory(pd.mean_desc(), engine);
        args[DNNL_ARG_VARIANCE] = dnnl::memory(pd.variance_desc(), engine);
      }
      scratchpad = scratchpadFor(pd, engine, args);
    });
  }

  void buildScaleSource(const Shape &normalised, const Shape &scaleShape) {
    size_t rank = normalised.size(), offset = rank - scaleShape.size();
    // Stride of each normalised axis in the stored scale (0 if broadcast).
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (size_t i = scaleShape.size(); i-- > 0;) {
      if (scaleShape[i] != 1)
        strides[offset + i] = stride;
      stride *= scaleShape[i];
    }
    int64_t inner = numElements(normalised);
    scaleSource.resize(inner);
    for (int64_t p = 0; p != inner; ++p) {
      int64_t rest = p, source = 0;
      for (size_t i = rank; i-- > 0;) {
        source += rest % normalised[i] * strides[i];
        rest /= normalised[i];
      }
      scaleSource[p] = source;
    }
    scaleScratch.resize(inner);
    if (hasBias)
      shiftScratch.resize(inner);
  }

  /// The stored parameter, or its expansion to x[axis:].
  const void *expand(const void *stored, std::vector<float> &scratch) {
    if (scaleSource.empty())
      return stored;
    const float *values = static_cast<const float *>(stored);
    for (size_t i = 0; i != scaleSource.size(); ++i)
      scratch[i] = values[scaleSource[i]];
    return scratch.data();
  }

  void run(const void *x, const void *scaleData, const void *biasData,
           void *y) {
    if (empty)
      return;
    if (hasBias && !biasData)
      throw Error("LayerNorm: bias was declared but not passed");
    bind(src, x);
    bind(dst, y);
    bind(scale, expand(scaleData, scaleScratch));
    if (hasBias)
      bind(shift, expand(biasData, shiftScratch));
    execute("LayerNorm", norm, stream, args, parallel);
  }
};

LayerNorm::LayerNorm(Context &ctx, DType type, const Shape &x, int64_t axis,
                     float epsilon, const Shape &scaleShape, bool hasBias) {
  requireF32("LayerNorm", type);
  impl = std::make_unique<Impl>(ctx, x, axis, epsilon, scaleShape, hasBias);
}

LayerNorm::~LayerNorm() = default;

void LayerNorm::run(const void *x, const void *scale, const void *bias,
                    void *y) {
  impl->run(x, scale, bias, y);
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

struct Softmax::Impl {
  dnnl::stream &stream;
  bool empty = false, log;
  bool f64;              // the loop only: oneDNN 2.6 has no f64 softmax
  bool parallel = false; // worthThreads
  dnnl::primitive softmax;
  dnnl::memory src, dst, scratchpad;
  Args args;
  /// x as [outer, axis, inner]. oneDNN 2.6 only has a reference kernel for
  /// an axis that is not innermost; the loop then vectorises along `inner`.
  bool useLoop = false;
  int64_t outer = 1, axisSize = 1, inner = 1;

  Impl(Context &ctx, const Shape &x, int64_t axis, bool log, bool f64)
      : stream(ctx.impl().stream), log(log), f64(f64) {
    Dims dims = atLeast1D(x);
    if (axis < 0 || axis >= int64_t(dims.size()))
      throw Error("Softmax: axis " + std::to_string(axis) +
                  " is out of range for x of shape " + shapeString(x));
    if (numElements(x) == 0) {
      empty = true;
      return;
    }
    for (int64_t i = 0; i != int64_t(dims.size()); ++i)
      (i < axis ? outer : i == axis ? axisSize : inner) *= dims[i];
    parallel =
        worthThreads(kTranscendentalElementWork * double(numElements(x)));
    if (f64) {
      useLoop = true;
      return;
    }
    const dnnl::engine &engine = ctx.impl().engine;
    SerialScope serial(!parallel);
    withDnnl("Softmax", [&] {
      auto data = plainDesc(dims);
      src = placeholder(data, engine);
      dst = placeholder(data, engine);
      args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
      if (log) {
        dnnl::logsoftmax_forward::primitive_desc pd(
            dnnl::logsoftmax_forward::desc(prop_kind::forward_inference, data,
                                           int(axis)),
            userScratchpad(), engine);
        useLoop = isReference(pd);
        softmax = dnnl::logsoftmax_forward(pd);
        scratchpad = scratchpadFor(pd, engine, args);
      } else {
        dnnl::softmax_forward::primitive_desc pd(
            dnnl::softmax_forward::desc(prop_kind::forward_inference, data,
                                        int(axis)),
            userScratchpad(), engine);
        useLoop = isReference(pd);
        softmax = dnnl::softmax_forward(pd);
        scratchpad = scratchpadFor(pd, engine, args);
      }
    });
  }

  static bool isReference(const dnnl::primitive_desc &pd) {
    return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
  }

  /// Makes every entry of a row NaN where one is: oneDNN leaves the others
  /// of a row holding NaN or +inf (whose sum of exponentials is NaN) finite,
  /// where onnxruntime and runColumns give NaN throughout.
  void spreadNaN(float *out) const {
    const int64_t block = axisSize * inner;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        float *row = out + o * block + i;
        bool nan = false;
        for (int64_t a = 0; a < axisSize; ++a)
          nan |= std::isnan(row[a * inner]);
        if (nan)
          for (int64_t a = 0; a < axisSize; ++a)
            row[a * inner] = std::numeric_limits<float>::quiet_NaN();
      }
  }

  /// Columns [begin, end) of one [axis, inner] block: max, then the sum of
  /// exp(x - max), then the result, each pass contiguous along inner.
  template <typename T>
  void runColumns(const T *in, T *out, int64_t begin, int64_t end, T *top,
                  T *sum) const {
    int64_t width = end - begin;
    in += begin;
    out += begin;
    std::fill(top, top + width, -std::numeric_limits<T>::infinity());
    std::fill(sum, sum + width, T(0));
    for (int64_t a = 0; a < axisSize; ++a) {
      const T *row = in + a * inner;
#pragma omp simd
      for (int64_t i = 0; i < width; ++i)
        top[i] = std::max(top[i], row[i]);
    }
    for (int64_t a = 0; a < axisSize; ++a) {
      const T *row = in + a * inner;
      T *result = out + a * inner;
      for (int64_t i = 0; i < width; ++i) {
        T shifted = row[i] - top[i];
        T e = std::exp(shifted);
        sum[i] += e;
        result[i] = log ? shifted : e;
      }
    }
    for (int64_t i = 0; i < width; ++i)
      sum[i] = log ? std::log(sum[i]) : T(1) / sum[i];
    for (int64_t a = 0; a < axisSize; ++a) {
      T *result = out + a * inner;
      if (log) {
#pragma omp simd
        for (int64_t i = 0; i < width; ++i)
          result[i] -= sum[i];
      } else {
#pragma omp simd
        for (int64_t i = 0; i < width; ++i)
          result[i] *= sum[i];
      }
    }
  }

  void run(const void *x, void *y) {
    if (empty)
      return;
    if (!useLoop) {
      bind(src, x);
      bind(dst, y);
      execute("Softmax", softmax, stream, args, parallel);
      spreadNaN(static_cast<float *>(y));
      return;
    }
    if (f64)
      runLoop(static_cast<const double *>(x), static_cast<double *>(y));
    else
      runLoop(static_cast<const float *>(x), static_cast<float *>(y));
  }

  template <typename T> void runLoop(const T *in, T *out) const {
    // Work items are column chunks of each block, so that a small outer
    // extent still spreads over the threads.
    constexpr int64_t chunk = 256;
    int64_t chunks = (inner + chunk - 1) / chunk, block = axisSize * inner;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t item = 0; item < outer * chunks; ++item) {
      T top[chunk], sum[chunk];
      int64_t o = item / chunks, begin = item % chunks * chunk;
      runColumns(in + o * block, out + o * block, begin,
                 std::min(begin + chunk, inner), top, sum);
    }
  }
};

Softmax::Softmax(Context &ctx, DType type, const Shape &x, int64_t axis,
                 bool log) {
  if (type != DType::F64)
    requireF32("Softmax", type);
  impl = std::make_unique<Impl>(ctx, x, axis, log, type == DType::F64);
}

Softmax::~Softmax() = default;

void Softmax::run(const void *x, void *y) { impl->run(x, y); }

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

struct Reduce::Impl {
  dnnl::stream &stream;
  ReduceKind kind;
  /// F32, F64, I32 or I64; oneDNN 2.6 reduces only the first, the loop
  /// every one.
  DType type;
  bool useDnnl = false;
  bool parallel = false; // worthThreads
  dnnl::reduction reduction;
  dnnl::memory src, dst, scratchpad;
  Args args;
  /// The loop: x offset of each output's first element, and the offsets of
  /// the reduced elements relative to it.
  std::vector<int64_t> outputBase, reducedOffsets;
  /// Sum or mean over the leading axes only (a bias's gradient): x read as
  /// [leadingRows, leadingCols] and summed row after row, contiguously.
  int64_t leadingRows = 0, leadingCols = 0;
  int64_t inputElements = 0;

  Impl(Context &ctx, ReduceKind kind, const Shape &x,
       const std::vector<int64_t> &axes, const Shape &y, DType type)
      : stream(ctx.impl().stream), kind(kind), type(type) {
    if (axes.empty())
      throw Error("Reduce: axes must not be empty");
    std::vector<bool> reduced(x.size(), false);
    for (int64_t axis : axes) {
      if (axis < 0 || axis >= int64_t(x.size()) || reduced[axis])
        throw Error("Reduce: axis " + std::to_string(axis) +
                    " is out of range or repeated for x of shape " +
                    shapeString(x));
      reduced[axis] = true;
    }
    Shape kept = x;
    bool reducesSomething = false;
    for (int64_t axis : axes) {
      kept[axis] = 1;
      reducesSomething |= x[axis] != 1;
    }
    if (numElements(y) != numElements(kept))
      throw Error("Reduce: y of shape " + shapeString(y) +
                  " does not hold the result " + shapeString(kept));
    inputElements = numElements(x);

    parallel =
        worthThreads(double(numElements(x)) * (kind == ReduceKind::LogSumExp
                                                   ? kTranscendentalElementWork
                                                   : kCheapElementWork));
    // oneDNN where it is exact and has a real implementation: it needs at
    // least one axis that shrinks and no empty extent, and its reference
    // reduction is slower than the loop below.
    if (type == DType::F32 && kind != ReduceKind::LogSumExp &&
        reducesSomething && numElements(x) != 0)
      useDnnl = tryDnnl(ctx.impl().engine, x, kept);
    if (!useDnnl || kind == ReduceKind::Max || kind == ReduceKind::Min)
      buildLoop(x, reduced);
  }

  bool tryDnnl(const dnnl::engine &engine, const Shape &x, const Shape &kept) {
    algorithm alg = algorithm::reduction_sum;
    float p = 0.f;
    dnnl::post_ops ops;
    switch (kind) {
    case ReduceKind::Sum:
      break;
    case ReduceKind::Mean:
      alg = algorithm::reduction_mean;
      break;
    case ReduceKind::Max:
      alg = algorithm::reduction_max;
      break;
    case ReduceKind::Min:
      alg = algorithm::reduction_min;
      break;
    case ReduceKind::Prod:
      alg = algorithm::reduction_mul;
      break;
    case ReduceKind::L1:
      alg = algorithm::reduction_norm_lp_sum, p = 1.f;
      break;
    case ReduceKind::L2:
      alg = algorithm::reduction_norm_lp_sum, p = 2.f;
      break;
    case ReduceKind::SumSquare:
      alg = algorithm::reduction_norm_lp_power_p_sum, p = 2.f;
      break;
    case ReduceKind::LogSum:
      ops.append_eltwise(1.f, algorithm::eltwise_log, 0.f, 0.f);
      break;
    case ReduceKind::LogSumExp:
      return false;
    }
    try {
      SerialScope serial(!parallel);
      dnnl::primitive_attr attr = userScratchpad();
      if (ops.len() > 0)
        attr.set_post_ops(ops);
      auto srcDesc = plainDesc(atLeast1D(x)),
           dstDesc = plainDesc(atLeast1D(kept));
      dnnl::reduction::primitive_desc pd(
          dnnl::reduction::desc(alg, srcDesc, dstDesc, p, 0.f), attr, engine);
      if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0)
        return false;
      reduction = dnnl::reduction(pd);
      src = placeholder(srcDesc, engine);
      dst = placeholder(dstDesc, engine);
      args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
      scratchpad = scratchpadFor(pd, engine, args);
      return true;
    } catch (const dnnl::error &) {
      return false; // the loop computes every kind
    }
  }

  void buildLoop(const Shape &x, const std::vector<bool> &reduced) {
    size_t rank = x.size();
    Shape strides(rank);
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      strides[i] = stride;
      stride *= x[i];
    }
    // Enumerates, row-major over the axes where `select` holds, the x
    // offsets of those positions.
    auto offsets = [&](bool select) {
      std::vector<int64_t> result{0};
      for (size_t i = 0; i != rank; ++i) {
        if (reduced[i] != select)
          continue;
        std::vector<int64_t> next;
        next.reserve(result.size() * x[i]);
        for (int64_t base : result)
          for (int64_t j = 0; j != x[i]; ++j)
            next.push_back(base + j * strides[i]);
        result = std::move(next);
      }
      return result;
    };
    outputBase = offsets(false);
    reducedOffsets = offsets(true);
    size_t prefix = 0;
    while (prefix < rank && reduced[prefix])
      ++prefix;
    // Floats only: integer sums wrap (reduceOneInteger).
    const bool floats = type == DType::F32 || type == DType::F64;
    if (floats && (kind == ReduceKind::Sum || kind == ReduceKind::Mean) &&
        prefix > 0 && prefix < rank &&
        std::none_of(reduced.begin() + prefix, reduced.end(),
                     [](bool r) { return r; })) {
      leadingRows = reducedOffsets.size();
      leadingCols = outputBase.size();
    }
  }

  /// The leading-axes sum (or mean): the same additions in the same order
  /// as reduceOne, a block of columns at a time with its accumulators in
  /// L1, so the rows are read contiguously instead of a column at a time.
  template <typename T> void reduceLeading(const T *in, T *out) const {
    using Acc =
        std::conditional_t<std::is_same_v<T, float>, double, long double>;
    constexpr int64_t kBlock = 256;
    const int64_t blocks = (leadingCols + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallel && blocks > 1)
    for (int64_t block = 0; block < blocks; ++block) {
      const int64_t first = block * kBlock,
                    width = std::min(kBlock, leadingCols - first);
      Acc acc[kBlock] = {};
      for (int64_t row = 0; row < leadingRows; ++row) {
        const T *x = in + row * leadingCols + first;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j)
          acc[j] += x[j];
      }
      for (int64_t j = 0; j < width; ++j)
        out[first + j] =
            T(kind == ReduceKind::Mean ? acc[j] / Acc(leadingRows) : acc[j]);
    }
  }

  /// One output from the elements at `base` + reducedOffsets; sums and
  /// products accumulate in double (f32 inputs) or long double (f64).
  template <typename T> T reduceOne(const T *base) const {
    using Acc =
        std::conditional_t<std::is_same_v<T, float>, double, long double>;
    const std::vector<int64_t> &at = reducedOffsets;
    size_t count = at.size();
    Acc acc = 0;
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
    case ReduceKind::LogSum:
      for (size_t i = 0; i != count; ++i)
        acc += base[at[i]];
      if (kind == ReduceKind::Mean)
        acc /= Acc(count); // NaN over an empty set, as 0 / 0
      if (kind == ReduceKind::LogSum)
        acc = std::log(acc);
      return T(acc);
    // As onnxruntime: the first element, replaced by each greater (less)
    // one. A NaN never replaces it, and one that comes first stays, so
    // ArgMax (built on this) finds what onnxruntime finds.
    case ReduceKind::Max: {
      T best = count ? base[at[0]] : -std::numeric_limits<T>::infinity();
      for (size_t i = 1; i < count; ++i)
        if (base[at[i]] > best)
          best = base[at[i]];
      return best;
    }
    case ReduceKind::Min: {
      T best = count ? base[at[0]] : std::numeric_limits<T>::infinity();
      for (size_t i = 1; i < count; ++i)
        if (base[at[i]] < best)
          best = base[at[i]];
      return best;
    }
    case ReduceKind::Prod:
      acc = 1;
      for (size_t i = 0; i != count; ++i)
        acc *= base[at[i]];
      return T(acc);
    case ReduceKind::L1:
      for (size_t i = 0; i != count; ++i)
        acc += std::fabs(base[at[i]]);
      return T(acc);
    case ReduceKind::L2:
    case ReduceKind::SumSquare:
      for (size_t i = 0; i != count; ++i)
        acc += Acc(base[at[i]]) * base[at[i]];
      return T(kind == ReduceKind::L2 ? std::sqrt(acc) : acc);
    case ReduceKind::LogSumExp: {
      // Shifted by the maximum so that exp cannot overflow.
      T top = -std::numeric_limits<T>::infinity();
      for (size_t i = 0; i != count; ++i)
        top = std::max(top, base[at[i]]);
      if (std::isinf(top))
        return top; // empty, all -inf, or a +inf term
      for (size_t i = 0; i != count; ++i)
        acc += std::exp(Acc(base[at[i]]) - top);
      return T(top + std::log(acc));
    }
    }
    return T(0);
  }

  /// reduceOne for integers: sums, products and squares wrap (through the
  /// unsigned type; onnxruntime's results past the type's range differ),
  /// a mean divides the sum, the logarithms and L2 are computed in double
  /// and truncated.
  template <typename T> T reduceOneInteger(const T *base) const {
    using U = std::make_unsigned_t<T>;
    const std::vector<int64_t> &at = reducedOffsets;
    const size_t count = at.size();
    auto sumOf = [&](auto term) {
      U acc = 0;
      for (size_t i = 0; i != count; ++i)
        acc += term(base[at[i]]);
      return T(acc);
    };
    auto value = [](T x) { return U(x); };
    auto magnitude = [](T x) { return x < 0 ? U(0) - U(x) : U(x); };
    auto square = [](T x) { return U(x) * U(x); };
    switch (kind) {
    case ReduceKind::Sum:
      return sumOf(value);
    case ReduceKind::Mean:
      return count ? T(sumOf(value) / T(count)) : T(0);
    case ReduceKind::LogSum:
      return T(std::log(double(sumOf(value))));
    case ReduceKind::Max:
    case ReduceKind::Min: {
      const bool max = kind == ReduceKind::Max;
      T best = count ? base[at[0]]
               : max ? std::numeric_limits<T>::lowest()
                     : std::numeric_limits<T>::max();
      for (size_t i = 1; i < count; ++i)
        if (max ? base[at[i]] > best : base[at[i]] < best)
          best = base[at[i]];
      return best;
    }
    case ReduceKind::Prod: {
      U acc = 1;
      for (size_t i = 0; i != count; ++i)
        acc *= U(base[at[i]]);
      return T(acc);
    }
    case ReduceKind::L1:
      return sumOf(magnitude);
    case ReduceKind::SumSquare:
      return sumOf(square);
    case ReduceKind::L2: {
      // In double, as onnxruntime: the squares of large ids overflow.
      double acc = 0;
      for (size_t i = 0; i != count; ++i)
        acc += double(base[at[i]]) * double(base[at[i]]);
      return T(std::sqrt(acc));
    }
    case ReduceKind::LogSumExp: {
      double top = -std::numeric_limits<double>::infinity(), acc = 0;
      for (size_t i = 0; i != count; ++i)
        top = std::max(top, double(base[at[i]]));
      for (size_t i = 0; i != count; ++i)
        acc += std::exp(double(base[at[i]]) - top);
      return count ? T(top + std::log(acc)) : std::numeric_limits<T>::lowest();
    }
    }
    return T(0);
  }

  template <typename T> void runLoop(const void *x, void *y) const {
    const T *in = static_cast<const T *>(x);
    T *out = static_cast<T *>(y);
    if constexpr (std::is_floating_point_v<T>)
      if (leadingRows > 0) // floats only (buildLoop)
        return reduceLeading(in, out);
    int64_t outputs = outputBase.size();
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outputs; ++o)
      if constexpr (std::is_integral_v<T>)
        out[o] = reduceOneInteger(in + outputBase[o]);
      else
        out[o] = reduceOne(in + outputBase[o]);
  }

  /// oneDNN 2.6's max (min) starts from the lowest (highest) finite float,
  /// so a set of only -inf (+inf) reduces to that, not to the infinity (an
  /// attention row with every key masked is one). Outputs at that bound are
  /// recomputed by the loop, which is exact.
  void fixInfiniteExtremes(const void *x, void *y) const {
    if (kind != ReduceKind::Max && kind != ReduceKind::Min)
      return;
    float bound = kind == ReduceKind::Max ? std::numeric_limits<float>::lowest()
                                          : std::numeric_limits<float>::max();
    const float *in = static_cast<const float *>(x);
    float *out = static_cast<float *>(y);
    for (size_t o = 0; o != outputBase.size(); ++o)
      if (out[o] == bound)
        out[o] = reduceOne(in + outputBase[o]);
  }

  /// Whether the input holds a NaN, where oneDNN's max (min) depends on
  /// its position within a vector.
  bool holdsNaN(const void *x) const {
    if (kind != ReduceKind::Max && kind != ReduceKind::Min)
      return false;
    const float *in = static_cast<const float *>(x);
    bool found = false;
#pragma omp simd reduction(|| : found)
    for (int64_t i = 0; i < inputElements; ++i)
      found = found || in[i] != in[i];
    return found;
  }

  void run(const void *x, void *y) {
    if (useDnnl && !holdsNaN(x)) {
      bind(src, x);
      bind(dst, y);
      execute("Reduce", reduction, stream, args, parallel);
      fixInfiniteExtremes(x, y);
    } else if (type == DType::F64) {
      runLoop<double>(x, y);
    } else if (type == DType::I64) {
      runLoop<int64_t>(x, y);
    } else if (type == DType::I32) {
      runLoop<int32_t>(x, y);
    } else {
      runLoop<float>(x, y);
    }
  }
};

Reduce::Reduce(Context &ctx, DType type, ReduceKind kind, const Shape &x,
               const std::vector<int64_t> &axes, const Shape &y) {
  if (type != DType::F64 && type != DType::I32 && type != DType::I64)
    requireF32("Reduce", type);
  impl = std::make_unique<Impl>(ctx, kind, x, axes, y, type);
}

Reduce::~Reduce() = default;

void Reduce::run(const void *x, void *y) { impl->run(x, y); }

} // namespace heterps::rt::cpu
