//===- BundleWriter.cpp - Partitioned module -> bundle --------------------===//
//
// Writes a bundle: each stage's program (StageEmitter.cpp), the manifest
// that tells the runtime how stages, channels, inputs and outputs connect,
// the training section, the pass-key program of a training bundle, and
// weights.bin; installed in one rename so that a failure leaves nothing
// half-written.
//
//===----------------------------------------------------------------------===//

#include "BundlePrograms.h"
#include "KernelCalls.h"
#include "StageEmitter.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/Transforms/PassKeys.h"
#include "heterps/Dialect/HPSRT/IR/HPSRTOps.h"
#include "heterps/Target/BundleDirectory.h"
#include "heterps/Target/Passes.h"
#include "heterps/Target/PlanExport.h"
#include "heterps/Target/StageBundle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace heterps;
using namespace heterps::hps;
using namespace heterps::target;

namespace {

/// Entries of the manifest for a list of channels.
llvm::json::Array channelList(ArrayRef<std::string> names) {
  llvm::json::Array list;
  for (const std::string &name : names)
    list.push_back(name);
  return list;
}

llvm::json::Array shapeJSON(ArrayRef<int64_t> shape) {
  llvm::json::Array list;
  for (int64_t extent : shape)
    list.push_back(extent);
  return list;
}

struct ChannelEntry {
  std::string dtype;
  SmallVector<int64_t> shape;
  int64_t from = -1, to = -1; // stage index; -1 is the caller
};

/// A bundle being written: a directory of its own beside its destination,
/// renamed there at the end, so a failure leaves no partial bundle behind
/// (the destructor removes what was not installed). weights.bin streams
/// into it as it is made.
class StagedBundle {
public:
  StagedBundle(Location loc, StringRef directory)
      : loc(loc), directory(directory.str()) {}
  ~StagedBundle() {
    // A write error left set would be LLVM's fatal error in the stream's
    // destructor; it was reported, or the bundle is abandoned anyway.
    if (weightsStream) {
      closeWeights();
      weightsStream->clear_error();
    }
    if (!staging.empty())
      (void)llvm::sys::fs::remove_directories(staging);
  }

  /// Makes the directory and opens weights.bin in it.
  LogicalResult open() {
    if (std::string refused = bundleDestinationError(directory);
        !refused.empty())
      return emitError(loc) << refused;
    std::string error;
    staging = makeStagingDirectory(directory, "partial", error);
    if (staging.empty())
      return emitError(loc) << error;
    std::error_code ec;
    weightsStream =
        std::make_unique<llvm::raw_fd_ostream>(pathOf("weights.bin"), ec);
    if (ec) {
      weightsStream.reset(); // never opened: nothing to close
      return cannotWrite("weights.bin", ec);
    }
    return success();
  }
  llvm::raw_ostream &weightsFile() { return *weightsStream; }

  /// Closes weights.bin, writes `files` beside it and moves the bundle to
  /// its destination.
  LogicalResult install(ArrayRef<std::pair<std::string, std::string>> files) {
    closeWeights();
    if (weightsStream->has_error())
      return cannotWrite("weights.bin", weightsStream->error());
    for (const auto &[name, contents] : files) {
      std::error_code ec;
      llvm::raw_fd_ostream os(pathOf(name), ec);
      if (!ec) {
        os << contents;
        os.close();
        if (os.has_error())
          ec = os.error();
      }
      if (ec)
        return cannotWrite(name, ec);
    }
    std::string error;
    // Removes the staging directory itself on failure.
    bool installed = installBundleDirectory(staging, directory, error);
    staging.clear();
    if (!installed)
      return emitError(loc) << error;
    return success();
  }

private:
  void closeWeights() {
    if (!weightsClosed)
      weightsStream->close();
    weightsClosed = true;
  }
  std::string pathOf(StringRef name) const {
    SmallString<256> path(staging);
    llvm::sys::path::append(path, name);
    return path.str().str();
  }
  LogicalResult cannotWrite(StringRef name, std::error_code ec) const {
    return emitError(loc) << "cannot write '" << pathOf(name)
                          << "': " << ec.message();
  }

