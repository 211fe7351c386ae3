//===- Place.cpp - --hps-place: device class per layer --------------------===//
//
// The pass is thin on purpose: the layer graph comes from the adapter, the
// decision from the plain C++ scheduler; this file only moves data between
// them and the IR.
//
//===----------------------------------------------------------------------===//

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Dialect/HPS/Transforms/LayerGraphBuilder.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"
#include "heterps/Schedule/Scheduler.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

namespace heterps::hps {
#define GEN_PASS_DEF_HPSPLACE
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;

namespace {

/// Prints RL progress on stderr, but only once a search has run for more
/// than a moment, and at most every half second.
class ProgressPrinter {
public:
  void operator()(unsigned episode, double bestCost) {
    auto now = std::chrono::steady_clock::now();
    if (now - start < std::chrono::seconds(1) ||
        now - last < std::chrono::milliseconds(500))
      return;
    last = now;
    printed = true;
    llvm::errs() << "\rhps-place: episode " << episode << ", best cost ";
    if (std::isfinite(bestCost))
      llvm::errs() << llvm::formatv("${0:F4} per million samples", bestCost);
    else
      llvm::errs() << "none feasible yet";
    llvm::errs().flush();
  }
  ~ProgressPrinter() {
    if (printed)
      llvm::errs() << "\n";
  }

private:
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last{};
  bool printed = false;
};

struct PlacePass : public heterps::hps::impl::HPSPlaceBase<PlacePass> {
  using HPSPlaceBase::HPSPlaceBase;

  std::function<bool()> stopRequested;

  /// The cost model's view of each op comes with the pass.
  void getDependentDialects(DialectRegistry &registry) const override {
    HPSPlaceBase::getDependentDialects(registry);
    registerLayerWorkModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      emitError(module.getLoc(), "hps-place needs a function @main");
      return signalPassFailure();
    }
    if (clusterFile.empty()) {
      emitError(module.getLoc(), "hps-place needs cluster=FILE");
      return signalPassFailure();
    }
    if (!(throughput > 0)) {
      emitError(module.getLoc(),
                "hps-place needs a positive throughput=SAMPLES_PER_S");
      return signalPassFailure();
    }
    if (batch < 1) {
      emitError(module.getLoc(), "hps-place needs batch >= 1");
      return signalPassFailure();
    }
    llvm::Expected<cluster::ClusterSpec> spec =
        cluster::loadClusterSpec(clusterFile);
    if (!spec) {
      emitError(module.getLoc()) << llvm::toString(spec.takeError());
      return signalPassFailure();
    }
    std::optional<cost::ProfileDatabase> profiles;
    if (!profile.empty()) {
      auto loaded = cost::ProfileDatabase::load(profile);
      if (!loaded) {
        emitError(module.getLoc()) << llvm::toString(loaded.takeError());
        return signalPassFailure();
      }
      profiles = std::move(*loaded);
    }

    ExtractedLayerGraph extracted = buildLayerGraph(
        main, batch, inference ? cost::Mode::Inference : cost::Mode::Training);
    if (extracted.ops.empty()) {
      emitError(main.getLoc(), "@main has no layer to place");
      return signalPassFailure();
    }

    if (sparseStaleness > 1) {
      emitError(module.getLoc(), "hps-place: sparse-staleness must be 0 or 1");
      return signalPassFailure();
    }
    if (!(passDistinctFraction > 0 && passDistinctFraction <= 1)) {
      emitError(module.getLoc(),
                "hps-place: pass-distinct-fraction must be in (0, 1]");
      return signalPassFailure();
    }

    schedule::StrategyOptions options;
    options.costOptions.batchSize = static_cast<double>(batch);
    options.costOptions.passDistinctFraction = passDistinctFraction;
    options.passSteps = passSteps;
    options.maxSparseStaleness = sparseStaleness;
    options.microBatches = microBatches;
    options.profiles = profiles ? &*profiles : nullptr;
    options.seed = seed;
    options.episodes = episodes;
    options.stopRequested = stopRequested;
    ProgressPrinter printer;
    options.progress = [&printer](unsigned episode, double best) {
      printer(episode, best);
    };
    schedule::Objective objective;
    objective.targetThroughput = throughput;
    llvm::Expected<schedule::Plan> plan =
        schedule::solve(strategy, extracted.graph, *spec, objective, options);
    if (!plan) {
      emitError(module.getLoc())
          << "hps-place: " << llvm::toString(plan.takeError());
      return signalPassFailure();
    }

