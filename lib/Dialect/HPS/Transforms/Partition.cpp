//===- Partition.cpp - --hps-partition: pipeline stages -------------------===//

#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

#include <set>

namespace heterps::hps {
#define GEN_PASS_DEF_HPSPARTITION
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

struct Stage {
  DeviceAttr device;
  SmallVector<Operation *> ops;
  func::FuncOp func;
  IRMapping mapping;
};

/// Values produced outside any stage and cloned into every stage (or @main)
/// that reads them.
bool isClonedValue(Operation *op) {
  return isa_and_nonnull<WeightOp, ConstantOp, NoneOp>(op);
}

struct PartitionPass
    : public heterps::hps::impl::HPSPartitionBase<PartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      emitError(module.getLoc(), "hps-partition needs a function @main");
      return signalPassFailure();
    }
    Block &body = main.getBody().front();
    bool training = module->hasAttr("hps.training");
    if (training) {
      // Pushes first: moved up to their gradients, they would split the
      // device groups again.
      sinkPushes(body);
      groupBackwardByDevice(body);
      markBackward(body);
    }

    // Stages: maximal runs of consecutive layers on one device class.
    SmallVector<Stage> stages;
    DenseMap<Operation *, unsigned> stageOf;
    for (Operation &op : body) {
      auto placed = dyn_cast<PlacedOpInterface>(op);
      if (!placed)
        continue;
      DeviceAttr device = placed.getPlacement();
      if (!device) {
        op.emitError("layer is not placed: run --hps-place first");
        return signalPassFailure();
      }
      // A subgraph reads outer values that are not its operands; a stage
      // boundary would cut them. Legalization resolves control flow first.
      if (op.getNumRegions() != 0) {
        op.emitError("control flow that --hps-legalize-onnx did not "
                     "resolve cannot be partitioned");
        return signalPassFailure();
      }
      if (stages.empty() || stages.back().device != device)
        stages.push_back(Stage{device, {}, nullptr, {}});
      stages.back().ops.push_back(&op);
      stageOf[&op] = stages.size() - 1;
    }
    if (stages.empty()) {
      main.emitError("@main has no layer to partition");
      return signalPassFailure();
    }
    SmallVector<int64_t> replicas = replicasFromPlan(module, stages, training);

    // One function per stage.
    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(main);
    MLIRContext *context = module.getContext();
    for (auto [index, stage] : llvm::enumerate(stages)) {
      stage.func = builder.create<func::FuncOp>(
          main.getLoc(), ("stage_" + Twine(index)).str(),
          builder.getFunctionType({}, {}));
      stage.func->setAttr("hps.stage", builder.getI64IntegerAttr(index));
      stage.func->setAttr("hps.device", stage.device);
      stage.func->setAttr("hps.replicas",
                          builder.getI64IntegerAttr(replicas[index]));
      stage.func.addEntryBlock();
      builder.setInsertionPointAfter(stage.func);
    }

    // Channels: one per (value, receiving stage); @main is "stage" -1.
    llvm::MapVector<std::pair<Value, int64_t>, std::string> channels;
    auto channelFor = [&](Value value, int64_t receiver) -> std::string & {
      std::string &name = channels[{value, receiver}];
      if (name.empty())
        name = "c" + std::to_string(channels.size() - 1) + ".to_" +
               (receiver < 0 ? std::string("main")
                             : "stage_" + std::to_string(receiver));
      return name;
    };

    // Tables the parameter server serves, by name, with their initial value.
    llvm::MapVector<StringRef, WeightOp> serverTables;

    // Fill the stages in order, receiving what comes from elsewhere.
    for (auto [index, stage] : llvm::enumerate(stages)) {
      OpBuilder inStage =
          OpBuilder::atBlockBegin(&stage.func.getBody().front());
      auto valueInStage = [&](Value value) -> Value {
        if (Value mapped = stage.mapping.lookupOrNull(value))
          return mapped;
        Operation *producer = value.getDefiningOp();
        Value local;
        if (isClonedValue(producer))
          local = inStage.clone(*producer)->getResult(0);
        else
          local = inStage
                      .create<RecvOp>(value.getLoc(), value.getType(),
                                      channelFor(value, index))
                      .getResult();
        stage.mapping.map(value, local);
        return local;
      };
      for (Operation *op : stage.ops) {
        if (auto lookup = dyn_cast<EmbeddingLookupOp>(op);
            lookup && lookup.getTable().getDefiningOp<WeightOp>()) {
          // The table stays in the parameter server; only rows travel.
          auto table = lookup.getTable().getDefiningOp<WeightOp>();
          serverTables.insert({table.getName(), table});
          auto pull = inStage.create<PSPullOp>(
              lookup.getLoc(), lookup.getType(),
              inStage.getStringAttr(table.getName()),
              TypeAttr::get(table.getType()), valueInStage(lookup.getIds()),
              lookup.getPoolingAttr(), lookup.getDeviceAttr());
          stage.mapping.map(lookup.getResult(), pull.getResult());
          continue;
        }
        for (Value operand : op->getOperands())
          (void)valueInStage(operand);
        inStage.clone(*op, stage.mapping);
      }
    }

    // Send every value a later stage or @main's return reads.
    auto sendFrom = [&](Value value, int64_t receiver) {
      Operation *producer = value.getDefiningOp();
      std::string &name = channelFor(value, receiver);
      if (!producer) { // A graph input: @main sends it.
        OpBuilder atEnd(main.getContext());
        atEnd.setInsertionPoint(body.getTerminator());
        atEnd.create<SendOp>(value.getLoc(), value, name);
        return;
      }
      Stage &from = stages[stageOf.lookup(producer)];
      Block &block = from.func.getBody().front();
      OpBuilder atEnd = OpBuilder::atBlockEnd(&block);
      atEnd.create<SendOp>(value.getLoc(), from.mapping.lookup(value), name);
    };
    for (auto [index, stage] : llvm::enumerate(stages))
      for (auto &entry : channels)
        if (entry.first.second == static_cast<int64_t>(index))
          sendFrom(entry.first.first, index);

    // @main: send inputs (done above), receive outputs, drop the layers.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder atReturn(ret);
    SmallVector<Value> outputs;
    // A value returned twice (y and Identity(y)) is received once: a
    // second send on its channel is an error.
    llvm::DenseMap<Value, Value> received;
    for (Value result : ret.getOperands()) {
      Operation *producer = result.getDefiningOp();
      if (!producer) {
        outputs.push_back(result);
      } else if (isClonedValue(producer)) {
        outputs.push_back(atReturn.clone(*producer)->getResult(0));
      } else if (Value earlier = received.lookup(result)) {
        outputs.push_back(earlier);
      } else {
        sendFrom(result, -1);
        Value local = atReturn
                          .create<RecvOp>(result.getLoc(), result.getType(),
                                          channelFor(result, -1))
                          .getResult();
        received[result] = local;
        outputs.push_back(local);
      }
    }
    ret->setOperands(outputs);
    for (Stage &stage : stages)
      OpBuilder::atBlockEnd(&stage.func.getBody().front())
          .create<func::ReturnOp>(main.getLoc());
    // The parameter server's tables keep their initial values in a function
    // of their own: no stage holds them, and the bundle writer and the
    // server read them from here.
    if (!serverTables.empty()) {
      OpBuilder atEnd = OpBuilder::atBlockEnd(module.getBody());
      auto server = atEnd.create<func::FuncOp>(
          main.getLoc(), "parameter_server", atEnd.getFunctionType({}, {}));
      server.setPrivate();
      server->setAttr("hps.parameter_server", atEnd.getUnitAttr());
      OpBuilder inServer = OpBuilder::atBlockEnd(server.addEntryBlock());
      for (auto &entry : serverTables)
        inServer.clone(*entry.second);
      inServer.create<func::ReturnOp>(main.getLoc());
    }
    SmallVector<Operation *> dead;
    for (Operation &op : body)
      if (&op != ret && !isa<SendOp, RecvOp>(op) &&
          !llvm::is_contained(outputs,
                              op.getNumResults() ? op.getResult(0) : Value()))
        dead.push_back(&op);
    for (Operation *op : llvm::reverse(dead))
      op->erase();
    SmallVector<Attribute> pipeline;
    for (Stage &stage : stages)
      pipeline.push_back(FlatSymbolRefAttr::get(stage.func));
    main->setAttr("hps.pipeline", ArrayAttr::get(context, pipeline));
  }

  /// The last loss gradient: the backward ops follow it. Null if none.
  static Operation *lossGradient(Block &body) {
    Operation *seed = nullptr;
    for (Operation &op : body)
      if (isa<LossGradOp>(op))
        seed = &op;
    return seed;
  }

  /// Marks the loss gradient and every op after it `hps.backward`: an
  /// evaluating run skips them (code generation guards them), computing only
  /// the forward outputs.
  static void markBackward(Block &body) {
    Operation *seed = lossGradient(body);
    if (!seed)
      return;
    UnitAttr unit = UnitAttr::get(seed->getContext());
    for (Operation *op = seed; op && !op->hasTrait<OpTrait::IsTerminator>();
         op = op->getNextNode())
      if (!isClonedValue(op))
        op->setAttr(kBackwardAttrName, unit);
  }

  /// A push has no result, so autodiff may leave it anywhere after its
  /// operands; right after them it joins the run of the op computing its
  /// gradient instead of opening a stage of its own.
  /// Reorders the backward ops (those after the loss gradient) so that
  /// ops on one device class follow each other wherever their operands
  /// allow. The reverse sweep interleaves parallel branches (a wide and a
  /// deep tower, say) op by op, and every change of device there would
  /// start another stage. A list schedule: among the ops whose operands
  /// are ready, the first (in sweep order) on the current device, or an
  /// unplaced one, goes next; only when there is none does the device
  /// change.
  static void groupBackwardByDevice(Block &body) {
    Operation *seed = lossGradient(body);
    if (!seed)
      return;
    SmallVector<Operation *> segment;
    for (Operation *op = seed->getNextNode();
         op && !op->hasTrait<OpTrait::IsTerminator>(); op = op->getNextNode())
      segment.push_back(op);
    DenseMap<Operation *, unsigned> position;
    for (auto [index, op] : llvm::enumerate(segment))
      position[op] = index;
    SmallVector<unsigned> waiting(segment.size(), 0);
    SmallVector<SmallVector<unsigned>> users(segment.size());
    for (auto [index, op] : llvm::enumerate(segment))
      for (Value operand : op->getOperands())
        if (auto def = position.find(operand.getDefiningOp());
            def != position.end()) {
          ++waiting[index];
          users[def->second].push_back(index);
        }
    auto deviceOf = [&](unsigned index) -> DeviceAttr {
      auto placed = dyn_cast<PlacedOpInterface>(segment[index]);
      return placed ? placed.getPlacement() : nullptr;
    };
    std::set<unsigned> ready;
    for (unsigned index = 0; index < segment.size(); ++index)
      if (waiting[index] == 0)
        ready.insert(index);
    auto seedPlaced = dyn_cast<PlacedOpInterface>(seed);
    DeviceAttr current = seedPlaced ? seedPlaced.getPlacement() : nullptr;
    Operation *previous = seed;
    while (!ready.empty()) {
      auto next = llvm::find_if(ready, [&](unsigned index) {
        DeviceAttr device = deviceOf(index);
        return !device || device == current;
      });
      if (next == ready.end()) {
        next = ready.begin();
        current = deviceOf(*next);
      }
      unsigned index = *next;
      ready.erase(next);
      segment[index]->moveAfter(previous);
      previous = segment[index];
      for (unsigned user : users[index])
        if (--waiting[user] == 0)
          ready.insert(user);
    }
  }

  static void sinkPushes(Block &body) {
    SmallVector<Operation *> pushes;
    for (Operation &op : body)
      if (isa<PSPushOp, DensePushOp>(op))
        pushes.push_back(&op);
    for (Operation *push : pushes) {
      Operation *last = nullptr;
      for (Value operand : push->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == &body &&
            (!last || last->isBeforeInBlock(def)))
          last = def;
      if (last)
        push->moveAfter(last);
    }
  }

  /// Replica counts of the plan's stages, which match ours one to one when
  /// the plan came from this placement; 1 where there is no plan. In a
  /// training module the forward stages come first, in the plan's order, and
  /// the backward stages follow in reverse: each takes the replicas of the
  /// nearest earlier plan stage on its device, so a layer's backward runs
  /// as widely as its forward.
  SmallVector<int64_t> replicasFromPlan(ModuleOp module, ArrayRef<Stage> stages,
                                        bool training) {
    SmallVector<int64_t> replicas(stages.size(), 1);
    auto plan = module->getAttrOfType<DictionaryAttr>("hps.plan");
    auto planStages = plan ? plan.getAs<ArrayAttr>("stages") : nullptr;
    if (!planStages || planStages.size() > stages.size() ||
        (!training && planStages.size() != stages.size()))
      return replicas;
    auto planned = [&](size_t i, DeviceAttr device) -> std::optional<int64_t> {
      auto stage = dyn_cast<DictionaryAttr>(planStages[i]);
      if (!stage || stage.get("device") != device)
        return std::nullopt;
      auto count = stage.getAs<IntegerAttr>("replicas");
      return count ? count.getInt() : 1;
    };
    size_t forward = planStages.size();
    for (size_t i = 0; i < forward; ++i)
      if (auto count = planned(i, stages[i].device))
        replicas[i] = *count;
    int64_t next = static_cast<int64_t>(forward) - 1;
    for (size_t i = forward; i < stages.size(); ++i) {
      for (--next; next >= 0; --next)
        if (auto count = planned(next, stages[i].device)) {
          replicas[i] = *count;
          break;
        }
      if (next < 0)
        break;
    }
    return replicas;
  }
};

} // namespace
