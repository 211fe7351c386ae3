//===- LayerProfiler.h - Time hps layers on the local CPU -------*- C++ -*-===//
//
// Measures the forward pass of one hps layer op on this machine's CPU with
// the runtime's own kernels: the layer is prepared as a stage of its own by
// the bundle's stage passes (heterps/Target/LayerStage.h), and the kernels
// that stage's program would construct are constructed in process, on an
// arena and weights laid out as the bundle lays them out. They run once to
// warm up and `repeats` times timed; the median is reported. The header is
// free of the runtime so callers need no exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_PROFILE_LAYERPROFILER_H
#define HETERPS_PROFILE_LAYERPROFILER_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace heterps::profile {

struct ProfileOptions {
  int64_t batch = 256;   ///< Extent bound to dynamic dims.
  unsigned repeats = 10; ///< Timed runs after one warm-up run.
  /// The runtime context's threads; 0 keeps its default (all cores).
  unsigned threads = 0;
  /// Weights as a training step reads them (parameters the kernels may not
  /// prepack), not as frozen constants.
  bool training = true;
  /// Embedding tables larger than this are timed on their first rows only
  /// (still far larger than the caches, so gathers stay DRAM bound).
  uint64_t maxTableBytes = uint64_t(512) << 20;
};

struct LayerMeasurement {
  /// Median seconds of one forward pass; none when the layer was skipped.
  std::optional<double> seconds;
  /// Why the layer was skipped, or how it was approximated; may be empty.
  std::string note;
};

class LayerProfiler {
public:
  explicit LayerProfiler(ProfileOptions options);
  ~LayerProfiler();

  /// Times `layer` (an hps layer op). A layer the stage passes do not lower
  /// comes back skipped with their diagnostic as the note; a kernel
  /// rejecting its parameters, or running out of memory, is an error.
  llvm::Expected<LayerMeasurement> measure(mlir::Operation *layer);

  const ProfileOptions &options() const { return opts; }

private:
  struct Impl;
  ProfileOptions opts;
  std::unique_ptr<Impl> impl;
};

} // namespace heterps::profile

#endif // HETERPS_PROFILE_LAYERPROFILER_H
