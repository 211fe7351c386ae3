//===- Determinant.cu - ONNX Det on a GPU ---------------------------------===//
//
// The shared LU elimination (common/Determinant.h) on a host copy of the
// matrices: Det's matrices are small and the op rare, so a device LU
// (cuSOLVER's getrf per batch) would not repay its setup.
//
//===----------------------------------------------------------------------===//

#include "../common/Determinant.h"

#include "heterps/Runtime/GpuKernels.h"

#include <vector>

namespace heterps::rt::gpu {

struct Determinant::Impl {
  Context &ctx;
  detail::DeterminantPlan plan;
  std::vector<unsigned char> x, y;
};

Determinant::Determinant(Context &ctx, DType type, int64_t batch, int64_t n)
    : impl(new Impl{ctx, detail::DeterminantPlan(type, batch, n), {}, {}}) {
  size_t element = dtypeSize(type);
  impl->x.resize(size_t(batch * n * n) * element);
  impl->y.resize(size_t(batch) * element);
}
Determinant::~Determinant() = default;
void Determinant::run(const void *x, void *y) {
  Impl &p = *impl;
  p.ctx.download(p.x.data(), x, p.x.size()); // waits for the stream
  p.plan.run(p.x.data(), p.y.data());
  p.ctx.upload(y, p.y.data(), p.y.size());
}

} // namespace heterps::rt::gpu
