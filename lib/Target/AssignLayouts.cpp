//===- AssignLayouts.cpp - Native activation layouts in CPU stages --------===//
//
// oneDNN's convolutions want channel-blocked activations (nChw8c / nChw16c)
// for f32 and channels-last for int8. Chains of convolutions keep that
// layout instead of reordering to plain NCHW and back around every conv: a
// value is held natively when a conv, or an elementwise op (or loop) over
// operands in one native layout, produces it and a conv or such an op reads
// it in that layout. Every other reader gets a plain copy, made once by an
// hpsrt.relayout right after the producer.
//
//===----------------------------------------------------------------------===//

#include "FusionRegions.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Target/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace heterps::target {
#define GEN_PASS_DEF_HPSASSIGNLAYOUTS
#include "heterps/Target/Passes.h.inc"
} // namespace heterps::target

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

using hpsrt::Layout;

bool isTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape();
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// The conv a unit runs (alone or with its epilogue), or null.
ConvOp convOf(Operation *unit) {
  if (auto fused = dyn_cast<hpsrt::FusedDenseOp>(unit))
    return dyn_cast<ConvOp>(&fused.getBody().front().front());
  return dyn_cast<ConvOp>(unit);
}

/// The residual a fused conv adds, or null.
Value residualOf(Operation *unit) {
  auto fused = dyn_cast<hpsrt::FusedDenseOp>(unit);
  if (!fused || !convOf(unit))
    return nullptr;
  Block &body = fused.getBody().front();
  Operation *conv = &body.front();
  auto add = dyn_cast<AddOp>(conv->getNextNode());
  if (!add)
    return nullptr;
  return add.getLhs() == conv->getResult(0) ? add.getRhs() : add.getLhs();
}

/// The layout a conv's kernel reads its input in and writes its result in.
std::optional<Layout> convLayout(ConvOp conv) {
  if (getElementTypeOrSelf(conv.getResult().getType()).isF32())
    return Layout::Native;
  if (isInt8Conv(conv) &&
      getElementTypeOrSelf(conv.getInput().getType()).isUnsignedInteger(8))
    return Layout::ChannelsLast;
  return std::nullopt;
}

class LayoutAssignment {
public:
  explicit LayoutAssignment(Block &block) : block(block) {}

  void run();

private:
  static Value rootOf(Value value) { return viewSource(value); }
  Layout heldAs(Value root) const { return held.lookup(root); }
  /// Whether `value` is held as itself (not as a view of another shape).
  bool nativeAsIs(Value value) const {
    return isTensor(value) && held.count(rootOf(value)) &&
           shapeOf(value) == shapeOf(rootOf(value));
  }
  /// The layout `values` are all held in as themselves, or none when one is
  /// plain or they differ (or there are none).
  std::optional<Layout> heldInCommon(ArrayRef<Value> values) const {
    std::optional<Layout> common;
    for (Value value : values) {
      if (!nativeAsIs(value) || (common && *common != heldAs(rootOf(value))))
        return std::nullopt;
      common = heldAs(rootOf(value));
    }
    return common;
  }
  /// The values `unit` reads from above it, each once, in first-use order.
  SmallVector<Value> outerReads(Operation *unit) const;
  /// The values `unit` reads, each with the layout its kernel takes it in.
  SmallVector<std::pair<Value, Layout>> reads(Operation *unit) const;
  bool readsNative(Operation *unit, Value root) const;
  bool readNativeSomewhere(Value root) const {
    return llvm::any_of(readers.lookup(root), [&](Operation *reader) {
      return readsNative(reader, root);
    });
  }
  /// A loop's full-shape inputs' common layout (Native when it has none).
  std::optional<Layout> loopInputsHeld(hpsrt::FusedLoopOp loop) const;
  bool eligible(Value root, Layout layout) const;
  void decide();
  void record();

  Block &block;
  llvm::MapVector<Value, Layout> held; // roots held other than plain
  llvm::DenseMap<Value, SmallVector<Operation *>> readers;
};

SmallVector<Value> LayoutAssignment::outerReads(Operation *unit) const {
  if (isFusion(unit))
    return fusionInputs(unit);
  SmallVector<Value> values;
  for (Value operand : unit->getOperands())
    if (!llvm::is_contained(values, operand))
      values.push_back(operand);
  return values;
}