  Location loc;
  std::string directory, staging;
  std::unique_ptr<llvm::raw_fd_ostream> weightsStream;
  bool weightsClosed = false;
};

/// The manifest's "training" section: what autodiff recorded, the
/// parameters the server trains (initial values appended to the weights)
/// and its sparse tables.
FailureOr<llvm::json::Object> trainingSection(ModuleOp module,
                                              DictionaryAttr training,
                                              TrainedState &trained,
                                              WeightsFile &weights) {
  auto text = [&](StringRef key) -> std::string {
    auto value = training.getAs<StringAttr>(key);
    return value ? value.getValue().str() : std::string();
  };
  auto number = [&](StringRef key, double fallback) {
    auto value = training.getAs<FloatAttr>(key);
    return value ? value.getValueAsDouble() : fallback;
  };
  llvm::json::Array parameters;
  for (auto &[name, weight] : trained.parameters) {
    FailureOr<uint64_t> offset = weights.add(weight.getValue());
    if (failed(offset))
      return weight.emitError() << "parameter data is not dense";
    llvm::json::Object parameter{
        {"name", name},
        {"dtype", "f32"},
        {"shape", shapeJSON(weight.getType().getShape())},
        {"offset", static_cast<int64_t>(*offset)},
    };
    // Parameters the server changes other than by the optimizer (batch
    // norm's running statistics and training flag); absent means
    // "optimizer". The dialect verified both attributes.
    if (auto update = weight->getAttrOfType<StringAttr>("hps.update")) {
      parameter["update"] = update.getValue();
      if (auto momentum = weight->getAttrOfType<FloatAttr>("hps.momentum"))
        parameter["momentum"] = momentum.getValueAsDouble();
    }
    parameters.push_back(std::move(parameter));
  }
  llvm::json::Array tableList;
  for (auto &[name, shape] : trained.tables)
    tableList.push_back(llvm::json::Object{
        {"name", name}, {"rows", shape.first}, {"dim", shape.second}});
  return llvm::json::Object{
      {"loss", text("loss")},
      {"label", text("label")},
      {"prediction", text("prediction")},
      {"loss_output", "loss"},
      {"optimizer",
       llvm::json::Object{
           {"kind", text("optimizer")},
           {"learning_rate", number("learning_rate", 0.01)},
           {"momentum", number("momentum", 0)},
           {"beta1", number("beta1", 0.9)},
           {"beta2", number("beta2", 0.999)},
           {"epsilon", number("epsilon", 1e-8)},
           {"initial_accumulator", number("initial_accumulator", 0.1)}}},
      {"parameters", std::move(parameters)},
      {"tables", std::move(tableList)},
  };
}

} // namespace

