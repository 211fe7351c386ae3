//===- MpirunBackend.cpp - Attempts as local process groups ---------------===//
//
// `heterps launch` (and the mpirun it runs) starts in a process group of
// its own, so ending an attempt reaches mpirun and every local rank, also a
// stopped one (SIGKILL ends stopped processes). Ranks on other hosts end
// with mpirun.
//
//===----------------------------------------------------------------------===//

#include "heterps/Jobs/Backend.h"
#include "heterps/Jobs/Process.h"

#include "heterps/Cluster/InputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <sys/wait.h>

using namespace llvm;

namespace heterps::jobs {

Backend::~Backend() = default;

std::vector<RankExit> parseLauncherOutput(const std::string &text) {
  std::vector<RankExit> exits;
  auto add = [&](RankExit exit) {
    for (const RankExit &seen : exits)
      if (seen.mpiRank == exit.mpiRank && seen.host == exit.host)
        return;
    exits.push_back(std::move(exit));
  };
  // mpirun: "mpirun noticed that process rank 3 with PID 123 on node h
  // exited on signal 9 (Killed)."
  static const std::regex signalled(
      R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+))");
  // mpirun: "Process name: [[5012,1],3]\n  Exit code:    3"
  static const std::regex exited(
      R"(Process name:\s*\[\[\d+,\d+\],(\d+)\][\s\S]*?Exit code:\s*(-?\d+))");
  // A rank's MPI_Abort.
  static const std::regex aborted(
      R"(MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with errorcode (-?\d+))");
  // srun: "srun: error: n2: task 3: Killed" / "...: Exited with exit code 3"
  static const std::regex task(
      R"(srun: error: (\S+): tasks? (\d+)(?:-\d+)?: (Killed|Exited with exit code (\d+)))");
  // mpirun: "ORTE has lost communication with a remote daemon. ...
  // Remote daemon: [[27539,0],2] on node n2": the host is gone.
  static const std::regex lostHost(
      R"(Remote daemon:\s*\[\[\d+,\d+\],\d+\] on node (\S+))");
  // ssh, starting mpirun's daemon on a host that is down or unknown: "ssh:
  // Could not resolve hostname h: ...", "ssh: connect to host h port 22:
  // ...": the host is gone too.
  static const std::regex unreachableHost(
      R"(ssh: (?:Could not resolve hostname|connect to host) ([^\s:]+))");
  struct Match {
    size_t position;
    RankExit exit;
  };
  std::vector<Match> matches;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), signalled);
       it != std::sregex_iterator(); ++it) {
    RankExit exit;
    exit.mpiRank = std::stoi((*it)[1]);
    exit.host = (*it)[2];
    exit.signal = std::stoi((*it)[3]);
    matches.push_back({size_t(it->position()), exit});
  }
  for (auto it = std::sregex_iterator(text.begin(), text.end(), exited);
       it != std::sregex_iterator(); ++it) {
    RankExit exit;
    exit.mpiRank = std::stoi((*it)[1]);
    exit.exitCode = std::stoi((*it)[2]);
    matches.push_back({size_t(it->position()), exit});
  }
  for (auto it = std::sregex_iterator(text.begin(), text.end(), aborted);
       it != std::sregex_iterator(); ++it) {
    RankExit exit;
    exit.mpiRank = std::stoi((*it)[1]);
    exit.exitCode = std::stoi((*it)[2]);
    matches.push_back({size_t(it->position()), exit});
  }
  for (const std::regex *hostGone : {&lostHost, &unreachableHost})
    for (auto it = std::sregex_iterator(text.begin(), text.end(), *hostGone);
         it != std::sregex_iterator(); ++it) {
      RankExit exit;
      exit.host = (*it)[1];
      matches.push_back({size_t(it->position()), exit});
    }
  for (auto it = std::sregex_iterator(text.begin(), text.end(), task);
       it != std::sregex_iterator(); ++it) {
    RankExit exit;
    exit.host = (*it)[1];
    exit.mpiRank = std::stoi((*it)[2]);
    if ((*it)[4].matched)
      exit.exitCode = std::stoi((*it)[4]);
    else
      exit.signal = SIGKILL;
    matches.push_back({size_t(it->position()), exit});
  }
  // The launcher reports the first failure first.
  std::stable_sort(
      matches.begin(), matches.end(),
      [](const Match &a, const Match &b) { return a.position < b.position; });
  for (Match &match : matches)
    add(std::move(match.exit));
  return exits;
}

