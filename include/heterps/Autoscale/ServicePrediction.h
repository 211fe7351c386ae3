//===- ServicePrediction.h - Replays a service run in simulation -*- C++ -*-=//
//
// `heterps elastic predict` (docs/Autoscaler.md, "Measured against the
// simulator"): takes the state a finished `heterps elastic serve` left and
// simulates the same arrivals under the same plan (planAllocation, the same
// capacity, interval and resize cost), with each job's speed in a shape taken
// from what the service measured and its start, resize and finish pauses the
// medians measured. The predicted completion times, set beside the measured
// ones, say how far the simulator's model of the service (plans, pauses,
// speeds) is from the real thing.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_AUTOSCALE_SERVICEPREDICTION_H
#define HETERPS_AUTOSCALE_SERVICEPREDICTION_H

#include "heterps/Autoscale/Service.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace heterps::autoscale {

struct PredictOptions {
  /// 0 or below: the service's own, from its state.
  int capacity = 0;
  double intervalSeconds = 0, resizeCostSeconds = -1;
  /// The service's loop period: plans and observations happen on it.
  double pollSeconds = 0.5;
  /// Below 0: the medians measured in the run.
  double startupSeconds = -1, resizePauseSeconds = -1, finishSeconds = -1;
};

struct PredictedJob {
  std::string id;
  double submittedAt = 0; // seconds after the first submission
  double measuredJct = 0, predictedJct = 0;
  int measuredResizes = 0, predictedResizes = 0;
  int measuredStartWorkers = 0, predictedStartWorkers = 0;
  double relativeError() const {
    return measuredJct > 0 ? (predictedJct - measuredJct) / measuredJct : 0;
  }
};

struct Prediction {
  std::vector<PredictedJob> jobs;
  int capacity = 0;
  double intervalSeconds = 0, resizeCostSeconds = 0;
  double startupSeconds = 0, resizePauseSeconds = 0, finishSeconds = 0;
  double meanMeasuredJct = 0, meanPredictedJct = 0;
  double meanAbsoluteRelativeError = 0, maxAbsoluteRelativeError = 0;
  double measuredMakespan = 0, predictedMakespan = 0;
};

/// The samples per second of a job in a shape, as the run measured it: the
/// measured speed where the job ran in that shape, else the throughput
/// model fitted to its measurements (modelRate) scaled to them. 0 when the
/// job was never measured.
double measuredSamplesPerSecond(const ServiceJob &job, int workers,
                                int64_t batch);

/// Replays the run. Errors name the job that makes a replay meaningless:
/// one that did not succeed, has no length or was never measured.
llvm::Expected<Prediction> predictService(const ServiceState &state,
                                          const PredictOptions &options);

std::string predictionJson(const Prediction &prediction);
std::string predictionTable(const Prediction &prediction);

} // namespace heterps::autoscale

#endif // HETERPS_AUTOSCALE_SERVICEPREDICTION_H
