//===- WinogradConv.cpp - 3x3 convolutions by Winograd's F(2x2, 3x3) ------===//
//
// Work is split into groups of six 2x2 output tiles, taken in order over
// (image, tile row, tile column). For one group, everything stays in L1:
// the input transform writes V[16 positions][6 tiles][C], each block of 16
// output channels multiplies it by U[position][C][16] into M[16][6][16]
// (a 12-accumulator product: 2 vectors of 8 channels by 6 tiles), and the
// output transform adds bias and residual, applies the activation and
// writes y. Vectors are GCC's 8-float vector extension, AVX2 with the
// kernels' -march; a 16-channel native block is two of them.
//
//===----------------------------------------------------------------------===//

#include "WinogradConv.h"

#include "DnnlUtil.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <string>
#include <vector>

namespace heterps::rt::cpu {

namespace {

using Vec = float __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;
/// Output channels per product: two vectors.
constexpr int64_t kPair = 2 * kLanes;
/// Tiles per group: 2 x 6 accumulators, 2 filter vectors and a broadcast
/// fill 15 of the 16 AVX2 registers.
constexpr int64_t kGroup = 6;
/// Transform positions of a 4x4 tile.
constexpr int64_t kPositions = 16;
/// Largest transformed filter (bytes) the kernel takes: it is read once per
/// group of tiles, from L2 or L3. Measured against oneDNN on the 2 AVX2
/// cores, 8 images: 1.9x at 256 channels in and out (4 MiB), 0.94x at 512
/// (16 MiB).
constexpr int64_t kMaxFilterBytes = 4 << 20;
/// Below 32 channels in or out the products are short and the transforms'
/// loads and stores dominate: such a convolution wins only while its x and
/// y stay in cache. ResNet-20's 16-channel 32x32 layer on the 2 AVX2 cores
/// against oneDNN: 1.4x at batch 4 (x and y 0.25 MiB each), 0.8x at batch
/// 64 (4 MiB each), 1.0x at batch 256 (docs/benchmarks/conv-layers.md).
constexpr int64_t kNarrowMaxBytes = 2 << 20;

inline Vec load(const float *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float *p, Vec v) { std::memcpy(p, &v, sizeof v); }
inline Vec splat(float s) { return Vec{s, s, s, s, s, s, s, s}; }
inline Vec zeros() { return splat(0.0f); }

/// m[t] (two vectors per tile) = sum over c of u[c] (16 channels) * v[t][c].
template <int Tiles>
void multiply(const float *u, const float *v, int64_t channels, float *m) {
  Vec low[Tiles], high[Tiles];
#pragma GCC unroll 8
  for (int t = 0; t < Tiles; ++t)
    low[t] = high[t] = zeros();
  for (int64_t c = 0; c < channels; ++c) {
    Vec u0 = load(u + c * kPair), u1 = load(u + c * kPair + kLanes);
#pragma GCC unroll 8
    for (int t = 0; t < Tiles; ++t) {
      Vec b = splat(v[t * channels + c]);
      low[t] += u0 * b;
      high[t] += u1 * b;
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < Tiles; ++t) {
    store(m + t * kPair, low[t]);
    store(m + t * kPair + kLanes, high[t]);
  }
}

using MultiplyFn = void (*)(const float *, const float *, int64_t, float *);
constexpr MultiplyFn kMultiply[kGroup + 1] = {
    nullptr,     multiply<1>, multiply<2>, multiply<3>,
    multiply<4>, multiply<5>, multiply<6>};

} // namespace

bool WinogradConv::suits(const Shape &x, const Shape &w, const Shape &strides,
                         const Shape &dilations, int64_t group) {
  static const bool enabled = [] {
    const char *setting = std::getenv("HETERPS_CPU_WINOGRAD");
    return !setting || std::string(setting) != "0";
  }();
  if (!enabled || x.size() != 4 || w.size() != 4 || group != 1 || w[2] != 3 ||
      w[3] != 3 || strides != Shape{1, 1} || dilations != Shape{1, 1})
    return false;
  const int64_t in = x[1], out = w[0], pixels = x[2] * x[3];
  const int64_t bytes = x[0] * (in + out) * pixels * int64_t(sizeof(float));
  return in % kNativeChannelMultiple == 0 &&
         out % kNativeChannelMultiple == 0 &&
         (std::min(in, out) >= 32 || bytes <= kNarrowMaxBytes) &&
         kPositions * in * out * int64_t(sizeof(float)) <= kMaxFilterBytes;
}

bool WinogradConv::suitsInputAdjoint(const Shape &x, const Shape &w,
                                     const Shape &y, const Shape &strides,
                                     const Shape &dilations,
                                     const Shape &padBegin, int64_t group) {
  if (x.size() != 4 || w.size() != 4 || y.size() != 4 || padBegin.size() != 2 ||
      padBegin[0] > 2 || padBegin[1] > 2)
    return false;
  return suits(y, Shape{x[1], y[1], w[2], w[3]}, strides, dilations, group);
}

struct WinogradConv::Impl {
  WinogradGeometry g;
  bool hasBias, residual;
  Activation act;
  bool constantWeights;
  const float *transformedFrom = nullptr;
  int64_t tileRows, tileCols, tiles, groups;
  /// U[pair of 8-channel output blocks][position][C][16].
  std::vector<float> filter;
  /// Per thread: V, then M.
  std::vector<std::vector<float>> scratch;

