//===- NpyBatchSource.h - .npy arrays as a BatchSource ----------*- C++ -*-===//
//
// Feeds any training bundle from NumPy arrays, one .npy file per bundle
// input (the label input included): dim 0 of every array is the sample, the
// rest must be the input's per-sample shape, and the element type the
// input's (no conversions). Every array is checked, and read whole into
// memory, when the source is made, so bad data fails before a step runs.
//
// Samples are delivered in file order; a looping source starts again at
// sample 0 when it runs out, also in the middle of a step. Its position is
// "npy rows=N row=R epoch=E": the next sample R of N, after E full passes.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_NPYBATCHSOURCE_H
#define HETERPS_RUNTIME_NPYBATCHSOURCE_H

#include "heterps/Runtime/BatchSource.h"

#include <optional>
#include <vector>

namespace heterps::rt::data {

/// One NAME=FILE of --data-input / --eval-input.
struct NpyInput {
  std::string name, path;
};
/// Splits "NAME=FILE" at its first '='; throws Error quoting `flag` when
/// either side is empty.
NpyInput parseNpyInput(const std::string &text, const std::string &flag);

/// Where an NpyBatchSource is.
struct NpyPosition {
  uint64_t rows = 0;  // samples in the arrays
  uint64_t row = 0;   // the next one
  uint64_t epoch = 0; // completed passes
  std::string toString() const;
  /// The inverse of toString; throws Error on anything else.
  static NpyPosition parse(const std::string &text);
};

class NpyBatchSource : public BatchSource {
public:
  /// Maps one array per input of `specs`, each named exactly once in
  /// `files`, and checks them; throws Error naming `flag`, the input and the
  /// file at fault. `loop`: go over the data forever (training), else once.
  NpyBatchSource(const std::vector<InputSpec> &specs,
                 const std::vector<NpyInput> &files, bool loop,
                 std::string flag = "--data-input");

  int64_t next(int64_t rows, std::vector<HostTensor> &inputs) override;
  std::string position() const override;
  void seek(const std::string &position) override;
  void restart() override;
  std::string describe() const override;

  /// Visit the samples of each epoch in a random order drawn from (seed,
  /// epoch) alone, so a position (epoch and offset) still names one place
  /// and a resumed run continues the same order.
  void shuffle(uint64_t seed) override;

  /// Samples in the arrays.
  int64_t samples() const { return rows; }
  /// Throws Error naming the input, its file and the first sample whose
  /// class id (input `input`, i64) lies outside [0, classes).
  void checkClassIds(int input, int64_t classes) const;
  /// Throws Error naming the input, its file and the first sample whose
  /// label (input `input`, f32) is not in [0, 1], NaN included (binary
  /// cross-entropy; Criteo data's reader refuses such lines alike).
  void checkProbabilities(int input) const;
  /// Throws Error naming the input, its file and the first sample holding
  /// a NaN or an infinity, over every f32 array: for evaluation data, read
  /// whole at the end, where the training data is checked as it is read.
  void checkAllFinite() const;

private:
  /// Throws Error naming the input, its file and the first of samples
  /// [row, row + count) of f32 input `input` that holds a NaN or an
  /// infinity: one poisons every parameter it reaches, and the run trains
  /// to a NaN loss without saying why. It reads the mapping: callers run it
  /// inside MappedNpy::guardedRead.
  void checkFinite(size_t input, int64_t row, int64_t count) const;

  std::vector<InputSpec> specs;
  std::vector<NpyInput> files; // in the order of specs
  std::vector<MappedNpy> arrays;
  std::vector<size_t> sampleBytes;
  std::string flag;
  bool loop;
  int64_t rows = 0;
  NpyPosition at;
  std::optional<uint64_t> shuffleSeed;
  /// The sample order of epoch `orderEpoch` (shuffling only).
  std::vector<int64_t> order;
  uint64_t orderEpoch = 0;
  const std::vector<int64_t> &orderOf(uint64_t epoch);
};

} // namespace heterps::rt::data

#endif // HETERPS_RUNTIME_NPYBATCHSOURCE_H
