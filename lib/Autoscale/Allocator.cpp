//===- Allocator.cpp - Devices and batch sizes across jobs ----------------===//
//
// The public entry points: builds the reduced problem from a request, picks
// the solver, applies the hysteresis rule and explains the jobs left queued.
// The formulation is in docs/Autoscaler.md, section "The allocator".
//
//===----------------------------------------------------------------------===//

#include "heterps/Autoscale/Allocator.h"

#include "AllocatorInternal.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace heterps::autoscale;
using namespace heterps::autoscale::detail;

namespace {

/// Relative slack for comparing totals computed in different orders.
constexpr double kTolerance = 1e-9;

bool validCurrent(const AllocationJob &job) {
  return job.current >= 0 && job.current < static_cast<int>(job.choices.size());
}

/// A choice the allocator may use: one device count per class, none negative,
/// a finite value.
bool wellFormed(const JobChoice &choice, size_t numClasses) {
  if (choice.devices.size() != numClasses || !std::isfinite(choice.value) ||
      !std::isfinite(choice.costPerHour))
    return false;
  return std::all_of(choice.devices.begin(), choice.devices.end(),
                     [](int d) { return d >= 0; });
}

bool fits(const std::vector<int> &devices, const std::vector<int> &free) {
  for (size_t c = 0; c < free.size(); ++c)
    if (devices[c] > free[c])
      return false;
  return true;
}

std::vector<int> clampedCapacity(const AllocationRequest &request) {
  std::vector<int> capacity = request.capacity;
  for (int &c : capacity)
    c = std::max(c, 0);
  return capacity;
}

Score choiceScore(const AllocationRequest &request, size_t job, int choice) {
  const AllocationJob &j = request.jobs[job];
  Score score;
  score.value = effectiveValue(request, job, choice);
  score.cost = j.choices[choice].costPerHour;
  // A relative slack so that a floor set to a choice's own value is met.
  if (request.objective == Objective::MinCost && j.floor > 0 &&
      score.value >= j.floor * (1 - kTolerance))
    score.met = 1;
  return score;
}

/// The reduced problem over the jobs not in `heldOut`, on `capacity`.
/// `allOptions` keeps choices that cannot beat leaving the job queued (the
/// exhaustive search enumerates them too, as an independent check).
Problem buildProblem(const AllocationRequest &request,
                     const std::vector<int> &capacity,
                     const std::vector<bool> &heldOut, bool allOptions) {
  Problem problem;
  problem.objective = request.objective;
  problem.numClasses = static_cast<int>(capacity.size());
  problem.capacity = capacity;
  problem.options.resize(request.jobs.size());
  // MinCost as one scalar for the heuristic: one more floor met outweighs
  // any difference in cost.
  double bigM = 1;
  for (const AllocationJob &job : request.jobs) {
    double most = 0;
    for (const JobChoice &choice : job.choices)
      if (std::isfinite(choice.costPerHour))
        most = std::max(most, std::abs(choice.costPerHour));
    bigM += 2 * most;
  }
  Score nothing;
  for (size_t j = 0; j < request.jobs.size(); ++j) {
    if (heldOut[j])
      continue;
    const AllocationJob &job = request.jobs[j];
    for (size_t c = 0; c < job.choices.size(); ++c) {
      const JobChoice &choice = job.choices[c];
      if (!wellFormed(choice, capacity.size()) ||
          !fits(choice.devices, capacity))
        continue;
      Option option;
      option.choice = static_cast<int>(c);
      option.devices = choice.devices.data();
      option.score = choiceScore(request, j, static_cast<int>(c));
      if (!allOptions && !better(option.score, nothing, request.objective))
        continue;
      option.profit = request.objective == Objective::MaxValue
                          ? option.score.value
                          : option.score.met * bigM - option.score.cost;
      problem.options[j].push_back(option);
    }
  }
  return problem;
}

/// Per job, the request's choice index (or -1) for a solver's picks.
std::vector<int> toChoices(const Problem &problem, const Picks &picks) {
  std::vector<int> choices(picks.size(), -1);
  for (size_t j = 0; j < picks.size(); ++j)
    if (picks[j] >= 0)
      choices[j] = problem.options[j][picks[j]].choice;
  return choices;
}

Score scoreOf(const AllocationRequest &request,
              const std::vector<int> &choices) {
  Score total;
  for (size_t j = 0; j < choices.size(); ++j)
    if (choices[j] >= 0)
      total = total + choiceScore(request, j, choices[j]);
  return total;
}

/// Whether moving from the plan that keeps every running job (`keep`) to the
/// best plan is worth it: the hysteresis rule.
bool worthMoving(const Score &best, const Score &keep, Objective objective,
                 double hysteresis) {
  hysteresis = std::max(hysteresis, 0.0);
  auto slack = [](double x) { return kTolerance * std::max(1.0, std::abs(x)); };
  if (objective == Objective::MaxValue)
    return best.value >
           keep.value + hysteresis * std::abs(keep.value) + slack(keep.value);
  if (best.met != keep.met)
    return best.met > keep.met;
  if (std::abs(best.cost - keep.cost) > slack(keep.cost))
    return best.cost <
           keep.cost - hysteresis * std::abs(keep.cost) - slack(keep.cost);
  return best.value >
         keep.value + hysteresis * std::abs(keep.value) + slack(keep.value);
}

/// Shortest readable form: 5, 0.25, 1.5e+06.
std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", x);
  return text;
}

