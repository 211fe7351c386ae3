//===- heterps.cpp - The HeterPS driver -----------------------------------===//
//
//   heterps compile MODEL --cluster FILE --throughput N [--strategy rl]
//                   [--batch B] [--input-shape NAME=DxD...] [--dim NAME=N]
//                   -o BUNDLE
//   heterps build BUNDLE   (stage programs of --hps-to-stages output)
//   heterps run BUNDLE --input NAME=FILE ... --output-dir DIR
//   heterps run BUNDLE --train --data FILE --steps N [--eval FILE] ...
//   heterps run BUNDLE --train --data-input NAME=FILE.npy ... --steps N
//               [--eval-input NAME=FILE.npy ...] ...
//   heterps datagen ctr --rows N --seed S -o FILE
//   heterps launch BUNDLE [--workers W] [--ps-shards S]
//                  [--consistency async [--staleness K]] ... -- <run flags>
//   heterps ps-shard BUNDLE   (a parameter-server rank of an MPI job)
//   heterps stage-rank BUNDLE (a stage rank of an MPI job)
//
// One command per step a user takes; the compiler passes and the runtime are
// libraries the subcommands call.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Distributed.h"
#include "Elastic.h"
#include "Job.h"
#include "heterps/Runtime/PassiveOpenMPWaits.h"
#include "heterps/Target/BundleDirectory.h"
#include "heterps/Version.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <unistd.h>

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
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
static cl::SubCommand
    gradcheckCommand("gradcheck",
                     "Check a training bundle's gradients against finite "
                     "differences of its forward pass");
static cl::SubCommand datagenCommand(
    "datagen", "Write synthetic training data: `datagen ctr --rows N --seed S "
               "-o FILE` (Criteo TSV from a hidden ground-truth model)");

static cl::SubCommand
    launchCommand("launch",
                  "Train as an MPI job of parameter-server shards and "
                  "data-parallel workers: `launch BUNDLE [--workers W] "
                  "[--ps-shards S] -- <flags of run --train>`");
// Parsed by elasticCommand (Elastic.cpp); declared here for --help.
static cl::SubCommand elasticHelp(
    "elastic",
    "The cluster autoscaler: `elastic simulate --workload FILE --traces DIR "
    "[--policy P] [--cluster FILE] [--json]`, `elastic generate --jobs N "
    "--rate R -o FILE`, `elastic serve --state DIR`, `elastic submit|status|"
    "cancel --state DIR ...` (docs/Autoscaler.md)");
// Parsed by jobCommand (Job.cpp); declared here for --help.
static cl::SubCommand
    jobHelp("job", "Run a supervised training job that survives failures and "
                   "resizes on request: `job run JOBFILE`, `job resize JOBDIR "
                   "--workers W --batch B`, `job status JOBDIR`, `job stop "
                   "JOBDIR` (docs/Jobs.md)");
static cl::SubCommand
    psShardCommand("ps-shard", "Serve as a parameter-server shard rank of "
                               "an MPI job (heterps launch starts these)");
static cl::SubCommand
    stageRankCommand("stage-rank",
                     "Serve as a stage rank of an MPI job (heterps launch "
                     "--stage-ranks starts these)");

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
             cl::desc("rl | dp | brute | greedy | cpu-only | gpu-only | "
                      "sparse-on-cpu"),
             cl::sub(compileCommand));
static cl::opt<uint64_t> seed("seed", cl::init(1),
                              cl::desc("Seed of the rl strategy"),
                              cl::sub(compileCommand));
static cl::opt<unsigned> episodes("episodes", cl::init(1024),
                                  cl::desc("Episodes of the rl strategy"),
                                  cl::sub(compileCommand));
static cl::opt<unsigned> compilePassSteps(
    "pass-steps", cl::init(0),
    cl::desc("--train: also plan training in passes of N steps through a "
             "pass cache, and take them where the cost model prices the plan "
             "better (the plan's pass_steps; training follows it)"),
    cl::sub(compileCommand));
static cl::opt<double> compilePassDistinctFraction(
    "pass-distinct-fraction", cl::init(1.0),
    cl::desc("--train with --pass-steps: of the keys a pass pulls, the share "
             "that are distinct rows (a run's `passes:` line reports it)"),
    cl::sub(compileCommand));
static cl::opt<unsigned> compileSparseStaleness(
    "sparse-staleness", cl::init(0),
    cl::desc("--train: let sparse pushes lag at most N steps (0 or 1) where "
             "the cost model prices the plan better (the plan's "
             "sparse_staleness; training follows it)"),
    cl::sub(compileCommand));
static cl::opt<unsigned> compileMicroBatches(
    "micro-batches", cl::init(0),
    cl::desc("--train: micro-batches of --batch per training step (the "
             "plan's micro_batches; 0: the fewest that let the stages reach "
             "the target, at most 32)"),
    cl::sub(compileCommand));