namespace {

/// The programs of a partitioned module: the stage functions in pipeline
/// order, each with its device class, and the pass-key program.
struct Programs {
  SmallVector<std::pair<func::FuncOp, DeviceAttr>> stages;
  BundlePrograms all;
};

FailureOr<Programs> bundleProgramsOf(ModuleOp module) {
  std::optional<BundlePrograms> all = bundlePrograms(module);
  if (!all)
    return emitError(module.getLoc())
           << "--hps-to-stages needs a partitioned module (run "
              "--hps-place and --hps-partition first)";
  Programs programs{{}, *all};
  for (auto [symbol, func] : all->stages) {
    if (!func)
      return all->main.emitError()
             << "pipeline stage " << symbol << " is missing";
    auto device = func->getAttrOfType<DeviceAttr>("hps.device");
    if (!device)
      return func.emitError() << "stage has no hps.device";
    programs.stages.push_back({func, device});
  }
  return programs;
}

/// The manifest's "pass_keys" section for the pass-key program `keys`,
/// emitted as `program`: its inputs (bundle input names) and outputs (each
/// pull's table and ids) in the program's order, which is its receives'
/// and sends' order.
FailureOr<llvm::json::Object>
passKeysSection(func::FuncOp keys, const StageProgram &program,
                ArrayRef<std::string> inputNames) {
  auto tables = keys->getAttrOfType<ArrayAttr>(kPassKeysAttrName);
  auto inputs = keys->getAttrOfType<DenseI64ArrayAttr>(kPassKeyInputsAttrName);
  // The pass's contract: the k-th receive reads bundle input inputs[k], the
  // k-th send carries the ids of table tables[k].
  llvm::StringMap<int64_t> inputOf;
  llvm::StringMap<std::pair<StringRef, Value>> outputOf;
  for (Operation &op : keys.getBody().front()) {
    if (auto recv = dyn_cast<RecvOp>(op)) {
      int64_t k = inputOf.size();
      if (!inputs || k >= inputs.size() || inputs[k] < 0 ||
          inputs[k] >= int64_t(inputNames.size()))
        return recv.emitError() << "no bundle input for this receive in "
                                << kPassKeyInputsAttrName;
      inputOf[recv.getChannel()] = inputs[k];
    } else if (auto send = dyn_cast<SendOp>(op)) {
      size_t k = outputOf.size();
      auto table = tables && k < tables.size() ? dyn_cast<StringAttr>(tables[k])
                                               : nullptr;
      if (!table)
        return send.emitError()
               << "no table for this send in " << kPassKeysAttrName;
      outputOf[send.getChannel()] = {table.getValue(), send.getValue()};
    }
  }
  if (inputs && int64_t(inputOf.size()) != inputs.size())
    return keys.emitError() << kPassKeyInputsAttrName
                            << " lists more inputs than the program receives";
  if (!tables || outputOf.size() != tables.size())
    return keys.emitError()
           << kPassKeysAttrName << " lists more tables than the program sends";
  llvm::json::Array inputList, outputList;
  for (const std::string &channel : program.inputChannels)
    inputList.push_back(inputNames[inputOf.lookup(channel)]);
  for (const std::string &channel : program.outputChannels) {
    auto [table, ids] = outputOf.lookup(channel);
    auto type = cast<RankedTensorType>(ids.getType());
    outputList.push_back(
        llvm::json::Object{{"table", table},
                           {"dtype", dtypeName(type.getElementType())},
                           {"shape", shapeJSON(type.getShape())}});
  }
  std::string name = keys.getSymName().str();
  return llvm::json::Object{
      {"name", name},
      {"device", keys->getAttrOfType<DeviceAttr>("hps.device").getName()},
      {"kind", "cpu"},
      {"source", name + ".cpp"},
      {"libraries", llvm::json::Object{{"cpu", name + ".so"}}},
      {"inputs", std::move(inputList)},
      {"outputs", std::move(outputList)},
      {"kernels", static_cast<int64_t>(program.kernelCount)},
      {"peak_memory_bytes", static_cast<int64_t>(program.arenaBytes)},
      {"weights",
       llvm::json::Object{
           {"offset", static_cast<int64_t>(program.weightsBegin)},
           {"bytes",
            static_cast<int64_t>(program.weightsEnd - program.weightsBegin)}}},
  };
}

} // namespace

LogicalResult heterps::target::printStagePrograms(ModuleOp module,
                                                  raw_ostream &os) {
  FailureOr<Programs> programs = bundleProgramsOf(module);
  if (failed(programs))
    return failure();
  llvm::StringMap<TableEntry> tables;
  TrainedState trained;
  bool training = module->hasAttr("hps.training");
  auto print = [&](func::FuncOp func, bool gpu) {
    FailureOr<StageProgram> program =
        emitStageProgram(func, gpu, tables, training ? &trained : nullptr);
    if (failed(program))
      return failure();
    os << "// ----- " << func.getSymName() << (gpu ? ".cu" : ".cpp")
       << " -----\n"
       << program->text;
    return success();
  };
  for (auto [func, device] : programs->stages)
    if (failed(print(func, device.getKind() == DeviceKind::GPU)))
      return failure();
  // The pass-key program runs on the host CPU.
  if (func::FuncOp keys = programs->all.passKeys)
    return print(keys, /*gpu=*/false);
  return success();
}

