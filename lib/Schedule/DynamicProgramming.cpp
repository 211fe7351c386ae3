//===- DynamicProgramming.cpp - Exact placement over the topological order ===//
//
// The cost per million samples of a placement is price / throughput, where
// the price is a sum over stages (each provisioned with the fewest replicas
// meeting the target) but the throughput is the minimum over stages and
// boundaries. That ratio is not additive, so the search is parametric:
//
//   for a throughput floor F, DP(F) = the cheapest placement (lowest price,
//   ties: highest throughput) whose every stage and boundary runs at >= F.
//
// Start with F = target; take DP(F)'s throughput t; continue with floor "> t"
// until no placement is left. Every placement met along the way is a
// candidate; the best one is optimal: let X* (price P*, throughput t*) be
// optimal and F_i the last floor <= t*. DP(F_i) costs <= P* since X* meets
// F_i; its throughput t_i >= t* (else the next floor t_i+ would still be
// <= t*), so its cost P_i / t_i <= P* / t*. Prices strictly increase from one
// floor to the next, and no later placement can beat the incumbent once
// price / (an upper bound on any throughput) exceeds its cost, which ends the
// loop early.
//
// DP(F) itself runs over (position, slot of the stage ending there), where
// for the dp strategy the slots are the device classes: a stage's price and
// throughput depend only on its class and layer range, a boundary's only on
// the cut and the two neighbouring classes. (The rl strategy reuses the same
// search with ordered slots to re-place the stages of a plan exactly within
// a neighbourhood of its class sequence.) What does not decompose is the
// cluster's count of each class, shared by all stages of that class. The
// fast DP ignores it; when its answer overuses a class, the floor is
// re-solved by a label-setting DP whose labels carry the replicas used per
// class and are pruned only by Pareto dominance (price, throughput, usage),
// which keeps the answer exact.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include <algorithm>
#include <cmath>
#include <limits>

using llvm::createStringError;
using llvm::Expected;
using llvm::inconvertibleErrorCode;
using namespace heterps;
using namespace heterps::schedule;
using namespace heterps::schedule::detail;
using cost::StagePlan;

namespace {

/// Stages provisioned for the target and boundary throughputs, for every
/// class, layer range and cut.
/// What the DP needs of a stage provisioned for the target.
struct StageEntry {
  double throughput = 0;
  double price = 0;
  unsigned replicas = 0;
  bool meetsTarget = false;
};

class PlacementTables {
public:
  PlacementTables(const CostModel &model, double target, size_t maxStoredStages)
      : model(model), n(model.numLayers()), numClasses(model.numClasses()),
        target(target) {
    // Ranges [i, j) of one class are stored row by row: row i holds n - i.
    // That is n^2 / 2 entries per class: 24 MB at 1,000 layers, 8 GB at
    // 15,000 (an unrolled recurrence). Past maxStoredStages
    // (StrategyOptions) they are provisioned when asked instead (O(replicas)
    // each): slower per step, but deep graphs plan in bounded memory.
    size_t entries = size_t(numClasses) * n * (n + 1) / 2;
    if (entries <= maxStoredStages) {
      rowStart.resize(n + 1, 0);
      for (unsigned i = 0; i != n; ++i)
        rowStart[i + 1] = rowStart[i] + (n - i);
      stages.resize(entries);
      for (unsigned c = 0; c != numClasses; ++c)
        for (unsigned i = 0; i != n; ++i)
          for (unsigned j = i + 1; j <= n; ++j)
            stages[index(c, i, j)] = provision(c, i, j);
    }
    // A stage only gets slower and needs more memory as layers join it
    // (for every replica count), so the starts i at which [i, j) can meet
    // the target form a range [meetFrom(c, j), j), and meetFrom(c, j) never
    // decreases with j: two pointers find them all in O(n) stages per
    // class. The DPs skip the rest.
    meetFromTable.assign(size_t(numClasses) * (n + 1), 0);
    for (unsigned c = 0; c != numClasses; ++c)
      for (unsigned j = 1, i = 0; j <= n; ++j) {
        while (i != j && !stageAt(c, i, j).meetsTarget)
          ++i;
        meetFromTable[size_t(c) * (n + 1) + j] = i;
      }
    boundaries.assign(size_t(n) * numClasses * numClasses, 0.0);
    for (unsigned cut = 1; cut < n; ++cut)
      for (unsigned a = 0; a != numClasses; ++a)
        for (unsigned b = 0; b != numClasses; ++b)
          if (a != b)
            boundaryAt(cut, a, b) =
                model.batchSize() / model.boundarySeconds(cut, a, b);
  }

  /// Layers [i, j) on class c.
  StageEntry stageAt(unsigned c, unsigned i, unsigned j) const {
    return stages.empty() ? provision(c, i, j) : stages[index(c, i, j)];
  }
  unsigned meetFrom(unsigned c, unsigned j) const {
    return meetFromTable[size_t(c) * (n + 1) + j];
  }
  double &boundaryAt(unsigned cut, unsigned a, unsigned b) {
    return boundaries[(size_t(cut) * numClasses + a) * numClasses + b];
  }

  const CostModel &model;
  unsigned n, numClasses;

private:
  StageEntry provision(unsigned c, unsigned i, unsigned j) const {
    StagePlan plan = model.provision(c, i, j, target);
    return StageEntry{plan.throughput,
                      plan.replicas * model.cluster().classes[c].pricePerHour,
                      plan.replicas, plan.meetsTarget};
  }
  size_t index(unsigned c, unsigned i, unsigned j) const {
    return size_t(c) * rowStart[n] + rowStart[i] + (j - i - 1);
  }

