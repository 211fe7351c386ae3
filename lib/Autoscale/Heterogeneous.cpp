//===- Heterogeneous.cpp - Several device classes, any size ---------------===//
//
// Lagrangian relaxation of the capacity constraints with one price per
// device class: at prices lambda every job independently takes its option of
// largest profit - lambda . devices (or nothing), which gives an upper bound
// on the optimum (the dual). Subgradient steps (Polyak's rule, on capacity
// normalised to 1 per class) move the prices towards capacities that hold.
// At every price vector a greedy pass builds a feasible plan (jobs in order
// of reduced profit, each the best option that still fits); the best plan
// then gets a local search: change one job's option, or one job's and
// another's together so that the first fits. Every plan is feasible by
// construction, so the result always is.
//
//===----------------------------------------------------------------------===//

#include "AllocatorInternal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace heterps::autoscale;
using namespace heterps::autoscale::detail;

namespace {

constexpr int kMaxIterations = 300;
/// Pair moves cost jobs^2 x options^2; this caps their evaluations per solve.
constexpr int64_t kPairMoveBudget = 20'000'000;

struct Heuristic {
  const Problem &problem;
  size_t numJobs;
  int numClasses;
  std::vector<double> scale; // capacity per class, at least 1

  explicit Heuristic(const Problem &problem)
      : problem(problem), numJobs(problem.options.size()),
        numClasses(problem.numClasses), scale(numClasses) {
    for (int c = 0; c < numClasses; ++c)
      scale[c] = std::max(1, problem.capacity[c]);
  }

  double reducedProfit(const Option &option,
                       const std::vector<double> &price) const {
    double reduced = option.profit;
    for (int c = 0; c < numClasses; ++c)
      reduced -= price[c] * option.devices[c];
    return reduced;
  }

  double profit(const Picks &picks) const {
    double total = 0;
    for (size_t j = 0; j < numJobs; ++j)
      if (picks[j] >= 0)
        total += problem.options[j][picks[j]].profit;
    return total;
  }

  bool fits(const int *devices, const std::vector<int> &free) const {
    for (int c = 0; c < numClasses; ++c)
      if (devices[c] > free[c])
        return false;
    return true;
  }

