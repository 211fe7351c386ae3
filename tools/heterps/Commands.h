//===- Commands.h - The subcommands of the heterps driver -------*- C++ -*-===//

#ifndef HETERPS_TOOLS_HETERPS_COMMANDS_H
#define HETERPS_TOOLS_HETERPS_COMMANDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace heterps::driver {

struct CompileOptions {
  std::string model, cluster, strategy, profile, output;
  double throughput = 0;
  uint64_t seed = 1;
  int64_t batch = 0;
  std::vector<std::string> inputShapes;
  unsigned episodes = 1024;
  bool keepSources = true;
};

/// import -> legalize -> place -> partition -> bundle -> build; 0 on success.
int compile(const CompileOptions &options);

struct RunOptions {
  std::string bundle, outputDir;
  std::vector<std::string> inputs; // NAME=FILE
  int threads = 0;
  bool gpuStagesOnCpu = false;
  int framesInFlight = 4;
  unsigned repeat = 0;
};

/// Runs a bundle on input files and writes NAME.npy outputs; 0 on success.
int run(const RunOptions &options);

/// Writes synthetic CTR data with its ground-truth AUC; 0 on success.
int datagen(int64_t rows, uint64_t seed, const std::string &output);

/// Compiles every stage source of `bundle` into its shared objects (g++ for
/// CPU stages; nvcc and g++ for GPU stages). Returns false and sets `error`.
bool buildStages(llvm::StringRef bundle, std::string &error);

/// "heterps <command>: error: " + message, on stderr.
void reportError(llvm::StringRef command, const llvm::Twine &message);

} // namespace heterps::driver

#endif // HETERPS_TOOLS_HETERPS_COMMANDS_H