  Impl(const WinogradGeometry &geometry, bool hasBias, bool residual,
       Activation act, bool constantWeights)
      : g(geometry), hasBias(hasBias), residual(residual), act(act),
        constantWeights(constantWeights) {
    if (g.block % kLanes != 0 || g.inChannels % g.block != 0 ||
        g.outChannels % kPair != 0 || g.outChannels % g.block != 0 ||
        g.outHeight < 1 || g.outWidth < 1 || g.padTop < 0 || g.padLeft < 0)
      throw Error("WinogradConv: unsupported geometry (C " +
                  std::to_string(g.inChannels) + ", K " +
                  std::to_string(g.outChannels) + ", block " +
                  std::to_string(g.block) + ")");
    tileRows = (g.outHeight + 1) / 2;
    tileCols = (g.outWidth + 1) / 2;
    tiles = g.batch * tileRows * tileCols;
    groups = (tiles + kGroup - 1) / kGroup;
    filter.resize(kPositions * g.inChannels * g.outChannels);
  }

  /// U = G g G^T per (k, c), G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
  void transformFilter(const float *w) {
    const int64_t in = g.inChannels;
    for (int64_t k = 0; k < g.outChannels; ++k)
      for (int64_t c = 0; c < in; ++c) {
        const float *f = w + (k * in + c) * 9;
        float flipped[9];
        if (g.adjoint) {
          // Tap (a, b) of the adjoint is tap (2 - a, 2 - b) of the forward
          // filter's [c][k].
          const float *forward = w + (c * g.outChannels + k) * 9;
          for (int t = 0; t < 9; ++t)
            flipped[t] = forward[8 - t];
          f = flipped;
        }
        float rows[4][3];
        for (int j = 0; j < 3; ++j) {
          float a = f[j], b = f[3 + j], d = f[6 + j];
          rows[0][j] = a;
          rows[1][j] = 0.5f * (a + b + d);
          rows[2][j] = 0.5f * (a - b + d);
          rows[3][j] = d;
        }
        for (int i = 0; i < 4; ++i) {
          float a = rows[i][0], b = rows[i][1], d = rows[i][2];
          float u[4] = {a, 0.5f * (a + b + d), 0.5f * (a - b + d), d};
          for (int j = 0; j < 4; ++j)
            filter[(((k / kPair) * kPositions + i * 4 + j) * in + c) * kPair +
                   k % kPair] = u[j];
        }
      }
  }

  /// Offset of channel `c`'s lane 0 in image n's first pixel (c a multiple
  /// of 8) in a blocked tensor of `channels` and `pixels` per channel.
  int64_t plane(int64_t n, int64_t c, int64_t channels, int64_t pixels) const {
    return (n * (channels / g.block) + c / g.block) * pixels * g.block +
           c % g.block;
  }

  struct Segment {
    int64_t image, tileRow, firstCol, count;
  };
  /// The tiles [first, first + count) in runs along one tile row.
  template <typename Fn>
  void forSegments(int64_t first, int64_t count, Fn fn) const {
    const int64_t perImage = tileRows * tileCols;
    for (int64_t t = 0; t < count;) {
      int64_t flat = first + t, image = flat / perImage, rest = flat % perImage,
              row = rest / tileCols, col = rest % tileCols;
      int64_t run = std::min(count - t, tileCols - col);
      fn(Segment{image, row, col, run}, t);
      t += run;
    }
  }

