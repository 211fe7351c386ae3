//===- Job.cpp - heterps job run | resize | status | stop -----------------===//
//
//   heterps job run JOBFILE [--job-dir DIR] [--backend mpirun|slurm]
//                   [--max-restarts N] [--heartbeat-timeout T]
//                   [--checkpoint-every K|Ts] [--min-workers N]
//                   [--inject SPEC]... [--corrupt-checkpoint-on-restart]
//   heterps job resize JOBDIR [--workers W] [--ps-shards S] [--batch B]
//                      [--wait T]
//   heterps job status JOBDIR
//   heterps job stop JOBDIR
//
// The supervisor and its policies live in lib/Jobs (plain C++); this file
// parses the command line and gives the supervisor the runtime's view of
// the job directory (heartbeat files, verified checkpoints). Compiled with
// exceptions: the runtime throws rt::Error.
//
//===----------------------------------------------------------------------===//

#include "Job.h"
#include "Commands.h"

#include "heterps/Cluster/JsonLimits.h"
#include "heterps/Jobs/Supervisor.h"
#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/FaultInjection.h"
#include "heterps/Runtime/Heartbeat.h"
#include "heterps/Runtime/Trainer.h"
#include "heterps/Runtime/Types.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace heterps::driver {
namespace {

namespace fs = std::filesystem;
using namespace heterps::jobs;
using rt::Error;

const char *const kUsage =
    "usage:\n"
    "  heterps job run JOBFILE [--job-dir DIR] [--backend mpirun|slurm]\n"
    "                  [--max-restarts N] [--heartbeat-timeout T]\n"
    "                  [--checkpoint-every K|Ts] [--min-workers N]\n"
    "                  [--inject SPEC]... [--corrupt-checkpoint-on-restart]\n"
    "                  [--shape-from-job-file]\n"
    "  heterps job resize JOBDIR [--workers W] [--ps-shards S] [--batch B]\n"
    "                     [--wait SECONDS]\n"
    "  heterps job status JOBDIR\n"
    "  heterps job stop JOBDIR\n"
    "(docs/Jobs.md)\n";

/// `--name value` and `--name=value` flags after the positional argument.
class Flags {
public:
  Flags(std::vector<std::string> words) : words(std::move(words)) {}
  /// The next flag's name and value; false at the end. Throws on a word
  /// that is not a flag or a flag of `valued` without its value. A name in
  /// neither list comes back without taking a value, for the caller to
  /// call unknown: "--frobnicate needs a value" misled.
  bool next(std::string &name, std::string &value,
            const std::vector<std::string> &valued,
            const std::vector<std::string> &switches = {}) {
    if (position >= words.size())
      return false;
    const std::string &word = words[position++];
    if (word.rfind("--", 0) != 0)
      throw Error("unexpected argument '" + word + "'");
    size_t equals = word.find('=');
    name = word.substr(2, equals == std::string::npos ? std::string::npos
                                                      : equals - 2);
    if (std::find(switches.begin(), switches.end(), name) != switches.end()) {
      value = "1";
      return true;
    }
    if (std::find(valued.begin(), valued.end(), name) == valued.end()) {
      value.clear();
      return true;
    }
    if (equals != std::string::npos) {
      value = word.substr(equals + 1);
    } else {
      if (position >= words.size())
        throw Error("--" + name + " needs a value");
      value = words[position++];
    }
    return true;
  }

private:
  std::vector<std::string> words;
  size_t position = 0;
};

int64_t integerFlag(const std::string &name, const std::string &value,
                    int64_t lowest, int64_t highest) {
  int64_t number = 0;
  if (llvm::StringRef(value).getAsInteger(10, number) || number < lowest ||
      number > highest)
    throw Error("--" + name + " '" + value + "' must be a whole number from " +
                std::to_string(lowest) + " to " + std::to_string(highest));
  return number;
}

/// `path` absolute and normal, without a trailing separator ("." is the
/// directory's own name in messages, not "dir/").
std::string absoluteDirectory(const std::string &path) {
  fs::path normal = fs::absolute(path).lexically_normal();
  if (!normal.has_filename() && normal.has_parent_path())
    normal = normal.parent_path();
  return normal.string();
}

double durationFlag(const std::string &name, const std::string &value) {
  std::optional<double> seconds = parseDuration(value);
  if (!seconds)
    throw Error("--" + name + " '" + value +
                "' is not a duration (e.g. 30s, 2m, 500ms)");
  return *seconds;
}

/// The runtime's view of a job directory.
class RuntimeProbe : public JobProbe {
public:
  explicit RuntimeProbe(std::vector<std::string> bundleIdentities)
      : identities(std::move(bundleIdentities)) {}