  /// A feasible plan at `price`: jobs by decreasing reduced profit, each the
  /// option of largest reduced profit among those that still fit.
  Picks greedy(const std::vector<double> &price,
               const std::vector<double> &reduced,
               std::vector<size_t> &order) const {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return reduced[a] > reduced[b]; });
    std::vector<int> free = problem.capacity;
    Picks picks(numJobs, -1);
    for (size_t j : order) {
      const std::vector<Option> &options = problem.options[j];
      double best = -std::numeric_limits<double>::infinity();
      for (size_t o = 0; o < options.size(); ++o) {
        if (options[o].profit <= 0 || !fits(options[o].devices, free))
          continue;
        double r = reducedProfit(options[o], price);
        if (r > best) {
          best = r;
          picks[j] = static_cast<int>(o);
        }
      }
      if (picks[j] >= 0)
        for (int c = 0; c < numClasses; ++c)
          free[c] -= options[picks[j]].devices[c];
    }
    return picks;
  }

  bool improves(const Score &delta) const {
    constexpr double eps = 1e-12;
    if (problem.objective == Objective::MaxValue)
      return delta.value > eps;
    if (delta.met != 0)
      return delta.met > 0;
    if (std::abs(delta.cost) > eps)
      return delta.cost < 0;
    return delta.value > eps;
  }

  Score scoreOf(size_t j, int pick) const {
    return pick < 0 ? Score() : problem.options[j][pick].score;
  }
  const int *devicesOf(size_t j, int pick, const std::vector<int> &none) const {
    return pick < 0 ? none.data() : problem.options[j][pick].devices;
  }

  /// Local search: one job's option, then pairs; until nothing improves.
  void improve(Picks &picks) const {
    std::vector<int> none(numClasses, 0);
    std::vector<int> free = problem.capacity;
    for (size_t j = 0; j < numJobs; ++j)
      for (int c = 0; c < numClasses; ++c)
        free[c] -= devicesOf(j, picks[j], none)[c];
    int64_t pairBudget = kPairMoveBudget;
    std::vector<int> room(numClasses);
    for (int round = 0; round < 50; ++round) {
      bool changed = false;
      for (size_t j = 0; j < numJobs; ++j) {
        const std::vector<Option> &options = problem.options[j];
        const int *held = devicesOf(j, picks[j], none);
        Score current = scoreOf(j, picks[j]);
        int bestPick = picks[j];
        Score bestDelta;
        for (int o = -1; o < static_cast<int>(options.size()); ++o) {
          if (o == picks[j])
            continue;
          const int *want = devicesOf(j, o, none);
          bool fits = true;
          for (int c = 0; c < numClasses && fits; ++c)
            fits = want[c] <= free[c] + held[c];
          if (!fits)
            continue;
          Score delta = scoreOf(j, o) - current;
          if (improves(delta - bestDelta)) {
            bestDelta = delta;
            bestPick = o;
          }
        }
        if (bestPick != picks[j]) {
          for (int c = 0; c < numClasses; ++c)
            free[c] += held[c] - devicesOf(j, bestPick, none)[c];
          picks[j] = bestPick;
          changed = true;
        }
      }
      if (changed)
        continue;
      // Pairs: job j takes option o that does not fit; job i makes room.
      for (size_t j = 0; j < numJobs && !changed && pairBudget > 0; ++j) {
        const std::vector<Option> &options = problem.options[j];
        const int *heldJ = devicesOf(j, picks[j], none);
        for (int o = 0; o < static_cast<int>(options.size()) && !changed; ++o) {
          if (o == picks[j])
            continue;
          Score deltaJ = scoreOf(j, o) - scoreOf(j, picks[j]);
          if (problem.objective == Objective::MaxValue && deltaJ.value <= 0)
            continue; // the partner only loses value, so j must gain
          for (int c = 0; c < numClasses; ++c)
            room[c] = free[c] + heldJ[c] - options[o].devices[c];
          for (size_t i = 0; i < numJobs && !changed; ++i) {
            if (i == j || picks[i] < 0)
              continue;
            const int *heldI = devicesOf(i, picks[i], none);
            Score currentI = scoreOf(i, picks[i]);
            pairBudget -= problem.options[i].size() + 1;
            for (int b = -1; b < static_cast<int>(problem.options[i].size());
                 ++b) {
              if (b == picks[i])
                continue;
              const int *wantI = devicesOf(i, b, none);
              bool fits = true;
              for (int c = 0; c < numClasses && fits; ++c)
                fits = wantI[c] <= room[c] + heldI[c];
              if (!fits || !improves(deltaJ + (scoreOf(i, b) - currentI)))
                continue;
              for (int c = 0; c < numClasses; ++c)
                free[c] = room[c] + heldI[c] - wantI[c];
              picks[j] = o;
              picks[i] = b;
              changed = true;
              break;
            }
          }
        }
      }
      if (!changed)
        break;
    }
  }

  Picks solve(double &bound) const {
    Picks best(numJobs, -1);
    double bestProfit = 0;
    bound = std::numeric_limits<double>::infinity();
    std::vector<double> multiplier(numClasses, 0); // price x capacity
    std::vector<double> price(numClasses, 0);      // per device
    std::vector<double> reduced(numJobs);
    std::vector<size_t> order(numJobs);
    std::vector<int64_t> demand(numClasses);
    double stepScale = 2;
    int sinceDualImproved = 0;
    for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
      for (int c = 0; c < numClasses; ++c)
        price[c] = multiplier[c] / scale[c];
      // The relaxation: each job alone at these prices.
      double dual = 0;
      for (int c = 0; c < numClasses; ++c)
        dual += multiplier[c] * problem.capacity[c] / scale[c];
      std::fill(demand.begin(), demand.end(), 0);
      for (size_t j = 0; j < numJobs; ++j) {
        double top = 0;
        const Option *taken = nullptr;
        for (const Option &option : problem.options[j]) {
          double r = reducedProfit(option, price);
          if (r > top) {
            top = r;
            taken = &option;
          }
        }
        reduced[j] = top;
        dual += top;
        if (taken)
          for (int c = 0; c < numClasses; ++c)
            demand[c] += taken->devices[c];
      }
      if (iteration == 0 || dual < bound - 1e-12 * std::abs(bound)) {
        bound = dual;
        sinceDualImproved = 0;
      } else if (++sinceDualImproved >= 10) {
        stepScale /= 2;
        sinceDualImproved = 0;
      }
      Picks candidate = greedy(price, reduced, order);
      double candidateProfit = profit(candidate);
      if (candidateProfit > bestProfit) {
        bestProfit = candidateProfit;
        best = std::move(candidate);
      }
      if (bound - bestProfit <= 1e-9 * std::max(1.0, std::abs(bound)) ||
          stepScale < 1e-4)
        break;
      double norm = 0;
      std::vector<double> gradient(numClasses);
      for (int c = 0; c < numClasses; ++c) {
        gradient[c] = (demand[c] - problem.capacity[c]) / scale[c];
        // A free class with spare capacity has no direction to move.
        if (multiplier[c] <= 0 && gradient[c] < 0)
          gradient[c] = 0;
        norm += gradient[c] * gradient[c];
      }
      if (norm == 0)
        break; // the relaxation's plan is feasible and prices are tight
      double step = stepScale * (dual - bestProfit) / norm;
      for (int c = 0; c < numClasses; ++c)
        multiplier[c] = std::max(0.0, multiplier[c] + step * gradient[c]);
    }
    improve(best);
    return best;
  }
};

} // namespace

Picks heterps::autoscale::detail::solveLagrangian(const Problem &problem,
                                                  double &bound) {
  return Heuristic(problem).solve(bound);
}