SmallVector<std::pair<Value, Layout>>
LayoutAssignment::reads(Operation *unit) const {
  SmallVector<std::pair<Value, Layout>> slots;
  if (auto loop = dyn_cast<hpsrt::FusedLoopOp>(unit)) {
    Layout loopHeld =
        loop->getNumResults() ? heldAs(loop->getResult(0)) : Layout::Plain;
    auto shape = shapeOf(loop.getBody().front().front().getResult(0));
    for (Value input : outerReads(unit))
      slots.push_back({input, isTensor(input) && shapeOf(input) == shape
                                  ? loopHeld
                                  : Layout::Plain});
  } else if (ConvOp conv = convOf(unit)) {
    slots = {{conv.getInput(), convLayout(conv).value_or(Layout::Plain)},
             {conv.getFilter(), Layout::Plain}};
    if (Value residual = residualOf(unit))
      slots.push_back({residual, heldAs(unit->getResult(0))});
  } else if (auto adjoint = dyn_cast<ConvGradInputOp>(unit)) {
    slots = {{adjoint.getGrad(), Layout::Native},
             {adjoint.getFilter(), Layout::Plain}};
  } else if (auto adjoint = dyn_cast<ConvGradFilterOp>(unit)) {
    slots = {{adjoint.getInput(), Layout::Native},
             {adjoint.getGrad(), Layout::Native}};
  } else {
    Layout agnostic = !isFusion(unit) && isLayoutAgnostic(unit)
                          ? heldAs(rootOf(unit->getResult(0)))
                          : Layout::Plain;
    for (Value value : outerReads(unit))
      slots.push_back({value, agnostic});
  }
  return slots;
}

bool LayoutAssignment::readsNative(Operation *unit, Value root) const {
  if (!held.count(root))
    return false;
  if (root.getDefiningOp() == unit)
    return true; // its producer writes it in its layout
  // Every read of `root` must take its layout, and be of `root` itself: a
  // view of another shape orders the same elements differently.
  bool any = false;
  for (auto [value, slot] : reads(unit)) {
    if (!isTensor(value) || rootOf(value) != root)
      continue;
    if (slot != heldAs(root) || shapeOf(value) != shapeOf(root))
      return false;
    any = true;
  }
  return any;
}

std::optional<Layout>
LayoutAssignment::loopInputsHeld(hpsrt::FusedLoopOp loop) const {
  auto shape = shapeOf(loop.getBody().front().front().getResult(0));
  SmallVector<Value> full;
  for (Value input : outerReads(loop))
    if (isTensor(input) && shapeOf(input) == shape)
      full.push_back(input);
  if (full.empty())
    return Layout::Native;
  return heldInCommon(full);
}

bool LayoutAssignment::eligible(Value root, Layout layout) const {
  auto shape = shapeOf(root);
  if (shape.size() < 3 || shape.size() > 5 ||
      (layout == Layout::Native &&
       shape[1] % hpsrt::kNativeChannelMultiple != 0))
    return false;
  // Stage outputs leave plain (and are written in place).
  return llvm::none_of(readers.lookup(root), [](Operation *reader) {
    return isa<SendOp, func::ReturnOp>(reader);
  });
}

void LayoutAssignment::decide() {
  for (Operation &unit : block) {
    if (isAlias(&unit))
      continue;
    for (Value value : outerReads(&unit)) {
      if (!isTensor(value))
        continue;
      auto &list = readers[rootOf(value)];
      if (!llvm::is_contained(list, &unit))
        list.push_back(&unit);
    }
    // A loop that also reads a value it stores (a member's result other
    // members use) reads it in the loop's own layout.
    if (auto loop = dyn_cast<hpsrt::FusedLoopOp>(unit)) {
      Operation *yield = loop.getBody().front().getTerminator();
      for (auto [result, stored] :
           llvm::zip(loop->getResults(), yield->getOperands()))
        if (llvm::any_of(stored.getUsers(),
                         [&](Operation *user) { return user != yield; }))
          readers[result].push_back(loop);
    }
  }
  // A loop runs in one layout: that of every full-shape value it reads, when
  // all it writes `can` be held so.
  auto loopNative = [&](hpsrt::FusedLoopOp loop, auto can) {
    std::optional<Layout> inputs = loopInputsHeld(loop);
    return loop->getNumResults() && inputs &&
           llvm::all_of(loop->getResults(),
                        [&](Value output) { return can(output, *inputs); });
  };
  for (Operation &unit : block) {
    if (isAlias(&unit))
      continue;
    if (auto loop = dyn_cast<hpsrt::FusedLoopOp>(unit)) {
      if (loopNative(loop, [&](Value v, Layout l) { return eligible(v, l); }))
        for (Value output : loop->getResults())
          held[output] = *loopInputsHeld(loop);
      continue;
    }
    if (unit.getNumResults() != 1 || !isTensor(unit.getResult(0)))
      continue;
    std::optional<Layout> layout;
    if (ConvOp conv = convOf(&unit))
      layout = convLayout(conv);
    else if (auto adjoint = dyn_cast<ConvGradInputOp>(unit);
             adjoint && getElementTypeOrSelf(adjoint.getType()).isF32())
      layout = Layout::Native;
    else if (isLayoutAgnostic(&unit))
      layout = heldInCommon(layoutOperands(&unit));
    if (layout && eligible(unit.getResult(0), *layout))
      held[unit.getResult(0)] = *layout;
  }
  // Drop what would only cost a relayout, and keep every elementwise op
  // (and a conv with its residual) in one layout, until nothing changes.
  for (bool changed = true; changed;) {
    SmallVector<Value> drop;
    for (auto [root, layout] : held) {
      Operation *producer = root.getDefiningOp();
      bool consistent = true;
      auto loop = dyn_cast<hpsrt::FusedLoopOp>(producer);
      if (loop)
        consistent = loopNative(loop, [&](Value output, Layout loopLayout) {
          return heldAs(output) == loopLayout;
        });
      else if (Value residual = residualOf(producer))
        consistent = nativeAsIs(residual) && heldAs(rootOf(residual)) == layout;
      else if (!convOf(producer) && !isa<ConvGradInputOp>(producer))
        consistent = heldInCommon(layoutOperands(producer)) == layout;
      bool readNative = readNativeSomewhere(root);
      // A loop read by plain readers only still runs held when dropping it
      // would cost more: a reorder for each value it reads held, against a
      // plain copy of each output nobody reads held.
      if (loop && !readNative) {
        auto shape = shapeOf(loop.getBody().front().front().getResult(0));
        auto heldInputs = llvm::count_if(outerReads(loop), [&](Value input) {
          return isTensor(input) && shapeOf(input) == shape &&
                 nativeAsIs(input);
        });
        auto plainOutputs =
            llvm::count_if(loop->getResults(), [&](Value output) {
              return !readNativeSomewhere(output);
            });
        readNative = heldInputs > plainOutputs;
      }
      // Relayout copies blocked tensors of f32 only: a bool mask must be
      // read natively by all.
      bool copyable = layout == Layout::ChannelsLast ||
                      getElementTypeOrSelf(root.getType()).isF32() ||
                      llvm::all_of(readers.lookup(root), [&](Operation *r) {
                        return readsNative(r, root);
                      });
      if (!consistent || !readNative || !copyable)
        drop.push_back(root);
    }
    for (Value root : drop)
      held.erase(root);
    changed = !drop.empty();
  }
}

