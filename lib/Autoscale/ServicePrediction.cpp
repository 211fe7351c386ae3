//===- ServicePrediction.cpp - Replays a service run in simulation --------===//
//
// The replay steps time as the service's loop does (one poll period at a
// time: arrivals, observations, a plan on a trigger or the interval), so
// that the only differences from the real run are the models: speeds per
// shape, the pause of a start and of a resize, and the loop's own timing.
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/ServicePrediction.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace llvm;

namespace heterps::autoscale {

static Error failure(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

double measuredSamplesPerSecond(const ServiceJob &job, int workers,
                                int64_t batch) {
  std::vector<double> scales;
  for (const RateSample &r : job.rates) {
    if (r.stepsPerSecond <= 0 || r.batch < 1 || r.workers < 1)
      continue;
    if (r.workers == workers && r.batch == batch)
      return r.stepsPerSecond * double(r.batch);
    double model = modelRate(job, r.workers, r.batch);
    if (model > 0)
      scales.push_back(r.stepsPerSecond * double(r.batch) / model);
  }
  double scale = medianSeconds(scales);
  return scale > 0 ? scale * modelRate(job, workers, batch) : 0;
}

namespace {

/// A job of the replay: the service's view of it plus what the simulation
/// alone knows.
struct Replayed {
  const ServiceJob *truth = nullptr;
  ServiceJob *view = nullptr; // in the simulated state
  double done = 0;            // samples trained
  double resumeAt = 0;        // the end of its current pause
  double trainedAt = -1;      // when its last sample was trained
  double shapeSince = -1;     // when it began to step in this shape
  int firstWorkers = 0;
};

int startWorkersOf(const ServiceState &state, const std::string &id) {
  for (const Decision &d : state.decisions)
    if (d.job == id && d.action == "start")
      return d.workers;
  return 0;
}

} // namespace

Expected<Prediction> predictService(const ServiceState &state,
                                    const PredictOptions &options) {
  Prediction out;
  out.capacity = options.capacity > 0 ? options.capacity : state.capacity;
  out.intervalSeconds = options.intervalSeconds > 0 ? options.intervalSeconds
                                                    : state.intervalSeconds;
  out.resizeCostSeconds = options.resizeCostSeconds >= 0
                              ? options.resizeCostSeconds
                              : state.resizeCostSeconds;
  if (out.capacity <= 0 || out.intervalSeconds <= 0)
    return failure("the state holds no plan (capacity and interval unknown): "
                   "the service never planned");
  if (state.jobs.empty())
    return failure("the state holds no job");

  std::vector<double> startups, pauses, finishes;
  double first = state.jobs.front().submittedAt, lastEnd = 0;
  for (const ServiceJob &job : state.jobs) {
    if (job.phase != "succeeded")
      return failure("job '" + job.id + "' ended " + job.phase +
                     ": a replay compares runs whose jobs all succeeded");
    if (job.samples <= 0)
      return failure("job '" + job.id + "' has no length in samples");
    if (measuredSamplesPerSecond(job, job.workers, job.batch) <= 0)
      return failure("job '" + job.id +
                     "' has no measured speed (it ran under a second or "
                     "ten steps in every shape)");
    first = std::min(first, job.submittedAt);
    lastEnd = std::max(lastEnd, job.endedAt);
    if (job.startupSeconds > 0)
      startups.push_back(job.startupSeconds);
    if (job.finishSeconds > 0)
      finishes.push_back(job.finishSeconds);
    pauses.insert(pauses.end(), job.resizePauses.begin(),
                  job.resizePauses.end());
  }
  out.startupSeconds = options.startupSeconds >= 0 ? options.startupSeconds
                                                   : medianSeconds(startups);
  if (out.startupSeconds < 0)
    out.startupSeconds = 0;
  out.resizePauseSeconds = options.resizePauseSeconds >= 0
                               ? options.resizePauseSeconds
                               : medianSeconds(pauses);
  if (out.resizePauseSeconds < 0)
    out.resizePauseSeconds = out.startupSeconds;
  out.finishSeconds = options.finishSeconds >= 0
                          ? options.finishSeconds
                          : std::max(0.0, medianSeconds(finishes));

  // The simulated service state: jobs appear on arrival, as from the inbox.
  ServiceState sim;
  sim.jobs.reserve(state.jobs.size());
  std::vector<Replayed> replayed;
  replayed.reserve(state.jobs.size());
  std::vector<size_t> order(state.jobs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return state.jobs[a].submittedAt < state.jobs[b].submittedAt;
  });
  size_t arrived = 0;

  PlanOptions planOptions;
  planOptions.capacity = out.capacity;
  const double dt = options.pollSeconds > 0 ? options.pollSeconds : 0.5;
  const double limit = 20 * (lastEnd - first) + 3600;
  // Each poll replans: a state spanning years (or edited so) ran for ever.
  constexpr double kMostPolls = 1e8;
  if (limit / dt > kMostPolls)
    return failure(formatv("the jobs span {0:F0} s from the first arrival to "
                           "the last end; a replay at one poll per {1} s "
                           "covers at most {2:F0} s",
                           lastEnd - first, dt, (kMostPolls * dt - 3600) / 20)
                       .str());
  double lastPlan = -1e18;
  bool trigger = true; // the start of the service
  size_t ended = 0;
  double t = 0;
  for (; ended < state.jobs.size(); t += dt) {
    if (t > limit)
      return failure(formatv("the replay did not finish in {0:F0} s of "
                             "simulated time",
                             limit)
                         .str());
    // Arrivals.
    while (arrived < order.size() &&
           state.jobs[order[arrived]].submittedAt - first <= t) {
      const ServiceJob &truth = state.jobs[order[arrived++]];
      ServiceJob job = truth.description();
      job.submittedAt = t;
      sim.jobs.push_back(std::move(job));
      trigger = true;
    }
    // The views may have moved: vectors grow on arrival.
    replayed.resize(sim.jobs.size());
    for (size_t i = 0; i < sim.jobs.size(); ++i) {
      replayed[i].view = &sim.jobs[i];
      if (!replayed[i].truth)
        for (const ServiceJob &truth : state.jobs)
          if (truth.id == sim.jobs[i].id)
            replayed[i].truth = &truth;
    }
    // Observations: resizes that took effect, speeds measured over 3 s.
    for (Replayed &r : replayed) {
      ServiceJob &job = *r.view;
      if (!job.active() || t < r.resumeAt)
        continue;
      if (!job.pendingResize.empty()) {
        job.pendingResize.clear();
        job.resizes++;
        job.resizePauses.push_back(out.resizePauseSeconds);
      }
      if (r.shapeSince < 0)
        r.shapeSince = r.resumeAt;
      double rate = measuredSamplesPerSecond(*r.truth, job.workers, job.batch) /
                    double(job.batch);
      if (measuresRate(t - r.shapeSince, int64_t(rate * (t - r.shapeSince))))
        job.recordRate(rate);
    }
    // A plan, as the service makes it.
    if (trigger || t - lastPlan >= out.intervalSeconds) {
      trigger = false;
      lastPlan = t;
      // The service's charge: measured pauses once there are some.
      planOptions.reallocationPenalty =
          std::min(1.0, chargedResizeCost(sim, out.resizeCostSeconds) /
                            out.intervalSeconds);
      Plan plan = planAllocation(sim, planOptions);
      for (const PlannedJob &p : plan.jobs) {
        auto it =
            std::find_if(replayed.begin(), replayed.end(),
                         [&](const Replayed &r) { return r.view->id == p.id; });
        ServiceJob &job = *it->view;
        if (job.phase == "queued" && p.workers > 0) {
          job.phase = "running";
          job.workers = p.workers;
          job.batch = p.batch;
          job.starts++;
          job.startedAt = t;
          it->resumeAt = t + out.startupSeconds;
          it->shapeSince = -1;
          it->firstWorkers = p.workers;
        } else if (job.active() && job.pendingResize.empty() &&
                   (p.workers != job.workers || p.batch != job.batch)) {
          job.workers = p.workers;
          job.batch = p.batch;
          job.pendingResize = "replay";
          it->resumeAt = t + out.resizePauseSeconds;
          it->shapeSince = -1;
        }
      }
    }
    // Training until the next poll.
    for (Replayed &r : replayed) {
      ServiceJob &job = *r.view;
      if (!job.active())
        continue;
      // Trained: it holds its slots while it finishes (a last checkpoint,
      // the report, the processes' exit).
      if (r.trainedAt >= 0) {
        if (r.trainedAt + out.finishSeconds < t + dt) {
          job.phase = "succeeded";
          job.endedAt = r.trainedAt + out.finishSeconds;
          ++ended;
          trigger = true;
        }
        continue;
      }
      double from = std::max(t, r.resumeAt), to = t + dt;
      if (from >= to)
        continue;
      double rate = measuredSamplesPerSecond(*r.truth, job.workers, job.batch);
      double left = double(job.samples) - r.done;
      if (rate > 0 && rate * (to - from) >= left) {
        r.trainedAt = from + left / rate;
        r.done = double(job.samples);
        if (r.trainedAt + out.finishSeconds < to) {
          job.phase = "succeeded";
          job.endedAt = r.trainedAt + out.finishSeconds;
          ++ended;
          trigger = true;
        }
      } else {
        r.done += rate * (to - from);
      }
    }
  }

  double absSum = 0;
  for (const ServiceJob &truth : state.jobs) {
    const Replayed &r =
        *std::find_if(replayed.begin(), replayed.end(), [&](const Replayed &x) {
          return x.view->id == truth.id;
        });
    PredictedJob p;
    p.id = truth.id;
    p.submittedAt = truth.submittedAt - first;
    p.measuredJct = truth.endedAt - truth.submittedAt;
    p.predictedJct = r.view->endedAt - r.view->submittedAt;
    p.measuredResizes = truth.resizes;
    p.predictedResizes = r.view->resizes;
    p.measuredStartWorkers = startWorkersOf(state, truth.id);
    p.predictedStartWorkers = r.firstWorkers;
    out.meanMeasuredJct += p.measuredJct;
    out.meanPredictedJct += p.predictedJct;
    absSum += std::fabs(p.relativeError());
    out.maxAbsoluteRelativeError =
        std::max(out.maxAbsoluteRelativeError, std::fabs(p.relativeError()));
    out.measuredMakespan =
        std::max(out.measuredMakespan, truth.endedAt - first);
    out.predictedMakespan = std::max(out.predictedMakespan, r.view->endedAt);
    out.jobs.push_back(p);
  }
  double n = double(out.jobs.size());
  out.meanMeasuredJct /= n;
  out.meanPredictedJct /= n;
  out.meanAbsoluteRelativeError = absSum / n;
  return out;
}

std::string predictionJson(const Prediction &p) {
  json::Array jobs;
  for (const PredictedJob &j : p.jobs)
    jobs.push_back(
        json::Object{{"id", j.id},
                     {"submitted_s", j.submittedAt},
                     {"measured_jct_s", j.measuredJct},
                     {"predicted_jct_s", j.predictedJct},
                     {"relative_error", j.relativeError()},
                     {"measured_resizes", j.measuredResizes},
                     {"predicted_resizes", j.predictedResizes},
                     {"measured_start_workers", j.measuredStartWorkers},
                     {"predicted_start_workers", j.predictedStartWorkers}});
  json::Object o{{"capacity", p.capacity},
                 {"interval_s", p.intervalSeconds},
                 {"resize_cost_s", p.resizeCostSeconds},
                 {"startup_s", p.startupSeconds},
                 {"resize_pause_s", p.resizePauseSeconds},
                 {"finish_s", p.finishSeconds},
                 {"mean_measured_jct_s", p.meanMeasuredJct},
                 {"mean_predicted_jct_s", p.meanPredictedJct},
                 {"mean_abs_relative_error", p.meanAbsoluteRelativeError},
                 {"max_abs_relative_error", p.maxAbsoluteRelativeError},
                 {"measured_makespan_s", p.measuredMakespan},
                 {"predicted_makespan_s", p.predictedMakespan},
                 {"jobs", std::move(jobs)}};
  return formatv("{0:2}", json::Value(std::move(o))).str();
}

std::string predictionTable(const Prediction &p) {
  std::string out =
      formatv("replay on {0} slots, interval {1:F0} s, resize cost {2:F1} s; "
              "measured pauses: start {3:F1} s, resize {4:F1} s, finish "
              "{5:F1} s\n",
              p.capacity, p.intervalSeconds, p.resizeCostSeconds,
              p.startupSeconds, p.resizePauseSeconds, p.finishSeconds)
          .str();
  out += formatv("{0,-16} {1,9} {2,13} {3,13} {4,7} {5,15} {6,15}\n", "job",
                 "submit s", "measured JCT", "predicted JCT", "error",
                 "resizes (m/p)", "started (m/p)")
             .str();
  for (const PredictedJob &j : p.jobs)
    out +=
        formatv("{0,-16} {1,9:F1} {2,13:F1} {3,13:F1} {4,6:F1}% {5,15} "
                "{6,15}\n",
                j.id, j.submittedAt, j.measuredJct, j.predictedJct,
                100 * j.relativeError(),
                formatv("{0}/{1}", j.measuredResizes, j.predictedResizes).str(),
                formatv("{0}/{1} workers", j.measuredStartWorkers,
                        j.predictedStartWorkers)
                    .str())
            .str();
  out += formatv("mean JCT: measured {0:F1} s, predicted {1:F1} s; mean "
                 "|error| {2:F1}%, max {3:F1}%; makespan measured {4:F1} s, "
                 "predicted {5:F1} s\n",
                 p.meanMeasuredJct, p.meanPredictedJct,
                 100 * p.meanAbsoluteRelativeError,
                 100 * p.maxAbsoluteRelativeError, p.measuredMakespan,
                 p.predictedMakespan)
             .str();
  return out;
}

} // namespace heterps::autoscale