static cl::opt<int64_t>
    batch("batch", cl::init(0),
          cl::desc("Bind the symbolic leading dim of the inputs (the "
                   "micro-batch the stages run)"),
          cl::sub(compileCommand));
static cl::opt<bool> staticBatch(
    "static-batch",
    cl::desc("Treat a static leading dim of 1 on the inputs as the batch and "
             "bind it to --batch (models exported with a fixed batch of 1)"),
    cl::sub(compileCommand));
static cl::opt<int64_t> recurrenceUnrollLimit(
    "recurrence-unroll-limit", cl::init(0),
    cl::desc("RNN, GRU and LSTM over at most this many steps unroll into "
             "per-step ops, longer ones run as one recurrence kernel "
             "(default 0: all of them run as the kernel)"),
    cl::sub(compileCommand));
static cl::opt<bool> nativeLayouts(
    "native-layouts", cl::init(true),
    cl::desc("CPU stages keep conv chains in oneDNN's blocked layout (false: "
             "plain NCHW between all kernels, for comparisons)"),
    cl::sub(compileCommand));
static cl::opt<bool> fuseElementwise(
    "fuse-elementwise", cl::init(true),
    cl::desc("Run chains of elementwise ops as one generated loop each "
             "(false: one kernel per op, for comparisons)"),
    cl::sub(compileCommand));
static cl::opt<bool> printPipeline(
    "print-pipeline", cl::init(false),
    cl::desc("Print the pass pipeline the compile runs, as heterps-opt "
             "takes it (--pass-pipeline=...), to reproduce a step"),
    cl::sub(compileCommand));
static cl::list<std::string> inputShapes("input-shape",
                                         cl::desc("Static shape of one input"),
                                         cl::value_desc("NAME=D0xD1x..."),
                                         cl::sub(compileCommand));
static cl::list<std::string>
    dimBindings("dim", cl::desc("Extent of a symbolic input dim by its name"),
                cl::value_desc("NAME=N"), cl::sub(compileCommand));
static cl::opt<std::string> profile("profile",
                                    cl::desc("Profile database of layer times"),
                                    cl::sub(compileCommand));
static cl::opt<bool>
    compileTrain("train",
                 cl::desc("Compile a training bundle (forward, loss, "
                          "backward, parameter-server updates)"),
                 cl::sub(compileCommand));
static cl::opt<std::string>
    compileLoss("loss", cl::desc("--train: bce | softmax-ce | mse"),
                cl::sub(compileCommand));
static cl::opt<std::string>
    compileLabel("label", cl::init("label"),
                 cl::desc("--train: name of the label input"),
                 cl::sub(compileCommand));
static cl::opt<std::string> compileTrainOutput(
    "train-output",
    cl::desc("--train: the model output the loss is on (default: "
             "the first)"),
    cl::sub(compileCommand));
static cl::opt<std::string>
    compileOptimizer("optimizer", cl::init("adagrad"),
                     cl::desc("--train: sgd | adam | adagrad"),
                     cl::sub(compileCommand));
static cl::opt<double> compileLearningRate("lr", cl::init(0.01),
                                           cl::desc("--train: learning rate"),
                                           cl::sub(compileCommand));
static cl::opt<double> compileMomentum("momentum", cl::init(0),
                                       cl::desc("--train: momentum of sgd"),
                                       cl::sub(compileCommand));
static cl::opt<std::string> compileBatchNorm(
    "batch-norm", cl::init("batch"),
    cl::desc("--train: batch norm statistics: batch (as PyTorch trains; "
             "running ones kept for --eval) | running (inference mode)"),
    cl::sub(compileCommand));
static cl::list<std::string> compileFrozen(
    "freeze",
    cl::desc("--train: weights (initializers, by name) kept constant, not "
             "trained; repeat or separate with commas"),
    cl::value_desc("NAME"), cl::CommaSeparated, cl::sub(compileCommand));
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
static cl::opt<int>
    frames("frames", cl::init(0),
           cl::desc("Micro-batches in flight (0: one per stage replica and "
                    "one more, at least 4)"),
           cl::sub(runCommand));
static cl::opt<unsigned>
    repeat("repeat", cl::init(0),
           cl::desc("Also time this many further runs and report latency "
                    "and throughput on stderr"),
           cl::sub(runCommand));

// run --train
static cl::opt<bool> trainMode(
    "train",
    cl::desc("Train a training bundle on Criteo-format --data or on .npy "
             "--data-input arrays instead of running it on --input files"),
    cl::sub(runCommand));
static cl::opt<std::string> trainData("data",
                                      cl::desc("Training data (Criteo TSV), "
                                               "looped over epochs"),
                                      cl::value_desc("file"),
                                      cl::sub(runCommand));
static cl::list<std::string> trainDataInputs(
    "data-input",
    cl::desc("Training data for one bundle input (the label included): a "
             ".npy array whose dim 0 is the sample; one per input, instead "
             "of --data"),
    cl::value_desc("NAME=FILE.npy"), cl::sub(runCommand));