void LayoutAssignment::record() {
  // Decide every plain reader before the IR changes under the analysis.
  llvm::MapVector<Value, SmallVector<Operation *>> plainReaders;
  for (auto [root, layout] : held)
    for (Operation *reader : readers.lookup(root))
      if (!readsNative(reader, root))
        plainReaders[root].push_back(reader);

  MLIRContext *context = block.getParentOp()->getContext();
  for (Operation &unit : block) {
    if (llvm::none_of(unit.getResults(),
                      [&](Value result) { return held.count(result); }))
      continue;
    SmallVector<Attribute> layouts;
    for (Value result : unit.getResults())
      layouts.push_back(hpsrt::LayoutAttr::get(context, heldAs(result)));
    unit.setAttr(kHeldLayoutsAttrName, ArrayAttr::get(context, layouts));
  }
  for (auto &[root, plain] : plainReaders) {
    OpBuilder builder(context);
    builder.setInsertionPointAfter(root.getDefiningOp());
    auto type = cast<RankedTensorType>(root.getType());
    auto relayout = builder.create<hpsrt::RelayoutOp>(
        root.getLoc(), type, root, type.getElementType(), type.getShape(),
        heldAs(root), Layout::Plain);
    if (isBackward(root.getDefiningOp()))
      relayout->setAttr(kBackwardAttrName, builder.getUnitAttr());
    Value copy = relayout.getResult();
    for (Operation *reader : plain) {
      // Its reads of `root`, directly or through views, take the copy (the
      // views cloned onto it just before the reader).
      SmallVector<OpOperand *> uses;
      reader->walk([&](Operation *op) {
        for (OpOperand &use : op->getOpOperands())
          if (use.get().getParentBlock() == &block && isTensor(use.get()) &&
              rootOf(use.get()) == root)
            uses.push_back(&use);
      });
      for (OpOperand *use : uses) {
        SmallVector<Operation *> views;
        for (Value value = use->get(); value != root;
             value = value.getDefiningOp()->getOperand(0))
          views.push_back(value.getDefiningOp());
        IRMapping mapping;
        mapping.map(root, copy);
        builder.setInsertionPoint(reader);
        for (Operation *view : llvm::reverse(views))
          builder.clone(*view, mapping);
        use->set(mapping.lookup(use->get()));
        // Views only plain readers read are gone with their reads.
        for (Operation *view : views)
          if (view->use_empty())
            view->erase();
      }
    }
  }
}

void LayoutAssignment::run() {
  decide();
  record();
}

struct AssignLayouts
    : public target::impl::HPSAssignLayoutsBase<AssignLayouts> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto device = func->getAttrOfType<DeviceAttr>("hps.device");
    if (!device || device.getKind() == DeviceKind::GPU || func.isExternal())
      return;
    // Layouts already assigned stay as they are (a relayout must not be
    // mistaken for a plain reader of the value it copies).
    Block &block = func.getBody().front();
    if (llvm::any_of(block, [](Operation &op) {
          return isa<hpsrt::RelayoutOp>(op) || op.hasAttr(kHeldLayoutsAttrName);
        }))
      return;
    LayoutAssignment(block).run();
  }
};

} // namespace
