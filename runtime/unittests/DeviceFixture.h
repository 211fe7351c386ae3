//===- DeviceFixture.h - One backend context per test suite -----*- C++ -*-===//
//
// The fixture of the kernel tests that run on a device: one Context shared
// by a suite's cases (a GPU context costs a driver initialisation), every
// case skipped with the context's reason where none can be made (a machine
// without a CUDA device), and the buffers a case allocates freed after it.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_UNITTESTS_DEVICEFIXTURE_H
#define HETERPS_RUNTIME_UNITTESTS_DEVICEFIXTURE_H

#include "heterps/Runtime/Types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace heterps::rt::test {

/// `ContextT` is a backend's Context (cpu::Context, gpu::Context); `Base`
/// is testing::Test or a testing::TestWithParam.
template <typename ContextT, typename Base = testing::Test>
class DeviceFixture : public Base {
protected:
  static void SetUpTestSuite() {
    try {
      context = std::make_unique<ContextT>(0);
    } catch (const Error &error) {
      reason = error.what();
    }
  }
  static void TearDownTestSuite() { context.reset(); }

  void SetUp() override {
    if (!context)
      GTEST_SKIP() << reason;
    context->enterThread();
  }

  void TearDown() override {
    for (void *pointer : buffers)
      context->deallocate(pointer);
    buffers.clear();
  }

  /// Backend memory of `bytes` (at least one), freed after the case.
  void *allocate(size_t bytes) {
    void *pointer = context->allocate(std::max<size_t>(bytes, 1));
    buffers.push_back(pointer);
    return pointer;
  }

  /// A backend copy of `host`.
  template <typename T> void *device(const std::vector<T> &host) {
    void *pointer = allocate(host.size() * sizeof(T));
    if (!host.empty())
      context->upload(pointer, host.data(), host.size() * sizeof(T));
    return pointer;
  }

  /// The first `n` elements at `pointer`, on the host.
  template <typename T> std::vector<T> download(const void *pointer, size_t n) {
    std::vector<T> values(n);
    if (n > 0)
      context->download(values.data(), pointer, n * sizeof(T));
    return values;
  }

  static inline std::unique_ptr<ContextT> context;
  static inline std::string reason;
  std::vector<void *> buffers;
};

} // namespace heterps::rt::test

#endif // HETERPS_RUNTIME_UNITTESTS_DEVICEFIXTURE_H
