//===- Elastic.cpp - heterps elastic simulate | generate ------------------===//
//
//   heterps elastic simulate --workload FILE.csv --traces DIR
//                            [--policy P|all] [--load X] [--json] [--per-job]
//                            [--nodes N] [--gpus-per-node G] [--interval S]
//                            [--resize-cost S] [--hysteresis H] [--horizon S]
//   heterps elastic simulate --cluster FILE.yaml [--priced-mix N] [--seed S]
//                            [--objective value|cost|baseline|all] [--json]
//   heterps elastic generate --jobs N --rate R [--seed S] [--mix app=w,...]
//                            -o FILE.csv
//
// The simulator and the workload generator live in lib/Autoscale (plain
// C++); this file parses the command line and prints.
//
//===----------------------------------------------------------------------===//

#include "Elastic.h"
#include "Commands.h"
#include "ElasticServe.h"

#include "heterps/Autoscale/PricedWorkload.h"
#include "heterps/Autoscale/Simulator.h"
#include "heterps/Autoscale/Trace.h"
#include "heterps/Cost/Calibration.h"
#include "heterps/Jobs/Supervisor.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace llvm;
using namespace heterps::autoscale;

namespace heterps::driver {
namespace {

const char *const kUsage =
    "usage:\n"
    "  heterps elastic simulate --workload FILE.csv --traces DIR\n"
    "      [--policy static|fixed-batch|elastic|elastic-srtf|all] [--load X]\n"
    "      [--json] [--per-job] [--nodes N] [--gpus-per-node G]\n"
    "      [--interval SECONDS] [--resize-cost SECONDS] [--hysteresis H]\n"
    "      [--horizon SECONDS] [--max-gpus-per-job G]\n"
    "      [--reallocation-penalty age|interval]\n"
    "  heterps elastic simulate --cluster FILE.yaml [--priced-mix N]\n"
    "      [--seed S] [--rate JOBS_PER_HOUR]\n"
    "      [--objective value|cost|baseline|all]\n"
    "      [--profiles DB.json] [--calibration FILE.json] [--json]\n"
    "      [--rates] [--interval S]\n"
    "      [--resize-cost S] [--hysteresis H] [--horizon S]\n"
    "  heterps elastic generate --jobs N --rate JOBS_PER_HOUR [--seed S]\n"
    "      [--mix app=weight,...] -o FILE.csv\n"
    "DIR: the Pollux traces (../shared/traces/pollux-osdi21). "
    "docs/Autoscaler.md\n";

/// A job-completion time for the tables: "-" where no job completed (0
/// would read as the best of the policies).
std::string jctText(int64_t completed, double seconds) {
  return completed == 0 ? "-" : formatv("{0:F0}", seconds).str();
}

/// Prints an error (reportError keeps a file's own place) and fails.
int fail(StringRef command, const Twine &message) {
  reportError(("elastic " + command).str(), message);
  return 1;
}

/// `--name value` / `--name=value` flags; `switches` take no value.
struct Flags {
  std::map<std::string, std::string> values;
  std::string error;

  bool parse(ArrayRef<std::string> words, ArrayRef<StringRef> known,
             ArrayRef<StringRef> switches) {
    for (size_t i = 0; i < words.size(); ++i) {
      StringRef word = words[i];
      std::string name, value;
      if (word == "-o") {
        name = "o";
      } else if (word.consume_front("--")) {
        auto [n, v] = word.split('=');
        name = n.str();
        if (word.contains('='))
          value = v.str();
      } else {
        error = "unexpected argument '" + words[i] + "'";
        return false;
      }
      if (!is_contained(known, name) && !is_contained(switches, name)) {
        error = "unknown flag '" + words[i] + "'";
        return false;
      }
      const std::string spelled = name == "o" ? "-o" : "--" + name;
      // A flag given twice is refused: the last would win unsaid.
      if (values.count(name)) {
        error = "flag '" + spelled + "' is given twice";
        return false;
      }
      if (is_contained(switches, name)) {
        // --json=false turned JSON on.
        if (word.contains('=')) {
          error = "flag '" + spelled + "' takes no value";
          return false;
        }
        values[name] = "1";
        continue;
      }
      if (value.empty() && !word.contains('=')) {
        if (i + 1 >= words.size()) {
          error = "flag '" + words[i] + "' needs a value";
          return false;
        }
        value = words[++i];
      }
      // An empty value named nothing in the error it led to.
      if (value.empty()) {
        error = "flag '" + spelled + "' has an empty value";
        return false;
      }
      values[name] = value;
    }
    return true;
  }

