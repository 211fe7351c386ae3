//===- StageEmitter.cpp - One stage function -> its C++ program -----------===//
//
// Each stage function becomes one C++ translation unit over the runtime's
// kernel API: a `Stage` struct whose constructor builds every kernel once
// (oneDNN primitives, cuDNN descriptors) and whose run() calls them on
// buffers planned statically by liveness. The text is backend-neutral: the
// `backend` namespace alias picks the CPU or CUDA kernels, so a GPU stage's
// .cu also builds for the CPU when the user asks for that.
//
//===----------------------------------------------------------------------===//

#include "StageEmitter.h"
#include "ElementwiseFusion.h"
#include "FusionRegions.h"
#include "KernelCalls.h"
#include "RuntimeKinds.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// The hps enums the runtime's mirror case for case (by value).
#define HPS_SAME_ENUMERATOR(Enum, Name)                                        \
  static_assert(static_cast<uint32_t>(hps::Enum::Name) ==                      \
                    static_cast<uint32_t>(hpsrt::Enum::Name),                  \
                #Enum "::" #Name " differs between hps and hpsrt");
HPS_SAME_ENUMERATOR(ReduceKind, Sum)
HPS_SAME_ENUMERATOR(ReduceKind, Mean)
HPS_SAME_ENUMERATOR(ReduceKind, Max)
HPS_SAME_ENUMERATOR(ReduceKind, Min)
HPS_SAME_ENUMERATOR(ReduceKind, Prod)
HPS_SAME_ENUMERATOR(ReduceKind, L1)
HPS_SAME_ENUMERATOR(ReduceKind, L2)
HPS_SAME_ENUMERATOR(ReduceKind, LogSum)
HPS_SAME_ENUMERATOR(ReduceKind, LogSumExp)
HPS_SAME_ENUMERATOR(ReduceKind, SumSquare)
HPS_SAME_ENUMERATOR(PadMode, Constant)
HPS_SAME_ENUMERATOR(PadMode, Reflect)
HPS_SAME_ENUMERATOR(PadMode, Edge)
HPS_SAME_ENUMERATOR(ScatterReduction, None)
HPS_SAME_ENUMERATOR(ScatterReduction, Add)
HPS_SAME_ENUMERATOR(ScatterReduction, Mul)
HPS_SAME_ENUMERATOR(ScatterReduction, Max)
HPS_SAME_ENUMERATOR(ScatterReduction, Min)
HPS_SAME_ENUMERATOR(LossKind, BCE)
HPS_SAME_ENUMERATOR(LossKind, SoftmaxCE)
HPS_SAME_ENUMERATOR(LossKind, MSE)
HPS_SAME_ENUMERATOR(EmbeddingPooling, None)
HPS_SAME_ENUMERATOR(EmbeddingPooling, Sum)
HPS_SAME_ENUMERATOR(EmbeddingPooling, Mean)
#undef HPS_SAME_ENUMERATOR

template <typename To, typename From> To sameEnumerator(From value) {
  return static_cast<To>(static_cast<uint32_t>(value));
}

hpsrt::EmbeddingPooling runtimePooling(EmbeddingPooling pooling) {
  return sameEnumerator<hpsrt::EmbeddingPooling>(pooling);
}

FloatAttr f32(MLIRContext *context, double value) {
  return FloatAttr::get(Float32Type::get(context), value);
}

hpsrt::UnaryParamsAttr unaryParams(MLIRContext *context,
                                   const RuntimeUnary &unary) {
  auto f64 = [&](double value) {
    return FloatAttr::get(Float64Type::get(context), value);
  };
  return hpsrt::UnaryParamsAttr::get(context, f32(context, unary.alpha),
                                     f32(context, unary.beta), f64(unary.lo),
                                     f64(unary.hi));
}

/// The RecurrentParams of an hps.recurrence or its adjoint; `input` > 0:
/// the kernel projects an input of that size itself.
template <typename OpTy>
hpsrt::RecurrentParamsAttr recurrentParams(OpTy rec, int64_t input = 0) {
  MLIRContext *context = rec.getContext();
  Builder attrs(context);
  auto dims = cast<RankedTensorType>(rec.getProjected().getType()).getShape();
  int64_t hidden =
      cast<RankedTensorType>(rec.getRecurrence().getType()).getDimSize(1);
  hpsrt::RecurrentCell cell = rec.getCell() == "rnn" ? hpsrt::RecurrentCell::RNN
                              : rec.getCell() == "gru"
                                  ? hpsrt::RecurrentCell::GRU
                                  : hpsrt::RecurrentCell::LSTM;
  // The runtime's defaults where ONNX names fewer.
  SmallVector<Attribute> activations = {
      hpsrt::UnaryKindAttr::get(context, hpsrt::UnaryKind::Sigmoid),
      hpsrt::UnaryKindAttr::get(context, hpsrt::UnaryKind::Tanh),
      hpsrt::UnaryKindAttr::get(context, hpsrt::UnaryKind::Tanh)};
  // The verifier holds at most three, each Sigmoid, Tanh or Relu.
  for (auto [i, name] : llvm::enumerate(
           rec.getActivations().template getAsValueRange<StringAttr>()))
    activations[i] =
        hpsrt::UnaryKindAttr::get(context, *hpsrt::symbolizeUnaryKind(name));
  std::optional<APFloat> clip = rec.getClip();
  return hpsrt::RecurrentParamsAttr::get(
      context, hpsrt::RecurrentCellAttr::get(context, cell),
      attrs.getI64IntegerAttr(dims[0]), attrs.getI64IntegerAttr(dims[1]),
      attrs.getI64IntegerAttr(hidden), attrs.getBoolAttr(rec.getReverse()),
      attrs.getArrayAttr(activations), attrs.getBoolAttr(clip.has_value()),
      f32(context, clip ? clip->convertToDouble() : 0.0),
      attrs.getBoolAttr(rec.getLinearBeforeReset()),
      /*hasRecurrentBias=*/attrs.getBoolAttr(true),
      attrs.getBoolAttr(bool(rec.getLengths())),
      attrs.getBoolAttr(bool(rec.getPeepholes())),
      attrs.getI64IntegerAttr(input));
}

//===----------------------------------------------------------------------===//
// One stage
//===----------------------------------------------------------------------===//

/// Where a tensor lives while a stage runs.
struct Storage {
  enum Kind { Arena, Weight, Table, Input, Parameter, None } kind = None;
  uint64_t offset = 0; // Arena and Weight
  unsigned index = 0;  // Input: position; Table, Parameter: slot
};

struct TensorInfo {
  std::string dtype;
  SmallVector<int64_t> shape;
  uint64_t bytes = 0;
  Value root; // the value whose storage this one shares (reshapes)
};

class StageEmitter {
public:
  /// Fusions and layouts are read from the stage's IR, as
  /// --hps-prepare-stages leaves it.
  StageEmitter(func::FuncOp func, WeightsFile &weights,
               llvm::StringMap<TableEntry> &tables, TrainedState *trained)
      : func(func), context(func.getContext()), weights(weights),
        tables(tables), trained(trained) {
    context->getOrLoadDialect<hpsrt::HPSRTDialect>();
  }

  LogicalResult emit();

  /// The stage struct's body, and the fused loops' functors it uses
  /// (namespace scope: nvcc takes no local type as a kernel's template
  /// argument).
  std::string source, functors;
  uint64_t arenaBytes = 0;
  uint64_t weightsBegin = 0, weightsEnd = 0;
  SmallVector<std::string> inputChannels, outputChannels;
  SmallVector<std::string> tableNames;
  unsigned kernelCount = 0;

private:
  LogicalResult collectTensors();
  LogicalResult recordFusions();
  /// The group `op` belongs to, or null.
  const ElementGroup *groupOf(Operation *op) const {
    auto found = groupIndex.find(op);
    return found == groupIndex.end() ? nullptr : &groups[found->second];
  }
  LogicalResult emitGroup(const ElementGroup &group);
  /// The layouts --hps-assign-layouts recorded (hpsrt.held_layouts).
  void recordLayouts();
  /// The runtime's layout `root` is held in.
  hpsrt::Layout heldLayout(Value root) const {
    return heldLayouts.lookup(root); // Plain when absent
  }
  /// The runtime's Layout a kernel reads or writes `value` in: the one it is
  /// held in (readers that want it plain read an hpsrt.relayout's copy).
  hpsrt::LayoutAttr layoutAttr(Value value) const {
    return hpsrt::LayoutAttr::get(context, heldLayout(rootOf(value)));
  }
  LogicalResult recordBufferPlan();
  LogicalResult emitOp(Operation *op);
  LogicalResult emitTrainingPull(PSPullOp pull);
  std::string ptr(Value value) const;
  std::string cptr(Value value) const;
  std::string kernel(StringRef cls, const std::string &args);
  /// A runtime call of the op being emitted, built into `calls`.
  template <typename CallOp, typename... Args>
  CallOp build(Location loc, Args &&...args) {
    OpBuilder builder(context);
    builder.setInsertionPointToEnd(&calls);
    return builder.create<CallOp>(loc, std::forward<Args>(args)...);
  }
  /// Emits the construction and run of `call`, an hpsrt kernel op. Its
  /// results are stored as the values `written` says, in order (what the
  /// hps op computes); results past those, or null, live where
  /// `callPointers` says.
  void emitCall(Operation *call, ArrayRef<Value> written = {});
  /// A value standing for memory the stage's IR does not hold (a server
  /// table, a scratch buffer) at `pointer`.
  Value placeholder(Location loc, Type type, std::string pointer) {
    Value value =
        build<UnrealizedConversionCastOp>(loc, TypeRange{type}, ValueRange{})
            .getResult(0);
    callPointers[value] = std::move(pointer);
    return value;
  }
  static Type elementType(Value value) {
    return getElementTypeOrSelf(value.getType());
  }
  FloatAttr f32(double value) const { return ::f32(context, value); }
  hpsrt::UnaryParamsAttr unaryParams(const RuntimeUnary &unary) const {
    return ::unaryParams(context, unary);
  }
  /// The activation fused into `dense` (Identity when none).
  hpsrt::ActivationAttr activationOf(Operation *dense) const {
    RuntimeUnary unary;
    if (Operation *activation = fusedActivation.lookup(dense))
      unary = *runtimeUnary(activation);
    return hpsrt::ActivationAttr::get(
        context, hpsrt::UnaryKindAttr::get(context, unary.kind),
        unaryParams(unary));
  }
  int64_t numElementsOf(Value value) const {
    int64_t n = 1;
    for (int64_t extent : info(value).shape)
      n *= extent;
    return n;
  }
  uint64_t elementBytesOf(Value value) const {
    return info(value).bytes / std::max<int64_t>(numElementsOf(value), 1);
  }
  /// A buffer of the arena for a kernel's intermediate result, never
  /// shared (intermediates are rare: mixed-type Pow).
  std::string scratch(uint64_t bytes) {
    uint64_t offset = alignUp(arenaBytes);
    arenaBytes = offset + alignUp(std::max<uint64_t>(bytes, 1));
    return "(arena + " + std::to_string(offset) + ")";
  }
  const TensorInfo &info(Value value) const {
    return tensors.find(value)->second;
  }
  Value rootOf(Value value) const { return info(value).root; }
  InFlightDiagnostic fail(Operation *op, const Twine &message) {
    return op->emitError() << "cannot lower to the runtime: " << message;
  }

  func::FuncOp func;
  MLIRContext *context;
  WeightsFile &weights;
  llvm::StringMap<TableEntry> &tables;
  /// Null for inference bundles.
  TrainedState *trained;
  SmallVector<std::string> parameterNames;
  llvm::DenseMap<Value, TensorInfo> tensors;
  llvm::DenseMap<Value, Storage> storage; // keyed by root values
  /// What the fusion ops say, by op: ops fused into a dense op (an
  /// activation; a residual add into a conv): fused op -> dense op.
  llvm::DenseMap<Operation *, Operation *> fusedInto;
  llvm::DenseMap<Operation *, Operation *> fusedActivation;
  /// A conv's fused residual: conv -> the add's other operand.
  llvm::DenseMap<Operation *, Value> fusedResidual;
  /// The stage's ops in order, each fusion's after the ops in its body:
  /// where the fused kernel runs, its body's ops have just run.
  SmallVector<Operation *> stageOps;
  /// Input projection gemms a recurrence runs itself: gemm -> recurrence,
  /// and recurrence -> gemm. Their X W^T + Wb is never stored.
  llvm::DenseMap<Operation *, Operation *> projectedIn;
  llvm::DenseMap<Operation *, GemmOp> projectionOf;
  std::vector<ElementGroup> groups;
  llvm::DenseMap<Operation *, unsigned> groupIndex;
  /// Roots held in a layout other than plain, as hpsrt.held_layouts says.
  llvm::DenseMap<Value, hpsrt::Layout> heldLayouts;
  /// The op being emitted: a backward one's statements run only while
  /// training (step()).
  Operation *emitting = nullptr;
  /// Kernels by class, in first-use order: each class is one member array
  /// (`kGemm[3]`), so the stage's destructor and the constructor's unwind
  /// path are a loop per class, not a call per kernel.
  llvm::MapVector<StringRef, unsigned> kernelsPerClass;
  llvm::StringSet<> kernelClassNames; // owns kernelsPerClass's keys
  /// The runtime calls of the op being emitted (hpsrt ops over its values),
  /// printed and dropped before the next op; where their results that are
  /// not the op's own live (scratch buffers), and whose
  /// storage the others use.
  Block calls;
  llvm::DenseMap<Value, std::string> callPointers;
  llvm::DenseMap<Value, Value> storedAs;
  /// Kernel constructions, one statement each, emitted in chunks.
  std::vector<std::string> setup;
  std::string prologue;
  /// The run's statements in order, emitted in chunks like `setup`.
  std::vector<std::string> steps;
  /// A backward op's statements run only while training: an evaluating run
  /// computes the forward outputs alone.
  void step(std::string statement) {
    if (trained && emitting && isBackward(emitting)) {
      std::string guarded = "    if (!evaluating) {\n";
      for (llvm::StringRef line : llvm::split(statement, '\n'))
        if (!line.empty())
          guarded += "  " + line.str() + "\n";
      statement = guarded + "    }\n";
    }
    steps.push_back(std::move(statement));
  }
  /// Pointers the run sets and its chunks read: stage inputs and outputs,
  /// trained parameters. Members, since a run spans several functions.
  std::string pointerMembers;
  /// Functor source (with kFunctorName for its name) -> name: identical
  /// loops (an unrolled recurrence has one per step) share one functor.
  llvm::StringMap<std::string> functorNames;
  /// Tensors that live in the caller's buffers on host backends: a stage
  /// input read in place ("inK") or a stage output written in place
  /// ("outK"), by root value.
  llvm::DenseMap<Value, std::string> ioPointer;
};

LogicalResult StageEmitter::collectTensors() {
  for (Operation &body : func.getBody().front()) {
    if (isFusion(&body))
      for (Operation &op : body.getRegion(0).front().without_terminator())
        stageOps.push_back(&op);
    stageOps.push_back(&body);
  }
  for (Operation *opPointer : stageOps) {
    Operation &op = *opPointer;
    // A fusion's results are what its body yields.
    if (isFusion(&op)) {
      for (auto [result, yielded] :
           llvm::zip(op.getResults(),
                     op.getRegion(0).front().getTerminator()->getOperands())) {
        TensorInfo entry = info(yielded); // before tensors may grow
        tensors[result] = std::move(entry);
      }
      continue;
    }
    for (Value result : op.getResults()) {
      if (isa<NoneType>(result.getType()))
        continue;
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.hasStaticShape())
        return fail(&op, "result type ")
               << result.getType()
               << " is not static; bind symbolic input dims with --batch, "
                  "--dim or --input-shape";
      TensorInfo entry;
      entry.dtype = dtypeName(type.getElementType());
      if (entry.dtype.empty())
        return fail(&op, "element type ")
               << type.getElementType() << " has no runtime counterpart";
      entry.shape.assign(type.getShape().begin(), type.getShape().end());
      entry.bytes = type.getNumElements() * elementBytes(type.getElementType());
      entry.root = isAlias(&op) ? rootOf(op.getOperand(0)) : result;
      tensors[result] = entry;
    }
  }
  return success();
}

