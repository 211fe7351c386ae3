//===- heterps.cpp - The HeterPS driver -----------------------------------===//
//
//   heterps compile MODEL --cluster FILE --throughput N [--strategy rl]
//                   [--batch B] [--input-shape NAME=DxD...] -o BUNDLE
//   heterps build BUNDLE   (stage programs of --hps-to-stages output)
//   heterps run BUNDLE --input NAME=FILE ... --output-dir DIR
//   heterps datagen ctr --rows N --seed S -o FILE
//
// One command per step a user takes; the compiler passes and the runtime are
// libraries the subcommands call.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace heterps::driver;

static cl::SubCommand
    compileCommand("compile",
                   "Compile an ONNX model into a bundle of stage programs");
static cl::SubCommand runCommand("run", "Run a compiled bundle on inputs");
static cl::SubCommand
    buildCommand("build", "Build the stage programs of a bundle written by "
                          "`heterps-translate --hps-to-stages`");
static cl::SubCommand datagenCommand(
    "datagen", "Write synthetic training data: `datagen ctr --rows N --seed S "
               "-o FILE` (Criteo TSV from a hidden ground-truth model)");

// compile
static cl::opt<std::string> model(cl::Positional, cl::desc("<model.onnx>"),
                                  cl::sub(compileCommand), cl::Required);
static cl::opt<std::string> cluster("cluster", cl::desc("Cluster file (YAML)"),
                                    cl::value_desc("file"),
                                    cl::sub(compileCommand), cl::Required);
static cl::opt<double> throughput("throughput",
                                  cl::desc("Target samples per second"),
                                  cl::sub(compileCommand), cl::Required);
static cl::opt<std::string>
    strategy("strategy", cl::init("rl"),
             cl::desc("rl | dp | brute | greedy | cpu-only | gpu-only"),
             cl::sub(compileCommand));
static cl::opt<uint64_t> seed("seed", cl::init(1),
                              cl::desc("Seed of the rl strategy"),
                              cl::sub(compileCommand));
static cl::opt<unsigned> episodes("episodes", cl::init(1024),
                                  cl::desc("Episodes of the rl strategy"),
                                  cl::sub(compileCommand));
static cl::opt<int64_t>
    batch("batch", cl::init(0),
          cl::desc("Bind the symbolic leading dim of the inputs (the "
                   "micro-batch the stages run)"),
          cl::sub(compileCommand));
static cl::list<std::string> inputShapes("input-shape",
                                         cl::desc("Static shape of one input"),
                                         cl::value_desc("NAME=D0xD1x..."),
                                         cl::sub(compileCommand));
static cl::opt<std::string> profile("profile",
                                    cl::desc("Profile database of layer times"),
                                    cl::sub(compileCommand));
static cl::opt<std::string> compileOutput("o", cl::desc("Bundle directory"),
                                          cl::value_desc("dir"),
                                          cl::sub(compileCommand),
                                          cl::Required);

// run
static cl::opt<std::string> bundle(cl::Positional, cl::desc("<bundle>"),
                                   cl::sub(runCommand), cl::Required);
static cl::list<std::string>
    inputs("input", cl::desc("A model input (.npy or ONNX TensorProto .pb)"),
           cl::value_desc("NAME=FILE"), cl::sub(runCommand));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("Where NAME.npy outputs go"),
                                      cl::value_desc("dir"),
                                      cl::sub(runCommand));
static cl::opt<int> threads("threads", cl::init(0),
                            cl::desc("Kernel threads per stage replica"),
                            cl::sub(runCommand));
static cl::opt<bool> gpuStagesOnCpu(
    "gpu-stages-on-cpu",
    cl::desc("Run GPU-class stages with their CPU build (no GPU needed)"),
    cl::sub(runCommand));
static cl::opt<int> frames("frames", cl::init(4),
                           cl::desc("Micro-batches in flight"),
                           cl::sub(runCommand));
static cl::opt<unsigned>
    repeat("repeat", cl::init(0),
           cl::desc("Also time this many further runs and report latency "
                    "and throughput on stderr"),
           cl::sub(runCommand));

// build
static cl::opt<std::string> buildBundle(cl::Positional, cl::desc("<bundle>"),
                                        cl::sub(buildCommand), cl::Required);

// datagen
static cl::opt<std::string> datagenKind(cl::Positional, cl::desc("<ctr>"),
                                        cl::sub(datagenCommand), cl::Required);
static cl::opt<int64_t> datagenRows("rows", cl::desc("Rows to write"),
                                    cl::sub(datagenCommand), cl::Required);
static cl::opt<uint64_t> datagenSeed("seed", cl::init(1),
                                     cl::desc("Seed of the hidden model and "
                                              "the samples"),
                                     cl::sub(datagenCommand));
static cl::opt<std::string> datagenOutput("o", cl::desc("Output TSV file"),
                                          cl::value_desc("file"),
                                          cl::sub(datagenCommand),
                                          cl::Required);

namespace heterps::driver {
void reportError(StringRef command, const Twine &message) {
  WithColor::error(errs(), ("heterps " + command).str()) << message << "\n";
}
} // namespace heterps::driver

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "HeterPS driver\n");
  if (compileCommand) {
    CompileOptions options;
    options.model = model;
    options.cluster = cluster;
    options.throughput = throughput;
    options.strategy = strategy;
    options.seed = seed;
    options.episodes = episodes;
    options.batch = batch;
    options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
    options.profile = profile;
    options.output = compileOutput;
    return compile(options);
  }
  if (runCommand) {
    RunOptions options;
    options.bundle = bundle;
    options.inputs.assign(inputs.begin(), inputs.end());
    options.outputDir = outputDir;
    options.threads = threads;
    options.gpuStagesOnCpu = gpuStagesOnCpu;
    options.framesInFlight = frames;
    options.repeat = repeat;
    return run(options);
  }
  if (buildCommand) {
    std::string error;
    if (!buildStages(buildBundle, error)) {
      reportError("build", error);
      return 1;
    }
    return 0;
  }
  if (datagenCommand) {
    if (datagenKind != "ctr") {
      reportError("datagen", "unknown kind '" + datagenKind +
                                 "' (the kind there is: ctr)");
      return 1;
    }
    return datagen(datagenRows, datagenSeed, datagenOutput);
  }
  errs() << "heterps: give a command: compile, build, run or datagen (see "
            "--help)\n";
  return 1;
}
