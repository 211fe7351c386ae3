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
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

//===----------------------------------------------------------------------===//
// One stage
//===----------------------------------------------------------------------===//

/// Where a tensor lives while a stage runs.
struct Storage {
  enum Kind { Arena, Weight, Table, Parameter, None } kind = None;
  uint64_t offset = 0; // Arena and Weight
  unsigned index = 0;  // Table, Parameter: slot
};

struct TensorInfo {
  std::string dtype;
  SmallVector<int64_t> shape;
  uint64_t bytes = 0;
  Value root; // the value whose storage this one shares (reshapes)
};

class StageEmitter {
public:
  /// Kernels, fused loops, layouts and the buffer plan are read from the
  /// stage's IR, as --hps-prepare-stages leaves it.
  StageEmitter(func::FuncOp func, llvm::StringMap<TableEntry> &tables,
               TrainedState *trained)
      : func(func), tables(tables), trained(trained) {}

  LogicalResult emit();

  /// The stage struct's body, and the fused loops' functors it uses
  /// (namespace scope: nvcc takes no local type as a kernel's template
  /// argument).
  std::string source, functors;
  uint64_t arenaBytes = 0;
  uint64_t weightsBegin = 0, weightsEnd = 0;
  SmallVector<std::string> inputChannels, outputChannels;
  /// The bytes of each channel's buffer, in the same order.
  SmallVector<uint64_t> inputBytes, outputBytes;
  SmallVector<std::string> tableNames;
  unsigned kernelCount = 0;

private:
  LogicalResult collectTensors();
  /// The group of an hpsrt.fused_loop, or null.
  const ElementGroup *groupOf(Operation *op) const {
    auto found = groupIndex.find(op);
    return found == groupIndex.end() ? nullptr : &groups[found->second];
  }
  /// `group`, the body of `fusedLoop`, as its generated loop.
  LogicalResult emitGroup(Operation *fusedLoop, const ElementGroup &group);
  LogicalResult recordBufferPlan();
  LogicalResult recordServerTable(hpsrt::ServerTableOp table);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitTrainingPull(PSPullOp pull);
  std::string ptr(Value value) const;
  std::string cptr(Value value) const;
  std::string kernel(StringRef cls, const std::string &args);
  /// Emits the construction and run of a kernel op, as `call` describes it.
  void emitCall(const KernelCall &call);
  int64_t numElementsOf(Value value) const {
    int64_t n = 1;
    for (int64_t extent : info(value).shape)
      n *= extent;
    return n;
  }
  const TensorInfo &info(Value value) const {
    return tensors.find(value)->second;
  }
  Value rootOf(Value value) const { return info(value).root; }
  InFlightDiagnostic fail(Operation *op, const Twine &message) {
    return op->emitError() << "cannot lower to the runtime: " << message;
  }