    MLIRContext *context = &getContext();
    for (auto [op, cls] : llvm::zip(extracted.ops, plan->classOfLayer))
      cast<PlacedOpInterface>(op).setPlacement(
          DeviceAttr::get(context, spec->classes[cls].name));
    module->setAttr("hps.plan", planAttr(*plan, extracted, *spec));

    // Why the plan differs from the cheapest pipeline meeting the target.
    if (plan->stepSearches > 0) {
      const double change = 100 * (plan->costPerMillionSamples /
                                       plan->firstPlanCostPerMillionSamples -
                                   1);
      emitRemark(main.getLoc()) << llvm::formatv(
          "the cheapest pipeline meeting the target trains steps of at most "
          "{0} micro-batches at {1:F1} samples/s; searched again {2} "
          "time{3} for steps that reach it, at {4:F0}% {5} per sample "
          "(docs/Planning.md, \"The step\")",
          options.mostMicroBatches(), plan->firstPlanStepThroughput,
          plan->stepSearches, plan->stepSearches == 1 ? "" : "s",
          std::abs(change), change >= 0 ? "more" : "less");
    }

    // A pipeline that meets the target, in steps too short to fill it.
    if (plan->feasible && plan->microBatches > 0 &&
        plan->stepThroughput < throughput)
      emitWarning(main.getLoc()) << llvm::formatv(
          "training steps of {0} micro-batch{1} reach {2:F1} samples/s, "
          "below the target {3:F0}; the pipeline full reaches {4:F1} "
          "(docs/Planning.md, \"The step\")",
          plan->microBatches, plan->microBatches == 1 ? "" : "es",
          plan->stepThroughput, double(throughput), plan->throughput);

    // Memory or device counts rule a plan out at any throughput; then the
    // bottleneck and the target are beside the point. Stages built from it
    // would fail only when they run, so the compile stops here.
    if (!plan->runnable) {
      auto diag = allowUnrunnable ? emitWarning(main.getLoc())
                                  : emitError(main.getLoc());
      diag << "strategy " << strategy << " found no plan that cluster '"
           << spec->name << "' can run at " << int64_t(batch)
           << " samples per step: " << plan->infeasibleReason;
      if (!allowUnrunnable)
        return signalPassFailure();
      return;
    }
    if (!plan->feasible) {
      if (plan->bestReachableThroughput >= throughput &&
          !plan->infeasibleReason.empty()) {
        // At the op's location, without the op: MLIR would print a whole
        // function (thousands of lines on a deep model) under the warning.
        // Only this strategy's placement misses: a preset keeps its
        // placement where another would meet the target.
        emitWarning(main.getLoc()) << llvm::formatv(
            "strategy {0}'s plan misses the target at {1} samples per step: "
            "{2}; another placement the cluster can run reaches {3:F1} "
            "samples/s (strategies dp and rl search for the cheapest that "
            "meets the target)",
            std::string(strategy), int64_t(batch), plan->infeasibleReason,
            plan->bestReachableThroughput);
        return;
      }
      Operation *culprit = plan->bottleneckLayer
                               ? extracted.ops[*plan->bottleneckLayer]
                               : main.getOperation();
      auto diag = emitWarning(culprit->getLoc()) << llvm::formatv(
                      "throughput target {0} samples/s cannot "
                      "be met: the best reachable is {1}{2:F1} "
                      "samples/s",
                      throughput, plan->bestReachableIsBound ? "at most " : "",
                      plan->bestReachableThroughput);
      // A preset's placement, slower than the cluster's best: the figures
      // below are of the plan, the one above of another placement.
      if (plan->runnable &&
          plan->throughput < plan->bestReachableThroughput * (1 - 1e-9))
        diag << llvm::formatv(" by another placement than strategy {0}'s "
                              "({1:F1})",
                              std::string(strategy), plan->throughput);
      if (plan->bottleneckLayer)
        diag << "; bottleneck layer '"
             << extracted.graph.layers[*plan->bottleneckLayer].name << "' ("
             << culprit->getName() << ")";
      if (!plan->infeasibleReason.empty())
        diag << ": " << plan->infeasibleReason;
    }
  }