  /// V[position][t0 + t][C] = B^T d B for the segment's tiles, with
  /// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. The column pass is
  /// done once per input column and shared by the two tiles reading it.
  void transformInput(const float *x, const Segment &s, int64_t t0,
                      int64_t groupTiles, float *v) const {
    const int64_t in = g.inChannels, H = g.height, W = g.width;
    const int64_t top = 2 * s.tileRow - g.padTop,
                  left = 2 * s.firstCol - g.padLeft, span = 2 * s.count + 2;
    bool rowInside[4];
    for (int i = 0; i < 4; ++i)
      rowInside[i] = top + i >= 0 && top + i < H;
    const int64_t colBegin = std::max<int64_t>(0, -left),
                  colEnd = std::min<int64_t>(span, W - left);
    Vec cols[4][2 * kGroup + 2];
    for (int64_t c = 0; c < in; c += kLanes) {
      const float *p = x + plane(s.image, c, in, H * W);
      for (int64_t col = 0; col < span; ++col) {
        Vec d[4];
        bool colInside = col >= colBegin && col < colEnd;
        for (int i = 0; i < 4; ++i)
          d[i] = colInside && rowInside[i]
                     ? load(p + ((top + i) * W + left + col) * g.block)
                     : zeros();
        cols[0][col] = d[0] - d[2];
        cols[1][col] = d[1] + d[2];
        cols[2][col] = d[2] - d[1];
        cols[3][col] = d[1] - d[3];
      }
      for (int64_t t = 0; t < s.count; ++t) {
        float *out = v + (t0 + t) * in + c;
        const int64_t stride = groupTiles * in;
        for (int i = 0; i < 4; ++i) {
          const Vec *r = &cols[i][2 * t];
          store(out + (i * 4 + 0) * stride, r[0] - r[2]);
          store(out + (i * 4 + 1) * stride, r[1] + r[2]);
          store(out + (i * 4 + 2) * stride, r[2] - r[1]);
          store(out + (i * 4 + 3) * stride, r[1] - r[3]);
        }
      }
    }
  }

  /// The activations applied on whole vectors; the rest lane by lane.
  enum class Mode { Identity, Relu, LeakyRelu, Lanes };

  template <Mode M> Vec activateVector(Vec v) const {
    if constexpr (M == Mode::Identity)
      return v;
    if constexpr (M == Mode::Relu)
      return v > 0.0f ? v : zeros();
    if constexpr (M == Mode::LeakyRelu)
      return v >= 0.0f ? v : v * act.params.alpha;
    for (int64_t i = 0; i < kLanes; ++i)
      v[i] = dnnl_util::activate(act, v[i]);
    return v;
  }

  /// y = act(A^T M A + bias + residual) for the segment's tiles and the
  /// output channels [pair * 16, + 16), A^T = [1 1 1 0; 0 1 -1 -1].
  template <Mode M, bool Residual>
  void transformOutput(const float *m, const Segment &s, int64_t t0,
                       int64_t groupTiles, int64_t pair, const float *bias,
                       const float *res, float *y) const {
    const int64_t out = g.outChannels, OH = g.outHeight, OW = g.outWidth;
    const int64_t stride = groupTiles * kPair;
    for (int64_t half = 0; half < 2; ++half) {
      const int64_t k = pair * kPair + half * kLanes;
      const int64_t base = plane(s.image, k, out, OH * OW);
      const Vec b = hasBias ? load(bias + k) : zeros();
      for (int64_t t = 0; t < s.count; ++t) {
        const float *mt = m + (t0 + t) * kPair + half * kLanes;
        Vec rows[2][4];
        for (int j = 0; j < 4; ++j) {
          Vec m0 = load(mt + (0 * 4 + j) * stride),
              m1 = load(mt + (1 * 4 + j) * stride),
              m2 = load(mt + (2 * 4 + j) * stride),
              m3 = load(mt + (3 * 4 + j) * stride);
          rows[0][j] = m0 + m1 + m2;
          rows[1][j] = m1 - m2 - m3;
        }
        const int64_t oh0 = 2 * s.tileRow, ow0 = 2 * (s.firstCol + t);
        for (int64_t i = 0; i < 2 && oh0 + i < OH; ++i) {
          const Vec *r = rows[i];
          Vec values[2] = {r[0] + r[1] + r[2], r[1] - r[2] - r[3]};
          for (int64_t j = 0; j < 2 && ow0 + j < OW; ++j) {
            int64_t at = base + ((oh0 + i) * OW + ow0 + j) * g.block;
            Vec value = values[j] + b;
            if constexpr (Residual)
              value += load(res + at);
            store(y + at, activateVector<M>(value));
          }
        }
      }
    }
  }

