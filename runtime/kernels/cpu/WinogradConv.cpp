//===- WinogradConv.cpp - 3x3 convolutions by Winograd's transforms -------===//
//
// F(m x m, 3x3) for m = 2 (4x4 input tiles, 16 positions) and m = 4 (6x6,
// 36 positions). Work is split into groups of six output tiles, taken in
// order over (image, tile row, tile column). For one group, everything
// stays in L1 or L2: the input transform writes V[position][6 tiles][C],
// each block of 16 output channels multiplies it by U[position][C][16] into
// M[position][6][16] (a 12-accumulator product: 2 vectors of 8 channels by
// 6 tiles), and the output transform adds bias and residual, applies the
// activation and writes y. Vectors are GCC's 8-float vector extension, AVX2
// with the kernels' -march; a 16-channel native block is two of them.
//
//===----------------------------------------------------------------------===//

#include "WinogradConv.h"

#include "DnnlUtil.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <string>
#include <variant>
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
/// F(4x4, 3x3) does 2.25 multiplies per output and channel pair where
/// F(2x2, 3x3) does 4, but its filter is 36 / 16 times larger and its
/// rounding error about 5x (inputs and outputs near 1: 5e-6 against 1e-6
/// at 64 channels). Measured on the 2 AVX2 cores, 8 images, against F(2x2):
/// 1.6-1.9x at 32 and 64 channels on 16x16 and 8x8, 1.2x on 56x56; 1.05x at
/// 128 channels (2.4 MiB of filter), 0.74x at 256 (9.4 MiB).
constexpr int64_t kMaxLargeTileFilterBytes = 1 << 20;
/// Where oneDNN runs 16-float (AVX-512) direct kernels, twice our vectors'
/// width, it wins on few output positions, which leave our tile groups
/// short: on 2 AVX-512 cores, 1 image of 64 channels on 8x8 (64 positions)
/// ran at 0.75x oneDNN, 16x16 and 32x32 ties, 8 images of 8x8 (512) at 1.29x
/// (docs/benchmarks/conv-layers.md, 2026-11-28 AVX-512 run).
constexpr int64_t kMinPositionsBesideWideKernels = 512;

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

/// F(2x2, 3x3) (Lavin and Gray's matrices): B^T = [1 0 -1 0; 0 1 1 0;
/// 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
/// A^T = [1 1 1 0; 0 1 -1 -1]. Each applies to one line of a tile.
struct SmallTile {
  static constexpr int kOut = 2, kIn = 4;
  static void filter(double a, double b, double d, double *u) {
    u[0] = a;
    u[1] = 0.5 * (a + b + d);
    u[2] = 0.5 * (a - b + d);
    u[3] = d;
  }
  static void input(const Vec *d, Vec *v) {
    v[0] = d[0] - d[2];
    v[1] = d[1] + d[2];
    v[2] = d[2] - d[1];
    v[3] = d[1] - d[3];
  }
  static void output(const Vec *m, Vec *y) {
    y[0] = m[0] + m[1] + m[2];
    y[1] = m[1] - m[2] - m[3];
  }
};

/// F(4x4, 3x3) at the points 0, +-1, +-2 and infinity:
/// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
///        0 2 -1 -2 1 0; 0 4 0 -5 0 1],
/// G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
///      1/24 -1/12 1/6; 0 0 1],
/// A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
struct LargeTile {
  static constexpr int kOut = 4, kIn = 6;
  static void filter(double a, double b, double d, double *u) {
    u[0] = a / 4;
    u[1] = -(a + b + d) / 6;
    u[2] = -(a - b + d) / 6;
    u[3] = a / 24 + b / 12 + d / 6;
    u[4] = a / 24 - b / 12 + d / 6;
    u[5] = d;
  }
  static void input(const Vec *d, Vec *v) {
    const Vec two = splat(2.0f), four = splat(4.0f), five = splat(5.0f);
    v[0] = four * d[0] - five * d[2] + d[4];
    v[1] = d[3] + d[4] - four * (d[1] + d[2]);
    v[2] = four * (d[1] - d[2]) - d[3] + d[4];
    v[3] = two * (d[3] - d[1]) - d[2] + d[4];
    v[4] = two * (d[1] - d[3]) - d[2] + d[4];
    v[5] = four * d[1] - five * d[3] + d[5];
  }
  static void output(const Vec *m, Vec *y) {
    const Vec two = splat(2.0f), four = splat(4.0f), eight = splat(8.0f);
    const Vec sum12 = m[1] + m[2], diff12 = m[1] - m[2], sum34 = m[3] + m[4],
              diff34 = m[3] - m[4];
    y[0] = m[0] + sum12 + sum34;
    y[1] = diff12 + two * diff34;
    y[2] = sum12 + four * sum34;
    y[3] = diff12 + eight * diff34 + m[5];
  }
};