std::string className(const AllocationRequest &request, size_t c) {
  if (c < request.classNames.size() && !request.classNames[c].empty())
    return request.classNames[c];
  return "class " + std::to_string(c);
}

/// "4 devices of gpu.a" for one class, "4 gpu.a + 1 cpu" for several.
std::string describeDevices(const AllocationRequest &request,
                            const std::vector<int> &devices) {
  if (devices.size() == 1)
    return llvm::formatv("{0} device{1} of {2}", devices[0],
                         devices[0] == 1 ? "" : "s", className(request, 0));
  std::vector<std::string> parts;
  for (size_t c = 0; c < devices.size(); ++c)
    if (devices[c] != 0)
      parts.push_back(std::to_string(devices[c]) + " " + className(request, c));
  return parts.empty() ? "no devices" : llvm::join(parts, " + ");
}

/// "2 free" / "2 gpu.a + 0 cpu free".
std::string describeFree(const AllocationRequest &request,
                         const std::vector<int> &free) {
  if (free.size() == 1)
    return std::to_string(free[0]) + " free";
  // Every class, zeros included: the zeros are why a choice does not fit.
  std::vector<std::string> parts;
  for (size_t c = 0; c < free.size(); ++c)
    parts.push_back(std::to_string(free[c]) + " " + className(request, c));
  return llvm::join(parts, " + ") + " free";
}

/// Why job `j` ended up with nothing (or, MinCost, below its floor).
std::string reasonFor(const AllocationRequest &request, size_t j,
                      const std::vector<int> &capacity,
                      const std::vector<int> &freeAfter, bool keptCurrent) {
  const AllocationJob &job = request.jobs[j];
  bool minCost = request.objective == Objective::MinCost;
  // As the score reads a floor: NaN is none.
  if (minCost && !(job.floor > 0))
    return "no floor to meet: left queued to save cost";
  // The choices that would serve: well-formed, worth more than nothing and
  // for MinCost up to the floor, their value after the re-allocation
  // penalty, as the allocator weighs them. A choice worth 0 named as the
  // smallest gave "needs at least 1 device" to a job whose useful choice
  // needs 8.
  const JobChoice *smallest = nullptr;
  int64_t smallestTotal = std::numeric_limits<int64_t>::max();
  bool anyWellFormed = false, fitsCluster = false, fitsFree = false;
  double bestValue = -std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < job.choices.size(); ++c) {
    const JobChoice &choice = job.choices[c];
    if (!wellFormed(choice, capacity.size()))
      continue;
    anyWellFormed = true;
    const double value = effectiveValue(request, j, int(c));
    bestValue = std::max(bestValue, value);
    if (!(value > 0) || (minCost && value < job.floor * (1 - kTolerance)))
      continue;
    int64_t total = 0;
    for (int d : choice.devices)
      total += d;
    if (total < smallestTotal) {
      smallestTotal = total;
      smallest = &choice;
    }
    fitsCluster |= fits(choice.devices, capacity);
    fitsFree |= fits(choice.devices, freeAfter);
  }
  if (job.choices.empty())
    return "no allowed choices";
  if (!anyWellFormed)
    return llvm::formatv("no well-formed choice (each needs {0} non-negative "
                         "device counts, one per class)",
                         capacity.size());
  std::string prefix = minCost ? "floor " + number(job.floor) + " unmet: " : "";
  if (!smallest)
    return minCost ? prefix + "no choice reaches it (best value " +
                         number(bestValue) + ")"
                   : "no choice has a positive value";
  if (!fitsCluster)
    return prefix + "needs at least " +
           describeDevices(request, smallest->devices) + ", " +
           (capacity.size() == 1 ? "only " : "") +
           describeFree(request, capacity) + " in all";
  if (!fitsFree)
    return prefix + "needs at least " +
           describeDevices(request, smallest->devices) + ", " +
           describeFree(request, freeAfter) +
           (minCost ? " after the other floors" : " after higher-value jobs");
  if (keptCurrent)
    return "running jobs kept their devices (hysteresis)";
  return prefix + "left out by the heuristic (devices fit)";
}

} // namespace