  double target;
  std::vector<size_t> rowStart;
  std::vector<StageEntry> stages; // empty: provisioned when asked
  std::vector<double> boundaries;
  std::vector<unsigned> meetFromTable;
};

/// A throughput floor: ">= value" or, after the first round, "> value".
struct Floor {
  double value;
  bool strict;
  bool admits(double throughput) const {
    return strict ? throughput > value : throughput >= value;
  }
};

/// Lexicographic DP value: lower price, then higher throughput.
struct Value {
  double price = std::numeric_limits<double>::infinity();
  double throughput = 0;
  bool betterThan(const Value &other) const {
    if (price != other.price)
      return price < other.price;
    return throughput > other.throughput;
  }
};

/// The stage classes a placement may use, as slots: a stage on slot s may
/// follow a stage on slot p if their classes differ and, for ordered slots,
/// p < s. The full search uses one unordered slot per class.
///
/// `runStart` and `pinned`, when not empty, restrict the class of each layer
/// (for re-placing a window of a plan with the rest fixed): layers [i, j) may
/// share class c only if i >= runStart[c * (n + 1) + j], and pinned[l] is the
/// only class layer l may take, or numClasses when it may take several.
struct Slots {
  llvm::ArrayRef<unsigned> classOf;
  bool ordered;
  llvm::ArrayRef<unsigned> runStart = {};
  llvm::ArrayRef<unsigned> pinned = {};
  unsigned n = 0;
  bool mayFollow(unsigned prev, unsigned next) const {
    return classOf[prev] != classOf[next] && (!ordered || prev < next);
  }
  /// The first layer a stage on class c ending at j may start at.
  unsigned firstStart(unsigned c, unsigned j) const {
    return runStart.empty() ? 0 : runStart[size_t(c) * (n + 1) + j];
  }
  /// Whether a stage on class c may end at j, i.e. layer j may take another
  /// class. Pinned runs are long; skipping their interior keeps a window's
  /// search proportional to the window, not to the model.
  bool mayEnd(unsigned c, unsigned j) const {
    return pinned.empty() || j == n || pinned[j] != c;
  }

  /// Repair mode (rl's windows over an infeasible plan): the plan's own
  /// stages outside the window, [exemptFrom[j], j), and the cuts between
  /// pinned layers are taken as they are, whether or not they meet the
  /// target, and their replicas are not counted: the window only has to be
  /// feasible itself, within countLimit replicas of each class.
  llvm::ArrayRef<unsigned> exemptFrom = {};
  llvm::ArrayRef<unsigned> countLimit = {};
  bool exemptStage(unsigned i, unsigned j) const {
    return !exemptFrom.empty() && exemptFrom[j] == i;
  }
  bool exemptCut(unsigned i) const {
    return !exemptFrom.empty() && pinned[i - 1] != countLimit.size() &&
           pinned[i] != countLimit.size();
  }
  unsigned limit(unsigned c, const cluster::ClusterSpec &cluster) const {
    return countLimit.empty() ? cluster.classes[c].count : countLimit[c];
  }

  /// Priced mode (rl's device trading): a shadow price per device of each
  /// class, added to the stage's price; class counts are not enforced (the
  /// shadow prices stand for them).
  llvm::ArrayRef<double> shadowPrice = {};
  double stagePrice(const StageEntry &stage, unsigned c) const {
    return shadowPrice.empty() ? stage.price
                               : stage.price + shadowPrice[c] * stage.replicas;
  }

