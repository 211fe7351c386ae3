//===- OutlinePassKeys.cpp - --hps-outline-pass-keys ----------------------===//
//
// The runtime's pass cache must know, before a pass of training steps, every
// id the pass pulls from each parameter-server table. Those ids are computed
// inside the stages from the bundle's inputs (offsets added to the sparse
// features, say), so this pass copies exactly that computation into a
// program of its own: the same ops, lowered by the same code generation as
// the stages, so the keys it computes are the ids the stages pull.
//
//===----------------------------------------------------------------------===//

#include "heterps/Dialect/HPS/Transforms/PassKeys.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <set>

namespace heterps::hps {
#define GEN_PASS_DEF_HPSOUTLINEPASSKEYS
#include "heterps/Dialect/HPS/Transforms/Passes.h.inc"
} // namespace heterps::hps

using namespace mlir;
using namespace heterps::hps;

namespace {

/// `loc` as plain text for a message the runtime shows (an attribute would
/// escape quotes): model.onnx:3:7, a node's name, ...
std::string locationText(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  StringRef inner = text;
  if (inner.consume_front("loc(") && inner.consume_back(")"))
    text = inner.str();
  llvm::erase(text, '"');
  return text;
}

/// What makes `op` unfit for the pass-key program, or none. Its values must
/// be known from the bundle inputs alone, before any stage runs: no value
/// the parameter server holds or changes, no effect, no region.
std::optional<std::string> rejection(Operation *op) {
  if (auto weight = dyn_cast<WeightOp>(op)) {
    // As the bundle writer's isTrainable, plus server-updated statistics.
    if (weight->hasAttr("hps.trainable") || weight->hasAttr("hps.update"))
      return ("the trained weight '" + weight.getName() + "'").str();
    return std::nullopt;
  }
  if (isa<ConstantOp, NoneOp>(op))
    return std::nullopt;
  if (op->getNumRegions() != 0 ||
      !isa_and_nonnull<HPSDialect>(op->getDialect()) || !isMemoryEffectFree(op))
    return op->getName().getStringRef().str();
  return std::nullopt;
}

struct OutlinePassKeysPass
    : public heterps::hps::impl::HPSOutlinePassKeysBase<OutlinePassKeysPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module->hasAttr("hps.training"))
      return;
    auto main = module.lookupSymbol<func::FuncOp>("main");
    auto pipeline =
        main ? main->getAttrOfType<ArrayAttr>("hps.pipeline") : ArrayAttr();
    if (!pipeline) {
      emitError(module.getLoc(), "hps-outline-pass-keys needs a partitioned "
                                 "module (run --hps-partition first)");
      return signalPassFailure();
    }
    // Run again, it starts over.
    if (func::FuncOp old = getPassKeyProgram(module))
      old.erase();
    module->removeAttr(kPassKeysUnavailableAttrName);

    // The stages (a missing one is the bundle writer's to report), every
    // channel's sender, and the pulls in pipeline order.
    SmallVector<func::FuncOp> stages;
    for (Attribute symbol : pipeline)
      if (auto stage = module.lookupSymbol<func::FuncOp>(
              cast<FlatSymbolRefAttr>(symbol).getValue());
          stage && !stage.isExternal())
        stages.push_back(stage);
    senders.clear();
    SmallVector<PSPullOp> pulls;
    SmallVector<func::FuncOp> functions = {main};
    functions.append(stages.begin(), stages.end());
    for (func::FuncOp func : functions)
      func.walk([&](Operation *op) {
        if (auto send = dyn_cast<SendOp>(op))
          senders.try_emplace(send.getChannel(), send);
        else if (auto pull = dyn_cast<PSPullOp>(op))
          pulls.push_back(pull);
      });
    if (pulls.empty())
      return; // nothing to cache

    // The slice of every pull's ids, in one topological order: a value two
    // pulls share is computed once.
    this->main = main;
    order.clear();
    finished.clear();
    inputs.clear();
    for (PSPullOp pull : pulls)
      if (std::optional<std::string> why = collect(pull.getIds())) {
        module->setAttr(kPassKeysUnavailableAttrName,
                        StringAttr::get(module.getContext(),
                                        "ids of table '" + pull.getTable() +
                                            "' depend on " + *why));
        return;
      }

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(stages.empty() ? main : stages.back());
    auto program = builder.create<func::FuncOp>(
        main.getLoc(), kPassKeysFunctionName, builder.getFunctionType({}, {}));
    // The trainer's host CPU runs it, whatever device a pull's stage has.
    auto host = DeviceAttr::get(module.getContext(), "cpu.host");
    program->setAttr("hps.device", host);
    SmallVector<Attribute> tables;
    for (PSPullOp pull : pulls)
      tables.push_back(pull.getTableAttr());
    program->setAttr(kPassKeysAttrName, builder.getArrayAttr(tables));
    SmallVector<int64_t> inputIndices(inputs.begin(), inputs.end());
    program->setAttr(kPassKeyInputsAttrName,
                     builder.getDenseI64ArrayAttr(inputIndices));

    OpBuilder body = OpBuilder::atBlockEnd(program.addEntryBlock());
    DenseMap<Value, Value> computed; // source value -> its copy here
    for (auto [k, index] : llvm::enumerate(inputIndices)) {
      BlockArgument input = main.getArgument(index);
      computed[input] = body.create<RecvOp>(input.getLoc(), input.getType(),
                                            "pass_keys.in" + std::to_string(k));
    }
    for (Operation *op : order) {
      IRMapping mapping;
      for (Value operand : op->getOperands())
        mapping.map(operand, computed.lookup(source(operand)));
      Operation *copy = body.clone(*op, mapping);
      // CPU lowering applies to it; and it always runs, evaluating or not.
      if (auto placed = dyn_cast<PlacedOpInterface>(copy))
        placed.setPlacement(host);
      copy->removeAttr(kBackwardAttrName);
      for (auto [from, to] : llvm::zip(op->getResults(), copy->getResults()))
        computed[from] = to;
    }
    for (auto [k, pull] : llvm::enumerate(pulls))
      body.create<SendOp>(pull.getLoc(), computed.lookup(source(pull.getIds())),
                          "pass_keys.out" + std::to_string(k));
    body.create<func::ReturnOp>(main.getLoc());
  }