static cl::list<std::string> evalDataInputs(
    "eval-input",
    cl::desc("Evaluation data for one bundle input, like --data-input: loss "
             "and AUC (bce) or accuracy (softmax-ce) after training"),
    cl::value_desc("NAME=FILE.npy"), cl::sub(runCommand));
static cl::opt<std::string>
    evalData("eval",
             cl::desc("Evaluation data (Criteo TSV): AUC and log-loss after "
                      "training"),
             cl::value_desc("file"), cl::sub(runCommand));
static cl::opt<int64_t> trainBatch(
    "batch", cl::init(0),
    cl::desc("Samples per step, a multiple of the bundle's batch (default: "
             "the bundle's batch)"),
    cl::sub(runCommand));
static cl::opt<int64_t> trainSteps("steps", cl::init(0),
                                   cl::desc("Train up to this step"),
                                   cl::sub(runCommand));
static cl::opt<int64_t> trainSamples(
    "samples", cl::init(0),
    cl::desc("Instead of --steps: train until this many samples are trained "
             "(counted from the start; the last step takes what remains)"),
    cl::sub(runCommand));
static cl::opt<int64_t> logEvery("log-every", cl::init(100),
                                 cl::desc("Steps per progress line"),
                                 cl::sub(runCommand));
static cl::opt<int64_t>
    evalEvery("eval-every", cl::init(0),
              cl::desc("Also evaluate every this many steps"),
              cl::sub(runCommand));
static cl::opt<std::string>
    checkpointDir("checkpoint-dir",
                  cl::desc("Where checkpoints go (DIR/step-<k>)"),
                  cl::value_desc("dir"), cl::sub(runCommand));
static cl::opt<std::string> checkpointEvery(
    "checkpoint-every",
    cl::desc("Steps between checkpoints (10), or the time between them by "
             "worker 0's clock (30s, 2m; default 5m)"),
    cl::value_desc("steps|time"), cl::sub(runCommand));
static cl::opt<int> keepCheckpoints("keep-checkpoints", cl::init(2),
                                    cl::desc("Checkpoints kept"),
                                    cl::sub(runCommand));
static cl::opt<bool>
    resumeTraining("resume",
                   cl::desc("Continue from the newest good checkpoint in "
                            "--checkpoint-dir"),
                   cl::sub(runCommand));
static cl::opt<uint64_t>
    trainSeed("seed", cl::init(1),
              cl::desc("Seed of the sparse tables' initial rows"),
              cl::sub(runCommand));
static cl::opt<int64_t> hashBuckets(
    "hash-buckets", cl::init(0),
    cl::desc("Ids per sparse field (default: a single table's rows / 26)"),
    cl::sub(runCommand));
static cl::opt<unsigned>
    psShards("ps-shards", cl::init(0),
             cl::desc("Shards of every sparse table, served in parallel "
                      "(default: one per thread)"),
             cl::sub(runCommand));
static cl::opt<int64_t> psMemoryRows(
    "ps-memory-rows", cl::init(0),
    cl::desc("--train: keep at most this many rows of each sparse table per "
             "shard in memory, the rest in RocksDB under --ps-storage-dir"),
    cl::sub(runCommand));
static cl::opt<std::string> psStorageDir(
    "ps-storage-dir",
    cl::desc("--train: where sparse rows beyond --ps-memory-rows live "
             "(RocksDB; its contents are replaced)"),
    cl::value_desc("dir"), cl::sub(runCommand));
static cl::opt<int64_t> passSteps(
    "pass-steps", cl::init(0),
    cl::desc("--train: train in passes of this many steps, loading each "
             "pass's sparse rows once before its steps (0: no pass cache; "
             "default: the plan's pass_steps, else 0)"),
    cl::sub(runCommand));
static cl::opt<std::string> passMemory(
    "pass-memory",
    cl::desc("--train, with --pass-steps: the most memory the pass cache "
             "holds, the running pass and the next one prepared beside it "
             "(512M, 2G; auto: what the plan leaves free on the devices "
             "that look up rows); a pass ends early where its next step's "
             "rows would not fit"),
    cl::value_desc("size"), cl::sub(runCommand));
static cl::opt<int> sparseStaleness(
    "sparse-staleness", cl::init(0),
    cl::desc("--train, one process: 1 applies each step's sparse update one "
             "step late, while the next step runs after its pulls (dense "
             "parameters stay exact); 0: every update before the next step "
             "(default: the plan's sparse_staleness, else 0)"),
    cl::sub(runCommand));
enum class PassCacheDevice { Host, Gpu };
static cl::opt<PassCacheDevice> passCacheDevice(
    "pass-cache-device", cl::init(PassCacheDevice::Host),
    cl::desc("--train, with --pass-steps: where the pass cache keeps its "
             "rows (default: the plan's pass_cache_device, else host)"),
    cl::values(clEnumValN(PassCacheDevice::Host, "host", "host memory"),
               clEnumValN(PassCacheDevice::Gpu, "gpu",
                          "GPU memory (the HBM tier; bit for bit the host's)")),
    cl::sub(runCommand));
