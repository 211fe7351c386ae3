//===- Compile.cpp - heterps compile --------------------------------------===//
//
// The command over the driver library (heterps/Driver/Compile.h), which the
// Python bindings share: diagnostics go to stderr.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "heterps/Cluster/JsonLimits.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <iterator>

namespace heterps::driver {

/// The training step the plan of the bundle just written chose
/// (docs/Planning.md, "The step"): what its training runs take by default.
static void printPlannedStep(const std::string &bundle) {
  auto buffer = llvm::MemoryBuffer::getFile(bundle + "/manifest.json");
  if (!buffer)
    return;
  llvm::Expected<llvm::json::Value> manifest =
      heterps::cluster::parseJson((*buffer)->getBuffer());
  if (!manifest) {
    llvm::consumeError(manifest.takeError());
    return;
  }
  const llvm::json::Object *root = manifest->getAsObject();
  const llvm::json::Object *plan = root ? root->getObject("plan") : nullptr;
  if (!plan)
    return;
  std::optional<int64_t> count = plan->getInteger("micro_batches");
  std::optional<int64_t> batch = plan->getInteger("batch");
  std::optional<double> step = plan->getNumber("step_throughput");
  std::optional<double> pipeline = plan->getNumber("throughput");
  if (!count || !batch || !step || !pipeline)
    return;
  llvm::errs() << "heterps compile: training steps of " << *count
               << (*count == 1 ? " micro-batch" : " micro-batches") << " of "
               << *batch << " (" << *count * *batch
               << " samples): " << llvm::format("%.0f", *step)
               << " samples/s; the pipeline full: "
               << llvm::format("%.0f", *pipeline) << "\n";
}

namespace {
volatile std::sig_atomic_t interruptSignal = 0;
extern "C" void noteInterrupt(int signal) { interruptSignal = signal; }
} // namespace

int compile(const CompileOptions &given) {
  // Ctrl-C, SIGTERM, a closed terminal (SIGHUP) or Ctrl-\ (SIGQUIT)
  // stops the compile at its next check (within 50 ms while stage
  // compilers run): the staging directory is removed and the output left
  // as it was. The default action of SIGHUP left the directory it was
  // built in; LLVM's of SIGQUIT printed a crash report and went on.
  CompileOptions options = given;
  options.stopRequested = [] { return interruptSignal != 0; };
  static constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction onInterrupt = {};
  struct sigaction previous[std::size(kStopSignals)];
  onInterrupt.sa_handler = noteInterrupt;
  sigemptyset(&onInterrupt.sa_mask);
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &onInterrupt, &previous[i]);
  bool ok = compileBundle(options, llvm::errs());
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &previous[i], nullptr);
  if (!ok && interruptSignal) {
    // Ends as the signal would have: the shell reads 128 + its number.
    std::signal(interruptSignal, SIG_DFL);
    std::raise(interruptSignal);
  }
  if (!ok)
    return 1;
  printPlannedStep(options.output);
  llvm::errs() << "heterps compile: wrote " << options.output << "\n";
  return 0;
}

} // namespace heterps::driver
