//===- Supervisor.cpp - Keeps a training job alive and resizes it ---------===//
//
// One loop per attempt: choose the shape that fits, find the checkpoint to
// resume from, start, then watch the launcher and the heartbeats until the
// attempt ends; decide what comes next from how it ended.
//
//===----------------------------------------------------------------------===//

#include "heterps/Jobs/Supervisor.h"
#include "heterps/Cluster/JsonLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace heterps::jobs {

JobProbe::~JobProbe() = default;

double unixSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Error writeFileAtomically(const std::string &path, const std::string &text) {
  // A name of this process's own: two writers (two `job resize`s) never
  // write into one file.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      const int error = errno;
      sys::fs::remove(temporary);
      // Named as the user gave it: the temporary beside it is ours.
      return createStringError(inconvertibleErrorCode(),
                               "cannot write '%s': %s", path.c_str(),
                               std::strerror(error));
    }
  }
  if (std::error_code error = sys::fs::rename(temporary, path)) {
    sys::fs::remove(temporary);
    return createStringError(error, "cannot rename '%s' to '%s': %s",
                             temporary.c_str(), path.c_str(),
                             error.message().c_str());
  }
  return Error::success();
}

/// `path` through its symlinks, as far as it exists. An attempt's processes
/// carry its heartbeat directory in their environment, which is how a later
/// supervisor or `job stop` finds what a killed one left running
/// (LeftoverAttempt.cpp): every path to one job directory must give one
/// string.
static std::string resolvedPath(std::string path) {
  std::error_code error;
  std::filesystem::path resolved =
      std::filesystem::weakly_canonical(path, error);
  if (error)
    return path;
  std::string text = resolved.string();
  while (text.size() > 1 && text.back() == '/')
    text.pop_back();
  return text;
}

JobFiles::JobFiles(std::string directoryPath)
    : directory(resolvedPath(std::move(directoryPath))) {
  auto in = [&](const char *name) {
    SmallString<256> path(directory);
    sys::path::append(path, name);
    return std::string(path);
  };
  checkpoints = in("checkpoints");
  heartbeats = in("heartbeats");
  stopFile = in("stop-request");
  resizeRequest = in("resize-request.json");
  state = in("state.json");
  report = in("report.json");
  lock = in("supervisor.lock");
}

std::string JobFiles::attemptLog(int attempt) const {
  SmallString<256> path(directory);
  sys::path::append(path, "attempt-" + std::to_string(attempt) + ".log");
  return std::string(path);
}

int JobFiles::lastAttemptLogged() const {
  int last = 0;
  std::error_code error;
  for (sys::fs::directory_iterator entry(directory, error), end;
       !error && entry != end; entry.increment(error)) {
    StringRef name = sys::path::filename(entry->path());
    int attempt = 0;
    if (name.consume_front("attempt-") && name.consume_back(".log") &&
        !name.getAsInteger(10, attempt) && attempt > 0)
      last = std::max(last, attempt);
  }
  return last;
}

double LearningRateSchedule::at(int64_t step) const {
  if (step <= warmupStart || step > warmupEnd || warmupEnd <= warmupStart)
    return step <= warmupStart && warmupEnd > warmupStart ? warmupFrom : scale;
  return warmupFrom + (scale - warmupFrom) * double(step - warmupStart) /
                          double(warmupEnd - warmupStart);
}