LogicalResult heterps::target::writeStageBundle(ModuleOp module,
                                                StringRef directory) {
  FailureOr<Programs> programs = bundleProgramsOf(module);
  if (failed(programs))
    return failure();
  func::FuncOp main = programs->all.main;

  StagedBundle bundle(module.getLoc(), directory);
  if (failed(bundle.open()))
    return failure();
  // Every program's share of weights.bin, in the order --hps-pack-weights
  // laid them out.
  WeightsFile weights(bundle.weightsFile());
  for (func::FuncOp func : programs->all.inWeightsOrder())
    if (failed(writeStageWeights(func, weights)))
      return failure();
  llvm::StringMap<TableEntry> tables;
  auto training = module->getAttrOfType<DictionaryAttr>("hps.training");
  TrainedState trainedState;
  TrainedState *trained = training ? &trainedState : nullptr;
  llvm::MapVector<StringRef, ChannelEntry> channels;
  llvm::json::Array stageList;
  std::vector<std::pair<std::string, std::string>> files;
  auto channelType = [&](Value value, StringRef name) -> ChannelEntry & {
    ChannelEntry &entry = channels[name];
    auto type = cast<RankedTensorType>(value.getType());
    entry.dtype = dtypeName(type.getElementType());
    entry.shape.assign(type.getShape().begin(), type.getShape().end());
    return entry;
  };

  for (auto [index, stage] : llvm::enumerate(programs->stages)) {
    auto [func, device] = stage;
    int64_t replicas = 1;
    if (auto attr = func->getAttrOfType<IntegerAttr>("hps.replicas"))
      replicas = attr.getInt();
    StringRef deviceName = device.getName();
    bool gpu = device.getKind() == DeviceKind::GPU;

    FailureOr<StageProgram> program =
        emitStageProgram(func, gpu, tables, trained);
    if (failed(program))
      return failure();
    for (Operation &op : func.getBody().front()) {
      if (auto recv = dyn_cast<RecvOp>(op))
        channelType(recv.getValue(), recv.getChannel()).to = index;
      if (auto send = dyn_cast<SendOp>(op))
        channelType(send.getValue(), send.getChannel()).from = index;
    }

    std::string stageName = func.getSymName().str();
    std::string sourceName = stageName + (gpu ? ".cu" : ".cpp");
    files.emplace_back(sourceName, std::move(program->text));

    llvm::json::Array stageTables;
    for (const std::string &table : program->tableNames)
      stageTables.push_back(table);
    stageList.push_back(llvm::json::Object{
        {"index", static_cast<int64_t>(index)},
        {"name", stageName},
        {"device", deviceName},
        {"kind", gpu ? "gpu" : "cpu"},
        {"replicas", replicas},
        {"source", sourceName},
        // Built by `heterps compile`: a GPU stage also builds for the CPU.
        {"libraries", gpu ? llvm::json::Object{{"gpu", stageName + ".gpu.so"},
                                               {"cpu", stageName + ".cpu.so"}}
                          : llvm::json::Object{{"cpu", stageName + ".so"}}},
        {"inputs", channelList(program->inputChannels)},
        {"outputs", channelList(program->outputChannels)},
        {"tables", std::move(stageTables)},
        {"kernels", static_cast<int64_t>(program->kernelCount)},
        {"peak_memory_bytes", static_cast<int64_t>(program->arenaBytes)},
        {"weights",
         llvm::json::Object{
             {"offset", static_cast<int64_t>(program->weightsBegin)},
             {"bytes", static_cast<int64_t>(program->weightsEnd -
                                            program->weightsBegin)}}},
    });
  }

  // Tables the parameter server serves: their initial values follow the
  // stages' weights.
  llvm::json::Array tableList;
  for (auto &entry : tables) {
    WeightOp source;
    module.walk([&](WeightOp weight) {
      if (weight.getName() == entry.getKey())
        source = weight;
    });
    if (!source)
      return emitError(module.getLoc())
             << "no initial value for parameter-server table '"
             << entry.getKey() << "'";
    FailureOr<uint64_t> offset = weights.add(source.getValue());
    if (failed(offset))
      return source.emitError() << "table data is not dense";
    entry.getValue().offset = *offset;
    tableList.push_back(llvm::json::Object{
        {"name", entry.getKey()},
        {"dtype", entry.getValue().dtype},
        {"shape", shapeJSON(entry.getValue().shape)},
        {"offset", static_cast<int64_t>(entry.getValue().offset)},
    });
  }

  // The caller's side: @main sends inputs and receives outputs; a constant
  // output travels in the weights file.
  llvm::json::Array inputs, outputs;
  SmallVector<std::string> inputNames;
  Block &body = main.getBody().front();
  auto nameOf = [&](DictionaryAttr attrs, StringRef fallback) {
    if (attrs)
      if (auto name = attrs.getAs<StringAttr>("hps.name"))
        return name.getValue().str();
    return fallback.str();
  };
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return main.emitError() << "input #" << i << " has type " << arg.getType()
                              << "; bind symbolic dims with --batch or "
                                 "--input-shape";
    llvm::json::Array sendsTo;
    for (Operation *user : arg.getUsers())
      if (auto send = dyn_cast<SendOp>(user)) {
        sendsTo.push_back(send.getChannel());
        channelType(arg, send.getChannel()).from = -1;
      }
    DictionaryAttr attrs = main.getArgAttrDict(i);
    inputNames.push_back(nameOf(attrs, ("input_" + Twine(i)).str()));
    inputs.push_back(llvm::json::Object{
        {"name", inputNames.back()},
        {"dtype", dtypeName(type.getElementType())},
        {"shape", shapeJSON(type.getShape())},
        {"batched", attrs && attrs.get("hps.batched") != nullptr},
        {"channels", std::move(sendsTo)},
    });
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return main.emitError() << "output #" << i << " has type "
                              << value.getType() << "; it must be static";
    DictionaryAttr attrs = main.getResultAttrDict(i);
    llvm::json::Object output{
        {"name", nameOf(attrs, ("output_" + Twine(i)).str())},
        {"dtype", dtypeName(type.getElementType())},
        {"shape", shapeJSON(type.getShape())},
        {"batched", attrs && attrs.get("hps.batched") != nullptr},
    };
    // A data-dependent extent (--hps-bound-extents): the runtime trims the
    // output to the count another output holds, and hides that one.
    if (attrs)
      if (auto axis = attrs.getAs<IntegerAttr>("hps.extent_axis"))
        output["extent"] = llvm::json::Object{
            {"axis", axis.getInt()},
            {"output", attrs.getAs<IntegerAttr>("hps.extent_output").getInt()}};
    if (attrs && attrs.get("hps.extent_count"))
      output["hidden"] = true;
    // An output that mixes samples (--hps-mark-sample-mixing): the runtime
    // runs whole batches only.
    if (attrs)
      if (auto why = attrs.getAs<StringAttr>("hps.mixes_samples"))
        output["mixes_samples"] = why.str();
    if (auto recv = value.getDefiningOp<RecvOp>()) {
      output["channel"] = recv.getChannel();
    } else if (auto arg = dyn_cast<BlockArgument>(value)) {
      output["input"] = static_cast<int64_t>(arg.getArgNumber());
    } else if (Operation *producer = value.getDefiningOp();
               producer && isa<ConstantOp, WeightOp>(producer)) {
      ElementsAttr data = isa<ConstantOp>(producer)
                              ? cast<ConstantOp>(producer).getValue()
                              : cast<WeightOp>(producer).getValue();
      FailureOr<uint64_t> offset = weights.add(data);
      if (failed(offset))
        return producer->emitError() << "output data is not dense";
      output["constant_offset"] = static_cast<int64_t>(*offset);
    } else {
      return main.emitError() << "output #" << i
                              << " is neither received from a stage nor "
                                 "constant";
    }
    outputs.push_back(std::move(output));
  }

  // The pass-key program (--hps-outline-pass-keys), a CPU program like a
  // stage's: the runtime's pass cache runs it on a pass's batches to learn
  // every key the pass pulls. Its weights were written with the stages'.
  std::optional<llvm::json::Object> passKeys;
  if (func::FuncOp keys = programs->all.passKeys) {
    FailureOr<StageProgram> program =
        emitStageProgram(keys, /*gpu=*/false, tables, trained);
    if (failed(program))
      return failure();
    FailureOr<llvm::json::Object> section =
        passKeysSection(keys, *program, inputNames);
    if (failed(section))
      return failure();
    files.emplace_back(keys.getSymName().str() + ".cpp",
                       std::move(program->text));
    passKeys = std::move(*section);
  } else if (auto why = module->getAttrOfType<StringAttr>(
                 kPassKeysUnavailableAttrName)) {
    passKeys = llvm::json::Object{{"unavailable", why.getValue()}};
  }

  llvm::json::Array channelArray;
  for (auto &[name, entry] : channels)
    channelArray.push_back(llvm::json::Object{
        {"name", name},
        {"dtype", entry.dtype},
        {"shape", shapeJSON(entry.shape)},
        {"from", entry.from},
        {"to", entry.to},
    });

  llvm::json::Object manifest{
      {"format", "heterps-bundle"},
      {"version", 1},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"channels", std::move(channelArray)},
      {"stages", std::move(stageList)},
      {"tables", std::move(tableList)},
      {"weights",
       llvm::json::Object{{"file", "weights.bin"},
                          {"bytes", static_cast<int64_t>(weights.size())}}},
  };
  if (auto batch = main->getAttrOfType<IntegerAttr>("hps.batch"))
    manifest["batch"] = batch.getInt();
  if (passKeys)
    manifest["pass_keys"] = std::move(*passKeys);
  if (trained) {
    FailureOr<llvm::json::Object> section =
        trainingSection(module, training, trainedState, weights);
    if (failed(section))
      return failure();
    manifest["training"] = std::move(*section);
    manifest["weights"] =
        llvm::json::Object{{"file", "weights.bin"},
                           {"bytes", static_cast<int64_t>(weights.size())}};
  }
  if (auto graph = main->getAttrOfType<StringAttr>("hps.graph_name"))
    manifest["model"] = graph.getValue();
  if (module->hasAttr("hps.plan")) {
    // The placement plan as --hps-to-plan prints it: the runtime and the
    // tools that resize jobs read the plan from the bundle.
    FailureOr<llvm::json::Value> plan = planJSON(module);
    if (failed(plan))
      return failure();
    manifest["plan"] = std::move(*plan);
  }

  std::string manifestText;
  llvm::raw_string_ostream manifestOS(manifestText);
  manifestOS << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
             << "\n";
  files.emplace_back("manifest.json", std::move(manifestText));
  return bundle.install(files);
}

