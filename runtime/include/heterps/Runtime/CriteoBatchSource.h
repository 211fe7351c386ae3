//===- CriteoBatchSource.h - Criteo TSV as a BatchSource --------*- C++ -*-===//
//
// Feeds a CTR training bundle from a Criteo-format file (CtrData.h): the
// f32 [N, 13] input gets the dense features, the i64 [N, 26] input the
// hashed sparse ids and the label input the labels. Its position is the
// reader's DataPosition text ("offset=O line=L epoch=E"), which is what
// checkpoints have always recorded, and since 2026-12-02 " head=H", the
// reader's hash of the file's first 64 KiB: a byte offset means nothing in
// another file, and a resume on one named like it went on silently.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_CRITEOBATCHSOURCE_H
#define HETERPS_RUNTIME_CRITEOBATCHSOURCE_H

#include "heterps/Runtime/BatchSource.h"
#include "heterps/Runtime/CtrData.h"

#include <memory>

namespace heterps::rt::data {

/// Which bundle input carries what: the f32 [N, 13] dense features, the i64
/// [N, 26] sparse ids and the label input of the TrainingSpec ([N] or
/// [N, 1], f32 or i64); -1 where the model has no such input.
struct CtrInputs {
  int dense = -1, sparse = -1, label = -1;
};
/// Throws Error naming an input that is none of the three, or a bundle that
/// is not a training bundle.
CtrInputs mapCtrInputs(const Bundle &bundle);

/// Reader options for `bundle`: every sparse field hashed into `hashBuckets`
/// ids (0: a single table's rows / 26, an Error when the tables differ).
ReaderOptions ctrReaderOptions(const Bundle &bundle, const CtrInputs &layout,
                               int64_t hashBuckets);

class CriteoBatchSource : public BatchSource {
public:
  /// Opens `path`; throws Error if it cannot be opened. Errors of the
  /// file begin with `flag`, the option that named it ("--data").
  CriteoBatchSource(const Bundle &bundle, CtrInputs layout, std::string path,
                    ReaderOptions options, std::string flag);
  ~CriteoBatchSource() override;

  int64_t next(int64_t rows, std::vector<HostTensor> &inputs) override;
  std::string position() const override;
  void seek(const std::string &position) override;
  void restart() override;
  std::string describe() const override;
  std::string warning() const override;
  int64_t hashBuckets() const override {
    return options.tableSizes.empty() ? 0 : options.tableSizes[0];
  }

private:
  const Bundle &bundle;
  CtrInputs layout;
  std::string path;
  ReaderOptions options;
  std::string flag;
  std::unique_ptr<CriteoReader> reader;
  CtrBatch batch;
};

} // namespace heterps::rt::data

#endif // HETERPS_RUNTIME_CRITEOBATCHSOURCE_H
