//===- CriteoReader.cpp - Streaming reader for Criteo-format data --------===//
//
// One pass over big chunks: lines are found with memchr inside a buffer that
// is refilled with fread, fields are parsed in place with std::from_chars,
// and rows are written straight into the caller's batch, so the hot loop
// allocates nothing.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CtrData.h"
#include "heterps/Runtime/StableHash.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <sstream>
#include <sys/stat.h>

namespace heterps::rt::data {

namespace {

std::string errnoText() { return std::strerror(errno); }

/// Fields of a line; only needed to explain a malformed one.
int countFields(const char *line, size_t length) {
  int fields = 1;
  for (size_t i = 0; i != length; ++i)
    fields += line[i] == '\t';
  return fields;
}

/// log(1 + x) as the reader stores it. Criteo's counts are mostly small,
/// so those come from a table: log1p costs more than parsing the number.
float log1pOf(int64_t x) {
  constexpr int64_t kTable = 4096;
  static const std::vector<float> table = [] {
    std::vector<float> values(kTable);
    for (int64_t i = 0; i != kTable; ++i)
      values[size_t(i)] = float(std::log1p(double(i)));
    return values;
  }();
  return x < kTable ? table[size_t(x)] : float(std::log1p(double(x)));
}

} // namespace

float criteoDenseFeature(int64_t raw) {
  // -raw overflows at INT64_MIN; its double does not.
  return raw >= 0 ? log1pOf(raw) : -float(std::log1p(-double(raw)));
}

const char *malformedReasonName(MalformedReason reason) {
  switch (reason) {
  case MalformedReason::FieldCount:
    return "wrong field count";
  case MalformedReason::BadLabel:
    return "bad label";
  case MalformedReason::BadInteger:
    return "bad integer";
  case MalformedReason::BadHex:
    return "bad hex";
  case MalformedReason::LineTooLong:
    return "line too long (longer than the reader's buffer, 1 MiB)";
  }
  return "unknown";
}

std::string DataPosition::toString() const {
  return "offset=" + std::to_string(byteOffset) +
         " line=" + std::to_string(lineNumber) +
         " epoch=" + std::to_string(epoch);
}

DataPosition DataPosition::parse(const std::string &text) {
  DataPosition position;
  const char *p = text.data(), *end = text.data() + text.size();
  auto field = [&](const char *key, uint64_t &value) {
    size_t keyLength = std::strlen(key);
    if (size_t(end - p) < keyLength || std::memcmp(p, key, keyLength) != 0)
      throw Error("bad data position '" + text + "': expected '" + key + "'");
    p += keyLength;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || next == p)
      throw Error("bad data position '" + text + "': bad number");
    p = next;
  };
  field("offset=", position.byteOffset);
  field(" line=", position.lineNumber);
  field(" epoch=", position.epoch);
  if (p != end)
    throw Error("bad data position '" + text + "': trailing text");
  return position;
}

std::string ReadStats::summary() const {
  std::ostringstream out;
  out << "lines " << lines << ", rows " << rows << ", malformed " << malformed
      << ", bytes " << bytes << "\n";
  for (int i = 0; i != kNumMalformedReasons; ++i)
    if (byReason[i])
      out << "  " << malformedReasonName(MalformedReason(i)) << ": "
          << byReason[i] << "\n";
  for (const MalformedLine &bad : firstMalformed)
    out << "  epoch " << bad.epoch << " " << describe(bad) << "\n";
  return out.str();
}

std::string describe(const MalformedLine &bad) {
  std::string text = "line " + std::to_string(bad.lineNumber) + ": " +
                     malformedReasonName(bad.reason);
  // Columns from 1, as cut and awk count them (column 1: the label).
  if (bad.reason == MalformedReason::FieldCount)
    text += " (" + std::to_string(bad.field) + " columns, expected " +
            std::to_string(kNumFields) + ")";
  else if (bad.field >= 0)
    text += " in column " + std::to_string(bad.field + 1);
  return text;
}