  template <Mode M>
  void transformOutput(const float *m, const Segment &s, int64_t t0,
                       int64_t groupTiles, int64_t pair, const float *bias,
                       const float *res, float *y) const {
    if (residual)
      transformOutput<M, true>(m, s, t0, groupTiles, pair, bias, res, y);
    else
      transformOutput<M, false>(m, s, t0, groupTiles, pair, bias, res, y);
  }

  void transformOutput(const float *m, const Segment &s, int64_t t0,
                       int64_t groupTiles, int64_t pair, const float *bias,
                       const float *res, float *y) const {
    switch (act.kind) {
    case UnaryKind::Identity:
      return transformOutput<Mode::Identity>(m, s, t0, groupTiles, pair, bias,
                                             res, y);
    case UnaryKind::Relu:
      return transformOutput<Mode::Relu>(m, s, t0, groupTiles, pair, bias, res,
                                         y);
    case UnaryKind::LeakyRelu:
      return transformOutput<Mode::LeakyRelu>(m, s, t0, groupTiles, pair, bias,
                                              res, y);
    default:
      return transformOutput<Mode::Lanes>(m, s, t0, groupTiles, pair, bias, res,
                                          y);
    }
  }

  void runGroup(const float *x, const float *bias, const float *res, float *y,
                int64_t group, float *v, float *m) const {
    const int64_t first = group * kGroup,
                  count = std::min(kGroup, tiles - first);
    forSegments(first, count, [&](const Segment &s, int64_t t0) {
      transformInput(x, s, t0, count, v);
    });
    for (int64_t pair = 0; pair < g.outChannels / kPair; ++pair) {
      for (int64_t pos = 0; pos < kPositions; ++pos)
        kMultiply[count](filter.data() +
                             (pair * kPositions + pos) * g.inChannels * kPair,
                         v + pos * count * g.inChannels, g.inChannels,
                         m + pos * count * kPair);
      forSegments(first, count, [&](const Segment &s, int64_t t0) {
        transformOutput(m, s, t0, count, pair, bias, res, y);
      });
    }
  }

  void run(const float *x, const float *w, const float *bias, const float *res,
           float *y, bool parallel) {
    if (!constantWeights || w != transformedFrom) {
      transformFilter(w);
      transformedFrom = w;
    }
    const int team = parallel ? omp_get_max_threads() : 1;
    const size_t need =
        kPositions * kGroup * (g.inChannels + kPair) + 2 * kLanes;
    if (scratch.size() < size_t(team))
      scratch.resize(team);
    for (auto &buffer : scratch)
      buffer.resize(need);
#pragma omp parallel if (parallel)
    {
      float *v = scratch[omp_get_thread_num()].data();
      float *m = v + kPositions * kGroup * g.inChannels;
#pragma omp for schedule(static)
      for (int64_t group = 0; group < groups; ++group)
        runGroup(x, bias, res, y, group, v, m);
    }
  }
};

WinogradConv::WinogradConv(const WinogradGeometry &geometry, bool hasBias,
                           bool residual, Activation act, bool constantWeights)
    : impl(std::make_unique<Impl>(geometry, hasBias, residual, act,
                                  constantWeights)) {}
WinogradConv::~WinogradConv() = default;
WinogradConv::WinogradConv(WinogradConv &&) noexcept = default;
WinogradConv &WinogradConv::operator=(WinogradConv &&) noexcept = default;

void WinogradConv::run(const float *x, const float *w, const float *bias,
                       const float *residual, float *y, bool parallel) {
  impl->run(x, w, bias, residual, y, parallel);
}

} // namespace heterps::rt::cpu
