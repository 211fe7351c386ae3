//===- Determinant.cpp - ONNX Det on the CPU ------------------------------===//
//
// The shared LU elimination (common/Determinant.h) on the operands in place,
// one matrix after another: Det's matrices are small, so splitting them over
// threads would cost more than it saves.
//
//===----------------------------------------------------------------------===//

#include "../common/Determinant.h"

#include "heterps/Runtime/CpuKernels.h"

namespace heterps::rt::cpu {

struct Determinant::Impl {
  detail::DeterminantPlan plan;
};

Determinant::Determinant(Context &, DType type, int64_t batch, int64_t n)
    : impl(new Impl{detail::DeterminantPlan(type, batch, n)}) {}
Determinant::~Determinant() = default;
void Determinant::run(const void *x, void *y) { impl->plan.run(x, y); }

} // namespace heterps::rt::cpu