static cl::opt<std::string> passCacheGpus(
    "pass-cache-gpus",
    cl::desc("--train, with the pass cache in GPU memory: the CUDA devices "
             "that hold its rows, each the keys that hash to it (0,1,2,3; "
             "default 0)"),
    cl::value_desc("list"), cl::sub(runCommand));
static cl::opt<bool> denseParametersOnGpu(
    "dense-parameters-on-gpu", cl::init(true),
    cl::desc("--train, one process: GPU stages keep the dense parameters "
             "they train in GPU memory and update them there (bit for bit "
             "the host's); false: through the host every step"),
    cl::sub(runCommand));
static cl::opt<std::string> dumpParameters(
    "dump-parameters",
    cl::desc("After training, write every dense parameter and touched "
             "sparse row as .npy here"),
    cl::value_desc("dir"), cl::sub(runCommand));
static cl::opt<std::string>
    lossLog("loss-log",
            cl::desc("--train: write each step's mean loss here, one "
                     "\"STEP LOSS\" line per step, 9 significant digits"),
            cl::value_desc("file"), cl::sub(runCommand));

static cl::opt<double> learningRateScale(
    "lr-scale", cl::init(1),
    cl::desc("--train: multiply the learning rate of every optimizer update "
             "by this (e.g. after changing --batch)"),
    cl::sub(runCommand));
static cl::opt<std::string> learningRateWarmup(
    "lr-warmup",
    cl::desc("--train: ramp the --lr-scale linearly from FROM after step "
             "START to its value at step END"),
    cl::value_desc("FROM:START:END"), cl::sub(runCommand));

static cl::opt<bool> trainShuffle(
    "shuffle",
    cl::desc("--train: visit the --data-input samples in a new random order "
             "every epoch (drawn from --seed)"),
    cl::sub(runCommand));

static cl::opt<bool>
    mpiWorker("mpi-worker",
              cl::desc("--train as a worker rank of an MPI job whose "
                       "parameters live on `heterps ps-shard` ranks "
                       "(heterps launch adds it)"),
              cl::sub(runCommand));

// run --mpi-worker, launch, ps-shard
static cl::opt<std::string> consistency(
    "consistency",
    cl::desc("How the workers of an MPI job see each other's updates: sync "
             "(a step is applied once, on every worker's gradients; the "
             "default) or async (pushes are applied on arrival; a worker may "
             "run --staleness steps ahead of the slowest)"),
    cl::init("sync"), cl::value_desc("sync|async"), cl::sub(runCommand),
    cl::sub(launchCommand), cl::sub(psShardCommand), cl::sub(stageRankCommand));
static cl::opt<int64_t> staleness(
    "staleness",
    cl::desc("With --consistency=async: how many steps a worker may finish "
             "ahead of the slowest one (default 2; -1: no bound)"),
    cl::init(kDefaultStaleness), cl::sub(runCommand), cl::sub(launchCommand),
    cl::sub(psShardCommand), cl::sub(stageRankCommand));

// launch
static cl::list<std::string>
    launchArgs(cl::Positional, cl::OneOrMore,
               cl::desc("<training bundle> -- <flags of run --train>"),
               cl::sub(launchCommand));
static cl::opt<int> launchWorkers(
    "workers",
    cl::desc("Worker ranks (default: the largest stage replica count of "
             "the bundle's plan)"),
    cl::init(0), cl::sub(launchCommand));
static cl::opt<int>
    launchShards("ps-shards",
                 cl::desc("Parameter-server shard ranks (default: one per "
                          "two workers)"),
                 cl::init(0), cl::sub(launchCommand));
static cl::opt<std::string> launchHostfile("hostfile",
                                           cl::desc("mpirun's --hostfile"),
                                           cl::value_desc("file"),
                                           cl::sub(launchCommand));
static cl::opt<std::string> launchMpirun("mpirun",
                                         cl::desc("The mpirun to run (default: "
                                                  "mpirun on PATH)"),
                                         cl::value_desc("path"),
                                         cl::sub(launchCommand));
static cl::list<std::string>
    launchMpirunArgs("mpirun-arg",
                     cl::desc("An argument for mpirun (e.g. "
                              "--mpirun-arg=--oversubscribe)"),
                     cl::value_desc("arg"), cl::sub(launchCommand));
static cl::opt<bool> launchDryRun("dry-run",
                                  cl::desc("Print the mpirun command only"),
                                  cl::sub(launchCommand));
static cl::opt<bool> launchStageRanks(
    "stage-ranks",
    cl::desc("Run every stage replica of the bundle as a rank of its own, "
             "serving one worker that feeds them micro-batches"),
    cl::sub(launchCommand));
