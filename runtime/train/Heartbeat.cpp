//===- Heartbeat.cpp - A rank's liveness file and stop file ---------------===//

#include "heterps/Runtime/Heartbeat.h"

#include "heterps/Runtime/Types.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace heterps::rt::train {
namespace {

/// The variable's value, or "" when it is unset.
std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

/// Writes all of `text` to `fd`; false on an error (errno set).
bool writeAll(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t written = ::write(fd, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    done += size_t(written);
  }
  return true;
}

} // namespace

const char *rankRoleName(RankRole role) {
  switch (role) {
  case RankRole::Worker:
    return "worker";
  case RankRole::Shard:
    return "shard";
  case RankRole::Stage:
    return "stage";
  }
  return "unknown";
}

std::optional<RankRole> parseRankRole(const std::string &name) {
  for (RankRole role : {RankRole::Worker, RankRole::Shard, RankRole::Stage})
    if (name == rankRoleName(role))
      return role;
  return std::nullopt;
}

std::string rankHost() {
  std::string host = environment("SLURMD_NODENAME");
  if (host.empty()) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0)
      host = name;
  }
  if (host.empty())
    host = "unknown";
  for (char &c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-')
      c = '_';
  return host;
}

HeartbeatOptions HeartbeatOptions::fromEnvironment(RankRole role) {
  HeartbeatOptions options;
  options.directory = environment("HETERPS_HEARTBEAT_DIR");
  if (role == RankRole::Worker)
    options.stopFile = environment("HETERPS_STOP_FILE");
  const std::string interval = environment("HETERPS_HEARTBEAT_INTERVAL_MS");
  if (!interval.empty()) {
    char *end = nullptr;
    errno = 0;
    const long long value = std::strtoll(interval.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || value < 1)
      throw Error("environment variable HETERPS_HEARTBEAT_INTERVAL_MS='" +
                  interval +
                  "' is not a positive whole number of "
                  "milliseconds");
    options.intervalMs = value;
  }
  return options;
}

Heartbeat::Heartbeat(RankRole role, int index, HeartbeatOptions options)
    : options(std::move(options)), host(rankHost()) {
  if (!this->options.active())
    return;
  if (!this->options.directory.empty()) {
    const std::string name =
        std::string(rankRoleName(role)) + "-" + std::to_string(index);
    path_ = (std::filesystem::path(this->options.directory) / name).string();
    // Hidden, so a supervisor listing DIR/<role>-* never reads a temporary.
    temporary =
        (std::filesystem::path(this->options.directory) / ("." + name + ".tmp"))
            .string();
    std::error_code ignored; // a failure shows as the first write's warning
    std::filesystem::create_directories(this->options.directory, ignored);
  }
  beating = !path_.empty();
  thread = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
  if (!thread.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  thread.join();
}

std::string Heartbeat::line() const {
  using namespace std::chrono;
  const long long milliseconds = duration_cast<std::chrono::milliseconds>(
                                     system_clock::now().time_since_epoch())
                                     .count();
  char time[32];
  std::snprintf(time, sizeof time, "%lld.%03lld", milliseconds / 1000,
                milliseconds % 1000);
  return "pid=" + std::to_string(::getpid()) + " host=" + host +
         " step=" + std::to_string(step_.load(std::memory_order_relaxed)) +
         " time=" + time;
}

namespace {
/// A heartbeat file's one line (Heartbeat::line()), or nullopt.
std::optional<HeartbeatRecord> parseHeartbeatLine(const std::string &line) {
  HeartbeatRecord record;
  std::istringstream words(line);
  std::string word;
  int fields = 0;
  while (words >> word) {
    const size_t equals = word.find('=');
    if (equals == std::string::npos)
      return std::nullopt;
    const std::string key = word.substr(0, equals);
    const char *value = word.c_str() + equals + 1;
    char *end = nullptr;
    if (key == "pid") {
      record.pid = int(std::strtol(value, &end, 10));
    } else if (key == "host") {
      record.host = value;
      ++fields;
      continue;
    } else if (key == "step") {
      record.step = std::strtoll(value, &end, 10);
    } else if (key == "time") {
      record.time = std::strtod(value, &end);
    } else {
      continue;
    }
    if (end == value || *end != '\0')
      return std::nullopt;
    ++fields;
  }
  if (fields != 4)
    return std::nullopt;
  return record;
}
} // namespace

std::vector<HeartbeatRecord> readHeartbeats(const std::string &directory) {
  std::vector<HeartbeatRecord> records;
  std::error_code error;
  for (const std::filesystem::directory_entry &entry :
       std::filesystem::directory_iterator(directory, error)) {
    // <role>-<index>; temporaries start with '.'.
    const std::string name = entry.path().filename().string();
    const size_t dash = name.rfind('-');
    if (name.empty() || name[0] == '.' || dash == std::string::npos)
      continue;
    std::optional<RankRole> role = parseRankRole(name.substr(0, dash));
    const std::string index = name.substr(dash + 1);
    // No rank has an index of more than 6 digits: a longer one is a stray
    // file, which std::stoi turned into an exception that ended the
    // supervisor.
    if (!role || index.empty() || index.size() > 6 ||
        index.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream in(entry.path());
    std::string line;
    std::getline(in, line);
    std::optional<HeartbeatRecord> record = parseHeartbeatLine(line);
    if (!record)
      continue; // being replaced, or written by another version
    record->role = *role;
    record->index = std::stoi(index);
    records.push_back(std::move(*record));
  }
  return records;
}

void Heartbeat::run() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    lock.unlock();
    lookForStopFile();
    beat();
    lock.lock();
    // Woken early by a new step (setStep), else once an interval.
    wake.wait_for(lock, std::chrono::milliseconds(options.intervalMs), [this] {
      return stopping || step_.load(std::memory_order_relaxed) != beatStep;
    });
    if (stopping)
      break;
  }
  lock.unlock();
  beat(); // the step the rank ended with
}

void Heartbeat::beat() {
  if (path_.empty())
    return;
  beatStep = step_.load(std::memory_order_relaxed);
  write();
}

void Heartbeat::beatNow() {
  if (!path_.empty())
    write();
}

void Heartbeat::write() {
  std::lock_guard<std::mutex> lock(writing);
  const std::string text = line() + "\n";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool written = fd >= 0 && writeAll(fd, text);
  int error = errno;
  if (fd >= 0 && ::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (written && ::rename(temporary.c_str(), path_.c_str()) != 0) {
    written = false;
    error = errno;
  }
  if (!written)
    warnOnce("heartbeat: cannot write '" + path_ + "': " +
             std::strerror(error) + " (further failures are not reported)");
}

void Heartbeat::lookForStopFile() {
  if (options.stopFile.empty() || stopRequested())
    return;
  struct stat status;
  if (::stat(options.stopFile.c_str(), &status) == 0)
    stopSeen.store(true, std::memory_order_relaxed);
}

void Heartbeat::warnOnce(const std::string &message) {
  if (warned)
    return;
  warned = true;
  // One write, so ranks sharing a terminal do not interleave mid-line.
  const std::string text = "heterps: warning: " + message + "\n";
  (void)writeAll(STDERR_FILENO, text);
}

} // namespace heterps::rt::train