/// The fusions the stage's fusion ops record, as the emitter's maps; the
/// fused values' storage is that of the value the kernel stores.
LogicalResult StageEmitter::recordFusions() {
  for (Operation &op : func.getBody().front()) {
    if (!isFusion(&op))
      continue;
    SmallVector<Operation *> ops;
    for (Operation &member : op.getRegion(0).front().without_terminator())
      ops.push_back(&member);
    if (isa<hpsrt::FusedDenseOp>(op)) {
      Operation *dense = ops.front();
      for (Operation *fused : ArrayRef(ops).drop_front()) {
        Value result = fused->getResult(0);
        if (auto add = dyn_cast<AddOp>(fused); add && isa<ConvOp>(dense)) {
          Value residual =
              add.getLhs() == dense->getResult(0) ? add.getRhs() : add.getLhs();
          fusedResidual[dense] = residual;
        } else if (!runtimeUnary(fused) || isa<NotOp>(fused)) {
          return fail(fused, "no activation the dense kernels apply");
        } else {
          fusedActivation[dense] = fused;
        }
        fusedInto[fused] = dense;
        tensors[result].root = dense->getResult(0);
      }
    } else if (isa<hpsrt::FusedLoopOp>(op)) {
      ElementGroup group;
      group.ops = ops;
      auto shape = info(ops.front()->getResult(0)).shape;
      group.shape.assign(shape.begin(), shape.end());
      group.inputs = fusionInputs(&op);
      for (Value output :
           op.getRegion(0).front().getTerminator()->getOperands())
        group.outputs.push_back(output);
      for (Operation *member : ops)
        groupIndex[member] = groups.size();
      groups.push_back(std::move(group));
    } else if (auto gemm = dyn_cast<GemmOp>(ops.front());
               gemm && isa<hpsrt::ProjectedRecurrenceOp>(op)) {
      projectedIn[gemm] = ops.back();
      projectionOf[ops.back()] = gemm;
    }
  }
  // Views of a fused result and the fusions' results share the storage of
  // what the kernel stores now: resolve their roots again, in order.
  for (Operation *op : stageOps) {
    if (isAlias(op))
      for (Value result : op->getResults())
        tensors[result].root = rootOf(op->getOperand(0));
    if (isFusion(op))
      for (auto [result, yielded] :
           llvm::zip(op->getResults(),
                     op->getRegion(0).front().getTerminator()->getOperands()))
        tensors[result].root = rootOf(yielded);
  }
  return success();
}

