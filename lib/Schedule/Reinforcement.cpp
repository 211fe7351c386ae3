//===- Reinforcement.cpp - The HeterPS strategy: LSTM policy + REINFORCE --===//
//
// The policy reads the layers in topological order and emits a device class
// for each; the cost model scores the placement. Reward: -cost per million
// samples relative to the best heuristic plan, or a penalty growing with the
// throughput shortfall when the target is missed. The baseline is a moving
// average of the rewards. As practical systems do, the search is seeded with
// the heuristic plans (greedy and every single-class placement, which
// includes cpu-only and gpu-only) and the best plans seen are finished with
// local improvement (see `finish` below). Everything is driven by one seeded
// std::mt19937_64, so runs are reproducible.
//
//===----------------------------------------------------------------------===//

#include "LSTMPolicy.h"
#include "Strategies.h"

#include <cmath>
#include <limits>
#include <map>

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;

/// Per-layer policy inputs: log-scaled work and traffic, the layer kind, the
/// relative cost of the layer on each class and the position in the graph.
/// Appends [begin, end) to `windows` (kept sorted by the callers, which add
/// in layer order), merging it with the last window when they overlap.
/// Returns how many layers the union grew by.
static unsigned addWindow(std::vector<std::pair<unsigned, unsigned>> &windows,
                          unsigned begin, unsigned end) {
  if (!windows.empty() && windows.back().second >= begin) {
    unsigned grown =
        std::max(end, windows.back().second) - windows.back().second;
    windows.back().second = std::max(end, windows.back().second);
    return grown;
  }
  windows.push_back({begin, end});
  return end - begin;
}

namespace {
/// Results of one of rl's deterministic refinements (a repair, a trade, a
/// neighbourhood search) by the plan it started from (placement and
/// replicas, which determine the plan) and a floor. The local improvement
/// meets the same plans again and again: trade's rounds, every step of a
/// lifting chain, and the two finishes (sampled and seed plans) that often
/// converge. Dropped whole when it would hold more than kMaxLayers layer
/// entries, so deep graphs keep a bounded footprint.
template <typename Result> class PlanMemo {
public:
  template <typename Compute>
  Result get(const Evaluation &plan, double floor, Compute compute) {
    std::vector<unsigned> placement = plan.classOfLayer;
    for (const cost::StagePlan &stage : plan.stages)
      placement.push_back(stage.replicas);
    Key key{std::move(placement), floor};
    if (auto known = results.find(key); known != results.end())
      return known->second;
    Result result = compute();
    if (layers + key.first.size() > kMaxLayers) {
      results.clear();
      layers = 0;
    }
    layers += key.first.size();
    results.emplace(std::move(key), result);
    return result;
  }

private:
  static constexpr size_t kMaxLayers = size_t(1) << 22;
  using Key = std::pair<std::vector<unsigned>, double>;
  std::map<Key, Result> results;
  size_t layers = 0;
};
} // namespace

static std::vector<double> layerFeatures(const CostModel &model,
                                         unsigned &featureSize) {
  unsigned n = model.numLayers(), numCls = model.numClasses();
  featureSize = 5 + cost::kNumLayerKinds + numCls + 1;
  std::vector<double> features;
  features.reserve(size_t(n) * featureSize);
  auto logScaled = [](double value, double decades) {
    return std::log10(1.0 + value) / decades;
  };
  for (unsigned l = 0; l != n; ++l) {
    const cost::Layer &layer = model.graph().layers[l];
    features.push_back(logScaled(layer.forwardFlopsPerSample, 10));
    features.push_back(logScaled(layer.memoryBytesPerSample, 8));
    features.push_back(logScaled(layer.parameterBytes, 10));
    features.push_back(
        logScaled(layer.lookupsPerSample * layer.embeddingRowBytes, 6));
    features.push_back(logScaled(layer.outputBytesPerSample, 8));
    for (unsigned k = 0; k != cost::kNumLayerKinds; ++k)
      features.push_back(static_cast<unsigned>(layer.kind) == k ? 1.0 : 0.0);
    // Device-seconds times price, relative to the cheapest class, in
    // decades (0 = cheapest).
    std::vector<double> dollars(numCls);
    double cheapest = std::numeric_limits<double>::infinity();
    for (unsigned c = 0; c != numCls; ++c) {
      dollars[c] =
          (model.layerWorkSeconds(l, c) + model.layerOverheadSeconds(c) +
           model.layerParameterServerSeconds(l, c, 1)) *
              model.cluster().classes[c].pricePerHour +
          1e-30;
      cheapest = std::min(cheapest, dollars[c]);
    }
    for (unsigned c = 0; c != numCls; ++c)
      features.push_back(std::min(std::log10(dollars[c] / cheapest), 5.0) / 5);
    features.push_back(double(l) / n);
  }
  return features;
}