  /// Work left for the search, shared by all its floors: transitions tried
  /// by either DP plus, with counts, labels built and dominance tests; no
  /// limit when null. The floors can be many and the labels multiply far
  /// beyond slots x layers^2, so a caller that only hopes for an improvement
  /// bounds the work; once it is spent, the search stops and returns the
  /// best placement of the floors it finished.
  double *stepsLeft = nullptr;
  /// Charges `steps` of work; true when the budget is spent.
  bool outOfSteps(double steps) const {
    if (!stepsLeft)
      return false;
    *stepsLeft -= steps;
    if (*stepsLeft > 0)
      return false;
    *stepsLeft = 0;
    return true;
  }
};

/// Turns per-position back pointers into a class per layer.
std::vector<unsigned> placementFromBackPointers(
    unsigned n, unsigned lastSlot, const Slots &slots,
    llvm::function_ref<std::pair<unsigned, unsigned>(unsigned, unsigned)>
        from) {
  std::vector<unsigned> placement(n);
  for (unsigned j = n, slot = lastSlot; j != 0;) {
    auto [i, prev] = from(j, slot);
    for (unsigned l = i; l != j; ++l)
      placement[l] = slots.classOf[slot];
    j = i;
    slot = prev;
  }
  return placement;
}

/// The first start >= `i` of a class-`c` stage ending at `j` the DPs need to
/// try: stages meeting the target start at meetFrom(c, j) or later, and only
/// the window's exempt stage may start below it. Returns >= j when none.
unsigned admissibleStart(const Slots &slots, const PlacementTables &tables,
                         unsigned c, unsigned i, unsigned j) {
  unsigned meetFrom = tables.meetFrom(c, j);
  if (i >= meetFrom || slots.exemptStage(i, j))
    return i;
  unsigned exempt = slots.exemptFrom.empty() ? j : slots.exemptFrom[j];
  return exempt > i && exempt < meetFrom ? exempt : meetFrom;
}

/// Calls visit(i, stage, exempt) for the start i of every class-c stage
/// ending at j that meets the target and the floor or that the slots exempt
/// (whose throughput is then infinite), in increasing i, until visit returns
/// false.
template <typename Visit>
void forEachStageEndingAt(const PlacementTables &tables, const Slots &slots,
                          Floor floor, unsigned c, unsigned j, Visit visit) {
  for (unsigned i = slots.firstStart(c, j); i < j; ++i) {
    i = admissibleStart(slots, tables, c, i, j);
    if (i >= j)
      return;
    StageEntry stage = tables.stageAt(c, i, j);
    bool exempt = slots.exemptStage(i, j);
    if (exempt)
      stage.throughput = std::numeric_limits<double>::infinity();
    else if (!stage.meetsTarget || !floor.admits(stage.throughput))
      continue;
    if (!visit(i, stage, exempt))
      return;
  }
}

/// DP(F) ignoring class counts. Returns the class of every layer, or an empty
/// vector when no placement meets the floor or the work budget
/// (Slots::stepsLeft) runs out.
std::vector<unsigned> cheapestIgnoringCounts(PlacementTables &tables,
                                             const Slots &slots, Floor floor) {
  unsigned n = tables.n, numSlots = slots.classOf.size();
  unsigned numCls = tables.numClasses;
  // best[j][s]: placements of layers [0, j) whose last stage is on slot s.
  std::vector<Value> best(size_t(n + 1) * numSlots);
  std::vector<std::pair<unsigned, unsigned>> from(size_t(n + 1) * numSlots);
  // A transition only depends on the previous stage's class, so for each
  // position i keep the best head per class among slots [0, s) (prefix) or
  // among all slots: headAt(i, s, c) = best[i][p] for the p it names.
  std::vector<unsigned> head(size_t(n + 1) * (numSlots + 1) * numCls, numSlots);
  auto headAt = [&](unsigned i, unsigned s, unsigned c) -> unsigned & {
    return head[(size_t(i) * (numSlots + 1) + s) * numCls + c];
  };
  auto summarise = [&](unsigned i) {
    for (unsigned s = 0; s != numSlots; ++s) {
      for (unsigned c = 0; c != numCls; ++c)
        headAt(i, s + 1, c) = headAt(i, s, c);
      unsigned c = slots.classOf[s];
      unsigned &current = headAt(i, s + 1, c);
      const Value &value = best[i * numSlots + s];
      if (!std::isinf(value.price) &&
          (current == numSlots ||
           value.betterThan(best[i * numSlots + current])))
        current = s;
    }
  };

  double transitions = 0; // of the current position, for the work budget
  for (unsigned j = 1; j <= n; ++j) {
    for (unsigned s = 0; s != numSlots; ++s) {
      unsigned c = slots.classOf[s];
      if (!slots.mayEnd(c, j))
        continue;
      Value &target = best[j * numSlots + s];
      forEachStageEndingAt(
          tables, slots, floor, c, j, [&](unsigned i, StageEntry stage, bool) {
            double price = slots.stagePrice(stage, c);
            transitions += i == 0 ? 1 : numCls;
            if (i == 0) {
              Value candidate{price, stage.throughput};
              if (candidate.betterThan(target)) {
                target = candidate;
                from[j * numSlots + s] = {0, s};
              }
              return true;
            }
            for (unsigned prevClass = 0; prevClass != numCls; ++prevClass) {
              if (prevClass == c)
                continue;
              unsigned prev =
                  headAt(i, slots.ordered ? s : numSlots, prevClass);
              if (prev == numSlots)
                continue;
              const Value &headValue = best[i * numSlots + prev];
              double boundary = tables.boundaryAt(i, prevClass, c);
              if (slots.exemptCut(i))
                boundary = std::numeric_limits<double>::infinity();
              else if (!floor.admits(boundary))
                continue;
              Value candidate{
                  headValue.price + price,
                  std::min({headValue.throughput, stage.throughput, boundary})};
              if (candidate.betterThan(target)) {
                target = candidate;
                from[j * numSlots + s] = {i, prev};
              }
            }
            return true;
          });
    }
    summarise(j);
    if (slots.outOfSteps(transitions))
      return {};
    transitions = 0;
  }
  unsigned lastSlot = numSlots;
  for (unsigned s = 0; s != numSlots; ++s)
    if (!std::isinf(best[n * numSlots + s].price) &&
        (lastSlot == numSlots ||
         best[n * numSlots + s].betterThan(best[n * numSlots + lastSlot])))
      lastSlot = s;
  if (lastSlot == numSlots)
    return {};
  return placementFromBackPointers(
      n, lastSlot, slots,
      [&](unsigned j, unsigned s) { return from[j * numSlots + s]; });
}

/// For every position j and slot s, the lowest price of layers [j, n) after
/// a stage on slot s ends at j, each stage within its class's count alone
/// but the counts otherwise ignored (infinity when nothing meets the floor).
/// A lower bound on what any completion of a prefix adds, so the
/// label-setting DP can drop prefixes that cannot stay within a price.
/// Empty when the work budget (Slots::stepsLeft) runs out.
std::vector<double> cheapestCompletions(PlacementTables &tables,
                                        const Slots &slots, Floor floor) {
  unsigned n = tables.n, numSlots = slots.classOf.size();
  const cluster::ClusterSpec &cluster = tables.model.cluster();
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> completion(size_t(n + 1) * numSlots, kNone);
  // entry[i][s]: layers [i, n) with the stage starting at i on slot s.
  std::vector<double> entry(size_t(n + 1) * numSlots, kNone);
  for (unsigned s = 0; s != numSlots; ++s)
    completion[size_t(n) * numSlots + s] = 0;
  double transitions = 0; // of the current end, for the work budget
  // Ends in descending order: every stage starting at j ends after it, so
  // entry[j] is final when the stages ending at j are reached.
  for (unsigned j = n; j != 0; --j) {
    for (unsigned prev = 0; j != n && prev != numSlots; ++prev) {
      double &best = completion[size_t(j) * numSlots + prev];
      transitions += numSlots;
      for (unsigned s = 0; s != numSlots; ++s) {
        if (!slots.mayFollow(prev, s) ||
            (!slots.exemptCut(j) &&
             !floor.admits(
                 tables.boundaryAt(j, slots.classOf[prev], slots.classOf[s]))))
          continue;
        best = std::min(best, entry[size_t(j) * numSlots + s]);
      }
    }
    for (unsigned s = 0; s != numSlots; ++s) {
      unsigned c = slots.classOf[s];
      double tail = completion[size_t(j) * numSlots + s];
      if (!slots.mayEnd(c, j) || std::isinf(tail))
        continue;
      forEachStageEndingAt(
          tables, slots, floor, c, j,
          [&](unsigned i, const StageEntry &stage, bool exempt) {
            transitions += 1;
            if (exempt || stage.replicas <= slots.limit(c, cluster)) {
              double &best = entry[size_t(i) * numSlots + s];
              best = std::min(best, stage.price + tail);
            }
            return true;
          });
    }
    if (slots.outOfSteps(transitions))
      return {};
    transitions = 0;
  }
  return completion;
}

/// DP(F) with class counts: labels carry the replicas used per class.
/// Labels no completion of which (`completion`, cheapestCompletions) stays
/// within `priceLimit`, or whose least total price is `hopeless` (no
/// placement that dear can beat the search's incumbent), are dropped. Empty
/// when no placement meets the floor within the limit or the work budget
/// (Slots::stepsLeft) runs out.
std::vector<unsigned>
cheapestWithinCounts(PlacementTables &tables, const Slots &slots, Floor floor,
                     llvm::ArrayRef<double> completion, double priceLimit,
                     llvm::function_ref<bool(double price)> hopeless) {
  unsigned n = tables.n, numSlots = slots.classOf.size();
  unsigned numCls = tables.numClasses;
  const cluster::ClusterSpec &cluster = tables.model.cluster();
  struct Label {
    Value value;
    std::vector<unsigned> used; // replicas per class
    unsigned begin = 0, prevSlot = 0, prevLabel = 0;
  };
  // Under one floor throughput only breaks price ties, so a cheaper label
  // dominates whatever its throughput: every completion of b completes a
  // at a lower price.
  auto dominates = [](const Label &a, const Label &b) {
    if (b.value.betterThan(a.value))
      return false;
    for (unsigned c = 0, e = a.used.size(); c != e; ++c)
      if (a.used[c] > b.used[c])
        return false;
    return true;
  };
  std::vector<std::vector<Label>> labels(size_t(n + 1) * numSlots);
  // With ordered slots, the labels on a slot dominate those on any earlier
  // slot of the same class at the same position (every placement reaching
  // the earlier one reaches it too), so a stage need only follow the latest
  // earlier slot of each class: classes, not slots, of predecessors.
  std::vector<std::vector<unsigned>> predecessors(numSlots);
  for (unsigned s = 0; s != numSlots; ++s) {
    if (!slots.ordered) {
      for (unsigned prev = 0; prev != numSlots; ++prev)
        if (slots.mayFollow(prev, s))
          predecessors[s].push_back(prev);
      continue;
    }
    for (unsigned k = 0; k != numCls; ++k) {
      if (k == slots.classOf[s])
        continue;
      for (unsigned prev = s; prev-- != 0;)
        if (slots.classOf[prev] == k) {
          predecessors[s].push_back(prev);
          break;
        }
    }
    // Ascending, the order in which a walk over all slots meets them.
    llvm::sort(predecessors[s]);
  }
  // Most candidates are dominated: build them in one scratch label and copy
  // only those kept.
  Label candidate;
  candidate.used.resize(numCls);
  // A set is kept in DP order, cheapest first: only the labels before a
  // candidate's place can dominate it, only those after it can be
  // dominated, and a scan of heads ends at the first too dear.
  auto insertCandidate = [&](std::vector<Label> &set, double tail) {
    double least = candidate.value.price + tail;
    if (least > priceLimit)
      return;
    size_t place =
        llvm::partition_point(set,
                              [&](const Label &other) {
                                return !candidate.value.betterThan(other.value);
                              }) -
        set.begin();
    for (size_t k = 0; k != place; ++k)
      if (dominates(set[k], candidate))
        return;
    if (hopeless(least))
      return;
    set.erase(std::remove_if(set.begin() + place, set.end(),
                             [&](const Label &other) {
                               return dominates(candidate, other);
                             }),
              set.end());
    set.insert(set.begin() + place, candidate);
  };

  for (unsigned j = 1; j <= n; ++j)
    for (unsigned s = 0; s != numSlots; ++s) {
      unsigned c = slots.classOf[s];
      if (!slots.mayEnd(c, j))
        continue;
      std::vector<Label> &set = labels[j * numSlots + s];
      double tail = completion[size_t(j) * numSlots + s];
      if (std::isinf(tail))
        continue;
      bool spent = false; // the work budget
      forEachStageEndingAt(
          tables, slots, floor, c, j,
          [&](unsigned i, StageEntry stage, bool exempt) {
            if (exempt)
              stage.replicas = 0;
            double price = stage.price;
            unsigned limit = slots.limit(c, cluster);
            if (i == 0) {
              candidate.value = {price, stage.throughput};
              std::fill(candidate.used.begin(), candidate.used.end(), 0);
              candidate.used[c] = stage.replicas;
              candidate.begin = 0;
              if (stage.replicas <= limit) {
                if ((spent = slots.outOfSteps(1.0 + set.size())))
                  return false;
                insertCandidate(set, tail);
              }
              return true;
            }
            for (unsigned prev : predecessors[s]) {
              double boundary = tables.boundaryAt(i, slots.classOf[prev], c);
              if (slots.exemptCut(i))
                boundary = std::numeric_limits<double>::infinity();
              else if (!floor.admits(boundary))
                continue;
              const std::vector<Label> &heads = labels[i * numSlots + prev];
              for (unsigned h = 0, e = heads.size(); h != e; ++h) {
                const Label &head = heads[h];
                if (head.value.price + price + tail > priceLimit)
                  break;
                if (head.used[c] + stage.replicas > limit)
                  continue;
                candidate.value = {head.value.price + price,
                                   std::min({head.value.throughput,
                                             stage.throughput, boundary})};
                std::copy(head.used.begin(), head.used.end(),
                          candidate.used.begin());
                candidate.used[c] += stage.replicas;
                candidate.begin = i;
                candidate.prevSlot = prev;
                candidate.prevLabel = h;
                if ((spent = slots.outOfSteps(1.0 + set.size())))
                  return false;
                insertCandidate(set, tail);
              }
            }
            return true;
          });
      if (spent)
        return {};
    }

  const Label *bestLabel = nullptr;
  unsigned bestSlot = 0;
  for (unsigned s = 0; s != numSlots; ++s)
    for (const Label &label : labels[n * numSlots + s])
      if (!bestLabel || label.value.betterThan(bestLabel->value)) {
        bestLabel = &label;
        bestSlot = s;
      }
  if (!bestLabel)
    return {};
  std::vector<unsigned> placement(n);
  const Label *label = bestLabel;
  for (unsigned j = n, s = bestSlot;;) {
    for (unsigned l = label->begin; l != j; ++l)
      placement[l] = slots.classOf[s];
    if (label->begin == 0)
      break;
    unsigned i = label->begin;
    const Label *prev =
        &labels[i * numSlots + label->prevSlot][label->prevLabel];
    s = label->prevSlot;
    j = i;
    label = prev;
  }
  return placement;
}

/// Whether the plan's stages (those the slots do not exempt) stay within
/// the class counts.
bool withinCounts(const Evaluation &plan, const cluster::ClusterSpec &cluster,
                  const Slots &slots) {
  std::vector<unsigned> used(cluster.classes.size(), 0);
  for (const StagePlan &stage : plan.stages)
    if (!slots.exemptStage(stage.begin, stage.end))
      used[stage.deviceClass] += stage.replicas;
  for (unsigned c = 0, e = used.size(); c != e; ++c)
    if (used[c] > slots.limit(c, cluster))
      return false;
  return true;
}

} // namespace