/// HETERPS_CPU_WINOGRAD: 0 turns the kernels off, 2 keeps F(2x2, 3x3) only
/// (both for comparisons), 1 chooses per layer as on AVX2 machines, also
/// where oneDNN's AVX-512 kernels would win (the unit tests, so that they
/// cover the kernels on every machine); unset or anything else chooses per
/// layer. Read once per process.
enum class WinogradSetting { Off, SmallTileOnly, AsOnAvx2, Chosen };

WinogradSetting winogradSetting() {
  static const WinogradSetting setting = [] {
    const char *value = std::getenv("HETERPS_CPU_WINOGRAD");
    const std::string text = value ? value : "";
    if (text == "0")
      return WinogradSetting::Off;
    if (text == "1")
      return WinogradSetting::AsOnAvx2;
    return text == "2" ? WinogradSetting::SmallTileOnly
                       : WinogradSetting::Chosen;
  }();
  return setting;
}

/// The output tile (2 or 4) for a convolution of `in` to `out` channels.
/// Convolutions whose sums must not round differently (`exact`: quantized
/// products on f32, QDQ units) never get here.
int64_t chooseTile(int64_t in, int64_t out) {
  if (winogradSetting() == WinogradSetting::SmallTileOnly)
    return SmallTile::kOut;
  const int64_t positions = LargeTile::kIn * LargeTile::kIn;
  return positions * in * out * int64_t(sizeof(float)) <=
                 kMaxLargeTileFilterBytes
             ? LargeTile::kOut
             : SmallTile::kOut;
}

} // namespace

bool WinogradConv::suits(const Shape &x, const Shape &w, const Shape &strides,
                         const Shape &dilations, int64_t group) {
  if (winogradSetting() == WinogradSetting::Off || x.size() != 4 ||
      w.size() != 4 || group != 1 || w[2] != 3 || w[3] != 3 ||
      strides != Shape{1, 1} || dilations != Shape{1, 1})
    return false;
  const int64_t in = x[1], out = w[0], pixels = x[2] * x[3];
  const int64_t bytes = x[0] * (in + out) * pixels * int64_t(sizeof(float));
  // 3x3 at stride 1 with any padding keeps about x's positions.
  if (winogradSetting() != WinogradSetting::AsOnAvx2 &&
      dnnl_util::nativeChannelBlock() > kLanes &&
      x[0] * pixels < kMinPositionsBesideWideKernels)
    return false;
  return in % kNativeChannelMultiple == 0 &&
         out % kNativeChannelMultiple == 0 &&
         (std::min(in, out) >= 32 || bytes <= kNarrowMaxBytes) &&
         SmallTile::kIn * SmallTile::kIn * in * out * int64_t(sizeof(float)) <=
             kMaxFilterBytes;
}