  bool has(StringRef name) const { return values.count(name.str()); }
  std::string get(StringRef name, StringRef fallback = "") const {
    auto it = values.find(name.str());
    return it == values.end() ? fallback.str() : it->second;
  }
  /// A positive number (or non-negative when `allowZero`), else an error.
  bool number(StringRef name, double &out, bool allowZero = false) {
    if (!has(name))
      return true;
    std::string text = get(name);
    if (StringRef(text).getAsDouble(out) || !std::isfinite(out) || out < 0 ||
        (!allowZero && out == 0)) {
      error = "--" + name.str() + ": '" + text + "' is not a " +
              (allowZero ? "non-negative" : "positive") + " number";
      return false;
    }
    return true;
  }
  /// A given flag's value within [low, high] (what keeps a simulation of
  /// years of intervals from running for hours).
  bool within(StringRef name, double value, double low, double high,
              StringRef unit) {
    if (!has(name) || (value >= low && value <= high))
      return true;
    raw_string_ostream os(error);
    error.clear();
    os << "--" << name << ": '" << get(name) << "' is outside "
       << format("%g", low) << " to " << format("%g", high) << " " << unit;
    return false;
  }
  /// A positive integer (or non-negative when `allowZero`), else an error.
  bool integer(StringRef name, int64_t &out, bool allowZero = false) {
    if (!has(name))
      return true;
    std::string text = get(name);
    if (StringRef(text).getAsInteger(10, out) || out < 0 ||
        (!allowZero && out == 0)) {
      error = "--" + name.str() + ": '" + text + "' is not a " +
              (allowZero ? "non-negative" : "positive") + " integer";
      return false;
    }
    return true;
  }
};

/// `simulate --cluster FILE`: the heterogeneous, priced case
/// (docs/Autoscaler.md, "Heterogeneous, priced"): a generated mix of HeterPS
/// CTR jobs under the allocator's objectives and the whole-GPU baseline.
int simulatePricedCommand(ArrayRef<std::string> args) {
  // The trace simulation's flags, given with --cluster.
  for (const std::string &arg : args)
    for (StringRef traceOnly :
         {"--workload", "--traces", "--policy", "--load", "--nodes",
          "--gpus-per-node", "--max-gpus-per-job", "--per-job"})
      if (StringRef(arg) == traceOnly ||
          StringRef(arg).starts_with((traceOnly + "=").str()))
        return fail("simulate",
                    traceOnly.str() +
                        " is for a trace's simulation (--workload); "
                        "with --cluster the policies are "
                        "--objective value|cost|baseline|all");
  Flags flags;
  if (!flags.parse(args,
                   {"cluster", "priced-mix", "seed", "rate", "objective",
                    "profiles", "calibration", "interval", "resize-cost",
                    "hysteresis", "horizon"},
                   {"json", "rates"}))
    return fail("simulate", flags.error + "\n" + kUsage);
  PricedMixOptions mix;
  PricedSimOptions base;
  int64_t jobs = mix.jobs, seed = int64_t(mix.seed);
  if (!flags.integer("priced-mix", jobs) ||
      !flags.integer("seed", seed, /*allowZero=*/true) ||
      !flags.number("rate", mix.ratePerHour) ||
      !flags.number("interval", base.interval) ||
      !flags.number("resize-cost", base.resizeCost, true) ||
      !flags.number("hysteresis", base.hysteresis, true) ||
      !flags.number("horizon", base.horizon, true) ||
      !flags.within("rate", mix.ratePerHour, 0.01, 1e6, "jobs per hour") ||
      !flags.within("interval", base.interval, 1, 86400, "seconds") ||
      !flags.within("resize-cost", base.resizeCost, 0, 86400, "seconds") ||
      !flags.within("horizon", base.horizon, 0, 1e9, "seconds"))
    return fail("simulate", flags.error);
  if (jobs > 100000)
    return fail("simulate", "--priced-mix: at most 100000 jobs");
  mix.jobs = int(jobs);
  mix.seed = uint64_t(seed);
  std::vector<PricedPolicy> policies;
  std::string objective = flags.get("objective", "all");
  if (objective == "all") {
    policies = {PricedPolicy::WholeGpu, PricedPolicy::MaxValue,
                PricedPolicy::MinCost};
  } else {
    SmallVector<StringRef> names;
    StringRef(objective).split(names, ',');
    for (StringRef name : names) {
      std::optional<PricedPolicy> parsed = parsePricedPolicy(name.trim());
      if (!parsed && name.trim() == "all")
        return fail("simulate", "--objective: 'all' stands alone (it is "
                                "value, cost and baseline)");
      if (!parsed)
        return fail("simulate", "--objective: unknown objective '" + name +
                                    "' (value, cost, baseline, all)");
      if (llvm::is_contained(policies, *parsed))
        return fail("simulate",
                    "--objective: '" + name.trim() + "' is given twice");
      policies.push_back(*parsed);
    }
  }
  auto cluster = cluster::loadClusterSpec(flags.get("cluster"));
  if (!cluster)
    return fail("simulate", toString(cluster.takeError()));
  std::optional<cost::ProfileDatabase> profiles;
  if (flags.has("profiles")) {
    auto loaded = cost::ProfileDatabase::load(flags.get("profiles"));
    if (!loaded)
      return fail("simulate", toString(loaded.takeError()));
    profiles = std::move(*loaded);
  }
  RateOptions rateOptions;
  rateOptions.profiles = profiles ? &*profiles : nullptr;
  if (flags.has("calibration")) {
    cost::CostOptions calibrated;
    auto calibration =
        cost::loadCalibration(flags.get("calibration"), calibrated);
    if (!calibration)
      return fail("simulate", toString(calibration.takeError()));
    rateOptions.costOptions = calibrated;
    errs() << "heterps elastic simulate: " << calibration->describe() << "\n";
  }
  std::vector<RateTable> rates;
  for (const CtrModelSize &size : ctrModelSizes()) {
    auto table = buildRateTable(size, *cluster, rateOptions);
    if (!table)
      return fail("simulate", toString(table.takeError()));
    rates.push_back(std::move(*table));
  }
  if (flags.has("rates")) {
    // What the allocator sees per model: the Pareto front of plans.
    auto devices = [&](const std::vector<int> &counts) {
      std::string text;
      for (size_t c = 0; c < counts.size(); ++c)
        if (counts[c])
          text += formatv("{0}{1} x {2}", text.empty() ? "" : " + ", counts[c],
                          cluster->classes[c].name);
      return text;
    };
    if (flags.has("json")) {
      json::Array tables;
      for (const RateTable &table : rates) {
        json::Array choices;
        for (const RatedChoice &choice : table.choices) {
          json::Object counts;
          for (size_t c = 0; c < choice.devices.size(); ++c)
            if (choice.devices[c])
              counts[cluster->classes[c].name] = choice.devices[c];
          choices.push_back(json::Object{
              {"samples_per_second", choice.throughput},
              {"usd_per_hour", choice.pricePerHour},
              {"usd_per_million_samples",
               choice.pricePerHour / choice.throughput / 3600 * 1e6},
              {"devices", std::move(counts)}});
        }
        tables.push_back(json::Object{{"model", table.model},
                                      {"plans_solved", table.plansSolved},
                                      {"front", std::move(choices)}});
      }
      outs() << formatv("{0:2}", json::Value(std::move(tables))) << "\n";
      return 0;
    }
    for (const RateTable &table : rates) {
      outs() << formatv("{0}: {1} plans solved, {2} on the front\n",
                        table.model, table.plansSolved, table.choices.size());
      for (const RatedChoice &choice : table.choices)
        outs() << formatv("  {0,10:F0} samples/s {1,7:F2} USD/h {2,8:F4} "
                          "USD/M samples  {3}\n",
                          choice.throughput, choice.pricePerHour,
                          choice.pricePerHour / choice.throughput / 3600 * 1e6,
                          devices(choice.devices));
    }
    return 0;
  }
  auto workload = generatePricedMix(mix, *cluster, rates);
  if (!workload)
    return fail("simulate", toString(workload.takeError()));
  std::vector<PricedResult> results;
  for (PricedPolicy p : policies) {
    PricedSimOptions options = base;
    options.policy = p;
    auto result = simulatePriced(*workload, *cluster, rates, options);
    if (!result)
      return fail("simulate", toString(result.takeError()));
    results.push_back(std::move(*result));
  }
  if (flags.has("json")) {
    outs() << (results.size() == 1 ? "" : "[\n");
    for (size_t i = 0; i < results.size(); ++i)
      outs() << formatPricedJSON(results[i], *cluster)
             << (i + 1 < results.size() ? ",\n" : "\n");
    outs() << (results.size() == 1 ? "" : "]\n");
    return 0;
  }
  outs() << formatv("{0,-13} {1,5} {2,9} {3,11} {4,11} {5,10} {6,11} {7,8}\n",
                    "policy", "jobs", "completed", "mean JCT s", "makespan s",
                    "cost USD", "floors met", "rescales");
  for (const PricedResult &r : results)
    outs() << formatv(
        "{0,-13} {1,5} {2,9} {3,11} {4,11:F0} {5,10:F2} {6,11} {7,8}\n",
        r.policy, r.jobs, r.completed, jctText(r.completed, r.meanJct),
        r.makespan, r.cost,
        formatv("{0}/{1}", r.metDeadline, r.withDeadline).str(), r.rescales);
  return 0;
}

int simulateCommand(ArrayRef<std::string> args) {
  for (StringRef word : args)
    if (word == "--cluster" || word.starts_with("--cluster="))
      return simulatePricedCommand(args);
  Flags flags;
  if (!flags.parse(args,
                   {"workload", "traces", "policy", "load", "nodes",
                    "gpus-per-node", "interval", "resize-cost", "hysteresis",
                    "horizon", "max-gpus-per-job", "reallocation-penalty"},
                   {"json", "per-job"}))
    return fail("simulate", flags.error + "\n" + kUsage);
  if (!flags.has("workload") || !flags.has("traces"))
    return fail("simulate",
                Twine("--workload and --traces are required\n") + kUsage);
  if (flags.has("per-job") && !flags.has("json"))
    return fail("simulate", "--per-job adds each job to the JSON output: it "
                            "needs --json");
  SimulatorOptions base;
  double nodes = base.nodes, gpus = base.gpusPerNode, maxPerJob = 0;
  if (!flags.number("load", base.load) ||
      !flags.number("interval", base.interval) ||
      !flags.number("resize-cost", base.resizeCost, true) ||
      !flags.number("hysteresis", base.hysteresis, true) ||
      !flags.number("horizon", base.horizon, true) ||
      !flags.number("nodes", nodes) || !flags.number("gpus-per-node", gpus) ||
      !flags.number("max-gpus-per-job", maxPerJob, true) ||
      !flags.within("load", base.load, 0.01, 100, "times the trace's rate") ||
      !flags.within("interval", base.interval, 1, 86400, "seconds") ||
      !flags.within("resize-cost", base.resizeCost, 0, 86400, "seconds") ||
      !flags.within("horizon", base.horizon, 0, 1e9, "seconds"))
    return fail("simulate", flags.error);
  if (nodes != std::floor(nodes) || gpus != std::floor(gpus) ||
      maxPerJob != std::floor(maxPerJob) || nodes > 4096 || gpus > 64 ||
      maxPerJob > 4096 * 64)
    return fail("simulate", "--nodes, --gpus-per-node and --max-gpus-per-job "
                            "take whole numbers (at most 4096 nodes of 64)");
  base.nodes = int(nodes);
  base.gpusPerNode = int(gpus);
  base.maxGpusPerJob = int(maxPerJob);
  const std::string penalty = flags.get("reallocation-penalty", "age");
  if (penalty != "age" && penalty != "interval")
    return fail("simulate", "--reallocation-penalty: '" + penalty +
                                "' is neither age nor interval");
  base.ageBasedPenalty = penalty == "age";
  std::vector<Policy> policies;
  std::string policy = flags.get("policy", "elastic");
  if (policy == "all") {
    policies = allPolicies();
  } else {
    SmallVector<StringRef> names;
    StringRef(policy).split(names, ',');
    for (StringRef name : names) {
      std::optional<Policy> parsed = parsePolicy(name.trim());
      if (!parsed && name.trim() == "all")
        return fail("simulate", "--policy: 'all' stands alone (it is every "
                                "policy)");
      if (!parsed)
        return fail("simulate",
                    "--policy: unknown policy '" + name +
                        "' (static, fixed-batch, elastic, elastic-srtf, all)");
      if (llvm::is_contained(policies, *parsed))
        return fail("simulate",
                    "--policy: '" + name.trim() + "' is given twice");
      policies.push_back(*parsed);
    }
  }
  // The workload first: a malformed one is the likelier mistake, and it
  // should be reported before the traces are read.
  auto workload = readWorkload(flags.get("workload"));
  if (!workload)
    return fail("simulate", toString(workload.takeError()));
  auto models = loadApplicationModels(flags.get("traces"));
  if (!models)
    return fail("simulate", toString(models.takeError()));

  std::vector<SimulationResult> results;
  for (Policy p : policies) {
    SimulatorOptions options = base;
    options.policy = p;
    auto result = simulate(*workload, *models, options);
    if (!result)
      return fail("simulate", toString(result.takeError()));
    results.push_back(std::move(*result));
  }
  bool perJob = flags.has("per-job");
  if (flags.has("json")) {
    if (results.size() == 1) {
      outs() << formatResultJSON(results.front(), perJob) << "\n";
    } else {
      outs() << "[\n";
      for (size_t i = 0; i < results.size(); ++i)
        outs() << formatResultJSON(results[i], perJob)
               << (i + 1 < results.size() ? ",\n" : "\n");
      outs() << "]\n";
    }
    return 0;
  }
  outs() << formatv("{0,-13} {1,5} {2,9} {3,9} {4,11} {5,11} {6,11} {7,6} "
                    "{8,8}\n",
                    "policy", "jobs", "completed", "in-window", "mean JCT s",
                    "p99 JCT s", "makespan s", "util", "rescales");
  for (const SimulationResult &r : results)
    outs() << formatv("{0,-13} {1,5} {2,9} {3,9} {4,11} {5,11} "
                      "{6,11:F0} {7,6:F3} {8,8}\n",
                      r.policy, r.jobs, r.completed, r.completedInWindow,
                      jctText(r.completed, r.meanJct),
                      jctText(r.completed, r.p99Jct), r.makespan, r.utilization,
                      r.rescales);
  return 0;
}

/// Writes `text` to `path`: a regular file (or a new one) through a
/// temporary renamed into place, so a failed write leaves no partial file
/// and an existing one as it was; a device or a FIFO directly (renamed
/// over, /dev/full became a file).
Error writeOutputFile(const std::string &path, const std::string &text) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status) ||
      status.type() == sys::fs::file_type::regular_file)
    return jobs::writeFileAtomically(path, text);
  if (status.type() == sys::fs::file_type::directory_file)
    return createStringError(inconvertibleErrorCode(),
                             "cannot write '" + path + "': it is a directory");
  std::error_code ec;
  raw_fd_ostream out(path, ec);
  if (!ec) {
    out << text;
    out.close();
    if (out.has_error()) {
      ec = out.error();
      out.clear_error();
    }
  }
  if (ec)
    return createStringError(ec,
                             "cannot write '" + path + "': " + ec.message());
  return Error::success();
}