struct detail::ExactPlacementSearch::Impl {
  Impl(const CostModel &model, double target, size_t maxStoredStages)
      : model(model), target(target), tables(model, target, maxStoredStages) {
    // No placement runs faster than its slowest layer does alone on its
    // best class with as many replicas as that class has (for a given
    // replica count, a stage only gets slower as layers join it).
    throughputBound = std::numeric_limits<double>::infinity();
    for (unsigned l = 0, n = model.numLayers(); l != n; ++l) {
      double layerBest = 0;
      for (unsigned c = 0; c != model.numClasses(); ++c) {
        StagePlan alone = model.provision(
            c, l, l + 1, std::numeric_limits<double>::infinity());
        if (alone.fitsMemory)
          layerBest = std::max(layerBest, alone.throughput);
      }
      throughputBound = std::min(throughputBound, layerBest);
    }
    buildCostBound();
  }

  /// The same bound as a function of the price: a placement with price P
  /// gives no stage more than k devices of class c with k x price_c <= P,
  /// so it runs no faster than U(P) = min over layers of the best of them
  /// alone on such k devices. U is a step function of P with steps at the
  /// k x price_c; priceSteps/costFloor hold, for each step, the least cost
  /// per million samples P' / U(P') over all P' at or above it.
  void buildCostBound() {
    const cluster::ClusterSpec &cluster = model.cluster();
    unsigned n = model.numLayers();
    struct Option {
      double price;
      unsigned cls, replicas;
    };
    std::vector<Option> options;
    for (unsigned c = 0; c != model.numClasses(); ++c)
      for (unsigned k = 1; k <= cluster.classes[c].count; ++k)
        options.push_back({k * cluster.classes[c].pricePerHour, c, k});
    std::stable_sort(
        options.begin(), options.end(),
        [](const Option &a, const Option &b) { return a.price < b.price; });
    std::vector<double> layerBest(n, 0.0);
    std::vector<double> bounds;
    for (size_t o = 0; o != options.size(); ++o) {
      const Option &option = options[o];
      for (unsigned l = 0; l != n; ++l) {
        cost::StageEstimate alone =
            model.stage(option.cls, l, l + 1, option.replicas);
        if (alone.fitsMemory)
          layerBest[l] =
              std::max(layerBest[l], model.batchSize() / alone.seconds);
      }
      if (o + 1 != options.size() && options[o + 1].price == option.price)
        continue;
      double bound = *std::min_element(layerBest.begin(), layerBest.end());
      priceSteps.push_back(option.price);
      bounds.push_back(bound);
      stepBounds.push_back(bound);
    }
    costFloor.resize(priceSteps.size());
    double least = std::numeric_limits<double>::infinity();
    for (size_t b = priceSteps.size(); b-- != 0;) {
      double cost = bounds[b] > 0
                        ? cost::costPerMillionSamples(priceSteps[b], bounds[b])
                        : std::numeric_limits<double>::infinity();
      least = std::min(least, cost);
      costFloor[b] = least;
    }
  }

