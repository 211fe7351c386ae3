//===- PassKeyProgram.h - The ids a pass will pull, ahead of it -*- C++ -*-===//
//
// Runs a training bundle's pass-key program (manifest "pass_keys", written
// by the compiler's --hps-outline-pass-keys): the part of the stages that
// computes, from the bundle inputs, the ids every sparse pull reads. A pass
// cache (PassCache.h) is given these ids for all of a pass's steps before
// the stages run them, so it can load every row of the pass once.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PASSKEYPROGRAM_H
#define HETERPS_RUNTIME_PASSKEYPROGRAM_H

#include "heterps/Runtime/AlignedBuffer.h"
#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/Executor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace heterps::rt {

class PassKeyProgram {
public:
  /// Receives the ids of `table` that one micro-batch pulls.
  using KeySink = std::function<void(const std::string &table,
                                     const int64_t *ids, size_t count)>;

  /// Loads `bundle`'s program with `threads` kernel threads (<= 0: the
  /// backend default). Throws Error naming the bundle when it has none,
  /// with the compiler's reason where it gave one.
  PassKeyProgram(const Bundle &bundle, int threads);
  ~PassKeyProgram();
  PassKeyProgram(const PassKeyProgram &) = delete;
  PassKeyProgram &operator=(const PassKeyProgram &) = delete;

  /// Runs the program on every micro-batch of `inputs` (one tensor per
  /// bundle input, batched ones holding `samples` samples, a whole number
  /// of the bundle's micro-batches) and hands each pull's ids to `sink`, in
  /// micro-batch order. Throws Error naming the program on failure.
  void run(const std::vector<HostTensor> &inputs, int64_t samples,
           const KeySink &sink);

private:
  const Bundle &bundle;
  const PassKeysSpec &spec;
  std::unique_ptr<StageProgram> program;
  std::vector<AlignedBuffer> outputs;
  std::vector<int64_t> widened; // i32 ids as i64
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_PASSKEYPROGRAM_H
