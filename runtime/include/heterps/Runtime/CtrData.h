//===- CtrData.h - Streaming reader for Criteo-format CTR data -*- C++ -*-===//
//
// Training data for CTR models, as plain C++ (no MLIR, no kernels): a
// streaming reader of Criteo-format TSV files that fills fixed-layout batches
// and whose position can be checkpointed and restored. Metrics live in
// CtrDataMetrics.h, the synthetic data generator in CtrDataGen.h.
//
// Line format (one example per line, '\n' or "\r\n" terminated):
//
//   label \t I1 .. I13 \t C1 .. C26
//
//  * label: "0" or "1".
//  * I1..I13: decimal integers (may be negative) or empty (missing).
//  * C1..C26: hexadecimal hashes (Criteo uses 8 digits; 1 to 16 digits of
//    either case are accepted) or empty (missing).
//
// Anything else (wrong number of fields, a bad label, a bad integer, a bad
// hex hash, a line longer than the read buffer) makes the line malformed: it
// is counted and skipped, the first few are kept with line numbers and
// reasons, and reading goes on.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_CTRDATA_H
#define HETERPS_RUNTIME_CTRDATA_H

#include "heterps/Runtime/Types.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace heterps::rt::data {

constexpr int kNumDense = 13;
constexpr int kNumSparse = 26;
/// label + dense + sparse.
constexpr int kNumFields = 1 + kNumDense + kNumSparse;

/// A dense count as the model reads it (the log transform): sign(x) *
/// log(1 + |x|). The few negative values of real Criteo data (>= -3) stay
/// distinct from 0 and small, and a corrupt one stays bounded: kept as is,
/// one row of -9223372036854775808 made a step's loss 4e15.
float criteoDenseFeature(int64_t raw);

/// A batch of examples in row-major layout, ready to copy into tensors.
struct CtrBatch {
  int64_t rows = 0;
  /// [rows]: 0 or 1.
  std::vector<float> labels;
  /// [rows x kNumDense]: missing -> 0; with the log transform (the default)
  /// criteoDenseFeature(x).
  std::vector<float> dense;
  /// [rows x kNumSparse]: 0 is reserved for "missing"; a present hash h
  /// becomes 1 + h (no table size) or 1 + h % (tableSize - 1), so ids always
  /// lie in [0, tableSize) and a hash of 0 is not confused with missing.
  std::vector<int64_t> sparse;

  const float *denseRow(int64_t row) const {
    return dense.data() + row * kNumDense;
  }
  const int64_t *sparseRow(int64_t row) const {
    return sparse.data() + row * kNumSparse;
  }
};

/// Where the reader is: the next unread line. Saved in checkpoints ("data
/// position") and given back to CriteoReader::seek to resume exactly there.
struct DataPosition {
  /// File offset of the first byte of the next unread line.
  uint64_t byteOffset = 0;
  /// Lines consumed in the current epoch (valid or malformed); the next line
  /// read is line lineNumber + 1 (line numbers are 1-based).
  uint64_t lineNumber = 0;
  /// Completed passes over the file.
  uint64_t epoch = 0;

  /// "offset=O line=L epoch=E", for a checkpoint manifest.
  std::string toString() const;
  /// The inverse of toString; throws Error on anything else.
  static DataPosition parse(const std::string &text);
  bool operator==(const DataPosition &other) const {
    return byteOffset == other.byteOffset && lineNumber == other.lineNumber &&
           epoch == other.epoch;
  }
  bool operator!=(const DataPosition &other) const { return !(*this == other); }
};

enum class MalformedReason : uint8_t {
  FieldCount, // not exactly kNumFields tab-separated fields
  BadLabel,   // label other than "0" or "1"
  BadInteger, // dense field that is not a whole int64
  BadHex,     // sparse field that is not 1-16 hex digits
  LineTooLong // longer than the read buffer; skipped to its end
};
constexpr int kNumMalformedReasons = 5;
const char *malformedReasonName(MalformedReason reason);

/// One skipped line, kept for the first few (ReaderOptions::keepMalformed).
struct MalformedLine {
  uint64_t epoch = 0;
  uint64_t lineNumber = 0; // 1-based, within its epoch
  MalformedReason reason = MalformedReason::FieldCount;
  /// 0-based field index (0 = label, 1..13 dense, 14..39 sparse); for
  /// FieldCount the number of fields found; -1 for LineTooLong.
  int field = -1;
};