  /// A lower bound on the cost per million samples of any placement whose
  /// price is at least `price`.
  double costBound(double price) const {
    auto next = std::upper_bound(priceSteps.begin(), priceSteps.end(), price);
    double least = next == priceSteps.end()
                       ? std::numeric_limits<double>::infinity()
                       : costFloor[next - priceSteps.begin()];
    // Between the step below `price` and the next, U is that step's bound.
    if (next != priceSteps.begin()) {
      size_t b = next - priceSteps.begin() - 1;
      double bound = stepBounds[b];
      if (bound > 0)
        least = std::min(least, cost::costPerMillionSamples(price, bound));
    }
    return std::max(least, cost::costPerMillionSamples(price, throughputBound));
  }

  std::optional<Evaluation> search(const Slots &slots, Floor floor);

  const CostModel &model;
  double target;
  PlacementTables tables;
  double throughputBound;
  std::vector<double> priceSteps, costFloor, stepBounds;
};

std::optional<Evaluation>
detail::ExactPlacementSearch::Impl::search(const Slots &slots, Floor floor) {
  constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  std::optional<Evaluation> best;
  while (true) {
    std::vector<unsigned> placement =
        cheapestIgnoringCounts(tables, slots, floor);
    // None left, or the work budget spent: the best so far stands.
    if (placement.empty())
      break;
    Evaluation plan = model.evaluate(placement, target);
    // Priced mode: one floor, counts left to the shadow prices.
    if (!slots.shadowPrice.empty())
      return plan;
    // Placements within the counts cost no less than the cheapest ignoring
    // them; none that dear can beat the incumbent.
    auto hopeless = [&](double price) {
      return best && costBound(price) >= best->costPerMillionSamples;
    };
    if (hopeless(plan.pricePerHour))
      break;
    if (!withinCounts(plan, model.cluster(), slots)) {
      // The counts usually cost little over the cheapest placement ignoring
      // them, and the label-setting DP then needs only the prefixes that
      // can stay near its price: widen the limit until a placement fits.
      // (Unlimited at once took densenet121 minutes; its floors needed up
      // to 25% more.)
      std::vector<double> completion =
          cheapestCompletions(tables, slots, floor);
      if (completion.empty())
        break; // the work budget spent
      for (double slack :
           {1.0 / 256, 1.0 / 64, 1.0 / 16, 1.0 / 4, 1.0, kUnlimited}) {
        placement =
            cheapestWithinCounts(tables, slots, floor, completion,
                                 plan.pricePerHour * (1 + slack), hopeless);
        if (!placement.empty() || (slots.stepsLeft && *slots.stepsLeft == 0))
          break;
      }
      // None left, or the work budget spent: the best so far stands.
      if (placement.empty())
        break;
      plan = model.evaluate(placement, target);
    }
    // Repair mode: the cheapest window that is feasible itself; the caller
    // judges the whole plan.
    if (!slots.exemptFrom.empty())
      return plan;
    assert(plan.feasible && "the DP only admits feasible stages");
    if (!best || isBetter(plan, *best))
      best = plan;
    // Later floors only find dearer placements, none faster than the bound.
    if (costBound(plan.pricePerHour) >= best->costPerMillionSamples)
      break;
    floor = Floor{plan.throughput, /*strict=*/true};
  }
  return best;
}