CriteoReader::CriteoReader(const std::string &path, ReaderOptions options)
    : path_(path), options_(std::move(options)) {
  if (!options_.tableSizes.empty()) {
    if (options_.tableSizes.size() != size_t(kNumSparse))
      throw Error("CriteoReader: tableSizes needs " +
                  std::to_string(kNumSparse) + " entries, got " +
                  std::to_string(options_.tableSizes.size()));
    for (int64_t size : options_.tableSizes)
      if (size != 0 && size < 2)
        throw Error("CriteoReader: a table size must be 0 (no modulo) or "
                    ">= 2 (id 0 is reserved for missing), got " +
                    std::to_string(size));
  }
  // A line must fit, and tiny buffers would only make reads slow.
  if (options_.bufferBytes < 64)
    throw Error("CriteoReader: bufferBytes must be at least 64");
  requireRegularFile(path_);
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_)
    throw Error("cannot open '" + path_ + "': " + errnoText());
  // We do our own buffering in big chunks; stdio's would be a second copy.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  // The file's start, read once: it names a gzip file as one (read as text
  // it was "wrong field count" on every line), and its hash tells a
  // checkpoint's file from another of the same name.
  std::string start(64 << 10, '\0');
  start.resize(std::fread(start.data(), 1, start.size(), file_));
  if (start.size() >= 2 && static_cast<unsigned char>(start[0]) == 0x1f &&
      static_cast<unsigned char>(start[1]) == 0x8b) {
    std::fclose(file_);
    file_ = nullptr;
    throw Error("'" + path_ +
                "' is gzip-compressed; give the decompressed file (gunzip -k)");
  }
  head_ = stableHashText(start);
  if (fseeko(file_, 0, SEEK_END) != 0) {
    std::fclose(file_);
    throw Error("cannot seek in '" + path_ + "'");
  }
  fileSize_ = uint64_t(ftello(file_));
  capacity_ = options_.bufferBytes;
  buffer_.reset(new char[capacity_]);
  resetBuffer(0);
}

CriteoReader::~CriteoReader() {
  if (file_)
    std::fclose(file_);
}

void CriteoReader::resetBuffer(uint64_t fileOffset) {
  if (fseeko(file_, off_t(fileOffset), SEEK_SET) != 0)
    throw Error("cannot seek in '" + path_ + "': " + errnoText());
  begin_ = end_ = 0;
  bufferFileOffset_ = fileOffset;
  eof_ = false;
  skipping_ = false;
}