double heterps::autoscale::effectiveValue(const AllocationRequest &request,
                                          size_t job, int choice) {
  const AllocationJob &j = request.jobs[job];
  double value = j.choices[choice].value;
  if (validCurrent(j) && choice != j.current)
    value *= 1 - (j.reallocationPenalty >= 0 ? j.reallocationPenalty
                                             : request.reallocationPenalty);
  return value;
}

double heterps::autoscale::reallocationPenaltyAfter(double age,
                                                    int reallocations,
                                                    double delay) {
  age = std::max(age, 0.0);
  if (!(age + delay > 0))
    return 1;
  return 1 - std::max(age - reallocations * delay, 0.0) / (age + delay);
}

std::string
heterps::autoscale::validateAllocation(const AllocationRequest &request,
                                       const AllocationResult &result) {
  if (result.choice.size() != request.jobs.size())
    return llvm::formatv("{0} choices for {1} jobs", result.choice.size(),
                         request.jobs.size());
  std::vector<int> used(request.capacity.size(), 0);
  for (size_t j = 0; j < request.jobs.size(); ++j) {
    int c = result.choice[j];
    if (c < 0)
      continue;
    const AllocationJob &job = request.jobs[j];
    if (c >= static_cast<int>(job.choices.size()))
      return llvm::formatv("job {0}: choice {1} out of range", job.id, c);
    if (!wellFormed(job.choices[c], used.size()))
      return llvm::formatv("job {0}: choice {1} is malformed", job.id, c);
    for (size_t k = 0; k < used.size(); ++k)
      used[k] += job.choices[c].devices[k];
  }
  for (size_t k = 0; k < used.size(); ++k)
    if (used[k] > std::max(request.capacity[k], 0))
      return llvm::formatv("{0}: {1} used, capacity {2}", className(request, k),
                           used[k], request.capacity[k]);
  return "";
}