  std::vector<RankHeartbeat> heartbeats(const std::string &directory) override {
    std::vector<RankHeartbeat> beats;
    try {
      for (const rt::train::HeartbeatRecord &record :
           rt::train::readHeartbeats(directory))
        beats.push_back({rt::train::rankRoleName(record.role), record.index,
                         record.pid, record.host, record.step, record.time});
    } catch (const std::exception &) {
      // A directory changing under the listing: the next poll reads it.
    }
    return beats;
  }

  std::optional<CheckpointInfo>
  newestCheckpoint(const std::string &directory,
                   std::string &warnings) override {
    try {
      return find(directory, warnings);
    } catch (const std::exception &error) {
      // The ranks meet it too, and their attempt fails with it.
      warnings += std::string("warning: ") + error.what() + "\n";
      return std::nullopt;
    }
  }

  /// newestCheckpoint, throwing what it would warn of: another bundle's
  /// checkpoints are an error before anything runs.
  std::optional<CheckpointInfo> find(const std::string &directory,
                                     std::string &warnings) {
    std::ostringstream out;
    std::optional<rt::train::FoundCheckpoint> found;
    try {
      found = rt::train::findResumeCheckpoint(directory, identities, out);
    } catch (const rt::train::NoCheckpointVerifies &error) {
      // Every checkpoint is damaged: the job starts again from step 0, the
      // damaged ones kept aside for a look. Thrown, it ended the
      // supervisor and every later run of the job the same way.
      out << "warning: " << error.what() << "; the job starts again from "
          << "step 0, and keeps them as " << setAsideDamaged(directory) << "\n";
    }
    warnings = out.str();
    if (!found)
      return std::nullopt;
    CheckpointInfo info;
    info.path = found->path;
    info.step = found->state.step;
    info.samples = found->state.samples;
    info.position = found->state.position;
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(found->path + "/trainer-state", status))
      info.writtenAt = std::chrono::duration<double>(
                           status.getLastModificationTime().time_since_epoch())
                           .count();
    return info;
  }

  llvm::Expected<std::string>
  corruptNewestCheckpoint(const std::string &directory) override {
    try {
      return corrupt(directory);
    } catch (const std::exception &error) {
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     error.what());
    }
  }

private:
  llvm::Expected<std::string> corrupt(const std::string &directory) {
    std::vector<rt::train::CheckpointEntry> entries =
        rt::train::listCheckpoints(directory);
    if (entries.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no checkpoint in '%s' to corrupt",
                                     directory.c_str());
    // The largest file: parameters, which only the checksums can vouch for.
    std::string victim;
    uintmax_t largest = 0;
    for (const fs::directory_entry &entry :
         fs::recursive_directory_iterator(entries.back().path))
      if (entry.is_regular_file() && entry.file_size() > largest) {
        largest = entry.file_size();
        victim = entry.path().string();
      }
    std::fstream file(victim, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(std::streamoff(largest / 2));
    char byte = 0;
    file.get(byte);
    file.seekp(std::streamoff(largest / 2));
    file.put(char(byte ^ 0x5a));
    if (!file)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot corrupt '%s'", victim.c_str());
    return victim;
  }

  /// Renames every step-N of `directory` to damaged-step-N (a name no
  /// resume reads); returns the new names.
  static std::string setAsideDamaged(const std::string &directory) {
    return rt::train::setAsideCheckpoints(directory, -1);
  }

  std::vector<std::string> identities;
};

std::string selfPath() {
  static int anchor;
  return llvm::sys::fs::getMainExecutable("heterps", &anchor);
}

std::atomic<Supervisor *> signalledSupervisor{nullptr};
extern "C" void stopSupervisor(int) {
  if (Supervisor *supervisor = signalledSupervisor.load())
    supervisor->requestStop();
}
/// A log pipe that closes (`job run ... | head`) must not end the
/// supervisor: LLVM's SIGPIPE handler exited with 74 and left the attempt
/// training unsupervised. A handler, not SIG_IGN, so that the ranks (which
/// inherit an ignored signal across exec) keep the default.
extern "C" void ignoreBrokenPipe(int) {}

/// What is wrong with state.json that is there but unreadable.
std::string damagedState(const JobFiles &files) {
  return "'" + files.state +
         "' is damaged (not a JSON object; a crash while it was written can "
         "leave it empty)";
}

