//===- CheckpointFiles.cpp - Checksummed, fsynced checkpoint files --------===//

#include "CheckpointFiles.h"

#include "heterps/Runtime/Types.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

namespace heterps::rt::ps {

uint32_t updateZlibChecksum(ZlibChecksum update, uint32_t sum, const void *data,
                            size_t bytes) {
  const auto *cursor = static_cast<const Bytef *>(data);
  while (bytes > 0) {
    const uInt piece = static_cast<uInt>(std::min<size_t>(bytes, 1u << 30));
    sum = static_cast<uint32_t>(update(sum, cursor, piece));
    cursor += piece;
    bytes -= piece;
  }
  return sum;
}

namespace {
constexpr size_t kIoBuffer = 1 << 20;

uint32_t updateCrc(uint32_t crc, const void *data, size_t bytes) {
  return updateZlibChecksum(::crc32, crc, data, bytes);
}

std::string systemError() { return std::strerror(errno); }
} // namespace

ChecksummedWriter::ChecksummedWriter(std::string path)
    : path(std::move(path)),
      crc(static_cast<uint32_t>(::crc32(0, nullptr, 0))) {
  file = std::fopen(this->path.c_str(), "wb");
  if (!file)
    throw Error("checkpoint: cannot create '" + this->path +
                "': " + systemError());
  std::setvbuf(file, nullptr, _IOFBF, kIoBuffer);
}

ChecksummedWriter::~ChecksummedWriter() {
  if (file)
    std::fclose(file);
}

void ChecksummedWriter::write(const void *data, size_t bytes) {
  crc = updateCrc(crc, data, bytes);
  if (bytes && std::fwrite(data, 1, bytes, file) != bytes)
    throw Error("checkpoint: cannot write '" + path + "': " + systemError());
}

uint32_t ChecksummedWriter::finish() {
  const uint32_t checksum = crc;
  if (std::fwrite(&checksum, 1, sizeof(checksum), file) != sizeof(checksum) ||
      std::fflush(file) != 0 || ::fsync(::fileno(file)) != 0)
    throw Error("checkpoint: cannot write '" + path + "': " + systemError());
  const int closed = std::fclose(file);
  file = nullptr;
  if (closed != 0)
    throw Error("checkpoint: cannot close '" + path + "': " + systemError());
  return checksum;
}

CheckpointReader::CheckpointReader(std::string path) : path(std::move(path)) {
  file = std::fopen(this->path.c_str(), "rb");
  if (!file)
    throw Error("checkpoint file '" + this->path +
                "' cannot be opened: " + systemError());
  std::setvbuf(file, nullptr, _IOFBF, kIoBuffer);
  if (std::fseek(file, 0, SEEK_END) != 0)
    throw Error("checkpoint file '" + this->path + "' cannot be read");
  const long size = std::ftell(file);
  if (size < static_cast<long>(sizeof(uint32_t)))
    throw Error("checkpoint file '" + this->path +
                "' is corrupt: too short for its checksum");
  payload = static_cast<uint64_t>(size) - sizeof(uint32_t);
  std::fseek(file, 0, SEEK_SET);
}

CheckpointReader::~CheckpointReader() {
  if (file)
    std::fclose(file);
}

uint32_t CheckpointReader::verifyChecksum() {
  std::fseek(file, 0, SEEK_SET);
  std::vector<char> buffer(kIoBuffer);
  uint32_t crc = static_cast<uint32_t>(::crc32(0, nullptr, 0));
  uint64_t left = payload;
  while (left > 0) {
    const size_t piece =
        static_cast<size_t>(std::min<uint64_t>(left, kIoBuffer));
    if (std::fread(buffer.data(), 1, piece, file) != piece)
      throw Error("checkpoint file '" + path + "' cannot be read");
    crc = updateCrc(crc, buffer.data(), piece);
    left -= piece;
  }
  uint32_t stored = 0;
  if (std::fread(&stored, 1, sizeof(stored), file) != sizeof(stored))
    throw Error("checkpoint file '" + path + "' cannot be read");
  if (stored != crc)
    throw Error("checkpoint file '" + path + "' is corrupt: CRC32 mismatch");
  std::fseek(file, 0, SEEK_SET);
  offset = 0;
  return crc;
}

void CheckpointReader::read(void *data, size_t bytes) {
  if (offset + bytes > payload)
    throw Error("checkpoint file '" + path + "' is corrupt: truncated");
  if (bytes && std::fread(data, 1, bytes, file) != bytes)
    throw Error("checkpoint file '" + path + "' cannot be read");
  offset += bytes;
}

void CheckpointReader::skip(uint64_t bytes) {
  if (bytes > payload - offset)
    throw Error("checkpoint file '" + path + "' is corrupt: truncated");
  if (std::fseek(file, static_cast<long>(offset + bytes), SEEK_SET) != 0)
    throw Error("checkpoint file '" + path + "' cannot be read");
  offset += bytes;
}

void syncDirectory(const std::string &path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_DIRECTORY);
  if (descriptor < 0)
    throw Error("checkpoint: cannot open directory '" + path +
                "': " + systemError());
  const int synced = ::fsync(descriptor);
  ::close(descriptor);
  if (synced != 0)
    throw Error("checkpoint: cannot sync directory '" + path +
                "': " + systemError());
}

} // namespace heterps::rt::ps