void StageEmitter::recordLayouts() {
  for (Operation &op : func.getBody().front()) {
    auto layouts = op.getAttrOfType<ArrayAttr>(kHeldLayoutsAttrName);
    if (!layouts)
      continue;
    for (auto [result, layout] : llvm::zip(op.getResults(), layouts)) {
      hpsrt::Layout held = cast<hpsrt::LayoutAttr>(layout).getValue();
      if (held == hpsrt::Layout::Plain)
        continue;
      heldLayouts[rootOf(result)] = held;
    }
  }
}

/// Where --hps-plan-buffers put each stored value (hpsrt.arena_offsets).
LogicalResult StageEmitter::recordBufferPlan() {
  auto bytes = func->getAttrOfType<IntegerAttr>(kArenaBytesAttrName);
  if (!bytes)
    return fail(func, "the stage has no buffer plan (")
           << kArenaBytesAttrName << "): run --hps-prepare-stages first";
  arenaBytes = bytes.getInt();
  for (Operation &op : func.getBody().front()) {
    auto offsets = op.getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttrName);
    if (!offsets)
      continue;
    for (auto [result, offset] :
         llvm::zip(op.getResults(), offsets.asArrayRef()))
      if (offset != kNotInArena && tensors.count(result))
        storage[rootOf(result)] = {Storage::Arena, uint64_t(offset), 0};
  }
  return success();
}

std::string StageEmitter::cptr(Value value) const {
  if (!value || isa<NoneType>(value.getType()))
    return "nullptr";
  return "static_cast<const void *>(" + ptr(value) + ")";
}

std::string StageEmitter::ptr(Value value) const {
  if (!value || isa<NoneType>(value.getType()))
    return "nullptr";
  if (auto pointer = callPointers.find(value); pointer != callPointers.end())
    return pointer->second;
  if (auto stored = storedAs.find(value); stored != storedAs.end())
    value = stored->second;
  if (auto io = ioPointer.find(rootOf(value)); io != ioPointer.end())
    return io->second;
  const Storage &slot = storage.find(rootOf(value))->second;
  switch (slot.kind) {
  case Storage::Arena:
    return "(arena + " + std::to_string(slot.offset) + ")";
  case Storage::Weight:
    return "(weights + " + std::to_string(slot.offset - weightsBegin) + ")";
  case Storage::Table:
    return "tables[" + std::to_string(slot.index) + "]";
  case Storage::Parameter:
    return "param" + std::to_string(slot.index);
  case Storage::Input:
  case Storage::None:
    break;
  }
  return "nullptr";
}

std::string StageEmitter::kernel(StringRef cls, const std::string &args) {
  ++kernelCount;
  StringRef key = kernelClassNames.insert(cls).first->getKey();
  std::string name =
      llvm::formatv("k{0}[{1}]", cls, kernelsPerClass[key]++).str();
  setup.push_back(
      llvm::formatv("    {0} = std::make_unique<backend::{1}>(ctx, {2});\n",
                    name, cls, args)
          .str());
  return name;
}

void StageEmitter::emitCall(Operation *call, ArrayRef<Value> written) {
  for (auto [result, value] : llvm::zip(call->getResults(), written))
    if (value)
      storedAs[result] = value;
  std::optional<target::KernelCall> described =
      target::describeKernelCall(call);
  assert(described && "emitCall takes hpsrt kernel ops");
  std::string name = kernel(described->kernelClass,
                            llvm::join(described->constructorArguments, ", "));
  // Variadic parameters take arrays, declared in a scope of their own.
  std::string arrays;
  SmallVector<std::string> arguments;
  for (const target::RunArgument &argument : described->runArguments) {
    auto pointer = [&](Value value) {
      return argument.write ? "static_cast<void *>(" + ptr(value) + ")"
                            : cptr(value);
    };
    if (!argument.variadic) {
      arguments.push_back(argument.values.empty() ? std::string("nullptr")
                          : argument.write        ? ptr(argument.values.front())
                                           : cptr(argument.values.front()));
      continue;
    }
    arrays += llvm::formatv(
                  "      {0}{1}[] = {{{2}};\n",
                  argument.write ? "void *" : "const void *", argument.name,
                  llvm::join(llvm::map_range(argument.values, pointer), ", "))
                  .str();
    arguments.push_back(argument.name);
  }
  std::string run =
      llvm::formatv("{0}->{1}({2});\n", name, described->runMethod,
                    llvm::join(arguments, ", "))
          .str();
  step(arrays.empty() ? "    " + run
                      : "    {\n" + arrays + "      " + run + "    }\n");
}

/// The ONNX node an op comes from: the importer's NameLoc, possibly inside
/// the FusedLoc or CallSiteLoc of later rewrites; "" if none.
std::string onnxNodeOf(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::string node = onnxNodeOf(part); !node.empty())
        return node;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return onnxNodeOf(callSite.getCallee());
  return "";
}

/// `text` as a C++ string literal: printable ASCII as it is, anything else
/// (quotes, backslashes, bytes of UTF-8) as three-digit octal escapes.
std::string cStringLiteral(StringRef text) {
  std::string literal = "\"";
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') {
      literal += char(c);
      continue;
    }
    literal += '\\';
    literal += char('0' + (c >> 6));
    literal += char('0' + ((c >> 3) & 7));
    literal += char('0' + (c & 7));
  }
  return literal + "\"";
}

/// Cuts `statements` into member functions of `perFunction` statements
/// each, named `name`0, `name`1, ... and marked `attribute`: writes their
/// calls to `calls` and returns their definitions.
std::string memberFunctions(ArrayRef<std::string> statements,
                            size_t perFunction, StringRef name,
                            StringRef attribute, raw_ostream &calls) {
  std::string definitions;
  for (size_t begin = 0; begin < statements.size(); begin += perFunction) {
    std::string function = (name + Twine(begin / perFunction)).str();
    calls << "    " << function << "();\n";
    definitions += ("\n  " + attribute + " void " + function + "() {\n").str();
    for (const std::string &statement : statements.slice(
             begin, std::min(perFunction, statements.size() - begin)))
      definitions += statement;
    definitions += "  }\n";
  }
  return definitions;
}