  func::FuncOp func;
  llvm::StringMap<TableEntry> &tables;
  /// Null for inference bundles.
  TrainedState *trained;
  SmallVector<std::string> parameterNames;
  llvm::DenseMap<Value, TensorInfo> tensors;
  llvm::DenseMap<Value, Storage> storage; // keyed by root values
  /// The stage's ops in order, each fused loop's after the ops in its body.
  SmallVector<Operation *> stageOps;
  /// The fused loops, by hpsrt.fused_loop op.
  std::vector<ElementGroup> groups;
  llvm::DenseMap<Operation *, unsigned> groupIndex;
  /// The op being emitted: a backward one's statements run only while
  /// training (step()).
  Operation *emitting = nullptr;
  /// Kernels by class, in first-use order: each class is one member array
  /// (`kGemm[3]`), so the stage's destructor and the constructor's unwind
  /// path are a loop per class, not a call per kernel.
  llvm::MapVector<StringRef, unsigned> kernelsPerClass;
  llvm::StringSet<> kernelClassNames; // owns kernelsPerClass's keys
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

/// Every value's type and storage root; each fused loop's group. A fused
/// loop's results are what its body yields (stored by its loop), views
/// share their operand's storage.
LogicalResult StageEmitter::collectTensors() {
  auto collect = [&](Operation &op) -> LogicalResult {
    for (Value result : op.getResults()) {
      if (isa<NoneType>(result.getType()))
        continue;
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.hasStaticShape() ||
          dtypeName(type.getElementType()).empty())
        return fail(&op, "result type ")
               << result.getType()
               << " is not a static tensor the runtime has: run "
                  "--hps-lower-to-runtime-calls first";
      TensorInfo entry;
      entry.dtype = dtypeName(type.getElementType());
      entry.shape.assign(type.getShape().begin(), type.getShape().end());
      entry.bytes = type.getNumElements() * elementBytes(type.getElementType());
      entry.root = isAlias(&op) ? rootOf(op.getOperand(0)) : result;
      tensors[result] = entry;
    }
    return success();
  };
  for (Operation &op : func.getBody().front()) {
    stageOps.push_back(&op);
    auto loop = dyn_cast<hpsrt::FusedLoopOp>(op);
    if (!loop) {
      if (isFusion(&op))
        return fail(&op, "a fusion region not lowered to a kernel op: run "
                         "--hps-lower-to-runtime-calls first");
      if (failed(collect(op)))
        return failure();
      continue;
    }
    ElementGroup group;
    for (Operation &member : loop.getBody().front().without_terminator()) {
      if (failed(collect(member)))
        return failure();
      group.ops.push_back(&member);
    }
    auto shape = info(group.ops.front()->getResult(0)).shape;
    group.shape.assign(shape.begin(), shape.end());
    group.inputs = fusionInputs(loop);
    auto yielded = loop.getBody().front().getTerminator()->getOperands();
    group.outputs.assign(yielded.begin(), yielded.end());
    for (auto [result, value] : llvm::zip(loop.getResults(), yielded)) {
      TensorInfo entry = info(value); // before tensors may grow
      entry.root = rootOf(value);
      tensors[result] = std::move(entry);
    }
    groupIndex[loop] = groups.size();
    groups.push_back(std::move(group));
  }
  return success();
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

void StageEmitter::emitCall(const KernelCall &call) {
  std::string name =
      kernel(call.kernelClass, llvm::join(call.constructorArguments, ", "));
  // Variadic parameters take arrays, declared in a scope of their own.
  std::string arrays;
  SmallVector<std::string> arguments;
  for (const target::RunArgument &argument : call.runArguments) {
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
  std::string run = llvm::formatv("{0}->{1}({2});\n", name, call.runMethod,
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

  // Weights, constants and static shapes are where --hps-pack-weights put
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
    // The bundle writer puts its bytes there (writeStageWeights).
    auto offset = op.getAttrOfType<IntegerAttr>(kWeightsOffsetAttrName);
    if (!offset)
      return fail(&op, "no place in weights.bin (")
             << kWeightsOffsetAttrName << "): run --hps-prepare-stages first";
    storage[op.getResult(0)] = {Storage::Weight, uint64_t(offset.getInt()), 0};
  }

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
        heldLayout(send.getValue()) != hpsrt::Layout::Plain ||
        slot == storage.end() || slot->second.kind != Storage::Arena)
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
       << "  std::vector<uint64_t> parameterVersions; // of each upload\n"
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
  // A GPU keeps a device copy of each trainable parameter, uploaded again
  // when the server's values changed; host backends read them in place.
  std::string parameterPrologue;
  for (auto [slot, name] : llvm::enumerate(parameterNames)) {
    uint64_t bytes =
        trained->parameters.lookup(name).getType().getNumElements() *
        sizeof(float);
    os << "    parameterCopies.push_back(backend::kHostMemory ? nullptr : "
          "static_cast<char *>(ctx.allocate("
       << bytes << ")));\n"
       << "    parameterVersions.push_back(0);\n";
    parameterPrologue +=
        llvm::formatv("    param{0} = stageParameter(ctx, config, "
                      "\"{1}\", parameterCopies[{0}], {2}, "
                      "parameterVersions[{0}]);\n",
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
  if (isAlias(op) ||
      isa<WeightOp, ConstantOp, ShapeOp, NoneOp, func::ReturnOp>(op))
    return success();
  if (auto table = dyn_cast<hpsrt::ServerTableOp>(op))
    return recordServerTable(table);
  if (const ElementGroup *group = groupOf(op))
    return emitGroup(op, *group);
  if (std::optional<KernelCall> call = describeKernelCall(op)) {
    emitCall(*call);
    return success();
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](RecvOp recv) {
        unsigned index = inputChannels.size();
        inputChannels.push_back(recv.getChannel().str());
        inputBytes.push_back(info(recv.getValue()).bytes);
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
        outputBytes.push_back(info(send.getValue()).bytes);
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
      .Case([&](PSPullOp pull) -> LogicalResult {
        if (!trained)
          return fail(op, "an inference pull not lowered to a lookup in an "
                          "hpsrt.server_table");
        return emitTrainingPull(pull);
      })
      .Case([&](PSPushOp push) -> LogicalResult {
        if (!trained)
          return fail(op, "ps_push outside a training module");
        if (info(push.getIds()).dtype != "i64" ||
            info(push.getGradients()).dtype != "f32")
          return fail(op, "ps_push needs i64 ids and f32 gradients");
        int64_t count = numElementsOf(push.getIds());
        int64_t dim = info(push.getGradients()).shape.back();
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
      .Default([&](Operation *) {
        return fail(op, "'")
               << op->getName()
               << "' is not a kernel op: run --hps-lower-to-runtime-calls "
                  "first";
      });
}

/// The group's loop as a functor for backend::forEachElement. A native
/// group has one functor per channel block oneDNN may pick at run time.
LogicalResult StageEmitter::emitGroup(Operation *fusedLoop,
                                      const ElementGroup &group) {
  if (group.outputs.empty())
    return success(); // nothing it computes is read
  ++kernelCount;
  constexpr StringLiteral kPlaceholder = "HPS_FUNCTOR_NAME";
  FusedLoopFunctors loop = fusedLoopFunctors(
      group, heldLayout(fusedLoop->getResult(0)), kPlaceholder);
  SmallVector<std::string> pointers;
  for (Value input : loop.pointerInputs)
    pointers.push_back(cptr(input));
  for (Value output : group.outputs)
    pointers.push_back("static_cast<void *>(" + ptr(output) + ")");
  std::string args = llvm::join(pointers, ", ");
  // Identical loops (an unrolled recurrence has one per step) share one
  // functor, named once its text is known.
  std::string text = std::move(loop.source);
  auto [known, added] = functorNames.try_emplace(
      text, "FusedLoop" + std::to_string(functorNames.size()));
  const std::string &name = known->second;
  if (added) {
    for (size_t at = text.find(kPlaceholder); at != std::string::npos;
         at = text.find(kPlaceholder, at + name.size()))
      text.replace(at, kPlaceholder.size(), name);
    functors += text;
  }
  if (!loop.perChannelBlock) {
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
/// (created on first touch); a pooled lookup's pooling is a kernel after.
LogicalResult StageEmitter::emitTrainingPull(PSPullOp pull) {
  auto tableType = cast<RankedTensorType>(pull.getTableType());
  if (!tableType.getElementType().isF32())
    return fail(pull, "trained parameter-server tables must be f32");
  if (info(pull.getIds()).dtype != "i64")
    return fail(pull, "trained parameter-server tables need i64 ids");
  if (pull.getPooling() != EmbeddingPooling::None)
    return fail(pull, "a pooled training pull: run "
                      "--hps-lower-to-runtime-calls first");
  int64_t rows = tableType.getDimSize(0), dim = tableType.getDimSize(1);
  auto [it, inserted] =
      trained->tables.insert({pull.getTable(), std::make_pair(rows, dim)});
  if (!inserted && it->second != std::make_pair(rows, dim))
    return fail(pull, "table '")
           << pull.getTable() << "' is pulled with two different shapes";
  step(llvm::formatv("    stagePullRows(ctx, config, \"{0}\", {1}, {2}, {3}, "
                     "{4}, staging);\n",
                     pull.getTable(), cptr(pull.getIds()),
                     numElementsOf(pull.getIds()), dim, ptr(pull.getRows()))
           .str());
  return success();
}

/// An inference stage reads the server's copy of a table in place.
LogicalResult StageEmitter::recordServerTable(hpsrt::ServerTableOp table) {
  auto type = cast<RankedTensorType>(table.getType());
  std::string name = table.getName().str();
  TableEntry &entry = tables[name];
  entry.dtype = dtypeName(type.getElementType());
  entry.shape.assign(type.getShape().begin(), type.getShape().end());
  unsigned slot = tableNames.size();
  if (auto it = llvm::find(tableNames, name); it != tableNames.end())
    slot = it - tableNames.begin();
  else
    tableNames.push_back(name);
  storage[table.getResult()] = {Storage::Table, 0, slot};
  return success();
}

/// The member of the stage class that lists its buffers' bytes for
/// hps_stage_buffers (stage ABI 6).
std::string bufferBytesMember(StringRef name, ArrayRef<uint64_t> bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "  static constexpr std::array<uint64_t, " << bytes.size() << "> "
     << name << "{{";
  llvm::interleaveComma(bytes, os);
  os << "}};\n";
  return text;
}

} // namespace

FailureOr<heterps::target::StageProgram>
heterps::target::emitStageProgram(func::FuncOp stage, bool gpu,
                                  llvm::StringMap<TableEntry> &tables,
                                  TrainedState *trained) {
  StageEmitter emitter(stage, tables, trained);
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
     << bufferBytesMember("kInputBytes", emitter.inputBytes)
     << bufferBytesMember("kOutputBytes", emitter.outputBytes) << emitter.source
     << "};\n} // namespace\n\n"
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
