//===- ElasticServe.cpp - heterps elastic serve|submit|status|cancel ------===//
//
//   heterps elastic serve --state DIR [--backend local|slurm]
//                         [--capacity N | --cluster HOSTFILE]
//                         [--interval 60s] [--resize-cost 1s]
//   heterps elastic submit --state DIR JOB.yaml
//   heterps elastic status --state DIR [--json]
//   heterps elastic cancel --state DIR ID
//
// The service lives in lib/Autoscale/Service.cpp (plain C++); this file
// parses the command line and checks a job file against its bundle before
// it is submitted. Compiled with exceptions: the runtime's Bundle throws.
//
//===----------------------------------------------------------------------===//

#include "ElasticServe.h"
#include "Commands.h"

#include "heterps/Autoscale/Service.h"
#include "heterps/Autoscale/ServicePrediction.h"
#include "heterps/Cluster/JsonLimits.h"
#include "heterps/Jobs/JobSpec.h"
#include "heterps/Jobs/Supervisor.h"
#include "heterps/Runtime/Bundle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <sys/file.h>
#include <unistd.h>

namespace heterps::driver {
namespace {

namespace fs = std::filesystem;
using namespace heterps::autoscale;

const char *const kServeUsage =
    "usage:\n"
    "  heterps elastic serve --state DIR [--backend local|slurm]\n"
    "      [--capacity N | --cluster HOSTFILE] [--interval 60s]\n"
    "      [--resize-cost 1s] [--poll 1s]\n"
    "  heterps elastic submit --state DIR JOB.yaml\n"
    "  heterps elastic status --state DIR [--json]\n"
    "  heterps elastic cancel --state DIR ID\n"
    "  heterps elastic predict --state DIR [--json] [--startup S]\n"
    "      [--resize-pause S] [--finish S]\n"
    "(docs/Autoscaler.md, \"The service\")\n";

} // namespace

const char *elasticServeUsage() { return kServeUsage; }

namespace {

/// The service's state file, or an error naming the directory or file.
llvm::Expected<ServiceState> loadState(const ServiceFiles &files) {
  auto buffer = llvm::MemoryBuffer::getFile(files.state);
  if (!buffer)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + files.directory + "' has no service state (start " +
            "`heterps elastic serve --state " + files.directory + "`)");
  llvm::Expected<ServiceState> state =
      parseServiceState((*buffer)->getBuffer().str());
  if (!state)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + files.state + "' is unreadable: " +
                                       llvm::toString(state.takeError()));
  return state;
}

int fail(const std::string &command, const std::string &message) {
  reportError("elastic " + command, message);
  return 1;
}

/// `--name value`, `--name=value`, switches and positional words.
struct Words {
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;
  std::string error;
  Words(const std::vector<std::string> &args,
        const std::vector<std::string> &known,
        const std::vector<std::string> &switches) {
    for (size_t i = 0; i < args.size() && error.empty(); ++i) {
      const std::string &word = args[i];
      if (word.rfind("--", 0) != 0) {
        positional.push_back(word);
        continue;
      }
      size_t equals = word.find('=');
      std::string name = word.substr(
          2, equals == std::string::npos ? std::string::npos : equals - 2);
      bool isSwitch =
          std::find(switches.begin(), switches.end(), name) != switches.end();
      if (!isSwitch &&
          std::find(known.begin(), known.end(), name) == known.end()) {
        error = "unknown flag '" + word + "'\n" + kServeUsage;
      } else if (flags.count(name)) {
        // The last would win unsaid.
        error = "flag '--" + name + "' is given twice";
      } else if (isSwitch && equals != std::string::npos) {
        // --json=false turned JSON on.
        error = "flag '--" + name + "' takes no value";
      } else if (isSwitch) {
        flags[name] = "1";
      } else if (equals != std::string::npos) {
        flags[name] = word.substr(equals + 1);
      } else if (i + 1 < args.size()) {
        flags[name] = args[++i];
      } else {
        error = "flag '" + word + "' needs a value";
      }
    }
  }
  bool has(const std::string &name) const { return flags.count(name); }
  std::string get(const std::string &name, const std::string &def = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? def : it->second;
  }
};