detail::ExactPlacementSearch::ExactPlacementSearch(const CostModel &model,
                                                   double targetThroughput,
                                                   size_t maxStoredStages)
    : impl(std::make_unique<Impl>(model, targetThroughput, maxStoredStages)) {}

detail::ExactPlacementSearch::~ExactPlacementSearch() = default;

double detail::ExactPlacementSearch::throughputBound() const {
  return impl->throughputBound;
}

double detail::ExactPlacementSearch::costBound(double price) const {
  return impl->costBound(price);
}

std::optional<Evaluation>
detail::ExactPlacementSearch::cheapest(llvm::ArrayRef<unsigned> slotClasses,
                                       bool ordered, double maxSteps) {
  double stepsLeft = maxSteps;
  return cheapestSpending(slotClasses, ordered, stepsLeft);
}

std::optional<Evaluation> detail::ExactPlacementSearch::cheapestSpending(
    llvm::ArrayRef<unsigned> slotClasses, bool ordered, double &stepsLeft) {
  Slots slots{slotClasses, ordered};
  if (std::isfinite(stepsLeft))
    slots.stepsLeft = &stepsLeft;
  return impl->search(slots, Floor{impl->target, /*strict=*/false});
}

std::optional<Evaluation> detail::ExactPlacementSearch::cheapestPriced(
    llvm::ArrayRef<unsigned> slotClasses, llvm::ArrayRef<double> shadowPrice,
    double above) {
  assert(shadowPrice.size() == impl->model.numClasses());
  Slots slots{slotClasses, /*ordered=*/true};
  slots.shadowPrice = shadowPrice;
  return impl->search(slots, above > 0 ? Floor{above, /*strict=*/true}
                                       : Floor{impl->target, /*strict=*/false});
}

