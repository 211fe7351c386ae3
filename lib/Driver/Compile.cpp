//===- Compile.cpp - ONNX model to built bundle ---------------------------===//
//
// import -> --hps-legalize-onnx (strict) -> --hps-place [-> --hps-autodiff
// with --train] -> --hps-partition
// -> --hps-verify-partition -> --hps-to-stages -> build. The bundle appears
// only when every step succeeded.
//
//===----------------------------------------------------------------------===//

#include "heterps/Driver/Compile.h"
#include "heterps/Driver/Session.h"
#include "heterps/Driver/StageBuild.h"

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cluster/InputFile.h"
#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"
#include "heterps/Dialect/HPS/Transforms/Pipelines.h"
#include "heterps/Dialect/HPS/Transforms/TrainingOptions.h"
#include "heterps/Import/ONNXImporter.h"
#include "heterps/Schedule/Scheduler.h"
#include "heterps/Target/BundleDirectory.h"
#include "heterps/Target/Passes.h"
#include "heterps/Target/PlanExport.h"
#include "heterps/Target/StageBundle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace heterps;

namespace heterps::driver {
namespace {

/// A context whose diagnostics print to one stream as FILE:LINE:COL: error:
/// ..., as the other tools do, naming the ONNX node (or initializer) an op
/// came from: a model's locations are all FILE:0:0.
class Compilation {
public:
  explicit Compilation(llvm::raw_ostream &os)
      : os(os), diagnostics(sourceMgr, &context, os),
        nodeNames(&context,
                  [this](Diagnostic &diag) { return emitNamed(diag); }) {
    // One message per error: the module dump helps compiler developers, not
    // users (heterps-opt keeps it).
    context.printOpOnDiagnostic(false);
    context.loadDialect<hps::HPSDialect, func::FuncDialect>();
  }

  /// "heterps compile: error: " + message; returns false for `return fail()`.
  bool fail(const Twine &message) {
    llvm::WithColor::error(os, "heterps compile") << message << "\n";
    return false;
  }

