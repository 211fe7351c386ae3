//===- DirectoryLock.h - One run at a time in a directory ------*- C++ -*-===//
//
// A run's checkpoint directory and its parameter server's storage
// directory are each written by one run at a time: a second run on either
// tidied away or deleted what the first was writing (its checkpoint in
// progress, its RocksDB databases), even when it was then refused.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_DIRECTORYLOCK_H
#define HETERPS_RUNTIME_DIRECTORYLOCK_H

#include <atomic>
#include <string>

namespace heterps::rt {

/// Holds DIR/.lock (an exclusive flock, created with DIR) for its lifetime.
/// Waits up to `waitSeconds` for a holder that is ending (the ranks of a
/// job's last attempt, killed on another node, may hold it a moment
/// longer), then throws Error naming `what` ("checkpoint directory"), DIR
/// and the holder's pid. A directory the lock created and nothing else
/// wrote into is removed again. `stopRequested`, when given and set during
/// the wait, ends it with an Error at once: a Ctrl-C went unheeded for the
/// whole wait.
class DirectoryLock {
public:
  DirectoryLock(const std::string &directory, const std::string &what,
                double waitSeconds = 30,
                const std::atomic<bool> *stopRequested = nullptr);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;

private:
  std::string path;       // DIR/.lock
  std::string createdTop; // the topmost directory made for DIR, if any
  int fd = -1;
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_DIRECTORYLOCK_H