static std::string formatNumber(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

std::vector<std::string> LearningRateSchedule::flags() const {
  std::vector<std::string> flags;
  if (scale != 1)
    flags.push_back("--lr-scale=" + formatNumber(scale));
  if (warmupEnd > warmupStart)
    flags.push_back("--lr-warmup=" + formatNumber(warmupFrom) + ":" +
                    std::to_string(warmupStart) + ":" +
                    std::to_string(warmupEnd));
  return flags;
}

double backoffSeconds(const RestartPolicy &policy, int restart) {
  double delay =
      policy.backoffSeconds * std::pow(2.0, std::max(0, restart - 1));
  return std::min(delay, policy.maxBackoffSeconds);
}

std::optional<JobShape> fitShape(const JobSpec &job, JobShape wanted,
                                 std::optional<int> capacity) {
  if (!capacity)
    return wanted;
  if (*capacity < wanted.shards + wanted.workers) {
    // Workers go first: a shard holds part of the parameters' memory,
    // a worker is only throughput.
    wanted.workers = std::max(0, *capacity - wanted.shards);
    if (wanted.workers < job.workers.min) {
      wanted.shards = int(
          std::max<int64_t>(job.shards.min, *capacity - int(job.workers.min)));
      wanted.workers = std::max(0, *capacity - wanted.shards);
    }
  }
  if (wanted.workers < job.workers.min || wanted.shards < job.shards.min)
    return std::nullopt;
  return wanted;
}

Expected<ResizeRequest> parseResizeRequest(const std::string &text) {
  Expected<json::Value> value = heterps::cluster::parseJson(text);
  if (!value)
    return value.takeError();
  const json::Object *object = value->getAsObject();
  if (!object)
    return createStringError(inconvertibleErrorCode(),
                             "a resize request is a JSON object");
  ResizeRequest request;
  if (std::optional<StringRef> id = object->getString("id"))
    request.id = id->str();
  request.workers = int(object->getInteger("workers").value_or(0));
  request.shards = int(object->getInteger("ps_shards").value_or(0));
  request.batch = object->getInteger("batch").value_or(0);
  return request;
}

std::string resizeRequestJson(const ResizeRequest &request) {
  json::Object object{{"id", request.id}};
  if (request.workers)
    object["workers"] = request.workers;
  if (request.shards)
    object["ps_shards"] = request.shards;
  if (request.batch)
    object["batch"] = request.batch;
  std::string text;
  raw_string_ostream(text) << json::Value(std::move(object));
  return text + "\n";
}

static json::Object shapeJson(const JobShape &shape) {
  return json::Object{{"workers", shape.workers},
                      {"ps_shards", shape.shards},
                      {"batch", shape.batch}};
}

std::optional<EarlierRun> parseEarlierRun(const json::Object &state) {
  const json::Object *shape = state.getObject("shape");
  if (!shape)
    return std::nullopt;
  EarlierRun earlier;
  earlier.shape.workers = int(shape->getInteger("workers").value_or(0));
  earlier.shape.shards = int(shape->getInteger("ps_shards").value_or(0));
  earlier.shape.batch = shape->getInteger("batch").value_or(0);
  LearningRateSchedule &rate = earlier.learningRate;
  rate.scale = state.getNumber("learning_rate_scale").value_or(1.0);
  earlier.attempts = int(std::clamp<int64_t>(
      state.getInteger("attempt").value_or(0), 0, kMostCount));
  if (!(rate.scale > 0) || !std::isfinite(rate.scale))
    rate.scale = 1;
  rate.warmupFrom = rate.scale;
  if (const json::Object *warmup = state.getObject("learning_rate_warmup")) {
    double from = warmup->getNumber("from").value_or(0);
    int64_t start = warmup->getInteger("start").value_or(-1);
    int64_t end = warmup->getInteger("end").value_or(-1);
    // A damaged ramp is no ramp: the scale alone, as before.
    if (from > 0 && std::isfinite(from) && start >= 0 && end > start) {
      rate.warmupFrom = from;
      rate.warmupStart = start;
      rate.warmupEnd = end;
    }
  }
  if (const json::Object *to = state.getObject("resizing_to")) {
    JobShape shape;
    shape.workers = int(to->getInteger("workers").value_or(0));
    shape.shards = int(to->getInteger("ps_shards").value_or(0));
    shape.batch = to->getInteger("batch").value_or(0);
    std::optional<StringRef> id = state.getString("resizing_id");
    earlier.resizingTo.emplace(id ? id->str() : std::string("?"), shape);
  }
  return earlier;
}

static json::Array stringsJson(const std::vector<std::string> &strings) {
  json::Array array;
  for (const std::string &text : strings)
    array.push_back(text);
  return array;
}

std::string reportJson(const JobReport &report) {
  json::Array attempts, failures, resizes;
  for (const AttemptRecord &attempt : report.attempts)
    attempts.push_back(
        json::Object{{"attempt", attempt.index},
                     {"shape", shapeJson(attempt.shape)},
                     {"engine_id", attempt.engineId},
                     {"started_at", attempt.startedAt},
                     {"ended_at", attempt.endedAt},
                     {"start_step", attempt.startStep},
                     {"end_step", attempt.endStep},
                     {"end", attempt.end},
                     {"exit_code", attempt.exitCode},
                     {"excluded_hosts", stringsJson(attempt.excludedHosts)}});
  for (const FailureRecord &failure : report.failures) {
    json::Object object{{"attempt", failure.attempt},
                        {"kind", failure.kind},
                        {"role", failure.role},
                        {"index", failure.index},
                        {"mpi_rank", failure.mpiRank},
                        {"host", failure.host},
                        {"step", failure.step},
                        {"detail", failure.detail},
                        {"resumed_from_step", failure.resumedFromStep},
                        {"steps_redone", failure.stepsRedone},
                        {"seconds_lost", failure.secondsLost}};
    if (failure.signal)
      object["signal"] = failure.signal;
    else
      object["exit_code"] = failure.exitCode;
    failures.push_back(std::move(object));
  }
  for (const ResizeRecord &resize : report.resizes)
    resizes.push_back(
        json::Object{{"id", resize.id},
                     {"from", shapeJson(resize.from)},
                     {"to", shapeJson(resize.to)},
                     {"at_step", resize.atStep},
                     {"learning_rate_scale", resize.learningRateScale},
                     {"stop_seconds", resize.stopSeconds},
                     {"start_seconds", resize.startSeconds},
                     {"first_step_seconds", resize.firstStepSeconds},
                     {"total_seconds", resize.totalSeconds}});
  json::Object root{{"job", report.job},
                    {"outcome", report.outcome},
                    {"message", report.message},
                    {"earlier_attempts", report.earlierAttempts},
                    {"attempts", std::move(attempts)},
                    {"restarts", report.restarts},
                    {"preemptions", report.preemptions},
                    {"failures", std::move(failures)},
                    {"resizes", std::move(resizes)},
                    {"excluded_hosts", stringsJson(report.excludedHosts)},
                    {"warnings", stringsJson(report.warnings)},
                    {"steps_redone", report.stepsRedone},
                    {"seconds_lost", report.secondsLost},
                    {"seconds", report.seconds},
                    {"steps", report.steps},
                    {"samples", report.samples},
                    {"data_position", report.dataPosition},
                    {"last_checkpoint", report.lastCheckpoint}};
  std::string text;
  raw_string_ostream os(text);
  os << formatv("{0:2}", json::Value(std::move(root)));
  return text + "\n";
}

Supervisor::Supervisor(JobSpec job, SupervisorOptions options, Backend &backend,
                       JobProbe &probe, std::ostream &log)
    : job(std::move(job)), options(std::move(options)), backend(backend),
      probe(probe), log(log) {}

namespace {

void sleepFor(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::string fixed(double value, int digits = 1) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

/// Which role and index MPI rank `rank` has: shards first, then workers
/// (the order `heterps launch` starts them in).
std::pair<std::string, int> roleOfRank(int rank, const JobShape &shape) {
  if (rank < 0)
    return {"", -1};
  if (rank < shape.shards)
    return {"shard", rank};
  if (rank < shape.shards + shape.workers)
    return {"worker", rank - shape.shards};
  return {"stage", rank - shape.shards - shape.workers};
}

/// The bytes appended to a file since the last call.
class LogFollower {
public:
  void reset(std::string newPath) {
    path = std::move(newPath);
    offset = 0;
  }
  std::string next() {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return "";
    in.seekg(0, std::ios::end);
    std::streamoff size = in.tellg();
    if (size <= offset)
      return "";
    in.seekg(offset);
    std::string text(size_t(size - offset), '\0');
    in.read(text.data(), std::streamsize(text.size()));
    offset = size;
    return text;
  }

private:
  std::string path;
  std::streamoff offset = 0;
};

/// The first error heterps itself printed in an attempt's log ("heterps
/// run: error: ...", as "heterps run: ...", or a flag the command line
/// refused, by a rank or by the launcher's check); empty when none. Ranks write
/// the log at once, so a line may begin with another rank's words.
std::string firstOwnError(StringRef log) {
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  const StringRef marker = ": error: ";
  const std::string launchedJobFailed =
      ("heterps launch: error: " + kLaunchedJobFailed).str();
  // LLVM's command-line parser words its refusals so.
  static const StringRef flagErrors[] = {
      "heterps: Unknown command line argument", "heterps: for the ",
      "heterps: Not enough positional", "heterps: Too many positional"};
  for (StringRef line : lines) {
    line = line.trim();
    if (size_t at = line.find(marker); at != StringRef::npos) {
      size_t program = line.take_front(at).rfind("heterps ");
      // The launcher's error after the job ran only says that a rank
      // failed; before it (its flags, the hostfile) it says why.
      if (program != StringRef::npos &&
          !line.substr(program).starts_with(launchedJobFailed))
        return (line.slice(program, at) + ": " +
                line.drop_front(at + marker.size()))
            .str();
    }
    for (StringRef start : flagErrors)
      if (size_t at = line.find(start); at != StringRef::npos)
        return line.drop_front(at).str();
  }
  return "";
}

/// Whether an error of heterps's own is of the machine's state rather than
/// the job's: a full disk or quota may be freed during the back-off, so
/// the restarts are spent on it, not refused as failing alike.
bool mayPass(StringRef error) {
  return error.contains(std::strerror(ENOSPC)) ||
         error.contains(std::strerror(EDQUOT));
}

/// mpirun's refusals that no restart changes, with what to do, or "".
std::string firstMpirunRefusal(StringRef log) {
  // (Open MPI words it so for one program, and so for several: a job's
  // shards and workers.)
  if (log.contains("There are not enough slots available in the system") ||
      log.contains("All nodes which are allocated for this job are already "
                   "filled"))
    return "mpirun: there are not enough slots for the job's ranks (give a "
           "backend hostfile with more slots, fewer workers or ps_shards, or "
           "--oversubscribe in backend.mpirun_args)";
  if (log.contains("mpirun has detected an attempt to run as root"))
    return "mpirun refuses to run as root (add --allow-run-as-root to "
           "backend.mpirun_args)";
  return "";
}

std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

/// The run's mutable state, so the steps of one attempt read as functions.
struct Supervisor::Impl {
  Supervisor &self;
  const JobSpec &job;
  JobFiles files;
  JobReport report;
  JobShape wanted;
  LearningRateSchedule schedule;
  std::map<std::string, int> hostFailures;
  std::vector<std::string> excluded;
  /// A failure whose cost is known only once the next attempt resumes and
  /// steps.
  std::optional<size_t> openFailure;
  /// Whether an attempt of this supervisor's reached a step.
  bool trainedInThisRun = false;
  // heterps's own error of the last failed attempt that made no step ("" if
  // it made one or said none): the same again means a restart fails alike.
  std::string lastStartError;
  std::optional<size_t> openResize;
  bool openFailureResumed = false; // its steps redone counted
  double openSince = 0;            // when the open failure was detected
  double resizeSince = 0;          // when the open resize's attempt stopped
  bool corruptPending = false;
  /// Fault specs that have not fired yet.
  std::vector<RankFault> pendingFaults;
  std::string phase = "starting";
  int attempt = 0;
  bool stateWriteFailing = false;
  int64_t step = 0;
  double lastStateWrite = 0;
  int64_t lastStateStep = -1;
  std::string resizeError;
  /// The resize the ranks are stopping for (id, shape), in state.json so
  /// that a supervisor after a killed one applies it.
  std::optional<std::pair<std::string, JobShape>> resizingTo;
  /// A resize request to the shape the job already had, answered at once.
  std::string noopResizeId;
  std::string engineId;

  Impl(Supervisor &self)
      : self(self), job(self.job), files(self.options.jobDirectory) {}

  std::ostream &log() { return self.log; }

  void say(const std::string &line) {
    log() << "heterps job: " << line << "\n";
    log().flush();
  }

  void writeState(bool force = false) {
    double now = unixSeconds();
    // Every new step is news to whoever waits on it (job resize, the
    // autoscaler); otherwise once a second.
    if (!force && step == lastStateStep && now - lastStateWrite < 1)
      return;
    lastStateWrite = now;
    lastStateStep = step;
    json::Object state{
        {"job", job.name},
        {"phase", phase},
        {"attempt", attempt},
        {"shape", shapeJson(wanted)},
        {"step", step},
        {"restarts", report.restarts},
        {"resizes", int64_t(report.resizes.size())},
        {"excluded_hosts", stringsJson(excluded)},
        {"learning_rate_scale", schedule.scale},
        {"learning_rate_warmup", json::Object{{"from", schedule.warmupFrom},
                                              {"start", schedule.warmupStart},
                                              {"end", schedule.warmupEnd}}},
        {"engine_id", engineId},
        {"resize_error", resizeError},
        {"updated_at", now}};
    if (resizingTo) {
      state["resizing_id"] = resizingTo->first;
      state["resizing_to"] = shapeJson(resizingTo->second);
    }
    if (!noopResizeId.empty())
      state["last_resize_id"] = noopResizeId;
    else if (!report.resizes.empty())
      state["last_resize_id"] = report.resizes.back().id;
    // Every resize whose attempt has stepped (the last 32): a later one
    // replaces last_resize_id at once, and `job resize` waiting on the
    // earlier one took it for lost until the job ended.
    json::Array applied;
    for (size_t i = report.resizes.size() > 32 ? report.resizes.size() - 32 : 0;
         i < report.resizes.size(); ++i)
      if (!openResize || *openResize != i)
        applied.push_back(report.resizes[i].id);
    state["applied_resize_ids"] = std::move(applied);
    std::string text;
    raw_string_ostream(text) << json::Value(std::move(state)) << "\n";
    // Said once per failing stretch: a full disk fails every write.
    if (Error error = writeFileAtomically(files.state, text)) {
      if (!stateWriteFailing)
        say(toString(std::move(error)) +
            "; `job status` shows an older state until it can be written");
      else
        consumeError(std::move(error));
      stateWriteFailing = true;
    } else {
      stateWriteFailing = false;
    }
  }

  /// The shape to run, waiting (bounded) for capacity when the minimum does
  /// not fit; nullopt after the wait.
  std::optional<JobShape> shapeThatFits() {
    std::optional<JobShape> shape =
        fitShape(job, wanted, self.backend.capacity(excluded));
    if (shape)
      return shape;
    phase = "waiting-for-capacity";
    writeState(true);
    say("fewer than " + std::to_string(job.workers.min) +
        " workers fit (hosts left out: " +
        (excluded.empty() ? std::string("none") : join(excluded)) +
        "); waiting up to " + fixed(job.restart.capacityWaitSeconds) +
        " s for capacity");
    const double until = unixSeconds() + job.restart.capacityWaitSeconds;
    while (unixSeconds() < until && !self.stopRequested) {
      sleepFor(1);
      // A resize asked for meanwhile is answered now (refused, or the
      // shape to fit): it waited unread until the wait ended.
      takeResizeForNextAttempt();
      if ((shape = fitShape(job, wanted, self.backend.capacity(excluded))))
        return shape;
    }
    return std::nullopt;
  }

  /// A resize asked for while no attempt runs (during the back-off, a wait
  /// for capacity, or before this supervisor started) becomes the shape of
  /// the next attempt; a bad one is refused in state.json.
  void takeResizeForNextAttempt() {
    std::optional<std::pair<ResizeRequest, JobShape>> pending =
        takeResizeRequest(wanted);
    if (!pending)
      return;
    say("resize " + pending->first.id + ": " + wanted.describe() + " -> " +
        pending->second.describe() + " from the next attempt");
    report.resizes.push_back(
        resizeRecordOf(*pending, wanted, newestCheckpointStep(), 0));
    openResize = report.resizes.size() - 1;
    resizeSince = unixSeconds();
    wanted = pending->second;
  }

  static std::string join(const std::vector<std::string> &words,
                          const char *separator = ", ") {
    std::string text;
    for (const std::string &word : words)
      text += (text.empty() ? "" : separator) + word;
    return text;
  }

  /// Drops the fault specs that fired in this attempt (their ranks said so).
  void forgetFiredFaults() {
    const std::string output = readWholeFile(files.attemptLog(attempt));
    llvm::erase_if(pendingFaults, [&](const RankFault &fault) {
      return output.find("heterps: fault injection: " + fault.spec + ":") !=
             std::string::npos;
    });
  }

  /// The pending specs whose rank `shape` runs, for HETERPS_FAULT.
  std::vector<std::string> faultsFor(const JobShape &shape) const {
    std::vector<std::string> specs;
    for (const RankFault &fault : pendingFaults)
      if (fault.rank == RankFault::Rank::EveryRankOnHost ||
          fault.index < (fault.rank == RankFault::Rank::Worker ? shape.workers
                                                               : shape.shards))
        specs.push_back(fault.spec);
    return specs;
  }

  std::vector<std::string> command(const JobShape &shape) {
    std::vector<std::string> argv{self.options.heterps,
                                  "launch",
                                  job.bundle,
                                  "--workers",
                                  std::to_string(shape.workers),
                                  "--ps-shards",
                                  std::to_string(shape.shards)};
    if (job.asynchronous) {
      argv.push_back("--consistency=async");
      argv.push_back("--staleness=" + std::to_string(job.staleness));
    }
    argv.push_back("--");
    argv.insert(argv.end(), {"--data", job.data});
    if (!job.eval.empty())
      argv.insert(argv.end(), {"--eval", job.eval});
    argv.insert(argv.end(),
                {"--samples", std::to_string(job.samples), "--batch",
                 std::to_string(shape.batch), "--checkpoint-dir",
                 files.checkpoints, "--checkpoint-every", job.checkpoint.every,
                 "--keep-checkpoints", std::to_string(job.checkpoint.keep),
                 "--resume"});
    for (const std::string &flag : schedule.flags())
      argv.push_back(flag);
    argv.insert(argv.end(), job.trainArgs.begin(), job.trainArgs.end());
    return argv;
  }

  /// The worker heartbeats' furthest step, and the stalest rank.
  struct Beats {
    int64_t step = -1;
    std::vector<RankHeartbeat> ranks;
    const RankHeartbeat *find(const std::string &role, int index) const {
      for (const RankHeartbeat &beat : ranks)
        if (beat.role == role && beat.index == index)
          return &beat;
      return nullptr;
    }
  };
  Beats readBeats() {
    Beats beats;
    beats.ranks = self.probe.heartbeats(files.heartbeats);
    for (const RankHeartbeat &beat : beats.ranks)
      if (beat.role == "worker")
        beats.step = std::max(beats.step, beat.step);
    return beats;
  }

  /// Records a failure and decides about the host it happened on.
  void recordFailure(FailureRecord failure) {
    failure.attempt = attempt;
    failure.detectedAt = unixSeconds();
    std::string where =
        failure.role.empty()
            ? std::string("the job")
            : failure.role + " " + std::to_string(failure.index) +
                  (failure.mpiRank >= 0
                       ? " (MPI rank " + std::to_string(failure.mpiRank) + ")"
                       : std::string());
    if (!failure.host.empty())
      where += " on " + failure.host;
    std::string how =
        failure.kind == "signal"
            ? "was killed by signal " + std::to_string(failure.signal)
        : failure.kind == "exit"
            ? "exited with code " + std::to_string(failure.exitCode)
        : failure.kind == "hang" ? "hung: " + failure.detail
        : failure.kind == "host" ? "was lost: " + failure.detail
                                 : "ended: " + failure.detail;
    say("attempt " + std::to_string(attempt) + " failed: " + where + " " + how +
        (failure.step >= 0 ? " (last step " + std::to_string(failure.step) + ")"
                           : std::string()));
    // Only where the backend places ranks on a list of hosts can one be
    // left out (not on this machine alone).
    const bool hostsListed = self.backend.capacity({}).has_value();
    if (hostsListed && !failure.host.empty() &&
        ++hostFailures[failure.host] >= job.restart.excludeHostAfter &&
        std::find(excluded.begin(), excluded.end(), failure.host) ==
            excluded.end()) {
      excluded.push_back(failure.host);
      report.excludedHosts = excluded;
      say("host " + failure.host + " failed " +
          std::to_string(hostFailures[failure.host]) +
          " times; leaving it out of the job");
    }
    report.failures.push_back(std::move(failure));
    openFailure = report.failures.size() - 1;
    openFailureResumed = false;
    openSince = report.failures.back().detectedAt;
  }

  /// The failure that ended a failed attempt, from the launcher's words and
  /// the heartbeats.
  FailureRecord blame(const JobShape &shape, const AttemptStatus &status,
                      const Beats &beats) {
    FailureRecord failure;
    std::vector<RankExit> exits =
        parseLauncherOutput(readWholeFile(files.attemptLog(attempt)));
    if (!exits.empty() && exits.front().mpiRank < 0) {
      failure.kind = "host";
      failure.host = exits.front().host;
      failure.step = beats.step;
      failure.detail = "the launcher lost its daemon on " + failure.host;
      return failure;
    }
    if (!exits.empty()) {
      const RankExit &first = exits.front();
      auto [role, index] = roleOfRank(first.mpiRank, shape);
      failure.role = role;
      failure.index = index;
      failure.mpiRank = first.mpiRank;
      failure.signal = first.signal;
      failure.exitCode = first.exitCode;
      failure.kind = first.signal ? "signal" : "exit";
      failure.host = first.host;
      // A killed rank's last beat may be older than its last step; the
      // job's furthest worker step bounds what is lost.
      failure.step = beats.step;
      if (const RankHeartbeat *beat = beats.find(role, index)) {
        failure.step = std::max(beat->step, beats.step);
        failure.host = beat->host;
      }
      return failure;
    }
    failure.kind = status.engineState.empty() ? "lost" : "engine";
    failure.exitCode = status.exitCode;
    failure.step = beats.step;
    failure.detail = status.engineState.empty()
                         ? "the launcher exited with code " +
                               std::to_string(status.exitCode) +
                               " without naming a rank"
                         : "the cluster engine ended it: " + status.engineState;
    return failure;
  }

  /// A hang: the step has not moved for the heartbeat timeout. The rank
  /// whose heartbeat is the oldest is the one that stopped.
  FailureRecord hang(const Beats &beats, double stalledFor) {
    FailureRecord failure;
    failure.kind = "hang";
    const double now = unixSeconds();
    const RankHeartbeat *stalest = nullptr;
    for (const RankHeartbeat &beat : beats.ranks)
      if (!stalest || beat.time < stalest->time)
        stalest = &beat;
    failure.step = beats.step;
    // Heartbeats come every half second: a few seconds old is silent.
    if (stalest && now - stalest->time > 3) {
      failure.role = stalest->role;
      failure.index = stalest->index;
      failure.host = stalest->host;
      failure.step = std::max(stalest->step, beats.step);
      failure.detail = "no heartbeat for " + fixed(now - stalest->time) +
                       " s and no step for " + fixed(stalledFor) + " s";
    } else {
      failure.detail = "no step for " + fixed(stalledFor) +
                       " s while every rank's heartbeat is fresh";
    }
    return failure;
  }

  /// Takes a pending resize request: the new shape, or nullopt (a bad
  /// request is answered in state.json and dropped).
  std::optional<std::pair<ResizeRequest, JobShape>>
  takeResizeRequest(const JobShape &current) {
    if (!sys::fs::exists(files.resizeRequest))
      return std::nullopt;
    std::string text = readWholeFile(files.resizeRequest);
    // A directory of that name is removed too: left, it was read again
    // and reported five times a second.
    if (sys::fs::is_directory(files.resizeRequest))
      sys::fs::remove_directories(files.resizeRequest);
    sys::fs::remove(files.resizeRequest);
    Expected<ResizeRequest> request = parseResizeRequest(text);
    if (!request) {
      resizeError =
          "unreadable resize request: " + toString(request.takeError());
      say(resizeError);
      writeState(true);
      return std::nullopt;
    }
    JobShape shape = current;
    if (request->workers)
      shape.workers = request->workers;
    if (request->shards)
      shape.shards = request->shards;
    if (request->batch)
      shape.batch = request->batch;
    if (std::string why = job.checkShape(shape, self.options.microBatch);
        !why.empty()) {
      resizeError = "resize " + request->id + " refused: " + why;
      say(resizeError);
      writeState(true);
      return std::nullopt;
    }
    resizeError.clear();
    if (shape == current) {
      // Answered as applied: a stop, checkpoint and relaunch would change
      // nothing.
      noopResizeId = request->id;
      say("resize " + request->id + " asks for " + shape.describe() +
          ", the job's shape; nothing to do");
      writeState(true);
      return std::nullopt;
    }
    noopResizeId.clear();
    return std::make_pair(*request, shape);
  }

  /// The step of the newest checkpoint that verifies (0: none).
  int64_t newestCheckpointStep() {
    std::string ignored;
    std::optional<CheckpointInfo> last =
        self.probe.newestCheckpoint(files.checkpoints, ignored);
    return last ? last->step : 0;
  }

  /// The record of `resize` from `from`, at the checkpoint of step `atStep`.
  ResizeRecord resizeRecordOf(const std::pair<ResizeRequest, JobShape> &resize,
                              const JobShape &from, int64_t atStep,
                              double stopSeconds) {
    ResizeRecord record;
    record.id = resize.first.id;
    record.from = from;
    record.to = resize.second;
    record.atStep = atStep;
    record.stopSeconds = stopSeconds;
    record.learningRateScale = learningRateScale(
        job.learningRateRule, resize.second.batch, job.initial.batch);
    return record;
  }

  JobReport run();
};

JobReport Supervisor::run() {
  Impl impl(*this);
  return impl.run();
}

JobReport Supervisor::Impl::run() {
  const double jobStart = unixSeconds();
  report.job = job.name;
  wanted = job.initial;
  schedule.scale =
      learningRateScale(job.learningRateRule, wanted.batch, job.initial.batch);
  if (const std::optional<EarlierRun> &earlier = self.options.earlier) {
    // The job goes on where the supervisor before left it: in the shape
    // it was resized to, at its learning rate, its attempts numbered on.
    attempt = earlier->attempts;
    report.earlierAttempts = earlier->attempts;
    if (std::string why =
            job.checkShape(earlier->shape, self.options.microBatch);
        self.options.shapeFromJobFile) {
      // The learning rate ramps from the earlier one to this shape's.
      schedule = earlier->learningRate;
    } else if (why.empty()) {
      wanted = earlier->shape;
      schedule = earlier->learningRate;
      // The resize the supervisor before was stopping the ranks for.
      if (const auto &to = earlier->resizingTo;
          to && job.checkShape(to->second, self.options.microBatch).empty() &&
          !(to->second == wanted)) {
        say("resize " + to->first + ", which the supervisor before was " +
            "applying: " + wanted.describe() + " -> " + to->second.describe() +
            " from the next attempt");
        ResizeRequest request;
        request.id = to->first;
        report.resizes.push_back(resizeRecordOf({request, to->second}, wanted,
                                                newestCheckpointStep(), 0));
        openResize = report.resizes.size() - 1;
        resizeSince = unixSeconds();
        wanted = to->second;
      }
    } else {
      say("the job was left in " + earlier->shape.describe() +
          ", which the job file no longer allows (" + why + "); going on in " +
          wanted.describe());
    }
  }
  // A state.json damaged or lost says too few: its attempt logs are never
  // overwritten (an attempt of -5 numbered the next 1 over attempt-1.log).
  attempt = std::max(attempt, files.lastAttemptLogged());
  report.earlierAttempts = attempt;
  corruptPending = self.options.faults.corruptCheckpointOnRestart;
  pendingFaults = self.options.faults.rankFaults;
  sys::fs::create_directories(files.checkpoints);
  sys::fs::create_directories(files.heartbeats);
  sys::fs::remove(files.stopFile);
  LogFollower follower;

  bool attempted = false;
  while (true) {
    // A stop asked for while an attempt stopped for a resize: no attempt
    // in the new shape only to stop it.
    if (attempted && self.stopRequested) {
      report.outcome = "stopped";
      report.message = "stopped on request";
      break;
    }
    // A resize asked for while no attempt ran (during the back-off, or
    // before this supervisor started: `job resize --wait 0`, then a
    // restart) applies to the next attempt. At startup it was deleted,
    // and during the back-off it cost an attempt in the old shape,
    // stopped at once.
    takeResizeForNextAttempt();
    resizingTo.reset(); // what the last attempt stopped for is in `wanted`
    attempted = true;
    std::optional<JobShape> fitted = shapeThatFits();
    if (!fitted) {
      report.outcome = self.stopRequested ? "stopped" : "failed";
      report.message =
          self.stopRequested
              ? "stopped while waiting for capacity"
              : "fewer than the job's minimum of " +
                    std::to_string(job.workers.min) +
                    " workers fit after waiting " +
                    fixed(job.restart.capacityWaitSeconds) +
                    " s (hosts left out: " +
                    (excluded.empty() ? std::string("none") : join(excluded)) +
                    ")";
      break;
    }
    JobShape shape = *fitted;
    if (shape != wanted)
      say("running with " + shape.describe() + " instead of " +
          wanted.describe() + ": that is what fits");

    std::string warnings;
    std::optional<CheckpointInfo> checkpoint =
        self.probe.newestCheckpoint(files.checkpoints, warnings);
    if (!warnings.empty()) {
      say(StringRef(warnings).rtrim().str());
      report.warnings.push_back(StringRef(warnings).rtrim().str());
    }
    const int64_t startStep = checkpoint ? checkpoint->step : 0;
    step = startStep;
    // Counted at the failure's first resume only: an attempt that made no
    // step (one stopped for a resize during the back-off) left the failure
    // open, and its steps were counted again.
    if (openFailure && !openFailureResumed) {
      openFailureResumed = true;
      FailureRecord &failure = report.failures[*openFailure];
      failure.resumedFromStep = startStep;
      failure.stepsRedone = std::max<int64_t>(0, failure.step - startStep);
      // Work since the checkpoint is lost too.
      if (checkpoint && failure.step > startStep)
        failure.secondsLost +=
            std::max(0.0, failure.detectedAt - checkpoint->writtenAt);
      report.stepsRedone += failure.stepsRedone;
    }
    if (checkpoint && checkpoint->samples >= job.samples) {
      report.outcome = "succeeded";
      break;
    }

    // A batch change ramps the learning rate from where it was.
    const double newScale =
        learningRateScale(job.learningRateRule, shape.batch, job.initial.batch);
    if (newScale != schedule.scale) {
      LearningRateSchedule next;
      next.scale = newScale;
      next.warmupFrom = schedule.at(startStep);
      next.warmupStart = startStep;
      next.warmupEnd = job.warmupSteps > 0 ? startStep + job.warmupSteps : 0;
      if (job.warmupSteps == 0)
        next.warmupFrom = newScale;
      schedule = next;
    }

    // Numbered only now that it starts: state.json says `attempt` while
    // the supervisor waits for capacity, and the next supervisor numbers
    // on from it.
    ++attempt;
    // A new attempt starts with no heartbeats and no stop request.
    sys::fs::remove_directories(files.heartbeats);
    sys::fs::create_directories(files.heartbeats);
    sys::fs::remove(files.stopFile);

    LaunchRequest request;
    request.attempt = attempt;
    request.shape = shape;
    request.command = command(shape);
    request.heartbeatDirectory = files.heartbeats;
    request.environment = {{"HETERPS_HEARTBEAT_DIR", files.heartbeats},
                           {"HETERPS_STOP_FILE", files.stopFile}};
    if (std::vector<std::string> faults = faultsFor(shape); !faults.empty())
      request.environment.push_back({"HETERPS_FAULT", join(faults, ";")});
    request.excludedHosts = excluded;
    request.logPath = files.attemptLog(attempt);
    follower.reset(request.logPath);

    AttemptRecord record;
    record.index = attempt;
    record.shape = shape;
    record.startStep = startStep;
    record.startedAt = unixSeconds();
    record.excludedHosts = excluded;
    say("attempt " + std::to_string(attempt) + ": " + shape.describe() +
        " on " + backendName(self.backend.kind()) +
        (checkpoint ? ", resuming from " + checkpoint->path + " (step " +
                          std::to_string(checkpoint->step) + ", " +
                          std::to_string(checkpoint->samples) + " samples)"
                    : std::string(", from the start")) +
        (schedule.scale != 1 || schedule.warmupEnd > schedule.warmupStart
             ? ", learning-rate scale " + fixed(schedule.scale, 3)
             : std::string()));
    if (Error error = self.backend.start(request)) {
      report.outcome = "failed";
      report.message = toString(std::move(error));
      say(report.message);
      break;
    }
    record.engineId = self.backend.attemptId();
    engineId = record.engineId;
    phase = "running";
    writeState(true);

    // The stall clock runs once the engine runs the attempt: a batch job
    // waiting in the queue is not hung.
    double lastProgressAt = 0;
    int64_t lastStep = startStep;
    bool firstBeat = false, firstStep = false;
    bool stopping = false, hung = false;
    std::string stopReason;
    double stopAskedAt = 0, exitedAt = 0;
    std::optional<std::pair<ResizeRequest, JobShape>> resize;
    AttemptStatus status;
    Beats beats;
    while (true) {
      // While the ranks stop for a resize, look more often: their exit is
      // part of the resize's measured cost.
      // So do they when a resized job starts again.
      const bool resizing = stopping || (openResize && !firstStep);
      sleepFor(resizing ? std::min(0.02, self.options.pollSeconds)
                        : self.options.pollSeconds);
      if (std::string text = follower.next(); !text.empty()) {
        log() << text;
        log().flush();
      }
      status = self.backend.poll();
      beats = readBeats();
      const double now = unixSeconds();
      if (!firstBeat && !beats.ranks.empty()) {
        firstBeat = true;
        // The ranks' own clocks say when they beat: finer than a poll.
        double firstBeatAt = now;
        for (const RankHeartbeat &beat : beats.ranks)
          firstBeatAt = std::min(firstBeatAt, beat.time);
        if (openResize)
          report.resizes[*openResize].startSeconds =
              std::max(0.0, firstBeatAt - resizeSince);
      }
      if (beats.step > lastStep) {
        lastStep = beats.step;
        step = lastStep;
        lastProgressAt = now;
        if (!firstStep) {
          firstStep = true;
          if (openFailure) {
            report.failures[*openFailure].secondsLost += now - openSince;
            report.secondsLost += report.failures[*openFailure].secondsLost;
            openFailure.reset();
          }
          if (openResize) {
            ResizeRecord &resizeRecord = report.resizes[*openResize];
            double steppedAt = now;
            for (const RankHeartbeat &beat : beats.ranks)
              if (beat.role == "worker" && beat.step > startStep)
                steppedAt = std::min(steppedAt, beat.time);
            resizeRecord.firstStepSeconds = std::max(
                0.0, steppedAt - resizeSince - resizeRecord.startSeconds);
            resizeRecord.totalSeconds = resizeRecord.stopSeconds +
                                        resizeRecord.startSeconds +
                                        resizeRecord.firstStepSeconds;
            say("resize " + resizeRecord.id + " took " +
                fixed(resizeRecord.totalSeconds, 2) +
                " s (checkpoint and stop " +
                fixed(resizeRecord.stopSeconds, 2) + " s, start " +
                fixed(resizeRecord.startSeconds, 2) + " s, first step " +
                fixed(resizeRecord.firstStepSeconds, 2) + " s)");
            openResize.reset();
          }
        }
      }
      if (lastProgressAt == 0 &&
          (status.engineState.empty() || status.engineState == "RUNNING"))
        lastProgressAt = now;
      writeState();
      if (status.state != AttemptState::Running) {
        exitedAt = now;
        break;
      }
      if (!stopping) {
        if (self.stopRequested) {
          stopping = true;
          stopReason = "stop";
        } else if ((resize = takeResizeRequest(shape))) {
          stopping = true;
          stopReason = "resize";
          resizingTo.emplace(resize->first.id, resize->second);
          say("resize " + resize->first.id + ": " + shape.describe() + " -> " +
              resize->second.describe() +
              "; checkpointing at the next step boundary");
        }
        if (stopping) {
          stopAskedAt = now;
          phase = stopReason == "stop" ? "stopping" : "resizing";
          writeState(true);
          if (Error error = writeFileAtomically(files.stopFile, "stop\n"))
            say(toString(std::move(error)));
          // The stall clock restarts: a checkpoint is not a step.
          lastProgressAt = now;
        }
      }
      const double stalled = lastProgressAt > 0 ? now - lastProgressAt : 0;
      if (stalled > job.restart.heartbeatTimeoutSeconds) {
        FailureRecord failure = hang(beats, stalled);
        self.backend.terminate();
        status = self.backend.poll();
        status.state = AttemptState::Failed;
        exitedAt = unixSeconds();
        hung = true;
        recordFailure(std::move(failure));
        break;
      }
    }
    if (std::string text = follower.next(); !text.empty())
      log() << text;
    // Every way out of an attempt counts its steps: a job whose attempts
    // so far all ended in resizes counted as never having trained, and a
    // passing failure at its next start ended it.
    trainedInThisRun = trainedInThisRun || firstStep;
    // A stop file nobody here asked for: the engine's notice of a time limit
    // or preemption (the Slurm batch script's trap) made the ranks
    // checkpoint and stop.
    const bool preempted = !stopping && sys::fs::exists(files.stopFile);
    sys::fs::remove(files.stopFile);
    forgetFiredFaults();
    record.endedAt = exitedAt;
    record.endStep = std::max(lastStep, beats.step);
    record.exitCode = status.exitCode;

    if (status.state == AttemptState::Succeeded) {
      std::string ignored;
      std::optional<CheckpointInfo> last =
          self.probe.newestCheckpoint(files.checkpoints, ignored);
      if (last && last->samples >= job.samples) {
        record.end = "done";
        report.attempts.push_back(record);
        report.outcome = "succeeded";
        resizingTo.reset();
        break;
      }
      if (stopping && stopReason == "stop") {
        record.end = "stop";
        report.attempts.push_back(record);
        report.outcome = "stopped";
        report.message = "stopped on request";
        break;
      }
      if (stopping && resize) {
        record.end = "resize";
        report.attempts.push_back(record);
        // `last` is verified already: once is enough for a large table.
        report.resizes.push_back(resizeRecordOf(
            *resize, shape, last ? last->step : 0, exitedAt - stopAskedAt));
        openResize = report.resizes.size() - 1;
        resizeSince = exitedAt;
        wanted = resize->second;
        resizingTo.reset();
        continue;
      }
      if (preempted) {
        // Not a failure: no restart is charged, and nothing is redone.
        record.end = "preempted";
        report.attempts.push_back(record);
        ++report.preemptions;
        say("attempt " + std::to_string(attempt) +
            " was preempted (or reached its time limit) and checkpointed at "
            "step " +
            std::to_string(last ? last->step : 0) + "; starting again");
        continue;
      }
      // Ended well without finishing (a rank stopped by a signal of its
      // own, and checkpointed): go on like after a failure.
      FailureRecord failure;
      failure.kind = "lost";
      failure.step = record.endStep;
      failure.detail = "the ranks exited before the job's " +
                       std::to_string(job.samples) + " samples";
      recordFailure(std::move(failure));
    } else if (!hung) {
      FailureRecord failure = blame(shape, status, beats);
      // No beat (the ranks could not write one) is no step: the attempt
      // began at its checkpoint's ("last step 0" after resuming at 1100).
      if (failure.step >= 0)
        failure.step = std::max(failure.step, startStep);
      recordFailure(std::move(failure));
    }
    record.end = "failure";
    report.attempts.push_back(record);
    // A resize this attempt was stopping for when it failed applies at the
    // restart. It was dropped: the job came back in its old shape and
    // `job resize` waited until the job ended.
    if (stopping && resize) {
      report.resizes.push_back(resizeRecordOf(
          *resize, shape, newestCheckpointStep(), exitedAt - stopAskedAt));
      openResize = report.resizes.size() - 1;
      resizeSince = exitedAt;
      wanted = resize->second;
      resizingTo.reset();
      say("resize " + resize->first.id + " applies at the restart");
    }
    // A job that fails before its first step with one of heterps's own
    // errors (a flag, the data, a directory) fails alike on every restart:
    // said now, with the error, instead of after every restart is spent.
    // Only before this supervisor's first step: a job that has trained
    // may meet a passing failure on the way up.
    std::string startError;
    // (mpirun names the rank that exited, or, racing the others' ends,
    // none: "lost".)
    // Later, a restart that fails before its first step with the error of
    // the one before (the data moved away meanwhile) fails alike too: it
    // spent the rest of the budget and ended saying only "gave up".
    std::string ownError;
    if (!report.failures.empty() && (report.failures.back().kind == "exit" ||
                                     report.failures.back().kind == "lost")) {
      const std::string log = readWholeFile(files.attemptLog(attempt));
      ownError = firstOwnError(log);
      if (ownError.empty())
        ownError = firstMpirunRefusal(log);
      // The report says why the attempt ended, not only that a rank did.
      if (!ownError.empty())
        report.failures.back().detail +=
            (report.failures.back().detail.empty() ? "" : "; ") + ownError;
    }
    // A rank that could not write its heartbeat (the same full disk) looks
    // as if it never stepped, so a passing error is never taken as final.
    const bool passing = mayPass(ownError);
    if (!firstStep && !trainedInThisRun && !self.stopRequested && !passing)
      startError = ownError;
    const bool failedAlike = !firstStep && !self.stopRequested && !passing &&
                             !ownError.empty() && ownError == lastStartError;
    lastStartError = firstStep || passing ? "" : ownError;
    if (!startError.empty() || failedAlike) {
      report.outcome = "failed";
      report.message =
          failedAlike
              ? "attempts " + std::to_string(attempt - 1) + " and " +
                    std::to_string(attempt) +
                    " failed before their first step with the same error: " +
                    ownError +
                    "; a restart would fail alike, so none was made (fix "
                    "the job and run it again: it resumes from its "
                    "checkpoint)"
              : "attempt " + std::to_string(attempt) +
                    " failed before its first step: " + startError +
                    "; a restart would fail alike, so none was made "
                    "(fix the job and run it again)";
      break;
    }
    if (self.stopRequested) {
      report.outcome = "stopped";
      report.message = "stopped on request after a failure";
      break;
    }
    if (report.restarts >= job.restart.maxRestarts) {
      report.outcome = "failed";
      report.message = "gave up after " + std::to_string(report.restarts) +
                       " restarts (restart: max_restarts " +
                       std::to_string(job.restart.maxRestarts) + ")";
      if (!report.failures.empty() && !report.failures.back().detail.empty())
        report.message +=
            "; the last attempt: " + report.failures.back().detail;
      break;
    }
    ++report.restarts;
    if (corruptPending) {
      corruptPending = false;
      Expected<std::string> damaged =
          self.probe.corruptNewestCheckpoint(files.checkpoints);
      if (damaged)
        say("fault injection: corrupted " + *damaged);
      else
        say("fault injection: " + toString(damaged.takeError()));
    }
    const double delay = backoffSeconds(job.restart, report.restarts);
    phase = "restarting";
    writeState(true);
    say("restart " + std::to_string(report.restarts) + " of " +
        std::to_string(job.restart.maxRestarts) + " in " + fixed(delay, 1) +
        " s");
    const double until = unixSeconds() + delay;
    while (unixSeconds() < until && !self.stopRequested)
      sleepFor(std::min(0.1, delay));
    // A stop asked for during the back-off: no attempt only to stop it.
    if (self.stopRequested) {
      report.outcome = "stopped";
      report.message = "stopped on request while restarting";
      break;
    }
  }

  std::string ignored;
  if (std::optional<CheckpointInfo> last =
          self.probe.newestCheckpoint(files.checkpoints, ignored)) {
    report.steps = last->step;
    report.samples = last->samples;
    report.dataPosition = last->position;
    report.lastCheckpoint = last->path;
  }
  if (openFailure) // never resumed: its time counts up to now
    report.secondsLost += unixSeconds() - openSince;
  report.seconds = unixSeconds() - jobStart;
  phase = report.outcome;
  step = report.steps;
  writeState(true);
  std::string reportWhere = "; report " + files.report;
  if (Error error = writeFileAtomically(files.report, reportJson(report))) {
    say(toString(std::move(error)));
    reportWhere = "; no report (it could not be written)";
  }
  say(report.outcome + ": " + std::to_string(report.samples) + " of " +
      std::to_string(job.samples) + " samples, " +
      std::to_string(report.attempts.size()) + " attempts, " +
      std::to_string(report.restarts) + " restarts, " +
      std::to_string(report.stepsRedone) + " steps redone, " +
      fixed(report.secondsLost, 1) + " s lost" +
      (report.message.empty() ? std::string() : "; " + report.message) +
      reportWhere);
  return report;
}

} // namespace heterps::jobs
