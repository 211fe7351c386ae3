//===- heterps-profile.cpp - Measure layer times on the local CPU ---------===//
//
// heterps-profile MODULE.mlir --device-class cpu.NAME [--batch N]
//   [--threads N] [--repeats R] [--inference] -o profile.json
//   [--cluster FILE.yaml --calibration calibration.json]
//
// Times every distinct layer of @main on this machine's CPU with the
// runtime's kernels, as a bundle runs the layer (lib/Profile), and writes the
// profile database `heterps-opt --hps-place="profile=FILE"` reads.
// Entries are keyed exactly as placement looks them up: by op signature, or
// by layer name where layers sharing a signature differ in attributes.
//
//===----------------------------------------------------------------------===//

#include "heterps/Cluster/ClusterSpec.h"
#include "heterps/Cost/Calibration.h"
#include "heterps/Cost/CostModel.h"
#include "heterps/Dialect/HPS/IR/HPSDialect.h"
#include "heterps/Dialect/HPS/Transforms/LayerGraphBuilder.h"
#include "heterps/Profile/LayerProfiler.h"
#include "heterps/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;
using namespace mlir;
using namespace heterps;

static cl::OptionCategory category("heterps-profile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<module.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    deviceClass("device-class", cl::Required,
                cl::desc("CPU device class the times are recorded for "
                         "(cpu.NAME, as in the cluster file)"),
                cl::value_desc("class"), cl::cat(category));
static cl::opt<int64_t>
    batch("batch", cl::init(256),
          cl::desc("Samples per batch; dynamic dims are bound to it"),
          cl::cat(category));
static cl::opt<unsigned> repeats("repeats", cl::init(10),
                                 cl::desc("Timed runs per layer (median)"),
                                 cl::cat(category));
static cl::opt<std::string> clusterFile(
    "cluster",
    cl::desc("Cluster file holding --device-class (for --calibration)"),
    cl::value_desc("file.yaml"), cl::cat(category));
static cl::opt<std::string> calibrationFile(
    "calibration",
    cl::desc("Also write the cost model's efficiencies fitted to the times"),
    cl::value_desc("file.json"), cl::cat(category));
static cl::opt<bool> inference(
    "inference",
    cl::desc("Record forward times, for --hps-place=\"inference=true\" "
             "(default: training steps)"),
    cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::Required,
                                       cl::desc("Profile database to write"),
                                       cl::value_desc("profile.json"),
                                       cl::cat(category));

static int fail(const Twine &message) {
  WithColor::error(errs(), "heterps-profile") << message << "\n";
  return 1;
}

/// The op's attributes without its placement: layers that differ only in
/// where they were placed run the same kernel.
static std::string attributesOf(Operation *op) {
  std::string text;
  raw_string_ostream os(text);
  for (NamedAttribute attr : op->getAttrDictionary())
    if (attr.getName() != "device")
      os << attr.getName() << "=" << attr.getValue() << ";";
  return text;
}

