//===- DirectoryLock.cpp - One run at a time in a directory ---------------===//

#include "heterps/Runtime/DirectoryLock.h"
#include "heterps/Runtime/Types.h"

#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace heterps::rt {

DirectoryLock::DirectoryLock(const std::string &directory,
                             const std::string &what, double waitSeconds,
                             const std::atomic<bool> *stopRequested) {
  std::error_code error;
  // The topmost directory this makes: an empty tree of it goes at the end
  // (a run refused by a later check left a/b/ of --checkpoint-dir a/b/c).
  fs::path absolute = fs::absolute(directory, error).lexically_normal();
  if (!absolute.has_filename())
    absolute = absolute.parent_path(); // "a/b/"
  for (fs::path at = absolute;
       !at.empty() && !fs::exists(at, error) && at != at.parent_path();
       at = at.parent_path())
    createdTop = at.string();
  fs::create_directories(directory, error);
  if (error)
    throw Error("cannot create " + what + " '" + directory +
                "': " + error.message());
  path = (absolute / ".lock").string();
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  auto holder = [&] {
    char text[32] = "";
    const ssize_t got = ::pread(fd, text, sizeof text - 1, 0);
    text[got > 0 ? got : 0] = '\0';
    return std::string(text).substr(0, std::strcspn(text, "\n"));
  };
  const std::string self = std::to_string(::getpid());
  int lockError = 0;
  bool stopped = false;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(waitSeconds);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    lockError = errno;
    // This process holds it (as another of its directories): waiting
    // cannot help.
    stopped = stopRequested && stopRequested->load();
    if (lockError != EWOULDBLOCK || holder() == self ||
        std::chrono::steady_clock::now() > until || stopped)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    lockError = 0;
  }
  if (lockError != 0) {
    const std::string pid = holder();
    ::close(fd);
    fd = -1;
    if (lockError == EWOULDBLOCK && pid == self)
      throw Error(what + " '" + directory +
                  "' is in use by this process already (pid " + pid +
                  "); give each run and each use its own directory");
    if (lockError == EWOULDBLOCK && stopped)
      throw Error("stopped while waiting for " + what + " '" + directory +
                  "', in use by another run (pid " + pid + ")");
    if (lockError == EWOULDBLOCK)
      throw Error(what + " '" + directory + "' is in use by another run (pid " +
                  pid + ", still after " + std::to_string(int(waitSeconds)) +
                  " s); wait for it or choose another directory");
    throw Error("cannot lock '" + path + "': " + std::strerror(lockError));
  }
  // The holder's pid, for the message of the next run that finds it held
  // (for messages only: the lock holds without it).
  const std::string line = self + "\n";
  if (::ftruncate(fd, 0) == 0)
    (void)!::pwrite(fd, line.data(), line.size(), 0);
}

DirectoryLock::~DirectoryLock() {
  if (fd < 0)
    return;
  fs::path directory = fs::path(path).parent_path();
  std::error_code error;
  if (!createdTop.empty() &&
      std::distance(fs::directory_iterator(directory, error),
                    fs::directory_iterator()) == 1) {
    ::unlink(path.c_str());
    // Up to the topmost made, each while empty.
    while (fs::remove(directory, error) && directory.string() != createdTop &&
           directory != directory.parent_path())
      directory = directory.parent_path();
  }
  ::close(fd); // releases the lock
}

} // namespace heterps::rt