std::atomic<bool> stopService{false};
extern "C" void onStopSignal(int) { stopService = true; }

bool serviceRunning(const std::string &state) {
  int fd = ::open(ServiceFiles(state).lock.c_str(), O_RDONLY);
  if (fd < 0)
    return false;
  bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

/// One spelling per directory: the service finds its supervisors by the
/// --job-dir in their command lines, and a state directory given as
/// "state/" one time and "state" (or through a link) the next lost them:
/// a cancel signalled nothing and the job went unobserved.
std::string absolute(const std::string &path) {
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path), error);
  std::string text =
      (error ? fs::absolute(path).lexically_normal() : resolved).string();
  while (text.size() > 1 && text.back() == '/')
    text.pop_back();
  return text;
}

} // namespace

int elasticServeCommand(const std::vector<std::string> &args) {
  Words words(args,
              {"state", "backend", "capacity", "cluster", "interval",
               "resize-cost", "poll"},
              {});
  if (!words.error.empty())
    return fail("serve", words.error);
  if (!words.positional.empty())
    return fail("serve", "unexpected argument '" + words.positional[0] + "'");
  if (!words.has("state"))
    return fail("serve",
                std::string("--state DIR is required\n") + kServeUsage);
  ServiceOptions options;
  options.stateDirectory = absolute(words.get("state"));
  options.backend = words.get("backend", "local");
  if (options.backend != "local" && options.backend != "slurm")
    return fail("serve", "--backend: '" + options.backend +
                             "' is neither local nor slurm");
  static int anchor;
  options.heterps = llvm::sys::fs::getMainExecutable("heterps", &anchor);
  for (auto [flag, out] : {std::pair{"interval", &options.intervalSeconds},
                           std::pair{"resize-cost", &options.resizeCostSeconds},
                           std::pair{"poll", &options.pollSeconds}}) {
    if (!words.has(flag))
      continue;
    std::optional<double> seconds = jobs::parseDuration(words.get(flag));
    if (!seconds || *seconds < 0 ||
        (*seconds == 0 && std::string(flag) != "resize-cost"))
      return fail("serve", std::string("--") + flag + ": '" + words.get(flag) +
                               "' is not a duration (30s, 2m, 250ms)");
    // Beyond a day the loop's millisecond sleeps overflow (a --poll of
    // 1e20s spun at full speed) and no service waits that long.
    if (*seconds > 86400)
      return fail("serve", std::string("--") + flag + ": '" + words.get(flag) +
                               "' is more than a day (86400s)");
    *out = *seconds;
  }
  if (words.has("capacity") && words.has("cluster"))
    return fail("serve", "give --capacity or --cluster, not both");
  if (words.has("capacity")) {
    std::string text = words.get("capacity");
    if (llvm::StringRef(text).getAsInteger(10, options.capacity) ||
        options.capacity <= 0 || options.capacity > kMostServiceSlots)
      return fail("serve", "--capacity: '" + text +
                               "' is not a number of slots from 1 to " +
                               std::to_string(kMostServiceSlots));
  } else if (words.has("cluster")) {
    llvm::Expected<int> slots = hostfileCapacity(words.get("cluster"));
    if (!slots)
      return fail("serve", llvm::toString(slots.takeError()));
    options.capacity = *slots;
  } else if (options.backend == "local") {
    return fail("serve",
                "--backend local needs --capacity N or --cluster "
                "HOSTFILE (the slots to share: one per worker or shard)");
  }
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  if (llvm::Error error = runService(options, std::cerr, stopService))
    return fail("serve", llvm::toString(std::move(error)));
  return 0;
}