namespace {

enum class Solver { Auto, Exhaustive };

/// Solves the problem over the jobs not held out; returns request choices.
std::vector<int> solve(const AllocationRequest &request,
                       const std::vector<int> &capacity,
                       const std::vector<bool> &heldOut, Solver solver,
                       AllocationMethod &method, double &bound) {
  bool exhaustive = solver == Solver::Exhaustive;
  Problem problem = buildProblem(request, capacity, heldOut, exhaustive);
  Picks picks;
  bound = std::numeric_limits<double>::quiet_NaN();
  if (exhaustive) {
    method = AllocationMethod::Exhaustive;
    picks = solveExhaustive(problem);
  } else if (problem.numClasses == 1 &&
             int64_t(problem.options.size()) <=
                 request.exactTableCells / (int64_t(capacity[0]) + 1)) {
    method = AllocationMethod::SingleClassDP;
    picks = solveSingleClassExact(problem);
  } else if (problem.numClasses == 1) {
    method = AllocationMethod::Lagrangian;
    picks = solveLagrangian(problem, bound);
  } else {
    // The exact program's time is states x options; keep it to about a second.
    int64_t states = multiClassStates(capacity);
    int64_t options = 0;
    for (const auto &jobOptions : problem.options)
      options += static_cast<int64_t>(jobOptions.size()) + 1;
    bool small = states <= request.exactStateLimit &&
                 (options == 0 || states <= (int64_t(300) << 20) / options);
    if (small) {
      method = AllocationMethod::MultiClassDP;
      picks = solveMultiClassExact(problem);
    } else {
      method = AllocationMethod::Lagrangian;
      picks = solveLagrangian(problem, bound);
    }
  }
  return toChoices(problem, picks);
}

AllocationResult allocateWith(const AllocationRequest &request, Solver solver) {
  AllocationResult result;
  size_t numJobs = request.jobs.size();
  std::vector<int> capacity = clampedCapacity(request);
  std::vector<bool> heldOut(numJobs, false);
  double bound;
  result.choice =
      solve(request, capacity, heldOut, solver, result.method, bound);
  // An exact method's bound is its plan's value.
  const double bestValue = scoreOf(request, result.choice).value;

  // The plan that keeps every running job where it is, the others placed
  // in what is left; taken unless the best plan beats it by the hysteresis.
  std::vector<int> keepCapacity = capacity;
  bool anyRunning = false;
  for (size_t j = 0; j < numJobs; ++j) {
    const AllocationJob &job = request.jobs[j];
    if (!validCurrent(job) ||
        !wellFormed(job.choices[job.current], capacity.size()))
      continue;
    anyRunning = true;
    heldOut[j] = true;
    for (size_t c = 0; c < capacity.size(); ++c)
      keepCapacity[c] -= job.choices[job.current].devices[c];
  }
  bool keepFits = std::all_of(keepCapacity.begin(), keepCapacity.end(),
                              [](int c) { return c >= 0; });
  if (anyRunning && keepFits) {
    AllocationMethod keepMethod;
    double keepBound;
    std::vector<int> keep =
        solve(request, keepCapacity, heldOut, solver, keepMethod, keepBound);
    for (size_t j = 0; j < numJobs; ++j)
      if (heldOut[j])
        keep[j] = request.jobs[j].current;
    if (!worthMoving(scoreOf(request, result.choice), scoreOf(request, keep),
                     request.objective, request.hysteresis)) {
      result.choice = std::move(keep);
      result.keptCurrent = true;
    }
  }

  // Totals.
  result.used.assign(capacity.size(), 0);
  bool anyJobs = false;
  for (size_t j = 0; j < numJobs; ++j) {
    int c = result.choice[j];
    if (c < 0)
      continue;
    anyJobs = true;
    const JobChoice &choice = request.jobs[j].choices[c];
    for (size_t k = 0; k < capacity.size(); ++k)
      result.used[k] += choice.devices[k];
  }
  Score total = scoreOf(request, result.choice);
  result.value = total.value;
  result.costPerHour = total.cost;
  if (!anyJobs && result.method != AllocationMethod::Exhaustive)
    result.method = AllocationMethod::Empty;
  // The best plan's bound holds whichever plan was taken: set to the kept
  // plan's value, it fell below a plan the allocator had found.
  if (request.objective == Objective::MaxValue)
    result.bound =
        std::max(std::isfinite(bound) ? bound : bestValue, result.value);

  // Feasibility and reasons.
  std::vector<int> freeAfter(capacity.size());
  for (size_t k = 0; k < capacity.size(); ++k)
    freeAfter[k] = capacity[k] - result.used[k];
  result.reasons.assign(numJobs, "");
  for (size_t j = 0; j < numJobs; ++j) {
    const AllocationJob &job = request.jobs[j];
    bool floorUnmet = request.objective == Objective::MinCost &&
                      job.floor > 0 &&
                      (result.choice[j] < 0 ||
                       choiceScore(request, j, result.choice[j]).met == 0);
    if (floorUnmet)
      result.feasible = false;
    if (result.choice[j] < 0 || floorUnmet) {
      // What the job holds below its floor is free to it.
      std::vector<int> freeToJob = freeAfter;
      if (result.choice[j] >= 0)
        for (size_t k = 0; k < capacity.size(); ++k)
          freeToJob[k] += job.choices[result.choice[j]].devices[k];
      result.reasons[j] =
          reasonFor(request, j, capacity, freeToJob, result.keptCurrent);
    }
  }
  return result;
}

} // namespace

AllocationResult
heterps::autoscale::allocate(const AllocationRequest &request) {
  return allocateWith(request, Solver::Auto);
}

AllocationResult
heterps::autoscale::allocateExhaustively(const AllocationRequest &request) {
  return allocateWith(request, Solver::Exhaustive);
}

Score heterps::autoscale::detail::totalScore(const Problem &problem,
                                             const Picks &picks) {
  Score total;
  for (size_t j = 0; j < picks.size(); ++j)
    if (picks[j] >= 0)
      total = total + problem.options[j][picks[j]].score;
  return total;
}
