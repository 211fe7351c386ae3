//===- CpuDataMovementTest.cpp - Copies, slices, gathers on the CPU -------===//
//
// Hand-computed cases and naive references (multi-index loops) for Concat,
// Split, Slice, Transpose, Expand, Pad, Gather, Scatter and EmbeddingLookup,
// over element sizes 1/2/4/8 and sizes that take the OpenMP paths.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

/// 0, 1, 2, ... as T (distinct for the sizes used with narrow types modulo
/// wrap-around, which the references reproduce).
template <typename T> std::vector<T> iota(int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = T(i * 7 + 3);
  return v;
}

Shape unravel(int64_t i, const Shape &shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

int64_t ravel(const Shape &index, const Shape &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + index[d];
  return i;
}

//===----------------------------------------------------------------------===//
// Concat / Split
//===----------------------------------------------------------------------===//

template <typename T>
void checkConcatSplit(Context &ctx, DType type, const std::vector<Shape> &parts,
                      int64_t axis) {
  std::vector<std::vector<T>> inputs;
  std::vector<const void *> pointers;
  for (size_t k = 0; k < parts.size(); ++k) {
    std::vector<T> v = iota<T>(numElements(parts[k]));
    for (T &x : v)
      x = T(x + T(k * 1000));
    inputs.push_back(std::move(v));
  }
  for (auto &v : inputs)
    pointers.push_back(v.data());
  Shape y = parts[0];
  y[axis] = 0;
  for (const Shape &p : parts)
    y[axis] += p[axis];
  std::vector<T> out(static_cast<size_t>(numElements(y)));
  Concat(ctx, type, parts, axis).run(pointers.data(), out.data());
  for (int64_t i = 0; i < numElements(y); ++i) {
    Shape index = unravel(i, y);
    size_t k = 0;
    while (index[axis] >= parts[k][axis])
      index[axis] -= parts[k++][axis];
    ASSERT_EQ(inputs[k][ravel(index, parts[k])], out[i])
        << shapeString(y) << " axis " << axis << " at " << i;
  }
  // Split undoes it.
  std::vector<int64_t> sizes;
  std::vector<std::vector<T>> pieces;
  std::vector<void *> targets;
  for (const Shape &p : parts) {
    sizes.push_back(p[axis]);
    pieces.emplace_back(static_cast<size_t>(numElements(p)));
  }
  for (auto &v : pieces)
    targets.push_back(v.data());
  Split(ctx, type, y, axis, sizes).run(out.data(), targets.data());
  for (size_t k = 0; k < parts.size(); ++k)
    ASSERT_EQ(inputs[k], pieces[k]) << "split piece " << k;
}

TEST(CpuDataMovementConcat, AxesAndSizes) {
  Context ctx(2);
  ctx.enterThread();
  checkConcatSplit<float>(ctx, DType::F32, {{2, 3}, {2, 5}, {2, 1}}, 1);
  checkConcatSplit<float>(ctx, DType::F32, {{2, 3}, {4, 3}}, 0);
  checkConcatSplit<int64_t>(ctx, DType::I64, {{2, 3, 4}, {2, 1, 4}, {2, 0, 4}},
                            1);
  checkConcatSplit<uint8_t>(ctx, DType::Bool, {{3, 2, 2}, {3, 2, 5}}, 2);
  checkConcatSplit<uint16_t>(ctx, DType::F16, {{5}, {7}}, 0);
  // Large: parallel over rows, and one long row per part.
  checkConcatSplit<float>(ctx, DType::F32, {{512, 300}, {512, 200}}, 1);
  checkConcatSplit<double>(ctx, DType::F64, {{400000}, {300000}}, 0);
}

TEST(CpuDataMovementConcat, Errors) {
  Context ctx(1);
  EXPECT_THROW(Concat(ctx, DType::F32, {{2, 3}, {3, 3}}, 1), Error);
  EXPECT_THROW(Concat(ctx, DType::F32, {}, 0), Error);
  EXPECT_THROW(Split(ctx, DType::F32, {2, 6}, 1, {2, 3}), Error);
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

template <typename T>
void checkSlice(Context &ctx, DType type, const Shape &x, const Shape &starts,
                const Shape &steps, const Shape &y) {
  std::vector<T> in = iota<T>(numElements(x));
  std::vector<T> out(static_cast<size_t>(numElements(y)));
  Slice(ctx, type, x, starts, steps, y).run(in.data(), out.data());
  for (int64_t i = 0; i < numElements(y); ++i) {
    Shape index = unravel(i, y);
    for (size_t d = 0; d < x.size(); ++d)
      index[d] = starts[d] + index[d] * steps[d];
    ASSERT_EQ(in[ravel(index, x)], out[i]) << shapeString(y) << " at " << i;
  }
}

TEST(CpuDataMovementSlice, HandComputed) {
  Context ctx(1);
  std::vector<int32_t> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; // 3x4
  std::vector<int32_t> y(4);
  // Rows 2, 0 (step -2) and columns 3, 1 (step -2).
  Slice(ctx, DType::I32, {3, 4}, {2, 3}, {-2, -2}, {2, 2})
      .run(x.data(), y.data());
  EXPECT_EQ((std::vector<int32_t>{11, 9, 3, 1}), y);
  std::vector<int32_t> r(4);
  Slice(ctx, DType::I32, {12}, {11}, {-3}, {4}).run(x.data(), r.data());
  EXPECT_EQ((std::vector<int32_t>{11, 8, 5, 2}), r);
  EXPECT_THROW(Slice(ctx, DType::I32, {12}, {11}, {0}, {4}), Error);
  EXPECT_THROW(Slice(ctx, DType::I32, {12}, {10}, {1}, {4}), Error);
}

TEST(CpuDataMovementSlice, RandomStepsAllSizes) {
  Context ctx(2);
  ctx.enterThread();
  checkSlice<float>(ctx, DType::F32, {4, 5, 6}, {1, 4, 0}, {2, -1, 1},
                    {2, 5, 6});
  checkSlice<uint8_t>(ctx, DType::U8, {4, 5, 6}, {3, 0, 5}, {-1, 2, -2},
                      {4, 3, 3});
  checkSlice<uint16_t>(ctx, DType::BF16, {7, 9}, {6, 8}, {-3, -1}, {3, 9});
  checkSlice<int64_t>(ctx, DType::I64, {2, 3, 4, 5}, {0, 1, 0, 2}, {1, 1, 1, 1},
                      {2, 2, 4, 3});
  checkSlice<int32_t>(ctx, DType::I32, {300, 400}, {299, 10}, {-1, 3},
                      {300, 130});
  checkSlice<float>(ctx, DType::F32, {256, 1024}, {0, 1023}, {1, -1},
                    {256, 1024});
  checkSlice<float>(ctx, DType::F32, {5}, {0}, {1}, {0});
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

template <typename T>
void checkTranspose(Context &ctx, DType type, const Shape &x,
                    const std::vector<int64_t> &perm) {
  std::vector<T> in = iota<T>(numElements(x));
  Shape y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = x[perm[i]];
  std::vector<T> out(static_cast<size_t>(numElements(y)));
  Transpose(ctx, type, x, perm).run(in.data(), out.data());
  for (int64_t i = 0; i < numElements(y); ++i) {
    Shape yi = unravel(i, y), xi(x.size());
    for (size_t d = 0; d < x.size(); ++d)
      xi[perm[d]] = yi[d];
    ASSERT_EQ(in[ravel(xi, x)], out[i])
        << shapeString(x) << " perm " << ::testing::PrintToString(perm)
        << " at " << i;
  }
}

TEST(CpuDataMovementTranspose, HandComputed) {
  Context ctx(1);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6);
  Transpose(ctx, DType::F32, {2, 3}, {1, 0}).run(x.data(), y.data());
  EXPECT_EQ((std::vector<float>{1, 4, 2, 5, 3, 6}), y);
  EXPECT_THROW(Transpose(ctx, DType::F32, {2, 3}, {1, 1}), Error);
}

TEST(CpuDataMovementTranspose, AllPermutations2Dto5D) {
  Context ctx(2);
  ctx.enterThread();
  const std::vector<Shape> shapes = {
      {5, 7}, {3, 4, 5}, {2, 3, 4, 5}, {2, 3, 2, 4, 3}};
  for (const Shape &x : shapes) {
    std::vector<int64_t> perm(x.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      checkTranspose<float>(ctx, DType::F32, x, perm);
      checkTranspose<uint8_t>(ctx, DType::I8, x, perm);
      checkTranspose<uint16_t>(ctx, DType::F16, x, perm);
      checkTranspose<int64_t>(ctx, DType::I64, x, perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(CpuDataMovementTranspose, LargeTiled) {
  Context ctx(2);
  ctx.enterThread();
  checkTranspose<float>(ctx, DType::F32, {517, 389}, {1, 0});
  checkTranspose<double>(ctx, DType::F64, {3, 130, 67}, {0, 2, 1});
  checkTranspose<float>(ctx, DType::F32, {2, 64, 33, 35}, {0, 2, 3, 1});
  checkTranspose<uint8_t>(ctx, DType::U8, {2, 35, 33, 64}, {0, 3, 1, 2});
  checkTranspose<uint16_t>(ctx, DType::BF16, {8, 16, 12, 64}, {0, 2, 1, 3});
}

//===----------------------------------------------------------------------===//
// Expand
//===----------------------------------------------------------------------===//

template <typename T>
void checkExpand(Context &ctx, DType type, const Shape &x, const Shape &y) {
  std::vector<T> in = iota<T>(numElements(x));
  std::vector<T> out(static_cast<size_t>(numElements(y)));
  Expand(ctx, type, x, y).run(in.data(), out.data());
  for (int64_t i = 0; i < numElements(y); ++i) {
    Shape yi = unravel(i, y), xi(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
      size_t dy = y.size() - x.size() + k;
      xi[k] = x[k] == 1 ? 0 : yi[dy];
    }
    ASSERT_EQ(in[ravel(xi, x)], out[i])
        << shapeString(x) << " -> " << shapeString(y) << " at " << i;
  }
}

TEST(CpuDataMovementExpand, Forms) {
  Context ctx(2);
  ctx.enterThread();
  checkExpand<float>(ctx, DType::F32, {}, {5});
  checkExpand<float>(ctx, DType::F32, {4}, {3, 4});
  checkExpand<int64_t>(ctx, DType::I64, {3, 1}, {2, 3, 4});
  checkExpand<uint8_t>(ctx, DType::Bool, {1, 3, 1}, {2, 3, 5});
  checkExpand<uint16_t>(ctx, DType::F16, {2, 1, 3}, {2, 4, 3});
  checkExpand<float>(ctx, DType::F32, {1, 1000}, {300, 1000});
  checkExpand<double>(ctx, DType::F64, {300, 1}, {300, 700});
  std::vector<float> x = {1, 2}, y(4);
  Expand(ctx, DType::F32, {2, 1}, {2, 2}).run(x.data(), y.data());
  EXPECT_EQ((std::vector<float>{1, 1, 2, 2}), y);
  EXPECT_THROW(Expand(ctx, DType::F32, {3}, {2, 4}), Error);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// numpy.pad semantics, element by element.
int64_t padSource(int64_t i, int64_t begin, int64_t n, PadMode mode) {
  int64_t j = i - begin;
  if (j >= 0 && j < n)
    return j;
  if (mode == PadMode::Constant)
    return -1;
  if (mode == PadMode::Edge)
    return j < 0 ? 0 : n - 1;
  if (n == 1)
    return 0;
  while (j < 0 || j >= n) { // reflect, repeatedly for wide pads
    if (j < 0)
      j = -j;
    if (j >= n)
      j = 2 * (n - 1) - j;
  }
  return j;
}

template <typename T>
void checkPad(Context &ctx, DType type, const Shape &x,
              const std::vector<int64_t> &pads, PadMode mode, double value) {
  size_t rank = x.size();
  std::vector<T> in = iota<T>(numElements(x));
  Shape y(rank);
  for (size_t d = 0; d < rank; ++d)
    y[d] = x[d] + pads[d] + pads[rank + d];
  std::vector<T> out(static_cast<size_t>(numElements(y)));
  Pad(ctx, type, x, pads, mode, value).run(in.data(), out.data());
  for (int64_t i = 0; i < numElements(y); ++i) {
    Shape yi = unravel(i, y), xi(rank);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      xi[d] = padSource(yi[d], pads[d], x[d], mode);
      inside &= xi[d] >= 0;
    }
    T expected = inside ? in[ravel(xi, x)] : T(value);
    ASSERT_EQ(expected, out[i]) << shapeString(x) << " -> " << shapeString(y)
                                << " mode " << int(mode) << " at " << i;
  }
}

TEST(CpuDataMovementPad, HandComputed) {
  Context ctx(1);
  // numpy.pad([1, 2, 3], (2, 3), mode) and the same cropped.
  std::vector<float> x = {1, 2, 3};
  std::vector<float> y(8);
  Pad(ctx, DType::F32, {3}, {2, 3}, PadMode::Constant, 9.5)
      .run(x.data(), y.data());
  EXPECT_EQ((std::vector<float>{9.5, 9.5, 1, 2, 3, 9.5, 9.5, 9.5}), y);
  Pad(ctx, DType::F32, {3}, {2, 3}, PadMode::Reflect, 0)
      .run(x.data(), y.data());
  EXPECT_EQ((std::vector<float>{3, 2, 1, 2, 3, 2, 1, 2}), y);
  Pad(ctx, DType::F32, {3}, {2, 3}, PadMode::Edge, 0).run(x.data(), y.data());
  EXPECT_EQ((std::vector<float>{1, 1, 1, 2, 3, 3, 3, 3}), y);
  // Negative pads crop: [-1, 2] keeps [2, 3] and adds two.
  std::vector<float> c(4);
  Pad(ctx, DType::F32, {3}, {-1, 2}, PadMode::Reflect, 0)
      .run(x.data(), c.data());
  EXPECT_EQ((std::vector<float>{2, 3, 2, 1}), c);
  // 2-D: rows cropped at the top, columns padded.
  std::vector<int32_t> m = {1, 2, 3, 4, 5, 6}; // 2x3
  std::vector<int32_t> p(5);
  Pad(ctx, DType::I32, {2, 3}, {-1, 1, 0, 1}, PadMode::Constant, -7.9)
      .run(m.data(), p.data());
  EXPECT_EQ((std::vector<int32_t>{-7, 4, 5, 6, -7}), p);
  EXPECT_THROW(Pad(ctx, DType::F32, {3}, {-2, -2}, PadMode::Constant, 0),
               Error);
  EXPECT_THROW(Pad(ctx, DType::F32, {3}, {1}, PadMode::Constant, 0), Error);
}

TEST(CpuDataMovementPad, RandomModes) {
  Context ctx(2);
  ctx.enterThread();
  for (PadMode mode : {PadMode::Constant, PadMode::Reflect, PadMode::Edge}) {
    checkPad<float>(ctx, DType::F32, {3, 4, 5}, {1, -1, 2, 2, 1, -2}, mode, 3);
    checkPad<int64_t>(ctx, DType::I64, {4, 6}, {0, 3, -2, 5}, mode, -1);
    checkPad<uint8_t>(ctx, DType::U8, {2, 3, 4, 5}, {0, 1, 0, 2, 1, 0, 2, -1},
                      mode, 7);
    checkPad<uint16_t>(ctx, DType::U16, {5}, {4, 4}, mode, 1);
    checkPad<float>(ctx, DType::F32, {2, 3, 64, 64}, {0, 0, 2, 2, 0, 0, 2, 2},
                    mode, 0);
    checkPad<float>(ctx, DType::F32, {1, 3}, {2, 2, 2, 2}, mode, 4);
  }
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

template <typename T, typename I>
void checkGather(Context &ctx, DType type, DType indexType, const Shape &data,
                 const Shape &indicesShape, const std::vector<I> &indices,
                 int64_t axis) {
  std::vector<T> in = iota<T>(numElements(data));
  Shape y(data.begin(), data.begin() + axis);
  y.insert(y.end(), indicesShape.begin(), indicesShape.end());
  y.insert(y.end(), data.begin() + axis + 1, data.end());
  std::vector<T> out(static_cast<size_t>(numElements(y)));
  Gather(ctx, type, data, indexType, indicesShape, axis)
      .run(in.data(), indices.data(), out.data());
  size_t q = indicesShape.size();
  for (int64_t i = 0; i < numElements(y); ++i) {
    Shape yi = unravel(i, y), xi;
    xi.insert(xi.end(), yi.begin(), yi.begin() + axis);
    Shape ii(yi.begin() + axis, yi.begin() + axis + q);
    int64_t id = int64_t(indices[ravel(ii, indicesShape)]);
    xi.push_back(id < 0 ? id + data[axis] : id);
    xi.insert(xi.end(), yi.begin() + axis + q, yi.end());
    ASSERT_EQ(in[ravel(xi, data)], out[i]) << "axis " << axis << " at " << i;
  }
}

TEST(CpuDataMovementGather, Axes) {
  Context ctx(2);
  ctx.enterThread();
  // Axis 0 (rows), with negative ids.
  checkGather<float, int64_t>(ctx, DType::F32, DType::I64, {5, 3}, {2, 2},
                              {0, -1, 4, -5}, 0);
  // A middle axis.
  checkGather<int64_t, int32_t>(ctx, DType::I64, DType::I32, {2, 5, 3}, {4},
                                {4, -2, 0, 1}, 1);
  checkGather<uint8_t, int32_t>(ctx, DType::Bool, DType::I32, {2, 5, 3}, {},
                                {-3}, 1);
  // Last axis: single elements.
  checkGather<uint16_t, int64_t>(ctx, DType::F16, DType::I64, {3, 4, 6}, {3},
                                 {5, 0, -6}, 2);
  // Large.
  std::vector<int64_t> ids(20000);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = int64_t(i * 37 % 1000) - 500;
  checkGather<float, int64_t>(ctx, DType::F32, DType::I64, {1000, 64}, {20000},
                              ids, 0);

  std::vector<float> hand = {1, 2, 3, 4, 5, 6}, y(4);
  std::vector<int32_t> hi = {2, -3};
  Gather(ctx, DType::F32, {2, 3}, DType::I32, {2}, 1)
      .run(hand.data(), hi.data(), y.data());
  EXPECT_EQ((std::vector<float>{3, 1, 6, 4}), y);
}

TEST(CpuDataMovementGather, OutOfRange) {
  Context ctx(1);
  std::vector<float> data(15), y(6);
  Gather g(ctx, DType::F32, {5, 3}, DType::I64, {2}, 0);
  for (int64_t bad : {int64_t(7), int64_t(5), int64_t(-6)}) {
    std::vector<int64_t> ids = {1, bad};
    try {
      g.run(data.data(), ids.data(), y.data());
      FAIL() << "no error for " << bad;
    } catch (const Error &e) {
      EXPECT_EQ("Gather: index " + std::to_string(bad) +
                    " out of range [-5, 5)",
                std::string(e.what()));
    }
  }
  EXPECT_THROW(Gather(ctx, DType::F32, {5, 3}, DType::F32, {2}, 0), Error);
  EXPECT_THROW(Gather(ctx, DType::F32, {5, 3}, DType::I32, {2}, 2), Error);
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

/// Naive reference: y = data, then every update element, in row-major order
/// of `updates` (so index order), combined into its target.
template <typename T, typename I>
std::vector<T> referenceScatter(const std::vector<T> &data, const Shape &shape,
                                const std::vector<I> &indices,
                                const std::vector<T> &updates, int64_t axis,
                                ScatterReduction reduction) {
  std::vector<T> y = data;
  int64_t outer = 1, inner = 1, count = int64_t(indices.size());
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k)
      for (int64_t c = 0; c < inner; ++c) {
        int64_t row = int64_t(indices[k]);
        row = row < 0 ? row + shape[axis] : row;
        T &into = y[(o * shape[axis] + row) * inner + c];
        T update = updates[(o * count + k) * inner + c];
        switch (reduction) {
        case ScatterReduction::None:
          into = update;
          break;
        case ScatterReduction::Add:
          into = T(into + update);
          break;
        case ScatterReduction::Mul:
          into = T(into * update);
          break;
        case ScatterReduction::Max:
          into = std::max(into, update);
          break;
        case ScatterReduction::Min:
          into = std::min(into, update);
          break;
        }
      }
  return y;
}

template <typename T, typename I>
void checkScatter(Context &ctx, DType type, DType indexType, const Shape &shape,
                  const std::vector<I> &indices, int64_t axis,
                  ScatterReduction reduction) {
  int64_t total = 1, slices = int64_t(indices.size());
  for (int64_t extent : shape)
    total *= extent;
  for (size_t d = 0; d < shape.size(); ++d)
    if (int64_t(d) != axis)
      slices *= shape[d];
  std::vector<T> data = iota<T>(total), updates(static_cast<size_t>(slices));
  for (int64_t i = 0; i < slices; ++i)
    updates[i] = T(i % 5 + 1);
  std::vector<T> y(data.size());
  Scatter scatter(ctx, type, shape, indexType, {int64_t(indices.size())}, axis,
                  reduction);
  scatter.run(data.data(), indices.data(), updates.data(), y.data());
  EXPECT_EQ(referenceScatter(data, shape, indices, updates, axis, reduction), y)
      << "axis " << axis << ", reduction " << int(reduction);
}

TEST(CpuDataMovementScatter, ReductionsAndAxes) {
  Context ctx(2);
  ctx.enterThread();
  const ScatterReduction all[] = {ScatterReduction::None, ScatterReduction::Add,
                                  ScatterReduction::Mul, ScatterReduction::Max,
                                  ScatterReduction::Min};
  for (ScatterReduction reduction : all) {
    // Rows, with a negative and a duplicate index.
    checkScatter<float, int64_t>(ctx, DType::F32, DType::I64, {5, 3},
                                 {0, -1, 2, 0}, 0, reduction);
    // A middle axis.
    checkScatter<int64_t, int32_t>(ctx, DType::I64, DType::I32, {2, 5, 3},
                                   {4, -2, 4, 1}, 1, reduction);
    checkScatter<int32_t, int64_t>(ctx, DType::I32, DType::I64, {2, 5, 3},
                                   {3, 3, 3}, 1, reduction);
    // The last axis: single elements.
    checkScatter<double, int64_t>(ctx, DType::F64, DType::I64, {3, 4, 6},
                                  {5, 0, -6, 5}, 2, reduction);
    checkScatter<uint8_t, int32_t>(ctx, DType::U8, DType::I32, {4, 6}, {1, 1},
                                   1, reduction);
  }
  // Large enough for the OpenMP path, wide rows split into column blocks.
  std::vector<int64_t> ids(3000);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = int64_t(i * 37 % 1000) - 500;
  checkScatter<float, int64_t>(ctx, DType::F32, DType::I64, {1000, 2500}, ids,
                               0, ScatterReduction::Add);
  checkScatter<float, int64_t>(ctx, DType::F32, DType::I64, {1000, 2500}, ids,
                               0, ScatterReduction::None);
}

TEST(CpuDataMovementScatter, HandComputed) {
  Context ctx(1);
  // Gather's adjoint: add-scatter into zeros sums the slices of duplicates.
  std::vector<float> zeros(6, 0.f), grad = {1, 2, 3, 4, 5, 6}, y(6);
  std::vector<int32_t> ids = {2, -1, 0};
  Scatter(ctx, DType::F32, {2, 3}, DType::I32, {3}, 1, ScatterReduction::Add)
      .run(zeros.data(), ids.data(), grad.data(), y.data());
  EXPECT_EQ((std::vector<float>{3, 0, 3, 6, 0, 9}), y);

  // In place (data and y are one buffer); None keeps the last duplicate.
  std::vector<float> inPlace = {1, 2, 3, 4};
  std::vector<int64_t> rows = {3, 3};
  std::vector<float> updates = {10, 20};
  Scatter(ctx, DType::F32, {4}, DType::I64, {2}, 0, ScatterReduction::None)
      .run(inPlace.data(), rows.data(), updates.data(), inPlace.data());
  EXPECT_EQ((std::vector<float>{1, 2, 3, 20}), inPlace);

  // Bool: add is or, mul is and.
  std::vector<uint8_t> flags = {0, 1, 1, 0}, set = {1, 0}, out(4);
  std::vector<int64_t> at = {0, 2};
  Scatter(ctx, DType::Bool, {4}, DType::I64, {2}, 0, ScatterReduction::Add)
      .run(flags.data(), at.data(), set.data(), out.data());
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 1, 0}), out);
  Scatter(ctx, DType::Bool, {4}, DType::I64, {2}, 0, ScatterReduction::Mul)
      .run(flags.data(), at.data(), set.data(), out.data());
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 0, 0}), out);

  // f16 adds in float and rounds once per update.
  std::vector<float> hf = {1, 2, 3}, uf = {0.5f, 0.25f}, yf(3);
  std::vector<uint16_t> h(3), u(2), hy(3);
  Cast(ctx, DType::F32, DType::F16, 3).run(hf.data(), h.data());
  Cast(ctx, DType::F32, DType::F16, 2).run(uf.data(), u.data());
  std::vector<int64_t> both = {1, 1};
  Scatter(ctx, DType::F16, {3}, DType::I64, {2}, 0, ScatterReduction::Add)
      .run(h.data(), both.data(), u.data(), hy.data());
  Cast(ctx, DType::F16, DType::F32, 3).run(hy.data(), yf.data());
  EXPECT_EQ((std::vector<float>{1, 2.75f, 3}), yf);
}

TEST(CpuDataMovementScatter, Errors) {
  Context ctx(1);
  std::vector<float> data(15), updates(6), y(15);
  Scatter s(ctx, DType::F32, {5, 3}, DType::I64, {2}, 0, ScatterReduction::Add);
  for (int64_t bad : {int64_t(7), int64_t(5), int64_t(-6)}) {
    std::vector<int64_t> ids = {1, bad};
    try {
      s.run(data.data(), ids.data(), updates.data(), y.data());
      FAIL() << "no error for " << bad;
    } catch (const Error &e) {
      EXPECT_EQ("Scatter: index " + std::to_string(bad) +
                    " out of range [-5, 5)",
                std::string(e.what()));
    }
  }
  EXPECT_THROW(Scatter(ctx, DType::F32, {5, 3}, DType::F32, {2}, 0,
                       ScatterReduction::None),
               Error);
  EXPECT_THROW(Scatter(ctx, DType::F32, {5, 3}, DType::I32, {2}, 2,
                       ScatterReduction::None),
               Error);
}

//===----------------------------------------------------------------------===//
// EmbeddingLookup
//===----------------------------------------------------------------------===//

TEST(CpuDataMovementEmbedding, HandComputed) {
  Context ctx(1);
  // 4 rows of dim 2: row r = [r, 10 r].
  std::vector<float> table = {0, 0, 1, 10, 2, 20, 3, 30};
  std::vector<int32_t> ids = {1, 3, -1, 0}; // [2, 2]
  std::vector<float> none(8), sum(4), mean(4);
  EmbeddingLookup(ctx, DType::F32, 4, 2, DType::I32, {2, 2},
                  EmbeddingPooling::None)
      .run(table.data(), ids.data(), none.data());
  EXPECT_EQ((std::vector<float>{1, 10, 3, 30, 3, 30, 0, 0}), none);
  EmbeddingLookup(ctx, DType::F32, 4, 2, DType::I32, {2, 2},
                  EmbeddingPooling::Sum)
      .run(table.data(), ids.data(), sum.data());
  EXPECT_EQ((std::vector<float>{4, 40, 3, 30}), sum);
  EmbeddingLookup(ctx, DType::F32, 4, 2, DType::I32, {2, 2},
                  EmbeddingPooling::Mean)
      .run(table.data(), ids.data(), mean.data());
  EXPECT_EQ((std::vector<float>{2, 20, 1.5f, 15}), mean);

  std::vector<int64_t> bad = {0, 4};
  try {
    EmbeddingLookup(ctx, DType::F32, 4, 2, DType::I64, {2},
                    EmbeddingPooling::Sum)
        .run(table.data(), bad.data(), sum.data());
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ("EmbeddingLookup: id 4 out of range [-4, 4)",
              std::string(e.what()));
  }
  EXPECT_THROW(EmbeddingLookup(ctx, DType::F32, 4, 2, DType::I64, {},
                               EmbeddingPooling::Mean),
               Error);
  EXPECT_THROW(EmbeddingLookup(ctx, DType::Bool, 4, 2, DType::I64, {2},
                               EmbeddingPooling::Sum),
               Error);
}

template <typename T>
void checkEmbedding(Context &ctx, DType type, int64_t rows, int64_t dim,
                    const Shape &idShape, EmbeddingPooling pooling) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> pick(-rows, rows - 1);
  std::vector<int64_t> ids(static_cast<size_t>(numElements(idShape)));
  for (int64_t &id : ids)
    id = pick(rng);
  std::vector<T> table(static_cast<size_t>(rows * dim));
  for (int64_t i = 0; i < rows * dim; ++i)
    table[i] = T((i * 13) % 17) - T(8);
  int64_t length = pooling == EmbeddingPooling::None ? 1 : idShape.back();
  int64_t groups = pooling == EmbeddingPooling::None
                       ? int64_t(ids.size())
                       : numElements(Shape(idShape.begin(), idShape.end() - 1));
  std::vector<T> y(static_cast<size_t>(groups * dim));
  EmbeddingLookup(ctx, type, rows, dim, DType::I64, idShape, pooling)
      .run(table.data(), ids.data(), y.data());
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < dim; ++j) {
      double acc = 0;
      for (int64_t l = 0; l < length; ++l) {
        int64_t id = ids[g * length + l];
        acc += double(table[(id < 0 ? id + rows : id) * dim + j]);
      }
      if (pooling == EmbeddingPooling::Mean && length > 0)
        acc /= double(length);
      ASSERT_NEAR(acc, double(y[g * dim + j]), 1e-4) << g << ", " << j;
    }
}