int elasticSubmitCommand(const std::vector<std::string> &args) {
  Words words(args, {"state"}, {});
  if (!words.error.empty())
    return fail("submit", words.error);
  if (!words.has("state") || words.positional.size() != 1)
    return fail("submit", std::string("needs --state DIR and one job file\n") +
                              kServeUsage);
  std::string path = absolute(words.positional[0]);
  llvm::Expected<jobs::JobSpec> spec = jobs::parseJobFile(path);
  if (!spec)
    return fail("submit", llvm::toString(spec.takeError()));
  ServiceJob job;
  try {
    rt::Bundle bundle(spec->bundle);
    if (!bundle.training())
      return fail("submit", "bundle '" + spec->bundle +
                                "' is not a training bundle; compile the "
                                "model with --train");
    if (llvm::Error error = jobs::checkJobAgainstBundle(*spec, bundle.batch()))
      return fail("submit", llvm::toString(std::move(error)));
    job.microBatch = bundle.batch();
  } catch (const std::exception &error) {
    return fail("submit", error.what());
  }
  job.name = spec->name;
  job.jobFile = path;
  job.shards = spec->initial.shards;
  job.samples = spec->samples;
  job.noiseScale = spec->gradientNoiseScale;
  job.minWorkers = int(spec->workers.min);
  job.maxWorkers = int(spec->workers.max);
  job.initialWorkers = spec->initial.workers;
  job.minBatch = spec->batch.min;
  job.maxBatch = spec->batch.max;
  job.initialBatch = spec->initial.batch;
  std::string state = absolute(words.get("state"));
  llvm::Expected<std::string> id = submitJob(state, job);
  if (!id)
    return fail("submit", llvm::toString(id.takeError()));
  std::cout << "submitted " << *id << "\n";
  if (!serviceRunning(state))
    std::cerr << "heterps elastic submit: note: no service runs on '" << state
              << "' yet; the job waits for `heterps elastic serve --state "
              << state << "`\n";
  return 0;
}

int elasticStatusCommand(const std::vector<std::string> &args) {
  Words words(args, {"state"}, {"json"});
  if (!words.error.empty())
    return fail("status", words.error);
  if (!words.has("state") || !words.positional.empty())
    return fail("status", std::string("needs --state DIR\n") + kServeUsage);
  std::string dir = absolute(words.get("state"));
  ServiceFiles files(dir);
  // Submissions the service has not read yet: all there is before any
  // service ran, and those made while it is down.
  std::error_code ec;
  const bool hasState = fs::exists(files.state, ec);
  if (ec)
    return fail("status", "cannot read '" + files.state + "': " + ec.message());
  std::vector<std::string> waiting;
  const bool hasInbox = fs::is_directory(files.inbox, ec);
  if (ec == std::errc::no_such_file_or_directory)
    ec.clear();
  if (hasInbox) {
    for (fs::directory_iterator entry(files.inbox, ec), end;
         !ec && entry != end; entry.increment(ec)) {
      std::string name = entry->path().filename().string();
      if (name[0] != '.' && llvm::StringRef(name).ends_with(".json"))
        waiting.push_back(entry->path().stem().string());
    }
  }
  if (ec)
    return fail("status", "cannot read '" + files.inbox + "': " + ec.message());
  std::sort(waiting.begin(), waiting.end());
  auto waitingJson = [&] {
    llvm::json::Array ids;
    for (const std::string &id : waiting)
      ids.push_back(id);
    return ids;
  };
  if (!hasState && !waiting.empty()) {
    if (words.has("json")) {
      llvm::json::Object o{{"service_running", serviceRunning(dir)},
                           {"jobs", llvm::json::Array()},
                           {"waiting", waitingJson()}};
      llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(o)))
                   << "\n";
      return 0;
    }
    llvm::outs() << "service: not started on '" << dir << "'; "
                 << waiting.size()
                 << (waiting.size() == 1 ? " submission waits"
                                         : " submissions wait")
                 << " in its inbox:";
    for (const std::string &id : waiting)
      llvm::outs() << " " << id;
    llvm::outs() << " (`heterps elastic serve --state " << dir
                 << "` runs them)\n";
    return 0;
  }
  llvm::Expected<ServiceState> state = loadState(files);
  if (!state)
    return fail("status", llvm::toString(state.takeError()));
  bool running = serviceRunning(dir);
  llvm::erase_if(waiting, [&](const std::string &id) {
    return state->find(id) != nullptr;
  });
  // A job's step comes from its own supervisor's state.
  auto step = [&](const ServiceJob &job) -> int64_t {
    auto text = llvm::MemoryBuffer::getFile(
        jobs::JobFiles(files.jobDirectory(job.id)).state);
    if (!text)
      return 0;
    llvm::Expected<llvm::json::Value> v =
        heterps::cluster::parseJson((*text)->getBuffer());
    if (!v) {
      llvm::consumeError(v.takeError());
      return 0;
    }
    const llvm::json::Object *o = v->getAsObject();
    return o ? o->getInteger("step").value_or(0) : 0;
  };
  if (words.has("json")) {
    // The state as the service writes it, and what only status knows.
    llvm::Expected<llvm::json::Value> value =
        llvm::json::parse(serviceStateJson(*state));
    if (!value)
      return fail("status", llvm::toString(value.takeError()));
    llvm::json::Object &o = *value->getAsObject();
    o["service_running"] = running;
    o["waiting"] = waitingJson();
    if (llvm::json::Array *jobs = o.getArray("jobs"))
      for (size_t i = 0; i < jobs->size() && i < state->jobs.size(); ++i)
        if (llvm::json::Object *j = (*jobs)[i].getAsObject())
          (*j)["step"] = step(state->jobs[i]);
    llvm::outs() << llvm::formatv("{0:2}", *value) << "\n";
    return 0;
  }
  llvm::outs() << "service: " << (running ? "running" : "not running") << "\n";
  llvm::outs() << llvm::formatv("{0,-20} {1,-10} {2,7} {3,7} {4,7}  {5}\n",
                                "job", "phase", "workers", "batch", "step",
                                "reason");
  for (const ServiceJob &job : state->jobs)
    llvm::outs() << llvm::formatv("{0,-20} {1,-10} {2,7} {3,7} {4,7}  {5}\n",
                                  job.id, job.phase, job.workers, job.batch,
                                  step(job), job.reason);
  for (const std::string &id : waiting)
    llvm::outs() << llvm::formatv("{0,-20} {1,-10} {2,7} {3,7} {4,7}  {5}\n",
                                  id, "submitted", "-", "-", "-",
                                  "in the inbox; the service has not read it");
  return 0;
}

