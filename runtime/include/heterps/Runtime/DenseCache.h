//===- DenseCache.h - Dense parameters where their stages run ---*- C++ -*-===//
//
// A dense cache keeps dense parameters of the in-process parameter server,
// with their optimizer state, in the memory of the device whose stages
// train them, and runs their optimizer there: a GPU stage then reads its
// weights and leaves its gradients in GPU memory, and no dense parameter or
// gradient crosses PCIe in a training step (stage ABI 5's parameterOnDevice
// and pushDenseFromDevice). The interface has a host-memory implementation
// (HostDenseCache), which tests the training server's side of it without a
// GPU, and a CUDA one (makeCudaDenseCache).
//
//   adopt(name)           the parameter's values and state move into the
//                         cache: from now on the cache's copy is the
//                         parameter, and the server's is stale
//   stageGradient(...)    a micro-batch's gradient, copied into the step's
//                         buffer of the parameter (from the cache's memory
//                         or the host's)
//   update(name, ...)     the staged gradients summed in the order given,
//                         divided by the step's micro-batches and applied
//                         with the server's optimizer and learning-rate
//                         scale: bit for bit what TrainingServer::finishStep
//                         and ParameterServer::pushDense compute on the host
//   writeBack()           every adopted parameter back into the server
//                         (checkpoints and parameter dumps read it there)
//   reload()              every adopted parameter from the server again
//                         (after a checkpoint load)
//
// Threads: stageGradient may run on several stage threads at once; the
// rest needs the cache to itself (the training server calls it between
// steps).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_DENSECACHE_H
#define HETERPS_RUNTIME_DENSECACHE_H

#include "heterps/Runtime/ParameterServer.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace heterps::rt::ps {

class DenseCache {
public:
  virtual ~DenseCache();

  /// Takes dense parameter `name` of the server into the cache (once; later
  /// calls return the same memory). Returns its values in the cache's
  /// memory, valid for the cache's lifetime and unchanged between updates.
  virtual float *adopt(const std::string &name) = 0;
  virtual bool adopted(const std::string &name) const = 0;
  /// Whether the cache's memory is a GPU's (else the host's).
  virtual bool onDevice() const = 0;

  /// Copies `count` floats of gradient of `name` (in the cache's memory or
  /// the host's) into the step's buffer; returns where they start there.
  /// `count` must be the parameter's size.
  virtual size_t stageGradient(const std::string &name, const float *gradient,
                               size_t count) = 0;
  /// Applies the staged gradients at `offsets` (the step's order), summed
  /// and divided by `divisor`, then forgets what `name` staged.
  virtual void update(const std::string &name,
                      const std::vector<size_t> &offsets, float divisor) = 0;
  /// Forgets every staged gradient (a discarded step).
  virtual void discardStaged() = 0;

  /// The current values of `name` into `host` (its size of floats).
  virtual void readValues(const std::string &name, float *host) = 0;
  /// Writes every adopted parameter's values and state into the server.
  virtual void writeBack() = 0;
  /// Re-reads every adopted parameter from the server.
  virtual void reload() = 0;

protected:
  /// The error for a parameter used before it was adopted.
  static Error notAdopted(const std::string &name);
  /// For reload: throws Error unless `name` keeps its `rowFloats` (its
  /// values and state) at `reloaded`, so stages keep reading it in place.
  static void checkReloadedSize(const std::string &name, size_t rowFloats,
                                size_t reloaded);
  /// Throws Error unless `count` is the size of `name`.
  static void checkGradientSize(const std::string &name, size_t count,
                                size_t size);
  /// For update: throws Error unless each offset starts a whole staged
  /// gradient of `size` floats within the `stagedFloats` staged.
  static void checkOffsets(const std::string &name,
                           const std::vector<size_t> &offsets, size_t size,
                           size_t stagedFloats);
};

/// The dense cache in host memory, over an in-process server.
class HostDenseCache : public DenseCache {
public:
  explicit HostDenseCache(ParameterServer &server);
  ~HostDenseCache() override;

  float *adopt(const std::string &name) override;
  bool adopted(const std::string &name) const override;
  bool onDevice() const override { return false; }
  size_t stageGradient(const std::string &name, const float *gradient,
                       size_t count) override;
  void update(const std::string &name, const std::vector<size_t> &offsets,
              float divisor) override;
  void discardStaged() override;
  void readValues(const std::string &name, float *host) override;
  void writeBack() override;
  void reload() override;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Whether this build has the CUDA dense cache (a CUDA toolkit was found).
bool cudaDenseCacheBuilt();

/// A dense cache in the memory of CUDA device `device`, over an in-process
/// server. Throws Error when the build has none or no such device is usable.
std::unique_ptr<DenseCache> makeCudaDenseCache(ParameterServer &server,
                                               int device = 0);

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_DENSECACHE_H
