//===- CpuDataDependentTest.cpp - NonZero, Unique, NMS on the CPU ---------===//
//
// ONNX's documented examples and backend test data (onnx/backend/test/case/
// node/{nonzero,unique,nonmaxsuppression}.py), cases the ONNX reference
// (onnx.reference) computed for random inputs, every element type, and
// naive references on random data. Outputs start filled with garbage, so
// every check also sees that the padding past `count` is zeroed.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>

using namespace heterps::rt;
using namespace heterps::rt::cpu;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
/// What outputs hold before a run: never a valid result.
constexpr int64_t kGarbage = -77;

//===----------------------------------------------------------------------===//
// Element encodings for the every-dtype tests
//===----------------------------------------------------------------------===//

/// Bits of the small integers the tests use as binary16.
uint16_t halfBits(int value) {
  switch (value) {
  case 0:
    return 0x0000;
  case 1:
    return 0x3c00;
  case 2:
    return 0x4000;
  case 3:
    return 0x4200;
  default:
    return 0x4400; // 4
  }
}

/// `values` (small non-negative integers) as elements of `type`.
std::vector<unsigned char> encode(DType type, const std::vector<int> &values) {
  const size_t size = dtypeSize(type);
  std::vector<unsigned char> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char *out = bytes.data() + i * size;
    auto put = [&](auto value) { std::memcpy(out, &value, sizeof(value)); };
    int v = values[i];
    switch (type) {
    case DType::F32:
      put(float(v));
      break;
    case DType::F64:
      put(double(v));
      break;
    case DType::F16:
      put(halfBits(v));
      break;
    case DType::BF16: {
      float f = float(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put(uint16_t(bits >> 16)); // exact for small integers
      break;
    }
    case DType::I8:
    case DType::U8:
    case DType::Bool:
      put(uint8_t(v));
      break;
    case DType::I16:
    case DType::U16:
      put(uint16_t(v));
      break;
    case DType::I32:
    case DType::U32:
      put(uint32_t(v));
      break;
    case DType::I64:
    case DType::U64:
      put(uint64_t(v));
      break;
    }
  }
  return bytes;
}

const DType kAllTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16,
                           DType::I8,  DType::U8,  DType::I16, DType::U16,
                           DType::I32, DType::U32, DType::I64, DType::U64,
                           DType::Bool};

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

struct NonZeroOut {
  std::vector<int64_t> indices;
  int64_t count = kGarbage;
};

/// Runs a NonZero of `shape` on x's bytes into `out` (reused as given).
void nonZero(NonZero &kernel, const void *x, NonZeroOut &out) {
  kernel.run(x, out.indices.data(), &out.count);
}

NonZeroOut nonZero(DType type, const Shape &shape, const void *x) {
  Context ctx(1);
  NonZero kernel(ctx, type, shape);
  NonZeroOut out;
  out.indices.assign(size_t(int64_t(shape.size()) * numElements(shape)),
                     kGarbage);
  nonZero(kernel, x, out);
  return out;
}

/// numpy.nonzero, padded to [rank, numel] with zeros.
template <typename T>
std::vector<int64_t> nonZeroReference(const Shape &shape,
                                      const std::vector<T> &x, int64_t &count) {
  const int64_t n = numElements(shape), rank = int64_t(shape.size());
  std::vector<int64_t> indices(size_t(rank * n), 0);
  count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] == T(0))
      continue;
    int64_t rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      indices[d * n + count] = rest % shape[d];
      rest /= shape[d];
    }
    ++count;
  }
  return indices;
}

TEST(CpuNonZero, Float1DNegativeZeroIsZeroNanIsNot) {
  std::vector<float> x = {0.0f, 1.5f, -0.0f, kNan, 0.0f, -2.0f};
  NonZeroOut out = nonZero(DType::F32, {6}, x.data());
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.indices, (std::vector<int64_t>{1, 3, 5, 0, 0, 0}));
}

TEST(CpuNonZero, BoolOnnxExample) {
  // onnx nonzero.py: [[1, 0], [1, 1]] -> [[0, 1, 1], [0, 0, 1]].
  std::vector<uint8_t> x = {1, 0, 1, 1};
  NonZeroOut out = nonZero(DType::Bool, {2, 2}, x.data());
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.indices, (std::vector<int64_t>{0, 1, 1, 0, 0, 0, 1, 0}));
}