  /// The plan as data on the module: what --hps-to-plan prints and what
  /// partitioning and later tools read.
  DictionaryAttr planAttr(const schedule::Plan &plan,
                          const ExtractedLayerGraph &extracted,
                          const cluster::ClusterSpec &spec) {
    Builder b(&getContext());
    SmallVector<Attribute> stages;
    for (const cost::StagePlan &stage : plan.stages) {
      SmallVector<Attribute> layers;
      for (unsigned i = stage.begin; i < stage.end; ++i)
        layers.push_back(b.getStringAttr(extracted.graph.layers[i].name));
      stages.push_back(b.getDictionaryAttr({
          b.getNamedAttr("device",
                         DeviceAttr::get(&getContext(),
                                         spec.classes[stage.deviceClass].name)),
          b.getNamedAttr("replicas", b.getI64IntegerAttr(stage.replicas)),
          b.getNamedAttr("seconds_per_batch", b.getF64FloatAttr(stage.seconds)),
          b.getNamedAttr("throughput", b.getF64FloatAttr(stage.throughput)),
          b.getNamedAttr(
              "memory_bytes",
              b.getI64IntegerAttr(static_cast<int64_t>(stage.memoryBytes))),
          b.getNamedAttr("layers", b.getArrayAttr(layers)),
      }));
    }
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("strategy", b.getStringAttr(plan.strategy)),
        b.getNamedAttr("feasible", b.getBoolAttr(plan.feasible)),
        b.getNamedAttr("throughput", b.getF64FloatAttr(plan.throughput)),
        b.getNamedAttr("target", b.getF64FloatAttr(throughput)),
        b.getNamedAttr("batch", b.getI64IntegerAttr(batch)),
        b.getNamedAttr("cluster", b.getStringAttr(spec.name)),
        b.getNamedAttr("price_per_hour", b.getF64FloatAttr(plan.pricePerHour)),
        b.getNamedAttr("cost_per_million_samples",
                       b.getF64FloatAttr(plan.costPerMillionSamples)),
        b.getNamedAttr("solve_seconds", b.getF64FloatAttr(plan.solveSeconds)),
        b.getNamedAttr("best_reachable_throughput",
                       b.getF64FloatAttr(plan.bestReachableThroughput)),
        b.getNamedAttr("best_reachable_is_bound",
                       b.getBoolAttr(plan.bestReachableIsBound)),
        b.getNamedAttr("stages", b.getArrayAttr(stages)),
    };
    // Bounded to 2^62 bytes (4 EiB): a class's memory_gib may be up to
    // 1e12, whose bytes pass int64 (the manifest then held a negative
    // bound the runtime refused).
    if (plan.passCacheMemoryBytes)
      fields.push_back(
          b.getNamedAttr("pass_memory_bytes",
                         b.getI64IntegerAttr(static_cast<int64_t>(
                             std::min(*plan.passCacheMemoryBytes, 0x1p62)))));
    if (plan.step.passSteps > 0) {
      fields.push_back(b.getNamedAttr(
          "pass_steps", b.getI64IntegerAttr(plan.step.passSteps)));
      fields.push_back(b.getNamedAttr(
          "pass_cache_device",
          b.getStringAttr(plan.passCacheOnGpu ? "gpu" : "host")));
    }
    if (plan.step.sparseStaleness > 0)
      fields.push_back(b.getNamedAttr(
          "sparse_staleness", b.getI64IntegerAttr(plan.step.sparseStaleness)));
    if (plan.microBatches > 0) {
      fields.push_back(b.getNamedAttr("micro_batches",
                                      b.getI64IntegerAttr(plan.microBatches)));
      fields.push_back(b.getNamedAttr("step_throughput",
                                      b.getF64FloatAttr(plan.stepThroughput)));
    }
    if (!plan.pricedShapes.empty()) {
      SmallVector<Attribute> shapes;
      for (const schedule::Plan::PricedShape &shape : plan.pricedShapes)
        shapes.push_back(b.getDictionaryAttr({
            b.getNamedAttr("pass_steps",
                           b.getI64IntegerAttr(shape.step.passSteps)),
            b.getNamedAttr("sparse_staleness",
                           b.getI64IntegerAttr(shape.step.sparseStaleness)),
            b.getNamedAttr("feasible", b.getBoolAttr(shape.feasible)),
            b.getNamedAttr("throughput", b.getF64FloatAttr(shape.throughput)),
            b.getNamedAttr("cost_per_million_samples",
                           b.getF64FloatAttr(shape.costPerMillionSamples)),
        }));
      fields.push_back(b.getNamedAttr("step_shapes", b.getArrayAttr(shapes)));
    }
    if (plan.bottleneckLayer)
      fields.push_back(b.getNamedAttr(
          "bottleneck",
          b.getStringAttr(extracted.graph.layers[*plan.bottleneckLayer].name)));
    return b.getDictionaryAttr(fields);
  }
};

} // namespace

std::unique_ptr<Pass>
heterps::hps::createHPSPlace(const HPSPlaceOptions &options,
                             std::function<bool()> stopRequested) {
  auto pass = std::make_unique<PlacePass>(options);
  pass->stopRequested = std::move(stopRequested);
  return pass;
}