/// The supervisor's state.json; std::nullopt where it is there but
/// damaged; an error naming the directory where it is missing.
std::optional<llvm::json::Object> readStateIfIntact(const JobFiles &files) {
  auto buffer = llvm::MemoryBuffer::getFile(files.state);
  if (!buffer)
    throw Error("'" + files.directory +
                "' is not a job directory (no state.json; start the job "
                "with `heterps job run`)");
  llvm::Expected<llvm::json::Value> value =
      heterps::cluster::parseJson((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  if (const llvm::json::Object *state = value->getAsObject())
    return *state;
  return std::nullopt;
}

/// The supervisor's state.json, or an error naming the directory and, for
/// a damaged one, the way back: `job run` takes the job up from its
/// checkpoints without it.
llvm::json::Object readState(const JobFiles &files) {
  if (std::optional<llvm::json::Object> state = readStateIfIntact(files))
    return std::move(*state);
  throw Error(damagedState(files) + "; `heterps job run JOB.yaml --job-dir " +
              files.directory +
              "` takes the job up again from its checkpoints");
}

/// Whether the job's supervisor holds its lock.
bool supervised(const JobFiles &files) {
  int fd = ::open(files.lock.c_str(), O_RDONLY);
  if (fd < 0)
    return false;
  bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

/// The --inject specs, refused where one names a rank the job never runs
/// (at its largest) or is given twice, with the rank each names.
std::vector<RankFault> rankFaultsOfJob(const std::string &specs,
                                       const JobSpec &job) {
  const std::vector<rt::train::FaultSpec> parsed =
      rt::train::parseFaultSpecs(specs);
  rt::train::RankCounts ranks;
  ranks.workers = int(job.workers.max);
  ranks.shards = int(job.shards.max);
  ranks.stages = 0;
  ranks.atMost = true;
  rt::train::checkFaultsFitRanks(parsed, ranks, "--inject ");
  std::vector<RankFault> faults;
  for (const rt::train::FaultSpec &spec : parsed) {
    RankFault fault;
    fault.spec = spec.text;
    fault.index = spec.index;
    fault.rank = !spec.host.empty() ? RankFault::Rank::EveryRankOnHost
                 : spec.role == rt::train::RankRole::Worker
                     ? RankFault::Rank::Worker
                     : RankFault::Rank::Shard;
    faults.push_back(std::move(fault));
  }
  return faults;
}

int runJob(const std::vector<std::string> &args) {
  if (args.empty())
    throw Error(std::string("job run needs a job file\n") + kUsage);
  llvm::Expected<JobSpec> parsed = parseJobFile(args[0]);
  if (!parsed)
    throw Error(llvm::toString(parsed.takeError()));
  JobSpec job = std::move(*parsed);
  std::string jobDirectory = job.name + ".job";
  InjectedFaults faults;
  std::string injected;
  Flags flags({args.begin() + 1, args.end()});
  std::string name, value;
  bool shapeFromJobFile = false;
  while (flags.next(name, value,
                    {"job-dir", "backend", "max-restarts", "heartbeat-timeout",
                     "checkpoint-every", "min-workers", "inject"},
                    {"corrupt-checkpoint-on-restart", "shape-from-job-file"})) {
    if (name == "job-dir")
      jobDirectory = value;
    else if (name == "backend") {
      if (value != "mpirun" && value != "slurm")
        throw Error("--backend '" + value + "' is not mpirun or slurm");
      if (value == "slurm" && !job.backend.hostfile.empty())
        throw Error("--backend slurm: the job file's backend names a "
                    "hostfile, which is for mpirun");
      job.backend.kind =
          value == "slurm" ? BackendKind::Slurm : BackendKind::Mpirun;
    } else if (name == "max-restarts")
      job.restart.maxRestarts = int(integerFlag(name, value, 0, kMostCount));
    else if (name == "heartbeat-timeout") {
      job.restart.heartbeatTimeoutSeconds = durationFlag(name, value);
      if (job.restart.heartbeatTimeoutSeconds < 1)
        throw Error("--heartbeat-timeout '" + value + "' must be at least 1s");
    } else if (name == "checkpoint-every") {
      // Steps or a time, as heterps run --checkpoint-every takes it.
      if (std::string why = checkpointIntervalError(value); !why.empty())
        throw Error("--checkpoint-every " + why);
      job.checkpoint.every = value;
    } else if (name == "min-workers") {
      job.workers.min = integerFlag(name, value, 1, kMostRanks);
      if (job.workers.min > job.initial.workers)
        throw Error("--min-workers " + value + " is above the job's " +
                    std::to_string(job.initial.workers) + " workers");
    } else if (name == "inject")
      injected += (injected.empty() ? "" : ";") + value;
    else if (name == "corrupt-checkpoint-on-restart")
      faults.corruptCheckpointOnRestart = true;
    else if (name == "shape-from-job-file")
      shapeFromJobFile = true;
    else
      throw Error("unknown flag --" + name + " of job run\n" + kUsage);
  }
  // Everything is checked before anything is started or written.
  faults.rankFaults = rankFaultsOfJob(injected, job);
  rt::Bundle bundle(job.bundle);
  if (!bundle.training())
    throw Error("bundle '" + job.bundle +
                "' is not a training bundle; compile the model with --train");
  if (llvm::Error error = checkJobAgainstBundle(job, bundle.batch()))
    throw Error(llvm::toString(std::move(error)));
  JobFiles files(absoluteDirectory(jobDirectory));
  jobDirectory = files.directory;
  RuntimeProbe probe(rt::train::acceptedBundleIdentities(bundle));
  if (fs::exists(files.checkpoints)) {
    // Another job's checkpoints are an error now, not after a launch.
    // Damaged ones set aside are said now: the supervisor finds none.
    std::string warnings;
    if (!probe.find(files.checkpoints, warnings))
      std::cerr << warnings;
  }
  std::unique_ptr<Backend> backend;
  if (job.backend.kind == BackendKind::Slurm) {
    llvm::Expected<std::unique_ptr<Backend>> slurm =
        makeSlurmBackend(job.backend, job.name, jobDirectory);
    if (!slurm)
      throw Error(llvm::toString(slurm.takeError()));
    backend = std::move(*slurm);
  } else {
    if (!llvm::sys::findProgramByName("mpirun"))
      throw Error("cannot find 'mpirun' on PATH; install Open MPI (Debian: "
                  "openmpi-bin)");
    llvm::Expected<std::unique_ptr<Backend>> mpirun =
        makeMpirunBackend(job.backend, jobDirectory);
    if (!mpirun)
      throw Error(llvm::toString(mpirun.takeError()));
    backend = std::move(*mpirun);
  }

  // A directory another job's supervisor started is that job's: its
  // checkpoints would be resumed as this job's.
  std::optional<llvm::json::Object> previous;
  bool damaged = false;
  if (fs::exists(files.state)) {
    previous = readStateIfIntact(files);
    damaged = !previous;
  }
  if (previous) {
    const std::string owner = previous->getString("job").value_or("").str();
    if (owner != job.name)
      throw Error("job directory '" + jobDirectory + "' holds job '" + owner +
                  "' (" + files.state + "), not '" + job.name +
                  "'; give this job another --job-dir");
    if (previous->getString("phase").value_or("") == "succeeded") {
      std::cerr << "heterps job: job '" << job.name << "' in '" << jobDirectory
                << "' has already succeeded; nothing to run (report "
                << files.report << ")\n";
      return 0;
    }
  }

  // A directory without a job is the job's only where it holds nothing a
  // job does not make: `--job-dir /` (or a home directory) ran the job
  // there, its checkpoints and logs among the user's files.
  if (!previous && !damaged && fs::is_directory(jobDirectory)) {
    static const std::regex jobEntry(
        "checkpoints|heartbeats|supervisor\\.lock|state\\.json(\\.damaged)?|"
        "report\\.json|"
        "resize-request\\.json|stop-request|attempt-[0-9]+\\.log|"
        "report-until-attempt-[0-9]+\\.json");
    for (const fs::directory_entry &entry :
         fs::directory_iterator(jobDirectory))
      if (!std::regex_match(entry.path().filename().string(), jobEntry))
        throw Error("job directory '" + jobDirectory +
                    "' holds no job (no state.json) but holds '" +
                    entry.path().filename().string() +
                    "'; give a new or empty directory");
  }
  fs::create_directories(jobDirectory);
  // One supervisor per job directory.
  // Close-on-exec: an attempt that outlived a killed supervisor must not
  // hold the lock, or no later supervisor could take the job up.
  int lockFd = ::open(files.lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lockFd < 0)
    throw Error("cannot open '" + files.lock + "': " + std::strerror(errno));
  if (::flock(lockFd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lockFd);
    throw Error("job directory '" + jobDirectory + "' is already supervised (" +
                files.lock + " is locked)");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lockFd, 0) != 0 ||
      ::write(lockFd, pid.data(), pid.size()) != ssize_t(pid.size()))
    throw Error("cannot write '" + files.lock + "'");

  SupervisorOptions options;
  if (damaged) {
    // What it held (the earlier attempts' counts, the engine's id) is
    // lost; the checkpoints, which the trainer checks against the bundle,
    // are not. It blocked the job for good before 2026-12-02.
    std::error_code ignored;
    fs::rename(files.state, files.state + ".damaged", ignored);
    std::cerr << "heterps job: warning: " << damagedState(files)
              << "; kept as state.json.damaged, and the job goes on from its "
                 "newest checkpoint in the job file's initial shape\n";
    const std::string ended =
        endLeftoverAttempt("", files.directory, files.heartbeats);
    if (!ended.empty())
      std::cerr << "heterps job: " << ended << "\n";
  }
  if (previous) {
    // A supervisor killed with SIGKILL left its attempt running: it would
    // go on writing checkpoints beside this one's ranks.
    const std::string ended =
        endLeftoverAttempt(previous->getString("engine_id").value_or("").str(),
                           files.directory, files.heartbeats);
    if (!ended.empty())
      std::cerr << "heterps job: " << ended << "\n";
    options.earlier = parseEarlierRun(*previous);
    // The earlier supervisor's report stays beside this one's.
    if (options.earlier && fs::exists(files.report)) {
      std::error_code ignored;
      fs::rename(files.report,
                 files.directory + "/report-until-attempt-" +
                     std::to_string(options.earlier->attempts) + ".json",
                 ignored);
    }
  }
  options.jobDirectory = jobDirectory;
  options.shapeFromJobFile = shapeFromJobFile;
  options.heterps = selfPath();
  options.microBatch = bundle.batch();
  options.faults = faults;
  Supervisor supervisor(job, options, *backend, probe, std::cerr);
  signalledSupervisor = &supervisor;
  std::signal(SIGINT, stopSupervisor);
  std::signal(SIGTERM, stopSupervisor);
  std::signal(SIGPIPE, ignoreBrokenPipe);
  JobReport report = supervisor.run();
  signalledSupervisor = nullptr;
  return report.outcome == "succeeded" ? 0 : 1;
}

/// "; it has ended: succeeded" for a job whose supervisor finished it, or
/// "" (a job whose supervisor was killed is still running).
std::string endedPhase(const llvm::json::Object &state) {
  llvm::StringRef phase = state.getString("phase").value_or("");
  if (phase == "succeeded" || phase == "failed" || phase == "stopped")
    return "; it has ended: " + phase.str();
  return "";
}

int resizeJob(const std::vector<std::string> &args) {
  if (args.empty())
    throw Error(std::string("job resize needs a job directory\n") + kUsage);
  JobFiles files(absoluteDirectory(args[0]));
  readState(files);
  if (!supervised(files))
    throw Error("job '" + files.directory +
                "' has no running supervisor to resize it" +
                endedPhase(readState(files)));
  ResizeRequest request;
  double wait = 600;
  Flags flags({args.begin() + 1, args.end()});
  std::string name, value;
  while (flags.next(name, value, {"workers", "ps-shards", "batch", "wait"})) {
    if (name == "workers")
      request.workers = int(integerFlag(name, value, 1, kMostRanks));
    else if (name == "ps-shards")
      request.shards = int(integerFlag(name, value, 1, kMostRanks));
    else if (name == "batch")
      request.batch = integerFlag(name, value, 1, kMostBatch);
    else if (name == "wait")
      wait = durationFlag(name, value);
    else
      throw Error("unknown flag --" + name + " of job resize\n" + kUsage);
  }
  if (!request.workers && !request.shards && !request.batch)
    throw Error("job resize: give at least one of --workers, --ps-shards, "
                "--batch");
  request.id = std::to_string(::getpid()) + "-" +
               std::to_string(int64_t(unixSeconds() * 1000));
  // One request waits at a time: link() puts it in place only where none
  // is, so a second `job resize` is refused instead of overwriting it.
  const std::string temporary =
      files.resizeRequest + ".new." + std::to_string(::getpid());
  if (llvm::Error error =
          writeFileAtomically(temporary, resizeRequestJson(request)))
    throw Error(llvm::toString(std::move(error)));
  const int linked = ::link(temporary.c_str(), files.resizeRequest.c_str());
  const int linkError = errno;
  fs::remove(temporary);
  if (linked != 0 && linkError == EEXIST) {
    std::string pending = "another resize";
    if (auto text = llvm::MemoryBuffer::getFile(files.resizeRequest)) {
      if (llvm::Expected<ResizeRequest> other =
              parseResizeRequest((*text)->getBuffer().str()))
        pending = "resize " + other->id;
      else
        llvm::consumeError(other.takeError());
    }
    throw Error(pending +
                " is waiting for the supervisor; ask again once it is "
                "applied (`heterps job status` shows last_resize_id)");
  }
  if (linked != 0)
    throw Error("cannot write '" + files.resizeRequest +
                "': " + std::strerror(linkError));
  std::cout << "resize " << request.id << " requested\n";
  const double until = unixSeconds() + wait;
  while (unixSeconds() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    llvm::json::Object state = readState(files);
    llvm::StringRef error = state.getString("resize_error").value_or("");
    if (error.contains(request.id))
      throw Error(error.str());
    const llvm::json::Array *applied = state.getArray("applied_resize_ids");
    const bool appliedSince =
        applied && llvm::any_of(*applied, [&](const llvm::json::Value &id) {
          return id.getAsString() == llvm::StringRef(request.id);
        });
    if (appliedSince ||
        (state.getString("last_resize_id").value_or("") == request.id &&
         state.getString("phase").value_or("") == "running")) {
      std::cout << "resize " << request.id << " applied\n";
      return 0;
    }
    if (!supervised(files))
      throw Error("the job's supervisor ended before resize " + request.id +
                  " was applied");
  }
  if (wait > 0)
    throw Error("resize " + request.id + " not applied within " +
                std::to_string(int(wait)) + " s");
  return 0;
}

int jobStatus(const std::vector<std::string> &args) {
  if (args.size() != 1)
    throw Error(std::string("job status needs one job directory\n") + kUsage);
  JobFiles files(absoluteDirectory(args[0]));
  llvm::json::Object state = readState(files);
  state["supervised"] = supervised(files);
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(state)))
               << "\n";
  return 0;
}

