//===- BatchSource.h - Where a training run's samples come from -*- C++ -*-===//
//
// The trainer's view of its data: something that fills a step's bundle
// inputs with the next B samples, goes over its data in a fixed order (and,
// for training, loops over epochs), and whose position is one line of text
// that a checkpoint keeps and a fresh source over the same data seeks back
// to. CriteoBatchSource (CTR TSV) and NpyBatchSource (one .npy array per
// bundle input) implement it; the trainer knows neither format.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_BATCHSOURCE_H
#define HETERPS_RUNTIME_BATCHSOURCE_H

#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace heterps::rt::data {

class BatchSource {
public:
  virtual ~BatchSource();

  /// Fills `inputs` (one tensor per bundle input, in the bundle's order;
  /// reshaped by shapeInputs when they do not hold `rows` samples) with the
  /// next `rows` samples and returns how many it filled: `rows`, except at
  /// the end of a source that does not loop (0: nothing left) or of data
  /// without a valid sample.
  virtual int64_t next(int64_t rows, std::vector<HostTensor> &inputs) = 0;

  /// Where the next sample comes from: one line of text (no newline) for a
  /// checkpoint. Between next() calls, seek(position()) on a fresh source
  /// over the same data delivers the samples this one would deliver next.
  virtual std::string position() const = 0;
  /// Continues at a saved position; throws Error naming the data when the
  /// text is not a position of this kind of source over this data.
  virtual void seek(const std::string &position) = 0;
  /// Back to the first sample, with counts (warning()) reset.
  virtual void restart() = 0;

  /// The data, for messages: "'train.tsv'", "--data-input x=a.npy, ...".
  virtual std::string describe() const = 0;
  /// What was skipped since the last restart ("" when nothing), e.g. "3
  /// malformed lines skipped in 'train.tsv'".
  virtual std::string warning() const { return ""; }
  /// From now on, visit each epoch's samples in a random order drawn from
  /// `seed` and the epoch (positions keep naming one place). Throws Error
  /// where the source cannot (a file read as a stream).
  virtual void shuffle(uint64_t seed);
  /// Ids per sparse field that raw values are hashed into (Criteo data's
  /// --hash-buckets); 0 where ids are fed as they are.
  virtual int64_t hashBuckets() const { return 0; }
};

/// Makes `inputs` one tensor per input of `specs`, with `rows` samples in
/// dim 0 of every batched input; tensors already of that shape are kept.
void shapeInputs(const std::vector<InputSpec> &specs, int64_t rows,
                 std::vector<HostTensor> &inputs);

/// Samples [first, first + count) of every batched tensor of `all` into
/// `part` (unbatched ones are copied whole): a worker's slice of a step.
void sliceSamples(const std::vector<InputSpec> &specs,
                  const std::vector<HostTensor> &all, int64_t first,
                  int64_t count, std::vector<HostTensor> &part);

/// "f32 N x 13" (batched) or "f32 2x3": how messages name an input's type.
std::string describeInput(const TensorSpec &spec);

} // namespace heterps::rt::data

#endif // HETERPS_RUNTIME_BATCHSOURCE_H