Expected<std::vector<HostSlots>> readHostfile(const std::string &path) {
  // A regular file only: a directory read as no line ("names no host").
  Expected<std::unique_ptr<MemoryBuffer>> file =
      cluster::readInputFile(path, "hostfile", uint64_t(16) << 20, true);
  if (!file)
    return file.takeError();
  std::istringstream in((*file)->getBuffer().str());
  std::vector<HostSlots> hosts;
  std::map<std::string, int> lineOfHost;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    StringRef text = StringRef(line).split('#').first.trim();
    if (text.empty())
      continue;
    HostSlots host;
    host.line = text.str();
    // Open MPI's grammar takes "slots = 4" as "slots=4".
    std::string joined;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '=') {
        while (!joined.empty() &&
               (joined.back() == ' ' || joined.back() == '\t'))
          joined.pop_back();
        joined += '=';
        while (i + 1 < text.size() &&
               (text[i + 1] == ' ' || text[i + 1] == '\t'))
          ++i;
        continue;
      }
      joined += text[i];
    }
    SmallVector<StringRef> words;
    SplitString(joined, words, " \t");
    host.host = words.front().str();
    int64_t maxSlots = 0;
    // A host name, then Open MPI's slot counts: anything else (a TSV or
    // a data file given by mistake) would fail only when mpirun starts.
    auto fail = [&](const Twine &why) {
      return createStringError(inconvertibleErrorCode(),
                               "hostfile '%s', line %d: %s", path.c_str(),
                               number, why.str().c_str());
    };
    if (!llvm::all_of(host.host, [](char c) {
          return llvm::isAlnum(c) || StringRef(".-_:[]").contains(c);
        }))
      return fail("'" + host.host +
                  "' is not a host name (lines are \"host slots=N\")");
    for (StringRef word : ArrayRef(words).drop_front()) {
      StringRef count = word;
      // cpu= and count= are Open MPI's other names for slots=.
      if (count.consume_front("slots=") || count.consume_front("cpu=") ||
          count.consume_front("count=")) {
        if (count.getAsInteger(10, host.slots) || host.slots < 1 ||
            host.slots > kMostRanks)
          return fail("slots='" + count +
                      "' must be a whole number from 1 to " +
                      Twine(kMostRanks));
        continue;
      }
      int64_t most = 0;
      if ((count.consume_front("max_slots=") ||
           count.consume_front("max-slots=")) &&
          !count.getAsInteger(10, most) && most >= 1) {
        maxSlots = most;
        continue;
      }
      return fail("'" + word +
                  "' is not slots=N or max_slots=N (lines are \"host "
                  "slots=N\")");
    }
    // What Open MPI refuses when it starts, every attempt alike, refused
    // here: the supervisor spent its whole restart budget on them.
    if (maxSlots > 0 && maxSlots < host.slots)
      return fail("max_slots=" + Twine(maxSlots) +
                  " is below slots=" + Twine(host.slots));
    if (auto [at, fresh] = lineOfHost.emplace(host.host, number); !fresh)
      return fail("host '" + host.host + "' is named on line " +
                  Twine(at->second) +
                  " too; give each host once, with all its slots");
    hosts.push_back(host);
  }
  if (hosts.empty())
    return createStringError(inconvertibleErrorCode(),
                             "hostfile '%s' names no host (\"host slots=N\" "
                             "lines)",
                             path.c_str());
  return hosts;
}

namespace {

/// Whether `host` is among `excluded`, which names hosts as mpirun and
/// ssh report them: Open MPI shortens a hostfile's "n2.cluster" to "n2".
bool isExcluded(const HostSlots &host,
                const std::vector<std::string> &excluded) {
  const std::string shortName = StringRef(host.host).split('.').first.str();
  return llvm::any_of(excluded, [&](const std::string &name) {
    return name == host.host || name == shortName;
  });
}

class MpirunBackend : public Backend {
public:
  MpirunBackend(BackendSpec spec, std::string jobDirectory,
                std::vector<HostSlots> hosts)
      : spec(std::move(spec)), jobDirectory(std::move(jobDirectory)),
        hosts(std::move(hosts)) {}
  ~MpirunBackend() override { MpirunBackend::terminate(); }

  BackendKind kind() const override { return BackendKind::Mpirun; }

