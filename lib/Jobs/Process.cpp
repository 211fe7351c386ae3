//===- Process.cpp - Child processes in process groups of their own -------===//

#include "heterps/Jobs/Process.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/prctl.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace heterps::jobs {

namespace {
/// argv and the environment (the parent's, changed as `options` says) as
/// execve takes them.
struct ExecArguments {
  std::vector<std::string> words, environment;
  std::vector<char *> args, env;

  ExecArguments(const std::vector<std::string> &argv,
                const SpawnOptions &options)
      : words(argv) {
    for (char **entry = environ; *entry; ++entry) {
      llvm::StringRef name = llvm::StringRef(*entry).split('=').first;
      bool replaced =
          std::any_of(options.environment.begin(), options.environment.end(),
                      [&](const auto &pair) { return pair.first == name; });
      bool unset = std::find(options.unset.begin(), options.unset.end(),
                             name) != options.unset.end();
      if (!replaced && !unset)
        environment.push_back(*entry);
    }
    for (const auto &[name, value] : options.environment)
      environment.push_back(name + "=" + value);
    for (std::string &word : words)
      args.push_back(word.data());
    args.push_back(nullptr);
    for (std::string &entry : environment)
      env.push_back(entry.data());
    env.push_back(nullptr);
  }
};
} // namespace

llvm::Expected<pid_t> spawnProcessGroup(const std::vector<std::string> &argv,
                                        const SpawnOptions &options) {
  ExecArguments exec(argv, options);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(
      &actions, STDOUT_FILENO, options.logPath.c_str(),
      O_WRONLY | O_CREAT | (options.appendLog ? O_APPEND : O_TRUNC), 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t child = 0;
  int error = posix_spawn(&child, argv.front().c_str(), &actions, &attributes,
                          exec.args.data(), exec.env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0)
    return llvm::createStringError(
        std::error_code(error, std::generic_category()),
        "cannot start '%s': %s", argv.front().c_str(), std::strerror(error));
  return child;
}

llvm::Expected<pid_t>
spawnTiedProcessGroup(const std::vector<std::string> &argv,
                      const SpawnOptions &options) {
  ExecArguments exec(argv, options);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0)
    return llvm::createStringError(
        std::error_code(errno, std::generic_category()),
        "cannot start '%s': %s", argv.front().c_str(), std::strerror(errno));
  if (child == 0) {
    // Async-signal-safe calls only, until exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent)
      ::_exit(127); // the parent is gone already
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != STDIN_FILENO) {
      ::dup2(null, STDIN_FILENO);
      ::close(null);
    }
    ::execve(exec.args.front(), exec.args.data(), exec.env.data());
    ::_exit(127);
  }
  return child;
}

namespace {
/// The pids of this machine's processes whose environment holds `entry`
/// (zombies, whose environment reads empty, are not among them).
std::vector<pid_t> processesWithEnvironment(const std::string &entry) {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto &process :
       std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = process.path().filename().string();
    pid_t pid = 0;
    if (llvm::StringRef(name).getAsInteger(10, pid) || pid == ::getpid())
      continue;
    std::ifstream environ(process.path() / "environ", std::ios::binary);
    std::string variable;
    while (std::getline(environ, variable, '\0'))
      if (variable == entry) {
        found.push_back(pid);
        break;
      }
  }
  return found;
}
} // namespace

bool waitForProcessesWithEnvironment(const std::string &name,
                                     const std::string &value,
                                     double waitSeconds) {
  const std::string entry = name + "=" + value;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(waitSeconds);
  for (;;) {
    if (processesWithEnvironment(entry).empty())
      return true;
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int killProcessesWithEnvironment(const std::string &name,
                                 const std::string &value, double waitSeconds) {
  const std::string entry = name + "=" + value;
  std::vector<pid_t> signalled;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(waitSeconds);
  // A launcher may start a rank while the first ones die: look again until
  // none is left.
  for (;;) {
    std::vector<pid_t> left = processesWithEnvironment(entry);
    if (left.empty() || std::chrono::steady_clock::now() > until)
      break;
    for (pid_t pid : left) {
      ::kill(pid, SIGKILL);
      if (std::find(signalled.begin(), signalled.end(), pid) == signalled.end())
        signalled.push_back(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return int(signalled.size());
}

} // namespace heterps::jobs