int generateCommand(ArrayRef<std::string> args) {
  Flags flags;
  if (!flags.parse(args, {"jobs", "rate", "seed", "mix", "o", "output"}, {}))
    return fail("generate", flags.error + "\n" + kUsage);
  if (flags.has("o") && flags.has("output"))
    return fail("generate", "give -o or --output, not both");
  std::string output = flags.has("o") ? flags.get("o") : flags.get("output");
  if (!flags.has("jobs") || !flags.has("rate") || output.empty())
    return fail("generate",
                Twine("--jobs, --rate and -o are required\n") + kUsage);
  GeneratorOptions options;
  int64_t jobs = 0, seed = 1;
  if (!flags.integer("jobs", jobs) ||
      !flags.integer("seed", seed, /*allowZero=*/true) ||
      !flags.number("rate", options.ratePerHour) ||
      !flags.within("rate", options.ratePerHour, 0.01, 1e6, "jobs per hour"))
    return fail("generate", flags.error);
  if (jobs > 1000000)
    return fail("generate", "--jobs: at most 1000000");
  options.jobs = int(jobs);
  options.seed = uint64_t(seed);
  if (flags.has("mix")) {
    const std::string mix = flags.get("mix");
    SmallVector<StringRef> parts;
    StringRef(mix).split(parts, ',', -1, false);
    if (parts.empty())
      return fail("generate", "--mix: give app=weight,...");
    for (StringRef part : parts) {
      auto [app, weight] = part.split('=');
      double w;
      // Weights are summed: bounded so the sum stays finite.
      if (weight.trim().getAsDouble(w) || !(w >= 0 && w <= 1e6))
        return fail("generate", "--mix: expected app=weight with a weight "
                                "from 0 to 1e6, got '" +
                                    part.str() + "'");
      if (!options.mix.emplace(app.trim().str(), w).second)
        return fail("generate",
                    "--mix: '" + app.trim().str() + "' is given twice");
    }
  }
  auto workload = generateWorkload(options);
  if (!workload)
    return fail("generate", toString(workload.takeError()));
  if (Error error = writeOutputFile(output, formatWorkload(*workload)))
    return fail("generate", toString(std::move(error)));
  return 0;
}

} // namespace