LogicalResult StageEmitter::emit() {
  if (failed(collectTensors()))
    return failure();

  if (failed(recordFusions()))
    return failure();

  // Weights, constants and static shapes go where --hps-pack-weights put
  // them in weights.bin.
  auto range = func->getAttrOfType<DenseI64ArrayAttr>(kWeightsRangeAttrName);
  if (!range || range.size() != 2)
    return fail(func, "the stage has no share of weights.bin (")
           << kWeightsRangeAttrName << "): run --hps-prepare-stages first";
  weightsBegin = range[0];
  weightsEnd = range[1];
  for (Operation &op : llvm::make_pointee_range(stageOps)) {
    if (auto weight = dyn_cast<WeightOp>(op); isTrainable(weight)) {
      // Read from the parameter server's live value on every run.
      if (!trained)
        return fail(&op, "a trainable weight outside a training module "
                         "(hps.trainable without hps.training)");
      if (!weight.getType().getElementType().isF32())
        return fail(&op, "trainable parameters must be f32");
      trained->parameters.insert({weight.getName(), weight});
      auto *it = llvm::find(parameterNames, weight.getName().str());
      unsigned slot = it - parameterNames.begin();
      if (it == parameterNames.end())
        parameterNames.push_back(weight.getName().str());
      storage[weight.getResult()] = {Storage::Parameter, 0, slot};
      continue;
    }
    if (!isa<WeightOp, ConstantOp, ShapeOp>(op))
      continue;
    FailureOr<std::string> data = failure();
    if (auto shape = dyn_cast<ShapeOp>(op)) {
      // Static shapes: the extents are known now.
      auto input = cast<RankedTensorType>(shape.getInput().getType());
      int64_t rank = input.getRank();
      int64_t start =
          std::clamp<int64_t>(normalizeAxis(shape.getStart(), rank), 0, rank);
      int64_t end = shape.getEnd()
                        ? std::clamp<int64_t>(
                              normalizeAxis(*shape.getEnd(), rank), 0, rank)
                        : rank;
      std::vector<int64_t> extents;
      for (int64_t i = start; i < end; ++i)
        extents.push_back(input.getDimSize(i));
      data = std::string(reinterpret_cast<const char *>(extents.data()),
                         extents.size() * sizeof(int64_t));
    } else {
      auto weight = dyn_cast<WeightOp>(op);
      data =
          bytesOf(weight ? weight.getValue() : cast<ConstantOp>(op).getValue());
      if (failed(data))
        return fail(&op, isa<WeightOp>(op) ? "weight data is not dense"
                                           : "constant data is not dense");
    }
    auto offset = op.getAttrOfType<IntegerAttr>(kWeightsOffsetAttrName);
    if (!offset || uint64_t(offset.getInt()) < weightsBegin ||
        offset.getInt() + data->size() > weightsEnd)
      return fail(&op, "no place in the stage's share of weights.bin (")
             << kWeightsOffsetAttrName << ")";
    if (failed(weights.put(offset.getInt(), *data)))
      return fail(&op, "its place in weights.bin overlaps another's");
    storage[op.getResult(0)] = {Storage::Weight, uint64_t(offset.getInt()), 0};
  }
  weights.fill(weightsEnd);

  recordLayouts();
  if (failed(recordBufferPlan()))
    return failure();

  // A kernel whose result leaves the stage writes it straight into the
  // caller's output buffer on host backends (the first channel it is sent
  // on); on a GPU it lands in the arena and is downloaded.
  unsigned sendIndex = 0;
  for (Operation &op : llvm::make_pointee_range(stageOps)) {
    auto send = dyn_cast<SendOp>(op);
    if (!send)
      continue;
    unsigned index = sendIndex++;
    Value root = rootOf(send.getValue());
    Operation *producer = root.getDefiningOp();
    auto slot = storage.find(root);
    if (!producer || isa<RecvOp>(producer) || ioPointer.count(root) ||
        heldLayouts.count(root) || slot == storage.end() ||
        slot->second.kind != Storage::Arena)
      continue;
    std::string name = "out" + std::to_string(index);
    ioPointer[root] = name;
    pointerMembers += "  char *" + name + " = nullptr;\n";
    prologue += llvm::formatv("    {0} = stageOutput(outputs[{1}], arena + "
                              "{2});\n",
                              name, index, slot->second.offset)
                    .str();
  }
  // Each op's statements first say which ONNX node they run (one store),
  // where that changes: an error names it (rethrowAtNode).
  std::string stepNode, setupNode;
  auto markNode = [](std::vector<std::string> &statements, size_t before,
                     const std::string &node, std::string &last) {
    if (node.empty() || statements.size() == before || node == last)
      return;
    statements.insert(statements.begin() + ptrdiff_t(before),
                      "    node = " + cStringLiteral(node) + ";\n");
    last = node;
  };
  for (Operation &op : llvm::make_pointee_range(stageOps)) {
    emitting = &op;
    const size_t stepsBefore = steps.size(), setupBefore = setup.size();
    if (failed(emitOp(&op)))
      return failure();
    const std::string node = onnxNodeOf(op.getLoc());
    markNode(steps, stepsBefore, node, stepNode);
    markNode(setup, setupBefore, node, setupNode);
    calls.clear();
    callPointers.clear();
    storedAs.clear();
  }
  emitting = nullptr;

  // Assemble the translation unit.
  llvm::raw_string_ostream os(source);
  os << "  static constexpr size_t kArenaBytes = " << arenaBytes << ";\n"
     << "  backend::Context ctx;\n"
     << "  char *arena = nullptr;\n"
     << "  const char *weights = nullptr;\n"
     << "  char *weightsCopy = nullptr;\n"
     << "  std::vector<const char *> tables;\n"
     << "  std::vector<char *> tableCopies;\n"
     << "  const void *const *inputs = nullptr;\n"
     << "  void *const *outputs = nullptr;\n"
     << "  const char *node = nullptr; // the ONNX node being run\n";
  if (trained)
    os << "  HpsStageConfig config;\n"
       << "  ServerStaging staging;\n"
       << "  std::vector<char *> parameterCopies;\n"
       << "  bool evaluating = false;\n";
  for (auto [cls, count] : kernelsPerClass)
    os << "  std::unique_ptr<backend::" << cls << "> k" << cls << "[" << count
       << "];\n";
  for (size_t slot = 0; slot < parameterNames.size(); ++slot)
    pointerMembers +=
        "  const char *param" + std::to_string(slot) + " = nullptr;\n";
  os << pointerMembers << "\n"
     << "  explicit Stage(const HpsStageConfig &config)\n"
     << "      : ctx(config.threads)" << (trained ? ", config(config)" : "")
     << " {\n"
     << "    ctx.enterThread();\n"
     << "    arena = static_cast<char *>(ctx.allocate(kArenaBytes));\n"
     << "    weights = stageWeights(ctx, config, " << weightsBegin << ", "
     << weightsEnd << ",\n"
     << "                           weightsCopy);\n";
  for (const std::string &table : tableNames)
    os << "    tables.push_back(stageTable(ctx, config, \"" << table << "\", "
       << tables[table].shape[0] * tables[table].shape[1] *
              (tables[table].dtype == "f64" ? 8 : 4)
       << ", tableCopies));\n";
  // A GPU keeps a device copy of each trainable parameter, refreshed on
  // every run; host backends read the server's value in place.
  std::string parameterPrologue;
  for (auto [slot, name] : llvm::enumerate(parameterNames)) {
    uint64_t bytes =
        trained->parameters.lookup(name).getType().getNumElements() *
        sizeof(float);
    os << "    parameterCopies.push_back(backend::kHostMemory ? nullptr : "
          "static_cast<char *>(ctx.allocate("
       << bytes << ")));\n";
    parameterPrologue +=
        llvm::formatv("    param{0} = stageParameter(ctx, config, "
                      "\"{1}\", parameterCopies[{0}], {2});\n",
                      slot, name, bytes)
            .str();
  }
  // Kernels are built by member functions of 32 each: g++'s optimiser is
  // superlinear in function size, and a recurrence unrolled over many steps
  // makes thousands of kernels.
  os << "    try {\n";
  std::string builders =
      memberFunctions(setup, 32, "buildKernels", "HPS_RUN_ONCE", os);
  os << "    } catch (const std::exception &error) {\n"
     << "      rethrowAtNode(node, error);\n"
     << "    }\n"
     << "  }\n"
     << builders << "\n"
     << "  ~Stage() {\n"
     << "    for (char *copy : tableCopies)\n"
     << "      ctx.deallocate(copy);\n";
  if (trained)
    os << "    for (char *copy : parameterCopies)\n"
       << "      if (copy)\n"
       << "        ctx.deallocate(copy);\n";
  os << "    if (weightsCopy)\n"
     << "      ctx.deallocate(weightsCopy);\n"
     << "    ctx.deallocate(arena);\n"
     << "  }\n\n"
     << "  void run(const void *const *stageInputs, void *const *stageOutputs) "
        "{\n"
     << "    ctx.enterThread();\n"
     << "    inputs = stageInputs;\n"
     << "    outputs = stageOutputs;\n"
     << "    node = nullptr;\n"
     << (trained ? "    evaluating = stageEvaluating(config);\n" : "")
     << "    try {\n"
     << parameterPrologue << prologue;
  const char *rethrow = "    ctx.synchronize();\n"
                        "    } catch (const std::exception &error) {\n"
                        "      rethrowAtNode(node, error);\n"
                        "    }\n"
                        "  }\n";
  // Long runs are cut into member functions like the kernels' construction.
  constexpr size_t kStepsPerRun = 64;
  if (steps.size() <= kStepsPerRun) {
    for (const std::string &statement : steps)
      os << statement;
    os << rethrow;
    return success();
  }
  std::string parts =
      memberFunctions(steps, kStepsPerRun, "runSteps", "HPS_NOINLINE", os);
  os << rethrow << parts;
  return success();
}