void heterps::target::registerStageBundleTranslation() {
  static llvm::cl::opt<std::string> bundleDirectory(
      "bundle-dir",
      llvm::cl::desc("--hps-to-stages: the bundle directory to write"),
      llvm::cl::init(""));
  static llvm::cl::opt<bool> nativeLayouts(
      "stage-native-layouts",
      llvm::cl::desc("--hps-to-stages: keep CPU stages' conv chains in the "
                     "native blocked layout (false: plain NCHW everywhere)"),
      llvm::cl::init(true));
  static llvm::cl::opt<bool> fuseElementwise(
      "stage-fuse-elementwise",
      llvm::cl::desc("--hps-to-stages: run chains of elementwise ops as one "
                     "generated loop (false: one kernel per op)"),
      llvm::cl::init(true));
  auto dialects = [](DialectRegistry &registry) {
    registry.insert<HPSDialect, hpsrt::HPSRTDialect, func::FuncDialect>();
  };
  // The decisions are made as IR first, as `heterps compile` makes them
  // (fusion ops already there stay as they are).
  auto preparedModule = [](Operation *op,
                           StringRef translation) -> FailureOr<ModuleOp> {
    auto module = dyn_cast<ModuleOp>(op);
    if (!module)
      return op->emitError() << translation << " expects a module";
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    buildStagePreparationPipeline(pm, fuseElementwise, nativeLayouts);
    if (failed(pm.run(module)))
      return failure();
    return module;
  };
  TranslateFromMLIRRegistration registration(
      "hps-to-stages",
      "Lower a partitioned module to a bundle of stage programs (-o names "
      "the bundle directory)",
      [=](Operation *op, raw_ostream &os) -> LogicalResult {
        // heterps-translate turns `-o DIR` into --bundle-dir; the stream
        // gets nothing.
        if (bundleDirectory.empty())
          return op->emitError("--hps-to-stages needs -o DIR");
        FailureOr<ModuleOp> module = preparedModule(op, "--hps-to-stages");
        if (failed(module))
          return failure();
        return writeStageBundle(*module, bundleDirectory);
      },
      dialects);
  TranslateFromMLIRRegistration programs(
      "hps-to-stage-programs",
      "Print the C++ program of every stage of a partitioned module, in "
      "pipeline order (what --hps-to-stages writes as stage_K.cpp / .cu)",
      [=](Operation *op, raw_ostream &os) -> LogicalResult {
        FailureOr<ModuleOp> module =
            preparedModule(op, "--hps-to-stage-programs");
        if (failed(module))
          return failure();
        return printStagePrograms(*module, os);
      },
      dialects);
}
