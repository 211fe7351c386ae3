//===- CheckpointFiles.h - Checksummed, fsynced files ----------*- C++ -*-===//
//
// Internal to the parameter server. Every checkpoint file ends with the
// CRC32 (zlib) of all its preceding bytes, so a file can be verified alone;
// the metadata file records each file's CRC32 as well, which also catches a
// file swapped in from another checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_PS_CHECKPOINTFILES_H
#define HETERPS_RUNTIME_PS_CHECKPOINTFILES_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace heterps::rt::ps {

/// zlib's crc32 or adler32.
using ZlibChecksum = unsigned long (*)(unsigned long, const unsigned char *,
                                       unsigned);
/// `sum` continued over `bytes` by `update`, in pieces that fit zlib's uInt.
uint32_t updateZlibChecksum(ZlibChecksum update, uint32_t sum, const void *data,
                            size_t bytes);

/// Buffered writer that checksums what it writes; finish() appends the CRC,
/// flushes and fsyncs.
class ChecksummedWriter {
public:
  explicit ChecksummedWriter(std::string path);
  ~ChecksummedWriter();
  ChecksummedWriter(const ChecksummedWriter &) = delete;
  ChecksummedWriter &operator=(const ChecksummedWriter &) = delete;

  void write(const void *data, size_t bytes);
  template <typename T> void writeValue(const T &value) {
    write(&value, sizeof(T));
  }
  /// Returns the CRC32 written at the end.
  uint32_t finish();

private:
  std::string path;
  std::FILE *file = nullptr;
  uint32_t crc;
};

/// Reads a file written by ChecksummedWriter after verifyChecksum().
class CheckpointReader {
public:
  explicit CheckpointReader(std::string path);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader &) = delete;
  CheckpointReader &operator=(const CheckpointReader &) = delete;

  /// Payload bytes (file size without the CRC).
  uint64_t payloadSize() const { return payload; }
  /// Checks the trailing CRC32 against the payload; throws Error naming the
  /// file if it is wrong. Returns the CRC.
  uint32_t verifyChecksum();
  /// Reads exactly `bytes` from the payload; throws Error naming the file
  /// past its end.
  void read(void *data, size_t bytes);
  /// Moves past `bytes` of the payload; throws Error past its end.
  void skip(uint64_t bytes);
  template <typename T> T readValue() {
    T value;
    read(&value, sizeof(T));
    return value;
  }
  uint64_t position() const { return offset; }
  const std::string &name() const { return path; }

private:
  std::string path;
  std::FILE *file = nullptr;
  uint64_t payload = 0;
  uint64_t offset = 0;
};

/// fsync of a directory, so renames and new entries in it are durable.
void syncDirectory(const std::string &path);

} // namespace heterps::rt::ps

#endif // HETERPS_RUNTIME_PS_CHECKPOINTFILES_H