TEST(CpuNonZero, Int64TwoD) {
  std::vector<int64_t> x = {0, -4, 0, 0, 0, 7, 9, 0, 0};
  NonZeroOut out = nonZero(DType::I64, {3, 3}, x.data());
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.indices, (std::vector<int64_t>{0, 1, 2, 0, 0, 0, 0, 0, 0, //
                                               1, 2, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(CpuNonZero, ThreeDAgainstReference) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(0, 3);
  for (const Shape &shape :
       {Shape{2, 3, 4}, Shape{1, 5, 1}, Shape{4, 1, 7}, Shape{3, 2, 1}}) {
    std::vector<float> xf(size_t(numElements(shape)));
    std::vector<int64_t> xi(xf.size());
    for (size_t i = 0; i < xf.size(); ++i) {
      int v = pick(rng);
      xf[i] = v == 0 ? 0.0f : float(v) - 1.5f;
      xi[i] = v == 0 ? 0 : v - 2; // v == 2 is another zero
    }
    int64_t count = 0;
    std::vector<int64_t> want = nonZeroReference(shape, xf, count);
    NonZeroOut out = nonZero(DType::F32, shape, xf.data());
    EXPECT_EQ(out.count, count) << shapeString(shape);
    EXPECT_EQ(out.indices, want) << shapeString(shape);
    want = nonZeroReference(shape, xi, count);
    out = nonZero(DType::I64, shape, xi.data());
    EXPECT_EQ(out.count, count) << shapeString(shape);
    EXPECT_EQ(out.indices, want) << shapeString(shape);
  }
}

TEST(CpuNonZero, AllZeroCountsNoneAndZeroesThePadding) {
  std::vector<float> x(12, 0.0f);
  x[5] = -0.0f;
  NonZeroOut out = nonZero(DType::F32, {2, 3, 2}, x.data());
  EXPECT_EQ(out.count, 0);
  EXPECT_EQ(out.indices, std::vector<int64_t>(36, 0));
}

TEST(CpuNonZero, ReusedBufferIsRepadded) {
  Context ctx(1);
  NonZero kernel(ctx, DType::I32, {2, 3});
  NonZeroOut out;
  out.indices.assign(12, kGarbage);
  std::vector<int32_t> dense = {1, 2, 3, 0, 5, 6};
  nonZero(kernel, dense.data(), out);
  EXPECT_EQ(out.count, 5);
  EXPECT_EQ(out.indices,
            (std::vector<int64_t>{0, 0, 0, 1, 1, 0, 0, 1, 2, 1, 2, 0}));
  std::vector<int32_t> sparse = {0, 0, 0, 0, 8, 0};
  nonZero(kernel, sparse.data(), out);
  EXPECT_EQ(out.count, 1);
  EXPECT_EQ(out.indices,
            (std::vector<int64_t>{1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}));
}

TEST(CpuNonZero, EveryType) {
  for (DType type : kAllTypes) {
    std::vector<unsigned char> x = encode(type, {0, 3, 0, 1, 1, 0});
    NonZeroOut out = nonZero(type, {6}, x.data());
    EXPECT_EQ(out.count, 3) << dtypeName(type);
    EXPECT_EQ(out.indices, (std::vector<int64_t>{1, 3, 4, 0, 0, 0}))
        << dtypeName(type);
  }
}

TEST(CpuNonZero, SixteenBitFloatsSignedZeroAndNan) {
  // -0, NaN, +0, -1, +inf (binary16); the same in bfloat16.
  std::vector<uint16_t> half = {0x8000, 0x7e00, 0x0000, 0xbc00, 0x7c00};
  std::vector<uint16_t> bf16 = {0x8000, 0x7fc0, 0x0000, 0xbf80, 0x7f80};
  for (const auto &[type, x] :
       std::vector<std::pair<DType, std::vector<uint16_t>>>{
           {DType::F16, half}, {DType::BF16, bf16}}) {
    NonZeroOut out = nonZero(type, {5}, x.data());
    EXPECT_EQ(out.count, 3) << dtypeName(type);
    EXPECT_EQ(out.indices, (std::vector<int64_t>{1, 3, 4, 0, 0}))
        << dtypeName(type);
  }
}

TEST(CpuNonZero, EmptyTensor) {
  NonZeroOut out = nonZero(DType::F32, {3, 0}, nullptr);
  EXPECT_EQ(out.count, 0);
  EXPECT_TRUE(out.indices.empty());
}

TEST(CpuNonZero, NegativeExtentIsRefused) {
  Context ctx(1);
  try {
    NonZero kernel(ctx, DType::F32, {2, -1});
    FAIL() << "no error";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("NonZero"), std::string::npos)
        << error.what();
  }
}

//===----------------------------------------------------------------------===//
// Unique
//===----------------------------------------------------------------------===//

template <typename T> struct UniqueOut {
  std::vector<T> y;
  std::vector<int64_t> firstIndices, inverse, counts;
  int64_t count = kGarbage;
};

/// Runs `kernel` on x into outputs filled with garbage first.
template <typename T>
UniqueOut<T> unique(Unique &kernel, const std::vector<T> &x, int64_t extent) {
  UniqueOut<T> out;
  out.y.assign(x.size(), T(kGarbage));
  out.firstIndices.assign(size_t(extent), kGarbage);
  out.inverse.assign(size_t(extent), kGarbage);
  out.counts.assign(size_t(extent), kGarbage);
  kernel.run(x.data(), out.y.data(), out.firstIndices.data(),
             out.inverse.data(), out.counts.data(), &out.count);
  return out;
}

template <typename T>
UniqueOut<T> unique(DType type, const std::vector<T> &x, int64_t outer,
                    int64_t extent, int64_t inner, bool sorted) {
  Context ctx(1);
  Unique kernel(ctx, type, outer, extent, inner, sorted);
  return unique(kernel, x, extent);
}

TEST(CpuUnique, FlattenedSortedOnnxExample) {
  std::vector<float> x = {2, 1, 1, 3, 4, 3};
  UniqueOut<float> out = unique(DType::F32, x, 1, 6, 1, true);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.y, (std::vector<float>{1, 2, 3, 4, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{1, 0, 3, 4, 0, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{2, 1, 2, 1, 0, 0}));
}

TEST(CpuUnique, FlattenedUnsortedOnnxExample) {
  std::vector<float> x = {2, 1, 1, 3, 4, 3};
  UniqueOut<float> out = unique(DType::F32, x, 1, 6, 1, false);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.y, (std::vector<float>{2, 1, 3, 4, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{0, 1, 3, 4, 0, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{1, 2, 2, 1, 0, 0}));
}

TEST(CpuUnique, Axis0SortedOnnxExample) {
  std::vector<float> x = {1, 0, 0, 1, 0, 0, 2, 3, 4};
  UniqueOut<float> out = unique(DType::F32, x, 1, 3, 3, true);
  EXPECT_EQ(out.count, 2);
  EXPECT_EQ(out.y, (std::vector<float>{1, 0, 0, 2, 3, 4, 0, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{0, 2, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{2, 1, 0}));
}

TEST(CpuUnique, LastAxisSortedOnnxExample) {
  // onnx sorted_with_negative_axis: [[1,0,0],[1,0,0],[2,3,3]], axis -1.
  std::vector<float> x = {1, 0, 0, 1, 0, 0, 2, 3, 3};
  UniqueOut<float> out = unique(DType::F32, x, 3, 3, 1, true);
  EXPECT_EQ(out.count, 2);
  EXPECT_EQ(out.y, (std::vector<float>{0, 1, 0, 0, 1, 0, 3, 2, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{2, 1, 0}));
}

TEST(CpuUnique, MiddleAxisOnnx3DExample) {
  // onnx sorted_with_axis_3d: x [2, 4, 2], axis 1.
  std::vector<float> x = {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
  UniqueOut<float> out = unique(DType::F32, x, 2, 4, 2, true);
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.y, (std::vector<float>{0, 1, 1, 1, 2, 1, 0, 0, //
                                       0, 1, 1, 1, 2, 1, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{1, 0, 2, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{1, 0, 2, 0}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{2, 1, 1, 0}));

  out = unique(DType::F32, x, 2, 4, 2, false);
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.y, (std::vector<float>{1, 1, 0, 1, 2, 1, 0, 0, //
                                       1, 1, 0, 1, 2, 1, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{1, 2, 1, 0}));
}

TEST(CpuUnique, MiddleAxisSlicesDifferingOnlyInALaterOuterRow) {
  // x [2, 4, 2], axis 1: slices 1 and 3 agree in outer row 0 only.
  // Slices: 0 = (1,1, 5,5), 1 = (0,1, 3,3), 2 = (0,1, 3,3), 3 = (0,1, 3,4).
  std::vector<int64_t> x = {1, 1, 0, 1, 0, 1, 0, 1, //
                            5, 5, 3, 3, 3, 3, 3, 4};
  UniqueOut<int64_t> out = unique(DType::I64, x, 2, 4, 2, true);
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.y, (std::vector<int64_t>{0, 1, 0, 1, 1, 1, 0, 0, //
                                         3, 3, 3, 4, 5, 5, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{1, 3, 0, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{2, 0, 0, 1}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{2, 1, 1, 0}));

  out = unique(DType::I64, x, 2, 4, 2, false);
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.y, (std::vector<int64_t>{1, 1, 0, 1, 0, 1, 0, 0, //
                                         5, 5, 3, 3, 3, 4, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{0, 1, 3, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{0, 1, 1, 2}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{1, 2, 1, 0}));
}

TEST(CpuUnique, Int64NegativesSorted) {
  std::vector<int64_t> x = {5, -3, 5, std::numeric_limits<int64_t>::min(), -3};
  UniqueOut<int64_t> out = unique(DType::I64, x, 1, 5, 1, true);
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.y, (std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                                         -3, 5, 0, 0}));
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{3, 1, 0, 0, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{2, 1, 2, 0, 1}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{1, 2, 2, 0, 0}));
}

TEST(CpuUnique, SignedZerosAreEqualNansAreDistinct) {
  // The API: slices are equal when every element compares equal; NaN sorts
  // above every number.
  std::vector<float> x = {kNan, 1.0f, kNan, -0.0f, 0.0f};
  UniqueOut<float> out = unique(DType::F32, x, 1, 5, 1, true);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.y[0], 0.0f);
  EXPECT_TRUE(std::signbit(out.y[0])); // the first occurrence's -0
  EXPECT_EQ(out.y[1], 1.0f);
  EXPECT_TRUE(std::isnan(out.y[2]) && std::isnan(out.y[3]));
  EXPECT_EQ(out.y[4], 0.0f);
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{3, 1, 0, 2, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{2, 1, 3, 0, 0}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{2, 1, 1, 1, 0}));

  out = unique(DType::F32, x, 1, 5, 1, false);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.firstIndices, (std::vector<int64_t>{0, 1, 2, 3, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(out.counts, (std::vector<int64_t>{1, 1, 1, 2, 0}));

  // The same in binary16 bits.
  std::vector<uint16_t> half = {0x7e00, 0x3c00, 0x7e00, 0x8000, 0x0000};
  UniqueOut<uint16_t> bits = unique(DType::F16, half, 1, 5, 1, true);
  EXPECT_EQ(bits.count, 4);
  EXPECT_EQ(bits.y, (std::vector<uint16_t>{0x8000, 0x3c00, 0x7e00, 0x7e00, 0}));
  EXPECT_EQ(bits.firstIndices, (std::vector<int64_t>{3, 1, 0, 2, 0}));
  EXPECT_EQ(bits.inverse, (std::vector<int64_t>{2, 1, 3, 0, 0}));
}

TEST(CpuUnique, SixteenBitFloatsOrderNegatives) {
  // binary16: 2, -1, -2, 1, -1 -> sorted -2, -1, 1, 2.
  std::vector<uint16_t> half = {0x4000, 0xbc00, 0xc000, 0x3c00, 0xbc00};
  UniqueOut<uint16_t> out = unique(DType::F16, half, 1, 5, 1, true);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.y, (std::vector<uint16_t>{0xc000, 0xbc00, 0x3c00, 0x4000, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{3, 1, 0, 2, 1}));
  // bfloat16: the same values.
  std::vector<uint16_t> bf16 = {0x4000, 0xbf80, 0xc000, 0x3f80, 0xbf80};
  out = unique(DType::BF16, bf16, 1, 5, 1, true);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.y, (std::vector<uint16_t>{0xc000, 0xbf80, 0x3f80, 0x4000, 0}));
  EXPECT_EQ(out.inverse, (std::vector<int64_t>{3, 1, 0, 2, 1}));
}

TEST(CpuUnique, EveryType) {
  for (DType type : kAllTypes) {
    const bool isBool = type == DType::Bool;
    std::vector<int> values = isBool ? std::vector<int>{1, 0, 0, 1, 1, 1}
                                     : std::vector<int>{2, 1, 1, 3, 4, 3};
    std::vector<unsigned char> x = encode(type, values);
    std::vector<unsigned char> y(x.size(), 0xab);
    std::vector<int64_t> first(6, kGarbage), inverse(6, kGarbage),
        counts(6, kGarbage);
    int64_t count = kGarbage;
    Context ctx(1);
    Unique kernel(ctx, type, 1, 6, 1, true);
    kernel.run(x.data(), y.data(), first.data(), inverse.data(), counts.data(),
               &count);
    std::vector<int> wantY = isBool ? std::vector<int>{0, 1, 0, 0, 0, 0}
                                    : std::vector<int>{1, 2, 3, 4, 0, 0};
    EXPECT_EQ(y, encode(type, wantY)) << dtypeName(type);
    if (isBool) {
      EXPECT_EQ(count, 2);
      EXPECT_EQ(first, (std::vector<int64_t>{1, 0, 0, 0, 0, 0}));
      EXPECT_EQ(inverse, (std::vector<int64_t>{1, 0, 0, 1, 1, 1}));
      EXPECT_EQ(counts, (std::vector<int64_t>{2, 4, 0, 0, 0, 0}));
    } else {
      EXPECT_EQ(count, 4) << dtypeName(type);
      EXPECT_EQ(first, (std::vector<int64_t>{1, 0, 3, 4, 0, 0}))
          << dtypeName(type);
      EXPECT_EQ(inverse, (std::vector<int64_t>{1, 0, 0, 2, 3, 2}))
          << dtypeName(type);
      EXPECT_EQ(counts, (std::vector<int64_t>{2, 1, 2, 1, 0, 0}))
          << dtypeName(type);
    }
  }
}

/// numpy.unique over slices (no NaNs), then ONNX's reordering when not
/// sorted.
template <typename T>
UniqueOut<T> uniqueReference(const std::vector<T> &x, int64_t outer,
                             int64_t extent, int64_t inner, bool sorted) {
  auto slice = [&](int64_t k) {
    std::vector<T> s;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        s.push_back(x[(o * extent + k) * inner + i]);
    return s;
  };
  std::map<std::vector<T>, int64_t> firstOf; // sorted by value
  std::vector<int64_t> firstSeen;            // by first occurrence
  for (int64_t k = 0; k < extent; ++k)
    if (firstOf.emplace(slice(k), k).second)
      firstSeen.push_back(k);
  std::vector<int64_t> groups; // distinct slices' first indices, in y order
  if (sorted)
    for (auto &entry : firstOf)
      groups.push_back(entry.second);
  else
    groups = firstSeen;
  UniqueOut<T> out;
  out.count = int64_t(groups.size());
  out.firstIndices.assign(size_t(extent), 0);
  out.counts.assign(size_t(extent), 0);
  out.inverse.assign(size_t(extent), 0);
  out.y.assign(x.size(), T(0));
  std::map<int64_t, int64_t> position; // first index -> y position
  for (size_t g = 0; g < groups.size(); ++g) {
    position[groups[g]] = int64_t(g);
    out.firstIndices[g] = groups[g];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        out.y[(o * extent + int64_t(g)) * inner + i] =
            x[(o * extent + groups[g]) * inner + i];
  }
  for (int64_t k = 0; k < extent; ++k) {
    int64_t g = position[firstOf[slice(k)]];
    out.inverse[k] = g;
    ++out.counts[g];
  }
  return out;
}

template <typename T> void checkRandomUnique(DType type, int seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(-1, 1);
  struct Geometry {
    int64_t outer, extent, inner;
  };
  for (Geometry g : {Geometry{1, 50, 1}, Geometry{1, 40, 2}, Geometry{3, 30, 1},
                     Geometry{2, 25, 2}, Geometry{4, 1, 3}}) {
    std::vector<T> x(size_t(g.outer * g.extent * g.inner));
    for (T &v : x)
      v = T(pick(rng));
    for (bool sorted : {true, false}) {
      Context ctx(1);
      Unique kernel(ctx, type, g.outer, g.extent, g.inner, sorted);
      UniqueOut<T> want =
          uniqueReference(x, g.outer, g.extent, g.inner, sorted);
      // Twice: the second run reuses the plan's scratch.
      for (int round = 0; round < 2; ++round) {
        UniqueOut<T> got = unique(kernel, x, g.extent);
        std::string where =
            std::string(dtypeName(type)) + " " + std::to_string(g.outer) + "x" +
            std::to_string(g.extent) + "x" + std::to_string(g.inner) +
            (sorted ? " sorted" : " unsorted");
        EXPECT_EQ(got.count, want.count) << where;
        EXPECT_EQ(got.y, want.y) << where;
        EXPECT_EQ(got.firstIndices, want.firstIndices) << where;
        EXPECT_EQ(got.inverse, want.inverse) << where;
        EXPECT_EQ(got.counts, want.counts) << where;
      }
    }
  }
}

TEST(CpuUnique, RandomAgainstReference) {
  checkRandomUnique<float>(DType::F32, 1);
  checkRandomUnique<int64_t>(DType::I64, 2);
  checkRandomUnique<int8_t>(DType::I8, 3);
}

TEST(CpuUnique, EmptyAndZeroWidthSlices) {
  UniqueOut<float> none =
      unique(DType::F32, std::vector<float>{}, 1, 0, 1, true);
  EXPECT_EQ(none.count, 0);
  // Slices of no elements are all equal: one group.
  Context ctx(1);
  Unique kernel(ctx, DType::F32, 1, 3, 0, false);
  std::vector<int64_t> first(3, kGarbage), inverse(3, kGarbage),
      counts(3, kGarbage);
  int64_t count = kGarbage;
  kernel.run(nullptr, nullptr, first.data(), inverse.data(), counts.data(),
             &count);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(first, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(inverse, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(counts, (std::vector<int64_t>{3, 0, 0}));
}

TEST(CpuUnique, NegativeExtentsAreRefused) {
  Context ctx(1);
  const int64_t geometries[][3] = {{-1, 2, 1}, {1, -2, 1}, {1, 2, -1}};
  for (const auto &[outer, extent, inner] : geometries) {
    try {
      Unique kernel(ctx, DType::F32, outer, extent, inner, true);
      ADD_FAILURE() << "no error";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find("Unique"), std::string::npos)
          << error.what();
    }
  }
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

struct NmsCase {
  int64_t batches, classes, boxes;
  std::vector<float> boxData, scores;
  std::optional<int64_t> maxPerClass;
  std::optional<float> iouThreshold, scoreThreshold;
  bool centerPointBox = false;
};

struct NmsOut {
  std::vector<int64_t> selected; // [capacity, 3]
  int64_t count = kGarbage;
};

NmsOut runNms(NonMaxSuppression &kernel, const NmsCase &c, int64_t capacity) {
  NmsOut out;
  out.selected.assign(size_t(capacity * 3), kGarbage);
  kernel.run(c.boxData.data(), c.scores.data(),
             c.maxPerClass ? &*c.maxPerClass : nullptr,
             c.iouThreshold ? &*c.iouThreshold : nullptr,
             c.scoreThreshold ? &*c.scoreThreshold : nullptr,
             out.selected.data(), &out.count);
  return out;
}

NmsOut runNms(const NmsCase &c, int64_t capacity) {
  Context ctx(1);
  NonMaxSuppression kernel(ctx, c.batches, c.classes, c.boxes, c.centerPointBox,
                           capacity);
  return runNms(kernel, c, capacity);
}

/// `rows` (batch, class, box) padded with zero rows to capacity.
void expectSelected(const NmsOut &out, const std::vector<int64_t> &rows,
                    int64_t capacity) {
  EXPECT_EQ(out.count, int64_t(rows.size() / 3));
  std::vector<int64_t> want = rows;
  want.resize(size_t(capacity * 3), 0);
  EXPECT_EQ(out.selected, want);
}

/// The boxes most of onnx's nonmaxsuppression cases share.
const std::vector<float> kOnnxBoxes = {0.0f, 0.0f,  1.0f, 1.0f,   0.0f, 0.1f,
                                       1.0f, 1.1f,  0.0f, -0.1f,  1.0f, 0.9f,
                                       0.0f, 10.0f, 1.0f, 11.0f,  0.0f, 10.1f,
                                       1.0f, 11.1f, 0.0f, 100.0f, 1.0f, 101.0f};
const std::vector<float> kOnnxScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

NmsCase onnxCase(int64_t maxPerClass, float scoreThreshold = 0.0f) {
  return {1, 1, 6, kOnnxBoxes, kOnnxScores, maxPerClass, 0.5f, scoreThreshold};
}

TEST(CpuNonMaxSuppression, OnnxSuppressByIou) {
  expectSelected(runNms(onnxCase(3), 6), {0, 0, 3, 0, 0, 0, 0, 0, 5}, 6);
}

TEST(CpuNonMaxSuppression, OnnxSuppressByIouAndScores) {
  expectSelected(runNms(onnxCase(3, 0.4f), 6), {0, 0, 3, 0, 0, 0}, 6);
}

TEST(CpuNonMaxSuppression, OnnxLimitOutputSize) {
  expectSelected(runNms(onnxCase(2), 6), {0, 0, 3, 0, 0, 0}, 6);
}

TEST(CpuNonMaxSuppression, OnnxCenterPointBox) {
  NmsCase c = onnxCase(3);
  c.boxData = {0.5f, 0.5f,  1.0f, 1.0f, 0.5f, 0.6f,   1.0f, 1.0f,
               0.5f, 0.4f,  1.0f, 1.0f, 0.5f, 10.5f,  1.0f, 1.0f,
               0.5f, 10.6f, 1.0f, 1.0f, 0.5f, 100.5f, 1.0f, 1.0f};
  c.centerPointBox = true;
  expectSelected(runNms(c, 3), {0, 0, 3, 0, 0, 0, 0, 0, 5}, 3);
}

TEST(CpuNonMaxSuppression, OnnxFlippedCoordinates) {
  NmsCase c = onnxCase(3);
  c.boxData = {1.0f, 1.0f,  0.0f, 0.0f,  0.0f, 0.1f,   1.0f, 1.1f,
               0.0f, 0.9f,  1.0f, -0.1f, 0.0f, 10.0f,  1.0f, 11.0f,
               1.0f, 10.1f, 0.0f, 11.1f, 1.0f, 101.0f, 0.0f, 100.0f};
  expectSelected(runNms(c, 4), {0, 0, 3, 0, 0, 0, 0, 0, 5}, 4);
}

TEST(CpuNonMaxSuppression, OnnxIdenticalBoxes) {
  NmsCase c = {1, 1, 10, {}, std::vector<float>(10, 0.9f), 3, 0.5f, 0.0f};
  for (int i = 0; i < 10; ++i)
    c.boxData.insert(c.boxData.end(), {0.0f, 0.0f, 1.0f, 1.0f});
  expectSelected(runNms(c, 3), {0, 0, 0}, 3);
}

TEST(CpuNonMaxSuppression, OnnxSingleBox) {
  NmsCase c = {1, 1, 1, {0.0f, 0.0f, 1.0f, 1.0f}, {0.9f}, 3, 0.5f, 0.0f};
  expectSelected(runNms(c, 1), {0, 0, 0}, 1);
}

TEST(CpuNonMaxSuppression, OnnxTwoBatches) {
  NmsCase c = onnxCase(2);
  c.batches = 2;
  c.boxData.insert(c.boxData.end(), kOnnxBoxes.begin(), kOnnxBoxes.end());
  c.scores.insert(c.scores.end(), kOnnxScores.begin(), kOnnxScores.end());
  expectSelected(runNms(c, 5), {0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0}, 5);
}

TEST(CpuNonMaxSuppression, OnnxTwoClasses) {
  NmsCase c = onnxCase(2);
  c.classes = 2;
  c.scores.insert(c.scores.end(), kOnnxScores.begin(), kOnnxScores.end());
  expectSelected(runNms(c, 4), {0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}, 4);
}

/// Three boxes, 0 and 1 overlapping with IoU 0.1 / 1.9.
NmsCase overlapCase() {
  return {1,
          1,
          3,
          {0, 0, 1, 1, 0, 0.9f, 1, 1.9f, 5, 5, 6, 6},
          {0.9f, 0.8f, 0.7f},
          10,
          std::nullopt,
          std::nullopt};
}

TEST(CpuNonMaxSuppression, AbsentIouThresholdSuppressesAnyOverlap) {
  expectSelected(runNms(overlapCase(), 3), {0, 0, 0, 0, 0, 2}, 3);
  NmsCase c = overlapCase();
  c.iouThreshold = 0.5f;
  expectSelected(runNms(c, 3), {0, 0, 0, 0, 0, 1, 0, 0, 2}, 3);
}

TEST(CpuNonMaxSuppression, AbsentOrNegativeMaxSelectsNothing) {
  NmsCase c = overlapCase();
  c.maxPerClass.reset();
  expectSelected(runNms(c, 3), {}, 3);
  c.maxPerClass = -3;
  expectSelected(runNms(c, 3), {}, 3);
}

TEST(CpuNonMaxSuppression, ScoreThresholdIsStrict) {
  NmsCase c = overlapCase();
  c.iouThreshold = 0.5f;
  c.scoreThreshold = 0.8f;
  expectSelected(runNms(c, 3), {0, 0, 0}, 3);
  // A NaN score is never above a threshold.
  c.scores = {kNan, 0.8f, 0.7f};
  c.scoreThreshold = 0.1f;
  expectSelected(runNms(c, 3), {0, 0, 1, 0, 0, 2}, 3);
}

TEST(CpuNonMaxSuppression, NanScoresComeLastWithoutAThreshold) {
  NmsCase c = overlapCase();
  c.iouThreshold = 0.5f;
  c.scores = {kNan, 0.8f, -std::numeric_limits<float>::infinity()};
  expectSelected(runNms(c, 3), {0, 0, 1, 0, 0, 2, 0, 0, 0}, 3);
}

TEST(CpuNonMaxSuppression, MoreSelectionsThanCapacityThrow) {
  EXPECT_NO_THROW(runNms(onnxCase(3), 3));
  try {
    runNms(onnxCase(3), 2);
    FAIL() << "no error";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("NonMaxSuppression"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("capacity"), std::string::npos)
        << error.what();
  }
}

TEST(CpuNonMaxSuppression, ReusedBufferIsRepadded) {
  Context ctx(1);
  NonMaxSuppression kernel(ctx, 1, 1, 6, false, 6);
  NmsCase c = onnxCase(3);
  NmsOut out;
  out.selected.assign(18, kGarbage);
  kernel.run(c.boxData.data(), c.scores.data(), &*c.maxPerClass,
             &*c.iouThreshold, &*c.scoreThreshold, out.selected.data(),
             &out.count);
  expectSelected(out, {0, 0, 3, 0, 0, 0, 0, 0, 5}, 6);
  int64_t one = 1;
  kernel.run(c.boxData.data(), c.scores.data(), &one, &*c.iouThreshold,
             &*c.scoreThreshold, out.selected.data(), &out.count);
  expectSelected(out, {0, 0, 3}, 6);
}

TEST(CpuNonMaxSuppression, BadParametersAreRefused) {
  Context ctx(1);
  const int64_t parameters[][4] = {
      {-1, 1, 1, 1}, {1, -1, 1, 1}, {1, 1, -1, 1}, {1, 1, 1, -1}};
  for (const auto &[batches, classes, boxes, capacity] : parameters) {
    try {
      NonMaxSuppression kernel(ctx, batches, classes, boxes, false, capacity);
      ADD_FAILURE() << "no error";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find("NonMaxSuppression"),
                std::string::npos)
          << error.what();
    }
  }
}

/// Random boxes (two batches, two classes, twelve boxes, one tie), with
/// results from onnx.reference's NonMaxSuppression.
NmsCase randomCase() {
  return {2,
          2,
          12,
          {2.5f, 3.6f, 3.1f, 0.9f, 1.2f, 3.5f, 0.0f, 3.3f, 3.2f, 1.9f, 1.2f,
           1.1f, 1.0f, 1.8f, 2.0f, 2.2f, 4.0f, 3.2f, 2.5f, 4.0f, 0.9f, 0.6f,
           2.5f, 0.2f, 0.1f, 2.1f, 1.9f, 3.7f, 2.5f, 2.1f, 2.0f, 1.0f, 0.0f,
           0.8f, 2.8f, 0.8f, 1.5f, 0.0f, 3.3f, 0.6f, 1.1f, 3.5f, 2.0f, 3.4f,
           2.6f, 3.0f, 0.4f, 2.2f, 2.0f, 3.5f, 1.4f, 2.4f, 0.2f, 1.6f, 1.3f,
           0.6f, 3.3f, 1.5f, 3.9f, 2.4f, 2.4f, 2.6f, 2.7f, 0.6f, 1.8f, 1.0f,
           1.6f, 0.4f, 3.9f, 0.9f, 2.7f, 1.2f, 3.5f, 2.6f, 0.5f, 3.4f, 3.8f,
           3.6f, 2.3f, 0.6f, 0.8f, 3.7f, 2.2f, 0.7f, 3.5f, 2.6f, 2.3f, 1.5f,
           1.6f, 1.0f, 0.2f, 3.5f, 1.9f, 2.2f, 1.3f, 3.0f},
          {0.03f, 0.37f, 0.03f, 0.66f, 0.97f, 0.66f, 0.43f, 0.52f, 0.87f, 0.34f,
           0.59f, 0.68f, 0.36f, 0.52f, 0.77f, 0.91f, 0.15f, 0.93f, 0.01f, 0.75f,
           0.81f, 0.14f, 0.42f, 0.82f, 0.01f, 0.63f, 0.79f, 0.51f, 0.73f, 0.23f,
           0.2f,  0.36f, 0.18f, 0.35f, 0.95f, 0.57f, 0.34f, 0.27f, 0.95f, 0.44f,
           0.98f, 0.52f, 0.52f, 0.9f,  0.74f, 0.58f, 0.43f, 0.88f},
          10,
          0.2f,
          0.1f};
}

TEST(CpuNonMaxSuppression, RandomCornersMatchOnnxReference) {
  NmsCase c = randomCase();
  expectSelected(runNms(c, 48),
                 {0,  0, 4,  0, 0,  8, 0, 0, 11, 0, 0,  3, 0, 0, 5,  0,  0,
                  10, 0, 0,  7, 0,  0, 1, 0, 1,  5, 0,  1, 3, 0, 1,  11, 0,
                  1,  8, 0,  1, 2,  0, 1, 1, 0,  1, 10, 0, 1, 0, 0,  1,  4,
                  1,  0, 10, 1, 0,  2, 1, 0, 4,  1, 0,  1, 1, 0, 11, 1,  0,
                  3,  1, 0,  7, 1,  0, 5, 1, 0,  6, 1,  1, 4, 1, 1,  2,  1,
                  1,  7, 1,  1, 11, 1, 1, 8, 1,  1, 5,  1, 1, 3, 1,  1,  1},
                 48);
  c.iouThreshold = 0.0f;
  c.scoreThreshold.reset();
  expectSelected(runNms(c, 48),
                 {0, 0, 4, 0, 0, 8, 0,  0, 11, 0, 0,  3, 0, 0, 5, 0, 0, 10, 0,
                  0, 7, 0, 1, 5, 0, 1,  3, 0,  1, 11, 0, 1, 8, 0, 1, 7, 0,  1,
                  1, 0, 1, 4, 1, 0, 10, 1, 0,  2, 1,  0, 4, 1, 0, 3, 1, 0,  5,
                  1, 1, 4, 1, 1, 2, 1,  1, 11, 1, 1,  5, 1, 1, 3, 1, 1, 1},
                 48);
}

TEST(CpuNonMaxSuppression, RandomCentersMatchOnnxReference) {
  NmsCase c = randomCase();
  c.centerPointBox = true;
  expectSelected(runNms(c, 48),
                 {0, 0, 4, 0, 0, 8, 0, 0, 11, 0, 0, 3,  0, 0, 5,  0, 0, 7,
                  0, 0, 1, 0, 0, 9, 0, 1, 5,  0, 1, 3,  0, 1, 11, 0, 1, 8,
                  0, 1, 2, 0, 1, 1, 0, 1, 0,  0, 1, 4,  0, 1, 9,  1, 0, 10,
                  1, 0, 2, 1, 0, 4, 1, 0, 1,  1, 0, 3,  1, 0, 7,  1, 0, 9,
                  1, 0, 6, 1, 0, 8, 1, 1, 4,  1, 1, 2,  1, 1, 7,  1, 1, 8,
                  1, 1, 9, 1, 1, 6, 1, 1, 3,  1, 1, 10, 1, 1, 1},
                 48);
  c.iouThreshold = 0.0f;
  c.scoreThreshold.reset();
  expectSelected(runNms(c, 48),
                 {0, 0, 4,  0, 0, 8,  0, 0, 10, 0, 0, 1,  0, 0, 9,
                  0, 1, 5,  0, 1, 11, 0, 1, 1,  0, 1, 10, 0, 1, 9,
                  1, 0, 10, 1, 0, 1,  1, 0, 7,  1, 0, 5,  1, 0, 8,
                  1, 1, 4,  1, 1, 7,  1, 1, 8,  1, 1, 3,  1, 1, 1},
                 48);
  c.maxPerClass = 3;
  c.iouThreshold = 0.5f;
  expectSelected(runNms(c, 12),
                 {0, 0, 4,  0, 0, 8, 0, 0, 11, 0, 1, 5, 0, 1, 3, 0, 1, 11,
                  1, 0, 10, 1, 0, 2, 1, 0, 4,  1, 1, 4, 1, 1, 2, 1, 1, 7},
                 12);
}

} // namespace