int elasticCancelCommand(const std::vector<std::string> &args) {
  Words words(args, {"state"}, {});
  if (!words.error.empty())
    return fail("cancel", words.error);
  if (!words.has("state") || words.positional.size() != 1)
    return fail("cancel",
                std::string("needs --state DIR and a job id\n") + kServeUsage);
  std::string state = absolute(words.get("state"));
  if (llvm::Error error = requestCancel(state, words.positional[0]))
    return fail("cancel", llvm::toString(std::move(error)));
  std::cout << "cancel of " << words.positional[0] << " requested\n";
  if (!serviceRunning(state))
    std::cerr << "heterps elastic cancel: note: no service runs on '" << state
              << "'; the cancel takes effect when `heterps elastic serve "
                 "--state "
              << state << "` starts\n";
  return 0;
}

int elasticPredictCommand(const std::vector<std::string> &args) {
  Words words(args, {"state", "startup", "resize-pause", "finish"}, {"json"});
  if (!words.error.empty())
    return fail("predict", words.error);
  if (!words.has("state") || !words.positional.empty())
    return fail("predict", std::string("needs --state DIR\n") + kServeUsage);
  PredictOptions options;
  for (auto [flag, out] :
       {std::pair{"startup", &options.startupSeconds},
        std::pair{"resize-pause", &options.resizePauseSeconds},
        std::pair{"finish", &options.finishSeconds}}) {
    if (!words.has(flag))
      continue;
    std::optional<double> seconds = jobs::parseDuration(words.get(flag));
    if (!seconds)
      return fail("predict", std::string("--") + flag + ": '" +
                                 words.get(flag) +
                                 "' is not a duration (30s, 2m, 250ms)");
    *out = *seconds;
  }
  ServiceFiles files(absolute(words.get("state")));
  llvm::Expected<ServiceState> state = loadState(files);
  if (!state)
    return fail("predict", llvm::toString(state.takeError()));
  llvm::Expected<Prediction> prediction = predictService(*state, options);
  if (!prediction)
    return fail("predict", "cannot replay '" + files.state +
                               "': " + llvm::toString(prediction.takeError()));
  llvm::outs() << (words.has("json") ? predictionJson(*prediction) + "\n"
                                     : predictionTable(*prediction));
  return 0;
}

} // namespace heterps::driver