std::optional<Evaluation> detail::ExactPlacementSearch::cheapestAround(
    llvm::ArrayRef<unsigned> placement,
    llvm::ArrayRef<std::pair<unsigned, unsigned>> windows, double liftAbove,
    llvm::ArrayRef<double> shadowPrice, double maxSteps) {
  const CostModel &model = impl->model;
  unsigned n = model.numLayers(), numCls = model.numClasses();
  assert(placement.size() == n);
  std::vector<unsigned> pinned(placement.begin(), placement.end());
  for (auto [begin, end] : windows) {
    assert(begin < end && end <= n);
    std::fill(pinned.begin() + begin, pinned.begin() + end, numCls);
  }
  // runStart[c][j]: the first layer of the run of layers before j that may
  // all take c (j when layer j - 1 may not).
  std::vector<unsigned> runStart(size_t(numCls) * (n + 1), 0);
  for (unsigned c = 0; c != numCls; ++c)
    for (unsigned j = 1; j <= n; ++j) {
      bool allows = pinned[j - 1] == numCls || pinned[j - 1] == c;
      runStart[size_t(c) * (n + 1) + j] =
          allows ? runStart[size_t(c) * (n + 1) + j - 1] : j;
    }
  std::vector<unsigned> everyClass(numCls);
  for (unsigned c = 0; c != numCls; ++c)
    everyClass[c] = c;
  Slots slots{everyClass, /*ordered=*/false, runStart, pinned, n};
  double stepsLeft = maxSteps;
  if (std::isfinite(maxSteps))
    slots.stepsLeft = &stepsLeft;
  Evaluation current = model.evaluate(placement, impl->target);
  bool lift = liftAbove > 0;
  bool priced = !shadowPrice.empty();
  assert(!priced || shadowPrice.size() == numCls);
  if (current.feasible && !lift && !priced)
    return impl->search(slots, Floor{impl->target, /*strict=*/false});

  // Repair and lift modes (see Slots): exempt the plan's stages outside the
  // windows; the windows get what they leave of each class.
  std::vector<unsigned> exemptFrom(n + 1, ~0u), countLimit(numCls);
  std::vector<unsigned> exemptUsed(numCls, 0), used(numCls, 0);
  for (const StagePlan &stage : current.stages) {
    used[stage.deviceClass] += stage.replicas;
    if (std::all_of(pinned.begin() + stage.begin, pinned.begin() + stage.end,
                    [&](unsigned c) { return c != numCls; })) {
      exemptFrom[stage.end] = stage.begin;
      exemptUsed[stage.deviceClass] += stage.replicas;
    }
  }
  for (unsigned c = 0; c != numCls; ++c) {
    unsigned count = model.cluster().classes[c].count;
    countLimit[c] = count - std::min(count, exemptUsed[c]);
    // A class the plan overuses: the windows need only give back one of its
    // devices, not the whole excess, so that windows spread over the model
    // repair the plan a step at a time.
    unsigned inWindows = used[c] - exemptUsed[c];
    if (used[c] > count && inWindows > 0)
      countLimit[c] = std::max(countLimit[c], inWindows - 1);
  }
  slots.exemptFrom = exemptFrom;
  slots.countLimit = countLimit;
  slots.shadowPrice = shadowPrice;
  return impl->search(slots, lift ? Floor{liftAbove, /*strict=*/true}
                                  : Floor{impl->target, /*strict=*/false});
}

