//===- LoopDense.h - MatMul and Conv in the types oneDNN lacks --*- C++ -*-===//
//
// oneDNN 2.6 multiplies f32, bf16 and int8 only, so f64 (ONNX Einsum and
// MatMul on doubles) and the integers (MatMulInteger, ConvInteger and the
// QLinear ops, which decompose into i32 products) run as plain loops here.
// They are exact in the element type's own arithmetic: integers wrap modulo
// 2^bits as numpy and onnxruntime do, f16/bf16 accumulate in float. The
// oneDNN kernels in Dense.cpp delegate to these for every type but f32.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_LOOPDENSE_H
#define HETERPS_RUNTIME_KERNELS_CPU_LOOPDENSE_H

#include "heterps/Runtime/Types.h"

#include <array>
#include <vector>

namespace heterps::rt::cpu {

/// y[batch, m, n] = sum_k a[batch, m, k] * b[batch, k, n]. `a`, `b` and `y`
/// have one rank >= 2 (the caller promotes 1-D operands); a and b broadcast
/// over the batch dims of y.
class LoopMatMul {
public:
  LoopMatMul(DType type, const Shape &a, const Shape &b, const Shape &y,
             bool parallel);
  void run(const void *a, const void *b, void *y) const;

  using Fn = void (*)(const LoopMatMul &, const void *, const void *, void *);

  int64_t m = 0, k = 0, n = 0;
  /// Element offsets of a and b for each batch of y, in y's order.
  std::vector<std::array<int64_t, 2>> batches;
  bool parallel = false;

private:
  Fn fn = nullptr;
};

/// Grouped N-d convolution (1-3 spatial axes) of x [N, C, ...] by a filter
/// [M, C / group, k...] with an optional bias [M], zero padding; y's shape
/// is authoritative (end pads follow from it).
class LoopConv {
public:
  LoopConv(DType type, const Shape &x, const Shape &w, bool hasBias,
           const Shape &y, const Shape &strides, const Shape &dilations,
           const Shape &padBegin, int64_t group, bool parallel);
  void run(const void *x, const void *w, const void *bias, void *y) const;

  using Fn = void (*)(const LoopConv &, const void *, const void *,
                      const void *, void *);

  /// Spatial geometry padded to three axes with unit extents.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1},
      stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};
  int64_t batch = 0, inChannels = 0, outChannels = 0, group = 1;
  bool hasBias = false, parallel = false;

private:
  Fn fn = nullptr;
};

} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_KERNELS_CPU_LOOPDENSE_H
