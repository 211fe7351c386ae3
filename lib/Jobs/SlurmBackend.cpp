//===- SlurmBackend.cpp - Attempts as one requeued Slurm batch job --------===//
//
// A supervised job is one Slurm batch job for its whole life. Its batch
// script runs JOBDIR/slurm-attempt.sh, which the supervisor rewrites before
// each attempt: the launch command of the attempt's shape, its environment
// and its log. The first attempt is submitted with sbatch; every later one
// (a restart after a failure, or a resize) goes through
// `scontrol requeuehold`, `scontrol update` (task count, excluded nodes) and
// `scontrol release`, so Slurm keeps one job id, its priority and its place
// in the queue. A job record Slurm has already forgotten is submitted anew.
//
// Inside the allocation `heterps launch` runs mpirun, which starts its
// daemons on the allocated nodes through Slurm. `--signal=B:TERM@lead`
// makes a time limit or a preemption reach the batch shell first, which
// asks the ranks to checkpoint and stop (the stop file).
//
//===----------------------------------------------------------------------===//

#include "heterps/Jobs/Backend.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

using namespace llvm;

namespace heterps::jobs {
namespace {

struct CommandResult {
  int exitCode = -1;
  std::string output; // stdout and stderr
};

/// Runs a Slurm client command, waiting at most `seconds`.
CommandResult runCommand(const std::vector<std::string> &argv,
                         unsigned seconds = 30) {
  CommandResult result;
  ErrorOr<std::string> program = sys::findProgramByName(argv.front());
  if (!program) {
    result.output = "'" + argv.front() +
                    "' is not on PATH (install slurm-client, or start the "
                    "local cluster with scripts/slurm/cluster.sh)";
    return result;
  }
  SmallString<128> outputPath;
  if (sys::fs::createTemporaryFile("heterps-slurm", "txt", outputPath)) {
    result.output = "cannot create a temporary file";
    return result;
  }
  std::vector<StringRef> args(argv.begin(), argv.end());
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(outputPath),
                                          StringRef(outputPath)};
  std::string message;
  result.exitCode = sys::ExecuteAndWait(*program, args, std::nullopt, redirects,
                                        seconds, 0, &message);
  std::ifstream in{std::string(outputPath)};
  std::ostringstream text;
  text << in.rdbuf();
  result.output = text.str();
  if (result.exitCode < 0)
    result.output += message.empty() ? "timed out" : message;
  sys::fs::remove(outputPath);
  return result;
}

std::string quote(const std::string &text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string joinWords(const std::vector<std::string> &words, char separator) {
  std::string text;
  for (const std::string &word : words)
    text += (text.empty() ? "" : std::string(1, separator)) + word;
  return text;
}

/// "Key=Value" fields of `scontrol show job -o`.
std::string field(const std::string &record, const std::string &key) {
  const std::string needle = key + "=";
  size_t at = 0;
  while ((at = record.find(needle, at)) != std::string::npos) {
    if (at == 0 || record[at - 1] == ' ') {
      size_t start = at + needle.size();
      size_t end = record.find(' ', start);
      return record.substr(start, end == std::string::npos ? std::string::npos
                                                           : end - start);
    }
    at += needle.size();
  }
  return "";
}

/// The batch script of the job in `jobDirectory`: what Slurm runs, and how
/// its job is found again without its id.
std::string batchScriptOf(const std::string &jobDirectory) {
  return jobDirectory + "/slurm-job.sh";
}

bool isFinal(StringRef state) {
  return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" ||
         state == "TIMEOUT" || state == "NODE_FAIL" || state == "PREEMPTED" ||
         state == "OUT_OF_MEMORY" || state == "BOOT_FAIL" ||
         state == "DEADLINE";
}

class SlurmBackend : public Backend {
public:
  SlurmBackend(BackendSpec spec, std::string jobName, std::string jobDirectory)
      : spec(std::move(spec)), jobName(std::move(jobName)),
        jobDirectory(std::move(jobDirectory)) {}
  ~SlurmBackend() override { SlurmBackend::terminate(); }

  BackendKind kind() const override { return BackendKind::Slurm; }

  Error start(const LaunchRequest &request) override {
    const int tasks = request.shape.workers + request.shape.shards;
    if (Error error = writeAttemptScript(request))
      return error;
    const std::string excluded = joinWords(request.excludedHosts, ',');
    if (!jobId.empty() && requeue(tasks, excluded)) {
      restartsAtStart = restarts();
      running = true;
      return Error::success();
    }
    std::vector<std::string> argv{
        "sbatch",
        "--parsable",
        "--job-name=heterps-" + jobName,
        "--ntasks=" + std::to_string(tasks),
        "--oversubscribe",
        "--requeue",
        "--output=" + jobDirectory + "/slurm-%j.out",
        "--signal=B:TERM@" + std::to_string(int(spec.signalLeadSeconds))};
    if (!spec.partition.empty())
      argv.push_back("--partition=" + spec.partition);
    if (spec.nodes > 0)
      argv.push_back("--nodes=" + std::to_string(spec.nodes));
    if (!excluded.empty())
      argv.push_back("--exclude=" + excluded);
    argv.insert(argv.end(), spec.sbatchArgs.begin(), spec.sbatchArgs.end());
    argv.push_back(batchScript());
    CommandResult result = runCommand(argv);
    StringRef id = StringRef(result.output).trim().split(';').first;
    unsigned number = 0;
    if (result.exitCode != 0 || id.getAsInteger(10, number))
      return createStringError(inconvertibleErrorCode(),
                               "sbatch failed (exit %d): %s", result.exitCode,
                               StringRef(result.output).trim().str().c_str());
    jobId = id.str();
    restartsAtStart = 0;
    running = true;
    return Error::success();
  }

  AttemptStatus poll() override {
    AttemptStatus status;
    if (!running)
      return finished;
    CommandResult result =
        runCommand({"scontrol", "show", "job", "-o", jobId}, 15);
    if (result.exitCode != 0) {
      // The controller forgot the job (MinJobAge) or cannot be asked now;
      // a missing record after it ran means it ended.
      if (StringRef(result.output).contains("Invalid job id")) {
        status.state = AttemptState::Failed;
        status.engineState = "the job record is gone";
        return end(status);
      }
      return status;
    }
    const std::string state = field(result.output, "JobState");
    status.engineState = state;
    int restartCount = 0;
    StringRef(field(result.output, "Restarts")).getAsInteger(10, restartCount);
    if (restartCount > restartsAtStart && !isFinal(state)) {
      // Slurm requeued the job itself (a node failed): this attempt is over.
      status.state = AttemptState::Failed;
      status.engineState =
          "requeued by Slurm (" + field(result.output, "Reason") + ")";
      holdRequeued();
      return end(status);
    }
    if (!isFinal(state))
      return status;
    // ExitCode=code:signal of the batch script.
    StringRef code =
        StringRef(field(result.output, "ExitCode")).split(':').first;
    int exitCode = -1;
    code.getAsInteger(10, exitCode);
    status.exitCode = exitCode;
    status.state = state == "COMPLETED" && exitCode == 0
                       ? AttemptState::Succeeded
                       : AttemptState::Failed;
    if (status.state == AttemptState::Succeeded)
      status.engineState.clear();
    return end(status);
  }

  void terminate() override {
    if (!running || jobId.empty())
      return;
    // The cancel waits for the job's end; one poll records how it ended.
    cancelSlurmJob(jobId, /*waitSeconds=*/20);
    poll();
    running = false;
  }

  std::optional<int>
  capacity(const std::vector<std::string> &excluded) override {
    std::vector<std::string> argv{"sinfo", "-h", "-N", "-o", "%N %T %c"};
    if (!spec.partition.empty())
      argv.push_back("--partition=" + spec.partition);
    CommandResult result = runCommand(argv, 15);
    if (result.exitCode != 0)
      return 0;
    int cpus = 0;
    std::istringstream lines(result.output);
    std::string node, state;
    int count = 0;
    while (lines >> node >> state >> count) {
      StringRef base = StringRef(state).rtrim("*~#!%$@^-");
      bool usable = base == "idle" || base == "mixed" || base == "allocated" ||
                    base == "completing";
      if (usable &&
          std::find(excluded.begin(), excluded.end(), node) == excluded.end())
        cpus += count;
    }
    return cpus;
  }

  std::string attemptId() const override { return "slurm job " + jobId; }

  /// Whether the controller answers.
  Error reachable() {
    CommandResult result = runCommand({"scontrol", "ping"}, 20);
    if (result.exitCode == 0 && StringRef(result.output).contains("UP"))
      return Error::success();
    return createStringError(
        inconvertibleErrorCode(),
        "cannot reach the Slurm controller: `scontrol ping` %s: %s",
        result.exitCode < 0
            ? "did not answer"
            : ("exited " + std::to_string(result.exitCode)).c_str(),
        StringRef(result.output).trim().str().c_str());
  }

private:
  std::string batchScript() const { return batchScriptOf(jobDirectory); }
  std::string attemptScript() const {
    return jobDirectory + "/slurm-attempt.sh";
  }

  Error writeAttemptScript(const LaunchRequest &request) {
    std::ofstream attempt(attemptScript() + ".tmp");
    attempt << "# Attempt " << request.attempt << ": "
            << request.shape.describe() << " (written by heterps job run)\n"
            << "exec >>" << quote(request.logPath) << " 2>&1\n";
    for (const auto &[name, value] : request.environment)
      attempt << "export " << name << "=" << quote(value) << "\n";
    for (const auto &[name, value] : request.environment)
      if (name == "HETERPS_STOP_FILE")
        // A time limit or preemption: checkpoint and stop at the next step.
        attempt << "trap 'touch " << quote(value) << "' TERM\n";
    std::vector<std::string> argv = request.command;
    // mpirun's own flags, as the launch takes them.
    std::vector<std::string> extra;
    for (const std::string &arg : spec.mpirunArgs)
      extra.push_back("--mpirun-arg=" + arg);
    argv.insert(argv.begin() + std::min<size_t>(3, argv.size()), extra.begin(),
                extra.end());
    std::string line;
    for (const std::string &word : argv)
      line += (line.empty() ? "" : " ") + quote(word);
    // In the background, so the trap runs while the launch goes on.
    // `wait` returns early when the trap runs; the launch goes on then.
    attempt << line << " &\nchild=$!\n"
            << "while true; do\n"
            << "  wait \"$child\"\n"
            << "  status=$?\n"
            << "  kill -0 \"$child\" 2>/dev/null || exit \"$status\"\n"
            << "done\n";
    attempt.close();
    std::ofstream batch(batchScript());
    batch << "#!/bin/bash\n"
          << "# The batch script of a supervised HeterPS job: it runs the "
             "supervisor's current attempt.\n"
          << "exec bash " << quote(attemptScript()) << "\n";
    batch.close();
    if (!attempt || !batch)
      return createStringError(inconvertibleErrorCode(),
                               "cannot write the Slurm scripts in '%s'",
                               jobDirectory.c_str());
    if (std::error_code error =
            sys::fs::rename(attemptScript() + ".tmp", attemptScript()))
      return createStringError(error, "cannot write '%s'",
                               attemptScript().c_str());
    return Error::success();
  }

  /// The next attempt of the same Slurm job: hold it in the queue, give it
  /// the new shape, let it go. False when Slurm no longer knows the job.
  bool requeue(int tasks, const std::string &excluded) {
    CommandResult hold = runCommand({"scontrol", "requeuehold", jobId});
    if (hold.exitCode != 0 &&
        !StringRef(hold.output).contains("already pending") &&
        !StringRef(hold.output).contains("Job is pending"))
      return false;
    // A requeued job is eligible only BatchStartTimeout (10 s) later.
    // Two seconds are enough: slurmd rejects a credential issued in the
    // same second as the previous run's revocation ("Job credential
    // revoked", seen with StartTime=now); 3.5 s instead of 11 here.
    std::vector<std::string> update{"scontrol",
                                    "update",
                                    "JobId=" + jobId,
                                    "NumTasks=" + std::to_string(tasks),
                                    "ExcNodeList=" + excluded,
                                    "StartTime=now+2"};
    if (runCommand(update).exitCode != 0)
      return false;
    return runCommand({"scontrol", "release", jobId}).exitCode == 0;
  }

  /// After Slurm's own requeue, keep the job from starting the old attempt
  /// before the supervisor has written the next one.
  void holdRequeued() { runCommand({"scontrol", "hold", jobId}); }

  int restarts() {
    CommandResult result =
        runCommand({"scontrol", "show", "job", "-o", jobId}, 15);
    int count = 0;
    StringRef(field(result.output, "Restarts")).getAsInteger(10, count);
    return count;
  }

  AttemptStatus end(AttemptStatus status) {
    running = false;
    finished = status;
    return status;
  }

  BackendSpec spec;
  std::string jobName, jobDirectory;
  std::string jobId;
  int restartsAtStart = 0;
  bool running = false;
  AttemptStatus finished;
};

} // namespace

bool cancelSlurmJob(const std::string &jobId, double waitSeconds) {
  // SIGKILL to the batch shell and every step at once, as on mpirun: a
  // rank warned by SIGTERM could checkpoint a step counted as lost.
  runCommand({"scancel", "--signal=KILL", "--full", jobId});
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(waitSeconds);
  while (true) {
    CommandResult result =
        runCommand({"scontrol", "show", "job", "-o", jobId}, 15);
    // A forgotten record (MinJobAge) ended too.
    if ((result.exitCode != 0 &&
         StringRef(result.output).contains("Invalid job id")) ||
        (result.exitCode == 0 && isFinal(field(result.output, "JobState"))))
      return true;
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::vector<std::string> slurmJobsOfDirectory(const std::string &jobDirectory) {
  if (!sys::findProgramByName("squeue"))
    return {};
  // %o: the batch script's path, as sbatch was given it.
  CommandResult result = runCommand({"squeue", "-h", "-o", "%i %o"}, 15);
  std::vector<std::string> ids;
  if (result.exitCode != 0)
    return ids;
  const std::string script = batchScriptOf(jobDirectory);
  SmallVector<StringRef> lines;
  StringRef(result.output).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    auto [id, command] = line.trim().split(' ');
    if (command.trim() == script && !id.empty())
      ids.push_back(id.str());
  }
  return ids;
}

Expected<std::unique_ptr<Backend>>
makeSlurmBackend(const BackendSpec &spec, const std::string &jobName,
                 const std::string &jobDirectory) {
  auto backend = std::make_unique<SlurmBackend>(spec, jobName, jobDirectory);
  if (Error error = backend->reachable())
    return std::move(error);
  return std::unique_ptr<Backend>(std::move(backend));
}

} // namespace heterps::jobs