static cl::opt<std::string> launchSlurm(
    "slurm-multi-prog",
    cl::desc("Write the job as an `srun --multi-prog` file instead and "
             "print the srun command"),
    cl::value_desc("file"), cl::sub(launchCommand));

// ps-shard
static cl::opt<std::string> psShardBundle(cl::Positional,
                                          cl::desc("<training bundle>"),
                                          cl::sub(psShardCommand),
                                          cl::Required);
static cl::opt<std::string> psShardStorage(
    "storage-dir",
    cl::desc("Where tables with a row cache keep RocksDB (DIR/shard-<r>)"),
    cl::value_desc("dir"), cl::sub(psShardCommand));

// stage-rank
static cl::opt<std::string> stageRankBundle(cl::Positional,
                                            cl::desc("<training bundle>"),
                                            cl::sub(stageRankCommand),
                                            cl::Required);

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
static cl::opt<uint64_t> datagenModelSeed(
    "model-seed",
    cl::desc("Seed of the hidden model alone (default: from --seed); files "
             "with the same model seed share the model, e.g. train and eval"),
    cl::sub(datagenCommand));
static cl::opt<int64_t>
    datagenMaxVocab("max-vocab", cl::init(0),
                    cl::desc("Cap every categorical field's vocabulary"),
                    cl::sub(datagenCommand));
static cl::opt<std::string> datagenOutput("o", cl::desc("Output TSV file"),
                                          cl::value_desc("file"),
                                          cl::sub(datagenCommand),
                                          cl::Required);

// gradcheck
static cl::opt<std::string> gradcheckBundle(cl::Positional,
                                            cl::desc("<training bundle>"),
                                            cl::sub(gradcheckCommand),
                                            cl::Required);
static cl::list<std::string> gradcheckInputs(
    "input",
    cl::desc("A model input (.npy or .pb); others are random (f32 "
             "normals, i64 ids below the smallest table's "
             "rows)"),
    cl::value_desc("NAME=FILE"), cl::sub(gradcheckCommand));
static cl::opt<uint64_t> gradcheckSeed("seed", cl::init(1),
                                       cl::desc("Seed of inputs, rows and "
                                                "directions"),
                                       cl::sub(gradcheckCommand));
static cl::opt<int> gradcheckDirections("directions", cl::init(3),
                                        cl::desc("Random directions per "
                                                 "parameter"),
                                        cl::sub(gradcheckCommand));
static cl::opt<double> gradcheckEpsilon("epsilon", cl::init(1e-2),
                                        cl::desc("Step along a unit direction"),
                                        cl::sub(gradcheckCommand));
static cl::opt<double> gradcheckTolerance("tolerance", cl::init(2e-2),
                                          cl::desc("Largest relative error"),
                                          cl::sub(gradcheckCommand));

namespace heterps::driver {
bool isHelpRequest(StringRef command, const std::vector<std::string> &args) {
  auto isHelp = [](StringRef word) { return word == "--help" || word == "-h"; };
  return isHelp(command) || llvm::any_of(args, isHelp);
}

void reportError(StringRef command, const Twine &message) {
  std::string text = message.str();
  // A message placed in a file already says "FILE:LINE:COL: error:".
  if (StringRef(text).split('\n').first.contains(": error: "))
    errs() << text << "\n";
  else
    WithColor::error(errs(), ("heterps " + command).str()) << text << "\n";
}
} // namespace heterps::driver

/// --consistency and --staleness, checked; reports an error for `command`.
static std::optional<ConsistencyOptions> consistencyOptions(StringRef command) {
  std::string error;
  std::optional<ConsistencyOptions> options = parseConsistency(
      consistency, staleness, staleness.getNumOccurrences() > 0, error);
  if (!options)
    reportError(command, error);
  return options;
}

// LLVM's own -h (an alias of --help) groups with the letters after it, so
// any unknown flag starting with h (--hash-bucket for --hash-buckets)
// printed the help and exited 0 without running anything. An option of
// that name, taken whole, keeps LLVM's out of every subcommand; main turns
// a plain -h into --help.
static cl::opt<bool> shortHelp("h", cl::desc("Alias for --help"), cl::Hidden,
                               cl::sub(cl::SubCommand::getAll()));

/// LLVM takes a scalar option given twice, the last one winning: a second
/// --data trained on one of two files without a word. False (and says so)
/// when one was.
static bool givenOnceEach(StringRef context = "") {
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands()) {
    if (!*sub)
      continue;
    for (auto &entry : cl::getRegisteredOptions(*sub)) {
      cl::Option *option = entry.second;
      const bool once = option->getNumOccurrencesFlag() == cl::Optional ||
                        option->getNumOccurrencesFlag() == cl::Required;
      if (once && option->getNumOccurrences() > 1 &&
          entry.first() == option->ArgStr) {
        reportError(context.empty() ? sub->getName() : context,
                    "--" + option->ArgStr + " is given " +
                        Twine(option->getNumOccurrences()) +
                        " times; give it once");
        return false;
      }
    }
  }
  return true;
}

