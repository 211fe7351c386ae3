//===- GpuDataDependentTest.cpp - NonZero, Unique, NMS: GPU against CPU ---===//
//
// The GPU NonZero, Unique and NonMaxSuppression run the CPU kernels'
// algorithm on host copies; these cases check the copies: the same results
// as the CPU kernels (themselves checked against ONNX in
// CpuDataDependentTest.cpp), with device outputs that start as garbage so
// the padding the GPU clears on the device is checked too. Without a CUDA
// device every case is skipped.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CpuKernels.h"
#include "heterps/Runtime/GpuKernels.h"

#include "DeviceFixture.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace heterps::rt;

namespace {

using Bytes = std::vector<unsigned char>;

template <typename T> Bytes bytesOf(const std::vector<T> &values) {
  Bytes bytes(values.size() * sizeof(T));
  if (!bytes.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

class GpuDataDependent : public test::DeviceFixture<gpu::Context> {
protected:
  using Fixture = test::DeviceFixture<gpu::Context>;
  /// A device buffer of `bytes` garbage bytes (0xa5).
  void *garbage(size_t bytes) { return device(Bytes(bytes, 0xa5)); }
  Bytes download(const void *pointer, size_t bytes) {
    return Fixture::download<unsigned char>(pointer, bytes);
  }
};

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

TEST_F(GpuDataDependent, NonZeroMatchesCpu) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pick(0, 4);
  std::vector<float> f32(2 * 5 * 7);
  for (float &v : f32) {
    int p = pick(rng);
    v = p < 2    ? (p ? -0.0f : 0.0f)
        : p == 2 ? std::numeric_limits<float>::quiet_NaN()
                 : float(p);
  }
  std::vector<uint8_t> mask(6 * 9);
  for (uint8_t &v : mask)
    v = uint8_t(pick(rng) == 0);
  struct Case {
    DType type;
    Shape shape;
    Bytes x;
  };
  for (const Case &c : {Case{DType::F32, {2, 5, 7}, bytesOf(f32)},
                        Case{DType::Bool, {6, 9}, bytesOf(mask)},
                        Case{DType::Bool, {54}, Bytes(54, 0)}}) {
    const size_t indexBytes =
        c.shape.size() * size_t(numElements(c.shape)) * sizeof(int64_t);
    Bytes want(indexBytes, 0xa5);
    int64_t wantCount = -1;
    {
      cpu::Context cpuCtx(1);
      cpu::NonZero kernel(cpuCtx, c.type, c.shape);
      kernel.run(c.x.data(), want.data(), &wantCount);
    }
    gpu::NonZero kernel(*context, c.type, c.shape);
    void *x = device(c.x), *indices = garbage(indexBytes),
         *count = garbage(sizeof(int64_t));
    // Twice: the second run must clear what the first left.
    for (int round = 0; round < 2; ++round) {
      kernel.run(x, indices, count);
      EXPECT_EQ(download(indices, indexBytes), want) << shapeString(c.shape);
      EXPECT_EQ(download(count, sizeof(int64_t)),
                bytesOf(std::vector<int64_t>{wantCount}));
    }
  }
}

//===----------------------------------------------------------------------===//
// Unique
//===----------------------------------------------------------------------===//

TEST_F(GpuDataDependent, UniqueMatchesCpu) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> pick(0, 2);
  std::vector<float> f32(3 * 20 * 2);
  for (float &v : f32)
    v = float(pick(rng)) - 1.0f;
  std::vector<int64_t> i64(40);
  for (int64_t &v : i64)
    v = pick(rng) * 1000 - 7;
  // binary16 1, -2, 1, -0, +0, 1
  std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x3c00, 0x8000, 0x0000, 0x3c00};
  struct Case {
    DType type;
    int64_t outer, extent, inner;
    Bytes x;
  };
  for (const Case &c : {Case{DType::F32, 3, 20, 2, bytesOf(f32)},
                        Case{DType::F32, 1, 20, 6, bytesOf(f32)},
                        Case{DType::I64, 1, 40, 1, bytesOf(i64)},
                        Case{DType::F16, 1, 6, 1, bytesOf(f16)}}) {
    for (bool sorted : {true, false}) {
      const size_t yBytes = c.x.size(),
                   listBytes = size_t(c.extent) * sizeof(int64_t);
      Bytes want[4] = {Bytes(yBytes, 0xa5), Bytes(listBytes, 0xa5),
                       Bytes(listBytes, 0xa5), Bytes(listBytes, 0xa5)};
      int64_t wantCount = -1;
      {
        cpu::Context cpuCtx(1);
        cpu::Unique kernel(cpuCtx, c.type, c.outer, c.extent, c.inner, sorted);
        kernel.run(c.x.data(), want[0].data(), want[1].data(), want[2].data(),
                   want[3].data(), &wantCount);
      }
      gpu::Unique kernel(*context, c.type, c.outer, c.extent, c.inner, sorted);
      void *x = device(c.x), *y = garbage(yBytes), *first = garbage(listBytes),
           *inverse = garbage(listBytes), *counts = garbage(listBytes),
           *count = garbage(sizeof(int64_t));
      kernel.run(x, y, first, inverse, counts, count);
      std::string where =
          std::string(dtypeName(c.type)) + " " + std::to_string(c.outer) + "x" +
          std::to_string(c.extent) + "x" + std::to_string(c.inner) +
          (sorted ? " sorted" : " unsorted");
      EXPECT_EQ(download(y, yBytes), want[0]) << where;
      EXPECT_EQ(download(first, listBytes), want[1]) << where;
      EXPECT_EQ(download(inverse, listBytes), want[2]) << where;
      EXPECT_EQ(download(counts, listBytes), want[3]) << where;
      EXPECT_EQ(download(count, sizeof(int64_t)),
                bytesOf(std::vector<int64_t>{wantCount}))
          << where;
    }
  }
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

TEST_F(GpuDataDependent, NonMaxSuppressionMatchesCpu) {
  const int64_t batches = 2, classes = 3, boxes = 40, capacity = 240;
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> coordinate(0.0f, 4.0f),
      score(0.0f, 1.0f);
  std::vector<float> boxData(size_t(batches * boxes * 4)),
      scores(size_t(batches * classes * boxes));
  for (float &v : boxData)
    v = coordinate(rng);
  for (float &v : scores)
    v = score(rng);
  const int64_t maxPerClass = 6;
  const float iouThreshold = 0.3f, scoreThreshold = 0.2f;
  void *dBoxes = device(bytesOf(boxData)), *dScores = device(bytesOf(scores)),
       *dMax = device(bytesOf(std::vector<int64_t>{maxPerClass})),
       *dIou = device(bytesOf(std::vector<float>{iouThreshold})),
       *dScore = device(bytesOf(std::vector<float>{scoreThreshold}));
  const size_t selectedBytes = size_t(capacity * 3) * sizeof(int64_t);
  for (bool center : {false, true}) {
    for (bool optionals : {true, false}) {
      Bytes want(selectedBytes, 0xa5);
      int64_t wantCount = -1;
      {
        cpu::Context cpuCtx(1);
        cpu::NonMaxSuppression kernel(cpuCtx, batches, classes, boxes, center,
                                      capacity);
        kernel.run(boxData.data(), scores.data(), &maxPerClass,
                   optionals ? &iouThreshold : nullptr,
                   optionals ? &scoreThreshold : nullptr, want.data(),
                   &wantCount);
      }
      gpu::NonMaxSuppression kernel(*context, batches, classes, boxes, center,
                                    capacity);
      void *selected = garbage(selectedBytes),
           *count = garbage(sizeof(int64_t));
      kernel.run(dBoxes, dScores, dMax, optionals ? dIou : nullptr,
                 optionals ? dScore : nullptr, selected, count);
      EXPECT_EQ(download(selected, selectedBytes), want)
          << (center ? "centers" : "corners")
          << (optionals ? "" : ", no thresholds");
      EXPECT_EQ(download(count, sizeof(int64_t)),
                bytesOf(std::vector<int64_t>{wantCount}));
    }
  }
  // Absent maxPerClass: nothing selected; too small a capacity: Error.
  gpu::NonMaxSuppression kernel(*context, batches, classes, boxes, false,
                                capacity);
  void *selected = garbage(selectedBytes), *count = garbage(sizeof(int64_t));
  kernel.run(dBoxes, dScores, nullptr, dIou, dScore, selected, count);
  EXPECT_EQ(download(selected, selectedBytes), Bytes(selectedBytes, 0));
  EXPECT_EQ(download(count, sizeof(int64_t)), Bytes(sizeof(int64_t), 0));
  gpu::NonMaxSuppression tooSmall(*context, batches, classes, boxes, false, 1);
  EXPECT_THROW(
      tooSmall.run(dBoxes, dScores, dMax, dIou, dScore, selected, count),
      Error);
}

} // namespace
