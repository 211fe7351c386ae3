//===- TraceModel.cpp - A job's step time, efficiency and work ------------===//
//
// The job model of the Pollux (OSDI'21) study's simulator, over its measured
// traces: what a job of an application does per second on a placement at a
// batch, and how much it must do. The one deliberate difference: where a
// placement was not measured, step times are interpolated over a grid of
// (nodes, replicas per node, local batch) instead of a Delaunay
// triangulation of the samples (docs/Autoscaler.md).
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Trace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <climits>
#include <cmath>

using namespace llvm;

namespace heterps::autoscale {

namespace {

/// Linear interpolation of step and sync time over samples sorted by local
/// batch; clamped to the end samples outside their range (the study's
/// interpolator has no extrapolation either).
StepTime interpolateLocal(ArrayRef<StepSample> samples, double localBatch) {
  if (localBatch <= samples.front().localBatch)
    return {samples.front().stepTime, samples.front().syncTime};
  if (localBatch >= samples.back().localBatch)
    return {samples.back().stepTime, samples.back().syncTime};
  auto upper = std::lower_bound(
      samples.begin(), samples.end(), localBatch,
      [](const StepSample &s, double b) { return s.localBatch < b; });
  auto lower = upper - 1;
  if (upper->localBatch == localBatch)
    return {upper->stepTime, upper->syncTime};
  double t = (localBatch - lower->localBatch) /
             double(upper->localBatch - lower->localBatch);
  return {lower->stepTime + t * (upper->stepTime - lower->stepTime),
          lower->syncTime + t * (upper->syncTime - lower->syncTime)};
}

StepTime mix(StepTime a, StepTime b, double t) {
  return {a.step + t * (b.step - a.step), a.sync + t * (b.sync - a.sync)};
}

/// Samples with equal local batch averaged, sorted by local batch.
std::vector<StepSample> byLocalBatch(std::vector<StepSample> samples) {
  llvm::sort(samples, [](const StepSample &a, const StepSample &b) {
    return a.localBatch < b.localBatch;
  });
  std::vector<StepSample> out;
  size_t count = 0;
  for (const StepSample &s : samples) {
    if (!out.empty() && out.back().localBatch == s.localBatch) {
      ++count;
      out.back().stepTime += (s.stepTime - out.back().stepTime) / count;
      out.back().syncTime += (s.syncTime - out.back().syncTime) / count;
      continue;
    }
    out.push_back(s);
    count = 1;
  }
  return out;
}

/// The placement without empty nodes, as its lexicographically smallest
/// rotation: the study measured one rotation of each. The traces write one
/// digit per node; a node of 10 or more replicas (--gpus-per-node above 9)
/// makes a key of its own, ",12,4", which no trace holds and no other
/// placement shares (all such nodes once read as '9', so a job on 12 GPUs
/// of a node took the step time cached for one on 15).
std::string normalise(ArrayRef<int> placement) {
  std::vector<int> nodes;
  for (int replicas : placement)
    if (replicas > 0)
      nodes.push_back(replicas);
  std::vector<int> best = nodes;
  for (size_t i = 1; i < nodes.size(); ++i) {
    std::vector<int> rotation(nodes.begin() + i, nodes.end());
    rotation.insert(rotation.end(), nodes.begin(), nodes.begin() + i);
    if (rotation < best)
      best = std::move(rotation);
  }
  const bool digits = llvm::all_of(best, [](int r) { return r < 10; });
  std::string key;
  for (int replicas : best)
    key += digits ? std::string(1, char('0' + replicas))
                  : "," + std::to_string(replicas);
  return key;
}

/// Epochs of work per application (the study's rules).
int epochsOf(StringRef app) {
  return StringSwitch<int>(app)
      .Case("bert", 2)
      .Case("cifar10", 100)
      .Case("ncf", 10)
      .Case("imagenet", 90)
      .Case("deepspeech2", 80)
      .Case("yolov3", 50)
      .Default(0);
}

} // namespace

std::vector<int> packedPlacement(int gpus, int gpusPerNode) {
  std::vector<int> placement;
  for (; gpus > 0; gpus -= gpusPerNode)
    placement.push_back(std::min(gpus, gpusPerNode));
  return placement;
}

Expected<ApplicationModel> ApplicationModel::create(ApplicationTrace trace) {
  ApplicationModel model;
  if (trace.validation.empty() || trace.placements.empty())
    return createStringError(inconvertibleErrorCode(),
                             "application '" + trace.name +
                                 "': no validation or placement traces");
  model.epochs = epochsOf(trace.name);
  size_t rows = SIZE_MAX;
  int64_t shortest = 0; // the batch of the validation file with fewest rows
  for (auto &[batch, validation] : trace.validation)
    if (validation.size() < rows) {
      rows = validation.size();
      shortest = batch;
    }
  // An application outside the study's six runs for as many epochs as every
  // validation file has rows.
  if (model.epochs == 0)
    model.epochs = rows;
  if (rows < size_t(model.epochs)) {
    std::string file = "validation-" + std::to_string(shortest) + ".csv";
    if (!trace.directory.empty())
      file = trace.directory + "/" + file;
    return createStringError(inconvertibleErrorCode(),
                             "%s: application '%s' has %d epochs of work but "
                             "the file has only %zu rows, one per epoch",
                             file.c_str(), trace.name.c_str(), model.epochs,
                             rows);
  }
  model.minLocal = INT_MAX;
  model.maxLocal = 0;
  std::map<int, std::map<int, std::vector<StepSample>>> raw;
  for (auto &[placement, samples] : trace.placements) {
    SmallVector<int> digits;
    for (char c : placement)
      digits.push_back(c - '0');
    auto &normal = model.byPlacement[normalise(digits)];
    normal.insert(normal.end(), samples.begin(), samples.end());
    for (const StepSample &s : samples) {
      model.minLocal = std::min(model.minLocal, s.localBatch);
      model.maxLocal = std::max(model.maxLocal, s.localBatch);
      raw[s.nodes][s.replicas].push_back(s);
    }
  }
  for (auto &[placement, samples] : model.byPlacement)
    samples = byLocalBatch(std::move(samples));
  for (const StepSample &s : trace.scalability)
    raw[s.nodes][s.replicas].push_back(s);
  for (auto &[nodes, byReplicas] : raw)
    for (auto &[replicas, samples] : byReplicas)
      model.grid[nodes][replicas] = byLocalBatch(std::move(samples));
  // yolov3's local batch is at most 8 (it does not fit in GPU memory above).
  if (trace.name == "yolov3")
    model.maxLocal = std::min(model.maxLocal, 8);
  model.epochProgress.assign(model.epochs + 1, 0.0);
  for (int e = 1; e <= model.epochs; ++e) {
    double progress = INFINITY;
    for (auto &[batch, validation] : trace.validation)
      progress = std::min(progress, validation[e - 1].progress);
    model.epochProgress[e] = progress;
  }
  model.trace = std::move(trace);
  return model;
}

Expected<ApplicationModel> ApplicationModel::load(StringRef tracesDir,
                                                  StringRef app) {
  auto trace = readApplicationTrace(tracesDir, app);
  if (!trace)
    return trace.takeError();
  return create(std::move(*trace));
}

Expected<ApplicationModels> loadApplicationModels(StringRef tracesDir) {
  // Accept the artifact's root as well as its traces/ folder.
  SmallString<256> dir(tracesDir);
  SmallString<256> nested(tracesDir);
  sys::path::append(nested, "traces");
  if (sys::fs::is_directory(nested))
    dir = nested;
  if (!sys::fs::is_directory(dir))
    return createStringError(inconvertibleErrorCode(),
                             tracesDir + ": error: no such directory (expected "
                                         "the Pollux traces, "
                                         "../shared/traces/pollux-osdi21)");
  ApplicationModels models;
  for (StringRef app : traceApplications()) {
    auto model = ApplicationModel::load(dir, app);
    if (!model)
      return model.takeError();
    models[app.str()] = std::make_shared<ApplicationModel>(std::move(*model));
  }
  return models;
}

double ApplicationModel::progressAt(int epoch) const {
  return epochProgress[std::clamp(epoch, 0, epochs)];
}

StepTime ApplicationModel::interpolateGrid(int nodes, int replicas,
                                           int localBatch) const {
  // Linear in nodes between the measured node counts around it; at each, linear
  // in replicas at the same replicas per node; at each of those, linear in the
  // local batch. Clamped at the grid's edges.
  nodes = std::clamp(nodes, grid.begin()->first, grid.rbegin()->first);
  double perNode = double(replicas) / nodes;
  auto atNodes = [&](int n) {
    const auto &byReplicas = grid.at(n);
    double r = perNode * n;
    auto upper = byReplicas.lower_bound(int(std::ceil(r - 1e-9)));
    if (upper == byReplicas.end())
      return interpolateLocal(byReplicas.rbegin()->second, localBatch);
    if (upper == byReplicas.begin() || upper->first == r)
      return interpolateLocal(upper->second, localBatch);
    auto lower = std::prev(upper);
    double t = (r - lower->first) / double(upper->first - lower->first);
    return mix(interpolateLocal(lower->second, localBatch),
               interpolateLocal(upper->second, localBatch), t);
  };
  auto upper = grid.lower_bound(nodes);
  if (upper->first == nodes || upper == grid.begin())
    return atNodes(upper->first);
  auto lower = std::prev(upper);
  double t = double(nodes - lower->first) / (upper->first - lower->first);
  return mix(atNodes(lower->first), atNodes(upper->first), t);
}

StepTime ApplicationModel::stepTime(ArrayRef<int> placement,
                                    int localBatch) const {
  std::string key = normalise(placement);
  std::string cacheKey = key + ":" + std::to_string(localBatch);
  auto cached = cache.find(cacheKey);
  if (cached != cache.end())
    return cached->second;
  StepTime time;
  auto measured = byPlacement.find(key);
  if (measured != byPlacement.end()) {
    time = interpolateLocal(measured->second, localBatch);
  } else {
    int nodes = 0, replicas = 0;
    for (int r : placement)
      if (r > 0) {
        ++nodes;
        replicas += r;
      }
    time = interpolateGrid(nodes, replicas, localBatch);
  }
  cache.emplace(std::move(cacheKey), time);
  return time;
}

std::pair<double, double> ApplicationModel::gradStats(double batch,
                                                      int epoch) const {
  epoch = std::max(epoch, 0);
  auto row = [&](const std::vector<ValidationRow> &rows) {
    return rows[std::min<size_t>(epoch, rows.size() - 1)];
  };
  const auto &validation = trace.validation;
  if (batch <= validation.begin()->first) {
    ValidationRow r = row(validation.begin()->second);
    return {r.gradSqr, r.gradVar};
  }
  if (batch >= validation.rbegin()->first) {
    ValidationRow r = row(validation.rbegin()->second);
    return {r.gradSqr, r.gradVar};
  }
  auto upper = validation.lower_bound(int64_t(std::ceil(batch)));
  if (double(upper->first) == batch) {
    ValidationRow r = row(upper->second);
    return {r.gradSqr, r.gradVar};
  }
  auto lower = std::prev(upper);
  ValidationRow lo = row(lower->second), hi = row(upper->second);
  double t = (batch - lower->first) / double(upper->first - lower->first);
  return {lo.gradSqr + t * (hi.gradSqr - lo.gradSqr),
          lo.gradVar + t * (hi.gradVar - lo.gradVar)};
}

double ApplicationModel::gain(double batch, int epoch) const {
  auto [sqr, var] = gradStats(batch, epoch);
  double scale = batch / double(initBatch());
  double denominator = var / scale + sqr;
  // No gradient signal measured: every sample counts the same.
  if (!(denominator > 0))
    return 1.0;
  return (var + sqr) / denominator;
}

BatchConfig ApplicationModel::configure(ArrayRef<int> placement,
                                        int64_t batch) const {
  int replicas = 0;
  for (int r : placement)
    replicas += std::max(r, 0);
  BatchConfig config;
  if (replicas == 0 || batch <= 0)
    return config;
  // Split as the study's simulator does: per-GPU batches up to the largest
  // measured one, gradient accumulation above it. The batch is capped
  // first: split uncapped, a request of 8192 where 512 is the largest
  // validated ran 1,024 samples in 256 accumulation steps of one.
  batch = std::min(batch, maxBatch());
  int64_t local = (batch + replicas - 1) / replicas;
  config.accumSteps = int((local + maxLocal - 1) / maxLocal) - 1;
  int64_t atomic = (local + config.accumSteps) / (config.accumSteps + 1);
  int64_t count = int64_t(replicas) * (config.accumSteps + 1);
  atomic = std::max<int64_t>(1, std::min<int64_t>(atomic, maxBatch() / count));
  config.atomicBatch = int(atomic);
  config.batch = atomic * count;
  StepTime step = stepTime(placement, config.atomicBatch);
  config.stepTime = step.step + config.accumSteps * (step.step - step.sync);
  return config;
}

double ApplicationModel::goodput(ArrayRef<int> placement, int64_t batch,
                                 int epoch) const {
  BatchConfig config = configure(placement, batch);
  if (config.batch == 0 || !(config.stepTime > 0))
    return 0;
  return gain(double(config.batch), epoch) / config.stepTime;
}

} // namespace heterps::autoscale