/// The options of `heterps run --train` from its parsed flags, checked;
/// nullopt (said for `command`) when they cannot train.
static std::optional<TrainOptions> trainOptionsFromFlags(StringRef command) {
  // Inference's flags mean nothing to training.
  // cl::list overloads operator&, hence std::addressof.
  cl::Option *inferenceOnly[] = {std::addressof(inputs), &outputDir, &repeat};
  for (cl::Option *option : inferenceOnly)
    if (option->getNumOccurrences()) {
      reportError(command, "--" + option->ArgStr +
                               " is for inference; --train reads --data or "
                               "--data-input");
      return std::nullopt;
    }
  if ((trainData.empty() && trainDataInputs.empty()) ||
      (!trainSteps.getNumOccurrences() && !trainSamples.getNumOccurrences())) {
    reportError(command, "--train needs --data FILE (Criteo TSV) or "
                         "--data-input NAME=FILE.npy for every input, and "
                         "--steps N (or --samples N)");
    return std::nullopt;
  }
  if (trainSteps.getNumOccurrences() && trainSamples.getNumOccurrences()) {
    reportError(command, "give the run's length as --steps N or as --samples "
                         "N, not both");
    return std::nullopt;
  }
  if (trainSamples.getNumOccurrences() && trainSamples < 1) {
    reportError(command, "--samples " + std::to_string(trainSamples) +
                             " must be 1 to 2^53");
    return std::nullopt;
  }
  TrainOptions options;
  options.bundle = bundle;
  options.data = trainData;
  options.eval = evalData;
  options.dataInputs.assign(trainDataInputs.begin(), trainDataInputs.end());
  options.evalInputs.assign(evalDataInputs.begin(), evalDataInputs.end());
  options.batch = trainBatch;
  options.steps = trainSteps;
  options.samples = trainSamples;
  options.logEvery = logEvery;
  options.evalEvery = evalEvery;
  options.checkpointDir = checkpointDir;
  options.checkpointEvery = checkpointEvery;
  options.keepCheckpoints = keepCheckpoints;
  options.resume = resumeTraining;
  options.seed = trainSeed;
  options.hashBuckets = hashBuckets;
  options.psShards = psShards;
  options.psMemoryRows = psMemoryRows;
  options.psStorageDir = psStorageDir;
  // Unset step-shape flags leave the choice to the bundle's plan.
  if (passSteps.getNumOccurrences())
    options.passSteps = passSteps;
  options.passMemory = passMemory;
  if (passCacheDevice.getNumOccurrences())
    options.passCacheOnGpu = passCacheDevice == PassCacheDevice::Gpu;
  if (passCacheGpus.getNumOccurrences())
    options.passCacheGpus = passCacheGpus;
  if (sparseStaleness.getNumOccurrences())
    options.sparseStaleness = sparseStaleness;
  options.denseParametersOnGpu = denseParametersOnGpu;
  options.threads = threads;
  options.gpuStagesOnCpu = gpuStagesOnCpu;
  options.framesInFlight = frames;
  options.dumpParameters = dumpParameters;
  options.lossLog = lossLog;
  options.mpiWorker = mpiWorker;
  options.shuffle = trainShuffle;
  options.learningRateScale = learningRateScale;
  options.learningRateWarmup = learningRateWarmup;
  std::optional<ConsistencyOptions> parsed = consistencyOptions(command);
  if (!parsed)
    return std::nullopt;
  options.consistency = *parsed;
  if (!mpiWorker &&
      (consistency.getNumOccurrences() || staleness.getNumOccurrences())) {
    reportError(command, "--consistency and --staleness are for the workers of "
                         "an MPI job (heterps launch --consistency=async); a "
                         "single process is one worker");
    return std::nullopt;
  }
  return options;
}

