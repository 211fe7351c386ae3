//===- Kernel.h - What one timed forward pass runs --------------*- C++ -*-===//
//
// Private to lib/Profile. A Kernel is the oneDNN primitives (with their
// memory) and C++ loops one forward pass of a layer runs. The op-family
// builders (Dense.cpp, PoolingNormalization.cpp, Elementwise.cpp,
// DataMovement.cpp) fill it through a KernelBuilder. These files are compiled
// with exceptions because dnnl.hpp reports errors by throwing; an op the
// profiler cannot time is reported by throwing Unsupported, and both are
// caught in LayerProfiler::measure.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_PROFILE_KERNEL_H
#define HETERPS_LIB_PROFILE_KERNEL_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace heterps::profile::detail {

using Dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

/// Thrown for a layer oneDNN has no counterpart for: it is skipped.
struct Unsupported {
  std::string reason;
};

struct Kernel {
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  std::vector<Step> steps;
  /// Plain C++ work run after the primitives (gathers).
  std::vector<std::function<void()>> loops;
  std::string note;
};

/// A tensor type as oneDNN sees it when only its bytes matter: element types
/// oneDNN lacks (i64, f64, i16) become f32/f16 elements, 8-byte ones with an
/// extra innermost dim of 2.
struct ByteView {
  dt type;
  Dims dims;
};

class KernelBuilder {
public:
  KernelBuilder(dnnl::engine engine, int64_t batch, uint64_t maxTableBytes)
      : engine(std::move(engine)), batch(batch), maxTableBytes(maxTableBytes) {}

  int64_t boundBatch() const { return batch; }
  uint64_t tableByteLimit() const { return maxTableBytes; }

  /// Extents of a ranked tensor, dynamic ones bound to the batch; a rank-0
  /// tensor is {1}.
  Dims dims(mlir::Type type) const;
  /// The oneDNN element type of `type`'s elements.
  dt dataType(mlir::Type type) const;
  /// Bytes per element of `type`.
  unsigned elementBytes(mlir::Type type) const;
  ByteView bytes(mlir::Type type) const;

  /// Dense row-major descriptor.
  static dnnl::memory::desc plain(const Dims &dims, dt type);
  dnnl::memory::desc plain(mlir::Type type) const {
    return plain(dims(type), dataType(type));
  }

  /// Adds `primitive`, allocating and initialising memory for every argument
  /// its descriptor `pd` asks for; `numSources` for concat's sources.
  void add(const dnnl::primitive_desc_base &pd, dnnl::primitive primitive,
           int numSources = 0);
  /// Copies (and converts) `src` into `dst` (strided views allowed).
  void addReorder(const dnnl::memory::desc &src, const dnnl::memory::desc &dst);
  void addLoop(std::function<void()> loop) {
    kernel.loops.push_back(std::move(loop));
  }
  void note(const std::string &text);

  const dnnl::engine &getEngine() const { return engine; }
  Kernel take() { return std::move(kernel); }

private:
  dnnl::memory allocate(const dnnl::memory::desc &md);

  dnnl::engine engine;
  int64_t batch;
  uint64_t maxTableBytes;
  Kernel kernel;
};

/// Row-major strides of `dims`.
Dims stridesOf(const Dims &dims);
/// `dims` with leading 1s up to `rank`.
Dims padRank(const Dims &dims, size_t rank);
/// `values` when it has one entry per spatial axis (`n`), else `fallback`s.
Dims spatial(llvm::ArrayRef<int64_t> values, size_t n, int64_t fallback);

/// Window geometry of a conv or pool in oneDNN's terms: dilations count the
/// gaps between taps, and hps's [begins..., ends...] pads are split.
struct WindowDims {
  Dims dilations, padBegin, padEnd;
};
WindowDims windowDims(llvm::ArrayRef<int64_t> dilations,
                      llvm::ArrayRef<int64_t> pads, size_t n);

/// Normalises a possibly negative axis of a rank-`rank` tensor.
int64_t normAxis(int64_t axis, int64_t rank);

// One builder per op family; each returns false for ops of other families.
bool buildDense(mlir::Operation *op, KernelBuilder &builder);
bool buildPoolingNormalization(mlir::Operation *op, KernelBuilder &builder);
bool buildElementwise(mlir::Operation *op, KernelBuilder &builder);
bool buildDataMovement(mlir::Operation *op, KernelBuilder &builder);

} // namespace heterps::profile::detail

#endif // HETERPS_LIB_PROFILE_KERNEL_H