LogicalResult StageEmitter::emitOp(Operation *op) {
  auto shape = [&](Value v) -> ArrayRef<int64_t> { return info(v).shape; };
  auto rank = [&](Value v) {
    return static_cast<int64_t>(info(v).shape.size());
  };
  // Constants and frozen weights never change, so kernels may repack them
  // once (a quantized conv's folded filter is a constant); trained weights
  // change every step.
  auto isConstant = [&](Value v) {
    if (v.getDefiningOp<ConstantOp>())
      return true;
    auto weight = v.getDefiningOp<WeightOp>();
    return weight && !isTrainable(weight);
  };
  auto typeOf = [](Value v) { return v.getType(); };
  if (fusedInto.count(op) || projectedIn.count(op) || isAlias(op) ||
      isFusion(op) ||
      isa<WeightOp, ConstantOp, ShapeOp, NoneOp, func::ReturnOp>(op))
    return success();
  if (const ElementGroup *group = groupOf(op))
    return group->anchor() == op ? emitGroup(*group) : success();
  if (isa<hpsrt::RelayoutOp>(op)) {
    emitCall(op);
    return success();
  }
  Location loc = op->getLoc();
  if (std::optional<RuntimeUnary> unary = runtimeUnary(op)) {
    Value x = op->getOperand(0), y = op->getResult(0);
    emitCall(build<hpsrt::UnaryOp>(loc, typeOf(y), x, elementType(x),
                                   unary->kind, unaryParams(*unary),
                                   numElementsOf(y)),
             y);
    return success();
  }
  if (std::optional<hpsrt::BinaryKind> kind = runtimeBinary(op)) {
    Value a = op->getOperand(0), b = op->getOperand(1), y = op->getResult(0);
    if (info(a).dtype == info(b).dtype) {
      emitCall(build<hpsrt::BinaryOp>(loc, typeOf(y), a, b, *kind,
                                      elementType(a), shape(a), shape(b),
                                      shape(y)),
               y);
      return success();
    }
    // Only Pow mixes types (ONNX 12+): a float base takes the exponent
    // converted to its type; an integer base is raised in f64 and the
    // result truncated back, as onnxruntime does.
    if (!isa<PowOp>(op))
      return fail(op, "operands of different element types");
    bool floatBase =
        StringRef(info(a).dtype).starts_with("f") || info(a).dtype == "bf16";
    Type computeType =
        floatBase ? elementType(a) : Type(Float64Type::get(op->getContext()));
    auto converted = [&](Value v) -> Value {
      if (elementType(v) == computeType)
        return v;
      auto cast = build<hpsrt::CastOp>(
          loc, RankedTensorType::get(shape(v), computeType), v, elementType(v),
          computeType, numElementsOf(v));
      callPointers[cast.getResult()] = scratch(
          numElementsOf(v) * (floatBase ? elementBytesOf(a) : uint64_t(8)));
      emitCall(cast);
      return cast.getResult();
    };
    Value lhs = converted(a), rhs = converted(b);
    auto pow = build<hpsrt::BinaryOp>(
        loc, RankedTensorType::get(shape(y), computeType), lhs, rhs,
        hpsrt::BinaryKind::Pow, computeType, shape(a), shape(b), shape(y));
    if (floatBase) {
      emitCall(pow, y);
      return success();
    }
    callPointers[pow.getResult()] = scratch(numElementsOf(y) * 8);
    emitCall(pow);
    emitCall(build<hpsrt::CastOp>(loc, typeOf(y), pow.getResult(), computeType,
                                  elementType(y), numElementsOf(y)),
             y);
    return success();
  }
  // Convolution geometry: per spatial axis, ONNX's defaults filled in.
  auto perAxis = [](ArrayRef<int64_t> values, size_t n, int64_t fallback) {
    SmallVector<int64_t> out(values.begin(), values.end());
    if (out.size() != n)
      out.assign(n, fallback);
    return out;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](RecvOp recv) {
        unsigned index = inputChannels.size();
        inputChannels.push_back(recv.getChannel().str());
        // Read in place on host backends, uploaded to its slot on a GPU.
        std::string slot = ptr(recv.getValue());
        std::string name = "in" + std::to_string(index);
        ioPointer[recv.getValue()] = name;
        pointerMembers += "  const char *" + name + " = nullptr;\n";
        step(llvm::formatv("    {0} = stageInput(ctx, inputs[{1}], "
                           "{2}, {3});\n",
                           name, index, slot, info(recv.getValue()).bytes)
                 .str());
        return success();
      })
      .Case([&](SendOp send) {
        unsigned index = outputChannels.size();
        outputChannels.push_back(send.getChannel().str());
        std::string name = "out" + std::to_string(index);
        auto io = ioPointer.find(rootOf(send.getValue()));
        if (io != ioPointer.end() && io->second == name)
          step(llvm::formatv("    finishOutput(ctx, outputs[{0}], {1}, {2});\n",
                             index, name, info(send.getValue()).bytes)
                   .str());
        else
          step(llvm::formatv("    ctx.download(outputs[{0}], {1}, {2});\n",
                             index, cptr(send.getValue()),
                             info(send.getValue()).bytes)
                   .str());
        return success();
      })
      .Case([&](GemmOp gemm) -> LogicalResult {
        auto a = shape(gemm.getA());
        auto b = shape(gemm.getB());
        if (a.size() != 2 || b.size() != 2)
          return fail(op, "gemm operands must be 2-D");
        int64_t m = gemm.getTransA() ? a[1] : a[0];
        int64_t k = gemm.getTransA() ? a[0] : a[1];
        int64_t n = gemm.getTransB() ? b[0] : b[1];
        Builder attrs(op->getContext());
        DenseI64ArrayAttr cShape;
        if (gemm.getC())
          cShape = attrs.getDenseI64ArrayAttr(shape(gemm.getC()));
        emitCall(
            build<hpsrt::GemmOp>(
                loc, typeOf(gemm.getResult()), gemm.getA(), gemm.getB(),
                gemm.getC(), TypeAttr::get(elementType(gemm.getA())),
                attrs.getI64IntegerAttr(m), attrs.getI64IntegerAttr(n),
                attrs.getI64IntegerAttr(k), attrs.getBoolAttr(gemm.getTransA()),
                attrs.getBoolAttr(gemm.getTransB()),
                f32(gemm.getAlpha().convertToDouble()),
                f32(gemm.getBeta().convertToDouble()), cShape, activationOf(op),
                attrs.getBoolAttr(isConstant(gemm.getB()))),
            gemm.getResult());
        return success();
      })
      .Case([&](MatMulOp matmul) {
        emitCall(build<hpsrt::MatMulOp>(
                     loc, typeOf(matmul.getResult()), matmul.getA(),
                     matmul.getB(), elementType(matmul.getA()),
                     shape(matmul.getA()), shape(matmul.getB()),
                     shape(matmul.getResult()), activationOf(op),
                     isConstant(matmul.getB())),
                 matmul.getResult());
        return success();
      })
      .Case([&](ConvOp conv) -> LogicalResult {
        size_t n = rank(conv.getInput()) - 2;
        SmallVector<int64_t> pads(conv.getPads().begin(), conv.getPads().end());
        if (pads.size() != 2 * n)
          pads.assign(2 * n, 0);
        SmallVector<int64_t> strides = perAxis(conv.getStrides(), n, 1);
        SmallVector<int64_t> dilations = perAxis(conv.getDilations(), n, 1);
        int64_t group = std::max<int64_t>(conv.getGroup(), 1);
        auto layouts = hpsrt::ConvLayoutsAttr::get(
            op->getContext(), layoutAttr(conv.getInput()),
            layoutAttr(conv.getResult()));
        if (isInt8Conv(conv)) {
          emitCall(build<hpsrt::IntegerConvOp>(
                       loc, typeOf(conv.getResult()), conv.getInput(),
                       conv.getFilter(), conv.getBias(),
                       elementType(conv.getInput()), shape(conv.getInput()),
                       shape(conv.getFilter()), bool(conv.getBias()),
                       shape(conv.getResult()), strides, dilations,
                       ArrayRef(pads).take_front(n),
                       ArrayRef(pads).drop_front(n), group,
                       isConstant(conv.getFilter()), layouts),
                   conv.getResult());
          return success();
        }
        Value residual = fusedResidual.lookup(op);
        Builder attrs(op->getContext());
        auto options = hpsrt::ConvOptionsAttr::get(
            op->getContext(), layouts.getX(), layouts.getY(),
            attrs.getBoolAttr(bool(residual)),
            attrs.getBoolAttr(conv.getExact()));
        emitCall(build<hpsrt::ConvOp>(
                     loc, typeOf(conv.getResult()), conv.getInput(),
                     conv.getFilter(), conv.getBias(), residual,
                     elementType(conv.getInput()), shape(conv.getInput()),
                     shape(conv.getFilter()), bool(conv.getBias()),
                     shape(conv.getResult()), strides, dilations,
                     ArrayRef(pads).take_front(n), ArrayRef(pads).drop_front(n),
                     group, activationOf(op), isConstant(conv.getFilter()),
                     options),
                 conv.getResult());
        return success();
      })
      .Case<ConvGradInputOp, ConvGradFilterOp>([&](auto adjoint) {
        // Both carry their forward conv's geometry, so the kernels take the
        // forward shapes: x, filter and y (the gradient's shape).
        constexpr bool input =
            std::is_same_v<decltype(adjoint), ConvGradInputOp>;
        Value x, w, dy = adjoint.getGrad();
        if constexpr (input) {
          x = adjoint.getResult();
          w = adjoint.getFilter();
        } else {
          x = adjoint.getInput();
          w = adjoint.getResult();
        }
        size_t n = rank(x) - 2;
        ArrayRef<int64_t> pads = adjoint.getPads();
        auto layouts = hpsrt::ConvLayoutsAttr::get(
            op->getContext(), layoutAttr(x), layoutAttr(dy));
        if constexpr (input)
          emitCall(build<hpsrt::ConvGradInputOp>(
                       loc, typeOf(x), dy, w, elementType(dy), shape(x),
                       shape(w), shape(dy), adjoint.getStrides(),
                       adjoint.getDilations(), pads.take_front(n),
                       pads.drop_front(n), adjoint.getGroup(), layouts),
                   x);
        else
          emitCall(build<hpsrt::ConvGradFilterOp>(
                       loc, typeOf(w), x, dy, elementType(dy), shape(x),
                       shape(w), shape(dy), adjoint.getStrides(),
                       adjoint.getDilations(), pads.take_front(n),
                       pads.drop_front(n), adjoint.getGroup(), layouts),
                   w);
        return success();
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto pool) {
        Value x = pool.getInput();
        size_t n = rank(x) - 2;
        SmallVector<int64_t> pads(pool.getPads().begin(), pool.getPads().end());
        if (pads.size() != 2 * n)
          pads.assign(2 * n, 0);
        hpsrt::PoolKind kind = hpsrt::PoolKind::Max;
        if constexpr (std::is_same_v<decltype(pool), AvgPoolOp>)
          kind = pool.getCountIncludePad() ? hpsrt::PoolKind::AvgIncludePad
                                           : hpsrt::PoolKind::AvgExcludePad;
        emitCall(build<hpsrt::PoolOp>(
                     loc, typeOf(pool.getResult()), x, elementType(x), kind,
                     shape(x), shape(pool.getResult()), pool.getKernelShape(),
                     perAxis(pool.getStrides(), n, 1),
                     perAxis(pool.getDilations(), n, 1),
                     ArrayRef(pads).take_front(n),
                     ArrayRef(pads).drop_front(n)),
                 pool.getResult());
        return success();
      })
      .Case<GlobalMaxPoolOp, GlobalAvgPoolOp>([&](auto pool) {
        bool max = std::is_same_v<decltype(pool), GlobalMaxPoolOp>;
        emitCall(build<hpsrt::GlobalPoolOp>(
                     loc, typeOf(pool.getResult()), pool.getInput(),
                     elementType(pool.getInput()), max, shape(pool.getInput())),
                 pool.getResult());
        return success();
      })
      .Case([&](BatchNormOp bn) {
        emitCall(build<hpsrt::BatchNormOp>(
                     loc, typeOf(bn.getResult()), bn.getInput(), bn.getScale(),
                     bn.getBias(), bn.getMean(), bn.getVariance(),
                     TypeAttr::get(elementType(bn.getInput())),
                     Builder(op->getContext())
                         .getDenseI64ArrayAttr(shape(bn.getInput())),
                     f32(bn.getEpsilon().convertToDouble())),
                 bn.getResult());
        return success();
      })
      .Case([&](RecurrenceOp rec) {
        // With its projection fused, the kernel reads X and gets W and Wb.
        GemmOp projection = projectionOf.lookup(rec);
        Value x = projection ? projection.getA() : rec.getProjected();
        int64_t input = projection ? shape(projection.getA()).back() : 0;
        Value cLast = rec.getCLast();
        emitCall(build<hpsrt::RecurrentOp>(
                     loc, typeOf(rec.getY()), typeOf(rec.getHLast()),
                     cLast ? cLast.getType() : Type(), x, rec.getRecurrence(),
                     rec.getRecurrentBias(), rec.getLengths(),
                     rec.getInitialH(), rec.getInitialC(), rec.getPeepholes(),
                     projection ? projection.getB() : Value(),
                     projection ? projection.getC() : Value(),
                     recurrentParams(rec, input)),
                 {rec.getY(), rec.getHLast(), cLast});
        return success();
      })
      .Case([&](RecurrenceGradOp rec) {
        SmallVector<Value> written = {
            rec.getGradProjected(), rec.getGradRecurrence(),
            rec.getGradRecurrentBias(), rec.getGradInitialH()};
        Value dc0 = rec.getGradInitialC(), dPeepholes = rec.getGradPeepholes();
        for (Value optional : {dc0, dPeepholes})
          if (optional)
            written.push_back(optional);
        emitCall(
            build<hpsrt::RecurrentGradOp>(
                loc, typeOf(rec.getGradProjected()),
                typeOf(rec.getGradRecurrence()),
                typeOf(rec.getGradRecurrentBias()),
                typeOf(rec.getGradInitialH()), dc0 ? dc0.getType() : Type(),
                dPeepholes ? dPeepholes.getType() : Type(), rec.getProjected(),
                rec.getRecurrence(), rec.getRecurrentBias(), rec.getLengths(),
                rec.getInitialH(), rec.getInitialC(), rec.getPeepholes(),
                rec.getY(), rec.getGradY(), rec.getGradHLast(),
                rec.getGradCLast(), recurrentParams(rec)),
            written);
        return success();
      })
      .Case([&](LayerNormOp ln) {
        Builder attrs(op->getContext());
        emitCall(build<hpsrt::LayerNormOp>(
                     loc, typeOf(ln.getResult()), ln.getInput(), ln.getScale(),
                     ln.getBias(), TypeAttr::get(elementType(ln.getInput())),
                     attrs.getDenseI64ArrayAttr(shape(ln.getInput())),
                     attrs.getI64IntegerAttr(
                         normalizeAxis(ln.getAxis(), rank(ln.getInput()))),
                     f32(ln.getEpsilon().convertToDouble()),
                     attrs.getDenseI64ArrayAttr(shape(ln.getScale())),
                     attrs.getBoolAttr(bool(ln.getBias()))),
                 ln.getResult());
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        bool log = std::is_same_v<decltype(softmax), LogSoftmaxOp>;
        Value x = softmax.getInput();
        emitCall(build<hpsrt::SoftmaxOp>(
                     loc, typeOf(softmax.getResult()), x, elementType(x),
                     shape(x), normalizeAxis(softmax.getAxis(), rank(x)), log),
                 softmax.getResult());
        return success();
      })
      .Case([&](ReduceOp reduce) {
        int64_t r = rank(reduce.getInput());
        std::vector<int64_t> axes;
        for (int64_t axis : reduce.getAxes())
          axes.push_back(normalizeAxis(axis, r));
        if (axes.empty())
          for (int64_t i = 0; i < r; ++i)
            axes.push_back(i);
        llvm::sort(axes);
        axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
        // The dialect's reductions are the runtime's, in the same order.
        auto kind = static_cast<hpsrt::ReduceKind>(
            static_cast<uint32_t>(reduce.getKind()));
        emitCall(build<hpsrt::ReduceOp>(
                     loc, typeOf(reduce.getResult()), reduce.getInput(),
                     elementType(reduce.getInput()), kind,
                     shape(reduce.getInput()), axes, shape(reduce.getResult())),
                 reduce.getResult());
        return success();
      })
      .Case([&](WhereOp where) {
        emitCall(build<hpsrt::WhereOp>(
                     loc, typeOf(where.getResult()), where.getCondition(),
                     where.getX(), where.getY(), elementType(where.getX()),
                     shape(where.getCondition()), shape(where.getX()),
                     shape(where.getY()), shape(where.getResult())),
                 where.getResult());
        return success();
      })
      .Case([&](CastOp cast) {
        emitCall(build<hpsrt::CastOp>(loc, typeOf(cast.getResult()),
                                      cast.getInput(),
                                      elementType(cast.getInput()),
                                      elementType(cast.getResult()),
                                      numElementsOf(cast.getResult())),
                 cast.getResult());
        return success();
      })
      .Case([&](ConcatOp concat) {
        Builder attrs(op->getContext());
        SmallVector<Attribute> shapes;
        for (Value input : concat.getInputs())
          shapes.push_back(attrs.getDenseI64ArrayAttr(shape(input)));
        emitCall(build<hpsrt::ConcatOp>(
                     loc, typeOf(concat.getResult()), concat.getInputs(),
                     elementType(concat.getResult()),
                     attrs.getArrayAttr(shapes),
                     normalizeAxis(concat.getAxis(), rank(concat.getResult()))),
                 concat.getResult());
        return success();
      })
      .Case([&](SplitOp split) {
        Value x = split.getInput();
        emitCall(build<hpsrt::SplitOp>(
                     loc, split.getResultTypes(), x, elementType(x), shape(x),
                     normalizeAxis(split.getAxis(), rank(x)), split.getSizes()),
                 SmallVector<Value>(split.getResults()));
        return success();
      })
      .Case([&](SliceOp slice) -> LogicalResult {
        ArrayRef<int64_t> in = shape(slice.getInput());
        int64_t r = in.size();
        SmallVector<int64_t> starts(r, 0), steps(r, 1);
        for (auto [i, axisAttr] : llvm::enumerate(slice.getAxes())) {
          int64_t axis = normalizeAxis(axisAttr, r);
          if (axis < 0 || axis >= r)
            return fail(op, "slice axis out of range");
          int64_t dim = in[axis];
          int64_t step = i < slice.getSteps().size() ? slice.getSteps()[i] : 1;
          int64_t start = slice.getStarts()[i];
          if (start < 0)
            start += dim;
          start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                           : std::clamp<int64_t>(start, 0, dim - 1);
          starts[axis] = std::max<int64_t>(start, 0);
          steps[axis] = step;
        }
        emitCall(build<hpsrt::SliceOp>(loc, typeOf(slice.getResult()),
                                       slice.getInput(),
                                       elementType(slice.getInput()), in,
                                       starts, steps, shape(slice.getResult())),
                 slice.getResult());
        return success();
      })
      .Case([&](TransposeOp transpose) {
        int64_t r = rank(transpose.getInput());
        SmallVector<int64_t> perm(transpose.getPerm().begin(),
                                  transpose.getPerm().end());
        if (perm.empty())
          for (int64_t i = r - 1; i >= 0; --i)
            perm.push_back(i);
        emitCall(build<hpsrt::TransposeOp>(loc, typeOf(transpose.getResult()),
                                           transpose.getInput(),
                                           elementType(transpose.getInput()),
                                           shape(transpose.getInput()), perm),
                 transpose.getResult());
        return success();
      })
      .Case([&](ExpandOp expand) {
        emitCall(build<hpsrt::ExpandOp>(
                     loc, typeOf(expand.getResult()), expand.getInput(),
                     elementType(expand.getInput()), shape(expand.getInput()),
                     shape(expand.getResult())),
                 expand.getResult());
        return success();
      })
      .Case([&](PadOp pad) {
        double value = 0;
        if (auto f = dyn_cast<FloatAttr>(pad.getValue()))
          value = f.getValueAsDouble();
        else if (auto i = dyn_cast<IntegerAttr>(pad.getValue()))
          value = static_cast<double>(i.getValue().getSExtValue());
        // The dialect's modes are the runtime's, in the same order.
        auto mode =
            static_cast<hpsrt::PadMode>(static_cast<uint32_t>(pad.getMode()));
        emitCall(build<hpsrt::PadOp>(
                     loc, typeOf(pad.getResult()), pad.getInput(),
                     elementType(pad.getInput()), shape(pad.getInput()),
                     pad.getPads(), mode, APFloat(value)),
                 pad.getResult());
        return success();
      })
      .Case([&](GatherOp gather) {
        emitCall(build<hpsrt::GatherOp>(
                     loc, typeOf(gather.getResult()), gather.getData(),
                     gather.getIndices(), elementType(gather.getData()),
                     shape(gather.getData()), elementType(gather.getIndices()),
                     shape(gather.getIndices()),
                     normalizeAxis(gather.getAxis(), rank(gather.getData()))),
                 gather.getResult());
        return success();
      })
      .Case([&](DeterminantOp det) {
        emitCall(build<hpsrt::DeterminantOp>(loc, typeOf(det.getResult()),
                                             det.getInput(),
                                             elementType(det.getInput()),
                                             numElementsOf(det.getResult()),
                                             shape(det.getInput()).back()),
                 det.getResult());
        return success();
      })
      .Case([&](NonZeroOp nonZero) {
        emitCall(build<hpsrt::NonZeroOp>(loc, typeOf(nonZero.getIndices()),
                                         typeOf(nonZero.getCount()),
                                         nonZero.getInput(),
                                         elementType(nonZero.getInput()),
                                         shape(nonZero.getInput())),
                 {nonZero.getIndices(), nonZero.getCount()});
        return success();
      })
      .Case([&](UniqueOp unique) {
        ArrayRef<int64_t> dims = shape(unique.getInput());
        int64_t axis = unique.getAxis();
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < axis; ++i)
          outer *= dims[i];
        for (size_t i = axis + 1; i < dims.size(); ++i)
          inner *= dims[i];
        SmallVector<Value> written = {
            unique.getValues(), unique.getFirstIndices(), unique.getInverse(),
            unique.getCounts(), unique.getCount()};
        emitCall(build<hpsrt::UniqueOp>(loc, ValueRange(written).getTypes(),
                                        unique.getInput(),
                                        elementType(unique.getInput()), outer,
                                        dims[axis], inner, unique.getSorted()),
                 written);
        return success();
      })
      .Case([&](NonMaxSuppressionOp nms) {
        ArrayRef<int64_t> scores = shape(nms.getScores());
        emitCall(build<hpsrt::NonMaxSuppressionOp>(
                     loc, typeOf(nms.getSelected()), typeOf(nms.getCount()),
                     nms.getBoxes(), nms.getScores(), nms.getMaxPerClass(),
                     nms.getIouThreshold(), nms.getScoreThreshold(), scores[0],
                     scores[1], scores[2], nms.getCenterPointBox(),
                     shape(nms.getSelected())[0]),
                 {nms.getSelected(), nms.getCount()});
        return success();
      })
      .Case([&](ScatterOp scatter) {
        // The dialect's reductions are the runtime's, in the same order.
        auto reduction = static_cast<hpsrt::ScatterReduction>(
            static_cast<uint32_t>(scatter.getReduction()));
        emitCall(build<hpsrt::ScatterOp>(
                     loc, typeOf(scatter.getResult()), scatter.getData(),
                     scatter.getIndices(), scatter.getUpdates(),
                     elementType(scatter.getData()), shape(scatter.getData()),
                     elementType(scatter.getIndices()),
                     shape(scatter.getIndices()),
                     normalizeAxis(scatter.getAxis(), rank(scatter.getData())),
                     reduction),
                 scatter.getResult());
        return success();
      })
      .Case([&](EmbeddingLookupOp lookup) {
        ArrayRef<int64_t> table = shape(lookup.getTable());
        emitCall(build<hpsrt::EmbeddingLookupOp>(
                     loc, typeOf(lookup.getResult()), lookup.getTable(),
                     lookup.getIds(), elementType(lookup.getTable()), table[0],
                     table[1], elementType(lookup.getIds()),
                     shape(lookup.getIds()),
                     runtimePooling(lookup.getPooling())),
                 lookup.getResult());
        return success();
      })
      .Case([&](PSPullOp pull) -> LogicalResult {
        auto tableType = cast<RankedTensorType>(pull.getTableType());
        std::string name = pull.getTable().str();
        if (tableType.getRank() != 2 || !tableType.hasStaticShape())
          return fail(op, "parameter-server table must be a static 2-D tensor");
        if (trained)
          return emitTrainingPull(pull);
        std::string dtype = dtypeName(tableType.getElementType());
        if (dtype != "f32" && dtype != "f64")
          return fail(op, "parameter-server table must hold f32 or f64");
        TableEntry &entry = tables[name];
        entry.dtype = dtype;
        entry.shape.assign(tableType.getShape().begin(),
                           tableType.getShape().end());
        unsigned slot = tableNames.size();
        if (auto it = llvm::find(tableNames, name); it != tableNames.end())
          slot = it - tableNames.begin();
        else
          tableNames.push_back(name);
        // The table lives in the server, not in the stage's IR.
        Value table =
            placeholder(loc, tableType, "tables[" + std::to_string(slot) + "]");
        emitCall(build<hpsrt::EmbeddingLookupOp>(
                     loc, typeOf(pull.getRows()), table, pull.getIds(),
                     tableType.getElementType(), entry.shape[0], entry.shape[1],
                     elementType(pull.getIds()), shape(pull.getIds()),
                     runtimePooling(pull.getPooling())),
                 pull.getRows());
        return success();
      })
      .Case([&](PSPushOp push) -> LogicalResult {
        if (!trained)
          return fail(op, "ps_push outside a training module");
        if (info(push.getIds()).dtype != "i64" ||
            info(push.getGradients()).dtype != "f32")
          return fail(op, "ps_push needs i64 ids and f32 gradients");
        int64_t count = numElementsOf(push.getIds());
        int64_t dim = shape(push.getGradients()).back();
        step(llvm::formatv("    stagePushRows(ctx, config, \"{0}\", {1}, {2}, "
                           "{3}, {4}, staging);\n",
                           push.getTable(), cptr(push.getIds()), count, dim,
                           cptr(push.getGradients()))
                 .str());
        return success();
      })
      .Case([&](DensePushOp push) -> LogicalResult {
        if (!trained)
          return fail(op, "dense_push outside a training module");
        if (info(push.getGradient()).dtype != "f32")
          return fail(op, "dense_push needs an f32 gradient");
        step(llvm::formatv("    stagePushDense(ctx, config, \"{0}\", {1}, "
                           "{2}, staging);\n",
                           push.getParameter(), cptr(push.getGradient()),
                           numElementsOf(push.getGradient()))
                 .str());
        return success();
      })
      .Case<LossOp, LossGradOp>([&](auto loss) {
        Value prediction = loss.getPrediction();
        int64_t n = shape(prediction)[0];
        int64_t m = numElementsOf(prediction) / std::max<int64_t>(n, 1);
        // The dialect's losses are the runtime's, in the same order.
        auto kind =
            static_cast<hpsrt::LossKind>(static_cast<uint32_t>(loss.getKind()));
        using CallOp =
            std::conditional_t<std::is_same_v<decltype(loss), LossGradOp>,
                               hpsrt::LossGradOp, hpsrt::LossOp>;
        emitCall(build<CallOp>(loc, typeOf(loss.getResult()), prediction,
                               loss.getLabel(), elementType(prediction), kind,
                               loss.getFromLogits(), n, m),
                 loss.getResult());
        return success();
      })
      .Case([&](OnnxNodeOp node) {
        return fail(op, "ONNX '")
               << node.getOpType()
               << "' stayed generic after legalization and has no kernel";
      })
      .Default([&](Operation *) {
        return fail(op, "no kernel for '") << op->getName() << "'";
      });
}