TEST(CpuDataMovementEmbedding, RandomPoolings) {
  Context ctx(2);
  ctx.enterThread();
  for (EmbeddingPooling pooling :
       {EmbeddingPooling::None, EmbeddingPooling::Sum,
        EmbeddingPooling::Mean}) {
    checkEmbedding<float>(ctx, DType::F32, 50, 16, {7, 5}, pooling);
    checkEmbedding<double>(ctx, DType::F64, 30, 3, {4, 2, 6}, pooling);
    if (pooling != EmbeddingPooling::Mean) // integer means truncate
      checkEmbedding<int32_t>(ctx, DType::I32, 30, 5, {9, 3}, pooling);
    // Large batch: parallel over rows.
    checkEmbedding<float>(ctx, DType::F32, 1000, 64, {2048, 8}, pooling);
  }
  // Empty bags pool to zero.
  checkEmbedding<float>(ctx, DType::F32, 10, 4, {3, 0}, EmbeddingPooling::Mean);
}

TEST(CpuDataMovementEmbedding, HalfTable) {
  Context ctx(1);
  // f16 table [1, 2; 3, 4] through Cast; mean of rows 0 and 1 = [2, 3].
  std::vector<float> tf = {1, 2, 3, 4};
  std::vector<uint16_t> table(4), y(2);
  Cast(ctx, DType::F32, DType::F16, 4).run(tf.data(), table.data());
  std::vector<int64_t> ids = {0, -1};
  EmbeddingLookup(ctx, DType::F16, 2, 2, DType::I64, {2},
                  EmbeddingPooling::Mean)
      .run(table.data(), ids.data(), y.data());
  std::vector<float> yf(2);
  Cast(ctx, DType::F16, DType::F32, 2).run(y.data(), yf.data());
  EXPECT_EQ((std::vector<float>{2, 3}), yf);
}

} // namespace