/// Runs an elastic command; a failed write of its standard output (a full
/// disk, a closed pipe) is its error, not LLVM's report at exit.
static int runElasticCommand(const std::string &command,
                             const std::vector<std::string> &args);

int elasticCommand(int argc, char **argv) {
  // argv[0] is the program, argv[1] "elastic".
  std::vector<std::string> args(argv + 2, argv + argc);
  if (args.empty()) {
    errs() << kUsage;
    return 1;
  }
  std::string command = args[0];
  args.erase(args.begin());
  int status = runElasticCommand(command, args);
  outs().flush();
  std::cout.flush();
  if (outs().has_error() || !std::cout) {
    std::string reason =
        outs().has_error() ? outs().error().message() : "the stream failed";
    outs().clear_error();
    return fail(command, "cannot write the standard output: " + reason);
  }
  return status;
}

static int runElasticCommand(const std::string &command,
                             const std::vector<std::string> &args) {
  if (isHelpRequest(command, args)) {
    const bool service = is_contained(
        {"serve", "submit", "status", "cancel", "predict"}, command);
    outs() << (service ? elasticServeUsage() : kUsage);
    return 0;
  }
  if (command == "simulate")
    return simulateCommand(args);
  if (command == "generate")
    return generateCommand(args);
  // The service (ElasticServe.cpp).
  if (command == "serve")
    return elasticServeCommand(args);
  if (command == "submit")
    return elasticSubmitCommand(args);
  if (command == "status")
    return elasticStatusCommand(args);
  if (command == "cancel")
    return elasticCancelCommand(args);
  if (command == "predict")
    return elasticPredictCommand(args);
  return fail(command, "unknown elastic command '" + command + "'\n" + kUsage);
}

} // namespace heterps::driver