  llvm::raw_ostream &os;
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics;
  ScopedDiagnosticHandler nodeNames;

private:
  LogicalResult emitNamed(Diagnostic &diag) {
    auto named = dyn_cast<NameLoc>(diag.getLocation());
    if (!named)
      return failure(); // the SourceMgr handler prints it
    auto emit = [&](Diagnostic &d) {
      diagnostics.emitDiagnostic(named.getChildLoc(),
                                 "node '" + named.getName().strref() +
                                     "': " + d.str(),
                                 d.getSeverity());
    };
    emit(diag);
    for (Diagnostic &note : diag.getNotes())
      emit(note);
    return success();
  }
};

/// The compile pipeline's options (--hps-compile-pipeline) from the CLI's.
void setPipelineOptions(const CompileOptions &options, bool partition,
                        hps::CompilePipelineOptions &pipeline) {
  pipeline.recurrenceUnrollLimit = options.recurrenceUnrollLimit;
  pipeline.cluster = options.cluster;
  pipeline.strategy = options.strategy;
  pipeline.throughput = options.throughput;
  pipeline.seed = options.seed;
  pipeline.episodes = options.episodes;
  pipeline.passSteps = options.passSteps;
  pipeline.passDistinctFraction = options.passDistinctFraction;
  pipeline.sparseStaleness = options.sparseStaleness;
  pipeline.microBatches = options.microBatches;
  pipeline.profile = options.profile;
  if (options.batch > 0)
    pipeline.batch = options.batch;
  pipeline.partition = partition;
  pipeline.train = options.train;
  pipeline.loss = options.loss;
  pipeline.label = options.label;
  pipeline.output = options.trainOutput;
  pipeline.optimizer = options.optimizer;
  pipeline.learningRate = options.learningRate;
  pipeline.momentum = options.momentum;
  pipeline.frozen = options.frozen;
  pipeline.batchNorm = options.batchNorm == "running"
                           ? hps::BatchNormMode::Running
                           : hps::BatchNormMode::Batch;
}

/// The passes a compile runs, as heterps-opt takes them: the imported
/// module (`heterps-translate --import-onnx`) through this pipeline is the
/// module the stages are lowered from.
void printPipeline(llvm::raw_ostream &os,
                   const hps::CompilePipelineOptions &options) {
  OpPassManager pipeline("builtin.module");
  hps::buildLegalizePipeline(pipeline, options);
  hps::buildPlanPipeline(pipeline, options);
  os << "heterps compile: pipeline: ";
  pipeline.printAsTextualPipeline(os);
  os << "\n";
}

bool stopRequested(const CompileOptions &options) {
  return options.stopRequested && options.stopRequested();
}

constexpr const char *kInterrupted = "interrupted; nothing was written";
/// The most micro-batches a training step may take (--micro-batches).
constexpr unsigned kMostMicroBatches = 65536;

/// The steps up to a placed module: checks the options, imports, legalizes
/// and places (then, when `partition`, autodiff with --train, partition and
/// its verification). Null after reporting an error. `hasLayer` says whether
/// anything was placed: a module without layers skips placement.
OwningOpRef<ModuleOp> placeModule(const CompileOptions &options,
                                  Compilation &compilation, bool partition,
                                  bool &hasLayer) {
  MLIRContext &context = compilation.context;
  auto fail = [&](const Twine &message) {
    compilation.fail(message);
    return OwningOpRef<ModuleOp>();
  };
  // The planner's bound, said of the flag: past it the error was the
  // placement pass's, placed at the model file.
  if (!(options.throughput > 0) ||
      !(options.throughput <= schedule::kMostTargetThroughput))
    return fail(
        llvm::formatv("--throughput must be a positive number of "
                      "samples/s, at most {0}, not {1}",
                      llvm::format("%g", schedule::kMostTargetThroughput),
                      llvm::format("%g", options.throughput))
            .str());
  // Past 10^8 samples (a job file's bound too) tensor sizes overflow deep
  // in the pipeline, whose errors named IR attributes or blamed the model.
  if (options.batch < 0 || options.batch > 100000000)
    return fail("--batch=" + std::to_string(options.batch) +
                " must be 0 (the model's own) to 10^8");
  if (!options.train) {
    // What only training reads, set away from its default without --train.
    const CompileOptions defaults;
    const std::pair<bool, const char *> trainingOnly[] = {
        {options.label != defaults.label, "--label"},
        {options.trainOutput != defaults.trainOutput, "--train-output"},
        {options.optimizer != defaults.optimizer, "--optimizer"},
        {options.learningRate != defaults.learningRate, "--lr"},
        {options.momentum != defaults.momentum, "--momentum"},
        {options.batchNorm != defaults.batchNorm, "--batch-norm"},
        {!options.frozen.empty(), "--freeze"}};
    for (const auto &[set, flag] : trainingOnly)
      if (set)
        return fail(Twine(flag) + " needs --train");
  }
  if (options.train && options.loss.empty())
    return fail("--train needs --loss bce | softmax-ce | mse");
  if (!options.train && !options.loss.empty())
    return fail("--loss is only meaningful with --train");
  // Named by their flags before the model is read (hps-autodiff finds them
  // after import and legalization, at the model's place).
  if (options.train)
    if (std::string error = hps::trainingOptionsError(
            options.loss, options.optimizer, options.learningRate,
            options.momentum, {"--loss", "--optimizer", "--lr", "--momentum"});
        !error.empty())
      return fail(error);
  if (!options.train && (options.passSteps > 0 || options.sparseStaleness > 0))
    return fail(std::string(options.passSteps > 0 ? "--pass-steps"
                                                  : "--sparse-staleness") +
                " is a training step shape: it needs --train");
  if (!options.train && options.microBatches > 0)
    return fail("--micro-batches sets a training step: it needs --train");
  // 4294967295 planned steps of 34 billion samples without a word.
  if (options.microBatches > kMostMicroBatches)
    return fail("--micro-batches=" + std::to_string(options.microBatches) +
                " must be 0 (the planner's) to " +
                std::to_string(kMostMicroBatches));

  if (options.sparseStaleness > 1)
    return fail("--sparse-staleness=" +
                std::to_string(options.sparseStaleness) + " must be 0 or 1");
  if (!(options.passDistinctFraction > 0 && options.passDistinctFraction <= 1))
    return fail("--pass-distinct-fraction must be in (0, 1]");
  if (options.passDistinctFraction != 1 && options.passSteps == 0)
    return fail("--pass-distinct-fraction prices passes: it needs "
                "--pass-steps");
  // Named by its flag before the model is read (the placement pass found it
  // after import and legalization, as "MODEL:0:0: error: hps-place: ...").
  if (!llvm::is_contained(schedule::strategyNames(),
                          llvm::StringRef(options.strategy))) {
    std::string known;
    for (llvm::StringRef name : schedule::strategyNames())
      known += (known.empty() ? "" : ", ") + name.str();
    return fail("--strategy '" + options.strategy +
                "' is not one of: " + known);
  }
  if (options.recurrenceUnrollLimit < 0)
    return fail("--recurrence-unroll-limit=" +
                std::to_string(options.recurrenceUnrollLimit) +
                " must be 0 or more");
  if (options.batchNorm != "batch" && options.batchNorm != "running")
    return fail("--batch-norm=" + options.batchNorm +
                " is not batch or running");
  // The cluster file's error under its own name and place, first: the
  // placement pass reports it at the model's module (model.onnx:0:0).
  if (llvm::Expected<cluster::ClusterSpec> spec =
          cluster::loadClusterSpec(options.cluster);
      !spec) {
    std::string message = llvm::toString(spec.takeError());
    if (!llvm::StringRef(message).starts_with(options.cluster + ":"))
      return fail(message); // not a place in the file: no file to read
    compilation.os << message << "\n";
    return OwningOpRef<ModuleOp>();
  }
  import::InputBindings bindings;
  bindings.batch = options.batch;
  bindings.staticBatch = options.staticBatch;
  for (const std::string &text : options.inputShapes) {
    std::string error;
    if (!import::parseInputShape(text, bindings, error))
      return fail(error);
  }
  for (const std::string &text : options.dims) {
    std::string error;
    if (!import::parseDimBinding(text, bindings, error))
      return fail(error);
  }
  // Stages need static shapes: a symbolic dim left is named now, not deep
  // in legalization.
  bindings.requireStatic = true;
  std::unique_ptr<llvm::MemoryBuffer> file;
  if (options.modelBytes) {
    file = llvm::MemoryBuffer::getMemBuffer(*options.modelBytes, options.model,
                                            /*RequiresNullTerminator=*/false);
  } else {
    // At most protobuf's 2 GiB: weights beyond are external data.
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> read =
        cluster::readInputFile(options.model, "", uint64_t(1) << 31);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    file = std::move(*read);
  }

  OwningOpRef<ModuleOp> module =
      import::importONNX(options.model, file->getBuffer(), &context, bindings);
  // The module holds the weights now: the file's copy goes.
  file.reset();
  if (!module)
    return nullptr; // the importer reported it
  if (stopRequested(options))
    return fail(kInterrupted);

  hps::CompilePipelineOptions pipeline;
  setPipelineOptions(options, partition, pipeline);
  if (options.printPipeline)
    printPipeline(compilation.os, pipeline);
  PassManager legalizePM(&context);
  hps::buildLegalizePipeline(legalizePM, pipeline);
  if (failed(legalizePM.run(*module)))
    return nullptr; // the pass reported it
  if (stopRequested(options))
    return fail(kInterrupted);

  auto main = module->lookupSymbol<func::FuncOp>("main");
  // A model exported for one sample that mixes the samples (a softmax over
  // dim 0, sample 0 taken) would compute across the --batch samples: even
  // a whole batch got another answer than the model's, with exit 0.
  if (options.staticBatch && options.batch > 1)
    for (unsigned i = 0; i < main.getNumResults(); ++i)
      if (auto why =
              main.getResultAttrOfType<StringAttr>(i, "hps.mixes_samples")) {
        auto name = main.getResultAttrOfType<StringAttr>(i, "hps.name");
        return fail("--static-batch: output '" +
                    (name ? name.getValue() : StringRef("?")) +
                    "' mixes the samples of a batch (" + why.getValue() +
                    "), so the model, exported for one sample, cannot take " +
                    std::to_string(options.batch) +
                    " at once; compile it with --batch 1, or export it "
                    "with a symbolic batch");
      }

  // A model whose outputs all fold to constants or are its inputs has no
  // layer to place: its bundle has no stage and the runtime answers alone.
  hasLayer = false;
  main.walk([&](hps::PlacedOpInterface) { hasLayer = true; });
  if (!hasLayer && options.train)
    return fail("'" + options.model + "' has no layer to train");
  // A padded result's positions past its count hold zeros that a gradient
  // would flow through.
  if (options.train) {
    Operation *dataDependent = nullptr;
    main.walk([&](Operation *op) {
      if (isa<hps::NonZeroOp, hps::UniqueOp, hps::NonMaxSuppressionOp>(op))
        dataDependent = op;
    });
    if (dataDependent) {
      dataDependent->emitError()
          << "'" << dataDependent->getName()
          << "' has a data-dependent extent, which training does not support";
      return nullptr;
    }
  }
  if (!hasLayer)
    main->setAttr("hps.pipeline", ArrayAttr::get(&context, {}));

  PassManager pm(&context);
  hps::buildPlanPipeline(pm, pipeline, options.stopRequested);
  if (hasLayer && failed(pm.run(*module)))
    return nullptr; // the failing pass reported it
  if (stopRequested(options))
    return fail(kInterrupted);
  return module;
}

} // namespace

bool compileBundle(const CompileOptions &options,
                   llvm::raw_ostream &diagnostics) {
  Compilation compilation(diagnostics);
  // Before any work: an -o that holds something else is refused now, not
  // after every stage was built (and checked again as the bundle moves in).
  if (std::string refused = target::bundleDestinationError(options.output);
      !refused.empty())
    return compilation.fail(refused);
  bool hasLayer = false;
  OwningOpRef<ModuleOp> module =
      placeModule(options, compilation, /*partition=*/true, hasLayer);
  if (!module)
    return false;

  // The printer's decisions, as IR first.
  PassManager prepare(module->getContext(), ModuleOp::getOperationName());
  target::buildStagePreparationPipeline(prepare, options.fuseElementwise,
                                        options.nativeLayouts);
  if (options.printPipeline) {
    compilation.os << "heterps compile: stage preparation: ";
    prepare.printAsTextualPipeline(compilation.os);
    compilation.os << "\n";
  }
  if (failed(prepare.run(*module)))
    return false; // the pass reported it
  if (stopRequested(options))
    return compilation.fail(kInterrupted);
  // Stage sources and their builds go to a directory of this compile's own
  // beside the output, then replace it in one rename, so a failure leaves
  // nothing half-written.
  std::string error;
  std::string staging =
      target::makeStagingDirectory(options.output, "building", error);
  if (staging.empty())
    return compilation.fail(error);
  auto removeStaging = llvm::make_scope_exit(
      [&] { (void)llvm::sys::fs::remove_directories(staging); });
  if (failed(target::writeStageBundle(*module, staging)))
    return false;
  if (!buildStages(staging, error, options.stopRequested))
    return compilation.fail(stopRequested(options) ? kInterrupted : error);
  // What the runtime would refuse (a shape too large to hold, bindings the
  // manifest's checks find at odds) is refused here, before it is a bundle.
  if (std::optional<std::string> refused = bundleOpenError(staging))
    return compilation.fail("the runtime would not open the bundle built: " +
                            *refused);
  removeStaging.release(); // installed, or removed by the install
  if (!target::installBundleDirectory(staging, options.output, error))
    return compilation.fail(error);
  return true;
}

std::optional<std::string> placeModel(const CompileOptions &options,
                                      llvm::raw_ostream &diagnostics) {
  Compilation compilation(diagnostics);
  bool hasLayer = false;
  OwningOpRef<ModuleOp> module =
      placeModule(options, compilation, /*partition=*/false, hasLayer);
  if (!module)
    return std::nullopt;
  if (!hasLayer) {
    compilation.fail("'" + options.model + "' has no layer to place");
    return std::nullopt;
  }
  std::string plan;
  llvm::raw_string_ostream os(plan);
  if (failed(target::exportPlanJSON(*module, os)))
    return std::nullopt;
  return plan;
}

} // namespace heterps::driver