std::vector<unsigned> detail::maxThroughputPlacement(const CostModel &model,
                                                     double &throughput) {
  unsigned n = model.numLayers(), numCls = model.numClasses();
  auto stageBest = [&](unsigned c, unsigned i, unsigned j) {
    StagePlan stage =
        model.provision(c, i, j, std::numeric_limits<double>::infinity());
    return stage.fitsMemory ? stage.throughput : 0.0;
  };
  std::vector<double> best(size_t(n + 1) * numCls, -1.0);
  std::vector<std::pair<unsigned, unsigned>> from(size_t(n + 1) * numCls);
  // Starts i are tried from j - 1 down: a stage only gets slower as it
  // grows, so once it is slower than the best value found for (j, c), no
  // longer one can beat it, and the walk stops. A deep model (15,000
  // layers) then costs about layers x stage length, not layers^2. Among
  // equal values the smallest (i, prev) wins, as an ascending search
  // would pick.
  for (unsigned j = 1; j <= n; ++j)
    for (unsigned c = 0; c != numCls; ++c) {
      double &bestHere = best[j * numCls + c];
      std::pair<unsigned, unsigned> &fromHere = from[j * numCls + c];
      auto offer = [&](double value, unsigned i, unsigned prev) {
        if (value > bestHere || (value == bestHere && i < fromHere.first)) {
          bestHere = value;
          fromHere = {i, prev};
        }
      };
      for (unsigned i = j; i-- != 0;) {
        double stage = stageBest(c, i, j);
        if (stage < bestHere)
          break;
        if (i == 0) {
          offer(stage, 0, c);
          continue;
        }
        for (unsigned prev = 0; prev != numCls; ++prev) {
          if (prev == c || best[i * numCls + prev] < 0)
            continue;
          offer(
              std::min({best[i * numCls + prev], stage,
                        model.batchSize() / model.boundarySeconds(i, prev, c)}),
              i, prev);
        }
      }
    }
  unsigned lastClass = 0;
  for (unsigned c = 1; c != numCls; ++c)
    if (best[n * numCls + c] > best[n * numCls + lastClass])
      lastClass = c;
  throughput = best[n * numCls + lastClass];
  std::vector<unsigned> placement(n);
  for (unsigned j = n, c = lastClass; j != 0;) {
    auto [i, prev] = from[j * numCls + c];
    for (unsigned l = i; l != j; ++l)
      placement[l] = c;
    j = i;
    c = prev;
  }
  return placement;
}

std::optional<Evaluation>
detail::fastestRunnablePlacement(const CostModel &model, double target,
                                 size_t maxStoredStages, double budget,
                                 double &bound) {
  Evaluation fastest =
      model.evaluate(maxThroughputPlacement(model, bound), target);
  if (fastest.runnable)
    return fastest;
  unsigned n = model.numLayers(), numCls = model.numClasses();
  if (!(bound > 0) || double(n) * n * numCls * numCls > kMaxRunnableSearchSteps)
    return std::nullopt;
  std::vector<unsigned> everyClass(numCls);
  for (unsigned c = 0; c != numCls; ++c)
    everyClass[c] = c;
  // A placement meeting throughput t meets every lower one, so the largest
  // t the exact search still satisfies is the fastest runnable placement.
  // The probes share one work budget; a probe that finds nothing once it
  // is spent proves nothing, and the caller falls back to the bound.
  double stepsLeft = budget;
  auto probe = [&](double floor) {
    ExactPlacementSearch search(model, floor, maxStoredStages);
    return search.cheapestSpending(everyClass, /*ordered=*/false, stepsLeft);
  };
  std::optional<Evaluation> best = probe(bound * 1e-12);
  if (!best)
    return std::nullopt; // nothing fits in memory within the counts
  double low = best->throughput, high = bound;
  for (unsigned step = 0; step != 32 && high > low * (1 + kRunnableTolerance);
       ++step) {
    double middle = low + (high - low) / 2;
    if (std::optional<Evaluation> found = probe(middle)) {
      low = found->throughput;
      best = std::move(found);
    } else if (stepsLeft > 0) {
      high = middle;
    } else {
      return std::nullopt;
    }
  }
  // Provisioned for its own throughput: for the user's target every stage
  // would take all of its class, and stages sharing one would overrun it.
  return model.evaluate(best->classOfLayer, target, best->throughput);
}

std::optional<Evaluation>
detail::provisionedWithinCounts(const CostModel &model,
                                llvm::ArrayRef<unsigned> classOfLayer,
                                double target, bool memoryAside) {
  auto holds = [&](const Evaluation &plan) {
    return memoryAside ? plan.withinCounts : plan.runnable;
  };
  // Replicas grow with the throughput they are provisioned for, so the
  // counts hold every throughput below the largest they hold.
  Evaluation fastest = model.evaluate(classOfLayer, target,
                                      std::numeric_limits<double>::infinity());
  double high = fastest.throughput;
  if (!(high > 0))
    return std::nullopt;
  double low = high * 1e-12;
  Evaluation best = model.evaluate(classOfLayer, target, low);
  if (!holds(best))
    return std::nullopt; // more stages on a class than it has devices
  for (unsigned step = 0; step != 64 && high > low * (1 + kRunnableTolerance);
       ++step) {
    const double middle = low + (high - low) / 2;
    Evaluation probe = model.evaluate(classOfLayer, target, middle);
    if (holds(probe)) {
      low = middle;
      best = std::move(probe);
    } else {
      high = middle;
    }
  }
  return best;
}

Expected<Evaluation>
detail::solveDynamicProgramming(const CostModel &model,
                                const Objective &objective,
                                const StrategyOptions &options) {
  std::vector<unsigned> everyClass(model.numClasses());
  for (unsigned c = 0; c != model.numClasses(); ++c)
    everyClass[c] = c;
  ExactPlacementSearch search(model, objective.targetThroughput,
                              options.maxStoredStages);
  if (std::optional<Evaluation> best =
          search.cheapest(everyClass, /*ordered=*/false))
    return *best;

  // Nothing meets the target: report the fastest placement.
  double reachable = 0;
  return model.evaluate(maxThroughputPlacement(model, reachable),
                        objective.targetThroughput);
}