void CriteoReader::refill() {
  if (begin_ != 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    bufferFileOffset_ += begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  size_t got = std::fread(buffer_.get() + end_, 1, capacity_ - end_, file_);
  if (got == 0) {
    if (std::ferror(file_))
      throw Error("read error in '" + path_ + "'");
    // Cut short under the run (rewritten, truncated): the rest of the pass
    // would be a short epoch, and checkpoints positions in another file.
    if (bufferFileOffset_ + end_ < fileSize_) {
      struct stat now {};
      const bool known = ::fstat(::fileno(file_), &now) == 0;
      throw Error("'" + path_ + "' shrank while it was being read (it held " +
                  std::to_string(fileSize_) + " bytes when opened" +
                  (known ? ", " + std::to_string(now.st_size) + " now" : "") +
                  ")");
    }
    eof_ = true;
  }
  end_ += got;
}

bool CriteoReader::nextLine(const char *&line, size_t &length, bool &tooLong) {
  for (;;) {
    char *data = buffer_.get();
    if (auto *newline = static_cast<char *>(
            std::memchr(data + begin_, '\n', end_ - begin_))) {
      size_t lineEnd = size_t(newline - data);
      line = data + begin_;
      length = lineEnd - begin_;
      stats_.bytes += length + 1;
      begin_ = lineEnd + 1;
      tooLong = skipping_;
      skipping_ = false;
      return true;
    }
    if (eof_) {
      // The last line may lack its newline.
      if (begin_ == end_ && !skipping_)
        return false;
      line = data + begin_;
      length = end_ - begin_;
      stats_.bytes += length;
      stats_.lastLineUnterminated = length > 0;
      begin_ = end_;
      tooLong = skipping_;
      skipping_ = false;
      return true;
    }
    if (begin_ == 0 && end_ == capacity_) {
      // A line longer than the buffer: drop what we have and skip to its
      // newline, so one bad line costs no more memory than a good one.
      skipping_ = true;
      stats_.bytes += end_;
      bufferFileOffset_ += end_;
      begin_ = end_ = 0;
    }
    refill();
  }
}

void CriteoReader::recordMalformed(MalformedReason reason, int field) {
  ++stats_.malformed;
  ++stats_.byReason[int(reason)];
  if (stats_.firstMalformed.size() < options_.keepMalformed)
    stats_.firstMalformed.push_back({epoch_, lineNumber_, reason, field});
}

bool CriteoReader::parseLine(const char *line, size_t length, CtrBatch &batch,
                             int64_t row) {
  if (length && line[length - 1] == '\r')
    --length;
  const char *p = line, *end = line + length;
  float *dense = batch.dense.data() + row * kNumDense;
  int64_t *sparse = batch.sparse.data() + row * kNumSparse;
  // One pass: each field is parsed where it starts and must stop at the
  // expected delimiter (a tab, or the end after the last field). The field
  // count is only worked out on the error path, so a line of the wrong
  // shape is reported as such rather than as its first misaligned field.
  int field = 0;
  auto fail = [&](MalformedReason reason) {
    int fields = countFields(line, length);
    if (fields != kNumFields)
      recordMalformed(MalformedReason::FieldCount, fields);
    else
      recordMalformed(reason, field);
    return false;
  };
  auto delimited = [&](const char *next) {
    return field == kNumFields - 1 ? next == end : next != end && *next == '\t';
  };

  if (!(p != end && (*p == '0' || *p == '1') && delimited(p + 1)))
    return fail(MalformedReason::BadLabel);
  batch.labels[row] = float(*p - '0');
  p += 2;

  for (field = 1; field <= kNumDense; ++field) {
    float value = 0.0f; // missing
    if (p == end || *p == '\t') {
      if (!delimited(p))
        return fail(MalformedReason::FieldCount);
    } else {
      int64_t x = 0;
      auto [next, ec] = std::from_chars(p, end, x);
      if (ec != std::errc() || !delimited(next))
        return fail(MalformedReason::BadInteger);
      value = options_.logTransform ? criteoDenseFeature(x) : float(x);
      p = next;
    }
    dense[field - 1] = value;
    ++p;
  }

  for (; field != kNumFields; ++field) {
    int64_t id = 0; // missing
    if (p == end || *p == '\t') {
      if (!delimited(p))
        return fail(MalformedReason::FieldCount);
    } else {
      uint64_t hash;
      // from_chars takes no sign or "0x" for unsigned, but would take
      // leading zeros past 16 digits; a hash is at most 16.
      auto [next, ec] = std::from_chars(p, end, hash, 16);
      if (ec != std::errc() || next - p > 16 || !delimited(next))
        return fail(MalformedReason::BadHex);
      int64_t tableSize = options_.tableSizes.empty()
                              ? 0
                              : options_.tableSizes[field - 1 - kNumDense];
      // 1 + hash keeps id 0 for "missing"; a full 64-bit hash wraps, which
      // only matters without a table size.
      id = tableSize ? 1 + int64_t(hash % uint64_t(tableSize - 1))
                     : int64_t(hash + 1);
      p = next;
    }
    sparse[field - 1 - kNumDense] = id;
    ++p;
  }
  return true;
}

int64_t CriteoReader::nextBatch(CtrBatch &batch, int64_t maxRows) {
  if (maxRows <= 0)
    throw Error("CriteoReader::nextBatch: maxRows must be positive");
  batch.labels.resize(size_t(maxRows));
  batch.dense.resize(size_t(maxRows) * kNumDense);
  batch.sparse.resize(size_t(maxRows) * kNumSparse);
  int64_t rows = 0;
  while (rows < maxRows && !exhausted_) {
    const char *line;
    size_t length;
    bool tooLong;
    if (!nextLine(line, length, tooLong)) {
      bool passProductive = !passFromStart_ || rowsThisPass_ != 0;
      if (!options_.loop || !passProductive ||
          (options_.maxEpochs && epoch_ + 1 >= options_.maxEpochs)) {
        exhausted_ = true;
        break;
      }
      ++epoch_;
      lineNumber_ = 0;
      passFromStart_ = true;
      rowsThisPass_ = 0;
      resetBuffer(0);
      continue;
    }
    ++lineNumber_;
    ++stats_.lines;
    // A spreadsheet's byte-order mark: not the label's first byte.
    if (lineNumber_ == 1 && length >= 3 &&
        std::memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
      line += 3;
      length -= 3;
    }
    if (tooLong) {
      recordMalformed(MalformedReason::LineTooLong, -1);
      continue;
    }
    if (!parseLine(line, length, batch, rows))
      continue;
    ++rows;
    ++rowsThisPass_;
    ++stats_.rows;
  }
  batch.rows = rows;
  batch.labels.resize(size_t(rows));
  batch.dense.resize(size_t(rows) * kNumDense);
  batch.sparse.resize(size_t(rows) * kNumSparse);
  return rows;
}

DataPosition CriteoReader::position() const {
  DataPosition position;
  position.byteOffset = bufferFileOffset_ + begin_;
  position.lineNumber = lineNumber_;
  position.epoch = epoch_;
  return position;
}

void CriteoReader::seek(const DataPosition &position) {
  if (position.byteOffset > fileSize_)
    throw Error("position " + position.toString() + " lies past the end of '" +
                path_ + "' (" + std::to_string(fileSize_) + " bytes)");
  if (position.byteOffset > 0) {
    // A position always follows a newline (or is the end of a file whose
    // last line has none); anything else was not saved by this reader.
    char previous = 0;
    if (fseeko(file_, off_t(position.byteOffset - 1), SEEK_SET) != 0 ||
        std::fread(&previous, 1, 1, file_) != 1)
      throw Error("cannot read '" + path_ + "'");
    if (previous != '\n' && position.byteOffset != fileSize_)
      throw Error("position " + position.toString() +
                  " is not at a line start in '" + path_ + "'");
  }
  resetBuffer(position.byteOffset);
  lineNumber_ = position.lineNumber;
  epoch_ = position.epoch;
  passFromStart_ = position.byteOffset == 0;
  rowsThisPass_ = 0;
  exhausted_ = false;
}

} // namespace heterps::rt::data