/// A C++ literal of a single-element constant (exact), or nothing.
std::optional<std::string> scalarLiteral(Value value) {
  // Constants and weights the training server does not update.
  ElementsAttr data = getConstantValue(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!data || isTrainable(value.getDefiningOp<WeightOp>()) || !type ||
      type.getNumElements() != 1)
    return std::nullopt;
  Type element = type.getElementType();
  std::string cpp = target::cppElementType(element);
  FailureOr<std::string> bytes = bytesOf(data);
  if (cpp.empty() || failed(bytes))
    return std::nullopt;
  auto read = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, bytes->data(), sizeof(v));
    return v;
  };
  if (element.isF32() || element.isF64()) {
    double v = element.isF32() ? double(read(0.0f)) : read(0.0);
    if (!std::isfinite(v))
      return std::nullopt; // no portable literal
    return target::floatLiteral(v, cpp);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (width == 1)
    return target::unsignedLiteral(read(uint8_t(0)) != 0, cpp);
  uint64_t bits = 0;
  std::memcpy(&bits, bytes->data(), width / 8);
  if (cast<IntegerType>(element).isUnsigned())
    return target::unsignedLiteral(bits, cpp);
  return target::signedLiteral(llvm::SignExtend64(bits, width), cpp);
}

/// The group's loop as a functor for backend::forEachElement. A native
/// group has one functor per channel block oneDNN may pick at run time.
LogicalResult StageEmitter::emitGroup(const ElementGroup &group) {
  if (group.outputs.empty())
    return success(); // nothing it computes is read
  ++kernelCount;
  llvm::DenseMap<Value, std::string> literals;
  for (Value input : group.inputs)
    if (std::optional<std::string> literal = scalarLiteral(input))
      literals[input] = *literal;
  auto literalOf = [&](Value value) -> std::optional<std::string> {
    auto found = literals.find(value);
    if (found == literals.end())
      return std::nullopt;
    return found->second;
  };
  SmallVector<std::string> pointers;
  for (Value input : group.inputs)
    if (!literals.count(input))
      pointers.push_back(cptr(input));
  for (Value output : group.outputs)
    pointers.push_back("static_cast<void *>(" + ptr(output) + ")");
  std::string args = llvm::join(pointers, ", ");
  // Where every operand has the group's shape or is a literal, element i
  // is at offset i in either layout.
  bool layoutMatters = llvm::any_of(group.inputs, [&](Value input) {
    return ArrayRef(info(input).shape) != ArrayRef(group.shape) &&
           !literals.count(input);
  });
  hpsrt::Layout held =
      layoutMatters ? heldLayout(group.outputs.front()) : hpsrt::Layout::Plain;
  // Identical loops (an unrolled recurrence has one per step) share one
  // functor, named once its text is known.
  constexpr StringLiteral kPlaceholder = "HPS_FUNCTOR_NAME";
  std::string text;
  if (held == hpsrt::Layout::Native)
    for (int64_t block : {8, 16})
      text += fusedLoopSource(group, (kPlaceholder + "_" + Twine(block)).str(),
                              /*nativeLayout=*/true, block, literalOf);
  else if (held == hpsrt::Layout::ChannelsLast) // one block of every channel
    text = fusedLoopSource(group, kPlaceholder.str(), /*nativeLayout=*/true,
                           group.shape[1], literalOf);
  else
    text = fusedLoopSource(group, kPlaceholder.str(), /*nativeLayout=*/false, 1,
                           literalOf);
  auto [known, added] = functorNames.try_emplace(
      text, "FusedLoop" + std::to_string(functorNames.size()));
  const std::string &name = known->second;
  if (added) {
    for (size_t at = text.find(kPlaceholder); at != std::string::npos;
         at = text.find(kPlaceholder, at + name.size()))
      text.replace(at, kPlaceholder.size(), name);
    functors += text;
  }
  if (held != hpsrt::Layout::Native) {
    step(llvm::formatv("    backend::forEachElement(ctx, {0}{{{1}});\n", name,
                       args)
             .str());
    return success();
  }
  step(llvm::formatv("    if (backend::nativeLayoutBlock() == 16)\n"
                     "      backend::forEachElement(ctx, {0}_16{{{1}});\n"
                     "    else\n"
                     "      backend::forEachElement(ctx, {0}_8{{{1}});\n",
                     name, args)
           .str());
  return success();
}