/// Writes `db` next to `path` and renames it into place, so a failure never
/// leaves a partial database.
/// Writes `path` through a temporary file and a rename: a reader never sees
/// half a file. `what` names the file in errors.
static Error saveAtomically(StringRef path, StringRef what,
                            llvm::function_ref<Error(StringRef)> write) {
  SmallString<128> temp;
  int fd;
  if (std::error_code ec =
          sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp))
    return createStringError(ec, "cannot write " + what + " '" + path +
                                     "': " + ec.message());
  sys::Process::SafelyCloseFileDescriptor(fd);
  if (Error error = write(temp)) {
    sys::fs::remove(temp);
    return error;
  }
  if (std::error_code ec = sys::fs::rename(temp, path)) {
    sys::fs::remove(temp);
    return createStringError(ec, "cannot write " + what + " '" + path +
                                     "': " + ec.message());
  }
  return Error::success();
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  heterps::setVersionPrinter();
  // libLLVM registers a --threads of its own (unrelated to this tool);
  // ours replaces it, so it is declared here rather than statically.
  if (cl::Option *taken = cl::getRegisteredOptions().lookup("threads"))
    taken->removeArgument();
  cl::opt<unsigned> threads(
      "threads", cl::init(0),
      cl::desc("Kernel threads (default: the runtime's, all cores)"),
      cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "HeterPS layer profiler: times each layer of @main on this CPU with "
      "the runtime's kernels and writes a profile database for "
      "--hps-place\n");

  // The times are this machine's CPU; recording them under a GPU class
  // would silently mislead placement.
  if (!Regex("^cpu\\.[A-Za-z0-9_][A-Za-z0-9_.-]*$").match(deviceClass)) {
    if (StringRef(deviceClass).starts_with("gpu."))
      return fail("device class '" + deviceClass +
                  "' is a GPU class; heterps-profile times this machine's CPU "
                  "and needs a cpu.NAME class");
    return fail("unknown device class format '" + deviceClass +
                "': expected cpu.NAME (e.g. cpu.epyc2)");
  }
  if (batch < 1)
    return fail("--batch must be at least 1");
  if (calibrationFile.empty() != clusterFile.empty())
    return fail("--calibration FILE and --cluster FILE go together");
  std::optional<cluster::ClusterSpec> cluster;
  if (!clusterFile.empty()) {
    Expected<cluster::ClusterSpec> loaded =
        cluster::loadClusterSpec(clusterFile);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    if (!llvm::any_of(loaded->classes, [](const cluster::DeviceClass &c) {
          return c.name == deviceClass;
        }))
      return fail("the cluster file '" + clusterFile +
                  "' has no device class '" + deviceClass + "'");
    cluster = std::move(*loaded);
  }
  if (repeats < 1)
    return fail("--repeats must be at least 1");
  // Where the database goes, checked before anything is timed: a directory
  // given as -o was found only after the whole model was profiled.
  if (sys::fs::is_directory(outputFile))
    return fail("cannot write profile database '" + outputFile +
                "': it is a directory");
  if (StringRef parent = sys::path::parent_path(outputFile);
      !parent.empty() && !sys::fs::is_directory(parent))
    return fail("cannot write profile database '" + outputFile + "': '" +
                parent + "' is not a directory");

  DialectRegistry registry;
  registry.insert<hps::HPSDialect, func::FuncDialect>();
  hps::registerLayerWorkModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail("cannot read module '" + inputFile + "': " + error);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse module '" + inputFile + "'");
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail("module '" + inputFile + "' has no @main function body");

  cost::Mode mode = inference ? cost::Mode::Inference : cost::Mode::Training;
  hps::ExtractedLayerGraph extracted = hps::buildLayerGraph(main, batch, mode);
  if (extracted.ops.empty())
    return fail("@main in '" + inputFile + "' has no layer to profile");
  // Samples one run carries, as buildLayerGraph counts them: a static
  // leading extent of the first input, else the bound batch. ProfileDatabase
  // scales by it.
  int64_t samples = batch;
  if (main.getNumArguments() > 0)
    if (auto first = dyn_cast<RankedTensorType>(main.getArgument(0).getType());
        first && first.getRank() > 0 && !first.isDynamicDim(0))
      samples = std::max<int64_t>(first.getDimSize(0), 1);
  // The database holds the time of the pass being planned (Planning.md); a
  // training step is taken as the cost model's forward + backward factor.
  double passFactor = inference ? 1.0 : cost::CostOptions().trainingWorkFactor;

  // Layers sharing a signature are timed once; where their attributes
  // differ (strides, transposes), each variant is timed and keyed by name.
  StringMap<std::map<std::string, std::vector<unsigned>>> variants;
  for (unsigned i = 0; i != extracted.ops.size(); ++i)
    variants[extracted.graph.layers[i].signature]
            [attributesOf(extracted.ops[i])]
                .push_back(i);

  profile::ProfileOptions options;
  options.batch = batch;
  options.repeats = repeats;
  options.threads = threads;
  options.training = !inference;
  profile::LayerProfiler profiler(options);
  std::vector<profile::LayerMeasurement> byLayer(extracted.ops.size());
  cost::ProfileDatabase db;
  for (unsigned i = 0; i != extracted.ops.size(); ++i) {
    const cost::Layer &layer = extracted.graph.layers[i];
    auto &groups = variants[layer.signature];
    const std::vector<unsigned> &same = groups[attributesOf(extracted.ops[i])];
    if (same.front() != i) {
      byLayer[i] = byLayer[same.front()];
      continue;
    }
    Expected<profile::LayerMeasurement> measured =
        profiler.measure(extracted.ops[i]);
    if (!measured)
      return fail("layer '" + layer.name + "' (" + layer.signature +
                  "): " + toString(measured.takeError()));
    byLayer[i] = *measured;
    if (!measured->seconds)
      continue;
    double seconds = *measured->seconds * passFactor;
    if (groups.size() == 1) {
      db.record(layer.signature, deviceClass, samples, seconds);
      continue;
    }
    for (unsigned j : same)
      db.record(extracted.graph.layers[j].name, deviceClass, samples, seconds);
  }

  outs() << formatv(
      "# {0} on {1}: batch {2}, {3} repeats, {4}; ms per batch "
      "(forward){5}\n",
      inputFile, deviceClass, samples, repeats,
      threads ? formatv("{0} threads", threads).str()
              : std::string("default threads"),
      inference ? std::string()
                : formatv(", recorded x{0:f1} for a training step", passFactor)
                      .str());
  outs() << formatv("{0,-20} {1,-22} {2,12}  {3}\n", "layer", "op", "ms",
                    "signature");
  for (unsigned i = 0; i != extracted.ops.size(); ++i) {
    const cost::Layer &layer = extracted.graph.layers[i];
    const profile::LayerMeasurement &m = byLayer[i];
    std::string ms = m.seconds ? formatv("{0:f4}", *m.seconds * 1e3).str()
                               : std::string("skipped");
    outs() << formatv("{0,-20} {1,-22} {2,12}  {3}", layer.name, layer.opName,
                      ms, layer.signature);
    if (!m.note.empty())
      outs() << "  (" << m.note << ")";
    outs() << "\n";
  }

  if (Error error =
          saveAtomically(outputFile, "profile database",
                         [&](StringRef temp) { return db.save(temp); }))
    return fail(toString(std::move(error)));
  outs() << formatv("# wrote {0} entries to {1}\n", db.size(), outputFile);

  if (calibrationFile.empty())
    return 0;
  // The cost model fitted to these times (docs/Planning.md, "Calibration").
  cost::CostOptions costOptions;
  costOptions.batchSize = double(samples);
  Expected<cost::Calibration> calibration =
      cost::calibrate(extracted.graph, *cluster, deviceClass, db, costOptions);
  if (!calibration)
    return fail(toString(calibration.takeError()));
  std::string text = cost::calibrationJson(*calibration, costOptions);
  if (Error error = saveAtomically(
          calibrationFile, "calibration file", [&](StringRef temp) -> Error {
            std::error_code ec;
            raw_fd_ostream out(temp, ec);
            if (ec)
              return createStringError(ec, "cannot write '" + temp + "'");
            out << text;
            return Error::success();
          }))
    return fail(toString(std::move(error)));
  outs() << "# " << calibration->describe() << "\n";
  outs() << formatv("# wrote the calibration to {0}\n", calibrationFile);
  return 0;
}