WinogradGeometry WinogradConv::nativeGeometry(const Shape &in, const Shape &out,
                                              int64_t padTop, int64_t padLeft) {
  WinogradGeometry g;
  g.batch = in[0];
  g.inChannels = in[1];
  g.height = in[2];
  g.width = in[3];
  g.outChannels = out[1];
  g.outHeight = out[2];
  g.outWidth = out[3];
  g.padTop = padTop;
  g.padLeft = padLeft;
  g.block = dnnl_util::nativeChannelBlock();
  return g;
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

namespace {

/// The kernel for one tile size (SmallTile or LargeTile).
template <class Tile> struct TiledConv {
  static constexpr int64_t kOut = Tile::kOut, kIn = Tile::kIn,
                           kPositions = kIn * kIn;
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

  TiledConv(const WinogradGeometry &geometry, bool hasBias, bool residual,
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
    tileRows = (g.outHeight + kOut - 1) / kOut;
    tileCols = (g.outWidth + kOut - 1) / kOut;
    tiles = g.batch * tileRows * tileCols;
    groups = (tiles + kGroup - 1) / kGroup;
    filter.resize(kPositions * g.inChannels * g.outChannels);
  }

  /// U = G g G^T per (k, c), in double and rounded once.
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
        double columns[3][kIn], rows[kIn];
        for (int j = 0; j < 3; ++j)
          Tile::filter(f[j], f[3 + j], f[6 + j], columns[j]);
        for (int i = 0; i < kIn; ++i) {
          Tile::filter(columns[0][i], columns[1][i], columns[2][i], rows);
          for (int j = 0; j < kIn; ++j)
            filter[(((k / kPair) * kPositions + i * kIn + j) * in + c) * kPair +
                   k % kPair] = float(rows[j]);
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

  /// V[position][t0 + t][C] = B^T d B for the segment's tiles. The column
  /// pass is done once per input column and shared by the tiles reading it.
  void transformInput(const float *x, const Segment &s, int64_t t0,
                      int64_t groupTiles, float *v) const {
    const int64_t in = g.inChannels, H = g.height, W = g.width;
    const int64_t top = kOut * s.tileRow - g.padTop,
                  left = kOut * s.firstCol - g.padLeft,
                  span = kOut * s.count + kIn - kOut;
    bool rowInside[kIn];
    for (int i = 0; i < kIn; ++i)
      rowInside[i] = top + i >= 0 && top + i < H;
    const int64_t colBegin = std::max<int64_t>(0, -left),
                  colEnd = std::min<int64_t>(span, W - left);
    Vec cols[kIn][kOut * kGroup + kIn - kOut];
    for (int64_t c = 0; c < in; c += kLanes) {
      const float *p = x + plane(s.image, c, in, H * W);
      for (int64_t col = 0; col < span; ++col) {
        Vec d[kIn], transformed[kIn];
        bool colInside = col >= colBegin && col < colEnd;
        for (int i = 0; i < kIn; ++i)
          d[i] = colInside && rowInside[i]
                     ? load(p + ((top + i) * W + left + col) * g.block)
                     : zeros();
        Tile::input(d, transformed);
        for (int i = 0; i < kIn; ++i)
          cols[i][col] = transformed[i];
      }
      const int64_t stride = groupTiles * in;
      for (int64_t t = 0; t < s.count; ++t) {
        float *out = v + (t0 + t) * in + c;
        for (int i = 0; i < kIn; ++i) {
          Vec transformed[kIn];
          Tile::input(&cols[i][kOut * t], transformed);
          for (int j = 0; j < kIn; ++j)
            store(out + (i * kIn + j) * stride, transformed[j]);
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
  /// output channels [pair * 16, + 16).
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
        Vec rows[kOut][kIn];
        for (int j = 0; j < kIn; ++j) {
          Vec column[kIn], transformed[kOut];
          for (int i = 0; i < kIn; ++i)
            column[i] = load(mt + (i * kIn + j) * stride);
          Tile::output(column, transformed);
          for (int i = 0; i < kOut; ++i)
            rows[i][j] = transformed[i];
        }
        const int64_t oh0 = kOut * s.tileRow, ow0 = kOut * (s.firstCol + t);
        for (int64_t i = 0; i < kOut && oh0 + i < OH; ++i) {
          Vec values[kOut];
          Tile::output(rows[i], values);
          for (int64_t j = 0; j < kOut && ow0 + j < OW; ++j) {
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

} // namespace

struct WinogradConv::Impl {
  std::variant<TiledConv<SmallTile>, TiledConv<LargeTile>> kernel;

  static decltype(kernel) make(const WinogradGeometry &g, bool hasBias,
                               bool residual, Activation act,
                               bool constantWeights) {
    int64_t tile =
        g.outputTile ? g.outputTile : chooseTile(g.inChannels, g.outChannels);
    if (tile == SmallTile::kOut)
      return TiledConv<SmallTile>(g, hasBias, residual, act, constantWeights);
    if (tile == LargeTile::kOut)
      return TiledConv<LargeTile>(g, hasBias, residual, act, constantWeights);
    throw Error("WinogradConv: output tile " + std::to_string(tile) +
                " is neither 2 nor 4");
  }

  Impl(const WinogradGeometry &g, bool hasBias, bool residual, Activation act,
       bool constantWeights)
      : kernel(make(g, hasBias, residual, act, constantWeights)) {}

  void run(const float *x, const float *w, const float *bias, const float *res,
           float *y, bool parallel) {
    std::visit([&](auto &tiled) { tiled.run(x, w, bias, res, y, parallel); },
               kernel);
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