/// Training: the rows of the pulled ids come from the parameter server
/// (created on first touch), then are pooled as the lookup says.
LogicalResult StageEmitter::emitTrainingPull(PSPullOp pull) {
  auto tableType = cast<RankedTensorType>(pull.getTableType());
  if (!tableType.getElementType().isF32())
    return fail(pull, "trained parameter-server tables must be f32");
  if (info(pull.getIds()).dtype != "i64")
    return fail(pull, "trained parameter-server tables need i64 ids");
  int64_t rows = tableType.getDimSize(0), dim = tableType.getDimSize(1);
  auto [it, inserted] =
      trained->tables.insert({pull.getTable(), std::make_pair(rows, dim)});
  if (!inserted && it->second != std::make_pair(rows, dim))
    return fail(pull, "table '")
           << pull.getTable() << "' is pulled with two different shapes";
  const SmallVector<int64_t> &ids = info(pull.getIds()).shape;
  int64_t count = numElementsOf(pull.getIds());
  bool pooled = pull.getPooling() != EmbeddingPooling::None;
  std::string rowsBuffer =
      pooled ? scratch(count * dim * sizeof(float)) : ptr(pull.getRows());
  step(llvm::formatv("    stagePullRows(ctx, config, \"{0}\", {1}, {2}, {3}, "
                     "{4}, staging);\n",
                     pull.getTable(), cptr(pull.getIds()), count, dim,
                     rowsBuffer)
           .str());
  if (!pooled)
    return success();
  SmallVector<int64_t> unpooled(ids.begin(), ids.end());
  unpooled.push_back(dim);
  int64_t axis = static_cast<int64_t>(ids.size()) - 1;
  Type f32Type = Float32Type::get(pull.getContext());
  Value rowsRead = placeholder(
      pull.getLoc(), RankedTensorType::get(unpooled, f32Type), rowsBuffer);
  emitCall(build<hpsrt::ReduceOp>(
               pull.getLoc(), pull.getRows().getType(), rowsRead, f32Type,
               pull.getPooling() == EmbeddingPooling::Sum
                   ? hpsrt::ReduceKind::Sum
                   : hpsrt::ReduceKind::Mean,
               unpooled, ArrayRef<int64_t>{axis}, info(pull.getRows()).shape),
           pull.getRows());
  return success();
}

} // namespace

