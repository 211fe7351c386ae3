//===- DataDependent.cpp - NonZero, Unique, NonMaxSuppression on the CPU --===//
//
// Ops whose result extent depends on the data. The algorithms are shared
// with the GPU kernels (common/DataDependentAlgorithms.h); here they run on
// the operands themselves, on the calling thread: they are sorts and scans
// that code generation places where the data is small (masks, detections).
//
//===----------------------------------------------------------------------===//

#include "../common/DataDependentAlgorithms.h"
#include "DTypeDispatch.h"

#include "heterps/Runtime/CpuKernels.h"

namespace heterps::rt::cpu {
namespace {

/// How NonZero and Unique compare elements of D: the 16-bit floats by
/// their bits, everything else (Bool as its byte) natively.
template <DType D> struct OpsOf {
  using type = detail::NumberOps<typename DTypeTraits<D>::Storage>;
};
template <> struct OpsOf<DType::F16> {
  using type = detail::Binary16Ops<Half, detail::kHalfInfinityBits>;
};
template <> struct OpsOf<DType::BF16> {
  using type = detail::Binary16Ops<BFloat16, detail::kBFloat16InfinityBits>;
};

void storeCount(void *count, int64_t value) {
  *static_cast<int64_t *>(count) = value;
}

} // namespace

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

struct NonZero::Impl {
  detail::NonZeroPlan plan;
  detail::NonZeroFn fn;
};

NonZero::NonZero(Context &, DType type, const Shape &x)
    : impl(std::make_unique<Impl>(Impl{
          detail::NonZeroPlan("NonZero", x), dispatchDType(type, [](auto d) {
            return detail::NonZeroFn(
                &detail::runNonZero<typename OpsOf<decltype(d)::value>::type>);
          })})) {}
NonZero::~NonZero() = default;
void NonZero::run(const void *x, void *indices, void *count) {
  storeCount(count, impl->fn(impl->plan, x, static_cast<int64_t *>(indices),
                             /*zeroPadding=*/true));
}

//===----------------------------------------------------------------------===//
// Unique
//===----------------------------------------------------------------------===//

struct Unique::Impl {
  detail::UniquePlan plan;
  detail::UniqueFn fn;
};

Unique::Unique(Context &, DType type, int64_t outer, int64_t extent,
               int64_t inner, bool sorted)
    : impl(std::make_unique<Impl>(Impl{
          detail::UniquePlan("Unique", dtypeSize(type), outer, extent, inner,
                             sorted),
          dispatchDType(type, [](auto d) {
            return detail::UniqueFn(
                &detail::runUnique<typename OpsOf<decltype(d)::value>::type>);
          })})) {}
Unique::~Unique() = default;
void Unique::run(const void *x, void *y, void *firstIndices, void *inverse,
                 void *counts, void *count) {
  storeCount(count,
             impl->fn(impl->plan, x, y, static_cast<int64_t *>(firstIndices),
                      static_cast<int64_t *>(inverse),
                      static_cast<int64_t *>(counts),
                      /*zeroPadding=*/true));
}

//===----------------------------------------------------------------------===//
// NonMaxSuppression
//===----------------------------------------------------------------------===//

struct NonMaxSuppression::Impl {
  detail::NmsPlan plan;
};

NonMaxSuppression::NonMaxSuppression(Context &, int64_t batches,
                                     int64_t classes, int64_t boxes,
                                     bool centerPointBox, int64_t capacity)
    : impl(std::make_unique<Impl>(
          Impl{detail::NmsPlan("NonMaxSuppression", batches, classes, boxes,
                               centerPointBox, capacity)})) {}
NonMaxSuppression::~NonMaxSuppression() = default;
void NonMaxSuppression::run(const void *boxes, const void *scores,
                            const void *maxPerClass, const void *iouThreshold,
                            const void *scoreThreshold, void *selected,
                            void *count) {
  storeCount(count, impl->plan.run(static_cast<const float *>(boxes),
                                   static_cast<const float *>(scores),
                                   static_cast<const int64_t *>(maxPerClass),
                                   static_cast<const float *>(iouThreshold),
                                   static_cast<const float *>(scoreThreshold),
                                   static_cast<int64_t *>(selected),
                                   /*zeroPadding=*/true));
}

} // namespace heterps::rt::cpu
