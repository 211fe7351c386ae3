//===- WorkerAgreement.cpp - Flags every worker of a group shares ---------===//

#include "WorkerAgreement.h"

#include "heterps/Runtime/Types.h"
#include "heterps/Runtime/WorkerGroup.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace heterps::rt::train {

std::string fileFingerprint(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat status;
  if (fd < 0 || ::fstat(fd, &status) != 0) {
    const int error = errno;
    if (fd >= 0)
      ::close(fd);
    throw Error("cannot read '" + path + "': " + std::strerror(error));
  }
  constexpr off_t kPart = 1 << 20;
  const off_t size = status.st_size;
  uLong crc = ::crc32(0, nullptr, 0);
  std::vector<unsigned char> buffer(kPart);
  // The first MiB, and the last where the file is longer.
  for (off_t start : {off_t(0), std::max(kPart, size - kPart)}) {
    const off_t end = std::min(size, start + kPart);
    for (off_t at = start; at < end;) {
      const ssize_t got = ::pread(fd, buffer.data(), size_t(end - at), at);
      if (got <= 0) {
        const int error = got < 0 ? errno : EIO;
        ::close(fd);
        throw Error("cannot read '" + path + "': " + std::strerror(error));
      }
      crc = ::crc32(crc, buffer.data(), uInt(got));
      at += got;
    }
  }
  ::close(fd);
  char text[96];
  std::snprintf(text, sizeof text,
                "%lld bytes, CRC32 of its first and last MiB %08lx",
                (long long)size, (unsigned long)crc);
  return text;
}

std::string encodeSettings(const std::vector<SharedSetting> &settings) {
  // Length-prefixed, so names and values may hold any byte.
  std::string text;
  for (const SharedSetting &setting : settings)
    for (const std::string *part : {&setting.name, &setting.shown})
      text += std::to_string(part->size()) + ":" + *part;
  return text;
}

std::vector<SharedSetting> decodeSettings(const std::string &text) {
  std::vector<SharedSetting> settings;
  size_t at = 0;
  auto part = [&]() {
    const size_t colon = text.find(':', at);
    if (colon == std::string::npos || colon == at || colon - at > 9 ||
        text.find_first_not_of("0123456789", at) < colon)
      throw Error("malformed settings from the leader worker at byte " +
                  std::to_string(at));
    const size_t length = std::stoul(text.substr(at, colon - at));
    if (length > text.size() - colon - 1)
      throw Error("malformed settings from the leader worker at byte " +
                  std::to_string(at));
    at = colon + 1 + length;
    return text.substr(colon + 1, length);
  };
  while (at < text.size()) {
    SharedSetting setting;
    setting.name = part();
    setting.shown = part();
    settings.push_back(std::move(setting));
  }
  return settings;
}

std::string describeDisagreement(const std::vector<SharedSetting> &leader,
                                 const std::vector<SharedSetting> &mine) {
  const std::string advice =
      "; start every worker of an MPI job with the same bundle and training "
      "flags (heterps launch does)";
  for (size_t i = 0; i < mine.size(); ++i) {
    if (i >= leader.size() || leader[i].name != mine[i].name)
      return "this worker and worker 0 run different versions of heterps "
             "(they compare '" +
             mine[i].name + "' and '" +
             (i < leader.size() ? leader[i].name : std::string("nothing")) +
             "')";
    if (leader[i].shown != mine[i].shown)
      return "this worker was started with " + mine[i].shown +
             " and worker 0 with " + leader[i].shown + advice;
  }
  if (leader.size() != mine.size())
    return "this worker and worker 0 run different versions of heterps "
           "(they compare " +
           std::to_string(mine.size()) + " and " +
           std::to_string(leader.size()) + " settings)";
  return {};
}

void checkWorkersAgree(WorkerGroup &group,
                       const std::vector<SharedSetting> &settings) {
  const std::string leaders = group.broadcast(encodeSettings(settings));
  if (group.leader())
    return;
  const std::string difference =
      describeDisagreement(decodeSettings(leaders), settings);
  if (!difference.empty())
    throw Error(difference);
}

} // namespace heterps::rt::train