/// The little-endian bytes of a constant or weight, dense (splats
/// expanded, i1 as one byte per element).
FailureOr<std::string> heterps::target::bytesOf(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  int64_t count = type.getNumElements();
  unsigned width = elementBytes(element);
  std::string bytes;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    if (element.isInteger(1)) {
      for (bool bit : dense.getValues<bool>())
        bytes.push_back(bit ? 1 : 0);
      return bytes;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      bytes.reserve(count * width);
      for (int64_t i = 0; i < count; ++i)
        bytes.append(raw.data(), width);
      return bytes;
    }
    return std::string(raw.data(), raw.size());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != count * width)
      return failure();
    return std::string(data.data(), data.size());
  }
  return failure();
}

FailureOr<heterps::target::StageProgram> heterps::target::emitStageProgram(
    func::FuncOp stage, bool gpu, WeightsFile &weights,
    llvm::StringMap<TableEntry> &tables, TrainedState *trained) {
  StageEmitter emitter(stage, weights, tables, trained);
  if (failed(emitter.emit()))
    return failure();
  StageProgram program;
  std::string deviceName =
      stage->getAttrOfType<DeviceAttr>("hps.device").getName().str();
  std::string description = (stage.getSymName() + " on " + deviceName + " (" +
                             Twine(emitter.kernelCount) + " kernels)")
                                .str();
  llvm::raw_string_ostream os(program.text);
  os << "// Generated by heterps-translate --hps-to-stages: " << description
     << ".\n// Compiled by "
     << (gpu ? "nvcc for the GPU, or as C++ for the CPU" : "a C++ compiler")
     << " against libheterps_rt_" << (gpu ? "gpu" : "cpu") << ".\n"
     << "#include \"heterps/Runtime/StageSupport.h\"\n\n"
     << "namespace {\nusing namespace heterps::rt;\n"
     << "using namespace heterps::rt::stage;\n\n"
     << emitter.functors << "struct Stage {\n"
     << emitter.source << "};\n} // namespace\n\n"
     << "HPS_DEFINE_STAGE_ENTRY_POINTS(Stage, \"" << description << "\")\n";
  program.arenaBytes = emitter.arenaBytes;
  program.weightsBegin = emitter.weightsBegin;
  program.weightsEnd = emitter.weightsEnd;
  program.inputChannels = emitter.inputChannels;
  program.outputChannels = emitter.outputChannels;
  program.tableNames = emitter.tableNames;
  program.kernelCount = emitter.kernelCount;
  return program;
}