private:
  /// The value `value` stands for once channels are seen through: what the
  /// sender of a received channel sends, repeatedly.
  Value source(Value value) const {
    while (auto recv = value.getDefiningOp<RecvOp>()) {
      SendOp send = senders.lookup(recv.getChannel());
      if (!send)
        break; // rejected by collect()
      value = send.getValue();
    }
    return value;
  }

  /// Adds the ops computing `ids` to `order` (after their operands' ops)
  /// and the graph inputs they read to `inputs`; what makes that impossible
  /// if anything.
  std::optional<std::string> collect(Value ids) {
    // Depth first, each op finished after its operands: (op, next operand).
    SmallVector<std::pair<Operation *, unsigned>> stack;
    llvm::DenseSet<Operation *> entered;
    auto enter = [&](Value value) -> std::optional<std::string> {
      value = source(value);
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner()->getParentOp() != main)
          return std::string("a block argument outside @main");
        inputs.insert(arg.getArgNumber());
        return std::nullopt;
      }
      Operation *op = value.getDefiningOp();
      if (finished.contains(op) || !entered.insert(op).second)
        return std::nullopt;
      if (std::optional<std::string> why = rejection(op))
        return *why + " (" + locationText(op->getLoc()) + ")";
      stack.push_back({op, 0});
      return std::nullopt;
    };
    if (std::optional<std::string> why = enter(ids))
      return why;
    while (!stack.empty()) {
      auto &[op, next] = stack.back();
      if (next < op->getNumOperands()) {
        Value operand = op->getOperand(next++);
        if (std::optional<std::string> why = enter(operand))
          return why;
        continue;
      }
      finished.insert(op);
      order.push_back(op);
      stack.pop_back();
    }
    return std::nullopt;
  }

  func::FuncOp main;
  llvm::StringMap<SendOp> senders;
  /// The slices' ops, each after the ops of its operands.
  SmallVector<Operation *> order;
  llvm::DenseSet<Operation *> finished;
  /// The bundle inputs (@main's argument numbers) the slices read.
  std::set<unsigned> inputs;
};

} // namespace
