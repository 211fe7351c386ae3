//===- Compile.cpp - heterps compile --------------------------------------===//
//
// import -> --hps-legalize-onnx (strict) -> --hps-place [-> --hps-autodiff
// with --train] -> --hps-partition
// -> --hps-verify-partition -> --hps-to-stages -> build. The bundle appears
// only when every step succeeded.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/IR/HPSOps.h"
#include "heterps/Dialect/HPS/Transforms/Passes.h"
#include "heterps/Import/ONNXImporter.h"
#include "heterps/Target/StageBundle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace heterps;

namespace heterps::driver {

int compile(const CompileOptions &options) {
  auto fail = [](const Twine &message) {
    reportError("compile", message);
    return 1;
  };
  if (options.train && options.loss.empty())
    return fail("--train needs --loss bce | softmax-ce | mse");
  if (!options.train && !options.loss.empty())
    return fail("--loss is only meaningful with --train");
  if (options.recurrenceUnrollLimit < 0)
    return fail("--recurrence-unroll-limit=" +
                std::to_string(options.recurrenceUnrollLimit) +
                " must be 0 or more");
  if (options.batchNorm != "batch" && options.batchNorm != "running")
    return fail("--batch-norm=" + options.batchNorm +
                " is not batch or running");
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
  auto file = llvm::MemoryBuffer::getFile(options.model);
  if (!file)
    return fail("cannot read '" + options.model +
                "': " + file.getError().message());

  MLIRContext context;
  // One message per error: the module dump helps compiler developers, not
  // users (heterps-opt keeps it).
  context.printOpOnDiagnostic(false);
  context.loadDialect<hps::HPSDialect, func::FuncDialect>();
  // Diagnostics print as FILE:LINE:COL: error: ..., as the other tools do,
  // and name the ONNX node (or initializer) an op came from: a model's
  // locations are all FILE:0:0.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  ScopedDiagnosticHandler nodeNames(&context, [&](Diagnostic &diag) {
    auto named = dyn_cast<NameLoc>(diag.getLocation());
    if (!named)
      return failure(); // the handler above prints it
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
  });
  OwningOpRef<ModuleOp> module = import::importONNX(
      options.model, (*file)->getBuffer(), &context, bindings);
  if (!module)
    return 1; // the importer reported it

  PassManager legalizePM(&context);
  hps::HPSLegalizeONNXOptions legalize;
  legalize.strict = true;
  // Every RNN, GRU and LSTM runs as hps.recurrence by default (1.8x to 4.9x
  // faster than the unrolled steps, and compiled 1.7x to 25x faster, over
  // 16 to 512 steps), in training too, where its adjoint is one
  // hps.recurrence_grad.
  legalize.recurrenceUnrollLimit = options.recurrenceUnrollLimit;
  legalizePM.addPass(hps::createHPSLegalizeONNX(legalize));
  legalizePM.addPass(hps::createHPSBoundExtents());
  if (failed(legalizePM.run(*module)))
    return 1; // the pass reported it

  // A model whose outputs all fold to constants or are its inputs has no
  // layer to place: its bundle has no stage and the runtime answers alone.
  auto main = module->lookupSymbol<func::FuncOp>("main");
  bool hasLayer = false;
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
      return 1;
    }
  }
  if (!hasLayer)
    main->setAttr("hps.pipeline", ArrayAttr::get(&context, {}));

  PassManager pm(&context);
  hps::HPSPlaceOptions place;
  place.clusterFile = options.cluster;
  place.strategy = options.strategy;
  place.throughput = options.throughput;
  place.seed = options.seed;
  place.episodes = options.episodes;
  place.profile = options.profile;
  // A training bundle is placed for forward + backward work; autodiff then
  // puts every backward op where its forward op runs.
  place.inference = !options.train;
  if (options.batch > 0)
    place.batch = options.batch;
  pm.addPass(hps::createHPSPlace(place));
  if (options.train) {
    hps::HPSAutodiffOptions autodiff;
    autodiff.loss = options.loss;
    autodiff.label = options.label;
    autodiff.output = options.trainOutput;
    autodiff.optimizer = options.optimizer;
    autodiff.learningRate = options.learningRate;
    autodiff.momentum = options.momentum;
    autodiff.batchNorm = options.batchNorm == "running"
                             ? hps::BatchNormMode::Running
                             : hps::BatchNormMode::Batch;
    pm.addPass(hps::createHPSAutodiff(autodiff));
  }
  pm.addPass(hps::createHPSPartition());
  pm.addPass(hps::createHPSVerifyPartition());
  if (hasLayer && failed(pm.run(*module)))
    return 1; // the failing pass reported it

  // Stage sources and their builds go to a sibling first, then replace the
  // output in one rename, so a failure leaves nothing half-written.
  std::string staging = options.output + ".building";
  (void)llvm::sys::fs::remove_directories(staging);
  target::StageBundleOptions bundleOptions;
  bundleOptions.nativeLayouts = options.nativeLayouts;
  bundleOptions.fuseElementwise = options.fuseElementwise;
  if (failed(target::writeStageBundle(*module, staging, bundleOptions)))
    return 1;
  std::string error;
  if (!buildStages(staging, error)) {
    (void)llvm::sys::fs::remove_directories(staging);
    return fail(error);
  }
  if (!target::installBundleDirectory(staging, options.output, error))
    return fail(error);
  llvm::errs() << "heterps compile: wrote " << options.output << "\n";
  return 0;
}

} // namespace heterps::driver