  Error start(const LaunchRequest &request) override {
    std::vector<std::string> argv = request.command;
    // After `heterps launch BUNDLE`: the hosts and mpirun's own flags, and
    // the environment every rank needs (-x exports it to remote ranks).
    std::vector<std::string> extra;
    if (!spec.hostfile.empty()) {
      const std::string hostfile =
          jobDirectory + "/hostfile-attempt-" + std::to_string(request.attempt);
      std::ofstream out(hostfile);
      for (const HostSlots &host : hosts)
        if (!isExcluded(host, request.excludedHosts))
          out << host.line << "\n";
      if (!out)
        return createStringError(inconvertibleErrorCode(), "cannot write '%s'",
                                 hostfile.c_str());
      extra.insert(extra.end(), {"--hostfile", hostfile});
    }
    for (const std::string &arg : spec.mpirunArgs)
      extra.push_back("--mpirun-arg=" + arg);
    for (const auto &[name, value] : request.environment)
      extra.insert(extra.end(), {"--mpirun-arg=-x", "--mpirun-arg=" + name});
    argv.insert(argv.begin() + std::min<size_t>(3, argv.size()), extra.begin(),
                extra.end());

    SpawnOptions spawn;
    spawn.logPath = request.logPath;
    spawn.environment = request.environment;
    // A fault meant for the first attempt must not leak into later ones
    // through the supervisor's own environment.
    spawn.unset = {"HETERPS_FAULT"};
    Expected<pid_t> child = spawnProcessGroup(argv, spawn);
    if (!child)
      return child.takeError();
    pid = *child;
    heartbeatDirectory = request.heartbeatDirectory;
    finished.reset();
    return Error::success();
  }

  AttemptStatus poll() override {
    if (finished)
      return *finished;
    AttemptStatus status;
    if (pid <= 0)
      return status;
    int wstatus = 0;
    pid_t done = waitpid(pid, &wstatus, WNOHANG);
    if (done == 0)
      return status;
    status.exitCode = WIFEXITED(wstatus)     ? WEXITSTATUS(wstatus)
                      : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus)
                                             : -1;
    status.state =
        status.exitCode == 0 ? AttemptState::Succeeded : AttemptState::Failed;
    endRanks();
    finished = status;
    pid = -1;
    return status;
  }

  void terminate() override {
    if (pid <= 0)
      return;
    // At once and for good: a rank woken or warned now could still write a
    // checkpoint of a step the supervisor already counts as lost (SIGKILL
    // also ends stopped ranks). Ranks on other hosts end when their
    // daemon loses mpirun. A graceful stop goes through the stop file.
    ::kill(-pid, SIGKILL);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    endRanks();
    AttemptStatus status;
    status.state = AttemptState::Failed;
    status.exitCode = 128 + SIGKILL;
    finished = status;
    pid = -1;
  }

  std::optional<int>
  capacity(const std::vector<std::string> &excluded) override {
    if (spec.hostfile.empty())
      return std::nullopt;
    int slots = 0;
    for (const HostSlots &host : hosts)
      if (!isExcluded(host, excluded))
        slots += host.slots;
    return slots;
  }

  std::string attemptId() const override {
    return "process group " + std::to_string(pid);
  }

private:
  /// Ends what is left of the attempt on this machine. Its launch and
  /// mpirun are in the process group, but Open MPI gives every rank a
  /// group of its own: with the launch killed, mpirun killed with it left
  /// the ranks training and checkpointing into the next attempt. They are
  /// found as the leftovers of a killed supervisor are.
  void endRanks() {
    ::kill(-pid, SIGKILL);
    if (!heartbeatDirectory.empty())
      endAttemptProcesses(heartbeatDirectory);
  }

  BackendSpec spec;
  std::string jobDirectory;
  /// The attempt's LaunchRequest::heartbeatDirectory.
  std::string heartbeatDirectory;
  /// The hostfile's hosts, read once when the job starts.
  std::vector<HostSlots> hosts;
  pid_t pid = -1;
  std::optional<AttemptStatus> finished;
};

} // namespace

Expected<std::unique_ptr<Backend>>
makeMpirunBackend(const BackendSpec &spec, const std::string &jobDirectory) {
  std::vector<HostSlots> hosts;
  if (!spec.hostfile.empty()) {
    Expected<std::vector<HostSlots>> read = readHostfile(spec.hostfile);
    if (!read)
      return read.takeError();
    hosts = std::move(*read);
  }
  return std::make_unique<MpirunBackend>(spec, jobDirectory, std::move(hosts));
}

} // namespace heterps::jobs
