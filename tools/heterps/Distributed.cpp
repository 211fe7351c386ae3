//===- Distributed.cpp - heterps launch, ps-shard, run --mpi-worker -------===//
//
// Compiled with exceptions, like Train.cpp: the runtime reports errors as
// heterps::rt::Error. A rank of a running MPI job that fails ends the whole
// job (MPI_Abort), so no other rank waits forever on it.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"
#include "Commands.h"

#include "heterps/Cluster/JsonLimits.h"
#include "heterps/Jobs/Backend.h"
#include "heterps/Jobs/Process.h"
#include "heterps/Jobs/Supervisor.h"
#include "heterps/Runtime/Bundle.h"
#include "heterps/Runtime/FaultInjection.h"
#include "heterps/Runtime/Types.h"
#include "heterps/Runtime/WorkerGroup.h"
#ifdef HETERPS_HAVE_MPI
#include "heterps/Runtime/MpiTraining.h"
#endif

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <streambuf>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace heterps::driver {
namespace {

namespace fs = std::filesystem;
using rt::Error;

const char *const kNoMpi =
    "this heterps was built without MPI (install libopenmpi-dev and "
    "rebuild; see docs/Distributed.md)";
#ifdef HETERPS_HAVE_MPI
constexpr bool kHaveMpi = true;
#else
constexpr bool kHaveMpi = false;
#endif

/// `text` as one shell word (also what `srun --multi-prog` reads).
std::string shellQuote(const std::string &text) {
  const bool plain =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::strchr("_@%+=:,./-", c) != nullptr;
      });
  if (plain)
    return text;
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string joinQuoted(const std::vector<std::string> &words) {
  std::string line;
  for (const std::string &word : words)
    line += (line.empty() ? "" : " ") + shellQuote(word);
  return line;
}

/// The heterps binary running now, so every rank runs the same build.
std::string selfExecutable() {
  static int anchor;
  std::string path = llvm::sys::fs::getMainExecutable("heterps", &anchor);
  if (path.empty())
    throw Error("cannot find the path of the heterps executable");
  return path;
}

/// What the bundle's placement plan says the job should look like.
struct PlanShape {
  bool hasPlan = false;
  int replicas = 1; // the largest replica count of a stage
  /// The replicas of the bundle's stages (forward and backward) in all: the
  /// stage ranks of `launch --stage-ranks`.
  int stageReplicas = 0;
};

PlanShape readPlan(const std::string &bundle) {
  const std::string manifest = (fs::path(bundle) / "manifest.json").string();
  auto buffer = llvm::MemoryBuffer::getFile(manifest);
  if (!buffer)
    throw Error("cannot read '" + manifest +
                "': " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      heterps::cluster::parseJson((*buffer)->getBuffer());
  if (!json)
    throw Error("'" + manifest +
                "' is not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    throw Error("'" + manifest + "' is not a JSON object");
  if (!root->get("training"))
    throw Error("bundle '" + bundle +
                "' is not a training bundle (its manifest.json has no "
                "\"training\" section); compile the model with --train");
  PlanShape shape;
  if (const llvm::json::Array *stages = root->getArray("stages"))
    for (const llvm::json::Value &stage : *stages)
      if (const llvm::json::Object *object = stage.getAsObject())
        shape.stageReplicas += int(object->getInteger("replicas").value_or(1));
  const llvm::json::Object *plan = root->getObject("plan");
  if (!plan)
    return shape;
  shape.hasPlan = true;
  if (const llvm::json::Array *stages = plan->getArray("stages"))
    for (const llvm::json::Value &stage : *stages)
      if (const llvm::json::Object *object = stage.getAsObject())
        if (std::optional<int64_t> replicas = object->getInteger("replicas"))
          shape.replicas = std::max<int>(shape.replicas, int(*replicas));
  return shape;
}

/// The flag name of a `--name`, `-name` or `--name=value` word, else "".
std::string flagName(const std::string &word) {
  // LLVM's parser takes a long option after one dash too.
  size_t dashes = word.compare(0, 2, "--") == 0  ? 2
                  : word.compare(0, 1, "-") == 0 ? 1
                                                 : 0;
  if (!dashes || word.size() == dashes)
    return "";
  return word.substr(dashes, word.find('=') - dashes);
}

} // namespace

std::string ConsistencyOptions::describe() const {
  if (!asynchronous)
    return "synchronous";
  return staleness < 0 ? "asynchronous, no staleness bound"
                       : "asynchronous, staleness " + std::to_string(staleness);
}

std::vector<std::string> ConsistencyOptions::flags() const {
  if (!asynchronous)
    return {};
  return {"--consistency=async", "--staleness=" + std::to_string(staleness)};
}

std::optional<ConsistencyOptions> parseConsistency(const std::string &mode,
                                                   int64_t staleness,
                                                   bool stalenessGiven,
                                                   std::string &error) {
  ConsistencyOptions options;
  if (mode == "async")
    options.asynchronous = true;
  else if (mode != "sync")
    error = "--consistency '" + mode + "' is neither sync nor async";
  else if (stalenessGiven)
    error = "--staleness bounds asynchronous training; add "
            "--consistency=async";
  if (staleness < -1)
    error = "--staleness " + std::to_string(staleness) +
            " is below -1 (-1: no bound)";
  if (!error.empty())
    return std::nullopt;
  options.staleness = staleness;
  return options;
}

namespace {
/// The mpirun a launch waits for, for the signal handler.
std::atomic<pid_t> launchedMpirun{0};
/// The signal the launch forwarded (0: none): the job then stopped on
/// request, not by a failure.
volatile std::sig_atomic_t forwardedSignal = 0;
extern "C" void forwardToMpirun(int signal) {
  forwardedSignal = signal;
  if (pid_t pid = launchedMpirun.load())
    ::kill(pid, signal);
}

/// The environment entry that marks a launch's local ranks (mpirun passes
/// its environment on): after mpirun, the launch waits for them by it.
constexpr const char *kLaunchMarker = "HETERPS_LAUNCH_ID";

/// Starts mpirun (`command`, its path first) as a child of its own process
/// group, so that a Ctrl-C at the terminal reaches the launch alone, which
/// passes it on once (mpirun takes a second SIGINT as "abort now" and left
/// ranks training after it ended); with stdin from /dev/null, since a
/// background group that read the terminal would stop; and ended by
/// SIGTERM should the launch die (killed with -9, its mpirun and ranks
/// trained on, holding the checkpoint directory against a relaunch).
/// Returns its pid; throws Error naming mpirun.
pid_t startMpirun(const std::vector<std::string> &command,
                  const std::string &marker) {
  jobs::SpawnOptions options;
  options.environment.push_back({kLaunchMarker, marker});
  llvm::Expected<pid_t> child = jobs::spawnTiedProcessGroup(command, options);
  if (!child)
    throw Error(llvm::toString(child.takeError()));
  return *child;
}

/// Waits for `pid`: its exit code, or throws Error naming `program` where
/// a signal ended it.
int waitForMpirun(pid_t pid, const std::string &program) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw Error("waiting for '" + program + "': " + std::strerror(errno));
  if (WIFSIGNALED(status))
    throw Error("'" + program + "' was ended by signal " +
                std::to_string(WTERMSIG(status)));
  const int code = WEXITSTATUS(status);
  if (code == 127)
    throw Error("cannot run '" + program + "'");
  return code;
}
} // namespace

int launch(const LaunchOptions &options) {
  try {
    const std::string bundle =
        fs::absolute(options.bundle).lexically_normal().string();
    PlanShape plan = readPlan(bundle);
    // One data-parallel worker per replica the plan asked of its widest
    // stage (each worker runs the whole pipeline), and one shard per two
    // workers: a shard then serves about as many requests as a worker
    // makes, and sparse rows spread over several machines' memory.
    // With stage ranks, one worker and a rank per stage replica instead.
    if (options.stageRanks && options.workers > 1)
      throw Error("--stage-ranks runs one worker (the stages' replicas are "
                  "the data parallelism); leave out --workers " +
                  std::to_string(options.workers));
    const int workers = options.stageRanks    ? 1
                        : options.workers > 0 ? options.workers
                                              : plan.replicas;
    const int stageRanks = options.stageRanks ? plan.stageReplicas : 0;
    if (options.stageRanks && stageRanks == 0)
      throw Error("bundle '" + bundle + "' lists no stages to run as ranks");
    const int shards =
        options.shards > 0 ? options.shards : std::max(1, (workers + 1) / 2);
    if (options.workers < 0 || options.shards < 0)
      throw Error("--workers and --ps-shards must be at least 1");

    bool hasTrain = false;
    for (const std::string &word : options.runFlags) {
      const std::string name = flagName(word);
      if (name == "mpi-worker")
        throw Error("'" + word +
                    "' after -- is added by launch to every worker; leave "
                    "it out");
      if (name == "ps-shards")
        throw Error("'" + word +
                    "' after -- would shard each worker's in-process server; "
                    "give the shard ranks as `launch --ps-shards S` before --");
      if (name == "pass-steps" || name == "pass-memory" ||
          name == "pass-cache-device" || name == "pass-cache-gpus" ||
          name == "sparse-staleness" || name == "ps-memory-rows" ||
          name == "ps-storage-dir")
        throw Error("'" + word +
                    "' after -- is for a single process (`heterps run "
                    "--train`): an MPI job's tables live on its shard ranks");
      if (name == "consistency" || name == "staleness")
        throw Error("'" + word +
                    "' after -- would reach the workers only; give it to "
                    "launch before --, which passes it to every rank");
      if (name == "help" || name == "h" || name == "help-hidden")
        throw Error("'" + word +
                    "' after -- would print the workers' help instead of "
                    "training; see `heterps run --help`");
      hasTrain = hasTrain || name == "train";
    }

    const std::string self = selfExecutable();
    const std::vector<std::string> consistency = options.consistency.flags();
    std::vector<std::string> shardCommand{self, "ps-shard", bundle};
    shardCommand.insert(shardCommand.end(), consistency.begin(),
                        consistency.end());
    std::vector<std::string> workerCommand{self, "run", bundle};
    if (!hasTrain)
      workerCommand.push_back("--train");
    workerCommand.insert(workerCommand.end(), options.runFlags.begin(),
                         options.runFlags.end());
    workerCommand.push_back("--mpi-worker");
    workerCommand.insert(workerCommand.end(), consistency.begin(),
                         consistency.end());
    if (options.checkWorkerCommand &&
        !options.checkWorkerCommand(workerCommand, workers))
      return 1;
    std::vector<std::string> stageCommand{self, "stage-rank", bundle};
    stageCommand.insert(stageCommand.end(), consistency.begin(),
                        consistency.end());
    const std::string shape =
        std::to_string(shards) + " parameter-server shards, " +
        std::to_string(workers) + " workers" +
        (stageRanks ? ", " + std::to_string(stageRanks) + " stage ranks"
                    : std::string()) +
        ", " + options.consistency.describe();

    if (!options.slurmMultiProg.empty()) {
      // srun numbers the tasks 0..N-1 and starts the line whose range
      // holds a task's number: shards first, as with mpirun.
      // Written whole, then renamed into place: opened directly, a FIFO
      // there blocked the launch forever and a directory gave no reason.
      std::ostringstream file;
      auto range = [](int first, int count) {
        return count == 1 ? std::to_string(first)
                          : std::to_string(first) + "-" +
                                std::to_string(first + count - 1);
      };
      file << "# heterps launch: " << shape << "\n"
           << range(0, shards) << " " << joinQuoted(shardCommand) << "\n"
           << range(shards, workers) << " " << joinQuoted(workerCommand)
           << "\n";
      if (stageRanks)
        file << range(shards + workers, stageRanks) << " "
             << joinQuoted(stageCommand) << "\n";
      if (llvm::Error error =
              jobs::writeFileAtomically(options.slurmMultiProg, file.str()))
        throw Error("--slurm-multi-prog: " + llvm::toString(std::move(error)));
      std::cout << "srun --ntasks=" << shards + workers + stageRanks
                << " --multi-prog " << shellQuote(options.slurmMultiProg)
                << "\n";
      return 0;
    }

    std::string mpirun = options.mpirun.empty() ? "mpirun" : options.mpirun;
    std::vector<std::string> command{mpirun};
    if (!options.hostfile.empty()) {
      // Read as the job supervisor reads it, so a missing or malformed
      // hostfile, or one with too few slots, is named here rather than in
      // mpirun's page of ORTE text.
      llvm::Expected<std::vector<jobs::HostSlots>> hosts =
          jobs::readHostfile(options.hostfile);
      if (!hosts)
        throw Error(llvm::toString(hosts.takeError()));
      // A line without slots= gets what mpirun finds there (its cores).
      int64_t slots = 0;
      bool counted = true;
      for (const jobs::HostSlots &host : *hosts) {
        slots += host.slots;
        counted = counted && host.line.find("slots=") != std::string::npos;
      }
      const int64_t ranks = int64_t(shards) + workers + stageRanks;
      const bool oversubscribe = std::any_of(
          options.mpirunArgs.begin(), options.mpirunArgs.end(),
          [](const std::string &arg) {
            return arg == "--oversubscribe" || arg == "-oversubscribe";
          });
      if (counted && slots < ranks && !oversubscribe)
        throw Error("--hostfile '" + options.hostfile + "' gives " +
                    std::to_string(slots) + " slots and the job has " +
                    std::to_string(ranks) + " ranks (" + shape +
                    "); add slots, lower --workers or --ps-shards, or pass "
                    "--mpirun-arg=--oversubscribe");
      command.push_back("--hostfile");
      command.push_back(options.hostfile);
    }
    command.insert(command.end(), options.mpirunArgs.begin(),
                   options.mpirunArgs.end());
    command.push_back("-np");
    command.push_back(std::to_string(shards));
    command.insert(command.end(), shardCommand.begin(), shardCommand.end());
    command.push_back(":");
    command.push_back("-np");
    command.push_back(std::to_string(workers));
    command.insert(command.end(), workerCommand.begin(), workerCommand.end());
    if (stageRanks) {
      command.push_back(":");
      command.push_back("-np");
      command.push_back(std::to_string(stageRanks));
      command.insert(command.end(), stageCommand.begin(), stageCommand.end());
    }

    if (options.dryRun) {
      std::cout << joinQuoted(command) << "\n";
      return 0;
    }
    // The ranks would all fail the same way: say it once, here.
    if (!kHaveMpi)
      throw Error(kNoMpi);
#ifdef HETERPS_HAVE_MPI
    rt::mpi::checkWaitEnvironment();
#endif
    rt::train::checkLivenessEnvironment();
    if (const char *faults = std::getenv("HETERPS_FAULT"); faults && *faults)
      rt::train::checkFaultsFitRanks(rt::train::parseFaultSpecs(faults),
                                     {workers, shards, stageRanks},
                                     "environment variable HETERPS_FAULT: ");
    if (mpirun.find('/') == std::string::npos) {
      llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(mpirun);
      if (!found)
        throw Error("cannot find '" + mpirun +
                    "' on PATH; install Open MPI (Debian: openmpi-bin) or "
                    "give --mpirun PATH");
      mpirun = *found;
    } else if (!fs::exists(mpirun)) {
      throw Error("--mpirun '" + mpirun + "' does not exist");
    }
    std::cerr << "heterps launch: " << shape
              << (plan.hasPlan ? "" : " (no plan)") << "\n";
    std::cerr.flush();
    command.front() = mpirun;
    const std::string marker =
        std::to_string(::getpid()) + "-" +
        std::to_string(
            std::chrono::steady_clock::now().time_since_epoch().count());
    // SIGTERM or SIGINT to the launch go to mpirun, which ends the ranks:
    // else they would train on, orphaned, beside a relaunch. Installed
    // first: a signal between the start and the installation would end
    // the launch alone.
    std::signal(SIGTERM, forwardToMpirun);
    std::signal(SIGINT, forwardToMpirun);
    const pid_t child = startMpirun(command, marker);
    launchedMpirun = child;
    if (forwardedSignal)
      ::kill(child, int(forwardedSignal));
    const int code = waitForMpirun(child, mpirun);
    launchedMpirun = 0;
    // mpirun may end before its local ranks do (about a second after a
    // Ctrl-C): the launch returns once they are gone, so that a relaunch
    // finds the checkpoint directory free.
    if (!jobs::waitForProcessesWithEnvironment(kLaunchMarker, marker, 10))
      jobs::killProcessesWithEnvironment(kLaunchMarker, marker);
    if (forwardedSignal) {
      // A stop asked for (an operator, a scheduler): said as one, with the
      // shell's code for the signal, so that it reads apart from a crash.
      std::cerr << "heterps launch: stopped by signal " << int(forwardedSignal)
                << "; the ranks were ended (their last --checkpoint-dir "
                   "checkpoint stands)\n";
      return 128 + int(forwardedSignal);
    }
    if (code != 0)
      reportError("launch", jobs::kLaunchedJobFailed + " (exit code " +
                                std::to_string(code) + ")");
    return code;
  } catch (const std::exception &error) {
    reportError("launch", error.what());
    return 1;
  }
}

DistributedWorker::~DistributedWorker() = default;

std::ostream &nullLog() {
  // A stream without a buffer drops what it is given.
  static std::ostream stream(nullptr);
  return stream;
}

#ifdef HETERPS_HAVE_MPI

namespace {
rt::mpi::Consistency toMpi(const ConsistencyOptions &options) {
  rt::mpi::Consistency consistency;
  if (options.asynchronous)
    consistency.mode = rt::ps::ConsistencyMode::Asynchronous;
  consistency.staleness = options.staleness;
  return consistency;
}

class MpiWorker : public DistributedWorker {
public:
  explicit MpiWorker(const ConsistencyOptions &consistency)
      : job(nullptr, nullptr, rt::mpi::Role::Worker, toMpi(consistency)),
        workerGroup(job) {}
  /// Without finish() the job is broken (an error is on its way out):
  /// MPI_Finalize would wait for ranks that wait for this one, so the job
  /// is aborted instead.
  ~MpiWorker() override {
    if (!finished)
      abortDistributedJob(1);
  }
  rt::train::WorkerGroup &group() override { return workerGroup; }
  std::string machineShare() const override { return job.describeHostShare(); }
  void finish() override {
    workerGroup.finish();
    finished = true;
  }

private:
  rt::mpi::MpiJob job;
  rt::mpi::MpiWorkerGroup workerGroup;
  bool finished = false;
};
} // namespace

std::unique_ptr<DistributedWorker>
DistributedWorker::join(const ConsistencyOptions &consistency) {
  return std::make_unique<MpiWorker>(consistency);
}

void abortDistributedJob(int code) {
  if (rt::mpi::MpiJob::running())
    rt::mpi::MpiJob::abort(code);
}

/// Runs `serve` as a rank of `role` of an MPI job on a training bundle;
/// reports an error for `command` (naming the rank) and aborts the job.
template <typename Serve>
int serveAsRank(const char *command, const char *rankName,
                const std::string &bundlePath, rt::mpi::Role role,
                const ConsistencyOptions &consistency, Serve serve) {
  // Outside the try: an error must abort the job before MPI_Finalize (in
  // the job's destructor) could wait on ranks that wait on this one.
  std::unique_ptr<rt::mpi::MpiJob> job;
  try {
    // A bundle that cannot train fails every rank the same way, early.
    rt::Bundle bundle(bundlePath);
    if (!bundle.training())
      throw Error("bundle '" + bundlePath +
                  "' is not a training bundle; compile the model with "
                  "--train");
    job = std::make_unique<rt::mpi::MpiJob>(nullptr, nullptr, role,
                                            toMpi(consistency));
    serve(*job, bundle);
  } catch (const std::exception &error) {
    reportError(command, (job ? std::string(rankName) + " " +
                                    std::to_string(job->index()) + ": "
                              : std::string()) +
                             error.what());
    abortDistributedJob(1);
    return 1;
  }
  return 0;
}

int psShard(const PsShardOptions &options) {
  return serveAsRank("ps-shard", "shard", options.bundle, rt::mpi::Role::Shard,
                     options.consistency,
                     [&](rt::mpi::MpiJob &job, const rt::Bundle &) {
                       rt::mpi::ShardOptions shard;
                       shard.storageDirectory = options.storageDirectory;
                       rt::mpi::runParameterServerShard(job, shard);
                     });
}

int stageRank(const StageRankOptions &options) {
  return serveAsRank("stage-rank", "stage rank", options.bundle,
                     rt::mpi::Role::Stage, options.consistency,
                     [](rt::mpi::MpiJob &job, const rt::Bundle &bundle) {
                       rt::mpi::runStageRank(job, bundle);
                     });
}

#else // !HETERPS_HAVE_MPI

int stageRank(const StageRankOptions &) {
  reportError("stage-rank", kNoMpi);
  return 1;
}

std::unique_ptr<DistributedWorker>
DistributedWorker::join(const ConsistencyOptions &) {
  throw Error(kNoMpi);
}

void abortDistributedJob(int) {}

int psShard(const PsShardOptions &) {
  reportError("ps-shard", kNoMpi);
  return 1;
}

#endif // HETERPS_HAVE_MPI

} // namespace heterps::driver