/// The work the local improvement's exact searches may take (their
/// maxSteps): a search costs about slots x layers^2 table steps, a window
/// width^2, but where the class counts bind, the labels of the
/// label-setting DP can multiply without bound: ResNet-20 on a four-class
/// cluster of small memories searched for more than 25 minutes. Past its
/// budget a search keeps the best placement of the floors it finished.
constexpr double kSearchSteps = 1e8, kWindowSteps = 1e7;

Expected<Evaluation>
detail::solveReinforcement(const CostModel &model, const Objective &objective,
                           const StrategyOptions &options) {
  double target = objective.targetThroughput;
  unsigned n = model.numLayers(), numCls = model.numClasses();

  // Seeds: the heuristics and every single-class placement.
  std::optional<Evaluation> bestSeed;
  auto consider = [](std::optional<Evaluation> &best, Evaluation plan) {
    if (!best || isBetter(plan, *best))
      best = std::move(plan);
  };
  if (Expected<Evaluation> greedy = solveGreedy(model, objective, options))
    consider(bestSeed, std::move(*greedy));
  else
    return greedy.takeError();
  for (unsigned c = 0; c != numCls; ++c)
    consider(bestSeed, model.evaluate(std::vector<unsigned>(n, c), target));
  // With one class there is one placement, and the seed is it: neither
  // the policy nor the local improvement has anything to choose (on a model
  // of 15,000 layers the episodes alone took about 40 minutes).
  if (numCls == 1)
    return std::move(*bestSeed);

  // Rewards are relative to the seed's cost so that the learning rate does
  // not depend on the scale of prices.
  double referenceCost =
      bestSeed->feasible
          ? bestSeed->costPerMillionSamples
          : cost::costPerMillionSamples(bestSeed->pricePerHour, target);
  if (!(referenceCost > 0) || !std::isfinite(referenceCost))
    referenceCost = 1;
  auto reward = [&](const Evaluation &plan) {
    if (plan.feasible)
      return -plan.costPerMillionSamples / referenceCost;
    // The penalty grows with how far the plan misses: throughput shortfall,
    // but also overused class counts, so that the policy learns to use fewer
    // stages when every stage meets the target but the cluster is too small.
    return -options.infeasiblePenalty * (1.0 + violation(model, plan, target));
  };

  std::mt19937_64 rng(options.seed);
  unsigned featureSize = 0;
  std::vector<double> features = layerFeatures(model, featureSize);
  // On deep graphs each policy step decides a run of layers, fed the mean
  // of their features; the run's layers take its class.
  unsigned steps = std::min(n, std::max(1u, options.maxPolicySteps));
  auto firstLayer = [&](unsigned step) {
    return static_cast<unsigned>(uint64_t(step) * n / steps);
  };
  if (steps != n) {
    std::vector<double> runs(size_t(steps) * featureSize, 0.0);
    for (unsigned s = 0; s != steps; ++s) {
      unsigned begin = firstLayer(s), end = firstLayer(s + 1);
      for (unsigned l = begin; l != end; ++l)
        for (unsigned f = 0; f != featureSize; ++f)
          runs[size_t(s) * featureSize + f] +=
              features[size_t(l) * featureSize + f] / (end - begin);
    }
    features = std::move(runs);
  }
  auto placementOf = [&](const std::vector<unsigned> &actions) {
    if (steps == n)
      return actions;
    std::vector<unsigned> classOfLayer(n);
    for (unsigned s = 0; s != steps; ++s)
      std::fill(classOfLayer.begin() + firstLayer(s),
                classOfLayer.begin() + firstLayer(s + 1), actions[s]);
    return classOfLayer;
  };
  LSTMPolicy policy(featureSize, std::max(1u, options.hiddenSize), numCls, rng);

  std::optional<Evaluation> bestSampled;
  double baseline = 0;
  bool baselineSet = false;
  unsigned perUpdate = std::max(1u, options.episodesPerUpdate);
  std::vector<LSTMPolicy::Episode> batch;
  std::vector<double> rewards;
  for (unsigned done = 0; done < options.episodes;) {
    batch.clear();
    rewards.clear();
    for (unsigned e = 0; e != perUpdate && done < options.episodes;
         ++e, ++done) {
      batch.push_back(policy.sample(features, steps, rng));
      Evaluation plan =
          model.evaluate(placementOf(batch.back().actions), target);
      rewards.push_back(reward(plan));
      consider(bestSampled, std::move(plan));
    }
    double mean = 0;
    for (double r : rewards)
      mean += r;
    mean /= rewards.size();
    if (!baselineSet) {
      baseline = mean;
      baselineSet = true;
    }
    // Advantages are scaled by the spread of the batch's rewards so that
    // the step size does not depend on how different the placements are.
    double variance = 0;
    for (double r : rewards)
      variance += (r - baseline) * (r - baseline);
    double scale = 1.0 / (std::sqrt(variance / rewards.size()) + 1e-3);
    for (unsigned e = 0, end = batch.size(); e != end; ++e)
      policy.accumulateGradient(batch[e], (rewards[e] - baseline) * scale,
                                options.entropyWeight);
    policy.applyGradient(options.learningRate, batch.size());
    baseline = 0.9 * baseline + 0.1 * mean;

    if (stopRequested(options))
      return stoppedError();
    if (options.progress) {
      const Evaluation &best = bestSampled && isBetter(*bestSampled, *bestSeed)
                                   ? *bestSampled
                                   : *bestSeed;
      options.progress(done, best.feasible
                                 ? best.costPerMillionSamples
                                 : std::numeric_limits<double>::infinity());
    }
  }

  // Local improvement, until nothing helps (docs/Planning.md, "rl"):
  //  1. move runs of layers to other classes (LocalSearch.cpp), which also
  //     repairs infeasible plans by shrinking their violation;
  //  2. on small plans, re-place all stages exactly within the neighbourhood
  //     of the plan's sequence of stage classes: any stage may be dropped or
  //     split in up to three by stages of other classes, and one stage of
  //     any class may be inserted between two stages or at either end; all
  //     boundaries are free; on larger plans, an exact re-cut of the plan's
  //     sequence of stage classes with the class counts;
  //  3. windowed exact re-placement: slide a window over the layers (fixed
  //     width, and spans of up to three consecutive stages) and re-place the
  //     layers inside it exactly, any classes and stages, with the rest of
  //     the plan fixed; stages may grow across the window's edges.
  std::optional<ExactPlacementSearch> exact;
  // The ordered slots of a re-cut of `plan`: its stage classes in order,
  // with every other class between two stages and at both ends.
  auto sequenceSlots = [&](const Evaluation &plan) {
    std::vector<unsigned> slots;
    auto others = [&](unsigned before, unsigned after) {
      for (unsigned c = 0; c != numCls; ++c)
        if (c != before && c != after)
          slots.push_back(c);
    };
    for (size_t s = 0, e = plan.stages.size(); s != e; ++s) {
      others(s ? plan.stages[s - 1].deviceClass : numCls,
             plan.stages[s].deviceClass);
      slots.push_back(plan.stages[s].deviceClass);
    }
    others(plan.stages.back().deviceClass, numCls);
    return slots;
  };
  std::vector<unsigned> lastRecut;
  // Memoised: the two finishes often meet the same plans.
  PlanMemo<std::optional<Evaluation>> neighbourhoods;
  auto neighbourhood =
      [&](const Evaluation &plan) -> std::optional<Evaluation> {
    std::vector<unsigned> slots;
    auto anyClass = [&] {
      for (unsigned c = 0; c != numCls; ++c)
        slots.push_back(c);
    };
    anyClass();
    for (const cost::StagePlan &stage : plan.stages) {
      for (unsigned piece = 0; piece != 3; ++piece) {
        if (piece)
          anyClass();
        slots.push_back(stage.deviceClass);
      }
      anyClass();
    }
    // This costs about slots x layers^2 table steps, more when class counts
    // bind (its label-setting DP); past this budget (deep models with more
    // than a few stages) it can run for minutes, and the windows below do
    // the work.
    constexpr double kExactBudget = 1e6;
    if (static_cast<double>(slots.size()) * n * n <= kExactBudget)
      return neighbourhoods.get(plan, 0, [&] {
        return exact->cheapest(slots, /*ordered=*/true, kSearchSteps);
      });
    // Past it, an exact re-cut of the plan as a whole, with the counts: its
    // sequence of stage classes kept in order, any stage may be dropped,
    // one stage of another class may be inserted between two stages or at
    // either end (sequenceSlots), every boundary moves. Repeated blocks (as
    // in ShuffleNet or GoogLeNet) put many stages at about the same
    // throughput, and a better plan then moves every boundary at once or
    // trades devices between distant stages: no window frees that much,
    // lifting frees at most half the model, and the priced re-cut relaxes
    // the counts, whose shadow prices need not reach the integer optimum.
    // Also where the plan uses every device of a class (the search then
    // runs its label-setting DP): with only the plan's own stage classes as
    // slots, a cheaper plan on a class it does not use was out of reach
    // (ShuffleNet on four small classes: 1.54x dp's cost). Once per plan.
    if (!plan.feasible || plan.classOfLayer == lastRecut)
      return std::nullopt;
    lastRecut = plan.classOfLayer;
    // Too many slots for the budget: the plan's own stage classes, whose
    // boundaries still all move.
    constexpr double kRecutBudget = 4e6;
    auto affordable = [&](llvm::ArrayRef<unsigned> slots) {
      return static_cast<double>(slots.size()) * n * n <= kRecutBudget;
    };
    std::vector<unsigned> recutSlots = sequenceSlots(plan);
    if (!affordable(recutSlots)) {
      recutSlots.clear();
      for (const cost::StagePlan &stage : plan.stages)
        recutSlots.push_back(stage.deviceClass);
    }
    if (!affordable(recutSlots))
      return std::nullopt;
    // What the search really costs is its floors times their steps, plus
    // its labels whenever the cheapest re-cut ignoring the counts overuses
    // a class, even if the plan itself leaves devices free; the labels can
    // multiply far past slots x layers^2. So the work is bounded instead
    // (well under a second; docs/benchmarks/placement.md): past it the
    // search keeps the best plan of the floors it finished.
    return neighbourhoods.get(plan, 0, [&] {
      return exact->cheapest(recutSlots, /*ordered=*/true, kSearchSteps);
    });
  };
  // One pass of windows; true when it improved the plan. Each window costs
  // about width^2 table steps, so a pass is linear in the depth of the model.
  auto windows = [&](Evaluation &plan) {
    constexpr unsigned kWidth = 24, kStride = kWidth / 2, kStagesPerWindow = 3,
                       kMaxWindow = 160, kMaxUnion = 128;
    bool improved = false;
    auto tryWindows = [&](llvm::ArrayRef<std::pair<unsigned, unsigned>> free) {
      std::optional<Evaluation> refined =
          exact->cheapestAround(plan.classOfLayer, free, 0, {}, kWindowSteps);
      if (refined && isCloser(model, *refined, plan, target)) {
        plan = std::move(*refined);
        improved = true;
      }
    };
    for (unsigned begin = 0; begin < n; begin += kStride)
      tryWindows({{begin, std::min(n, begin + kWidth)}});
    // Stage spans: enough to move both boundaries of a stage anywhere, drop
    // it or re-split it, however long it is. The stage list changes as
    // windows improve the plan, so its bounds are re-read each time.
    for (size_t s = 0; s < plan.stages.size(); ++s) {
      size_t last = std::min(plan.stages.size(), s + kStagesPerWindow) - 1;
      unsigned begin = plan.stages[s].begin, end = plan.stages[last].end;
      if (end - begin > kWidth && end - begin <= kMaxWindow)
        tryWindows({{begin, end}});
    }
    // The plan's throughput is its slowest stage or boundary; when several
    // are (nearly) as slow, no one window raises it. Free every stage within
    // a factor of the slowest, with its neighbours, at once.
    std::vector<double> factors = {1 + 1e-9, 1.02, 1.1};
    if (!plan.feasible && plan.throughput > 0)
      factors.insert(factors.begin(), target / plan.throughput);
    for (double factor : factors) {
      std::vector<std::pair<unsigned, unsigned>> free;
      unsigned total = 0;
      size_t numStages = plan.stages.size();
      for (size_t s = 0; s != numStages; ++s) {
        bool slow = plan.stages[s].throughput <= plan.throughput * factor;
        bool slowBoundary =
            s + 1 != numStages && model.batchSize() / plan.boundarySeconds[s] <=
                                      plan.throughput * factor;
        if (!slow && !slowBoundary)
          continue;
        unsigned begin = plan.stages[s ? s - 1 : 0].begin;
        unsigned end = plan.stages[std::min(numStages - 1, s + 1)].end;
        total += addWindow(free, begin, end);
      }
      if (free.empty() || total > kMaxUnion)
        break;
      tryWindows(free);
    }
    return improved;
  };
  // Repairs with the true counts (`windows` until the plan keeps them),
  // memoised (PlanMemo): trade's rounds and lifting's chain meet the same
  // priced plans again and again (ctr200 on a five-class cluster: 3,072
  // repairs of 271 distinct plans, 87 of rl's 100 s).
  PlanMemo<Evaluation> repairs;
  auto repair = [&](const Evaluation &plan) {
    return repairs.get(plan, 0, [&] {
      Evaluation repaired = plan;
      for (unsigned pass = 0; pass != 4 && !repaired.feasible; ++pass)
        if (!windows(repaired))
          break;
      return repaired;
    });
  };
  // Device trading (a Lagrangian relaxation of the class counts). A plan
  // can overuse a class while a cheaper, feasible one exists that no window
  // reaches: the devices one part of the plan needs are held by stages far
  // away, which would have to move to a third class, and so on. Give every
  // device of each class a shadow price, let the windows re-place their
  // layers to minimise replicas x (price + shadow price) with the counts
  // not enforced, and raise the shadow price of each overused class (lower
  // it, down to 0, for classes with devices to spare) in proportion to the
  // overuse after each sweep: a projected subgradient step on the dual. All
  // windows see the same prices, so they trade devices consistently across
  // the whole plan without solving it globally. The first round starts
  // with a priced re-cut of the whole plan (sequenceSlots), then slides priced
  // windows over it; a plan that still overuses a class is repaired with
  // the true counts (`repair`). Returns the best plan met: with `floor`
  // 0, the closest to feasible, then the cheapest per sample (finish uses
  // it when the windows cannot repair a plan); with a floor, the cheapest
  // feasible plan whose stages and boundaries all run faster than it (dp's
  // DP(floor), locally: lifting uses it to re-tighten each lifted plan).
  auto tradeOnce = [&](const Evaluation &start,
                       double floor) -> std::optional<Evaluation> {
    // Priced windows do not carry count labels, so they can be twice as
    // wide as the windows above for the same cost.
    constexpr unsigned kWidth = 48, kStride = kWidth / 2, kStagesPerWindow = 3,
                       kMaxWindow = 160, kRounds = 40, kPatience = 8;
    const cluster::ClusterSpec &cluster = model.cluster();
    std::vector<double> shadow(numCls, 0.0);
    auto shortfall = [&](const Evaluation &plan) {
      double total = 0;
      auto below = [&](double throughput) {
        if (throughput < target)
          return 1.0 - throughput / target;
        // At a floor, running at it is a (tiny) shortfall too.
        return floor > 0 && throughput <= floor
                   ? 1e-9 + 1.0 - throughput / floor
                   : 0.0;
      };
      for (const cost::StagePlan &stage : plan.stages)
        total += stage.fitsMemory ? below(stage.throughput) : 1.0;
      for (double seconds : plan.boundarySeconds)
        total += below(model.batchSize() / seconds);
      return total;
    };
    auto lagrangian = [&](const Evaluation &plan) {
      double total = 0;
      for (const cost::StagePlan &stage : plan.stages)
        total +=
            stage.replicas * (cluster.classes[stage.deviceClass].pricePerHour +
                              shadow[stage.deviceClass]);
      return total;
    };
    Evaluation current = start;
    std::optional<Evaluation> best;
    bool moved = false;
    // At a floor: the cheapest feasible plan above it (dp's DP(floor));
    // else the closest to feasible, then the cheapest per sample.
    auto offer = [&](const Evaluation &plan) {
      if (floor > 0) {
        if (!plan.feasible || !(plan.throughput > floor))
          return false;
        if (best && (plan.pricePerHour > best->pricePerHour ||
                     (plan.pricePerHour == best->pricePerHour &&
                      plan.throughput <= best->throughput)))
          return false;
        best = plan;
        return true;
      }
      if (!best || isCloser(model, plan, *best, target)) {
        best = plan;
        return true;
      }
      return false;
    };
    auto tryPlacement = [&](std::optional<Evaluation> refined) {
      if (!refined)
        return;
      double a = shortfall(*refined), b = shortfall(current);
      if (a < b - 1e-12 ||
          (a <= b + 1e-12 &&
           lagrangian(*refined) < lagrangian(current) * (1 - 1e-12))) {
        current = std::move(*refined);
        moved = true;
      }
    };
    auto tryWindow = [&](unsigned begin, unsigned end) {
      tryPlacement(exact->cheapestAround(current.classOfLayer, {{begin, end}},
                                         floor, shadow, kWindowSteps));
    };
    unsigned sinceBest = 0;
    for (unsigned round = 0; round != kRounds; ++round) {
      moved = false;
      // First a re-cut of the whole plan: its sequence of stage classes
      // kept in order, any stage may be dropped, one stage of another class
      // may be inserted before or after each, and every boundary moves
      // freely. A window cannot move boundaries far away, and a floor
      // packs stages end to end (each as long as the floor allows), so
      // shifting one boundary shifts them all. Priced, it costs about
      // (classes x stages) x layers^2 steps: no count labels.
      // On deep graphs (15,000 layers: 4e9 steps, many minutes) it is
      // skipped; the windows below still trade devices across the plan.
      constexpr double kRecutBudget = 2e9;
      if (round == 0) {
        std::vector<unsigned> recutSlots = sequenceSlots(current);
        if (static_cast<double>(recutSlots.size()) * n * n <= kRecutBudget)
          tryPlacement(exact->cheapestPriced(recutSlots, shadow, floor));
      }
      for (unsigned begin = 0; begin < n; begin += kStride)
        tryWindow(begin, std::min(n, begin + kWidth));
      for (size_t s = 0; s < current.stages.size(); ++s) {
        size_t last = std::min(current.stages.size(), s + kStagesPerWindow) - 1;
        unsigned begin = current.stages[s].begin,
                 end = current.stages[last].end;
        if (end - begin > kWidth && end - begin <= kMaxWindow)
          tryWindow(begin, end);
      }
      // The priced plan may still overuse a class by a few devices (the
      // shadow prices of an integer problem need not clear the market
      // exactly): repair it with the true counts, a device at a time.
      Evaluation repaired = !current.feasible && shortfall(current) == 0
                                ? repair(current)
                                : current;
      bool improvedBest = offer(current);
      improvedBest |= offer(repaired);
      sinceBest = improvedBest ? 0 : sinceBest + 1;
      if (best && best->feasible && sinceBest >= kPatience)
        break;
      // Subgradient step: the relative overuse (negative: spare devices)
      // times the class's own price, with a diminishing step size.
      std::vector<unsigned> used(numCls, 0);
      for (const cost::StagePlan &stage : current.stages)
        used[stage.deviceClass] += stage.replicas;
      double step = 1.0 / (1.0 + round / 4.0);
      bool repriced = false;
      for (unsigned c = 0; c != numCls; ++c) {
        double count = std::max(1u, cluster.classes[c].count);
        double gradient = (double(used[c]) - count) / count;
        double price = std::max(
            0.0, shadow[c] + step * gradient * cluster.classes[c].pricePerHour);
        repriced |= price != shadow[c];
        shadow[c] = price;
      }
      // Nothing moved and the prices stand: a fixed point.
      if (!moved && !repriced)
        break;
    }
    return best;
  };
  // Memoised: a lifting chain re-tightens at floors it met before, and the
  // two finishes walk the same chains (ctr200 at 0.1 of reachable on the
  // paper preset: 2,548 trades of 324 distinct starts and floors).
  PlanMemo<std::optional<Evaluation>> trades;
  auto trade = [&](const Evaluation &start, double floor) {
    return trades.get(start, floor, [&] { return tradeOnce(start, floor); });
  };
  // Bottleneck lifting. The cost is price / throughput and the throughput is
  // the slowest stage or boundary, so a dearer plan can be cheaper per
  // sample only if it lifts every stage at the bottleneck at once, wherever
  // they are; the windows above rarely do. Walk the same chain as dp's
  // parametric search (docs/Planning.md), but locally: free the stages at
  // the bottleneck with their neighbours, re-place them cheapest such that
  // they all run faster than it (the rest of the plan as it is), and repeat
  // from the lifted plan; keep the best plan met. Prices only grow along the
  // chain (roughly: each step is re-tightened only locally), so it stops once
  // dp's lower bound on the cost of plans at that price (costBound) is no
  // cheaper than the best. Like dp's, the chain starts at the target: from
  // the cheapest plan near this one that meets it. The freed layers stay
  // under half the model: a local move, not dp.
  auto lift = [&](Evaluation &plan) {
    const unsigned maxUnion = std::min(128u, n / 2);
    if (!plan.feasible)
      return false;
    Evaluation current = plan;
    // Walk up from the bottom, like dp: the cheapest plan near this one
    // that meets the target (the floor just below it). A plan the windows
    // left at some throughput may be beaten by one below it.
    if (std::optional<Evaluation> bottom =
            trade(plan, std::nextafter(target, 0.0)))
      current = std::move(*bottom);
    bool improved = false;
    if (isBetter(current, plan)) {
      plan = current;
      improved = true;
    }
    for (unsigned step = 0; step != 4 * n; ++step) {
      double floor = current.throughput;
      std::optional<Evaluation> lifted;
      for (unsigned radius = 0; radius <= 3; ++radius) {
        std::vector<std::pair<unsigned, unsigned>> free;
        unsigned total = 0;
        size_t numStages = current.stages.size();
        for (size_t s = 0; s != numStages; ++s) {
          bool slow = current.stages[s].throughput <= floor * (1 + 1e-9);
          bool slowBoundary = s + 1 != numStages &&
                              model.batchSize() / current.boundarySeconds[s] <=
                                  floor * (1 + 1e-9);
          if (!slow && !slowBoundary)
            continue;
          unsigned begin = current.stages[s >= radius ? s - radius : 0].begin;
          unsigned end =
              current.stages[std::min(numStages - 1, s + radius + slowBoundary)]
                  .end;
          total += addWindow(free, begin, end);
        }
        if (free.empty() || total > maxUnion)
          break;
        std::optional<Evaluation> candidate = exact->cheapestAround(
            current.classOfLayer, free, floor, {}, kWindowSteps);
        if (candidate && candidate->feasible && candidate->throughput > floor &&
            (!lifted || candidate->pricePerHour < lifted->pricePerHour))
          lifted = std::move(candidate);
      }
      if (!lifted)
        break;
      current = std::move(*lifted);
      // dp's DP(floor), locally: the cheapest plan near the lifted one
      // whose stages and boundaries all run faster than the floor.
      if (std::optional<Evaluation> tightened = trade(current, floor))
        if (tightened->pricePerHour < current.pricePerHour)
          current = std::move(*tightened);
      if (isBetter(current, plan)) {
        plan = current;
        improved = true;
      }
      if (exact->costBound(current.pricePerHour) >= plan.costPerMillionSamples)
        break;
    }
    return improved;
  };
  auto finish = [&](Evaluation plan) {
    if (!options.localSearch)
      return plan;
    if (!exact)
      exact.emplace(model, target, options.maxStoredStages);
    // The plan a lifting chain returned: lifting it again would walk the
    // same floors.
    bool lifted = false;
    while (true) {
      Evaluation previous = plan;
      plan = improveLocally(model, std::move(plan), target);
      bool improved = isCloser(model, plan, previous, target);
      if (std::optional<Evaluation> refined = neighbourhood(plan))
        if (isBetter(*refined, plan)) {
          plan = std::move(*refined);
          improved = true;
        }
      improved |= windows(plan);
      if (improved)
        lifted = false;
      else if (!lifted) {
        improved = lift(plan);
        lifted = true;
      }
      if (!improved && !plan.feasible)
        if (std::optional<Evaluation> traded = trade(plan, 0))
          if (isCloser(model, *traded, plan, target)) {
            plan = std::move(*traded);
            improved = true;
          }
      if (!improved)
        return plan;
    }
  };
  std::optional<Evaluation> best;
  if (bestSampled)
    consider(best, finish(*bestSampled));
  consider(best, finish(*bestSeed));
  return *best;
}