/// `heterps launch`'s check of its worker command (`heterps run BUNDLE
/// --train FLAGS --mpi-worker ...`): parsed and checked as the workers will,
/// so a mistyped or missing flag after -- is said once, here, also under
/// --dry-run, instead of by every rank of the job. The launch's own options
/// are read before; this parse replaces them.
static bool checkWorkerCommand(const std::vector<std::string> &command,
                               int workers) {
  std::vector<const char *> argv;
  for (const std::string &word : command)
    argv.push_back(word.c_str());
  cl::ResetAllOptionOccurrences();
  // LLVM writes a bad value's error to stderr whatever stream it is given:
  // both are caught so that the launch says one thing.
  std::string message;
  raw_string_ostream stream(message);
  bool parsed = false;
  {
    std::FILE *caught = std::tmpfile();
    int savedStderr = caught ? ::dup(STDERR_FILENO) : -1;
    if (savedStderr >= 0)
      ::dup2(::fileno(caught), STDERR_FILENO);
    parsed =
        cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "", &stream);
    if (savedStderr >= 0) {
      ::dup2(savedStderr, STDERR_FILENO);
      ::close(savedStderr);
      std::rewind(caught);
      char buffer[512];
      for (size_t got; (got = std::fread(buffer, 1, sizeof buffer, caught));)
        message.append(buffer, got);
    }
    if (caught)
      std::fclose(caught);
  }
  if (!parsed) {
    // LLVM's lines start with the program's name and add hints for its own
    // command line; the first says what is wrong, a "Did you mean" helps.
    SmallVector<StringRef> lines;
    StringRef(message).split(lines, '\n', -1, false);
    std::string what, hint;
    const std::string program = sys::path::filename(argv.front()).str();
    for (StringRef line : lines) {
      line = line.trim();
      line.consume_front(program + ":");
      line = line.trim();
      if (line.starts_with("Did you mean"))
        hint = " (did you mean" + line.drop_front(12).str() + ")";
      else if (what.empty() && !line.empty())
        what = line.split(".  Try:").first.str();
    }
    reportError("launch",
                "the flags after -- are not `heterps run --train`'s: " + what +
                    hint);
    return false;
  }
  if (!givenOnceEach("launch"))
    return false;
  std::optional<TrainOptions> options = trainOptionsFromFlags("launch");
  if (!options)
    return false;
  // The step each worker trains, from the manifest: every rank refused a
  // bad --batch on its own, printed once per rank and interleaved.
  std::string error = trainStepError(command.at(2), options->batch, workers);
  if (!error.empty())
    reportError("launch", error);
  return error.empty();
}

/// What this process does, for the out-of-memory message (made before any
/// allocation can fail).
static std::string outOfMemoryMessage;