int stopJob(const std::vector<std::string> &args) {
  if (args.size() != 1)
    throw Error(std::string("job stop needs one job directory\n") + kUsage);
  JobFiles files(absoluteDirectory(args[0]));
  // A damaged state.json does not keep a job from being stopped: what
  // stops it is the supervisor's pid, or the heartbeat directory.
  const llvm::json::Object state =
      readStateIfIntact(files).value_or(llvm::json::Object());
  std::ifstream lock(files.lock);
  int pid = 0;
  const bool live = supervised(files);
  if (live && (!(lock >> pid) || pid <= 0))
    // Held, so a supervisor runs: ending its attempt as a leftover made it
    // restart the job, never stopped.
    throw Error("job '" + files.directory +
                "' has a running supervisor, but its lock file '" + files.lock +
                "' names no process to signal; send SIGTERM to the `heterps "
                "job run` process yourself");
  if (!live) {
    // A supervisor killed with SIGKILL may have left its attempt running.
    const std::string ended =
        endLeftoverAttempt(state.getString("engine_id").value_or("").str(),
                           files.directory, files.heartbeats);
    if (ended.empty())
      throw Error("job '" + files.directory + "' has no running supervisor" +
                  endedPhase(state));
    std::cout << "the job's supervisor is gone; " << ended
              << " (`heterps job run` resumes the job from its newest "
                 "checkpoint)\n";
    return 0;
  }
  if (::kill(pid, SIGTERM) != 0)
    throw Error("cannot signal the supervisor (pid " + std::to_string(pid) +
                ")");
  std::cout << "asked the supervisor (pid " << pid
            << ") to checkpoint and stop\n";
  return 0;
}

} // namespace

int jobCommand(int argc, char **argv) {
  // argv[0] is the program, argv[1] "job".
  std::vector<std::string> args(argv + 2, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return 1;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (isHelpRequest(command, args)) {
    std::cout << kUsage;
    return 0;
  }
  try {
    if (command == "run")
      return runJob(args);
    if (command == "resize")
      return resizeJob(args);
    if (command == "status")
      return jobStatus(args);
    if (command == "stop")
      return stopJob(args);
    throw Error("unknown job command '" + command + "'\n" + kUsage);
  } catch (const std::exception &error) {
    reportError("job " + command, error.what());
    return 1;
  }
}

} // namespace heterps::driver