/// "line 5: bad hex in column 20", "line 7: wrong field count (38
/// columns, expected 40)"; columns count from 1 (the label).
std::string describe(const MalformedLine &bad);

/// Counts since the reader was opened (seek does not reset them).
struct ReadStats {
  uint64_t lines = 0;     // lines consumed, valid or not
  uint64_t rows = 0;      // valid examples delivered
  uint64_t malformed = 0; // lines skipped
  uint64_t bytes = 0;     // bytes consumed (including newlines)
  std::array<uint64_t, kNumMalformedReasons> byReason{};
  std::vector<MalformedLine> firstMalformed;
  /// The file's last line had no newline: read as it is, though a file cut
  /// short in its last field reads so too, with a wrong id.
  bool lastLineUnterminated = false;

  /// One line per count and per kept malformed line, for logs.
  std::string summary() const;
};

struct ReaderOptions {
  /// Start again from the beginning at end of file; epoch counts the passes.
  /// A pass that starts at offset 0 and yields no valid row ends reading, so
  /// an empty or all-malformed file cannot spin forever.
  bool loop = false;
  /// With loop: stop after this many completed epochs (0 = never).
  uint64_t maxEpochs = 0;
  /// Empty, or kNumSparse entries: 0 = no modulo, otherwise >= 2 (see
  /// CtrBatch::sparse).
  std::vector<int64_t> tableSizes;
  /// Read dense values through criteoDenseFeature (see CtrBatch::dense).
  bool logTransform = true;
  /// Read chunk size; also the longest line accepted.
  size_t bufferBytes = size_t(1) << 20;
  /// How many malformed lines ReadStats::firstMalformed keeps.
  size_t keepMalformed = 10;
};

/// Streams examples out of one Criteo-format file. Not thread-safe; one
/// reader per data-loading thread.
class CriteoReader {
public:
  /// Opens the file; throws Error if it cannot be opened or the options are
  /// invalid.
  explicit CriteoReader(const std::string &path, ReaderOptions options = {});
  ~CriteoReader();
  CriteoReader(const CriteoReader &) = delete;
  CriteoReader &operator=(const CriteoReader &) = delete;

  /// Fills `batch` with up to maxRows valid examples (fewer only at the end
  /// of the data) and returns how many; 0 means the data is exhausted. The
  /// batch's vectors keep their capacity, so a reused batch does not
  /// reallocate.
  int64_t nextBatch(CtrBatch &batch, int64_t maxRows);

  /// The next unread line. Between nextBatch calls this is exactly where the
  /// batch ended: seek(position()) on a fresh reader delivers the same rows
  /// this reader would deliver next.
  DataPosition position() const;
  /// Resumes at a saved position; throws Error if it lies past the end of the
  /// file or not at a line start.
  void seek(const DataPosition &position);
  /// seek({0, 0, 0}).
  void rewind() { seek(DataPosition()); }
  /// Counts from now on only (a new pass over an evaluation file).
  void clearStats() { stats_ = ReadStats(); }

  const ReadStats &stats() const { return stats_; }
  const std::string &path() const { return path_; }
  uint64_t fileSize() const { return fileSize_; }
  /// 16 hex digits: stableHash of the file's first 64 KiB as opened.
  const std::string &head() const { return head_; }

private:
  /// Points line/length at the next line (without its '\n'); false at the
  /// end of the file. Lines longer than the buffer are reported via tooLong.
  bool nextLine(const char *&line, size_t &length, bool &tooLong);
  void refill();
  void resetBuffer(uint64_t fileOffset);
  /// Parses one line into row `row` of the batch; on failure records why.
  bool parseLine(const char *line, size_t length, CtrBatch &batch, int64_t row);
  void recordMalformed(MalformedReason reason, int field);

  std::string path_;
  ReaderOptions options_;
  std::FILE *file_ = nullptr;
  uint64_t fileSize_ = 0;
  std::string head_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  size_t begin_ = 0, end_ = 0;    // unread bytes are buffer_[begin_, end_)
  uint64_t bufferFileOffset_ = 0; // file offset of buffer_[0]
  bool eof_ = false;
  bool skipping_ = false; // inside a line longer than the buffer
  uint64_t lineNumber_ = 0, epoch_ = 0;
  // For the "a full pass yielded nothing" stop when looping.
  bool passFromStart_ = true;
  uint64_t rowsThisPass_ = 0;
  bool exhausted_ = false;
  ReadStats stats_;
};

} // namespace heterps::rt::data

#endif // HETERPS_RUNTIME_CTRDATA_H