/// Out of memory in the compiler or the planner (LLVM's new-handler, which
/// InitLLVM installs, calls this): the partial build goes and the process
/// ends with one line, not LLVM's crash report. Nothing here allocates.
static void outOfMemory(void *, const char *, bool) {
  heterps::target::removeStagingDirectoriesNow();
  (void)!::write(STDERR_FILENO, outOfMemoryMessage.data(),
                 outOfMemoryMessage.size());
  ::_exit(1);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  heterps::setVersionPrinter();
  if (argc > 1 && StringRef(argv[1]) == "job")
    return jobCommand(argc, argv);
  if (argc > 1 && StringRef(argv[1]) == "elastic")
    return elasticCommand(argc, argv);
  // LLVM's own flags (code generation for every target) are not the
  // driver's: `heterps --help` lists the subcommands.
  cl::HideUnrelatedOptions(ArrayRef<const cl::OptionCategory *>{},
                           cl::SubCommand::getTopLevel());
  // -h is --help, before the checks of required arguments, as --help is.
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]) == "-h")
      argv[i] = const_cast<char *>("--help");
  cl::ParseCommandLineOptions(argc, argv, "HeterPS driver\n");
  if (!givenOnceEach())
    return 1;
  // The runtime is built with exceptions and reports a failed allocation
  // (a --batch too large for this machine) as an error; LLVM's handler,
  // which InitLLVM installs, would abort with a crash report instead.
  if (runCommand || gradcheckCommand || stageRankCommand || psShardCommand) {
    std::set_new_handler(nullptr);
  } else {
    outOfMemoryMessage =
        "heterps: out of memory" +
        (compileCommand ? " compiling '" + model.getValue() + "'"
                        : std::string()) +
        ": its constants, weights or build need more memory than this "
        "process may use (the machine's, or ulimit -v); nothing was "
        "written\n";
    llvm::install_bad_alloc_error_handler(outOfMemory);
  }
  // A file past the size limit (ulimit -f) is then a write error, EFBIG,
  // which names the file; SIGXFSZ's default ended the process with LLVM's
  // crash report.
  std::signal(SIGXFSZ, SIG_IGN);
  // Stage ranks and parameter-server shards train too.
  if ((runCommand && trainMode) || gradcheckCommand || stageRankCommand ||
      psShardCommand)
    heterps::rt::runWithPassiveOpenMPWaits(argv);
  if (compileCommand) {
    CompileOptions options;
    options.model = model;
    options.cluster = cluster;
    options.throughput = throughput;
    options.strategy = strategy;
    options.seed = seed;
    options.episodes = episodes;
    options.passSteps = compilePassSteps;
    options.passDistinctFraction = compilePassDistinctFraction;
    options.sparseStaleness = compileSparseStaleness;
    options.microBatches = compileMicroBatches;
    options.batch = batch;
    options.staticBatch = staticBatch;
    options.recurrenceUnrollLimit = recurrenceUnrollLimit;
    options.nativeLayouts = nativeLayouts;
    options.fuseElementwise = fuseElementwise;
    options.printPipeline = printPipeline;
    options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
    options.dims.assign(dimBindings.begin(), dimBindings.end());
    options.profile = profile;
    options.output = compileOutput;
    options.train = compileTrain;
    options.loss = compileLoss;
    options.label = compileLabel;
    options.trainOutput = compileTrainOutput;
    options.optimizer = compileOptimizer;
    options.learningRate = compileLearningRate;
    options.momentum = compileMomentum;
    options.batchNorm = compileBatchNorm;
    options.frozen.assign(compileFrozen.begin(), compileFrozen.end());
    return compile(options);
  }
  if (runCommand && trainMode) {
    std::optional<TrainOptions> options = trainOptionsFromFlags("run");
    if (!options)
      return 1;
    return train(*options);
  }
  if (runCommand) {
    for (cl::Option *option :
         std::initializer_list<cl::Option *>{&trainData,
                                             &evalData,
                                             std::addressof(trainDataInputs),
                                             std::addressof(evalDataInputs),
                                             &trainBatch,
                                             &trainSteps,
                                             &trainSamples,
                                             &logEvery,
                                             &evalEvery,
                                             &checkpointDir,
                                             &checkpointEvery,
                                             &keepCheckpoints,
                                             &resumeTraining,
                                             &trainSeed,
                                             &hashBuckets,
                                             &psShards,
                                             &psMemoryRows,
                                             &psStorageDir,
                                             &passSteps,
                                             &passMemory,
                                             &passCacheDevice,
                                             &passCacheGpus,
                                             &sparseStaleness,
                                             &denseParametersOnGpu,
                                             &dumpParameters,
                                             &lossLog,
                                             &mpiWorker,
                                             &consistency,
                                             &staleness,
                                             &trainShuffle,
                                             &learningRateScale,
                                             &learningRateWarmup})
      if (option->getNumOccurrences()) {
        reportError("run", "--" + option->ArgStr + " needs --train");
        return 1;
      }
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
  if (gradcheckCommand) {
    GradCheckOptions options;
    options.bundle = gradcheckBundle;
    options.inputs.assign(gradcheckInputs.begin(), gradcheckInputs.end());
    options.seed = gradcheckSeed;
    options.directions = gradcheckDirections;
    options.epsilon = gradcheckEpsilon;
    options.tolerance = gradcheckTolerance;
    return gradcheck(options);
  }
  if (datagenCommand) {
    if (datagenKind != "ctr") {
      reportError("datagen", "unknown kind '" + datagenKind +
                                 "' (the kind there is: ctr)");
      return 1;
    }
    if (datagenMaxVocab.getNumOccurrences() && datagenMaxVocab < 1) {
      reportError("datagen", "--max-vocab " + std::to_string(datagenMaxVocab) +
                                 " must be at least 1");
      return 1;
    }
    std::optional<uint64_t> modelSeed;
    if (datagenModelSeed.getNumOccurrences())
      modelSeed = datagenModelSeed;
    return datagen(datagenRows, datagenSeed, datagenOutput, modelSeed,
                   datagenMaxVocab);
  }
  if (launchCommand) {
    // 0 (the default) takes the counts from the plan; given, they are ranks.
    for (cl::opt<int> *count : {&launchWorkers, &launchShards})
      if (count->getNumOccurrences() && (*count < 1 || *count > 4096)) {
        reportError("launch", "--" + count->ArgStr + " " +
                                  std::to_string(int(*count)) +
                                  " must be 1 to 4096");
        return 1;
      }
    LaunchOptions options;
    options.bundle = launchArgs.front();
    options.runFlags.assign(std::next(launchArgs.begin()), launchArgs.end());
    options.workers = launchWorkers;
    options.shards = launchShards;
    options.hostfile = launchHostfile;
    options.mpirun = launchMpirun;
    options.mpirunArgs.assign(launchMpirunArgs.begin(), launchMpirunArgs.end());
    options.dryRun = launchDryRun;
    options.slurmMultiProg = launchSlurm;
    options.stageRanks = launchStageRanks;
    options.checkWorkerCommand = checkWorkerCommand;
    std::optional<ConsistencyOptions> parsed = consistencyOptions("launch");
    if (!parsed)
      return 1;
    options.consistency = *parsed;
    return launch(options);
  }
  if (psShardCommand) {
    PsShardOptions options;
    options.bundle = psShardBundle;
    options.storageDirectory = psShardStorage;
    std::optional<ConsistencyOptions> parsed = consistencyOptions("ps-shard");
    if (!parsed)
      return 1;
    options.consistency = *parsed;
    return psShard(options);
  }
  if (stageRankCommand) {
    StageRankOptions options;
    options.bundle = stageRankBundle;
    std::optional<ConsistencyOptions> parsed = consistencyOptions("stage-rank");
    if (!parsed)
      return 1;
    options.consistency = *parsed;
    return stageRank(options);
  }
  errs() << "heterps: give a command: compile, build, run, gradcheck, "
            "datagen, launch, job, ps-shard or stage-rank (see --help)\n";
  return 1;
}
